//! The UDP header (RFC 768), for the simulator's UDP flows in pcap files.

use super::checksum::{fold, pseudo_header_sum, sum16};
use super::{WireError, PROTO_UDP};

/// Bytes of a UDP header.
pub const UDP_HEADER_LEN: usize = 8;

/// A UDP header. The length field is the header plus payload; the checksum is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdpHeader {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Header plus payload bytes.
    pub len: u16,
}

impl UdpHeader {
    /// Appends the header with its checksum, for a datagram from `src` to `dst` whose
    /// payload (`self.len - 8` bytes) has running sum `payload_sum` ([`sum16`]; 0 for
    /// zeros). A computed checksum of 0 is sent as 0xffff (0 means "no checksum").
    pub fn emit(&self, out: &mut Vec<u8>, src: [u8; 4], dst: [u8; 4], payload_sum: u64) {
        let len = self.len as u32;
        emit_raw(
            out,
            self.src_port,
            self.dst_port,
            len,
            src,
            dst,
            payload_sum,
        );
    }

    /// Decodes a datagram (the whole IP payload) between `src` and `dst`, verifying its
    /// length and (unless 0) its checksum. Returns the header and the payload.
    pub fn parse(
        datagram: &[u8],
        src: [u8; 4],
        dst: [u8; 4],
    ) -> Result<(UdpHeader, &[u8]), WireError> {
        let Some(h) = datagram.first_chunk::<UDP_HEADER_LEN>() else {
            return Err(WireError::Truncated {
                what: "UDP header",
                need: UDP_HEADER_LEN,
                have: datagram.len(),
            });
        };
        let len = u16::from_be_bytes([h[4], h[5]]);
        if (len as usize) < UDP_HEADER_LEN || len as usize != datagram.len() {
            return Err(WireError::UdpLength(len));
        }
        let sum = u16::from_be_bytes([h[6], h[7]]);
        if sum != 0
            && fold(sum16(
                pseudo_header_sum(src, dst, PROTO_UDP, len as u32),
                datagram,
            )) != 0
        {
            return Err(WireError::UdpChecksum);
        }
        let u = UdpHeader {
            src_port: u16::from_be_bytes([h[0], h[1]]),
            dst_port: u16::from_be_bytes([h[2], h[3]]),
            len,
        };
        Ok((u, &datagram[UDP_HEADER_LEN..]))
    }
}

/// The header of a datagram of `l4_len` bytes: the length field holds its low 16 bits, the
/// pseudo-header the full value (as the simulator's pcap writer always did).
pub(super) fn emit_raw(
    out: &mut Vec<u8>,
    src_port: u16,
    dst_port: u16,
    l4_len: u32,
    src: [u8; 4],
    dst: [u8; 4],
    payload_sum: u64,
) {
    let mut h = [0u8; UDP_HEADER_LEN];
    h[0..2].copy_from_slice(&src_port.to_be_bytes());
    h[2..4].copy_from_slice(&dst_port.to_be_bytes());
    h[4..6].copy_from_slice(&(l4_len as u16).to_be_bytes());
    let acc = pseudo_header_sum(src, dst, PROTO_UDP, l4_len);
    let mut sum = fold(sum16(acc, &h) + payload_sum);
    if sum == 0 {
        sum = 0xffff;
    }
    h[6..8].copy_from_slice(&sum.to_be_bytes());
    out.extend_from_slice(&h);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_checksum() {
        let (src, dst) = ([10, 0, 0, 1], [10, 0, 0, 2]);
        let payload = b"hello";
        let u = UdpHeader {
            src_port: 1234,
            dst_port: 9,
            len: 13,
        };
        let mut v = Vec::new();
        u.emit(&mut v, src, dst, sum16(0, payload));
        v.extend_from_slice(payload);
        assert_eq!(UdpHeader::parse(&v, src, dst), Ok((u, &payload[..])));
        let mut bad = v.clone();
        bad[9] ^= 1;
        assert_eq!(
            UdpHeader::parse(&bad, src, dst),
            Err(WireError::UdpChecksum)
        );
        assert_eq!(
            UdpHeader::parse(&v[..12], src, dst),
            Err(WireError::UdpLength(13))
        );
        assert!(UdpHeader::parse(&v[..7], src, dst).is_err());
        // Checksum 0: not checked.
        let mut none = v.clone();
        none[6] = 0;
        none[7] = 0;
        none[9] ^= 1;
        assert!(UdpHeader::parse(&none, src, dst).is_ok());
    }
}
