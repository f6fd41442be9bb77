//! HighSpeed TCP (S. Floyd, RFC 3649, "HighSpeed TCP for Large Congestion Windows", 2003),
//! the comparison protocol of the Adaptive Reno paper.
//!
//! Standard TCP (a = 1, b = 1/2) while w <= Low_Window; above it, per ACK in congestion
//! avoidance `w <- w + a(w)/w` and at a congestion event `w <- (1 - b(w)) w`, with (RFC §7)
//! - `b(w) = (High_Decrease - 0.5) (log w - log Low_Window) / (log High_Window - log
//!   Low_Window) + 0.5`,
//! - `a(w) = w^2 p(w) 2 b(w) / (2 - b(w))`,
//! - `p(w)` the loss rate at which the HighSpeed response function gives window w:
//!   `response = "rfc"` uses the RFC's published inversion `p(w) = 0.078 / w^1.2`, which
//!   reproduces every row of its Appendix B table (and hence the tables of Linux and ns-3);
//!   `response = "exact"` derives it from the parameters,
//!   `p(w) = Low_P (w / Low_Window)^(1/S)`, `S = (log High_Window - log Low_Window) /
//!   (log High_P - log Low_P)`, which drifts from the table by up to 2.7 % at large w
//!   (a(84035) = 72.7 instead of 71).
//!
//! a(w) is never below 1 (just above Low_Window the formula gives 0.955 with the RFC's
//! rounded constants). Slow start is standard (RFC 3742's Limited Slow-Start is separate and
//! not implemented). Timeouts: ssthresh = (1 - b(w)) w as at fast retransmit (as Linux),
//! cwnd = 1; ECN: cwnd = ssthresh.

use super::classic::window_in_field;
use super::{AckSample, CcContext, CongestionEvent, CongestionKind, Verdict, WindowRule};
use super::{Growth, Window};
use crate::{ConfigError, ParamReader, Params};

/// The response-function parameters of RFC 3649.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Response {
    pub low_window: f64,
    pub high_window: f64,
    pub high_p: f64,
    pub low_p: f64,
    pub high_decrease: f64,
    /// Use the RFC's rounded p(w) = 0.078 / w^1.2 (valid for the default windows and rates).
    pub rfc_rounded: bool,
}

impl Default for Response {
    fn default() -> Self {
        Response {
            low_window: 38.0,
            high_window: 83_000.0,
            high_p: 1e-7,
            low_p: 1e-3,
            high_decrease: 0.1,
            rfc_rounded: true,
        }
    }
}

impl Response {
    /// Loss rate at which the HighSpeed response function gives an average window `w`.
    pub fn p(&self, w: f64) -> f64 {
        if self.rfc_rounded {
            return 0.078 / w.powf(1.2);
        }
        let s =
            (self.high_window.ln() - self.low_window.ln()) / (self.high_p.ln() - self.low_p.ln());
        self.low_p * (w / self.low_window).powf(1.0 / s)
    }

    /// Decrease parameter b(w).
    pub fn b(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 0.5;
        }
        (self.high_decrease - 0.5) * (w.ln() - self.low_window.ln())
            / (self.high_window.ln() - self.low_window.ln())
            + 0.5
    }

    /// Increase parameter a(w), segments per RTT (at least 1).
    pub fn a(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 1.0;
        }
        let b = self.b(w);
        (w * w * self.p(w) * 2.0 * b / (2.0 - b)).max(1.0)
    }
}

#[derive(Clone, Debug)]
pub struct HighSpeed {
    w: Window,
    r: Response,
}

impl HighSpeed {
    pub fn new(ctx: &CcContext, r: Response) -> Self {
        HighSpeed {
            w: Window::new(ctx.mss, ctx.initial_cwnd, ctx.initial_ssthresh, ctx.growth),
            r,
        }
    }

    /// Parameters (RFC 3649 defaults): `low_window` 38, `high_window` 83000, `high_p` 1e-7,
    /// `low_p` 1e-3, `high_decrease` 0.1, `response` "rfc" or "exact" (default "rfc"; "rfc"
    /// requires the default windows and loss rates).
    pub fn from_params(ctx: &CcContext, params: &Params) -> Result<Self, ConfigError> {
        let d = Response::default();
        let mut rd = ParamReader::new("highspeed", params);
        let r = Response {
            low_window: rd.num("low_window", d.low_window, 1.0, 1e9)?,
            high_window: rd.num("high_window", d.high_window, 1.0, 1e12)?,
            high_p: rd.num("high_p", d.high_p, 1e-30, 1.0)?,
            low_p: rd.num("low_p", d.low_p, 1e-30, 1.0)?,
            high_decrease: rd.num("high_decrease", d.high_decrease, 0.0, 0.5)?,
            rfc_rounded: rd.choice("response", "rfc", &["rfc", "exact"])? == "rfc",
        };
        rd.finish()?;
        if r.high_window <= r.low_window || r.high_p >= r.low_p {
            return Err(ConfigError::new(
                "highspeed: need high_window > low_window and high_p < low_p",
            ));
        }
        let defaults = (d.low_window, d.high_window, d.high_p, d.low_p);
        if r.rfc_rounded && (r.low_window, r.high_window, r.high_p, r.low_p) != defaults {
            return Err(ConfigError::new(
                "highspeed: response = \"rfc\" uses the RFC's p(w) = 0.078/w^1.2, valid only for \
                 low_window = 38, high_window = 83000, high_p = 1e-7, low_p = 1e-3; \
                 use response = \"exact\" with other values",
            ));
        }
        Ok(Self::new(ctx, r))
    }

    pub fn growth(&self) -> Growth {
        self.w.growth
    }
    pub fn response(&self) -> &Response {
        &self.r
    }
}

impl WindowRule for HighSpeed {
    const NAME: &'static str = "highspeed";
    window_in_field!(w);
    fn grow(&mut self, s: &AckSample) {
        let w = self.w.cwnd_segments();
        if self.w.in_slow_start() || w <= self.r.low_window {
            self.w.grow(s);
        } else {
            let k = self.w.ack_weight(s.acked_bytes);
            self.w.add_segments(k * self.r.a(w) / w);
        }
    }
    fn reduce(&mut self, ev: &CongestionEvent) -> Verdict {
        let w = self.w.cwnd_segments();
        let b = self.r.b(w);
        self.w.set_ssthresh(((1.0 - b) * self.w.cwnd as f64) as u64);
        match ev.kind {
            CongestionKind::FastRetransmit => {}
            CongestionKind::Timeout => self.w.set_cwnd(self.w.mss()),
            CongestionKind::Ecn => self.w.set_cwnd(self.w.ssthresh),
        }
        Verdict {
            label: if w <= self.r.low_window {
                "1/2"
            } else {
                "1-b(w)"
            },
            value: 1.0 - b,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::reno::Reno;
    use crate::cc::testutil::{ctx, event, AckBuilder, MSS};
    use crate::cc::CongestionControl;
    use crate::ParamValue;
    use crate::Time;

    /// RFC 3649 Appendix B, "Table 12: Parameters for HighSpeed TCP" (w, a(w), b(w)), for
    /// Low_Window = 38, High_Window = 83000, High_P = 10^-7, High_Decrease = 0.1: its first
    /// row, its middle (37th of 73) row, its last row, and a few others.
    const RFC3649_TABLE_12: [(f64, f64, f64); 6] = [
        (38.0, 1.0, 0.50),     // first row
        (118.0, 2.0, 0.44),    // second row
        (1058.0, 8.0, 0.33),   // 8th row
        (16137.0, 37.0, 0.19), // middle row
        (84035.0, 71.0, 0.10), // 71st row
        (94717.0, 73.0, 0.09), // last row
    ];

    #[test]
    fn a_and_b_agree_with_the_rfc_table() {
        let r = Response::default();
        for (w, a, b) in RFC3649_TABLE_12 {
            // The table prints a(w) rounded to an integer and b(w) to two decimals.
            assert_eq!(r.a(w).round(), a, "a({w}) = {}", r.a(w));
            assert!((r.b(w) - b).abs() <= 0.005, "b({w}) = {}", r.b(w));
        }
    }

    #[test]
    fn exact_response_meets_the_rfc_design_points_and_drifts_from_the_table() {
        let r = Response {
            rfc_rounded: false,
            ..Response::default()
        };
        // Design points: p(Low_Window) = Low_P, p(High_Window) = High_P, b(High_Window) =
        // High_Decrease; RFC §7: "Equation (2) then gives a(83000) = 72" (72.5 before
        // truncation).
        assert!((r.p(38.0) / 1e-3 - 1.0).abs() < 1e-12);
        assert!((r.p(83_000.0) / 1e-7 - 1.0).abs() < 1e-12);
        assert!((r.b(83_000.0) - 0.1).abs() < 1e-12);
        assert!((r.a(83_000.0) - 72.5).abs() < 0.05, "{}", r.a(83_000.0));
        // The table came from the RFC's rounded p(w) = 0.078/w^1.2: the exact derivation
        // gives 72.7 where the table says 71.
        assert!((r.a(84_035.0) - 72.74).abs() < 0.05);
        assert_eq!(r.a(1058.0).round(), 8.0);
    }

    fn hs(cwnd: u64) -> HighSpeed {
        let mut c = ctx(Growth::PerAck);
        c.initial_cwnd = cwnd * MSS as u64;
        c.initial_ssthresh = c.initial_cwnd;
        HighSpeed::new(&c, Response::default())
    }

    fn acks(cc: &mut dyn CongestionControl, n: u64) {
        for i in 0..n {
            cc.on_ack(&AckBuilder::at_ms(i).build());
        }
    }

    #[test]
    fn standard_tcp_up_to_low_window() {
        let mut h = hs(20);
        let mut c = ctx(Growth::PerAck);
        c.initial_cwnd = 20 * MSS as u64;
        c.initial_ssthresh = c.initial_cwnd;
        let mut r = Reno::new(&c);
        acks(&mut h, 300);
        acks(&mut r, 300);
        assert_eq!(h.cwnd(), r.cwnd());
        assert!(h.cwnd() < 38 * MSS as u64);
        let v = h.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        assert_eq!((v.label, v.value, h.ssthresh()), ("1/2", 0.5, h.cwnd() / 2));
    }

    #[test]
    fn above_low_window_grows_a_w_per_rtt_and_cuts_by_b_w() {
        let mut h = hs(1058);
        acks(&mut h, 1058);
        let grown = h.w.cwnd_segments() - 1058.0;
        assert!((grown - 8.0).abs() < 0.1, "a(1058) = 8.01 per RTT: {grown}");
        h.w.set_cwnd(1058 * MSS as u64);
        let v = h.on_congestion(&event(CongestionKind::FastRetransmit, Time::ZERO));
        let b = h.r.b(1058.0);
        assert_eq!(v.label, "1-b(w)");
        assert!((v.value - (1.0 - b)).abs() < 1e-12);
        assert_eq!(h.ssthresh(), ((1.0 - b) * 1_058_000.0) as u64);
        h.on_congestion(&event(CongestionKind::Timeout, Time::ZERO));
        assert_eq!(h.cwnd(), MSS as u64);
    }

    #[test]
    fn parameters() {
        let c = ctx(Growth::PerAck);
        let mut p = Params::new();
        p.insert("high_decrease".into(), ParamValue::Num(0.2));
        assert!(HighSpeed::from_params(&c, &p).is_ok());
        p.insert("high_window".into(), ParamValue::Num(100_000.0));
        assert!(
            HighSpeed::from_params(&c, &p).is_err(),
            "rounded p(w) needs defaults"
        );
        p.insert("response".into(), ParamValue::Str("exact".into()));
        assert!(HighSpeed::from_params(&c, &p).is_ok());
        p.insert("low_window".into(), ParamValue::Num(200_000.0));
        assert!(HighSpeed::from_params(&c, &p).is_err());
        let mut p = Params::new();
        p.insert("a".into(), ParamValue::Num(1.0));
        assert!(HighSpeed::from_params(&c, &p).is_err());
    }
}
