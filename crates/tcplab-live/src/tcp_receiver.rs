//! tcplab's receiver speaking real TCP (docs/real-tcp.md): a
//! [`tcplab_core::conn::Connection`] in the receiver role, listening on the flow's port of
//! its destination host, which is attached to the emulator by a `SOCK_SEQPACKET` socket
//! ([`crate::device`]): no kernel is on its side of the path. The peer is an unmodified TCP
//! sender (a Linux socket in the source's namespace).
//!
//! The core receiver tracks byte ranges only; the payloads are kept here
//! ([`Reassembly`], keyed by the stream offset of each segment's first byte: its 32-bit
//! sequence number taken relative to the peer's SYN) and every range the core hands to the
//! application (`Receiver::read`) is assembled and checked against the Linux endpoints'
//! stream ([`payload_byte`]: 64-bit big-endian words, word `k` holding `k`).
//!
//! Each packet read is handed to the connection at the time read, and the packets it then
//! owes are written at once (one ACK per segment where the core's ACK policy says so, as a
//! kernel receiver's). Once the peer's FIN is taken the application closes: our FIN goes
//! out. The run ends when the connection closed (or reached TIME_WAIT), at the scenario's
//! duration (an open connection is then reset) or when `stop` is set; it writes
//! `summary.json`. No facts: the arrival of a segment has no send time to record.

use crate::device::{self, Received};
use crate::endpoint::{lateness_json, write_json, EndpointClock};
use crate::flow_config::FlowConfig;
use crate::histogram::Histogram;
use crate::stream::Reassembly;
use serde_json::{json, Value};
use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use tcplab_core::conn::{payload_byte, ConnConfig, Connection, Role, State};
use tcplab_core::wire::{self, SeqMap, TcpFlags};
use tcplab_core::Time;

/// Largest packet read.
const MAX_PACKET: usize = 65_536;

/// The connection's settings: the sender's ([`crate::tcp_sender::conn_config`]: the flow's
/// TCP settings, an ISN and timestamp offset from the seed), listening for the peer's
/// address from any port.
pub fn conn_config(cfg: &FlowConfig) -> Result<ConnConfig, String> {
    let mut c = crate::tcp_sender::conn_config(cfg)?;
    c.remote.1 = 0;
    Ok(c)
}

/// A listening receiver connection, the payloads it took and what happened to it.
pub struct Receiving {
    conn: Connection,
    /// The application's stream, checked against the Linux endpoints' pattern.
    pub stream: Reassembly,
    /// The peer's ISN, from the SYN the listening connection took.
    irs: Option<u32>,
    closed: bool,
    out: Vec<u8>,
    pub packets_in: u64,
    pub refused: u64,
    pub first_refusal: Option<String>,
    /// Segments with payload taken while data flowed.
    pub data_segments: u64,
    pub first_arrival: Option<Time>,
    pub last_arrival: Option<Time>,
    pub established_at: Option<Time>,
    /// When the peer's FIN was taken (every byte before it arrived).
    pub peer_fin_at: Option<Time>,
    pub packets_out: u64,
    pub write_errors: u64,
}

impl Receiving {
    /// Listens with `cfg` (a receiver connection).
    pub fn listen(cfg: ConnConfig) -> Result<Receiving, String> {
        let conn = Connection::listen(cfg, Role::Receiver).map_err(|e| format!("config: {e}"))?;
        Ok(Receiving {
            conn,
            stream: Reassembly::with_pattern(payload_byte),
            irs: None,
            closed: false,
            out: Vec::with_capacity(MAX_PACKET),
            packets_in: 0,
            refused: 0,
            first_refusal: None,
            data_segments: 0,
            first_arrival: None,
            last_arrival: None,
            established_at: None,
            peer_fin_at: None,
            packets_out: 0,
            write_errors: 0,
        })
    }

    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Nothing more will happen: closed, or in TIME_WAIT (nothing of ours is left but the
    /// answer to a retransmitted FIN).
    pub fn is_over(&self) -> bool {
        matches!(self.conn.state(), State::TimeWait | State::Closed)
    }

    /// A packet from the peer arrived at `now`: to the connection; its payload kept at its
    /// stream offset; what the core then delivers read and checked; our FIN once the
    /// peer's is taken.
    pub fn on_packet(&mut self, now: Time, packet: &[u8]) {
        self.packets_in += 1;
        let listening = self.conn.state() == State::Listen;
        if let Err(e) = self.conn.on_packet(now, packet) {
            self.refused += 1;
            self.first_refusal.get_or_insert_with(|| e.to_string());
            return;
        }
        let Ok(p) = wire::parse_tcp(packet) else {
            return; // the connection took it: it parses
        };
        let f = p.tcp.flags;
        if listening && self.conn.state() == State::SynReceived {
            self.irs = Some(p.tcp.seq); // the SYN the connection answers
        }
        if self.established_at.is_none() && self.conn.receiver().is_some() {
            self.established_at = Some(now);
        }
        let syn_or_rst = f.contains(TcpFlags::SYN) || f.contains(TcpFlags::RST);
        if let (Some(irs), Some(r), false) = (self.irs, self.conn.receiver(), syn_or_rst) {
            if !p.payload.is_empty() && f.contains(TcpFlags::ACK) {
                let map = SeqMap::after_syn(irs);
                if let Some(seq) = map.try_from_wire(p.tcp.seq, r.rcv_nxt()) {
                    self.stream.arrive(seq.0, p.payload);
                    self.data_segments += 1;
                    self.first_arrival.get_or_insert(now);
                    self.last_arrival = Some(now);
                }
            }
        }
        if let Some(r) = self.conn.receiver_mut() {
            while let Some((at, len)) = r.read() {
                self.stream.read(at.0, len);
            }
        }
        if self.conn.state() == State::CloseWait && !self.closed {
            self.peer_fin_at = Some(now);
            self.conn.close();
            self.closed = true;
        }
    }

    /// Fires the connection's timers when due; returns how late they were (ns), if due.
    pub fn on_timeout(&mut self, now: Time) -> Option<u64> {
        let due = self.conn.poll_timeout().filter(|&d| d <= now)?;
        self.conn.on_timeout(now);
        Some(now.saturating_since(due).as_nanos())
    }

    /// The run is over before the connection: a RST tells the peer.
    pub fn abort(&mut self) {
        if !self.is_over() {
            self.conn.abort();
        }
    }

    /// Writes every packet the connection owes to `dev` (the clock read before each).
    pub fn flush(&mut self, clock: impl Fn() -> Time, dev: &mut impl Write) {
        loop {
            self.out.clear();
            if self.conn.poll_packet(clock(), &mut self.out).is_none() {
                break;
            }
            match dev.write(&self.out) {
                Ok(n) if n == self.out.len() => self.packets_out += 1,
                // The emulator's socket refused it: a drop outside the model.
                Ok(_) | Err(_) => self.write_errors += 1,
            }
        }
    }

    /// What the receiver saw, for `summary.json`.
    pub fn summary(&self) -> Value {
        let n = self.conn.negotiated();
        let c = self.conn.receiver().map(|r| r.counters().clone());
        let check = &self.stream.check;
        let span = match (self.first_arrival, self.last_arrival) {
            (Some(a), Some(b)) => b.saturating_since(a).as_nanos(),
            _ => 0,
        };
        json!({
            "bytes_delivered": check.delivered,
            "intact": check.intact() && self.conn.receiver().is_some(),
            "first_bad_offset": check.first_bad,
            "stream": check,
            "held_at_end": self.stream.held(),
            "state": format!("{:?}", self.conn.state()),
            "outcome": self.conn.outcome().map(|o| format!("{o:?}")),
            "peer_fin": self.peer_fin_at.is_some(),
            "negotiated": n.map(|n| json!({
                "peer_mss": n.peer_mss, "sack": n.sack, "timestamps": n.timestamps,
                "window_scaling": n.window_scaling, "snd_wscale": n.snd_wscale,
                "rcv_wscale": n.rcv_wscale, "ecn": n.ecn,
            })),
            "mss": self.conn.core_config().map(|t| t.mss),
            "peer_port": self.irs.map(|_| self.conn.remote().1),
            "established_ns": self.established_at.map(|t| t.as_nanos()),
            "first_arrival_ns": self.first_arrival.map(|t| t.as_nanos()),
            "last_arrival_ns": self.last_arrival.map(|t| t.as_nanos()),
            "peer_fin_ns": self.peer_fin_at.map(|t| t.as_nanos()),
            "throughput_bps": if span > 0 { check.delivered as f64 * 8e9 / span as f64 } else { 0.0 },
            "data_segments": self.data_segments,
            "segments_received": c.as_ref().map(|c| c.segments_received),
            "duplicate_segments": c.as_ref().map(|c| c.duplicate_segments),
            "out_of_order_segments": c.as_ref().map(|c| c.out_of_order_segments),
            "out_of_window_segments": c.as_ref().map(|c| c.out_of_window_segments),
            "acks_sent": c.as_ref().map(|c| c.acks_sent),
            "dsacks_sent": c.as_ref().map(|c| c.dsacks_sent),
            "packets_in": self.packets_in,
            "packets_refused": self.refused,
            "first_refusal": self.first_refusal,
            "packets_out": self.packets_out,
            "write_errors": self.write_errors,
        })
    }
}

/// Runs the receiver of flow `cfg.flow` on the attached socket `dev` (non-blocking, as
/// [`crate::device::open`] makes it; listening from model time 0); writes `summary.json`
/// into `out`. An error is one line.
pub fn run(cfg: &FlowConfig, mut dev: File, out: &Path, stop: &AtomicBool) -> Result<(), String> {
    let clock = EndpointClock::new(cfg.clock_origin_ns, 1);
    let sched = crate::process::realtime(cfg.realtime);
    let mut rx = Receiving::listen(conn_config(cfg)?)?;
    crate::endpoint::ready();
    clock.wait_for_origin();
    let end = cfg.end();
    let mut fd = [dev.as_raw_fd()];
    let mut timer_lateness = Histogram::default();
    let mut buf = vec![0u8; MAX_PACKET];
    while !stop.load(Ordering::Relaxed) {
        loop {
            let n = match device::receive(&mut dev, &mut buf).map_err(|e| format!("read: {e}"))? {
                Received::Packet(n) => n,
                Received::Drained => break,
                Received::Gone => {
                    fd[0] = -1; // the emulator went away
                    break;
                }
            };
            rx.on_packet(clock.now(), &buf[..n]);
            rx.flush(|| clock.now(), &mut dev);
        }
        let now = clock.now();
        if let Some(late) = rx.on_timeout(now) {
            timer_lateness.record(late);
        }
        rx.flush(|| clock.now(), &mut dev);
        if rx.is_over() || now >= end {
            break;
        }
        let next = rx.conn().poll_timeout().map_or(end, |d| d.min(end));
        clock.clock.wait(Some(next), &fd);
    }
    rx.abort();
    rx.flush(|| clock.now(), &mut dev);
    let mut summary = json!({
        "role": "receiver",
        "stack": "tcplab-tcp",
        "flow": cfg.flow,
        "clock_origin_monotonic_ns": cfg.clock_origin_ns,
        "realtime": sched,
        "cpu_ns": crate::process::cpu_ns(),
        "stopped_ns": clock.now().as_nanos(),
        "timer_lateness_ns": lateness_json(&timer_lateness),
    });
    if let (Value::Object(a), Value::Object(b)) = (&mut summary, rx.summary()) {
        a.extend(b);
    }
    write_json(out, "summary.json", &summary)
}

#[cfg(test)]
#[path = "tcp_receiver_tests.rs"]
mod tests;
