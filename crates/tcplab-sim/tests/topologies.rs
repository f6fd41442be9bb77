//! General graphs (routes by hops, by delay, pinned per flow, static entries) and the
//! parking-lot and wired-cum-wireless presets, run end to end.

use crate::common;

use tcplab_core::Dur;
use tcplab_sim::builder::{explicit, ScenarioBuilder};
use tcplab_sim::scenario::{
    Duplex, LossSpec, NodeKind, QueueSpec, Routing, Scenario, StaticRoute, TcpFlowSpec, Topology,
    TraceSpec,
};
use tcplab_sim::topology::parking_lot::{red_thresholds, ParkingLot};
use tcplab_sim::topology::wired_wireless::WiredCumWireless;
use tcplab_sim::{Results, Simulation};

/// s0 - r1 - d0 is two hops over a 100 ms link; s0 - r1 - r2 - r3 - d0 is four over
/// 3 x 5 ms.
fn diamond() -> Scenario {
    let fast = |ms| Duplex::symmetric(common::dir(10_000_000, ms, 100));
    let topo = explicit(
        &[
            ("s0", NodeKind::Host),
            ("r1", NodeKind::Router),
            ("r2", NodeKind::Router),
            ("r3", NodeKind::Router),
            ("d0", NodeKind::Host),
        ],
        vec![
            ("s0", "r1", fast(1)),
            ("r1", "d0", fast(100)),
            ("r1", "r2", fast(5)),
            ("r2", "r3", fast(5)),
            ("r3", "d0", fast(5)),
        ],
    );
    ScenarioBuilder::new("diamond", topo)
        .duration(Dur::from_secs(2))
        .flow(TcpFlowSpec::bulk("s0", "d0").bytes(200_000))
        .trace(TraceSpec::off())
        .build()
}

fn explicit_mut(s: &mut Scenario) -> &mut tcplab_sim::scenario::Explicit {
    match &mut s.topology {
        Topology::Explicit(e) => e,
        _ => unreachable!(),
    }
}

fn sent(r: &Results, link: &str, dir: &str) -> u64 {
    r.links
        .iter()
        .find(|l| l.link == link && l.direction == dir)
        .unwrap_or_else(|| panic!("no link {link}"))
        .packets_sent
}

#[test]
fn routes_by_hops_by_delay_pinned_and_static() {
    // By hops: the direct 100 ms link, both ways.
    let r = Simulation::run(&diamond()).unwrap();
    assert!(sent(&r, "r1-d0", "forward") > 100 && sent(&r, "r1-d0", "reverse") > 50);
    assert_eq!(sent(&r, "r1-r2", "forward"), 0);
    assert!(r.flows[0].completed);
    let slow = r.flows[0].end_ns;

    // By delay: the three short hops, both ways, and the transfer ends sooner.
    let mut s = diamond();
    explicit_mut(&mut s).routing = Routing::Delay;
    let r = Simulation::run(&s).unwrap();
    assert_eq!(
        sent(&r, "r1-d0", "forward") + sent(&r, "r1-d0", "reverse"),
        0
    );
    assert!(sent(&r, "r3-d0", "forward") > 100 && sent(&r, "r1-r2", "reverse") > 50);
    assert!(r.flows[0].completed && r.flows[0].end_ns < slow);

    // Pinned: the long way with hop routing; ACKs come back the same way.
    let mut s = diamond();
    s.flows[0] = s.flows[0].clone().route(&["s0", "r1", "r2", "r3", "d0"]);
    let r = Simulation::run(&s).unwrap();
    assert_eq!(
        sent(&r, "r1-d0", "forward") + sent(&r, "r1-d0", "reverse"),
        0
    );
    assert_eq!(sent(&r, "r2-r3", "forward"), sent(&r, "s0-r1", "forward"));
    assert_eq!(sent(&r, "r2-r3", "reverse"), sent(&r, "s0-r1", "reverse"));

    // Static entries: at r1, traffic for d0 goes to r2, and at r2 on to r3 (by hops r2
    // would send it back to r1: entries change one node's table only). ACKs for s0 are
    // unaffected and take the direct link back.
    let mut s = diamond();
    explicit_mut(&mut s).static_routes = vec![
        StaticRoute {
            at: "r1".into(),
            dst: "d0".into(),
            next: "r2".into(),
        },
        StaticRoute {
            at: "r2".into(),
            dst: "d0".into(),
            next: "r3".into(),
        },
    ];
    let r = Simulation::run(&s).unwrap();
    assert_eq!(sent(&r, "r1-d0", "forward"), 0);
    assert!(sent(&r, "r1-d0", "reverse") > 50);
    assert_eq!(sent(&r, "r3-d0", "forward"), sent(&r, "s0-r1", "forward"));
}

fn error(s: &Scenario) -> String {
    s.validate().unwrap_err().0
}

#[test]
fn route_errors_name_the_field() {
    let mut s = diamond();
    s.flows[0].route = Some(vec!["s0".into(), "r9".into(), "d0".into()]);
    assert!(
        error(&s).contains("flows[0].route[1] = \"r9\": unknown node"),
        "{}",
        error(&s)
    );
    s.flows[0].route = Some(vec!["s0".into(), "r2".into(), "d0".into()]);
    assert!(
        error(&s)
            .contains("flows[0].route[1] = \"r2\": no link from \"s0\"; a route follows links"),
        "{}",
        error(&s)
    );
    s.flows[0].route = Some(vec!["r1".into(), "d0".into()]);
    assert!(error(&s).contains("flows[0].route[0] = \"r1\": expected the flow's src \"s0\""));
    s.flows[0].route = Some(vec![
        "s0".into(),
        "r1".into(),
        "r2".into(),
        "r1".into(),
        "d0".into(),
    ]);
    assert!(
        error(&s).contains("flows[0].route[3] = \"r1\": visited twice"),
        "{}",
        error(&s)
    );

    let mut s = diamond();
    explicit_mut(&mut s).static_routes = vec![StaticRoute {
        at: "r1".into(),
        dst: "d0".into(),
        next: "r3".into(),
    }];
    assert!(error(&s).contains(
        "topology.static_routes[0].next = \"r3\": not a neighbour of \"r1\" (no link joins them)"
    ));
    // A loop: r1 sends d0's packets to r2, r2 back to r1.
    explicit_mut(&mut s).static_routes = vec![
        StaticRoute {
            at: "r1".into(),
            dst: "d0".into(),
            next: "r2".into(),
        },
        StaticRoute {
            at: "r2".into(),
            dst: "d0".into(),
            next: "r1".into(),
        },
    ];
    assert!(
        error(&s).contains("flows[0]: no route from \"s0\" to \"d0\""),
        "{}",
        error(&s)
    );
    // Unreachable: d0 cut off.
    let mut s = diamond();
    let e = explicit_mut(&mut s);
    e.links.retain(|l| l.to != "d0");
    assert!(error(&s).contains("flows[0]: no route from \"s0\" to \"d0\""));
}

fn parking_lot(queue_buffer: u32) -> ParkingLot {
    ParkingLot {
        hops: 3,
        bottleneck: vec![Duplex::symmetric(common::dir(10_000_000, 5, queue_buffer))],
        access: Duplex::symmetric(common::dir(100_000_000, 1, 1000)),
        long_pairs: 2,
        cross_pairs: vec![1],
        reverse_pairs: 1,
        queue: None,
        packet_size: 1500,
    }
}

#[test]
fn parking_lot_flows_cross_the_hops_they_should() {
    // Drop-tail routers: this checks routing and utilization, not RED (whose thresholds at
    // 10%/30% of this small BDP, 2.8/8.5 packets, leave the hops under-used in 5 s).
    let mut p = parking_lot(30);
    p.queue = Some(QueueSpec::DropTail);
    let t = red_thresholds(&p);
    // RTT 2 * (1 + 15 + 1) ms = 34 ms at 10 Mb/s: 28.3 packets of 1500 bytes.
    assert!((t.bdp_packets - 28.333).abs() < 0.01, "{t:?}");
    let mut b = ScenarioBuilder::new("lot", Topology::ParkingLot(p))
        .duration(Dur::from_secs(5))
        .trace(TraceSpec::off());
    for (src, dst) in [
        ("ls0", "lr0"),
        ("ls1", "lr1"),
        ("cs0_0", "cr0_0"),
        ("cs1_0", "cr1_0"),
        ("cs2_0", "cr2_0"),
        ("vs0", "vr0"),
    ] {
        b = b.flow(TcpFlowSpec::bulk(src, dst));
    }
    let r = Simulation::run(&b.build()).unwrap();
    assert!(r.conservation.ok);
    for f in &r.flows {
        assert!(
            f.throughput_bps > 100_000.0,
            "{}: {}",
            f.name,
            f.throughput_bps
        );
    }
    // Each hop carries the two long flows and its own cross flow forward, the reverse flow
    // backwards; so every hop is busy both ways.
    for hop in ["r0-r1", "r1-r2", "r2-r3"] {
        let fwd = r
            .links
            .iter()
            .find(|l| l.link == hop && l.direction == "forward")
            .unwrap();
        let rev = r
            .links
            .iter()
            .find(|l| l.link == hop && l.direction == "reverse")
            .unwrap();
        assert!(fwd.utilization > 0.8, "{hop}: {}", fwd.utilization);
        assert!(rev.bytes_sent > 1_000_000, "{hop}: {}", rev.bytes_sent);
    }
    // A cross flow's data never leaves its hop.
    let (into, out) = (
        sent(&r, "cs0_0-r0", "forward"),
        sent(&r, "r1-cr0_0", "forward"),
    );
    assert!(
        out > 0 && out + r.flows[2].data_drops <= into,
        "{out} {into}"
    );
}

#[test]
fn wired_cum_wireless_loses_on_the_last_hop_only() {
    let wired = Duplex::symmetric(common::dir(10_000_000, 1, 50));
    let lossy = Duplex::new(
        common::dir(10_000_000, 1, 50).bernoulli(0.01),
        common::dir(10_000_000, 1, 50).loss(LossSpec::Bernoulli { p: 0.005 }),
    );
    let topo = Topology::WiredCumWireless(WiredCumWireless {
        pairs: 2,
        wired: vec![wired.clone()],
        bottleneck: Duplex::symmetric(common::dir(10_000_000, 40, 50)),
        wireless: vec![lossy],
    });
    let s = ScenarioBuilder::new("wcw", topo)
        .duration(Dur::from_secs(10))
        .flow(TcpFlowSpec::bulk("server0", "mobile0").controller("veno"))
        .flow(TcpFlowSpec::bulk("server1", "mobile1").controller("veno"))
        .trace(TraceSpec::off())
        .build();
    let r = Simulation::run(&s).unwrap();
    assert!(r.conservation.ok);
    for l in &r.links {
        let random = l.drops[3];
        if l.link.starts_with("bs-mobile") {
            assert!(random > 0, "{} {}", l.link, l.direction);
        } else {
            assert_eq!(random, 0, "{} {}", l.link, l.direction);
        }
    }
}
