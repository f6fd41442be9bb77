//! Why a packet could not be decoded.

use std::fmt;

/// A malformed or unsupported packet. Decoding never panics: every defect of the input is
/// one of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// The buffer ends before the structure `what` does.
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Bytes it needs.
        need: usize,
        /// Bytes there were.
        have: usize,
    },
    /// IP version other than 4.
    IpVersion(u8),
    /// IPv4 header length (IHL, in 32-bit words) below 5.
    IpHeaderLength(u8),
    /// IPv4 total length below the header length or beyond the buffer.
    IpTotalLength {
        /// The total length field.
        total: u16,
        /// The header length in bytes.
        header: usize,
        /// Bytes in the buffer.
        have: usize,
    },
    /// The IPv4 header checksum does not verify.
    IpChecksum,
    /// A fragment (MF set or a fragment offset): tcplab does not reassemble.
    Fragment,
    /// The IP payload is not the protocol asked for.
    Protocol {
        /// The protocol expected (6 TCP, 17 UDP).
        expected: u8,
        /// The protocol field.
        found: u8,
    },
    /// TCP data offset (in 32-bit words) below 5 or beyond the segment.
    TcpDataOffset(u8),
    /// A TCP option whose length byte is missing, below 2, runs past the option space, or
    /// is wrong for its kind.
    TcpOption {
        /// The option kind.
        kind: u8,
        /// Its length byte (0 when missing).
        len: u8,
    },
    /// The TCP checksum does not verify.
    TcpChecksum,
    /// UDP length field below 8 or not the IP payload length.
    UdpLength(u16),
    /// The UDP checksum does not verify.
    UdpChecksum,
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            WireError::Truncated { what, need, have } => {
                write!(f, "truncated {what}: needs {need} bytes, has {have}")
            }
            WireError::IpVersion(v) => write!(f, "IP version {v}, expected 4"),
            WireError::IpHeaderLength(ihl) => write!(f, "IPv4 header length {ihl} words < 5"),
            WireError::IpTotalLength {
                total,
                header,
                have,
            } => write!(
                f,
                "IPv4 total length {total} outside [{header}, {have}] (header, buffer)"
            ),
            WireError::IpChecksum => write!(f, "bad IPv4 header checksum"),
            WireError::Fragment => write!(f, "IPv4 fragment (not reassembled)"),
            WireError::Protocol { expected, found } => {
                write!(f, "IP protocol {found}, expected {expected}")
            }
            WireError::TcpDataOffset(o) => write!(f, "bad TCP data offset {o} words"),
            WireError::TcpOption { kind, len } => {
                write!(f, "malformed TCP option kind {kind} length {len}")
            }
            WireError::TcpChecksum => write!(f, "bad TCP checksum"),
            WireError::UdpLength(l) => write!(f, "bad UDP length {l}"),
            WireError::UdpChecksum => write!(f, "bad UDP checksum"),
        }
    }
}

impl std::error::Error for WireError {}
