//! Timeout taxonomy (the ETH report's §10.2): every retransmission timeout of a TCP flow is
//! classified by cause from the ground truth (which transmissions of which segments the
//! network dropped, [`super::drops::DropLog::latest_drop`]) and the sender's state when
//! the timer fired. docs/timeouts.md states the rules and their limits.
//!
//! Per flow it keeps the kind of every retransmission of the outstanding segments (fast,
//! recovery, timeout, probe: the [`TxKind`] of each [`Fact::Transmit`]) and snd.nxt at the
//! latest recovery entry. Retransmissions are forgotten below snd.una ([`Fact::Acked`]), as
//! the drop log forgets its drops.

use super::drops::DropLog;
use super::{Fact, Instrument};
use crate::results::FlowSummary;
use std::collections::BTreeMap;
use tcplab_core::cc::CongestionKind;
use tcplab_core::{LossResponse, TxKind};

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

/// The instrument: a [`TimeoutTracker`] per TCP flow.
#[derive(Clone, Debug, Default)]
pub struct TimeoutTaxonomy {
    flows: Vec<TimeoutTracker>,
    /// The class of the latest loss response taken (None unless a timeout).
    last: Option<TimeoutClass>,
}

impl TimeoutTaxonomy {
    pub fn new(tcp_flows: usize) -> Self {
        TimeoutTaxonomy {
            flows: vec![TimeoutTracker::default(); tcp_flows],
            last: None,
        }
    }

    /// The class of the latest loss response taken: Some for a timeout, else None.
    pub fn last_class(&self) -> Option<TimeoutClass> {
        self.last
    }
}

impl Instrument for TimeoutTaxonomy {
    #[inline(always)]
    fn on_fact(&mut self, fact: &Fact, truth: &DropLog) {
        match *fact {
            Fact::Transmit {
                flow,
                seq,
                retransmission,
                kind,
            } => self.flows[flow as usize].on_send(seq, retransmission, kind),
            Fact::LossResponse {
                flow,
                response,
                snd_nxt,
            } => {
                let t = &mut self.flows[flow as usize];
                self.last = match response.kind {
                    CongestionKind::Timeout => Some(t.classify(truth, flow, &response)),
                    CongestionKind::FastRetransmit if !response.restart => {
                        t.on_recovery(snd_nxt);
                        None
                    }
                    _ => None,
                };
            }
            Fact::Acked { flow, una } => self.flows[flow as usize].prune(una),
            _ => {}
        }
    }

    fn fill(&self, flow: usize, row: &mut FlowSummary) {
        row.timeouts_by_class = self.flows[flow].counts;
    }
}

/// Per-flow bookkeeping and counts.
#[derive(Clone, Debug, Default)]
pub struct TimeoutTracker {
    /// Per retransmitted outstanding segment (first byte): the kind of transmission k at
    /// index k - 1.
    rtx: BTreeMap<u64, Vec<TxKind>>,
    /// snd.nxt when the latest recovery began (a fast retransmit that was not a restart).
    recovery_point: Option<u64>,
    pub counts: [u64; 6],
}

impl TimeoutTracker {
    /// A segment starting at `seq` was just sent as its transmission number
    /// `retransmission` (0 = original), of the kind the sender reported.
    #[inline]
    pub fn on_send(&mut self, seq: u64, retransmission: u8, kind: TxKind) {
        if retransmission != 0 && kind.is_retransmission() {
            self.record(seq, retransmission, kind);
        }
    }

    fn record(&mut self, seq: u64, retransmission: u8, kind: TxKind) {
        let v = self.rtx.entry(seq).or_default();
        v.resize(retransmission as usize - 1, TxKind::Timeout);
        v.push(kind);
    }

    /// A recovery began with snd.nxt at `snd_nxt`.
    pub fn on_recovery(&mut self, snd_nxt: u64) {
        self.recovery_point = Some(snd_nxt);
    }

    /// Forgets segments below `una`.
    #[inline]
    pub fn prune(&mut self, una: u64) {
        while self.rtx.first_key_value().is_some_and(|(&k, _)| k < una) {
            self.rtx.pop_first();
        }
    }

    fn latest_kind(&self, seq: u64, transmissions: u8) -> Option<TxKind> {
        let k = transmissions.checked_sub(2)? as usize;
        self.rtx.get(&seq)?.get(k).copied()
    }

    /// Classifies and counts timeout `r` of flow `flow`.
    pub fn classify(&mut self, truth: &DropLog, flow: u32, r: &LossResponse) -> TimeoutClass {
        let class = self.class_of(truth, flow, r);
        self.counts[class as usize] += 1;
        class
    }

    fn class_of(&self, truth: &DropLog, flow: u32, r: &LossResponse) -> TimeoutClass {
        use TimeoutClass::*;
        let seq = r.seq.0;
        let dropped = truth.latest_drop(flow, seq, r.transmissions).is_some();
        if dropped {
            match self.latest_kind(seq, r.transmissions) {
                Some(TxKind::Timeout) => return LostTimeoutRtx,
                Some(TxKind::Fast) => return LostFastRtx,
                Some(TxKind::Recovery) => return MplLostRtx,
                Some(TxKind::Probe) => return Other,
                Some(TxKind::New) | None => {}
            }
        }
        let mpl = r.in_recovery || self.recovery_point.is_some_and(|p| seq < p);
        if mpl {
            // Another outstanding segment whose latest transmission was a fast or
            // recovery retransmission that the network dropped.
            let lost_rtx = self.rtx.iter().any(|(&s, kinds)| {
                matches!(kinds.last(), Some(TxKind::Fast | TxKind::Recovery))
                    && truth.latest_drop(flow, s, kinds.len() as u8 + 1).is_some()
            });
            return if lost_rtx { MplLostRtx } else { MplMissingAcks };
        }
        if dropped && r.transmissions == 1 {
            return NonTrigger;
        }
        Other
    }
}
