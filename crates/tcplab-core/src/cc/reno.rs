//! Reno (RFC 5681) window rules: slow start, additive increase, halve at fast retransmit,
//! one segment after a timeout.

use super::classic::window_in_field;
use super::{AckSample, CcContext, CongestionEvent, CongestionKind, Verdict, WindowRule};
use super::{Growth, Window};
use crate::{ConfigError, ParamReader, Params};

#[derive(Clone, Debug)]
pub struct Reno {
    w: Window,
}

impl Reno {
    pub fn new(ctx: &CcContext) -> Self {
        Reno {
            w: Window::new(ctx.mss, ctx.initial_cwnd, ctx.initial_ssthresh, ctx.growth),
        }
    }

    /// Reno has no parameters of its own.
    pub fn from_params(ctx: &CcContext, params: &Params) -> Result<Self, ConfigError> {
        ParamReader::new("reno", params).finish()?;
        Ok(Self::new(ctx))
    }

    pub fn growth(&self) -> Growth {
        self.w.growth
    }
}

/// The Reno reduction, shared by controllers that fall back to it: ssthresh = cwnd/2 (as BSD
/// and Linux; RFC 5681 says FlightSize/2, which is the same unless the sender was limited by
/// the application or the receive window); after a timeout cwnd = 1 MSS, after ECN cwnd =
/// ssthresh.
pub fn reno_reduction(w: &mut Window, ev: &CongestionEvent) -> Verdict {
    w.set_ssthresh(w.cwnd / 2);
    match ev.kind {
        CongestionKind::Timeout => w.set_cwnd(w.mss()),
        CongestionKind::Ecn => w.set_cwnd(w.ssthresh),
        CongestionKind::FastRetransmit => {}
    }
    Verdict {
        label: "1/2",
        value: 0.5,
    }
}

impl WindowRule for Reno {
    const NAME: &'static str = "reno";
    window_in_field!(w);
    fn grow(&mut self, s: &AckSample) {
        self.w.grow(s);
    }
    fn reduce(&mut self, ev: &CongestionEvent) -> Verdict {
        reno_reduction(&mut self.w, ev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::{self, AckBuilder};
    use crate::cc::CongestionControl;
    use crate::Time;

    fn ctx() -> CcContext {
        testutil::ctx(Growth::PerAck)
    }

    fn ev(kind: CongestionKind) -> CongestionEvent {
        testutil::event(kind, Time::ZERO)
    }

    fn ack() -> AckSample {
        AckBuilder::at(Time::ZERO).build()
    }

    #[test]
    fn halves_on_fast_retransmit_and_resets_on_timeout() {
        let mut r = Reno::new(&ctx());
        for _ in 0..8 {
            r.on_ack(&ack());
        }
        assert_eq!(r.cwnd(), 10_000);
        let v = r.on_congestion(&ev(CongestionKind::FastRetransmit));
        assert_eq!((r.ssthresh(), v.label), (5000, "1/2"));
        r.on_recovery_exit(Time::ZERO, r.ssthresh());
        assert_eq!(r.cwnd(), 5000);
        r.on_congestion(&ev(CongestionKind::Timeout));
        assert_eq!((r.cwnd(), r.ssthresh()), (1000, 2500));
    }

    #[test]
    fn rejects_parameters() {
        let mut p = Params::new();
        p.insert("beta".into(), crate::ParamValue::Num(1.0));
        assert!(Reno::from_params(&ctx(), &p).is_err());
    }
}
