//! Random loss on a link direction. A [`LossModel`] is asked once per packet, after the
//! packet was serialized and before it propagates: the packet occupied the link (its bytes
//! count in the link's utilization and it delayed the packets behind it) but never arrives,
//! like a frame corrupted on the wire. Each model draws from the link direction's own seeded
//! stream, so the loss process does not depend on the traffic of other links.
//!
//! Bernoulli is here; Gilbert-Elliott (a two-state chain advanced per packet), bit-error
//! rates (a probability from `size`) and trace replay (a schedule over `now` or packet count)
//! fit the same trait.

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

/// The model `spec` drawing from `rng`; None when the link never loses packets (no draws).
pub fn build(spec: &LossSpec, rng: Rng) -> Option<Box<dyn LossModel>> {
    match *spec {
        LossSpec::None => None,
        LossSpec::Bernoulli { p } if p <= 0.0 => None,
        LossSpec::Bernoulli { p } => Some(Box::new(Bernoulli::new(p, rng))),
    }
}
