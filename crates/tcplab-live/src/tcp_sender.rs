//! tcplab's sender speaking real TCP (docs/real-tcp.md): a
//! [`tcplab_core::conn::Connection`] in the sender role, driven by the real clock, on a host
//! attached to the emulator by a `SOCK_SEQPACKET` socket ([`crate::device`]): no kernel is
//! on its side of the path, so none answers the connection. The peer is an unmodified TCP
//! receiver (a Linux socket sink in the destination's namespace).
//!
//! Each turn reads every waiting packet (the clock read for each), fires the connection's
//! timers when due, then writes every packet it owes (the clock read before each), samples
//! the series, and waits (ppoll, then spin) for the next timer, sample or packet. It runs
//! until the connection closed (TIME_WAIT counts as closed: nothing of ours is left), the
//! scenario's duration passed, or `stop` is set; a connection still open then is reset.
//!
//! The facts are the simulator's and the UDP transport's ([`crate::flow_sender`]): after
//! each interaction the core's loss responses, its cumulative ACK when it moved, and each
//! data transmission with its kind. `wire.csv` names every data transmission on the wire:
//! its time, IP identification and core sequence number, so that an emulator's drop log
//! (which sees the wire's 32-bit numbers and the IP id) maps back onto the transmissions.

use crate::device::{self, Received};
use crate::endpoint::{
    lateness_json, merge, sender_figures, series_row, write_json, write_whole, EndpointClock,
    FactLog, SenderFacts, SERIES_HEADER,
};
use crate::flow_config::FlowConfig;
use crate::histogram::Histogram;
use serde_json::{json, Value};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use tcplab_core::conn::{ConnConfig, Connection, Role, State};
use tcplab_core::Time;
use tcplab_sim::rng::Rng;

/// Largest packet read.
const MAX_PACKET: usize = 65_536;

fn v4(a: SocketAddr) -> Result<([u8; 4], u16), String> {
    match a {
        SocketAddr::V4(a) => Ok((a.ip().octets(), a.port())),
        SocketAddr::V6(_) => Err(format!("address {a}: IPv4 only")),
    }
}

/// The connection's settings: the flow's TCP settings, addresses and ports, and an initial
/// sequence number and timestamp offset drawn from the scenario's seed (stream
/// `tcp/isn/<flow>`), as random as Linux's and the same at every run of a seed.
pub fn conn_config(cfg: &FlowConfig) -> Result<ConnConfig, String> {
    let mut rng = Rng::stream(cfg.scenario.seed, &format!("tcp/isn/{}", cfg.flow));
    Ok(ConnConfig {
        tcp: cfg.tcp().clone(),
        local: v4(cfg.local)?,
        remote: v4(cfg.peer)?,
        iss: rng.next_u64() as u32,
        ts_offset: rng.next_u64() as u32,
        ..ConnConfig::default()
    })
}

/// `wire.csv`'s header: time (ns, the flow's clock), IP identification, core sequence
/// number and transmission number (0 = original) of each data transmission.
pub const WIRE_HEADER: &str = "t_ns,ip_id,seq,retransmission\n";

struct Run {
    conn: Connection,
    dev: File,
    facts: SenderFacts,
    wire: BufWriter<File>,
    out: Vec<u8>,
    packets_out: u64,
    write_errors: u64,
}

/// Runs the sender of flow `cfg.flow` on the attached socket `dev`; writes `facts.jsonl`,
/// `series.csv` and `summary.json` into `out`. An error is one line.
pub fn run(cfg: &FlowConfig, dev: File, out: &Path, stop: &AtomicBool) -> Result<(), String> {
    let clock = EndpointClock::new(cfg.clock_origin_ns, 1);
    let sched = crate::process::realtime(cfg.realtime);
    let conn_cfg = conn_config(cfg)?;
    crate::endpoint::ready();
    clock.wait_for_origin();
    let f = cfg.spec();
    let role = Role::Sender {
        controller: f.controller.clone(),
        recovery: f.recovery.clone(),
        app_bytes: f.bytes,
    };
    let (start, stop_at, end) = (cfg.start(), cfg.stop(), cfg.end());
    let mut fd = [dev.as_raw_fd()];
    let mut series = String::from(SERIES_HEADER);
    let interval = cfg.sample_interval();
    let mut next_sample = start;
    let mut timer_lateness = Histogram::default();
    let mut buf = vec![0u8; MAX_PACKET];
    let (mut packets_in, mut refused) = (0u64, 0u64);
    let mut first_refusal: Option<String> = None;
    let mut closed = false;
    let mut finished_at: Option<Time> = None;
    let mut established_at: Option<Time> = None;
    let facts = FactLog::create(&out.join("facts.jsonl")).map_err(|e| e.to_string())?;
    let mut wire =
        BufWriter::new(File::create(out.join("wire.csv")).map_err(|e| format!("wire.csv: {e}"))?);
    wire.write_all(WIRE_HEADER.as_bytes())
        .map_err(|e| format!("wire.csv: {e}"))?;
    let iss = conn_cfg.iss;
    // The connection opens at the flow's start.
    while !stop.load(Ordering::Relaxed) && clock.now() < start {
        clock.clock.wait(Some(start), &[]);
    }
    let conn = Connection::connect(clock.now(), conn_cfg, role)
        .map_err(|e| format!("config: flows[{}]: {e}", cfg.flow))?;
    let r = &mut Run {
        conn,
        dev,
        facts: SenderFacts::new(
            facts,
            cfg.flow as u32,
            cfg.trace_path(out, "events").as_deref(),
            cfg.trace_path(out, "segments").as_deref(),
        )
        .map_err(|e| format!("events.csv, segments.csv: {e}"))?,
        wire,
        out: Vec::with_capacity(MAX_PACKET),
        packets_out: 0,
        write_errors: 0,
    };
    while !stop.load(Ordering::Relaxed) {
        loop {
            let n = match device::receive(&mut r.dev, &mut buf).map_err(|e| format!("read: {e}"))? {
                Received::Packet(n) => n,
                Received::Drained => break,
                Received::Gone => {
                    fd[0] = -1; // the emulator went away
                    break;
                }
            };
            packets_in += 1;
            if let Err(e) = r.conn.on_packet(clock.now(), &buf[..n]) {
                refused += 1;
                first_refusal.get_or_insert_with(|| e.to_string());
            }
        }
        let now = clock.now();
        if !closed && now >= stop_at {
            r.conn.close();
            closed = true;
        }
        if let Some(d) = r.conn.poll_timeout().filter(|&d| d <= now) {
            timer_lateness.record(now.saturating_since(d).as_nanos());
            r.conn.on_timeout(now);
        }
        r.interact(&clock)?;
        if established_at.is_none() && r.conn.sender().is_some() {
            established_at = Some(now);
        }
        if let Some(s) = r.conn.sender() {
            while next_sample <= now {
                series_row(&mut series, next_sample, s);
                next_sample += interval;
            }
            if finished_at.is_none() && s.is_finished() {
                finished_at = Some(now);
            }
        }
        if matches!(r.conn.state(), State::TimeWait | State::Closed) || now >= end {
            break;
        }
        let next = [Some(next_sample), r.conn.poll_timeout(), Some(end)]
            .into_iter()
            .flatten()
            .min();
        clock.clock.wait(next, &fd);
    }
    let now = clock.now();
    let mut summary = json!({
        "role": "sender",
        "stack": "tcplab-tcp",
        "flow": cfg.flow,
        "clock_origin_monotonic_ns": cfg.clock_origin_ns,
        "realtime": sched,
        "cpu_ns": crate::process::cpu_ns(),
        "start_ns": start.as_nanos(),
        "stopped_ns": now.as_nanos(),
        "iss": iss,
        "packets_in": packets_in,
        "packets_refused": refused,
        "first_refusal": first_refusal,
        "timer_lateness_ns": lateness_json(&timer_lateness),
    });
    if !matches!(r.conn.state(), State::TimeWait | State::Closed) {
        r.conn.abort(); // the run ended first: a RST tells the peer
        r.interact(&clock)?;
    }
    r.facts
        .flush()
        .map_err(|e| format!("facts.jsonl, events.csv: {e}"))?;
    r.wire.flush().map_err(|e| format!("wire.csv: {e}"))?;
    r.summary(cfg, finished_at, established_at, &mut summary);
    write_whole(out, "series.csv", &series).map_err(|e| e.to_string())?;
    write_json(out, "summary.json", &summary)?;
    match r.conn.refusal() {
        Some(e) => Err(format!("flows[{}]: the negotiated settings: {e}", cfg.flow)),
        None => Ok(()),
    }
}

impl Run {
    /// After any interaction: the core's loss responses and cumulative ACK, then every
    /// packet the connection owes (clock read before each), each data segment's fact.
    fn interact(&mut self, clock: &EndpointClock) -> Result<(), String> {
        if let Some(s) = self.conn.sender_mut() {
            self.facts.after(s).map_err(|e| e.to_string())?;
        }
        loop {
            self.out.clear();
            let now = clock.now();
            if self.conn.poll_packet(now, &mut self.out).is_none() {
                break;
            }
            if let Some((seg, kind)) = self.conn.take_transmitted() {
                self.facts
                    .transmit(now, &seg, kind)
                    .map_err(|e| e.to_string())?;
                writeln!(
                    self.wire,
                    "{},{},{},{}",
                    now.as_nanos(),
                    self.conn.last_ident(),
                    seg.seq.0,
                    seg.retransmission
                )
                .map_err(|e| format!("wire.csv: {e}"))?;
            }
            match self.dev.write(&self.out) {
                Ok(n) if n == self.out.len() => self.packets_out += 1,
                // The emulator's socket refused it: a drop outside the model.
                Ok(_) | Err(_) => self.write_errors += 1,
            }
        }
        Ok(())
    }

    fn summary(
        &self,
        cfg: &FlowConfig,
        finished_at: Option<Time>,
        established_at: Option<Time>,
        out: &mut Value,
    ) {
        let start = cfg.start();
        let end = finished_at.unwrap_or(cfg.end()).max(start);
        let span = end.saturating_since(start).as_nanos().max(1);
        let f = cfg.spec();
        let n = self.conn.negotiated();
        let mut fields = json!({
            "controller": f.controller.name,
            "recovery": f.recovery.name,
            "end_ns": end.as_nanos(),
            "established_ns": established_at.map(|t| t.as_nanos()),
            "completed": finished_at.is_some(),
            "state": format!("{:?}", self.conn.state()),
            "outcome": self.conn.outcome().map(|o| format!("{o:?}")),
            "negotiated": n.map(|n| json!({
                "peer_mss": n.peer_mss, "sack": n.sack, "timestamps": n.timestamps,
                "snd_wscale": n.snd_wscale, "rcv_wscale": n.rcv_wscale, "ecn": n.ecn,
            })),
            "packets_out": self.packets_out,
            "write_errors": self.write_errors,
            "facts": self.facts.log.count,
        });
        if let Some(s) = self.conn.sender() {
            let more = json!({
                "acks_received": s.counters().acks_received,
                "mss": self.conn.core_config().map(|t| t.mss),
            });
            merge(&mut fields, more);
            merge(&mut fields, sender_figures(s, span));
        }
        merge(out, fields);
    }
}
