//! Facts: what the simulator (or, later, a testbed's emulator and endpoints) reports to the
//! instruments. A fact states what happened, never what it means; the instruments draw the
//! meaning (which loss a response answered, why a timeout fired, which drops form one loss
//! event).
//!
//! Only what measurement needs is a fact:
//! - from the network: drops with their cause and CE marks (rare), and, when series are
//!   recorded, what a link direction holds after each change ([`Fact::QueueState`]);
//! - per TCP flow: the sender's data transmissions with their kind, its loss responses with
//!   their verdict, the advance of its cumulative ACK, the cross-layer reports it got, the
//!   receiver's ACKs handed to the network, and, when series are recorded, the sender's
//!   state ([`Fact::FlowState`]); per UDP flow the datagrams sent;
//! - every packet that reached its destination: data segments and datagrams with when they
//!   were sent and when they arrived (the one-way delay and jitter of [`super::delay`]),
//!   ACKs as a bare count ([`Fact::AckDelivered`]), and data segments as one where the
//!   receiver states no times ([`Fact::DataDelivered`]: a real TCP receiver);
//! - at the end of a run, a census for [`super::conservation`]: the packets still in the
//!   network per flow and kind, the packets the network stores, the endpoints' own counters
//!   and the receiving applications' reads.

use crate::packet::{DropCause, PacketKind};
use crate::queue::Occupancy;
use serde::{Deserialize, Serialize};
use tcplab_core::{LossResponse, Sender, SenderSnapshot, Time, TxKind};

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
    /// TCP flow `flow`'s receiver handed an ACK to the network.
    AckSent { flow: u32 },
    /// An ACK of TCP flow `flow` reached its sender.
    AckDelivered { flow: u32 },
    /// A data segment of TCP flow `flow` reached its receiver, stated as a bare count by a
    /// receiver that gives no per-segment facts (a Linux socket: its `TCP_INFO` count of
    /// data segments in). Counted by [`super::conservation`] only: no delay sample.
    DataDelivered { flow: u32 },
    /// TCP flow `flow`'s sender and application at `time` (the series table). `changed_only`:
    /// stated after an interaction (series on change), a row only when it differs from the
    /// flow's last row; else a periodic sample (series at an interval), a row each.
    FlowState {
        time: Time,
        flow: u32,
        state: FlowSample,
        changed_only: bool,
    },
    /// Link direction `link` holds `packets` packets of `bytes` bytes at `time`, waiting or in
    /// service (the queues table).
    QueueState {
        time: Time,
        link: u32,
        packets: u32,
        bytes: u64,
    },
    /// End of run: `packets` packets of TCP flow (data, ACK) or UDP flow `flow` are still in
    /// the network (waiting, in service or propagating). Absent = none.
    InFlight {
        flow: u32,
        kind: PacketKind,
        packets: u64,
    },
    /// End of run: the network stores `packets` packets in all.
    Stored { packets: u64 },
    /// End of run: TCP flow `flow`'s endpoints' own counters.
    Endpoints { flow: u32, counts: EndpointCounts },
    /// End of run: TCP flow `flow`'s receiving application read `len` bytes at `seq` when it
    /// had read `after` bytes in order (a read that did not start where the previous one
    /// ended; at most 10 per flow are stated).
    Misread {
        flow: u32,
        seq: u64,
        len: u64,
        after: u64,
    },
    /// End of run: TCP flow `flow`'s receiving application's reads.
    Reads { flow: u32, reads: Reads },
}

impl Fact {
    /// The state of `sender` (flow `flow`, `delivered` bytes read by its application) at
    /// `time` ([`Fact::FlowState`]).
    #[inline]
    pub fn flow_state(
        time: Time,
        flow: u32,
        sender: &Sender,
        delivered: u64,
        changed_only: bool,
    ) -> Fact {
        Fact::FlowState {
            time,
            flow,
            state: FlowSample::of(sender, delivered),
            changed_only,
        }
    }

    /// Link direction `link` holds `held` at `time` ([`Fact::QueueState`]).
    #[inline]
    pub fn queue_state(time: Time, link: u32, held: Occupancy) -> Fact {
        Fact::QueueState {
            time,
            link,
            packets: held.packets,
            bytes: held.bytes,
        }
    }

    /// The flow the fact is about: (UDP?, index); None for facts about the network.
    pub fn flow(&self) -> Option<(bool, u32)> {
        let udp = |kind: PacketKind| kind == PacketKind::Udp;
        match *self {
            Fact::Drop(d) => Some((udp(d.kind), d.flow)),
            Fact::Delivered(d) => Some((udp(d.kind), d.flow)),
            Fact::InFlight { flow, kind, .. } => Some((udp(kind), flow)),
            Fact::UdpSent { flow, .. } => Some((true, flow)),
            Fact::Mark { flow }
            | Fact::Transmit { flow, .. }
            | Fact::LossResponse { flow, .. }
            | Fact::Acked { flow, .. }
            | Fact::Report { flow }
            | Fact::AckSent { flow }
            | Fact::AckDelivered { flow }
            | Fact::DataDelivered { flow }
            | Fact::FlowState { flow, .. }
            | Fact::Endpoints { flow, .. }
            | Fact::Misread { flow, .. }
            | Fact::Reads { flow, .. } => Some((false, flow)),
            Fact::QueueState { .. } | Fact::Stored { .. } => None,
        }
    }
}

/// A TCP flow's endpoints' own counters (not the network's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointCounts {
    /// Data segments the sender handed to the network.
    pub segments_sent: u64,
    /// Data segments the receiver got.
    pub segments_received: u64,
    /// ACKs the receiver handed to the network.
    pub acks_sent: u64,
    /// ACKs the sender got.
    pub acks_received: u64,
}

/// What a TCP flow's receiving application read, at the end of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reads {
    /// Sum of the lengths of all reads.
    pub total: u64,
    /// Bytes read in order (the end of the highest read).
    pub in_order: u64,
    /// The receiver's `rcv_nxt`.
    pub rcv_nxt: u64,
    /// The sender's `snd_nxt`.
    pub snd_nxt: u64,
    /// The transfer size, when the flow completed one.
    pub completed: Option<u64>,
}

/// The sampled state of one flow: one row of the series table without flow and time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSample {
    pub cwnd: u64,
    pub ssthresh: u64,
    /// 0 until the first RTT sample.
    pub srtt_ns: u64,
    pub rto_ns: u64,
    pub in_flight: u64,
    /// Application bytes delivered so far.
    pub delivered: u64,
    /// Payload bytes the sender has put on the wire so far, retransmissions included.
    pub bytes_sent: u64,
}

impl FlowSample {
    pub fn new(s: &SenderSnapshot, delivered: u64, bytes_sent: u64) -> Self {
        FlowSample {
            cwnd: s.cwnd,
            ssthresh: s.ssthresh,
            srtt_ns: s.srtt.map_or(0, |d| d.as_nanos()),
            rto_ns: s.rto.as_nanos(),
            in_flight: s.in_flight,
            delivered,
            bytes_sent,
        }
    }

    /// The sample of a sender now.
    pub fn of(sender: &Sender, delivered: u64) -> Self {
        FlowSample::new(&sender.snapshot(), delivered, sender.counters().bytes_sent)
    }
}
