//! A log-linear histogram of non-negative integers (nanoseconds) whose size does not grow
//! with the number of values: what the delay instrument keeps per flow instead of every
//! packet's delay.
//!
//! Values below 128 have a bucket each (exact). Above, each power of two `[2^p, 2^(p+1))`
//! is cut into [`SUB_BUCKETS`] = 64 equal buckets, so a bucket `[L, L + w)` has
//! `w <= L / 64`. A percentile is reported as the middle value of the bucket that holds it,
//! `L + (w - 1) / 2`: it is within `w / 2 <= L / 128 <= x / 128` of the exact value `x`
//! (which is in that bucket), a relative error of at most 1/128 (0.79 %), whatever the
//! distribution. 3,776 buckets cover every u64. They are stored in blocks of [`BLOCK`] = 16
//! consecutive buckets, a block only once one of its buckets is used (128 bytes each, at most
//! 30 KB; a few to a few dozen per histogram, as the values spread), found through a table of
//! 256 bytes: counting a value is a few instructions, with no search.

/// Buckets per power of two above [`EXACT_BELOW`].
pub const SUB_BUCKETS: u64 = 64;
/// Values below this have a bucket of their own.
pub const EXACT_BELOW: u64 = 2 * SUB_BUCKETS;
const SUB_BITS: u32 = SUB_BUCKETS.trailing_zeros();

/// The bucket of `v`.
#[inline(always)]
pub const fn bucket(v: u64) -> usize {
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

/// Buckets per block of storage.
pub const BLOCK: usize = 16;
/// Blocks covering every bucket.
const BLOCKS: usize = bucket(u64::MAX) / BLOCK + 1;
const _: () = assert!(BLOCKS < 256, "a block's slot is a u8");
/// Entries of the slot table: 256 (not [`BLOCKS`]) so that indexing it with a block
/// number narrowed to a u8 needs no bounds check; the entries past `BLOCKS` stay 0.
const SLOTS: usize = 256;

/// Counts of the buckets, in blocks of [`BLOCK`] consecutive buckets stored once used.
#[derive(Clone, Debug)]
pub struct LogHistogram {
    /// Per block (bucket / BLOCK): 1 + its position in `blocks`; 0 while none of its buckets
    /// has been counted.
    slot: [u8; SLOTS],
    blocks: Vec<[u64; BLOCK]>,
    total: u64,
}

impl Default for LogHistogram {
    fn default() -> Self {
        LogHistogram {
            slot: [0; SLOTS],
            blocks: Vec::new(),
            total: 0,
        }
    }
}

/// Equal when the counts are (whatever the order in which blocks were first used).
impl PartialEq for LogHistogram {
    fn eq(&self, other: &Self) -> bool {
        self.total == other.total && self.buckets().eq(other.buckets())
    }
}

impl LogHistogram {
    /// A histogram with room for every bucket (about 30 KB): counting then never allocates,
    /// for callers on a real-time path (the live emulator's lateness).
    pub fn preallocated() -> Self {
        LogHistogram {
            blocks: Vec::with_capacity(BLOCKS),
            ..Default::default()
        }
    }

    /// Counts one value.
    #[inline]
    pub fn add(&mut self, v: u64) {
        let i = bucket(v);
        self.total += 1;
        // i / BLOCK < BLOCKS < 256: narrowing keeps it.
        let b = (i / BLOCK) as u8 as usize;
        let mut s = self.slot[b] as usize;
        if s == 0 {
            s = self.new_block(b);
        }
        self.blocks[s - 1][i % BLOCK] += 1;
    }

    /// Stores block `b`, used for the first time; returns its slot.
    #[cold]
    #[inline(never)]
    fn new_block(&mut self, b: usize) -> usize {
        self.blocks.push([0; BLOCK]);
        // At most BLOCKS (< 256) blocks: the slot fits a u8.
        self.slot[b] = self.blocks.len() as u8;
        self.blocks.len()
    }

    /// Values counted.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The non-empty buckets in increasing order: (lower bound, width, count).
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.slot
            .iter()
            .enumerate()
            .filter(|(_, &s)| s != 0)
            .flat_map(move |(b, &s)| {
                let counts = &self.blocks[s as usize - 1];
                (0..BLOCK).filter(move |&k| counts[k] != 0).map(move |k| {
                    let (lower, width) = bucket_range(b * BLOCK + k);
                    (lower, width, counts[k])
                })
            })
    }

    /// [`buckets`](Self::buckets) as plain loops (the end of a run writes every bucket of
    /// every flow): `f(lower bound, width, count)` for each non-empty bucket, in increasing
    /// order.
    pub fn for_each_bucket(&self, mut f: impl FnMut(u64, u64, u64)) {
        for (b, &s) in self.slot.iter().enumerate() {
            if s == 0 {
                continue;
            }
            for (k, &n) in self.blocks[s as usize - 1].iter().enumerate() {
                if n != 0 {
                    let (lower, width) = bucket_range(b * BLOCK + k);
                    f(lower, width, n);
                }
            }
        }
    }

    /// How many buckets are non-empty.
    pub fn used(&self) -> usize {
        self.blocks.iter().flatten().filter(|&&n| n != 0).count()
    }

    /// The `q`-quantile (0 < q <= 1) by nearest rank, the value of rank `ceil(q * n)` in
    /// increasing order, estimated as the middle of its bucket (within 1/128 of the exact
    /// value, see the module's doc); None when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        self.quantiles([q])[0]
    }

    /// [`quantile`](Self::quantile) of each of `qs`, given in increasing order, in one pass
    /// over the buckets.
    pub fn quantiles<const N: usize>(&self, qs: [f64; N]) -> [Option<u64>; N] {
        let mut out = [None; N];
        if self.total == 0 {
            return out;
        }
        let rank = |q: f64| ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut next = 0;
        let mut seen = 0;
        for (lower, width, c) in self.buckets() {
            seen += c;
            while next < N && seen >= rank(qs[next]) {
                out[next] = Some(lower + (width - 1) / 2);
                next += 1;
            }
            if next == N {
                return out;
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
