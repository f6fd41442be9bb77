//! The results' tables as named, typed columns with units and descriptions: the one
//! declaration of the column schema. [`tables`] turns a run's [`Results`] into these
//! columns (the Python bindings hand them over as Arrow arrays, no per-row
//! objects); [`schema`] is the same declaration without values (what Python reads for the
//! table names and the nullable columns). docs/results.md explains every column at length.

mod flows;

use crate::labels::Labels;
use crate::results::{
    DelayHistogramLog, DelaySeriesLog, DelaySummary, DropCause, DropLog, EventLog, FlowSeries,
    LinkSummary, QueueSeries, SegmentLog, UdpSummary, VerdictLog,
};
use crate::Results;
use serde::Serialize;

/// The values of one column, typed as the Rust results hold them.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    Str(Vec<String>),
    /// Strings from a small fixed set (enum-like columns), a code per row.
    Label(Labels),
    Bool(Vec<bool>),
    U8(Vec<u8>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F64(Vec<f64>),
    /// Nullable: None where the value is undefined.
    OptU64(Vec<Option<u64>>),
    OptF64(Vec<Option<f64>>),
}

impl Values {
    /// The column's type: `str`, `bool`, `u8`, `u32`, `u64` or `f64`.
    pub fn dtype(&self) -> &'static str {
        match self {
            Values::Str(_) | Values::Label(_) => "str",
            Values::Bool(_) => "bool",
            Values::U8(_) => "u8",
            Values::U32(_) => "u32",
            Values::U64(_) | Values::OptU64(_) => "u64",
            Values::F64(_) | Values::OptF64(_) => "f64",
        }
    }
    /// Whether the column holds None for undefined values.
    pub fn nullable(&self) -> bool {
        matches!(self, Values::OptU64(_) | Values::OptF64(_))
    }
    /// The number of values.
    pub fn len(&self) -> usize {
        match self {
            Values::Str(v) => v.len(),
            Values::Label(v) => v.len(),
            Values::Bool(v) => v.len(),
            Values::U8(v) => v.len(),
            Values::U32(v) => v.len(),
            Values::U64(v) => v.len(),
            Values::F64(v) => v.len(),
            Values::OptU64(v) => v.len(),
            Values::OptF64(v) => v.len(),
        }
    }
    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Value `i` as JSON (null for an undefined one, or a float that is not finite).
    fn json(&self, i: usize) -> serde_json::Value {
        use serde_json::json;
        match self {
            Values::Str(v) => json!(v[i]),
            Values::Label(v) => json!(v[i]),
            Values::Bool(v) => json!(v[i]),
            Values::U8(v) => json!(v[i]),
            Values::U32(v) => json!(v[i]),
            Values::U64(v) => json!(v[i]),
            Values::F64(v) => json!(v[i]),
            Values::OptU64(v) => json!(v[i]),
            Values::OptF64(v) => json!(v[i]),
        }
    }
}

// A column leaves the run no larger than its values: a log grown by doubling, or a series
// decimated in place (`Thinning`), can hold several times its rows' memory, touched
// (resident) up to its cap; shrinking returns it before the table is handed on (the 600 s
// demo's queues table: 6.4 MB of rows in 24 MB of columns).
macro_rules! values_from {
    ($($t:ty => $v:ident),* $(,)?) => {
        $(impl From<Vec<$t>> for Values {
            fn from(mut v: Vec<$t>) -> Self {
                v.shrink_to_fit();
                Values::$v(v)
            }
        })*
    };
}
values_from!(String => Str, bool => Bool, u8 => U8, u32 => U32,
    u64 => U64, f64 => F64, Option<u64> => OptU64, Option<f64> => OptF64);

impl From<Vec<&'static str>> for Values {
    fn from(v: Vec<&'static str>) -> Self {
        Values::Label(v.into())
    }
}

impl From<Labels> for Values {
    fn from(mut v: Labels) -> Self {
        v.shrink_to_fit();
        Values::Label(v)
    }
}

/// One column: its name, unit, a one-line description, and the values. Every number has a
/// unit: a physical one (`ns`, `bytes`, `bit/s`, `packets`...), `count` (events counted),
/// `id` (a row of another table), `1` or `ratio` (dimensionless); only text and flags have
/// none ("").
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: String,
    pub unit: &'static str,
    pub description: &'static str,
    pub values: Values,
}

/// One table of a run (`flows`, `udp`, `links`, ...): its columns in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub name: &'static str,
    pub columns: Vec<Column>,
}

impl Table {
    /// The rows as JSON objects keyed by column name (what a process that is not the
    /// simulator, such as the live emulator, writes of a table).
    pub fn rows_json(&self) -> Vec<serde_json::Value> {
        let n = self.columns.first().map_or(0, |c| c.values.len());
        (0..n)
            .map(|i| {
                let row = self
                    .columns
                    .iter()
                    .map(|c| (c.name.clone(), c.values.json(i)));
                serde_json::Value::Object(row.collect())
            })
            .collect()
    }
}

/// Builds a table column by column.
pub(crate) struct TableBuilder {
    table: Table,
}

impl TableBuilder {
    pub(crate) fn new(name: &'static str) -> Self {
        TableBuilder {
            table: Table {
                name,
                columns: Vec::new(),
            },
        }
    }
    pub(crate) fn col(
        &mut self,
        name: impl Into<String>,
        unit: &'static str,
        description: &'static str,
        values: impl Into<Values>,
    ) -> &mut Self {
        self.table.columns.push(Column {
            name: name.into(),
            unit,
            description,
            values: values.into(),
        });
        self
    }
    pub(crate) fn done(self) -> Table {
        self.table
    }
}

/// The values of `field` of every row.
macro_rules! column {
    ($rows:expr, $field:ident) => {
        $rows.iter().map(|r| r.$field).collect::<Vec<_>>()
    };
    ($rows:expr, @$outer:ident $field:ident) => {
        $rows.iter().map(|r| r.$outer.$field).collect::<Vec<_>>()
    };
    ($rows:expr, $field:ident, clone) => {
        $rows.iter().map(|r| r.$field.clone()).collect::<Vec<_>>()
    };
}

/// Columns named after fields of the row structs `rows`: `field [(clone)], unit, description;`,
/// or `@part field, ...` for a field of the row's struct `part` (a flow's `sender` columns).
macro_rules! row_fields {
    ($t:expr, $rows:expr; $($(@$part:ident)? $field:ident $(($clone:ident))?, $unit:expr, $about:expr;)*) => {
        $($t.col(stringify!($field), $unit, $about, column!($rows, $(@$part)? $field $(, $clone)?));)*
    };
}

/// Columns named after the `Vec` fields of `log` (a struct of columns):
/// `field, unit, description;`.
macro_rules! vec_fields {
    ($t:expr, $log:expr; $($field:ident, $unit:expr, $about:expr;)*) => {
        $($t.col(stringify!($field), $unit, $about, $log.$field);)*
    };
}
pub(crate) use {column, row_fields};

/// The tables of a run, in the order they are written: flows, udp, links, series, queues,
/// drops, events, segments, verdicts, delay, delay_histogram, delay_series. Takes the tables out of `r` (the conservation check,
/// the run stats and the pcap files stay).
pub fn tables(r: &mut Results) -> Vec<Table> {
    vec![
        flows::flows(std::mem::take(&mut r.flows)),
        udp(std::mem::take(&mut r.udp)),
        links(std::mem::take(&mut r.links)),
        series(std::mem::take(&mut r.series)),
        queues(std::mem::take(&mut r.queues)),
        drops(std::mem::take(&mut r.drops)),
        events(std::mem::take(&mut r.events)),
        segments(std::mem::take(&mut r.segments)),
        verdicts(std::mem::take(&mut r.verdicts)),
        delay(std::mem::take(&mut r.delay)),
        delay_histogram(std::mem::take(&mut r.delay_histogram)),
        delay_series(std::mem::take(&mut r.delay_series)),
    ]
}

/// A column's declaration (no values).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ColumnSchema {
    pub name: String,
    /// `str`, `bool`, `u8`, `u32`, `u64` or `f64`.
    pub dtype: &'static str,
    /// Null (None) where undefined.
    pub nullable: bool,
    pub unit: &'static str,
    pub description: &'static str,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TableSchema {
    pub name: &'static str,
    pub columns: Vec<ColumnSchema>,
}

/// Every table and column a run produces, in order (the tables of an empty run).
pub fn schema() -> Vec<TableSchema> {
    tables(&mut Results::default())
        .into_iter()
        .map(|t| TableSchema {
            name: t.name,
            columns: t
                .columns
                .into_iter()
                .map(|c| ColumnSchema {
                    dtype: c.values.dtype(),
                    nullable: c.values.nullable(),
                    name: c.name,
                    unit: c.unit,
                    description: c.description,
                })
                .collect(),
        })
        .collect()
}

fn udp(rows: Vec<UdpSummary>) -> Table {
    let mut t = TableBuilder::new("udp");
    row_fields!(t, rows;
        name (clone), "", "flow name";
        src (clone), "", "source host";
        dst (clone), "", "destination host";
        packets_sent, "packets", "packets sent";
        packets_received, "packets", "packets received";
        packets_dropped, "packets", "packets dropped anywhere";
        throughput_bps, "bit/s", "received throughput";
    );
    t.done()
}

/// The `links` table of `rows` (the simulator's, or the live emulator's: the same columns).
pub fn links(rows: Vec<LinkSummary>) -> Table {
    let mut t = TableBuilder::new("links");
    row_fields!(t, rows;
        link (clone), "", "\"{from}-{to}\" of the duplex link";
        direction, "", "\"forward\" or \"reverse\"";
        from (clone), "", "node this direction carries packets from";
        to (clone), "", "node this direction carries packets to";
        rate_bps, "bit/s", "rate";
        delay_ns, "ns", "propagation delay";
        packets_sent, "packets", "packets serialized onto this direction";
        bytes_sent, "bytes", "bytes serialized onto this direction";
    );
    for cause in DropCause::ALL {
        let v: Vec<u64> = rows.iter().map(|r| r.drops[cause as usize]).collect();
        let name = format!("drops_{}", cause.as_str());
        t.col(
            name,
            "packets",
            "packets dropped here, by cause (the suffix)",
            v,
        );
    }
    row_fields!(t, rows;
        utilization, "fraction", "share of the run the serializer was busy";
        ecn_marks, "packets", "packets marked Congestion Experienced (not drops)";
    );
    t.done()
}

fn series(s: FlowSeries) -> Table {
    let mut t = TableBuilder::new("series");
    vec_fields!(t, s;
        flow, "id", "flows.id";
        time_ns, "ns", "time of the sample";
        cwnd, "bytes", "congestion window";
        ssthresh, "bytes", "slow-start threshold (2^64-1 while unbounded)";
        srtt_ns, "ns", "smoothed RTT; 0 until the first sample";
        rto_ns, "ns", "retransmission timeout";
        in_flight, "bytes", "bytes in the network as the recovery strategy counts them";
        delivered, "bytes", "application bytes delivered so far";
        bytes_sent, "bytes", "payload bytes sent so far, retransmissions included";
    );
    t.done()
}

fn queues(q: QueueSeries) -> Table {
    let mut t = TableBuilder::new("queues");
    vec_fields!(t, q;
        link, "id", "links.id";
        time_ns, "ns", "time of the sample";
        packets, "packets", "queue length, the packet being serialized included";
        bytes, "bytes", "queue length in bytes";
    );
    t.done()
}

fn drops(d: DropLog) -> Table {
    let mut t = TableBuilder::new("drops");
    vec_fields!(t, d;
        time_ns, "ns", "when";
        link, "id", "links.id of the direction that dropped it";
        flow_kind, "", "\"tcp\" or \"udp\"";
        flow, "id", "flows.id or udp.id";
        packet, "", "\"data\", \"ack\" or \"udp\"";
        seq, "bytes or packets", "data: first byte; ACK: cumulative ACK; UDP: packet number";
        size, "bytes", "size on the wire";
        cause, "", "drop cause";
    );
    // NaN, not null, for drops without a received power (the table's long-standing form).
    let rssi: Vec<f64> = d.rssi_dbm.iter().map(|r| r.unwrap_or(f64::NAN)).collect();
    let about = "received power of the last attempt of a WLAN mac drop; NaN for other drops";
    t.col("rssi_dbm", "dBm", about, rssi);
    t.done()
}

fn events(e: EventLog) -> Table {
    let mut t = TableBuilder::new("events");
    vec_fields!(t, e;
        time_ns, "ns", "when";
        flow, "id", "flows.id";
        event, "", "window, recovery_enter, recovery_exit, timeout or ecn_response";
        reason, "", "for window: why cwnd or ssthresh changed; else empty";
        cwnd, "bytes", "effective send window after the event";
        ssthresh, "bytes", "slow-start threshold after the event";
        seq, "bytes", "cumulative ACK point at the time";
        label, "", "the controller's verdict (recovery_enter, ecn_response)";
        value, "1 or s", "the verdict's number; for timeout the backed-off RTO in seconds";
    );
    t.done()
}

fn segments(s: SegmentLog) -> Table {
    let mut t = TableBuilder::new("segments");
    vec_fields!(t, s;
        time_ns, "ns", "when it was sent";
        flow, "id", "flows.id";
        seq, "bytes", "first byte";
        len, "bytes", "payload length";
        retransmission, "count", "transmissions of this range before this one (0 = original)";
    );
    t.done()
}

fn verdicts(v: VerdictLog) -> Table {
    let mut t = TableBuilder::new("verdicts");
    vec_fields!(t, v;
        time_ns, "ns", "when the sender responded";
        flow, "id", "flows.id";
        trigger, "", "fast_retransmit, recovery_restart or timeout";
        label, "", "the controller's verdict, e.g. \"1/2\", \"4/5\"";
        value, "1", "the verdict's number (reduction factor or congestion level)";
        seq, "bytes", "snd.una: first byte of the segment whose loss triggered it";
        cwnd, "bytes", "the controller's cwnd just before the response";
        ssthresh, "bytes", "ssthresh just after it";
        cause, "", "drop cause of that segment's latest transmission, or none";
        timeout_class, "", "timeouts only: the cause in the ETH report's taxonomy";
        dupacks, "dup ACKs", "duplicate ACKs in a row when the signal arrived";
        lost_segments, "packets", "dropped data transmissions of the loss event it closed";
    );
    t.done()
}

fn delay(rows: Vec<DelaySummary>) -> Table {
    let mut t = TableBuilder::new("delay");
    row_fields!(t, rows;
        name (clone), "", "flow name";
        flow_kind, "", "\"tcp\" (data segments) or \"udp\" (datagrams)";
        flow, "id", "flows.id or udp.id";
        packets_sent, "packets", "TCP: data transmissions, retransmissions included; UDP: datagrams";
        packets_delivered, "packets", "packets that reached the destination (their delays are below)";
        packets_dropped, "packets", "packets dropped anywhere";
        loss_pct, "%", "packets_dropped / packets_sent * 100 (iperf3's lost/total); null when none sent";
        delay_min_ns, "ns", "least one-way delay (arrival - handed to the network); null without a packet";
        delay_mean_ns, "ns", "mean one-way delay";
        delay_p50_ns, "ns", "median one-way delay (histogram: within 1/128 of the exact value)";
        delay_p95_ns, "ns", "95th percentile of the one-way delay (within 1/128)";
        delay_p99_ns, "ns", "99th percentile of the one-way delay (within 1/128)";
        delay_max_ns, "ns", "largest one-way delay";
        jitter_mean_ns, "ns", "mean |delay difference| of consecutive arrivals (ns-3 FlowMonitor); null below 2";
        jitter_rfc3550_ns, "ns", "RFC 3550 smoothed interarrival jitter at the end (iperf3); null below 2";
    );
    t.done()
}

fn delay_histogram(h: DelayHistogramLog) -> Table {
    let mut t = TableBuilder::new("delay_histogram");
    vec_fields!(t, h;
        flow_kind, "", "\"tcp\" or \"udp\"";
        flow, "id", "flows.id or udp.id";
        metric, "", "\"delay\" (one-way delay) or \"jitter\" (|delay difference| of consecutive arrivals)";
        lower_ns, "ns", "the bucket holds values from lower_ns";
        width_ns, "ns", "to lower_ns + width_ns (excluded); width <= lower / 64 above 128 ns";
        packets, "packets", "packets in the bucket";
    );
    t.done()
}

fn delay_series(d: DelaySeriesLog) -> Table {
    let mut t = TableBuilder::new("delay_series");
    vec_fields!(t, d;
        flow_kind, "", "\"tcp\" (data segments) or \"udp\" (datagrams)";
        flow, "id", "flows.id or udp.id";
        time_ns, "ns", "start of the interval (trace.interval wide) the packets arrived in";
        packets, "packets", "packets that arrived in the interval (intervals without any have no row)";
        delay_mean_ns, "ns", "mean one-way delay of those packets";
        delay_min_ns, "ns", "least one-way delay";
        delay_p50_ns, "ns", "median one-way delay (histogram: within 1/128 of the exact value)";
        delay_p95_ns, "ns", "95th percentile of the one-way delay (within 1/128)";
        delay_max_ns, "ns", "largest one-way delay";
    );
    t.done()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_every_table_once_with_unique_columns() {
        let s = schema();
        let names: Vec<&str> = s.iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            [
                "flows",
                "udp",
                "links",
                "series",
                "queues",
                "drops",
                "events",
                "segments",
                "verdicts",
                "delay",
                "delay_histogram",
                "delay_series"
            ]
        );
        for t in &s {
            let mut seen = std::collections::HashSet::new();
            for c in &t.columns {
                assert!(seen.insert(&c.name), "{}.{} twice", t.name, c.name);
                assert!(
                    !c.description.is_empty(),
                    "{}.{} undescribed",
                    t.name,
                    c.name
                );
                let number = !matches!(c.dtype, "str" | "bool");
                assert_eq!(
                    number,
                    !c.unit.is_empty(),
                    "{}.{}: a unit for every number, none for text",
                    t.name,
                    c.name
                );
            }
        }
        let flows = &s[0].columns;
        let min_rtt = flows.iter().find(|c| c.name == "min_rtt_ns").unwrap();
        assert_eq!(
            (min_rtt.dtype, min_rtt.nullable, min_rtt.unit),
            ("u64", true, "ns")
        );
        assert!(flows.iter().any(|c| c.name == "timeouts_lost_fast_rtx"));
        assert!(flows.iter().any(|c| c.name == "sack_block_6_used"));
    }

    #[test]
    fn tables_take_every_row() {
        let mut r = Results::default();
        r.udp.push(UdpSummary {
            name: "u".into(),
            packets_sent: 7,
            ..Default::default()
        });
        r.segments.seq = vec![1, 2];
        r.segments.time_ns = vec![0, 1];
        r.segments.flow = vec![0, 0];
        r.segments.len = vec![10, 10];
        r.segments.retransmission = vec![0, 1];
        let t = tables(&mut r);
        assert!(r.udp.is_empty());
        let udp = &t[1].columns;
        assert_eq!(udp[3].name, "packets_sent");
        assert_eq!(udp[3].values, Values::U64(vec![7]));
        assert_eq!(t[7].columns[4].values, Values::U8(vec![0, 1]));
    }

    #[test]
    fn a_column_leaves_no_larger_than_its_values() {
        let mut r = Results::default();
        r.segments.seq = Vec::with_capacity(1 << 16); // a log grown, then cut to its rows
        r.segments.seq.extend([1, 2, 3]);
        r.events.event = Labels::default();
        for _ in 0..1000 {
            r.events.event.push("window");
        }
        r.events.event.truncate(2);
        let t = tables(&mut r);
        let values = |table: usize, name: &str| {
            let c = t[table].columns.iter().find(|c| c.name == name);
            &c.expect("the column").values
        };
        match (values(7, "seq"), values(6, "event")) {
            (Values::U64(seq), Values::Label(event)) => {
                assert_eq!((seq.as_slice(), seq.capacity()), (&[1, 2, 3][..], 3));
                assert_eq!((event.len(), event.capacity()), (2, 2));
            }
            _ => panic!("seq is u64, event a label column"),
        }
    }
}
