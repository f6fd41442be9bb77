//! The window machinery every loss-based controller shares (Linux: tcp_cong.c):
//! slow start and additive increase, per ACK (BSD), per acknowledged byte (RFC 3465) or per
//! acknowledged segment (Linux).

use super::AckSample;
use serde::{Deserialize, Serialize};

/// How the window grows with ACKs.
///
/// With delayed ACKs (one ACK per two segments) per-ACK growth is half as fast as byte
/// counting in both slow start and congestion avoidance: the Veno paper's BSD stacks grew per
/// ACK, the ETH framework counted acknowledged data, Linux counts acknowledged segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "mode")]
pub enum Growth {
    /// BSD: +1 MSS per ACK in slow start, +MSS*MSS/cwnd per ACK in congestion avoidance.
    PerAck,
    /// RFC 3465 appropriate byte counting: slow start adds the bytes acked (at most
    /// `limit` MSS per ACK); congestion avoidance adds one MSS per cwnd of acked bytes.
    ByteCounting { limit: u32 },
    /// Linux (tcp_cong.c tcp_slow_start, tcp_cong_avoid_ai): counts acknowledged segments
    /// (`ceil(acked bytes / MSS)`, a partial segment is one packet). Slow start adds them all
    /// up to ssthresh, the rest goes to congestion avoidance; congestion avoidance adds them
    /// to a counter and cwnd grows by one segment per cwnd segments counted (more than one
    /// at a time if the counter holds several windows).
    Linux,
}

impl Growth {
    /// RFC 3465's L: the segments one ACK may add in slow start under byte counting, when
    /// a scenario gives `byte_counting` without a limit (and in the default growth).
    pub const DEFAULT_BYTE_COUNTING_LIMIT: u32 = 2;
}

impl Default for Growth {
    fn default() -> Self {
        Growth::ByteCounting {
            limit: Self::DEFAULT_BYTE_COUNTING_LIMIT,
        }
    }
}

/// cwnd and ssthresh in bytes, with the growth rules shared by the controllers.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u32,
    pub growth: Growth,
    /// Bytes (Linux: segments, snd_cwnd_cnt) acknowledged since the last whole-MSS increase
    /// in congestion avoidance.
    ca_acked: u64,
    /// Sub-byte remainder of fractional changes made with `add_segments`.
    frac: f64,
}

impl Window {
    pub fn new(mss: u32, cwnd: u64, ssthresh: u64, growth: Growth) -> Self {
        Window {
            cwnd: cwnd.max(mss as u64),
            ssthresh,
            mss,
            growth,
            ca_acked: 0,
            frac: 0.0,
        }
    }

    pub fn mss(&self) -> u64 {
        self.mss as u64
    }

    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Segments an ACK of `acked_bytes` acknowledged, as Linux counts them (packets).
    fn segments(&self, acked_bytes: u64) -> u64 {
        acked_bytes.div_ceil(self.mss())
    }

    /// One slow-start step. Returns the acked bytes not used because cwnd reached ssthresh
    /// (byte counting and Linux only), which the caller may feed to congestion avoidance.
    pub fn slow_start(&mut self, s: &AckSample) -> u64 {
        match self.growth {
            Growth::PerAck => {
                self.cwnd += self.mss();
                0
            }
            Growth::ByteCounting { limit } => {
                let inc = s.acked_bytes.min(limit as u64 * self.mss());
                let used = inc.min(self.ssthresh.saturating_sub(self.cwnd));
                self.cwnd += used;
                inc - used
            }
            Growth::Linux => {
                // tcp_slow_start: cwnd = min(cwnd + acked, ssthresh), in whole segments.
                let segs = self.segments(s.acked_bytes);
                let room = self.ssthresh.saturating_sub(self.cwnd) / self.mss();
                let used = segs.min(room);
                self.cwnd += used * self.mss();
                (segs - used) * self.mss()
            }
        }
    }

    /// Additive increase of one MSS per window of acknowledged data (per ACK: MSS*MSS/cwnd).
    /// A rule "+1 MSS every two RTTs" calls this on every other ACK.
    pub fn additive_increase(&mut self, acked_bytes: u64) {
        match self.growth {
            Growth::PerAck => {
                let inc = (self.mss() * self.mss() / self.cwnd.max(1)).max(1);
                self.cwnd += inc;
            }
            Growth::ByteCounting { .. } => {
                self.ca_acked += acked_bytes;
                if self.ca_acked >= self.cwnd {
                    self.ca_acked -= self.cwnd;
                    self.cwnd += self.mss();
                }
            }
            Growth::Linux => self.linux_ai(self.segments(acked_bytes)),
        }
    }

    /// tcp_cong_avoid_ai with w = cwnd in segments.
    fn linux_ai(&mut self, acked: u64) {
        self.linux_ai_with((self.cwnd / self.mss()).max(1), acked);
    }

    /// tcp_cong_avoid_ai(tp, w, acked): credit accumulated at a smaller w first gives one
    /// segment, then every w segments counted give one more (CUBIC passes its `cnt` as w).
    pub fn linux_ai_with(&mut self, w: u64, acked: u64) {
        let w = w.max(1);
        if self.ca_acked >= w {
            self.ca_acked = 0;
            self.cwnd += self.mss();
        }
        self.ca_acked += acked;
        if self.ca_acked >= w {
            let delta = self.ca_acked / w;
            self.ca_acked -= delta * w;
            self.cwnd += delta * self.mss();
        }
    }

    /// Standard growth on an ACK outside recovery: slow start below ssthresh, then additive
    /// increase with whatever the slow-start step left over.
    pub fn grow(&mut self, s: &AckSample) {
        if self.in_slow_start() {
            let left = self.slow_start(s);
            if left > 0 && !self.in_slow_start() {
                self.additive_increase(left);
            }
        } else {
            self.additive_increase(s.acked_bytes);
        }
    }

    /// Sets ssthresh to `target` bytes, never below two segments. Linux growth keeps it in
    /// whole segments, rounded down: the kernel's `snd_ssthresh` counts packets
    /// (`tcp_reno_ssthresh`: `max(snd_cwnd >> 1, 2)`), so 7 segments halve to 3, not 3.5.
    pub fn set_ssthresh(&mut self, target: u64) {
        let target = match self.growth {
            Growth::Linux if target != u64::MAX => target / self.mss() * self.mss(),
            _ => target,
        };
        self.ssthresh = target.max(2 * self.mss());
    }

    /// Sets cwnd (never below one segment) and restarts the additive-increase count.
    pub fn set_cwnd(&mut self, cwnd: u64) {
        self.cwnd = cwnd.max(self.mss());
        self.ca_acked = 0;
        self.frac = 0.0;
    }

    /// Undoes a reduction (Linux `tcp_undo_cwnd_reduction` with `tcp_reno_undo_cwnd`).
    pub fn undo(&mut self, prior_cwnd: u64, prior_ssthresh: u64) {
        if prior_cwnd > self.cwnd {
            self.set_cwnd(prior_cwnd);
        }
        self.ssthresh = self.ssthresh.max(prior_ssthresh);
    }

    /// cwnd in segments, fractional.
    pub fn cwnd_segments(&self) -> f64 {
        (self.cwnd as f64 + self.frac) / self.mss as f64
    }

    /// How many "ACKs' worth" of growth one ACK gives: 1 per ACK (BSD), or the number of
    /// segments it acknowledged (byte counting, RFC 3465, without the slow-start limit;
    /// Linux, in whole packets as tcp_cong.c's `acked`).
    /// Controllers whose increase is written "per ACK" in segments (w += a/w) multiply by it.
    pub fn ack_weight(&self, acked_bytes: u64) -> f64 {
        match self.growth {
            Growth::PerAck => 1.0,
            Growth::ByteCounting { .. } => acked_bytes as f64 / self.mss as f64,
            Growth::Linux => self.segments(acked_bytes) as f64,
        }
    }

    /// Adds `segs` segments to cwnd (fractional, possibly negative), carrying the sub-byte
    /// remainder so that many small steps add up exactly. cwnd never drops below one MSS.
    pub fn add_segments(&mut self, segs: f64) {
        if !segs.is_finite() {
            return;
        }
        let target = self.cwnd as f64 + self.frac + segs * self.mss as f64;
        let target = target.max(self.mss as f64);
        let whole = target.floor();
        self.cwnd = whole as u64;
        self.frac = target - whole;
    }

    /// Sets cwnd to `segs` segments (fractional; at least one MSS).
    pub fn set_cwnd_segments(&mut self, segs: f64) {
        let bytes = if segs.is_finite() { segs } else { 1.0 } * self.mss as f64;
        self.set_cwnd(bytes.max(0.0).floor() as u64);
        if self.cwnd as f64 <= bytes {
            self.frac = bytes - self.cwnd as f64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::AckBuilder;
    use crate::Time;

    fn ack(bytes: u64) -> AckSample {
        AckBuilder::at(Time::ZERO).acked(bytes).build()
    }

    #[test]
    fn linux_growth_keeps_ssthresh_in_whole_segments() {
        let mut w = Window::new(1000, 7000, u64::MAX, Growth::Linux);
        w.set_ssthresh(w.cwnd / 2);
        assert_eq!(
            w.ssthresh, 3000,
            "7 segments halve to 3 (tcp_reno_ssthresh)"
        );
        let mut b = Window::new(1000, 7000, u64::MAX, Growth::ByteCounting { limit: 2 });
        b.set_ssthresh(b.cwnd / 2);
        assert_eq!(b.ssthresh, 3500, "byte counting keeps bytes");
        w.set_ssthresh(1500);
        assert_eq!(w.ssthresh, 2000, "never below two segments");
    }

    #[test]
    fn per_ack_slow_start_adds_one_mss_per_ack_whatever_was_acked() {
        let mut w = Window::new(1000, 2000, u64::MAX, Growth::PerAck);
        w.grow(&ack(2000));
        assert_eq!(w.cwnd, 3000);
    }

    #[test]
    fn byte_counting_slow_start_adds_acked_bytes_up_to_limit() {
        let mut w = Window::new(1000, 2000, u64::MAX, Growth::ByteCounting { limit: 2 });
        w.grow(&ack(2000));
        assert_eq!(w.cwnd, 4000);
        w.grow(&ack(5000));
        assert_eq!(w.cwnd, 6000, "at most L=2 MSS per ACK");
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_leftover_goes_to_avoidance() {
        let mut w = Window::new(1000, 4000, 5000, Growth::ByteCounting { limit: 2 });
        w.grow(&ack(2000));
        assert_eq!(w.cwnd, 5000);
        assert!(!w.in_slow_start());
    }

    #[test]
    fn per_ack_avoidance_adds_mss_squared_over_cwnd() {
        let mut w = Window::new(1000, 10_000, 5000, Growth::PerAck);
        w.grow(&ack(2000));
        assert_eq!(w.cwnd, 10_100);
    }

    #[test]
    fn byte_counting_avoidance_adds_one_mss_per_window_acked() {
        let mut w = Window::new(1000, 10_000, 5000, Growth::ByteCounting { limit: 2 });
        for _ in 0..4 {
            w.grow(&ack(2000));
        }
        assert_eq!(w.cwnd, 10_000);
        w.grow(&ack(2000));
        assert_eq!(w.cwnd, 11_000);
    }

    #[test]
    fn fractional_segments_add_up_exactly() {
        let mut w = Window::new(1000, 10_000, 5000, Growth::PerAck);
        for _ in 0..1000 {
            w.add_segments(0.0001);
        }
        assert_eq!(w.cwnd, 10_100);
        w.add_segments(-0.05);
        assert_eq!(w.cwnd, 10_050);
        w.add_segments(-100.0);
        assert_eq!(w.cwnd, 1000, "never below one MSS");
        w.set_cwnd_segments(2.5);
        assert_eq!((w.cwnd, w.cwnd_segments()), (2500, 2.5));
        assert_eq!(w.ack_weight(3000), 1.0);
        w.growth = Growth::ByteCounting { limit: 2 };
        assert_eq!(w.ack_weight(3000), 3.0);
    }

    #[test]
    fn floors() {
        let mut w = Window::new(1000, 10_000, 5000, Growth::PerAck);
        w.set_ssthresh(100);
        assert_eq!(w.ssthresh, 2000);
        w.set_cwnd(0);
        assert_eq!(w.cwnd, 1000);
    }

    #[test]
    fn linux_slow_start_adds_every_acked_segment_up_to_ssthresh_rest_to_avoidance() {
        let mut w = Window::new(1000, 2000, u64::MAX, Growth::Linux);
        w.grow(&ack(5000));
        assert_eq!(w.cwnd, 7000, "no per-ACK limit");
        w.grow(&ack(1500));
        assert_eq!(w.cwnd, 9000, "a partial segment counts as one");
        // ssthresh 10 segments: 1 segment to reach it, 3 left for avoidance (w = 10).
        let mut w = Window::new(1000, 9000, 10_000, Growth::Linux);
        w.grow(&ack(4000));
        assert_eq!((w.cwnd, w.ca_acked), (10_000, 3));
        assert_eq!(w.slow_start(&ack(2000)), 2000, "nothing used at ssthresh");
    }

    #[test]
    fn linux_avoidance_one_segment_per_window_and_several_per_ack() {
        let mut w = Window::new(1000, 4000, 4000, Growth::Linux);
        for _ in 0..3 {
            w.grow(&ack(1000));
        }
        assert_eq!(w.cwnd, 4000);
        w.grow(&ack(1000));
        assert_eq!((w.cwnd, w.ca_acked), (5000, 0));
        // A stretch ACK of 11 segments at w = 5: +2 segments, 1 left in the counter.
        w.grow(&ack(11_000));
        assert_eq!((w.cwnd, w.ca_acked), (7000, 1));
        // Credit accumulated at a larger w is applied gently: counter 9 >= w = 4 after a
        // reduction gives +1 first and restarts the count (tcp_cong_avoid_ai).
        w.ca_acked = 9;
        w.cwnd = 4000;
        w.additive_increase(1000);
        assert_eq!((w.cwnd, w.ca_acked), (5000, 1));
        assert_eq!(w.ack_weight(2500), 3.0);
    }
}
