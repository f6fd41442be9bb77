//! The sink of a UDP constant-bit-rate flow: records each datagram of its flow that
//! arrives (`delivered`: arrival time, packet number, send time from its header) and
//! measures what iperf3 reports of a UDP stream: packets received, duplicates, out of
//! order, and the jitter of RFC 3550 (the transit time's variation smoothed with gain
//! 1/16). It runs until SIGTERM/SIGINT (`stop`) or the run's end plus the linger time, and
//! writes `facts.jsonl` and `summary.json`.

use crate::cbr_config::CbrConfig;
use crate::cbr_wire::CbrHeader;
use crate::endpoint::write_whole;
use serde_json::json;
use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use tcplab_core::{Dur, Time};
use tcplab_sim::instruments::fact::{Delivered, Fact};
use tcplab_sim::packet::PacketKind;

const MAX_DATAGRAM: usize = 65_536;

/// RFC 3550 §6.4.1 interarrival jitter: J += (|D| - J) / 16, D the difference of two
/// consecutive packets' transit times (arrival - send), in arrival order.
#[derive(Default, Debug)]
pub struct Jitter {
    last_transit: Option<i128>,
    pub jitter_ns: f64,
}

impl Jitter {
    pub fn arrive(&mut self, sent: Time, arrived: Time) {
        let transit = arrived.as_nanos() as i128 - sent.as_nanos() as i128;
        if let Some(last) = self.last_transit {
            let d = (transit - last).abs() as f64;
            self.jitter_ns += (d - self.jitter_ns) / 16.0;
        }
        self.last_transit = Some(transit);
    }
}

pub fn run(cfg: &CbrConfig, out: &Path, stop: &AtomicBool) -> Result<(), String> {
    let (clock, udp, sched, mut facts) = cfg.open(out)?;
    let flow = cfg.flow as u16;
    let (end, until) = (cfg.end(), cfg.until());
    let quit = end + Dur::from_nanos(cfg.linger_ns);
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut seen = HashSet::new();
    let mut jitter = Jitter::default();
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
            jitter.arrive(h.sent_at, now);
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
        "jitter_ns": jitter.jitter_ns,
        "first_arrival_ns": first.map(|t| t.as_nanos()),
        "last_arrival_ns": last.map(|t| t.as_nanos()),
    });
    write_whole(
        out,
        "summary.json",
        &(serde_json::to_string_pretty(&summary).expect("json") + "\n"),
    )
    .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_is_rfc3550s_smoothed_transit_variation() {
        let mut j = Jitter::default();
        let t = Time::from_nanos;
        j.arrive(t(0), t(1_000));
        assert_eq!(j.jitter_ns, 0.0);
        // Transit 1000 then 2600: |D| = 1600, J = 1600/16 = 100.
        j.arrive(t(10_000), t(12_600));
        assert_eq!(j.jitter_ns, 100.0);
        // Transit 2600 again: D = 0, J = 100 - 100/16.
        j.arrive(t(20_000), t(22_600));
        assert_eq!(j.jitter_ns, 93.75);
    }
}
