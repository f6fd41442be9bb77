//! A log-linear histogram of non-negative integers (nanoseconds) whose size does not grow
//! with the number of values: what the delay instrument keeps per flow instead of every
//! packet's delay.
//!
//! Values below 128 have a bucket each (exact). Above, each power of two `[2^p, 2^(p+1))`
//! is cut into [`SUB_BUCKETS`] = 64 equal buckets, so a bucket `[L, L + w)` has
//! `w <= L / 64`. A percentile is reported as the middle value of the bucket that holds it,
//! `L + (w - 1) / 2`: it is within `w / 2 <= L / 128 <= x / 128` of the exact value `x`
//! (which is in that bucket), a relative error of at most 1/128 (0.79 %), whatever the
//! distribution. 3,776 buckets cover every u64; only the buckets used are stored (10 bytes
//! each, at most 38 KB), typically a few dozen (a few hundred bytes).

/// Buckets per power of two above [`EXACT_BELOW`].
pub const SUB_BUCKETS: u64 = 64;
/// Values below this have a bucket of their own.
pub const EXACT_BELOW: u64 = 2 * SUB_BUCKETS;
const SUB_BITS: u32 = SUB_BUCKETS.trailing_zeros();

/// The bucket of `v`.
#[inline(always)]
pub fn bucket(v: u64) -> usize {
    let top = 63 - (v | 1).leading_zeros();
    let shift = top.saturating_sub(SUB_BITS);
    (SUB_BUCKETS as usize) * shift as usize + (v >> shift) as usize
}

/// Bucket `i`'s values: `[lower, lower + width)`.
pub fn bucket_range(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < EXACT_BELOW {
        return (i, 1);
    }
    let shift = i / SUB_BUCKETS - 1;
    let mantissa = i - SUB_BUCKETS * shift;
    (mantissa << shift, 1 << shift)
}

/// Counts of the buckets used so far, sparse: the bucket numbers in increasing order and
/// their counts (10 bytes per bucket used, at most 3,776 of them).
#[derive(Clone, Debug, Default)]
pub struct LogHistogram {
    index: Vec<u16>,
    counts: Vec<u64>,
    total: u64,
    /// Position of the bucket counted last: consecutive values (delays of packets in a row)
    /// mostly fall in the same bucket, found without a search.
    last: usize,
}

/// Equal when the counts are (the search hint is not part of the value).
impl PartialEq for LogHistogram {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index && self.counts == other.counts && self.total == other.total
    }
}

impl LogHistogram {
    /// A histogram with room for every bucket (about 38 KB): counting then never allocates,
    /// for callers on a real-time path (the live emulator's lateness).
    pub fn preallocated() -> Self {
        let n = bucket(u64::MAX) + 1;
        LogHistogram {
            index: Vec::with_capacity(n),
            counts: Vec::with_capacity(n),
            ..Default::default()
        }
    }

    /// Counts one value.
    #[inline]
    pub fn add(&mut self, v: u64) {
        let i = bucket(v) as u16;
        self.total += 1;
        if self.index.get(self.last) == Some(&i) {
            self.counts[self.last] += 1;
            return;
        }
        match self.index.binary_search(&i) {
            Ok(k) => {
                self.counts[k] += 1;
                self.last = k;
            }
            Err(k) => {
                self.insert(k, i);
                self.last = k;
            }
        }
    }

    /// Counts a value of bucket `i`, used for the first time, at position `k`.
    #[cold]
    fn insert(&mut self, k: usize, i: u16) {
        self.index.insert(k, i);
        self.counts.insert(k, 1);
    }

    /// Values counted.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The non-empty buckets in increasing order: (lower bound, width, count).
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.index.iter().zip(&self.counts).map(|(&i, &c)| {
            let (lower, width) = bucket_range(i as usize);
            (lower, width, c)
        })
    }

    /// The `q`-quantile (0 < q <= 1) by nearest rank, the value of rank `ceil(q * n)` in
    /// increasing order, estimated as the middle of its bucket (within 1/128 of the exact
    /// value, see the module's doc); None when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (lower, width, c) in self.buckets() {
            seen += c;
            if seen >= rank {
                return Some(lower + (width - 1) / 2);
            }
        }
        unreachable!("ranks are within the total")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_integers() {
        // Every bucket starts where the previous one ended, and holds its own values.
        let mut next = 0u64;
        for i in 0..bucket(u64::MAX) + 1 {
            let (lower, width) = bucket_range(i);
            assert_eq!(lower, next, "bucket {i}");
            assert_eq!(bucket(lower), i);
            assert_eq!(bucket(lower + (width - 1)), i);
            assert!(
                lower < EXACT_BELOW || width * SUB_BUCKETS <= lower,
                "bucket {i}"
            );
            next = lower.wrapping_add(width);
        }
        assert_eq!(next, 0, "the last bucket ends at 2^64");
        assert_eq!(bucket(u64::MAX), 3775);
    }

    #[test]
    fn quantiles_are_within_1_128_of_the_exact_ones() {
        // A spread of values over six powers of ten, in a scrambled order.
        let mut values: Vec<u64> = (0..20_000u64)
            .map(|k| (k * 7919 % 20_000) * (k % 97 + 1) * 37 + k % 5)
            .collect();
        let mut h = LogHistogram::default();
        for &v in &values {
            h.add(v);
        }
        values.sort_unstable();
        for q in [0.001, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0] {
            let rank = ((q * values.len() as f64).ceil() as usize).max(1);
            let exact = values[rank - 1];
            let est = h.quantile(q).unwrap();
            let err = est.abs_diff(exact) as f64;
            assert!(err <= exact as f64 / 128.0, "q {q}: {est} vs {exact}");
        }
        assert_eq!(h.total(), 20_000);
        assert_eq!(h.buckets().map(|b| b.2).sum::<u64>(), 20_000);
    }

    #[test]
    fn buckets_are_kept_in_order_whatever_the_order_of_values() {
        let mut h = LogHistogram::default();
        assert_eq!(h.quantile(0.5), None);
        for v in [1000, 5, 1_000_000, 5, 7] {
            h.add(v);
        }
        let b: Vec<_> = h.buckets().collect();
        assert_eq!(b[0], (5, 1, 2));
        assert_eq!(b[1], (7, 1, 1));
        assert_eq!(b[2], (1000, 8, 1));
        assert_eq!(b[3].2, 1);
        assert_eq!(h.quantile(0.2), Some(5));
        assert_eq!(h.quantile(0.6), Some(7));
        assert_eq!(h.quantile(0.8), Some(1003));
    }
}
