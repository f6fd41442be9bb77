//! TCP on the wire: one codec for IPv4 + TCP (and UDP) packets, shared by the simulator's
//! pcap writer and the live connection layer (docs/real-tcp.md).
//!
//! - [`Ipv4Header`]: encode and decode, header checksum, DSCP and the ECN field ([`Ecn`]).
//! - [`TcpHeader`], [`TcpOptions`], [`TcpFlags`]: flags including ECE and CWR; options MSS,
//!   window scale, SACK-permitted, timestamps and SACK blocks in Linux's order and padding.
//! - [`UdpHeader`]: for the simulator's UDP flows.
//! - [`SeqMap`], [`TsClock`]: 32-bit sequence numbers and timestamps to and from the core's
//!   64-bit sequence space and nanosecond clock.
//! - [`emit_tcp`], [`emit_tcp_headers`], [`parse_tcp`]: whole packets with both checksums.
//!
//! Encoding appends to a caller's `Vec<u8>` (reused across packets: no allocation once it
//! has grown); decoding borrows the input and never panics: malformed input is a
//! [`WireError`].

#![warn(missing_docs)]

pub mod checksum;
mod error;
pub mod ipv4;
pub mod seqmap;
pub mod tcp;
pub mod udp;

pub use error::WireError;
pub use ipv4::{Ecn, Ipv4Header, IPV4_HEADER_LEN, PROTO_TCP, PROTO_UDP};
pub use seqmap::{SeqMap, TsClock};
pub use tcp::{
    TcpFlags, TcpHeader, TcpOptions, WireSackBlock, WireSackList, MAX_OPTIONS_LEN,
    MAX_WIRE_SACK_BLOCKS, TCP_HEADER_LEN,
};
pub use udp::{UdpHeader, UDP_HEADER_LEN};

/// Appends an IPv4 + TCP packet to `out`: `ip` (its `protocol` and `total_len` are set
/// here), `tcp` and `payload`, with both checksums. Returns the packet's length.
pub fn emit_tcp(out: &mut Vec<u8>, ip: &Ipv4Header, tcp: &TcpHeader, payload: &[u8]) -> usize {
    let start = out.len();
    emit_tcp_headers(
        out,
        ip,
        tcp,
        payload.len() as u32,
        checksum::sum16(0, payload),
    );
    out.extend_from_slice(payload);
    out.len() - start
}

/// Appends only the IPv4 and TCP headers of a packet whose payload (not written) is
/// `payload_len` bytes with running sum `payload_sum` ([`checksum::sum16`] of it; 0 for
/// zeros): what a pcap record of a simulated packet needs. Lengths and checksums count the
/// payload. Returns the IP total length (the header field holds its low 16 bits).
pub fn emit_tcp_headers(
    out: &mut Vec<u8>,
    ip: &Ipv4Header,
    tcp: &TcpHeader,
    payload_len: u32,
    payload_sum: u64,
) -> u32 {
    let start = out.len();
    out.extend_from_slice(&[0; IPV4_HEADER_LEN]);
    let l4 = out.len();
    tcp.emit(out);
    let total = (out.len() - start) as u32 + payload_len;
    let ip = Ipv4Header {
        protocol: PROTO_TCP,
        total_len: total as u16,
        ..*ip
    };
    if let Some(head) = out[start..].first_chunk_mut::<IPV4_HEADER_LEN>() {
        ip.write(head);
    }
    tcp::finish_checksum(&mut out[l4..], ip.src, ip.dst, payload_len, payload_sum);
    total
}

/// Appends the IPv4 and UDP headers of a datagram of IP total length `total` (at least 28)
/// whose payload (not written) has running sum `payload_sum` (0 for zeros). Returns `total`.
pub fn emit_udp_headers(
    out: &mut Vec<u8>,
    ip: &Ipv4Header,
    src_port: u16,
    dst_port: u16,
    total: u32,
    payload_sum: u64,
) -> u32 {
    let total = total.max((IPV4_HEADER_LEN + UDP_HEADER_LEN) as u32);
    let ip = Ipv4Header {
        protocol: PROTO_UDP,
        total_len: total as u16,
        ..*ip
    };
    ip.emit(out);
    udp::emit_raw(
        out,
        src_port,
        dst_port,
        total - IPV4_HEADER_LEN as u32,
        ip.src,
        ip.dst,
        payload_sum,
    );
    total
}

/// A decoded IPv4 + TCP packet, borrowing its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpPacket<'a> {
    /// The IP header.
    pub ip: Ipv4Header,
    /// The TCP header with its options.
    pub tcp: TcpHeader,
    /// The segment's data.
    pub payload: &'a [u8],
}

/// Decodes an IPv4 packet carrying TCP, verifying the IP header (version, lengths,
/// checksum, no fragment) and the TCP checksum over the pseudo-header and segment.
pub fn parse_tcp(packet: &[u8]) -> Result<TcpPacket<'_>, WireError> {
    let (ip, segment) = Ipv4Header::parse(packet)?;
    if ip.protocol != PROTO_TCP {
        return Err(WireError::Protocol {
            expected: PROTO_TCP,
            found: ip.protocol,
        });
    }
    let acc = checksum::pseudo_header_sum(ip.src, ip.dst, PROTO_TCP, segment.len() as u32);
    let (tcp, payload) = TcpHeader::parse(segment)?;
    if checksum::fold(checksum::sum16(acc, segment)) != 0 {
        return Err(WireError::TcpChecksum);
    }
    Ok(TcpPacket { ip, tcp, payload })
}

#[cfg(test)]
mod tests;
