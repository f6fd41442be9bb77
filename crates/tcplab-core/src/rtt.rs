//! RTT estimation and retransmission timeout (RFC 6298), with exponential backoff and the
//! smallest sample seen (a windowless min filter; controllers keep their own when they need
//! another window).

use crate::Dur;

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
        }
    }

    /// A new measurement: RFC 6298 §2 with alpha = 1/8, beta = 1/4. Any valid sample ends
    /// the backoff (samples come from timestamps or from never-retransmitted segments).
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
}
