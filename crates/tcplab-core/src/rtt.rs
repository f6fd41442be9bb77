//! RTT estimation and retransmission timeout (RFC 6298, or Linux's variant), with exponential
//! backoff and the smallest sample seen (a windowless min filter; controllers keep their own
//! when they need another window).
//!
//! Linux mode (`RtoMode::Linux`, net/ipv4/tcp_input.c tcp_rtt_estimator, tcp_set_rto,
//! __tcp_set_rto, tcp_bound_rto): srtt and mdev are smoothed as in RFC 6298, except that a
//! sample below srtt moves mdev with gain 1/32 instead of 1/4; the RTO is `srtt + rttvar`
//! where rttvar (in the units of 4 RTTVAR) follows the largest mdev of the current RTT, never
//! drops below `rto_min` while a sample arrives every RTT, and decays by 1/4 of its excess
//! over that maximum once per RTT (an RTT ends when snd_una passes the snd_nxt recorded at its
//! start). So the RTO stays at least `srtt + rto_min`, where RFC 6298 lets it fall to
//! `max(rto_min, srtt + 4 RTTVAR)`. The first sample gives `srtt = r`, `mdev = 2r` (4 RTTVAR
//! = 2r, i.e. RTO = 3r) and `rttvar = max(2r, rto_min)`. The RTO is bounded by `rto_max`
//! only (tcp_bound_rto); the clock granularity plays no part (Linux counts microseconds).

use crate::{Dur, Seq};
use serde::{Deserialize, Serialize};

/// How the RTO is computed from RTT samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RtoMode {
    /// RFC 6298: `RTO = max(rto_min, SRTT + max(G, 4 RTTVAR))`.
    #[default]
    Rfc6298,
    /// Linux 6.x (tcp_rtt_estimator): `RTO = SRTT + rttvar`, rttvar >= rto_min.
    Linux,
}

/// Linux's estimator state in nanoseconds, scaled as Linux scales its microseconds:
/// `srtt8` = 8 SRTT, `mdev`, `mdev_max` and `rttvar` in units of 4 mean deviations.
#[derive(Clone, Copy, Debug, Default)]
struct LinuxState {
    srtt8: i64,
    mdev: i64,
    mdev_max: i64,
    rttvar: i64,
    /// snd_nxt when the current RTT began (Linux: tp->rtt_seq).
    rtt_seq: Seq,
}

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Dur>,
    rttvar: Dur,
    min: Option<Dur>,
    latest: Option<Dur>,
    base_rto: Dur,
    backoff: u32,
    rto_min: Dur,
    rto_max: Dur,
    granularity: Dur,
    mode: RtoMode,
    linux: LinuxState,
}

impl RttEstimator {
    pub fn new(rto_initial: Dur, rto_min: Dur, rto_max: Dur, granularity: Dur) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Dur::ZERO,
            min: None,
            latest: None,
            base_rto: rto_initial.min(rto_max),
            backoff: 0,
            rto_min,
            rto_max,
            granularity,
            mode: RtoMode::Rfc6298,
            linux: LinuxState::default(),
        }
    }

    /// The estimator a connection with these settings uses (`cfg.rto_mode` picks the rule).
    pub fn for_config(cfg: &crate::TcpConfig) -> Self {
        Self::new(
            cfg.rto_initial,
            cfg.rto_min,
            cfg.rto_max,
            cfg.clock_granularity,
        )
        .with_mode(cfg.rto_mode)
    }

    /// The same estimator with another RTO rule (before any sample).
    pub fn with_mode(mut self, mode: RtoMode) -> Self {
        self.mode = mode;
        self
    }

    pub fn mode(&self) -> RtoMode {
        self.mode
    }

    /// A new measurement taken by the ACK that moved the cumulative ACK point to `snd_una`,
    /// when the next new byte to send is `snd_nxt`. RFC 6298 mode: exactly `on_sample(r)`
    /// (the sequence numbers are not used). Linux mode: `on_sample_linux`.
    pub fn on_sample_at(&mut self, r: Dur, snd_una: Seq, snd_nxt: Seq) {
        match self.mode {
            RtoMode::Rfc6298 => self.on_sample(r),
            RtoMode::Linux => self.on_sample_linux(r, snd_una, snd_nxt),
        }
    }

    /// A new measurement, Linux's rule (tcp_rtt_estimator, then tcp_set_rto): `snd_una` is the
    /// cumulative ACK point after the ACK that gave the sample, `snd_nxt` the next new byte to
    /// send. Ends the backoff, as `on_sample` does.
    pub fn on_sample_linux(&mut self, r: Dur, snd_una: Seq, snd_nxt: Seq) {
        let rto_min = self.rto_min.as_nanos() as i64;
        let l = &mut self.linux;
        let mut m = r.as_nanos().min(i64::MAX as u64 / 16) as i64;
        if l.srtt8 != 0 {
            m -= l.srtt8 >> 3; // the error of the estimate
            l.srtt8 += m; // srtt = 7/8 srtt + 1/8 r
            if m < 0 {
                // A sample below srtt: gain 1/32 instead of 1/4 (Linux's Eifel-like rule).
                m = -m - (l.mdev >> 2);
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= l.mdev >> 2;
            }
            l.mdev += m; // mdev = 3/4 mdev + 1/4 |error|
            if l.mdev > l.mdev_max {
                l.mdev_max = l.mdev;
                l.rttvar = l.rttvar.max(l.mdev_max);
            }
            if snd_una > l.rtt_seq {
                // One RTT has passed: rttvar decays towards the largest mdev of that RTT.
                if l.mdev_max < l.rttvar {
                    l.rttvar -= (l.rttvar - l.mdev_max) >> 2;
                }
                l.rtt_seq = snd_nxt;
                l.mdev_max = rto_min;
            }
        } else {
            l.srtt8 = m << 3;
            l.mdev = m << 1; // RTO = 3 r
            l.rttvar = l.mdev.max(rto_min);
            l.mdev_max = l.rttvar;
            l.rtt_seq = snd_nxt;
        }
        l.srtt8 = l.srtt8.max(1);
        let srtt = Dur::from_nanos((l.srtt8 >> 3) as u64);
        let rttvar = Dur::from_nanos(l.rttvar as u64);
        self.srtt = Some(srtt);
        self.rttvar = rttvar / 4;
        // __tcp_set_rto, then tcp_bound_rto.
        self.base_rto = (srtt + rttvar).min(self.rto_max);
        self.backoff = 0;
        self.latest = Some(r);
        self.min = Some(self.min.map_or(r, |m| m.min(r)));
    }

    /// A new measurement: RFC 6298 §2 with alpha = 1/8, beta = 1/4, whatever the mode (see
    /// `on_sample_at`). Any valid sample ends the backoff (samples come from timestamps or from never-retransmitted segments).
    pub fn on_sample(&mut self, r: Dur) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(s) => {
                let diff = if s > r { s - r } else { r - s };
                self.rttvar = Dur::from_nanos((3 * self.rttvar.as_nanos() + diff.as_nanos()) / 4);
                self.srtt = Some(Dur::from_nanos((7 * s.as_nanos() + r.as_nanos()) / 8));
            }
        }
        let srtt = self.srtt.unwrap_or(r);
        let rto = srtt + self.granularity.max(self.rttvar * 4);
        self.base_rto = rto.max(self.rto_min).min(self.rto_max);
        self.backoff = 0;
        self.latest = Some(r);
        self.min = Some(self.min.map_or(r, |m| m.min(r)));
    }

    /// The timer expired: double the RTO (RFC 6298 §5.5), up to rto_max.
    pub fn back_off(&mut self) {
        self.backoff = self.backoff.saturating_add(1);
    }

    /// Current (backed-off) RTO.
    pub fn rto(&self) -> Dur {
        let shift = self.backoff.min(32);
        self.base_rto
            .saturating_mul(1u64 << shift)
            .min(self.rto_max)
    }
    pub fn srtt(&self) -> Option<Dur> {
        self.srtt
    }
    /// RTTVAR (Linux mode: a quarter of Linux's rttvar, so that RTO = SRTT + 4 RTTVAR).
    pub fn rttvar(&self) -> Dur {
        self.rttvar
    }
    pub fn min_rtt(&self) -> Option<Dur> {
        self.min
    }
    pub fn latest(&self) -> Option<Dur> {
        self.latest
    }
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(
            Dur::from_secs(1),
            Dur::from_millis(200),
            Dur::from_secs(60),
            Dur::from_millis(1),
        )
    }

    #[test]
    fn first_sample_then_smoothing() {
        let mut e = est();
        assert_eq!(e.rto(), Dur::from_secs(1));
        e.on_sample(Dur::from_millis(100));
        assert_eq!(e.srtt(), Some(Dur::from_millis(100)));
        assert_eq!(e.rttvar(), Dur::from_millis(50));
        assert_eq!(e.rto(), Dur::from_millis(300));
        e.on_sample(Dur::from_millis(200));
        assert_eq!(e.srtt(), Some(Dur::from_micros(112_500)));
        assert_eq!(e.rttvar(), Dur::from_micros(62_500));
        assert_eq!(e.min_rtt(), Some(Dur::from_millis(100)));
    }

    #[test]
    fn rto_floor_backoff_and_ceiling() {
        let mut e = est();
        e.on_sample(Dur::from_millis(10));
        assert_eq!(e.rto(), Dur::from_millis(200), "rto_min");
        e.back_off();
        e.back_off();
        assert_eq!(e.rto(), Dur::from_millis(800));
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.rto(), Dur::from_secs(60));
        e.on_sample(Dur::from_millis(10));
        assert_eq!(e.backoff(), 0);
    }

    fn linux() -> RttEstimator {
        est().with_mode(RtoMode::Linux)
    }

    /// A constant RTT, one sample per ACK, each ACK one segment, 10 segments in flight:
    /// returns (srtt, rto) after each sample.
    fn constant_stream(e: &mut RttEstimator, rtt: Dur, n: u64) -> Vec<(Dur, Dur)> {
        (1..=n)
            .map(|i| {
                e.on_sample_at(rtt, Seq(i * 1000), Seq((i + 10) * 1000));
                (e.srtt().unwrap(), e.rto())
            })
            .collect()
    }

    #[test]
    fn constant_rtt_rfc_collapses_to_the_floor_linux_keeps_srtt_plus_rto_min() {
        let rtt = Dur::from_millis(50);
        let mut e = est();
        let rfc = constant_stream(&mut e, rtt, 200);
        assert_eq!(
            rfc.last().unwrap().1,
            Dur::from_millis(200),
            "rto_min floor"
        );
        let mut e = linux();
        let lin = constant_stream(&mut e, rtt, 200);
        for &(srtt, rto) in &lin {
            assert!(
                rto >= srtt + Dur::from_millis(200),
                "{rto} < {srtt} + 200 ms"
            );
        }
        let (srtt, rto) = *lin.last().unwrap();
        assert_eq!(srtt, rtt);
        // rttvar decays to mdev_max = rto_min, by 1/4 of the excess per RTT (integer ns).
        let excess = rto - Dur::from_millis(250);
        assert!(excess < Dur::from_micros(1), "{rto}");
    }

    #[test]
    fn linux_first_sample_gives_three_rtt_at_least_rtt_plus_rto_min() {
        for (r, rto) in [(100, 300), (10, 210), (300, 900)] {
            let mut e = linux();
            e.on_sample_at(Dur::from_millis(r), Seq(1000), Seq(5000));
            assert_eq!(e.rto(), Dur::from_millis(rto), "first sample {r} ms");
            assert_eq!(e.srtt(), Some(Dur::from_millis(r)));
        }
        // tcp_bound_rto: rto_max is the only bound.
        let mut e = linux();
        e.on_sample_at(Dur::from_secs(30), Seq(1000), Seq(5000));
        assert_eq!(e.rto(), Dur::from_secs(60));
    }

    #[test]
    fn linux_sample_below_srtt_moves_mdev_with_gain_one_32nd() {
        let mut e = linux();
        e.on_sample_at(Dur::from_millis(100), Seq(1000), Seq(5000));
        // Error -80 ms: srtt 90 ms; mdev 200 ms + (80 - 200/4) / 8 = 203.75 ms, above
        // mdev_max (200 ms): rttvar = 203.75 ms (RFC 6298 would give 4 x 57.5 ms).
        e.on_sample_at(Dur::from_millis(20), Seq(2000), Seq(6000));
        assert_eq!(e.srtt(), Some(Dur::from_millis(90)));
        assert_eq!(e.rto(), Dur::from_micros(293_750));
        let mut r = est();
        r.on_sample(Dur::from_millis(100));
        r.on_sample(Dur::from_millis(20));
        assert_eq!(r.rto(), Dur::from_millis(320));
    }

    #[test]
    fn linux_rttvar_decays_once_per_rtt_only() {
        let mut e = linux();
        e.on_sample_at(Dur::from_millis(100), Seq(1000), Seq(10_000));
        e.on_sample_at(Dur::from_millis(400), Seq(2000), Seq(10_000));
        let peak = e.rto();
        // Small samples inside the same RTT (snd_una <= 10 000) never lower rttvar.
        for una in [3000, 5000, 10_000] {
            e.on_sample_at(Dur::from_millis(100), Seq(una), Seq(20_000));
            assert!(
                e.rto() + Dur::from_millis(40) >= peak,
                "{} vs {peak}",
                e.rto()
            );
        }
        // The RTT ends (snd_una passes 10 000): its largest mdev was rttvar itself, so no
        // decay yet; mdev_max restarts at rto_min.
        let within = e.rttvar();
        e.on_sample_at(Dur::from_millis(100), Seq(10_001), Seq(30_000));
        assert_eq!(e.rttvar(), within);
        // The next RTT's samples have a smaller mdev: at its end rttvar loses 1/4 of the excess.
        e.on_sample_at(Dur::from_millis(100), Seq(20_000), Seq(30_000));
        assert_eq!(e.rttvar(), within);
        e.on_sample_at(Dur::from_millis(100), Seq(30_001), Seq(40_000));
        assert!(e.rttvar() < within, "decays when snd_una passes rtt_seq");
    }

    #[test]
    fn rfc_mode_on_sample_at_is_on_sample() {
        let (mut a, mut b) = (est(), est());
        for (i, r) in [30, 80, 10, 500, 40].into_iter().enumerate() {
            a.on_sample(Dur::from_millis(r));
            b.on_sample_at(Dur::from_millis(r), Seq(i as u64), Seq(0));
            assert_eq!(
                (a.rto(), a.srtt(), a.rttvar()),
                (b.rto(), b.srtt(), b.rttvar())
            );
        }
    }
}
