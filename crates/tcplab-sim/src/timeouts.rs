//! Timeout taxonomy (the ETH report's §10.2): every retransmission timeout of a TCP flow is
//! classified by cause from the ground truth (which transmissions of which segments the
//! network dropped, [`crate::network::Network::latest_drop`]) and the sender's state when
//! the timer fired. docs/timeouts.md states the rules and their limits.
//!
//! Per flow the driver keeps the kind of every retransmission of the outstanding segments
//! (fast, recovery, timeout, probe: which of the sender's retransmission counters the
//! retransmission incremented) and snd.nxt at the latest recovery entry. Both are pruned
//! below snd.una with the network's drop records.

use crate::network::Network;
use crate::results::FlowSummary;
use std::collections::BTreeMap;
use tcplab_core::{LossResponse, SenderCounters};

/// Kind of a retransmission, from the sender's counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtxKind {
    /// The retransmission that started a recovery (`retransmits_fast`).
    Fast,
    /// Any other retransmission during a recovery (`retransmits_recovery`).
    Recovery,
    /// After a retransmission timeout, outside recovery (`retransmits_timeout`).
    Timeout,
    /// A tail-loss probe (`retransmits_probe`).
    Probe,
}

/// Cause of a timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum TimeoutClass {
    LostTimeoutRtx = 0,
    LostFastRtx = 1,
    MplLostRtx = 2,
    MplMissingAcks = 3,
    NonTrigger = 4,
    Other = 5,
}

impl TimeoutClass {
    pub const ALL: [TimeoutClass; 6] = [
        TimeoutClass::LostTimeoutRtx,
        TimeoutClass::LostFastRtx,
        TimeoutClass::MplLostRtx,
        TimeoutClass::MplMissingAcks,
        TimeoutClass::NonTrigger,
        TimeoutClass::Other,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            TimeoutClass::LostTimeoutRtx => "lost_timeout_rtx",
            TimeoutClass::LostFastRtx => "lost_fast_rtx",
            TimeoutClass::MplLostRtx => "mpl_lost_rtx",
            TimeoutClass::MplMissingAcks => "mpl_missing_acks",
            TimeoutClass::NonTrigger => "non_trigger",
            TimeoutClass::Other => "other",
        }
    }
}

/// Per-flow bookkeeping and counts.
#[derive(Clone, Debug, Default)]
pub struct TimeoutTracker {
    /// Per retransmitted outstanding segment (first byte): the kind of transmission k at
    /// index k - 1.
    rtx: BTreeMap<u64, Vec<RtxKind>>,
    /// snd.nxt when the latest recovery began (a fast retransmit that was not a restart).
    recovery_point: Option<u64>,
    /// Retransmission counters seen so far: [fast, recovery, timeout, probe].
    seen: [u64; 4],
    pub counts: [u64; 6],
}

fn rtx_counters(c: &SenderCounters) -> [u64; 4] {
    [
        c.retransmits_fast,
        c.retransmits_recovery,
        c.retransmits_timeout,
        c.retransmits_probe,
    ]
}

impl TimeoutTracker {
    /// A segment starting at `seq` was just sent as its transmission number
    /// `retransmission` (0 = original); `c` are the sender's counters after it.
    pub fn on_send(&mut self, seq: u64, retransmission: u8, c: &SenderCounters) {
        if retransmission == 0 {
            return;
        }
        let now = rtx_counters(c);
        let kind = match (0..4).find(|&k| now[k] > self.seen[k]) {
            Some(0) => RtxKind::Fast,
            Some(1) => RtxKind::Recovery,
            Some(3) => RtxKind::Probe,
            _ => RtxKind::Timeout,
        };
        self.seen = now;
        let v = self.rtx.entry(seq).or_default();
        v.resize(retransmission as usize - 1, RtxKind::Timeout);
        v.push(kind);
    }

    /// A recovery began with snd.nxt at `snd_nxt`.
    pub fn on_recovery(&mut self, snd_nxt: u64) {
        self.recovery_point = Some(snd_nxt);
    }

    /// Forgets segments below `una`.
    pub fn prune(&mut self, una: u64) {
        while self.rtx.first_key_value().is_some_and(|(&k, _)| k < una) {
            self.rtx.pop_first();
        }
    }

    fn latest_kind(&self, seq: u64, transmissions: u8) -> Option<RtxKind> {
        let k = transmissions.checked_sub(2)? as usize;
        self.rtx.get(&seq)?.get(k).copied()
    }

    /// Classifies and counts timeout `r` of flow `flow`.
    pub fn classify(&mut self, net: &Network, flow: u32, r: &LossResponse) -> TimeoutClass {
        let class = self.class_of(net, flow, r);
        self.counts[class as usize] += 1;
        class
    }

    fn class_of(&self, net: &Network, flow: u32, r: &LossResponse) -> TimeoutClass {
        use TimeoutClass::*;
        let seq = r.seq.0;
        let dropped = net.latest_drop(flow, seq, r.transmissions).is_some();
        if dropped {
            match self.latest_kind(seq, r.transmissions) {
                Some(RtxKind::Timeout) => return LostTimeoutRtx,
                Some(RtxKind::Fast) => return LostFastRtx,
                Some(RtxKind::Recovery) => return MplLostRtx,
                Some(RtxKind::Probe) => return Other,
                None => {}
            }
        }
        let mpl = r.in_recovery || self.recovery_point.is_some_and(|p| seq < p);
        if mpl {
            // Another outstanding segment whose latest transmission was a fast or
            // recovery retransmission that the network dropped.
            let lost_rtx = self.rtx.iter().any(|(&s, kinds)| {
                matches!(kinds.last(), Some(RtxKind::Fast | RtxKind::Recovery))
                    && net.latest_drop(flow, s, kinds.len() as u8 + 1).is_some()
            });
            return if lost_rtx { MplLostRtx } else { MplMissingAcks };
        }
        if dropped && r.transmissions == 1 {
            return NonTrigger;
        }
        Other
    }

    /// Writes the counts into the flow's summary row.
    pub fn fill(&self, s: &mut FlowSummary) {
        s.timeouts_by_class = self.counts;
    }
}
