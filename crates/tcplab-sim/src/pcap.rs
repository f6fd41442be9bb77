//! pcap export: packets crossing chosen link directions, written as a classic pcap file
//! (magic `0xa1b23c4d`: nanosecond timestamps; link type `LINKTYPE_RAW`, raw IPv4) that
//! tshark, tcpdump and tcptrace read. docs/pcap.md is the user's guide.
//!
//! # Capture point
//!
//! A packet is captured when its link direction starts serializing it (dequeue time), with
//! that time as its timestamp: like tcpdump on the transmitting interface. Packets the queue
//! drops are never captured; packets then lost on the wire (`link_error`) are (they were
//! transmitted). A file of a whole link holds both directions, in time order.
//!
//! # Encoding
//!
//! - Addresses: node `i` (index in the expanded topology, routers included) is
//!   `10.0.0.0 + i + 1` ([`node_address`]).
//! - TCP flow `i`: sender port `10000 + i % 50000`, receiver port 5001. Data segments carry
//!   flag ACK (ack number 0: the receiver sends no data, its sequence stays 0) and CWR when
//!   set; pure ACKs carry ACK and ECE when set. Sequence numbers are tcplab's byte numbers
//!   modulo 2^32 (the first data byte is 0; there is no handshake). The window field is the
//!   advertised window clamped to 65535 (no scaling without a SYN); data segments advertise
//!   65535.
//! - Options: the timestamp option (NOP, NOP, TS) when the segment has one, values in
//!   microseconds of simulated time modulo 2^32 (data: TSval = send time, TSecr = 0; ACK:
//!   TSval = send time, TSecr = the echoed value); then SACK (NOP, NOP, SACK) with at most as
//!   many blocks as fit in 40 option bytes (3 with timestamps, 4 without; more are counted
//!   in `sack_blocks_cut`). This is the simulator's header model (`packet.rs`), so the IP total
//!   length equals the simulated wire size except when blocks are cut.
//! - IP: version 4, DF, TTL 64, ECN field ECT(0) on ECN-capable data and CE when marked; the
//!   IP ID counts the packets each source host sends (so a packet has the same ID on every
//!   link it crosses). Valid IP, TCP and UDP checksums.
//! - UDP flow `j`: ports `10000 + j % 50000` to 9 (discard); the scenario's packet size is
//!   the IP total length (at least 28).
//! - One encoder: the headers are written by tcplab-core's codec ([`tcplab_core::wire`],
//!   the one the live TCP endpoint uses), with ISN 0 ([`SeqMap`]) and microsecond
//!   timestamps ([`TsClock::MICROS`]).
//! - Payload is zeros; each record holds the first `snaplen` bytes of the IP packet
//!   (`orig_len` is the full length, so tools see the true sizes).

use crate::error::Problem;
use crate::packet::{Packet, PacketId, Payload};
use tcplab_core::wire::{
    self, Ecn, Ipv4Header, SeqMap, TcpFlags, TcpHeader, TcpOptions, TsClock, WireSackBlock,
};
use tcplab_core::Time;

/// Magic number of a classic pcap file with nanosecond timestamps.
pub const MAGIC_NS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_RAW: each record starts with an IPv4 (or IPv6) header.
pub const LINKTYPE_RAW: u32 = 101;
/// Default bytes kept per packet (a scenario setting, `trace.pcap_snaplen`).
pub use crate::scenario::DEFAULT_SNAPLEN;
/// Receiver port of every TCP flow.
pub const TCP_RECEIVER_PORT: u16 = 5001;
/// Destination port of every UDP flow (discard).
pub const UDP_PORT: u16 = 9;

/// Bytes of an IPv4 header without options.
pub const IPV4_HEADER: usize = wire::IPV4_HEADER_LEN;
/// Bytes of a UDP header.
pub const UDP_HEADER: usize = wire::UDP_HEADER_LEN;

/// IPv4 address of node `node`.
pub fn node_address(node: u32) -> [u8; 4] {
    (0x0a00_0000u32.wrapping_add(node).wrapping_add(1)).to_be_bytes()
}

/// Source port of TCP flow or UDP flow `flow`.
pub fn flow_port(flow: u32) -> u16 {
    10_000 + (flow % 50_000) as u16
}

/// The 24-byte global header of a pcap file.
pub fn global_header(snaplen: u32) -> [u8; 24] {
    let mut h = [0u8; 24];
    h[0..4].copy_from_slice(&MAGIC_NS.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    // thiszone 0, sigfigs 0
    h[16..20].copy_from_slice(&snaplen.to_le_bytes());
    h[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
    h
}

/// The Internet checksum of `bytes` (RFC 1071).
pub use tcplab_core::wire::checksum::checksum;

/// Sequence numbers in the files: tcplab's byte numbers modulo 2^32 (ISN 0, no handshake).
const SEQ: SeqMap = SeqMap { isn: 0 };

/// What a packet looks like on the wire: its headers (`head`) and the length of the whole
/// IP packet (`total`); the payload after the headers is zeros.
#[derive(Clone, Debug, Default)]
pub struct Frame {
    pub head: Vec<u8>,
    pub total: u32,
    /// SACK blocks left out because they did not fit in the option space.
    pub sack_blocks_cut: u32,
}

/// Addressing of one packet: source and destination nodes, ports, IP ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Addressing {
    pub src: u32,
    pub dst: u32,
    pub src_port: u16,
    pub dst_port: u16,
    pub ip_id: u16,
}

/// Encodes `p` as an IPv4 packet into `f` (reusing its buffer), with the shared codec
/// [`tcplab_core::wire`].
pub fn encode(p: &Packet, a: Addressing, f: &mut Frame) {
    f.head.clear();
    f.sack_blocks_cut = 0;
    let mut ip = Ipv4Header {
        ident: a.ip_id,
        src: node_address(a.src),
        dst: node_address(a.dst),
        ..Ipv4Header::default()
    };
    let ts = TsClock::MICROS;
    f.total = match &p.payload {
        Payload::Udp(_) => {
            wire::emit_udp_headers(&mut f.head, &ip, a.src_port, a.dst_port, p.size, 0)
        }
        Payload::Data(d) => {
            ip.ecn = Ecn::from_flags(d.ect, d.ce);
            let tcp = TcpHeader {
                src_port: a.src_port,
                dst_port: a.dst_port,
                seq: SEQ.to_wire(d.seq),
                ack: 0,
                flags: TcpFlags::ACK.with(TcpFlags::CWR, d.cwr),
                window: 65535,
                urgent: 0,
                options: TcpOptions {
                    timestamps: d.ts_val.map(|t| (ts.to_wire(t), 0)),
                    ..TcpOptions::default()
                },
            };
            wire::emit_tcp_headers(&mut f.head, &ip, &tcp, d.len, 0)
        }
        Payload::Ack(ack) => {
            let mut options = TcpOptions {
                timestamps: ack.ts_ecr.map(|e| (ts.to_wire(p.sent_at), ts.to_wire(e))),
                ..TcpOptions::default()
            };
            for b in &ack.sack {
                options.push_sack(WireSackBlock {
                    left: SEQ.to_wire(b.start),
                    right: SEQ.to_wire(b.end),
                });
            }
            f.sack_blocks_cut = options.sack_blocks_cut() as u32;
            let tcp = TcpHeader {
                src_port: a.src_port,
                dst_port: a.dst_port,
                seq: 0,
                ack: SEQ.to_wire(ack.ack),
                flags: TcpFlags::ACK.with(TcpFlags::ECE, ack.ece),
                window: ack.window.min(65535) as u16,
                urgent: 0,
                options,
            };
            wire::emit_tcp_headers(&mut f.head, &ip, &tcp, 0, 0)
        }
    };
}

/// Appends one record: timestamp `t`, the first `snaplen` bytes of `f` (payload zeros).
pub fn write_record(out: &mut Vec<u8>, t: Time, f: &Frame, snaplen: u32) {
    let incl = record_header(out, t, f.total, snaplen);
    let from_head = (incl as usize).min(f.head.len());
    out.extend_from_slice(&f.head[..from_head]);
    out.resize(out.len() + (incl as usize - from_head), 0);
}

/// A record of a real IP packet (`packet`: its whole bytes; the live emulator's captures),
/// its first `snaplen` bytes kept.
pub fn write_packet_record(out: &mut Vec<u8>, t: Time, packet: &[u8], snaplen: u32) {
    let incl = record_header(out, t, packet.len() as u32, snaplen);
    out.extend_from_slice(&packet[..incl as usize]);
}

/// A record's 16-byte header (time in ns, bytes kept, original length); the bytes kept.
#[inline]
fn record_header(out: &mut Vec<u8>, t: Time, total: u32, snaplen: u32) -> u32 {
    let ns = t.as_nanos();
    let incl = total.min(snaplen);
    out.extend_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&incl.to_le_bytes());
    out.extend_from_slice(&total.to_le_bytes());
    incl
}

/// Counts of what one capture holds, from the simulator's own packets (not from the bytes),
/// so tools reading the file can be checked against them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CaptureCounts {
    pub packets: u64,
    pub tcp_data: u64,
    /// Data segments that are retransmissions (`DataSegment::retransmission > 0`).
    pub tcp_retransmissions: u64,
    pub tcp_acks: u64,
    /// ACKs carrying at least one SACK block (in the file).
    pub acks_with_sack: u64,
    /// SACK blocks written, and the bytes they cover (sum of right - left edges).
    pub sack_blocks: u64,
    pub sack_bytes: u64,
    /// SACK blocks that did not fit in the option space.
    pub sack_blocks_cut: u64,
    pub udp: u64,
}

/// One capture file: a link (both directions) or one direction of it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PcapFile {
    /// File stem: `"{link}"` for both directions, `"{link}.{direction}"` for one.
    pub name: String,
    /// The duplex link's name.
    pub link: String,
    /// `["forward", "reverse"]`, or one of them.
    pub directions: Vec<&'static str>,
    /// The whole file: global header and records.
    pub bytes: Vec<u8>,
    pub counts: CaptureCounts,
}

/// What a run captured: the files and the address of every node (hosts and routers, in
/// topology order), as `(name, dotted quad)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PcapOutput {
    pub files: Vec<PcapFile>,
    pub addresses: Vec<(String, String)>,
}

/// Captures into in-memory pcap files: fed by the network at every send (IP IDs) and every
/// start of serialization on a captured link direction.
pub struct Capture {
    files: Vec<PcapFile>,
    /// Per link direction: the file it is captured to.
    by_dir: Vec<Option<u32>>,
    /// IP ID of each live packet, by pool slot.
    ids: Vec<u16>,
    /// Next IP ID per source node.
    next_id: Vec<u16>,
    node_names: Vec<String>,
    /// Per TCP flow / UDP flow: (source node, destination node) of its data.
    tcp_ends: Vec<(u32, u32)>,
    udp_ends: Vec<(u32, u32)>,
    snaplen: u32,
    frame: Frame,
}

impl Capture {
    /// `files[k] = (name, link, direction indices, direction names)`.
    pub fn new(
        files: Vec<(String, String, Vec<u32>, Vec<&'static str>)>,
        link_directions: usize,
        node_names: Vec<String>,
        tcp_ends: Vec<(u32, u32)>,
        udp_ends: Vec<(u32, u32)>,
        snaplen: u32,
    ) -> Self {
        let mut by_dir = vec![None; link_directions];
        let files = files
            .into_iter()
            .enumerate()
            .map(|(k, (name, link, dirs, directions))| {
                for d in dirs {
                    by_dir[d as usize] = Some(k as u32);
                }
                PcapFile {
                    name,
                    link,
                    directions,
                    bytes: global_header(snaplen).to_vec(),
                    counts: CaptureCounts::default(),
                }
            })
            .collect();
        Capture {
            files,
            by_dir,
            ids: Vec::new(),
            next_id: vec![0; node_names.len()],
            node_names,
            tcp_ends,
            udp_ends,
            snaplen,
            frame: Frame::default(),
        }
    }

    /// Node `at` sends packet `id` into the network: it gets the host's next IP ID.
    pub fn on_send(&mut self, at: u32, id: PacketId) {
        let slot = id.index();
        if self.ids.len() <= slot {
            self.ids.resize(slot + 1, 0);
        }
        let next = &mut self.next_id[at as usize];
        self.ids[slot] = *next;
        *next = next.wrapping_add(1);
    }

    /// Link direction `dir` starts serializing `p` (pool slot `id`) at `now`.
    pub fn on_transmit(&mut self, now: Time, dir: u32, id: PacketId, p: &Packet) {
        let Some(k) = self.by_dir[dir as usize] else {
            return;
        };
        let ip_id = self.ids.get(id.index()).copied().unwrap_or(0);
        let a = match &p.payload {
            Payload::Data(_) => {
                let (s, d) = self.tcp_ends[p.flow as usize];
                addressing(s, d, flow_port(p.flow), TCP_RECEIVER_PORT, ip_id)
            }
            Payload::Ack(_) => {
                let (s, d) = self.tcp_ends[p.flow as usize];
                addressing(d, s, TCP_RECEIVER_PORT, flow_port(p.flow), ip_id)
            }
            Payload::Udp(_) => {
                let (s, d) = self.udp_ends[p.flow as usize];
                addressing(s, d, flow_port(p.flow), UDP_PORT, ip_id)
            }
        };
        encode(p, a, &mut self.frame);
        let file = &mut self.files[k as usize];
        write_record(&mut file.bytes, now, &self.frame, self.snaplen);
        let c = &mut file.counts;
        c.packets += 1;
        match &p.payload {
            Payload::Data(d) => {
                c.tcp_data += 1;
                c.tcp_retransmissions += (d.retransmission > 0) as u64;
            }
            Payload::Ack(ack) => {
                c.tcp_acks += 1;
                let written = ack.sack.len() - self.frame.sack_blocks_cut as usize;
                c.acks_with_sack += (written > 0) as u64;
                c.sack_blocks += written as u64;
                c.sack_bytes += ack
                    .sack
                    .iter()
                    .take(written)
                    .map(|b| b.end.0 - b.start.0)
                    .sum::<u64>();
                c.sack_blocks_cut += self.frame.sack_blocks_cut as u64;
            }
            Payload::Udp(_) => c.udp += 1,
        }
    }

    /// The files, complete, and the address map.
    pub fn finish(self) -> PcapOutput {
        let addresses = self
            .node_names
            .into_iter()
            .enumerate()
            .map(|(i, n)| {
                let a = node_address(i as u32);
                (n, format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3]))
            })
            .collect();
        PcapOutput {
            files: self.files,
            addresses,
        }
    }
}

/// The capture files a scenario's `trace.pcap` selectors ask for, as `Capture::new` takes
/// them: `"all"` (every link, one file each), `"{link}"` (both directions, one file) or
/// `"{link}/forward"`, `"{link}/reverse"` (one direction, file `"{link}.{direction}"`). A
/// direction chosen twice is captured once (to the first file that names it). Unknown
/// selectors are reported with their index.
#[allow(clippy::type_complexity)]
pub fn plan(
    selectors: &[String],
    layout: &crate::topology::Layout,
) -> Result<Vec<(String, String, Vec<u32>, Vec<&'static str>)>, Vec<Problem>> {
    let mut errs = Vec::new();
    let mut files = Vec::new();
    let mut taken = vec![false; 2 * layout.links.len()];
    let mut add = |name: String, link: &str, dirs: &[(u32, &'static str)]| {
        let dirs: Vec<(u32, &'static str)> = dirs
            .iter()
            .copied()
            .filter(|&(d, _)| !std::mem::replace(&mut taken[d as usize], true))
            .collect();
        if !dirs.is_empty() {
            files.push((
                name,
                link.to_string(),
                dirs.iter().map(|d| d.0).collect(),
                dirs.iter().map(|d| d.1).collect(),
            ));
        }
    };
    let both = |i: usize| [(2 * i as u32, "forward"), (2 * i as u32 + 1, "reverse")];
    for (k, sel) in selectors.iter().enumerate() {
        if sel == "all" {
            for (i, l) in layout.links.iter().enumerate() {
                add(l.name.clone(), &l.name, &both(i));
            }
            continue;
        }
        let (link, dir) = match sel.rsplit_once('/') {
            Some((l, d)) => (l, Some(d)),
            None => (sel.as_str(), None),
        };
        let path = format!("trace.pcap[{k}]");
        let Some(i) = layout.links.iter().position(|l| l.name == link) else {
            // The first few links (a topology may have thousands), then "...".
            let mut names: Vec<&str> = layout
                .links
                .iter()
                .take(8)
                .map(|l| l.name.as_str())
                .collect();
            if layout.links.len() > names.len() {
                names.push("...");
            }
            let message = format!(
                "{path} = {sel:?}: unknown link; expected \"all\", a link name or \"<link>/forward\" or \"<link>/reverse\"; links: {names:?}"
            );
            errs.push(Problem::worded(
                path,
                Problem::PCAP_LINK,
                sel.as_str(),
                names,
                message,
            ));
            continue;
        };
        match dir {
            None => add(link.to_string(), link, &both(i)),
            Some("forward") => add(format!("{link}.forward"), link, &both(i)[..1]),
            Some("reverse") => add(format!("{link}.reverse"), link, &both(i)[1..]),
            Some(d) => {
                let message = format!(
                    "{path} = {sel:?}: unknown direction {d:?}; expected forward or reverse"
                );
                let limit = vec!["forward", "reverse"];
                errs.push(Problem::worded(
                    path,
                    Problem::PCAP_DIRECTION,
                    sel.as_str(),
                    limit,
                    message,
                ));
            }
        }
    }
    if errs.is_empty() {
        Ok(files)
    } else {
        Err(errs)
    }
}

fn addressing(src: u32, dst: u32, src_port: u16, dst_port: u16, ip_id: u16) -> Addressing {
    Addressing {
        src,
        dst,
        src_port,
        dst_port,
        ip_id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::{AckSegment, DataSegment, SackBlock, SackList, Seq};

    fn data(len: u32, ect: bool, ce: bool, cwr: bool) -> Packet {
        let d = DataSegment {
            seq: Seq(4_294_967_296 + 1000),
            len,
            ts_val: Some(Time::from_nanos(2_500_000)),
            ts_ecr: None,
            retransmission: 1,
            ect,
            ce,
            cwr,
        };
        Packet {
            flow: 3,
            dst: 2,
            size: crate::packet::data_wire_size(&d),
            sent_at: Time::from_nanos(2_500_000),
            payload: Payload::Data(d),
        }
    }

    fn ack(blocks: &[(u64, u64)], ts: bool) -> Packet {
        let sack: SackList = blocks
            .iter()
            .map(|&(s, e)| SackBlock {
                start: Seq(s),
                end: Seq(e),
            })
            .collect();
        let a = AckSegment {
            ack: Seq(7000),
            sack,
            ts_ecr: ts.then(|| Time::from_nanos(1_000_000)),
            ts_val: None,
            window: 1 << 20,
            ece: true,
        };
        Packet {
            flow: 3,
            dst: 0,
            size: crate::packet::ack_wire_size(&a),
            sent_at: Time::from_nanos(3_000_000),
            payload: Payload::Ack(a),
        }
    }

    const A: Addressing = Addressing {
        src: 0,
        dst: 2,
        src_port: 10003,
        dst_port: 5001,
        ip_id: 0x1234,
    };

    /// Verifies a transport checksum the way a receiver does: the sum over pseudo-header,
    /// header and (zero) payload must fold to zero.
    fn transport_ok(head: &[u8], total: u32) -> bool {
        use tcplab_core::wire::checksum::{fold, sum16};
        let mut acc = sum16(0, &head[12..20]);
        acc += head[9] as u64;
        acc += (total - 20) as u64;
        acc = sum16(acc, &head[20..]);
        fold(acc) == 0
    }

    #[test]
    fn data_segment_layout_and_checksums() {
        let p = data(1448, true, false, true);
        let mut f = Frame::default();
        encode(&p, A, &mut f);
        let h = &f.head;
        assert_eq!(f.total, p.size, "IP total length = simulated wire size");
        assert_eq!(h.len(), 20 + 20 + 12);
        assert_eq!(h[0], 0x45);
        assert_eq!(h[1] & 3, 0b10, "ECT(0)");
        assert_eq!(u16::from_be_bytes([h[2], h[3]]) as u32, 1448 + 52);
        assert_eq!(u16::from_be_bytes([h[4], h[5]]), 0x1234);
        assert_eq!(h[9], 6);
        assert_eq!(&h[12..16], &[10, 0, 0, 1]);
        assert_eq!(&h[16..20], &[10, 0, 0, 3]);
        assert_eq!(checksum(&h[..20]), 0, "IP header checksum verifies");
        // TCP
        assert_eq!(u16::from_be_bytes([h[20], h[21]]), 10003);
        assert_eq!(u16::from_be_bytes([h[22], h[23]]), 5001);
        assert_eq!(
            u32::from_be_bytes(h[24..28].try_into().unwrap()),
            1000,
            "seq mod 2^32"
        );
        assert_eq!(h[32] >> 4, 8, "data offset 32 bytes");
        assert_eq!(h[33], 0x10 | 0x80, "ACK + CWR");
        assert_eq!(&h[40..44], &[1, 1, 8, 10]);
        assert_eq!(
            u32::from_be_bytes(h[44..48].try_into().unwrap()),
            2500,
            "TSval in us"
        );
        assert!(transport_ok(h, f.total));
        // A CE mark.
        encode(&data(100, true, true, false), A, &mut f);
        assert_eq!(f.head[1] & 3, 0b11);
        assert_eq!(f.head[33], 0x10);
        assert!(transport_ok(&f.head, f.total));
        assert_eq!(checksum(&f.head[..20]), 0);
    }

    #[test]
    fn ack_with_sack_blocks() {
        let p = ack(&[(9000, 10000), (12000, 13448)], true);
        let mut f = Frame::default();
        encode(&p, A, &mut f);
        let h = &f.head;
        assert_eq!(f.total, p.size);
        assert_eq!(f.total, 40 + 12 + 20);
        assert_eq!(h[1], 0, "ACKs are not ECN-capable");
        assert_eq!(h[33], 0x10 | 0x40, "ACK + ECE");
        assert_eq!(u16::from_be_bytes([h[34], h[35]]), 65535, "window clamped");
        assert_eq!(u32::from_be_bytes(h[28..32].try_into().unwrap()), 7000);
        assert_eq!(&h[40..44], &[1, 1, 8, 10]);
        assert_eq!(u32::from_be_bytes(h[44..48].try_into().unwrap()), 3000);
        assert_eq!(u32::from_be_bytes(h[48..52].try_into().unwrap()), 1000);
        assert_eq!(&h[52..56], &[1, 1, 5, 18]);
        assert_eq!(u32::from_be_bytes(h[56..60].try_into().unwrap()), 9000);
        assert_eq!(u32::from_be_bytes(h[60..64].try_into().unwrap()), 10000);
        assert_eq!(u32::from_be_bytes(h[64..68].try_into().unwrap()), 12000);
        assert_eq!(u32::from_be_bytes(h[68..72].try_into().unwrap()), 13448);
        assert_eq!(checksum(&h[..20]), 0);
        assert!(transport_ok(h, f.total));
        // Four blocks with timestamps: only three fit in 40 option bytes.
        let blocks = [(1, 2), (3, 4), (5, 6), (7, 8)];
        encode(&ack(&blocks, true), A, &mut f);
        assert_eq!(f.sack_blocks_cut, 1);
        assert_eq!(f.head.len(), 20 + 60, "TCP header at its 60-byte maximum");
        assert!(transport_ok(&f.head, f.total));
        // Without timestamps all four fit.
        encode(&ack(&blocks, false), A, &mut f);
        assert_eq!(f.sack_blocks_cut, 0);
        assert_eq!(f.head.len(), 20 + 20 + 36);
        assert!(transport_ok(&f.head, f.total));
    }

    #[test]
    fn udp_and_odd_lengths() {
        let p = Packet {
            flow: 1,
            dst: 5,
            size: 1001,
            sent_at: Time::ZERO,
            payload: Payload::Udp(7),
        };
        let mut f = Frame::default();
        encode(&p, A, &mut f);
        assert_eq!(f.total, 1001);
        assert_eq!(f.head.len(), 28);
        assert_eq!(f.head[9], 17);
        assert_eq!(u16::from_be_bytes([f.head[24], f.head[25]]), 981);
        assert!(transport_ok(&f.head, f.total));
        assert_eq!(checksum(&f.head[..20]), 0);
    }

    #[test]
    fn records_truncate_to_snaplen_and_keep_true_length() {
        let mut out = global_header(64).to_vec();
        assert_eq!(&out[0..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(u32::from_le_bytes(out[20..24].try_into().unwrap()), 101);
        let mut f = Frame::default();
        encode(&data(1448, false, false, false), A, &mut f);
        write_record(&mut out, Time::from_nanos(3_000_000_123), &f, 64);
        let r = &out[24..];
        assert_eq!(u32::from_le_bytes(r[0..4].try_into().unwrap()), 3);
        assert_eq!(u32::from_le_bytes(r[4..8].try_into().unwrap()), 123);
        assert_eq!(u32::from_le_bytes(r[8..12].try_into().unwrap()), 64);
        assert_eq!(u32::from_le_bytes(r[12..16].try_into().unwrap()), 1500);
        assert_eq!(r.len(), 16 + 64);
        assert_eq!(&r[16..16 + 52], &f.head[..]);
        assert!(r[16 + 52..].iter().all(|&b| b == 0), "zero payload");
        // A snaplen shorter than the headers cuts them.
        let mut out = Vec::new();
        write_record(&mut out, Time::ZERO, &f, 30);
        assert_eq!(out.len(), 16 + 30);
    }

    #[test]
    fn ip_ids_count_per_source_host() {
        let mut c = Capture::new(
            vec![("a-b".into(), "a-b".into(), vec![0], vec!["forward"])],
            2,
            vec!["a".into(), "r".into(), "b".into()],
            vec![(0, 2); 4],
            vec![],
            DEFAULT_SNAPLEN,
        );
        let mut pool = crate::packet::PacketPool::new();
        let p = data(10, false, false, false);
        let ids: Vec<PacketId> = (0..3).map(|_| pool.insert(p)).collect();
        c.on_send(0, ids[0]);
        c.on_send(0, ids[1]);
        c.on_send(2, ids[2]);
        for &id in &ids {
            c.on_transmit(Time::ZERO, 0, id, &p);
        }
        c.on_transmit(Time::ZERO, 1, ids[0], &p); // not captured
        let out = c.finish();
        assert_eq!(out.addresses[2], ("b".to_string(), "10.0.0.3".to_string()));
        let files = out.files;
        let b = &files[0].bytes;
        let id_at = |k: usize| {
            let rec = 24 + k * (16 + 62);
            u16::from_be_bytes([b[rec + 16 + 4], b[rec + 16 + 5]])
        };
        assert_eq!((id_at(0), id_at(1), id_at(2)), (0, 1, 0));
        assert_eq!(files[0].counts.packets, 3);
        assert_eq!(files[0].counts.tcp_retransmissions, 3);
    }
}

/// Today's encoder output, recorded before the encoder moved to `tcplab_core::wire`: the
/// refactored `encode` must reproduce every byte.
#[cfg(test)]
mod golden {
    use super::*;
    use tcplab_core::{AckSegment, DataSegment, SackBlock, SackList, Seq};

    fn data(seq: u64, len: u32, ts: Option<u64>, ect: bool, ce: bool, cwr: bool) -> Packet {
        let d = DataSegment {
            seq: Seq(seq),
            len,
            ts_val: ts.map(Time::from_nanos),
            ts_ecr: None,
            retransmission: 0,
            ect,
            ce,
            cwr,
        };
        Packet {
            flow: 7,
            dst: 2,
            size: crate::packet::data_wire_size(&d),
            sent_at: Time::from_nanos(ts.unwrap_or(5_000_000)),
            payload: Payload::Data(d),
        }
    }

    fn ack(ack: u64, blocks: &[(u64, u64)], ecr: Option<u64>, window: u64, ece: bool) -> Packet {
        let sack: SackList = blocks
            .iter()
            .map(|&(s, e)| SackBlock {
                start: Seq(s),
                end: Seq(e),
            })
            .collect();
        let a = AckSegment {
            ack: Seq(ack),
            sack,
            ts_ecr: ecr.map(Time::from_nanos),
            ts_val: None,
            window,
            ece,
        };
        Packet {
            flow: 7,
            dst: 0,
            size: crate::packet::ack_wire_size(&a),
            sent_at: Time::from_nanos(123_456_789_012),
            payload: Payload::Ack(a),
        }
    }

    fn udp(size: u32) -> Packet {
        Packet {
            flow: 2,
            dst: 3,
            size,
            sent_at: Time::ZERO,
            payload: Payload::Udp(1),
        }
    }

    const DATA: Addressing = Addressing {
        src: 0,
        dst: 4,
        src_port: 10007,
        dst_port: TCP_RECEIVER_PORT,
        ip_id: 0xbeef,
    };
    const ACK: Addressing = Addressing {
        src: 4,
        dst: 0,
        src_port: TCP_RECEIVER_PORT,
        dst_port: 10007,
        ip_id: 7,
    };
    const UDP: Addressing = Addressing {
        src: 1,
        dst: 3,
        src_port: 10002,
        dst_port: UDP_PORT,
        ip_id: 0xffff,
    };

    fn cases() -> Vec<(&'static str, Packet, Addressing)> {
        let b4 = [(1000, 2000), (3000, 4000), (5000, 6000), (7000, 8000)];
        let b6 = [
            (10, 20),
            (30, 40),
            (50, 60),
            (70, 80),
            (90, 100),
            (110, 120),
        ];
        let far = (1u64 << 32) * 3 + 0xffff_f000;
        vec![
            (
                "data ts ect cwr",
                data(1, 1448, Some(2_500_000), true, false, true),
                DATA,
            ),
            (
                "data no ts ect ce",
                data(1449, 536, None, true, true, false),
                DATA,
            ),
            (
                "data no ecn ts wraps",
                data(far, 1448, Some(u64::MAX / 3), false, false, false),
                DATA,
            ),
            (
                "data ce without ect",
                data(0, 1, Some(0), false, true, false),
                DATA,
            ),
            ("data empty", data(99, 0, None, false, false, false), DATA),
            (
                "ack ts 0 blocks",
                ack(14480, &[], Some(2_500_000), 1 << 20, false),
                ACK,
            ),
            (
                "ack ts 1 block",
                ack(14480, &b4[..1], Some(2_500_000), 30000, true),
                ACK,
            ),
            (
                "ack ts 2 blocks",
                ack(
                    far,
                    &[(far + 10, far + 20), (far + 30, far + 4_000_000_000)],
                    Some(9),
                    65535,
                    false,
                ),
                ACK,
            ),
            ("ack ts 3 blocks", ack(500, &b4[..3], Some(1), 0, true), ACK),
            (
                "ack ts 4 blocks cut",
                ack(500, &b4, Some(77_777_777_777), 65536, false),
                ACK,
            ),
            ("ack no ts 4 blocks", ack(500, &b4, None, 1000, true), ACK),
            ("ack no ts 6 blocks cut", ack(5, &b6, None, 1, false), ACK),
            ("ack no ts 0 blocks", ack(0, &[], None, 65535, false), ACK),
            ("udp 1001", udp(1001), UDP),
            ("udp short", udp(10), UDP),
            ("udp 1500", udp(1500), UDP),
            ("udp checksum 0 sent as ffff", udp(57978), UDP),
            ("udp oversize", udp(70000), UDP),
        ]
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// (name, total, sack_blocks_cut, head in hex) as today's encoder wrote them.
    const GOLDEN: &[(&str, u32, u32, &str)] = &[
        ("data ts ect cwr", 1500, 0, "450205dcbeef4000400662250a0000010a0000052717138900000001000000008090ffff182b00000101080a000009c400000000"),
        ("data no ts ect ce", 576, 0, "45030240beef4000400665c00a0000010a00000527171389000005a9000000005010ffff596e0000"),
        ("data no ecn ts wraps", 1500, 0, "450005dcbeef4000400662270a0000010a00000527171389fffff000000000008010ffff8bdc00000101080ac3ece2a500000000"),
        ("data ce without ect", 53, 0, "45030035beef4000400667cb0a0000010a0000052717138900000000000000008010ffff281700000101080a0000000000000000"),
        ("data empty", 40, 0, "45000028beef4000400667db0a0000010a0000052717138900000063000000005010ffff60cc0000"),
        ("ack ts 0 blocks", 52, 0, "4500003400074000400626b80a0000050a0000011389271700000000000038908010ffff115300000101080a075bcd15000009c4"),
        ("ack ts 1 block", 64, 0, "4500004000074000400626ac0a0000050a000001138927170000000000003890b05075305a1300000101080a075bcd15000009c40101050a000003e8000007d0"),
        ("ack ts 2 blocks", 72, 0, "4500004800074000400626a40a0000050a0000011389271700000000fffff000d010ffff36d400000101080a075bcd150000000001010512fffff00afffff014fffff01eee6b1800"),
        ("ack ts 3 blocks", 80, 0, "45000050000740004006269c0a0000050a0000011389271700000000000001f4f0500000893300000101080a075bcd15000000000101051a000003e8000007d000000bb800000fa00000138800001770"),
        ("ack ts 4 blocks cut", 80, 1, "45000050000740004006269c0a0000050a0000011389271700000000000001f4f010ffffb95f00000101080a075bcd1504a2cb710101051a000003e8000007d000000bb800000fa00000138800001770"),
        ("ack no ts 4 blocks", 76, 0, "4500004c00074000400626a00a0000050a0000011389271700000000000001f4e05003e8382b000001010522000003e8000007d000000bb800000fa0000013880000177000001b5800001f40"),
        ("ack no ts 6 blocks cut", 76, 2, "4500004c00074000400626a00a0000050a000001138927170000000000000005e0100001c9790000010105220000000a000000140000001e00000028000000320000003c0000004600000050"),
        ("ack no ts 0 blocks", 40, 0, "4500002800074000400626c40a0000050a0000011389271700000000000000005010ffff612f0000"),
        ("udp 1001", 1001, 0, "450003e9ffff4000401122ff0a0000020a0000042712000903d5bd23"),
        ("udp short", 28, 0, "4500001cffff4000401126cc0a0000020a000004271200090008c4bd"),
        ("udp 1500", 1500, 0, "450005dcffff40004011210c0a0000020a0000042712000905c8b93d"),
        ("udp checksum 0 sent as ffff", 57978, 0, "4500e27affff40004011446d0a0000020a00000427120009e266ffff"),
        ("udp oversize", 70000, 0, "45001170ffff4000401115780a0000020a00000427120009115ca214"),
    ];

    /// The files' packets, completed with their zero payloads, decode with the shared
    /// codec to what the simulator sent.
    #[test]
    fn records_decode_with_the_codec() {
        use tcplab_core::wire::{parse_tcp, Ecn, TcpFlags};
        let mut f = Frame::default();
        let mut packet = Vec::new();
        for (name, p, a) in cases() {
            encode(&p, a, &mut f);
            packet.clear();
            packet.extend_from_slice(&f.head);
            packet.resize(f.total as usize, 0);
            if let Payload::Udp(_) = p.payload {
                continue;
            }
            let d = parse_tcp(&packet).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(d.ip.src, node_address(a.src), "{name}");
            assert_eq!((d.tcp.src_port, d.tcp.dst_port), (a.src_port, a.dst_port));
            match p.payload {
                Payload::Data(s) => {
                    assert_eq!(d.tcp.seq, s.seq.0 as u32, "{name}");
                    assert_eq!(d.payload.len(), s.len as usize, "{name}");
                    assert_eq!(d.ip.ecn, Ecn::from_flags(s.ect, s.ce), "{name}");
                    assert_eq!(d.tcp.flags.contains(TcpFlags::CWR), s.cwr, "{name}");
                    let ts = s.ts_val.map(|t| ((t.as_nanos() / 1000) as u32, 0));
                    assert_eq!(d.tcp.options.timestamps, ts, "{name}");
                }
                Payload::Ack(k) => {
                    assert_eq!(d.tcp.ack, k.ack.0 as u32, "{name}");
                    assert_eq!(d.tcp.flags.contains(TcpFlags::ECE), k.ece, "{name}");
                    let sent = d.tcp.options.sack();
                    assert_eq!(sent.len() + f.sack_blocks_cut as usize, k.sack.len());
                    for (w, b) in sent.iter().zip(&k.sack) {
                        assert_eq!((w.left, w.right), (b.start.0 as u32, b.end.0 as u32));
                    }
                }
                Payload::Udp(_) => {}
            }
        }
    }

    #[test]
    fn encode_is_bit_identical_to_the_recorded_encoder() {
        let mut f = Frame::default();
        let cases = cases();
        assert_eq!(cases.len(), GOLDEN.len());
        for ((name, p, a), &(gname, total, cut, head)) in cases.iter().zip(GOLDEN) {
            assert_eq!(*name, gname);
            encode(p, *a, &mut f);
            assert_eq!((f.total, f.sack_blocks_cut), (total, cut), "{name}");
            assert_eq!(hex(&f.head), head, "{name}");
        }
    }
}
