//! The ETH report's per-flow measurements of loss events and recovery triggers
//! (docs/eth-metrics.md): loss events, single or multiple (report §11.1, Table 3), and the
//! duplicate ACKs that triggered each recovery (§10.5). Timeouts by cause are in
//! [`super::timeouts`]; the use of the n-th SACK block is counted by the sender
//! (`SenderCounters::sack_blocks_carried`/`sack_blocks_used`).
//!
//! A loss event is one window's lost packets, from the ground truth: every dropped data
//! transmission belongs to the first window reduction (recovery entry, recovery restart or
//! timeout) that happened after it was sent; a reduction that gathers one drop is a single
//! loss event, one that gathers more a multiple loss event, one that gathers none (a second
//! reduction for losses already counted, a spurious retransmission, lost ACKs) is no loss
//! event. Drops sent after the latest reduction wait for the next one; at the end of the
//! run they belong to no event.

use super::drops::DropLog;
use super::{Fact, Instrument};
use crate::packet::PacketKind;
use crate::results::FlowSummary;
use tcplab_core::{LossResponse, Time};

/// Recoveries are counted by their duplicate ACKs 0, 1, 2, 3 and 4 or more.
pub const DUPACK_BINS: usize = 5;

/// The instrument: [`EthMetrics`] per TCP flow.
#[derive(Clone, Debug, Default)]
pub struct LossEvents {
    flows: Vec<EthMetrics>,
    /// Loss responses taken so far, of all flows: the next one's row in the verdicts table.
    responses: usize,
}

impl LossEvents {
    pub fn new(tcp_flows: usize) -> Self {
        LossEvents {
            flows: vec![EthMetrics::default(); tcp_flows],
            responses: 0,
        }
    }

    /// (verdicts row, dropped transmissions) of every reduction of every flow.
    pub fn event_sizes(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        self.flows.iter().flat_map(EthMetrics::event_sizes)
    }
}

impl Instrument for LossEvents {
    #[inline(always)]
    fn on_fact(&mut self, fact: &Fact, _truth: &DropLog) {
        match *fact {
            Fact::Drop(d) if d.kind == PacketKind::Data => {
                self.flows[d.flow as usize].on_drop(d.sent_at)
            }
            Fact::LossResponse { flow, response, .. } => {
                self.flows[flow as usize].on_reduction(&response, self.responses);
                self.responses += 1;
            }
            _ => {}
        }
    }

    fn fill(&self, flow: usize, row: &mut FlowSummary) {
        self.flows[flow].fill(row);
    }
}

/// Per-flow bookkeeping.
#[derive(Clone, Debug, Default)]
pub struct EthMetrics {
    /// Every reduction so far, in time order: (time, row in the verdicts table, dropped
    /// transmissions sent before it and after the previous one).
    reductions: Vec<(Time, usize, u32)>,
    /// Send times of dropped transmissions no reduction has followed yet.
    pending: Vec<Time>,
    /// Recovery entries by duplicate ACKs (index min(dupacks, 4)) and their sum.
    recoveries_by_dupacks: [u64; DUPACK_BINS],
    dupacks_sum: u64,
}

impl EthMetrics {
    /// A data transmission sent at `sent_at` was dropped.
    pub fn on_drop(&mut self, sent_at: Time) {
        let first_after = self.reductions.partition_point(|r| r.0 <= sent_at);
        match self.reductions.get_mut(first_after) {
            Some(r) => r.2 += 1,
            None => self.pending.push(sent_at),
        }
    }

    /// The sender answered loss signal `r` (written to the verdicts table as row `row`).
    /// ECN responses are no loss responses and never reach here.
    pub fn on_reduction(&mut self, r: &LossResponse, row: usize) {
        let now = r.time;
        let before = self.pending.len();
        self.pending.retain(|&t| t >= now);
        let drops = (before - self.pending.len()) as u32;
        self.reductions.push((now, row, drops));
        if r.kind == tcplab_core::cc::CongestionKind::FastRetransmit && !r.restart {
            self.recoveries_by_dupacks[(r.dupacks as usize).min(DUPACK_BINS - 1)] += 1;
            self.dupacks_sum += r.dupacks as u64;
        }
    }

    /// (verdicts row, dropped transmissions) of every reduction, for the verdicts table.
    pub fn event_sizes(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        self.reductions.iter().map(|&(_, row, n)| (row, n))
    }

    /// Writes the counts into the flow's summary row.
    pub fn fill(&self, s: &mut FlowSummary) {
        for &(_, _, n) in &self.reductions {
            match n {
                0 => {}
                1 => s.loss_events_single += 1,
                _ => s.loss_events_multiple += 1,
            }
            s.loss_event_drops += n as u64;
            s.loss_event_max = s.loss_event_max.max(n as u64);
        }
        s.recoveries_by_dupacks = self.recoveries_by_dupacks;
        let recoveries: u64 = self.recoveries_by_dupacks.iter().sum();
        s.dupacks_per_recovery =
            (recoveries > 0).then(|| self.dupacks_sum as f64 / recoveries as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::cc::CongestionKind;
    use tcplab_core::Seq;

    fn t(ms: u64) -> Time {
        Time::from_millis(ms)
    }

    fn response(ms: u64, kind: CongestionKind, restart: bool, dupacks: u32) -> LossResponse {
        LossResponse {
            time: t(ms),
            kind,
            restart,
            label: "1/2",
            value: 0.5,
            seq: Seq(0),
            transmissions: 1,
            cwnd_before: 0,
            ssthresh_after: 0,
            in_recovery: false,
            dupacks,
        }
    }

    #[test]
    fn drops_are_grouped_by_the_first_reduction_after_they_were_sent() {
        let mut m = EthMetrics::default();
        let fr = CongestionKind::FastRetransmit;
        // Three drops of one window, then the recovery they cause.
        for ms in [10, 11, 13] {
            m.on_drop(t(ms));
        }
        m.on_reduction(&response(100, fr, false, 3), 0);
        // A segment sent just before the reduction is dropped after it: same window.
        m.on_drop(t(99));
        // A second halving for the same window (Reno): no new loss event.
        m.on_reduction(&response(150, fr, false, 3), 1);
        // One drop later, answered by a timeout.
        m.on_drop(t(200));
        m.on_reduction(&response(1300, CongestionKind::Timeout, false, 0), 2);
        // A drop no reduction followed.
        m.on_drop(t(1400));
        let sizes: Vec<_> = m.event_sizes().collect();
        assert_eq!(sizes, vec![(0, 4), (1, 0), (2, 1)]);
        let mut s = FlowSummary::default();
        m.fill(&mut s);
        assert_eq!((s.loss_events_single, s.loss_events_multiple), (1, 1));
        assert_eq!((s.loss_event_drops, s.loss_event_max), (5, 4));
    }

    #[test]
    fn a_drop_sent_at_the_reduction_instant_waits_for_the_next() {
        let mut m = EthMetrics::default();
        m.on_drop(t(100));
        m.on_reduction(&response(100, CongestionKind::Timeout, false, 0), 0);
        assert_eq!(m.event_sizes().collect::<Vec<_>>(), vec![(0, 0)]);
    }

    #[test]
    fn recoveries_are_counted_by_their_duplicate_acks() {
        let mut m = EthMetrics::default();
        let fr = CongestionKind::FastRetransmit;
        for (i, d) in [3, 1, 3, 7, 0].into_iter().enumerate() {
            m.on_reduction(&response(i as u64, fr, false, d), i);
        }
        // Restarts and timeouts are not recovery entries.
        m.on_reduction(&response(9, fr, true, 5), 5);
        m.on_reduction(&response(10, CongestionKind::Timeout, false, 2), 6);
        let mut s = FlowSummary::default();
        m.fill(&mut s);
        assert_eq!(s.recoveries_by_dupacks, [1, 1, 0, 2, 1]);
        assert_eq!(s.dupacks_per_recovery, Some(14.0 / 5.0));
    }
}
