//! Recording of what a run's [`TraceSpec`] asks for: drops, the senders' event logs and
//! every data segment sent (the flow and queue series and the delay over time are
//! instruments, [`crate::instruments::series`] and [`crate::instruments::delay_series`],
//! which share the recorder's byte [`Budget`]). With
//! everything off a recorder costs a few branches per event and no memory.
//!
//! Three bounds apply (docs/scenario.md, "Bounded recording"):
//! - a byte limit on everything recorded ([`Budget`]): the row that would pass it
//!   stops recording, and the driver ends the run with an error ([`Recorder::over`]);
//! - `trace.max_rows_per_flow`: the logs (drops, events, segments) keep their first
//!   `max_rows_per_flow` rows per flow and stop there (the series instrument decimates the
//!   series and queue tables);
//! - without `trace.max_rows_per_flow`, the series and queues tables recorded on change each
//!   stay within [`DEFAULT_TABLE_BYTES`] ([`table_cap`]), decimated past it; `"all"` keeps
//!   every row.

use crate::packet::DropCause;
use crate::packet::Packet;
use crate::results::{DropLog, EventLog, SegmentLog};
use crate::scenario::{MaxRows, SeriesMode, TraceSpec};
use std::mem::size_of;
use tcplab_core::{DataSegment, LogRecord, Time};

/// Bytes of one row of each recorded table (the sum of its columns' element sizes).
pub mod row_bytes {
    use super::size_of;
    /// A label's code ([`crate::labels::Labels`]).
    type Label = u32;
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
    pub const DELAY_SERIES: u64 =
        (size_of::<Label>() + size_of::<u32>() + size_of::<[u64; 6]>() + size_of::<f64>()) as u64;
}

/// Bytes the series and the queues tables each hold at most when recorded on change (their
/// rows follow the packets) unless `trace.max_rows_per_flow` says otherwise: past it the table
/// is decimated ([`crate::instruments::series`]), so that a long run of a few flows with the
/// default trace settings stays small (a 600 s run of three flows sharing 10 Mb/s recorded
/// 159 MB in these two tables; docs/scenario.md, "Bounded recording"). At an interval the
/// rows are what the interval asks for, every one kept.
pub const DEFAULT_TABLE_BYTES: u64 = 16 << 20;

/// Rows table `t` (series or queues, an index into [`RECORDED`]) holds at most, for `keys`
/// flows (link directions): None = every row.
pub fn table_cap(spec: &TraceSpec, t: usize, keys: usize) -> Option<u64> {
    match spec.max_rows_per_flow {
        None if spec.default_bound() => Some(DEFAULT_TABLE_BYTES / ROW_BYTES[t]),
        None => None,
        Some(MaxRows::All) => None,
        Some(MaxRows::Rows(m)) => Some(m.max(2).saturating_mul(keys.max(1) as u64)),
    }
}

/// The recorded tables, in [`Recording::tables`] order.
pub const RECORDED: [&str; 6] = [
    "series",
    "queues",
    "drops",
    "events",
    "segments",
    "delay_series",
];
/// Indices into [`RECORDED`] of the two decimated tables.
pub const SERIES_TABLE: usize = 0;
pub const QUEUES_TABLE: usize = 1;
const DROPS: usize = 2;
const EVENTS: usize = 3;
const SEGMENTS: usize = 4;
/// Bytes per row of each table, in [`RECORDED`] order.
pub const ROW_BYTES: [u64; 6] = [
    row_bytes::SERIES,
    row_bytes::QUEUES,
    row_bytes::DROPS,
    row_bytes::EVENTS,
    row_bytes::SEGMENTS,
    row_bytes::DELAY_SERIES,
];

/// What one table holds at the end of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableRecord {
    pub table: &'static str,
    pub rows: u64,
    /// rows × the row's bytes (Vec capacity aside).
    pub bytes: u64,
    /// Series and queues decimated ([`table_cap`]): one row per flow (link
    /// direction) per bucket of this many ns; delay_series: its intervals widened to this
    /// many ns; 0 = every row kept.
    pub bucket_ns: u64,
    /// Logs cut by `max_rows_per_flow`: simulated time of the first row not kept.
    pub truncated_at_ns: Option<u64>,
}

/// What a run recorded, table by table, and the limit it ran under.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recording {
    pub tables: Vec<TableRecord>,
    pub limit_bytes: u64,
    /// Some([`DEFAULT_TABLE_BYTES`]) when that default bound decimates the series and queues
    /// (past it), None when `trace.max_rows_per_flow` sets the bound or none applies.
    pub default_table_bytes: Option<u64>,
}

impl Recording {
    pub fn bytes(&self) -> u64 {
        self.tables.iter().map(|t| t.bytes).sum()
    }
}

/// The byte limit on everything a run records, shared by the recorder's logs and the
/// series instrument ([`crate::instruments::series`]): the row that would pass it stops
/// recording, for good.
#[derive(Clone, Debug)]
pub struct Budget {
    /// Bytes of rows recorded may not pass this (u64::MAX: no limit).
    limit: u64,
    used: u64,
    /// Recording stopped at this time because the next row of this table passed `limit`.
    over: Option<(&'static str, Time)>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget::unlimited()
    }
}

impl Budget {
    pub fn unlimited() -> Self {
        Budget {
            limit: u64::MAX,
            used: 0,
            over: None,
        }
    }

    /// Counts a row of `bytes` of table `table` at `now`; false (and recording stops) when
    /// it does not fit.
    #[inline]
    pub fn charge(&mut self, table: &'static str, bytes: u64, now: Time) -> bool {
        if self.over.is_some() {
            return false;
        }
        let used = self.used + bytes;
        if used > self.limit {
            self.over = Some((table, now));
            return false;
        }
        self.used = used;
        true
    }

    /// Bytes may not pass `limit` from now on.
    pub fn set_limit(&mut self, limit: u64) {
        self.limit = limit;
    }

    /// Bytes of rows recorded.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// The table whose row passed the limit, and when.
    pub fn over(&self) -> Option<(&'static str, Time)> {
        self.over
    }

    /// Gives back `bytes` of rows removed (decimation).
    pub fn refund(&mut self, bytes: u64) {
        self.used -= bytes;
    }
}

pub struct Recorder {
    pub series_mode: SeriesMode,
    pub events_on: bool,
    pub segments_on: bool,
    pub drops_on: bool,
    pub drops: DropLog,
    pub events: EventLog,
    pub segments: SegmentLog,
    /// Shared with the series instrument, which records the series and queues tables.
    pub budget: Budget,
    /// Rows each log (drops, events, segments) may hold (usize::MAX: no cap), and when a
    /// log was cut.
    log_cap: usize,
    truncated: [Option<Time>; 6],
    /// The default bound applies to the series and queues ([`table_cap`]).
    default_bound: bool,
}

impl Recorder {
    /// A recorder of `spec` for `flows` TCP flows, without a byte limit.
    pub fn new(spec: &TraceSpec, flows: usize) -> Self {
        Self::with_bounds(spec, flows, 0)
    }

    /// `new`, knowing the UDP flows that `trace.max_rows_per_flow` counts.
    pub fn with_bounds(spec: &TraceSpec, flows: usize, udp: usize) -> Self {
        let m = spec.rows_per_flow();
        Recorder {
            series_mode: spec.series,
            events_on: spec.events,
            segments_on: spec.segments,
            drops_on: spec.drops,
            drops: DropLog::default(),
            events: EventLog::default(),
            segments: SegmentLog::default(),
            budget: Budget::unlimited(),
            log_cap: m.map_or(usize::MAX, |m| {
                (m.max(2) as usize).saturating_mul((flows + udp).max(1))
            }),
            truncated: [None; 6],
            default_bound: spec.default_bound(),
        }
    }

    /// Recording may hold at most `bytes` (rows × row bytes); the row that would pass it
    /// stops recording (see [`over`](Self::over)).
    pub fn set_limit(&mut self, bytes: u64) {
        self.budget.set_limit(bytes);
    }

    /// The table whose row passed the limit, and when; recording has stopped.
    pub fn over(&self) -> Option<(&'static str, Time)> {
        self.budget.over()
    }

    /// Counts a row of table `t` against the limit; false (and recording stops) when it
    /// does not fit.
    #[inline]
    fn charge(&mut self, t: usize, now: Time) -> bool {
        self.budget.charge(RECORDED[t], ROW_BYTES[t], now)
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

    /// What the tables hold now; `series`: rows and bucket width of the series, queues
    /// and delay_series tables ([`crate::instruments::Instruments::series_sizes`]).
    pub fn recording(&self, series: [(usize, u64); 3]) -> Recording {
        let rows = [
            series[0].0,
            series[1].0,
            self.drops.time_ns.len(),
            self.events.time_ns.len(),
            self.segments.time_ns.len(),
            series[2].0,
        ];
        let bucket = [series[0].1, series[1].1, 0, 0, 0, series[2].1];
        Recording {
            tables: (0..6)
                .map(|t| TableRecord {
                    table: RECORDED[t],
                    rows: rows[t] as u64,
                    bytes: rows[t] as u64 * ROW_BYTES[t],
                    bucket_ns: bucket[t],
                    truncated_at_ns: self.truncated[t].map(|t| t.as_nanos()),
                })
                .collect(),
            limit_bytes: self.budget.limit,
            default_table_bytes: self.default_bound.then_some(DEFAULT_TABLE_BYTES),
        }
    }

    /// Change mode records flows and queues after every change.
    #[inline]
    pub fn on_change(&self) -> bool {
        self.series_mode == SeriesMode::Change
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

    /// A data segment sent, for the segments table when it is traced (the test inlined:
    /// the driver calls this for every transmission).
    #[inline(always)]
    pub fn segment(&mut self, now: Time, flow: u32, seg: &DataSegment) {
        if self.segments_on {
            self.segment_row(now, flow, seg);
        }
    }

    #[inline(never)]
    fn segment_row(&mut self, now: Time, flow: u32, seg: &DataSegment) {
        if !self.log_row(SEGMENTS, self.segments.time_ns.len(), now) {
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
