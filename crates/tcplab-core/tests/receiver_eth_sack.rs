//! `tcp.sack_style`: the receiver's SACK blocks as RFC 2018 byte ranges (default) or, as the
//! ETH framework did (Bolliger et al. 1999, Appendix A.2), one out-of-order packet per block,
//! most recently received first. Scripted exchanges as in `receiver.rs` (segments of 1000
//! bytes; `nth(k)` is the k-th segment), plus a randomized check of the packet blocks'
//! invariants and a sender fed by such a receiver.

use tcplab_core::cc::Growth;
use tcplab_core::config::SackStyle;
use tcplab_core::{
    AckSegment, ControllerSpec, DataSegment, Receiver, RecoverySpec, Sender, Seq, TcpConfig, Time,
};

use crate::common;

use common::seg;

const MSS: u32 = 1000;

/// MSS 1000, delayed ACKs every 2nd segment, `blocks` SACK blocks in `style`, no timestamps.
fn config(style: SackStyle, blocks: u8) -> TcpConfig {
    TcpConfig {
        mss: MSS,
        timestamps: false,
        sack_blocks: blocks,
        sack_style: style,
        ..TcpConfig::default()
    }
}

fn nth(n: u64) -> DataSegment {
    seg(n * MSS as u64, MSS)
}

/// Feeds `s` at `t` ms and returns the ACK due then, as (cumulative ACK, blocks in bytes).
fn exchange(r: &mut Receiver, t: u64, s: DataSegment) -> Option<(u64, Vec<(u64, u64)>)> {
    r.on_segment(Time::from_millis(t), &s);
    let a: Option<AckSegment> = r.poll_transmit(Time::from_millis(t));
    a.map(|a| {
        let b = a.sack.iter().map(|b| (b.start.0, b.end.0)).collect();
        (a.ack.0, b)
    })
}

/// Segment k as a block in bytes.
fn p(k: u64) -> (u64, u64) {
    (k * 1000, (k + 1) * 1000)
}

#[test]
fn segments_2_4_6_8_out_of_order_with_three_blocks() {
    // Segment 0 in order (delayed, no ACK), then 2, 4, 6, 8 with 1, 3, 5, 7 missing, then 9
    // (adjacent to 8), 5 (bridging 4 and 6), a duplicate of 2, and the hole fillers 1, 3, 7.
    // Each row: segment, the ACK with ranges, the ACK with ETH packets.
    type Ack = (u64, Vec<(u64, u64)>);
    let script: Vec<(u64, Ack, Ack)> = vec![
        (2, (1000, vec![p(2)]), (1000, vec![p(2)])),
        (4, (1000, vec![p(4), p(2)]), (1000, vec![p(4), p(2)])),
        (
            6,
            (1000, vec![p(6), p(4), p(2)]),
            (1000, vec![p(6), p(4), p(2)]),
        ),
        // The fourth block does not fit: both report the three most recent.
        (
            8,
            (1000, vec![p(8), p(6), p(4)]),
            (1000, vec![p(8), p(6), p(4)]),
        ),
        // Ranges merge 9 into 8's block; packets report 9 alone, 8 moves to second place.
        (
            9,
            (1000, vec![(8000, 10000), p(6), p(4)]),
            (1000, vec![p(9), p(8), p(6)]),
        ),
        // 5 bridges 4 and 6: one range 4..7; the packets stay apart, 4 and 6 drop out.
        (
            5,
            (1000, vec![(4000, 7000), (8000, 10000), p(2)]),
            (1000, vec![p(5), p(9), p(8)]),
        ),
        // A duplicate of 2 brings its block (its packet) to the front.
        (
            2,
            (1000, vec![p(2), (4000, 7000), (8000, 10000)]),
            (1000, vec![p(2), p(5), p(9)]),
        ),
        // 1 fills the first hole: 2 is acknowledged cumulatively and leaves the blocks.
        (
            1,
            (3000, vec![(4000, 7000), (8000, 10000)]),
            (3000, vec![p(5), p(9), p(8)]),
        ),
        (3, (7000, vec![(8000, 10000)]), (7000, vec![p(9), p(8)])),
        (7, (10000, vec![]), (10000, vec![])),
    ];
    let mut ranges = Receiver::new(&config(SackStyle::Ranges, 3));
    let mut packets = Receiver::new(&config(SackStyle::EthPackets, 3));
    for r in [&mut ranges, &mut packets] {
        assert_eq!(exchange(r, 0, nth(0)), None, "delayed ACK");
    }
    for (t, (k, want_ranges, want_packets)) in script.into_iter().enumerate() {
        let t = t as u64 + 1;
        assert_eq!(
            exchange(&mut ranges, t, nth(k)),
            Some(want_ranges),
            "ranges, segment {k}"
        );
        assert_eq!(
            exchange(&mut packets, t, nth(k)),
            Some(want_packets),
            "eth_packets, segment {k}"
        );
    }
    assert_eq!(ranges.counters(), packets.counters());
}

#[test]
fn ranges_is_the_default_style() {
    assert_eq!(TcpConfig::default().sack_style, SackStyle::Ranges);
    let mut d = Receiver::new(&TcpConfig {
        mss: MSS,
        timestamps: false,
        ..TcpConfig::default()
    });
    let mut r = Receiver::new(&config(SackStyle::Ranges, 3));
    for (t, k) in [0, 2, 3, 5, 4, 9, 1].into_iter().enumerate() {
        assert_eq!(
            exchange(&mut d, t as u64, nth(k)),
            exchange(&mut r, t as u64, nth(k))
        );
    }
}

#[test]
fn block_count_follows_sack_blocks_and_dsack_comes_first() {
    // Seven adjacent packets 2..=8 arrive in order above the hole at 1.
    for n in 0..=6u8 {
        let mut r = Receiver::new(&config(SackStyle::EthPackets, n));
        exchange(&mut r, 0, nth(0));
        let mut last = None;
        for k in 2..=8 {
            last = exchange(&mut r, k, nth(k));
        }
        let want: Vec<_> = (2..=8u64).rev().map(p).take(n as usize).collect();
        assert_eq!(last, Some((1000, want)), "sack_blocks = {n}");
    }
    // With DSACK the duplicate's range comes first and the packets fill the rest.
    let mut r = Receiver::new(&TcpConfig {
        dsack: true,
        ..config(SackStyle::EthPackets, 3)
    });
    exchange(&mut r, 0, nth(0));
    for k in 2..=5 {
        exchange(&mut r, k, nth(k));
    }
    assert_eq!(
        exchange(&mut r, 6, nth(3)),
        Some((1000, vec![p(3), p(3), p(5)])),
        "DSACK of 3, then 3 (now the most recent packet) and 5"
    );
}

#[test]
fn odd_cuts_are_reported_without_overlap() {
    // A retransmission cut differently from the original: only its new bytes form a packet.
    let mut r = Receiver::new(&config(SackStyle::EthPackets, 6));
    exchange(&mut r, 0, nth(0));
    exchange(&mut r, 1, seg(2000, 1000));
    exchange(&mut r, 2, seg(4000, 1000));
    // 2500..4500 overlaps both: new bytes 3000..4000.
    let a = exchange(&mut r, 3, seg(2500, 2000));
    assert_eq!(a, Some((1000, vec![(3000, 4000), p(4), p(2)])));
    // 1500..5500 covers all three and more: one packet, the ones inside superseded.
    let a = exchange(&mut r, 4, seg(1500, 4000));
    assert_eq!(a, Some((1000, vec![(1500, 5500)])));
}

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

#[test]
fn random_arrivals_give_disjoint_packets_of_held_data_most_recent_first() {
    for seed in 1..=300u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let blocks = rng.below(7) as u8;
        let mut r = Receiver::new(&TcpConfig {
            delayed_ack: rng.below(2) == 0,
            ..config(SackStyle::EthPackets, blocks)
        });
        let n = 1 + rng.below(40);
        // Whole segments, some twice, some re-cut, shuffled.
        let mut segs: Vec<DataSegment> = (0..n).map(nth).collect();
        for k in 0..n {
            match rng.below(10) {
                0 => segs.push(nth(k)),
                1 => segs.push(seg(k * 1000 + 300, 1000)),
                _ => {}
            }
        }
        for i in (1..segs.len()).rev() {
            segs.swap(i, rng.below(i as u64 + 1) as usize);
        }
        // The re-cut copy of the last segment may reach 300 bytes past the rest.
        let total = n * 1000 + 300;
        let mut last_byte = n * 1000;
        for (t, s) in segs.iter().enumerate() {
            let s = DataSegment {
                len: s.len.min((total - s.seq.0) as u32),
                ..*s
            };
            last_byte = last_byte.max(s.end().0);
            let before: Vec<_> = r.held_blocks().collect();
            let fresh =
                s.seq > r.rcv_nxt() && !before.iter().any(|b| b.start <= s.seq && s.end() <= b.end);
            r.on_segment(Time::from_millis(t as u64), &s);
            let Some(a) = r.poll_transmit(Time::from_millis(t as u64)) else {
                continue;
            };
            assert!(a.sack.len() <= blocks as usize, "seed {seed}");
            let held: Vec<_> = r.held_blocks().collect();
            let v = a.sack.as_slice();
            for (i, b) in v.iter().enumerate() {
                assert!(b.start > a.ack && b.start < b.end, "seed {seed}: {a:?}");
                assert!(
                    held.iter().any(|h| h.start <= b.start && b.end <= h.end),
                    "seed {seed}: {a:?} inside {held:?}"
                );
                assert!(
                    v[..i].iter().all(|o| o.end <= b.start || b.end <= o.start),
                    "seed {seed}: overlapping blocks {a:?}"
                );
            }
            if fresh && blocks > 0 {
                // The first block is (part of) the packet that just arrived.
                let f = v[0];
                assert!(
                    s.seq <= f.start && f.end <= s.end(),
                    "seed {seed}: {s:?} {a:?}"
                );
            }
        }
        if let Some(t) = r.poll_timeout() {
            r.on_timeout(t);
        }
        assert_eq!(r.rcv_nxt(), Seq(last_byte), "seed {seed}");
    }
}

#[test]
fn a_sack_sender_completes_a_lossy_transfer_from_packet_blocks() {
    // Sender (SACK recovery) and ETH-style receiver back to back; every 7th data
    // transmission is lost (retransmissions too). The blocks are valid byte ranges, so the
    // scoreboard takes them unchanged and the transfer completes.
    let cfg = TcpConfig {
        mss: MSS,
        initial_cwnd: 10,
        growth: Growth::PerAck,
        sack_blocks: 6,
        sack_style: SackStyle::EthPackets,
        ..TcpConfig::default()
    };
    let mut s = Sender::build(
        &cfg,
        &ControllerSpec::named("reno"),
        &RecoverySpec::named("sack"),
        Some(200_000),
    )
    .unwrap();
    let mut r = Receiver::new(&cfg);
    let mut now = Time::ZERO;
    let mut sent = 0u64;
    for _ in 0..100_000 {
        if r.rcv_nxt() == Seq(200_000) {
            break;
        }
        let mut acks = Vec::new();
        while let Some(d) = s.poll_transmit(now) {
            sent += 1;
            if !sent.is_multiple_of(7) {
                r.on_segment(now, &d);
                acks.extend(r.poll_transmit(now));
            }
        }
        now += tcplab_core::Dur::from_millis(10);
        for a in acks {
            assert!(a.sack.iter().all(|b| b.end.0 - b.start.0 == MSS as u64));
            s.on_segment(now, &a);
        }
        if r.poll_timeout().is_some_and(|t| t <= now) {
            r.on_timeout(now);
            if let Some(a) = r.poll_transmit(now) {
                s.on_segment(now, &a);
            }
        }
        if s.poll_timeout().is_some_and(|t| t <= now) {
            s.on_timeout(now);
        }
    }
    assert_eq!(r.rcv_nxt(), Seq(200_000));
    let c = s.counters();
    assert!(c.sack_blocks_used[0] > 0, "{c:?}");
    assert!(c.recoveries > 0, "{c:?}");
}
