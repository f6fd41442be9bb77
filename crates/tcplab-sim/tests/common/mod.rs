//! Scenario shorthands shared by the integration tests.
#![allow(dead_code)]

use tcplab_core::Dur;
use tcplab_sim::builder::dumbbell;
use tcplab_sim::scenario::{Buffer, Duplex, LinkDir, Topology};

pub fn dir(rate_bps: u64, delay_ms: u64, buffer_pkts: u32) -> LinkDir {
    LinkDir::new(
        rate_bps,
        Dur::from_millis(delay_ms),
        Buffer::Packets(buffer_pkts),
    )
}

/// `pairs` pairs on a bottleneck of `rate_bps` with one-way delay `delay_ms` and `buffer`
/// packets, fast loss-free access links (100 Mb/s, 1 ms).
pub fn simple_dumbbell(pairs: u32, rate_bps: u64, delay_ms: u64, buffer: u32) -> Topology {
    dumbbell(
        pairs,
        Duplex::symmetric(dir(rate_bps, delay_ms, buffer)),
        Duplex::symmetric(dir(100_000_000, 1, 10_000)),
    )
}

/// Jain's fairness index of `x`.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}
