//! One-way delay over time (docs/delay.md, "Over time"): the `delay_series` table partitions
//! each flow's delivered packets by arrival interval, so it agrees with the `delay` table
//! computed over the same packets; a replay of the recorded facts gives it again; it is
//! empty (and nothing else moves) when series are off.

use crate::common;

use tcplab_core::Dur;
use tcplab_sim::builder::{dumbbell, ScenarioBuilder};
use tcplab_sim::instruments::{replay_with, Fact};
use tcplab_sim::packet::PacketKind;
use tcplab_sim::scenario::{
    Duplex, MaxRows, Scenario, SeriesMode, TcpFlowSpec, TraceSpec, UdpFlowSpec,
};
use tcplab_sim::Simulation;

const MS: u64 = 1_000_000;

/// Two TCP flows and a UDP flow on a congested bottleneck with random loss, series on.
fn scenario(series: SeriesMode, interval_ms: u64) -> Scenario {
    let bottleneck = Duplex::symmetric(common::dir(4_000_000, 20, 40).bernoulli(0.002));
    let access = Duplex::symmetric(common::dir(20_000_000, 2, 200));
    ScenarioBuilder::new("over-time", dumbbell(3, bottleneck, access))
        .seed(5)
        .duration(Dur::from_secs(8))
        .flow(TcpFlowSpec::bulk("s0", "r0"))
        .flow(TcpFlowSpec::bulk("s1", "r1").controller("cubic"))
        .udp(UdpFlowSpec::cbr("s2", "r2", 500_000, 500).start(Dur::from_secs(1)))
        .trace(TraceSpec {
            series,
            interval: Dur::from_millis(interval_ms),
            ..TraceSpec::off()
        })
        .build()
}

#[test]
fn the_series_partitions_each_flows_delivered_packets() {
    let s = scenario(SeriesMode::Interval, 100);
    let (r, facts) = common::run_recorded(&s);
    let t = &r.delay_series;
    assert!(!t.time_ns.is_empty());
    for row in &r.delay {
        let rows: Vec<usize> = (0..t.flow.len())
            .filter(|&k| t.flow_kind[k] == row.flow_kind && t.flow[k] == row.flow)
            .collect();
        assert!(rows.len() > 20, "{}: {} intervals", row.name, rows.len());
        // Intervals in order, each once, starting at multiples of the interval.
        for w in rows.windows(2) {
            assert!(t.time_ns[w[0]] < t.time_ns[w[1]], "{}", row.name);
        }
        assert!(rows.iter().all(|&k| t.time_ns[k] % (100 * MS) == 0));
        // Counts sum to the flow's delivered packets; the count-weighted mean is its mean.
        let n: u64 = rows.iter().map(|&k| t.packets[k]).sum();
        assert_eq!(n, row.packets_delivered, "{}", row.name);
        let weighted: f64 = rows
            .iter()
            .map(|&k| t.delay_mean_ns[k] * t.packets[k] as f64)
            .sum::<f64>()
            / n as f64;
        let mean = row.delay_mean_ns.unwrap();
        assert!(
            (weighted - mean).abs() <= mean * 1e-12,
            "{weighted} vs {mean}"
        );
        // The extremes of the intervals are the flow's.
        let min = rows.iter().map(|&k| t.delay_min_ns[k]).min();
        let max = rows.iter().map(|&k| t.delay_max_ns[k]).max();
        assert_eq!(
            (min, max),
            (row.delay_min_ns, row.delay_max_ns),
            "{}",
            row.name
        );
        for &k in &rows {
            let (lo, hi) = (t.delay_min_ns[k], t.delay_max_ns[k]);
            assert!(lo <= t.delay_p50_ns[k] && t.delay_p50_ns[k] <= t.delay_p95_ns[k]);
            assert!(t.delay_p95_ns[k] <= hi);
            assert!(lo as f64 <= t.delay_mean_ns[k] && t.delay_mean_ns[k] <= hi as f64);
        }
    }
    // Each interval's count and extremes from the per-packet log (the Delivered facts).
    let mut count = std::collections::BTreeMap::new();
    for f in &facts {
        if let Fact::Delivered(d) = f {
            let kind = if d.kind == PacketKind::Udp {
                "udp"
            } else {
                "tcp"
            };
            let start = d.time.as_nanos() / (100 * MS) * (100 * MS);
            let delay = d.time.saturating_since(d.sent_at).as_nanos();
            let e = count
                .entry((kind, d.flow, start))
                .or_insert((0u64, u64::MAX, 0u64));
            *e = (e.0 + 1, e.1.min(delay), e.2.max(delay));
        }
    }
    let table: std::collections::BTreeMap<_, _> = (0..t.flow.len())
        .map(|k| {
            let v = (t.packets[k], t.delay_min_ns[k], t.delay_max_ns[k]);
            ((t.flow_kind[k], t.flow[k], t.time_ns[k]), v)
        })
        .collect();
    assert_eq!(table, count);

    // The recorded facts replayed with the same interval give the same table.
    let m = replay_with(2, 1, Some(Dur::from_millis(100)), facts.iter().copied());
    let tcp = ["flow0".to_string(), "flow1".to_string()];
    let replayed = m.into_results(&tcp, &["udp0".to_string()]);
    assert_eq!(replayed.delay_series, r.delay_series);
    let again = common::through_jsonl(&facts);
    let mut m = replay_with(2, 1, Some(Dur::from_millis(100)), again);
    assert_eq!(m.delay_series(), r.delay_series);
}

#[test]
fn series_on_change_uses_the_interval_and_off_records_nothing_else_moving() {
    let on = Simulation::run(&scenario(SeriesMode::Change, 250)).unwrap();
    assert!(on.delay_series.time_ns.iter().all(|t| t % (250 * MS) == 0));
    assert!(!on.delay_series.time_ns.is_empty());
    let mut off = Simulation::run(&scenario(SeriesMode::Off, 250)).unwrap();
    assert!(off.delay_series.time_ns.is_empty());
    // Everything but the series tables is the same with series off.
    let mut on = on;
    for r in [&mut on, &mut off] {
        r.series = Default::default();
        r.queues = Default::default();
        r.delay_series = Default::default();
        r.stats = Default::default();
    }
    assert_eq!(format!("{on:?}"), format!("{off:?}"));
}

#[test]
fn a_row_cap_widens_the_intervals() {
    let mut s = scenario(SeriesMode::Interval, 10);
    s.trace.max_rows_per_flow = Some(MaxRows::Rows(16));
    let r = Simulation::run(&s).unwrap();
    let t = &r.delay_series;
    // 8 s in at most 16 intervals: 500 ms each.
    assert!(t.time_ns.iter().all(|t| t % (500 * MS) == 0));
    for flow in 0..2u32 {
        let rows = (0..t.flow.len())
            .filter(|&k| t.flow_kind[k] == "tcp" && t.flow[k] == flow)
            .count();
        assert!((1..=17).contains(&rows), "{rows}");
    }
}
