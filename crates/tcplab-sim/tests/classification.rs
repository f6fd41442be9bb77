//! Loss-classification accounting and the cross-layer channel: every loss response is paired
//! with the cause of the drop of the latest transmission of the segment at snd.una, as the
//! traces tell it; the accounting does not depend on tracing; random drops on a reporting
//! link reach the flow's sender (Venoplus uses them, other controllers ignore them).

use crate::common;

use std::collections::HashMap;
use tcplab_core::Dur;
use tcplab_sim::builder::{dumbbell, ScenarioBuilder};
use tcplab_sim::results::{FlowSummary, LossCause};
use tcplab_sim::scenario::{Duplex, Scenario, TcpFlowSpec, TraceSpec};
use tcplab_sim::{Results, Simulation};

/// Veno's Table I network, small: 1.6 Mb/s bottleneck with 12 packets of buffer, and a
/// lossy receiver-side hop (the wireless link) that may report its drops.
fn wireless(controller: &str, p: f64, report: Option<Dur>, trace: TraceSpec) -> Scenario {
    let bottleneck = Duplex::symmetric(common::dir(1_600_000, 25, 12));
    let access = Duplex::symmetric(common::dir(10_000_000, 2, 100));
    let mut lossy = common::dir(10_000_000, 2, 100).bernoulli(p);
    if let Some(d) = report {
        lossy = lossy.report_losses(d);
    }
    let mut topo = dumbbell(1, bottleneck, access.clone());
    if let tcplab_sim::scenario::Topology::Dumbbell(d) = &mut topo {
        d.receiver_access = vec![Duplex::new(lossy, access.reverse)];
    }
    ScenarioBuilder::new("wireless", topo)
        .seed(3)
        .duration(Dur::from_secs(60))
        .flow(TcpFlowSpec::bulk("s0", "r0").controller(controller))
        .trace(trace)
        .build()
}

fn run(s: &Scenario) -> Results {
    let r = Simulation::run(s).unwrap();
    assert!(r.conservation.ok, "{:?}", r.conservation.violations);
    r
}

fn sum(a: [u64; 3]) -> u64 {
    a.iter().sum()
}

#[test]
fn every_verdict_carries_the_cause_the_traces_show() {
    let r = run(&wireless("veno", 0.01, None, TraceSpec::all()));
    let f = &r.flows[0];
    let v = &r.verdicts;
    assert_eq!(
        v.len() as u64,
        f.sender.fast_retransmits + f.sender.timeouts
    );
    assert_eq!(
        sum(f.ff45) + sum(f.ff12) + sum(f.ff_other),
        f.sender.fast_retransmits
    );
    assert_eq!(sum(f.timeouts_by_cause), f.sender.timeouts);
    assert_eq!(f.timeouts_by_class.iter().sum::<u64>(), f.sender.timeouts);
    assert!(f.ff45[LossCause::Random as usize] > 10, "{f:?}");
    assert!(f.ff12[LossCause::Congestion as usize] > 0, "{f:?}");
    // The traces: latest transmission and latest drop of each segment before each verdict
    // (the response comes before the retransmission it causes, at the same instant).
    let mut checked = HashMap::new();
    for k in 0..v.len() {
        let (t, seq) = (v.time_ns[k], v.seq[k]);
        let sent = (0..r.segments.time_ns.len())
            .filter(|&j| r.segments.seq[j] == seq && r.segments.time_ns[j] < t)
            .map(|j| r.segments.time_ns[j])
            .max()
            .expect("the segment at snd.una was sent");
        let dropped = (0..r.drops.time_ns.len())
            .filter(|&j| {
                r.drops.packet[j] == "data"
                    && r.drops.seq[j] == seq
                    && (sent..=t).contains(&r.drops.time_ns[j])
            })
            .max_by_key(|&j| r.drops.time_ns[j])
            .map_or("none", |j| r.drops.cause[j]);
        assert_eq!(v.cause[k], dropped, "verdict {k} at {t} ns, seq {seq}");
        *checked.entry(dropped).or_insert(0) += 1;
    }
    eprintln!("causes of {} loss responses: {checked:?}", v.len());
    assert!(checked.contains_key("link_error") && checked.contains_key("buffer_overflow"));
    // Table I's figures from the counts.
    let acc = f.ff45_accuracy.unwrap();
    assert_eq!(acc, f.ff45[1] as f64 / sum(f.ff45) as f64);
}

#[test]
fn accounting_does_not_depend_on_tracing() {
    let all = run(&wireless("veno", 0.01, None, TraceSpec::all()));
    let off = run(&wireless("veno", 0.01, None, TraceSpec::off()));
    assert_eq!(all.verdicts, off.verdicts);
    assert_eq!(all.flows, off.flows);
    assert!(off.events.time_ns.is_empty() && off.drops.time_ns.is_empty());
    assert!(!off.verdicts.is_empty());
}

#[test]
fn lost_acks_alone_give_spurious_causes() {
    // Only the ACK direction of the receiver's hop loses packets, and buffers never fill:
    // every loss response is spurious (cause "none").
    let big = Duplex::symmetric(common::dir(10_000_000, 10, 10_000));
    let mut topo = dumbbell(1, big.clone(), big.clone());
    if let tcplab_sim::scenario::Topology::Dumbbell(d) = &mut topo {
        d.receiver_access = vec![Duplex::new(big.forward.clone(), big.reverse.bernoulli(0.6))];
    }
    let s = ScenarioBuilder::new("ack-loss", topo)
        .seed(2)
        .duration(Dur::from_secs(30))
        .tcp(tcplab_core::TcpConfig {
            rcv_buf: 8 * 1460,
            ..Default::default()
        })
        .flow(TcpFlowSpec::bulk("s0", "r0"))
        .trace(TraceSpec::off())
        .build();
    let r = run(&s);
    let f = &r.flows[0];
    assert_eq!(f.data_drops, 0);
    assert!(f.sender.timeouts > 0, "{f:?}");
    assert!(r.verdicts.cause.iter().all(|&c| c == "none"));
    assert_eq!(f.timeouts_by_cause, [0, 0, f.sender.timeouts]);
}

fn link_errors(r: &Results) -> u64 {
    r.links
        .iter()
        .filter(|l| l.link == "right-r0" && l.direction == "forward")
        .map(|l| l.drops[3])
        .sum()
}

fn without_reports(f: &FlowSummary) -> FlowSummary {
    FlowSummary {
        cross_layer_reports: 0,
        ..f.clone()
    }
}

#[test]
fn venoplus_receives_the_reports_of_the_wireless_hop() {
    let on = run(&wireless(
        "venoplus",
        0.01,
        Some(Dur::ZERO),
        TraceSpec::off(),
    ));
    let off = run(&wireless("venoplus", 0.01, None, TraceSpec::off()));
    let f = &on.flows[0];
    assert!(link_errors(&on) > 20);
    assert_eq!(
        f.cross_layer_reports,
        link_errors(&on),
        "one report per drop"
    );
    assert_eq!(off.flows[0].cross_layer_reports, 0);
    // With the reports it takes losses as random; without, it never sees a random loss.
    assert!(f.ff45[LossCause::Random as usize] > 0, "{f:?}");
    assert_eq!(sum(off.flows[0].ff45), 0, "{:?}", off.flows[0]);
    assert_ne!(f.bytes_delivered, off.flows[0].bytes_delivered);
}

#[test]
fn controllers_without_interest_ignore_the_reports() {
    for cc in ["reno", "veno", "areno"] {
        let on = run(&wireless(cc, 0.01, Some(Dur::ZERO), TraceSpec::off()));
        let off = run(&wireless(cc, 0.01, None, TraceSpec::off()));
        assert_eq!(on.flows[0].cross_layer_reports, link_errors(&on), "{cc}");
        assert!(on.flows[0].cross_layer_reports > 0, "{cc}");
        assert_eq!(without_reports(&on.flows[0]), off.flows[0], "{cc}");
        assert_eq!(on.verdicts, off.verdicts, "{cc}");
    }
}

#[test]
fn reports_arrive_after_the_configured_delay() {
    // A delay longer than the run: no report arrives.
    let late = run(&wireless(
        "venoplus",
        0.01,
        Some(Dur::from_secs(100)),
        TraceSpec::off(),
    ));
    assert!(link_errors(&late) > 0);
    assert_eq!(late.flows[0].cross_layer_reports, 0);
    // 10 s: the reports of the last 10 s are still on their way at the end.
    let slow = run(&wireless(
        "venoplus",
        0.01,
        Some(Dur::from_secs(10)),
        TraceSpec::all(),
    ));
    let early = (0..slow.drops.time_ns.len())
        .filter(|&j| slow.drops.cause[j] == "link_error" && slow.drops.time_ns[j] <= 50_000_000_000)
        .count() as u64;
    assert_eq!(slow.flows[0].cross_layer_reports, early);
}

#[test]
fn report_delay_needs_report_losses() {
    let mut s = wireless("veno", 0.01, None, TraceSpec::off());
    if let tcplab_sim::scenario::Topology::Dumbbell(d) = &mut s.topology {
        d.receiver_access[0].forward.report_delay = Dur::from_millis(5);
    }
    let e = Simulation::run(&s).err().unwrap();
    assert!(
        e.0.contains("topology.receiver_access[0].forward.report_delay = 5000000"),
        "{e}"
    );
}

#[test]
fn recovery_restarts_are_rows_but_not_table_one_counts() {
    // LRD restarts a recovery when a retransmission is lost: a further loss response.
    let mut s = wireless("veno", 0.03, None, TraceSpec::off());
    s.flows[0].recovery = tcplab_core::RecoverySpec::named("lrd");
    let r = run(&s);
    let f = &r.flows[0];
    let v = &r.verdicts;
    let rows = |t: &str| v.trigger.iter().filter(|&&x| x == t).count() as u64;
    assert_eq!(rows("fast_retransmit"), f.sender.fast_retransmits);
    assert_eq!(rows("timeout"), f.sender.timeouts);
    assert!(rows("recovery_restart") > 0, "{:?}", v.trigger);
    assert_eq!(
        sum(f.ff45) + sum(f.ff12) + sum(f.ff_other),
        f.sender.fast_retransmits
    );
}
