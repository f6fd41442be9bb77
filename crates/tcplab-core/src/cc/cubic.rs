//! CUBIC (RFC 9438, "CUBIC for Fast and Long-Distance Networks", 2023).
//!
//! In congestion avoidance the window follows a cubic function of the time t since the
//! current congestion-avoidance stage began: `W_cubic(t) = C (t - K)^3 + W_max`, with
//! `K = cbrt((W_max - cwnd_epoch) / C)` so that W_cubic(0) = cwnd_epoch, the window at the
//! start of the stage, and W_cubic(K) = W_max, the window at the last congestion event
//! (segments, seconds). Per ACK: target = W_cubic(t + RTT) clamped to [cwnd, 1.5 cwnd] and
//! `cwnd += (target - cwnd) / cwnd`; RTT is the minimum RTT (as Linux; RFC 9438 leaves the
//! choice of RTT estimate to the implementation).
//! - Reno-friendly region: `W_est += alpha_cubic * acked / cwnd` with
//!   `alpha_cubic = 3 (1 - beta) / (1 + beta)` until W_est reaches cwnd_prior (the window at
//!   the last congestion event), then 1; when W_cubic(t) < W_est, cwnd = W_est.
//! - Congestion event: fast convergence (`W_max = cwnd (1 + beta) / 2` if cwnd is below the
//!   previous W_max, else `W_max = cwnd`), ssthresh = beta cwnd (at least 2); cwnd = 1 at a
//!   timeout (the next stage then starts with K = 0 and W_max = its cwnd_epoch, RFC 9438
//!   §4.8), cwnd = ssthresh at ECN. Before any congestion event, W_max = cwnd_epoch (K = 0).
//!   Whenever W_max <= cwnd_epoch at the start of a stage, K = 0 and the curve's origin is
//!   cwnd_epoch (Linux bictcp_update: `if (ca->last_max_cwnd <= cwnd) { bic_K = 0;
//!   bic_origin_point = cwnd; }`), so the curve never starts past its plateau.
//! - Slow start: standard, or with `hystart = true` Linux's HyStart ([`hystart`]), which sets
//!   ssthresh = cwnd when it detects an ACK train or a delay increase (checked on the ACKs
//!   that reach `on_ack`, i.e. outside recovery, with an RTT sample; delay_min is the
//!   smallest RTT seen).
//! - `flavor = "linux"` (the `linux` profile's): the same rules in Linux's arithmetic, whole
//!   packets and a jiffies clock ([`linux`]: ssthresh rounded down to packets, growth by a
//!   per-packet count, delay_min as tcp_cubic.c keeps it, W_max forgotten at a timeout);
//!   `c` and `beta` are then Linux's (0.4 and 717/1024) and cannot be given.

mod hystart;
mod linux;

pub use hystart::{Exit as HyStartExit, HyStart};
use linux::Bic;

use super::classic::window_in_field;
use super::filter::MinFilter;
use super::{AckSample, CcContext, CongestionEvent, CongestionKind, Verdict, WindowRule};
use super::{Growth, Window};
use crate::{ConfigError, Dur, ParamReader, Params, Time};

#[derive(Clone, Debug)]
pub struct Cubic {
    w: Window,
    c: f64,
    beta: f64,
    fast_convergence: bool,
    reno_friendly: bool,
    rtt_min: MinFilter,
    /// W_max of the last congestion event, segments.
    w_max: Option<f64>,
    /// cwnd at the last congestion event, segments.
    cwnd_prior: Option<f64>,
    /// The current congestion-avoidance stage: start time, K, W_max used.
    epoch: Option<Epoch>,
    w_est: f64,
    after_timeout: bool,
    /// HyStart state when `hystart` is on.
    hystart: Option<HyStart>,
    /// `flavor = "linux"`: Linux's integer state, which then drives the window.
    linux: Option<Bic>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Epoch {
    start: Time,
    k: f64,
    w_max: f64,
}

impl Cubic {
    pub fn new(ctx: &CcContext, c: f64, beta: f64, fast_convergence: bool, reno: bool) -> Self {
        Cubic {
            w: Window::new(ctx.mss, ctx.initial_cwnd, ctx.initial_ssthresh, ctx.growth),
            c,
            beta,
            fast_convergence,
            reno_friendly: reno,
            rtt_min: MinFilter::new(),
            w_max: None,
            cwnd_prior: None,
            epoch: None,
            w_est: 0.0,
            after_timeout: false,
            hystart: None,
            linux: None,
        }
    }

    /// The same controller in Linux's arithmetic (`flavor = "linux"`, [`linux`]).
    pub fn with_linux_arithmetic(mut self, on: bool) -> Self {
        self.linux = on.then(Bic::default);
        if on {
            self.beta = linux::BETA as f64 / 1024.0;
        }
        self
    }

    /// The same controller with HyStart in slow start (Linux tcp_cubic.c `hystart`).
    pub fn with_hystart(mut self, on: bool) -> Self {
        self.hystart = on.then(HyStart::default);
        self
    }

    /// The HyStart exit found since the start or the last timeout, when HyStart is on.
    pub fn hystart_exit(&self) -> Option<HyStartExit> {
        self.hystart.as_ref().and_then(|h| h.found())
    }

    /// Parameters (RFC 9438 defaults): `c` 0.4, `beta` 0.7, `fast_convergence` true,
    /// `reno_friendly` true; `hystart` false (Linux turns it on); `flavor` "rfc9438" or
    /// "linux" (Linux's arithmetic; `c` and `beta` are then refused, being Linux's).
    pub fn from_params(ctx: &CcContext, params: &Params) -> Result<Self, ConfigError> {
        let mut r = ParamReader::new("cubic", params);
        let linux = r.choice("flavor", "rfc9438", &["rfc9438", "linux"])? == "linux";
        if linux {
            if let Some(k) = ["c", "beta"].into_iter().find(|k| params.contains_key(*k)) {
                return Err(ConfigError::new(format!(
                    "cubic.{k}: not with flavor = \"linux\" (Linux's c is 0.4, its beta 717/1024)"
                )));
            }
        }
        let c = r.num("c", 0.4, 1e-6, 1e6)?;
        let beta = r.num("beta", 0.7, 0.01, 0.99)?;
        let fc = r.flag("fast_convergence", true)?;
        let reno = r.flag("reno_friendly", true)?;
        let hystart = r.flag("hystart", false)?;
        r.finish()?;
        Ok(Self::new(ctx, c, beta, fc, reno)
            .with_hystart(hystart)
            .with_linux_arithmetic(linux))
    }

    pub fn growth(&self) -> Growth {
        self.w.growth
    }

    /// K of the current congestion-avoidance stage, seconds.
    pub fn k(&self) -> Option<f64> {
        self.epoch.map(|e| e.k)
    }

    /// W_cubic(t) of the current stage, segments.
    pub fn w_cubic(&self, t: f64) -> Option<f64> {
        self.epoch.map(|e| self.c * (t - e.k).powi(3) + e.w_max)
    }

    fn start_epoch(&mut self, now: Time) {
        let cwnd = self.w.cwnd_segments();
        let w_max = match self.w_max {
            Some(m) if !self.after_timeout => m,
            _ => cwnd,
        };
        let (k, w_max) = if w_max <= cwnd {
            (0.0, cwnd)
        } else {
            (((w_max - cwnd) / self.c).cbrt(), w_max)
        };
        self.epoch = Some(Epoch {
            start: now,
            k,
            w_max,
        });
        self.w_est = cwnd;
        self.after_timeout = false;
    }

    fn alpha(&self) -> f64 {
        match self.cwnd_prior {
            Some(p) if self.w_est < p => 3.0 * (1.0 - self.beta) / (1.0 + self.beta),
            _ => 1.0,
        }
    }
}

impl WindowRule for Cubic {
    const NAME: &'static str = "cubic";
    window_in_field!(w);
    fn sample(&mut self, s: &AckSample) {
        self.rtt_min.update_opt(s.rtt);
        if let (Some(b), Some(rtt)) = (self.linux.as_mut(), s.rtt) {
            b.on_rtt(s.now, rtt);
        }
    }
    fn grow(&mut self, s: &AckSample) {
        // HyStart's delay_min: Linux's (samples after an epoch's first second) or the least.
        let delay_min = match &self.linux {
            Some(b) if b.delay_min_us > 0 => Some(Dur::from_micros(b.delay_min_us)),
            Some(_) => None,
            None => self.rtt_min.get(),
        };
        if let (true, Some(h), Some(rtt), Some(min)) = (
            self.w.in_slow_start(),
            self.hystart.as_mut(),
            s.rtt,
            delay_min,
        ) {
            let cwnd = self.w.cwnd / self.w.mss();
            if h.on_ack(s.now, rtt, min, cwnd, s.snd_una, s.snd_nxt)
                .is_some()
            {
                self.w.ssthresh = self.w.cwnd; // tp->snd_ssthresh = tcp_snd_cwnd(tp)
            }
        }
        if let Some(b) = self.linux.as_mut() {
            // cubictcp_cong_avoid: slow start, then bictcp_update and tcp_cong_avoid_ai with
            // the packets slow start left.
            let mss = self.w.mss();
            let acked = if self.w.in_slow_start() {
                self.w.slow_start(s) / mss
            } else {
                s.acked_bytes.div_ceil(mss)
            };
            if acked > 0 {
                let cnt = b.update(s.now, self.w.cwnd / mss, acked);
                self.w.linux_ai_with(cnt, acked);
            }
            return;
        }
        if self.w.in_slow_start() {
            self.w.slow_start(s);
            return;
        }
        if self.epoch.is_none() {
            self.start_epoch(s.now);
        }
        let Some(e) = self.epoch else { return };
        let k = self.w.ack_weight(s.acked_bytes);
        let cwnd = self.w.cwnd_segments();
        let t = s.now.saturating_since(e.start).as_secs_f64();
        let rtt = self.rtt_min.get().map_or(0.0, |r| r.as_secs_f64());
        let w_cubic = |t: f64| self.c * (t - e.k).powi(3) + e.w_max;
        self.w_est += self.alpha() * k / cwnd;
        let next = if self.reno_friendly && w_cubic(t) < self.w_est {
            cwnd.max(self.w_est)
        } else {
            let target = w_cubic(t + rtt).clamp(cwnd, 1.5 * cwnd);
            cwnd + k * (target - cwnd) / cwnd
        };
        self.w.set_cwnd_segments(next);
    }
    fn reduce(&mut self, ev: &CongestionEvent) -> Verdict {
        let cwnd = self.w.cwnd_segments();
        self.w_max = Some(match self.w_max {
            Some(m) if self.fast_convergence && cwnd < m => cwnd * (1.0 + self.beta) / 2.0,
            _ => cwnd,
        });
        self.cwnd_prior = Some(cwnd);
        self.epoch = None;
        let mss = self.w.mss() as f64;
        match self.linux.as_mut() {
            Some(b) => {
                let pkts = b.recalc_ssthresh(self.w.cwnd / self.w.mss(), self.fast_convergence);
                self.w.set_ssthresh(pkts * self.w.mss());
                if ev.kind == CongestionKind::Timeout {
                    b.reset(); // cubictcp_state(TCP_CA_Loss): bictcp_reset
                }
            }
            None => self.w.set_ssthresh((cwnd * self.beta * mss).round() as u64),
        }
        match ev.kind {
            CongestionKind::FastRetransmit => {}
            CongestionKind::Timeout => {
                self.w.set_cwnd(self.w.mss());
                self.after_timeout = true;
                if let Some(h) = self.hystart.as_mut() {
                    h.restart();
                }
            }
            CongestionKind::Ecn => self.w.set_cwnd(self.w.ssthresh),
        }
        Verdict {
            label: "beta",
            value: self.beta,
        }
    }
    fn repeated_timeout(&mut self, _now: Time) {
        // W_max and the epoch stay as the first timeout left them.
        self.w.set_cwnd(self.w.mss());
    }
    fn undo(&mut self, _now: Time, prior_cwnd: u64, prior_ssthresh: u64) {
        self.w.undo(prior_cwnd, prior_ssthresh);
        self.epoch = None;
    }
    fn recovery_exit(&mut self, _now: Time, cwnd: u64) {
        self.w.set_cwnd(cwnd);
        self.epoch = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::{ctx, event, AckBuilder, MSS};
    use crate::cc::CongestionControl;
    use crate::{Dur, ParamValue};

    fn cubic(cwnd: u64) -> Cubic {
        let mut c = ctx(Growth::PerAck);
        c.initial_cwnd = cwnd * MSS as u64;
        c.initial_ssthresh = c.initial_cwnd;
        Cubic::from_params(&c, &Params::new()).unwrap()
    }

    /// An ACK clock: one ACK per segment, cwnd segments per RTT, for `secs` seconds.
    /// Returns (t since start, cwnd in segments) once per RTT.
    fn run(cc: &mut Cubic, start: Time, secs: f64, rtt: Dur) -> Vec<(f64, f64)> {
        let mut trace = vec![];
        let mut now = start;
        let mut next_mark = start;
        while now.saturating_since(start).as_secs_f64() < secs {
            let a = AckBuilder::at(now).rtt(rtt).build();
            cc.observe(&a);
            cc.on_ack(&a);
            if now >= next_mark {
                trace.push((
                    now.saturating_since(start).as_secs_f64(),
                    cc.w.cwnd_segments(),
                ));
                next_mark += rtt;
            }
            let gap = rtt.as_nanos() as f64 / cc.w.cwnd_segments();
            now += Dur::from_nanos(gap as u64);
        }
        trace
    }

    #[test]
    fn after_a_loss_the_window_follows_the_cubic_curve_through_w_max() {
        let mut cc = cubic(100);
        let rtt = Dur::from_millis(200);
        cc.observe(&AckBuilder::at_ms(0).rtt(rtt).build());
        let v = cc.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        assert_eq!((v.label, v.value), ("beta", 0.7));
        assert_eq!(cc.ssthresh(), 70 * MSS as u64);
        let t0 = Time::from_secs(1);
        cc.on_recovery_exit(t0, cc.ssthresh());
        let trace = run(&mut cc, t0, 9.0, rtt);
        // K = cbrt((100 - 70) / 0.4) = cbrt(75) = 4.217 s.
        let k = cc.k().unwrap();
        assert!((k - 75f64.cbrt()).abs() < 1e-9, "K = {k}");
        let w = |t: f64| 0.4 * (t - k).powi(3) + 100.0;
        for &(t, cwnd) in &trace {
            // cwnd chases W_cubic(t + RTT) from below, at most one RTT behind.
            assert!(
                cwnd >= w(t) - 1.0 && cwnd <= w(t + 0.2) + 1.0,
                "t = {t:.2}: cwnd {cwnd:.2}, W_cubic(t) = {:.2}",
                w(t)
            );
        }
        // Through the plateau at W_max around t = K.
        let near_k = trace.iter().find(|(t, _)| *t >= k).unwrap();
        assert!((near_k.1 - 100.0).abs() < 1.0, "{near_k:?}");
        let last = trace.last().unwrap();
        assert!(last.1 > 130.0, "convex growth after K: {last:?}");
    }

    #[test]
    fn fast_convergence_releases_bandwidth() {
        let mut cc = cubic(100);
        cc.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        assert_eq!(cc.w_max, Some(100.0));
        cc.on_recovery_exit(Time::ZERO, 90 * MSS as u64);
        cc.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        // 90 < W_max = 100: W_max = 90 (1 + 0.7) / 2 = 76.5.
        assert!((cc.w_max.unwrap() - 76.5).abs() < 1e-9);
        assert_eq!(cc.ssthresh(), 63 * MSS as u64);
        let mut p = Params::new();
        p.insert("fast_convergence".into(), ParamValue::Bool(false));
        let mut cc = Cubic::from_params(&ctx(Growth::PerAck), &p).unwrap();
        cc.w.set_cwnd(100 * MSS as u64);
        cc.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        cc.w.set_cwnd(90 * MSS as u64);
        cc.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        assert_eq!(cc.w_max, Some(90.0));
    }

    #[test]
    fn reno_friendly_region_on_short_paths() {
        // RTT 2 ms: W_est grows 0.53 segments per RTT = 265 per second, far faster than the
        // cubic curve near its plateau; cwnd follows W_est.
        let mut cc = cubic(100);
        let rtt = Dur::from_millis(2);
        cc.observe(&AckBuilder::at_ms(0).rtt(rtt).build());
        cc.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        cc.on_recovery_exit(Time::ZERO, cc.ssthresh());
        let trace = run(&mut cc, Time::ZERO, 0.1, rtt);
        let (t, cwnd) = *trace.last().unwrap();
        assert!(cwnd > cc.w_cubic(t).unwrap() + 5.0, "{cwnd} at {t}");
        // 50 RTTs at 0.53 segments each from 70: about 96.
        assert!((cwnd - 96.0).abs() < 2.0, "{cwnd}");
        // Without the Reno-friendly region it would stay near the cubic curve.
        let mut p = Params::new();
        p.insert("reno_friendly".into(), ParamValue::Bool(false));
        let mut c = ctx(Growth::PerAck);
        c.initial_cwnd = 100 * MSS as u64;
        c.initial_ssthresh = c.initial_cwnd;
        let mut cc = Cubic::from_params(&c, &p).unwrap();
        cc.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        cc.on_recovery_exit(Time::ZERO, cc.ssthresh());
        let (_, cwnd) = *run(&mut cc, Time::ZERO, 0.1, rtt).last().unwrap();
        assert!(cwnd < 75.0, "{cwnd}");
    }

    #[test]
    fn timeout_restarts_with_k_zero_from_the_new_window() {
        let mut cc = cubic(100);
        cc.on_congestion(&event(CongestionKind::Timeout, Time::ZERO));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (MSS as u64, 70 * MSS as u64));
        // Slow start to ssthresh, then the first stage has K = 0, W_max = cwnd_epoch.
        let mut t = 0;
        while cc.cwnd() < cc.ssthresh() {
            t += 1;
            cc.on_ack(&AckBuilder::at_ms(t).build());
        }
        cc.on_ack(&AckBuilder::at_ms(t + 1).build());
        assert_eq!(cc.k(), Some(0.0));
        assert!((cc.epoch.unwrap().w_max - 70.0).abs() < 1e-9);
    }

    #[test]
    fn parameters() {
        let mut p = Params::new();
        p.insert("beta".into(), ParamValue::Num(0.8));
        p.insert("c".into(), ParamValue::Num(0.5));
        let cc = Cubic::from_params(&ctx(Growth::PerAck), &p).unwrap();
        assert_eq!((cc.beta, cc.c), (0.8, 0.5));
        p.insert("beta".into(), ParamValue::Num(1.5));
        assert!(Cubic::from_params(&ctx(Growth::PerAck), &p).is_err());
        let mut p = Params::new();
        p.insert("hystart".into(), ParamValue::Bool(true));
        let cc = Cubic::from_params(&ctx(Growth::PerAck), &p).unwrap();
        assert!(cc.hystart.is_some());
        let cc = Cubic::from_params(&ctx(Growth::PerAck), &Params::new()).unwrap();
        assert!(cc.hystart.is_none(), "off by default");
        p.insert("hystart".into(), ParamValue::Num(1.0));
        assert!(Cubic::from_params(&ctx(Growth::PerAck), &p).is_err());
    }

    #[test]
    fn a_stage_starting_above_w_max_has_k_zero_and_origin_cwnd() {
        let mut cc = cubic(100);
        cc.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        assert_eq!(cc.w_max, Some(100.0));
        // Recovery ends with a window above W_max (e.g. restored by an undo).
        cc.on_recovery_exit(Time::ZERO, 110 * MSS as u64);
        cc.on_ack(&AckBuilder::at_ms(1).build());
        assert_eq!(cc.k(), Some(0.0));
        assert!((cc.epoch.unwrap().w_max - 110.0).abs() < 1e-9);
        // The curve starts at its plateau: no jump in the first RTT.
        assert!(cc.w.cwnd_segments() < 110.1, "{}", cc.w.cwnd_segments());
    }

    #[test]
    fn hystart_ends_slow_start_with_ssthresh_at_cwnd() {
        let mut p = Params::new();
        p.insert("hystart".into(), ParamValue::Bool(true));
        let mut c = ctx(Growth::Linux);
        c.initial_cwnd = 16 * MSS as u64;
        let mut cc = Cubic::from_params(&c, &p).unwrap();
        assert_eq!(cc.ssthresh(), u64::MAX);
        // An ACK train 1 ms apart with RTT 40 ms: found after 20 ms of the round.
        let mut found_at = None;
        for i in 1..=30u64 {
            let a = AckBuilder::at_ms(i)
                .rtt_ms(40)
                .acked(MSS as u64)
                .seq(i * MSS as u64, 1000 * MSS as u64)
                .build();
            cc.observe(&a);
            let before = cc.cwnd();
            cc.on_ack(&a);
            if found_at.is_none() && cc.hystart_exit().is_some() {
                found_at = Some(i);
                assert_eq!(cc.ssthresh(), before, "ssthresh = cwnd at the exit");
            }
        }
        assert_eq!(found_at, Some(22));
        assert_eq!(cc.hystart_exit(), Some(HyStartExit::AckTrain));
        assert!(cc.epoch.is_some(), "congestion avoidance from the exit on");
        // Off (the default), the same ACKs keep slow start going.
        let mut cc = Cubic::from_params(&c, &Params::new()).unwrap();
        for i in 1..=30u64 {
            let a = AckBuilder::at_ms(i).rtt_ms(40).acked(MSS as u64).build();
            cc.observe(&a);
            cc.on_ack(&a);
        }
        assert_eq!(cc.cwnd(), 46 * MSS as u64);
        // A timeout restarts HyStart.
        let mut cc = Cubic::from_params(&c, &p).unwrap();
        cc.hystart.as_mut().unwrap().restart();
        cc.on_congestion(&event(CongestionKind::Timeout, Time::ZERO));
        assert_eq!(cc.hystart_exit(), None);
    }
}
