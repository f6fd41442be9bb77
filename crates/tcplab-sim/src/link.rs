//! One direction of a link: a queue feeding a serializer at the link rate, then a fixed
//! propagation delay (a Dummynet pipe).
//!
//! - A packet offered to the link goes through the queue discipline, which admits or drops
//!   it. The buffer counts the packet being serialized (Dummynet semantics).
//! - The serializer takes one packet at a time; serializing `size` bytes takes
//!   `ceil(size * 8 / rate)` ns.
//! - When serialization ends, the link's loss model is asked whether the packet is lost on
//!   the wire (cause `link_error`): a lost packet has used the link (it counts in packets and
//!   bytes sent and in utilization) but does not propagate.
//! - Surviving packets propagate for `delay` and arrive at the far node in order. Arrival
//!   times never decrease, so the packets propagating sit in a FIFO and the driver keeps one
//!   event per link for the head of it, not one per packet.
//!
//! The link does not schedule events itself; its methods return the times at which the
//! driver must call back (`finish_service`, `arrive`).

use crate::loss::LossModel;
use crate::packet::{PacketId, PacketPool, Payload};
use crate::queue::{Admission, Occupancy, Queue, Queued};
use crate::results::DropCause;
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
    /// Time the serializer was busy with completed serializations.
    pub busy: Dur,
}

/// What happened to an offered packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Queued. `service_done` is set when the serializer was idle and took it at once: the
    /// driver must call `finish_service` then.
    Queued { service_done: Option<Time> },
    /// Not queued; the caller frees the packet and records the cause.
    Dropped(DropCause),
}

/// The end of one serialization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Served {
    pub packet: PacketId,
    /// Lost on the wire (cause `link_error`): the caller frees it and records the drop.
    pub lost: bool,
    /// The propagation FIFO was empty: the driver must call `arrive` at this time.
    pub arrival: Option<Time>,
    /// The serializer took the next packet: call `finish_service` at this time.
    pub next_service_done: Option<Time>,
}

pub struct Link {
    pub from: u32,
    pub to: u32,
    pub rate: u64,
    pub delay: Dur,
    queue: Box<dyn Queue>,
    loss: Option<Box<dyn LossModel>>,
    /// The packet being serialized and when its serialization started.
    in_service: Option<(Queued, Time)>,
    /// Waiting + in service.
    held: Occupancy,
    /// Propagating packets with their arrival times, oldest first.
    wire: VecDeque<(Time, PacketId)>,
    pub stats: LinkStats,
}

impl Link {
    pub fn new(
        from: u32,
        to: u32,
        rate: u64,
        delay: Dur,
        queue: Box<dyn Queue>,
        loss: Option<Box<dyn LossModel>>,
    ) -> Self {
        Link {
            from,
            to,
            rate,
            delay,
            queue,
            loss,
            in_service: None,
            held: Occupancy::default(),
            wire: VecDeque::new(),
            stats: LinkStats::default(),
        }
    }

    /// What the link holds in its buffer: waiting + being serialized.
    pub fn held(&self) -> Occupancy {
        self.held
    }

    /// Time to serialize `size` bytes.
    pub fn transmission_time(&self, size: u32) -> Dur {
        Dur::transmission(size as u64, self.rate)
    }

    /// A packet arrives from the node at the link's input.
    pub fn offer(&mut self, now: Time, id: PacketId, pool: &mut PacketPool) -> Offer {
        let pkt = pool.get_mut(id);
        let ect = matches!(&pkt.payload, Payload::Data(d) if d.ect);
        let q = Queued {
            id,
            size: pkt.size,
            ect,
        };
        match self.queue.enqueue(now, q, self.held) {
            Admission::Drop(cause) => {
                self.stats.drops[cause as usize] += 1;
                return Offer::Dropped(cause);
            }
            Admission::Mark => {
                if let Payload::Data(d) = &mut pkt.payload {
                    d.ce = true;
                }
            }
            Admission::Accept => {}
        }
        self.held.add(q.size);
        let service_done = if self.in_service.is_none() {
            self.start_service(now)
        } else {
            None
        };
        Offer::Queued { service_done }
    }

    fn start_service(&mut self, now: Time) -> Option<Time> {
        let q = self.queue.dequeue(now)?;
        self.in_service = Some((q, now));
        Some(now + self.transmission_time(q.size))
    }

    /// The serializer finished the packet in service (call at the time `offer` or the
    /// previous `finish_service` gave).
    pub fn finish_service(&mut self, now: Time) -> Served {
        let (q, started) = self
            .in_service
            .take()
            .expect("a packet in service when its serialization ends");
        self.held.remove(q.size);
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += q.size as u64;
        self.stats.busy += now - started;
        let lost = match &mut self.loss {
            Some(m) => m.lose(now, q.size),
            None => false,
        };
        let mut arrival = None;
        if lost {
            self.stats.drops[DropCause::LinkError as usize] += 1;
        } else {
            let at = now + self.delay;
            if self.wire.is_empty() {
                arrival = Some(at);
            }
            self.wire.push_back((at, q.id));
        }
        Served {
            packet: q.id,
            lost,
            arrival,
            next_service_done: self.start_service(now),
        }
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

    /// Time the serializer was busy up to `now`, counting a serialization in progress.
    pub fn busy_until(&self, now: Time) -> Dur {
        let partial = self
            .in_service
            .map_or(Dur::ZERO, |(_, started)| now.saturating_since(started));
        self.stats.busy + partial
    }

    /// Every packet the link holds: waiting, in service, propagating.
    pub fn for_each_packet(&self, mut f: impl FnMut(PacketId)) {
        self.queue.for_each(&mut |q| f(q.id));
        if let Some((q, _)) = self.in_service {
            f(q.id);
        }
        for &(_, id) in &self.wire {
            f(id);
        }
    }
}
