//! Byte sequence numbers. Runs are far shorter than 2^64 bytes, so sequence numbers are
//! absolute 64-bit offsets from the initial sequence number and never wrap; exporters that
//! need 32-bit TCP sequence numbers take the low bits.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

#[derive(
    Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Seq(pub u64);

impl Add<u64> for Seq {
    type Output = Seq;
    fn add(self, n: u64) -> Seq {
        Seq(self.0 + n)
    }
}
impl AddAssign<u64> for Seq {
    fn add_assign(&mut self, n: u64) {
        self.0 += n;
    }
}
impl Sub for Seq {
    type Output = u64;
    /// Bytes between two sequence numbers; panics in debug builds when negative.
    fn sub(self, o: Seq) -> u64 {
        debug_assert!(self.0 >= o.0, "negative sequence span: {self:?} - {o:?}");
        self.0 - o.0
    }
}
impl fmt::Display for Seq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
