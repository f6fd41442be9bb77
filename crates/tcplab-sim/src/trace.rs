//! Recording of what a run's [`TraceSpec`] asks for: flow and queue series, drops, the
//! senders' event logs and every data segment sent. With everything off a recorder costs a
//! few branches per event and no memory.
//!
//! Two bounds apply (docs/scenario.md, "Bounded recording"):
//! - a byte limit on everything recorded (`Recorder::limit`): the row that would pass it
//!   stops recording, and the driver ends the run with an error ([`Recorder::over`]);
//! - `trace.max_rows_per_flow`: the series and queue tables are decimated to one row per
//!   flow (link direction) per time bucket, the bucket doubling whenever the table reaches
//!   `max_rows_per_flow` rows per flow (link direction); the logs (drops, events, segments)
//!   keep their first `max_rows_per_flow` rows per flow and stop there.

use crate::packet::DropCause;
use crate::packet::Packet;
use crate::queue::Occupancy;
use crate::results::{DropLog, EventLog, FlowSeries, QueueSeries, SegmentLog};
use crate::scenario::{SeriesMode, TraceSpec};
use std::mem::size_of;
use tcplab_core::{DataSegment, LogRecord, Sender, SenderSnapshot, Time};

/// Bytes of one row of each recorded table (the sum of its columns' element sizes).
pub mod row_bytes {
    use super::size_of;
    type Label = &'static str;
    pub const SERIES: u64 = (size_of::<u32>() + size_of::<[u64; 8]>()) as u64;
    pub const QUEUES: u64 = (size_of::<[u32; 2]>() + size_of::<[u64; 2]>()) as u64;
    pub const DROPS: u64 = (size_of::<[u64; 2]>()
        + size_of::<[u32; 3]>()
        + size_of::<[Label; 3]>()
        + size_of::<Option<f64>>()) as u64;
    pub const EVENTS: u64 =
        (size_of::<[u64; 4]>() + size_of::<u32>() + size_of::<[Label; 3]>() + size_of::<f64>())
            as u64;
    pub const SEGMENTS: u64 =
        (size_of::<[u64; 2]>() + size_of::<[u32; 2]>() + size_of::<u8>()) as u64;
}

/// The recorded tables, in [`Recording::tables`] order.
pub const RECORDED: [&str; 5] = ["series", "queues", "drops", "events", "segments"];
const SERIES: usize = 0;
const QUEUES: usize = 1;
const DROPS: usize = 2;
const EVENTS: usize = 3;
const SEGMENTS: usize = 4;
/// Bytes per row of each table, in [`RECORDED`] order.
pub const ROW_BYTES: [u64; 5] = [
    row_bytes::SERIES,
    row_bytes::QUEUES,
    row_bytes::DROPS,
    row_bytes::EVENTS,
    row_bytes::SEGMENTS,
];

/// What one table holds at the end of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableRecord {
    pub table: &'static str,
    pub rows: u64,
    /// rows × the row's bytes (Vec capacity aside).
    pub bytes: u64,
    /// Series and queues decimated by `max_rows_per_flow`: one row per flow (link
    /// direction) per bucket of this many ns; 0 = every row kept.
    pub bucket_ns: u64,
    /// Logs cut by `max_rows_per_flow`: simulated time of the first row not kept.
    pub truncated_at_ns: Option<u64>,
}

/// What a run recorded, table by table, and the limit it ran under.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recording {
    pub tables: Vec<TableRecord>,
    pub limit_bytes: u64,
}

impl Recording {
    pub fn bytes(&self) -> u64 {
        self.tables.iter().map(|t| t.bytes).sum()
    }
}

/// The sampled state of one flow: one row of the series table without flow and time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSample {
    pub cwnd: u64,
    pub ssthresh: u64,
    /// 0 until the first RTT sample.
    pub srtt_ns: u64,
    pub rto_ns: u64,
    pub in_flight: u64,
    /// Application bytes delivered so far.
    pub delivered: u64,
    /// Payload bytes the sender has put on the wire so far, retransmissions included.
    pub bytes_sent: u64,
}

impl FlowSample {
    pub fn new(s: &SenderSnapshot, delivered: u64, bytes_sent: u64) -> Self {
        FlowSample {
            cwnd: s.cwnd,
            ssthresh: s.ssthresh,
            srtt_ns: s.srtt.map_or(0, |d| d.as_nanos()),
            rto_ns: s.rto.as_nanos(),
            in_flight: s.in_flight,
            delivered,
            bytes_sent,
        }
    }

    /// The sample of a sender now.
    pub fn of(sender: &Sender, delivered: u64) -> Self {
        FlowSample::new(&sender.snapshot(), delivered, sender.counters().bytes_sent)
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
    fn new(max_rows_per_key: Option<u64>, keys: usize) -> Self {
        let cap = max_rows_per_key.map_or(0, |m| (m.max(2) as usize).saturating_mul(keys.max(1)));
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

pub struct Recorder {
    pub series_mode: SeriesMode,
    pub events_on: bool,
    pub segments_on: bool,
    pub drops_on: bool,
    pub series: FlowSeries,
    pub queues: QueueSeries,
    pub drops: DropLog,
    pub events: EventLog,
    pub segments: SegmentLog,
    /// Last row recorded per flow (change mode).
    last: Vec<Option<FlowSample>>,
    /// Bytes of rows recorded may not pass this (u64::MAX: no limit).
    limit: u64,
    used: u64,
    /// Recording stopped at this time because the next row of this table passed `limit`.
    over: Option<(&'static str, Time)>,
    series_thin: Thinning,
    queue_thin: Thinning,
    /// Rows each log (drops, events, segments) may hold (usize::MAX: no cap), and when a
    /// log was cut.
    log_cap: usize,
    truncated: [Option<Time>; 5],
}

impl Recorder {
    /// A recorder of `spec` for `flows` TCP flows, `udp` UDP flows and `links` link
    /// directions, without a byte limit.
    pub fn new(spec: &TraceSpec, flows: usize) -> Self {
        Self::with_bounds(spec, flows, 0, 0)
    }

    /// `new`, knowing the UDP flows and link directions that `trace.max_rows_per_flow`
    /// counts.
    pub fn with_bounds(spec: &TraceSpec, flows: usize, udp: usize, links: usize) -> Self {
        let m = spec.max_rows_per_flow;
        Recorder {
            series_mode: spec.series,
            events_on: spec.events,
            segments_on: spec.segments,
            drops_on: spec.drops,
            series: FlowSeries::default(),
            queues: QueueSeries::default(),
            drops: DropLog::default(),
            events: EventLog::default(),
            segments: SegmentLog::default(),
            last: vec![None; flows],
            limit: u64::MAX,
            used: 0,
            over: None,
            series_thin: Thinning::new(m, flows),
            queue_thin: Thinning::new(m, links),
            log_cap: m.map_or(usize::MAX, |m| {
                (m.max(2) as usize).saturating_mul((flows + udp).max(1))
            }),
            truncated: [None; 5],
        }
    }

    /// Recording may hold at most `bytes` (rows × row bytes); the row that would pass it
    /// stops recording (see [`over`](Self::over)).
    pub fn set_limit(&mut self, bytes: u64) {
        self.limit = bytes;
    }

    /// The table whose row passed the limit, and when; recording has stopped.
    pub fn over(&self) -> Option<(&'static str, Time)> {
        self.over
    }

    /// Counts a row of table `t` against the limit; false (and recording stops) when it
    /// does not fit.
    #[inline]
    fn charge(&mut self, t: usize, now: Time) -> bool {
        if self.over.is_some() {
            return false;
        }
        let used = self.used + ROW_BYTES[t];
        if used > self.limit {
            self.over = Some((RECORDED[t], now));
            return false;
        }
        self.used = used;
        true
    }

    /// Whether log `t` (holding `len` rows) takes another row at `now`.
    #[inline]
    fn log_row(&mut self, t: usize, len: usize, now: Time) -> bool {
        if len >= self.log_cap {
            self.truncated[t].get_or_insert(now);
            return false;
        }
        self.charge(t, now)
    }

    /// What the tables hold now.
    pub fn recording(&self) -> Recording {
        let rows = [
            self.series.time_ns.len(),
            self.queues.time_ns.len(),
            self.drops.time_ns.len(),
            self.events.time_ns.len(),
            self.segments.time_ns.len(),
        ];
        let bucket = [self.series_thin.width, self.queue_thin.width, 0, 0, 0];
        Recording {
            tables: (0..5)
                .map(|t| TableRecord {
                    table: RECORDED[t],
                    rows: rows[t] as u64,
                    bytes: rows[t] as u64 * ROW_BYTES[t],
                    bucket_ns: bucket[t],
                    truncated_at_ns: self.truncated[t].map(|t| t.as_nanos()),
                })
                .collect(),
            limit_bytes: self.limit,
        }
    }

    /// Change mode records flows and queues after every change.
    #[inline]
    pub fn on_change(&self) -> bool {
        self.series_mode == SeriesMode::Change
    }

    /// Change mode: a row when the flow's sample differs from the last one recorded.
    pub fn flow_changed(&mut self, now: Time, flow: u32, s: FlowSample) {
        let last = &mut self.last[flow as usize];
        if *last != Some(s) {
            *last = Some(s);
            self.flow_row(now, flow, s);
        }
    }

    /// A row whatever changed (interval mode).
    pub fn flow_row(&mut self, now: Time, flow: u32, s: FlowSample) {
        if !self.series_thin.admit(flow, now.as_nanos()) || !self.charge(SERIES, now) {
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
            self.used -= (keep.len() - t.time_ns.len()) as u64 * ROW_BYTES[SERIES];
        }
    }

    /// A queue row (every change in change mode, every interval in interval mode).
    pub fn queue_row(&mut self, now: Time, link: u32, held: Occupancy) {
        if !self.queue_thin.admit(link, now.as_nanos()) || !self.charge(QUEUES, now) {
            return;
        }
        let q = &mut self.queues;
        q.link.push(link);
        q.time_ns.push(now.as_nanos());
        q.packets.push(held.packets);
        q.bytes.push(held.bytes);
        if let Some(keep) =
            self.queue_thin
                .compact(q.time_ns.len(), now.as_nanos(), &q.link, &q.time_ns)
        {
            retain(&mut q.link, &keep);
            retain(&mut q.time_ns, &keep);
            retain(&mut q.packets, &keep);
            retain(&mut q.bytes, &keep);
            self.used -= (keep.len() - q.time_ns.len()) as u64 * ROW_BYTES[QUEUES];
        }
    }

    pub fn drop(&mut self, now: Time, link: u32, p: &Packet, cause: DropCause) {
        self.drop_rssi(now, link, p, cause, None);
    }

    /// A drop with the received power of the last attempt (WLAN MAC drops; None elsewhere).
    pub fn drop_rssi(
        &mut self,
        now: Time,
        link: u32,
        p: &Packet,
        cause: DropCause,
        rssi: Option<f64>,
    ) {
        if !self.drops_on || !self.log_row(DROPS, self.drops.time_ns.len(), now) {
            return;
        }
        let kind = p.kind();
        let d = &mut self.drops;
        d.time_ns.push(now.as_nanos());
        d.link.push(link);
        d.flow_kind.push(kind.flow_kind());
        d.flow.push(p.flow);
        d.packet.push(kind.as_str());
        d.seq.push(p.seq());
        d.size.push(p.size);
        d.cause.push(cause.as_str());
        d.rssi_dbm.push(rssi);
    }

    pub fn segment(&mut self, now: Time, flow: u32, seg: &DataSegment) {
        if !self.segments_on || !self.log_row(SEGMENTS, self.segments.time_ns.len(), now) {
            return;
        }
        let s = &mut self.segments;
        s.time_ns.push(now.as_nanos());
        s.flow.push(flow);
        s.seq.push(seg.seq.0);
        s.len.push(seg.len);
        s.retransmission.push(seg.retransmission);
    }

    pub fn sender_log(&mut self, flow: u32, records: &[LogRecord]) {
        for r in records {
            if !self.log_row(EVENTS, self.events.time_ns.len(), r.time) {
                return;
            }
            let e = &mut self.events;
            e.time_ns.push(r.time.as_nanos());
            e.flow.push(flow);
            e.event.push(r.event.name());
            e.reason.push(r.event.reason());
            e.cwnd.push(r.cwnd);
            e.ssthresh.push(r.ssthresh);
            e.seq.push(r.seq.0);
            e.label.push(r.label);
            e.value.push(r.value);
        }
    }
}
