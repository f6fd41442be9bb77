//! Small estimators the delay- and rate-based controllers share: a resettable minimum, a
//! windowed maximum, an exponentially weighted moving average, an "every other one" toggle
//! and a once-per-RTT round counter driven by the cumulative ACK.

use crate::{Dur, Seq};

/// The smallest value seen since the last reset: BaseRTT (Vegas, Veno), RTT_min (Westwood,
/// Adaptive Reno, CUBIC), the minimum RTT of one round (Vegas). The window of the filter is
/// whatever lies between two calls to `reset`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinFilter {
    min: Option<Dur>,
    samples: u32,
}

impl MinFilter {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn update(&mut self, x: Dur) {
        self.min = Some(self.min.map_or(x, |m| m.min(x)));
        self.samples = self.samples.saturating_add(1);
    }
    /// Offers `x` if present.
    pub fn update_opt(&mut self, x: Option<Dur>) {
        if let Some(x) = x {
            self.update(x);
        }
    }
    pub fn get(&self) -> Option<Dur> {
        self.min
    }
    /// Samples offered since the last reset.
    pub fn samples(&self) -> u32 {
        self.samples
    }
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

/// The maximum of the samples of the last `window` time units (BBR's bandwidth filter over
/// 10 round trips), with Kathleen Nichols' algorithm as Linux `lib/minmax.c` writes it:
/// the best, second-best and third-best samples of successive sub-windows, so that the
/// maximum ages out in O(1) per sample. Times are whatever the caller counts (BBR: rounds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowedMax {
    /// (time, value), best first.
    s: [(u64, u64); 3],
}

impl WindowedMax {
    pub fn new() -> Self {
        Self::default()
    }

    /// The maximum over the window (0 before any sample).
    pub fn get(&self) -> u64 {
        self.s[0].1
    }

    /// Forgets everything but `(t, v)`.
    pub fn reset(&mut self, t: u64, v: u64) -> u64 {
        self.s = [(t, v); 3];
        v
    }

    /// Offers sample `v` at time `t` (non-decreasing); returns the maximum.
    pub fn update(&mut self, window: u64, t: u64, v: u64) -> u64 {
        let val = (t, v);
        if v >= self.s[0].1 || t.saturating_sub(self.s[2].0) > window {
            return self.reset(t, v); // a new maximum, or nothing left in the window
        }
        if v >= self.s[1].1 {
            self.s[2] = val;
            self.s[1] = val;
        } else if v >= self.s[2].1 {
            self.s[2] = val;
        }
        let dt = t.saturating_sub(self.s[0].0);
        if dt > window {
            // The best left the window: promote the others (twice if the second did too).
            self.s = [self.s[1], self.s[2], val];
            if t.saturating_sub(self.s[0].0) > window {
                self.s = [self.s[1], self.s[2], val];
            }
        } else if self.s[1].0 == self.s[0].0 && dt > window / 4 {
            // A quarter of the window without a second choice: take one from now.
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > window / 2 {
            // Half the window without a third choice.
            self.s[2] = val;
        }
        self.s[0].1
    }
}

/// Exponentially weighted moving average: `avg <- (1 - gain) avg + gain x`; the first sample
/// initializes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ewma {
    gain: f64,
    value: Option<f64>,
}

impl Ewma {
    /// `gain` is the weight of a new sample, in (0, 1].
    pub fn new(gain: f64) -> Self {
        Ewma { gain, value: None }
    }
    pub fn update(&mut self, x: f64) -> f64 {
        let v = match self.value {
            None => x,
            Some(v) => (1.0 - self.gain) * v + self.gain * x,
        };
        self.value = Some(v);
        v
    }
    pub fn get(&self) -> Option<f64> {
        self.value
    }
    /// What `update(x)` would give, without changing the average.
    pub fn peek(&self, x: f64) -> f64 {
        match self.value {
            None => x,
            Some(v) => (1.0 - self.gain) * v + self.gain * x,
        }
    }
}

/// Says yes on every other call, starting with the first: "increase on every other ACK"
/// (Veno), "grow the window every other RTT" (Vegas slow start).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EveryOther {
    skip_next: bool,
}

impl EveryOther {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn tick(&mut self) -> bool {
        let yes = !self.skip_next;
        self.skip_next = !self.skip_next;
        yes
    }
    /// The next call says yes.
    pub fn reset(&mut self) {
        self.skip_next = false;
    }
}

/// Rounds of one RTT delimited by sequence numbers (Vegas, Linux's `beg_snd_nxt`): a round
/// starts by recording snd.nxt and ends when the cumulative ACK reaches that point, i.e. when
/// everything sent before the round began is acknowledged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoundCounter {
    mark: Option<Seq>,
}

impl RoundCounter {
    pub fn new() -> Self {
        Self::default()
    }
    /// Feeds one ACK. Returns true when it ends the current round, in which case the next
    /// round starts at once. The first ACK after `restart` only starts a round.
    pub fn on_ack(&mut self, snd_una: Seq, snd_nxt: Seq) -> bool {
        match self.mark {
            None => {
                self.mark = Some(snd_nxt);
                false
            }
            Some(m) if snd_una >= m => {
                self.mark = Some(snd_nxt);
                true
            }
            Some(_) => false,
        }
    }
    /// Forget the current round; the next ACK starts a new one.
    pub fn restart(&mut self) {
        self.mark = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_filter_tracks_and_resets() {
        let mut f = MinFilter::new();
        assert_eq!(f.get(), None);
        f.update(Dur::from_millis(30));
        f.update_opt(Some(Dur::from_millis(20)));
        f.update_opt(None);
        f.update(Dur::from_millis(25));
        assert_eq!((f.get(), f.samples()), (Some(Dur::from_millis(20)), 3));
        f.reset();
        assert_eq!((f.get(), f.samples()), (None, 0));
    }

    #[test]
    fn windowed_max_forgets_a_maximum_after_the_window() {
        let mut f = WindowedMax::new();
        assert_eq!(f.update(10, 0, 100), 100);
        // Lower samples while the maximum is in the window (rounds 1..=10).
        for t in 1..=10 {
            assert_eq!(f.update(10, t, 50 + t), 100, "round {t}");
        }
        // Round 11: 100 (round 0) is 11 rounds old; the best of the later sub-windows rules.
        let m = f.update(10, 11, 40);
        assert!((53..100).contains(&m), "{m}");
        // A run of samples at 40: after another full window only 40 is left.
        for t in 12..=30 {
            f.update(10, t, 40);
        }
        assert_eq!(f.get(), 40);
        assert_eq!(
            f.update(10, 31, 70),
            70,
            "a new maximum replaces everything"
        );
        assert_eq!(f.reset(32, 1), 1);
        assert_eq!(f.get(), 1);
    }

    #[test]
    fn ewma_first_sample_initializes() {
        let mut e = Ewma::new(0.125);
        assert_eq!(e.update(8.0), 8.0);
        assert_eq!(e.peek(16.0), 9.0);
        assert_eq!(e.update(16.0), 9.0);
        assert_eq!(e.get(), Some(9.0));
    }

    #[test]
    fn every_other_alternates() {
        let mut t = EveryOther::new();
        let v: Vec<bool> = (0..5).map(|_| t.tick()).collect();
        assert_eq!(v, [true, false, true, false, true]);
        t.reset();
        assert!(t.tick());
    }

    #[test]
    fn rounds_end_when_the_mark_is_acknowledged() {
        let mut r = RoundCounter::new();
        assert!(!r.on_ack(Seq(0), Seq(10)));
        assert!(!r.on_ack(Seq(5), Seq(15)));
        assert!(r.on_ack(Seq(10), Seq(20)));
        assert!(!r.on_ack(Seq(19), Seq(25)));
        assert!(r.on_ack(Seq(21), Seq(30)));
        r.restart();
        assert!(!r.on_ack(Seq(100), Seq(110)));
    }
}
