//! Bounded recording: the estimate refuses a scenario that would record past the limit (one
//! line naming the setting), a raised limit lets it run, a run that records more than its
//! estimate stops with an error instead of growing, and `trace.max_rows_per_flow` keeps every
//! table bounded, deterministically.

use crate::common;

use tcplab_core::registry::Registries;
use tcplab_core::Dur;
use tcplab_sim::builder::{dumbbell, ScenarioBuilder};
use tcplab_sim::scenario::{
    Duplex, MaxRows, Scenario, SeriesMode, TcpFlowSpec, TraceSpec, UdpFlowSpec,
};
use tcplab_sim::trace::{row_bytes, DEFAULT_TABLE_BYTES};
use tcplab_sim::Simulation;

const MB: u64 = 1 << 20;

fn scenario(duration: Dur, trace: TraceSpec) -> Scenario {
    let bottleneck = Duplex::symmetric(common::dir(10_000_000, 10, 50));
    let access = Duplex::symmetric(common::dir(100_000_000, 1, 1000));
    ScenarioBuilder::new("bounds", dumbbell(2, bottleneck, access))
        .duration(duration)
        .flow(TcpFlowSpec::bulk("s0", "r0"))
        .flow(TcpFlowSpec::bulk("s1", "r1"))
        .trace(trace)
        .build()
}

fn build(s: &Scenario, limit_mb: u64) -> Result<Simulation, String> {
    Simulation::with_limit(s, &Registries::default(), limit_mb * MB).map_err(|e| e.0)
}

fn interval(ns: u64) -> TraceSpec {
    TraceSpec {
        series: SeriesMode::Interval,
        interval: Dur::from_nanos(ns),
        ..TraceSpec::off()
    }
}

#[test]
fn a_one_ns_interval_is_refused_naming_the_interval() {
    let err = Simulation::new(&scenario(Dur::from_secs(1), interval(1)))
        .err()
        .expect("refused")
        .0;
    assert!(!err.contains('\n'), "{err}");
    assert!(err.contains("trace.interval = 1ns"), "{err}");
    assert!(err.contains("max_record_mb = 2048"), "{err}");
}

#[test]
fn a_long_traced_run_is_refused_naming_the_series_setting() {
    let every_row = TraceSpec {
        max_rows_per_flow: Some(MaxRows::All),
        ..TraceSpec::all()
    };
    let s = scenario(Dur::from_secs(1_000_000_000), every_row);
    let err = Simulation::new(&s).err().expect("refused").0;
    assert!(!err.contains('\n'), "{err}");
    assert!(err.contains("trace.series = \"change\""), "{err}");
    // By default the series and queues are bounded: a log is the biggest.
    let s = scenario(Dur::from_secs(1_000_000_000), TraceSpec::all());
    let err = Simulation::new(&s).err().expect("refused").0;
    assert!(err.contains("of events from trace.events = true"), "{err}");
}

#[test]
fn the_limit_can_be_raised() {
    // 100 µs at 1 ns: 100,001 ticks × (2 flows × 68 B + 10 link directions × 24 B) ≈ 36 MB,
    // plus the delay_series rows (at most one per packet the flows can send in 100 µs).
    let s = scenario(Dur::from_micros(100), interval(1));
    let est = build(&s, 64).expect("fits 64 MB").estimate().clone();
    let delay_rows = est.tables[5].rows;
    assert!(delay_rows <= est.data_packets + 2, "{est:?}");
    assert_eq!(
        est.bytes(),
        100_001 * (2 * 68 + 10 * 24) + delay_rows * row_bytes::DELAY_SERIES
    );
    let err = build(&s, 16).err().expect("refused at 16 MB");
    assert!(err.contains("max_record_mb = 16"), "{err}");
}

#[test]
fn recording_past_the_limit_stops_the_run_with_an_error() {
    // UDP over a link that drops 90 % at random: the estimate foresees no drops (only what
    // passes capacity), the drop log grows by ~1100 rows (~90 kB).
    let lossy = Duplex::symmetric(common::dir(10_000_000, 10, 50).bernoulli(0.9));
    let access = Duplex::symmetric(common::dir(100_000_000, 1, 1000));
    let s = ScenarioBuilder::new("lossy", dumbbell(1, lossy, access))
        .duration(Dur::from_secs(10))
        .udp(UdpFlowSpec::cbr("s0", "r0", 1_000_000, 1000))
        .trace(TraceSpec {
            drops: true,
            ..TraceSpec::off()
        })
        .build();
    let mut full = build(&s, 1).unwrap();
    full.run_until(full.end_time());
    assert_eq!(full.record_error(), None);
    let drops = full.recording().tables[2].rows;
    assert!(drops > 1000, "{drops}");

    let limit = 50_000; // bytes: about half the drop log
    let mut sim = Simulation::with_limit(&s, &Registries::default(), limit).unwrap();
    assert_eq!(sim.estimate().bytes(), 0);
    sim.run_until(sim.end_time());
    assert!(sim.is_done());
    let err = sim.record_error().expect("stopped");
    assert!(!err.contains('\n') && err.contains("drops"), "{err}");
    assert!(sim.now() < sim.end_time());
    let r = sim.recording();
    assert!(r.bytes() <= limit && r.bytes() + 100 > limit, "{r:?}");
}

fn capped(max_rows: Option<MaxRows>) -> Scenario {
    scenario(
        Dur::from_secs(20),
        TraceSpec {
            max_rows_per_flow: max_rows,
            ..TraceSpec::all()
        },
    )
}

#[test]
fn max_rows_per_flow_bounds_every_table_deterministically() {
    let full = Simulation::run(&capped(Some(MaxRows::All))).unwrap();
    let m = 500u64;
    let run = || {
        let mut sim = build(&capped(Some(MaxRows::Rows(m))), 64).unwrap();
        sim.run_until(sim.end_time());
        let rec = sim.recording();
        (sim.finish(), rec)
    };
    let (r, rec) = run();
    // 2 flows, 10 link directions.
    assert!(full.series.time_ns.len() as u64 > 2 * m);
    assert!(r.series.time_ns.len() as u64 <= 2 * m);
    assert!(r.queues.time_ns.len() as u64 <= 10 * m);
    assert!(r.segments.time_ns.len() as u64 <= 2 * m);
    assert!(r.events.time_ns.len() as u64 <= 2 * m);
    // Series: at most one row per flow per bucket, the rows a subset of the full run's.
    let w = rec.tables[0].bucket_ns;
    assert!(w > 0);
    for f in 0..2u32 {
        let times: Vec<u64> = (0..r.series.time_ns.len())
            .filter(|&i| r.series.flow[i] == f)
            .map(|i| r.series.time_ns[i] / w)
            .collect();
        assert!(times.windows(2).all(|p| p[0] < p[1]), "one row per bucket");
    }
    // Logs keep their first rows.
    assert_eq!(
        r.segments.seq[..],
        full.segments.seq[..r.segments.seq.len()]
    );
    assert!(rec.tables[4].truncated_at_ns.is_some());
    // Summaries do not depend on what is recorded.
    assert_eq!(r.flows, full.flows);
    // Deterministic.
    assert_eq!(run().0, r);
    // A cap that is never reached changes nothing.
    let roomy = Simulation::run(&capped(Some(MaxRows::Rows(1 << 40)))).unwrap();
    assert_eq!(roomy, full);
    // Nor does the default bound on a run that stays within it.
    assert_eq!(Simulation::run(&capped(None)).unwrap(), full);
}

/// One bulk flow over a 100 Mb/s dumbbell for `secs`, every table recorded, `max_rows`.
fn fast(secs: u64, max_rows: Option<MaxRows>) -> Scenario {
    let bottleneck = Duplex::symmetric(common::dir(100_000_000, 10, 500));
    let access = Duplex::symmetric(common::dir(1_000_000_000, 1, 1000));
    ScenarioBuilder::new("fast", dumbbell(1, bottleneck, access))
        .duration(Dur::from_secs(secs))
        .flow(TcpFlowSpec::bulk("s0", "r0"))
        .trace(TraceSpec {
            max_rows_per_flow: max_rows,
            ..TraceSpec::all()
        })
        .build()
}

#[test]
fn by_default_the_series_and_queues_tables_stay_within_their_bytes() {
    let cap = DEFAULT_TABLE_BYTES / row_bytes::QUEUES;
    let secs = 12;
    let all = Simulation::run(&fast(secs, Some(MaxRows::All))).unwrap();
    let rows = all.queues.time_ns.len() as u64;
    assert!(rows > cap, "{rows} rows");
    let mut sim = Simulation::new(&fast(secs, None)).unwrap();
    let est = sim.estimate().tables[1].rows;
    assert!(est <= cap, "estimate {est} rows");
    sim.run_until(sim.end_time());
    let rec = sim.recording();
    let r = sim.finish();
    assert!(r.queues.time_ns.len() as u64 <= cap);
    assert!(rec.tables[1].bytes <= DEFAULT_TABLE_BYTES);
    assert!(rec.tables[1].bucket_ns > 0, "decimated");
    // Decimation keeps at most one row per link direction and bucket.
    let w = rec.tables[1].bucket_ns;
    for l in 0..6u32 {
        let b: Vec<u64> = (0..r.queues.time_ns.len())
            .filter(|&i| r.queues.link[i] == l)
            .map(|i| r.queues.time_ns[i] / w)
            .collect();
        assert!(b.windows(2).all(|p| p[0] < p[1]), "one row per bucket");
    }
    // The logs and the summaries are whole.
    assert_eq!(r.segments, all.segments);
    assert_eq!(r.events, all.events);
    assert_eq!(r.flows, all.flows);
    assert_eq!(rec.tables[4].truncated_at_ns, None);
}

/// A UDP flow of `rate` bit/s in 1000-byte datagrams for `secs` s over 10 Mb/s, series every
/// `interval_ns`, rows capped at `max_rows`.
fn udp_series(rate: u64, secs: u64, interval_ns: u64, max_rows: Option<MaxRows>) -> Scenario {
    let bottleneck = Duplex::symmetric(common::dir(10_000_000, 10, 50));
    let access = Duplex::symmetric(common::dir(100_000_000, 1, 1000));
    ScenarioBuilder::new("udp-delay", dumbbell(1, bottleneck, access))
        .duration(Dur::from_secs(secs))
        .udp(UdpFlowSpec::cbr("s0", "r0", rate, 1000))
        .trace(TraceSpec {
            max_rows_per_flow: max_rows,
            ..interval(interval_ns)
        })
        .build()
}

#[test]
fn the_delay_series_table_is_estimated_and_counted() {
    // 1 Mb/s of 1000-byte datagrams for 2 s: about 250 datagrams and 2001 intervals of
    // 1 ms: at most one row per datagram.
    let s = udp_series(1_000_000, 2, 1_000_000, None);
    let mut sim = build(&s, 64).unwrap();
    let est = sim.estimate().tables[5].clone();
    assert_eq!(est.table, "delay_series");
    assert_eq!(est.rows, sim.estimate().udp_packets);
    assert!((250..=251).contains(&est.rows), "{est:?}");
    assert_eq!(est.bytes, est.rows * row_bytes::DELAY_SERIES);
    sim.run_until(sim.end_time());
    let rec = sim.recording().tables[5].clone();
    let r = sim.finish();
    let rows = r.delay_series.time_ns.len() as u64;
    assert!(
        rows > 200 && rows <= est.rows,
        "{rows} rows, estimate {}",
        est.rows
    );
    // The recording counts every closed interval (the last, open at the end, is not charged).
    assert_eq!(rec.rows + 1, rows);
    assert_eq!(rec.bytes, rec.rows * row_bytes::DELAY_SERIES);
    assert_eq!(rec.bucket_ns, 0);
    // Capped: the intervals widen and the estimate follows.
    let capped = build(
        &udp_series(1_000_000, 2, 1_000_000, Some(MaxRows::Rows(10))),
        64,
    )
    .unwrap();
    assert_eq!(capped.estimate().tables[5].rows, 11);
}

#[test]
fn a_udp_flood_with_a_tiny_interval_is_refused_for_its_delay_rows() {
    // 8 Mb/s for 10 s at 10 µs intervals: about 10,000 datagrams, one delay_series row
    // each (~0.7 MB), beside the queue rows (~140 MB). A limit that holds the queue rows
    // but not the delay rows refuses it, naming the interval.
    let s = udp_series(8_000_000, 10, 10_000, None);
    let est = build(&s, 4096).unwrap().estimate().clone();
    assert_eq!(est.tables[5].rows, est.udp_packets);
    assert!(est.udp_packets >= 10_000, "{est:?}");
    let without_delay = est.bytes() - est.tables[5].bytes;
    let limit = without_delay + est.tables[5].bytes / 2;
    let err = Simulation::with_limit(&s, &Registries::default(), limit)
        .err()
        .expect("refused")
        .0;
    assert!(!err.contains('\n'), "{err}");
    assert!(err.contains("trace.interval = 10us"), "{err}");
}

#[test]
fn check_refuses_what_building_refuses_and_estimates_the_same() {
    let reg = Registries::default();
    // Refused by the estimate: the same line.
    let s = scenario(Dur::from_secs(1), interval(1));
    let built = Simulation::with_limit(&s, &reg, 2048 * MB)
        .err()
        .expect("refused")
        .0;
    let checked = Simulation::check(&s, &reg, 2048 * MB)
        .expect_err("refused")
        .0;
    assert_eq!(checked, built);
    // Refused by a flow's settings (a controller the registries do not know).
    let mut bad = scenario(Dur::from_secs(1), TraceSpec::off());
    bad.flows[1].controller.name = "no-such-controller".into();
    let built = Simulation::with_limit(&bad, &reg, 64 * MB)
        .err()
        .expect("refused")
        .0;
    let checked = Simulation::check(&bad, &reg, 64 * MB)
        .expect_err("refused")
        .0;
    assert_eq!(checked, built);
    // Accepted: the same estimate as the built run's.
    let ok = scenario(Dur::from_secs(20), TraceSpec::all());
    let est = Simulation::check(&ok, &reg, 64 * MB).expect("valid");
    assert_eq!(&est, build(&ok, 64).unwrap().estimate());
}
