//! A fixed-size log-linear histogram of nanosecond values (packet lateness): 32 buckets per
//! power of two (relative bucket width under 1/32), exact below 32 ns, the exact maximum
//! kept aside. Recording never allocates.

const SUB_BITS: u32 = 5;
const SUB: usize = 1 << SUB_BITS;
const BUCKETS: usize = SUB + (64 - SUB_BITS as usize) * SUB;

#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Box<[u64; BUCKETS]>,
    count: u64,
    sum: u128,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: Box::new([0; BUCKETS]),
            count: 0,
            sum: 0,
            max: 0,
        }
    }
}

fn index(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = e - SUB_BITS;
    let sub = (v >> shift) as usize - SUB;
    SUB + shift as usize * SUB + sub
}

/// The largest value of bucket `i`.
fn upper(i: usize) -> u64 {
    if i < SUB {
        return i as u64;
    }
    let shift = ((i - SUB) / SUB) as u32;
    let sub = ((i - SUB) % SUB) as u64;
    let low = (SUB as u64 + sub) << shift;
    low + ((1u64 << shift) - 1)
}

impl Histogram {
    pub fn record(&mut self, v: u64) {
        self.counts[index(v)] += 1;
        self.count += 1;
        self.sum += v as u128;
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// The `q` quantile (0..=1), as the upper end of its bucket (never above the maximum):
    /// an overestimate by less than 1/32 of the value. 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return upper(i).min(self.max);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_values_in_order_with_bounded_width() {
        let mut last = 0;
        for v in (0..100_000u64).chain([u64::MAX / 3, u64::MAX]) {
            let i = index(v);
            assert!(i >= last && i < BUCKETS, "{v}");
            assert!(upper(i) >= v, "{v} above its bucket");
            assert!(upper(i) - v <= v / 32, "{v} in too wide a bucket");
            last = i;
        }
    }

    #[test]
    fn quantiles_of_a_known_population() {
        let mut h = Histogram::default();
        assert_eq!(h.quantile(0.5), 0);
        for v in 1..=1000u64 {
            h.record(v * 1000); // 1 µs .. 1 ms
        }
        let p50 = h.quantile(0.5);
        assert!((500_000..=500_000 + 500_000 / 32).contains(&p50), "{p50}");
        let p99 = h.quantile(0.99);
        assert!((990_000..=990_000 + 990_000 / 32).contains(&p99), "{p99}");
        assert_eq!(h.quantile(1.0), 1_000_000);
        assert_eq!(h.max(), 1_000_000);
        assert_eq!(h.count(), 1000);
        assert!((h.mean() - 500_500.0).abs() < 1e-6);
    }
}
