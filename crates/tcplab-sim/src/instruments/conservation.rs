//! The conservation instrument: every packet handed to the network was delivered to its
//! destination, dropped with a cause, or is still in the network at the end, per flow and
//! kind; and, from the end-of-run census ([`Fact::InFlight`], [`Fact::Stored`],
//! [`Fact::Endpoints`], [`Fact::Misread`], [`Fact::Reads`]):
//! - the packets in flight add up to what the network stores;
//! - the endpoints' own counters agree with the packets stated (segments the sender sent =
//!   data packets handed to the network, segments the receiver got = data packets
//!   delivered, same for ACKs);
//! - each receiving application read every byte exactly once, in order: every read started
//!   where the previous ended, the bytes read add up to the receiver's `rcv_nxt`, never
//!   exceed what the sender sent, and equal the transfer size for completed transfers.
//!
//! A packet is counted when it is handed to the network ([`Fact::Transmit`],
//! [`Fact::AckSent`], [`Fact::UdpSent`]), delivered ([`Fact::Delivered`],
//! [`Fact::AckDelivered`], [`Fact::DataDelivered`]) and dropped ([`Fact::Drop`]): a counter increment per fact.

use super::fact::{EndpointCounts, Fact, Reads};
use crate::packet::PacketKind;
use crate::results::Conservation;

/// Packets of one flow and kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
    /// Still in the network at the end.
    pub in_flight: u64,
}

impl Tally {
    fn balanced(&self) -> bool {
        self.sent == self.delivered + self.dropped + self.in_flight
    }
}

/// At most this many misreads are stated per flow.
pub const MAX_MISREADS: usize = 10;

/// Per flow accounting of a run.
#[derive(Clone, Debug, Default)]
pub struct PacketConservation {
    /// Per TCP flow: data, ACKs.
    tcp: Vec<[Tally; 2]>,
    udp: Vec<Tally>,
    stored: Option<u64>,
    endpoints: Vec<Option<EndpointCounts>>,
    /// Per TCP flow: (seq, len, bytes read in order before).
    misreads: Vec<Vec<(u64, u64, u64)>>,
    reads: Vec<Option<Reads>>,
}

impl PacketConservation {
    pub fn new(tcp_flows: usize, udp_flows: usize) -> Self {
        PacketConservation {
            tcp: vec![[Tally::default(); 2]; tcp_flows],
            udp: vec![Tally::default(); udp_flows],
            stored: None,
            endpoints: vec![None; tcp_flows],
            misreads: vec![Vec::new(); tcp_flows],
            reads: vec![None; tcp_flows],
        }
    }

    #[inline(always)]
    fn tally(&mut self, flow: u32, kind: PacketKind) -> &mut Tally {
        match kind {
            PacketKind::Data => &mut self.tcp[flow as usize][0],
            PacketKind::Ack => &mut self.tcp[flow as usize][1],
            PacketKind::Udp => &mut self.udp[flow as usize],
        }
    }

    /// A data segment or datagram of `flow` reached its destination.
    #[inline(always)]
    pub fn on_delivered(&mut self, flow: u32, kind: PacketKind) {
        self.tally(flow, kind).delivered += 1;
    }

    /// Takes the facts it counts; ignores the others.
    #[inline(always)]
    pub fn on_fact(&mut self, fact: &Fact) {
        match *fact {
            Fact::Transmit { flow, .. } => self.tcp[flow as usize][0].sent += 1,
            Fact::AckSent { flow } => self.tcp[flow as usize][1].sent += 1,
            Fact::UdpSent { flow, .. } => self.udp[flow as usize].sent += 1,
            Fact::Delivered(d) => self.on_delivered(d.flow, d.kind),
            Fact::AckDelivered { flow } => self.tcp[flow as usize][1].delivered += 1,
            Fact::DataDelivered { flow } => self.tcp[flow as usize][0].delivered += 1,
            Fact::Drop(d) => self.tally(d.flow, d.kind).dropped += 1,
            Fact::InFlight {
                flow,
                kind,
                packets,
            } => self.tally(flow, kind).in_flight += packets,
            Fact::Stored { packets } => self.stored = Some(packets),
            Fact::Endpoints { flow, counts } => self.endpoints[flow as usize] = Some(counts),
            Fact::Misread {
                flow,
                seq,
                len,
                after,
            } => {
                let m = &mut self.misreads[flow as usize];
                if m.len() < MAX_MISREADS {
                    m.push((seq, len, after));
                }
            }
            Fact::Reads { flow, reads } => self.reads[flow as usize] = Some(reads),
            _ => {}
        }
    }

    /// TCP flow `flow`'s packets: data, ACKs.
    pub fn tcp(&self, flow: usize) -> [Tally; 2] {
        self.tcp[flow]
    }

    /// UDP flow `flow`'s datagrams.
    pub fn udp(&self, flow: usize) -> Tally {
        self.udp[flow]
    }

    /// The verdict; violations name the flows by `tcp_names` and `udp_names` (by index).
    pub fn verdict(&self, tcp_names: &[String], udp_names: &[String]) -> Conservation {
        let mut v: Vec<String> = Vec::new();
        let all = || self.tcp.iter().flatten().chain(&self.udp);
        let sum = |f: fn(&Tally) -> u64| all().map(f).sum::<u64>();
        let in_flight = sum(|t| t.in_flight);
        if let Some(stored) = self.stored {
            if stored != in_flight {
                v.push(format!(
                    "{stored} packets stored but {in_flight} held by links"
                ));
            }
        }
        for (i, [data, acks]) in self.tcp.iter().enumerate() {
            let n = &tcp_names[i];
            if !data.balanced() {
                v.push(format!(
                    "flow {n:?}: {} data segments sent != {} delivered + {} dropped + {} in flight",
                    data.sent, data.delivered, data.dropped, data.in_flight
                ));
            }
            if !acks.balanced() {
                v.push(format!(
                    "flow {n:?}: {} ACKs sent != {} delivered + {} dropped + {} in flight",
                    acks.sent, acks.delivered, acks.dropped, acks.in_flight
                ));
            }
            if let Some(e) = self.endpoints[i] {
                let checks = [
                    ("sender", e.segments_sent, "segments sent", "got", data.sent),
                    (
                        "receiver",
                        e.segments_received,
                        "segments received",
                        "delivered",
                        data.delivered,
                    ),
                    ("receiver", e.acks_sent, "ACKs sent", "got", acks.sent),
                    (
                        "sender",
                        e.acks_received,
                        "ACKs received",
                        "delivered",
                        acks.delivered,
                    ),
                ];
                for (who, own, what, verb, stated) in checks {
                    if own != stated {
                        v.push(format!(
                            "flow {n:?}: {who} counts {own} {what}, the network {verb} {stated}"
                        ));
                    }
                }
            }
            for &(seq, len, after) in &self.misreads[i] {
                v.push(format!(
                    "flow {n:?}: read of {len} bytes at {seq} after {after} bytes delivered"
                ));
            }
            if let Some(r) = self.reads[i] {
                if r.total != r.in_order {
                    v.push(format!(
                        "flow {n:?}: reads add up to {} bytes but cover {} distinct bytes (some read twice)",
                        r.total, r.in_order
                    ));
                }
                if r.in_order != r.rcv_nxt {
                    v.push(format!(
                        "flow {n:?}: application read {} bytes but the receiver's rcv_nxt is {}",
                        r.in_order, r.rcv_nxt
                    ));
                }
                if r.in_order > r.snd_nxt {
                    v.push(format!(
                        "flow {n:?}: application read {} bytes but the sender sent only {}",
                        r.in_order, r.snd_nxt
                    ));
                }
                if let Some(total) = r.completed {
                    if r.in_order != total {
                        v.push(format!(
                            "flow {n:?}: completed, but {} of {total} bytes were read",
                            r.in_order
                        ));
                    }
                }
            }
        }
        for (i, u) in self.udp.iter().enumerate() {
            if !u.balanced() {
                v.push(format!(
                    "udp {:?}: {} packets sent != {} received + {} dropped + {} in flight",
                    udp_names[i], u.sent, u.delivered, u.dropped, u.in_flight
                ));
            }
        }
        Conservation {
            ok: v.is_empty(),
            violations: v,
            packets_sent: sum(|t| t.sent),
            packets_delivered: sum(|t| t.delivered),
            packets_dropped: sum(|t| t.dropped),
            packets_in_flight: in_flight,
        }
    }
}
