//! Random Early Detection (Floyd & Jacobson 1993), as in ns-2/ns-3 and Linux sch_red.
//!
//! On every arrival the average `avg` is updated from the instantaneous occupancy `q` (what
//! the link holds, counting the packet being serialized, in packets or bytes by `mode`):
//! `avg <- (1 - w_q) avg + w_q q`. When the packet arrives at an empty link that has been
//! idle for `t`, the average first decays as if `m = t / s` packets had arrived to an empty
//! queue, `avg <- (1 - w_q)^m avg`, where `s` is the transmission time of a
//! `mean_packet_size` packet at the link rate.
//!
//! Then, with `p_b = max_p (avg - min_th) / (max_th - min_th)` (byte mode: times
//! `size / mean_packet_size`):
//! - `avg < min_th`: accept;
//! - `min_th <= avg < max_th`: drop early (cause `aqm_early`), or mark CE when `ecn` and the
//!   packet is ECN-capable, with probability `p_a = p_b / (1 - count p_b)` (`count` packets
//!   accepted since the last early drop/mark), which spaces drops uniformly over 1..1/p_b
//!   packets; with `wait`, `p_a = 0` while `count p_b < 1`, then `p_b / (2 - count p_b)`:
//!   uniform over 1/p_b..2/p_b packets;
//! - `gentle` and `max_th <= avg < 2 max_th`: the same with `p_b = max_p + (1 - max_p)
//!   (avg - max_th) / max_th`;
//! - above (`max_th`, or `2 max_th` with `gentle`): forced drop (cause `aqm_forced`), also
//!   for ECN-capable packets.
//!
//! Independently of the average, a packet that does not fit in the link's buffer (the hard
//! limit) is dropped with cause `aqm_forced`.

use super::{Admission, Occupancy, Queue, Queued};
use crate::packet::DropCause;
use crate::rng::Rng;
use crate::scenario::{Buffer, RedMode, RedSpec};
use std::collections::VecDeque;
use tcplab_core::{Dur, Time};

/// RED's decision for one arrival, before the hard limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Accept,
    /// Dropped or marked with probability p_a.
    Early,
    /// Average above the probabilistic region.
    Forced,
}

pub struct Red {
    spec: RedSpec,
    buffer: Buffer,
    rate: u64,
    fifo: VecDeque<Queued>,
    waiting: Occupancy,
    avg: f64,
    /// Packets accepted since the last early drop or mark while in the probabilistic region.
    count: u64,
    /// When the link last became empty (the end of the last serialization), if it did.
    idle_from: Option<Time>,
    rng: Rng,
}

impl Red {
    pub fn new(spec: &RedSpec, buffer: Buffer, rate: u64, rng: Rng) -> Self {
        Red {
            spec: spec.clone(),
            buffer,
            rate,
            fifo: VecDeque::new(),
            waiting: Occupancy::default(),
            avg: 0.0,
            count: 0,
            idle_from: None,
            rng,
        }
    }

    /// The current average queue (packets or bytes by `mode`).
    pub fn average(&self) -> f64 {
        self.avg
    }

    /// The configured curve: `p_b` at average `avg` for a packet of `size` bytes, None outside
    /// the probabilistic region (below `min_th`: never; above it: forced).
    pub fn p_b(&self, avg: f64, size: u32) -> Option<f64> {
        let s = &self.spec;
        let p = if avg < s.min_th {
            return None;
        } else if avg < s.max_th {
            s.max_p * (avg - s.min_th) / (s.max_th - s.min_th)
        } else if s.gentle && avg < 2.0 * s.max_th {
            s.max_p + (1.0 - s.max_p) * (avg - s.max_th) / s.max_th
        } else {
            return None;
        };
        Some(match s.mode {
            RedMode::Packets => p,
            RedMode::Bytes => (p * size as f64 / s.mean_packet_size as f64).min(1.0),
        })
    }

    /// Probability of an early drop of the next packet, `count` packets after the last one.
    pub fn p_a(p_b: f64, count: u64, wait: bool) -> f64 {
        let c = count as f64 * p_b;
        if wait {
            if c < 1.0 {
                0.0
            } else if c < 2.0 {
                p_b / (2.0 - c)
            } else {
                1.0
            }
        } else if c < 1.0 {
            p_b / (1.0 - c)
        } else {
            1.0
        }
    }

    /// Transmission time of a typical packet: the unit of idle time.
    fn typical_transmission(&self) -> Dur {
        Dur::transmission(self.spec.mean_packet_size as u64, self.rate)
    }

    /// Updates the average for an arrival at `now` when the link holds `held`.
    fn update_average(&mut self, now: Time, held: Occupancy) {
        let w = self.spec.w_q;
        if held.packets == 0 {
            if let Some(from) = self.idle_from.take() {
                let s = self.typical_transmission().as_nanos().max(1) as f64;
                let m = now.saturating_since(from).as_nanos() as f64 / s;
                self.avg *= (1.0 - w).powf(m);
            }
        }
        let q = match self.spec.mode {
            RedMode::Packets => held.packets as f64,
            RedMode::Bytes => held.bytes as f64,
        };
        self.avg = (1.0 - w) * self.avg + w * q;
    }

    /// RED's decision for a packet of `size` bytes at the current average.
    fn decide(&mut self, size: u32) -> Decision {
        let upper = if self.spec.gentle {
            2.0 * self.spec.max_th
        } else {
            self.spec.max_th
        };
        if self.avg < self.spec.min_th {
            self.count = 0;
            return Decision::Accept;
        }
        if self.avg >= upper {
            self.count = 0;
            return Decision::Forced;
        }
        let p_b = self.p_b(self.avg, size).unwrap_or(1.0);
        let p_a = Red::p_a(p_b, self.count, self.spec.wait);
        if self.rng.chance(p_a) {
            self.count = 0;
            Decision::Early
        } else {
            self.count += 1;
            Decision::Accept
        }
    }

    /// Offers a packet and also returns RED's decision and the average it was made at
    /// (for instrumented tests).
    pub fn enqueue_observed(
        &mut self,
        now: Time,
        pkt: Queued,
        held: Occupancy,
    ) -> (Admission, Decision, f64) {
        self.update_average(now, held);
        let avg = self.avg;
        let decision = self.decide(pkt.size);
        let admission = match decision {
            Decision::Forced => Admission::Drop(DropCause::AqmForced),
            Decision::Early if !(self.spec.ecn && pkt.ect) => Admission::Drop(DropCause::AqmEarly),
            _ if !held.fits(pkt.size, self.buffer) => Admission::Drop(DropCause::AqmForced),
            Decision::Early => Admission::Mark,
            Decision::Accept => Admission::Accept,
        };
        if !matches!(admission, Admission::Drop(_)) {
            self.waiting.add(pkt.size);
            self.fifo.push_back(pkt);
        }
        (admission, decision, avg)
    }
}

impl Queue for Red {
    fn enqueue(&mut self, now: Time, pkt: Queued, held: Occupancy) -> Admission {
        self.enqueue_observed(now, pkt, held).0
    }
    fn dequeue(&mut self, now: Time) -> Option<Queued> {
        let p = self.fifo.pop_front()?;
        self.waiting.remove(p.size);
        if self.fifo.is_empty() {
            // The link empties when this packet's serialization ends (unless more arrive).
            self.idle_from = Some(now + Dur::transmission(p.size as u64, self.rate));
        }
        Some(p)
    }
    fn waiting(&self) -> Occupancy {
        self.waiting
    }
    fn for_each(&self, f: &mut dyn FnMut(Queued)) {
        self.fifo.iter().for_each(|p| f(*p));
    }
    fn set_limits(&mut self, buffer: Option<Buffer>, rate: Option<u64>) {
        self.buffer = buffer.unwrap_or(self.buffer);
        self.rate = rate.unwrap_or(self.rate);
    }
    fn average(&self) -> Option<f64> {
        Some(self.avg)
    }
}

#[cfg(test)]
#[path = "red_tests.rs"]
mod tests;
