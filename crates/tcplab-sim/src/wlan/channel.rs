//! Radio channel between the AP and one station.
//!
//! - Received power (RSSI, dBm) = transmit power - PL(d) + X, with log-distance path loss
//!   PL(d) = PL(1 m) + 10 n log10(d / 1 m) and log-normal shadowing X ~ N(0, sigma^2) dB
//!   drawn for every frame from the segment's own seeded stream.
//! - A frame received below the receive threshold is lost; above it, it is received
//!   (threshold model, no BER curve; docs/wlan.md). MAC ACKs are not drawn: sent at the
//!   basic rate, whose sensitivity is 9 dB or more below the data rate's, they are taken
//!   as received.
//! - The threshold defaults to the receiver sensitivity of the data rate (Cisco Aironet 350
//!   data sheet: 1 Mb/s -94 dBm, 2 Mb/s -91, 5.5 Mb/s -89, 11 Mb/s -85).
//!
//! A frame therefore fails with probability q(d) = Phi((thr - mean_rssi(d)) / sigma) per
//! attempt, independently, and is dropped after `retry_limit` attempts with probability
//! q^retry_limit. [`Channel::distance_for_residual`] inverts that for the LL/HL presets.
//!
//! Optional block fading (`coherence` > 0): the shadowing of each station's link is drawn
//! once per aligned block of `coherence` of simulated time and held within it, so losses come
//! in bursts. A frame's attempts then see fewer independent draws: the presets count
//! `ceil(span / coherence)` of them (at most the retry limit), where `span` is the mean
//! duration of a full retry sequence of a 1500-byte frame (`Phy::retry_span`).

use super::spec::ChannelSpec;
use crate::rng::Rng;

#[derive(Clone, Debug, PartialEq)]
pub struct Channel {
    pub tx_power_dbm: f64,
    pub ref_loss_db: f64,
    pub exponent: f64,
    pub shadowing_db: f64,
    pub rx_threshold_dbm: f64,
    /// Shadowing held per block of this many ns (0: drawn per frame).
    pub coherence_ns: u64,
}

/// Receiver sensitivity at `rate` bit/s (dBm).
pub fn sensitivity_dbm(rate: u64) -> f64 {
    match rate {
        r if r <= 1_000_000 => -94.0,
        r if r <= 2_000_000 => -91.0,
        r if r <= 5_500_000 => -89.0,
        _ => -85.0,
    }
}

impl Channel {
    pub fn new(c: &ChannelSpec, rate: u64) -> Self {
        Channel {
            tx_power_dbm: c.tx_power_dbm,
            ref_loss_db: c.ref_loss_db,
            exponent: c.exponent,
            shadowing_db: c.shadowing_db,
            rx_threshold_dbm: c.rx_threshold_dbm.unwrap_or_else(|| sensitivity_dbm(rate)),
            coherence_ns: c.coherence.as_nanos(),
        }
    }

    /// Mean received power at `distance` metres (distances below 1 m count as 1 m).
    pub fn mean_rssi(&self, distance: f64) -> f64 {
        self.tx_power_dbm - self.ref_loss_db - 10.0 * self.exponent * distance.max(1.0).log10()
    }

    /// The received power of one frame: the mean plus a shadowing draw.
    pub fn draw_rssi(&self, mean: f64, rng: &mut Rng) -> f64 {
        if self.shadowing_db > 0.0 {
            mean + self.shadowing_db * gaussian(rng)
        } else {
            mean
        }
    }

    pub fn received(&self, rssi: f64) -> bool {
        rssi >= self.rx_threshold_dbm
    }

    /// Probability that one attempt at `distance` is received below the threshold.
    pub fn attempt_loss(&self, distance: f64) -> f64 {
        let margin = self.mean_rssi(distance) - self.rx_threshold_dbm;
        if self.shadowing_db > 0.0 {
            normal_cdf(-margin / self.shadowing_db)
        } else if margin >= 0.0 {
            0.0
        } else {
            1.0
        }
    }

    /// The distance at which a frame is lost in all `attempts` attempts with probability
    /// `residual` (channel losses only; with block fading `attempts` is the number of
    /// independent draws a frame's attempts see). None when shadowing is 0 (a step, not
    /// invertible).
    pub fn distance_for_residual(&self, residual: f64, attempts: u32) -> Option<f64> {
        if self.shadowing_db <= 0.0 || attempts == 0 || !(0.0..1.0).contains(&residual) {
            return None;
        }
        let q = residual.powf(1.0 / attempts as f64);
        // Margin m with Phi(-m / sigma) = q, then the distance with that mean margin.
        let m = -self.shadowing_db * normal_quantile(q);
        let pl_excess = self.tx_power_dbm - self.ref_loss_db - self.rx_threshold_dbm - m;
        Some(10f64.powf(pl_excess / (10.0 * self.exponent)).max(1.0))
    }
}

/// A standard normal draw (Box-Muller, two uniforms per draw).
pub fn gaussian(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.next_f64(); // (0, 1]
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Complementary error function (Numerical Recipes `erfcc`, fractional error < 1.2e-7).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// Standard normal CDF.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// Inverse of [`normal_cdf`] by bisection (p in (0, 1)).
pub fn normal_quantile(p: f64) -> f64 {
    let (mut lo, mut hi) = (-12.0, 12.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if normal_cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_cdf_reference_values() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.0) - 0.841_344_746).abs() < 1e-6);
        assert!((normal_cdf(-2.0) - 0.022_750_132).abs() < 1e-6);
        assert!((normal_quantile(0.975) - 1.959_964).abs() < 1e-5);
    }

    #[test]
    fn gaussian_draws_have_unit_variance() {
        let mut r = Rng::stream(3, "g");
        let n = 100_000;
        let xs: Vec<f64> = (0..n).map(|_| gaussian(&mut r)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.01, "{mean}");
        assert!((var - 1.0).abs() < 0.02, "{var}");
    }

    #[test]
    fn path_loss_and_preset_distance_invert() {
        let c = Channel::new(&ChannelSpec::default(), 11_000_000);
        // 15 dBm - 40.05 dB - 35 dB per decade.
        assert!((c.mean_rssi(10.0) - (15.0 - 40.05 - 35.0)).abs() < 1e-9);
        for (target, attempts) in [(1e-4, 7), (1e-2, 7), (1e-3, 4)] {
            let d = c.distance_for_residual(target, attempts).unwrap();
            let q = c.attempt_loss(d);
            let got = q.powi(attempts as i32);
            assert!(
                (got / target - 1.0).abs() < 1e-4,
                "{target}: {got} at {d} m"
            );
        }
        let ll = c.distance_for_residual(1e-4, 7).unwrap();
        let hl = c.distance_for_residual(1e-2, 7).unwrap();
        assert!(ll < hl, "{ll} {hl}");
        assert_eq!(
            Channel::new(
                &ChannelSpec {
                    shadowing_db: 0.0,
                    ..ChannelSpec::default()
                },
                11_000_000
            )
            .distance_for_residual(1e-4, 7),
            None
        );
    }
}
