//! The facts of one ACK that both strategies read: built once per ACK by the sender and
//! embedded in what each strategy gets, [`crate::cc::AckSample`] (controllers) and
//! [`crate::recovery::AckInfo`] (loss recovery). Both dereference to [`AckFacts`], so
//! `sample.acked_bytes` and `info.srtt` read the one copy.

use crate::{Dur, Seq, Time};

/// What the sender learned from one ACK, after the scoreboard was updated with it. Every
/// field is a fact, not a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckFacts {
    pub now: Time,
    pub mss: u32,
    /// Bytes newly covered by the cumulative ACK.
    pub acked_bytes: u64,
    /// Bytes newly SACKed by this ACK.
    pub sacked_bytes: u64,
    /// A duplicate ACK in the sense of RFC 5681 (no advance, data outstanding).
    pub is_duplicate: bool,
    /// Smoothed RTT (RFC 6298) after this ACK, once there is a sample.
    pub srtt: Option<Dur>,
    /// The smallest RTT sample seen so far on the connection.
    pub min_rtt: Option<Dur>,
    /// Cumulative ACK point after this ACK.
    pub snd_una: Seq,
}

/// Implements `Deref<Target = AckFacts>` for a struct with a `facts` field.
macro_rules! deref_to_facts {
    ($ty:ty) => {
        impl std::ops::Deref for $ty {
            type Target = $crate::ack::AckFacts;
            fn deref(&self) -> &$crate::ack::AckFacts {
                &self.facts
            }
        }
    };
}
pub(crate) use deref_to_facts;
