//! Scenario shorthands shared by the integration tests.
#![allow(dead_code)]

pub mod one_link;
pub mod settings;

use tcplab_core::{Dur, TcpConfig};
use tcplab_sim::builder::{dumbbell, explicit, ScenarioBuilder};
use tcplab_sim::instruments::Fact;
use tcplab_sim::scenario::{
    Buffer, Duplex, LinkDir, LossSpec, NodeKind, Scenario, TcpFlowSpec, Topology, TraceSpec,
};
use tcplab_sim::{Results, Simulation};

pub const MSS: u64 = 1460;

pub fn dir(rate_bps: u64, delay_ms: u64, buffer_pkts: u32) -> LinkDir {
    LinkDir::new(
        rate_bps,
        Dur::from_millis(delay_ms),
        Buffer::Packets(buffer_pkts),
    )
}

/// `pairs` pairs on a bottleneck of `rate_bps` with one-way delay `delay_ms` and `buffer`
/// packets, fast loss-free access links (100 Mb/s, 1 ms).
pub fn simple_dumbbell(pairs: u32, rate_bps: u64, delay_ms: u64, buffer: u32) -> Topology {
    dumbbell(
        pairs,
        Duplex::symmetric(dir(rate_bps, delay_ms, buffer)),
        Duplex::symmetric(dir(100_000_000, 1, 10_000)),
    )
}

/// Jain's fairness index of `x`.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}

/// The TCP settings of the constructed-loss tests: initial window `cwnd`, no delayed ACKs.
pub fn tcp_cwnd(cwnd: u32) -> TcpConfig {
    TcpConfig {
        initial_cwnd: cwnd,
        delayed_ack: false,
        ..TcpConfig::default()
    }
}

/// s -> r, 10 Mb/s, 10 ms both ways, large buffers; one Reno flow with `recovery` sends
/// `segments` full segments. The forward direction loses the data packets with indices
/// `drop` (0 = the first data packet sent), the reverse one the ACKs `ack_drop`
/// (trace-driven loss, `LossSpec::Trace`).
pub fn trace_loss_path(
    recovery: &str,
    tcp: TcpConfig,
    segments: u64,
    drop: &[u64],
    ack_drop: &[u64],
) -> Scenario {
    let lossy = |packets: &[u64]| {
        dir(10_000_000, 10, 1000).loss(LossSpec::Trace {
            packets: packets.to_vec(),
        })
    };
    let topo = explicit(
        &[("s", NodeKind::Host), ("r", NodeKind::Host)],
        vec![("s", "r", Duplex::new(lossy(drop), lossy(ack_drop)))],
    );
    ScenarioBuilder::new("trace-loss", topo)
        .seed(1)
        .duration(Dur::from_secs(60))
        .tcp(tcp)
        .flow(
            TcpFlowSpec::bulk("s", "r")
                .controller("reno")
                .recovery(recovery)
                .bytes(segments * MSS),
        )
        .trace(TraceSpec::all())
        .build()
}

/// Runs `s`, checking packet conservation and that the first flow completed.
pub fn run_completed(s: &Scenario) -> Results {
    let r = Simulation::run(s).unwrap();
    assert!(r.conservation.ok, "{:?}", r.conservation.violations);
    assert!(r.flows[0].completed, "{:?}", r.flows[0]);
    r
}

/// Runs `s` recording its facts, checking packet conservation: the results and the facts.
pub fn run_recorded(s: &Scenario) -> (Results, Vec<Fact>) {
    let mut sim = Simulation::new(s).unwrap();
    sim.record_facts();
    sim.run_until(sim.end_time());
    let (r, facts) = sim.finish_recorded();
    assert!(r.conservation.ok, "{:?}", r.conservation.violations);
    (r, facts)
}

/// `facts` written as JSON lines and read back (checking the round trip).
pub fn through_jsonl(facts: &[Fact]) -> Vec<Fact> {
    use tcplab_sim::instruments::record::{read_jsonl, write_jsonl};
    let mut file = Vec::new();
    write_jsonl(facts, &mut file).unwrap();
    let read = read_jsonl(file.as_slice()).unwrap();
    assert_eq!(read, facts, "JSON lines round trip");
    read
}
