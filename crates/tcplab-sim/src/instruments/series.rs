//! The series instrument: the flows' state over time (the `series` table: cwnd, ssthresh,
//! srtt, rto, in flight, bytes delivered and sent) and what each link direction holds (the
//! `queues` table), from [`Fact::FlowState`] and [`Fact::QueueState`].
//!
//! A periodic flow state (series at an interval) is a row; a state stated after an
//! interaction (series on change) is a row when it differs from the flow's last row. Queue
//! states are a row each. Rows count against the run's recording [`Budget`], and past
//! their cap ([`crate::trace::table_cap`]: `trace.max_rows_per_flow`, or by default
//! [`crate::trace::DEFAULT_TABLE_BYTES`] each) both tables are decimated to one row per flow
//! (link direction) per time bucket, the bucket doubling whenever a table reaches the cap
//! (docs/scenario.md, "Bounded recording").

use super::fact::{Fact, FlowSample};
use crate::results::{FlowSeries, QueueSeries};
use crate::trace::{row_bytes, Budget};
use tcplab_core::Time;

/// The series and queues tables of a run.
#[derive(Clone, Debug, Default)]
pub struct Series {
    pub series: FlowSeries,
    pub queues: QueueSeries,
    /// Last row recorded per flow (rows on change).
    last: Vec<Option<FlowSample>>,
    series_thin: Thinning,
    queue_thin: Thinning,
}

impl Series {
    /// The tables of `flows` TCP flows and `links` link directions, the series table at most
    /// `series_cap` rows and the queues table at most `queue_cap` rows when Some (decimated:
    /// [`crate::trace::table_cap`]).
    pub fn new(
        flows: usize,
        links: usize,
        series_cap: Option<u64>,
        queue_cap: Option<u64>,
    ) -> Self {
        Series {
            last: vec![None; flows],
            series_thin: Thinning::new(series_cap, flows),
            queue_thin: Thinning::new(queue_cap, links),
            ..Series::default()
        }
    }

    /// Takes the facts it reads (flow and queue states); ignores the others.
    pub fn on_fact(&mut self, fact: &Fact, budget: &mut Budget) {
        match *fact {
            Fact::FlowState {
                time,
                flow,
                state,
                changed_only,
            } => {
                if changed_only {
                    let last = &mut self.last[flow as usize];
                    if *last == Some(state) {
                        return;
                    }
                    *last = Some(state);
                }
                self.flow_row(time, flow, state, budget);
            }
            Fact::QueueState {
                time,
                link,
                packets,
                bytes,
            } => self.queue_row(time, link, packets, bytes, budget),
            _ => {}
        }
    }

    /// Rows and bucket width (ns; 0 = not decimated) of the series and queues tables.
    pub fn sizes(&self) -> [(usize, u64); 2] {
        [
            (self.series.time_ns.len(), self.series_thin.width),
            (self.queues.time_ns.len(), self.queue_thin.width),
        ]
    }

    fn flow_row(&mut self, now: Time, flow: u32, s: FlowSample, budget: &mut Budget) {
        if !self.series_thin.admit(flow, now.as_nanos())
            || !budget.charge("series", row_bytes::SERIES, now)
        {
            return;
        }
        let t = &mut self.series;
        t.flow.push(flow);
        t.time_ns.push(now.as_nanos());
        t.cwnd.push(s.cwnd);
        t.ssthresh.push(s.ssthresh);
        t.srtt_ns.push(s.srtt_ns);
        t.rto_ns.push(s.rto_ns);
        t.in_flight.push(s.in_flight);
        t.delivered.push(s.delivered);
        t.bytes_sent.push(s.bytes_sent);
        if let Some(keep) =
            self.series_thin
                .compact(t.time_ns.len(), now.as_nanos(), &t.flow, &t.time_ns)
        {
            retain(&mut t.flow, &keep);
            retain(&mut t.time_ns, &keep);
            retain(&mut t.cwnd, &keep);
            retain(&mut t.ssthresh, &keep);
            retain(&mut t.srtt_ns, &keep);
            retain(&mut t.rto_ns, &keep);
            retain(&mut t.in_flight, &keep);
            retain(&mut t.delivered, &keep);
            retain(&mut t.bytes_sent, &keep);
            budget.refund((keep.len() - t.time_ns.len()) as u64 * row_bytes::SERIES);
        }
    }

    fn queue_row(&mut self, now: Time, link: u32, packets: u32, bytes: u64, budget: &mut Budget) {
        if !self.queue_thin.admit(link, now.as_nanos())
            || !budget.charge("queues", row_bytes::QUEUES, now)
        {
            return;
        }
        let q = &mut self.queues;
        q.link.push(link);
        q.time_ns.push(now.as_nanos());
        q.packets.push(packets);
        q.bytes.push(bytes);
        if let Some(keep) =
            self.queue_thin
                .compact(q.time_ns.len(), now.as_nanos(), &q.link, &q.time_ns)
        {
            retain(&mut q.link, &keep);
            retain(&mut q.time_ns, &keep);
            retain(&mut q.packets, &keep);
            retain(&mut q.bytes, &keep);
            budget.refund((keep.len() - q.time_ns.len()) as u64 * row_bytes::QUEUES);
        }
    }
}

/// Decimation of a series table keyed by flow (or link direction): at most one row per key
/// per bucket of `width` ns (the first), `width` doubling whenever the table reaches `cap`.
#[derive(Clone, Debug, Default)]
struct Thinning {
    /// Rows that trigger a compaction; 0 = never (keep every row).
    cap: usize,
    /// Bucket width in ns; 0 = not decimated yet.
    width: u64,
    /// Per key: 1 + the bucket of its last row kept (0 = none).
    last: Vec<u64>,
}

impl Thinning {
    /// At most `cap` rows (None: every row) of `keys` keys.
    fn new(cap: Option<u64>, keys: usize) -> Self {
        let cap = cap.map_or(0, |c| usize::try_from(c).unwrap_or(usize::MAX));
        Thinning {
            cap,
            width: 0,
            last: vec![0; keys],
        }
    }

    /// Whether a row of `key` at `t` is kept.
    #[inline]
    fn admit(&mut self, key: u32, t: u64) -> bool {
        if self.width == 0 {
            return true;
        }
        let b = t / self.width + 1;
        let last = &mut self.last[key as usize];
        if *last == b {
            false
        } else {
            *last = b;
            true
        }
    }

    /// After a row: the table holds `len` rows at time `now`. Returns the rows to keep when
    /// the table must shrink (then `width` has grown), None otherwise.
    fn compact(&mut self, len: usize, now: u64, keys: &[u32], times: &[u64]) -> Option<Vec<bool>> {
        if self.cap == 0 || len < self.cap {
            return None;
        }
        // One row per key and bucket leaves at most keys × (now / width + 1) rows: start
        // from the width that brings this under half the cap, then double until it holds.
        let n_keys = self.last.len().max(1) as u64;
        let half = (self.cap / 2).max(1) as u64;
        let guess = (n_keys.saturating_mul(now.saturating_add(1)) / half).max(1);
        let mut width = (self.width.saturating_mul(2)).max(guess.next_power_of_two());
        loop {
            let mut last = vec![0u64; self.last.len()];
            let keep: Vec<bool> = keys
                .iter()
                .zip(times)
                .map(|(&k, &t)| {
                    let b = t / width + 1;
                    let l = &mut last[k as usize];
                    let new = *l != b;
                    *l = b;
                    new
                })
                .collect();
            let kept = keep.iter().filter(|&&k| k).count();
            if kept as u64 <= half || width > now {
                self.width = width;
                self.last = last;
                return Some(keep);
            }
            width = width.saturating_mul(2);
        }
    }
}

/// Keeps the elements of `v` whose entry in `keep` is true.
fn retain<T>(v: &mut Vec<T>, keep: &[bool]) {
    let mut k = keep.iter();
    v.retain(|_| *k.next().unwrap_or(&true));
}
