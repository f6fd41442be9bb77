//! What the emulator builds: its hosts (each with an IPv4 address and, once running, a TUN
//! device in its own namespace), its link directions (each a [`LinkDirection`] of
//! tcplab-sim, with the simulator's random-stream label `"{link}/{direction}"`) and the
//! routing table between them.
//!
//! A plan comes either from a canonical scenario ([`Plan::from_scenario`]: tcplab-sim's own
//! topology expansion and routing table, never a second one) or from the one-link config of
//! [`crate::config`] ([`Plan::one_link`]: hosts `a` and `b` joined by link `l0`).
//!
//! Addressing of a scenario: host `k` (the k-th host in the topology's node order) has
//! `10.214.0.0 + 1 + k` in the prefix [`PREFIX`] (`s0` of a dumbbell is 10.214.0.1). Every
//! host reaches every other through its one device; the emulator finds a packet's
//! destination host by its destination address and routes it hop by hop.

use crate::config::{check_dir, Config};
use serde_json::{json, Value};
use std::net::Ipv4Addr;
use tcplab_sim::node::{Node, Routes};
use tcplab_sim::scenario::{LinkDir, NodeKind, Scenario, WlanSpec};
use tcplab_sim::topology;

/// The addresses of a scenario's hosts: 10.214.0.0/16.
pub const PREFIX: (Ipv4Addr, u8) = (Ipv4Addr::new(10, 214, 0, 0), 16);
/// The addresses of the one-link config's hosts `a` and `b`.
pub const ONE_LINK_ADDRS: [Ipv4Addr; 2] =
    [Ipv4Addr::new(10, 213, 0, 1), Ipv4Addr::new(10, 213, 0, 2)];

#[derive(Clone, Debug)]
pub struct HostPlan {
    pub name: String,
    /// Its node in the topology.
    pub node: u32,
    pub addr: Ipv4Addr,
}

#[derive(Clone, Debug)]
pub struct DirPlan {
    /// The duplex link's name (`s0-left`) and this direction (`forward`, `reverse`).
    pub link: String,
    pub direction: &'static str,
    pub from: u32,
    pub to: u32,
    pub spec: LinkDir,
}

impl DirPlan {
    /// The simulator's label of this direction's random streams.
    pub fn label(&self) -> String {
        format!("{}/{}", self.link, self.direction)
    }
}

/// One hop of an 802.11b segment: numbered after the wired directions, segment by segment,
/// as the simulator numbers it (`Plan::dirs.len() + i` for `Plan::wlan_hops[i]`).
#[derive(Clone, Debug)]
pub struct WlanHopPlan {
    /// Its name and direction as in the simulator's `links` (`wlan0:ap-sta0`, `forward` for
    /// AP -> station).
    pub link: String,
    pub direction: &'static str,
    pub from: u32,
    pub to: u32,
    /// Its segment (index into `Plan::wlans`) and local hop.
    pub segment: u32,
    pub hop: u32,
}

#[derive(Clone, Debug)]
pub struct Plan {
    pub seed: u64,
    pub nodes: Vec<Node>,
    pub hosts: Vec<HostPlan>,
    /// Link direction `i` as the simulator numbers it (duplex link `i / 2`, forward first).
    pub dirs: Vec<DirPlan>,
    pub routes: Routes,
    /// 802.11b segments, driven by tcplab-sim's `WlanSegment`.
    pub wlans: Vec<WlanSpec>,
    pub wlan_hops: Vec<WlanHopPlan>,
    /// The one-link config: every packet read from one host goes to the other, whatever its
    /// destination address (as a point-to-point cable).
    pub point_to_point: bool,
}

impl Plan {
    /// The plan of a canonical scenario (what `tcplab validate --json` prints), validated
    /// first with the simulator's checks. Refused, with one line: cross-layer loss reports
    /// (not emulated).
    pub fn from_scenario(s: &Scenario) -> Result<Plan, String> {
        s.validate().map_err(|e| format!("scenario: {}", e.0))?;
        let mut errs = Vec::new();
        let layout = topology::expand(&s.topology, &mut errs);
        if let Some(e) = errs.first() {
            return Err(format!("scenario: {e}"));
        }
        if let Some(w) = layout.wlans.iter().find(|w| w.spec.report_losses) {
            return Err(format!(
                "scenario: {}.report_losses = true: cross-layer reports are not emulated",
                w.spec_path
            ));
        }
        let mut dirs = Vec::with_capacity(2 * layout.links.len());
        for l in &layout.links {
            check_dir(&format!("scenario: {}.forward", l.spec_path), &l.forward)?;
            check_dir(&format!("scenario: {}.reverse", l.spec_path), &l.reverse)?;
            for (direction, spec, from, to) in [
                ("forward", &l.forward, l.from, l.to),
                ("reverse", &l.reverse, l.to, l.from),
            ] {
                dirs.push(DirPlan {
                    link: l.name.clone(),
                    direction,
                    from,
                    to,
                    spec: spec.as_ref().clone(),
                });
            }
        }
        let mut wlan_hops = Vec::new();
        for (i, w) in layout.wlans.iter().enumerate() {
            let name = |n: u32| layout.nodes[n as usize].name.as_str();
            for (j, &sta) in w.stations.iter().enumerate() {
                let link = format!("{}:{}-{}", w.spec.name, name(w.ap), name(sta));
                for (hop, direction, from, to) in [
                    (2 * j, "forward", w.ap, sta),
                    (2 * j + 1, "reverse", sta, w.ap),
                ] {
                    wlan_hops.push(WlanHopPlan {
                        link: link.clone(),
                        direction,
                        from,
                        to,
                        segment: i as u32,
                        hop: hop as u32,
                    });
                }
            }
        }
        let wlans = layout.wlans.iter().map(|w| w.spec.clone()).collect();
        let base = u32::from(PREFIX.0);
        let hosts: Vec<HostPlan> = layout
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.kind == NodeKind::Host)
            .enumerate()
            .map(|(k, (i, n))| HostPlan {
                name: n.name.clone(),
                node: i as u32,
                addr: Ipv4Addr::from(base + 1 + k as u32),
            })
            .collect();
        if hosts.len() >= (1 << (32 - PREFIX.1)) - 2 {
            return Err(format!(
                "scenario: {} hosts: at most 65533 can be addressed",
                hosts.len()
            ));
        }
        Ok(Plan {
            seed: s.seed,
            routes: layout.routes(),
            nodes: layout.nodes,
            hosts,
            dirs,
            wlans,
            wlan_hops,
            point_to_point: false,
        })
    }

    /// The one-link config: hosts `a` (node 0) and `b` (node 1), link `cfg.link` forward
    /// from a to b.
    /// `cfg` was checked by [`Config::parse`].
    pub fn one_link(cfg: &Config) -> Plan {
        let nodes: Vec<Node> = ["a", "b"]
            .iter()
            .map(|n| Node {
                name: n.to_string(),
                kind: NodeKind::Host,
            })
            .collect();
        let dirs = vec![
            DirPlan {
                link: cfg.link.clone(),
                direction: "forward",
                from: 0,
                to: 1,
                spec: cfg.forward.clone(),
            },
            DirPlan {
                link: cfg.link.clone(),
                direction: "reverse",
                from: 1,
                to: 0,
                spec: cfg.reverse.clone(),
            },
        ];
        let hosts = (0..2)
            .map(|i| HostPlan {
                name: nodes[i].name.clone(),
                node: i as u32,
                addr: ONE_LINK_ADDRS[i],
            })
            .collect();
        Plan {
            seed: cfg.seed,
            routes: Routes::compute(&nodes, &[(0, 1), (1, 0)]),
            nodes,
            hosts,
            dirs,
            wlans: Vec::new(),
            wlan_hops: Vec::new(),
            point_to_point: true,
        }
    }

    /// The link direction a packet at node `at` for node `dst` leaves on.
    pub fn next_dir(&self, at: u32, dst: u32) -> Option<u32> {
        self.routes.next_link(at, dst)
    }

    /// The link directions from host node `src` to host node `dst`.
    pub fn path(&self, src: u32, dst: u32) -> Option<Vec<u32>> {
        let ends: Vec<(u32, u32)> = (0..self.dir_count())
            .map(|i| {
                let (_, _, from, to) = self.dir_name(i);
                (from, to)
            })
            .collect();
        self.routes.path(src, dst, &ends)
    }

    /// Wired directions and WLAN hops.
    pub fn dir_count(&self) -> u32 {
        (self.dirs.len() + self.wlan_hops.len()) as u32
    }

    /// (link, direction, from, to) of direction `i`: a wired one or a WLAN hop.
    pub fn dir_name(&self, i: u32) -> (&str, &'static str, u32, u32) {
        match self.dirs.get(i as usize) {
            Some(d) => (&d.link, d.direction, d.from, d.to),
            None => {
                let h = &self.wlan_hops[i as usize - self.dirs.len()];
                (&h.link, h.direction, h.from, h.to)
            }
        }
    }

    /// What Python needs to build the namespaces (`tcplab-emu --plan`): the address prefix,
    /// each host's name and address, the routers and the links.
    pub fn to_json(&self) -> Value {
        let name = |n: u32| self.nodes[n as usize].name.as_str();
        json!({
            "prefix": format!("{}/{}", PREFIX.0, PREFIX.1),
            "hosts": self.hosts.iter().map(|h| json!({"name": h.name, "addr": h.addr.to_string()})).collect::<Vec<_>>(),
            "routers": self.nodes.iter().filter(|n| n.kind == NodeKind::Router).map(|n| n.name.as_str()).collect::<Vec<_>>(),
            "links": self.dirs.iter().step_by(2).map(|d| json!({"name": d.link, "from": name(d.from), "to": name(d.to)})).collect::<Vec<_>>(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dumbbell(pairs: u32, access_delays_ms: &[u64]) -> Scenario {
        let dir = |rate: u64, delay_ms: u64| json!({"rate": rate, "delay": delay_ms * 1_000_000, "buffer": {"packets": 50}});
        let duplex = |rate, d| json!({"forward": dir(rate, d), "reverse": dir(rate, d)});
        let access: Vec<Value> = access_delays_ms
            .iter()
            .map(|&d| duplex(100_000_000, d))
            .collect();
        serde_json::from_value(json!({
            "name": "t", "seed": 7, "duration": 1_000_000_000u64,
            "topology": {"kind": "dumbbell", "pairs": pairs,
                "bottleneck": duplex(10_000_000, 5),
                "sender_access": access, "receiver_access": [duplex(100_000_000, 1)]},
        }))
        .unwrap()
    }

    #[test]
    fn a_dumbbell_has_a_host_per_end_and_routes_through_the_bottleneck() {
        let p = Plan::from_scenario(&dumbbell(2, &[1, 3])).unwrap();
        let names: Vec<_> = p.hosts.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["s0", "s1", "r0", "r1"]);
        let addrs: Vec<_> = p.hosts.iter().map(|h| h.addr.to_string()).collect();
        assert_eq!(
            addrs,
            ["10.214.0.1", "10.214.0.2", "10.214.0.3", "10.214.0.4"]
        );
        let (s1, r1) = (p.hosts[1].node, p.hosts[3].node);
        let labels = |a, b| -> Vec<String> {
            let path = p.path(a, b).unwrap();
            path.iter().map(|&d| p.dirs[d as usize].label()).collect()
        };
        assert_eq!(
            labels(s1, r1),
            ["s1-left/forward", "left-right/forward", "right-r1/forward"]
        );
        assert_eq!(
            labels(r1, s1),
            ["right-r1/reverse", "left-right/reverse", "s1-left/reverse"]
        );
        assert_eq!(p.dirs[2].spec.delay.as_nanos(), 3_000_000); // s1-left
        let plan = p.to_json();
        assert_eq!(plan["routers"], json!(["left", "right"]));
        assert_eq!(plan["links"].as_array().unwrap().len(), 5);
    }

    #[test]
    fn directions_carry_the_simulators_stream_labels() {
        let s = dumbbell(2, &[1, 3]);
        let p = Plan::from_scenario(&s).unwrap();
        let layout = topology::expand(&s.topology, &mut Vec::new());
        let net = tcplab_sim::network::Network::new(&layout, s.seed);
        let sim: Vec<String> = net
            .info
            .iter()
            .map(|i| format!("{}/{}", i.name, i.direction))
            .collect();
        let ours: Vec<String> = p.dirs.iter().map(DirPlan::label).collect();
        assert_eq!(ours, sim);
        assert_eq!(p.seed, s.seed);
    }

    #[test]
    fn wlan_hops_are_numbered_and_named_as_in_the_simulator() {
        let topo = tcplab_sim::builder::wlan_access(
            tcplab_sim::scenario::PipePreset::Thin,
            &[
                tcplab_sim::scenario::ChannelPreset::LL,
                tcplab_sim::scenario::ChannelPreset::HL,
            ],
        );
        let s = tcplab_sim::builder::ScenarioBuilder::new("w", topo).build();
        let p = Plan::from_scenario(&s).unwrap();
        let layout = topology::expand(&s.topology, &mut Vec::new());
        let net = tcplab_sim::network::Network::new(&layout, s.seed);
        let sim: Vec<(String, &str, u32)> = net
            .info
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.clone(), n.direction, net.hop_to(i as u32)))
            .collect();
        let ours: Vec<(String, &str, u32)> = (0..p.dir_count())
            .map(|i| {
                let (l, d, _, to) = p.dir_name(i);
                (l.to_string(), d, to)
            })
            .collect();
        assert_eq!(ours, sim);
        assert_eq!(p.wlan_hops.len(), 4);
        // A station reaches the server through its uplink hop and the wired links.
        let sta1 = p.hosts.iter().find(|h| h.name == "sta1").unwrap().node;
        let server = p.hosts.iter().find(|h| h.name == "server").unwrap().node;
        let path = p.path(sta1, server).unwrap();
        assert_eq!(p.dir_name(path[0]).0, "wlan0:ap-sta1");
        assert_eq!(p.dir_name(path[0]).1, "reverse");
    }

    #[test]
    fn invalid_and_unemulated_scenarios_are_one_line() {
        let mut s = dumbbell(2, &[1, 3, 4]);
        let e = Plan::from_scenario(&s).unwrap_err();
        assert!(e.starts_with("scenario: ") && !e.contains('\n'), "{e}");
        s = dumbbell(1, &[1]);
        if let tcplab_sim::scenario::Topology::Dumbbell(d) = &mut s.topology {
            d.bottleneck.forward.report_losses = true;
        }
        let e = Plan::from_scenario(&s).unwrap_err();
        assert!(e.contains("report_losses = true"), "{e}");
    }
}
