//! The source of a UDP constant-bit-rate flow: the simulator's send times
//! ([`tcplab_sim::app::UdpFlow::send_time`]: packet `k` at `start + floor(k * size * 8 /
//! rate)`, while before its stop and the end of the run), each waited for on the real clock
//! ([`crate::clock::Clock::wait`]), the clock read again just before the datagram is sent
//! (that time goes in its header). A source that fell behind sends what is due at once.
//!
//! Facts: `udp_sent` for each datagram the socket took. Writes `facts.jsonl` and
//! `summary.json` (packets sent, send errors, lateness of the sends behind their send
//! times, CPU).

use crate::cbr_config::CbrConfig;
use crate::cbr_wire::CbrHeader;
use crate::endpoint::{lateness_json, write_json};
use crate::histogram::Histogram;
use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use tcplab_sim::instruments::fact::Fact;

pub fn run(cfg: &CbrConfig, out: &Path, stop: &AtomicBool) -> Result<(), String> {
    let (clock, udp, sched, mut facts) = cfg.open(out)?;
    let source = cfg.source();
    let (end, payload, flow) = (cfg.end(), cfg.payload(), cfg.flow as u16);
    let mut lateness = Histogram::default();
    let mut buf = Vec::with_capacity(payload);
    let (mut k, mut sent, mut errors) = (0u64, 0u64, 0u64);
    let mut first_error: Option<String> = None;
    loop {
        let due = source.send_time(k);
        if !source.sends_at(due, end) {
            break;
        }
        // Wake at least every 100 ms to notice a stop request.
        while !stop.load(Ordering::Relaxed) && clock.clock.wait(Some(due), &[]) < due {}
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let now = clock.now();
        lateness.record(now.saturating_since(due).as_nanos());
        CbrHeader {
            flow,
            seq: k,
            sent_at: now,
        }
        .encode(payload, &mut buf);
        match udp.send(&buf) {
            Ok(()) => {
                sent += 1;
                facts
                    .push(Fact::UdpSent {
                        flow: flow as u32,
                        seq: k,
                    })
                    .map_err(|e| e.to_string())?;
            }
            Err(e) if e.raw_os_error() == Some(libc::EMSGSIZE) => {
                return Err(format!(
                    "udp[{}].packet_size = {}: the IP packet does not fit the path's MTU \
                     (docs/live.md)",
                    cfg.flow,
                    cfg.spec().packet_size
                ));
            }
            Err(e) => {
                // A datagram the socket refused is a drop outside the model.
                errors += 1;
                first_error.get_or_insert_with(|| e.to_string());
            }
        }
        k += 1;
    }
    facts.flush().map_err(|e| format!("facts.jsonl: {e}"))?;
    let s = cfg.spec();
    let summary = json!({
        "role": "udp_sender",
        "flow": cfg.flow,
        "rate_bps": s.rate,
        "packet_size": s.packet_size,
        "clock_origin_monotonic_ns": cfg.clock_origin_ns,
        "realtime": sched,
        "cpu_ns": crate::process::cpu_ns(),
        "start_ns": source.start.as_nanos(),
        "until_ns": cfg.until().as_nanos(),
        "stopped_ns": clock.now().as_nanos(),
        "packets_due": k,
        "packets_sent": sent,
        "send_errors": errors,
        "first_send_error": first_error,
        "facts": facts.count,
        "timer_lateness_ns": lateness_json(&lateness),
    });
    write_json(out, "summary.json", &summary)
}
