//! What the emulator builds: its hosts (each with an IPv4 address and, once running, a TUN
//! device in its own namespace), its link directions (each a [`LinkDirection`] of
//! tcplab-sim, with the simulator's random-stream label `"{link}/{direction}"`) and the
//! routing table between them.
//!
//! A plan comes either from a canonical scenario ([`Plan::from_scenario`]: tcplab-sim's own
//! topology expansion, routing table and per-flow pinned routes, never a second one) or from
//! the one-link config of [`crate::config`] ([`Plan::one_link`]: hosts `a` and `b` joined by
//! link `l0`).
//!
//! Addressing of a scenario: host `k` (the k-th host in the topology's node order) has
//! `10.214.0.0 + 1 + k` in the prefix [`PREFIX`] (`s0` of a dumbbell is 10.214.0.1). Every
//! host reaches every other through its one device; the emulator finds a packet's
//! destination host by its destination address and routes it hop by hop.
//!
//! Flows: live, the scenario's flows are numbered TCP flows first, then UDP flows, and flow
//! `i` uses port [`PORT_BASE`]` + i` at both ends (every live stack's convention). A flow's
//! key is its `src` host's address, its `dst` host's address and that port: a packet from
//! `src` to `dst` whose destination port is the flow's is its data (TCP) or datagram (UDP);
//! a packet from `dst` to `src` whose source port is the flow's is its ACK (TCP). A packet
//! of a flow with a pinned route (`route = [...]`) follows it, ACKs backwards (as the
//! simulator's [`PinnedRoutes`]); every other packet follows the routing table.

use crate::config::{check_dir, Config};
use crate::wire::{Framing, IP_UDP};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::net::Ipv4Addr;
use tcplab_core::Dur;
use tcplab_sim::flow_route::PinnedRoutes;
use tcplab_sim::node::{Node, Routes};
use tcplab_sim::packet::PacketKind;
use tcplab_sim::scenario::{
    Framing as ScenarioFraming, LinkDir, NodeKind, ReceiverStack, Scenario, SeriesMode, Stack,
    WlanSpec,
};
use tcplab_sim::topology;

/// The addresses of a scenario's hosts: 10.214.0.0/16.
pub const PREFIX: (Ipv4Addr, u8) = (Ipv4Addr::new(10, 214, 0, 0), 16);
/// Live flow `i` (TCP flows first, then UDP flows) uses port `PORT_BASE + i` at both ends.
pub const PORT_BASE: u16 = 5400;
/// The MTU of the hosts' devices (Python creates the TUN devices with the plan's `mtu`): the
/// largest IP packet a live flow may send.
pub const MTU: usize = 1500;
/// The addresses of the one-link config's hosts `a` and `b`.
pub const ONE_LINK_ADDRS: [Ipv4Addr; 2] =
    [Ipv4Addr::new(10, 213, 0, 1), Ipv4Addr::new(10, 213, 0, 2)];

#[derive(Clone, Debug)]
pub struct HostPlan {
    pub name: String,
    /// Its node in the topology.
    pub node: u32,
    pub addr: Ipv4Addr,
    /// The host's kernel runs a TCP end of one of its flows (a `stack = "linux"` flow's
    /// sender, its receiver unless tcplab's, a `stack = "tcplab-tcp"` flow's receiver):
    /// it answers a packet inside the write that delivers it (`Emulator::write`). A
    /// user-space endpoint's answers wait for its process.
    pub kernel_tcp: bool,
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

/// A scenario flow as the emulator recognises its packets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowPlan {
    /// `true`: UDP flow `index` (`scenario.udp`); `false`: TCP flow `index`.
    pub udp: bool,
    pub index: u32,
    pub name: String,
    /// Host nodes of its ends.
    pub src: u32,
    pub dst: u32,
    pub src_addr: Ipv4Addr,
    pub dst_addr: Ipv4Addr,
    /// Its port at both ends.
    pub port: u16,
}

impl FlowPlan {
    /// The kind of its packets that travel from `src` to `dst`.
    fn forward_kind(&self) -> PacketKind {
        if self.udp {
            PacketKind::Udp
        } else {
            PacketKind::Data
        }
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
    /// The scenario's flows: TCP flows, then UDP flows (empty for the one-link config).
    pub flows: Vec<FlowPlan>,
    /// Routes pinned per flow (tcplab-sim's own), followed before `routes`.
    pub pinned: PinnedRoutes,
    /// Flow keys (from address, to address, port) -> `flows` index.
    by_key: HashMap<(Ipv4Addr, Ipv4Addr, u16), usize>,
    /// 802.11b segments, driven by tcplab-sim's `WlanSegment`.
    pub wlans: Vec<WlanSpec>,
    pub wlan_hops: Vec<WlanHopPlan>,
    /// The one-link config: every packet read from one host goes to the other, whatever its
    /// destination address (as a point-to-point cable).
    pub point_to_point: bool,
    /// The scenario's duration (None: the one-link config): the span the `links` rows'
    /// utilization is taken over, as in the simulator.
    pub duration: Option<Dur>,
    /// What the link directions' queues record (the scenario's `trace.series`).
    pub queues: QueueSeries,
    /// Whether the emulator logs every TCP data segment the hosts send
    /// ([`crate::tcp_sends`]): when the scenario traces segments.
    pub tcp_sends: bool,
    /// The capture files the scenario's `trace.pcap` asks for (`tcplab_sim::pcap::plan`:
    /// file name, link, its direction indices and names), and the bytes of a packet kept.
    pub pcap: Vec<PcapFilePlan>,
    pub pcap_snaplen: u32,
}

/// One capture file: its name (`"{link}"` or `"{link}.{direction}"`), link, the
/// directions (as the simulator numbers them) captured to it and their names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcapFilePlan {
    pub name: String,
    pub link: String,
    pub dirs: Vec<u32>,
    pub directions: Vec<&'static str>,
}

/// When the emulator states what each link direction holds (the `queues` table), as the
/// simulator does for the scenario's `trace.series`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueSeries {
    Off,
    /// Every link direction every `trace.interval` (ns) of model time.
    Interval(u64),
    /// A direction after every packet it takes, drops or delivers.
    Change,
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
        let mut hosts: Vec<HostPlan> = layout
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.kind == NodeKind::Host)
            .enumerate()
            .map(|(k, (i, n))| HostPlan {
                name: n.name.clone(),
                node: i as u32,
                addr: Ipv4Addr::from(base + 1 + k as u32),
                kernel_tcp: false,
            })
            .collect();
        if hosts.len() >= (1 << (32 - PREFIX.1)) - 2 {
            return Err(format!(
                "scenario: {} hosts: at most 65533 can be addressed",
                hosts.len()
            ));
        }
        let flows = flow_plans(s, &layout, &hosts)?;
        let host_of: HashMap<u32, usize> =
            hosts.iter().enumerate().map(|(k, h)| (h.node, k)).collect();
        for f in flows.iter().filter(|f| !f.udp) {
            let flow = &s.flows[f.index as usize];
            let (src, dst) = match (flow.stack, flow.receiver) {
                (Stack::Linux, ReceiverStack::Stack) => (true, true),
                (Stack::Linux, ReceiverStack::Tcplab) => (true, false),
                (Stack::TcplabTcp, _) => (false, true),
                (Stack::Tcplab, _) => (false, false),
            };
            for (end, node) in [(src, f.src), (dst, f.dst)] {
                if end {
                    hosts[host_of[&node]].kernel_tcp = true;
                }
            }
        }
        let pcap = tcplab_sim::pcap::plan(&s.trace.pcap, &layout)
            .map_err(|e| format!("scenario: {}", e[0]))?
            .into_iter()
            .map(|(name, link, dirs, directions)| PcapFilePlan {
                name,
                link,
                dirs,
                directions,
            })
            .collect();
        let by_key = flows
            .iter()
            .enumerate()
            .map(|(k, f)| ((f.src_addr, f.dst_addr, f.port), k))
            .collect();
        Ok(Plan {
            seed: s.seed,
            routes: layout.routes(),
            pinned: PinnedRoutes::of_scenario(s, &layout),
            nodes: layout.nodes,
            hosts,
            dirs,
            flows,
            by_key,
            wlans,
            wlan_hops,
            point_to_point: false,
            duration: Some(s.duration),
            queues: match s.trace.series {
                SeriesMode::Off => QueueSeries::Off,
                SeriesMode::Interval => QueueSeries::Interval(s.trace.interval.as_nanos().max(1)),
                SeriesMode::Change => QueueSeries::Change,
            },
            tcp_sends: s.trace.segments,
            pcap,
            pcap_snaplen: s.trace.pcap_snaplen,
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
                kernel_tcp: cfg.kernel_tcp,
            })
            .collect();
        Plan {
            seed: cfg.seed,
            routes: Routes::compute(&nodes, &[(0, 1), (1, 0)]),
            nodes,
            hosts,
            dirs,
            flows: Vec::new(),
            pinned: PinnedRoutes::default(),
            by_key: HashMap::new(),
            wlans: Vec::new(),
            wlan_hops: Vec::new(),
            point_to_point: true,
            duration: None,
            queues: QueueSeries::Off,
            tcp_sends: false,
            pcap: Vec::new(),
            pcap_snaplen: 0,
        }
    }

    /// Whether some flow's packets follow a pinned route (else every packet follows the
    /// routing table, and looking flows up is not needed).
    pub fn has_pinned_routes(&self) -> bool {
        self.pinned.any()
    }

    /// The flow a packet from `src` to `dst` with ports `sport` -> `dport` belongs to, and
    /// its kind: its data or datagram (from the flow's `src` to its `dst`, to the flow's
    /// port), or its ACK (from `dst` to `src`, from the flow's port; TCP flows only).
    pub fn flow_of(
        &self,
        src: Ipv4Addr,
        dst: Ipv4Addr,
        sport: u16,
        dport: u16,
    ) -> Option<(PacketKind, u32)> {
        if let Some(&k) = self.by_key.get(&(src, dst, dport)) {
            let f = &self.flows[k];
            return Some((f.forward_kind(), f.index));
        }
        let f = &self.flows[*self.by_key.get(&(dst, src, sport))?];
        (!f.udp).then_some((PacketKind::Ack, f.index))
    }

    /// The link direction a packet at node `at` for node `dst` leaves on: its flow's pinned
    /// route when `flow` (what [`Plan::flow_of`] found) has one, else the routing table's.
    pub fn next_dir(&self, at: u32, dst: u32, flow: Option<(PacketKind, u32)>) -> Option<u32> {
        flow.and_then(|(kind, i)| self.pinned.next_link_of(kind, i, at))
            .or_else(|| self.routes.next_link(at, dst))
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

    /// What Python needs to build the namespaces (`tcplab-emu --plan`): the address prefix, the devices' MTU,
    /// each host's name and address, the routers, the links, the 802.11b hops (`wlan_hops`:
    /// name, direction, index in the simulator's link numbering, ends), and the flows (kind `tcp` or
    /// `udp`, index, name, ends, port, and a pinned route's link directions as
    /// `{link}/{direction}`: `route`, and for TCP `ack_route`; null when not pinned).
    pub fn to_json(&self) -> Value {
        let name = |n: u32| self.nodes[n as usize].name.as_str();
        let labels = |kind, i| {
            self.pinned.links(kind, i).map(|ls| {
                ls.iter()
                    .map(|&l| self.dirs[l as usize].label())
                    .collect::<Vec<_>>()
            })
        };
        let flows: Vec<Value> = self
            .flows
            .iter()
            .map(|f| {
                let mut v = json!({
                    "kind": if f.udp { "udp" } else { "tcp" }, "index": f.index, "name": f.name,
                    "src": name(f.src), "dst": name(f.dst), "port": f.port,
                    "route": labels(f.forward_kind(), f.index),
                });
                if !f.udp {
                    v["ack_route"] = json!(labels(PacketKind::Ack, f.index));
                }
                v
            })
            .collect();
        json!({
            "flows": flows,
            "prefix": format!("{}/{}", PREFIX.0, PREFIX.1),
            "mtu": MTU,
            "hosts": self.hosts.iter().map(|h| json!({"name": h.name, "addr": h.addr.to_string()})).collect::<Vec<_>>(),
            "routers": self.nodes.iter().filter(|n| n.kind == NodeKind::Router).map(|n| n.name.as_str()).collect::<Vec<_>>(),
            "links": self.dirs.iter().step_by(2).map(|d| json!({"name": d.link, "from": name(d.from), "to": name(d.to)})).collect::<Vec<_>>(),
            "wlan_hops": self.wlan_hops.iter().enumerate().map(|(i, h)| json!({"name": h.link, "direction": h.direction, "index": self.dirs.len() + i, "from": name(h.from), "to": name(h.to)})).collect::<Vec<_>>(),
        })
    }
}
/// What a live run of the scenario could not send, one line each (empty: nothing): a
/// datagram over the devices' [`MTU`], i.e. a `stack = "tcplab"` flow's full segment (its
/// MSS) behind IP, UDP and its framing's header, or a UDP source's IP packet. The senders
/// would find it at their first full segment (the socket's EMSGSIZE); `tcplab run --live`
/// refuses it before anything starts. (A testbed whose flows are started otherwise, e.g. on
/// Linux's stack, is not refused: the plan lists these, `flow_problems`.)
pub fn flow_problems(s: &Scenario) -> Vec<String> {
    let mut out = Vec::new();
    for (i, f) in s.flows.iter().enumerate() {
        if f.stack != Stack::Tcplab {
            continue; // real TCP: the kernel (or tcplab's TCP) negotiates the MSS
        }
        let framing = match f.framing {
            ScenarioFraming::Tcplab => Framing::Tcplab,
            ScenarioFraming::Eth => Framing::Eth,
        };
        let mss = s.tcp_of(f).mss as usize;
        let size = IP_UDP + framing.data_header() + mss;
        if size > MTU {
            out.push(format!(
                "scenario: flows[{i}].tcp.mss = {mss}: a {size}-byte IP packet does not fit the \
                 live devices' MTU of {MTU} (IP + UDP + {} bytes of header + payload; at most \
                 {} here; docs/live.md)",
                framing.data_header(),
                MTU - IP_UDP - framing.data_header()
            ));
        }
    }
    for (j, u) in s.udp.iter().enumerate() {
        // packet_size is the IP packet's
        if u.packet_size as usize > MTU {
            out.push(format!(
                "scenario: udp[{j}].packet_size = {}: the IP packet does not fit the live \
                 devices' MTU of {MTU} (docs/live.md)",
                u.packet_size
            ));
        }
    }
    out
}

/// The scenario's flows, TCP then UDP, with their ends' addresses and ports. Refused: more
/// flows than ports above [`PORT_BASE`].
fn flow_plans(
    s: &Scenario,
    layout: &topology::Layout,
    hosts: &[HostPlan],
) -> Result<Vec<FlowPlan>, String> {
    let n = s.flows.len() + s.udp.len();
    if n > (u16::MAX - PORT_BASE) as usize + 1 {
        return Err(format!(
            "scenario: {n} flows: live flows use ports {PORT_BASE} + i, at most {} flows",
            (u16::MAX - PORT_BASE) as usize + 1
        ));
    }
    let addr: HashMap<u32, Ipv4Addr> = hosts.iter().map(|h| (h.node, h.addr)).collect();
    let node = |name: &str| layout.node(name).expect("validated node name");
    let ends = s
        .flows
        .iter()
        .map(|f| (false, f.name.clone(), &f.src, &f.dst))
        .chain(s.udp.iter().map(|u| (true, u.name.clone(), &u.src, &u.dst)));
    let (mut tcp, mut udp) = (0u32, 0u32);
    Ok(ends
        .enumerate()
        .map(|(i, (is_udp, name, src, dst))| {
            let counter = if is_udp { &mut udp } else { &mut tcp };
            let index = *counter;
            *counter += 1;
            let (src, dst) = (node(src), node(dst));
            let default = if is_udp { "udp" } else { "flow" };
            FlowPlan {
                udp: is_udp,
                index,
                name: name.unwrap_or_else(|| format!("{default}{index}")),
                src,
                dst,
                src_addr: addr[&src],
                dst_addr: addr[&dst],
                port: PORT_BASE + i as u16,
            }
        })
        .collect())
}

#[cfg(test)]
pub(crate) mod tests {
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

    /// Which hosts' kernels run a TCP end: each stack puts its kernel ends where Linux's TCP
    /// runs, and a UDP flow or tcplab's own ends put none.
    #[test]
    fn a_host_runs_kernel_tcp_where_a_flows_kernel_end_is() {
        let mut s = serde_json::to_value(dumbbell(3, &[1, 1, 1])).unwrap();
        let flow = |src: &str, dst: &str, stack: &str, receiver: &str| {
            json!({"src": src, "dst": dst, "controller": {"name": "reno"},
                   "recovery": {"name": "newreno"}, "stack": stack, "receiver": receiver})
        };
        s["flows"] = json!([
            flow("s0", "r0", "linux", "tcplab"),
            flow("s1", "r1", "tcplab-tcp", "stack"),
            flow("s2", "r2", "tcplab", "stack"),
        ]);
        s["udp"] = json!([{"src": "r2", "dst": "s2", "rate": 1_000_000, "packet_size": 1000}]);
        let kernel = |s: &Value| -> Vec<(String, bool)> {
            let p = Plan::from_scenario(&serde_json::from_value(s.clone()).unwrap()).unwrap();
            p.hosts
                .iter()
                .map(|h| (h.name.clone(), h.kernel_tcp))
                .collect()
        };
        let on = |names: &[&str]| -> Vec<(String, bool)> {
            ["s0", "s1", "s2", "r0", "r1", "r2"]
                .iter()
                .map(|n| (n.to_string(), names.contains(n)))
                .collect()
        };
        assert_eq!(kernel(&s), on(&["s0", "r1"]));
        s["flows"][0]["receiver"] = json!("stack");
        assert_eq!(kernel(&s), on(&["s0", "r0", "r1"]));
        let mut one = json!({"forward": s["topology"]["bottleneck"]["forward"],
                             "reverse": s["topology"]["bottleneck"]["reverse"]});
        let hosts = |c: &Value| -> Vec<bool> {
            let p = Plan::one_link(&Config::parse(&c.to_string()).unwrap());
            p.hosts.iter().map(|h| h.kernel_tcp).collect()
        };
        assert_eq!(hosts(&one), [false, false]);
        one["kernel_tcp"] = json!(true);
        assert_eq!(hosts(&one), [true, true]);
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

    /// Hosts a, c -> r1; r1 -> r2 -> b directly, or r1 -> r3 -> r2 (a detour). TCP flow 0
    /// a -> b pinned through the detour, TCP flow 1 c -> b not; UDP flow 0 a -> b pinned
    /// through the detour, UDP flow 1 a -> b not.
    pub(crate) fn detour() -> Scenario {
        let dir = json!({"rate": 10_000_000, "delay": 1_000_000, "buffer": {"packets": 50}});
        let link = |a: &str, b: &str| json!({"from": a, "to": b, "forward": dir, "reverse": dir});
        let host = |n: &str| json!({"name": n, "kind": "host"});
        let router = |n: &str| json!({"name": n, "kind": "router"});
        let detour = json!(["a", "r1", "r3", "r2", "b"]);
        let tcp = |src: &str, route: Option<&Value>| {
            let mut f = json!({"src": src, "dst": "b", "controller": {"name": "reno"},
                               "recovery": {"name": "newreno"}});
            if let Some(r) = route {
                f["route"] = r.clone();
            }
            f
        };
        let udp = |route: Option<&Value>| {
            let mut f = json!({"src": "a", "dst": "b", "rate": 1_000_000, "packet_size": 1000});
            if let Some(r) = route {
                f["route"] = r.clone();
            }
            f
        };
        serde_json::from_value(json!({
            "name": "t", "seed": 3, "duration": 1_000_000_000u64,
            "topology": {"kind": "explicit",
                "nodes": [host("a"), host("b"), host("c"), router("r1"), router("r2"), router("r3")],
                "links": [link("a", "r1"), link("c", "r1"), link("r1", "r2"), link("r2", "b"),
                          link("r1", "r3"), link("r3", "r2")]},
            "flows": [tcp("a", Some(&detour)), tcp("c", None)],
            "udp": [udp(Some(&detour)), udp(None)],
        }))
        .unwrap()
    }

    /// The labels of the link directions a packet of `flow` from host `src` to host `dst`
    /// crosses, hop by hop as the emulator routes it.
    fn walk(p: &Plan, src: &str, dst: &str, flow: Option<(PacketKind, u32)>) -> Vec<String> {
        let node = |n: &str| p.nodes.iter().position(|x| x.name == n).unwrap() as u32;
        let (mut at, dst) = (node(src), node(dst));
        let mut out = Vec::new();
        while at != dst {
            let l = p.next_dir(at, dst, flow).unwrap() as usize;
            out.push(p.dirs[l].label());
            at = p.dirs[l].to;
        }
        out
    }

    #[test]
    fn flows_are_keyed_by_their_hosts_and_ports_and_pinned_ones_follow_their_route() {
        let p = Plan::from_scenario(&detour()).unwrap();
        assert!(p.has_pinned_routes());
        let ports: Vec<_> = p.flows.iter().map(|f| (f.udp, f.index, f.port)).collect();
        assert_eq!(
            ports,
            [
                (false, 0, 5400),
                (false, 1, 5401),
                (true, 0, 5402),
                (true, 1, 5403)
            ]
        );
        let addr = |n: &str| p.hosts.iter().find(|h| h.name == n).unwrap().addr;
        let (a, b, c) = (addr("a"), addr("b"), addr("c"));
        use PacketKind::{Ack, Data, Udp};
        assert_eq!(p.flow_of(a, b, 5400, 5400), Some((Data, 0)));
        assert_eq!(p.flow_of(b, a, 5400, 5400), Some((Ack, 0)));
        assert_eq!(p.flow_of(c, b, 5401, 5401), Some((Data, 1)));
        assert_eq!(p.flow_of(a, b, 40000, 5402), Some((Udp, 0)));
        assert_eq!(p.flow_of(a, b, 40000, 5403), Some((Udp, 1)));
        // A UDP flow has no reverse packets; other ports or hosts are no flow's.
        assert_eq!(p.flow_of(b, a, 5402, 40000), None);
        assert_eq!(p.flow_of(a, b, 5400, 5401), None);
        assert_eq!(p.flow_of(c, b, 5400, 5400), None);
        let detour = [
            "a-r1/forward",
            "r1-r3/forward",
            "r3-r2/forward",
            "r2-b/forward",
        ];
        let direct = ["a-r1/forward", "r1-r2/forward", "r2-b/forward"];
        let find = |s, d, sp, dp| p.flow_of(addr(s), addr(d), sp, dp);
        assert_eq!(walk(&p, "a", "b", find("a", "b", 5400, 5400)), detour);
        assert_eq!(
            walk(&p, "b", "a", find("b", "a", 5400, 5400)),
            [
                "r2-b/reverse",
                "r3-r2/reverse",
                "r1-r3/reverse",
                "a-r1/reverse"
            ]
        );
        assert_eq!(walk(&p, "a", "b", find("a", "b", 1, 5402)), detour);
        // Not pinned, or no flow's: the routing table's (fewest hops).
        assert_eq!(walk(&p, "a", "b", find("a", "b", 1, 5403)), direct);
        assert_eq!(walk(&p, "a", "b", None), direct);
        assert_eq!(
            walk(&p, "c", "b", find("c", "b", 5401, 5401)),
            ["c-r1/forward", "r1-r2/forward", "r2-b/forward"]
        );
        let j = p.to_json();
        assert_eq!(j["flows"][0]["route"], json!(detour));
        assert_eq!(j["flows"][0]["ack_route"][0], "r2-b/reverse");
        assert_eq!(j["flows"][1]["route"], Value::Null);
        assert_eq!(
            (
                &j["flows"][2]["kind"],
                &j["flows"][2]["port"],
                &j["flows"][2]["name"]
            ),
            (&json!("udp"), &json!(5402), &json!("udp0"))
        );
        assert!(j["flows"][2].get("ack_route").is_none());
    }

    #[test]
    fn without_pinned_routes_no_flow_is_looked_up() {
        let p = Plan::from_scenario(&dumbbell(2, &[1, 3])).unwrap();
        assert!(!p.has_pinned_routes() && p.flows.is_empty());
    }
}
