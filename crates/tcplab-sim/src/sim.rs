//! The simulation driver: builds the network and the flows from a validated scenario, runs
//! the event loop, and lets endpoints react to what arrives.
//!
//! After every interaction with an endpoint (a segment delivered, a timer, start or stop)
//! the driver drains `poll_transmit` until None, hands each segment to the network, and
//! re-arms the endpoint's lazy timer (see [`TimerSlot`]): one event per endpoint is
//! outstanding in the usual case, and a timer event that fires before the endpoint's
//! (since moved) deadline just re-arms it.
//!
//! The run ends at the scenario's duration (events at exactly that time still run), or
//! earlier, right after the event that leaves nothing to wait for: every TCP flow with a
//! byte count or a stop time has finished (all its data acknowledged), no TCP flow is
//! unlimited, and every UDP source has reached its stop time. Packets still in the network
//! then are counted as in flight.
//!
//! Measurement is left to the instruments ([`crate::instruments`]): the driver states facts
//! to them (the network's drops and marks, each sender's loss responses right after it
//! reacted and before it transmits again, its acknowledged data, its transmissions with
//! their kind, the cross-layer reports it got). Drops reach the instruments before any loss
//! response that follows them. Random drops on link directions with `report_losses` become
//! `CrossLayer` events, delivered to the flow's sender `report_delay` after the drop.

use crate::app::UdpFlow;
use crate::engine::{EventQueue, TimerSlot};
use crate::estimate::{self, Estimate, FlowEnds};
use crate::flow::TcpFlow;
use crate::flow_route::PinnedRoutes;
use crate::handshake;
use crate::instruments::{Delivered, Fact, Instruments};
use crate::network::{Arrival, LossReport, NetEvent, Network};
use crate::node::Routes;
use crate::packet::{ack_wire_size, data_wire_size, Packet, PacketId, PacketKind, Payload};
use crate::pcap::{self, Capture};
use crate::results::RunStats;
use crate::rng::Rng;
use crate::scenario::SeriesMode;
use crate::trace::{Recorder, Recording};
use crate::{census, summary, topology, validate};
use crate::{Results, Scenario};
use std::sync::Arc;
use tcplab_core::cc::CrossLayerReport;
use tcplab_core::registry::Registries;
use tcplab_core::{
    Dur, LogRecord, LossResponse, Receiver, Sender, Seq, SharedConfig, TcpConfig, Time,
};

pub use crate::error::SimError;

/// Everything the driver schedules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Net(NetEvent),
    /// Lazy timer of TCP flow `i`'s sender / receiver.
    SenderTimer(u32),
    ReceiverTimer(u32),
    TcpStart(u32),
    TcpStop(u32),
    /// UDP flow `i` sends its next packet.
    UdpSend(u32),
    UdpStop(u32),
    /// Interval sampling of series.
    Sample,
    /// A cross-layer report of one random drop reaches its flow's sender: slot `i` of
    /// `Simulation::reports` (kept out of the event to keep events small).
    CrossLayer(u32),
}

impl From<NetEvent> for Event {
    fn from(e: NetEvent) -> Self {
        Event::Net(e)
    }
}

pub struct Simulation {
    now: Time,
    end: Time,
    done: bool,
    events: EventQueue<Event>,
    net: Network,
    tcp: Vec<TcpFlow>,
    udp: Vec<UdpFlow>,
    rec: Recorder,
    /// Flows that keep the run going: bounded TCP flows not finished, UDP sources with a stop
    /// time not yet stopped, and every unbounded flow.
    running: usize,
    interval: Dur,
    log_buf: Vec<LogRecord>,
    loss_buf: Vec<LossResponse>,
    instruments: Instruments,
    /// What the run was expected to record ([`crate::estimate`]).
    estimate: Estimate,
    /// Cross-layer reports on their way to a sender (`Event::CrossLayer` names a slot;
    /// a delivered report's slot is reused from `free_reports`).
    reports: Vec<LossReport>,
    free_reports: Vec<u32>,
}

impl Simulation {
    /// What [`with_limit`](Self::with_limit) refuses, without building the run: the
    /// scenario's rules, each flow's TCP settings and components (built and dropped one by
    /// one), the recording estimate against `max_record_bytes`. For `tcplab validate` and a
    /// sweep's points: a flow costs its sender's construction, not its memory.
    pub fn check(
        s: &Scenario,
        registries: &Registries,
        max_record_bytes: u64,
    ) -> Result<Estimate, SimError> {
        let (layout, routes) = s.validated(registries)?;
        let net = routed_network(s, &layout, routes);
        for (i, f) in s.flows.iter().enumerate() {
            flow_sender(s, registries, i, s.tcp_of(f))?;
        }
        estimate_within(s, &net, &layout, max_record_bytes)
    }

    /// Validates the scenario and builds the network, flows and random streams.
    pub fn new(s: &Scenario) -> Result<Self, SimError> {
        Self::with_registries(s, &Registries::default())
    }

    /// `new`, with the flows' controllers and recovery strategies built from `registries`
    /// (the built-ins plus an embedding program's own, see `tcplab_core::registry`).
    pub fn with_registries(s: &Scenario, registries: &Registries) -> Result<Self, SimError> {
        Self::with_limit(s, registries, estimate::DEFAULT_MAX_RECORD_MB << 20)
    }

    /// `with_registries`, recording at most `max_record_bytes`: a scenario whose estimate
    /// ([`crate::estimate`]) passes it is refused (one line naming the setting to change),
    /// and a run that records more anyway stops with [`record_error`](Self::record_error).
    pub fn with_limit(
        s: &Scenario,
        registries: &Registries,
        max_record_bytes: u64,
    ) -> Result<Self, SimError> {
        let (layout, routes) = s.validated(registries)?;
        let mut net = routed_network(s, &layout, routes);
        net.set_every_departure(s.trace.series == SeriesMode::Change);
        let mut events = EventQueue::new();
        net.schedule_changes(&mut events);
        net.capture = capture(s, &layout);
        let node = |name: &str| layout.node(name).expect("validated node name");
        let start = |d: Dur| Time::ZERO + d;

        let mut tcp = Vec::with_capacity(s.flows.len());
        // Flows with the same settings as the flow before (a group, the scenario's defaults)
        // share one copy of them.
        let mut last: Option<Arc<TcpConfig>> = None;
        for (i, f) in s.flows.iter().enumerate() {
            let cfg = s.tcp_of(f);
            let cfg = match last {
                Some(c) if *c == *cfg => c,
                _ => Arc::new(cfg.clone()),
            };
            last = Some(Arc::clone(&cfg));
            let mut sender = flow_sender(s, registries, i, &cfg)?;
            sender.set_logging(s.trace.events);
            if handshake::has_handshake(f.stack) {
                let rtt = handshake::idle_round_trip(&net, i as u32, node(&f.src), node(&f.dst));
                sender.on_handshake_rtt(start(f.start), rtt);
            }
            events.push(start(f.start), Event::TcpStart(i as u32));
            if let Some(stop) = f.stop {
                events.push(start(stop), Event::TcpStop(i as u32));
            }
            tcp.push(TcpFlow {
                name: f.name.clone().unwrap_or_else(|| format!("flow{i}")),
                src: node(&f.src),
                dst: node(&f.dst),
                controller: f.controller.name.clone(),
                recovery: f.recovery.name.clone(),
                start: start(f.start),
                stop: f.stop.map(start),
                bytes: f.bytes,
                sender,
                receiver: Receiver::new(cfg),
                sender_timer: TimerSlot::default(),
                receiver_timer: TimerSlot::default(),
                finished_at: None,
                delivered: 0,
                read_total: 0,
                misreads: Vec::new(),
            });
        }
        let mut udp = Vec::with_capacity(s.udp.len());
        for (i, u) in s.udp.iter().enumerate() {
            events.push(start(u.start), Event::UdpSend(i as u32));
            if let Some(stop) = u.stop {
                events.push(start(stop), Event::UdpStop(i as u32));
            }
            udp.push(UdpFlow {
                name: u.name.clone().unwrap_or_else(|| format!("udp{i}")),
                src: node(&u.src),
                dst: node(&u.dst),
                rate: u.rate,
                packet_size: u.packet_size,
                start: start(u.start),
                stop: u.stop.map(start),
                next: 0,
                stopped: false,
                received: 0,
                received_bytes: 0,
            });
        }
        if s.trace.series == SeriesMode::Interval {
            events.push(Time::ZERO, Event::Sample);
        }
        let estimate = estimate_within(s, &net, &layout, max_record_bytes)?;
        let mut rec = Recorder::with_bounds(&s.trace, tcp.len(), udp.len());
        rec.set_limit(max_record_bytes);
        let mut instruments = Instruments::new(s.flows.len(), s.udp.len());
        instruments.bound_series(net.links.len(), &s.trace);
        if s.trace.series != SeriesMode::Off {
            let t = &s.trace;
            instruments.delay_over_time(t.interval, s.duration, t.rows_per_flow());
        }
        let running = tcp.len() + udp.len();
        Ok(Simulation {
            now: Time::ZERO,
            end: start(s.duration),
            done: running == 0,
            events,
            rec,
            net,
            tcp,
            udp,
            running,
            interval: s.trace.interval,
            log_buf: Vec::new(),
            loss_buf: Vec::new(),
            instruments,
            estimate,
            reports: Vec::new(),
            free_reports: Vec::new(),
        })
    }

    /// Processes every event up to and including `t` (capped at the end of the run).
    pub fn run_until(&mut self, t: Time) {
        let limit = t.min(self.end);
        while !self.done {
            let Some((at, ev)) = self.events.pop_until(limit) else {
                break;
            };
            self.now = at;
            self.dispatch(ev);
            if !self.net.facts.is_empty() {
                self.absorb();
            }
            if !self.net.reports.is_empty() {
                for r in self.net.reports.drain(..) {
                    let slot = match self.free_reports.pop() {
                        Some(i) => {
                            self.reports[i as usize] = r;
                            i
                        }
                        None => {
                            self.reports.push(r);
                            (self.reports.len() - 1) as u32
                        }
                    };
                    self.events.push(r.at, Event::CrossLayer(slot));
                }
            }
            if self.running == 0 || self.rec.over().is_some() {
                self.done = true;
            }
        }
        if !self.done {
            self.now = self.now.max(limit);
            if self.now >= self.end {
                self.done = true;
            }
        }
    }

    /// The sender of TCP flow `flow` (its state as the run stands).
    pub fn sender(&self, flow: usize) -> &Sender {
        &self.tcp[flow].sender
    }
    /// The receiver of TCP flow `flow` (its state as the run stands).
    pub fn receiver(&self, flow: usize) -> &Receiver {
        &self.tcp[flow].receiver
    }
    /// Simulated time reached so far.
    pub fn now(&self) -> Time {
        self.now
    }
    /// When the run ends (the scenario's duration).
    pub fn end_time(&self) -> Time {
        self.end
    }
    /// The average queue of link direction `link`'s active queue manager (RED), if it has
    /// one (`link` indexes `Results::links`).
    pub fn queue_average(&self, link: usize) -> Option<f64> {
        self.net.links.get(link)?.queue_average()
    }
    /// The run is over: end time reached, or every flow finished and nothing is pending
    /// (or recording passed its limit: see [`record_error`](Self::record_error)).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// What the run was expected to record before it started.
    pub fn estimate(&self) -> &Estimate {
        &self.estimate
    }

    /// What the run has recorded so far, table by table.
    pub fn recording(&self) -> Recording {
        self.rec.recording(self.instruments.series_sizes())
    }

    /// Some(one line) when recording passed its limit: the run stopped there and its
    /// results are incomplete.
    pub fn record_error(&self) -> Option<String> {
        let (table, at) = self.rec.over()?;
        let r = self.recording();
        Some(format!(
            "recording passed max_record_mb = {} at {at} simulated ({} recorded, the {table} \
             table growing; the estimate was {}): record less (trace.{}, \
             trace.max_rows_per_flow) or raise the limit (--max-record-mb)",
            estimate::limit_mb(r.limit_bytes),
            estimate::megabytes(r.bytes()),
            estimate::megabytes(self.estimate.bytes()),
            match table {
                "queues" => "series",
                "delay_series" => "interval",
                t => t,
            },
        ))
    }

    /// Keeps every fact the instruments take, for [`finish_recorded`](Self::finish_recorded)
    /// (call before running).
    pub fn record_facts(&mut self) {
        self.instruments.record();
    }

    /// Ends the run: summaries, conservation check, columns.
    pub fn finish(self) -> Results {
        self.finish_recorded().0
    }

    /// Like [`finish`](Self::finish), and also returns every fact the instruments took,
    /// in order (empty unless [`record_facts`](Self::record_facts) was called).
    pub fn finish_recorded(mut self) -> (Results, Vec<Fact>) {
        let end = self.now;
        self.absorb();
        for fact in census::facts(&self.net, &self.tcp, &self.udp) {
            self.instruments.on_fact(fact);
        }
        let mut m = self.instruments.finish();
        let facts = std::mem::take(&mut m.facts);
        let net = &self.net;
        let flows = self
            .tcp
            .iter()
            .enumerate()
            .map(|(i, f)| summary::tcp_flow(net, &m, i, f, end))
            .collect();
        let udp = self
            .udp
            .iter()
            .enumerate()
            .map(|(i, u)| summary::udp_flow(net, m.drops().udp[i], u, end))
            .collect();
        let stats = RunStats {
            sim_time_ns: end.as_nanos(),
            events: self.events.processed(),
            transmissions: net.links.iter().map(|l| l.stats_at(end).packets_sent).sum(),
            peak_pending_events: self.events.peak_len() as u64,
        };
        let links = summary::links(net, end);
        let tcp_names: Vec<String> = self.tcp.iter().map(|f| f.name.clone()).collect();
        let udp_names: Vec<String> = self.udp.iter().map(|u| u.name.clone()).collect();
        let pcap = self.net.capture.map(|c| c.finish()).unwrap_or_default();
        let rec = self.rec;
        let results = Results {
            flows,
            udp,
            links,
            drops: rec.drops,
            events: rec.events,
            segments: rec.segments,
            stats,
            pcap,
            // The instruments' tables (delay, histogram, series, queues, verdicts) and the
            // conservation verdict.
            ..m.into_results(&tcp_names, &udp_names)
        };
        (results, facts)
    }

    /// Runs a scenario to the end.
    pub fn run(scenario: &Scenario) -> Result<Results, SimError> {
        let mut s = Simulation::new(scenario)?;
        let end = s.end_time();
        s.run_until(end);
        Ok(s.finish())
    }

    fn dispatch(&mut self, ev: Event) {
        let now = self.now;
        match ev {
            Event::Net(e) => {
                match self
                    .net
                    .handle_arrival(now, e, &mut self.events, &mut self.rec)
                {
                    Some(Arrival::InPool { id, .. }) => self.deliver(id),
                    Some(Arrival::Removed(d)) => {
                        self.instruments
                            .on_fact_within(delivered(now, &d.packet), &mut self.rec.budget);
                        let to = receive(&mut self.tcp, &mut self.udp, now, &d.packet);
                        self.after_delivery(to);
                    }
                    None => {}
                }
            }
            Event::SenderTimer(i) => {
                let f = &mut self.tcp[i as usize];
                if f.sender_timer.fire(now) {
                    if f.sender.poll_timeout().is_some_and(|d| d <= now) {
                        f.sender.on_timeout(now);
                    }
                    self.after_sender(i);
                }
            }
            Event::ReceiverTimer(i) => {
                let f = &mut self.tcp[i as usize];
                if f.receiver_timer.fire(now) {
                    if f.receiver.poll_timeout().is_some_and(|d| d <= now) {
                        f.receiver.on_timeout(now);
                    }
                    self.after_receiver(i);
                }
            }
            Event::TcpStart(i) => self.after_sender(i),
            Event::TcpStop(i) => {
                self.tcp[i as usize].sender.close();
                self.after_sender(i);
            }
            Event::UdpSend(i) => self.udp_send(i),
            Event::UdpStop(i) => {
                let u = &mut self.udp[i as usize];
                if !u.stopped {
                    u.stopped = true;
                    self.running -= 1;
                }
            }
            Event::Sample => self.sample(),
            Event::CrossLayer(slot) => {
                let r = self.reports[slot as usize];
                self.free_reports.push(slot);
                let i = r.flow;
                self.instruments.on_fact(Fact::Report { flow: i });
                let f = &mut self.tcp[i as usize];
                f.sender.on_cross_layer(&CrossLayerReport {
                    now,
                    random_losses: 1,
                    lost: r.seq.map(Seq),
                });
                self.after_sender(i);
            }
        }
    }

    /// Packet `id`, still in the pool, reached its destination: the endpoint reads it there,
    /// then its slot is freed (before the endpoint sends anything).
    fn deliver(&mut self, id: PacketId) {
        let p = self.net.pool.get(id);
        self.instruments
            .on_fact_within(delivered(self.now, p), &mut self.rec.budget);
        let to = receive(&mut self.tcp, &mut self.udp, self.now, p);
        self.net.pool.release(id);
        self.after_delivery(to);
    }

    fn after_delivery(&mut self, to: Receipt) {
        match to {
            Receipt::Receiver(i) => self.after_receiver(i),
            Receipt::Sender(i) => self.after_sender(i),
            Receipt::Udp => {}
        }
    }

    /// After any interaction with flow `i`'s sender.
    fn after_sender(&mut self, i: u32) {
        let now = self.now;
        // The drops so far first: the loss responses may answer them.
        if !self.net.facts.is_empty() {
            self.absorb();
        }
        let f = &mut self.tcp[i as usize];
        // Before anything is retransmitted: the responses, then what is acknowledged.
        f.sender.drain_loss_responses(&mut self.loss_buf);
        let snd_nxt = f.sender.snd_nxt().0;
        for response in self.loss_buf.drain(..) {
            self.instruments.on_fact(Fact::LossResponse {
                flow: i,
                response,
                snd_nxt,
            });
        }
        let una = f.sender.snd_una().0;
        self.instruments.on_fact(Fact::Acked { flow: i, una });
        while let Some((seg, kind)) = f.sender.poll_transmit_with_kind(now) {
            self.instruments.on_fact(Fact::Transmit {
                flow: i,
                seq: seg.seq.0,
                retransmission: seg.retransmission,
                kind,
            });
            self.rec.segment(now, i, &seg);
            let p = Packet {
                flow: i,
                dst: f.dst,
                size: data_wire_size(&seg),
                sent_at: now,
                payload: Payload::Data(seg),
            };
            self.net
                .send(now, f.src, p, &mut self.events, &mut self.rec);
        }
        let deadline = f.sender.poll_timeout().map(|d| d.max(now));
        if let Some(t) = f.sender_timer.arm(deadline) {
            self.events.push_timer(t, Event::SenderTimer(i));
        }
        if self.rec.events_on {
            f.sender.drain_log(&mut self.log_buf);
            self.rec.sender_log(i, &self.log_buf);
            self.log_buf.clear();
        }
        if f.finished_at.is_none() && f.bounded() && f.sender.is_finished() {
            f.finished_at = Some(now);
            self.running -= 1;
        }
        if self.rec.on_change() {
            let state = Fact::flow_state(now, i, &f.sender, f.delivered, true);
            self.instruments.on_fact_within(state, &mut self.rec.budget);
        }
    }

    /// Hands the network's facts (drops, marks, queue states) to the instruments.
    #[inline(never)]
    fn absorb(&mut self) {
        for fact in self.net.facts.drain(..) {
            self.instruments.on_fact_within(fact, &mut self.rec.budget);
        }
    }

    /// After any interaction with flow `i`'s receiver.
    fn after_receiver(&mut self, i: u32) {
        let now = self.now;
        let f = &mut self.tcp[i as usize];
        f.read_all();
        while let Some(ack) = f.receiver.poll_transmit(now) {
            self.instruments.on_fact(Fact::AckSent { flow: i });
            let p = Packet {
                flow: i,
                dst: f.src,
                size: ack_wire_size(&ack),
                sent_at: now,
                payload: Payload::Ack(ack),
            };
            self.net
                .send(now, f.dst, p, &mut self.events, &mut self.rec);
        }
        let deadline = f.receiver.poll_timeout().map(|d| d.max(now));
        if let Some(t) = f.receiver_timer.arm(deadline) {
            self.events.push_timer(t, Event::ReceiverTimer(i));
        }
        if self.rec.on_change() {
            let state = Fact::flow_state(now, i, &f.sender, f.delivered, true);
            self.instruments.on_fact_within(state, &mut self.rec.budget);
        }
    }

    fn udp_send(&mut self, i: u32) {
        let now = self.now;
        let u = &mut self.udp[i as usize];
        if !u.sends_at(now, self.end) {
            return;
        }
        let p = Packet {
            flow: i,
            dst: u.dst,
            size: u.packet_size,
            sent_at: now,
            payload: Payload::Udp(u.next),
        };
        self.instruments.on_fact(Fact::UdpSent {
            flow: i,
            seq: u.next,
        });
        u.next += 1;
        let next = u.send_time(u.next);
        let src = u.src;
        if u.sends_at(next, self.end) {
            self.events.push(next, Event::UdpSend(i));
        }
        self.net.send(now, src, p, &mut self.events, &mut self.rec);
    }

    fn sample(&mut self) {
        let now = self.now;
        for (i, f) in self.tcp.iter().enumerate() {
            if f.start <= now {
                let state = Fact::flow_state(now, i as u32, &f.sender, f.delivered, false);
                self.instruments.on_fact_within(state, &mut self.rec.budget);
            }
        }
        for (l, link) in self.net.links.iter().enumerate() {
            let held = Fact::queue_state(now, l as u32, link.held_at(now));
            self.instruments.on_fact_within(held, &mut self.rec.budget);
        }
        let next = now + self.interval;
        if next <= self.end {
            self.events.push(next, Event::Sample);
        }
    }
}

/// Which endpoint took a delivered packet (the driver then lets it react).
enum Receipt {
    Receiver(u32),
    Sender(u32),
    Udp,
}

/// The fact of packet `p`'s arrival at its destination.
#[inline(always)]
fn delivered(now: Time, p: &Packet) -> Fact {
    match p.kind() {
        PacketKind::Ack => Fact::AckDelivered { flow: p.flow },
        kind => Fact::Delivered(Delivered {
            time: now,
            flow: p.flow,
            kind,
            seq: p.seq(),
            sent_at: p.sent_at,
        }),
    }
}

/// Hands delivered packet `p` to its endpoint.
#[inline(always)]
fn receive(tcp: &mut [TcpFlow], udp: &mut [UdpFlow], now: Time, p: &Packet) -> Receipt {
    let i = p.flow;
    match &p.payload {
        Payload::Data(seg) => {
            let f = &mut tcp[i as usize];
            f.receiver.on_segment(now, seg);
            Receipt::Receiver(i)
        }
        Payload::Ack(ack) => {
            let f = &mut tcp[i as usize];
            f.sender.on_segment(now, ack);
            Receipt::Sender(i)
        }
        Payload::Udp(_) => {
            let u = &mut udp[i as usize];
            u.received += 1;
            u.received_bytes += p.size as u64;
            Receipt::Udp
        }
    }
}

/// The network of validated `layout` with its `routes` and the flows' pinned routes.
fn routed_network(s: &Scenario, layout: &topology::Layout, routes: Routes) -> Network {
    let mut net = Network::with_routes(layout, routes, s.seed);
    net.pinned = PinnedRoutes::of_scenario(s, layout);
    net
}

/// The recording estimate of the run on `net`, refused past `max_record_bytes`.
fn estimate_within(
    s: &Scenario,
    net: &Network,
    layout: &topology::Layout,
    max_record_bytes: u64,
) -> Result<Estimate, SimError> {
    let (tcp_ends, udp_ends) = flow_ends(s, |name: &str| {
        layout.node(name).expect("validated node name")
    });
    let estimate = estimate::of(s, net, &tcp_ends, &udp_ends);
    estimate.check(s, max_record_bytes).map_err(SimError)?;
    Ok(estimate)
}

/// The sender of TCP flow `i` with settings `cfg`, its settings and components checked (one
/// line naming the flow when they are not); its controller has its own random stream (BBR's
/// ProbeBW phase).
fn flow_sender(
    s: &Scenario,
    registries: &Registries,
    i: usize,
    cfg: impl SharedConfig,
) -> Result<Sender, SimError> {
    let f = &s.flows[i];
    let seed = Rng::stream(s.seed, &format!("controller/{i}")).next_u64();
    Sender::build_seeded(registries, cfg, &f.controller, &f.recovery, f.bytes, seed)
        .map_err(|e| SimError(validate::flow_config_error(&format!("flows[{i}]"), &e)))
}

/// Each TCP and UDP flow as the recording estimate sees it ([`FlowEnds`]); `node` gives a
/// host's index.
fn flow_ends(s: &Scenario, node: impl Fn(&str) -> u32) -> (Vec<FlowEnds>, Vec<FlowEnds>) {
    let active = |from: Dur, stop: Option<Dur>| {
        let until = stop.map_or(s.duration, |t| t.min(s.duration));
        until.as_nanos().saturating_sub(from.as_nanos())
    };
    let tcp = s
        .flows
        .iter()
        .map(|spec| {
            let mss = s.tcp_of(spec).mss as u64;
            FlowEnds {
                src: node(&spec.src),
                dst: node(&spec.dst),
                active_ns: active(spec.start, spec.stop),
                packet_bytes: mss + crate::packet::IP_TCP_HEADER as u64,
                bytes: spec.bytes,
                rate: None,
            }
        })
        .collect();
    let udp = s
        .udp
        .iter()
        .map(|spec| FlowEnds {
            src: node(&spec.src),
            dst: node(&spec.dst),
            active_ns: active(spec.start, spec.stop),
            packet_bytes: spec.packet_size as u64,
            bytes: None,
            rate: Some(spec.rate),
        })
        .collect();
    (tcp, udp)
}

fn capture(s: &Scenario, layout: &topology::Layout) -> Option<Box<Capture>> {
    if s.trace.pcap.is_empty() {
        return None;
    }
    let files = pcap::plan(&s.trace.pcap, layout).ok()?;
    let node = |name: &str| layout.node(name).expect("validated node name");
    Some(Box::new(Capture::new(
        files,
        2 * layout.links.len(),
        layout.nodes.iter().map(|n| n.name.clone()).collect(),
        s.flows
            .iter()
            .map(|f| (node(&f.src), node(&f.dst)))
            .collect(),
        s.udp.iter().map(|u| (node(&u.src), node(&u.dst))).collect(),
        s.trace.pcap_snaplen,
    )))
}

#[cfg(test)]
impl Simulation {
    /// For tests that check the checks: tamper with the state.
    pub(crate) fn parts_mut(&mut self) -> (&mut Network, &mut [TcpFlow]) {
        (&mut self.net, &mut self.tcp)
    }
}
