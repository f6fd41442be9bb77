//! A host of the emulator: its device (a TUN device in its namespace, or a socket a
//! user-space endpoint holds, [`crate::device`]) and what crossed it, as `stats.json` states
//! it ([`crate::report`]).

use crate::histogram::Histogram;
use std::fs::File;
use tcplab_core::Time;

/// One host: its device and what crossed it.
pub struct Host {
    pub tun: File,
    /// The device carries a `virtio_net_hdr` on every read and write and hands over
    /// TCP super-packets, which the emulator segments ([`crate::vnet`]).
    pub vnet: bool,
    /// Reads that were super-packets, and the segments they gave (counted in `sent` too).
    pub super_packets: u64,
    pub segments: u64,
    /// Packets read from the device (and not counted in `not_ipv4` or `no_route`).
    pub sent: u64,
    /// Packets read that are not IPv4 (not offered to the model).
    pub not_ipv4: u64,
    /// Packets read whose destination is no other host of the plan (not offered).
    pub no_route: u64,
    /// Packets written to this host's device.
    pub delivered: u64,
    pub delivered_bytes: u64,
    /// Actual times of the first and last write to the device (None: none yet).
    pub first_write: Option<Time>,
    pub last_write: Option<Time>,
    /// Drops outside the model: writing to the device failed.
    pub write_errors: u64,
    /// Write time minus modelled arrival of every packet written here.
    pub lateness: Histogram,
    /// The host's own kernel TCP is behind its device (a TUN device in a namespace whose
    /// host runs a kernel TCP end, `HostPlan::kernel_tcp`): it answers a packet written to
    /// it inside the write ([`Emulator::write`](super::Emulator::write)). A user-space endpoint's answers wait for
    /// its process and are read at the turn that finds them.
    pub kernel: bool,
    /// Packets read right after a delivery to this host (its kernel's answers), stamped
    /// with the delivery's modelled time; those answering a delivery at least
    /// [`crate::stalls::THRESHOLD_NS`] late.
    pub answers: u64,
    pub answers_late: u64,
    /// The time the latest packet read from this host was stamped with: an answer is never
    /// stamped earlier (a host's packets reach the model in the order it sent them).
    pub last_read: Time,
    /// Answers stamped `last_read` instead of their delivery's modelled time, because the
    /// host had sent something before them that was read earlier in the turn.
    pub answers_behind: u64,
}

impl Host {
    pub fn new(tun: File) -> Self {
        Host {
            tun,
            vnet: false,
            super_packets: 0,
            segments: 0,
            sent: 0,
            not_ipv4: 0,
            no_route: 0,
            delivered: 0,
            delivered_bytes: 0,
            first_write: None,
            last_write: None,
            write_errors: 0,
            lateness: Histogram::default(),
            kernel: false,
            answers: 0,
            answers_late: 0,
            last_read: Time::ZERO,
            answers_behind: 0,
        }
    }
}
