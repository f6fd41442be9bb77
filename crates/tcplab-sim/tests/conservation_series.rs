//! Conservation and series as instruments on recorded facts: replaying a run's facts (in
//! memory and through JSON lines) gives its conservation verdict and its series and queues
//! tables exactly; a fabricated lost or duplicated packet in a fact stream is caught.

use crate::common;

use tcplab_core::Dur;
use tcplab_sim::builder::{dumbbell, ScenarioBuilder};
use tcplab_sim::instruments::{replay, Fact, Measurements};
use tcplab_sim::packet::PacketKind;
use tcplab_sim::scenario::{Duplex, Scenario, SeriesMode, TcpFlowSpec, TraceSpec, UdpFlowSpec};
use tcplab_sim::Results;

/// Two TCP flows and a UDP source over a 2 Mb/s bottleneck of 10 packets with random loss
/// (drops of every kind), cut at 8 s with packets in flight; series as `mode`.
fn scenario(mode: SeriesMode) -> Scenario {
    let bottleneck = common::dir(2_000_000, 20, 10).bernoulli(0.01);
    let access = Duplex::symmetric(common::dir(10_000_000, 2, 100));
    let topo = dumbbell(3, Duplex::symmetric(bottleneck), access);
    let trace = TraceSpec {
        series: mode,
        interval: Dur::from_millis(50),
        ..TraceSpec::off()
    };
    let mut udp = UdpFlowSpec::cbr("s2", "r2", 500_000, 1000);
    udp.start = Dur::from_secs(2);
    ScenarioBuilder::new("conservation-series", topo)
        .seed(3)
        .duration(Dur::from_secs(8))
        .flow(TcpFlowSpec::bulk("s0", "r0").controller("reno"))
        .flow(TcpFlowSpec::bulk("s1", "r1").controller("cubic"))
        .udp(udp)
        .trace(trace)
        .build()
}

fn names(r: &Results) -> (Vec<String>, Vec<String>) {
    (
        r.flows.iter().map(|f| f.name.clone()).collect(),
        r.udp.iter().map(|u| u.name.clone()).collect(),
    )
}

fn replay_of(r: &Results, facts: &[Fact]) -> Measurements {
    replay(r.flows.len(), r.udp.len(), facts.iter().copied())
}

fn assert_same(r: &Results, m: &Measurements, what: &str) {
    let (tcp, udp) = names(r);
    assert_eq!(
        m.conservation(&tcp, &udp),
        r.conservation,
        "{what}: conservation"
    );
    assert_eq!(m.series, r.series, "{what}: series");
    assert_eq!(m.queues, r.queues, "{what}: queues");
}

#[test]
fn replayed_facts_give_the_conservation_and_series_of_the_run() {
    for mode in [SeriesMode::Change, SeriesMode::Interval] {
        let (r, facts) = common::run_recorded(&scenario(mode));
        let what = format!("{mode:?}");
        // The run exercised what is compared: drops of each kind, packets in flight at
        // the end, rows in both tables.
        let c = &r.conservation;
        assert!(
            c.packets_dropped > 20 && c.packets_in_flight > 0,
            "{what}: {c:?}"
        );
        assert!(r.flows.iter().all(|f| f.data_drops > 0), "{what}");
        assert!(r.udp[0].packets_dropped > 0, "{what}");
        assert!(r.series.time_ns.len() > 100, "{what}");
        assert!(r.queues.time_ns.len() > 100, "{what}");
        let read = common::through_jsonl(&facts);
        for (how, stream) in [("in memory", &facts), ("from JSON lines", &read)] {
            assert_same(&r, &replay_of(&r, stream), &format!("{what}, {how}"));
        }
    }
}

/// The violations of `facts` replayed for the run `r`.
fn violations(r: &Results, facts: &[Fact]) -> Vec<String> {
    let (tcp, udp) = names(r);
    let c = replay_of(r, facts).conservation(&tcp, &udp);
    assert_eq!(c.ok, c.violations.is_empty());
    c.violations
}

#[test]
fn a_lost_or_duplicated_packet_in_a_fact_stream_is_caught() {
    let (r, facts) = common::run_recorded(&scenario(SeriesMode::Off));
    assert_eq!(violations(&r, &facts), Vec::<String>::new());
    let position = |p: &dyn Fn(&Fact) -> bool| facts.iter().position(p).unwrap();
    let delivered_data =
        position(&|f| matches!(f, Fact::Delivered(d) if d.flow == 1 && d.kind == PacketKind::Data));
    let ack_sent = position(&|f| matches!(f, Fact::AckSent { flow: 0 }));
    let udp_delivered = position(&|f| matches!(f, Fact::Delivered(d) if d.kind == PacketKind::Udp));

    // A data segment delivered that the stream loses: sent but neither delivered, dropped
    // nor in flight, and the receiver got one more than the network delivered.
    let mut lost = facts.clone();
    lost.remove(delivered_data);
    let v = violations(&r, &lost);
    assert!(
        v.iter()
            .any(|m| m.starts_with("flow \"flow1\": ") && m.contains("data segments sent")),
        "{v:?}"
    );
    assert!(v.iter().any(|m| m.contains("receiver counts")), "{v:?}");
    assert_eq!(v.len(), 2, "{v:?}");

    // The same delivery twice.
    let mut twice = facts.clone();
    twice.insert(delivered_data, facts[delivered_data]);
    let v = violations(&r, &twice);
    assert!(v.iter().any(|m| m.contains("data segments sent")), "{v:?}");

    // An ACK sent twice, a datagram lost.
    let mut dup_ack = facts.clone();
    dup_ack.insert(ack_sent, facts[ack_sent]);
    let v = violations(&r, &dup_ack);
    assert!(v.iter().any(|m| m.contains("ACKs sent !=")), "{v:?}");
    assert!(v.iter().any(|m| m.contains("receiver counts")), "{v:?}");
    let mut udp_lost = facts.clone();
    udp_lost.remove(udp_delivered);
    let v = violations(&r, &udp_lost);
    assert!(v.iter().any(|m| m.starts_with("udp \"udp0\": ")), "{v:?}");

    // A packet in flight at the end that the network does not store.
    let mut phantom = facts.clone();
    phantom.push(Fact::InFlight {
        flow: 0,
        kind: PacketKind::Data,
        packets: 1,
    });
    let v = violations(&r, &phantom);
    assert!(v.iter().any(|m| m.contains("packets stored but")), "{v:?}");
}
