//! Packets on the wire, their sizes, and the pool that stores them while they cross the
//! network.
//!
//! # Header model
//!
//! Wire sizes count the IP and TCP headers and options, not link-layer framing:
//! - data segment: payload + 40 (20 IPv4 + 20 TCP) + 12 when it carries a timestamp option
//!   (10 bytes of RFC 7323 option padded with two NOPs);
//! - pure ACK: 40 + 12 with a timestamp echo + SACK option bytes: 2 + 8 per block, padded to
//!   a multiple of 4 (1 block: 12, 2: 20, 3: 28, 4: 36). The 40-byte option limit of real TCP
//!   is not enforced: the receiver's `sack_blocks` setting decides how many blocks travel.
//! - UDP: the scenario gives the wire size of each packet directly.
//!
//! # Pool
//!
//! Packets live in a [`PacketPool`] (a Vec with a free list) from injection to delivery or
//! drop; links and events carry only a [`PacketId`]. Memory is proportional to the packets in
//! flight and slots are reused, so the hot path does not allocate.

use tcplab_core::{AckSegment, DataSegment, Time};

/// IPv4 (20) + TCP (20) header bytes without options.
pub const IP_TCP_HEADER: u32 = 40;
/// RFC 7323 timestamp option with its two NOPs of padding.
pub const TIMESTAMP_OPTION: u32 = 12;

/// Bytes of a SACK option carrying `blocks` blocks, padded to 32-bit words.
pub fn sack_option_bytes(blocks: usize) -> u32 {
    if blocks == 0 {
        0
    } else {
        (2 + 8 * blocks as u32).div_ceil(4) * 4
    }
}

/// Wire size of a data segment.
pub fn data_wire_size(seg: &DataSegment) -> u32 {
    let ts = if seg.ts_val.is_some() {
        TIMESTAMP_OPTION
    } else {
        0
    };
    seg.len + IP_TCP_HEADER + ts
}

/// Wire size of a pure ACK.
pub fn ack_wire_size(ack: &AckSegment) -> u32 {
    let ts = if ack.ts_ecr.is_some() {
        TIMESTAMP_OPTION
    } else {
        0
    };
    IP_TCP_HEADER + ts + sack_option_bytes(ack.sack.len())
}

/// Why a packet was dropped: the ground truth behind loss-classification metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DropCause {
    /// The queue was full.
    BufferOverflow = 0,
    /// An active queue manager dropped early (RED).
    AqmEarly = 1,
    /// An active queue manager's hard limit.
    AqmForced = 2,
    /// Random loss on the link (bit errors, fading).
    LinkError = 3,
    /// A MAC layer gave up after its retry limit.
    Mac = 4,
}

impl DropCause {
    pub const ALL: [DropCause; 5] = [
        DropCause::BufferOverflow,
        DropCause::AqmEarly,
        DropCause::AqmForced,
        DropCause::LinkError,
        DropCause::Mac,
    ];
    /// Random (the channel's fault: link errors, MAC give-ups) rather than congestion
    /// (buffer overflow, AQM).
    pub fn is_random(self) -> bool {
        matches!(self, DropCause::LinkError | DropCause::Mac)
    }
    pub fn as_str(self) -> &'static str {
        match self {
            DropCause::BufferOverflow => "buffer_overflow",
            DropCause::AqmEarly => "aqm_early",
            DropCause::AqmForced => "aqm_forced",
            DropCause::LinkError => "link_error",
            DropCause::Mac => "mac",
        }
    }
}

/// Which endpoint a packet belongs to and what it carries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Payload {
    /// A TCP data segment of flow `Packet::flow`.
    Data(DataSegment),
    /// A TCP acknowledgment of flow `Packet::flow`.
    Ack(AckSegment),
    /// UDP packet number `n` of UDP flow `Packet::flow`.
    Udp(u64),
}

/// The three kinds of packet, for accounting and logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacketKind {
    Data = 0,
    Ack = 1,
    Udp = 2,
}

impl PacketKind {
    pub const ALL: [PacketKind; 3] = [PacketKind::Data, PacketKind::Ack, PacketKind::Udp];
    pub fn as_str(self) -> &'static str {
        match self {
            PacketKind::Data => "data",
            PacketKind::Ack => "ack",
            PacketKind::Udp => "udp",
        }
    }
    /// "tcp" or "udp": which table of results `Packet::flow` indexes.
    pub fn flow_kind(self) -> &'static str {
        match self {
            PacketKind::Data | PacketKind::Ack => "tcp",
            PacketKind::Udp => "udp",
        }
    }
}

/// One packet in the network.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Packet {
    /// Index of the TCP flow (data, ACK) or the UDP flow (UDP).
    pub flow: u32,
    /// Destination node.
    pub dst: u32,
    /// Bytes on the wire (see the header model above).
    pub size: u32,
    /// When the source handed it to the network.
    pub sent_at: Time,
    pub payload: Payload,
}

impl Packet {
    pub fn kind(&self) -> PacketKind {
        match self.payload {
            Payload::Data(_) => PacketKind::Data,
            Payload::Ack(_) => PacketKind::Ack,
            Payload::Udp(_) => PacketKind::Udp,
        }
    }
    /// Data: first byte; ACK: cumulative ACK; UDP: packet number.
    pub fn seq(&self) -> u64 {
        match &self.payload {
            Payload::Data(d) => d.seq.0,
            Payload::Ack(a) => a.ack.0,
            Payload::Udp(n) => *n,
        }
    }
}

/// Handle of a packet in a [`PacketPool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PacketId(u32);

impl PacketId {
    /// The pool slot: stable while the packet lives, reused after.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What the links and nodes read of a packet on every hop: its flow, destination, size,
/// kind and ECN capability, 16 bytes. The pool keeps these apart from the packets (184
/// bytes, segments with their SACK blocks and timestamps), so a hop reads one small record
/// of a dense array (a run with 30,000 packets in flight keeps all of them in the L2
/// cache) instead of a cache line of a large one; the packet itself is read where it is
/// sent, delivered or dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    pub flow: u32,
    pub dst: u32,
    pub size: u32,
    pub kind: PacketKind,
    /// A data segment of an ECN-capable transport (the queue may mark it rather than drop).
    pub ect: bool,
}

impl Head {
    fn of(p: &Packet) -> Head {
        Head {
            flow: p.flow,
            dst: p.dst,
            size: p.size,
            kind: p.kind(),
            ect: matches!(&p.payload, Payload::Data(d) if d.ect),
        }
    }
}

/// Storage for packets in flight, reusing the slots of delivered and dropped packets.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Option<Packet>>,
    /// `heads[i]` is the [`Head`] of the packet in `slots[i]` (stale where that is None).
    heads: Vec<Head>,
    free: Vec<u32>,
    live: usize,
}

impl PacketPool {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&mut self, p: Packet) -> PacketId {
        self.live += 1;
        let head = Head::of(&p);
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(p);
                self.heads[i as usize] = head;
                PacketId(i)
            }
            None => {
                self.slots.push(Some(p));
                self.heads.push(head);
                PacketId((self.slots.len() - 1) as u32)
            }
        }
    }

    /// The packet, which must be live.
    pub fn get(&self, id: PacketId) -> &Packet {
        self.slots[id.0 as usize]
            .as_ref()
            .expect("packet id of a live packet")
    }

    /// What a hop reads of packet `id`, which must be live (checked in debug builds: the
    /// per-hop path reads no more than the head).
    #[inline(always)]
    pub fn head(&self, id: PacketId) -> Head {
        debug_assert!(
            self.slots[id.0 as usize].is_some(),
            "packet id of a live packet"
        );
        self.heads[id.0 as usize]
    }

    /// Sets the congestion-experienced mark of data segment `id` (an ECN-capable one the
    /// queue marked instead of dropping).
    pub fn mark_ce(&mut self, id: PacketId) {
        let p = self.slots[id.0 as usize]
            .as_mut()
            .expect("packet id of a live packet");
        if let Payload::Data(d) = &mut p.payload {
            d.ce = true;
        }
    }

    /// Removes the packet (delivered or dropped) and frees its slot.
    pub fn remove(&mut self, id: PacketId) -> Packet {
        let p = self.slots[id.0 as usize]
            .take()
            .expect("packet id of a live packet");
        self.free.push(id.0);
        self.live -= 1;
        p
    }

    /// Frees the slot of packet `id` (delivered or dropped) without moving the packet out:
    /// [`remove`](Self::remove) for a caller that has read it in place.
    #[inline]
    pub fn release(&mut self, id: PacketId) {
        let slot = &mut self.slots[id.0 as usize];
        assert!(slot.is_some(), "packet id of a live packet");
        *slot = None;
        self.free.push(id.0);
        self.live -= 1;
    }

    /// Packets currently stored.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Every live packet (for end-of-run accounting).
    pub fn iter(&self) -> impl Iterator<Item = &Packet> {
        self.slots.iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::{SackBlock, SackList, Seq};

    #[test]
    fn header_model() {
        assert_eq!(sack_option_bytes(0), 0);
        assert_eq!(sack_option_bytes(1), 12);
        assert_eq!(sack_option_bytes(3), 28);
        assert_eq!(sack_option_bytes(4), 36);
        let mut d = DataSegment {
            seq: Seq(0),
            len: 1460,
            ts_val: Some(Time::ZERO),
            ts_ecr: None,
            retransmission: 0,
            ect: false,
            ce: false,
            cwr: false,
        };
        assert_eq!(data_wire_size(&d), 1512);
        d.ts_val = None;
        assert_eq!(data_wire_size(&d), 1500);
        let sack: SackList = [SackBlock {
            start: Seq(10),
            end: Seq(20),
        }]
        .into_iter()
        .collect();
        let a = AckSegment {
            ack: Seq(0),
            sack,
            ts_ecr: Some(Time::ZERO),
            ts_val: None,
            window: 1,
            ece: false,
        };
        assert_eq!(ack_wire_size(&a), 40 + 12 + 12);
    }

    #[test]
    fn pool_reuses_slots() {
        let mut pool = PacketPool::new();
        let p = Packet {
            flow: 0,
            dst: 1,
            size: 100,
            sent_at: Time::ZERO,
            payload: Payload::Udp(0),
        };
        let a = pool.insert(p);
        let b = pool.insert(p);
        assert_eq!(pool.live(), 2);
        pool.remove(a);
        let c = pool.insert(p);
        assert_eq!(c, a);
        assert_ne!(b, c);
        assert_eq!(pool.iter().count(), 2);
        // `release` frees a slot like `remove`, without handing the packet back.
        pool.release(b);
        assert_eq!(pool.live(), 1);
        assert_eq!(pool.insert(p), b);
    }

    #[test]
    fn heads_follow_the_packets_in_their_slots() {
        let mut pool = PacketPool::new();
        let data = |ect| Packet {
            flow: 3,
            dst: 7,
            size: 1512,
            sent_at: Time::ZERO,
            payload: Payload::Data(DataSegment {
                seq: Seq(1),
                len: 1460,
                ts_val: None,
                ts_ecr: None,
                retransmission: 0,
                ect,
                ce: false,
                cwr: false,
            }),
        };
        let udp = Packet {
            flow: 5,
            dst: 2,
            size: 100,
            sent_at: Time::ZERO,
            payload: Payload::Udp(9),
        };
        let a = pool.insert(data(true));
        let head = pool.head(a);
        assert_eq!((head.flow, head.dst, head.size), (3, 7, 1512));
        assert_eq!((head.kind, head.ect), (PacketKind::Data, true));
        // Marking sets the segment's CE bit and leaves the head as it was.
        pool.mark_ce(a);
        assert!(matches!(pool.get(a).payload, Payload::Data(d) if d.ce));
        assert_eq!(pool.head(a), head);
        // A reused slot carries the new packet's head.
        pool.release(a);
        let b = pool.insert(udp);
        assert_eq!(b, a);
        let head = pool.head(b);
        assert_eq!((head.flow, head.dst, head.size), (5, 2, 100));
        assert_eq!((head.kind, head.ect), (PacketKind::Udp, false));
        let c = pool.insert(data(false));
        assert!(!pool.head(c).ect);
        assert_eq!(pool.head(b).kind, PacketKind::Udp);
    }

    #[test]
    #[should_panic(expected = "live packet")]
    fn releasing_a_free_slot_panics() {
        let mut pool = PacketPool::new();
        let p = Packet {
            flow: 0,
            dst: 1,
            size: 100,
            sent_at: Time::ZERO,
            payload: Payload::Udp(0),
        };
        let a = pool.insert(p);
        pool.release(a);
        pool.release(a);
    }
}
