//! Per-flow and per-link summary rows at the end of a run.

use crate::app::UdpFlow;
use crate::flow::TcpFlow;
use crate::instruments::Measurements;
use crate::link::Link;
use crate::network::Network;
use crate::results::{FlowSummary, LinkSummary, SenderColumns, UdpSummary};
use crate::wlan::{HopStats, Wlan};
use tcplab_core::Time;

fn rate_bps(bytes: u64, from: Time, to: Time) -> f64 {
    let secs = to.saturating_since(from).as_secs_f64();
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs
    } else {
        0.0
    }
}

/// The row of TCP flow `i`; `end` is when the run ended. The instruments' figures come
/// from `m`.
pub fn tcp_flow(net: &Network, m: &Measurements, i: usize, f: &TcpFlow, end: Time) -> FlowSummary {
    let sc = f.sender.counters();
    let rc = f.receiver.counters();
    let end_t = f.finished_at.unwrap_or(end).max(f.start);
    let node = |n: u32| net.nodes[n as usize].name.clone();
    let mut row = FlowSummary {
        name: f.name.clone(),
        src: node(f.src),
        dst: node(f.dst),
        controller: f.controller.clone(),
        recovery: f.recovery.clone(),
        start_ns: f.start.as_nanos(),
        end_ns: end_t.as_nanos(),
        completed: f.finished_at.is_some(),
        bytes_delivered: f.delivered,
        throughput_bps: rate_bps(f.delivered, f.start, end_t),
        sender: SenderColumns::of(sc),
        goodput: if sc.bytes_sent > 0 {
            f.delivered as f64 / sc.bytes_sent as f64
        } else {
            0.0
        },
        acks_sent: rc.acks_sent,
        spurious_retransmits: rc.duplicate_segments,
        ..FlowSummary::default()
    };
    m.fill(i, &mut row);
    row.sack_block_carried = sc.sack_blocks_carried;
    row.sack_block_used = sc.sack_blocks_used;
    row.dsacks_sent = rc.dsacks_sent;
    if sc.segments_sent > 0 {
        row.loss_indication_p = (sc.timeouts + sc.recoveries) as f64 / sc.segments_sent as f64;
    }
    row
}

/// The row of UDP flow `u`, which lost `dropped` packets. Throughput is what the sink
/// received over the time the source was sending (start to stop or the end of the run).
pub fn udp_flow(net: &Network, dropped: u64, u: &UdpFlow, end: Time) -> UdpSummary {
    let until = u.stop.map_or(end, |s| s.min(end));
    UdpSummary {
        name: u.name.clone(),
        src: net.nodes[u.src as usize].name.clone(),
        dst: net.nodes[u.dst as usize].name.clone(),
        packets_sent: u.sent(),
        packets_received: u.received,
        packets_dropped: dropped,
        throughput_bps: rate_bps(u.received_bytes, u.start, until),
    }
}

/// One row per link direction, in `Results::links` order: wired directions, then WLAN hops.
pub fn links(net: &Network, end: Time) -> Vec<LinkSummary> {
    let mut rows = wired_links(net, end);
    rows.extend(wlan_hops(net, end));
    rows
}

/// One row per WLAN hop. `utilization` is the share of time the segment's shared medium
/// was busy (the same on every hop of a segment); `packets_sent` counts acknowledged
/// frames.
fn wlan_hops(net: &Network, end: Time) -> Vec<LinkSummary> {
    let mut rows = Vec::new();
    let mut info = net.info[net.links.len()..].iter();
    for w in &net.wlans {
        for (hop, st) in w.hops.iter().enumerate() {
            let i = info.next().expect("an info row per WLAN hop");
            let (from, to) = w.hop_nodes(hop as u32);
            let name = |n: u32| net.nodes[n as usize].name.as_str();
            let ends = (name(from), name(to));
            rows.push(wlan_hop_row((&i.name, i.direction), ends, w, st, end));
        }
    }
    rows
}

fn wired_links(net: &Network, end: Time) -> Vec<LinkSummary> {
    net.links
        .iter()
        .zip(&net.info)
        .map(|(l, info)| {
            let name = |n: u32| net.nodes[n as usize].name.as_str();
            let ends = (name(l.from), name(l.to));
            wired_link_row((&info.name, info.direction), ends, l, end, end)
        })
        .collect()
}

/// The `links` row of wired link direction `l`, named `(link, direction)` between `ends`
/// (node names): its counts at `at`, its utilization over `span` (the simulator: both the
/// run's end; the live emulator: its counts when it stopped, over the scenario's duration).
pub fn wired_link_row(
    names: (&str, &'static str),
    ends: (&str, &str),
    l: &Link,
    at: Time,
    span: Time,
) -> LinkSummary {
    let st = l.stats_at(at);
    let busy = st.busy.as_nanos() as f64;
    let span = span.as_nanos() as f64;
    LinkSummary {
        rate_bps: l.rate,
        delay_ns: l.delay.as_nanos(),
        packets_sent: st.packets_sent,
        bytes_sent: st.bytes_sent,
        drops: st.drops,
        utilization: if span > 0.0 { busy / span } else { 0.0 },
        ecn_marks: st.ecn_marks,
        ..named(names, ends)
    }
}

/// The `links` row of a hop of 802.11b segment `w` with counts `st`, named and placed as
/// [`wired_link_row`]'s; its utilization is the share of `span` the segment's medium was
/// busy (the same on every hop of the segment), `packets_sent` the acknowledged frames.
pub fn wlan_hop_row(
    names: (&str, &'static str),
    ends: (&str, &str),
    w: &Wlan,
    st: &HopStats,
    span: Time,
) -> LinkSummary {
    let busy = w.dcf.busy.as_nanos() as f64;
    let span = span.as_nanos() as f64;
    LinkSummary {
        rate_bps: w.dcf.phy.rate,
        packets_sent: st.packets_sent,
        bytes_sent: st.bytes_sent,
        drops: st.drops,
        utilization: if span > 0.0 {
            (busy / span).min(1.0)
        } else {
            0.0
        },
        ..named(names, ends)
    }
}

/// A row with only its names and ends (every count 0).
fn named((link, direction): (&str, &'static str), (from, to): (&str, &str)) -> LinkSummary {
    LinkSummary {
        link: link.to_string(),
        direction,
        from: from.to_string(),
        to: to.to_string(),
        ..LinkSummary::default()
    }
}
