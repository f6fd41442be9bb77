//! Trace-driven links (Mahimahi's format, `tcplab_sim::delivery_trace`): a constant trace
//! delivers its theoretical rate, the trace repeats with its period, packets leave exactly
//! at the opportunities (shared and spanning as in Mahimahi's `LinkQueue`), malformed traces
//! are refused with one line, and TCP over a varying trace is deterministic and conserves
//! packets.

use crate::common;

use common::one_link::Outcome;
use tcplab_core::{Dur, Time};
use tcplab_sim::builder::{dumbbell, ScenarioBuilder};
use tcplab_sim::delivery_trace::DeliveryTrace;
use tcplab_sim::scenario::{
    Buffer, Duplex, LinkChange, LinkDir, TcpFlowSpec, TraceSpec, UdpFlowSpec,
};
use tcplab_sim::{Results, Simulation};

fn ms(x: u64) -> Time {
    Time::from_millis(x)
}

/// A shipped example trace (scenarios/traces, made by its generate.py).
fn shipped(name: &str) -> Vec<u64> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/traces")
        .join(name);
    DeliveryTrace::read(&path).unwrap().ms().to_vec()
}

/// One traced link direction fed with `(time, size)` packets, lazily and with an event at
/// every departure (both must agree).
fn run(fwd: LinkDir, sends: &[(Time, u32)]) -> Outcome {
    let lazy = common::one_link::run(fwd.clone(), sends, false);
    let every = common::one_link::run(fwd, sends, true);
    assert_eq!(lazy.arrivals, every.arrivals);
    assert_eq!(lazy.rec.drops, every.rec.drops);
    every
}

/// 10 ms of propagation after the trace's delivery time.
fn traced(ms_list: &[u64], buffer: Buffer) -> LinkDir {
    LinkDir::traced("test.trace", ms_list.to_vec(), Dur::from_millis(10), buffer)
}

#[test]
fn constant_trace_delivers_exactly_12_mbps_of_1500_byte_packets() {
    // One opportunity per ms (1..=1000 ms, repeating): 1500 B x 8 x 1000/s = 12 Mb/s. A UDP
    // source of 20 Mb/s keeps the bottleneck's queue from emptying once its first packet
    // arrives (1 ms access delay + 0.12 ms serialization at 100 Mb/s): every opportunity
    // from 2 ms to the end (10 s, included) carries one packet.
    let trace = shipped("const-12mbps.trace");
    assert_eq!(trace, (1..=1000).collect::<Vec<u64>>());
    let fwd = LinkDir::traced("const", trace, Dur::from_millis(10), Buffer::Packets(100));
    let bottleneck = Duplex::new(fwd, common::dir(12_000_000, 10, 100));
    let s = ScenarioBuilder::new(
        "const",
        dumbbell(
            1,
            bottleneck,
            Duplex::symmetric(common::dir(100_000_000, 1, 1000)),
        ),
    )
    .duration(Dur::from_secs(10))
    .udp(UdpFlowSpec::cbr("s0", "r0", 20_000_000, 1500))
    .trace(TraceSpec::off())
    .build();
    let r = Simulation::run(&s).unwrap();
    assert!(r.conservation.ok, "{:?}", r.conservation.violations);
    let l = r
        .links
        .iter()
        .find(|l| l.link == "left-right" && l.direction == "forward")
        .unwrap();
    assert_eq!(l.rate_bps, 12_000_000, "the trace's mean rate");
    assert_eq!(l.packets_sent, 9999, "opportunities 2, 3, ..., 10000 ms");
    assert_eq!(l.bytes_sent, 9999 * 1500);
    let span_s = (10_000 - 1) as f64 / 1000.0; // (1 ms, 10 s]: 9999 opportunities
    assert_eq!(l.bytes_sent as f64 * 8.0 / span_s, 12e6);
    assert!(
        r.udp[0].packets_dropped > 0,
        "the 20 Mb/s source overflows the buffer"
    );
}

#[test]
fn packets_leave_at_the_opportunities_and_the_trace_repeats() {
    // Opportunities at 2, 2, 5 ms, period 5: 2, 2, 5, 7, 7, 10, 12, 12, 15, ...
    // Nine full packets at 0 ms use them one each, over three periods.
    let o = run(
        traced(&[2, 2, 5], Buffer::Packets(100)),
        &[(ms(0), 1500); 9],
    );
    let want = [2, 2, 5, 7, 7, 10, 12, 12, 15];
    let got: Vec<(u64, Time)> = want
        .iter()
        .enumerate()
        .map(|(i, &t)| (i as u64, ms(t + 10)))
        .collect();
    assert_eq!(o.arrivals, got);
}

#[test]
fn scripted_arrivals_share_span_and_lose_opportunities_as_mahimahi_does() {
    // Opportunities at 1, 2, 3, ... ms (1500 bytes each).
    let trace: Vec<u64> = (1..=100).collect();
    let sends = [
        (ms(0), 500),                    // p0: 1 ms, 1000 B of it left
        (ms(0), 500),                    // p1: shares 1 ms, 500 B left
        (ms(0), 1000),                   // p2: 500 B at 1 ms, 500 B at 2 ms -> 2 ms
        (ms(0), 1000),                   // p3: the 1000 B left at 2 ms
        (Time::from_micros(2500), 1500), // p4: arrives after 2 ms: 3 ms
        (ms(4), 100),                    // p5: arrives at 4 ms exactly: not 4 ms but 5 ms
        (ms(5), 100),                    // p6: at 5 ms: the rest of 5 ms is too early; 6 ms
        (ms(20), 1500),                  // p7: after an idle gap, the next one: 21 ms
    ];
    let o = run(traced(&trace, Buffer::Packets(100)), &sends);
    let delivered = [1, 1, 2, 2, 3, 5, 6, 21];
    let want: Vec<(u64, Time)> = delivered
        .iter()
        .enumerate()
        .map(|(i, &t)| (i as u64, ms(t + 10)))
        .collect();
    assert_eq!(o.arrivals, want);
    let l = o.net.links[0].stats_at(Time::MAX);
    assert_eq!(
        (l.packets_sent, l.bytes_sent),
        (8, 500 + 500 + 1000 + 1000 + 1500 + 100 + 100 + 1500)
    );
}

#[test]
fn the_buffer_still_applies_to_a_traced_link() {
    // 5 packets at once into 3 packets of buffer (counting the one waiting for its
    // opportunity): two dropped, the others leave at 1, 2, 3 ms.
    let o = run(
        traced(&[1, 2, 3, 4], Buffer::Packets(3)),
        &[(ms(0), 1500); 5],
    );
    assert_eq!(o.arrivals, [(0, ms(11)), (1, ms(12)), (2, ms(13))]);
    assert_eq!(o.rec.drops.cause, ["buffer_overflow", "buffer_overflow"]);
}

fn scenario_with(fwd: LinkDir) -> tcplab_sim::Scenario {
    let bottleneck = Duplex::new(fwd, common::dir(12_000_000, 10, 100));
    ScenarioBuilder::new(
        "t",
        dumbbell(
            1,
            bottleneck,
            Duplex::symmetric(common::dir(100_000_000, 1, 1000)),
        ),
    )
    .duration(Dur::from_secs(1))
    .flow(TcpFlowSpec::bulk("s0", "r0"))
    .build()
}

#[test]
fn malformed_traces_in_a_scenario_are_refused_with_one_line() {
    let mut fwd = common::dir(12_000_000, 10, 100);
    let bad = |ms: Vec<u64>| tcplab_sim::scenario::LinkTrace {
        file: "x.up".into(),
        ms,
    };
    let p = "topology.bottleneck.forward";
    for (ms, what) in [
        (vec![], "has no delivery opportunities (an empty trace)"),
        (
            vec![3, 2],
            "opportunity 1 = 2 ms: timestamps must be nondecreasing (the one before is 3 ms)",
        ),
        (
            vec![0, 0],
            "lasts 0 ms: the last timestamp (the period it repeats with) must be > 0",
        ),
    ] {
        fwd.trace = Some(bad(ms));
        let e = Simulation::run(&scenario_with(fwd.clone())).unwrap_err().0;
        assert_eq!(e, format!("{p}.trace = \"x.up\": {what}"));
        assert!(!e.contains('\n'));
    }
    // The rate must be the trace's mean rate, and a schedule cannot change it.
    let mut fwd = LinkDir::traced(
        "x.up",
        vec![1, 2],
        Dur::from_millis(10),
        Buffer::Packets(10),
    );
    fwd.rate = 1_000_000;
    let e = Simulation::run(&scenario_with(fwd)).unwrap_err().0;
    assert_eq!(
        e,
        format!("{p}.rate = 1000000: expected the trace's mean rate 12000000 bit/s (a trace link's rate is its trace's)")
    );
    let fwd = LinkDir::traced(
        "x.up",
        vec![1, 2],
        Dur::from_millis(10),
        Buffer::Packets(10),
    )
    .change(LinkChange {
        at: Dur::from_millis(100),
        rate: Some(5_000_000),
        ..LinkChange::default()
    });
    let e = Simulation::run(&scenario_with(fwd)).unwrap_err().0;
    assert!(
        e.contains("schedule[0].rate = 5000000: a trace-driven link has no rate to change"),
        "{e}"
    );
}

fn tcp_over_steps(seed: u64) -> Results {
    let fwd = LinkDir::traced(
        "steps",
        shipped("steps-12mbps.trace"),
        Dur::from_millis(20),
        Buffer::Packets(60),
    );
    let rev = LinkDir::traced(
        "const",
        shipped("const-12mbps.trace"),
        Dur::from_millis(20),
        Buffer::Packets(60),
    );
    let s = ScenarioBuilder::new(
        "steps",
        dumbbell(
            2,
            Duplex::new(fwd, rev),
            Duplex::symmetric(common::dir(100_000_000, 1, 1000)),
        ),
    )
    .seed(seed)
    .duration(Dur::from_secs(8))
    .flow(
        TcpFlowSpec::bulk("s0", "r0")
            .controller("cubic")
            .recovery("sack"),
    )
    .flow(TcpFlowSpec::bulk("s1", "r1").start(Dur::from_millis(500)))
    .build();
    Simulation::run(&s).unwrap()
}

#[test]
fn tcp_over_a_varying_trace_is_deterministic_and_conserves_packets() {
    let a = tcp_over_steps(7);
    let b = tcp_over_steps(7);
    assert!(a.conservation.ok, "{:?}", a.conservation.violations);
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.links, b.links);
    assert_eq!(a.drops, b.drops);
    assert!(a == b);
    // The bottleneck carries no more than the trace's opportunities allow: 8 s = 4 periods
    // of 2000 opportunities of 1500 bytes.
    let l = a
        .links
        .iter()
        .find(|l| l.link == "left-right" && l.direction == "forward")
        .unwrap();
    assert!(l.bytes_sent <= 4 * 2000 * 1500, "{}", l.bytes_sent);
    assert!(
        a.flows.iter().all(|f| f.bytes_delivered > 0),
        "both flows move data"
    );
}
