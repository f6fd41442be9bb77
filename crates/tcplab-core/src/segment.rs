//! What travels between sender and receiver. Transfers are one-way (bulk data from the
//! sender, pure ACKs back), so data segments and acknowledgments are distinct types.

use crate::{Seq, Time};

/// Most SACK blocks one ACK can carry (40 bytes of TCP options, RFC 2018).
pub const MAX_SACK_BLOCKS: usize = 6;

/// A data segment from sender to receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataSegment {
    /// Sequence number of the first payload byte.
    pub seq: Seq,
    /// Payload bytes.
    pub len: u32,
    /// RFC 7323 TSval: the sender's clock when it sent this copy (None when timestamps are off).
    pub ts_val: Option<Time>,
    /// RFC 7323 TSecr: the latest TSval of the receiver's ACKs the sender had when it sent
    /// this copy (None when timestamps are off or the sender has seen none). A Linux-like
    /// receiver measures its RTT from it (`cfg.rcv_autotune`).
    pub ts_ecr: Option<Time>,
    /// How many times this byte range was sent before (0 for an original). Ground truth for
    /// counters and traces only: a receiver must not use it.
    pub retransmission: u8,
    /// ECN-capable transport (ECT) codepoint set.
    pub ect: bool,
    /// Congestion Experienced, set by a router that marked instead of dropping.
    pub ce: bool,
    /// Congestion Window Reduced: the sender reacted to an ECN echo.
    pub cwr: bool,
}

impl DataSegment {
    pub fn end(&self) -> Seq {
        self.seq + self.len as u64
    }
}

/// A half-open byte range `[start, end)` the receiver holds above its cumulative ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlock {
    pub start: Seq,
    pub end: Seq,
}

/// Up to [`MAX_SACK_BLOCKS`] SACK blocks, first block first (RFC 2018 order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackList {
    blocks: [SackBlock; MAX_SACK_BLOCKS],
    len: u8,
}

impl SackList {
    pub const fn new() -> Self {
        SackList {
            blocks: [SackBlock {
                start: Seq(0),
                end: Seq(0),
            }; MAX_SACK_BLOCKS],
            len: 0,
        }
    }
    /// Appends a block; returns false (and drops it) when the list is full.
    #[inline]
    pub fn push(&mut self, b: SackBlock) -> bool {
        if (self.len as usize) < MAX_SACK_BLOCKS {
            self.blocks[self.len as usize] = b;
            self.len += 1;
            true
        } else {
            false
        }
    }
    pub fn len(&self) -> usize {
        self.len as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn as_slice(&self) -> &[SackBlock] {
        &self.blocks[..self.len as usize]
    }
    pub fn iter(&self) -> impl Iterator<Item = &SackBlock> {
        self.as_slice().iter()
    }
}

impl<'a> IntoIterator for &'a SackList {
    type Item = &'a SackBlock;
    type IntoIter = std::slice::Iter<'a, SackBlock>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl FromIterator<SackBlock> for SackList {
    #[inline]
    fn from_iter<I: IntoIterator<Item = SackBlock>>(it: I) -> Self {
        let mut l = SackList::new();
        for b in it {
            l.push(b);
        }
        l
    }
}

/// A pure acknowledgment from receiver to sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckSegment {
    /// Cumulative acknowledgment: next byte expected.
    pub ack: Seq,
    /// SACK blocks (empty when SACK is off or nothing is held out of order).
    pub sack: SackList,
    /// RFC 7323 TSecr: the TSval echoed (None when timestamps are off).
    pub ts_ecr: Option<Time>,
    /// RFC 7323 TSval: the receiver's clock when it sent this ACK (None when timestamps are
    /// off).
    pub ts_val: Option<Time>,
    /// Advertised receive window in bytes.
    pub window: u64,
    /// ECN-Echo: the receiver saw CE and the sender has not yet answered with CWR.
    pub ece: bool,
}
