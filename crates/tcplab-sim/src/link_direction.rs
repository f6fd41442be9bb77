//! One link direction on its own, outside the simulation engine: the same [`Link`] (queue
//! discipline, serializer, loss model, delivery trace, scheduled changes) that the simulator
//! drives, driven by a caller that owns the clock and the packets. This is what the live
//! emulator (`tcplab-live`) runs on real packets: it is not a second implementation of the
//! models, only a sans-IO driver of the simulator's own link.
//!
//! The caller passes time in. [`LinkDirection::enqueue`] offers a packet at `now`;
//! [`LinkDirection::poll`] returns what the model did up to `now` (a packet leaving the far
//! end of the link at its modelled time, or a packet lost on the wire at the end of its
//! serialization); [`LinkDirection::next_event`] says when to poll next. Events are
//! processed at their modelled times, never at the caller's (late) `now`, so lateness of the
//! caller does not change the model's decisions, only when they are acted on.
//!
//! Random streams are labelled as in [`crate::network::Network`] (`"queue/{label}"`,
//! `"loss/{label}"`, `"loss/{label}/change{k}"`), so a direction labelled `"l0/forward"`
//! with the run's seed draws what the simulator's link `l0` draws forward.

use crate::delivery_trace::{DeliveryTrace, TraceError};
use crate::link::{Discipline, Link, LinkStats, Offer, Wakeups};
use crate::loss;
use crate::packet::{DropCause, Packet, PacketId, PacketPool, Payload};
use crate::rng::Rng;
use crate::scenario::{LinkChange, LinkDir};
use std::collections::VecDeque;
use tcplab_core::segment::DataSegment;
use tcplab_core::seq::Seq;
use tcplab_core::Time;

/// What the link did with a packet, at the model's time `at`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event<T> {
    /// The packet reaches the far end of the link (after queueing, serialization and
    /// propagation); `ce`: the discipline marked it Congestion Experienced (only packets
    /// offered as ECN-capable are marked).
    Deliver { at: Time, pkt: T, ce: bool },
    /// The packet was lost on the wire (loss model, cause `link_error`) when its
    /// serialization ended.
    Lost { at: Time, cause: DropCause, pkt: T },
}

/// Caller packets of type `T` held by a model that carries [`PacketId`]s: the model's pool
/// and the caller's packet per pool slot (shared with [`crate::wlan_segment`]).
pub(crate) struct Held<T> {
    pub(crate) pool: PacketPool,
    held: Vec<Option<T>>,
}

impl<T> Held<T> {
    pub(crate) fn new() -> Self {
        Held {
            pool: PacketPool::new(),
            held: Vec::new(),
        }
    }

    /// Keeps `pkt` for the model's packet `id` (in the pool).
    pub(crate) fn keep(&mut self, id: PacketId, pkt: T) {
        let i = id.index();
        if self.held.len() <= i {
            self.held.resize_with(i + 1, || None);
        }
        self.held[i] = Some(pkt);
    }

    /// The caller's packet of `id`, which leaves the pool.
    pub(crate) fn take(&mut self, id: PacketId) -> T {
        self.pool.release(id);
        self.held[id.index()]
            .take()
            .expect("a caller packet per live slot")
    }
}

/// A link direction holding caller packets of type `T`.
pub struct LinkDirection<T> {
    link: Link,
    /// The caller's packets, each with whether it was marked CE.
    held: Held<(T, bool)>,
    service_done: Option<Time>,
    arrival: Option<Time>,
    /// Scheduled changes not yet applied, earliest first.
    changes: VecDeque<(Time, LinkChange, Rng)>,
    out: VecDeque<Event<T>>,
    offered: u64,
}

impl<T> LinkDirection<T> {
    /// The direction `spec` with the streams of `seed` and `label` (see the module docs);
    /// time 0 is the start of the run (scheduled changes and delivery traces count from it).
    pub fn new(spec: &LinkDir, seed: u64, label: &str) -> Result<Self, TraceError> {
        let q = Discipline::build(
            &spec.queue,
            spec.buffer,
            spec.rate,
            Rng::stream(seed, &format!("queue/{label}")),
        );
        let m = loss::build(&spec.loss, Rng::stream(seed, &format!("loss/{label}")));
        let mut link = Link::new(0, 1, spec.rate, spec.delay, q, m);
        if let Some(t) = &spec.trace {
            link.set_trace(DeliveryTrace::from_ms(t.ms.clone())?);
        }
        let changes = spec
            .schedule
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let rng = Rng::stream(seed, &format!("loss/{label}/change{k}"));
                (Time::ZERO + c.at, c.clone(), rng)
            })
            .collect();
        Ok(LinkDirection {
            link,
            held: Held::new(),
            service_done: None,
            arrival: None,
            changes,
            out: VecDeque::new(),
            offered: 0,
        })
    }

    /// Offers `pkt` of `size` wire bytes at `now` (not before any earlier call's `now`);
    /// `ect`: the packet is ECN-capable (a discipline with ECN may mark it instead of
    /// dropping it). Events due by `now` are processed first. A packet the queue refuses
    /// comes back with the cause.
    pub fn enqueue(
        &mut self,
        now: Time,
        size: u32,
        ect: bool,
        pkt: T,
    ) -> Result<(), (DropCause, T)> {
        self.offer(now, size, ect, true, pkt)
    }

    /// Offers `pkt` as [`LinkDirection::enqueue`] does, for a packet the simulation has no
    /// counterpart of (a real TCP connection's handshake or teardown): it is queued and
    /// serialized like any other, but the loss model does not draw for it, so that the packets
    /// both runs have meet the same draws of the loss stream.
    pub fn enqueue_unmodelled(
        &mut self,
        now: Time,
        size: u32,
        pkt: T,
    ) -> Result<(), (DropCause, T)> {
        self.offer(now, size, false, false, pkt)
    }

    fn offer(
        &mut self,
        now: Time,
        size: u32,
        ect: bool,
        drawn: bool,
        pkt: T,
    ) -> Result<(), (DropCause, T)> {
        self.advance(now);
        // The link reads ECN capability from a data segment's flag; nothing else of the
        // payload matters to it.
        let payload = if ect {
            Payload::Data(DataSegment {
                seq: Seq(self.offered),
                len: 0,
                ts_val: None,
                ts_ecr: None,
                retransmission: 0,
                ect: true,
                ce: false,
                cwr: false,
            })
        } else {
            Payload::Udp(self.offered)
        };
        let id = self.held.pool.insert(Packet {
            flow: 0,
            dst: 1,
            size,
            sent_at: now,
            payload,
        });
        self.offered += 1;
        let mut wake = Wakeups::default();
        match self.link.offer(
            now,
            id,
            self.held.pool.head(id),
            &mut self.held.pool,
            &mut wake,
            drawn,
        ) {
            Offer::Dropped(cause) => {
                self.held.pool.release(id);
                Err((cause, pkt))
            }
            offer @ (Offer::Queued | Offer::Marked) => {
                self.held.keep(id, (pkt, offer == Offer::Marked));
                self.wake(wake);
                Ok(())
            }
        }
    }

    /// The next event due by `now`, in model time order.
    pub fn poll(&mut self, now: Time) -> Option<Event<T>> {
        self.advance(now);
        self.out.pop_front()
    }

    /// When the model next has something to do (None: idle, nothing held).
    pub fn next_event(&self) -> Option<Time> {
        if !self.out.is_empty() {
            return Some(Time::ZERO);
        }
        [
            self.service_done,
            self.arrival,
            self.changes.front().map(|c| c.0),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The link's counts at `now`.
    pub fn stats_at(&self, now: Time) -> LinkStats {
        self.link.stats_at(now)
    }

    /// The link model itself (its rate and delay as last changed, its counts).
    pub fn link(&self) -> &Link {
        &self.link
    }

    /// What the buffer holds at `now`: waiting + the packet being serialized (what the
    /// simulator's `queues` table records, [`crate::instruments::Fact::QueueState`]).
    pub fn held_at(&self, now: Time) -> crate::queue::Occupancy {
        self.link.held_at(now)
    }

    /// Packets held (queued, in service or propagating).
    pub fn held_packets(&self) -> usize {
        self.held.pool.live()
    }

    fn wake(&mut self, w: Wakeups) {
        if let Some(t) = w.service_done {
            self.service_done = Some(t);
        }
        if let Some(t) = w.arrival {
            self.arrival = Some(t);
        }
    }

    /// Processes every event due by `now` at its own time, earliest first (at equal times:
    /// scheduled change, then end of service, then arrival).
    fn advance(&mut self, now: Time) {
        loop {
            let change = self.changes.front().map(|c| c.0);
            let Some(t) = [change, self.service_done, self.arrival]
                .into_iter()
                .flatten()
                .min()
            else {
                return;
            };
            if t > now {
                return;
            }
            if change == Some(t) {
                let (_, c, rng) = self.changes.pop_front().expect("a due change");
                self.link.reconfigure(&c, rng);
            } else if self.service_done == Some(t) {
                self.service_done = None;
                let mut wake = Wakeups::default();
                if let Some(id) = self.link.finish_service(t, &mut wake) {
                    let (pkt, _) = self.held.take(id);
                    self.out.push_back(Event::Lost {
                        at: t,
                        cause: DropCause::LinkError,
                        pkt,
                    });
                }
                self.wake(wake);
            } else {
                let (id, next) = self.link.arrive(t);
                self.arrival = next;
                let (pkt, ce) = self.held.take(id);
                self.out.push_back(Event::Deliver { at: t, pkt, ce });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Buffer, LossSpec, QueueSpec};
    use tcplab_core::Dur;

    fn dir(buffer: u32, loss: LossSpec) -> LinkDir {
        LinkDir {
            rate: 8_000_000, // 1 byte per µs
            delay: Dur::from_millis(10),
            buffer: Buffer::Packets(buffer),
            queue: QueueSpec::DropTail,
            loss,
            report_losses: false,
            report_delay: Dur::ZERO,
            schedule: vec![],
            trace: None,
        }
    }

    /// RED (thresholds 5 and 15 packets, fast average) on a 50-packet buffer.
    fn red(ecn: bool) -> LinkDir {
        let mut spec = dir(50, LossSpec::None);
        spec.queue = QueueSpec::Red(crate::scenario::RedSpec {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            w_q: 0.2,
            gentle: false,
            wait: true,
            mode: crate::scenario::RedMode::Packets,
            ecn,
            mean_packet_size: 1000,
        });
        spec
    }

    fn drain(d: &mut LinkDirection<u32>) -> Vec<Event<u32>> {
        let mut v = vec![];
        while let Some(t) = d.next_event() {
            v.extend(std::iter::from_fn(|| d.poll(t)));
        }
        v
    }

    #[test]
    fn a_burst_is_serialized_delayed_and_cut_at_the_buffer() {
        let mut d = LinkDirection::new(&dir(3, LossSpec::None), 1, "l0/forward").unwrap();
        let mut refused = vec![];
        for i in 0..5u32 {
            if let Err((c, p)) = d.enqueue(Time::ZERO, 1000, false, i) {
                refused.push((c, p));
            }
        }
        // The buffer counts the packet in service: 3 held, 2 refused.
        assert_eq!(
            refused,
            [
                (DropCause::BufferOverflow, 3),
                (DropCause::BufferOverflow, 4)
            ]
        );
        let ev = drain(&mut d);
        let ms = |m: u64| Time::ZERO + Dur::from_millis(m);
        assert_eq!(
            ev,
            [
                Event::Deliver {
                    at: ms(11),
                    pkt: 0,
                    ce: false
                },
                Event::Deliver {
                    at: ms(12),
                    pkt: 1,
                    ce: false
                },
                Event::Deliver {
                    at: ms(13),
                    pkt: 2,
                    ce: false
                },
            ]
        );
        assert_eq!(d.next_event(), None);
        assert_eq!(d.held_packets(), 0);
        assert_eq!(d.stats_at(ms(20)).packets_sent, 3);
    }

    #[test]
    fn late_polling_does_not_change_the_model() {
        // Polling only at the end gives the same events as polling at every event time.
        let spec = dir(50, LossSpec::Bernoulli { p: 0.3 });
        let mut a = LinkDirection::new(&spec, 7, "x").unwrap();
        let mut b = LinkDirection::new(&spec, 7, "x").unwrap();
        let mut ea = vec![];
        for i in 0..200u32 {
            let now = Time::ZERO + Dur::from_micros(900 * i as u64);
            while let Some(t) = a.next_event().filter(|&t| t <= now) {
                ea.extend(std::iter::from_fn(|| a.poll(t)));
            }
            a.enqueue(now, 1000, false, i).unwrap();
            b.enqueue(now, 1000, false, i).unwrap();
        }
        ea.extend(drain(&mut a));
        let eb = drain(&mut b);
        assert_eq!(ea, eb);
        let lost = ea
            .iter()
            .filter(|e| matches!(e, Event::Lost { .. }))
            .count();
        assert!(lost > 30 && lost < 90, "{lost} lost of 200 at p = 0.3");
    }

    /// The packets `d` lost on the wire (cause `link_error`), in order.
    fn lost(d: &mut LinkDirection<u32>) -> Vec<u32> {
        drain(d)
            .into_iter()
            .filter_map(|e| match e {
                Event::Lost { pkt, cause, .. } => {
                    assert_eq!(cause, DropCause::LinkError);
                    Some(pkt)
                }
                Event::Deliver { .. } => None,
            })
            .collect()
    }

    fn trace_loss(packets: Vec<u64>) -> LinkDir {
        dir(10, LossSpec::Trace { packets })
    }

    #[test]
    fn a_loss_trace_loses_the_listed_indices() {
        let mut d = LinkDirection::new(&trace_loss(vec![1, 4]), 1, "x").unwrap();
        for i in 0..6u32 {
            d.enqueue(Time::ZERO + Dur::from_millis(2 * i as u64), 100, false, i)
                .unwrap();
        }
        assert_eq!(lost(&mut d), [1, 4]);
    }

    #[test]
    fn an_unmodelled_packet_takes_no_draw_of_the_loss_stream() {
        // Trace loss [1, 4]: the second and fifth packets the model draws for. Two
        // unmodelled packets first (a handshake) leave the draws to the modelled ones.
        let mut d = LinkDirection::new(&trace_loss(vec![1, 4]), 1, "x").unwrap();
        let at = |i: u32| Time::ZERO + Dur::from_millis(2 * i as u64);
        d.enqueue_unmodelled(at(0), 60, 100).unwrap();
        d.enqueue_unmodelled(at(1), 60, 101).unwrap();
        for i in 0..6u32 {
            d.enqueue(at(2 + i), 100, false, i).unwrap();
        }
        assert_eq!(lost(&mut d), [1, 4]);
    }

    #[test]
    fn red_drops_early_before_the_buffer_is_full() {
        let spec = red(false);
        let mut d = LinkDirection::new(&spec, 1, "x").unwrap();
        let causes: Vec<DropCause> = (0..40u32)
            .filter_map(|i| d.enqueue(Time::ZERO, 1000, false, i).err().map(|e| e.0))
            .collect();
        assert!(causes.contains(&DropCause::AqmEarly) || causes.contains(&DropCause::AqmForced));
        assert!(!causes.contains(&DropCause::BufferOverflow));
        let delivered = drain(&mut d).len();
        assert_eq!(delivered + causes.len(), 40);
        assert!(delivered < 40, "RED let all 40 in below a 50-packet buffer");
    }

    #[test]
    fn red_with_ecn_marks_capable_packets_instead_of_dropping_them_early() {
        let spec = red(true);
        let mut d = LinkDirection::new(&spec, 1, "x").unwrap();
        // Arrivals 10 % faster than service: the queue grows through RED's thresholds.
        let causes: Vec<DropCause> = (0..300u32)
            .filter_map(|i| {
                let now = Time::ZERO + Dur::from_micros(900 * i as u64);
                d.enqueue(now, 1000, true, i).err().map(|e| e.0)
            })
            .collect();
        assert!(!causes.contains(&DropCause::AqmEarly));
        let marked = drain(&mut d)
            .iter()
            .filter(|e| matches!(e, Event::Deliver { ce: true, .. }))
            .count() as u64;
        assert!(marked > 0);
        assert_eq!(marked, d.stats_at(Time::MAX).ecn_marks);
    }
}
