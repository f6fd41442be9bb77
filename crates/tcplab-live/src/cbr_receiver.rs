//! The sink of a UDP constant-bit-rate flow: records each datagram of its flow that
//! arrives (`delivered`: arrival time, packet number, send time from its header) and
//! measures what iperf3 reports of a UDP stream: packets received, duplicates, out of
//! order, and the jitter of RFC 3550 (the transit time's variation smoothed with gain
//! 1/16), with the simulator's own delay instrument
//! ([`tcplab_sim::instruments::delay::FlowDelay`]: the numbers of the `delay` table, so a
//! replay of the facts gives the same). It runs until SIGTERM/SIGINT (`stop`) or the run's end plus the linger time, and
//! writes `facts.jsonl` and `summary.json`.

use crate::cbr_config::CbrConfig;
use crate::cbr_wire::CbrHeader;
use crate::endpoint::write_json;
use serde_json::json;
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use tcplab_core::{Dur, Time};
use tcplab_sim::instruments::delay::FlowDelay;
use tcplab_sim::instruments::fact::{Delivered, Fact};
use tcplab_sim::packet::PacketKind;

const MAX_DATAGRAM: usize = 65_536;

pub fn run(cfg: &CbrConfig, out: &Path, stop: &AtomicBool) -> Result<(), String> {
    let (clock, udp, sched, mut facts) = cfg.open(out)?;
    let flow = cfg.flow as u16;
    let (end, until) = (cfg.end(), cfg.until());
    let quit = end + Dur::from_nanos(cfg.linger_ns);
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut seen = HashSet::new();
    let mut delay = FlowDelay::default();
    let (mut received, mut bytes_by_end, mut dup, mut ooo, mut bad) = (0u64, 0u64, 0, 0, 0);
    let mut highest: Option<u64> = None;
    let (mut first, mut last): (Option<Time>, Option<Time>) = (None, None);
    let fd = [udp.fd()];
    while !stop.load(Ordering::Relaxed) {
        while let Some((n, _tos)) = udp.recv(&mut buf).map_err(|e| format!("receive: {e}"))? {
            let now = clock.now();
            let h = match CbrHeader::decode(&buf[..n]) {
                Some(h) if h.flow == flow => h,
                _ => {
                    bad += 1;
                    continue;
                }
            };
            if !seen.insert(h.seq) {
                dup += 1;
                continue;
            }
            received += 1;
            if now <= end {
                bytes_by_end += (n + crate::wire::IP_UDP) as u64;
            }
            if highest.is_some_and(|m| h.seq < m) {
                ooo += 1;
            }
            highest = highest.max(Some(h.seq));
            first.get_or_insert(now);
            last = Some(now);
            delay.on_delay(now.saturating_since(h.sent_at).as_nanos());
            facts
                .push(Fact::Delivered(Delivered {
                    time: now,
                    flow: flow as u32,
                    kind: PacketKind::Udp,
                    seq: h.seq,
                    sent_at: h.sent_at,
                }))
                .map_err(|e| e.to_string())?;
        }
        let now = clock.now();
        if now >= quit {
            break;
        }
        clock.clock.wait(Some(quit), &fd);
    }
    facts.flush().map_err(|e| format!("facts.jsonl: {e}"))?;
    let start = cfg.source().start;
    let span = until.saturating_since(start).as_nanos().max(1);
    // iperf3's loss: packets missing below the highest number received.
    let lost = highest.map_or(0, |m| m + 1 - received);
    let d = delay.summary("udp", cfg.flow, 0, 0);
    let summary = json!({
        "role": "udp_receiver",
        "flow": cfg.flow,
        "clock_origin_monotonic_ns": cfg.clock_origin_ns,
        "realtime": sched,
        "cpu_ns": crate::process::cpu_ns(),
        "packets_received": received,
        "bytes_received_by_end": bytes_by_end,
        // The simulator's UDP throughput: what arrived over the time the source sent.
        "throughput_bps": bytes_by_end as f64 * 8e9 / span as f64,
        "highest_seq": highest,
        "lost_below_highest": lost,
        "duplicates": dup,
        "out_of_order": ooo,
        "undecodable": bad,
        // iperf3's jitter (RFC 3550), 0 below two arrivals; FlowMonitor's mean |D|.
        "jitter_ns": d.jitter_rfc3550_ns.unwrap_or(0.0),
        "jitter_mean_ns": d.jitter_mean_ns,
        "delay_ns": {"min": d.delay_min_ns, "mean": d.delay_mean_ns, "p50": d.delay_p50_ns,
                     "p99": d.delay_p99_ns, "max": d.delay_max_ns},
        "first_arrival_ns": first.map(|t| t.as_nanos()),
        "last_arrival_ns": last.map(|t| t.as_nanos()),
    });
    write_json(out, "summary.json", &summary)
}
