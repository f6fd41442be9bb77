//! RED against its specification: the measured early-drop rate against the configured
//! curve (the expected rate comes from the drop-spacing distribution of Floyd & Jacobson
//! §7, in closed form), the average and its idle-time decay, ECN marking, forced drops, the
//! hard limit and byte mode.

use super::*;
use crate::packet::{Packet, PacketId, PacketPool, Payload};

/// The WLAN paper's parameters (packets), no gentle, no wait unless changed.
fn spec() -> RedSpec {
    RedSpec {
        min_th: 5.0,
        max_th: 10.0,
        max_p: 0.1,
        w_q: 0.005,
        gentle: false,
        wait: false,
        mode: RedMode::Packets,
        ecn: false,
        mean_packet_size: 1000,
    }
}

fn red(spec: RedSpec, buffer: u32) -> Red {
    Red::new(
        &spec,
        Buffer::Packets(buffer),
        8_000_000,
        Rng::stream(9, "queue/red"),
    )
}

fn id() -> PacketId {
    let mut pool = PacketPool::new();
    pool.insert(Packet {
        flow: 0,
        dst: 0,
        size: 0,
        sent_at: Time::ZERO,
        payload: Payload::Udp(0),
    })
}

fn pkt(size: u32, ect: bool) -> Queued {
    Queued {
        id: id(),
        size,
        ect,
        drawn: true,
    }
}

fn held(packets: u32, size: u32) -> Occupancy {
    Occupancy {
        packets,
        bytes: packets as u64 * size as u64,
    }
}

/// Offers `n` packets while the link holds `q` packets (the average converges to q), after
/// a warm-up; returns the fraction of early decisions and the admissions seen.
fn early_rate(r: &mut Red, q: u32, size: u32, ect: bool, n: usize) -> (f64, Vec<Admission>) {
    for _ in 0..5000 {
        r.enqueue_observed(Time::ZERO, pkt(size, ect), held(q, size));
        r.dequeue(Time::ZERO);
    }
    let mut early = 0;
    let mut seen = vec![];
    for _ in 0..n {
        let (a, d, _) = r.enqueue_observed(Time::ZERO, pkt(size, ect), held(q, size));
        r.dequeue(Time::ZERO);
        early += (d == Decision::Early) as usize;
        if !seen.contains(&a) {
            seen.push(a);
        }
    }
    (early as f64 / n as f64, seen)
}

/// Mean packets between early drops at a constant p_b (Floyd & Jacobson §7): without
/// `wait`, X is uniform on 1..K with the rest of the mass at K + 1 (K = floor(1/p_b));
/// with `wait` and 1/p_b = k whole, uniform on k+1..2k.
fn mean_spacing(p_b: f64, wait: bool) -> f64 {
    if wait {
        let k = (1.0 / p_b).round();
        assert!(
            (k * p_b - 1.0).abs() < 1e-9,
            "wait formula needs 1/p_b whole"
        );
        (3.0 * k + 1.0) / 2.0
    } else {
        let k = (1.0 / p_b).floor();
        p_b * k * (k + 1.0) / 2.0 + (k + 1.0) * (1.0 - k * p_b)
    }
}

/// Relative error within `tol`.
fn close(got: f64, want: f64, tol: f64) -> bool {
    (got / want - 1.0).abs() < tol
}

#[test]
fn curve_between_thresholds_and_gentle_region() {
    let r = red(spec(), 100);
    assert_eq!(r.p_b(4.99, 1000), None);
    assert!((r.p_b(5.0, 1000).unwrap()).abs() < 1e-12);
    assert!((r.p_b(7.5, 1000).unwrap() - 0.05).abs() < 1e-12);
    assert_eq!(
        r.p_b(10.0, 1000),
        None,
        "forced above max_th without gentle"
    );
    let g = red(
        RedSpec {
            gentle: true,
            ..spec()
        },
        100,
    );
    assert!((g.p_b(10.0, 1000).unwrap() - 0.1).abs() < 1e-12);
    assert!((g.p_b(15.0, 1000).unwrap() - 0.55).abs() < 1e-12);
    assert_eq!(g.p_b(20.0, 1000), None);
}

/// Measured early-drop rate at constant average vs 1 / E[spacing] of the configured p_b,
/// within 5% over 200,000 packets (at least ~2,000 drops per point).
#[test]
fn measured_early_drop_rate_matches_configured_curve() {
    // (queue, p_b, gentle, wait)
    let cases = [
        (6, 0.02, false, false),
        (7, 0.04, false, false),
        (9, 0.08, false, false),
        (15, 0.55, true, false),
        (6, 0.02, false, true),
        (7, 0.04, false, true),
    ];
    for (q, p_b, gentle, wait) in cases {
        let mut r = red(
            RedSpec {
                gentle,
                wait,
                ..spec()
            },
            1000,
        );
        let (rate, _) = early_rate(&mut r, q, 1000, false, 200_000);
        let want = 1.0 / mean_spacing(p_b, wait);
        assert!(
            close(rate, want, 0.05),
            "q {q} gentle {gentle} wait {wait}: rate {rate}, expected {want}"
        );
    }
}

/// Instrumented: the queue level sweeps slowly up and down (0..14 packets); the recorded
/// (average, decision) pairs, binned by average, give early-drop rates that follow the
/// curve. The expected rate of a bin is the mean over its packets of 1 / E[spacing] at
/// each packet's p_b; bins with fewer than 20,000 packets are skipped.
#[test]
fn binned_decisions_follow_the_curve_as_the_average_moves() {
    let mut r = red(spec(), 1000);
    let mut pairs = vec![];
    let levels: Vec<u32> = (0..=12).chain((1..12).rev()).collect();
    for _ in 0..4 {
        for &q in &levels {
            for _ in 0..5000 {
                let (_, d, avg) = r.enqueue_observed(Time::ZERO, pkt(1000, false), held(q, 1000));
                r.dequeue(Time::ZERO);
                pairs.push((avg, d));
            }
        }
    }
    let mut bins = [(0usize, 0usize, 0.0f64); 10]; // (packets, early, expected sum)
    for &(avg, d) in &pairs {
        if !(5.0..10.0).contains(&avg) {
            assert_ne!(d, Decision::Early, "early decision at avg {avg}");
            continue;
        }
        let b = &mut bins[((avg - 5.0) * 2.0) as usize];
        b.0 += 1;
        b.1 += (d == Decision::Early) as usize;
        let p_b = 0.1 * (avg - 5.0) / 5.0;
        if p_b > 0.0 {
            b.2 += 1.0 / mean_spacing(p_b, false);
        }
    }
    let mut checked = 0;
    for (i, &(n, early, want)) in bins.iter().enumerate() {
        if n < 20_000 || i == 0 {
            continue; // too few packets, or too few expected drops near min_th
        }
        let (got, want) = (early as f64 / n as f64, want / n as f64);
        assert!(
            close(got, want, 0.15),
            "bin {i}: rate {got}, expected {want} over {n} packets"
        );
        checked += 1;
    }
    assert!(checked >= 4, "{checked} bins checked: {bins:?}");
}

#[test]
fn average_is_an_ewma_of_the_held_packets() {
    let mut r = red(spec(), 1000);
    r.enqueue(Time::ZERO, pkt(1000, false), held(4, 1000));
    assert!((r.average() - 0.02).abs() < 1e-12);
    r.enqueue(Time::ZERO, pkt(1000, false), held(4, 1000));
    assert!((r.average() - (0.995 * 0.02 + 0.02)).abs() < 1e-12);
}

/// After the link empties, an arrival at an idle link decays the average as if m packets
/// had arrived to an empty queue: m = idle time / transmission time of a typical packet
/// (1000 bytes at 8 Mb/s: 1 ms), then the usual update with q = 0.
#[test]
fn idle_time_decays_the_average() {
    let mut r = red(spec(), 1000);
    for _ in 0..5000 {
        r.enqueue(Time::ZERO, pkt(1000, false), held(8, 1000));
    }
    let a0 = r.average();
    assert!((a0 - 8.0).abs() < 1e-6);
    // Drain: the last packet starts at 0 and ends at 1 ms (1000 bytes at 8 Mb/s).
    while r.dequeue(Time::ZERO).is_some() {}
    // Arrival at 51 ms to an empty link: 50 ms idle = 50 typical packets.
    r.enqueue(Time::from_millis(51), pkt(1000, false), held(0, 1000));
    let want = a0 * 0.995f64.powi(51);
    assert!(
        (r.average() - want).abs() < 1e-9,
        "{} vs {want}",
        r.average()
    );
    // A busy link does not decay: the next arrival is a plain update.
    let a1 = r.average();
    r.enqueue(Time::from_millis(90), pkt(1000, false), held(1, 1000));
    assert!((r.average() - (0.995 * a1 + 0.005)).abs() < 1e-12);
}

#[test]
fn ecn_capable_packets_are_marked_not_dropped_early() {
    let mut r = red(
        RedSpec {
            ecn: true,
            ..spec()
        },
        1000,
    );
    let (rate, seen) = early_rate(&mut r, 8, 1000, true, 20_000);
    assert!(rate > 0.05);
    assert!(seen.contains(&Admission::Mark));
    assert!(!seen.contains(&Admission::Drop(DropCause::AqmEarly)));
    // Not ECN-capable: dropped early even with ecn on.
    let (_, seen) = early_rate(&mut r, 8, 1000, false, 20_000);
    assert!(seen.contains(&Admission::Drop(DropCause::AqmEarly)));
    assert!(!seen.contains(&Admission::Mark));
    // Above max_th (not gentle): forced drops, also for ECN-capable packets.
    let (_, seen) = early_rate(&mut r, 11, 1000, true, 1000);
    assert_eq!(seen, [Admission::Drop(DropCause::AqmForced)]);
}

#[test]
fn gentle_region_and_beyond() {
    let mut r = red(
        RedSpec {
            gentle: true,
            ..spec()
        },
        1000,
    );
    let (_, seen) = early_rate(&mut r, 19, 1000, false, 2000);
    assert!(
        seen.contains(&Admission::Accept),
        "gentle: some pass below 2 max_th"
    );
    let (rate, seen) = early_rate(&mut r, 21, 1000, false, 2000);
    assert_eq!(seen, [Admission::Drop(DropCause::AqmForced)]);
    assert_eq!(rate, 0.0, "forced, not early");
}

/// The buffer is a hard limit whatever the average: a full link drops (aqm_forced) even
/// when the average is below min_th.
#[test]
fn hard_limit_is_independent_of_the_average() {
    let mut r = red(spec(), 3);
    let a = r.enqueue(Time::ZERO, pkt(1000, false), held(3, 1000));
    assert!(r.average() < 5.0);
    assert_eq!(a, Admission::Drop(DropCause::AqmForced));
    assert_eq!(
        r.enqueue(Time::ZERO, pkt(1000, false), held(2, 1000)),
        Admission::Accept
    );
    r.set_limits(Some(Buffer::Packets(2)), None);
    assert_eq!(
        r.enqueue(Time::ZERO, pkt(1000, false), held(2, 1000)),
        Admission::Drop(DropCause::AqmForced)
    );
}

/// Byte mode: thresholds in bytes, p_b scaled by size / mean_packet_size, so small packets
/// are dropped less often.
#[test]
fn byte_mode_scales_with_packet_size() {
    let s = RedSpec {
        min_th: 5000.0,
        max_th: 10000.0,
        mode: RedMode::Bytes,
        ..spec()
    };
    let r = red(s.clone(), 1000);
    assert!((r.p_b(7500.0, 1000).unwrap() - 0.05).abs() < 1e-12);
    assert!((r.p_b(7500.0, 250).unwrap() - 0.0125).abs() < 1e-12);
    // 30 packets of 250 bytes = 7500 bytes held: p_b = 0.0125 -> 1/80 exactly.
    let mut r = red(s, 1000);
    let (rate, _) = early_rate(&mut r, 30, 250, false, 200_000);
    let want = 1.0 / mean_spacing(0.0125, false);
    assert!(close(rate, want, 0.06), "rate {rate}, expected {want}");
}
