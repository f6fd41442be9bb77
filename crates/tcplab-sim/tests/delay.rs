//! Per-packet delay metrics (docs/delay.md): one-way delay and jitter per flow against
//! cases worked out by hand, the histogram's percentiles against the exact ones of the
//! recorded per-packet log, UDP loss against the drop counts, and the same figures from a
//! replay of the recorded facts.

use crate::common;

use tcplab_core::Dur;
use tcplab_sim::builder::{dumbbell, ScenarioBuilder};
use tcplab_sim::instruments::record::{read_jsonl, write_jsonl};
use tcplab_sim::instruments::{replay, Fact};
use tcplab_sim::packet::PacketKind;
use tcplab_sim::results::DelaySummary;
use tcplab_sim::scenario::{Duplex, TcpFlowSpec, TraceSpec, UdpFlowSpec};
use tcplab_sim::Simulation;

const MS: u64 = 1_000_000;

/// The exact one-way delays of `kind` packets of flow `flow`, in arrival order, from the
/// recorded facts (the per-packet log).
fn exact_delays(facts: &[Fact], kind: PacketKind, flow: u32) -> Vec<u64> {
    facts
        .iter()
        .filter_map(|f| match f {
            Fact::Delivered(d) if d.kind == kind && d.flow == flow => {
                Some(d.time.saturating_since(d.sent_at).as_nanos())
            }
            _ => None,
        })
        .collect()
}

/// Nearest-rank percentile of sorted `v`.
fn nearest_rank(v: &[u64], q: f64) -> u64 {
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

/// The row's percentiles are within 1/128 of those of the exact delays; mean, min and max
/// are exact.
fn assert_matches_log(row: &DelaySummary, delays: &[u64]) {
    let mut sorted = delays.to_vec();
    sorted.sort_unstable();
    assert_eq!(row.packets_delivered, delays.len() as u64);
    assert_eq!(row.delay_min_ns, sorted.first().copied());
    assert_eq!(row.delay_max_ns, sorted.last().copied());
    let mean = delays.iter().map(|&d| d as u128).sum::<u128>() as f64 / delays.len() as f64;
    assert_eq!(row.delay_mean_ns, Some(mean));
    for (q, est) in [
        (0.5, row.delay_p50_ns),
        (0.95, row.delay_p95_ns),
        (0.99, row.delay_p99_ns),
    ] {
        let exact = nearest_rank(&sorted, q);
        let est = est.unwrap();
        assert!(
            est.abs_diff(exact) as f64 <= exact as f64 / 128.0,
            "{}: p{q}: {est} vs exact {exact}",
            row.name
        );
    }
    let jitter: u128 = delays.windows(2).map(|w| w[0].abs_diff(w[1]) as u128).sum();
    let mean_jitter = jitter as f64 / (delays.len() - 1) as f64;
    assert_eq!(row.jitter_mean_ns, Some(mean_jitter), "{}", row.name);
}

#[test]
fn constant_rate_udp_on_an_idle_path_has_a_constant_delay() {
    // 1000-byte datagrams at 1 Mb/s over 10 Mb/s access links (2 ms) and a 5 Mb/s
    // bottleneck (20 ms): no packet ever waits.
    let access = Duplex::symmetric(common::dir(10_000_000, 2, 100));
    let bottleneck = Duplex::symmetric(common::dir(5_000_000, 20, 100));
    let s = ScenarioBuilder::new("idle", dumbbell(1, bottleneck, access))
        .duration(Dur::from_secs(3))
        .udp(UdpFlowSpec::cbr("s0", "r0", 1_000_000, 1000).stop(Dur::from_secs(2)))
        .trace(TraceSpec::off())
        .build();
    let r = Simulation::run(&s).unwrap();
    let row = &r.delay[0];
    assert_eq!(
        (row.flow_kind, row.flow, row.name.as_str()),
        ("udp", 0, "udp0")
    );
    // Propagation 2 + 20 + 2 ms; transmission 8000 bits at 10, 5 and 10 Mb/s.
    let d = 24 * MS + 800_000 + 1_600_000 + 800_000;
    // The run ends when the source stops: the last few datagrams are still on their way.
    assert_eq!(row.packets_sent, 250);
    let in_flight = r.conservation.packets_in_flight;
    assert!(in_flight <= 4, "{in_flight}");
    assert_eq!(row.packets_delivered, 250 - in_flight);
    for v in [
        row.delay_min_ns,
        row.delay_p50_ns,
        row.delay_p95_ns,
        row.delay_p99_ns,
        row.delay_max_ns,
    ] {
        assert_eq!(v, Some(d));
    }
    assert_eq!(row.delay_mean_ns, Some(d as f64));
    assert_eq!(row.jitter_mean_ns, Some(0.0));
    assert_eq!(row.jitter_rfc3550_ns, Some(0.0));
    assert_eq!(row.loss_pct, Some(0.0));
    // The histograms: every delay in the bucket of d, every jitter 0.
    let h = &r.delay_histogram;
    assert_eq!(h.metric, ["delay", "jitter"]);
    assert!(h.lower_ns[0] <= d && d < h.lower_ns[0] + h.width_ns[0]);
    assert_eq!(
        (h.lower_ns[1], h.packets[1]),
        (0, row.packets_delivered - 1)
    );
    assert_eq!(h.packets[0], row.packets_delivered);
}

#[test]
fn a_growing_queue_adds_the_service_time_difference_per_packet() {
    // 1000-byte datagrams at 10 Mb/s (one every 0.8 ms, as fast as the access link sends
    // them) into a 1 Mb/s bottleneck (8 ms per packet) with room for all 1250 sent in the
    // 1 s run: packet k waits k * (8 - 0.8) ms more than packet 0.
    let access = Duplex::symmetric(common::dir(10_000_000, 1, 2000));
    let bottleneck = Duplex::symmetric(common::dir(1_000_000, 10, 2000));
    let s = ScenarioBuilder::new("queue", dumbbell(1, bottleneck, access))
        .duration(Dur::from_secs(1))
        .udp(UdpFlowSpec::cbr("s0", "r0", 10_000_000, 1000))
        .trace(TraceSpec::off())
        .build();
    let (r, facts) = common::run_recorded(&s);
    let row = &r.delay[0];
    assert_eq!((row.packets_sent, row.packets_dropped), (1250, 0));
    // Packet k arrives at k * 0.8 ms + its delay = base + 8k ms, within the run for k <= 122.
    let n = row.packets_delivered;
    assert_eq!(n, 123);
    let base = 12 * MS + 800_000 + 8 * MS + 800_000;
    let step = 8 * MS - 800_000;
    let expected: Vec<u64> = (0..n).map(|k| base + k * step).collect();
    assert_eq!(exact_delays(&facts, PacketKind::Udp, 0), expected);
    assert_eq!(row.delay_min_ns, Some(base));
    assert_eq!(row.delay_max_ns, Some(base + (n - 1) * step));
    assert_eq!(row.delay_mean_ns, Some((base + (n - 1) * step / 2) as f64));
    assert_eq!(row.jitter_mean_ns, Some(step as f64));
    // RFC 3550: J_k = step * (1 - (15/16)^k) after k equal differences.
    let j = step as f64 * (1.0 - (15.0f64 / 16.0).powi(n as i32 - 1));
    let got = row.jitter_rfc3550_ns.unwrap();
    assert!((got - j).abs() <= j * 1e-9, "{got} vs {j}");
    assert_matches_log(row, &expected);
}

#[test]
fn percentiles_are_within_the_stated_error_of_the_per_packet_log() {
    // Three TCP flows and a UDP flow sharing a congested bottleneck with random loss.
    let bottleneck = Duplex::symmetric(common::dir(4_000_000, 20, 40).bernoulli(0.002));
    let access = Duplex::symmetric(common::dir(20_000_000, 2, 200));
    let mut b = ScenarioBuilder::new("mix", dumbbell(4, bottleneck, access))
        .seed(3)
        .duration(Dur::from_secs(20))
        .trace(TraceSpec::off());
    for (i, c) in ["reno", "cubic", "veno"].into_iter().enumerate() {
        b = b.flow(TcpFlowSpec::bulk(&format!("s{i}"), &format!("r{i}")).controller(c));
    }
    let s = b
        .udp(UdpFlowSpec::cbr("s3", "r3", 1_000_000, 500).start(Dur::from_secs(2)))
        .build();
    let (r, facts) = common::run_recorded(&s);
    assert_eq!(r.delay.len(), 4);
    for (i, row) in r.delay.iter().enumerate() {
        let (kind, flow) = if i < 3 {
            (PacketKind::Data, i as u32)
        } else {
            (PacketKind::Udp, 0)
        };
        let delays = exact_delays(&facts, kind, flow);
        assert!(delays.len() > 1000, "{}: {}", row.name, delays.len());
        assert_matches_log(row, &delays);
        // The queue spreads the delays: the percentiles are not all one bucket.
        assert!(row.delay_p99_ns.unwrap() > row.delay_p50_ns.unwrap() + 5 * MS);
    }
    // TCP: sent and dropped are the flows table's data transmissions and data drops.
    for (f, row) in r.flows.iter().zip(&r.delay) {
        assert_eq!(row.packets_sent, f.sender.segments_sent);
        assert_eq!(row.packets_dropped, f.data_drops);
        assert!(row.packets_dropped > 0);
    }

    // The same figures from the recorded facts, in memory and through JSON lines.
    let m = replay(3, 1, facts.iter().copied());
    let mut rows = m.delay();
    for (row, name) in rows.iter_mut().zip(&r.delay) {
        row.name = name.name.clone();
    }
    assert_eq!(rows, r.delay);
    assert_eq!(m.delay_histogram(), r.delay_histogram);
    let mut file = Vec::new();
    write_jsonl(&facts, &mut file).unwrap();
    let read = read_jsonl(file.as_slice()).unwrap();
    assert_eq!(read, facts);
    assert_eq!(replay(3, 1, read).delay_histogram(), r.delay_histogram);
}

#[test]
fn udp_loss_is_drops_over_datagrams_sent() {
    // 2 Mb/s into a 1 Mb/s bottleneck with 10 packets of buffer and 1% random loss.
    let bottleneck = Duplex::symmetric(common::dir(1_000_000, 10, 10).bernoulli(0.01));
    let access = Duplex::symmetric(common::dir(10_000_000, 1, 100));
    let s = ScenarioBuilder::new("udp-loss", dumbbell(1, bottleneck, access))
        .seed(9)
        .duration(Dur::from_secs(10))
        .udp(UdpFlowSpec::cbr("s0", "r0", 2_000_000, 1000))
        .trace(TraceSpec::all())
        .build();
    let r = Simulation::run(&s).unwrap();
    let (u, row) = (&r.udp[0], &r.delay[0]);
    let logged = r.drops.flow_kind.iter().filter(|&&k| k == "udp").count() as u64;
    assert_eq!(row.packets_dropped, logged);
    assert_eq!(row.packets_dropped, u.packets_dropped);
    assert_eq!(row.packets_sent, u.packets_sent);
    assert_eq!(row.packets_delivered, u.packets_received);
    let pct = u.packets_dropped as f64 * 100.0 / u.packets_sent as f64;
    assert_eq!(row.loss_pct, Some(pct));
    assert!(pct > 40.0 && pct < 60.0, "{pct}");
}
