//! The network: nodes, link directions, routes and the packets crossing them. It moves
//! packets hop by hop and hands those that reach their destination host back to the caller;
//! endpoints are not its business, and neither is measurement: it states what it did to
//! packets (a drop with its cause, a CE mark) as [`Fact`]s in [`Network::facts`], for the
//! caller to hand to the instruments ([`crate::instruments`]).
//!
//! Events it needs are [`NetEvent`]s, pushed into the caller's queue (any event type that
//! wraps them), so the same network runs under the simulation driver or alone in tests.
//! Per link direction there is at most one `ServiceDone` and one `Arrive` event pending.

use crate::delivery_trace::DeliveryTrace;
use crate::engine::EventQueue;
use crate::flow_route::PinnedRoutes;
use crate::instruments::{Dropped, Fact};
use crate::link::{Discipline, Link, Offer, Wakeups};
use crate::loss;
use crate::node::{Node, Routes};
use crate::packet::DropCause;
use crate::packet::{Head, Packet, PacketId, PacketKind, PacketPool, Payload};
use crate::pcap::Capture;
use crate::rng::Rng;
use crate::scenario::LinkChange;
use crate::topology::Layout;
use crate::trace::Recorder;
use crate::wlan::{HopEvent, Wlan};
use std::collections::VecDeque;
use tcplab_core::{Dur, Time};

/// What the network schedules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetEvent {
    /// Link direction `i` finished serializing its packet in service.
    ServiceDone(u32),
    /// The head packet propagating on link direction `i` reaches the far node.
    Arrive(u32),
    /// The next scheduled change of link direction `i` is due.
    Reconfigure(u32),
    /// WLAN segment `i`'s medium needs attention (lazy: stale ones are ignored).
    Wlan(u32),
}

/// What a link direction (an index of routes and of `Results::links`) is: a wired link
/// direction or a hop of a WLAN segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hop {
    /// `Network::links[i]`.
    Wired(u32),
    /// Local hop `hop` of WLAN segment `segment` (`Network::wlans`).
    Wlan { segment: u32, hop: u32 },
}

/// A packet that reached its destination host.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Delivery {
    pub node: u32,
    pub packet: Packet,
}

/// A packet that reached its destination host, as [`Network::handle_arrival`] returns it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arrival {
    /// Still in the pool under `id`: the caller frees it ([`PacketPool::release`]).
    InPool { node: u32, id: PacketId },
    /// Already out of the pool (WLAN hops).
    Removed(Delivery),
}

/// Name and direction of a link direction, for results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkInfo {
    /// `"{from}-{to}"` of the duplex link.
    pub name: String,
    pub direction: &'static str,
}

/// A random drop to report over the cross-layer channel: TCP flow `flow`'s sender learns
/// of it at `at` (see [`crate::scenario::LinkDir::report_losses`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LossReport {
    pub flow: u32,
    pub at: Time,
    /// The dropped data segment's first byte (None: an ACK).
    pub seq: Option<u64>,
}

pub struct Network {
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    pub info: Vec<LinkInfo>,
    pub routes: Routes,
    pub pool: PacketPool,
    /// Drops, CE marks and (when asked, [`Network::set_every_departure`]) queue states not
    /// yet taken by the caller, in the order they happened (the caller drains them into its
    /// instruments).
    pub facts: Vec<Fact>,
    /// State what each link direction holds after every change ([`Fact::QueueState`]).
    queue_states: bool,
    /// Per link direction: report random drops over the cross-layer channel after this delay.
    pub report_delay: Vec<Option<Dur>>,
    /// Reports due, for the driver to schedule (drained by it after every network call).
    pub reports: Vec<LossReport>,
    /// Per link direction: changes not yet applied, in time order, each with the stream of
    /// the loss model it may build (`"loss/{link}/{direction}/change{k}"`).
    pub changes: Vec<VecDeque<(Time, LinkChange, Rng)>>,
    /// Routes pinned per flow (they take precedence over `routes`).
    pub pinned: PinnedRoutes,
    /// pcap capture of chosen link directions (see [`crate::pcap`]), if any.
    pub capture: Option<Box<Capture>>,
    /// WLAN segments; their hops follow the wired link directions in `hops`.
    pub wlans: Vec<Wlan>,
    /// Per link direction: what it is.
    pub hops: Vec<Hop>,
    hop_events: Vec<HopEvent>,
}

impl Network {
    /// Builds the link directions of `layout`; every random source gets its own stream from
    /// `seed` and its label (`"loss/{link}/{direction}"`, `"queue/{link}/{direction}"`).
    pub fn new(layout: &Layout, seed: u64) -> Self {
        Self::with_routes(layout, layout.routes(), seed)
    }

    /// [`new`](Self::new) with `layout`'s routes computed already.
    pub fn with_routes(layout: &Layout, routes: Routes, seed: u64) -> Self {
        let mut links = Vec::with_capacity(2 * layout.links.len());
        let mut info = Vec::with_capacity(2 * layout.links.len());
        let mut report_delay = Vec::with_capacity(2 * layout.links.len());
        let mut changes = Vec::with_capacity(2 * layout.links.len());
        for l in &layout.links {
            for (direction, spec, from, to) in [
                ("forward", &l.forward, l.from, l.to),
                ("reverse", &l.reverse, l.to, l.from),
            ] {
                let label = format!("{}/{direction}", l.name);
                let q = Discipline::build(
                    &spec.queue,
                    spec.buffer,
                    spec.rate,
                    Rng::stream(seed, &format!("queue/{label}")),
                );
                changes.push(
                    spec.schedule
                        .iter()
                        .enumerate()
                        .map(|(k, c)| {
                            let rng = Rng::stream(seed, &format!("loss/{label}/change{k}"));
                            (Time::ZERO + c.at, c.clone(), rng)
                        })
                        .collect(),
                );
                let m = loss::build(&spec.loss, Rng::stream(seed, &format!("loss/{label}")));
                let mut link = Link::new(from, to, spec.rate, spec.delay, q, m);
                if let Some(t) = &spec.trace {
                    link.set_trace(
                        DeliveryTrace::from_ms(t.ms.clone()).expect("a validated trace"),
                    );
                }
                links.push(link);
                report_delay.push(spec.report_losses.then_some(spec.report_delay));
                info.push(LinkInfo {
                    name: l.name.clone(),
                    direction,
                });
            }
        }
        let mut hops: Vec<Hop> = (0..links.len() as u32).map(Hop::Wired).collect();
        let mut wlans = Vec::with_capacity(layout.wlans.len());
        for (i, w) in layout.wlans.iter().enumerate() {
            let seg = Wlan::new(w.spec, w.ap, w.stations.clone(), seed);
            for hop in 0..seg.hop_count() as u32 {
                hops.push(Hop::Wlan {
                    segment: i as u32,
                    hop,
                });
                let (from, to) = seg.hop_nodes(hop);
                let n = |x: u32| layout.nodes[x as usize].name.as_str();
                let (a, s) = if hop.is_multiple_of(2) {
                    (from, to)
                } else {
                    (to, from)
                };
                info.push(LinkInfo {
                    name: format!("{}:{}-{}", w.spec.name, n(a), n(s)),
                    direction: if hop.is_multiple_of(2) {
                        "forward"
                    } else {
                        "reverse"
                    },
                });
                report_delay.push(None);
            }
            wlans.push(seg);
        }
        Network {
            wlans,
            hops,
            hop_events: Vec::new(),
            nodes: layout.nodes.clone(),
            routes,
            links,
            info,
            pool: PacketPool::new(),
            facts: Vec::new(),
            queue_states: false,
            report_delay,
            reports: Vec::new(),
            changes,
            capture: None,
            pinned: PinnedRoutes::default(),
        }
    }

    /// Schedules the first change of every link direction that has a schedule (call once,
    /// before the run; each change schedules the next one of its direction).
    pub fn schedule_changes<E: From<NetEvent> + Copy>(&self, q: &mut EventQueue<E>) {
        for (l, c) in self.changes.iter().enumerate() {
            if let Some(&(at, _, _)) = c.front() {
                q.push(at, NetEvent::Reconfigure(l as u32).into());
            }
        }
    }

    /// A source at node `at` hands `p` to the network.
    #[inline]
    pub fn send<E: From<NetEvent> + Copy>(
        &mut self,
        now: Time,
        at: u32,
        p: Packet,
        q: &mut EventQueue<E>,
        rec: &mut Recorder,
    ) {
        let id = self.pool.insert(p);
        if let Some(c) = &mut self.capture {
            c.on_send(at, id);
        }
        self.forward(now, at, id, self.pool.head(id), q, rec);
    }

    /// Processes one network event; returns a packet that reached its destination.
    pub fn handle<E: From<NetEvent> + Copy>(
        &mut self,
        now: Time,
        ev: NetEvent,
        q: &mut EventQueue<E>,
        rec: &mut Recorder,
    ) -> Option<Delivery> {
        match self.handle_arrival(now, ev, q, rec)? {
            Arrival::InPool { node, id } => Some(Delivery {
                node,
                packet: self.pool.remove(id),
            }),
            Arrival::Removed(d) => Some(d),
        }
    }

    /// Like [`handle`](Self::handle), but a packet that reached its destination over a link
    /// stays in the pool ([`Arrival::InPool`]): the caller reads it there and frees it with
    /// [`PacketPool::release`], which saves moving the packet out (ACKs are large).
    #[inline]
    pub fn handle_arrival<E: From<NetEvent> + Copy>(
        &mut self,
        now: Time,
        ev: NetEvent,
        q: &mut EventQueue<E>,
        rec: &mut Recorder,
    ) -> Option<Arrival> {
        match ev {
            NetEvent::ServiceDone(l) => {
                let link = &mut self.links[l as usize];
                let mut wake = Wakeups::default();
                let lost = link.finish_service(now, &mut wake);
                if self.queue_states {
                    self.facts
                        .push(Fact::queue_state(now, l, link.held_at(now)));
                }
                schedule(q, l, wake);
                self.capture_started(now, l, wake.started);
                if let Some(id) = lost {
                    self.drop_packet(now, l, id, DropCause::LinkError, rec);
                }
                None
            }
            NetEvent::Arrive(l) => {
                let link = &mut self.links[l as usize];
                let (id, next) = link.arrive(now);
                let node = link.to;
                if let Some(t) = next {
                    q.push(t, NetEvent::Arrive(l).into());
                }
                let head = self.pool.head(id);
                if head.dst == node {
                    Some(Arrival::InPool { node, id })
                } else {
                    self.forward(now, node, id, head, q, rec);
                    None
                }
            }
            NetEvent::Reconfigure(l) => {
                let pending = &mut self.changes[l as usize];
                let (_, change, rng) = pending.pop_front().expect("a change when one is due");
                if let Some(&(next, _, _)) = pending.front() {
                    q.push(next, NetEvent::Reconfigure(l).into());
                }
                self.links[l as usize].reconfigure(&change, rng);
                None
            }
            NetEvent::Wlan(w) => self.wlan_wake(now, w, q, rec).map(Arrival::Removed),
        }
    }

    /// Link direction index of local hop `hop` of WLAN segment `w`.
    fn wlan_link(&self, w: u32, hop: u32) -> u32 {
        let before: usize = self.wlans[..w as usize].iter().map(Wlan::hop_count).sum();
        (self.links.len() + before) as u32 + hop
    }

    fn wlan_wake<E: From<NetEvent> + Copy>(
        &mut self,
        now: Time,
        w: u32,
        q: &mut EventQueue<E>,
        rec: &mut Recorder,
    ) -> Option<Delivery> {
        let mut events = std::mem::take(&mut self.hop_events);
        let seg = &mut self.wlans[w as usize];
        seg.wake(now, &mut events);
        if let Some(t) = seg.rearm() {
            q.push(t, NetEvent::Wlan(w).into());
        }
        // One exchange ends per wake-up: at most one arrival.
        let mut delivery = None;
        for ev in events.drain(..) {
            match ev {
                HopEvent::Arrived { hop, id } => {
                    let node = self.wlans[w as usize].hop_nodes(hop).1;
                    let head = self.pool.head(id);
                    if head.dst == node {
                        let packet = self.pool.remove(id);
                        delivery = Some(Delivery { node, packet });
                    } else {
                        self.forward(now, node, id, head, q, rec);
                    }
                }
                HopEvent::MacDrop {
                    hop,
                    id,
                    rssi,
                    channel,
                } => {
                    let link = self.wlan_link(w, hop);
                    let report = self.wlans[w as usize].report_delay.filter(|_| channel);
                    self.drop_with(now, link, id, DropCause::Mac, report, Some(rssi), rec);
                }
            }
        }
        self.hop_events = events;
        delivery
    }

    /// Hands packet `id` to hop `hop` of WLAN segment `w`, link direction `l`.
    fn wlan_offer<E: From<NetEvent> + Copy>(
        &mut self,
        now: Time,
        l: u32,
        (w, hop): (u32, u32),
        id: PacketId,
        q: &mut EventQueue<E>,
        rec: &mut Recorder,
    ) {
        let size = self.pool.head(id).size;
        let seg = &mut self.wlans[w as usize];
        let offered = seg.offer(now, hop, id, size);
        if let Some(t) = seg.rearm() {
            q.push(t, NetEvent::Wlan(w).into());
        }
        if let Err(cause) = offered {
            self.drop_with(now, l, id, cause, None, None, rec);
        }
    }

    fn forward<E: From<NetEvent> + Copy>(
        &mut self,
        now: Time,
        at: u32,
        id: PacketId,
        p: Head,
        q: &mut EventQueue<E>,
        rec: &mut Recorder,
    ) {
        let l = self
            .pinned
            .next_link(p, at)
            .or_else(|| self.routes.next_link(at, p.dst))
            .expect("validated scenarios have a route for every packet");
        // Wired directions come first in the numbering of hops: the common case needs no
        // look-up in `hops`.
        if l as usize >= self.links.len() {
            if let Hop::Wlan { segment, hop } = self.hops[l as usize] {
                return self.wlan_offer(now, l, (segment, hop), id, q, rec);
            }
        }
        debug_assert!(matches!(self.hops[l as usize], Hop::Wired(i) if i == l));
        let link = &mut self.links[l as usize];
        let mut wake = Wakeups::default();
        let offer = link.offer(now, id, p, &mut self.pool, &mut wake, true);
        schedule(q, l, wake);
        if matches!(offer, Offer::Marked) {
            self.facts.push(Fact::Mark { flow: p.flow });
        }
        match offer {
            Offer::Queued | Offer::Marked => {
                if self.queue_states {
                    self.facts
                        .push(Fact::queue_state(now, l, link.held_at(now)));
                }
            }
            Offer::Dropped(cause) => self.drop_packet(now, l, id, cause, rec),
        }
        self.capture_started(now, l, wake.started);
    }

    /// The pcap hook: link direction `l` started serializing `started` at `now`.
    #[inline]
    fn capture_started(&mut self, now: Time, l: u32, started: Option<PacketId>) {
        if let Some(c) = &mut self.capture {
            if let Some(id) = started {
                c.on_transmit(now, l, id, self.pool.get(id));
            }
        }
    }

    fn drop_packet(
        &mut self,
        now: Time,
        link: u32,
        id: PacketId,
        cause: DropCause,
        rec: &mut Recorder,
    ) {
        let report = self.report_delay[link as usize].filter(|_| cause.is_random());
        self.drop_with(now, link, id, cause, report, None, rec);
    }

    /// Drops packet `id` on link direction `link`; `report`: report it over the cross-layer
    /// channel after this delay (TCP packets only); `rssi`: received power of the last
    /// attempt (WLAN MAC drops), None elsewhere.
    #[allow(clippy::too_many_arguments)]
    fn drop_with(
        &mut self,
        now: Time,
        link: u32,
        id: PacketId,
        cause: DropCause,
        report: Option<Dur>,
        rssi: Option<f64>,
        rec: &mut Recorder,
    ) {
        let p = self.pool.remove(id);
        let kind = p.kind();
        let (retransmission, data_seq) = match &p.payload {
            Payload::Data(d) => (d.retransmission, Some(d.seq.0)),
            _ => (0, None),
        };
        self.facts.push(Fact::Drop(Dropped {
            time: now,
            link,
            flow: p.flow,
            kind,
            seq: p.seq(),
            retransmission,
            sent_at: p.sent_at,
            cause,
        }));
        if let Some(delay) = report {
            if kind != PacketKind::Udp {
                self.reports.push(LossReport {
                    flow: p.flow,
                    at: now + delay,
                    seq: data_seq,
                });
            }
        }
        rec.drop_rssi(now, link, &p, cause, rssi);
    }

    /// The hops (link directions and WLAN hops) a `kind` packet of flow `flow` crosses from
    /// node `src` to node `dst`: its pinned route, else the routing table's (not the per-packet
    /// path, which `forward` takes).
    pub fn path(&self, kind: PacketKind, flow: u32, src: u32, dst: u32) -> Vec<u32> {
        let mut at = src;
        let mut out = Vec::new();
        while at != dst && out.len() <= self.nodes.len() {
            let Some(l) = self
                .pinned
                .next_link_of(kind, flow, at)
                .or_else(|| self.routes.next_link(at, dst))
            else {
                break;
            };
            out.push(l);
            at = self.hop_to(l);
        }
        out
    }

    /// The node hop `l` (a wired link direction or a WLAN hop) leads to.
    pub fn hop_to(&self, l: u32) -> u32 {
        match self.hops[l as usize] {
            Hop::Wired(i) => self.links[i as usize].to,
            Hop::Wlan { segment, hop } => self.wlans[segment as usize].hop_nodes(hop).1,
        }
    }

    /// Asks every link direction for an event at each departure, and states what it holds
    /// after every enqueue and departure ([`Fact::QueueState`]), for queue series recorded on
    /// change (with exact departure times; other results do not depend on it).
    pub fn set_every_departure(&mut self, on: bool) {
        self.queue_states = on;
        for l in &mut self.links {
            l.set_every_departure(on);
        }
    }

    /// Packets held by links (waiting, in service, propagating), by kind.
    pub fn in_flight_by_kind(&self) -> [u64; 3] {
        let mut n = [0u64; 3];
        for l in &self.links {
            l.for_each_packet(|id| n[self.pool.head(id).kind as usize] += 1);
        }
        for w in &self.wlans {
            w.for_each_packet(|id| n[self.pool.head(id).kind as usize] += 1);
        }
        n
    }
}

#[inline(always)]
fn schedule<E: From<NetEvent> + Copy>(q: &mut EventQueue<E>, l: u32, wake: Wakeups) {
    if let Some(t) = wake.service_done {
        q.push(t, NetEvent::ServiceDone(l).into());
    }
    if let Some(t) = wake.arrival {
        q.push(t, NetEvent::Arrive(l).into());
    }
}
