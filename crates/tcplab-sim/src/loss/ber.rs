//! Bit errors: each bit is corrupted independently with probability `ber`, so a packet of
//! `size` bytes is lost with probability `p = 1 - (1 - ber)^(8 size)` (computed as
//! `-expm1(8 size ln(1 - ber))`, exact for tiny `ber`).

use super::LossModel;
use crate::rng::Rng;
use tcplab_core::Time;

pub struct Ber {
    /// ln(1 - ber).
    log_keep: f64,
    rng: Rng,
}

impl Ber {
    pub fn new(ber: f64, rng: Rng) -> Self {
        Ber {
            log_keep: (-ber).ln_1p(),
            rng,
        }
    }

    /// Loss probability of a packet of `size` bytes.
    pub fn probability(&self, size: u32) -> f64 {
        -(8.0 * size as f64 * self.log_keep).exp_m1()
    }
}

impl LossModel for Ber {
    fn lose(&mut self, _now: Time, size: u32) -> bool {
        let p = self.probability(size);
        self.rng.chance(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probability_grows_with_size_as_the_formula() {
        let b = Ber::new(1e-5, Rng::stream(1, "t"));
        for size in [40u32, 576, 1500] {
            let want = 1.0 - (1.0f64 - 1e-5).powi(8 * size as i32);
            assert!((b.probability(size) - want).abs() < 1e-12, "size {size}");
        }
        assert_eq!(Ber::new(1.0, Rng::stream(1, "t")).probability(1), 1.0);
    }

    /// Measured loss rates of 40- and 1500-byte packets match p(size) within 4 standard
    /// deviations of a binomial count.
    #[test]
    fn measured_rate_vs_size() {
        let mut b = Ber::new(2e-5, Rng::stream(7, "loss/ber"));
        let n = 200_000;
        for size in [40u32, 1500] {
            let p = b.probability(size);
            let lost = (0..n).filter(|_| b.lose(Time::ZERO, size)).count() as f64;
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            assert!(
                (lost - n as f64 * p).abs() < 4.0 * sd,
                "size {size}: lost {lost}, expected {}",
                n as f64 * p
            );
        }
    }
}
