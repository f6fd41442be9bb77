//! Instruments on recorded facts: a run records the facts its instruments took; replaying
//! them (in memory, and through a JSON-lines file) gives exactly the figures of the run:
//! drops and marks per flow, Table I, the timeout taxonomy, loss events, the verdicts table.

use crate::common;

use tcplab_core::{Dur, TcpConfig};
use tcplab_sim::builder::{dumbbell, ScenarioBuilder};
use tcplab_sim::instruments::record::read_jsonl;
use tcplab_sim::instruments::{replay, Fact, Measurements};
use tcplab_sim::results::FlowSummary;
use tcplab_sim::scenario::{
    Duplex, QueueSpec, RedMode, RedSpec, Scenario, TcpFlowSpec, Topology, TraceSpec, UdpFlowSpec,
};
use tcplab_sim::{Results, Simulation};

/// A 1.6 Mb/s bottleneck (12 packets, RED with ECN when `ecn`) and a lossy receiver-side
/// hop reporting its drops; one flow per controller, and a UDP source that overflows the
/// bottleneck now and then.
fn scenario(controllers: &[&str], ecn: bool) -> Scenario {
    let mut bottleneck = common::dir(1_600_000, 25, 12);
    if ecn {
        bottleneck = bottleneck.queue(QueueSpec::Red(RedSpec {
            min_th: 3.0,
            max_th: 9.0,
            max_p: 0.1,
            w_q: 0.02,
            gentle: false,
            wait: true,
            mode: RedMode::Packets,
            ecn: true,
            mean_packet_size: 1500,
        }));
    }
    let access = Duplex::symmetric(common::dir(10_000_000, 2, 100));
    let lossy = common::dir(10_000_000, 2, 100)
        .bernoulli(0.01)
        .report_losses(Dur::from_millis(1));
    let n = controllers.len() as u32;
    let mut topo = dumbbell(n + 1, Duplex::symmetric(bottleneck), access.clone());
    if let Topology::Dumbbell(d) = &mut topo {
        d.receiver_access = vec![Duplex::new(lossy, access.reverse); n as usize + 1];
    }
    let mut b = ScenarioBuilder::new("facts", topo)
        .seed(5)
        .duration(Dur::from_secs(40))
        .tcp(TcpConfig {
            ecn,
            ..TcpConfig::default()
        })
        .trace(TraceSpec::off());
    for (i, c) in controllers.iter().enumerate() {
        b = b.flow(TcpFlowSpec::bulk(&format!("s{i}"), &format!("r{i}")).controller(c));
    }
    let mut udp = UdpFlowSpec::cbr(&format!("s{n}"), &format!("r{n}"), 300_000, 1000);
    udp.start = Dur::from_secs(10);
    udp.stop = Some(Dur::from_secs(20));
    b.udp(udp).build()
}

/// The fields of a flow's summary row that the instruments write.
fn instrument_fields(f: &FlowSummary) -> String {
    format!(
        "drops {} {} marks {} | ff45 {:?} ff12 {:?} other {:?} to {:?} acc {:?} mis {:?} \
         means {:?} {:?} reports {} | classes {:?} | events {} {} {} {} dupacks {:?} {:?}",
        f.data_drops,
        f.ack_drops,
        f.ecn_marks,
        f.ff45,
        f.ff12,
        f.ff_other,
        f.timeouts_by_cause,
        f.ff45_accuracy,
        f.congestion_misdiagnosis,
        f.ff_value_mean_congestion,
        f.ff_value_mean_random,
        f.cross_layer_reports,
        f.timeouts_by_class,
        f.loss_events_single,
        f.loss_events_multiple,
        f.loss_event_drops,
        f.loss_event_max,
        f.recoveries_by_dupacks,
        f.dupacks_per_recovery,
    )
}

fn assert_same(r: &Results, m: &Measurements, what: &str) {
    for (i, f) in r.flows.iter().enumerate() {
        assert_eq!(
            instrument_fields(&m.row(i)),
            instrument_fields(f),
            "{what}: flow {i}"
        );
    }
    for (i, u) in r.udp.iter().enumerate() {
        assert_eq!(m.drops().udp[i], u.packets_dropped, "{what}: udp {i}");
    }
    assert_eq!(m.verdicts, r.verdicts, "{what}: verdicts");
}

fn replay_of(r: &Results, facts: &[Fact]) -> Measurements {
    replay(r.flows.len(), r.udp.len(), facts.iter().copied())
}

#[test]
fn replayed_facts_give_the_figures_of_the_run() {
    for (controllers, ecn) in [
        (&["veno", "venoplus", "reno"][..], false),
        (&["reno"], true),
    ] {
        let s = scenario(controllers, ecn);
        let (r, facts) = common::run_recorded(&s);
        let what = format!("{controllers:?} ecn {ecn}");
        // The run exercised every instrument.
        let total = |g: fn(&FlowSummary) -> u64| r.flows.iter().map(g).sum::<u64>();
        assert!(total(|f| f.data_drops) > 50, "{what}");
        assert!(total(|f| f.sender.timeouts) > 0, "{what}");
        assert!(total(|f| f.loss_events_multiple) > 0, "{what}");
        assert!(r.verdicts.len() > 20, "{what}");
        assert!(r.udp[0].packets_dropped > 0, "{what}");
        if ecn {
            assert!(total(|f| f.ecn_marks) > 0, "{what}");
        } else {
            assert!(total(|f| f.cross_layer_reports) > 0, "{what}");
        }
        assert_same(&r, &replay_of(&r, &facts), &what);
        let read = common::through_jsonl(&facts);
        assert_same(
            &r,
            &replay_of(&r, &read),
            &format!("{what}, from JSON lines"),
        );

        // The figures do depend on the ground truth: without the drops they differ.
        let no_drops: Vec<Fact> = facts
            .iter()
            .copied()
            .filter(|f| !matches!(f, Fact::Drop(_)))
            .collect();
        let m = replay_of(&r, &no_drops);
        assert_ne!(m.verdicts.cause, r.verdicts.cause, "{what}");
        assert_eq!(m.row(0).data_drops, 0);
    }
}

#[test]
fn recording_changes_nothing() {
    let s = scenario(&["veno", "reno"], false);
    let plain = Simulation::run(&s).unwrap();
    let (recorded, facts) = common::run_recorded(&s);
    assert!(!facts.is_empty());
    assert_eq!(plain.flows, recorded.flows);
    assert_eq!(plain.verdicts, recorded.verdicts);
    let (_, none) = Simulation::new(&s).unwrap().finish_recorded();
    assert!(none.is_empty(), "nothing recorded unless asked");
}

#[test]
fn a_bad_line_is_named() {
    let good = r#"{"fact":"acked","flow":0,"una":1460}"#;
    let bad = r#"{"fact":"drop","time_ns":1,"link":0,"flow":0,"packet":"data","seq":0,"retransmission":0,"sent_at_ns":0,"cause":"gremlins"}"#;
    let err = read_jsonl(format!("{good}\n\n{bad}\n").as_bytes()).unwrap_err();
    assert!(err.starts_with("line 3:"), "{err}");
    assert!(
        err.contains("\"gremlins\"") && err.contains("link_error"),
        "{err}"
    );
    let facts = read_jsonl(good.as_bytes()).unwrap();
    assert_eq!(facts, [Fact::Acked { flow: 0, una: 1460 }]);
}
