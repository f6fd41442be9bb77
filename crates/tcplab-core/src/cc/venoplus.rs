//! TCP Venoplus ("TCP Venoplus", wired-cum-wireless with cross-layer RSSI; digest §5,
//! `/work/shared/papers/venoplus.txt` §3).
//!
//! Venoplus keeps Veno's window growth (paper flavor, see [`super::veno`]) and replaces its
//! loss classification. The ACK stream is cut into observation windows of `window` delivered
//! packets; window i ends at time T_i. Per window the sender has
//! - C_i, congestion losses: loss signals it detected itself (fast retransmits and timeouts)
//!   in the window — with `congestion_losses = "net"` (default), those no reported random
//!   loss explains: a report explains the first signal after it while the segment it
//!   reports is still unacknowledged, whichever window that signal falls in (the MAC
//!   reports at the drop, the sender signals about an RTT later); a report that names no
//!   segment explains signals of its own window only. With `"all"`, every loss signal, as
//!   the paper's sentence literally says;
//! - R_i, random losses: frames the lossy hop's MAC dropped for low signal strength, reported
//!   through the explicit cross-layer channel ([`CrossLayerReport`]);
//! - rates conw_i = C_i / (T_i - T_{i-1}) and ranl_i = R_i / (T_i - T_{i-1}), each smoothed
//!   by an EWMA (`gain` = weight of the newest window).
//!
//! At a fast retransmit the current, unfinished window is evaluated as if it ended now
//! (its losses so far, including this one, over the time since T_{i-1}) and its smoothed
//! rates compared with those of the last finished window:
//! - conw up (whatever ranl does) → ssthresh = cwnd/2 ("1/2");
//! - conw not up, ranl up → ssthresh = cwnd 4/5 ("4/5", random loss);
//! - neither up → ssthresh = cwnd ("keep", value 1: no reduction).
//!   "Up" is strictly greater; before any window finished the previous rates are 0.
//!
//! Timeouts: Reno (ssthresh = cwnd/2, cwnd = 1), as in Veno; they still count as loss
//! signals. ECN: Reno, not counted. BaseRTT is forgotten at every loss, as in Veno.

use super::filter::Ewma;
use super::reno::reno_reduction;
use super::veno::{Flavor, Veno};
use super::{AckSample, CcContext, CongestionEvent, CongestionKind, WindowRule};
use super::{CongestionControl, CrossLayerReport, Growth, Verdict, Window};
use crate::{ConfigError, ParamReader, Params, Seq, Time};
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct Venoplus {
    veno: Veno,
    window_pkts: u64,
    net: bool,
    /// Start of the current observation window (T_{i-1}) and bytes delivered then.
    start: Option<(Time, u64)>,
    /// C_i so far: the window's loss signals that no report explained ("net"), or all.
    congestion: u32,
    /// R_i so far: random losses reported during the window.
    random: u32,
    /// Reported dropped segments (first bytes, in report order) that no signal has matched
    /// yet and the cumulative ACK has not passed ("net" only).
    unmatched: VecDeque<Seq>,
    /// Reports naming no segment, not matched yet: they expire with their window.
    unmatched_counts: u32,
    conw: Ewma,
    ranl: Ewma,
}

impl Venoplus {
    pub fn new(ctx: &CcContext, beta: f64, window_pkts: u64, gain: f64, net: bool) -> Self {
        Venoplus {
            veno: Veno::new(ctx, Flavor::Paper, beta),
            window_pkts: window_pkts.max(1),
            net,
            start: None,
            congestion: 0,
            random: 0,
            unmatched: VecDeque::new(),
            unmatched_counts: 0,
            conw: Ewma::new(gain),
            ranl: Ewma::new(gain),
        }
    }

    /// Parameters: `window` (packets per observation window, default 100), `gain` (EWMA
    /// weight of the newest window, default 0.125), `beta` (Veno's backlog threshold for
    /// the growth rule, default 3), `congestion_losses` ("net" or "all", default "net").
    pub fn from_params(ctx: &CcContext, params: &Params) -> Result<Self, ConfigError> {
        let mut r = ParamReader::new("venoplus", params);
        let window = r.num("window", 100.0, 1.0, 1e9)?;
        let gain = r.num("gain", 0.125, 1e-6, 1.0)?;
        let beta = r.num("beta", 3.0, 0.0, 1e6)?;
        let net = r.choice("congestion_losses", "net", &["net", "all"])? == "net";
        r.finish()?;
        Ok(Self::new(ctx, beta, window.round() as u64, gain, net))
    }

    pub fn growth(&self) -> Growth {
        self.veno.growth()
    }

    /// A loss signal: a congestion loss unless ("net") a reported random loss explains it,
    /// the oldest report still unmatched.
    fn count_signal(&mut self) {
        if self.net {
            if self.unmatched.pop_front().is_some() {
                return;
            }
            if self.unmatched_counts > 0 {
                self.unmatched_counts -= 1;
                return;
            }
        }
        self.congestion += 1;
    }

    /// Smoothed rates (per second) of the last finished window, 0 before the first.
    pub fn rates(&self) -> (f64, f64) {
        (
            self.conw.get().unwrap_or(0.0),
            self.ranl.get().unwrap_or(0.0),
        )
    }

    /// (conw up, ranl up) for the unfinished window evaluated at `now`.
    fn trends(&self, now: Time) -> (bool, bool) {
        let elapsed = self
            .start
            .map_or(0.0, |(t, _)| now.saturating_since(t).as_secs_f64());
        let rate = |n: u32| match (n, elapsed > 0.0) {
            (0, _) => 0.0,
            (n, true) => n as f64 / elapsed,
            (_, false) => f64::INFINITY,
        };
        let (conw_prev, ranl_prev) = self.rates();
        let conw_now = self.conw.peek(rate(self.congestion));
        let ranl_now = self.ranl.peek(rate(self.random));
        (conw_now > conw_prev, ranl_now > ranl_prev)
    }

    fn decide(&mut self, now: Time) -> Verdict {
        let (conw_up, ranl_up) = self.trends(now);
        let w = self.veno.window_mut();
        let (label, value, target) = match (conw_up, ranl_up) {
            (true, _) => ("1/2", 0.5, w.cwnd / 2),
            (false, true) => ("4/5", 0.8, w.cwnd * 4 / 5),
            (false, false) => ("keep", 1.0, w.cwnd),
        };
        w.set_ssthresh(target);
        Verdict { label, value }
    }
}

impl WindowRule for Venoplus {
    const NAME: &'static str = "venoplus";
    fn window(&self) -> &Window {
        self.veno.window()
    }
    fn window_mut(&mut self) -> &mut Window {
        self.veno.window_mut()
    }
    fn sample(&mut self, s: &AckSample) {
        self.veno.observe(s);
        // a reported segment the cumulative ACK passed was repaired in another signal's
        // recovery: no signal of its own will come
        if !self.unmatched.is_empty() {
            self.unmatched.retain(|&q| q >= s.snd_una);
        }
        let Some((t0, d0)) = self.start else {
            self.start = Some((s.now, s.delivered));
            return;
        };
        if s.delivered.saturating_sub(d0) >= self.window_pkts * s.mss as u64 {
            let elapsed = s.now.saturating_since(t0).as_secs_f64();
            if elapsed > 0.0 {
                self.conw.update(self.congestion as f64 / elapsed);
                self.ranl.update(self.random as f64 / elapsed);
                self.congestion = 0;
                self.random = 0;
                self.unmatched_counts = 0;
                self.start = Some((s.now, s.delivered));
            }
        }
    }
    fn grow(&mut self, s: &AckSample) {
        self.veno.on_ack(s);
    }
    fn reduce(&mut self, ev: &CongestionEvent) -> Verdict {
        if ev.kind == CongestionKind::Ecn {
            return reno_reduction(self.veno.window_mut(), ev);
        }
        self.count_signal();
        self.veno.estimator_mut().on_loss();
        match ev.kind {
            CongestionKind::FastRetransmit => self.decide(ev.now),
            _ => reno_reduction(self.veno.window_mut(), ev),
        }
    }
    fn cross_layer(&mut self, report: &CrossLayerReport) {
        self.random = self.random.saturating_add(report.random_losses);
        if self.net {
            match report.lost {
                Some(seq) if report.random_losses == 1 => self.unmatched.push_back(seq),
                _ => {
                    self.unmatched_counts =
                        self.unmatched_counts.saturating_add(report.random_losses)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::{ctx, event, AckBuilder, MSS};
    use crate::cc::CongestionControl;
    use crate::ParamValue;

    /// A Venoplus at 20 segments in congestion avoidance, windows of 10 packets.
    fn vp(net: bool) -> Venoplus {
        let mut c = ctx(Growth::PerAck);
        c.initial_cwnd = 20 * MSS as u64;
        c.initial_ssthresh = c.initial_cwnd;
        Venoplus::new(&c, 3.0, 10, 0.5, net)
    }

    /// Delivers `pkts` packets, one per `gap_ms`, from time `*t` on; `*d` counts bytes.
    fn deliver(v: &mut Venoplus, t: &mut u64, d: &mut u64, pkts: u64, gap_ms: u64) {
        for _ in 0..pkts {
            *t += gap_ms;
            *d += MSS as u64;
            let a = AckBuilder::at_ms(*t)
                .rtt_ms(100)
                .delivered(*d)
                .seq(*d, *d)
                .build();
            v.observe(&a);
            v.on_ack(&a);
        }
    }

    fn report(v: &mut Venoplus, t: u64, n: u32) {
        v.on_cross_layer(&CrossLayerReport {
            now: Time::from_millis(t),
            random_losses: n,
            lost: None,
        });
    }

    /// A report of the one data segment starting at byte `seq`.
    fn report_segment(v: &mut Venoplus, t: u64, seq: u64) {
        v.on_cross_layer(&CrossLayerReport {
            now: Time::from_millis(t),
            random_losses: 1,
            lost: Some(Seq(seq)),
        });
    }

    fn fast_retransmit(v: &mut Venoplus, t: u64) -> Verdict {
        v.on_congestion(&event(CongestionKind::FastRetransmit, Time::from_millis(t)))
    }

    #[test]
    fn windows_of_packets_give_smoothed_loss_rates() {
        let mut v = vp(true);
        let (mut t, mut d) = (0, 0);
        deliver(&mut v, &mut t, &mut d, 1, 10); // opens the first window at 10 ms
        report(&mut v, t, 2);
        v.on_congestion(&event(CongestionKind::Timeout, Time::from_millis(t)));
        v.on_congestion(&event(CongestionKind::Timeout, Time::from_millis(t)));
        v.on_congestion(&event(CongestionKind::Timeout, Time::from_millis(t)));
        deliver(&mut v, &mut t, &mut d, 10, 100); // closes it after 1 s
                                                  // C = 3 signals - 2 random = 1 per second, R = 2 per second.
        assert_eq!(v.rates(), (1.0, 2.0));
        deliver(&mut v, &mut t, &mut d, 10, 100); // a clean second: halve toward 0 (gain 1/2)
        assert_eq!(v.rates(), (0.5, 1.0));
    }

    #[test]
    fn congestion_and_random_losses_rising_halve() {
        let mut v = vp(true);
        let (mut t, mut d) = (0, 0);
        deliver(&mut v, &mut t, &mut d, 25, 10);
        report(&mut v, t, 1);
        v.on_congestion(&event(CongestionKind::Timeout, Time::from_millis(t)));
        v.veno.window_mut().set_cwnd(20 * MSS as u64);
        // This loss and the timeout: 2 signals, 1 random: C = 1, R = 1, both up.
        let verdict = fast_retransmit(&mut v, t);
        assert_eq!((verdict.label, v.ssthresh()), ("1/2", 10 * MSS as u64));
    }

    #[test]
    fn random_losses_rising_alone_cut_by_a_fifth() {
        let mut v = vp(true);
        let (mut t, mut d) = (0, 0);
        deliver(&mut v, &mut t, &mut d, 25, 10);
        report(&mut v, t, 1);
        // One signal, one random loss reported: C = 0, R = 1.
        let verdict = fast_retransmit(&mut v, t);
        assert_eq!((verdict.label, verdict.value), ("4/5", 0.8));
        assert_eq!(v.ssthresh(), v.cwnd() * 4 / 5);
        // Counting every loss signal as congestion (the paper's literal C_i) halves.
        let mut v = vp(false);
        let (mut t, mut d) = (0, 0);
        deliver(&mut v, &mut t, &mut d, 25, 10);
        report(&mut v, t, 1);
        assert_eq!(fast_retransmit(&mut v, t).label, "1/2");
    }

    #[test]
    fn congestion_losses_rising_alone_halve() {
        let mut v = vp(true);
        let (mut t, mut d) = (0, 0);
        deliver(&mut v, &mut t, &mut d, 25, 10);
        // No report: C = 1, R = 0.
        let verdict = fast_retransmit(&mut v, t);
        assert_eq!((verdict.label, v.ssthresh()), ("1/2", v.cwnd() / 2));
    }

    #[test]
    fn neither_rising_keeps_the_window() {
        let mut v = vp(true);
        let (mut t, mut d) = (0, 0);
        deliver(&mut v, &mut t, &mut d, 1, 10);
        // A bad first window: 10 signals of which 5 random, in 100 ms.
        report(&mut v, t, 5);
        for _ in 0..10 {
            v.on_congestion(&event(CongestionKind::Timeout, Time::from_millis(t)));
        }
        deliver(&mut v, &mut t, &mut d, 10, 10);
        assert_eq!(v.rates(), (50.0, 50.0));
        // A calm window: 2 s in, one congestion and one random loss: 0.5/s each.
        v.veno.window_mut().set_cwnd(20 * MSS as u64);
        deliver(&mut v, &mut t, &mut d, 2, 1000);
        report(&mut v, t, 1);
        v.on_congestion(&event(CongestionKind::Timeout, Time::from_millis(t)));
        v.veno.window_mut().set_cwnd(20 * MSS as u64);
        let verdict = fast_retransmit(&mut v, t);
        assert_eq!((verdict.label, verdict.value), ("keep", 1.0));
        assert_eq!(v.ssthresh(), 20 * MSS as u64);
    }

    #[test]
    fn a_report_explains_its_signal_across_a_window_boundary() {
        // The hop drops the segment 5 packets above the cumulative ACK and reports it at
        // once; the 5 packets before it are ACKed, which closes the window (packet 31), and
        // the duplicate ACKs signal the loss in the next window.
        for net in [true, false] {
            let mut v = vp(net);
            let (mut t, mut d) = (0, 0);
            deliver(&mut v, &mut t, &mut d, 26, 10); // windows close at packets 11, 21, 31
            report_segment(&mut v, t, d + 5 * MSS as u64);
            deliver(&mut v, &mut t, &mut d, 5, 10);
            let (conw_before, _) = v.rates();
            let verdict = fast_retransmit(&mut v, t + 1);
            if net {
                // explained: no congestion loss in either window, conw not up; ranl fell
                // back from the report's window: keep
                assert_eq!(conw_before, 0.0);
                assert_eq!((verdict.label, v.congestion), ("keep", 0));
            } else {
                assert_eq!((verdict.label, v.congestion), ("1/2", 1));
            }
        }
    }

    #[test]
    fn a_report_whose_segment_was_acked_explains_nothing() {
        // The reported segment is repaired without a signal of its own (the cumulative ACK
        // passes it): a later loss signal is a congestion loss.
        let mut v = vp(true);
        let (mut t, mut d) = (0, 0);
        deliver(&mut v, &mut t, &mut d, 25, 10);
        report_segment(&mut v, t, d + MSS as u64);
        deliver(&mut v, &mut t, &mut d, 3, 10);
        assert!(v.unmatched.is_empty());
        let verdict = fast_retransmit(&mut v, t + 1);
        assert_eq!((verdict.label, v.congestion), ("1/2", 1));
        // while a report naming no segment explains a signal of its own window
        let mut v = vp(true);
        let (mut t, mut d) = (0, 0);
        deliver(&mut v, &mut t, &mut d, 25, 10);
        report(&mut v, t, 1);
        deliver(&mut v, &mut t, &mut d, 3, 10);
        assert_eq!(fast_retransmit(&mut v, t + 1).label, "4/5");
        // and only there
        let mut v = vp(true);
        let (mut t, mut d) = (0, 0);
        deliver(&mut v, &mut t, &mut d, 25, 10);
        report(&mut v, t, 1);
        deliver(&mut v, &mut t, &mut d, 6, 10);
        assert_eq!(fast_retransmit(&mut v, t + 1).label, "1/2");
    }

    #[test]
    fn timeouts_are_reno_and_growth_is_veno() {
        let mut v = vp(true);
        let verdict = v.on_congestion(&event(CongestionKind::Timeout, Time::ZERO));
        assert_eq!((verdict.label, v.cwnd()), ("1/2", MSS as u64));
        assert_eq!(v.ssthresh(), 10 * MSS as u64);
    }

    #[test]
    fn parameters() {
        let mut p = Params::new();
        p.insert("window".into(), ParamValue::Num(50.0));
        p.insert("gain".into(), ParamValue::Num(0.25));
        p.insert("congestion_losses".into(), ParamValue::Str("all".into()));
        let v = Venoplus::from_params(&ctx(Growth::PerAck), &p).unwrap();
        assert_eq!((v.window_pkts, v.net), (50, false));
        p.insert("flavor".into(), ParamValue::Str("linux".into()));
        assert!(Venoplus::from_params(&ctx(Growth::PerAck), &p).is_err());
    }
}
