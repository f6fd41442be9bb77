//! TCP Vegas (Brakmo & Peterson, "TCP Vegas: end to end congestion avoidance on a global
//! Internet", IEEE JSAC 13(8), 1995), and Vegas-CA, the variant of the ETH study (Bolliger,
//! Hengartner & Gross, "The effectiveness of end-to-end congestion control mechanisms", ETH TR
//! 313, 1999, §6.1: "only its modified behavior during congestion avoidance").
//!
//! Once per RTT — when the cumulative ACK reaches the snd.nxt recorded at the start of the
//! round — Vegas compares the window with the data its measured rate needs:
//! `Diff = (Expected - Actual) BaseRTT = cwnd (RTT - BaseRTT) / RTT` segments, with BaseRTT
//! the smallest RTT sample of the connection and RTT the smallest sample of the round just
//! ended (min-filtering against delayed ACKs, as Linux does).
//! - Congestion avoidance: `Diff < alpha` → +1 segment; `Diff > beta` → −1 segment (never
//!   below 2); otherwise hold. Nothing changes between round ends.
//! - `mode = "full"`: Vegas slow start: exponential growth only in every other round (the
//!   window stays fixed in between so that the comparison is valid); slow start ends when
//!   `Diff > gamma`, with cwnd = min(cwnd, target + 1) for target = cwnd BaseRTT / RTT (the
//!   window the measured rate needs, as Linux sets it).
//! - `mode = "ca"` (Vegas-CA): Reno slow start (exit at ssthresh or loss), then Vegas
//!   congestion avoidance.
//! - Losses: Reno's response in both modes (ssthresh = cwnd/2; cwnd = 1 at timeouts); the
//!   round restarts after a loss, a recovery and a timeout.
//! - A round without any RTT sample leaves the window unchanged.

use super::classic::window_in_field;
use super::filter::{MinFilter, RoundCounter};
use super::reno::reno_reduction;
use super::{AckSample, CcContext, CongestionEvent, Verdict, Window, WindowRule};
use crate::{ConfigError, ParamReader, Params, Time};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Vegas slow start and congestion avoidance.
    Full,
    /// Vegas congestion avoidance only (the ETH study's Vegas-CA).
    Ca,
}

#[derive(Clone, Debug)]
pub struct Vegas {
    w: Window,
    alpha: f64,
    beta: f64,
    gamma: f64,
    mode: Mode,
    base_rtt: MinFilter,
    round_rtt: MinFilter,
    round: RoundCounter,
    /// Full mode: slow start grows in this round.
    grow_this_round: bool,
    last_diff: Option<f64>,
}

impl Vegas {
    pub fn new(ctx: &CcContext, mode: Mode, alpha: f64, beta: f64, gamma: f64) -> Self {
        Vegas {
            w: Window::new(ctx.mss, ctx.initial_cwnd, ctx.initial_ssthresh, ctx.growth),
            alpha,
            beta,
            gamma,
            mode,
            base_rtt: MinFilter::new(),
            round_rtt: MinFilter::new(),
            round: RoundCounter::new(),
            grow_this_round: true,
            last_diff: None,
        }
    }

    /// Parameters: `alpha`, `beta`, `gamma` in segments (defaults 1, 3, 1 as in Brakmo &
    /// Peterson), `mode` ("full" or "ca", default "full").
    pub fn from_params(ctx: &CcContext, params: &Params) -> Result<Self, ConfigError> {
        let mut r = ParamReader::new("vegas", params);
        let alpha = r.num("alpha", 1.0, 0.0, 1e6)?;
        let beta = r.num("beta", 3.0, 0.0, 1e6)?;
        let gamma = r.num("gamma", 1.0, 0.0, 1e6)?;
        let mode = match r.choice("mode", "full", &["full", "ca"])? {
            "ca" => Mode::Ca,
            _ => Mode::Full,
        };
        r.finish()?;
        if alpha > beta {
            return Err(ConfigError::new(format!(
                "vegas: alpha = {alpha} must not exceed beta = {beta}"
            )));
        }
        Ok(Self::new(ctx, mode, alpha, beta, gamma))
    }

    /// Diff of the last completed round, in segments.
    pub fn last_diff(&self) -> Option<f64> {
        self.last_diff
    }

    fn end_of_round(&mut self) {
        let rtt = self.round_rtt.get();
        self.round_rtt.reset();
        let (Some(rtt), Some(base)) = (rtt, self.base_rtt.get()) else {
            self.grow_this_round = !self.grow_this_round;
            return;
        };
        let (rtt, base) = (rtt.as_secs_f64(), base.as_secs_f64());
        let cwnd = self.w.cwnd_segments();
        let diff = if rtt > 0.0 {
            (cwnd * (rtt - base) / rtt).max(0.0)
        } else {
            0.0
        };
        self.last_diff = Some(diff);
        let mss = self.w.mss();
        if self.w.in_slow_start() {
            if self.mode == Mode::Full {
                if diff > self.gamma {
                    let target = if rtt > 0.0 { cwnd * base / rtt } else { cwnd };
                    let cwnd = self.w.cwnd.min(((target + 1.0) * mss as f64) as u64);
                    self.w.set_cwnd(cwnd.max(2 * mss));
                    self.w.set_ssthresh(self.w.cwnd);
                } else {
                    self.grow_this_round = !self.grow_this_round;
                }
            }
        } else if diff < self.alpha {
            self.w.set_cwnd(self.w.cwnd + mss);
        } else if diff > self.beta {
            self.w
                .set_cwnd(self.w.cwnd.saturating_sub(mss).max(2 * mss));
            // Stay in congestion avoidance.
            self.w.ssthresh = self.w.ssthresh.min(self.w.cwnd);
        }
    }

    fn restart(&mut self) {
        self.round.restart();
        self.round_rtt.reset();
        self.grow_this_round = true;
    }
}

impl WindowRule for Vegas {
    const NAME: &'static str = "vegas";
    window_in_field!(w);
    fn sample(&mut self, s: &AckSample) {
        self.base_rtt.update_opt(s.rtt);
        self.round_rtt.update_opt(s.rtt);
    }
    fn grow(&mut self, s: &AckSample) {
        if self.round.on_ack(s.snd_una, s.snd_nxt) {
            self.end_of_round();
        }
        if self.w.in_slow_start() && (self.mode == Mode::Ca || self.grow_this_round) {
            // Slow start only; whatever it leaves over is not Vegas' concern.
            self.w.slow_start(s);
        }
    }
    fn reduce(&mut self, ev: &CongestionEvent) -> Verdict {
        self.restart();
        reno_reduction(&mut self.w, ev)
    }
    fn recovery_exit(&mut self, _now: Time, cwnd: u64) {
        self.restart();
        self.w.set_cwnd(cwnd);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::{ctx, event, AckBuilder, MSS};
    use crate::cc::CongestionControl;
    use crate::cc::{CongestionKind, Growth};
    use crate::ParamValue;

    /// Drives `cc` like a window-limited sender: each ACK acknowledges one segment and lets
    /// the sender fill the window again (snd.nxt = snd.una + cwnd). A driver round is one
    /// window of ACKs; Vegas' round ends on the first ACK of the next driver round, so the
    /// decision taken there is about the round before.
    struct Driver {
        t: u64,
        una: u64,
        nxt: u64,
    }

    impl Driver {
        fn new() -> Self {
            Driver {
                t: 0,
                una: 0,
                nxt: 0,
            }
        }
        fn round(&mut self, cc: &mut dyn CongestionControl, rtt_ms: u64) {
            let flight = (cc.cwnd() / MSS as u64).max(1);
            for _ in 0..flight {
                self.t += 1;
                self.una += MSS as u64;
                self.nxt = self.una + cc.cwnd();
                let a = AckBuilder::at_ms(self.t)
                    .rtt_ms(rtt_ms)
                    .seq(self.una, self.nxt)
                    .build();
                cc.observe(&a);
                cc.on_ack(&a);
            }
        }
    }

    fn vegas(mode: Mode, cwnd: u64, ssthresh: u64) -> Vegas {
        let mut c = ctx(Growth::PerAck);
        c.initial_cwnd = cwnd * MSS as u64;
        c.initial_ssthresh = ssthresh * MSS as u64;
        Vegas::new(&c, mode, 1.0, 3.0, 1.0)
    }

    fn segs(cc: &dyn CongestionControl) -> u64 {
        cc.cwnd() / MSS as u64
    }

    #[test]
    fn plus_one_per_rtt_below_alpha_minus_one_above_beta_hold_between() {
        let mut v = vegas(Mode::Full, 10, 10);
        let mut d = Driver::new();
        d.round(&mut v, 100); // first round only starts the count
        let mut sizes = vec![];
        for _ in 0..5 {
            d.round(&mut v, 100); // Diff = 0 < alpha
            sizes.push(segs(&v));
        }
        assert_eq!(sizes, [11, 12, 13, 14, 15]);
        // RTT 200 ms vs BaseRTT 100 ms: Diff = cwnd/2 > beta: one segment less per RTT
        // (the first of these rounds still ends the last 100 ms round: +1).
        let mut sizes = vec![];
        for _ in 0..3 {
            d.round(&mut v, 200);
            sizes.push(segs(&v));
        }
        assert_eq!(sizes, [16, 15, 14]);
        assert!(v.last_diff().unwrap() > 3.0);
        // Diff between alpha and beta: hold. cwnd 14, RTT 125 ms: Diff = 14 * 25/125 = 2.8.
        for _ in 0..3 {
            d.round(&mut v, 125);
            assert_eq!(segs(&v), 14);
        }
        assert!(!v.w.in_slow_start());
    }

    #[test]
    fn full_slow_start_grows_every_other_rtt_and_exits_when_diff_exceeds_gamma() {
        let mut v = vegas(Mode::Full, 2, 1_000_000);
        let mut d = Driver::new();
        let mut sizes = vec![];
        for _ in 0..6 {
            d.round(&mut v, 100);
            sizes.push(segs(&v));
        }
        // Grow, hold, grow, hold, ... (the window doubles in every other round).
        assert_eq!(sizes, [4, 4, 8, 8, 16, 16]);
        assert!(v.w.in_slow_start());
        // Queueing builds: RTT 150 ms. The next round is a growth round (its first ACK ends
        // the last 100 ms round); at its end Diff = 32 * 50/150 = 10.7 > gamma: target =
        // 32 * 100/150 = 21.3 segments, cwnd = 22.3 segments, ssthresh = cwnd.
        d.round(&mut v, 150);
        assert_eq!(segs(&v), 32);
        assert!(v.w.in_slow_start());
        d.round(&mut v, 150);
        assert!(!v.w.in_slow_start());
        assert_eq!(v.cwnd(), 22_333);
        assert_eq!(v.ssthresh(), v.cwnd());
    }

    #[test]
    fn ca_mode_keeps_reno_slow_start() {
        let mut v = vegas(Mode::Ca, 2, 64);
        let mut d = Driver::new();
        let mut sizes = vec![];
        for _ in 0..4 {
            // Heavy queueing (Diff far above gamma) does not stop Reno slow start.
            d.round(&mut v, if sizes.is_empty() { 100 } else { 300 });
            sizes.push(segs(&v));
        }
        assert_eq!(sizes, [4, 8, 16, 32]);
        // At ssthresh Vegas congestion avoidance takes over: Diff = 2/3 cwnd > beta.
        d.round(&mut v, 300);
        assert_eq!(segs(&v), 64);
        d.round(&mut v, 300);
        assert_eq!(segs(&v), 63);
    }

    #[test]
    fn losses_are_reno_and_restart_the_round() {
        for mode in [Mode::Full, Mode::Ca] {
            let mut v = vegas(mode, 20, 20);
            let mut d = Driver::new();
            d.round(&mut v, 100);
            let verdict = v.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
            assert_eq!((verdict.label, v.ssthresh()), ("1/2", 10 * MSS as u64));
            v.on_recovery_exit(Time::ZERO, v.ssthresh());
            assert_eq!(v.cwnd(), 10 * MSS as u64);
            v.on_congestion(&event(CongestionKind::Timeout, Time::ZERO));
            assert_eq!((v.cwnd(), v.ssthresh()), (MSS as u64, 5 * MSS as u64));
        }
    }

    #[test]
    fn parameters() {
        let mut p = Params::new();
        p.insert("mode".into(), ParamValue::Str("ca".into()));
        p.insert("alpha".into(), ParamValue::Num(2.0));
        p.insert("beta".into(), ParamValue::Num(4.0));
        let v = Vegas::from_params(&ctx(Growth::PerAck), &p).unwrap();
        assert_eq!(
            (v.mode, v.alpha, v.beta, v.gamma),
            (Mode::Ca, 2.0, 4.0, 1.0)
        );
        p.insert("alpha".into(), ParamValue::Num(5.0));
        assert!(
            Vegas::from_params(&ctx(Growth::PerAck), &p).is_err(),
            "alpha > beta"
        );
        let mut p = Params::new();
        p.insert("delta".into(), ParamValue::Num(1.0));
        assert!(Vegas::from_params(&ctx(Growth::PerAck), &p).is_err());
    }
}
