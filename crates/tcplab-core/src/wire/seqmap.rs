//! 32-bit wire values onto tcplab-core's 64-bit sequence space and nanosecond clock.
//!
//! tcplab-core numbers bytes from `Seq(0)` with 64 bits that never wrap; TCP carries the low
//! 32 bits offset by an initial sequence number (ISN). Going back needs a reference: a wire
//! value is read as the 64-bit sequence number nearest to a nearby known one (the sender's
//! `snd_una`, the receiver's `rcv_nxt`), which is right as long as the two are within 2^31
//! bytes: TCP's own window limit (RFC 7323 section 2.3).

use crate::{Seq, Time};

/// Maps core sequence numbers to and from 32-bit wire sequence numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SeqMap {
    /// The wire sequence number of core `Seq(0)`. The simulator's pcap files use 0 (wire =
    /// low 32 bits). After a handshake whose SYN carried ISN `i` the first data byte is
    /// `i + 1`: see [`SeqMap::after_syn`].
    pub isn: u32,
}

impl SeqMap {
    /// The map of a connection whose SYN carried `isn`: the SYN occupies `isn`, so the first
    /// data byte, core `Seq(0)`, is `isn + 1` on the wire.
    pub fn after_syn(isn: u32) -> SeqMap {
        SeqMap {
            isn: isn.wrapping_add(1),
        }
    }

    /// The wire sequence number of `seq`.
    #[inline]
    pub fn to_wire(self, seq: Seq) -> u32 {
        self.isn.wrapping_add(seq.0 as u32)
    }

    /// How far wire value `wire` lies from `reference`, in `[-2^31, 2^31)` bytes.
    #[inline]
    pub fn distance(self, wire: u32, reference: Seq) -> i64 {
        wire.wrapping_sub(self.to_wire(reference)) as i32 as i64
    }

    /// The core sequence number nearest to `reference` whose wire value is `wire`. Values
    /// that would lie before `Seq(0)` (such as the acknowledgment of the SYN itself) are
    /// `None`.
    #[inline]
    pub fn try_from_wire(self, wire: u32, reference: Seq) -> Option<Seq> {
        let d = self.distance(wire, reference);
        reference.0.checked_add_signed(d).map(Seq)
    }

    /// [`SeqMap::try_from_wire`], clamped at `Seq(0)`.
    #[inline]
    pub fn from_wire(self, wire: u32, reference: Seq) -> Seq {
        self.try_from_wire(wire, reference).unwrap_or(Seq(0))
    }
}

/// The RFC 7323 timestamp clock: core [`Time`] in ticks of `unit_ns` nanoseconds, offset by
/// `offset` (Linux randomises it per connection), modulo 2^32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TsClock {
    /// Nanoseconds per tick: 1000 (microseconds, the simulator's pcap files and Linux's
    /// `tcp_ts_usec`) or 1_000_000 (milliseconds, Linux's default).
    pub unit_ns: u64,
    /// Added to every value.
    pub offset: u32,
}

impl TsClock {
    /// Microsecond ticks, no offset: the simulator's pcap timestamps.
    pub const MICROS: TsClock = TsClock {
        unit_ns: 1000,
        offset: 0,
    };

    /// The TSval of time `t`.
    #[inline]
    pub fn to_wire(self, t: Time) -> u32 {
        ((t.as_nanos() / self.unit_ns.max(1)) as u32).wrapping_add(self.offset)
    }

    /// The time whose TSval is `wire`, taken as at most 2^31 ticks before `now` (echoed
    /// values are in the past); clamped at time zero. Precision is one tick.
    #[inline]
    pub fn from_wire(self, wire: u32, now: Time) -> Time {
        let unit = self.unit_ns.max(1);
        let back = self.to_wire(now).wrapping_sub(wire) as i32 as i64;
        let now_ticks = now.as_nanos() / unit;
        let ticks = (now_ticks as i64).saturating_sub(back).max(0) as u64;
        Time::from_nanos(ticks.saturating_mul(unit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isn_zero_is_the_low_bits() {
        let m = SeqMap { isn: 0 };
        assert_eq!(m.to_wire(Seq(0)), 0);
        assert_eq!(m.to_wire(Seq((5 << 32) + 1000)), 1000);
        assert_eq!(
            m.from_wire(1000, Seq((5 << 32) + 900)),
            Seq((5 << 32) + 1000)
        );
    }

    #[test]
    fn round_trips_across_the_wrap() {
        // ISNs near the top of the space: the wire value wraps within the first bytes.
        for isn in [0u32, 1, 0x7fff_ffff, 0x8000_0000, u32::MAX - 10, u32::MAX] {
            let m = SeqMap { isn };
            for base in [
                0u64,
                11,
                (1 << 31) - 1,
                1 << 31,
                (1 << 32) - 1,
                1 << 32,
                7 << 40,
            ] {
                for delta in [
                    -(1i64 << 31),
                    -70_000,
                    -1,
                    0,
                    1,
                    1448,
                    70_000,
                    (1 << 31) - 1,
                ] {
                    let Some(s) = base.checked_add_signed(delta) else {
                        continue;
                    };
                    let (reference, seq) = (Seq(base), Seq(s));
                    let w = m.to_wire(seq);
                    assert_eq!(m.distance(w, reference), delta, "isn {isn} base {base}");
                    assert_eq!(m.from_wire(w, reference), seq, "isn {isn} base {base}");
                }
            }
        }
    }

    #[test]
    fn before_zero_is_none_and_after_syn_skips_the_syn() {
        let m = SeqMap::after_syn(u32::MAX);
        assert_eq!(
            m.to_wire(Seq(0)),
            0,
            "the first data byte after ISN 2^32-1 is 0"
        );
        // The SYN's own number lies before Seq(0).
        assert_eq!(m.try_from_wire(u32::MAX, Seq(0)), None);
        assert_eq!(m.from_wire(u32::MAX, Seq(0)), Seq(0));
        assert_eq!(m.try_from_wire(5, Seq(0)), Some(Seq(5)));
        // A wire value 2^31 ahead is read as behind (the window limit).
        assert_eq!(m.distance(m.to_wire(Seq(1 << 31)), Seq(0)), -(1 << 31));
    }

    #[test]
    fn timestamps_round_trip_to_the_tick() {
        for clock in [
            TsClock::MICROS,
            TsClock {
                unit_ns: 1_000_000,
                offset: 0xffff_ff00,
            },
        ] {
            for now_ns in [
                0u64,
                999,
                5_000_000_000,
                (1 << 32) * 1000 + 17,
                u64::MAX / 4,
            ] {
                let now = Time::from_nanos(now_ns);
                for back_ns in [0u64, 1, 1000, 250_000_000, 1_800_000_000_000] {
                    let t = Time::from_nanos(now_ns.saturating_sub(back_ns));
                    let got = clock.from_wire(clock.to_wire(t), now);
                    let tick = t.as_nanos() / clock.unit_ns * clock.unit_ns;
                    assert_eq!(
                        got.as_nanos(),
                        tick,
                        "{clock:?} now {now_ns} back {back_ns}"
                    );
                }
            }
        }
        assert_eq!(TsClock::MICROS.to_wire(Time::from_nanos(2_500_000)), 2500);
    }
}
