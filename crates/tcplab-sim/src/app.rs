//! UDP constant-bit-rate applications: a source sending fixed-size packets at a fixed wire
//! rate from `start` until `stop` (or the end of the run), and the sink counting what
//! arrives. Packet `k` leaves, while that is before `stop` and the end of the run, at `start + floor(k * size * 8 / rate)` seconds, computed from
//! `k` rather than by adding rounded gaps, so the rate does not drift.

use tcplab_core::{Dur, Time};

pub struct UdpFlow {
    pub name: String,
    pub src: u32,
    pub dst: u32,
    pub rate: u64,
    pub packet_size: u32,
    pub start: Time,
    pub stop: Option<Time>,
    /// Number of the next packet to send.
    pub next: u64,
    pub stopped: bool,
    pub received: u64,
    pub received_bytes: u64,
}

impl UdpFlow {
    /// When packet `k` leaves.
    pub fn send_time(&self, k: u64) -> Time {
        let bits = k as u128 * self.packet_size as u128 * 8 * 1_000_000_000;
        let ns = bits / self.rate as u128;
        self.start + Dur::from_nanos(ns.min(u64::MAX as u128) as u64)
    }

    /// Packets sent so far.
    pub fn sent(&self) -> u64 {
        self.next
    }

    /// Whether a packet due at `t` leaves: before the source stops and before the end of
    /// the run (a packet sent at the last instant could not arrive anyway).
    pub fn sends_at(&self, t: Time, end: Time) -> bool {
        t < end && self.stop.is_none_or(|s| t < s)
    }
}
