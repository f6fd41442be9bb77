//! The transport's wire format: tcplab-core's segments as UDP payloads (docs/live.md, "The
//! transport"). Two framings, both big endian:
//!
//! - [`Framing::Tcplab`] (default): a 24-byte data header, so that with timestamps on an IP
//!   packet is exactly the size the simulator gives the segment (20 IP + 8 UDP + 24 = the
//!   40-byte IP+TCP header plus the 12-byte timestamp option); every field of
//!   [`DataSegment`] and [`AckSegment`] is carried in full (64-bit sequence numbers and
//!   nanosecond timestamps).
//!
//!   | data, bytes | field | | ACK, bytes | field |
//!   |---|---|---|---|---|
//!   | 0..2 | `TL` | | 0..2 | `TL` |
//!   | 2 | kind 1 | | 2 | kind 2 |
//!   | 3 | flags: 1 TS, 2 CWR | | 3 | flags: 1 TS, 4 ECE |
//!   | 4..6 | flow | | 4..6 | flow |
//!   | 6 | transmission number | | 6 | SACK blocks n |
//!   | 7 | 0 | | 7 | 0 |
//!   | 8..16 | sequence | | 8..16 | cumulative ACK |
//!   | 16..24 | TSval (send time if TS is off), ns | | 16..24 | TSecr, ns (0 if TS off) |
//!   | 24.. | payload | | 24..32 | window, bytes |
//!   | | | | 32.. | n x (start u64, end u64) |
//!
//! - [`Framing::Eth`]: the ETH framework's framing (Bolliger et al., Appendix A.1): fixed
//!   1024-byte data packets behind a 17-byte header, packet-numbered sequence space. The
//!   paper gives only the sizes; the fields are tcplab's: data `0xE1`, flags (1 TS, 2 CWR),
//!   flow u8, packet number u32, transmission number u8, TSval in µs u32, 5 bytes zero;
//!   ACK `0xE2`, flags (1 TS, 4 ECE), flow u8, cumulative ACK in packets u32, n u8, TSecr
//!   in µs u32, window in packets u32, 1 byte zero, then n x (first packet u32, packets
//!   u16). Timestamps are 32-bit microseconds: the endpoints read the clock at 1 µs
//!   granularity in this framing so that they round-trip exactly.
//!
//! ECT and CE are not in these headers: they travel in the IP header (the socket's TOS),
//! where routers mark them.

use tcplab_core::{AckSegment, DataSegment, SackBlock, SackList, Seq, Time, MAX_SACK_BLOCKS};

pub const MAGIC: &[u8; 2] = b"TL";
pub const KIND_DATA: u8 = 1;
pub const KIND_ACK: u8 = 2;
pub const TCPLAB_DATA_HEADER: usize = 24;
pub const TCPLAB_ACK_HEADER: usize = 32;
pub const ETH_DATA: u8 = 0xE1;
pub const ETH_ACK: u8 = 0xE2;
/// The ETH framework's header and packet payload sizes (declared with the scenario's
/// `framing`).
pub use tcplab_sim::scenario::{ETH_HEADER, ETH_PACKET};
/// IPv4 + UDP headers in front of every datagram.
pub const IP_UDP: usize = tcplab_sim::pcap::IPV4_HEADER + tcplab_sim::pcap::UDP_HEADER;

const F_TS: u8 = 1;
const F_CWR: u8 = 2;
const F_ECE: u8 = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Framing {
    Tcplab,
    Eth,
}

/// A decoded datagram. `Data`'s `seg.ect`/`seg.ce` are false: the caller sets them from the
/// IP header. `sent_at` is the send time the header carries (TSval, or the send time when
/// timestamps are off).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Packet {
    Data {
        flow: u16,
        seg: DataSegment,
        sent_at: Time,
    },
    Ack {
        flow: u16,
        ack: AckSegment,
    },
}

/// What the emulator's drop log records of a transport datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct WireIdent {
    /// `data` or `ack` (the simulator's packet kinds).
    pub packet: &'static str,
    pub flow: u16,
    /// Data: first byte; ACK: cumulative ACK.
    pub seq: u64,
    /// Data: transmission number (0 = original); ACK: 0.
    pub retransmission: u8,
    /// Data: the send time in the header (ns of the endpoints' clock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent_ns: Option<u64>,
}

fn be_u16(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}
fn be_u32(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes(b[i..i + 4].try_into().expect("4 bytes"))
}
fn be_u64(b: &[u8], i: usize) -> u64 {
    u64::from_be_bytes(b[i..i + 8].try_into().expect("8 bytes"))
}

/// 32-bit microseconds: the low bits of `t` in µs.
fn us32(t: Time) -> u32 {
    (t.as_nanos() / 1_000) as u32
}

/// The latest time not after `now` whose µs have low 32 bits `v` (times are within 71
/// minutes of `now`).
fn from_us32(v: u32, now: Time) -> Time {
    let now_us = now.as_nanos() / 1_000;
    let back = (now_us as u32).wrapping_sub(v) as u64;
    Time::from_micros(now_us.saturating_sub(back))
}

/// `n` bytes of ETH packets, or an error naming `what`.
fn eth_packets(n: u64, what: &str) -> Result<u32, String> {
    if !n.is_multiple_of(ETH_PACKET as u64) || n / ETH_PACKET as u64 > u32::MAX as u64 {
        return Err(format!(
            "eth framing: {what} = {n} is not a whole number of {ETH_PACKET}-byte packets"
        ));
    }
    Ok((n / ETH_PACKET as u64) as u32)
}

impl Framing {
    /// Header bytes in front of a data payload.
    pub fn data_header(self) -> usize {
        match self {
            Framing::Tcplab => TCPLAB_DATA_HEADER,
            Framing::Eth => ETH_HEADER,
        }
    }

    /// The clock resolution this framing's timestamps keep exactly.
    pub fn clock_ns(self) -> u64 {
        match self {
            Framing::Tcplab => 1,
            Framing::Eth => 1_000,
        }
    }

    /// Appends the datagram of `seg` (payload `payload`, `seg.len` bytes) to `out`.
    pub fn encode_data(
        self,
        flow: u16,
        seg: &DataSegment,
        sent_at: Time,
        payload: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        debug_assert_eq!(payload.len(), seg.len as usize);
        let flags = if seg.ts_val.is_some() { F_TS } else { 0 } | if seg.cwr { F_CWR } else { 0 };
        let ts = seg.ts_val.unwrap_or(sent_at);
        match self {
            Framing::Tcplab => {
                out.extend_from_slice(MAGIC);
                out.extend_from_slice(&[KIND_DATA, flags]);
                out.extend_from_slice(&flow.to_be_bytes());
                out.extend_from_slice(&[seg.retransmission, 0]);
                out.extend_from_slice(&seg.seq.0.to_be_bytes());
                out.extend_from_slice(&ts.as_nanos().to_be_bytes());
            }
            Framing::Eth => {
                let pkt = eth_packets(seg.seq.0, "sequence")?;
                if seg.len != ETH_PACKET {
                    return Err(format!(
                        "eth framing: segment length = {}: packets are {ETH_PACKET} bytes",
                        seg.len
                    ));
                }
                let flow = u8::try_from(flow)
                    .map_err(|_| format!("eth framing: flow = {flow}: at most 255"))?;
                out.extend_from_slice(&[ETH_DATA, flags, flow]);
                out.extend_from_slice(&pkt.to_be_bytes());
                out.push(seg.retransmission);
                out.extend_from_slice(&us32(ts).to_be_bytes());
                out.extend_from_slice(&[0; 5]);
            }
        }
        out.extend_from_slice(payload);
        Ok(())
    }

    /// Appends the datagram of `ack` to `out`.
    pub fn encode_ack(self, flow: u16, ack: &AckSegment, out: &mut Vec<u8>) -> Result<(), String> {
        let flags = if ack.ts_ecr.is_some() { F_TS } else { 0 } | if ack.ece { F_ECE } else { 0 };
        let ecr = ack.ts_ecr.unwrap_or(Time::ZERO);
        let n = ack.sack.len() as u8;
        match self {
            Framing::Tcplab => {
                out.extend_from_slice(MAGIC);
                out.extend_from_slice(&[KIND_ACK, flags]);
                out.extend_from_slice(&flow.to_be_bytes());
                out.extend_from_slice(&[n, 0]);
                out.extend_from_slice(&ack.ack.0.to_be_bytes());
                out.extend_from_slice(&ecr.as_nanos().to_be_bytes());
                out.extend_from_slice(&ack.window.to_be_bytes());
                for b in &ack.sack {
                    out.extend_from_slice(&b.start.0.to_be_bytes());
                    out.extend_from_slice(&b.end.0.to_be_bytes());
                }
            }
            Framing::Eth => {
                let flow = u8::try_from(flow)
                    .map_err(|_| format!("eth framing: flow = {flow}: at most 255"))?;
                let cum = eth_packets(ack.ack.0, "cumulative ACK")?;
                let window = (ack.window / ETH_PACKET as u64).min(u32::MAX as u64) as u32;
                out.extend_from_slice(&[ETH_ACK, flags, flow]);
                out.extend_from_slice(&cum.to_be_bytes());
                out.push(n);
                out.extend_from_slice(&us32(ecr).to_be_bytes());
                out.extend_from_slice(&window.to_be_bytes());
                out.push(0);
                for b in &ack.sack {
                    let first = eth_packets(b.start.0, "SACK block start")?;
                    let count = eth_packets(b.end.0 - b.start.0, "SACK block length")?;
                    let count = u16::try_from(count)
                        .map_err(|_| format!("eth framing: SACK block of {count} packets"))?;
                    out.extend_from_slice(&first.to_be_bytes());
                    out.extend_from_slice(&count.to_be_bytes());
                }
            }
        }
        Ok(())
    }

    /// Decodes a datagram; returns the packet and, for data, its payload. `now` (the
    /// receiving endpoint's clock) extends the ETH framing's 32-bit timestamps.
    pub fn decode(self, b: &[u8], now: Time) -> Result<(Packet, &[u8]), String> {
        match self {
            Framing::Tcplab => decode_tcplab(b),
            Framing::Eth => decode_eth(b, now),
        }
    }
}

fn short(b: &[u8], need: usize) -> Result<(), String> {
    if b.len() < need {
        return Err(format!("datagram of {} bytes: needs {need}", b.len()));
    }
    Ok(())
}

/// A header's fields, whatever the framing.
struct Header {
    data: bool,
    flags: u8,
    flow: u16,
    /// Data: first byte; ACK: cumulative ACK.
    seq: Seq,
    /// Data: transmission number; ACK: SACK blocks that follow.
    count: u8,
    ts: Time,
    window: u64,
    /// Bytes of the header, and of each SACK block after it.
    len: usize,
    block_len: usize,
}

impl Header {
    /// The packet of this header; `block` decodes one SACK block.
    fn packet(
        self,
        b: &[u8],
        block: impl Fn(&[u8]) -> SackBlock,
    ) -> Result<(Packet, &[u8]), String> {
        let ts_on = self.flags & F_TS != 0;
        if self.data {
            let payload = &b[self.len..];
            let seg = DataSegment {
                seq: self.seq,
                len: payload.len() as u32,
                ts_val: ts_on.then_some(self.ts),
                ts_ecr: None,
                retransmission: self.count,
                ect: false,
                ce: false,
                cwr: self.flags & F_CWR != 0,
            };
            let sent_at = self.ts;
            return Ok((
                Packet::Data {
                    flow: self.flow,
                    seg,
                    sent_at,
                },
                payload,
            ));
        }
        let n = self.count as usize;
        if n > MAX_SACK_BLOCKS {
            return Err(format!(
                "ACK with {n} SACK blocks: at most {MAX_SACK_BLOCKS}"
            ));
        }
        short(b, self.len + self.block_len * n)?;
        let sack: SackList = (0..n)
            .map(|i| block(&b[self.len + self.block_len * i..]))
            .collect();
        let ack = AckSegment {
            ack: self.seq,
            sack,
            ts_ecr: ts_on.then_some(self.ts),
            ts_val: None,
            window: self.window,
            ece: self.flags & F_ECE != 0,
        };
        Ok((
            Packet::Ack {
                flow: self.flow,
                ack,
            },
            &[],
        ))
    }
}

fn decode_tcplab(b: &[u8]) -> Result<(Packet, &[u8]), String> {
    short(b, TCPLAB_DATA_HEADER)?;
    if &b[..2] != MAGIC {
        return Err("not a tcplab datagram (magic)".into());
    }
    let data = match b[2] {
        KIND_DATA => true,
        KIND_ACK => false,
        k => return Err(format!("unknown tcplab datagram kind {k}")),
    };
    if !data {
        short(b, TCPLAB_ACK_HEADER)?;
    }
    let h = Header {
        data,
        flags: b[3],
        flow: be_u16(b, 4),
        seq: Seq(be_u64(b, 8)),
        count: b[6],
        ts: Time::from_nanos(be_u64(b, 16)),
        window: if data { 0 } else { be_u64(b, 24) },
        len: if data {
            TCPLAB_DATA_HEADER
        } else {
            TCPLAB_ACK_HEADER
        },
        block_len: 16,
    };
    h.packet(b, |x| SackBlock {
        start: Seq(be_u64(x, 0)),
        end: Seq(be_u64(x, 8)),
    })
}

fn decode_eth(b: &[u8], now: Time) -> Result<(Packet, &[u8]), String> {
    short(b, ETH_HEADER)?;
    let data = match b[0] {
        ETH_DATA => true,
        ETH_ACK => false,
        k => return Err(format!("unknown eth datagram kind {k:#x}")),
    };
    let pkts = |p: u32| Seq(p as u64 * ETH_PACKET as u64);
    let h = Header {
        data,
        flags: b[1],
        flow: b[2] as u16,
        seq: pkts(be_u32(b, 3)),
        count: b[7],
        ts: from_us32(be_u32(b, 8), now),
        window: be_u32(b, 12) as u64 * ETH_PACKET as u64,
        len: ETH_HEADER,
        block_len: 6,
    };
    h.packet(b, |x| {
        let first = pkts(be_u32(x, 0));
        SackBlock {
            start: first,
            end: first + be_u16(x, 4) as u64 * ETH_PACKET as u64,
        }
    })
}

/// The identity of a transport datagram (a UDP payload), either framing; None for anything
/// else.
pub fn peek(b: &[u8]) -> Option<WireIdent> {
    let ident = |packet, flow, seq, retransmission, sent_ns| {
        Some(WireIdent {
            packet,
            flow,
            seq,
            retransmission,
            sent_ns,
        })
    };
    if b.len() >= TCPLAB_DATA_HEADER && &b[..2] == MAGIC {
        return match b[2] {
            KIND_DATA => ident(
                "data",
                be_u16(b, 4),
                be_u64(b, 8),
                b[6],
                Some(be_u64(b, 16)),
            ),
            KIND_ACK => ident("ack", be_u16(b, 4), be_u64(b, 8), 0, None),
            _ => None,
        };
    }
    if b.len() >= ETH_HEADER {
        let seq = be_u32(b, 3) as u64 * ETH_PACKET as u64;
        // 32-bit µs: the low bits of the send time (enough to tell copies apart).
        let sent = be_u32(b, 8) as u64 * 1_000;
        return match b[0] {
            ETH_DATA => ident("data", b[2] as u16, seq, b[7], Some(sent)),
            ETH_ACK => ident("ack", b[2] as u16, seq, 0, None),
            _ => None,
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(seq: u64, len: u32, ts: Option<Time>, rtx: u8, cwr: bool) -> DataSegment {
        DataSegment {
            seq: Seq(seq),
            len,
            ts_val: ts,
            ts_ecr: None,
            retransmission: rtx,
            ect: false,
            ce: false,
            cwr,
        }
    }

    fn ack(cum: u64, blocks: &[(u64, u64)], ecr: Option<Time>, ece: bool) -> AckSegment {
        AckSegment {
            ack: Seq(cum),
            sack: blocks
                .iter()
                .map(|&(s, e)| SackBlock {
                    start: Seq(s),
                    end: Seq(e),
                })
                .collect(),
            ts_ecr: ecr,
            ts_val: None,
            window: 256 * 1024,
            ece,
        }
    }

    fn round_trip(f: Framing, p: Packet, payload: &[u8], now: Time) -> (Vec<u8>, Packet, Vec<u8>) {
        let mut buf = Vec::new();
        match p {
            Packet::Data { flow, seg, sent_at } => f
                .encode_data(flow, &seg, sent_at, payload, &mut buf)
                .unwrap(),
            Packet::Ack { flow, ack } => f.encode_ack(flow, &ack, &mut buf).unwrap(),
        }
        let (q, pl) = f.decode(&buf, now).unwrap();
        let pl = pl.to_vec();
        (buf, q, pl)
    }

    #[test]
    fn tcplab_data_keeps_every_field_and_matches_the_simulated_size() {
        let t = Time::from_nanos(123_456_789_012);
        let payload: Vec<u8> = (0..1448u32).map(|i| i as u8).collect();
        for (ts, cwr, rtx) in [(Some(t), false, 0), (None, true, 3), (Some(t), true, 255)] {
            let seg = data(1 << 40, 1448, ts, rtx, cwr);
            let p = Packet::Data {
                flow: 513,
                seg,
                sent_at: t,
            };
            let (buf, q, pl) = round_trip(Framing::Tcplab, p, &payload, Time::ZERO);
            assert_eq!(q, p);
            assert_eq!(pl, payload);
            assert_eq!(buf.len(), TCPLAB_DATA_HEADER + 1448);
            if ts.is_some() {
                // IP packet = the simulator's size of the segment (headers + TS option).
                assert_eq!(
                    IP_UDP + buf.len(),
                    tcplab_sim::packet::data_wire_size(&seg) as usize
                );
            }
            let id = peek(&buf).unwrap();
            assert_eq!(
                (id.packet, id.flow, id.seq, id.retransmission, id.sent_ns),
                ("data", 513, 1 << 40, rtx, Some(t.as_nanos()))
            );
        }
    }

    #[test]
    fn tcplab_acks_carry_sack_dsack_ece_and_timestamps() {
        let t = Time::from_nanos(987_654_321);
        // A DSACK block (below the cumulative ACK) first, then SACK ranges.
        let blocks = [
            (1000, 2000),
            (5000, 7000),
            (9000, 9500),
            (1 << 50, (1 << 50) + 10),
        ];
        for a in [
            ack(3000, &blocks, Some(t), true),
            ack(0, &[], None, false),
            ack(7, &[(1, 2); 6], Some(Time::ZERO), false),
        ] {
            let p = Packet::Ack { flow: 2, ack: a };
            let (buf, q, pl) = round_trip(Framing::Tcplab, p, &[], Time::ZERO);
            assert_eq!(q, p);
            assert!(pl.is_empty());
            assert_eq!(buf.len(), TCPLAB_ACK_HEADER + 16 * a.sack.len());
            let id = peek(&buf).unwrap();
            assert_eq!((id.packet, id.flow, id.seq), ("ack", 2, a.ack.0));
        }
    }

    #[test]
    fn eth_framing_is_17_bytes_and_1024_byte_packets() {
        // µs clock: timestamps round-trip exactly, also across a 32-bit wrap.
        let sent = Time::from_micros((1u64 << 32) + 5);
        let now = sent + tcplab_core::Dur::from_millis(30);
        let payload = vec![0xA5; 1024];
        let seg = data(1024 * 77, 1024, Some(sent), 2, true);
        let p = Packet::Data {
            flow: 9,
            seg,
            sent_at: sent,
        };
        let (buf, q, pl) = round_trip(Framing::Eth, p, &payload, now);
        assert_eq!(buf.len(), 17 + 1024);
        assert_eq!(q, p);
        assert_eq!(pl, payload);
        let id = peek(&buf).unwrap();
        assert_eq!(
            (id.packet, id.flow, id.seq, id.retransmission),
            ("data", 9, 1024 * 77, 2)
        );

        let a = ack(
            1024 * 10,
            &[(1024 * 12, 1024 * 13), (1024 * 15, 1024 * 18)],
            Some(sent),
            true,
        );
        let p = Packet::Ack { flow: 9, ack: a };
        let (buf, q, _) = round_trip(Framing::Eth, p, &[], now);
        assert_eq!(buf.len(), 17 + 6 * 2);
        assert_eq!(q, p);
        assert_eq!(peek(&buf).unwrap().seq, 1024 * 10);
    }

    #[test]
    fn eth_framing_refuses_what_it_cannot_carry() {
        let mut buf = Vec::new();
        let e = Framing::Eth.encode_data(
            0,
            &data(0, 1000, None, 0, false),
            Time::ZERO,
            &[0; 1000],
            &mut buf,
        );
        assert_eq!(
            e.unwrap_err(),
            "eth framing: segment length = 1000: packets are 1024 bytes"
        );
        let e = Framing::Eth.encode_data(
            300,
            &data(0, 1024, None, 0, false),
            Time::ZERO,
            &[0; 1024],
            &mut buf,
        );
        assert_eq!(e.unwrap_err(), "eth framing: flow = 300: at most 255");
        let e = Framing::Eth.encode_ack(0, &ack(1500, &[], None, false), &mut buf);
        assert!(e.unwrap_err().contains("cumulative ACK = 1500"));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let now = Time::ZERO;
        for f in [Framing::Tcplab, Framing::Eth] {
            for b in [
                &b""[..],
                b"TL",
                b"TLPB00000000000000000000",
                &[0xE2; 17],
                &[0xE7; 40],
            ] {
                let _ = f.decode(b, now);
            }
        }
        let mut b = vec![0u8; 40];
        b[..3].copy_from_slice(b"TL\x02");
        b[6] = 7;
        assert!(Framing::Tcplab
            .decode(&b, now)
            .unwrap_err()
            .contains("at most 6"));
        b[6] = 2;
        assert!(Framing::Tcplab
            .decode(&b, now)
            .unwrap_err()
            .contains("needs 64"));
        assert_eq!(peek(b"TLPB0000000000000000000000"), None);
    }
}
