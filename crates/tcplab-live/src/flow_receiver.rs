//! The receiving endpoint: tcplab-core's [`Receiver`] on a UDP socket. Each data datagram
//! is decoded (ECT and CE from the IP header's TOS byte), its payload kept by
//! [`Reassembly`], the segment handed to the receiver; the in-order bytes the receiver
//! then releases are assembled and checked against the stream's pattern, and the ACKs it
//! owes are sent. The delayed-ACK timer is waited for like the sender's timers.
//!
//! Facts: every data segment that arrived (`delivered`: arrival time, sequence, send time
//! from its header). It runs until SIGTERM/SIGINT (`stop`) or the flow's end plus the
//! linger time, and writes `facts.jsonl` and `summary.json`.

use crate::endpoint::{lateness_json, write_json, EndpointClock, FactLog};
use crate::flow_config::FlowConfig;
use crate::histogram::Histogram;
use crate::stream::Reassembly;
use crate::udp::Udp;
use crate::wire::Packet;
use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use tcplab_core::{Dur, Receiver, Time};
use tcplab_sim::instruments::fact::{Delivered, Fact};
use tcplab_sim::packet::PacketKind;

const MAX_DATAGRAM: usize = 65_536;

/// After a stop request the receiver reads on until its socket has been quiet this long:
/// what the network still held when its owner stopped it arrives and is counted (an 802.11b
/// MAC's retries can hold segments longer than the propagation delays the owner waited for).
const DRAIN_QUIET: Dur = Dur::from_millis(200);
/// ... but no longer than this after the request.
const DRAIN_MAX: Dur = Dur::from_secs(5);

pub fn run(cfg: &FlowConfig, out: &Path, stop: &AtomicBool) -> Result<(), String> {
    let framing = cfg.framing;
    let clock = EndpointClock::new(cfg.clock_origin_ns, framing.clock_ns());
    let udp = Udp::open(cfg.local, cfg.peer).map_err(|e| format!("socket {}: {e}", cfg.local))?;
    let sched = crate::process::realtime(cfg.realtime);
    crate::endpoint::ready();
    clock.wait_for_origin();
    let mut rx = Receiver::new(cfg.tcp());
    let mut facts = FactLog::create(&out.join("facts.jsonl")).map_err(|e| e.to_string())?;
    let mut stream = Reassembly::default();
    let flow = cfg.flow as u32;
    let end = cfg.end();
    let quit = end + Dur::from_nanos(cfg.linger_ns);
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut timer_lateness = Histogram::default();
    let (mut segments, mut ce, mut bad, mut delivered_by_end) = (0u64, 0u64, 0u64, 0u64);
    let (mut first, mut last): (Option<Time>, Option<Time>) = (None, None);
    let fd = [udp.fd()];
    let mut acks = Acks {
        udp: &udp,
        framing,
        flow: flow as u16,
        buf: Vec::new(),
        sent: 0,
        errors: 0,
    };
    // when the stop was asked for, and the last datagram since
    let (mut stopping, mut heard): (Option<Time>, Time) = (None, Time::ZERO);
    loop {
        let mut now = clock.now();
        if stopping.is_none() && stop.load(Ordering::Relaxed) {
            stopping = Some(now);
        }
        while let Some((n, tos)) = udp.recv(&mut buf).map_err(|e| format!("receive: {e}"))? {
            now = clock.now();
            heard = now;
            let (mut seg, sent_at, payload) = match framing.decode(&buf[..n], now) {
                Ok((Packet::Data { seg, sent_at, .. }, payload)) => (seg, sent_at, payload),
                _ => {
                    bad += 1;
                    continue;
                }
            };
            seg.ect = tos & 3 != 0;
            seg.ce = tos & 3 == 3;
            ce += seg.ce as u64;
            segments += 1;
            first.get_or_insert(now);
            last = Some(now);
            facts
                .push(Fact::Delivered(Delivered {
                    time: now,
                    flow,
                    kind: PacketKind::Data,
                    seq: seg.seq.0,
                    sent_at,
                }))
                .map_err(|e| e.to_string())?;
            stream.arrive(seg.seq.0, payload);
            rx.on_segment(now, &seg);
            while let Some((at, len)) = rx.read() {
                stream.read(at.0, len);
            }
            if now <= end {
                delivered_by_end = stream.check.delivered;
            }
            acks.send(&mut rx, now)?;
        }
        if let Some(d) = rx.poll_timeout().filter(|&d| d <= now) {
            timer_lateness.record(now.saturating_since(d).as_nanos());
            rx.on_timeout(now);
            acks.send(&mut rx, now)?;
        }
        if now >= quit {
            break;
        }
        let mut next = rx.poll_timeout().map_or(quit, |d| d.min(quit));
        if let Some(s) = stopping {
            let done = (heard.max(s) + DRAIN_QUIET).min(s + DRAIN_MAX);
            if now >= done {
                break;
            }
            next = next.min(done);
        }
        clock.clock.wait(Some(next), &fd);
    }
    facts.flush().map_err(|e| format!("facts.jsonl: {e}"))?;
    let start = cfg.start();
    let span = end.saturating_since(start).as_nanos().max(1);
    let c = rx.counters();
    let summary = json!({
        "role": "receiver",
        "flow": cfg.flow,
        "framing": cfg.framing,
        "clock_origin_monotonic_ns": cfg.clock_origin_ns,
        "realtime": sched,
        "cpu_ns": crate::process::cpu_ns(),
        "bytes_delivered": stream.check.delivered,
        "bytes_delivered_by_end": delivered_by_end,
        "throughput_bps": delivered_by_end as f64 * 8e9 / span as f64,
        "stream": stream.check,
        "intact": stream.check.intact(),
        "held_at_end": stream.held(),
        "segments_received": segments,
        "ce_received": ce,
        "first_arrival_ns": first.map(|t| t.as_nanos()),
        "last_arrival_ns": last.map(|t| t.as_nanos()),
        "acks_sent": acks.sent,
        "dsacks_sent": c.dsacks_sent,
        "undecodable": bad,
        "send_errors": acks.errors,
        "timer_lateness_ns": lateness_json(&timer_lateness),
    });
    write_json(out, "summary.json", &summary)
}

/// Sends the ACKs the receiver owes.
struct Acks<'a> {
    udp: &'a Udp,
    framing: crate::wire::Framing,
    flow: u16,
    buf: Vec<u8>,
    sent: u64,
    errors: u64,
}

impl Acks<'_> {
    fn send(&mut self, rx: &mut Receiver, now: Time) -> Result<(), String> {
        while let Some(ack) = rx.poll_transmit(now) {
            self.buf.clear();
            self.framing.encode_ack(self.flow, &ack, &mut self.buf)?;
            match self.udp.send(&self.buf) {
                Ok(()) => self.sent += 1,
                Err(_) => self.errors += 1,
            }
        }
        Ok(())
    }
}
