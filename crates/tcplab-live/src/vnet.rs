//! Segmentation offload on a host's TUN device (docs/live.md, "Offloads"): the device is
//! opened with `IFF_VNET_HDR` and `TUNSETOFFLOAD(TUN_F_CSUM | TUN_F_TSO4)`, so the host's
//! kernel hands the emulator a TCP/IPv4 super-packet of up to 64 KB (a GSO packet) in one
//! read instead of segmenting it in software and queueing each segment on the device, and
//! leaves the transport checksum of any packet to it (`VIRTIO_NET_HDR_F_NEEDS_CSUM`).
//!
//! The emulator then does what the kernel's software segmentation (`tcp_gso_segment`,
//! `inet_gso_segment`) would have done, before anything looks at the packets: one IP packet
//! per `gso_size` bytes of payload, each with the headers of the first, its own sequence
//! number, IP identification (the first's + its index), IP length, FIN and PSH only on the
//! last segment, CWR only on the first, and valid IP and TCP checksums. Every packet that
//! reaches the model, the drop log, the captures and the far host is thus one segment of at
//! most the MTU, as without offload: the model is offered exactly the packets it was
//! offered before, a super-packet's segments stamped with the time of the one read.
//!
//! Every read and write on such a device carries a 10-byte `virtio_net_hdr` first (native
//! byte order: no `TUNSETVNETLE`); the emulator writes an empty one (no offload, checksums
//! complete).

use tcplab_core::wire::checksum::{checksum, fold, pseudo_header_sum, sum16};
use tcplab_core::wire::ipv4::PROTO_TCP;
use tcplab_core::wire::tcp::TcpFlags;

/// Size of `struct virtio_net_hdr` (the TUN default, `TUNSETVNETHDRSZ` not used).
pub const HDR: usize = 10;
/// The header written before every packet: no checksum to complete, no segmentation.
pub const EMPTY: [u8; HDR] = [0; HDR];

const F_NEEDS_CSUM: u8 = 1;
const GSO_NONE: u8 = 0;
const GSO_TCPV4: u8 = 1;
const GSO_ECN: u8 = 0x80;

/// Why a read could not be turned into packets (counted, the packet not offered).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Shorter than the header, or headers that do not fit the packet.
    Malformed,
    /// A segmentation type that was not enabled (only TCP over IPv4 is).
    GsoType(u8),
}

fn ne16(b: &[u8], i: usize) -> usize {
    u16::from_ne_bytes([b[i], b[i + 1]]) as usize
}

/// Turns what one read of an offloading device gave (`raw`: the `virtio_net_hdr`, then the
/// packet) into the IP packets it stands for, appended to `out`, every checksum complete.
pub fn packets(raw: &mut [u8], out: &mut Vec<Vec<u8>>) -> Result<(), Refused> {
    if raw.len() < HDR {
        return Err(Refused::Malformed);
    }
    let (hdr, pkt) = raw.split_at_mut(HDR);
    let (flags, gso_type) = (hdr[0], hdr[1]);
    match gso_type & !GSO_ECN {
        GSO_NONE => {
            if flags & F_NEEDS_CSUM != 0 {
                complete_checksum(pkt, ne16(hdr, 6), ne16(hdr, 8))?;
            }
            out.push(pkt.to_vec());
            Ok(())
        }
        GSO_TCPV4 => segment_tcp4(pkt, ne16(hdr, 4), out),
        t => Err(Refused::GsoType(t)),
    }
}

/// `VIRTIO_NET_HDR_F_NEEDS_CSUM`: the field at `start + offset` holds the pseudo-header's
/// sum; the checksum over `start..` goes there (as the kernel's `skb_checksum_help`).
fn complete_checksum(p: &mut [u8], start: usize, offset: usize) -> Result<(), Refused> {
    let at = start + offset;
    if at + 2 > p.len() {
        return Err(Refused::Malformed);
    }
    let sum = match checksum(&p[start..]) {
        0 => 0xffff,
        s => s,
    };
    p[at..at + 2].copy_from_slice(&sum.to_be_bytes());
    Ok(())
}

/// The segments of a TCP/IPv4 super-packet `p` with `mss` bytes of payload each (the last
/// the rest), as `tcp_gso_segment` makes them.
fn segment_tcp4(p: &[u8], mss: usize, out: &mut Vec<Vec<u8>>) -> Result<(), Refused> {
    if p.len() < 20 || p[0] >> 4 != 4 || p[9] != PROTO_TCP || mss == 0 {
        return Err(Refused::Malformed);
    }
    let ihl = (p[0] & 0x0f) as usize * 4;
    if ihl < 20 || p.len() < ihl + 20 {
        return Err(Refused::Malformed);
    }
    let thl = (p[ihl + 12] >> 4) as usize * 4;
    let headers = ihl + thl;
    if thl < 20 || p.len() < headers {
        return Err(Refused::Malformed);
    }
    let payload = &p[headers..];
    let id0 = u16::from_be_bytes([p[4], p[5]]);
    let seq0 = u32::from_be_bytes([p[ihl + 4], p[ihl + 5], p[ihl + 6], p[ihl + 7]]);
    let flags0 = p[ihl + 13];
    let (src, dst): ([u8; 4], [u8; 4]) = (
        p[12..16].try_into().expect("4 bytes"),
        p[16..20].try_into().expect("4 bytes"),
    );
    let n = payload.len().div_ceil(mss).max(1);
    for (i, chunk) in payload
        .chunks(mss)
        .chain(payload.is_empty().then_some(&[][..]))
        .enumerate()
    {
        let len = headers + chunk.len();
        let mut s = Vec::with_capacity(len);
        s.extend_from_slice(&p[..headers]);
        s.extend_from_slice(chunk);
        s[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        s[4..6].copy_from_slice(&id0.wrapping_add(i as u16).to_be_bytes());
        s[10..12].copy_from_slice(&[0, 0]);
        let ip_sum = checksum(&s[..ihl]);
        s[10..12].copy_from_slice(&ip_sum.to_be_bytes());
        let t = &mut s[ihl..];
        t[4..8].copy_from_slice(&seq0.wrapping_add((i * mss) as u32).to_be_bytes());
        let mut flags = flags0;
        if i + 1 < n {
            flags &= !(TcpFlags::FIN | TcpFlags::PSH).0;
        }
        if i > 0 {
            flags &= !TcpFlags::CWR.0;
        }
        t[13] = flags;
        t[16..18].copy_from_slice(&[0, 0]);
        let sum = fold(sum16(
            pseudo_header_sum(src, dst, PROTO_TCP, t.len() as u32),
            t,
        ));
        t[16..18].copy_from_slice(&sum.to_be_bytes());
        out.push(s);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TCP_FIN: u8 = TcpFlags::FIN.0;
    const TCP_PSH: u8 = TcpFlags::PSH.0;
    const TCP_CWR: u8 = TcpFlags::CWR.0;

    /// A TCP/IPv4 packet 10.0.0.1:5000 -> 10.0.0.2:6000 with `payload` (byte k = k mod 251),
    /// sequence number `seq`, IP id `id`, TCP flags `flags`, 12 bytes of options (header 32);
    /// checksums left as the sender's kernel leaves them with offload (0 and a seed).
    fn tcp(payload: usize, seq: u32, id: u16, flags: u8) -> Vec<u8> {
        let mut p = vec![0u8; 20 + 32 + payload];
        p[0] = 0x45;
        let len = p.len().min(65535) as u16;
        p[2..4].copy_from_slice(&len.to_be_bytes());
        p[4..6].copy_from_slice(&id.to_be_bytes());
        p[6] = 0x40;
        p[8] = 64;
        p[9] = 6;
        p[12..16].copy_from_slice(&[10, 0, 0, 1]);
        p[16..20].copy_from_slice(&[10, 0, 0, 2]);
        let t = &mut p[20..];
        t[0..2].copy_from_slice(&5000u16.to_be_bytes());
        t[2..4].copy_from_slice(&6000u16.to_be_bytes());
        t[4..8].copy_from_slice(&seq.to_be_bytes());
        t[12] = 8 << 4;
        t[13] = flags;
        t[20..32].copy_from_slice(&[1, 1, 8, 10, 0, 0, 0, 7, 0, 0, 0, 9]);
        for (k, b) in t[32..].iter_mut().enumerate() {
            *b = (k % 251) as u8;
        }
        p
    }

    fn with_hdr(flags: u8, gso: u8, gso_size: u16, start: u16, offset: u16, p: &[u8]) -> Vec<u8> {
        let mut raw = vec![flags, gso];
        for v in [52u16, gso_size, start, offset] {
            raw.extend_from_slice(&v.to_ne_bytes());
        }
        raw.extend_from_slice(p);
        raw
    }

    /// The transport checksum verifies as a receiver checks it.
    fn l4_ok(s: &[u8]) -> bool {
        let ihl = (s[0] & 0x0f) as usize * 4;
        let src = s[12..16].try_into().unwrap();
        let dst = s[16..20].try_into().unwrap();
        let acc = pseudo_header_sum(src, dst, s[9], (s.len() - ihl) as u32);
        fold(sum16(acc, &s[ihl..])) == 0
    }

    #[test]
    fn a_super_packet_becomes_the_segments_software_gso_makes() {
        let mss = 1448;
        let payload = 3 * mss + 100;
        let p = tcp(payload, 0xffff_f000, 0xfffe, 0x18 | TCP_FIN | TCP_CWR); // PSH ACK FIN CWR
        let mut raw = with_hdr(F_NEEDS_CSUM, GSO_TCPV4, mss as u16, 20, 16, &p);
        let mut out = Vec::new();
        packets(&mut raw, &mut out).unwrap();
        assert_eq!(out.len(), 4);
        let mut joined = Vec::new();
        for (i, s) in out.iter().enumerate() {
            let last = i == 3;
            assert_eq!(s.len(), 52 + if last { 100 } else { mss });
            assert_eq!(
                u16::from_be_bytes([s[2], s[3]]) as usize,
                s.len(),
                "IP length"
            );
            assert_eq!(
                u16::from_be_bytes([s[4], s[5]]),
                0xfffeu16.wrapping_add(i as u16)
            );
            assert_eq!(checksum(&s[..20]), 0, "IP header checksum");
            assert!(l4_ok(s), "TCP checksum of segment {i}");
            let seq = u32::from_be_bytes(s[24..28].try_into().unwrap());
            assert_eq!(seq, 0xffff_f000u32.wrapping_add((i * mss) as u32));
            let f = s[33];
            assert_eq!(
                f & (TCP_FIN | TCP_PSH) != 0,
                last,
                "FIN and PSH on the last only"
            );
            assert_eq!(f & TCP_CWR != 0, i == 0, "CWR on the first only");
            assert_eq!(f & 0x10, 0x10, "ACK on every segment");
            assert_eq!(&s[40..52], &p[40..52], "options copied");
            joined.extend_from_slice(&s[52..]);
        }
        assert_eq!(joined, p[52..], "the payload, in order, once");
    }

    #[test]
    fn a_packet_leaving_its_checksum_gets_it_completed_and_others_pass_unchanged() {
        // UDP 8 + 100 bytes: the field holds the pseudo-header sum, as the kernel leaves it.
        let mut p = tcp(0, 0, 1, 0x10)[..20].to_vec();
        p[9] = 17;
        p.extend_from_slice(&[0x13, 0x88, 0x17, 0x70, 0, 108, 0, 0]);
        p.extend((0..100u8).map(|k| k.wrapping_mul(7)));
        let len = p.len() as u16;
        p[2..4].copy_from_slice(&len.to_be_bytes());
        let seed = !fold(pseudo_header_sum([10, 0, 0, 1], [10, 0, 0, 2], 17, 108));
        p[26..28].copy_from_slice(&seed.to_be_bytes());
        let mut raw = with_hdr(F_NEEDS_CSUM, GSO_NONE, 0, 20, 6, &p);
        let mut out = Vec::new();
        packets(&mut raw, &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert!(l4_ok(&out[0]));
        assert_eq!(out[0][..26], p[..26]);
        assert_eq!(out[0][28..], p[28..]);
        // No flag: the bytes as read.
        let mut raw = with_hdr(0, GSO_NONE, 0, 0, 0, &p);
        packets(&mut raw, &mut out).unwrap();
        assert_eq!(out[1], p);
    }

    #[test]
    fn what_cannot_be_segmented_is_refused() {
        let mut out = Vec::new();
        assert_eq!(packets(&mut [0u8; 5], &mut out), Err(Refused::Malformed));
        let p = tcp(3000, 1, 1, 0x10);
        let mut raw = with_hdr(F_NEEDS_CSUM, 4, 1448, 20, 16, &p); // TCPv6
        assert_eq!(packets(&mut raw, &mut out), Err(Refused::GsoType(4)));
        let mut raw = with_hdr(F_NEEDS_CSUM, GSO_TCPV4, 0, 20, 16, &p);
        assert_eq!(packets(&mut raw, &mut out), Err(Refused::Malformed));
        let mut raw = with_hdr(F_NEEDS_CSUM, GSO_NONE, 0, 20, 2000, &p[..100]);
        assert_eq!(packets(&mut raw, &mut out), Err(Refused::Malformed));
        assert!(out.is_empty());
    }
}
