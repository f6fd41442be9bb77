//! Packet lateness: tcplab-sim's log-linear histogram (`instruments::histogram`, within
//! 1/128 of the exact quantile), preallocated so that recording never allocates, with the
//! exact mean and maximum kept beside it.

use tcplab_sim::instruments::histogram::LogHistogram;

#[derive(Clone, Debug)]
pub struct Histogram {
    hist: LogHistogram,
    sum: u128,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            hist: LogHistogram::preallocated(),
            sum: 0,
            max: 0,
        }
    }
}

impl Histogram {
    pub fn record(&mut self, v: u64) {
        self.hist.add(v);
        self.sum += v as u128;
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.hist.total()
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    pub fn mean(&self) -> f64 {
        match self.count() {
            0 => 0.0,
            n => self.sum as f64 / n as f64,
        }
    }

    /// The `q` quantile (0..=1) by nearest rank, within 1/128 of the exact value and never
    /// above the maximum; 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        self.hist
            .quantile(q.clamp(f64::MIN_POSITIVE, 1.0))
            .map_or(0, |v| v.min(self.max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_of_a_known_population() {
        let mut h = Histogram::default();
        assert_eq!(h.quantile(0.5), 0);
        for v in 1..=1000u64 {
            h.record(v * 1000); // 1 µs .. 1 ms
        }
        for (q, exact) in [(0.5, 500_000u64), (0.99, 990_000)] {
            let est = h.quantile(q);
            assert!(
                est.abs_diff(exact) <= exact / 128,
                "q {q}: {est} vs {exact}"
            );
        }
        assert_eq!(h.quantile(1.0), 1_000_000);
        assert_eq!(h.max(), 1_000_000);
        assert_eq!(h.count(), 1000);
        assert!((h.mean() - 500_500.0).abs() < 1e-6);
    }
}
