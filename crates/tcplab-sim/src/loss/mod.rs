//! Random loss on a link direction. A [`LossModel`] is asked once per packet, after the
//! packet was serialized and before it propagates: the packet occupied the link (its bytes
//! count in the link's utilization and it delayed the packets behind it) but never arrives,
//! like a frame corrupted on the wire. Each model draws from the link direction's own seeded
//! stream, so the loss process does not depend on the traffic of other links.
//!
//! Bernoulli and trace replay (packet indices) are here; bit-error rates ([`ber`]: a
//! probability from `size`), Gilbert-Elliott burst loss ([`gilbert_elliott`]: a two-state
//! chain advanced per packet) and time-based traces ([`time_trace`]) have their own files.
//! docs/network-models.md gives the equations.

pub mod ber;
pub mod gilbert_elliott;
pub mod time_trace;

use crate::rng::Rng;
use crate::scenario::LossSpec;
use tcplab_core::Time;

pub trait LossModel: Send {
    /// Is this packet of `size` wire bytes, whose serialization ended at `now`, lost?
    fn lose(&mut self, now: Time, size: u32) -> bool;
}

/// Each packet is lost independently with probability `p`.
pub struct Bernoulli {
    p: f64,
    rng: Rng,
}

impl Bernoulli {
    pub fn new(p: f64, rng: Rng) -> Self {
        Bernoulli { p, rng }
    }
}

impl LossModel for Bernoulli {
    fn lose(&mut self, _now: Time, _size: u32) -> bool {
        self.rng.chance(self.p)
    }
}

/// Loses the packets whose index on the link direction (0-based, in serialization order)
/// is listed.
pub struct Trace {
    /// Sorted, deduplicated.
    packets: Vec<u64>,
    next: usize,
    count: u64,
}

impl Trace {
    pub fn new(packets: &[u64]) -> Self {
        let mut packets = packets.to_vec();
        packets.sort_unstable();
        packets.dedup();
        Trace {
            packets,
            next: 0,
            count: 0,
        }
    }
}

impl LossModel for Trace {
    fn lose(&mut self, _now: Time, _size: u32) -> bool {
        let i = self.count;
        self.count += 1;
        if self.packets.get(self.next) == Some(&i) {
            self.next += 1;
            true
        } else {
            false
        }
    }
}

/// The model `spec` drawing from `rng`; None when the link never loses packets (no draws).
pub fn build(spec: &LossSpec, rng: Rng) -> Option<Box<dyn LossModel>> {
    match spec {
        LossSpec::None => None,
        LossSpec::Bernoulli { p } if *p <= 0.0 => None,
        LossSpec::Bernoulli { p } => Some(Box::new(Bernoulli::new(*p, rng))),
        LossSpec::Trace { packets } if packets.is_empty() => None,
        LossSpec::Trace { packets } => Some(Box::new(Trace::new(packets))),
        LossSpec::Ber { ber } if *ber <= 0.0 => None,
        LossSpec::Ber { ber } => Some(Box::new(ber::Ber::new(*ber, rng))),
        LossSpec::GilbertElliott {
            p_gb,
            p_bg,
            loss_good,
            loss_bad,
        } => Some(Box::new(gilbert_elliott::GilbertElliott::new(
            *p_gb, *p_bg, *loss_good, *loss_bad, rng,
        ))),
        LossSpec::TimeTrace { times, intervals } if times.is_empty() && intervals.is_empty() => {
            None
        }
        LossSpec::TimeTrace { times, intervals } => {
            Some(Box::new(time_trace::TimeTrace::new(times, intervals)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_loses_the_listed_indices_once() {
        let mut t = Trace::new(&[4, 1, 4]);
        let lost: Vec<bool> = (0..7).map(|_| t.lose(Time::ZERO, 100)).collect();
        assert_eq!(lost, [false, true, false, false, true, false, false]);
        let spec = LossSpec::Trace { packets: vec![] };
        assert!(build(&spec, Rng::stream(1, "x")).is_none());
    }
}
