//! Pacing: transmissions spaced at a rate instead of sent as fast as the windows open
//! (Linux's earliest-departure-time model, `tcp_update_skb_after_send`). After a segment of
//! `len` payload bytes leaves at `now` with pacing rate `r` bytes/s, the next may leave at
//! `max(release, now) + len / r` (rounded up to the nanosecond; Linux rounds down), less
//! what the segment was late: a departure `late` after the release time shortens its own gap
//! by `min(late, len / r / 2)` (Linux's allowance for "OS jitter", the credit
//! `tcp_wstamp_ns - prior_wstamp`), so lateness earns at most half a gap and two
//! transmissions are never closer than half of `len / r`.
//!
//! Bursts (Linux's TSO/GSO autosizing, tcp_tso_autosize): the stack builds socket buffers of
//! several segments and paces between them, each leaving the host at once. A departure at or
//! after `release` opens a burst of `quantum` segments (`CongestionControl::send_quantum`,
//! 1 by default): the next `quantum - 1` may leave before `release` (which still advances by
//! each one's `len / r`), then the sender waits for it. With a quantum of 1 every segment
//! waits, as before bursts were modelled.
//!
//! The first [`UNPACED_SEGMENTS`] data segments of a connection are not paced (Linux's
//! `tcp_update_skb_after_send` advances the departure time only once `data_segs_out >= 10`,
//! "Original sch_fq does not pace first 10 MSS"): the initial window leaves at once, and the
//! tenth segment is the first whose departure delays the next.
//!
//! The rate is the controller's (`CongestionControl::pacing_rate`); a controller that sets
//! none is not paced and its sender behaves exactly as without this module. A paced sender's
//! `poll_transmit(now)` returns None before the release time while it has something to send,
//! and then `poll_timeout()` includes the release time, so the caller wakes it up; the
//! wake-up's `on_timeout` does nothing else.

use crate::{Dur, Time};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Pacer {
    /// Earliest departure time of the next segment.
    release: Time,
    /// The last poll found something to send and was held back until `release`.
    waiting: bool,
    /// Segments the current burst may still send before `release`.
    credit: u64,
    /// Data segments sent (Linux `tp->data_segs_out`), up to [`UNPACED_SEGMENTS`].
    sent: u64,
}

/// Data segments a connection sends before pacing starts (`tcp_update_skb_after_send`).
pub(super) const UNPACED_SEGMENTS: u64 = 10;

impl Pacer {
    /// Whether a transmission at `now` must wait (only ever with a rate); remembers that
    /// the sender waits when `ready` (it has something to send).
    pub fn holds(&mut self, now: Time, rate: Option<u64>, ready: bool) -> bool {
        let hold = ready && rate.is_some() && now < self.release && self.credit == 0;
        self.waiting = hold;
        hold
    }

    /// A segment of `len` bytes left at `now`, bursts being of `quantum` segments.
    pub fn on_send(&mut self, now: Time, len: u64, rate: Option<u64>, quantum: u64) {
        self.sent = (self.sent + 1).min(UNPACED_SEGMENTS);
        if self.sent < UNPACED_SEGMENTS {
            // Linux still moves the departure time up to the clock at every transmission
            // (`tcp_wstamp_ns = max(tcp_wstamp_ns, tcp_clock_cache)`): no lateness is earned.
            self.release = self.release.max(now);
            return;
        }
        if let Some(r) = rate {
            let gap = gap(len, r);
            if now >= self.release {
                let late = now.saturating_since(self.release);
                self.credit = quantum.max(1) - 1;
                self.release = now + (gap - late.min(gap / 2));
            } else {
                self.credit = self.credit.saturating_sub(1);
                self.release += gap;
            }
        }
    }

    /// Earliest departure time of the next segment (Linux `tp->tcp_wstamp_ns`).
    pub fn release(&self) -> Time {
        self.release
    }

    /// When the sender held back by pacing may send, while it is.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.waiting.then_some(self.release)
    }
}

/// Time `len` bytes take at `rate` bytes/s, rounded up (a rate of 0 counts as 1 byte/s).
pub(super) fn gap(len: u64, rate: u64) -> Dur {
    let ns = (len as u128 * 1_000_000_000).div_ceil(rate.max(1) as u128);
    Dur::from_nanos(ns.min(u64::MAX as u128) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pacer past the connection's unpaced first segments.
    fn pacing() -> Pacer {
        Pacer {
            sent: UNPACED_SEGMENTS,
            ..Pacer::default()
        }
    }

    #[test]
    fn the_first_ten_segments_leave_unpaced_and_the_tenth_delays_the_next() {
        let mut p = Pacer::default();
        let rate = Some(1_000_000);
        for i in 0..UNPACED_SEGMENTS {
            assert!(!p.holds(Time::ZERO, rate, true), "segment {i} is not held");
            p.on_send(Time::ZERO, 1000, rate, 1);
        }
        assert!(p.holds(Time::ZERO, rate, true), "the tenth set the release");
        assert_eq!(p.poll_timeout(), Some(Time::from_millis(1)));
        // A connection that starts late earns no lateness from its unpaced segments.
        let mut late = Pacer::default();
        let start = Time::from_secs(5);
        for _ in 0..UNPACED_SEGMENTS {
            late.on_send(start, 1000, rate, 1);
        }
        assert!(late.holds(start + Dur::from_micros(999), rate, true));
        assert_eq!(late.poll_timeout(), Some(start + Dur::from_millis(1)));
    }

    #[test]
    fn departures_are_spaced_by_size_over_rate_and_lateness_earns_half_a_gap_at_most() {
        let mut p = pacing();
        let rate = Some(1_000_000); // 1 MB/s: 1000 bytes per ms
        assert!(!p.holds(Time::ZERO, rate, true));
        p.on_send(Time::ZERO, 1000, rate, 1);
        assert!(p.holds(Time::from_micros(999), rate, true));
        assert_eq!(p.poll_timeout(), Some(Time::from_millis(1)));
        assert!(
            !p.holds(Time::from_micros(999), rate, false),
            "nothing to send"
        );
        assert_eq!(p.poll_timeout(), None);
        assert!(!p.holds(Time::from_millis(1), rate, true));
        // Sent 0.2 ms late: its gap is 0.8 ms (Linux's OS-jitter credit).
        p.on_send(Time::from_micros(1200), 1000, rate, 1);
        assert!(p.holds(Time::from_micros(1999), rate, true));
        assert!(!p.holds(Time::from_micros(2000), rate, true));
        // Sent 3 ms late, at 5 ms: half a gap at most, the next release is 5.5 ms, not 2 ms.
        p.on_send(Time::from_millis(5), 1000, rate, 1);
        assert!(p.holds(Time::from_micros(5499), rate, true));
        assert!(!p.holds(Time::from_micros(5500), rate, true));
        assert!(
            !p.holds(Time::from_micros(5999), None, true),
            "no rate, no pacing"
        );
        assert_eq!(gap(1, 3), Dur::from_nanos(333_333_334));
    }

    #[test]
    fn a_burst_of_the_quantum_leaves_at_once_then_waits_for_all_of_it() {
        let mut p = pacing();
        let rate = Some(1_000_000);
        let t = |us: u64| Time::from_micros(us);
        // Three segments at 0 (a live sender's clock moves a little between them).
        for (i, at) in [0, 1, 2].into_iter().enumerate() {
            assert!(!p.holds(t(at), rate, true), "segment {i} of the burst");
            p.on_send(t(at), 1000, rate, 3);
        }
        assert!(p.holds(t(3), rate, true), "the quantum is spent");
        assert!(p.holds(t(2999), rate, true));
        assert_eq!(p.poll_timeout(), Some(t(3000)));
        // The next burst opens at 3 ms; one segment sent late (at 4 ms) is a burst too.
        assert!(!p.holds(t(3000), rate, true));
        p.on_send(t(3000), 1000, rate, 3);
        p.on_send(t(3000), 1000, rate, 3);
        assert!(!p.holds(t(3000), rate, true));
        p.on_send(t(3000), 1000, rate, 3);
        assert!(p.holds(t(3001), rate, true));
    }
}
