//! One 802.11b WLAN segment on its own, outside the simulation engine: the simulator's own
//! [`Wlan`] (DCF contention, channel, retries, MAC queues) driven by a caller that owns the
//! clock and the packets, as [`crate::link_direction::LinkDirection`] does for a wired link
//! direction. It is what a live emulator would run for a WLAN hop: a sans-IO driver, not a
//! second implementation of the MAC.
//!
//! Hops are the segment's local hops: `2j` is `AP -> station j`, `2j + 1` is
//! `station j -> AP` (station j is the j-th entry of the spec's `stations`), numbered as in
//! the simulator (see [`crate::wlan`]).
//!
//! The caller passes time in. [`WlanSegment::offer`] queues a packet on a hop at `now` (a
//! full MAC queue refuses it: `buffer_overflow`); [`WlanSegment::poll`] returns what the
//! medium did up to `now` (a packet reaching the far end of its hop at the end of its
//! DATA + SIFS + ACK exchange, or a packet the MAC dropped after its retry limit, cause
//! `mac`); [`WlanSegment::next_event`] says when to poll next. Wake-ups are processed at
//! their modelled times, never at the caller's (late) `now`, so lateness of the caller does
//! not change the model's decisions. The wake-ups are kept as the engine keeps the
//! segment's `NetEvent::Wlan` events (every time the segment asks for one), stale ones
//! included, so the segment sees the very calls it sees in the simulator. At equal times an
//! offer comes after the wake-ups due by then.
//!
//! Random streams are the simulator's (`"wlan/{name}/backoff"`, `"wlan/{name}/channel"` from
//! the run's seed), so a seed draws the same backoffs and channel for the same sequence of
//! offers as the simulated segment does.

use crate::link_direction::Held;
use crate::packet::{DropCause, Packet, Payload};
use crate::wlan::spec::WlanSpec;
use crate::wlan::{HopEvent, HopStats, Wlan};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use tcplab_core::Time;

/// What the segment did with a packet of hop `hop`, at the model's time `at`.
#[derive(Clone, Debug, PartialEq)]
pub enum Event<T> {
    /// The packet reached the far end of its hop (its frame was acknowledged).
    Deliver { at: Time, hop: u32, pkt: T },
    /// The MAC gave up on the packet after its retry limit (cause `mac`); `rssi`: received
    /// power of the last attempt (dBm); `channel`: the last attempt was lost below the
    /// receive threshold (a channel loss), not in a collision.
    Dropped {
        at: Time,
        hop: u32,
        cause: DropCause,
        rssi: f64,
        channel: bool,
        pkt: T,
    },
}

/// A WLAN segment holding caller packets of type `T`.
pub struct WlanSegment<T> {
    wlan: Wlan,
    /// The caller's packets by the identities the MAC queues carry (the payload is not read).
    held: Held<T>,
    /// Wake-ups asked for, earliest first (stale ones are ignored by the segment).
    wakes: BinaryHeap<Reverse<Time>>,
    out: VecDeque<Event<T>>,
    events: Vec<HopEvent>,
    offered: u64,
}

impl<T> WlanSegment<T> {
    /// The segment `spec` (a validated one: every station placed) with the streams of
    /// `seed`; time 0 is the start of the run.
    pub fn new(spec: &WlanSpec, seed: u64) -> Self {
        // Node ids only name the ends of hops for the network; the driver speaks in hops.
        let stations = (1..=spec.stations.len() as u32).collect();
        WlanSegment {
            wlan: Wlan::new(spec, 0, stations, seed),
            held: Held::new(),
            wakes: BinaryHeap::new(),
            out: VecDeque::new(),
            events: Vec::new(),
            offered: 0,
        }
    }

    /// Number of hops (two per station).
    pub fn hop_count(&self) -> usize {
        self.wlan.hop_count()
    }

    /// Offers `pkt` of `size` IP bytes on hop `hop` (below [`hop_count`](Self::hop_count))
    /// at `now` (not before any earlier call's `now`). Wake-ups due by `now` are processed
    /// first. A packet the transmitter's full queue refuses comes back with the cause.
    pub fn offer(&mut self, now: Time, hop: u32, size: u32, pkt: T) -> Result<(), (DropCause, T)> {
        assert!((hop as usize) < self.hop_count(), "hop {hop} out of range");
        self.advance(now);
        let id = self.held.pool.insert(Packet {
            flow: 0,
            dst: 0,
            size,
            sent_at: now,
            payload: Payload::Udp(self.offered),
        });
        self.offered += 1;
        let offered = self.wlan.offer(now, hop, id, size);
        self.rearm();
        match offered {
            Err(cause) => {
                self.held.pool.release(id);
                Err((cause, pkt))
            }
            Ok(()) => {
                self.held.keep(id, pkt);
                Ok(())
            }
        }
    }

    /// The next event due by `now`, in model time order.
    pub fn poll(&mut self, now: Time) -> Option<Event<T>> {
        self.advance(now);
        self.out.pop_front()
    }

    /// When the segment next has something to do (None: nothing pending).
    pub fn next_event(&self) -> Option<Time> {
        if !self.out.is_empty() {
            return Some(Time::ZERO);
        }
        self.wakes.peek().map(|r| r.0)
    }

    /// Counts of hop `hop` so far (delivered packets and bytes, drops by cause).
    pub fn hop_stats(&self, hop: u32) -> &HopStats {
        &self.wlan.hops[hop as usize]
    }

    /// The segment's MAC and medium (its rate, the time the medium was busy).
    pub fn wlan(&self) -> &Wlan {
        &self.wlan
    }

    /// Packets held in the MAC queues (including the one on the air).
    pub fn held_packets(&self) -> usize {
        self.held.pool.live()
    }

    fn rearm(&mut self) {
        if let Some(t) = self.wlan.rearm() {
            self.wakes.push(Reverse(t));
        }
    }

    /// Processes every wake-up due by `now` at its own time, earliest first.
    fn advance(&mut self, now: Time) {
        while let Some(&Reverse(t)) = self.wakes.peek() {
            if t > now {
                return;
            }
            self.wakes.pop();
            let mut events = std::mem::take(&mut self.events);
            self.wlan.wake(t, &mut events);
            self.rearm();
            for ev in events.drain(..) {
                let e = match ev {
                    HopEvent::Arrived { hop, id } => Event::Deliver {
                        at: t,
                        hop,
                        pkt: self.held.take(id),
                    },
                    HopEvent::MacDrop {
                        hop,
                        id,
                        rssi,
                        channel,
                    } => Event::Dropped {
                        at: t,
                        hop,
                        cause: DropCause::Mac,
                        rssi,
                        channel,
                        pkt: self.held.take(id),
                    },
                };
                self.out.push_back(e);
            }
            self.events = events;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::explicit;
    use crate::engine::EventQueue;
    use crate::flow_route::PinnedRoutes;
    use crate::instruments::Fact;
    use crate::network::{NetEvent, Network};
    use crate::rng::Rng;
    use crate::scenario::{
        Buffer, ChannelPreset, Duplex, LinkDir, NodeKind, StationSpec, Topology, TraceSpec,
    };
    use crate::topology;
    use crate::trace::Recorder;
    use tcplab_core::Dur;

    /// Router `ap` (with a wired link to host `server`, unused here) and three stations:
    /// two close to the AP, one placed by the HL preset (residual loss 1e-2 after retries).
    fn spec() -> WlanSpec {
        WlanSpec::new(
            "wlan0",
            "ap",
            vec![
                StationSpec::at("sta0", 10.0),
                StationSpec::at("sta1", 20.0),
                StationSpec::preset("sta2", ChannelPreset::HL),
            ],
        )
    }

    fn topo() -> Topology {
        let wire = Duplex::symmetric(LinkDir::new(
            100_000_000,
            Dur::from_micros(100),
            Buffer::Packets(1000),
        ));
        let mut t = explicit(
            &[
                ("server", NodeKind::Host),
                ("ap", NodeKind::Router),
                ("sta0", NodeKind::Host),
                ("sta1", NodeKind::Host),
                ("sta2", NodeKind::Host),
            ],
            vec![("server", "ap", wire)],
        );
        if let Topology::Explicit(e) = &mut t {
            e.wlan.push(spec());
        }
        t
    }

    /// Scripted arrivals `(time, hop, size)`: bursts and gaps on every hop, enough to make
    /// frames collide, queues overflow and the far station's frames exhaust their retries.
    fn script(n: usize) -> Vec<(Time, u32, u32)> {
        let mut r = Rng::from_seed(99);
        let mut t = Time::ZERO;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            // Mean gap 1.2 ms (about the medium's capacity), with bursts; odd
            // nanoseconds keep offers off the segment's wake-up times.
            let gap = if r.chance(0.2) {
                0
            } else {
                r.next_u64() % 3_000_000
            };
            t += Dur::from_nanos(gap + 1 + r.next_u64() % 997);
            let hop = (r.next_u64() % 6) as u32;
            let size = [40, 576, 1500][(r.next_u64() % 3) as usize];
            v.push((t, hop, size));
        }
        v
    }

    /// (time, hop, packet number, drop cause or None for a delivery), in event order.
    type Outcome = Vec<(Time, u32, u64, Option<DropCause>)>;

    #[derive(Clone, Copy)]
    enum Ev {
        Net(NetEvent),
        Send(usize),
    }
    impl From<NetEvent> for Ev {
        fn from(e: NetEvent) -> Self {
            Ev::Net(e)
        }
    }

    /// The simulator's network: each scripted packet is handed to the transmitting end of
    /// its hop (the AP or a station) addressed to the other end.
    fn simulated(seed: u64, sends: &[(Time, u32, u32)]) -> Outcome {
        let t = topo();
        let mut errs = vec![];
        let layout = topology::expand(&t, &mut errs);
        assert!(errs.is_empty(), "{errs:?}");
        let mut net = Network::new(&layout, seed);
        let first_hop = net.links.len() as u32;
        // Routes reach hosts only: UDP flow h is pinned to hop h, so a packet can be
        // addressed to the AP (a router) too.
        let pins = (0..6).map(|h| Some(vec![first_hop + h])).collect();
        net.pinned = PinnedRoutes::new(&layout, vec![], pins);
        let mut rec = Recorder::new(&TraceSpec::all(), 0);
        let mut q = EventQueue::new();
        for (i, &(at, _, _)) in sends.iter().enumerate() {
            q.push(at, Ev::Send(i));
        }
        let mut out = vec![];
        while let Some((now, ev)) = q.pop() {
            match ev {
                Ev::Send(i) => {
                    let (_, hop, size) = sends[i];
                    let (from, to) = net.wlans[0].hop_nodes(hop);
                    let p = Packet {
                        flow: hop,
                        dst: to,
                        size,
                        sent_at: now,
                        payload: Payload::Udp(i as u64),
                    };
                    net.send(now, from, p, &mut q, &mut rec);
                }
                Ev::Net(e) => {
                    if let Some(d) = net.handle(now, e, &mut q, &mut rec) {
                        let i = d.packet.seq();
                        assert_eq!(d.node, net.wlans[0].hop_nodes(sends[i as usize].1).1);
                        out.push((now, sends[i as usize].1, i, None));
                    }
                }
            }
            for f in net.facts.drain(..) {
                if let Fact::Drop(d) = f {
                    out.push((d.time, d.link - first_hop, d.seq, Some(d.cause)));
                }
            }
        }
        out
    }

    /// The driver, polled at every event time (`late`: only just before each offer and at
    /// the end, as a late caller would).
    fn driven(seed: u64, sends: &[(Time, u32, u32)], late: bool) -> Outcome {
        let mut w = WlanSegment::<u64>::new(&spec(), seed);
        let mut out = vec![];
        let take = |e: Event<u64>, out: &mut Outcome| match e {
            Event::Deliver { at, hop, pkt } => out.push((at, hop, pkt, None)),
            Event::Dropped {
                at,
                hop,
                cause,
                pkt,
                ..
            } => out.push((at, hop, pkt, Some(cause))),
        };
        for (i, &(at, hop, size)) in sends.iter().enumerate() {
            while let Some(t) = w.next_event().filter(|&t| t <= at && !late) {
                while let Some(e) = w.poll(t) {
                    take(e, &mut out);
                }
            }
            while let Some(e) = w.poll(at) {
                take(e, &mut out);
            }
            if let Err((cause, pkt)) = w.offer(at, hop, size, i as u64) {
                out.push((at, hop, pkt, Some(cause)));
            }
        }
        while let Some(t) = w.next_event() {
            while let Some(e) = w.poll(t) {
                take(e, &mut out);
            }
        }
        assert_eq!(w.held_packets(), 0);
        out
    }

    fn count(o: &Outcome, cause: Option<DropCause>) -> usize {
        o.iter().filter(|e| e.3 == cause).count()
    }

    #[test]
    fn the_driver_makes_the_simulators_decisions() {
        let sends = script(6000);
        for seed in [1, 2, 3] {
            let sim = simulated(seed, &sends);
            let drv = driven(seed, &sends, false);
            assert_eq!(sim.len(), sends.len());
            // The same deliveries and drops, at the same times, with the same causes.
            assert_eq!(drv, sim, "seed {seed}");
            // The script exercises every outcome.
            assert!(count(&sim, None) > 0);
            assert!(
                count(&sim, Some(DropCause::BufferOverflow)) > 0,
                "seed {seed}"
            );
            assert!(count(&sim, Some(DropCause::Mac)) > 0, "seed {seed}");
        }
    }

    #[test]
    fn late_polling_does_not_change_the_model() {
        let sends = script(3000);
        assert_eq!(driven(5, &sends, true), driven(5, &sends, false));
    }

    #[test]
    fn another_seed_draws_other_backoffs() {
        let sends = script(500);
        assert_ne!(driven(1, &sends, false), driven(2, &sends, false));
    }

    #[test]
    fn hop_stats_count_what_the_events_say() {
        let sends = script(2000);
        let out = driven(4, &sends, false);
        let mut w = WlanSegment::<u64>::new(&spec(), 4);
        for (i, &(at, hop, size)) in sends.iter().enumerate() {
            let _ = w.offer(at, hop, size, i as u64);
        }
        while let Some(t) = w.next_event() {
            while w.poll(t).is_some() {}
        }
        for hop in 0..w.hop_count() as u32 {
            let s = w.hop_stats(hop);
            let of = |c| out.iter().filter(|e| e.1 == hop && e.3 == c).count() as u64;
            assert_eq!(s.packets_sent, of(None));
            assert_eq!(s.drops[DropCause::Mac as usize], of(Some(DropCause::Mac)));
            assert_eq!(
                s.drops[DropCause::BufferOverflow as usize],
                of(Some(DropCause::BufferOverflow))
            );
        }
    }
}
