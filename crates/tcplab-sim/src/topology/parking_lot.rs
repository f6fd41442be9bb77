//! Parking lot: cascaded bottlenecks (Adaptive Reno Fig. 5, "topology (2)").
//!
//! Routers `r0..r{hops}` in a chain; hop `h` is the duplex link `r{h}-r{h+1}` (forward from
//! `r{h}` to `r{h+1}`). Hosts, each on its own access link:
//! - long pairs `ls{i}` (at `r0`) -> `lr{i}` (at `r{hops}`): every hop;
//! - cross pairs of hop `h`: `cs{h}_{i}` (at `r{h}`) -> `cr{h}_{i}` (at `r{h+1}`): one hop;
//! - reverse pairs `vs{i}` (at `r{hops}`) -> `vr{i}` (at `r0`): every hop, backwards.
//!
//! Access links are named from the sending side: `ls0-r0`, `r3-lr0`, `cs1_0-r1`,
//! `r2-cr1_0`, `vs0-r3`, `r0-vr0`; their forward direction carries the pair's data. Node
//! order: routers, then long, cross (by hop) and reverse hosts, each sender before its
//! receiver's list; link order: hops, then access links in the same host order.
//!
//! Router queues: the paper runs RED at every router with thresholds at 10% and 30% of the
//! longest flow's bandwidth-delay product ([`red_thresholds`]). `queue` given: every router
//! link direction uses it. Not given: [`default_router_queue`] decides (RED with those thresholds
//! unless the hop sets its own queue).

use super::{borrowed, finish, host, one_or_each, push_link, router, DuplexLink, Layout};
use crate::node::Node;
pub use crate::scenario::ParkingLot;
use crate::scenario::{LinkDir, QueueSpec, RedMode, RedSpec};
use std::borrow::Cow;

/// RED thresholds in packets: 10% and 30% of the longest flow's bandwidth-delay product.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedThresholds {
    /// The BDP they derive from, in packets of `packet_size` bytes.
    pub bdp_packets: f64,
    pub min_th: f64,
    pub max_th: f64,
}

/// The thresholds of the paper's RED routers. The longest flows are the long (and reverse)
/// pairs: their round-trip propagation delay is both access links and every hop, both ways
/// (forward directions for data, reverse for ACKs); the bandwidth is the slowest hop's
/// forward rate. Serialization times are left out.
pub fn red_thresholds(p: &ParkingLot) -> RedThresholds {
    let hop = |h: usize| &p.bottleneck[if p.bottleneck.len() == 1 { 0 } else { h }];
    let hops = (0..p.hops as usize).filter(|&h| h < p.bottleneck.len() || p.bottleneck.len() == 1);
    let mut rtt = 2 * (p.access.forward.delay.as_nanos() + p.access.reverse.delay.as_nanos());
    let mut rate = u64::MAX;
    for h in hops {
        let d = hop(h);
        rtt += d.forward.delay.as_nanos() + d.reverse.delay.as_nanos();
        rate = rate.min(d.forward.rate);
    }
    let rate = if rate == u64::MAX { 0 } else { rate };
    let bdp_bits = rate as f64 * rtt as f64 / 1e9;
    let bdp_packets = bdp_bits / (8.0 * p.packet_size.max(1) as f64);
    RedThresholds {
        bdp_packets,
        min_th: 0.1 * bdp_packets,
        max_th: 0.3 * bdp_packets,
    }
}

/// The queue of a router link direction when the scenario gives none: the hop's own queue
/// if it sets one, otherwise the paper's RED with `t`'s thresholds. The paper gives only the
/// thresholds; the other parameters are ns-2's defaults of its time (max_p 0.1 = 1/linterm,
/// w_q 0.002, gentle, wait), in packet mode.
pub fn default_router_queue(hop: &LinkDir, t: RedThresholds) -> QueueSpec {
    match hop.queue {
        QueueSpec::DropTail => QueueSpec::Red(RedSpec {
            min_th: t.min_th,
            max_th: t.max_th,
            max_p: 0.1,
            w_q: 0.002,
            gentle: true,
            wait: true,
            mode: RedMode::Packets,
            ecn: false,
            mean_packet_size: 1500,
        }),
        ref q => q.clone(),
    }
}

/// Host pairs in flow order: long, cross (by hop), reverse, as (sender, receiver) names.
pub fn pairs(p: &ParkingLot) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for i in 0..p.long_pairs {
        out.push((format!("ls{i}"), format!("lr{i}")));
    }
    for h in 0..p.hops as usize {
        let n = match p.cross_pairs.len() {
            1 => p.cross_pairs[0],
            _ => p.cross_pairs.get(h).copied().unwrap_or(0),
        };
        for i in 0..n {
            out.push((format!("cs{h}_{i}"), format!("cr{h}_{i}")));
        }
    }
    for i in 0..p.reverse_pairs {
        out.push((format!("vs{i}"), format!("vr{i}")));
    }
    out
}

pub fn expand<'a>(p: &'a ParkingLot, errs: &mut Vec<String>) -> Layout<'a> {
    let hops = p.hops as usize;
    if hops == 0 {
        errs.push("topology.hops = 0: expected at least 1 router-to-router link".into());
    }
    // packet_size = 0 is a coded problem of topology::expand_problems.
    if p.cross_pairs.len() > 1 && p.cross_pairs.len() != hops {
        errs.push(format!(
            "topology.cross_pairs has {} entries: expected 1 (for every hop) or {hops} (one per hop)",
            p.cross_pairs.len()
        ));
    }
    if p.long_pairs == 0 && p.reverse_pairs == 0 && p.cross_pairs.iter().all(|&n| n == 0) {
        errs.push(
            "topology: long_pairs, cross_pairs and reverse_pairs are all 0: expected at least one host pair"
                .into(),
        );
    }
    let thresholds = red_thresholds(p);
    let mut nodes: Vec<Node> = (0..=hops).map(|h| router(&format!("r{h}"))).collect();
    let mut links: Vec<DuplexLink<'a>> = Vec::new();
    for h in 0..hops {
        let Some((d, path)) = one_or_each("bottleneck", &p.bottleneck, hops, h, errs) else {
            continue;
        };
        let q = |dir: &LinkDir| match &p.queue {
            Some(q) => q.clone(),
            None => default_router_queue(dir, thresholds),
        };
        let (qf, qr) = (q(&d.forward), q(&d.reverse));
        let owned = |dir: &'a LinkDir, q: QueueSpec| {
            if q == dir.queue {
                Cow::Borrowed(dir)
            } else {
                Cow::Owned(LinkDir {
                    queue: q,
                    ..dir.clone()
                })
            }
        };
        push_link(
            &nodes,
            &mut links,
            (h as u32, h as u32 + 1),
            owned(&d.forward, qf),
            owned(&d.reverse, qr),
            path,
        );
    }
    // Access links: the sender's from host to router, the receiver's from router to host.
    let cross_at = |name: &str| -> (usize, usize) {
        let h: usize = name[2..]
            .split('_')
            .next()
            .unwrap_or("0")
            .parse()
            .unwrap_or(0);
        (h, h + 1)
    };
    for (s, r) in pairs(p) {
        let (at_s, at_r) = match &s[..2] {
            "ls" => (0, hops),
            "vs" => (hops, 0),
            _ => cross_at(&s),
        };
        for (name, at, sending) in [(s, at_s, true), (r, at_r, false)] {
            let id = nodes.len() as u32;
            nodes.push(host(name));
            let ends = if sending {
                (id, at as u32)
            } else {
                (at as u32, id)
            };
            let (f, r) = borrowed(&p.access);
            push_link(&nodes, &mut links, ends, f, r, "topology.access".into());
        }
    }
    finish(nodes, links)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::Routes;
    use crate::scenario::{Buffer, Duplex};
    use tcplab_core::Dur;

    fn lot(hops: u32, cross: Vec<u32>) -> ParkingLot {
        let dir = |rate, ms| LinkDir::new(rate, Dur::from_millis(ms), Buffer::Packets(100));
        ParkingLot {
            hops,
            bottleneck: vec![Duplex::symmetric(dir(100_000_000, 10))],
            access: Duplex::symmetric(dir(1_000_000_000, 1)),
            long_pairs: 2,
            cross_pairs: cross,
            reverse_pairs: 1,
            queue: None,
            packet_size: 1500,
        }
    }

    #[test]
    fn routers_default_to_red_with_the_bdp_thresholds() {
        let p = lot(2, vec![1]);
        let t = red_thresholds(&p);
        match default_router_queue(&p.bottleneck[0].forward, t) {
            QueueSpec::Red(r) => assert_eq!((r.min_th, r.max_th), (t.min_th, t.max_th)),
            q => panic!("{q:?}"),
        }
        // A hop that sets its own queue keeps it.
        let mut own = p.bottleneck[0].forward.clone();
        own.queue = QueueSpec::Red(RedSpec {
            min_th: 1.0,
            ..match default_router_queue(&p.bottleneck[0].forward, t) {
                QueueSpec::Red(r) => r,
                _ => unreachable!(),
            }
        });
        assert_eq!(default_router_queue(&own, t), own.queue);
    }

    #[test]
    fn names_and_routes() {
        let p = lot(3, vec![1, 0, 2]);
        let mut errs = Vec::new();
        let l = expand(&p, &mut errs);
        assert!(errs.is_empty(), "{errs:?}");
        let names: Vec<&str> = l.links.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "r0-r1", "r1-r2", "r2-r3", "ls0-r0", "r3-lr0", "ls1-r0", "r3-lr1", "cs0_0-r0",
                "r1-cr0_0", "cs2_0-r2", "r3-cr2_0", "cs2_1-r2", "r3-cr2_1", "vs0-r3", "r0-vr0"
            ]
        );
        let routes = Routes::compute(&l.nodes, &l.directions());
        let dirs = l.directions();
        let hops = |a: &str, b: &str| {
            routes
                .path(l.node(a).unwrap(), l.node(b).unwrap(), &dirs)
                .unwrap()
                .len()
        };
        assert_eq!(hops("ls1", "lr1"), 5, "access + 3 hops + access");
        assert_eq!(hops("cs2_1", "cr2_1"), 3);
        assert_eq!(hops("vs0", "vr0"), 5);
        // Reverse data crosses the hops backwards: r3 -> r2 is hop 2's reverse direction.
        let path = routes
            .path(l.node("vs0").unwrap(), l.node("vr0").unwrap(), &dirs)
            .unwrap();
        assert_eq!(path[1], 2 * 2 + 1);
    }

    #[test]
    fn red_thresholds_from_the_longest_flows_bdp() {
        let p = lot(3, vec![1]);
        let t = red_thresholds(&p);
        // RTT = 2 * (1 + 30 + 1) ms = 64 ms; 100 Mb/s * 64 ms = 800 kB = 533.3 packets.
        assert!((t.bdp_packets - 533.333).abs() < 0.01, "{t:?}");
        assert!((t.min_th - 53.333).abs() < 0.01 && (t.max_th - 160.0).abs() < 0.01);
        // A slower middle hop sets the rate.
        let mut p = lot(3, vec![1]);
        let slow = LinkDir::new(10_000_000, Dur::from_millis(10), Buffer::Packets(10));
        p.bottleneck = vec![
            p.bottleneck[0].clone(),
            Duplex::symmetric(slow),
            p.bottleneck[0].clone(),
        ];
        assert!((red_thresholds(&p).bdp_packets - 53.333).abs() < 0.01);
    }

    #[test]
    fn bad_lists_are_reported() {
        let mut p = lot(3, vec![1, 2]);
        p.bottleneck.push(p.bottleneck[0].clone());
        let mut errs = Vec::new();
        expand(&p, &mut errs);
        assert!(
            errs.iter()
                .any(|e| e.starts_with("topology.cross_pairs has 2 entries")),
            "{errs:?}"
        );
        assert!(
            errs.iter()
                .any(|e| e.starts_with("topology.bottleneck has 2 entries")),
            "{errs:?}"
        );
        let mut errs = Vec::new();
        expand(&lot(0, vec![1]), &mut errs);
        assert!(errs[0].starts_with("topology.hops = 0"), "{errs:?}");
    }
}
