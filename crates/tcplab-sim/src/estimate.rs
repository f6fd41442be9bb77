//! What a run will record, estimated before it starts, and the limit it is held to
//! (docs/scenario.md, "Bounded recording").
//!
//! Rows per recorded table follow from the trace settings, the flows, the duration and the
//! packets the flows can send:
//! - a TCP flow sends at most what the slowest link direction of its path carries while it
//!   runs (full segments of `mss` + 40 bytes), and no more than twice its `bytes`; flows
//!   whose slowest link is the same share that link's capacity over the run;
//! - one ACK per data segment (delayed ACKs halve that: an overestimate);
//! - a UDP source sends `rate × time / packet_size` packets, and what passes its slowest
//!   link's capacity is dropped.
//!
//! Then: series `change` = one row per data segment and per ACK arriving (what changes a
//! flow's sample); series `interval` = one row per flow and tick; queues `change` = two rows
//! per packet and wired hop (arrival and departure); queues `interval` = one row per link
//! direction and tick; segments = data segments; events = one per ACK (a window update);
//! drops = UDP packets beyond capacity; delay_series (on with any series) = per flow, one
//! row per interval of `trace.interval` (widened by `max_rows_per_flow`) from its start,
//! and no more rows than packets it delivers. TCP's own drops (its answer to congestion) cannot
//! be foreseen: the run-time limit ([`crate::trace::Recorder::set_limit`]) counts them.
//! `trace.max_rows_per_flow` caps every table at that many rows per flow (link direction).

use crate::instruments::delay_series::DelaySeries;
use crate::network::Network;
use crate::packet::{PacketKind, IP_TCP_HEADER};
use crate::scenario::{Scenario, SeriesMode};
use crate::trace::{table_cap, QUEUES_TABLE, RECORDED, ROW_BYTES, SERIES_TABLE};
use tcplab_core::Dur;

/// The limit on recorded bytes unless the user gives one (`--max-record-mb`).
pub const DEFAULT_MAX_RECORD_MB: u64 = 2048;

/// One table's estimate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableEstimate {
    pub table: &'static str,
    pub rows: u64,
    pub bytes: u64,
}

/// Every recorded table's estimate (in [`RECORDED`] order) and the packets behind it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Estimate {
    pub tables: Vec<TableEstimate>,
    /// TCP data segments and UDP packets the flows can send.
    pub data_packets: u64,
    pub udp_packets: u64,
}

/// One flow as the estimate sees it.
pub struct FlowEnds {
    pub src: u32,
    pub dst: u32,
    /// ns the flow may send: from its start to its stop or the end of the run.
    pub active_ns: u64,
    /// Wire size of its full packets.
    pub packet_bytes: u64,
    /// TCP: the flow's byte count; UDP: its rate (bit/s).
    pub bytes: Option<u64>,
    pub rate: Option<u64>,
}

impl Estimate {
    pub fn bytes(&self) -> u64 {
        self.tables.iter().map(|t| t.bytes).sum()
    }

    /// Err(one line naming the biggest table and the setting that makes it so) when the
    /// estimate passes `limit` bytes.
    pub fn check(&self, s: &Scenario, limit: u64) -> Result<(), String> {
        let total = self.bytes();
        if total <= limit {
            return Ok(());
        }
        let big = self
            .tables
            .iter()
            .max_by_key(|t| t.bytes)
            .expect("six tables");
        let (cause, fix) = match (big.table, s.trace.series) {
            ("series" | "queues", SeriesMode::Interval) => (
                format!("trace.interval = {}", duration(s.trace.interval)),
                "a longer trace.interval or trace.series = \"off\"".to_string(),
            ),
            ("series" | "queues", _) => (
                "trace.series = \"change\", a row per packet".to_string(),
                "trace.series = \"interval\" or \"off\"".to_string(),
            ),
            ("delay_series", _) => (
                format!(
                    "trace.interval = {}, a row per flow and interval",
                    duration(s.trace.interval)
                ),
                "a longer trace.interval or trace.series = \"off\"".to_string(),
            ),
            (t, _) => (format!("trace.{t} = true"), format!("trace.{t} = false")),
        };
        Err(format!(
            "recording would hold about {} ({} rows of {} from {cause}, duration {}), more \
             than max_record_mb = {}: set {fix} or trace.max_rows_per_flow, or raise the \
             limit (--max-record-mb)",
            megabytes(total),
            thousands(big.rows),
            big.table,
            duration(s.duration),
            limit_mb(limit),
        ))
    }
}

/// `x` kB, MB or GB, one decimal.
pub fn megabytes(bytes: u64) -> String {
    let mb = bytes as f64 / (1u64 << 20) as f64;
    if mb >= 1024.0 {
        format!("{:.1} GB", mb / 1024.0)
    } else if mb >= 1.0 {
        format!("{mb:.1} MB")
    } else {
        format!("{:.1} kB", bytes as f64 / 1024.0)
    }
}

/// A limit in bytes as the MB the user gave (`2048`, `0.05`).
pub fn limit_mb(bytes: u64) -> String {
    let s = format!("{:.3}", bytes as f64 / (1u64 << 20) as f64);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A duration in the largest unit that shows it whole (`1ns`, `10ms`, `1000000000s`).
fn duration(d: Dur) -> String {
    let ns = d.as_nanos();
    for (unit, k) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns >= k && ns.is_multiple_of(k) {
            return format!("{}{unit}", ns / k);
        }
    }
    format!("{ns}ns")
}

/// The highest rate link direction `l` has over the run (its schedule included), or None
/// for a WLAN hop.
fn max_rate(net: &Network, l: u32) -> Option<u64> {
    let link = net.links.get(l as usize)?;
    let scheduled = net.changes[l as usize].iter().filter_map(|c| c.1.rate);
    Some(scheduled.fold(link.rate, u64::max))
}

/// 802.11b's fastest rate: what a path of WLAN hops only can carry at most.
const WLAN_MAX_RATE: u64 = 11_000_000;

/// The slowest wired hop of `path` (its index and rate), or None.
fn slowest(net: &Network, path: &[u32]) -> Option<(u32, u64)> {
    path.iter()
        .filter_map(|&l| max_rate(net, l).map(|r| (l, r)))
        .min_by_key(|&(l, r)| (r, l))
}

fn packets(rate: u64, ns: u64, bytes: u64) -> f64 {
    rate as f64 * ns as f64 * 1e-9 / (8.0 * bytes.max(1) as f64)
}

/// The estimate of scenario `s` on network `net` (built, before the run), with its TCP
/// and UDP flows.
pub fn of(s: &Scenario, net: &Network, tcp: &[FlowEnds], udp: &[FlowEnds]) -> Estimate {
    let run_ns = s.duration.as_nanos();
    let wired = net.links.len();
    // Per TCP flow: packets it can send, grouped by its slowest link.
    let mut data = vec![0.0f64; tcp.len()];
    let mut by_link: Vec<(f64, u64)> = vec![(0.0, u64::MAX); wired + 1];
    let mut bottleneck = vec![wired; tcp.len()];
    let mut hops = vec![(0usize, 0usize); tcp.len()];
    for (i, f) in tcp.iter().enumerate() {
        let fwd = net.path(PacketKind::Data, i as u32, f.src, f.dst);
        let back = net.path(PacketKind::Ack, i as u32, f.dst, f.src);
        let count = |p: &[u32]| p.iter().filter(|&&l| (l as usize) < wired).count();
        hops[i] = (count(&fwd), count(&back));
        let (l, rate) = slowest(net, &fwd).unwrap_or((wired as u32, WLAN_MAX_RATE));
        let mut n = packets(rate, f.active_ns, f.packet_bytes);
        if let Some(b) = f.bytes {
            let mss = f.packet_bytes.saturating_sub(IP_TCP_HEADER as u64).max(1);
            n = n.min(2.0 * (b.div_ceil(mss) as f64) + 10.0);
        }
        data[i] = n;
        bottleneck[i] = l as usize;
        let g = &mut by_link[l as usize];
        g.0 += n;
        g.1 = g.1.min(f.packet_bytes);
    }
    // Flows sharing a slowest link share its capacity over the run.
    let scale: Vec<f64> = by_link
        .iter()
        .enumerate()
        .map(|(l, &(sum, size))| {
            let rate = if l < wired {
                max_rate(net, l as u32).unwrap_or(0)
            } else {
                WLAN_MAX_RATE
            };
            let cap = packets(rate, run_ns, size);
            if sum > cap && sum > 0.0 {
                cap / sum
            } else {
                1.0
            }
        })
        .collect();
    for (i, n) in data.iter_mut().enumerate() {
        *n *= scale[bottleneck[i]];
    }
    let tcp_data: f64 = data.iter().sum();
    let mut queue_change: f64 = data
        .iter()
        .zip(&hops)
        .map(|(n, &(f, b))| 2.0 * n * (f + b) as f64)
        .sum();
    // UDP: what it sends, and what passes its slowest link's capacity.
    let mut udp_sent = 0.0;
    let mut udp_dropped = 0.0;
    let mut udp_each = vec![0.0f64; udp.len()];
    for (j, u) in udp.iter().enumerate() {
        let p = net.path(PacketKind::Udp, j as u32, u.src, u.dst);
        let sent = packets(u.rate.unwrap_or(0), u.active_ns, u.packet_bytes);
        let (_, rate) = slowest(net, &p).unwrap_or((0, WLAN_MAX_RATE));
        let cap = packets(rate, u.active_ns, u.packet_bytes);
        udp_sent += sent;
        udp_each[j] = sent;
        udp_dropped += (sent - cap).max(0.0);
        queue_change += 2.0 * sent * p.iter().filter(|&&l| (l as usize) < wired).count() as f64;
    }
    let t = &s.trace;
    let ticks = |from: u64| -> f64 {
        let i = t.interval.as_nanos().max(1);
        if from > run_ns {
            0.0
        } else {
            (run_ns / i + 1).saturating_sub(from.div_ceil(i)) as f64
        }
    };
    let (series, queues) = match t.series {
        SeriesMode::Off => (0.0, 0.0),
        // A data segment arriving (delivered moves) and an ACK arriving (cwnd, in flight).
        SeriesMode::Change => (2.0 * tcp_data, queue_change),
        SeriesMode::Interval => (
            s.flows.iter().map(|f| ticks(f.start.as_nanos())).sum(),
            wired as f64 * ticks(0),
        ),
    };
    // One-way delay over time: per flow, an interval with arrivals is a row.
    let width = DelaySeries::width(t.interval.as_nanos(), run_ns, t.rows_per_flow());
    let intervals = |from: u64| -> f64 {
        if from > run_ns {
            0.0
        } else {
            (run_ns / width + 1).saturating_sub(from / width) as f64
        }
    };
    let delay_series: f64 = if t.series == SeriesMode::Off || width == 0 {
        0.0
    } else {
        let tcp_rows = data
            .iter()
            .zip(&s.flows)
            .map(|(n, f)| intervals(f.start.as_nanos()).min(n.ceil()));
        let udp_rows = udp_each
            .iter()
            .zip(&s.udp)
            .map(|(n, u)| intervals(u.start.as_nanos()).min(n.ceil()));
        tcp_rows.chain(udp_rows).sum()
    };
    let on = |b: bool, x: f64| if b { x } else { 0.0 };
    let per_flow = |keys: usize| {
        t.rows_per_flow()
            .map_or(f64::INFINITY, |m| (m.max(2) as f64) * keys.max(1) as f64)
    };
    let cap =
        |table: usize, keys: usize| table_cap(t, table, keys).map_or(f64::INFINITY, |c| c as f64);
    let flows = tcp.len() + udp.len();
    let rows = [
        series.min(cap(SERIES_TABLE, tcp.len())),
        queues.min(cap(QUEUES_TABLE, wired)),
        on(t.drops, udp_dropped).min(per_flow(flows)),
        on(t.events, tcp_data).min(per_flow(flows)),
        on(t.segments, tcp_data).min(per_flow(flows)),
        delay_series,
    ];
    let sat = |x: f64| {
        if x >= u64::MAX as f64 {
            u64::MAX
        } else {
            x.ceil() as u64
        }
    };
    Estimate {
        tables: (0..RECORDED.len())
            .map(|k| {
                let n = sat(rows[k]);
                TableEstimate {
                    table: RECORDED[k],
                    rows: n,
                    bytes: n.saturating_mul(ROW_BYTES[k]),
                }
            })
            .collect(),
        data_packets: sat(tcp_data),
        udp_packets: sat(udp_sent),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(duration(Dur::from_nanos(1)), "1ns");
        assert_eq!(duration(Dur::from_millis(10)), "10ms");
        assert_eq!(duration(Dur::from_secs(1_000_000_000)), "1000000000s");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(12), "12");
        assert_eq!(megabytes(3 << 20), "3.0 MB");
        assert_eq!(megabytes(3 << 30), "3.0 GB");
        assert_eq!(megabytes(512), "0.5 kB");
        assert_eq!(limit_mb(2048 << 20), "2048");
        assert_eq!(limit_mb((0.05 * (1u64 << 20) as f64) as u64), "0.05");
    }
}
