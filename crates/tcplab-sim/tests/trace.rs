//! What each trace setting records: series on change or at intervals, queue lengths, the
//! senders' event logs, every data segment and every drop; nothing when off.

use crate::common;

use tcplab_core::Dur;
use tcplab_sim::builder::{dumbbell, ScenarioBuilder};
use tcplab_sim::scenario::{Duplex, Scenario, SeriesMode, TcpFlowSpec, TraceSpec};
use tcplab_sim::{Results, Simulation};

fn scenario(trace: TraceSpec) -> Scenario {
    let bottleneck = Duplex::symmetric(common::dir(2_000_000, 20, 15).bernoulli(0.005));
    let access = Duplex::symmetric(common::dir(100_000_000, 1, 1000));
    ScenarioBuilder::new("trace", dumbbell(2, bottleneck, access))
        .duration(Dur::from_secs(15))
        .flow(TcpFlowSpec::bulk("s0", "r0"))
        .flow(TcpFlowSpec::bulk("s1", "r1").start(Dur::from_secs(2)))
        .trace(trace)
        .build()
}

fn run(trace: TraceSpec) -> Results {
    let r = Simulation::run(&scenario(trace)).unwrap();
    assert!(r.conservation.ok, "{:?}", r.conservation.violations);
    r
}

#[test]
fn change_mode_records_a_row_per_change() {
    let r = run(TraceSpec::all());
    let s = &r.series;
    let n = s.time_ns.len();
    assert!(n > 1000);
    for col in [
        s.flow.len(),
        s.cwnd.len(),
        s.ssthresh.len(),
        s.srtt_ns.len(),
        s.rto_ns.len(),
    ] {
        assert_eq!(col, n);
    }
    assert_eq!((s.in_flight.len(), s.delivered.len()), (n, n));
    for f in 0..2u32 {
        let rows: Vec<usize> = (0..n).filter(|&i| s.flow[i] == f).collect();
        assert!(!rows.is_empty());
        let row = |i: usize| {
            (
                s.cwnd[i],
                s.ssthresh[i],
                s.srtt_ns[i],
                s.rto_ns[i],
                s.in_flight[i],
                s.delivered[i],
            )
        };
        for w in rows.windows(2) {
            assert!(s.time_ns[w[0]] <= s.time_ns[w[1]], "time order");
            assert_ne!(row(w[0]), row(w[1]), "a row only when something changed");
        }
        let last = *rows.last().unwrap();
        assert_eq!(s.delivered[last], r.flows[f as usize].bytes_delivered);
        let first = rows[0];
        assert_eq!(s.time_ns[first], r.flows[f as usize].start_ns);
    }
    // Queue rows: every change of every link direction, in time order per link.
    let q = &r.queues;
    assert!(q.time_ns.len() > 1000);
    for l in 0..r.links.len() as u32 {
        let t: Vec<u64> = (0..q.link.len())
            .filter(|&i| q.link[i] == l)
            .map(|i| q.time_ns[i])
            .collect();
        assert!(t.windows(2).all(|w| w[0] <= w[1]));
    }
    let bottleneck = 4; // s0-left, s1-left, then left-right forward
    assert_eq!(r.links[bottleneck].link, "left-right");
    let max_q = (0..q.link.len())
        .filter(|&i| q.link[i] == bottleneck as u32)
        .map(|i| q.packets[i])
        .max()
        .unwrap();
    assert_eq!(
        max_q, 15,
        "the bottleneck buffer fills up to its 15 packets"
    );
}

#[test]
fn interval_mode_samples_every_interval() {
    let interval = Dur::from_millis(100);
    let r = run(TraceSpec {
        series: SeriesMode::Interval,
        interval,
        ..TraceSpec::off()
    });
    let s = &r.series;
    // Flow 0 from 0 s, flow 1 from 2 s, samples at 0, 0.1, ..., 15 s.
    let rows0 = s.flow.iter().filter(|&&f| f == 0).count();
    let rows1 = s.flow.iter().filter(|&&f| f == 1).count();
    assert_eq!((rows0, rows1), (151, 131));
    assert!(s.time_ns.iter().all(|t| t % interval.as_nanos() == 0));
    assert_eq!(r.queues.time_ns.len(), 151 * r.links.len());
    assert!(r.events.time_ns.is_empty() && r.segments.time_ns.is_empty());
    assert!(r.drops.time_ns.is_empty());
}

#[test]
fn logs_of_events_segments_and_drops() {
    let r = run(TraceSpec::all());
    let sent: u64 = r.flows.iter().map(|f| f.sender.segments_sent).sum();
    assert_eq!(r.segments.time_ns.len() as u64, sent);
    let retx = r.segments.retransmission.iter().filter(|&&x| x > 0).count() as u64;
    assert_eq!(
        retx,
        r.flows.iter().map(|f| f.sender.retransmits).sum::<u64>()
    );
    let dropped: u64 = r.links.iter().map(|l| l.drops.iter().sum::<u64>()).sum();
    assert_eq!(r.drops.time_ns.len() as u64, dropped);
    assert!(r.drops.cause.contains("buffer_overflow") && r.drops.cause.contains("link_error"));
    let e = &r.events;
    let enters = e.event.iter().filter(|&&x| x == "recovery_enter").count() as u64;
    assert_eq!(
        enters,
        r.flows
            .iter()
            .map(|f| f.sender.fast_retransmits)
            .sum::<u64>()
    );
    assert!(e.event.contains("window") && e.reason.contains("congestion_avoidance"));
    assert!(e.time_ns.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn off_records_only_summaries() {
    let r = run(TraceSpec::off());
    assert!(r.series.time_ns.is_empty() && r.queues.time_ns.is_empty());
    assert!(r.events.time_ns.is_empty() && r.segments.time_ns.is_empty());
    assert!(r.drops.time_ns.is_empty());
    assert!(
        r.links
            .iter()
            .map(|l| l.drops.iter().sum::<u64>())
            .sum::<u64>()
            > 0
    );
    assert!(r.flows.iter().all(|f| f.bytes_delivered > 0));
}
