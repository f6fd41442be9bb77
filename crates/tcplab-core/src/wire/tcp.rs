//! The TCP header (RFC 9293) and the options tcplab uses: MSS, window scale,
//! SACK-permitted, SACK blocks (RFC 2018) and timestamps (RFC 7323).
//!
//! # Option layout
//!
//! [`TcpHeader::emit`] writes options in the order and padding of Linux's
//! `tcp_options_write` (net/ipv4/tcp_output.c), every option 32-bit aligned:
//!
//! | option | bytes |
//! |---|---|
//! | MSS | `02 04 mm mm` |
//! | timestamps, with SACK-permitted | `04 02 08 0a` TSval TSecr |
//! | timestamps, without | `01 01 08 0a` TSval TSecr |
//! | SACK-permitted without timestamps | `01 01 04 02` |
//! | window scale | `01 03 03 ws` |
//! | SACK blocks | `01 01 05 len` then the blocks |
//!
//! A SYN with everything is `MSS, SACK-perm+TS, NOP+WS` (20 bytes); an established segment
//! is `NOP NOP TS` then `NOP NOP SACK`. SACK blocks are written while they fit in the
//! 40 bytes of option space (4 without timestamps, 3 with); the rest are cut
//! ([`TcpHeader::sack_blocks_cut`]).
//!
//! Decoding accepts options in any order and alignment, skips unknown kinds and stops at
//! End-of-Option-List; a known option with the wrong length, a length below 2 or an option
//! running past the header is an error.

use super::checksum::{fold, pseudo_header_sum, sum16};
use super::WireError;

/// Bytes of a TCP header without options.
pub const TCP_HEADER_LEN: usize = 20;
/// Most option bytes a TCP header holds (data offset 15 words).
pub const MAX_OPTIONS_LEN: usize = 40;
/// Most SACK blocks that fit in the option space (2 + 4 x 8 = 34 <= 40 bytes).
pub const MAX_WIRE_SACK_BLOCKS: usize = 4;

const OPT_EOL: u8 = 0;
const OPT_NOP: u8 = 1;
const OPT_MSS: u8 = 2;
const OPT_WS: u8 = 3;
const OPT_SACK_PERM: u8 = 4;
const OPT_SACK: u8 = 5;
const OPT_TS: u8 = 8;

/// TCP header flags (the low byte of the flags field; NS is not supported).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    /// No more data from the sender.
    pub const FIN: TcpFlags = TcpFlags(0x01);
    /// Synchronize sequence numbers.
    pub const SYN: TcpFlags = TcpFlags(0x02);
    /// Reset the connection.
    pub const RST: TcpFlags = TcpFlags(0x04);
    /// Push.
    pub const PSH: TcpFlags = TcpFlags(0x08);
    /// The acknowledgment field is significant.
    pub const ACK: TcpFlags = TcpFlags(0x10);
    /// The urgent pointer is significant.
    pub const URG: TcpFlags = TcpFlags(0x20);
    /// ECN-Echo (RFC 3168).
    pub const ECE: TcpFlags = TcpFlags(0x40);
    /// Congestion Window Reduced (RFC 3168).
    pub const CWR: TcpFlags = TcpFlags(0x80);

    /// All flags of `other` are set.
    #[inline]
    pub fn contains(self, other: TcpFlags) -> bool {
        self.0 & other.0 == other.0
    }
    /// `self` with `other`'s flags set when `on`.
    #[inline]
    pub fn with(self, other: TcpFlags, on: bool) -> TcpFlags {
        if on {
            TcpFlags(self.0 | other.0)
        } else {
            self
        }
    }
}

impl std::ops::BitOr for TcpFlags {
    type Output = TcpFlags;
    fn bitor(self, o: TcpFlags) -> TcpFlags {
        TcpFlags(self.0 | o.0)
    }
}

/// One SACK block in wire sequence numbers: `[left, right)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WireSackBlock {
    /// First sequence number of the block.
    pub left: u32,
    /// Sequence number after the block's last byte.
    pub right: u32,
}

/// The options of one segment. `Default` is no options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpOptions {
    /// Maximum segment size (SYN only).
    pub mss: Option<u16>,
    /// Window scale shift (SYN only). Emitted as given; decoded as received (RFC 7323 says
    /// to use 14 for larger values: the connection layer clamps).
    pub window_scale: Option<u8>,
    /// SACK permitted (SYN only).
    pub sack_permitted: bool,
    /// Timestamps: (TSval, TSecr).
    pub timestamps: Option<(u32, u32)>,
    /// SACK blocks, first block first.
    pub sack_blocks: WireSackList,
}

/// Up to [`MAX_WIRE_SACK_BLOCKS`] SACK blocks, and how many more were offered. Lists are
/// equal when their blocks and cut counts are.
#[derive(Clone, Copy, Debug, Default, Eq)]
pub struct WireSackList {
    blocks: [WireSackBlock; MAX_WIRE_SACK_BLOCKS],
    len: u8,
    cut: u8,
}

impl WireSackList {
    /// Appends a block. Blocks beyond [`MAX_WIRE_SACK_BLOCKS`] are counted as cut (no
    /// header could carry them).
    #[inline]
    pub fn push(&mut self, b: WireSackBlock) {
        if (self.len as usize) < MAX_WIRE_SACK_BLOCKS {
            self.blocks[self.len as usize] = b;
            self.len += 1;
        } else {
            self.cut = self.cut.saturating_add(1);
        }
    }
    /// Removes all blocks.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
        self.cut = 0;
    }
    /// The blocks held.
    #[inline]
    pub fn as_slice(&self) -> &[WireSackBlock] {
        &self.blocks[..self.len as usize]
    }
    /// Blocks offered beyond the capacity.
    #[inline]
    pub fn cut(&self) -> usize {
        self.cut as usize
    }
}

impl PartialEq for WireSackList {
    fn eq(&self, o: &Self) -> bool {
        self.as_slice() == o.as_slice() && self.cut == o.cut
    }
}

impl TcpOptions {
    /// Appends a SACK block ([`WireSackList::push`]); the encoder may cut more when other
    /// options leave less room.
    #[inline]
    pub fn push_sack(&mut self, b: WireSackBlock) {
        self.sack_blocks.push(b);
    }
    /// Removes all SACK blocks.
    #[inline]
    pub fn clear_sack(&mut self) {
        self.sack_blocks.clear();
    }
    /// The SACK blocks held (decoded, or pushed and not cut at push).
    #[inline]
    pub fn sack(&self) -> &[WireSackBlock] {
        self.sack_blocks.as_slice()
    }

    /// Option bytes before the SACK option (all 32-bit aligned).
    fn fixed_len(&self) -> usize {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        if self.timestamps.is_some() {
            n += 12;
        } else if self.sack_permitted {
            n += 4;
        }
        if self.window_scale.is_some() {
            n += 4;
        }
        n
    }

    /// SACK blocks the encoder writes: as many as fit after the other options (Linux:
    /// `(remaining - 4) / 8`, needing room for at least one block).
    pub fn sack_blocks_emitted(&self) -> usize {
        let room = MAX_OPTIONS_LEN.saturating_sub(self.fixed_len());
        if room < 4 + 8 {
            0
        } else {
            ((room - 4) / 8).min(self.sack().len())
        }
    }

    /// SACK blocks pushed but not written (no room in the header).
    pub fn sack_blocks_cut(&self) -> usize {
        self.sack().len() - self.sack_blocks_emitted() + self.sack_blocks.cut()
    }

    /// Bytes the encoder writes: a multiple of 4, at most [`MAX_OPTIONS_LEN`] unless the
    /// fixed options alone exceed it (they cannot: at most 20 bytes).
    pub fn len(&self) -> usize {
        let blocks = self.sack_blocks_emitted();
        self.fixed_len() + if blocks > 0 { 4 + 8 * blocks } else { 0 }
    }

    /// No option bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends the options in Linux's order ([module docs](self)).
    pub fn emit(&self, out: &mut Vec<u8>) {
        if let Some(mss) = self.mss {
            let m = mss.to_be_bytes();
            out.extend_from_slice(&[OPT_MSS, 4, m[0], m[1]]);
        }
        if let Some((val, ecr)) = self.timestamps {
            if self.sack_permitted {
                out.extend_from_slice(&[OPT_SACK_PERM, 2, OPT_TS, 10]);
            } else {
                out.extend_from_slice(&[OPT_NOP, OPT_NOP, OPT_TS, 10]);
            }
            out.extend_from_slice(&val.to_be_bytes());
            out.extend_from_slice(&ecr.to_be_bytes());
        } else if self.sack_permitted {
            out.extend_from_slice(&[OPT_NOP, OPT_NOP, OPT_SACK_PERM, 2]);
        }
        if let Some(ws) = self.window_scale {
            out.extend_from_slice(&[OPT_NOP, OPT_WS, 3, ws]);
        }
        let blocks = self.sack_blocks_emitted();
        if blocks > 0 {
            out.extend_from_slice(&[OPT_NOP, OPT_NOP, OPT_SACK, (2 + 8 * blocks) as u8]);
            for b in &self.sack()[..blocks] {
                out.extend_from_slice(&b.left.to_be_bytes());
                out.extend_from_slice(&b.right.to_be_bytes());
            }
        }
    }

    /// Decodes an option area (the bytes between the fixed header and the data offset).
    pub fn parse(mut opts: &[u8]) -> Result<TcpOptions, WireError> {
        let mut o = TcpOptions::default();
        while let Some((&kind, rest)) = opts.split_first() {
            match kind {
                OPT_EOL => break,
                OPT_NOP => {
                    opts = rest;
                    continue;
                }
                _ => {}
            }
            let Some(&len) = rest.first() else {
                return Err(WireError::TcpOption { kind, len: 0 });
            };
            let bad = WireError::TcpOption { kind, len };
            if len < 2 {
                return Err(bad);
            }
            let Some(body) = opts.get(2..len as usize) else {
                return Err(bad);
            };
            match kind {
                OPT_MSS => match body {
                    [a, b] => o.mss = Some(u16::from_be_bytes([*a, *b])),
                    _ => return Err(bad),
                },
                OPT_WS => match body {
                    [s] => o.window_scale = Some(*s),
                    _ => return Err(bad),
                },
                OPT_SACK_PERM => match body {
                    [] => o.sack_permitted = true,
                    _ => return Err(bad),
                },
                OPT_TS => match body.first_chunk::<8>() {
                    Some(t) if body.len() == 8 => {
                        let val = u32::from_be_bytes([t[0], t[1], t[2], t[3]]);
                        let ecr = u32::from_be_bytes([t[4], t[5], t[6], t[7]]);
                        o.timestamps = Some((val, ecr));
                    }
                    _ => return Err(bad),
                },
                OPT_SACK => {
                    if body.is_empty() || body.len() % 8 != 0 {
                        return Err(bad);
                    }
                    o.clear_sack();
                    for c in body.chunks_exact(8) {
                        o.push_sack(WireSackBlock {
                            left: u32::from_be_bytes([c[0], c[1], c[2], c[3]]),
                            right: u32::from_be_bytes([c[4], c[5], c[6], c[7]]),
                        });
                    }
                }
                _ => {} // unknown: skipped by its length
            }
            opts = &opts[len as usize..];
        }
        Ok(o)
    }
}

/// A TCP header with its options. The checksum is not a field: [`TcpHeader::emit`] leaves
/// it zero for [`finish_checksum`] (or [`super::emit_tcp`]) to fill in, and decoding
/// verifies it ([`super::parse_tcp`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpHeader {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number (32-bit wire value; see [`super::SeqMap`]).
    pub seq: u32,
    /// Acknowledgment number (significant with ACK).
    pub ack: u32,
    /// Flags.
    pub flags: TcpFlags,
    /// Window field (unscaled).
    pub window: u16,
    /// Urgent pointer.
    pub urgent: u16,
    /// Options.
    pub options: TcpOptions,
}

impl TcpHeader {
    /// Bytes of the header with options as emitted.
    pub fn header_len(&self) -> usize {
        TCP_HEADER_LEN + self.options.len()
    }

    /// Appends the header and options with a zero checksum.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.src_port.to_be_bytes());
        out.extend_from_slice(&self.dst_port.to_be_bytes());
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.extend_from_slice(&self.ack.to_be_bytes());
        let words = (self.header_len() / 4) as u8;
        out.extend_from_slice(&[words << 4, self.flags.0]);
        out.extend_from_slice(&self.window.to_be_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&self.urgent.to_be_bytes());
        self.options.emit(out);
    }

    /// Decodes the header at the start of `segment` (no checksum check: that needs the IP
    /// addresses, see [`super::parse_tcp`]). Returns the header and the payload.
    pub fn parse(segment: &[u8]) -> Result<(TcpHeader, &[u8]), WireError> {
        let Some(f) = segment.first_chunk::<TCP_HEADER_LEN>() else {
            return Err(WireError::Truncated {
                what: "TCP header",
                need: TCP_HEADER_LEN,
                have: segment.len(),
            });
        };
        let offset = f[12] >> 4;
        let len = offset as usize * 4;
        if offset < 5 || len > segment.len() {
            return Err(WireError::TcpDataOffset(offset));
        }
        let options = TcpOptions::parse(&segment[TCP_HEADER_LEN..len])?;
        let h = TcpHeader {
            src_port: u16::from_be_bytes([f[0], f[1]]),
            dst_port: u16::from_be_bytes([f[2], f[3]]),
            seq: u32::from_be_bytes([f[4], f[5], f[6], f[7]]),
            ack: u32::from_be_bytes([f[8], f[9], f[10], f[11]]),
            flags: TcpFlags(f[13]),
            window: u16::from_be_bytes([f[14], f[15]]),
            urgent: u16::from_be_bytes([f[18], f[19]]),
            options,
        };
        Ok((h, &segment[len..]))
    }
}

/// Fills in the checksum of the TCP header at the start of `header` (its checksum field
/// zero), for a segment between `src` and `dst` whose payload has length `payload_len` and
/// running sum `payload_sum` ([`sum16`] of the payload; 0 for a payload of zeros).
pub fn finish_checksum(
    header: &mut [u8],
    src: [u8; 4],
    dst: [u8; 4],
    payload_len: u32,
    payload_sum: u64,
) {
    let l4_len = header.len() as u32 + payload_len;
    let acc = pseudo_header_sum(src, dst, super::PROTO_TCP, l4_len);
    let sum = fold(sum16(acc, header) + payload_sum);
    header[16..18].copy_from_slice(&sum.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(left: u32, right: u32) -> WireSackBlock {
        WireSackBlock { left, right }
    }

    fn emitted(o: &TcpOptions) -> Vec<u8> {
        let mut v = Vec::new();
        o.emit(&mut v);
        assert_eq!(v.len(), o.len());
        assert_eq!(v.len() % 4, 0);
        v
    }

    #[test]
    fn linux_syn_option_layout() {
        let syn = TcpOptions {
            mss: Some(1460),
            window_scale: Some(7),
            sack_permitted: true,
            timestamps: Some((0x0102_0304, 0)),
            ..TcpOptions::default()
        };
        assert_eq!(
            emitted(&syn),
            [2, 4, 0x05, 0xb4, 4, 2, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0, 1, 3, 3, 7]
        );
        // Without timestamps Linux sends NOP NOP SACK-permitted.
        let no_ts = TcpOptions {
            timestamps: None,
            ..syn
        };
        assert_eq!(emitted(&no_ts), [2, 4, 0x05, 0xb4, 1, 1, 4, 2, 1, 3, 3, 7]);
        // Timestamps without SACK: NOP NOP TS.
        let no_sack = TcpOptions {
            sack_permitted: false,
            ..syn
        };
        assert_eq!(
            emitted(&no_sack),
            [2, 4, 0x05, 0xb4, 1, 1, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0, 1, 3, 3, 7]
        );
        for o in [syn, no_ts, no_sack] {
            assert_eq!(TcpOptions::parse(&emitted(&o)), Ok(o));
        }
    }

    #[test]
    fn established_sack_blocks_fit_in_forty_bytes() {
        let mut o = TcpOptions {
            timestamps: Some((5, 6)),
            ..TcpOptions::default()
        };
        for k in 0..4 {
            o.push_sack(block(100 * k, 100 * k + 50));
        }
        assert_eq!(o.sack_blocks_emitted(), 3);
        assert_eq!(o.sack_blocks_cut(), 1);
        let v = emitted(&o);
        assert_eq!(v.len(), 40);
        assert_eq!(&v[..4], &[1, 1, 8, 10]);
        assert_eq!(&v[12..16], &[1, 1, 5, 26]);
        let d = TcpOptions::parse(&v).expect("valid");
        assert_eq!(d.sack(), &o.sack()[..3]);
        assert_eq!(d.timestamps, Some((5, 6)));
        // Without timestamps all four fit; a fifth is cut at push.
        o.timestamps = None;
        o.push_sack(block(1, 2));
        assert_eq!(o.sack_blocks_emitted(), 4);
        assert_eq!(o.sack_blocks_cut(), 1);
        let v = emitted(&o);
        assert_eq!(v.len(), 36);
        assert_eq!(&v[..4], &[1, 1, 5, 34]);
        assert_eq!(TcpOptions::parse(&v).map(|d| d.sack().len()), Ok(4));
        // After SYN options with timestamps (20 bytes) two blocks fit.
        let mut syn = TcpOptions {
            mss: Some(1),
            window_scale: Some(1),
            sack_permitted: true,
            timestamps: Some((1, 1)),
            ..TcpOptions::default()
        };
        for k in 0..3 {
            syn.push_sack(block(k, k + 1));
        }
        assert_eq!(syn.sack_blocks_emitted(), 2);
        assert_eq!(emitted(&syn).len(), 40);
    }

    #[test]
    fn decodes_unaligned_and_unknown_options() {
        // MSS, EOL-terminated, garbage after EOL ignored.
        assert_eq!(
            TcpOptions::parse(&[2, 4, 1, 0, 0, 0xff, 0xff]).map(|o| o.mss),
            Ok(Some(256))
        );
        // Unknown kind 30 (MPTCP) of length 4 skipped, then WS.
        assert_eq!(
            TcpOptions::parse(&[30, 4, 9, 9, 3, 3, 14]).map(|o| o.window_scale),
            Ok(Some(14))
        );
        let err = |b: &[u8]| TcpOptions::parse(b).err();
        assert_eq!(err(&[2]), Some(WireError::TcpOption { kind: 2, len: 0 }));
        assert_eq!(
            err(&[30, 0]),
            Some(WireError::TcpOption { kind: 30, len: 0 })
        );
        assert_eq!(
            err(&[30, 1]),
            Some(WireError::TcpOption { kind: 30, len: 1 })
        );
        assert_eq!(
            err(&[2, 6, 0, 0]),
            Some(WireError::TcpOption { kind: 2, len: 6 })
        );
        assert_eq!(
            err(&[2, 3, 0, 0]),
            Some(WireError::TcpOption { kind: 2, len: 3 })
        );
        assert_eq!(
            err(&[8, 9, 0, 0, 0, 0, 0, 0, 0, 0]),
            Some(WireError::TcpOption { kind: 8, len: 9 })
        );
        assert_eq!(err(&[5, 2]), Some(WireError::TcpOption { kind: 5, len: 2 }));
        assert_eq!(
            err(&[5, 9, 0, 0, 0, 0, 0, 0, 0]),
            Some(WireError::TcpOption { kind: 5, len: 9 })
        );
    }

    #[test]
    fn header_round_trip_and_flags() {
        let mut h = TcpHeader {
            src_port: 40000,
            dst_port: 5001,
            seq: 0xffff_fff0,
            ack: 17,
            flags: TcpFlags::ACK | TcpFlags::ECE | TcpFlags::CWR,
            window: 502,
            urgent: 0,
            options: TcpOptions {
                timestamps: Some((1, 2)),
                ..TcpOptions::default()
            },
        };
        h.options.push_sack(block(1, 2));
        let mut v = Vec::new();
        h.emit(&mut v);
        assert_eq!(v.len(), h.header_len());
        assert_eq!(v[12] >> 4, 11);
        assert_eq!(v[13], 0xd0);
        v.extend_from_slice(b"xyz");
        let (d, payload) = TcpHeader::parse(&v).expect("valid");
        assert_eq!(d, h);
        assert_eq!(payload, b"xyz");
        assert!(d.flags.contains(TcpFlags::ECE | TcpFlags::CWR));
        assert!(!d.flags.contains(TcpFlags::SYN));
        assert_eq!(TcpFlags::ACK.with(TcpFlags::FIN, true), TcpFlags(0x11));
        assert_eq!(TcpFlags::ACK.with(TcpFlags::FIN, false), TcpFlags::ACK);
        // Data offset beyond the buffer, and below 5.
        assert_eq!(
            TcpHeader::parse(&v[..40]).err(),
            Some(WireError::TcpDataOffset(11))
        );
        v[12] = 4 << 4;
        assert_eq!(
            TcpHeader::parse(&v).err(),
            Some(WireError::TcpDataOffset(4))
        );
    }
}
