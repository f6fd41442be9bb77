//! The square-root law: one long Reno flow (NewReno recovery) under Bernoulli loss `p` on the
//! data direction, never limited by the bottleneck or its buffer, reaches
//! `MSS/RTT * sqrt(3 / (2 b p))`, within ±20%, with b = 2 for delayed ACKs and per-ACK
//! growth and b = 1 for byte counting (which makes up for delayed ACKs).

use tcplab_core::cc::Growth;
use tcplab_core::{Dur, TcpConfig};
use tcplab_sim::builder::{dumbbell, ScenarioBuilder};
use tcplab_sim::scenario::{Buffer, Duplex, LinkDir, TcpFlowSpec, TraceSpec};
use tcplab_sim::Simulation;

const MSS: u32 = 1460;
/// One-way propagation: 1 ms access + 48 ms bottleneck + 1 ms access.
const RTT: Dur = Dur::from_millis(100);

struct Point {
    predicted_bps: f64,
    measured_bps: f64,
    mean_rtt: Dur,
    loss_events: u64,
    timeouts: u64,
}

fn run(growth: Growth, b: f64, p: f64) -> Point {
    // 1 Gb/s everywhere and buffers far larger than any window: only random loss limits.
    let big = |delay_ms| {
        LinkDir::new(
            1_000_000_000,
            Dur::from_millis(delay_ms),
            Buffer::Packets(100_000),
        )
    };
    let bottleneck = Duplex::new(big(48).bernoulli(p), big(48));
    let access = Duplex::symmetric(big(1));
    let predicted_pkts = (3.0 / (2.0 * b * p)).sqrt() / RTT.as_secs_f64();
    // About 1500 loss events (fewer: a NewReno recovery may repair several losses).
    let secs = (1500.0 / (p * predicted_pkts)).ceil() as u64;
    let tcp = TcpConfig {
        mss: MSS,
        growth,
        delayed_ack: true,
        ..TcpConfig::default()
    };
    let s = ScenarioBuilder::new("sqrt-law", dumbbell(1, bottleneck, access))
        .seed(11)
        .duration(Dur::from_secs(secs))
        .tcp(tcp)
        .flow(
            TcpFlowSpec::bulk("s0", "r0")
                .controller("reno")
                .recovery("newreno"),
        )
        .trace(TraceSpec::off())
        .build();
    let r = Simulation::run(&s).unwrap();
    assert!(r.conservation.ok, "{:?}", r.conservation.violations);
    let overflow: u64 = r.links.iter().map(|l| l.drops[0]).sum();
    assert_eq!(overflow, 0, "no buffer overflow: only random loss");
    let f = &r.flows[0];
    Point {
        predicted_bps: predicted_pkts * MSS as f64 * 8.0,
        measured_bps: f.throughput_bps,
        mean_rtt: Dur::from_nanos(f.sender.mean_rtt_ns.unwrap()),
        loss_events: f.sender.loss_events,
        timeouts: f.sender.timeouts,
    }
}

fn check(growth: Growth, b: f64) {
    let mut failures = vec![];
    for p in [1e-3, 3e-3, 1e-2] {
        let pt = run(growth, b, p);
        let ratio = pt.measured_bps / pt.predicted_bps;
        eprintln!(
            "{growth:?} b={b} p={p}: measured {:.0} b/s, predicted {:.0} b/s, ratio {ratio:.3}; \
             {} loss events ({} timeouts), mean RTT {}",
            pt.measured_bps, pt.predicted_bps, pt.loss_events, pt.timeouts, pt.mean_rtt
        );
        assert!(
            pt.loss_events >= 1000,
            "p={p}: {} loss events",
            pt.loss_events
        );
        if !(0.8..=1.2).contains(&ratio) {
            failures.push(format!("p={p}: ratio {ratio:.3}"));
        }
    }
    assert!(failures.is_empty(), "{growth:?}: {failures:?}");
}

#[test]
fn per_ack_growth_with_delayed_acks_follows_b_2() {
    check(Growth::PerAck, 2.0);
}

#[test]
fn byte_counting_follows_b_1() {
    check(Growth::ByteCounting { limit: 2 }, 1.0);
}
