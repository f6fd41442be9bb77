//! One direction of a link: a queue feeding a serializer at the link rate, then a fixed
//! propagation delay (a Dummynet pipe).
//!
//! - A packet offered to the link goes through the queue discipline, which admits or drops
//!   it. The buffer counts the packet being serialized (Dummynet semantics).
//! - The serializer takes one packet at a time, in the order the discipline gives; `size`
//!   bytes take `ceil(size * 8 / rate)` ns.
//! - When serialization ends, the link's loss model decides whether the packet is lost on
//!   the wire (cause `link_error`): a lost packet has used the link (it counts in packets and
//!   bytes sent and in utilization, and delayed the packets behind it) but never arrives.
//! - Surviving packets propagate for `delay` and arrive at the far node in order.
//! - ECN-capable packets the discipline marks (CE) are counted in `ecn_marks`; a mark is
//!   not a drop.
//! - A trace-driven direction ([`Link::set_trace`], [`crate::delivery_trace`]) has no
//!   serializer rate: the packet at the head leaves at the delivery opportunity of the trace
//!   that carries its last byte (Mahimahi's `mm-link`); it counts as in service (in the
//!   buffer and in `busy`) from reaching the head until then.
//! - A scheduled change ([`Link::reconfigure`]) takes effect for packets that start service
//!   or arrive after it: the packet in service keeps its end time and loss draw, propagating
//!   packets keep their arrival time (after a delay decrease, a later packet arrives no
//!   earlier than the one ahead of it: the link does not reorder), and a smaller buffer
//!   only refuses new packets until the link holds less.
//!
//! # Events
//!
//! Arrival times never decrease, so propagating packets sit in a FIFO and the driver keeps
//! one `Arrive` event per link for the head of it, not one per packet.
//!
//! Departures are lazy. When a packet starts service its end time is known, so it is put on
//! the wire at once (with its arrival time) and the loss draw is made then, for the
//! serialization's end (draws happen in departure order either way). An event at the end
//! of service (`ServiceDone`) is needed only when something must happen then: a packet waits
//! behind it, or it is lost (its drop is recorded at that time), or the caller asked for
//! every departure (queue series). Otherwise the finished packet is retired by the next
//! `offer`. Results are the same either way; only the event count differs.
//!
//! A packet reaching an idle drop-tail direction (nothing in service, so nothing waiting)
//! starts service at once instead of passing through the queue: the same admission rule,
//! counts and order, without touching the queue's buffer.

use crate::delivery_trace::{Deliveries, DeliveryTrace};
use crate::fifo::Fifo;
use crate::loss::{self, LossModel};
use crate::packet::DropCause;
use crate::packet::{Head, PacketId, PacketPool};
use crate::queue::drop_tail::DropTail;
use crate::queue::{self, Admission, Occupancy, Queue, Queued};
use crate::rng::Rng;
use crate::scenario::{Buffer, LinkChange, QueueSpec};
use std::collections::VecDeque;
use tcplab_core::{Dur, Time};

/// Counts over the run, whatever is traced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Serializations completed (including packets then lost on the wire).
    pub packets_sent: u64,
    pub bytes_sent: u64,
    /// Drops by cause, indexed by `DropCause as usize`.
    pub drops: [u64; 5],
    /// Time the serializer was busy.
    pub busy: Dur,
    /// Packets marked Congestion Experienced by the discipline (not drops).
    pub ecn_marks: u64,
}

/// Events the caller must schedule after a link operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wakeups {
    /// Call `finish_service` at this time.
    pub service_done: Option<Time>,
    /// The propagation FIFO was empty: call `arrive` at this time.
    pub arrival: Option<Time>,
    /// This packet started serializing now (the pcap capture point).
    pub started: Option<PacketId>,
}

/// What happened to an offered packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    Queued,
    /// Queued with Congestion Experienced set.
    Marked,
    /// Not queued; the caller frees the packet and records the cause.
    Dropped(DropCause),
}

/// A link direction's queue discipline. Drop-tail, the common case, is called directly (the
/// compiler can inline it into the per-packet path); any other discipline through
/// [`Queue`]. Both behave the same: this only saves an indirect call per packet.
pub enum Discipline {
    DropTail(DropTail),
    Other(Box<dyn Queue>),
}

impl Discipline {
    /// The discipline `spec` with capacity `buffer` on a link of `rate` bit/s, `rng` its
    /// random stream (see [`queue::build`]).
    pub fn build(spec: &QueueSpec, buffer: Buffer, rate: u64, rng: Rng) -> Self {
        match spec {
            QueueSpec::DropTail => Discipline::DropTail(DropTail::new(buffer)),
            _ => Discipline::Other(queue::build(spec, buffer, rate, rng)),
        }
    }

    /// The trait object, for what is not on the per-packet path.
    fn as_dyn(&self) -> &dyn Queue {
        match self {
            Discipline::DropTail(q) => q,
            Discipline::Other(q) => q.as_ref(),
        }
    }

    fn as_dyn_mut(&mut self) -> &mut dyn Queue {
        match self {
            Discipline::DropTail(q) => q,
            Discipline::Other(q) => q.as_mut(),
        }
    }

    #[inline]
    fn enqueue(&mut self, now: Time, pkt: Queued, held: Occupancy) -> Admission {
        match self {
            Discipline::DropTail(q) => q.enqueue(now, pkt, held),
            Discipline::Other(q) => q.enqueue(now, pkt, held),
        }
    }

    #[inline]
    fn dequeue(&mut self, now: Time) -> Option<Queued> {
        match self {
            Discipline::DropTail(q) => q.dequeue(now),
            Discipline::Other(q) => q.dequeue(now),
        }
    }
}

impl From<Box<dyn Queue>> for Discipline {
    fn from(q: Box<dyn Queue>) -> Self {
        Discipline::Other(q)
    }
}

/// The packet being serialized.
#[derive(Clone, Copy, Debug)]
struct Service {
    q: Queued,
    start: Time,
    done: Time,
    /// Lost on the wire when serialization ends (then it is not on the wire FIFO).
    lost: bool,
}

pub struct Link {
    pub from: u32,
    pub to: u32,
    pub rate: u64,
    pub delay: Dur,
    queue: Discipline,
    loss: Option<Box<dyn LossModel>>,
    in_service: Option<Service>,
    /// A `ServiceDone` event is scheduled for the packet in service.
    service_event: bool,
    /// Schedule `ServiceDone` for every packet (exact departure times for queue series).
    every_departure: bool,
    /// Waiting + in service (until retired).
    held: Occupancy,
    /// Propagating packets with their arrival times, oldest first.
    wire: Fifo<(Time, PacketId)>,
    /// The latest serialization time computed: (rate, size, time). Links carry few distinct
    /// sizes in a row (full segments one way, ACKs the other), and this saves a division.
    last_transmission: (u64, u32, Dur),
    stats: LinkStats,
    /// Trace-driven capacity instead of `rate` (None: serialized at `rate`).
    trace: Option<Box<Traced>>,
}

/// A trace-driven direction's state: the trace, where the link stands in it, and the arrival
/// times of the packets waiting (an opportunity serves only packets that arrived before it;
/// the disciplines are FIFO and drop only on arrival, so these stay in step with the queue).
struct Traced {
    trace: DeliveryTrace,
    at: Deliveries,
    arrivals: VecDeque<Time>,
}

impl Link {
    pub fn new(
        from: u32,
        to: u32,
        rate: u64,
        delay: Dur,
        queue: impl Into<Discipline>,
        loss: Option<Box<dyn LossModel>>,
    ) -> Self {
        Link {
            from,
            to,
            rate,
            delay,
            queue: queue.into(),
            loss,
            in_service: None,
            service_event: false,
            every_departure: false,
            held: Occupancy::default(),
            wire: Fifo::new(),
            last_transmission: (0, 0, Dur::ZERO),
            stats: LinkStats::default(),
            trace: None,
        }
    }

    /// Makes packets leave at the delivery opportunities of `trace` (from time 0 of the run)
    /// instead of being serialized at the rate.
    pub fn set_trace(&mut self, trace: DeliveryTrace) {
        self.last_transmission = (0, 0, Dur::ZERO);
        self.trace = Some(Box::new(Traced {
            trace,
            at: Deliveries::default(),
            arrivals: VecDeque::new(),
        }));
    }

    /// Asks for a `ServiceDone` event at every departure, so that `held` changes exactly
    /// when packets leave (for queue series recorded on change).
    pub fn set_every_departure(&mut self, on: bool) {
        self.every_departure = on;
    }

    /// Time to serialize `size` bytes.
    pub fn transmission_time(&self, size: u32) -> Dur {
        Dur::transmission(size as u64, self.rate)
    }

    /// The latest serialization time computed, when it was for `size` bytes at the current
    /// rate (never on a trace-driven direction, which leaves it at its initial (0, 0): no
    /// packet is 0 bytes long).
    #[inline(always)]
    fn cached_transmission_time(&self, size: u32) -> Option<Dur> {
        let (rate, last, d) = self.last_transmission;
        (rate == self.rate && last == size).then_some(d)
    }

    /// When a packet of `size` bytes that reached the head at `now` has left, without the
    /// cached time: serialized at the rate (the time then remembered), or at the trace's
    /// delivery opportunity that carries its last byte.
    #[inline(never)]
    fn departure(&mut self, now: Time, size: u32) -> Time {
        match &mut self.trace {
            None => {
                let d = self.transmission_time(size);
                self.last_transmission = (self.rate, size, d);
                now + d
            }
            Some(t) => {
                let arrived = t
                    .arrivals
                    .pop_front()
                    .expect("an arrival time per waiting packet");
                t.at.deliver(&t.trace, arrived, size)
            }
        }
    }

    /// What the buffer holds at `now`: waiting + the packet being serialized.
    pub fn held_at(&self, now: Time) -> Occupancy {
        let mut h = self.held;
        if let Some(s) = self.in_service {
            if s.done <= now {
                h.remove(s.q.size);
            }
        }
        h
    }

    /// Counts at `now`, including a serialization that ended but was not yet retired and
    /// the elapsed part of one in progress.
    pub fn stats_at(&self, now: Time) -> LinkStats {
        let mut st = self.stats.clone();
        if let Some(s) = self.in_service {
            if s.done <= now {
                st.packets_sent += 1;
                st.bytes_sent += s.q.size as u64;
                st.busy += s.done - s.start;
            } else {
                st.busy += now.saturating_since(s.start);
            }
        }
        st
    }

    /// A packet arrives from the node at the link's input (`head`: what the link reads of it);
    /// `drawn`: the loss model draws
    /// for it (see [`Queued::drawn`]; always in the simulator).
    #[inline]
    pub fn offer(
        &mut self,
        now: Time,
        id: PacketId,
        head: Head,
        pool: &mut PacketPool,
        wake: &mut Wakeups,
        drawn: bool,
    ) -> Offer {
        self.retire_finished(now);
        if self.in_service.is_none() && self.held.packets > 0 {
            // The packet in service ended just now with packets waiting behind it (its event
            // at `now` has not run yet): the next one starts now.
            self.start_next(now, wake);
        }
        let q = Queued {
            id,
            size: head.size,
            ect: head.ect,
            drawn,
        };
        if self.in_service.is_none() && self.trace.is_none() {
            if let Discipline::DropTail(d) = &self.queue {
                // Idle (nothing in service, so nothing waits): an admitted packet would go
                // into the queue and straight out again; it starts service here instead, and
                // the queue's buffer is not touched (with thousands of mostly idle access
                // links, that buffer is a cache miss per packet). A refused one takes the
                // queue's way below, which refuses it by the same rule.
                if d.admits(q.size, self.held) {
                    self.held.add(q.size);
                    self.start(now, q, wake);
                    return Offer::Queued;
                }
            }
        }
        let admission = self.queue.enqueue(now, q, self.held);
        match admission {
            Admission::Drop(cause) => {
                self.stats.drops[cause as usize] += 1;
                return Offer::Dropped(cause);
            }
            Admission::Mark => {
                pool.mark_ce(id);
                self.stats.ecn_marks += 1;
            }
            Admission::Accept => {}
        }
        let marked = matches!(admission, Admission::Mark);
        self.held.add(q.size);
        if let Some(t) = &mut self.trace {
            t.arrivals.push_back(now);
        }
        match self.in_service {
            None => self.start_next(now, wake),
            Some(s) if !self.service_event => {
                self.service_event = true;
                wake.service_done = Some(s.done);
            }
            Some(_) => {}
        }
        if marked {
            Offer::Marked
        } else {
            Offer::Queued
        }
    }

    /// Applies a scheduled change at once; `loss_rng` is the stream of a new loss model.
    /// Nothing already queued, in service or propagating is touched (see the module docs).
    pub fn reconfigure(&mut self, change: &LinkChange, loss_rng: Rng) {
        if let Some(rate) = change.rate {
            self.rate = rate;
        }
        if let Some(delay) = change.delay {
            self.delay = delay;
        }
        self.queue
            .as_dyn_mut()
            .set_limits(change.buffer, change.rate);
        if let Some(spec) = &change.loss {
            self.loss = loss::build(spec, loss_rng);
        }
    }

    /// The discipline's average queue, for active queue managers.
    pub fn queue_average(&self) -> Option<f64> {
        self.queue.as_dyn().average()
    }

    /// Retires the packet in service if its serialization ended by `now` (lost packets are
    /// retired by their own event, which records the drop).
    fn retire_finished(&mut self, now: Time) {
        if let Some(s) = &self.in_service {
            if !s.lost && s.done <= now {
                let s = *s;
                self.retire(s);
            }
        }
    }

    fn retire(&mut self, s: Service) {
        self.in_service = None;
        self.service_event = false;
        self.held.remove(s.q.size);
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += s.q.size as u64;
        self.stats.busy += s.done - s.start;
    }

    /// Starts serializing the next waiting packet, if any, at `now`. Always inlined: it is
    /// the per-packet path of `offer` (as a call it cost B4 about 50 instructions per
    /// transmission more).
    #[inline(always)]
    fn start_next(&mut self, now: Time, wake: &mut Wakeups) {
        if let Some(q) = self.queue.dequeue(now) {
            self.start(now, q, wake);
        }
    }

    /// Starts serializing `q` (already counted in `held`) at `now`.
    #[inline]
    fn start(&mut self, now: Time, q: Queued, wake: &mut Wakeups) {
        wake.started = Some(q.id);
        let done = match self.cached_transmission_time(q.size) {
            Some(d) => now + d,
            None => self.departure(now, q.size),
        };
        let lost = match &mut self.loss {
            Some(m) if q.drawn => m.lose(done, q.size),
            _ => false,
        };
        if !lost {
            // Not before the packet ahead (only possible after a delay decrease).
            let at = (done + self.delay).max(self.wire.back().map_or(Time::ZERO, |w| w.0));
            if self.wire.is_empty() {
                wake.arrival = Some(at);
            }
            self.wire.push_back((at, q.id));
        }
        self.in_service = Some(Service {
            q,
            start: now,
            done,
            lost,
        });
        // `held` counts the waiting packets and this one.
        self.service_event = lost || self.every_departure || self.held.packets > 1;
        if self.service_event {
            wake.service_done = Some(done);
        }
    }

    /// A `ServiceDone` event fired. Returns the packet lost on the wire, if the one whose
    /// serialization ended was (the caller frees it and records the drop).
    #[inline]
    pub fn finish_service(&mut self, now: Time, wake: &mut Wakeups) -> Option<PacketId> {
        let s = self.in_service?;
        if s.done != now {
            return None; // retired early by an offer at this instant; this one is newer
        }
        self.retire(s);
        let lost = s.lost.then(|| {
            self.stats.drops[DropCause::LinkError as usize] += 1;
            s.q.id
        });
        self.start_next(now, wake);
        lost
    }

    /// The packet at the head of the propagation FIFO reaches the far node. Returns it and,
    /// when another packet follows, the time it arrives (call `arrive` again then).
    pub fn arrive(&mut self, now: Time) -> (PacketId, Option<Time>) {
        let (at, id) = self
            .wire
            .pop_front()
            .expect("a propagating packet when one is due");
        debug_assert_eq!(at, now, "arrival event at the head packet's time");
        (id, self.wire.front().map(|&(t, _)| t))
    }

    /// Every packet the link holds: waiting, being serialized (if lost: the others are
    /// already on the wire), propagating.
    pub fn for_each_packet(&self, mut f: impl FnMut(PacketId)) {
        self.queue.as_dyn().for_each(&mut |q| f(q.id));
        if let Some(s) = self.in_service {
            if s.lost {
                f(s.q.id);
            }
        }
        for (_, id) in self.wire.iter() {
            f(id);
        }
    }
}
