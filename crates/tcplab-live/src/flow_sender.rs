//! The sending endpoint: tcplab-core's [`Sender`] on a UDP socket, driven by the real
//! clock. Each turn reads every waiting ACK (the clock is read for each), fires the
//! sender's timer when due, then lets the sender transmit, reading the clock just before
//! each datagram is sent (that time is the segment's send time and TSval), samples the
//! series when due, and waits in [`crate::clock::Clock::wait`] (ppoll, then spin) for the
//! next timer, sample or ACK.
//!
//! The facts are the simulator's: after each interaction with the sender its loss
//! responses, its cumulative ACK when it moved, and each transmission with its kind.

use crate::endpoint::{
    lateness_json, merge, sender_figures, series_row, write_json, write_whole, EndpointClock,
    FactLog, SenderFacts, SERIES_HEADER,
};
use crate::flow_config::FlowConfig;
use crate::histogram::Histogram;
use crate::stream;
use crate::udp::Udp;
use crate::wire::Packet;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use tcplab_core::{Sender, Time};

/// Largest datagram read.
const MAX_DATAGRAM: usize = 65_536;

struct State {
    sender: Sender,
    facts: SenderFacts,
    flow: u32,
    out: Vec<u8>,
    payload: Vec<u8>,
    send_errors: u64,
    first_error: Option<String>,
}

/// Runs the sender of `cfg` until its transfer is acknowledged, the scenario's duration
/// passed, or `stop` is set; writes `facts.jsonl`, `series.csv` and `summary.json` into
/// `out`. An error is one line.
pub fn run(cfg: &FlowConfig, out: &Path, stop: &AtomicBool) -> Result<(), String> {
    let framing = cfg.framing;
    let clock = EndpointClock::new(cfg.clock_origin_ns, framing.clock_ns());
    let mut udp =
        Udp::open(cfg.local, cfg.peer).map_err(|e| format!("socket {}: {e}", cfg.local))?;
    let sched = crate::process::realtime(cfg.realtime);
    crate::endpoint::ready();
    clock.wait_for_origin();
    let mut st = State {
        sender: cfg.sender()?,
        facts: SenderFacts::new(
            FactLog::create(&out.join("facts.jsonl")).map_err(|e| e.to_string())?,
            cfg.flow as u32,
            cfg.trace_path(out, "events").as_deref(),
            cfg.trace_path(out, "segments").as_deref(),
        )
        .map_err(|e| format!("events.csv: {e}"))?,
        flow: cfg.flow as u32,
        out: Vec::with_capacity(MAX_DATAGRAM),
        payload: Vec::new(),
        send_errors: 0,
        first_error: None,
    };
    let (start, stop_at, end) = (cfg.start(), cfg.stop(), cfg.end());
    let interval = cfg.sample_interval();
    let mut series = String::from(SERIES_HEADER);
    let mut next_sample = start;
    let mut timer_lateness = Histogram::default();
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let (mut acks, mut bad) = (0u64, 0u64);
    let mut started_at: Option<Time> = None;
    let mut closed = false;
    let mut finished_at = None;
    let fd = [udp.fd()];
    let ect = if cfg.tcp().ecn { 2 } else { 0 };
    while !stop.load(Ordering::Relaxed) {
        let mut now = clock.now();
        while let Some((n, _tos)) = udp.recv(&mut buf).map_err(|e| format!("receive: {e}"))? {
            now = clock.now();
            match framing.decode(&buf[..n], now) {
                Ok((Packet::Ack { ack, .. }, _)) if started_at.is_some() => {
                    acks += 1;
                    st.sender.on_segment(now, &ack);
                }
                _ => bad += 1,
            }
        }
        if now >= start {
            started_at.get_or_insert(now);
            if !closed && now >= stop_at {
                st.sender.close();
                closed = true;
            }
            if let Some(d) = st.sender.poll_timeout().filter(|&d| d <= now) {
                timer_lateness.record(now.saturating_since(d).as_nanos());
                st.sender.on_timeout(now);
            }
            st.interact(&clock, &mut udp, framing, ect)?;
            while next_sample <= now {
                series_row(&mut series, next_sample, &st.sender);
                next_sample += interval;
            }
            if st.sender.is_finished() {
                finished_at = Some(now);
                break;
            }
        }
        if now >= end {
            break;
        }
        let next = [
            Some(start.max(next_sample)),
            st.sender.poll_timeout(),
            Some(end),
        ]
        .into_iter()
        .flatten()
        .min();
        clock.clock.wait(next, &fd);
    }
    st.facts
        .flush()
        .map_err(|e| format!("facts.jsonl, events.csv: {e}"))?;
    let now = clock.now();
    let summary = st.summary(
        cfg,
        started_at,
        finished_at,
        now,
        acks,
        bad,
        &timer_lateness,
        sched,
    );
    write_whole(out, "series.csv", &series).map_err(|e| e.to_string())?;
    write_json(out, "summary.json", &summary)
}

impl State {
    /// After any interaction with the sender: its loss responses, its cumulative ACK, then
    /// everything it transmits now (clock read before each datagram).
    fn interact(
        &mut self,
        clock: &EndpointClock,
        udp: &mut Udp,
        framing: crate::wire::Framing,
        ect: u8,
    ) -> Result<(), String> {
        self.facts
            .after(&mut self.sender)
            .map_err(|e| e.to_string())?;
        loop {
            let now = clock.now();
            let Some((seg, kind)) = self.sender.poll_transmit_with_kind(now) else {
                break;
            };
            self.facts
                .transmit(now, &seg, kind)
                .map_err(|e| e.to_string())?;
            self.payload.resize(seg.len as usize, 0);
            stream::fill(seg.seq.0, &mut self.payload);
            self.out.clear();
            framing.encode_data(self.flow as u16, &seg, now, &self.payload, &mut self.out)?;
            udp.set_tos(if seg.ect { ect } else { 0 })
                .map_err(|e| format!("IP_TOS: {e}"))?;
            if let Err(e) = udp.send(&self.out) {
                if e.raw_os_error() == Some(libc::EMSGSIZE) {
                    return Err(format!(
                        "tcp.mss = {}: a {}-byte IP packet does not fit the path's MTU \
                         (IP + UDP + {} bytes of header + payload; docs/live.md)",
                        seg.len,
                        crate::wire::IP_UDP + self.out.len(),
                        framing.data_header()
                    ));
                }
                // A datagram the socket refused is a drop outside the model.
                self.send_errors += 1;
                self.first_error.get_or_insert_with(|| e.to_string());
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn summary(
        &self,
        cfg: &FlowConfig,
        started_at: Option<Time>,
        finished_at: Option<Time>,
        now: Time,
        acks: u64,
        bad: u64,
        timers: &Histogram,
        sched: &str,
    ) -> Value {
        let start = cfg.start();
        // The simulator's throughput: bytes over (end - start), end = the last byte
        // acknowledged for a finished transfer, else the run's end.
        let end = finished_at.unwrap_or(cfg.end()).max(start);
        let span = end.saturating_since(start).as_nanos().max(1);
        let f = cfg.spec();
        let mut summary = json!({
            "role": "sender",
            "flow": cfg.flow,
            "framing": cfg.framing,
            "controller": f.controller.name,
            "recovery": f.recovery.name,
            "clock_origin_monotonic_ns": cfg.clock_origin_ns,
            "realtime": sched,
            "cpu_ns": crate::process::cpu_ns(),
            "start_ns": start.as_nanos(),
            "started_ns": started_at.map(|t| t.as_nanos()),
            "end_ns": end.as_nanos(),
            "stopped_ns": now.as_nanos(),
            "completed": finished_at.is_some(),
            "acks_received": acks,
            "undecodable": bad,
            "send_errors": self.send_errors,
            "first_send_error": self.first_error,
            "facts": self.facts.log.count,
            "timer_lateness_ns": lateness_json(timers),
        });
        merge(&mut summary, sender_figures(&self.sender, span));
        summary
    }
}
