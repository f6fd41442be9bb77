//! Whole packets: round trips, and decoding of random, truncated and corrupted input.

use super::checksum::{checksum, fold, pseudo_header_sum, sum16};
use super::*;

/// splitmix64: a seeded generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn random_packet(r: &mut Rng) -> (Ipv4Header, TcpHeader, Vec<u8>) {
    let ecn = [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce][r.below(4) as usize];
    let ip = Ipv4Header {
        dscp: r.below(64) as u8,
        ecn,
        total_len: 0,
        ident: r.next() as u16,
        dont_fragment: r.chance(50),
        ttl: r.next() as u8,
        protocol: PROTO_TCP,
        src: (r.next() as u32).to_be_bytes(),
        dst: (r.next() as u32).to_be_bytes(),
    };
    let syn = r.chance(30);
    let mut options = TcpOptions {
        mss: (syn && r.chance(80)).then(|| r.next() as u16),
        window_scale: (syn && r.chance(70)).then(|| r.below(15) as u8),
        sack_permitted: syn && r.chance(70),
        timestamps: r.chance(70).then(|| (r.next() as u32, r.next() as u32)),
        ..TcpOptions::default()
    };
    if !syn {
        for _ in 0..r.below(6) {
            options.push_sack(WireSackBlock {
                left: r.next() as u32,
                right: r.next() as u32,
            });
        }
    }
    let tcp = TcpHeader {
        src_port: r.next() as u16,
        dst_port: r.next() as u16,
        seq: r.next() as u32,
        ack: r.next() as u32,
        flags: TcpFlags(r.next() as u8),
        window: r.next() as u16,
        urgent: r.next() as u16,
        options,
    };
    let payload = if r.chance(50) {
        Vec::new()
    } else {
        let n = r.below(1500) as usize;
        r.bytes(n)
    };
    (ip, tcp, payload)
}

#[test]
fn random_packets_round_trip() {
    let mut r = Rng(14);
    let mut buf = Vec::new();
    for _ in 0..5000 {
        let (ip, tcp, payload) = random_packet(&mut r);
        buf.clear();
        let n = emit_tcp(&mut buf, &ip, &tcp, &payload);
        assert_eq!(n, buf.len());
        assert_eq!(checksum(&buf[..20]), 0);
        let p = parse_tcp(&buf).expect("a packet we emitted decodes");
        assert_eq!(p.ip.total_len as usize, n);
        assert_eq!(
            p.ip,
            Ipv4Header {
                total_len: n as u16,
                ..ip
            }
        );
        assert_eq!(p.payload, &payload[..]);
        // Options come back as emitted: SACK blocks that did not fit are gone.
        let mut expect = tcp;
        expect.options.clear_sack();
        for b in &tcp.options.sack()[..tcp.options.sack_blocks_emitted()] {
            expect.options.push_sack(*b);
        }
        assert_eq!(p.tcp, expect);
        assert!(p.tcp.header_len() <= TCP_HEADER_LEN + MAX_OPTIONS_LEN);
    }
}

#[test]
fn headers_only_match_a_zero_payload() {
    // The pcap path: headers of a packet whose payload of zeros is not written.
    let mut r = Rng(7);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..500 {
        let (ip, tcp, payload) = random_packet(&mut r);
        let zeros = vec![0u8; payload.len()];
        a.clear();
        b.clear();
        emit_tcp(&mut a, &ip, &tcp, &zeros);
        let total = emit_tcp_headers(&mut b, &ip, &tcp, zeros.len() as u32, 0);
        assert_eq!(total as usize, a.len());
        assert_eq!(&a[..b.len()], &b[..]);
        // And with a real payload, its sum.
        a.clear();
        b.clear();
        emit_tcp(&mut a, &ip, &tcp, &payload);
        emit_tcp_headers(&mut b, &ip, &tcp, payload.len() as u32, sum16(0, &payload));
        assert_eq!(&a[..b.len()], &b[..]);
    }
}

#[test]
fn every_truncation_is_an_error() {
    let mut r = Rng(3);
    let mut buf = Vec::new();
    for _ in 0..300 {
        let (ip, tcp, payload) = random_packet(&mut r);
        buf.clear();
        emit_tcp(&mut buf, &ip, &tcp, &payload);
        for cut in 0..buf.len() {
            assert!(
                parse_tcp(&buf[..cut]).is_err(),
                "prefix {cut} of {}",
                buf.len()
            );
        }
    }
}

#[test]
fn every_single_bit_flip_is_an_error() {
    let mut r = Rng(5);
    let mut buf = Vec::new();
    for _ in 0..40 {
        let (ip, tcp, _) = random_packet(&mut r);
        let n = r.below(64) as usize;
        let payload = r.bytes(n);
        buf.clear();
        emit_tcp(&mut buf, &ip, &tcp, &payload);
        for bit in 0..buf.len() * 8 {
            buf[bit / 8] ^= 1 << (bit % 8);
            assert!(parse_tcp(&buf).is_err(), "bit {bit} flipped");
            buf[bit / 8] ^= 1 << (bit % 8);
        }
    }
}

/// Random bytes behind a valid IP header and with a correct TCP checksum: the option
/// parser sees arbitrary input. It must return (not panic), and what it accepts must be
/// consistent with the bytes.
#[test]
fn random_segments_decode_totally() {
    let mut r = Rng(99);
    let mut counts = [0u32; 4];
    let mut buf = Vec::new();
    for _ in 0..200_000 {
        let len = r.below(80) as usize;
        let mut seg = r.bytes(len);
        if len >= 20 {
            // Mostly plausible data offsets, so options get parsed.
            if r.chance(80) {
                let max_words = (len / 4).min(15) as u64;
                seg[12] = ((5 + r.below(max_words - 4)) as u8) << 4;
            }
            // Options made of plausible kinds and lengths half of the time.
            if r.chance(50) {
                for b in seg[20..].iter_mut() {
                    if r.chance(40) {
                        *b = [0, 1, 2, 3, 4, 5, 8, 10, 18, 34][r.below(10) as usize];
                    }
                }
            }
            seg[16] = 0;
            seg[17] = 0;
        }
        let ip = Ipv4Header {
            total_len: (20 + len) as u16,
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 2],
            ..Ipv4Header::default()
        };
        buf.clear();
        ip.emit(&mut buf);
        let l4 = buf.len();
        buf.extend_from_slice(&seg);
        if len >= 20 && r.chance(90) {
            let acc = pseudo_header_sum(ip.src, ip.dst, PROTO_TCP, len as u32);
            let sum = fold(sum16(acc, &buf[l4..]));
            buf[l4 + 16..l4 + 18].copy_from_slice(&sum.to_be_bytes());
        }
        match parse_tcp(&buf) {
            Ok(p) => {
                counts[0] += 1;
                let seg = &buf[l4..];
                assert_eq!(p.tcp.src_port, u16::from_be_bytes([seg[0], seg[1]]));
                assert_eq!(
                    p.tcp.seq,
                    u32::from_be_bytes([seg[4], seg[5], seg[6], seg[7]])
                );
                assert_eq!(p.tcp.flags.0, seg[13]);
                assert_eq!(p.payload.len(), len - (seg[12] >> 4) as usize * 4);
                assert!(p.tcp.options.sack().len() <= MAX_WIRE_SACK_BLOCKS);
            }
            Err(WireError::TcpOption { .. }) => counts[1] += 1,
            Err(WireError::TcpChecksum) => counts[2] += 1,
            Err(_) => counts[3] += 1,
        }
    }
    // Every path was exercised.
    assert!(counts.iter().all(|&c| c > 1000), "{counts:?}");
}

#[test]
fn random_buffers_never_panic() {
    let mut r = Rng(1);
    for _ in 0..200_000 {
        let len = r.below(120) as usize;
        let mut b = r.bytes(len);
        if len > 0 && r.chance(50) {
            b[0] = 0x45;
        }
        if len > 4 && r.chance(50) {
            b[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        }
        if len >= 20 && r.chance(50) {
            b[10] = 0;
            b[11] = 0;
            let s = checksum(&b[..20]);
            b[10..12].copy_from_slice(&s.to_be_bytes());
        }
        let _ = parse_tcp(&b);
        let _ = Ipv4Header::parse(&b);
        let _ = TcpHeader::parse(&b);
        let _ = TcpOptions::parse(&b);
        let _ = UdpHeader::parse(&b, [1, 2, 3, 4], [5, 6, 7, 8]);
    }
}

#[test]
fn not_tcp_is_refused() {
    let ip = Ipv4Header {
        src: [10, 0, 0, 1],
        dst: [10, 0, 0, 2],
        ..Ipv4Header::default()
    };
    let mut b = Vec::new();
    emit_udp_headers(&mut b, &ip, 1, 9, 28, 0);
    assert_eq!(
        parse_tcp(&b),
        Err(WireError::Protocol {
            expected: PROTO_TCP,
            found: PROTO_UDP
        })
    );
    let (ipd, datagram) = Ipv4Header::parse(&b).expect("valid IP");
    assert_eq!(
        UdpHeader::parse(datagram, ipd.src, ipd.dst).map(|(u, _)| u.dst_port),
        Ok(9)
    );
}
