//! A packet's identity from its IPv4 header, for the drop log: addresses, protocol, ports
//! (TCP/UDP, first fragment), IP id and length; for the probe's UDP packets (payload
//! starting with [`PROBE_MAGIC`]) also its sequence number; for TCP segments the sequence
//! number and payload length from the TCP header (to join drops with a kernel TCP flow);
//! for tcplab's transport (either framing, [`crate::wire::peek`]) the packet kind, flow,
//! sequence (data: first byte; ACK: cumulative ACK), transmission number and send time;
//! for a UDP constant-bit-rate datagram ([`crate::cbr_wire::peek`]) its flow, packet number
//! and send time (packet `udp`).

use crate::wire::{self, WireIdent};
use serde::Serialize;
use std::net::Ipv4Addr;

/// First bytes of a probe packet's UDP payload, followed by its sequence number (u64, big
/// endian) and its send time (u64 ns of `CLOCK_MONOTONIC`, big endian).
pub const PROBE_MAGIC: &[u8; 4] = b"TLPB";

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ident {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub proto: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sport: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dport: Option<u16>,
    pub ip_id: u16,
    pub len: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe_seq: Option<u64>,
    /// TCP: the segment's sequence number (raw, as on the wire).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp_seq: Option<u32>,
    /// TCP: payload bytes (IP length minus the IP and TCP headers); 0 for a pure ACK.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp_payload: Option<u16>,
    /// TCP: the flags byte (FIN 0x01, SYN 0x02, RST 0x04, ...; not in the drop log).
    #[serde(skip)]
    pub tcp_flags: Option<u8>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub transport: Option<WireIdent>,
}

/// The identity of an IPv4 packet; None for anything else (too short, not version 4).
pub fn ipv4(p: &[u8]) -> Option<Ident> {
    if p.len() < 20 || p[0] >> 4 != 4 {
        return None;
    }
    let ihl = (p[0] & 0x0f) as usize * 4;
    let be16 = |i: usize| u16::from_be_bytes([p[i], p[i + 1]]);
    let proto = p[9];
    let first_fragment = be16(6) & 0x1fff == 0;
    let l4 = p.get(ihl..).filter(|_| first_fragment && ihl >= 20);
    let ports = l4
        .filter(|l| (proto == 6 || proto == 17) && l.len() >= 4)
        .map(|l| {
            (
                u16::from_be_bytes([l[0], l[1]]),
                u16::from_be_bytes([l[2], l[3]]),
            )
        });
    let probe_seq = l4
        .filter(|_| proto == 17)
        .and_then(|l| l.get(8..20))
        .filter(|pl| &pl[..4] == PROBE_MAGIC)
        .map(|pl| u64::from_be_bytes(pl[4..12].try_into().expect("8 bytes")));
    let tcp = l4.filter(|l| proto == 6 && l.len() >= 13).map(|l| {
        let seq = u32::from_be_bytes([l[4], l[5], l[6], l[7]]);
        let headers = ihl + (l[12] >> 4) as usize * 4;
        let flags = l.get(13).copied();
        (
            seq,
            (be16(2) as usize).saturating_sub(headers) as u16,
            flags,
        )
    });
    let transport = l4
        .filter(|_| proto == 17)
        .and_then(|l| l.get(8..))
        .and_then(|pl| crate::cbr_wire::peek(pl).or_else(|| wire::peek(pl)));
    Some(Ident {
        src: Ipv4Addr::new(p[12], p[13], p[14], p[15]),
        dst: Ipv4Addr::new(p[16], p[17], p[18], p[19]),
        proto,
        sport: ports.map(|x| x.0),
        dport: ports.map(|x| x.1),
        ip_id: be16(4),
        len: be16(2),
        probe_seq,
        tcp_seq: tcp.map(|t| t.0),
        tcp_payload: tcp.map(|t| t.1),
        tcp_flags: tcp.and_then(|t| t.2),
        transport,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn udp(payload: &[u8], frag: u16) -> Vec<u8> {
        let len = (28 + payload.len()) as u16;
        let mut p = vec![
            0x45, 0, 0, 0, 0x12, 0x34, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        p[2..4].copy_from_slice(&len.to_be_bytes());
        p[6..8].copy_from_slice(&frag.to_be_bytes());
        p.extend_from_slice(&[0x13, 0x88, 0x13, 0x89, 0, 0, 0, 0]);
        p.extend_from_slice(payload);
        p
    }

    #[test]
    fn a_probe_packet_is_named_by_its_sequence_number() {
        let mut pl = PROBE_MAGIC.to_vec();
        pl.extend_from_slice(&77u64.to_be_bytes());
        pl.extend_from_slice(&[0; 8]);
        let id = ipv4(&udp(&pl, 0)).unwrap();
        assert_eq!(id.src, Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(id.dst, Ipv4Addr::new(10, 0, 0, 2));
        assert_eq!((id.proto, id.sport, id.dport), (17, Some(5000), Some(5001)));
        assert_eq!((id.ip_id, id.len), (0x1234, 48));
        assert_eq!(id.probe_seq, Some(77));
    }

    #[test]
    fn a_tcp_segment_is_named_by_its_sequence_number_and_payload() {
        // IP (20) + TCP with 12 bytes of options (data offset 8 words) + 100 bytes payload.
        let mut p = vec![
            0x45, 0, 0, 0, 0x00, 0x07, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        p[2..4].copy_from_slice(&(20u16 + 32 + 100).to_be_bytes());
        p.extend_from_slice(&[0x9c, 0x40, 0x14, 0x51]); // ports 40000 -> 5201
        p.extend_from_slice(&0xfffe_0001u32.to_be_bytes()); // seq
        p.extend_from_slice(&[0, 0, 0, 1, 0x80, 0x10, 0, 0, 0, 0, 0, 0]); // ack, doff 8, ACK
        p.extend_from_slice(&[1; 12]);
        p.extend_from_slice(&[0xab; 100]);
        let id = ipv4(&p).unwrap();
        assert_eq!((id.proto, id.sport, id.dport), (6, Some(40000), Some(5201)));
        assert_eq!(
            (id.tcp_seq, id.tcp_payload, id.probe_seq),
            (Some(0xfffe_0001), Some(100), None)
        );
        // A pure ACK has no payload; a UDP packet has no TCP fields.
        p[2..4].copy_from_slice(&52u16.to_be_bytes());
        assert_eq!(ipv4(&p[..52]).unwrap().tcp_payload, Some(0));
        assert_eq!(ipv4(&udp(b"x", 0)).unwrap().tcp_seq, None);
    }

    #[test]
    fn other_packets_keep_their_headers_only() {
        let id = ipv4(&udp(b"hello, world", 0)).unwrap();
        assert_eq!(id.probe_seq, None);
        // A later fragment has no ports.
        let id = ipv4(&udp(b"TLPB", 0x0010)).unwrap();
        assert_eq!((id.sport, id.probe_seq), (None, None));
        assert_eq!(id.transport, None);
        assert_eq!(ipv4(&[0x60; 40]), None);
        assert_eq!(ipv4(&[0x45; 10]), None);
    }

    #[test]
    fn a_transport_datagram_is_named_by_flow_sequence_and_transmission() {
        use tcplab_core::{DataSegment, Seq, Time};
        for (f, len) in [(wire::Framing::Tcplab, 4), (wire::Framing::Eth, 1024)] {
            let seg = DataSegment {
                seq: Seq(14_336),
                len,
                ts_val: Some(Time::from_micros(42)),
                ts_ecr: None,
                retransmission: 2,
                ect: false,
                ce: false,
                cwr: false,
            };
            let mut pl = Vec::new();
            f.encode_data(
                3,
                &seg,
                Time::from_micros(42),
                &vec![7; len as usize],
                &mut pl,
            )
            .unwrap();
            let id = ipv4(&udp(&pl, 0)).unwrap();
            let t = id.transport.unwrap();
            assert_eq!(
                (t.packet, t.flow, t.seq, t.retransmission, t.sent_ns),
                ("data", 3, 14_336, 2, Some(42_000))
            );
            let line = serde_json::to_value(&id).unwrap();
            assert_eq!(line["flow"], 3);
            assert_eq!(line["seq"], 14_336);
            assert_eq!(line["retransmission"], 2);
            assert_eq!(line["packet"], "data");
        }
    }
}
