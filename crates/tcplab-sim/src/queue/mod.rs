//! Queue disciplines of a link direction. The link asks its [`Queue`] whether to admit each
//! arriving packet and takes packets from it when the serializer is free; the discipline
//! decides, the link counts. Capacity follows Dummynet: the packet being serialized still
//! occupies the buffer, so the link passes what it holds (waiting + in service) to
//! `enqueue`. An active queue manager ([`red`]) fits behind the same trait: it keeps its own
//! average, draws from its own seeded stream, and answers with a drop cause or a CE mark.

pub mod drop_tail;
pub mod red;

use crate::packet::DropCause;
use crate::packet::PacketId;
use crate::rng::Rng;
use crate::scenario::{Buffer, QueueSpec};
use tcplab_core::Time;

/// Packets and bytes held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Occupancy {
    pub packets: u32,
    pub bytes: u64,
}

impl Occupancy {
    pub fn add(&mut self, size: u32) {
        self.packets += 1;
        self.bytes += size as u64;
    }
    pub fn remove(&mut self, size: u32) {
        self.packets -= 1;
        self.bytes -= size as u64;
    }
    /// Would `size` more bytes still fit in `buffer`?
    pub fn fits(&self, size: u32, buffer: Buffer) -> bool {
        match buffer {
            Buffer::Packets(n) => self.packets < n,
            Buffer::Bytes(b) => self.bytes + size as u64 <= b,
        }
    }
}

/// A packet as a queue sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    pub id: PacketId,
    /// Wire bytes.
    pub size: u32,
    /// ECN-capable: may be marked instead of dropped.
    pub ect: bool,
    /// The link's loss model draws for it. Every simulated packet is drawn; the live emulator
    /// passes packets the simulation has no counterpart of (a real TCP connection's handshake
    /// and teardown) without a draw, so that the others meet the simulated run's draws.
    pub drawn: bool,
}

/// A discipline's answer to an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Queued.
    Accept,
    /// Queued with Congestion Experienced set (only for ECN-capable packets).
    Mark,
    /// Not queued; the link frees the packet and records the cause.
    Drop(DropCause),
}

pub trait Queue: Send {
    /// Offers a packet. `held` is what the link direction holds before it: packets waiting
    /// here plus the one being serialized.
    fn enqueue(&mut self, now: Time, pkt: Queued, held: Occupancy) -> Admission;
    /// The next packet to serialize.
    fn dequeue(&mut self, now: Time) -> Option<Queued>;
    /// Packets waiting (not counting the one being serialized).
    fn waiting(&self) -> Occupancy;
    /// Every packet waiting, front first (for end-of-run accounting).
    fn for_each(&self, f: &mut dyn FnMut(Queued));
    /// The link direction's buffer or rate changed (a scheduled change): packets already
    /// queued stay; admission follows the new limits from now on.
    fn set_limits(&mut self, buffer: Option<Buffer>, rate: Option<u64>);
    /// An active queue manager's average queue (RED: packets or bytes by its mode).
    fn average(&self) -> Option<f64> {
        None
    }
}

/// Builds the discipline `spec` with capacity `buffer` on a link of `rate` bit/s; `rng` is
/// its own random stream (unused by drop-tail).
pub fn build(spec: &QueueSpec, buffer: Buffer, rate: u64, rng: Rng) -> Box<dyn Queue> {
    match spec {
        QueueSpec::DropTail => Box::new(drop_tail::DropTail::new(buffer)),
        QueueSpec::Red(red) => Box::new(red::Red::new(red, buffer, rate, rng)),
    }
}
