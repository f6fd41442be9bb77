//! Gilbert-Elliott burst loss: a two-state Markov chain (good, bad) advanced once per
//! packet. A packet meets the chain in its current state and is lost with `loss_good` or
//! `loss_bad`; then the chain moves good -> bad with `p_gb`, bad -> good with `p_bg`. The
//! first state is drawn from the stationary distribution, so the process is stationary from
//! the first packet:
//!
//! - `pi_bad = p_gb / (p_gb + p_bg)`, `pi_good = 1 - pi_bad`;
//! - mean loss rate `pi_good loss_good + pi_bad loss_bad`;
//! - mean sojourn in the bad state `1 / p_bg` packets (with `loss_good = 0, loss_bad = 1`,
//!   the Gilbert model, that is the mean loss-burst length).
//!
//! Given a mean loss rate `r` and a mean burst length `b` (Gilbert model):
//! `p_bg = 1 / b`, `p_gb = r p_bg / (1 - r)`.

use super::LossModel;
use crate::rng::Rng;
use tcplab_core::Time;

pub struct GilbertElliott {
    p_gb: f64,
    p_bg: f64,
    loss_good: f64,
    loss_bad: f64,
    bad: bool,
    rng: Rng,
}

impl GilbertElliott {
    pub fn new(p_gb: f64, p_bg: f64, loss_good: f64, loss_bad: f64, mut rng: Rng) -> Self {
        let pi_bad = stationary_bad(p_gb, p_bg);
        let bad = rng.chance(pi_bad);
        GilbertElliott {
            p_gb,
            p_bg,
            loss_good,
            loss_bad,
            bad,
            rng,
        }
    }
}

/// Stationary probability of the bad state (0 when the chain never moves).
pub fn stationary_bad(p_gb: f64, p_bg: f64) -> f64 {
    if p_gb + p_bg > 0.0 {
        p_gb / (p_gb + p_bg)
    } else {
        0.0
    }
}

impl LossModel for GilbertElliott {
    fn lose(&mut self, _now: Time, _size: u32) -> bool {
        let h = if self.bad {
            self.loss_bad
        } else {
            self.loss_good
        };
        let lost = h > 0.0 && self.rng.chance(h);
        let flip = if self.bad { self.p_bg } else { self.p_gb };
        if self.rng.chance(flip) {
            self.bad = !self.bad;
        }
        lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (loss rate, mean length of runs of consecutive losses) over `n` packets.
    fn measure(m: &mut GilbertElliott, n: usize) -> (f64, f64) {
        let (mut lost, mut bursts, mut prev) = (0u64, 0u64, false);
        for _ in 0..n {
            let l = m.lose(Time::ZERO, 1000);
            if l {
                lost += 1;
                if !prev {
                    bursts += 1;
                }
            }
            prev = l;
        }
        (lost as f64 / n as f64, lost as f64 / bursts as f64)
    }

    /// Gilbert model (losses exactly in the bad state): loss rate pi_bad and mean burst
    /// 1 / p_bg, within 5% over 2 million packets (about 20,000 bursts).
    #[test]
    fn gilbert_loss_rate_and_burst_length_match_stationary_values() {
        let (p_gb, p_bg) = (0.0025, 0.25);
        let mut m = GilbertElliott::new(p_gb, p_bg, 0.0, 1.0, Rng::stream(3, "loss/ge"));
        let (rate, burst) = measure(&mut m, 2_000_000);
        let want_rate = stationary_bad(p_gb, p_bg);
        assert!(
            (rate / want_rate - 1.0).abs() < 0.05,
            "rate {rate} vs {want_rate}"
        );
        assert!((burst / 4.0 - 1.0).abs() < 0.05, "burst {burst} vs 4");
    }

    /// Lossy good state and half-lossy bad state: loss rate
    /// pi_good loss_good + pi_bad loss_bad within 5%; the burst length for this case is
    /// 1 / (1 - P(loss | previous lost)), computed from the chain (see the comment).
    #[test]
    fn elliott_loss_rate_and_burst_length() {
        let (p_gb, p_bg, hg, hb) = (0.01, 0.1, 0.001, 0.5);
        let mut m = GilbertElliott::new(p_gb, p_bg, hg, hb, Rng::stream(4, "loss/ge"));
        let (rate, burst) = measure(&mut m, 2_000_000);
        let pb = stationary_bad(p_gb, p_bg);
        let pg = 1.0 - pb;
        let want_rate = pg * hg + pb * hb;
        assert!(
            (rate / want_rate - 1.0).abs() < 0.05,
            "rate {rate} vs {want_rate}"
        );
        // P(next lost | this lost): the state of a lost packet is bad with probability
        // pb hb / rate; the chain then moves once, and the next packet is lost with the
        // loss probability of its state. Runs are geometric only approximately (the state
        // is hidden), so compare the implied mean 1 / (1 - q) within 10%.
        let bad_given_lost = pb * hb / want_rate;
        let next_bad = bad_given_lost * (1.0 - p_bg) + (1.0 - bad_given_lost) * p_gb;
        let q = next_bad * hb + (1.0 - next_bad) * hg;
        let want_burst = 1.0 / (1.0 - q);
        assert!(
            (burst / want_burst - 1.0).abs() < 0.10,
            "burst {burst} vs {want_burst}"
        );
    }
}
