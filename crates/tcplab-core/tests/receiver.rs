//! Scripted segment exchanges with the sans-IO receiver: `send!` feeds a data segment at a
//! time, `recv!` polls and checks the one ACK due (or that nothing is due).

use tcplab_core::{AckSegment, DataSegment, Receiver, Seq, TcpConfig, Time};

use crate::common;

use common::seg;

const MSS: u32 = 1000;

/// Test defaults: MSS 1000, delayed ACKs every 2nd segment / 200 ms, 3 SACK blocks,
/// timestamps and ECN off; `f` adjusts.
fn config(f: impl FnOnce(&mut TcpConfig)) -> TcpConfig {
    let mut c = TcpConfig {
        mss: MSS,
        timestamps: false,
        ecn: false,
        sack_blocks: 3,
        delayed_ack: true,
        ack_every: 2,
        ..TcpConfig::default()
    };
    f(&mut c);
    c
}

fn ms(t: u64) -> Time {
    Time::from_millis(t)
}

/// The `n`-th full-sized segment of the stream.
fn nth(n: u64) -> DataSegment {
    seg(n * MSS as u64, MSS)
}

trait SegExt {
    fn ts(self, ms: u64) -> Self;
    fn ce(self) -> Self;
    fn cwr(self) -> Self;
}

impl SegExt for DataSegment {
    fn ts(mut self, t: u64) -> Self {
        self.ts_val = Some(ms(t));
        self
    }
    fn ce(mut self) -> Self {
        self.ect = true;
        self.ce = true;
        self
    }
    fn cwr(mut self) -> Self {
        self.cwr = true;
        self
    }
}

fn blocks(a: &AckSegment) -> Vec<(u64, u64)> {
    a.sack.iter().map(|b| (b.start.0, b.end.0)).collect()
}

/// `send!(r, t = ms, segment)`: a data segment arrives at `t` milliseconds.
macro_rules! send {
    ($r:expr, t = $t:expr, $seg:expr) => {
        $r.on_segment(ms($t), &$seg)
    };
}

/// The first argument when given, else the second.
macro_rules! or_else {
    ($v:expr, $default:expr) => {
        $v
    };
    (, $default:expr) => {
        $default
    };
}

/// `recv!(r, t = ms, nothing)`: no ACK is due at `t`.
/// `recv!(r, t = ms, ack = A [, sack = [(s, e), ..]] [, ecr = Some(..)] [, ece = bool])`:
/// exactly one ACK is due, acknowledging `A`, carrying exactly these SACK blocks (none when
/// omitted), echoing `ecr` (unchecked when omitted) and ECE (false when omitted).
macro_rules! recv {
    ($r:expr, t = $t:expr, nothing) => {
        assert_eq!($r.poll_transmit(ms($t)), None, "no ACK expected")
    };
    ($r:expr, t = $t:expr, ack = $ack:expr
        $(, sack = [$(($s:expr, $e:expr)),* $(,)?])?
        $(, ecr = $ecr:expr)?
        $(, ece = $ece:expr)?) => {{
        let a = $r.poll_transmit(ms($t)).expect("an ACK is due");
        assert_eq!(a.ack, Seq($ack), "cumulative ACK in {a:?}");
        let want_sack: Vec<(u64, u64)> = or_else!($(vec![$(($s, $e)),*])?, Vec::new());
        assert_eq!(blocks(&a), want_sack, "SACK blocks in {a:?}");
        $(assert_eq!(a.ts_ecr, $ecr, "TSecr in {a:?}");)?
        let want_ece: bool = or_else!($($ece)?, false);
        assert_eq!(a.ece, want_ece, "ECE in {a:?}");
        assert_eq!($r.poll_transmit(ms($t)), None, "one ACK per poll");
        a
    }};
}

#[test]
fn delayed_ack_every_second_full_segment() {
    let mut r = Receiver::new(&config(|_| {}));
    send!(r, t = 0, nth(0));
    recv!(r, t = 0, nothing);
    send!(r, t = 1, nth(1));
    recv!(r, t = 1, ack = 2000);
    assert_eq!(r.poll_timeout(), None, "the ACK stops the timer");
    send!(r, t = 2, nth(2));
    recv!(r, t = 2, nothing);
    send!(r, t = 3, nth(3));
    recv!(r, t = 3, ack = 4000);
    // Short segments do not count toward ack_every.
    send!(r, t = 4, seg(4000, 500));
    recv!(r, t = 4, nothing);
    send!(r, t = 5, seg(4500, MSS));
    recv!(r, t = 5, nothing);
    send!(r, t = 6, seg(5500, MSS));
    recv!(r, t = 6, ack = 6500);
    assert_eq!(r.counters().acks_sent, 3);

    let mut r = Receiver::new(&config(|c| c.ack_every = 3));
    for n in 0..2 {
        send!(r, t = n, nth(n));
        recv!(r, t = n, nothing);
    }
    send!(r, t = 2, nth(2));
    recv!(r, t = 2, ack = 3000);
}

#[test]
fn delayed_ack_timer_fires_200ms_after_first_unacked_segment() {
    let mut r = Receiver::new(&config(|c| c.ack_every = 3));
    assert_eq!(r.poll_timeout(), None);
    r.on_timeout(ms(1000)); // nothing armed: nothing happens
    recv!(r, t = 1000, nothing);

    send!(r, t = 1010, nth(0));
    assert_eq!(r.poll_timeout(), Some(ms(1210)));
    send!(r, t = 1050, nth(1));
    assert_eq!(
        r.poll_timeout(),
        Some(ms(1210)),
        "not re-armed by later segments"
    );
    r.on_timeout(ms(1209));
    recv!(r, t = 1209, nothing);
    r.on_timeout(ms(1210));
    recv!(r, t = 1210, ack = 2000);
    assert_eq!(r.poll_timeout(), None);

    // A late timer call still makes the ACK due.
    send!(r, t = 1300, seg(2000, 10));
    assert_eq!(r.poll_timeout(), Some(ms(1500)));
    r.on_timeout(ms(1900));
    recv!(r, t = 1900, ack = 2010);

    // A custom timeout.
    let mut r = Receiver::new(&config(|c| {
        c.delayed_ack_timeout = tcplab_core::Dur::from_millis(40)
    }));
    send!(r, t = 5, nth(0));
    assert_eq!(r.poll_timeout(), Some(ms(45)));
}

#[test]
fn delayed_ack_off_acknowledges_every_segment() {
    let mut r = Receiver::new(&config(|c| c.delayed_ack = false));
    for n in 0..4 {
        send!(r, t = n, nth(n));
        assert_eq!(r.poll_timeout(), None);
        recv!(r, t = n, ack = (n + 1) * 1000);
    }
    send!(r, t = 9, seg(4000, 1));
    recv!(r, t = 9, ack = 4001);
    assert_eq!(r.counters().acks_sent, 5);
}

#[test]
fn out_of_order_segment_is_acknowledged_at_once() {
    let mut r = Receiver::new(&config(|_| {}));
    send!(r, t = 0, nth(0));
    recv!(r, t = 0, nothing);
    send!(r, t = 1, nth(2));
    recv!(r, t = 1, ack = 1000, sack = [(2000, 3000)]);
    assert_eq!(r.poll_timeout(), None);
    send!(r, t = 2, nth(3));
    recv!(r, t = 2, ack = 1000, sack = [(2000, 4000)]);
    assert_eq!(r.counters().out_of_order_segments, 2);
    assert_eq!(r.rcv_nxt(), Seq(1000));
}

#[test]
fn hole_filler_is_acknowledged_at_once_and_ack_jumps() {
    let mut r = Receiver::new(&config(|_| {}));
    send!(r, t = 0, nth(0));
    send!(r, t = 1, nth(3));
    recv!(r, t = 1, ack = 1000, sack = [(3000, 4000)]);
    send!(r, t = 2, nth(5));
    recv!(r, t = 2, ack = 1000, sack = [(5000, 6000), (3000, 4000)]);
    // Fills part of the first hole.
    send!(r, t = 3, nth(1));
    recv!(r, t = 3, ack = 2000, sack = [(5000, 6000), (3000, 4000)]);
    // Fills the rest of it: the cumulative ACK jumps over the held block.
    send!(r, t = 4, nth(2));
    recv!(r, t = 4, ack = 4000, sack = [(5000, 6000)]);
    send!(r, t = 5, nth(4));
    recv!(r, t = 5, ack = 6000);
    // No hole any more: back to delayed ACKs.
    send!(r, t = 6, nth(6));
    recv!(r, t = 6, nothing);
    assert_eq!(r.counters().out_of_order_segments, 2);
}

#[test]
fn sack_blocks_most_recent_first_then_by_recency() {
    let mut r = Receiver::new(&config(|_| {}));
    send!(r, t = 0, nth(0));
    recv!(r, t = 0, nothing);
    send!(r, t = 1, nth(2));
    recv!(r, t = 1, ack = 1000, sack = [(2000, 3000)]);
    send!(r, t = 2, nth(4));
    recv!(r, t = 2, ack = 1000, sack = [(4000, 5000), (2000, 3000)]);
    send!(r, t = 3, nth(6));
    recv!(
        r,
        t = 3,
        ack = 1000,
        sack = [(6000, 7000), (4000, 5000), (2000, 3000)]
    );
    send!(r, t = 4, nth(8));
    recv!(
        r,
        t = 4,
        ack = 1000,
        sack = [(8000, 9000), (6000, 7000), (4000, 5000)]
    );
    // Bridges two blocks: the merged block comes first, reported once.
    send!(r, t = 5, nth(5));
    recv!(
        r,
        t = 5,
        ack = 1000,
        sack = [(4000, 7000), (8000, 9000), (2000, 3000)]
    );
    // A duplicate inside an old block brings it to the front.
    send!(r, t = 6, nth(2));
    recv!(
        r,
        t = 6,
        ack = 1000,
        sack = [(2000, 3000), (4000, 7000), (8000, 9000)]
    );
    // An in-order segment has no block: the others keep their order, none below the ACK.
    send!(r, t = 7, nth(1));
    recv!(r, t = 7, ack = 3000, sack = [(4000, 7000), (8000, 9000)]);
    // Extends a block at its right edge.
    send!(r, t = 8, nth(9));
    recv!(r, t = 8, ack = 3000, sack = [(8000, 10000), (4000, 7000)]);
    send!(r, t = 9, nth(3));
    recv!(r, t = 9, ack = 7000, sack = [(8000, 10000)]);
    send!(r, t = 10, nth(7));
    recv!(r, t = 10, ack = 10000);
    assert_eq!(r.held_blocks().count(), 0);
}

#[test]
fn sack_block_count_is_limited_by_config() {
    // Seven held blocks at 2, 4, .., 14 (received in that order).
    for n in 0..=8u8 {
        let mut r = Receiver::new(&config(|c| c.sack_blocks = n));
        for k in 1..=7 {
            send!(r, t = k, nth(2 * k));
        }
        let a = r.poll_transmit(ms(7)).unwrap();
        let want: Vec<(u64, u64)> = (1..=7u64)
            .rev()
            .map(|k| (2000 * k, 2000 * k + 1000))
            .take((n as usize).min(6))
            .collect();
        assert_eq!(blocks(&a), want, "sack_blocks = {n}");
        assert_eq!(a.ack, Seq(0));
    }
}

#[test]
fn timestamp_echo_rules() {
    let cfg = config(|c| c.timestamps = true);
    let mut r = Receiver::new(&cfg);
    // Nothing to echo before an in-order segment arrived.
    send!(r, t = 0, nth(1).ts(4));
    recv!(r, t = 0, ack = 0, sack = [(1000, 2000)], ecr = None);

    let mut r = Receiver::new(&cfg);
    // Delayed ACK: the echo is the earliest unacknowledged segment's timestamp.
    send!(r, t = 10, nth(0).ts(1));
    send!(r, t = 11, nth(1).ts(2));
    recv!(r, t = 11, ack = 2000, ecr = Some(ms(1)));
    // Above a hole: no update.
    send!(r, t = 12, nth(3).ts(5));
    recv!(
        r,
        t = 12,
        ack = 2000,
        sack = [(3000, 4000)],
        ecr = Some(ms(1))
    );
    send!(r, t = 13, nth(4).ts(6));
    recv!(
        r,
        t = 13,
        ack = 2000,
        sack = [(3000, 5000)],
        ecr = Some(ms(1))
    );
    // The hole filler updates TS.Recent.
    send!(r, t = 14, nth(2).ts(7));
    recv!(r, t = 14, ack = 5000, ecr = Some(ms(7)));
    // An older TSval never moves TS.Recent back.
    send!(r, t = 15, nth(5).ts(3));
    send!(r, t = 16, nth(6).ts(8));
    recv!(r, t = 16, ack = 7000, ecr = Some(ms(7)));
    // The timer-driven ACK echoes the one segment it acknowledges.
    send!(r, t = 20, nth(7).ts(9));
    r.on_timeout(ms(220));
    recv!(r, t = 220, ack = 8000, ecr = Some(ms(9)));
    assert_eq!(r.ts_recent(), Some(ms(9)));

    // Timestamps off: no echo whatever arrives.
    let mut r = Receiver::new(&config(|c| c.delayed_ack = false));
    send!(r, t = 0, nth(0).ts(1));
    recv!(r, t = 0, ack = 1000, ecr = None);
}

#[test]
fn duplicates_are_counted_and_acknowledged_at_once() {
    let mut r = Receiver::new(&config(|_| {}));
    send!(r, t = 0, nth(0));
    send!(r, t = 1, nth(1));
    recv!(r, t = 1, ack = 2000);
    send!(r, t = 2, nth(0));
    recv!(r, t = 2, ack = 2000);
    assert_eq!(r.counters().duplicate_segments, 1);
    send!(r, t = 3, nth(3));
    recv!(r, t = 3, ack = 2000, sack = [(3000, 4000)]);
    send!(r, t = 4, nth(3));
    recv!(r, t = 4, ack = 2000, sack = [(3000, 4000)]);
    send!(r, t = 5, seg(3200, 300));
    recv!(r, t = 5, ack = 2000, sack = [(3000, 4000)]);
    assert_eq!(r.counters().duplicate_segments, 3);
    assert_eq!(r.counters().out_of_order_segments, 1);
    // Partly new is not a duplicate.
    send!(r, t = 6, seg(1500, MSS));
    recv!(r, t = 6, ack = 2500, sack = [(3000, 4000)]);
    // Zero-length: neither a duplicate nor acknowledged.
    send!(r, t = 7, seg(0, 0));
    send!(r, t = 7, seg(9000, 0));
    recv!(r, t = 7, nothing);
    let c = r.counters();
    assert_eq!(c.duplicate_segments, 3);
    assert_eq!(c.segments_received, 9);
    assert_eq!(c.bytes_received, 5 * 1000 + 300 + 1000);
    assert_eq!(c.acks_sent, 6);
}

#[test]
fn read_yields_every_byte_once_in_order() {
    let mut r = Receiver::new(&config(|_| {}));
    assert_eq!(r.read(), None);
    send!(r, t = 0, nth(0));
    assert_eq!(r.read(), Some((Seq(0), 1000)));
    assert_eq!(r.read(), None);
    send!(r, t = 1, nth(3));
    send!(r, t = 2, nth(2));
    assert_eq!(r.read(), None, "nothing in order above the hole");
    send!(r, t = 3, seg(500, 1000)); // overlaps old data, fills part of the hole
    send!(r, t = 4, seg(1500, 500));
    assert_eq!(r.read(), Some((Seq(1000), 3000)));
    send!(r, t = 5, nth(1));
    assert_eq!(r.read(), None);
    send!(r, t = 6, nth(4));
    send!(r, t = 6, nth(5));
    assert_eq!(r.read(), Some((Seq(4000), 2000)));
    assert_eq!(r.counters().bytes_delivered, 6000);
}

#[test]
fn ecn_echo_until_cwr() {
    let mut r = Receiver::new(&config(|c| c.ecn = true));
    send!(r, t = 0, nth(0).ce());
    recv!(r, t = 0, ack = 1000, ece = true);
    send!(r, t = 1, nth(1));
    recv!(r, t = 1, nothing);
    send!(r, t = 2, nth(2));
    recv!(r, t = 2, ack = 3000, ece = true);
    send!(r, t = 3, nth(3).cwr());
    recv!(r, t = 3, nothing);
    send!(r, t = 4, nth(4));
    recv!(r, t = 4, ack = 5000, ece = false);
    // CWR and a new CE in one segment: the echo starts again.
    send!(r, t = 5, nth(5).cwr().ce());
    recv!(r, t = 5, ack = 6000, ece = true);
    assert!(r.ece());

    // ECN off: CE is ignored.
    let mut r = Receiver::new(&config(|_| {}));
    send!(r, t = 0, nth(0).ce());
    recv!(r, t = 0, nothing);
}

#[test]
fn window_is_constant_and_enforced() {
    let mut r = Receiver::new(&config(|c| {
        c.rcv_buf = 4000;
        c.delayed_ack = false;
    }));
    send!(r, t = 0, nth(4));
    let a = recv!(r, t = 0, ack = 0);
    assert_eq!(a.window, 4000);
    assert_eq!(r.counters().out_of_window_segments, 1);
    // Trimmed to the right edge.
    send!(r, t = 1, seg(3500, MSS));
    recv!(r, t = 1, ack = 0, sack = [(3500, 4000)]);
    for n in 0..3 {
        send!(r, t = 2, nth(n));
        recv!(r, t = 2, ack = (n + 1) * 1000, sack = [(3500, 4000)]);
    }
    send!(r, t = 3, nth(3));
    let a = recv!(r, t = 3, ack = 4000);
    assert_eq!(a.window, 4000, "the right edge moves with rcv_nxt");
    send!(r, t = 4, nth(7));
    recv!(r, t = 4, ack = 4000, sack = [(7000, 8000)]);
    assert_eq!(r.counters().out_of_window_segments, 1);
}

#[test]
fn odd_input_does_not_panic() {
    let mut r = Receiver::new(&config(|c| {
        c.rcv_buf = u64::MAX;
        c.timestamps = true;
        c.ecn = true;
    }));
    send!(r, t = 0, seg(u64::MAX - 10, u32::MAX));
    send!(r, t = 0, seg(u64::MAX, 0).ce());
    send!(r, t = 0, seg(0, 0));
    send!(r, t = 0, seg(5, 3).ts(0));
    send!(r, t = 0, seg(0, 8));
    send!(r, t = 0, seg(2, 1));
    assert_eq!(r.rcv_nxt(), Seq(8));
    let a = r.poll_transmit(ms(0)).unwrap();
    assert_eq!(blocks(&a), vec![(u64::MAX - 10, u64::MAX)]);
    assert!(a.ece);
    assert_eq!(r.read(), Some((Seq(0), 8)));
}

/// xorshift64*: a small deterministic generator for the randomized test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

#[test]
fn random_reordering_with_duplicates_yields_the_stream() {
    const SMSS: u32 = 100;
    for seed in 1..=400u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let cfg = config(|c| {
            c.mss = SMSS;
            c.delayed_ack = rng.chance(50);
            c.ack_every = 1 + rng.below(3) as u32;
            c.sack_blocks = rng.below(7) as u8;
            c.timestamps = rng.chance(50);
            c.ecn = rng.chance(50);
        });
        // The stream, cut into mostly full-sized segments.
        let mut segs = Vec::new();
        let mut at = 0u64;
        for _ in 0..1 + rng.below(60) {
            let len = if rng.chance(80) {
                SMSS
            } else {
                1 + rng.below(SMSS as u64) as u32
            };
            segs.push(seg(at, len));
            at += len as u64;
        }
        let total = at;
        // Duplicates: copies and re-cut ranges inside the stream.
        for i in 0..segs.len() {
            if rng.chance(30) {
                segs.push(segs[i]);
            }
            if rng.chance(10) {
                let s = rng.below(total);
                let len = 1 + rng.below((total - s).min(2 * SMSS as u64)) as u32;
                segs.push(seg(s, len));
            }
        }
        for i in (1..segs.len()).rev() {
            segs.swap(i, rng.below(i as u64 + 1) as usize);
        }

        let mut r = Receiver::new(&cfg);
        let mut have = vec![false; total as usize];
        // Per byte, 1 + the index of the latest arrival carrying it: a held block's recency
        // is its latest byte's (an arrival above rcv_nxt always ends up inside one block).
        let mut touched = vec![0usize; total as usize];
        let (mut now, mut last_ack, mut read_to) = (0u64, 0u64, 0u64);
        let (mut dups, mut ooo) = (0u64, 0u64);
        for (k, s) in segs.iter().enumerate() {
            now += rng.below(50);
            let mut s = s.ts(now);
            s.ce = cfg.ecn && rng.chance(10);
            s.cwr = rng.chance(10);
            let prefix = have.iter().position(|&b| !b).unwrap_or(have.len()) as u64;
            let range = s.seq.0 as usize..s.end().0 as usize;
            if have[range.clone()].iter().all(|&b| b) {
                dups += 1;
            } else if s.seq.0 > prefix {
                ooo += 1;
            }
            have[range.clone()].iter_mut().for_each(|b| *b = true);
            touched[range].iter_mut().for_each(|t| *t = k + 1);
            r.on_segment(ms(now), &s);
            let prefix = have.iter().position(|&b| !b).unwrap_or(have.len()) as u64;
            assert_eq!(r.rcv_nxt(), Seq(prefix), "seed {seed}");

            if r.poll_timeout().is_some_and(|t| t <= ms(now)) {
                r.on_timeout(ms(now));
            }
            if let Some(a) = r.poll_transmit(ms(now)) {
                assert!(
                    a.ack.0 >= last_ack && a.ack.0 == prefix,
                    "seed {seed}: {a:?}"
                );
                last_ack = a.ack.0;
                assert!(a.sack.len() <= cfg.sack_blocks as usize, "seed {seed}");
                let held: Vec<_> = r.held_blocks().collect();
                for (i, b) in a.sack.iter().enumerate() {
                    assert!(b.start > a.ack && held.contains(b), "seed {seed}: {a:?}");
                    assert!(!a.sack.as_slice()[..i].contains(b), "repeated block: {a:?}");
                }
                // RFC 2018: the blocks are the most recently received ones, latest first.
                let mut by_recency = held.clone();
                by_recency.sort_by_key(|b| {
                    std::cmp::Reverse(
                        touched[b.start.0 as usize..b.end.0 as usize]
                            .iter()
                            .max()
                            .copied(),
                    )
                });
                by_recency.truncate(cfg.sack_blocks as usize);
                assert_eq!(a.sack.as_slice(), by_recency, "seed {seed}: SACK order");
                if s.seq > a.ack && cfg.sack_blocks > 0 {
                    let first = a.sack.as_slice()[0];
                    assert!(
                        first.start <= s.seq && s.seq < first.end,
                        "seed {seed}: {a:?}"
                    );
                }
                if !cfg.delayed_ack {
                    assert!(!r.ack_pending());
                }
            } else {
                assert!(cfg.delayed_ack, "seed {seed}: every segment is ACKed");
            }
            if rng.chance(30) {
                if let Some((first, len)) = r.read() {
                    assert_eq!(first, Seq(read_to), "seed {seed}");
                    read_to += len;
                }
            }
        }
        if let Some(t) = r.poll_timeout() {
            r.on_timeout(t);
        }
        if let Some(a) = r.poll_transmit(ms(now + 1000)) {
            last_ack = a.ack.0;
        }
        assert_eq!(last_ack, total, "seed {seed}: final cumulative ACK");
        while let Some((first, len)) = r.read() {
            assert_eq!(first, Seq(read_to), "seed {seed}");
            read_to += len;
        }
        assert_eq!(read_to, total, "seed {seed}");
        let c = r.counters();
        assert_eq!(c.bytes_delivered, total);
        assert_eq!(c.duplicate_segments, dups, "seed {seed}");
        assert_eq!(c.out_of_order_segments, ooo, "seed {seed}");
        assert_eq!(c.segments_received, segs.len() as u64);
        assert_eq!(r.held_blocks().count(), 0);
        assert_eq!(r.poll_timeout(), None);
    }
}
