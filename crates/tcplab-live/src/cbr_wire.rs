//! The datagram of a UDP constant-bit-rate flow (`tcplab-flow udp-send`): a 24-byte header,
//! then zeros up to the flow's packet size (counted, as the simulator counts it, as the IP
//! packet: IP + UDP headers + this payload). The header names the datagram for the
//! receiver and for the emulator's drop log ([`peek`], [`crate::ident`]):
//!
//! ```text
//! 0..4   magic "TLCB"
//! 4..6   UDP flow index (big endian)
//! 6..8   zero
//! 8..16  packet number (big endian; the simulator's UDP sequence number)
//! 16..24 send time (ns of the endpoints' clock, big endian)
//! ```

use crate::wire::WireIdent;
use tcplab_core::Time;

pub const CBR_MAGIC: &[u8; 4] = b"TLCB";
pub const CBR_HEADER: usize = 24;

/// A CBR datagram's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CbrHeader {
    pub flow: u16,
    pub seq: u64,
    pub sent_at: Time,
}

impl CbrHeader {
    /// Writes the header followed by zeros into `out`, `payload` bytes in all (at least
    /// [`CBR_HEADER`]).
    pub fn encode(&self, payload: usize, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(CBR_MAGIC);
        out.extend_from_slice(&self.flow.to_be_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.extend_from_slice(&self.sent_at.as_nanos().to_be_bytes());
        out.resize(payload.max(CBR_HEADER), 0);
    }

    /// The header of a UDP payload; None for anything else.
    pub fn decode(b: &[u8]) -> Option<CbrHeader> {
        if b.len() < CBR_HEADER || &b[..4] != CBR_MAGIC {
            return None;
        }
        let u64_at = |i: usize| u64::from_be_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Some(CbrHeader {
            flow: u16::from_be_bytes([b[4], b[5]]),
            seq: u64_at(8),
            sent_at: Time::from_nanos(u64_at(16)),
        })
    }
}

/// The drop log's identity of a CBR datagram: packet `udp`, its flow and packet number.
pub fn peek(b: &[u8]) -> Option<WireIdent> {
    CbrHeader::decode(b).map(|h| WireIdent {
        packet: "udp",
        flow: h.flow,
        seq: h.seq,
        retransmission: 0,
        sent_ns: Some(h.sent_at.as_nanos()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_round_trips_and_is_named_for_the_drop_log() {
        let h = CbrHeader {
            flow: 3,
            seq: 1 << 40,
            sent_at: Time::from_nanos(123_456_789),
        };
        let mut b = Vec::new();
        h.encode(1000, &mut b);
        assert_eq!(b.len(), 1000);
        assert_eq!(CbrHeader::decode(&b), Some(h));
        let id = peek(&b).unwrap();
        assert_eq!(
            (id.packet, id.flow, id.seq, id.retransmission, id.sent_ns),
            ("udp", 3, 1 << 40, 0, Some(123_456_789))
        );
        // Too short, or another magic (tcplab's transport starts with "TL" too).
        assert_eq!(CbrHeader::decode(&b[..CBR_HEADER - 1]), None);
        b[2] = 1;
        assert_eq!(peek(&b), None);
    }
}
