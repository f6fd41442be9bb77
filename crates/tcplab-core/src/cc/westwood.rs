//! TCP Westwood+ (Mascolo, Casetti, Gerla, Sanadidi, Wang, "TCP Westwood: bandwidth
//! estimation for enhanced transport over wireless links", MobiCom 2001; Westwood+: Grieco &
//! Mascolo, "Performance evaluation and comparison of Westwood+, New Reno, and Vegas TCP
//! congestion control", CCR 34(2), 2004). Linux: net/ipv4/tcp_westwood.c.
//!
//! Growth is Reno's. The sender estimates the rate at which its data is delivered from the
//! ACK stream ([`BandwidthEstimator`]: bytes acknowledged per RTT-long interval, duplicate
//! ACKs counting one MSS, EWMA 7/8 old + 1/8 sample) and, after a loss, sets the window to
//! what that rate needs on an empty path: `ssthresh = min(BWE × RTT_min, cwnd)` (at least
//! 2 MSS), where RTT_min is the smallest RTT sample since the last timeout.
//! - Fast retransmit: ssthresh = BWE·RTT_min, capped at cwnd at the loss (Westwood's
//!   "if cwnd > ssthresh then cwnd = ssthresh": the estimate never raises the window; the
//!   recovery strategies take ssthresh (+3 MSS) as their recovery window, so an uncapped
//!   lagging estimate would release a burst at a loss); at the end of recovery cwnd =
//!   ssthresh (the recovery strategy's proposal), never more than cwnd was at the loss.
//! - Timeout: ssthresh = BWE·RTT_min (capped likewise), cwnd = 1, and RTT_min restarts from
//!   the next sample (Linux tcp_westwood.c: `reset_rtt_min` at CA_EVENT_LOSS), since a
//!   timeout may mean the path changed.
//! - ECN: ssthresh = BWE·RTT_min, cwnd = min(cwnd, ssthresh).
//! - Before the first estimate (a loss within the first RTT), Reno's cwnd/2.

use super::bandwidth::BandwidthEstimator;
use super::classic::window_in_field;
use super::filter::MinFilter;
use super::{AckSample, CcContext, CongestionEvent, CongestionKind, Verdict, WindowRule};
use super::{Growth, Window};
use crate::{ConfigError, Dur, ParamReader, Params, Time};

#[derive(Clone, Debug)]
pub struct Westwood {
    w: Window,
    bwe: BandwidthEstimator,
    rtt_min: MinFilter,
    cwnd_at_loss: Option<u64>,
    /// The next RTT sample replaces RTT_min (set at a timeout).
    reset_rtt_min: bool,
}

impl Westwood {
    pub fn new(ctx: &CcContext, bwe: BandwidthEstimator) -> Self {
        Westwood {
            w: Window::new(ctx.mss, ctx.initial_cwnd, ctx.initial_ssthresh, ctx.growth),
            bwe,
            rtt_min: MinFilter::new(),
            cwnd_at_loss: None,
            reset_rtt_min: false,
        }
    }

    /// Parameters: `gain` (weight of a new bandwidth sample, default 1/8) and
    /// `min_interval_ms` (shortest sampling interval, default 50 ms as in Linux).
    pub fn from_params(ctx: &CcContext, params: &Params) -> Result<Self, ConfigError> {
        let mut r = ParamReader::new("westwood", params);
        let bwe = read_estimator(&mut r)?;
        r.finish()?;
        Ok(Self::new(ctx, bwe))
    }

    pub fn growth(&self) -> Growth {
        self.w.growth
    }
    /// Bandwidth estimate in bytes per second.
    pub fn bandwidth(&self) -> Option<f64> {
        self.bwe.estimate()
    }

    /// BWE × RTT_min in bytes, if both are known.
    fn bdp(&self) -> Option<u64> {
        let rtt = self.rtt_min.get()?.as_secs_f64();
        Some((self.bwe.estimate()? * rtt) as u64)
    }
}

/// The estimator parameters shared by `westwood` and `areno`.
pub(crate) fn read_estimator(r: &mut ParamReader) -> Result<BandwidthEstimator, ConfigError> {
    let gain = r.num("gain", 0.125, 1e-6, 1.0)?;
    let min_ms = r.num("min_interval_ms", 50.0, 0.0, 1e6)?;
    Ok(BandwidthEstimator::new(
        gain,
        Dur::from_secs_f64(min_ms / 1000.0),
    ))
}

impl WindowRule for Westwood {
    const NAME: &'static str = "westwood";
    window_in_field!(w);
    fn sample(&mut self, s: &AckSample) {
        if self.reset_rtt_min && s.rtt.is_some() {
            self.rtt_min.reset();
            self.reset_rtt_min = false;
        }
        self.rtt_min.update_opt(s.rtt);
        self.bwe.on_ack(s);
    }
    fn grow(&mut self, s: &AckSample) {
        self.w.grow(s);
    }
    fn reduce(&mut self, ev: &CongestionEvent) -> Verdict {
        let cwnd = self.w.cwnd;
        let verdict = match self.bdp() {
            Some(bdp) => {
                self.w.set_ssthresh(bdp.min(cwnd));
                Verdict {
                    label: "bwe",
                    value: self.w.ssthresh as f64 / cwnd as f64,
                }
            }
            None => {
                self.w.set_ssthresh(cwnd / 2);
                Verdict {
                    label: "1/2",
                    value: 0.5,
                }
            }
        };
        match ev.kind {
            CongestionKind::FastRetransmit => self.cwnd_at_loss = Some(cwnd),
            CongestionKind::Timeout => {
                // A timeout abandons any recovery in progress.
                self.cwnd_at_loss = None;
                self.reset_rtt_min = true;
                self.w.set_cwnd(self.w.mss());
            }
            CongestionKind::Ecn => self.w.set_cwnd(cwnd.min(self.w.ssthresh)),
        }
        verdict
    }
    fn recovery_exit(&mut self, _now: Time, cwnd: u64) {
        let cap = self.cwnd_at_loss.take().unwrap_or(u64::MAX);
        self.w.set_cwnd(cwnd.min(cap));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::{ctx, event, AckBuilder, MSS};
    use crate::cc::CongestionControl;
    use crate::ParamValue;

    /// `n` ACKs of one MSS each, `gap_us` apart: a constant delivery rate.
    fn stream(w: &mut Westwood, t_us: &mut u64, n: u32, gap_us: u64, rtt_ms: u64) {
        for _ in 0..n {
            *t_us += gap_us;
            let a = AckBuilder::at_us(*t_us).rtt_ms(rtt_ms).build();
            w.observe(&a);
            w.on_ack(&a);
        }
    }

    fn westwood() -> Westwood {
        Westwood::from_params(&ctx(Growth::PerAck), &Params::new()).unwrap()
    }

    #[test]
    fn after_fast_retransmit_the_window_is_bandwidth_times_min_rtt() {
        let mut w = westwood();
        let mut t = 0;
        // 1000 bytes per ms = 1 MB/s, RTT_min 100 ms: BDP 100 kB = 100 segments.
        stream(&mut w, &mut t, 3000, 1000, 100);
        let bw = w.bandwidth().unwrap();
        assert!((bw / 1e6 - 1.0).abs() < 0.02, "{bw}");
        w.w.set_cwnd(150 * MSS as u64);
        let v = w.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        let ss = w.ssthresh() as f64 / MSS as f64;
        assert!((ss - 100.0).abs() < 2.0, "ssthresh {ss} segments");
        assert_eq!(v.label, "bwe");
        assert!((v.value - ss / 150.0).abs() < 1e-9);
        w.on_recovery_exit(Time::ZERO, w.ssthresh());
        assert_eq!(w.cwnd(), w.ssthresh());
    }

    #[test]
    fn the_estimate_never_raises_the_window_at_recovery_exit() {
        let mut w = westwood();
        let mut t = 0;
        stream(&mut w, &mut t, 3000, 1000, 100);
        w.w.set_cwnd(50 * MSS as u64);
        w.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        // The estimate says 100 segments; ssthresh (the recovery window's base) is capped at
        // the 50 the window held at the loss.
        assert_eq!(w.ssthresh(), 50 * MSS as u64);
        w.on_recovery_exit(Time::ZERO, w.ssthresh());
        assert_eq!(w.cwnd(), 50 * MSS as u64);
    }

    #[test]
    fn rtt_min_restarts_after_a_timeout() {
        let mut w = westwood();
        let mut t = 0;
        stream(&mut w, &mut t, 3000, 1000, 100); // 1 MB/s, RTT_min 100 ms
        w.on_congestion(&event(CongestionKind::Timeout, Time::ZERO));
        // The path now has 200 ms: RTT_min follows, so BWE·RTT_min doubles.
        stream(&mut w, &mut t, 3000, 1000, 200);
        w.w.set_cwnd(1000 * MSS as u64);
        w.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        let ss = w.ssthresh() as f64 / MSS as f64;
        assert!(
            (ss - 200.0).abs() < 4.0,
            "ssthresh {ss} segments, expected ~200"
        );
    }

    #[test]
    fn timeout_sets_ssthresh_from_the_estimate_and_cwnd_to_one() {
        let mut w = westwood();
        let mut t = 0;
        stream(&mut w, &mut t, 3000, 2000, 100); // 0.5 MB/s: 50 segments
        let v = w.on_congestion(&event(CongestionKind::Timeout, Time::ZERO));
        assert_eq!((v.label, w.cwnd()), ("bwe", MSS as u64));
        assert!((w.ssthresh() as f64 / MSS as f64 - 50.0).abs() < 1.0);
    }

    #[test]
    fn floor_of_two_segments_and_reno_before_any_estimate() {
        let mut w = westwood();
        w.w.set_cwnd(40 * MSS as u64);
        let v = w.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        assert_eq!((v.label, w.ssthresh()), ("1/2", 20 * MSS as u64));
        let mut t = 0;
        stream(&mut w, &mut t, 2000, 100_000, 1); // 10 kB/s × 1 ms = 10 bytes
        w.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        assert_eq!(w.ssthresh(), 2 * MSS as u64);
    }

    #[test]
    fn parameters() {
        let mut p = Params::new();
        p.insert("gain".into(), ParamValue::Num(0.25));
        p.insert("min_interval_ms".into(), ParamValue::Num(0.0));
        assert!(Westwood::from_params(&ctx(Growth::PerAck), &p).is_ok());
        p.insert("alpha".into(), ParamValue::Num(1.0));
        assert!(Westwood::from_params(&ctx(Growth::PerAck), &p).is_err());
    }
}
