//! Conservation and exactly-once, in-order delivery under random loss on the data and ACK
//! directions, for every recovery strategy.

use crate::common;

use tcplab_core::{Dur, TcpConfig};
use tcplab_sim::builder::{dumbbell, ScenarioBuilder};
use tcplab_sim::scenario::{Duplex, TcpFlowSpec, TraceSpec};
use tcplab_sim::{Results, Simulation};

fn lossy(recovery: &str, p: f64, seed: u64, tcp: TcpConfig) -> Results {
    // Loss on both directions of the bottleneck; a small buffer adds overflow drops.
    let bottleneck = Duplex::symmetric(common::dir(4_000_000, 20, 20).bernoulli(p));
    let access = Duplex::symmetric(common::dir(100_000_000, 1, 1000));
    let s = ScenarioBuilder::new("lossy", dumbbell(2, bottleneck, access))
        .seed(seed)
        .duration(Dur::from_secs(60))
        .tcp(tcp)
        .flow(
            TcpFlowSpec::bulk("s0", "r0")
                .recovery(recovery)
                .bytes(400_000),
        )
        .flow(TcpFlowSpec::bulk("s1", "r1").recovery(recovery))
        .trace(TraceSpec {
            series: tcplab_sim::scenario::SeriesMode::Off,
            ..TraceSpec::all()
        })
        .build();
    Simulation::run(&s).unwrap()
}

fn check(r: &Results, what: &str) {
    let c = &r.conservation;
    assert!(c.ok, "{what}: {:?}", c.violations);
    assert_eq!(
        c.packets_sent,
        c.packets_delivered + c.packets_dropped + c.packets_in_flight,
        "{what}"
    );
    // The drop log agrees with the per-flow ground truth.
    for (i, f) in r.flows.iter().enumerate() {
        let logged = |kind: &str| {
            (0..r.drops.flow.len())
                .filter(|&j| r.drops.flow[j] == i as u32 && r.drops.packet[j] == kind)
                .count() as u64
        };
        assert_eq!(f.data_drops, logged("data"), "{what}: flow {i}");
        assert_eq!(f.ack_drops, logged("ack"), "{what}: flow {i}");
    }
}

#[test]
fn every_packet_and_byte_is_accounted_for_under_loss() {
    let mut completed = 0;
    let mut data_drops = 0;
    let mut ack_drops = 0;
    let mut overflow = 0;
    for recovery in ["reno", "newreno", "sack"] {
        for (k, p) in [0.0, 0.01, 0.03, 0.1].into_iter().enumerate() {
            let what = format!("{recovery} p={p}");
            let r = lossy(recovery, p, 10 + k as u64, TcpConfig::default());
            check(&r, &what);
            let f = &r.flows[0];
            if f.completed {
                completed += 1;
                assert_eq!(f.bytes_delivered, 400_000, "{what}");
            }
            for f in &r.flows {
                data_drops += f.data_drops;
                ack_drops += f.ack_drops;
                assert!(f.bytes_delivered > 0, "{what}");
            }
            overflow += r.links.iter().map(|l| l.drops[0]).sum::<u64>();
            if p == 0.0 {
                assert!(f.completed, "{what}: a loss-free 400 kB transfer completes");
            }
        }
    }
    assert!(completed >= 9, "most transfers complete: {completed}");
    assert!(
        data_drops > 1000 && ack_drops > 300,
        "{data_drops} {ack_drops}"
    );
    assert!(overflow > 0);
}

#[test]
fn conservation_holds_without_timestamps_delayed_acks_or_sack_blocks() {
    for recovery in ["reno", "newreno"] {
        let tcp = TcpConfig {
            timestamps: false,
            delayed_ack: false,
            sack_blocks: 0,
            ..TcpConfig::default()
        };
        let r = lossy(recovery, 0.05, 3, tcp);
        check(&r, recovery);
    }
}

#[test]
fn a_run_cut_short_counts_packets_still_in_flight() {
    let bottleneck = Duplex::symmetric(common::dir(10_000_000, 50, 100));
    let access = Duplex::symmetric(common::dir(100_000_000, 1, 1000));
    let s = ScenarioBuilder::new("cut", dumbbell(1, bottleneck, access))
        .duration(Dur::from_millis(1500))
        .flow(TcpFlowSpec::bulk("s0", "r0"))
        .build();
    let mut sim = Simulation::new(&s).unwrap();
    sim.run_until(tcplab_core::Time::from_millis(700));
    assert_eq!(sim.now(), tcplab_core::Time::from_millis(700));
    assert!(!sim.is_done());
    sim.run_until(sim.end_time());
    assert!(sim.is_done());
    let r = sim.finish();
    check(&r, "cut");
    assert!(r.conservation.packets_in_flight > 0, "{:?}", r.conservation);
}
