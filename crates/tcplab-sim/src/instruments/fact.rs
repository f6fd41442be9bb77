//! Facts: what the simulator (or, later, a testbed's emulator and endpoints) reports to the
//! instruments. A fact states what happened, never what it means; the instruments draw the
//! meaning (which loss a response answered, why a timeout fired, which drops form one loss
//! event).
//!
//! Only what measurement needs is a fact: drops and CE marks (rare, from the network), and
//! per TCP flow the sender's data transmissions with their kind, its loss responses with
//! their verdict, the advance of its cumulative ACK, and the cross-layer reports it got;
//! per UDP flow the datagrams sent; and every data segment and datagram that reached its
//! destination, with when it was sent and when it arrived (the one-way delay and jitter of
//! [`super::delay`]). ACKs delivered are counted by the endpoints, not stated.

use crate::packet::{DropCause, PacketKind};
use tcplab_core::{LossResponse, Time, TxKind};

/// One dropped packet: the ground truth.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dropped {
    pub time: Time,
    /// Link direction (index in `Results::links`).
    pub link: u32,
    /// TCP flow (data, ACK) or UDP flow (UDP).
    pub flow: u32,
    pub kind: PacketKind,
    /// Data: first byte; ACK: cumulative ACK; UDP: packet number.
    pub seq: u64,
    /// Data: the transmission number (`DataSegment::retransmission`, 0 = original); else 0.
    pub retransmission: u8,
    /// When the source handed the packet to the network.
    pub sent_at: Time,
    pub cause: DropCause,
}

/// A TCP data segment or a UDP datagram reached its destination host.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Delivered {
    /// When it arrived.
    pub time: Time,
    /// TCP flow (data) or UDP flow (UDP).
    pub flow: u32,
    /// `Data` or `Udp`.
    pub kind: PacketKind,
    /// Data: first byte; UDP: packet number.
    pub seq: u64,
    /// When the source handed it to the network.
    pub sent_at: Time,
}

/// Something that happened in a run, as the instruments see it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fact {
    /// The network dropped a packet.
    Drop(Dropped),
    /// A queue marked a packet of TCP flow `flow` CE.
    Mark { flow: u32 },
    /// TCP flow `flow`'s sender transmitted the data segment starting at `seq` as its
    /// transmission number `retransmission` (0 = original), of kind `kind`.
    Transmit {
        flow: u32,
        seq: u64,
        retransmission: u8,
        kind: TxKind,
    },
    /// TCP flow `flow`'s sender answered a loss signal (its verdict included); `snd_nxt`
    /// right after it answered, before it sent anything.
    LossResponse {
        flow: u32,
        response: LossResponse,
        snd_nxt: u64,
    },
    /// TCP flow `flow`'s sender has every byte below `una` acknowledged (stated after each
    /// interaction with the sender; it never decreases).
    Acked { flow: u32, una: u64 },
    /// A cross-layer report of a random loss reached TCP flow `flow`'s sender.
    Report { flow: u32 },
    /// UDP flow `flow` handed its datagram number `seq` to the network.
    UdpSent { flow: u32, seq: u64 },
    /// A data segment or datagram reached its destination.
    Delivered(Delivered),
}
