//! The IPv4 header (RFC 791), without options on output; options are skipped on input.

use super::checksum::checksum;
use super::WireError;

/// Bytes of an IPv4 header without options.
pub const IPV4_HEADER_LEN: usize = 20;
/// IP protocol number of TCP.
pub const PROTO_TCP: u8 = 6;
/// IP protocol number of UDP.
pub const PROTO_UDP: u8 = 17;

/// The ECN field of the IP header (RFC 3168), its two low bits of the former TOS byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Ecn {
    /// 00: not ECN-capable.
    #[default]
    NotEct,
    /// 01: ECT(1).
    Ect1,
    /// 10: ECT(0), what ECN-capable TCP senders set.
    Ect0,
    /// 11: Congestion Experienced, set by a router instead of dropping.
    Ce,
}

impl Ecn {
    /// The codepoint of the low two bits of `tos`.
    pub fn from_bits(tos: u8) -> Ecn {
        match tos & 3 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
    /// The two-bit codepoint.
    pub fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0,
            Ecn::Ect1 => 1,
            Ecn::Ect0 => 2,
            Ecn::Ce => 3,
        }
    }
    /// The field of a data segment from tcplab-core's flags: CE when marked, else ECT(0)
    /// when ECN-capable.
    pub fn from_flags(ect: bool, ce: bool) -> Ecn {
        match (ect, ce) {
            (_, true) => Ecn::Ce,
            (true, false) => Ecn::Ect0,
            (false, false) => Ecn::NotEct,
        }
    }
    /// ECN-capable transport: any codepoint but Not-ECT (CE implies the sender set ECT).
    pub fn is_ect(self) -> bool {
        self != Ecn::NotEct
    }
    /// Congestion Experienced.
    pub fn is_ce(self) -> bool {
        self == Ecn::Ce
    }
}

/// An IPv4 header. Emitted without options (IHL 5); decoding skips options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Header {
    /// Differentiated Services code point (six bits, the high bits of the former TOS byte;
    /// higher bits are not written).
    pub dscp: u8,
    /// ECN codepoint.
    pub ecn: Ecn,
    /// Total length of the packet, header included.
    pub total_len: u16,
    /// Identification.
    pub ident: u16,
    /// Don't Fragment.
    pub dont_fragment: bool,
    /// Time to live.
    pub ttl: u8,
    /// Transport protocol ([`PROTO_TCP`], [`PROTO_UDP`]).
    pub protocol: u8,
    /// Source address.
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
}

impl Default for Ipv4Header {
    /// What Linux sends: DF set, TTL 64, DSCP 0, Not-ECT; protocol TCP.
    fn default() -> Self {
        Ipv4Header {
            dscp: 0,
            ecn: Ecn::NotEct,
            total_len: IPV4_HEADER_LEN as u16,
            ident: 0,
            dont_fragment: true,
            ttl: 64,
            protocol: PROTO_TCP,
            src: [0; 4],
            dst: [0; 4],
        }
    }
}

impl Ipv4Header {
    /// Writes the 20-byte header, header checksum included, into `out`.
    pub fn write(&self, out: &mut [u8; IPV4_HEADER_LEN]) {
        out[0] = 0x45;
        out[1] = ((self.dscp & 0x3f) << 2) | self.ecn.bits();
        out[2..4].copy_from_slice(&self.total_len.to_be_bytes());
        out[4..6].copy_from_slice(&self.ident.to_be_bytes());
        out[6] = if self.dont_fragment { 0x40 } else { 0 };
        out[7] = 0;
        out[8] = self.ttl;
        out[9] = self.protocol;
        out[10] = 0;
        out[11] = 0;
        out[12..16].copy_from_slice(&self.src);
        out[16..20].copy_from_slice(&self.dst);
        let sum = checksum(&out[..]);
        out[10..12].copy_from_slice(&sum.to_be_bytes());
    }

    /// Appends the 20-byte header to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let mut h = [0u8; IPV4_HEADER_LEN];
        self.write(&mut h);
        out.extend_from_slice(&h);
    }

    /// Decodes the header at the start of `packet`, verifying version, header length,
    /// total length (at most the buffer; bytes after it are link padding and ignored) and
    /// header checksum; fragments are refused. Returns the header and the IP payload
    /// (`total_len` minus the header).
    pub fn parse(packet: &[u8]) -> Result<(Ipv4Header, &[u8]), WireError> {
        let Some(fixed) = packet.first_chunk::<IPV4_HEADER_LEN>() else {
            return Err(WireError::Truncated {
                what: "IPv4 header",
                need: IPV4_HEADER_LEN,
                have: packet.len(),
            });
        };
        let version = fixed[0] >> 4;
        if version != 4 {
            return Err(WireError::IpVersion(version));
        }
        let ihl = fixed[0] & 0x0f;
        if ihl < 5 {
            return Err(WireError::IpHeaderLength(ihl));
        }
        let header = ihl as usize * 4;
        let Some(head) = packet.get(..header) else {
            return Err(WireError::Truncated {
                what: "IPv4 header with options",
                need: header,
                have: packet.len(),
            });
        };
        let total_len = u16::from_be_bytes([fixed[2], fixed[3]]);
        let Some(payload) = packet.get(header..total_len as usize) else {
            return Err(WireError::IpTotalLength {
                total: total_len,
                header,
                have: packet.len(),
            });
        };
        if checksum(head) != 0 {
            return Err(WireError::IpChecksum);
        }
        let frag = u16::from_be_bytes([fixed[6], fixed[7]]);
        if frag & 0x3fff != 0 {
            return Err(WireError::Fragment);
        }
        let h = Ipv4Header {
            dscp: fixed[1] >> 2,
            ecn: Ecn::from_bits(fixed[1]),
            total_len,
            ident: u16::from_be_bytes([fixed[4], fixed[5]]),
            dont_fragment: frag & 0x4000 != 0,
            ttl: fixed[8],
            protocol: fixed[9],
            src: [fixed[12], fixed[13], fixed[14], fixed[15]],
            dst: [fixed[16], fixed[17], fixed[18], fixed[19]],
        };
        Ok((h, payload))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Ipv4Header {
        Ipv4Header {
            dscp: 10,
            ecn: Ecn::Ect0,
            total_len: 60,
            ident: 0x1c46,
            dont_fragment: true,
            ttl: 64,
            protocol: PROTO_TCP,
            src: [172, 16, 10, 99],
            dst: [172, 16, 10, 12],
        }
    }

    #[test]
    fn round_trip_every_ecn_codepoint() {
        for ecn in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce] {
            let h = Ipv4Header { ecn, ..sample() };
            let mut b = Vec::new();
            h.emit(&mut b);
            b.resize(60, 0xaa);
            assert_eq!(b[1], (10 << 2) | ecn.bits());
            assert_eq!(checksum(&b[..20]), 0);
            let (d, payload) = Ipv4Header::parse(&b).expect("valid");
            assert_eq!(d, h);
            assert_eq!(payload.len(), 40);
            assert_eq!(Ecn::from_bits(ecn.bits()), ecn);
        }
        assert_eq!(Ecn::from_flags(true, false), Ecn::Ect0);
        assert_eq!(Ecn::from_flags(true, true), Ecn::Ce);
        assert_eq!(Ecn::from_flags(false, false), Ecn::NotEct);
        assert!(Ecn::Ce.is_ect() && Ecn::Ce.is_ce() && !Ecn::Ect0.is_ce());
    }

    #[test]
    fn known_header_checksum() {
        // The classic example header (Wikipedia "IPv4 header checksum"): checksum b1e6.
        let b = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(checksum(&b), 0xb861);
        let h = Ipv4Header {
            dscp: 0,
            ecn: Ecn::NotEct,
            total_len: 0x73,
            ident: 0,
            dont_fragment: true,
            ttl: 64,
            protocol: PROTO_UDP,
            src: [192, 168, 0, 1],
            dst: [192, 168, 0, 199],
        };
        let mut out = [0u8; 20];
        h.write(&mut out);
        assert_eq!(&out[10..12], &[0xb8, 0x61]);
    }

    #[test]
    fn refuses_malformed_headers() {
        let mut b = Vec::new();
        sample().emit(&mut b);
        b.resize(60, 0);
        let err = |b: &[u8]| Ipv4Header::parse(b).err();
        assert!(matches!(err(&b[..19]), Some(WireError::Truncated { .. })));
        let mut v6 = b.clone();
        v6[0] = 0x65;
        assert_eq!(err(&v6), Some(WireError::IpVersion(6)));
        let mut ihl = b.clone();
        ihl[0] = 0x44;
        assert_eq!(err(&ihl), Some(WireError::IpHeaderLength(4)));
        let mut opts = b.clone();
        opts[0] = 0x4f; // 60-byte header: fits, but the checksum no longer verifies
        assert!(err(&opts).is_some());
        assert!(matches!(
            err(&b[..59]),
            Some(WireError::IpTotalLength { total: 60, .. })
        ));
        let mut short_total = b.clone();
        short_total[2..4].copy_from_slice(&10u16.to_be_bytes());
        assert!(matches!(
            err(&short_total),
            Some(WireError::IpTotalLength { .. })
        ));
        let mut bad = b.clone();
        bad[8] ^= 1;
        assert_eq!(err(&bad), Some(WireError::IpChecksum));
        let mut frag = sample();
        frag.dont_fragment = false;
        let mut f = Vec::new();
        frag.emit(&mut f);
        f.resize(60, 0);
        f[6] |= 0x20; // MF
        f[10] = 0;
        f[11] = 0;
        let s = checksum(&f[..20]);
        f[10..12].copy_from_slice(&s.to_be_bytes());
        assert_eq!(err(&f), Some(WireError::Fragment));
        // Trailing link padding is ignored.
        let mut padded = b.clone();
        padded.extend_from_slice(&[0; 6]);
        assert_eq!(Ipv4Header::parse(&padded).map(|(_, p)| p.len()), Ok(40));
    }
}
