//! TCP Adaptive Reno (Shimonishi, Hama, Murase, "TCP-Adaptive Reno for improving
//! efficiency-friendliness tradeoffs of TCP congestion control algorithm", PFLDnet 2006;
//! `/work/shared/papers/adaptive-reno-shimonishi.txt` §II).
//!
//! Congestion level from the RTT: `c = min((RTT - RTT_min) / (RTT_cong - RTT_min), 1)`, where
//! RTT_min is the smallest RTT sample, RTT the latest sample, and RTT_cong the RTT expected
//! at a congestion loss, smoothed over loss events j: `RTT_cong_j = (1 - a) RTT_cong_{j-1} +
//! a RTT_j` (RTT_j: the latest sample before the loss; the first loss sets RTT_cong = RTT_1).
//! Which loss events update it is the parameter `rtt_cong_update` ([`RttCongUpdate`]).
//!
//! The window is `W = W_base + W_probe` segments. Slow start is Reno's (W_probe = 0). In
//! congestion avoidance, per ACK: `W_base += 1/W` (Reno) and
//! `W_probe = max(W_probe + W_inc(c)/W, 0)` with
//! `W_inc(c) = W_inc_max / e^(alpha c) + beta c + gamma`,
//! `beta = 2 W_inc_max (1/alpha - (1/alpha + 1)/e^alpha)`,
//! `gamma = 1 - 2 W_inc_max (1/alpha - (1/alpha + 1/2)/e^alpha)` as printed (so `W_inc(1) = 1`),
//! or without the leading 1 as the prose asks (`W_inc(1) = 0`): parameter `w_inc`
//! ([`WIncReading`]), and `W_inc_max = B / M` segments, B the Westwood+ bandwidth estimate in
//! bit/s, M = 10 Mb/s.
//! At a congestion signal: RTT_cong is updated, then `W_base = W / (1 + c)`, `W_probe = 0`:
//! ssthresh = W_base (at least 2 segments); cwnd = 1 after a timeout, W_base after ECN, and
//! W_base when fast recovery ends. Verdict "areno" with value c.
//!
//! Guards: c = 0 without an RTT sample or before the first loss; when RTT_cong <= RTT_min
//! (e.g. the first loss happened on an empty queue) c is 1 if RTT > RTT_min, else 0; without
//! a bandwidth estimate W_inc_max = 0 (then W_inc = 1 printed, 0 prose).

use super::bandwidth::BandwidthEstimator;
use super::classic::window_in_field;
use super::filter::MinFilter;
use super::westwood::read_estimator;
use super::{AckSample, CcContext, CongestionEvent, CongestionKind, Verdict, WindowRule};
use super::{Growth, Window};
use crate::{ConfigError, Dur, ParamReader, Params, Time};

/// `c = min((rtt - rtt_min) / (rtt_cong - rtt_min), 1)` in [0, 1], with every division
/// guarded (see the module comment). Times in seconds.
pub fn congestion_level(rtt: Option<f64>, rtt_min: Option<f64>, rtt_cong: Option<f64>) -> f64 {
    let (Some(rtt), Some(min), Some(cong)) = (rtt, rtt_min, rtt_cong) else {
        return 0.0;
    };
    let num = (rtt - min).max(0.0);
    let den = cong - min;
    if den.is_nan() || den <= 0.0 {
        return if num > 0.0 { 1.0 } else { 0.0 };
    }
    (num / den).clamp(0.0, 1.0)
}

/// Which reading of the paper's W_inc (docs/controllers/areno.md, "Ambiguities").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WIncReading {
    /// γ as printed, `1 - 2 W_inc_max (1/α - (1/α + 1/2)/e^α)`: `W_inc(1) = 1` and
    /// `∫₀¹ W_inc(c) dc = 1` (the default; what the code always did).
    Printed,
    /// What the prose asks (W_inc "approaches 0" at c = 1, W_probe "converged to 0"): the
    /// same β and the conditions `W_inc(1) = 0` and `∫₀¹ W_inc(c) dc = 0`, which give
    /// γ = printed γ − 1. The same curve, one segment per RTT lower.
    Prose,
}

/// Which loss events update RTT_cong (docs/controllers/areno.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RttCongUpdate {
    /// Every congestion event: fast retransmit, timeout, ECN echo (the default).
    EveryLoss,
    /// The first event, then only events judged congestive: RTT_j closer to RTT_cong than
    /// to RTT_min, i.e. the congestion level of RTT_j against the RTT_cong before the
    /// update (with the guards of [`congestion_level`]) is at least 1/2.
    Congestive,
}

/// The probing increase per RTT, in segments, at congestion level `c`.
pub fn w_inc(c: f64, w_inc_max: f64, alpha: f64, reading: WIncReading) -> f64 {
    let e = alpha.exp();
    let beta = 2.0 * w_inc_max * (1.0 / alpha - (1.0 / alpha + 1.0) / e);
    let lift = match reading {
        WIncReading::Printed => 1.0,
        WIncReading::Prose => 0.0,
    };
    let gamma = lift - 2.0 * w_inc_max * (1.0 / alpha - (1.0 / alpha + 0.5) / e);
    w_inc_max / (alpha * c).exp() + beta * c + gamma
}

#[derive(Clone, Debug)]
pub struct AReno {
    w: Window,
    bwe: BandwidthEstimator,
    rtt_min: MinFilter,
    rtt_latest: Option<Dur>,
    /// Smoothed RTT at congestion events, seconds.
    rtt_cong: Option<f64>,
    a: f64,
    alpha: f64,
    /// M in bit/s.
    m_bps: f64,
    reading: WIncReading,
    rtt_cong_update: RttCongUpdate,
    w_base: f64,
    w_probe: f64,
}

impl AReno {
    pub fn new(ctx: &CcContext, bwe: BandwidthEstimator, a: f64, alpha: f64, m_bps: f64) -> Self {
        let w = Window::new(ctx.mss, ctx.initial_cwnd, ctx.initial_ssthresh, ctx.growth);
        AReno {
            w_base: w.cwnd_segments(),
            w,
            bwe,
            rtt_min: MinFilter::new(),
            rtt_latest: None,
            rtt_cong: None,
            a,
            alpha,
            m_bps,
            reading: WIncReading::Printed,
            rtt_cong_update: RttCongUpdate::EveryLoss,
            w_probe: 0.0,
        }
    }

    /// The same controller with another reading of W_inc and RTT_cong update rule.
    pub fn with_options(mut self, reading: WIncReading, rtt_cong_update: RttCongUpdate) -> Self {
        self.reading = reading;
        self.rtt_cong_update = rtt_cong_update;
        self
    }

    /// Parameters: `a` (RTT_cong smoothing, weight of the new RTT, default 0.15), `alpha`
    /// (default 10), `m_mbps` (M, default 10 Mb/s), `w_inc` ("printed" | "prose", default
    /// "printed"), `rtt_cong_update` ("every_loss" | "congestive", default "every_loss"), and
    /// the bandwidth estimator's `gain` (1/8) and `min_interval_ms` (50).
    pub fn from_params(ctx: &CcContext, params: &Params) -> Result<Self, ConfigError> {
        let mut r = ParamReader::new("areno", params);
        let a = r.num("a", 0.15, 0.0, 1.0)?;
        let alpha = r.num("alpha", 10.0, 1e-3, 700.0)?;
        let m_mbps = r.num("m_mbps", 10.0, 1e-9, 1e12)?;
        let reading = match r.choice("w_inc", "printed", &["printed", "prose"])? {
            "prose" => WIncReading::Prose,
            _ => WIncReading::Printed,
        };
        let update = match r.choice(
            "rtt_cong_update",
            "every_loss",
            &["every_loss", "congestive"],
        )? {
            "congestive" => RttCongUpdate::Congestive,
            _ => RttCongUpdate::EveryLoss,
        };
        let bwe = read_estimator(&mut r)?;
        r.finish()?;
        Ok(Self::new(ctx, bwe, a, alpha, m_mbps * 1e6).with_options(reading, update))
    }

    pub fn growth(&self) -> Growth {
        self.w.growth
    }

    /// W_inc_max in segments: B / M.
    pub fn w_inc_max(&self) -> f64 {
        self.bwe.bits_per_sec().map_or(0.0, |b| b / self.m_bps)
    }

    /// The congestion level now.
    pub fn level(&self) -> f64 {
        congestion_level(
            self.rtt_latest.map(Dur::as_secs_f64),
            self.rtt_min.get().map(Dur::as_secs_f64),
            self.rtt_cong,
        )
    }

    /// RTT_cong in seconds (None before the first update).
    pub fn rtt_cong(&self) -> Option<f64> {
        self.rtt_cong
    }

    /// Whether the loss event with RTT `rtt_j` (seconds) updates RTT_cong.
    fn updates_rtt_cong(&self, rtt_j: f64) -> bool {
        match self.rtt_cong_update {
            RttCongUpdate::EveryLoss => true,
            RttCongUpdate::Congestive => {
                self.rtt_cong.is_none()
                    || congestion_level(
                        Some(rtt_j),
                        self.rtt_min.get().map(Dur::as_secs_f64),
                        self.rtt_cong,
                    ) >= 0.5
            }
        }
    }

    fn sync_parts(&mut self) {
        self.w_base = self.w.cwnd_segments();
        self.w_probe = 0.0;
    }
}

impl WindowRule for AReno {
    const NAME: &'static str = "areno";
    window_in_field!(w);
    fn sample(&mut self, s: &AckSample) {
        self.rtt_min.update_opt(s.rtt);
        self.rtt_latest = s.rtt.or(self.rtt_latest);
        self.bwe.on_ack(s);
    }
    fn grow(&mut self, s: &AckSample) {
        if self.w.in_slow_start() {
            self.w.grow(s);
            self.sync_parts();
            return;
        }
        let k = self.w.ack_weight(s.acked_bytes);
        let w = (self.w_base + self.w_probe).max(1.0);
        let inc = w_inc(self.level(), self.w_inc_max(), self.alpha, self.reading);
        self.w_base += k / w;
        self.w_probe = (self.w_probe + k * inc / w).max(0.0);
        self.w.set_cwnd_segments(self.w_base + self.w_probe);
    }
    fn reduce(&mut self, ev: &CongestionEvent) -> Verdict {
        if let Some(rtt_j) = ev.latest_rtt.or(self.rtt_latest) {
            let rtt_j = rtt_j.as_secs_f64();
            if self.updates_rtt_cong(rtt_j) {
                self.rtt_cong = Some(match self.rtt_cong {
                    None => rtt_j,
                    Some(prev) => (1.0 - self.a) * prev + self.a * rtt_j,
                });
            }
        }
        let c = self.level();
        let target = self.w.cwnd_segments() / (1.0 + c);
        self.w.set_ssthresh((target * self.w.mss() as f64) as u64);
        match ev.kind {
            CongestionKind::FastRetransmit => {}
            CongestionKind::Timeout => self.w.set_cwnd(self.w.mss()),
            CongestionKind::Ecn => self.w.set_cwnd(self.w.ssthresh),
        }
        self.w_base = self.w.ssthresh as f64 / self.w.mss() as f64;
        self.w_probe = 0.0;
        Verdict {
            label: "areno",
            value: c,
        }
    }
    fn undo(&mut self, _now: Time, prior_cwnd: u64, prior_ssthresh: u64) {
        self.w.undo(prior_cwnd, prior_ssthresh);
        self.sync_parts();
    }
    fn recovery_exit(&mut self, _now: Time, cwnd: u64) {
        self.w.set_cwnd(cwnd);
        self.sync_parts();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::{ctx, event, AckBuilder, MSS};
    use crate::cc::CongestionControl;
    use crate::ParamValue;
    use WIncReading::{Printed, Prose};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn w_inc_is_one_at_full_congestion() {
        for w_max in [0.0, 0.5, 1.0, 10.0, 100.0, 1e4] {
            assert!(
                close(w_inc(1.0, w_max, 10.0, Printed), 1.0),
                "W_inc_max {w_max}"
            );
        }
    }

    #[test]
    fn w_inc_near_its_maximum_when_uncongested() {
        // W_inc(0) = W_inc_max (1 - 2/alpha + (2/alpha + 1) e^-alpha) + 1: with alpha = 10,
        // 0.80005 W_inc_max + 1 -- "close to its maximum value" in the paper's words.
        for w_max in [1.0, 10.0, 100.0] {
            let expect = w_max * (1.0 - 0.2 + 1.2 * (-10.0f64).exp()) + 1.0;
            assert!(close(w_inc(0.0, w_max, 10.0, Printed), expect));
            assert!(w_inc(0.0, w_max, 10.0, Printed) >= 0.8 * w_max);
        }
        // The U-curve: it falls fast, goes negative for a large W_inc_max, then rises to 1.
        let w: Vec<f64> = [0.0, 0.1, 0.3, 0.6, 1.0]
            .iter()
            .map(|&c| w_inc(c, 100.0, 10.0, Printed))
            .collect();
        assert!(
            w[0] > w[1] && w[1] > w[2] && w[2] < w[3] && w[3] < w[4],
            "{w:?}"
        );
        assert!(w[2] < 0.0);
    }

    #[test]
    fn congestion_level_guards() {
        let l = congestion_level;
        assert!(close(l(Some(0.15), Some(0.1), Some(0.2)), 0.5));
        assert_eq!(l(Some(0.3), Some(0.1), Some(0.2)), 1.0);
        assert_eq!(l(Some(0.05), Some(0.1), Some(0.2)), 0.0);
        assert_eq!(l(None, Some(0.1), Some(0.2)), 0.0, "no RTT");
        assert_eq!(l(Some(0.1), Some(0.1), None), 0.0, "no loss yet");
        assert_eq!(
            l(Some(0.1), Some(0.1), Some(0.1)),
            0.0,
            "RTT_cong = RTT_min"
        );
        assert_eq!(
            l(Some(0.2), Some(0.1), Some(0.1)),
            1.0,
            "RTT_cong = RTT_min"
        );
        assert_eq!(l(Some(0.0), Some(0.0), Some(0.0)), 0.0, "zero RTT");
        assert_eq!(
            l(Some(0.2), Some(0.1), Some(0.05)),
            1.0,
            "RTT_cong < RTT_min"
        );
    }

    fn areno_in_ca(cwnd: u64) -> AReno {
        let mut c = ctx(Growth::PerAck);
        c.initial_cwnd = cwnd * MSS as u64;
        c.initial_ssthresh = c.initial_cwnd;
        AReno::from_params(&c, &Params::new()).unwrap()
    }

    fn sample(a: &mut AReno, t_ms: u64, rtt_ms: u64) {
        a.observe(&AckBuilder::at_ms(t_ms).rtt_ms(rtt_ms).build());
    }

    #[test]
    fn reduction_is_w_over_one_plus_c() {
        let mut a = areno_in_ca(100);
        sample(&mut a, 1, 100);
        // First loss at RTT 200 ms: RTT_cong = 200 ms, c = 1: halve.
        sample(&mut a, 2, 200);
        let v = a.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        assert_eq!((v.label, v.value), ("areno", 1.0));
        assert_eq!(a.ssthresh(), 50 * MSS as u64);
        a.on_recovery_exit(Time::ZERO, a.ssthresh());
        assert_eq!(a.cwnd(), 50 * MSS as u64);
        // Second loss at RTT 150 ms: RTT_cong = 0.85 * 200 + 0.15 * 150 = 192.5 ms,
        // c = 50 / 92.5: W / (1 + c).
        sample(&mut a, 3, 150);
        let v = a.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        let c = 50.0 / 92.5;
        assert!(close(v.value, c), "{}", v.value);
        let expect = 50.0 / (1.0 + c) * MSS as f64;
        assert!((a.ssthresh() as f64 - expect).abs() <= 1.0);
        // A loss with no queueing (RTT = RTT_min): c = 0, no reduction.
        sample(&mut a, 4, 100);
        a.w.set_cwnd(40 * MSS as u64);
        let v = a.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        assert_eq!((v.value, a.ssthresh()), (0.0, 40 * MSS as u64));
        // Timeout: same ssthresh rule, cwnd 1.
        a.on_congestion(&event(CongestionKind::Timeout, Time::ZERO));
        assert_eq!(a.cwnd(), MSS as u64);
    }

    #[test]
    fn first_loss_on_an_empty_queue_does_not_divide_by_zero() {
        let mut a = areno_in_ca(30);
        sample(&mut a, 1, 100);
        let v = a.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        assert_eq!((v.value, a.ssthresh()), (0.0, 30 * MSS as u64));
        // No RTT at all: c = 0 as well.
        let mut a = areno_in_ca(30);
        let v = a.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        assert_eq!(v.value, 0.0);
        assert_eq!(a.ssthresh(), 30 * MSS as u64);
    }

    /// Growth over `n` ACKs at `per_window` segments per window of ACKs (dW/dack =
    /// per_window / W, so W^2 grows by 2 per_window n).
    fn expected_growth(w0: f64, per_window: f64, n: f64) -> f64 {
        (w0 * w0 + 2.0 * per_window * n).sqrt() - w0
    }

    /// One RTT of ACKs (one per segment), without new RTT or rate information.
    fn round(a: &mut AReno, t: &mut u64) {
        for _ in 0..a.cwnd() / MSS as u64 {
            *t += 1;
            a.on_ack(&AckBuilder::at_ms(*t).build());
        }
    }

    #[test]
    fn without_a_bandwidth_estimate_it_grows_two_segments_per_rtt() {
        let mut a = areno_in_ca(20);
        sample(&mut a, 1, 100);
        assert_eq!(a.w_inc_max(), 0.0);
        let mut t = 10;
        round(&mut a, &mut t);
        // W_base +1 and W_probe +W_inc(c) = 1 per window of ACKs.
        let grown = a.w.cwnd_segments() - 20.0;
        let expect = expected_growth(20.0, 2.0, 20.0);
        assert!((grown - expect).abs() < 0.01, "{grown} vs {expect}");
    }

    #[test]
    fn uncongested_it_probes_with_about_w_inc_max_per_rtt() {
        let mut a = areno_in_ca(50);
        // 100 Mb/s of ACKs (1000 bytes every 80 us) at RTT = RTT_min = 10 ms.
        for i in 0..20_000u64 {
            a.observe(&AckBuilder::at_us(80 * i).rtt_ms(10).build());
        }
        let w_max = a.w_inc_max();
        assert!((w_max - 10.0).abs() < 0.2, "W_inc_max = 100/10 = {w_max}");
        let mut t = 10_000;
        round(&mut a, &mut t);
        let grown = a.w.cwnd_segments() - 50.0;
        let expect = expected_growth(50.0, 1.0 + w_inc(0.0, w_max, 10.0, Printed), 50.0);
        assert!((grown - expect).abs() < 0.05, "{grown} vs {expect}");
    }

    #[test]
    fn parameters() {
        let mut p = Params::new();
        p.insert("a".into(), ParamValue::Num(0.5));
        p.insert("m_mbps".into(), ParamValue::Num(100.0));
        p.insert("gain".into(), ParamValue::Num(0.25));
        let a = AReno::from_params(&ctx(Growth::PerAck), &p).unwrap();
        assert_eq!((a.a, a.alpha, a.m_bps), (0.5, 10.0, 1e8));
        p.insert("beta".into(), ParamValue::Num(1.0));
        assert!(AReno::from_params(&ctx(Growth::PerAck), &p).is_err());
    }

    /// ∫₀¹ W_inc(c) dc by Simpson's rule (the curve is smooth; 2000 intervals).
    fn integral(w_max: f64, alpha: f64, reading: WIncReading) -> f64 {
        let n = 2000;
        let h = 1.0 / n as f64;
        let f = |k: usize| w_inc(k as f64 * h, w_max, alpha, reading);
        let inner: f64 = (1..n)
            .map(|k| if k % 2 == 1 { 4.0 } else { 2.0 } * f(k))
            .sum();
        (f(0) + inner + f(n)) * h / 3.0
    }

    #[test]
    fn prose_reading_is_zero_at_full_congestion_and_the_printed_curve_lowered_by_one() {
        for alpha in [1.0, 3.0, 10.0] {
            for w_max in [0.0f64, 0.5, 1.0, 10.0, 100.0, 1e4] {
                let tol = 1e-9 * w_max.max(1.0);
                assert!(
                    w_inc(1.0, w_max, alpha, Prose).abs() < tol,
                    "{w_max} {alpha}"
                );
                assert!(close(w_inc(1.0, w_max, alpha, Printed), 1.0));
                // W_inc(0) = W_inc_max (1 - 2/alpha + (2/alpha + 1) e^-alpha) (+ 1 printed).
                let w0 = w_max * (1.0 - 2.0 / alpha + (2.0 / alpha + 1.0) * (-alpha).exp());
                assert!((w_inc(0.0, w_max, alpha, Prose) - w0).abs() < tol);
                assert!((w_inc(0.0, w_max, alpha, Printed) - (w0 + 1.0)).abs() < tol);
                for c in [0.05, 0.2, 0.5, 0.9] {
                    let d = w_inc(c, w_max, alpha, Printed) - w_inc(c, w_max, alpha, Prose);
                    assert!((d - 1.0).abs() < tol, "same shape, one lower");
                }
                // The derivation's second condition: W_probe gains nothing over a cycle in
                // which c rises evenly from 0 to 1 (prose), one segment per RTT (printed).
                assert!(integral(w_max, alpha, Prose).abs() < 1e-6 * w_max.max(1.0));
                assert!((integral(w_max, alpha, Printed) - 1.0).abs() < 1e-6 * w_max.max(1.0));
            }
        }
        // Without a bandwidth estimate the prose reading adds nothing: Reno.
        assert_eq!(w_inc(0.0, 0.0, 10.0, Prose), 0.0);
        assert_eq!(w_inc(0.3, 0.0, 10.0, Prose), 0.0);
    }

    #[test]
    fn prose_reading_without_a_bandwidth_estimate_grows_like_reno() {
        let mut p = Params::new();
        p.insert("w_inc".into(), ParamValue::Str("prose".into()));
        let mut c = ctx(Growth::PerAck);
        c.initial_cwnd = 20 * MSS as u64;
        c.initial_ssthresh = c.initial_cwnd;
        let mut a = AReno::from_params(&c, &p).unwrap();
        sample(&mut a, 1, 100);
        let mut t = 10;
        round(&mut a, &mut t);
        let grown = a.w.cwnd_segments() - 20.0;
        let expect = expected_growth(20.0, 1.0, 20.0);
        assert!((grown - expect).abs() < 0.01, "{grown} vs {expect}");
    }

    fn with(name: &str, value: &str) -> AReno {
        let mut p = Params::new();
        p.insert(name.into(), ParamValue::Str(value.into()));
        let mut c = ctx(Growth::PerAck);
        c.initial_cwnd = 100 * MSS as u64;
        c.initial_ssthresh = c.initial_cwnd;
        AReno::from_params(&c, &p).unwrap()
    }

    /// Losses at RTT_min = 100 ms with RTT_j = 200, 120, 160, 140 ms: (RTT_cong, c) after each.
    fn rtt_cong_trail(a: &mut AReno) -> Vec<(f64, f64)> {
        sample(a, 1, 100);
        [200, 120, 160, 140]
            .iter()
            .enumerate()
            .map(|(k, &rtt)| {
                sample(a, 2 + k as u64, rtt);
                let v = a.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
                (a.rtt_cong().unwrap(), v.value)
            })
            .collect()
    }

    #[test]
    fn rtt_cong_updates_at_every_loss_by_default() {
        let mut a = with("rtt_cong_update", "every_loss");
        let got = rtt_cong_trail(&mut a);
        let mut cong = 0.2f64;
        let mut want = vec![(0.2, 1.0)];
        for rtt in [0.12f64, 0.16, 0.14] {
            cong = 0.85 * cong + 0.15 * rtt;
            want.push((cong, ((rtt - 0.1) / (cong - 0.1)).min(1.0)));
        }
        for (g, w) in got.iter().zip(&want) {
            assert!(close(g.0, w.0) && close(g.1, w.1), "{got:?} vs {want:?}");
        }
        // The default is the same.
        let mut d = areno_in_ca(100);
        assert_eq!(rtt_cong_trail(&mut d), got);
    }

    #[test]
    fn rtt_cong_updates_only_at_congestive_losses() {
        let mut a = with("rtt_cong_update", "congestive");
        let got = rtt_cong_trail(&mut a);
        // 200 ms: the first loss always sets RTT_cong. 120 ms: c = 0.2 < 1/2, not congestive,
        // RTT_cong stays. 160 ms: c = 0.6, congestive. 140 ms: c = 40/94 < 1/2 against
        // RTT_cong = 194 ms, not congestive.
        let c3 = 0.85 * 0.2 + 0.15 * 0.16;
        let want = [
            (0.2, 1.0),
            (0.2, 0.2),
            (c3, 0.06 / (c3 - 0.1)),
            (c3, 0.04 / (c3 - 0.1)),
        ];
        for (g, w) in got.iter().zip(&want) {
            assert!(close(g.0, w.0) && close(g.1, w.1), "{got:?} vs {want:?}");
        }
        // A first loss on an empty queue sets RTT_cong = RTT_min; then any queue is c = 1,
        // congestive, and RTT_cong moves up.
        let mut a = with("rtt_cong_update", "congestive");
        sample(&mut a, 1, 100);
        a.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        assert_eq!(a.rtt_cong(), Some(0.1));
        sample(&mut a, 2, 110);
        a.on_congestion(&event(CongestionKind::Timeout, Time::ZERO));
        assert!(close(a.rtt_cong().unwrap(), 0.85 * 0.1 + 0.15 * 0.11));
    }

    #[test]
    fn option_values_are_checked_and_named_in_the_error() {
        for (name, bad) in [("w_inc", "both"), ("rtt_cong_update", "sometimes")] {
            let mut p = Params::new();
            p.insert(name.into(), ParamValue::Str(bad.into()));
            let e = AReno::from_params(&ctx(Growth::PerAck), &p).unwrap_err();
            assert!(
                e.message.contains(&format!("areno.{name}")) && e.message.contains(bad),
                "{e}"
            );
            p.insert(name.into(), ParamValue::Num(1.0));
            let e = AReno::from_params(&ctx(Growth::PerAck), &p).unwrap_err();
            assert!(e.message.contains(&format!("areno.{name}")), "{e}");
        }
        let a = with("w_inc", "prose");
        assert_eq!(
            (a.reading, a.rtt_cong_update),
            (Prose, RttCongUpdate::EveryLoss)
        );
        let a = areno_in_ca(10);
        assert_eq!(
            (a.reading, a.rtt_cong_update),
            (Printed, RttCongUpdate::EveryLoss)
        );
    }
}
