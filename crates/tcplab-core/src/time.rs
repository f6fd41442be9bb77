//! Integer-nanosecond time. `Time` is an instant since the start of a run, `Dur` a span.
//! Neither ever comes from a wall clock inside the core: callers pass time in.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Div, Mul, Sub, SubAssign};

/// An instant, in nanoseconds since the start of the run.
#[derive(
    Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Time(u64);

/// A span of time in nanoseconds.
#[derive(
    Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Dur(u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        Time(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        Time(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        Time(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        Time(s * 1_000_000_000)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as a float, for reports only (never for simulation arithmetic).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// `self - earlier`, or zero when `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    pub const ZERO: Dur = Dur(0);
    pub const MAX: Dur = Dur(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        Dur(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        Dur(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        Dur(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        Dur(s * 1_000_000_000)
    }
    /// Rounds to the nearest nanosecond; negative and NaN inputs give zero.
    pub fn from_secs_f64(s: f64) -> Self {
        if s.is_nan() || s <= 0.0 {
            Dur(0)
        } else {
            Dur((s * 1e9).round().min(u64::MAX as f64) as u64)
        }
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as a float, for rates and reports.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub fn saturating_sub(self, o: Dur) -> Dur {
        Dur(self.0.saturating_sub(o.0))
    }
    pub fn saturating_mul(self, k: u64) -> Dur {
        Dur(self.0.saturating_mul(k))
    }
    /// Time to serialize `bytes` at `rate_bps` bits per second, rounded up to whole ns.
    pub fn transmission(bytes: u64, rate_bps: u64) -> Dur {
        debug_assert!(rate_bps > 0);
        // u64 arithmetic for every packet size (a u128 division is a library call); u128
        // only for sizes above ~2 GB.
        match bytes.checked_mul(8_000_000_000) {
            Some(bit_ns) => Dur(bit_ns.div_ceil(rate_bps)),
            None => {
                let bit_ns = bytes as u128 * 8_000_000_000;
                Dur(bit_ns.div_ceil(rate_bps as u128) as u64)
            }
        }
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    fn add(self, d: Dur) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        *self = *self + d;
    }
}
impl Sub<Time> for Time {
    type Output = Dur;
    /// Panics in debug builds when `o` is later than `self`.
    fn sub(self, o: Time) -> Dur {
        debug_assert!(self.0 >= o.0, "time went backwards: {self:?} - {o:?}");
        Dur(self.0.saturating_sub(o.0))
    }
}
impl Sub<Dur> for Time {
    type Output = Time;
    fn sub(self, d: Dur) -> Time {
        Time(self.0.saturating_sub(d.0))
    }
}
impl Add for Dur {
    type Output = Dur;
    fn add(self, o: Dur) -> Dur {
        Dur(self.0.saturating_add(o.0))
    }
}
impl AddAssign for Dur {
    fn add_assign(&mut self, o: Dur) {
        *self = *self + o;
    }
}
impl Sub for Dur {
    type Output = Dur;
    fn sub(self, o: Dur) -> Dur {
        debug_assert!(self.0 >= o.0, "negative duration: {self:?} - {o:?}");
        Dur(self.0.saturating_sub(o.0))
    }
}
impl SubAssign for Dur {
    fn sub_assign(&mut self, o: Dur) {
        *self = *self - o;
    }
}
impl Mul<u64> for Dur {
    type Output = Dur;
    fn mul(self, k: u64) -> Dur {
        Dur(self.0.saturating_mul(k))
    }
}
impl Div<u64> for Dur {
    type Output = Dur;
    fn div(self, k: u64) -> Dur {
        Dur(self.0 / k)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.as_secs_f64())
    }
}
impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}ms", self.0 as f64 * 1e-6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transmission_time_rounds_up() {
        // 1500 bytes at 1.6 Mb/s = 7.5 ms exactly.
        assert_eq!(Dur::transmission(1500, 1_600_000), Dur::from_micros(7500));
        // 1 byte at 3 b/s = 8/3 s, rounded up.
        assert_eq!(Dur::transmission(1, 3).as_nanos(), 2_666_666_667);
        // Beyond the u64 fast path.
        assert_eq!(
            Dur::transmission(4_000_000_000, 8_000_000_000),
            Dur::from_secs(4)
        );
    }

    #[test]
    fn arithmetic() {
        let t = Time::from_millis(5) + Dur::from_millis(7);
        assert_eq!(t, Time::from_millis(12));
        assert_eq!(t - Time::from_millis(2), Dur::from_millis(10));
        assert_eq!(Time::from_millis(1).saturating_since(t), Dur::ZERO);
        assert_eq!(Dur::from_secs_f64(0.12), Dur::from_millis(120));
        assert_eq!(Dur::from_secs_f64(-1.0), Dur::ZERO);
    }
}
