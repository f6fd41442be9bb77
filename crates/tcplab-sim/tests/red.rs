//! RED and ECN in whole simulations: the WLAN paper's thin pipe (1.6 Mb/s, 60 ms each way,
//! 12-packet buffer) with six long-lived Reno flows and RED (min_th 5, max_th 10, max_p 0.1,
//! w_q 0.005).
//!
//! - The average queue stays between the thresholds most of the time.
//! - With ECN on both ends and in RED, early drops become marks: the run has marks, no early
//!   drops, and fewer retransmissions than the same run without ECN; every data segment the
//!   senders transmit first is ECN-capable, CE is echoed until CWR, and each window with
//!   marks costs one window reduction, not one per mark.

use crate::common;

use common::dir;
use tcplab_core::{Dur, TcpConfig, Time};
use tcplab_sim::builder::{dumbbell, ScenarioBuilder};
use tcplab_sim::scenario::{Duplex, QueueSpec, RedMode, RedSpec, Scenario, TcpFlowSpec, TraceSpec};
use tcplab_sim::{Results, Simulation};

const SECS: u64 = 60;
/// Buffer of the ECN comparison: room above max_th, so RED (not the hard limit) governs.
const BUF: u32 = 30;

fn red(ecn: bool) -> QueueSpec {
    QueueSpec::Red(RedSpec {
        min_th: 5.0,
        max_th: 10.0,
        max_p: 0.1,
        w_q: 0.005,
        gentle: false,
        wait: true,
        mode: RedMode::Packets,
        ecn,
        mean_packet_size: 1500,
    })
}

fn scenario(ecn: bool, buffer: u32) -> Scenario {
    let thin = Duplex::symmetric(dir(1_600_000, 60, buffer).queue(red(ecn)));
    let access = Duplex::symmetric(dir(100_000_000, 1, 1000));
    let tcp = TcpConfig {
        mss: 1460,
        ecn,
        ..TcpConfig::default()
    };
    let mut b = ScenarioBuilder::new("red-thin", dumbbell(6, thin, access))
        .duration(Dur::from_secs(SECS))
        .tcp(tcp)
        .trace(TraceSpec::off());
    for i in 0..6 {
        b = b.flow(
            TcpFlowSpec::bulk(&format!("s{i}"), &format!("r{i}")).start(Dur::from_millis(100 * i)),
        );
    }
    b.build()
}

/// Index of the bottleneck's forward direction in `Results::links`.
fn bottleneck(r: &Results) -> usize {
    r.links
        .iter()
        .position(|l| l.link == "left-right" && l.direction == "forward")
        .unwrap()
}

/// Runs `s`, sampling the bottleneck's RED average every 10 ms after 10 s.
fn run_sampled(s: &Scenario) -> (Results, Vec<f64>) {
    let mut sim = Simulation::new(s).unwrap();
    let probe = Simulation::run(&Scenario {
        duration: Dur::from_secs(1),
        ..s.clone()
    })
    .unwrap();
    let l = bottleneck(&probe);
    let mut avgs = vec![];
    let mut t = Time::from_secs(10);
    while t <= sim.end_time() {
        sim.run_until(t);
        avgs.push(sim.queue_average(l).unwrap());
        t += Dur::from_millis(10);
    }
    (sim.finish(), avgs)
}

#[test]
fn average_queue_stays_between_the_thresholds() {
    let (r, avgs) = run_sampled(&scenario(false, 12));
    let mean = avgs.iter().sum::<f64>() / avgs.len() as f64;
    let inside =
        avgs.iter().filter(|&&a| (5.0..=10.0).contains(&a)).count() as f64 / avgs.len() as f64;
    let l = &r.links[bottleneck(&r)];
    eprintln!(
        "mean avg {mean:.2}, inside {inside:.3}, drops {:?}, util {:.3}",
        l.drops, l.utilization
    );
    assert!((5.0..=10.0).contains(&mean), "mean average {mean}");
    assert!(
        inside > 0.8,
        "average inside [min_th, max_th] {inside} of the time"
    );
    assert!(l.drops[1] > 0, "early drops happen");
    assert!(l.utilization > 0.9, "utilization {}", l.utilization);
}

#[test]
fn ecn_marks_instead_of_early_drops_and_saves_retransmissions() {
    let plain = Simulation::run(&scenario(false, BUF)).unwrap();
    let mut s = scenario(true, BUF);
    s.trace = TraceSpec {
        segments: true,
        drops: true,
        ..TraceSpec::off()
    };
    let ecn = Simulation::run(&s).unwrap();
    let (lp, le) = (
        &plain.links[bottleneck(&plain)],
        &ecn.links[bottleneck(&ecn)],
    );
    let rtx = |r: &Results| r.flows.iter().map(|f| f.sender.retransmits).sum::<u64>();
    let marks: u64 = ecn.flows.iter().map(|f| f.ecn_marks).sum();
    let reductions: u64 = ecn.flows.iter().map(|f| f.sender.ecn_reductions).sum();
    eprintln!(
        "plain: drops {:?} rtx {} | ecn: drops {:?} marks {} (flows {marks}) reductions {reductions} rtx {}",
        lp.drops,
        rtx(&plain),
        le.drops,
        le.ecn_marks,
        rtx(&ecn)
    );
    assert_eq!(lp.ecn_marks, 0);
    assert!(le.ecn_marks > 0);
    // Early drops only hit retransmissions, which are not ECN-capable (RFC 3168 §6.1.5):
    // the latest transmission of each early-dropped segment before its drop is one.
    let (d, g) = (&ecn.drops, &ecn.segments);
    for i in (0..d.cause.len()).filter(|&i| d.cause[i] == "aqm_early") {
        let latest = (0..g.seq.len())
            .filter(|&j| g.flow[j] == d.flow[i] && g.seq[j] == d.seq[i])
            .filter(|&j| g.time_ns[j] <= d.time_ns[i])
            .max_by_key(|&j| g.time_ns[j])
            .expect("the dropped segment was sent");
        assert!(g.retransmission[latest] > 0, "early drop of an original");
    }
    assert!(le.drops[1] * 10 < le.ecn_marks);
    assert_eq!(le.ecn_marks, marks, "per-flow marks add up to the link's");
    assert!(rtx(&ecn) < rtx(&plain));
    // One reduction per window with marks, so fewer reductions than marks; and every
    // flow answered some.
    assert!(reductions > 0 && reductions < marks);
    assert!(ecn.flows.iter().all(|f| f.sender.ecn_reductions > 0));
    assert!(plain
        .flows
        .iter()
        .all(|f| f.sender.ecn_reductions == 0 && f.ecn_marks == 0));
}

#[test]
fn validation_names_red_and_loss_fields() {
    use tcplab_sim::scenario::LossSpec;
    let bad_red = QueueSpec::Red(RedSpec {
        min_th: 10.0,
        max_th: 5.0,
        max_p: 1.5,
        w_q: 0.0,
        gentle: false,
        wait: true,
        mode: RedMode::Packets,
        ecn: false,
        mean_packet_size: 1500,
    });
    let fwd = dir(1_000_000, 10, 20)
        .queue(bad_red)
        .loss(LossSpec::GilbertElliott {
            p_gb: 1.2,
            p_bg: 0.5,
            loss_good: 0.0,
            loss_bad: -1.0,
        });
    let rev = dir(1_000_000, 10, 20).loss(LossSpec::Ber { ber: 2.0 });
    let s = ScenarioBuilder::new(
        "bad",
        dumbbell(
            1,
            Duplex::new(fwd, rev),
            Duplex::symmetric(dir(10_000_000, 1, 100)),
        ),
    )
    .flow(TcpFlowSpec::bulk("s0", "r0"))
    .build();
    let e = s.validate().unwrap_err().0;
    for want in [
        "topology.bottleneck.forward.queue.max_th = 5: expected greater than min_th (10)",
        "topology.bottleneck.forward.queue.max_p = 1.5: expected a probability in [0, 1]",
        "topology.bottleneck.forward.queue.w_q = 0: expected a weight in (0, 1]",
        "topology.bottleneck.forward.loss.p_gb = 1.2: expected a probability in [0, 1]",
        "topology.bottleneck.forward.loss.loss_bad = -1: expected a probability in [0, 1]",
        "topology.bottleneck.reverse.loss.ber = 2: expected a probability in [0, 1]",
    ] {
        assert!(e.contains(want), "{want} not in {e}");
    }
}
