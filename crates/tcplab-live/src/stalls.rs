//! The emulator's stalls: each stretch in which it delivered packets later than the model
//! said (the loop or the whole machine did not run). A packet read from a host during a
//! stall is offered to the link when it is read, not when the host sent it, so a stall
//! compresses what arrived in it into a burst that the model did not see coming: on a
//! shallow buffer the burst overflows it. (A kernel host's answer to a late delivery is
//! stamped with the delivery's modelled time instead: `Emulator::write`.) The lateness histogram says how often deliveries
//! were late; this log says when, so that a drop can be set beside the stall before it.
//!
//! A delivery at least [`THRESHOLD_NS`] late opens a stall, or belongs to the one open when
//! its modelled time is not after that stall's last late write (the emulator had not caught
//! up in between). A stall records its first late packet's modelled time, its last late
//! write's actual time, the largest lateness and the packets delivered late. At most
//! [`MAX_STALLS`] are kept; the rest are counted.

use tcplab_core::Time;

/// Lateness of a delivery that counts as a stall: one full-size packet's serialization at
/// 12 Mb/s (and the live bound on the lateness p99).
pub const THRESHOLD_NS: u64 = 1_000_000;

/// Stalls kept at most.
pub const MAX_STALLS: usize = 100_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stall {
    /// Modelled delivery time of the first late packet.
    pub from: Time,
    /// Actual time of the last late write.
    pub until: Time,
    /// The largest lateness of its deliveries.
    pub worst_ns: u64,
    /// Packets delivered at least [`THRESHOLD_NS`] late.
    pub packets: u64,
}

#[derive(Debug, Default)]
pub struct Stalls {
    pub stalls: Vec<Stall>,
    /// Stalls not kept past [`MAX_STALLS`].
    pub cut: u64,
}

impl Stalls {
    /// Records a delivery modelled at `at` and written at `written`.
    pub fn record(&mut self, at: Time, written: Time) {
        let late = written.saturating_since(at).as_nanos();
        if late < THRESHOLD_NS {
            return;
        }
        if let Some(s) = self.stalls.last_mut() {
            if at <= s.until && self.cut == 0 {
                s.until = s.until.max(written);
                s.worst_ns = s.worst_ns.max(late);
                s.packets += 1;
                return;
            }
        }
        if self.stalls.len() >= MAX_STALLS {
            self.cut += 1;
            return;
        }
        self.stalls.push(Stall {
            from: at,
            until: written,
            worst_ns: late,
            packets: 1,
        });
    }

    /// The time in stalls: the sum of each stall's `until - from`.
    pub fn total_ns(&self) -> u64 {
        self.stalls
            .iter()
            .map(|s| s.until.saturating_since(s.from).as_nanos())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    #[test]
    fn on_time_deliveries_are_no_stall() {
        let mut s = Stalls::default();
        s.record(ms(10), Time::from_nanos(10_000_000 + THRESHOLD_NS - 1));
        assert!(s.stalls.is_empty());
    }

    #[test]
    fn a_backlog_is_one_stall_and_a_later_one_another() {
        let mut s = Stalls::default();
        // The loop stops from 10 to 27 ms: what was due in between goes out at 27-28 ms.
        s.record(ms(10), ms(27));
        s.record(ms(15), ms(27));
        s.record(ms(26), ms(28));
        s.record(ms(28), ms(28)); // on time again
        s.record(ms(40), ms(43)); // a second stall
        assert_eq!(
            s.stalls,
            vec![
                Stall {
                    from: ms(10),
                    until: ms(28),
                    worst_ns: 17_000_000,
                    packets: 3
                },
                Stall {
                    from: ms(40),
                    until: ms(43),
                    worst_ns: 3_000_000,
                    packets: 1
                }
            ]
        );
        assert_eq!(s.total_ns(), 21_000_000);
    }

    #[test]
    fn stalls_past_the_limit_are_counted() {
        let mut s = Stalls::default();
        for k in 0..(MAX_STALLS as u64 + 5) {
            s.record(ms(10 * k), ms(10 * k + 2));
        }
        assert_eq!((s.stalls.len(), s.cut), (MAX_STALLS, 5));
    }
}
