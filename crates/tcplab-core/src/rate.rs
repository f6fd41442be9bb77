//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-02; Linux
//! `net/ipv4/tcp_rate.c`): every transmission is stamped with the connection's delivery
//! state, and every ACK that delivers data turns the stamp of the most recently sent segment
//! it delivered into a [`RateSample`]: the bytes delivered since that segment was sent, over
//! the longer of its send phase and its ACK phase.
//!
//! The connection keeps `delivered` (bytes cumulatively acknowledged or SACKed so far),
//! `delivered_time` (when `delivered` last grew) and `first_sent_time` (when the segment
//! behind the latest sample was sent). Each transmission records all three, and whether the
//! connection was application-limited, in a mark of its segment (a retransmission replaces
//! the mark). When nothing is outstanding at a transmission, `delivered_time` and
//! `first_sent_time` restart at the transmission, so an idle period is never part of an
//! interval. A sample reports:
//! - `delivered` = C.delivered now - P.delivered,
//! - `interval` = max(P.sent - P.first_sent_time (send phase), now - P.delivered_time (ACK
//!   phase)), None when shorter than the minimum RTT (ACK compression: such a sample would
//!   overestimate the rate, draft §3.3; Linux discards it the same way),
//! - `is_app_limited`: P was sent while the connection was application-limited, so the
//!   rate measures the application, not the path.
//!
//! The connection is application-limited from `mark_app_limited` (the sender had room in
//! its windows but nothing to send) until the data in flight then is delivered.
//!
//! For BBRv3's loss bounds (draft-ietf-ccwg-bbr §"Probing for Bandwidth In ProbeBW") a mark
//! also records the data in flight just after the transmission (`P.tx_in_flight`, the
//! recovery strategy's count, the segment included) and the bytes the connection had
//! declared lost so far (`P.lost`, the scoreboard's running total, Linux `tp->lost`); a
//! sample reports both: `tx_in_flight`, and `lost` = bytes declared lost between that
//! transmission and the ACK (losses this ACK itself reveals are counted by the next one,
//! since the recovery strategy marks them after the sample is taken), and `losses`, the
//! bytes declared lost since the previous sample.

use crate::scoreboard::SegIdx;
use crate::{Dur, Time};
use std::collections::VecDeque;

/// One delivery-rate sample, from the most recently sent segment an ACK delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateSample {
    /// The connection's delivered bytes when that segment was sent (BBR counts round trips
    /// with it: a round ends when a segment sent after its start is delivered).
    pub prior_delivered: u64,
    /// Bytes delivered between that segment's transmission and this ACK.
    pub delivered: u64,
    /// The interval `delivered` took; None when shorter than the minimum RTT (invalid).
    pub interval: Option<Dur>,
    /// The segment was sent while the connection was application-limited.
    pub is_app_limited: bool,
    /// The segment's RTT, if it was never retransmitted (SACKed segments included).
    pub rtt: Option<Dur>,
    /// Bytes in flight just after that segment was sent, itself included (draft
    /// `RS.tx_in_flight`).
    pub tx_in_flight: u64,
    /// Bytes declared lost between that segment's transmission and the previous ACK (draft
    /// `RS.lost`).
    pub lost: u64,
    /// Bytes declared lost since the previous sample (Linux `rs->losses`).
    pub losses: u64,
}

impl RateSample {
    /// Delivery rate in bytes per second, when the interval is valid (rounded down).
    pub fn bytes_per_sec(&self) -> Option<u64> {
        let ns = self.interval?.as_nanos();
        (ns > 0).then(|| (self.delivered as u128 * 1_000_000_000 / ns as u128) as u64)
    }
}

/// What a transmission recorded (the draft's per-packet P.delivered, P.delivered_time,
/// P.first_sent_time, P.is_app_limited, and P.sent_time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mark {
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    sent: Time,
    app_limited: bool,
    retransmitted: bool,
    tx_in_flight: u64,
    lost: u64,
}

/// The connection's delivery state and a mark per outstanding segment.
#[derive(Clone, Debug, Default)]
pub struct RateEstimator {
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    /// Non-zero: application-limited until `delivered` exceeds it (draft C.app_limited).
    app_limited: u64,
    /// The lost-bytes total at the previous sample.
    lost_at_sample: u64,
    /// Marks of segments `base..base + marks.len()`.
    base: SegIdx,
    marks: VecDeque<Mark>,
}

impl RateEstimator {
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes delivered so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Whether the connection counts as application-limited now.
    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// Segment `idx` left at `now` (new or retransmitted); `outstanding` is the number of
    /// bytes outstanding before it (draft: "if there are no packets in flight"),
    /// `in_flight` the bytes in flight after it, `lost_total` the bytes declared lost so far.
    pub fn on_send(
        &mut self,
        now: Time,
        idx: SegIdx,
        outstanding: u64,
        in_flight: u64,
        lost_total: u64,
    ) {
        if outstanding == 0 {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        if self.marks.is_empty() {
            self.base = idx;
        }
        let mark = Mark {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            sent: now,
            app_limited: self.app_limited != 0,
            retransmitted: false,
            tx_in_flight: in_flight,
            lost: lost_total,
        };
        match idx.checked_sub(self.base).map(|o| o as usize) {
            Some(o) if o < self.marks.len() => {
                self.marks[o] = Mark {
                    retransmitted: true,
                    ..mark
                }
            }
            Some(o) if o == self.marks.len() => self.marks.push_back(mark),
            _ => debug_assert!(false, "segment {idx} sent outside the marks"),
        }
    }

    /// The sender had room in its windows and nothing to send, with `in_flight` bytes in
    /// the network: samples are application-limited until those are delivered.
    pub fn mark_app_limited(&mut self, in_flight: u64) {
        self.app_limited = (self.delivered + in_flight).max(1);
    }

    /// One ACK: it newly delivered `bytes` (cumulatively acknowledged and not SACKed
    /// before, plus newly SACKed), the most recently sent of them being `newest`; segments
    /// below `una` are acknowledged. `min_rtt`: the connection's minimum RTT; `lost_total`:
    /// the bytes declared lost so far. Returns the sample, or None when the ACK delivered
    /// nothing with a mark.
    pub fn on_ack(
        &mut self,
        now: Time,
        bytes: u64,
        newest: Option<SegIdx>,
        una: SegIdx,
        min_rtt: Option<Dur>,
        lost_total: u64,
    ) -> Option<RateSample> {
        let mark = newest.and_then(|i| {
            let o = i.checked_sub(self.base)? as usize;
            self.marks.get(o).copied()
        });
        self.delivered += bytes;
        if bytes > 0 {
            self.delivered_time = now;
        }
        while self.base < una && self.marks.pop_front().is_some() {
            self.base += 1;
        }
        if self.marks.is_empty() {
            self.base = una;
        }
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let p = mark?;
        let losses = lost_total.saturating_sub(self.lost_at_sample);
        self.lost_at_sample = lost_total;
        self.first_sent_time = p.sent;
        let send_phase = p.sent.saturating_since(p.first_sent_time);
        let ack_phase = now.saturating_since(p.delivered_time);
        let interval = send_phase.max(ack_phase);
        Some(RateSample {
            prior_delivered: p.delivered,
            delivered: self.delivered - p.delivered,
            interval: (min_rtt.is_none_or(|m| interval >= m) && interval > Dur::ZERO)
                .then_some(interval),
            is_app_limited: p.app_limited,
            rtt: (!p.retransmitted).then(|| now.saturating_since(p.sent)),
            tx_in_flight: p.tx_in_flight,
            lost: lost_total.saturating_sub(p.lost),
            losses,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    /// A bulk sender on a path of 10 ms RTT whose bottleneck delivers one segment per ms:
    /// 10 segments at t = 0 (a window), each ACKed alone 10 ms after the bottleneck let it
    /// through, i.e. segment i at 10 + i ms; each ACK releases one new segment.
    #[test]
    fn a_steady_ack_clock_measures_the_bottleneck_rate_exactly() {
        let mut r = RateEstimator::new();
        for i in 0..10 {
            r.on_send(ms(0), i, i * MSS, 0, 0);
        }
        let mut samples = Vec::new();
        for i in 0..40u64 {
            let now = ms(10 + i);
            let s = r.on_ack(now, MSS, Some(i), i + 1, Some(Dur::from_millis(10)), 0);
            samples.push(s.unwrap());
            r.on_send(now, i + 10, 10 * MSS - MSS, 0, 0);
        }
        // The first window: sent together, so the ACK phase rules: segment i, delivered at
        // 10 + i ms, measures the i + 1 segments delivered since t = 0 over 10 + i ms.
        assert_eq!(samples[0].delivered, MSS);
        assert_eq!(samples[0].interval, Some(Dur::from_millis(10)));
        assert_eq!(samples[0].bytes_per_sec(), Some(100_000));
        assert_eq!(samples[4].bytes_per_sec(), Some(5 * MSS * 1000 / 14));
        // Second window: segment 10 + k left at 10 + k ms, after the ACK of segment k (sent
        // at 0): its send phase, 10 + k ms, is the longer. Ten segments were delivered.
        assert_eq!(samples[15].delivered, 10 * MSS);
        assert_eq!(samples[15].interval, Some(Dur::from_millis(15)));
        // From the third window on, segment 20 + k left at 20 + k ms after the ACK of
        // segment 10 + k (sent at 10 + k) with 11 + k delivered, and is delivered at
        // 30 + k ms with 21 + k delivered: 10 segments in 10 ms, the bottleneck's 1 MB/s.
        for s in &samples[20..] {
            assert_eq!(s.delivered, 10 * MSS);
            assert_eq!(s.interval, Some(Dur::from_millis(10)));
            assert_eq!(s.bytes_per_sec(), Some(1_000_000));
            assert_eq!(s.rtt, Some(Dur::from_millis(10)));
            assert!(!s.is_app_limited);
        }
        assert_eq!(samples[12].prior_delivered, 3 * MSS);
    }

    #[test]
    fn ack_compression_shorter_than_the_min_rtt_is_invalid() {
        let mut r = RateEstimator::new();
        r.on_send(ms(0), 0, 0, 0, 0);
        r.on_send(ms(1), 1, MSS, 0, 0);
        // Both delivered by one ACK 2 ms later: 2 ms < 10 ms min RTT.
        let s = r
            .on_ack(ms(2), 2 * MSS, Some(1), 2, Some(Dur::from_millis(10)), 0)
            .unwrap();
        assert_eq!(
            (s.delivered, s.interval, s.bytes_per_sec()),
            (2 * MSS, None, None)
        );
        assert_eq!(s.prior_delivered, 0);
    }

    #[test]
    fn the_send_phase_rules_when_it_is_longer() {
        // Segments 0 and 1 at t = 0; segment 0 acked at 10 ms; segment 2 sent at 10 ms and
        // segment 3 at 30 ms; one compressed ACK at 32 ms delivers 1 to 3. Segment 3's send
        // phase (30 ms since segment 0, the newest delivered when it left) is longer than
        // its ACK phase (22 ms since the delivery at 10 ms).
        let mut r = RateEstimator::new();
        r.on_send(ms(0), 0, 0, 0, 0);
        r.on_send(ms(0), 1, MSS, 0, 0);
        r.on_ack(ms(10), MSS, Some(0), 1, None, 0).unwrap();
        r.on_send(ms(10), 2, MSS, 0, 0);
        r.on_send(ms(30), 3, 2 * MSS, 0, 0);
        let s = r.on_ack(ms(32), 3 * MSS, Some(3), 4, None, 0).unwrap();
        assert_eq!(
            (s.delivered, s.interval),
            (3 * MSS, Some(Dur::from_millis(30)))
        );
        assert_eq!(s.bytes_per_sec(), Some(100_000));
    }

    #[test]
    fn app_limited_marks_last_until_the_flight_is_delivered() {
        let mut r = RateEstimator::new();
        r.on_send(ms(0), 0, 0, 0, 0);
        r.on_send(ms(0), 1, MSS, 0, 0);
        r.mark_app_limited(2 * MSS);
        assert!(r.is_app_limited());
        r.on_send(ms(1), 2, 2 * MSS, 0, 0);
        let s = r.on_ack(ms(10), MSS, Some(0), 1, None, 0).unwrap();
        assert!(!s.is_app_limited && r.is_app_limited());
        let s = r.on_ack(ms(11), MSS, Some(1), 2, None, 0).unwrap();
        assert!(
            !s.is_app_limited && r.is_app_limited(),
            "delivered 2000, not past it"
        );
        let s = r.on_ack(ms(12), MSS, Some(2), 3, None, 0).unwrap();
        assert!(s.is_app_limited, "sent while app-limited");
        assert!(!r.is_app_limited(), "3000 delivered > 2000");
    }

    #[test]
    fn a_retransmission_restamps_its_mark_and_gives_no_rtt() {
        let mut r = RateEstimator::new();
        r.on_send(ms(0), 0, 0, 0, 0);
        r.on_send(ms(0), 1, MSS, 0, 0);
        // Segment 1 SACKed at 10 ms, segment 0 retransmitted at 12 and acked at 22.
        let s = r.on_ack(ms(10), MSS, Some(1), 0, None, 0).unwrap();
        assert_eq!(s.rtt, Some(Dur::from_millis(10)));
        r.on_send(ms(12), 0, 2 * MSS, 0, 0);
        let s = r.on_ack(ms(22), MSS, Some(0), 2, None, 0).unwrap();
        assert_eq!(s.rtt, None);
        assert_eq!((s.prior_delivered, s.delivered), (MSS, MSS));
        // Nothing outstanding: the next transmission restarts the clocks.
        r.on_send(ms(100), 2, 0, 0, 0);
        let s = r.on_ack(ms(110), MSS, Some(2), 3, None, 0).unwrap();
        assert_eq!(s.interval, Some(Dur::from_millis(10)));
    }

    #[test]
    fn samples_carry_the_flight_at_send_and_the_losses_since() {
        // Segment 0 leaves with 1 segment in flight and 3000 bytes declared lost before;
        // segment 1 with 2 in flight. By the ACK of segment 1, 2000 more bytes were lost.
        let mut r = RateEstimator::new();
        r.on_send(ms(0), 0, 0, MSS, 3 * MSS);
        r.on_send(ms(0), 1, MSS, 2 * MSS, 3 * MSS);
        let s = r
            .on_ack(ms(10), 2 * MSS, Some(1), 2, None, 5 * MSS)
            .unwrap();
        assert_eq!(
            (s.tx_in_flight, s.lost, s.losses),
            (2 * MSS, 2 * MSS, 5 * MSS)
        );
        // A retransmission is stamped anew.
        r.on_send(ms(20), 2, 0, MSS, 5 * MSS);
        r.on_send(ms(21), 2, 0, 4 * MSS, 6 * MSS);
        let s = r.on_ack(ms(30), MSS, Some(2), 3, None, 6 * MSS).unwrap();
        assert_eq!((s.tx_in_flight, s.lost, s.losses), (4 * MSS, 0, MSS));
    }
}
