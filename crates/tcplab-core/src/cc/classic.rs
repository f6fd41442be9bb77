//! The classic skeleton most controllers share (neqo's `ClassicCongestionController` as the
//! model): a [`Window`] with cwnd and ssthresh, grown on ACKs and reduced at congestion
//! signals, with Reno's answers to the end of recovery, an undo and a repeated timeout.
//!
//! A controller implements [`WindowRule`] — its name, how it grows and how it reduces — and
//! overrides a hook only where it differs; every `WindowRule` is a `CongestionControl`
//! through the blanket impl below (static dispatch: nothing is added per ACK).

use super::{AckSample, CongestionControl, CongestionEvent, CrossLayerReport, Verdict, Window};
use crate::Time;

/// The parts of a classic controller that differ from Reno's skeleton.
pub trait WindowRule: Send {
    /// Registry name, e.g. "reno".
    const NAME: &'static str;
    /// The window the skeleton reads cwnd and ssthresh from.
    fn window(&self) -> &Window;
    fn window_mut(&mut self) -> &mut Window;
    /// `CongestionControl::observe`: every ACK, before anything else; must not grow.
    fn sample(&mut self, _s: &AckSample) {}
    /// `CongestionControl::on_ack`: grow the window.
    fn grow(&mut self, s: &AckSample);
    /// `CongestionControl::on_congestion`: reduce the window and say why.
    fn reduce(&mut self, ev: &CongestionEvent) -> Verdict;
    /// `CongestionControl::on_recovery_exit`: cwnd becomes what recovery proposes.
    fn recovery_exit(&mut self, _now: Time, cwnd: u64) {
        self.window_mut().set_cwnd(cwnd);
    }
    /// `CongestionControl::on_repeated_timeout`: one segment, estimates held.
    fn repeated_timeout(&mut self, _now: Time) {
        let w = self.window_mut();
        w.set_cwnd(w.mss());
    }
    /// `CongestionControl::on_undo`: Linux's `tcp_reno_undo_cwnd`.
    fn undo(&mut self, _now: Time, prior_cwnd: u64, prior_ssthresh: u64) {
        self.window_mut().undo(prior_cwnd, prior_ssthresh);
    }
    /// `CongestionControl::on_cross_layer`.
    fn cross_layer(&mut self, _report: &CrossLayerReport) {}
}

/// `window`/`window_mut` of a [`WindowRule`] that keeps its window in the field `$f`.
macro_rules! window_in_field {
    ($f:ident) => {
        fn window(&self) -> &$crate::cc::Window {
            &self.$f
        }
        fn window_mut(&mut self) -> &mut $crate::cc::Window {
            &mut self.$f
        }
    };
}
pub(crate) use window_in_field;

impl<R: WindowRule> CongestionControl for R {
    fn name(&self) -> &'static str {
        R::NAME
    }
    #[inline]
    fn cwnd(&self) -> u64 {
        self.window().cwnd
    }
    #[inline]
    fn ssthresh(&self) -> u64 {
        self.window().ssthresh
    }
    fn observe(&mut self, s: &AckSample) {
        self.sample(s);
    }
    fn on_ack(&mut self, s: &AckSample) {
        self.grow(s);
    }
    fn on_congestion(&mut self, ev: &CongestionEvent) -> Verdict {
        self.reduce(ev)
    }
    fn on_repeated_timeout(&mut self, now: Time) {
        self.repeated_timeout(now);
    }
    fn on_recovery_exit(&mut self, now: Time, cwnd: u64) {
        self.recovery_exit(now, cwnd);
    }
    fn on_undo(&mut self, now: Time, prior_cwnd: u64, prior_ssthresh: u64) {
        self.undo(now, prior_cwnd, prior_ssthresh);
    }
    fn on_cross_layer(&mut self, report: &CrossLayerReport) {
        self.cross_layer(report);
    }
}
