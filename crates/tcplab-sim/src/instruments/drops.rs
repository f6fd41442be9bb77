//! The ground-truth drop log: per flow, the packets dropped and marked, and for each data
//! segment of a TCP flow the latest of its transmissions that was dropped, with the cause.
//! The loss classification and the timeout taxonomy read it; it forgets segments once the
//! sender has them acknowledged ([`Fact::Acked`]). O(log n) per drop, nothing per packet sent.

use super::fact::{Dropped, Fact};
use crate::packet::{DropCause, PacketKind};
use crate::results::FlowSummary;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
pub struct DropLog {
    /// Per TCP flow: `[data drops, ACK drops]`.
    pub tcp: Vec<[u64; 2]>,
    /// Per UDP flow.
    pub udp: Vec<u64>,
    /// Per TCP flow: packets marked CE by a queue (a packet marked twice counts twice).
    pub marks: Vec<u64>,
    /// Per TCP flow: for each data segment (by first byte) that was dropped and is not yet
    /// acknowledged, the latest transmission of it that was dropped and why.
    latest: Vec<BTreeMap<u64, (u8, DropCause)>>,
}

impl DropLog {
    pub fn new(tcp_flows: usize, udp_flows: usize) -> Self {
        DropLog {
            tcp: vec![[0; 2]; tcp_flows],
            udp: vec![0; udp_flows],
            marks: vec![0; tcp_flows],
            latest: vec![BTreeMap::new(); tcp_flows],
        }
    }

    /// Takes the facts it keeps (drops, marks, acknowledgments); ignores the others.
    #[inline(always)]
    pub fn on_fact(&mut self, fact: &Fact) {
        match *fact {
            Fact::Drop(d) => self.on_drop(&d),
            Fact::Mark { flow } => self.marks[flow as usize] += 1,
            Fact::Acked { flow, una } => {
                let latest = &mut self.latest[flow as usize];
                while latest.first_key_value().is_some_and(|(&k, _)| k < una) {
                    latest.pop_first();
                }
            }
            _ => {}
        }
    }

    fn on_drop(&mut self, d: &Dropped) {
        let flow = d.flow as usize;
        match d.kind {
            PacketKind::Data => {
                self.tcp[flow][0] += 1;
                let e = self.latest[flow]
                    .entry(d.seq)
                    .or_insert((d.retransmission, d.cause));
                // An older transmission dropped after a newer one does not count.
                if d.retransmission >= e.0 {
                    *e = (d.retransmission, d.cause);
                }
            }
            PacketKind::Ack => self.tcp[flow][1] += 1,
            PacketKind::Udp => self.udp[flow] += 1,
        }
    }

    /// The cause of the drop of the most recent transmission of TCP flow `flow`'s data
    /// segment starting at `seq`, which has been transmitted `transmissions` times so far;
    /// None when that transmission was not dropped (yet).
    pub fn latest_drop(&self, flow: u32, seq: u64, transmissions: u8) -> Option<DropCause> {
        match self.latest[flow as usize].get(&seq) {
            Some(&(tx, cause)) if transmissions > 0 && tx == transmissions - 1 => Some(cause),
            _ => None,
        }
    }

    /// Writes TCP flow `flow`'s drop and mark counts into its summary row.
    pub fn fill(&self, flow: usize, s: &mut FlowSummary) {
        [s.data_drops, s.ack_drops] = self.tcp[flow];
        s.ecn_marks = self.marks[flow];
    }
}
