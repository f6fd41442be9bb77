//! What the emulator records besides its counts, and how much of it it keeps.
//!
//! With the scenario's series on, the emulator also states what each link direction holds
//! ([`QueueRow`], the `queues` table): every `trace.interval` of model time (interval mode,
//! the ticks counted from the emulator's start), or after every packet a direction takes,
//! drops or delivers (change mode). At most [`MAX_QUEUE_ROWS`] rows are kept; the rest are
//! counted.
//!
//! With the scenario's `trace.pcap`, the packets a captured direction delivers to its far
//! end are recorded as they are (their real bytes, CE set when marked; the first
//! `pcap_snaplen` of each) with their modelled arrival time ([`Capture`]): tcpdump on the
//! receiving interface, where the simulator captures at the start of serialization.
//!
//! Every drop the model makes is logged ([`DropRecord`], `drops.jsonl`). The emulator fills
//! these at its hops ([`super::hops`]); [`crate::report`] writes them.

use crate::ident::Ident;
use tcplab_core::Time;
use tcplab_sim::packet::DropCause;

/// Queue rows kept at most (24 bytes each in the results); further rows are counted in
/// [`Emulator::queue_rows_cut`](super::Emulator::queue_rows_cut).
pub const MAX_QUEUE_ROWS: usize = 4_000_000;

/// Bytes of capture records kept at most over all files; further packets are counted in
/// [`Capture::cut`].
pub const MAX_CAPTURE_BYTES: usize = 256 << 20;

/// One capture file being written: pcap global header and records, model time stamps.
pub struct Capture {
    pub bytes: Vec<u8>,
    pub packets: u64,
    /// Packets not recorded past [`MAX_CAPTURE_BYTES`].
    pub cut: u64,
}

/// Link direction `dir` held `packets` packets of `bytes` bytes (waiting or in service) at
/// model time `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueRow {
    pub at: Time,
    pub dir: u32,
    pub packets: u32,
    pub bytes: u64,
}

/// A drop the model made.
#[derive(Clone, Debug)]
pub struct DropRecord {
    /// Model time of the drop (ns since the emulator started).
    pub at: Time,
    /// The link direction (index into [`Emulator::dirs`](super::Emulator::dirs)).
    pub dir: u32,
    pub cause: DropCause,
    pub ident: Option<Ident>,
}
