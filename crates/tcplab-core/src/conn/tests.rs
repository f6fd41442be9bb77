//! Scripted tests in the smoltcp style: bytes in, the bytes, flags and options that come out
//! checked field by field. The peer's packets are built with the codec.

use super::*;
use crate::wire::{self, Ecn, Ipv4Header, TcpFlags, TcpHeader, TcpOptions, WireSackBlock};

const LOCAL: ([u8; 4], u16) = ([10, 0, 0, 1], 40000);
const REMOTE: ([u8; 4], u16) = ([10, 0, 0, 2], 5001);
const ISS: u32 = 0xffff_fff0; // our sequence numbers wrap within the first bytes
const IRS: u32 = 1_000_000;
const PEER_TS: u32 = 777;

fn t(ms: u64) -> Time {
    Time::from_millis(ms)
}

fn cfg() -> ConnConfig {
    ConnConfig {
        local: LOCAL,
        remote: REMOTE,
        iss: ISS,
        ts_offset: 5,
        tcp: TcpConfig {
            delayed_ack: false,
            initial_cwnd: 2,
            rcv_buf: 4 << 20,
            ..TcpConfig::default()
        },
        time_wait: Dur::from_secs(60),
        ..ConnConfig::default()
    }
}

fn sender_role(bytes: u64) -> Role {
    Role::Sender {
        controller: ControllerSpec::named("reno"),
        recovery: RecoverySpec::named("sack"),
        app_bytes: Some(bytes),
    }
}

/// A packet from the peer.
struct Seg {
    flags: TcpFlags,
    seq: u32,
    ack: u32,
    window: u16,
    options: TcpOptions,
    payload: Vec<u8>,
    ecn: Ecn,
}

fn seg(flags: TcpFlags, seq: u32, ack: u32) -> Seg {
    Seg {
        flags,
        seq,
        ack,
        window: 1000,
        options: TcpOptions::default(),
        payload: Vec::new(),
        ecn: Ecn::NotEct,
    }
}

impl Seg {
    fn ts(mut self, val: u32, ecr: u32) -> Seg {
        self.options.timestamps = Some((val, ecr));
        self
    }
    fn bytes(&self) -> Vec<u8> {
        let ip = Ipv4Header {
            src: REMOTE.0,
            dst: LOCAL.0,
            ecn: self.ecn,
            ..Ipv4Header::default()
        };
        let tcp = TcpHeader {
            src_port: REMOTE.1,
            dst_port: LOCAL.1,
            seq: self.seq,
            ack: self.ack,
            flags: self.flags,
            window: self.window,
            urgent: 0,
            options: self.options,
        };
        let mut out = Vec::new();
        wire::emit_tcp(&mut out, &ip, &tcp, &self.payload);
        out
    }
}

/// A decoded packet from the connection.
#[derive(Debug)]
struct Out {
    ip: Ipv4Header,
    tcp: TcpHeader,
    payload: Vec<u8>,
    raw: Vec<u8>,
}

fn send(c: &mut Connection, now: Time, s: Seg) {
    c.on_packet(now, &s.bytes())
        .expect("our packet is accepted");
}

fn recv(c: &mut Connection, now: Time) -> Option<Out> {
    let mut buf = Vec::new();
    let n = c.poll_packet(now, &mut buf)?;
    assert_eq!(n, buf.len());
    let p = wire::parse_tcp(&buf).expect("the connection emits valid packets");
    assert_eq!((p.ip.src, p.ip.dst), (LOCAL.0, REMOTE.0));
    assert_eq!((p.tcp.src_port, p.tcp.dst_port), (LOCAL.1, REMOTE.1));
    Some(Out {
        ip: p.ip,
        tcp: p.tcp,
        payload: p.payload.to_vec(),
        raw: buf.clone(),
    })
}

fn recv_all(c: &mut Connection, now: Time) -> Vec<Out> {
    std::iter::from_fn(|| recv(c, now)).collect()
}

fn full_syn_ack_options() -> TcpOptions {
    TcpOptions {
        mss: Some(1400),
        window_scale: Some(9),
        sack_permitted: true,
        timestamps: Some((PEER_TS, 0)),
        ..TcpOptions::default()
    }
}

/// An established sending connection (Linux-like SYN-ACK with every option).
fn established_sender(bytes: u64) -> Connection {
    let mut c = Connection::connect(t(0), cfg(), sender_role(bytes)).expect("config");
    let syn = recv(&mut c, t(0)).expect("SYN");
    let ts = syn.tcp.options.timestamps.map_or(0, |x| x.0);
    let mut sa = seg(TcpFlags::SYN | TcpFlags::ACK, IRS, ISS.wrapping_add(1));
    sa.options = full_syn_ack_options();
    sa.options.timestamps = Some((PEER_TS, ts));
    sa.window = 65160; // Linux's
    send(&mut c, t(10), sa);
    c
}

#[test]
fn active_open_sends_a_linux_syn() {
    let mut c = Connection::connect(t(0), cfg(), sender_role(10_000)).expect("config");
    assert_eq!(c.state(), State::SynSent);
    let syn = recv(&mut c, t(0)).expect("SYN");
    assert_eq!(syn.tcp.flags, TcpFlags::SYN);
    assert_eq!(syn.tcp.seq, ISS);
    assert_eq!(syn.tcp.ack, 0);
    assert_eq!(syn.ip.ecn, Ecn::NotEct);
    assert_eq!((syn.ip.ttl, syn.ip.dont_fragment), (64, true));
    // Options exactly as Linux lays them out: MSS, SACK-perm + TS, NOP + WS.
    let tsval = 5u32; // time 0 in microsecond ticks plus the offset
    let mut expect = vec![2, 4, 0x05, 0xb4, 4, 2, 8, 10];
    expect.extend_from_slice(&tsval.to_be_bytes());
    expect.extend_from_slice(&[0, 0, 0, 0, 1, 3, 3, 7]);
    assert_eq!(&syn.raw[40..], &expect[..]);
    assert_eq!(syn.raw[32] >> 4, 10, "data offset: 40 bytes");
    assert!(recv(&mut c, t(0)).is_none(), "one SYN");
}

#[test]
fn syn_retransmissions_back_off_then_give_up() {
    let mut c = Connection::connect(t(0), cfg(), sender_role(1)).expect("config");
    assert!(recv(&mut c, t(0)).is_some());
    // Linux: 1 s initial RTO doubling, 6 retries: resends at 1, 3, 7, 15, 31, 63 s.
    let mut resent = Vec::new();
    while let Some(at) = c.poll_timeout() {
        c.on_timeout(at);
        if let Some(p) = recv(&mut c, at) {
            assert_eq!(p.tcp.flags, TcpFlags::SYN);
            assert_eq!(p.tcp.seq, ISS);
            resent.push(at.as_nanos() / 1_000_000_000);
        }
    }
    assert_eq!(resent, [1, 3, 7, 15, 31, 63]);
    assert!(c.is_done());
    assert_eq!(c.outcome(), Some(Outcome::TimedOut));
}

#[test]
fn syn_ack_negotiates_and_configures_the_core() {
    let mut c = established_sender(100_000);
    assert_eq!(c.state(), State::Established);
    let n = c.negotiated().expect("negotiated");
    assert_eq!(
        n,
        Negotiated {
            peer_mss: 1400,
            sack: true,
            timestamps: true,
            window_scaling: true,
            snd_wscale: 9,
            rcv_wscale: 7,
            ecn: false,
        }
    );
    let core = c.core_config().expect("core");
    assert_eq!(core.mss, 1388, "peer MSS less the timestamp option");
    assert_eq!(
        core.rcv_buf, 65160,
        "the SYN-ACK's window: the sender's until the first ACK"
    );
    assert!(core.timestamps);
    assert_eq!(core.sack_blocks, 3);
    // The initial window of data; the first segment carries the handshake's ACK.
    let out = recv_all(&mut c, t(10));
    assert_eq!(out[0].tcp.flags, TcpFlags::ACK);
    assert_eq!(out[0].tcp.seq, ISS.wrapping_add(1));
    assert_eq!(out[0].tcp.ack, IRS + 1);
    assert_eq!(out[0].tcp.options.timestamps.map(|x| x.1), Some(PEER_TS));
    let data: Vec<&Out> = out.iter().filter(|o| !o.payload.is_empty()).collect();
    assert_eq!(data.len(), 2, "initial window of 2 segments");
    for (k, d) in data.iter().enumerate() {
        assert_eq!(d.tcp.seq, ISS.wrapping_add(1 + 1388 * k as u32));
        assert_eq!(d.payload.len(), 1388);
        assert_eq!(d.tcp.ack, IRS + 1);
        assert_eq!(d.tcp.flags, TcpFlags::ACK);
        assert_eq!(&d.raw[40..44], &[1, 1, 8, 10], "NOP NOP TS");
        assert_eq!(d.raw.len(), 20 + 32 + 1388);
        let first = 1388 * k as u64;
        assert!(d
            .payload
            .iter()
            .enumerate()
            .all(|(i, &b)| b == payload_byte(first + i as u64)));
    }
    // The first data byte sits past the wrap of the 32-bit space.
    assert!(data[1].tcp.seq < ISS);
}

/// A SYN-ACK answering `syn` with every option.
fn syn_ack_to(syn: &Out) -> Seg {
    let ts = syn.tcp.options.timestamps.map_or(0, |x| x.0);
    let mut sa = seg(TcpFlags::SYN | TcpFlags::ACK, IRS, ISS.wrapping_add(1));
    sa.options = full_syn_ack_options();
    sa.options.timestamps = Some((PEER_TS, ts));
    sa
}

#[test]
fn the_handshake_gives_the_sender_its_first_rtt_sample() {
    for mode in [crate::RtoMode::Rfc6298, crate::RtoMode::Linux] {
        let mut cfg = cfg();
        cfg.tcp.rto_min = Dur::from_millis(200);
        cfg.tcp.rto_mode = mode;
        let mut c = Connection::connect(t(0), cfg, sender_role(100_000)).expect("config");
        let syn = recv(&mut c, t(0)).expect("SYN");
        send(&mut c, t(100), syn_ack_to(&syn));
        let s = c.sender().expect("a sender core");
        assert_eq!(s.rtt().srtt(), Some(Dur::from_millis(100)), "{mode:?}");
        assert_eq!(s.rtt().min_rtt(), Some(Dur::from_millis(100)), "{mode:?}");
        // RFC 6298: 100 + 4 x 50 ms. Linux's first sample: srtt + 2 srtt (mdev = 2 r).
        assert_eq!(s.rtt().rto(), Dur::from_millis(300), "{mode:?}");
        assert_eq!(
            s.counters().rtt_samples,
            0,
            "a handshake sample is not a data sample"
        );
    }
}

#[test]
fn a_retransmitted_syn_gives_no_rtt_sample() {
    let mut cfg = cfg();
    cfg.tcp.rto_min = Dur::from_millis(200);
    let mut c = Connection::connect(t(0), cfg, sender_role(100_000)).expect("config");
    recv(&mut c, t(0)).expect("SYN");
    let at = c.poll_timeout().expect("the SYN's timer");
    c.on_timeout(at);
    let syn = recv(&mut c, at).expect("the SYN again");
    send(&mut c, at + Dur::from_millis(50), syn_ack_to(&syn));
    let s = c.sender().expect("a sender core");
    assert_eq!(
        s.rtt().srtt(),
        None,
        "Karn: either SYN may have been answered"
    );
    assert_eq!(s.rtt().rto(), Dur::from_secs(1), "rto_initial");
}

#[test]
fn a_passive_sender_takes_the_syn_ack_round_trip() {
    let mut cfg = cfg();
    cfg.remote.1 = 0;
    cfg.tcp.rto_min = Dur::from_millis(200);
    let mut c = Connection::listen(cfg, sender_role(100_000)).expect("config");
    send(&mut c, t(0), syn_from_peer(full_syn_ack_options()));
    let sa = recv(&mut c, t(5)).expect("SYN-ACK");
    assert_eq!(sa.tcp.flags, TcpFlags::SYN | TcpFlags::ACK);
    let ts = sa.tcp.options.timestamps.map_or(0, |x| x.0);
    send(
        &mut c,
        t(45),
        seg(TcpFlags::ACK, IRS + 1, ISS.wrapping_add(1)).ts(PEER_TS, ts),
    );
    assert_eq!(c.state(), State::Established);
    let s = c.sender().expect("a sender core");
    assert_eq!(s.rtt().srtt(), Some(Dur::from_millis(40)));
}

#[test]
fn the_syn_ack_window_limits_the_first_flight() {
    let mut c = Connection::connect(t(0), cfg(), sender_role(100_000)).expect("config");
    let _ = recv(&mut c, t(0));
    let mut sa = seg(TcpFlags::SYN | TcpFlags::ACK, IRS, ISS.wrapping_add(1));
    sa.options = full_syn_ack_options();
    sa.window = 2000; // one segment of 1388 fits, not the initial window's two
    send(&mut c, t(10), sa);
    let data = recv_all(&mut c, t(10));
    assert_eq!(data.len(), 1);
    // A scaled window in the first ACK (1000 << 9) opens it.
    let acked = ISS.wrapping_add(1 + 1388);
    send(
        &mut c,
        t(20),
        seg(TcpFlags::ACK, IRS + 1, acked).ts(PEER_TS, 0),
    );
    assert!(recv_all(&mut c, t(20)).len() >= 2);
}

#[test]
fn syn_ack_without_options_turns_them_off() {
    let newreno = Role::Sender {
        controller: ControllerSpec::named("reno"),
        recovery: RecoverySpec::named("newreno"),
        app_bytes: Some(5000),
    };
    let mut c = Connection::connect(t(0), cfg(), newreno).expect("config");
    assert!(recv(&mut c, t(0)).is_some());
    send(
        &mut c,
        t(5),
        seg(TcpFlags::SYN | TcpFlags::ACK, IRS, ISS.wrapping_add(1)),
    );
    let n = c.negotiated().expect("negotiated");
    assert_eq!((n.peer_mss, n.sack, n.timestamps), (536, false, false));
    assert_eq!(
        (n.window_scaling, n.snd_wscale, n.rcv_wscale),
        (false, 0, 0)
    );
    let core = c.core_config().expect("core");
    assert_eq!(
        (core.mss, core.timestamps, core.sack_blocks),
        (536, false, 0)
    );
    for o in recv_all(&mut c, t(5)) {
        assert!(o.tcp.options.is_empty(), "no options after a bare SYN-ACK");
        assert!(o.payload.len() <= 536);
        assert_eq!(o.tcp.window, 65535, "unscaled window, clamped");
    }
    // SACK recovery cannot run against a peer without SACK: the connection is reset.
    let mut c = Connection::connect(t(0), cfg(), sender_role(5000)).expect("config");
    assert!(recv(&mut c, t(0)).is_some());
    send(
        &mut c,
        t(5),
        seg(TcpFlags::SYN | TcpFlags::ACK, IRS, ISS.wrapping_add(1)),
    );
    assert_eq!(c.outcome(), Some(Outcome::Config));
    let why = c.refusal().expect("the reason is kept").to_string();
    assert!(why.contains("sack_blocks"), "names the setting: {why}");
    let r = recv(&mut c, t(5)).expect("RST");
    assert_eq!(r.tcp.flags, TcpFlags::RST | TcpFlags::ACK);
    assert_eq!((r.tcp.seq, r.tcp.ack), (ISS.wrapping_add(1), IRS + 1));
}

#[test]
fn acks_drive_the_core_and_sack_maps_back() {
    let mut c = established_sender(20 * 1388);
    let _ = recv_all(&mut c, t(10));
    let una = ISS.wrapping_add(1);
    // The peer acknowledges the first segment and SACKs nothing: the window opens.
    let tsv = c.clock.to_wire(t(10));
    send(
        &mut c,
        t(30),
        seg(TcpFlags::ACK, IRS + 1, una.wrapping_add(1388)).ts(PEER_TS + 1, tsv),
    );
    let s = c.sender().expect("sender");
    assert_eq!(s.snd_una(), crate::Seq(1388));
    assert!(
        s.rtt().srtt().is_some(),
        "RTT sampled from the echoed timestamp"
    );
    let out = recv_all(&mut c, t(30));
    assert!(!out.is_empty());
    assert_eq!(
        out[0].tcp.options.timestamps.map(|x| x.1),
        Some(PEER_TS + 1)
    );
    // A SACK block above a hole reaches the scoreboard in core numbers.
    let mut a = seg(TcpFlags::ACK, IRS + 1, una.wrapping_add(1388)).ts(PEER_TS + 2, tsv);
    a.options.push_sack(WireSackBlock {
        left: una.wrapping_add(2 * 1388),
        right: una.wrapping_add(3 * 1388),
    });
    send(&mut c, t(40), a);
    let sb = c.sender().expect("sender").scoreboard();
    assert!(sb.sacked_bytes() >= 1388, "{:?}", sb.sacked_bytes());
}

#[test]
fn each_packet_has_the_next_ip_ident_and_last_ident_names_it() {
    let mut c = Connection::connect(t(0), cfg(), sender_role(10 * 1388)).expect("config");
    let syn = recv(&mut c, t(0)).expect("SYN");
    assert_eq!(
        syn.ip.ident,
        (ISS >> 16) as u16,
        "the first ident is the ISS's high half"
    );
    assert_eq!(c.last_ident(), syn.ip.ident);
    let mut sa = seg(TcpFlags::SYN | TcpFlags::ACK, IRS, ISS.wrapping_add(1));
    sa.options = full_syn_ack_options();
    sa.window = 65160;
    send(&mut c, t(10), sa);
    let mut want = syn.ip.ident; // 0xffff here: the next ones wrap to 0, 1, ...
    let mut packets = 0;
    while let Some(p) = recv(&mut c, t(10)) {
        packets += 1;
        want = want.wrapping_add(1);
        assert_eq!(
            p.ip.ident, want,
            "one more per packet, control and data alike"
        );
        assert_eq!(c.last_ident(), want);
        if !p.payload.is_empty() {
            assert!(c.take_transmitted().is_some());
        }
    }
    assert!(packets >= 2, "the ACK and some data went out");
}

fn syn_from_peer(opts: TcpOptions) -> Seg {
    let mut s = seg(TcpFlags::SYN, IRS, 0);
    s.options = opts;
    s
}

fn listening_receiver() -> Connection {
    let mut cfg = cfg();
    cfg.remote.1 = 0;
    Connection::listen(cfg, Role::Receiver).expect("config")
}

#[test]
fn passive_open_answers_what_the_syn_offered() {
    let mut c = listening_receiver();
    assert_eq!(c.state(), State::Listen);
    assert!(recv(&mut c, t(0)).is_none());
    send(&mut c, t(0), syn_from_peer(full_syn_ack_options()));
    assert_eq!(c.state(), State::SynReceived);
    assert_eq!(c.remote(), REMOTE, "port learned from the SYN");
    let sa = recv(&mut c, t(0)).expect("SYN-ACK");
    assert_eq!(sa.tcp.flags, TcpFlags::SYN | TcpFlags::ACK);
    assert_eq!((sa.tcp.seq, sa.tcp.ack), (ISS, IRS + 1));
    let o = sa.tcp.options;
    assert_eq!(o.mss, Some(1460));
    assert_eq!(o.window_scale, Some(7));
    assert!(o.sack_permitted);
    assert_eq!(o.timestamps, Some((5, PEER_TS)), "echoes the SYN's TSval");
    assert_eq!(&sa.raw[44..48], &[4, 2, 8, 10], "SACK-perm + TS");
    // A SYN without options gets a SYN-ACK with only MSS.
    let mut bare = listening_receiver();
    send(&mut bare, t(0), syn_from_peer(TcpOptions::default()));
    let sa = recv(&mut bare, t(0)).expect("SYN-ACK");
    assert_eq!(
        sa.tcp.options,
        TcpOptions {
            mss: Some(1460),
            ..TcpOptions::default()
        }
    );
    // A window scale of 0 offered is still answered (scaling on, shift 0 from the peer).
    let mut ws0 = listening_receiver();
    send(
        &mut ws0,
        t(0),
        syn_from_peer(TcpOptions {
            window_scale: Some(0),
            ..TcpOptions::default()
        }),
    );
    let sa = recv(&mut ws0, t(0)).expect("SYN-ACK");
    assert_eq!(sa.tcp.options.window_scale, Some(7));
    assert!(ws0
        .negotiated()
        .is_some_and(|n| n.window_scaling && n.snd_wscale == 0));
    // SACK without timestamps: NOP NOP SACK-perm.
    let mut sack_only = listening_receiver();
    send(
        &mut sack_only,
        t(0),
        syn_from_peer(TcpOptions {
            sack_permitted: true,
            mss: Some(1000),
            ..TcpOptions::default()
        }),
    );
    let sa = recv(&mut sack_only, t(0)).expect("SYN-ACK");
    assert_eq!(&sa.raw[40..], &[2, 4, 0x05, 0xb4, 1, 1, 4, 2]);
}

#[test]
fn syn_ack_is_retransmitted_on_timeout_and_on_a_repeated_syn() {
    let mut c = listening_receiver();
    send(&mut c, t(0), syn_from_peer(full_syn_ack_options()));
    assert!(recv(&mut c, t(0)).is_some());
    assert_eq!(c.poll_timeout(), Some(t(1000)));
    c.on_timeout(t(1000));
    let again = recv(&mut c, t(1000)).expect("SYN-ACK again");
    assert_eq!(again.tcp.flags, TcpFlags::SYN | TcpFlags::ACK);
    assert_eq!(c.poll_timeout(), Some(t(3000)), "backed off to 2 s");
    send(&mut c, t(1500), syn_from_peer(full_syn_ack_options()));
    assert!(
        recv(&mut c, t(1500)).is_some(),
        "a repeated SYN is answered"
    );
    // Five retries, then it gives up.
    let mut n = 0;
    while let Some(at) = c.poll_timeout() {
        c.on_timeout(at);
        n += recv_all(&mut c, at).len();
    }
    assert_eq!(n, 4, "retries 2..5");
    assert_eq!(c.outcome(), Some(Outcome::TimedOut));
}

/// A receiving connection established by a Linux-like SYN and the handshake ACK.
fn established_receiver() -> Connection {
    let mut c = listening_receiver();
    send(&mut c, t(0), syn_from_peer(full_syn_ack_options()));
    let _ = recv(&mut c, t(0));
    send(
        &mut c,
        t(1),
        seg(TcpFlags::ACK, IRS + 1, ISS.wrapping_add(1)).ts(PEER_TS, 5),
    );
    assert_eq!(c.state(), State::Established);
    c
}

fn data(seq: u32, len: usize, ts: u32) -> Seg {
    let mut s = seg(TcpFlags::ACK, seq, ISS.wrapping_add(1)).ts(ts, 5);
    s.payload = vec![7; len];
    s
}

#[test]
fn receiver_acks_in_wire_numbers_with_sack_and_scaled_window() {
    let mut c = established_receiver();
    let d0 = IRS + 1;
    send(&mut c, t(2), data(d0, 1000, 900));
    let a = recv(&mut c, t(2)).expect("ACK");
    assert_eq!(a.tcp.flags, TcpFlags::ACK);
    assert_eq!(a.tcp.seq, ISS.wrapping_add(1));
    assert_eq!(a.tcp.ack, d0 + 1000);
    assert_eq!(
        a.tcp.options.timestamps.map(|x| x.1),
        Some(900),
        "TSecr echoes TSval"
    );
    assert_eq!(
        a.tcp.window,
        (4 << 20 >> 7) as u16,
        "4 MB buffer, scaled by 2^7"
    );
    // A hole: the next ACK carries a SACK block.
    send(&mut c, t(3), data(d0 + 2000, 1000, 901));
    let a = recv(&mut c, t(3)).expect("dup ACK");
    assert_eq!(a.tcp.ack, d0 + 1000);
    assert_eq!(
        a.tcp.options.sack(),
        &[WireSackBlock {
            left: d0 + 2000,
            right: d0 + 3000
        }]
    );
    assert_eq!(
        &a.raw[52..56],
        &[1, 1, 5, 10],
        "NOP NOP SACK after the TS option"
    );
    // The hole fills.
    send(&mut c, t(4), data(d0 + 1000, 1000, 902));
    let a = recv(&mut c, t(4)).expect("ACK");
    assert_eq!(a.tcp.ack, d0 + 3000);
    assert!(a.tcp.options.sack().is_empty());
    assert_eq!(c.receiver().map(|r| r.rcv_nxt()), Some(crate::Seq(3000)));
}

#[test]
fn ecn_ce_is_echoed_until_cwr() {
    let mut base = cfg();
    base.tcp.ecn = true;
    base.remote.1 = 0;
    let mut c = Connection::listen(base, Role::Receiver).expect("config");
    let mut syn = syn_from_peer(full_syn_ack_options());
    syn.flags = TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR;
    send(&mut c, t(0), syn);
    let sa = recv(&mut c, t(0)).expect("SYN-ACK");
    assert_eq!(sa.tcp.flags, TcpFlags::SYN | TcpFlags::ACK | TcpFlags::ECE);
    send(
        &mut c,
        t(1),
        seg(TcpFlags::ACK, IRS + 1, ISS.wrapping_add(1)).ts(PEER_TS, 5),
    );
    assert!(c.negotiated().is_some_and(|n| n.ecn));
    let mut ce = data(IRS + 1, 100, 900);
    ce.ecn = Ecn::Ce;
    send(&mut c, t(2), ce);
    let a = recv(&mut c, t(2)).expect("ACK");
    assert!(a.tcp.flags.contains(TcpFlags::ECE));
    let mut cwr = data(IRS + 101, 100, 901);
    cwr.ecn = Ecn::Ect0;
    cwr.flags = TcpFlags::ACK | TcpFlags::CWR;
    send(&mut c, t(3), cwr);
    let a = recv(&mut c, t(3)).expect("ACK");
    assert!(!a.tcp.flags.contains(TcpFlags::ECE));
    // Our SYN offers ECN as RFC 3168 says: ECE + CWR.
    let mut ecn_cfg = cfg();
    ecn_cfg.tcp.ecn = true;
    let mut a = Connection::connect(t(0), ecn_cfg, sender_role(1)).expect("config");
    let syn = recv(&mut a, t(0)).expect("SYN");
    assert_eq!(syn.tcp.flags, TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR);
}

#[test]
fn we_close_first_fin_wait_then_time_wait() {
    let mut c = established_receiver();
    c.close();
    let fin = recv(&mut c, t(5)).expect("FIN");
    assert_eq!(fin.tcp.flags, TcpFlags::ACK | TcpFlags::FIN);
    assert_eq!(fin.tcp.seq, ISS.wrapping_add(1));
    assert_eq!(c.state(), State::FinWait1);
    send(
        &mut c,
        t(6),
        seg(TcpFlags::ACK, IRS + 1, ISS.wrapping_add(2)).ts(PEER_TS, 5),
    );
    assert_eq!(c.state(), State::FinWait2);
    send(
        &mut c,
        t(7),
        seg(TcpFlags::ACK | TcpFlags::FIN, IRS + 1, ISS.wrapping_add(2)).ts(PEER_TS, 5),
    );
    assert_eq!(c.state(), State::TimeWait);
    let a = recv(&mut c, t(7)).expect("ACK of the FIN");
    assert_eq!((a.tcp.seq, a.tcp.ack), (ISS.wrapping_add(2), IRS + 2));
    assert_eq!(c.poll_timeout(), Some(t(7) + Dur::from_secs(60)));
    // A retransmitted FIN is acknowledged again and restarts the wait.
    send(
        &mut c,
        t(1007),
        seg(TcpFlags::ACK | TcpFlags::FIN, IRS + 1, ISS.wrapping_add(2)).ts(PEER_TS, 5),
    );
    assert_eq!(recv(&mut c, t(1007)).map(|a| a.tcp.ack), Some(IRS + 2));
    assert_eq!(c.poll_timeout(), Some(t(1007) + Dur::from_secs(60)));
    c.on_timeout(t(61_007));
    assert!(c.is_done());
    assert_eq!(c.outcome(), Some(Outcome::Orderly));
}

#[test]
fn peer_closes_first_close_wait_then_last_ack() {
    let mut c = established_receiver();
    send(&mut c, t(2), data(IRS + 1, 500, 900));
    let mut fin = seg(
        TcpFlags::ACK | TcpFlags::FIN,
        IRS + 501,
        ISS.wrapping_add(1),
    )
    .ts(901, 5);
    fin.payload.clear();
    send(&mut c, t(3), fin);
    assert_eq!(c.state(), State::CloseWait);
    let acks = recv_all(&mut c, t(3));
    assert_eq!(
        acks.last().map(|a| a.tcp.ack),
        Some(IRS + 502),
        "FIN acknowledged"
    );
    c.close();
    let f = recv(&mut c, t(4)).expect("our FIN");
    assert_eq!(f.tcp.flags, TcpFlags::ACK | TcpFlags::FIN);
    assert_eq!((f.tcp.seq, f.tcp.ack), (ISS.wrapping_add(1), IRS + 502));
    assert_eq!(c.state(), State::LastAck);
    send(
        &mut c,
        t(5),
        seg(TcpFlags::ACK, IRS + 502, ISS.wrapping_add(2)).ts(902, 5),
    );
    assert!(c.is_done());
    assert_eq!(c.outcome(), Some(Outcome::Orderly));
}

#[test]
fn fin_before_a_hole_waits_for_the_data() {
    let mut c = established_receiver();
    // Data 1000..2000 and the FIN arrive before 0..1000.
    let mut late = data(IRS + 1001, 1000, 900);
    late.flags = TcpFlags::ACK | TcpFlags::FIN;
    send(&mut c, t(2), late);
    assert_eq!(c.state(), State::Established);
    send(&mut c, t(3), data(IRS + 1, 1000, 901));
    assert_eq!(c.state(), State::CloseWait);
    let acks = recv_all(&mut c, t(3));
    assert_eq!(acks.last().map(|a| a.tcp.ack), Some(IRS + 2002));
}

#[test]
fn simultaneous_close_goes_through_closing() {
    let mut c = established_receiver();
    c.close();
    let _ = recv(&mut c, t(5)).expect("FIN");
    // The peer's FIN crosses ours: it does not acknowledge our FIN.
    send(
        &mut c,
        t(6),
        seg(TcpFlags::ACK | TcpFlags::FIN, IRS + 1, ISS.wrapping_add(1)).ts(PEER_TS, 5),
    );
    assert_eq!(c.state(), State::Closing);
    assert_eq!(recv(&mut c, t(6)).map(|a| a.tcp.ack), Some(IRS + 2));
    send(
        &mut c,
        t(7),
        seg(TcpFlags::ACK, IRS + 2, ISS.wrapping_add(2)).ts(PEER_TS, 5),
    );
    assert_eq!(c.state(), State::TimeWait);
}

#[test]
fn fin_is_retransmitted_with_backoff() {
    let mut c = established_receiver();
    c.close();
    let _ = recv(&mut c, t(5)).expect("FIN");
    let first = c.poll_timeout().expect("FIN timer");
    assert_eq!(first, t(5) + Dur::from_secs(1));
    c.on_timeout(first);
    let again = recv(&mut c, first).expect("FIN again");
    assert_eq!(again.tcp.flags, TcpFlags::ACK | TcpFlags::FIN);
    assert_eq!(again.tcp.seq, ISS.wrapping_add(1));
    assert_eq!(c.poll_timeout(), Some(first + Dur::from_secs(2)));
}

#[test]
fn resets() {
    // In-window RST at rcv_nxt: reset.
    let mut c = established_receiver();
    send(&mut c, t(2), seg(TcpFlags::RST, IRS + 1, 0));
    assert_eq!(c.outcome(), Some(Outcome::Reset));
    assert!(recv(&mut c, t(2)).is_none());
    // Elsewhere: a challenge ACK, no reset (RFC 5961).
    let mut c = established_receiver();
    send(&mut c, t(2), seg(TcpFlags::RST, IRS + 5000, 0));
    assert_eq!(c.state(), State::Established);
    assert_eq!(recv(&mut c, t(2)).map(|a| a.tcp.flags), Some(TcpFlags::ACK));
    // Refused: RST+ACK to our SYN.
    let mut c = Connection::connect(t(0), cfg(), sender_role(1)).expect("config");
    let _ = recv(&mut c, t(0));
    send(
        &mut c,
        t(1),
        seg(TcpFlags::RST | TcpFlags::ACK, 0, ISS.wrapping_add(1)),
    );
    assert_eq!(c.outcome(), Some(Outcome::Reset));
    assert_eq!(c.poll_timeout(), None);
    // A SYN-ACK acknowledging something else: we reset it, and stay in SynSent.
    let mut c = Connection::connect(t(0), cfg(), sender_role(1)).expect("config");
    let _ = recv(&mut c, t(0));
    send(&mut c, t(1), seg(TcpFlags::SYN | TcpFlags::ACK, IRS, 12345));
    let r = recv(&mut c, t(1)).expect("RST");
    assert_eq!((r.tcp.flags, r.tcp.seq), (TcpFlags::RST, 12345));
    assert_eq!(c.state(), State::SynSent);
    // abort(): RST+ACK at our next sequence number.
    let mut c = established_receiver();
    c.abort();
    let r = recv(&mut c, t(2)).expect("RST");
    assert_eq!(r.tcp.flags, TcpFlags::RST | TcpFlags::ACK);
    assert_eq!((r.tcp.seq, r.tcp.ack), (ISS.wrapping_add(1), IRS + 1));
    assert_eq!(c.outcome(), Some(Outcome::Aborted));
    // A RST answering our SYN-ACK returns a passive open to Listen; a new SYN is taken.
    let mut l = listening_receiver();
    send(&mut l, t(0), syn_from_peer(full_syn_ack_options()));
    let _ = recv(&mut l, t(0));
    send(&mut l, t(1), seg(TcpFlags::RST, IRS + 1, 0));
    assert_eq!(
        (l.state(), l.negotiated(), l.poll_timeout()),
        (State::Listen, None, None)
    );
    let mut again = syn_from_peer(TcpOptions::default());
    again.seq = IRS + 7;
    send(&mut l, t(2), again);
    let sa = recv(&mut l, t(2)).expect("SYN-ACK");
    assert_eq!(sa.tcp.ack, IRS + 8);
    // An ACK to a listener: RST with its ack number as sequence number.
    let mut l = listening_receiver();
    send(&mut l, t(0), seg(TcpFlags::ACK, 5, 99));
    let r = recv(&mut l, t(0)).expect("RST");
    assert_eq!((r.tcp.flags, r.tcp.seq), (TcpFlags::RST, 99));
    assert_eq!(l.state(), State::Listen);
}

#[test]
fn foreign_and_malformed_packets_are_refused() {
    let mut c = established_receiver();
    let mut b = data(IRS + 1, 10, 900).bytes();
    b[30] ^= 1; // our address no longer
    assert!(matches!(
        c.on_packet(t(2), &b),
        Err(ConnError::Wire(_) | ConnError::NotThisConnection)
    ));
    assert!(matches!(
        c.on_packet(t(2), &b[..30]),
        Err(ConnError::Wire(_))
    ));
    assert_eq!(c.receiver().map(|r| r.rcv_nxt()), Some(crate::Seq(0)));
}

/// A tcplab sender and a tcplab receiver, connected through a lossy in-memory path: the
/// whole life of a connection, bytes checked against the pattern.
#[test]
fn sender_and_receiver_connections_transfer_and_close() {
    let bytes = 300_000u64;
    let mut a_cfg = cfg();
    a_cfg.tcp.delayed_ack = true;
    let mut b_cfg = ConnConfig {
        local: REMOTE,
        remote: (LOCAL.0, 0),
        iss: 42,
        ts_offset: 9,
        ..a_cfg.clone()
    };
    b_cfg.tcp.delayed_ack = true;
    let mut a = Connection::connect(t(0), a_cfg, sender_role(bytes)).expect("config");
    let mut b = Connection::listen(b_cfg, Role::Receiver).expect("config");
    // Packets in flight: (arrival time, to b?, bytes); 20 ms one way; every 37th dropped.
    let mut flight: Vec<(Time, bool, Vec<u8>)> = Vec::new();
    let mut now = t(0);
    let mut sent = 0u64;
    let mut got = vec![false; bytes as usize];
    for _ in 0..200_000 {
        let mut buf = Vec::new();
        for (c, to_b) in [(&mut a, true), (&mut b, false)] {
            loop {
                buf.clear();
                if c.poll_packet(now, &mut buf).is_none() {
                    break;
                }
                sent += 1;
                if !sent.is_multiple_of(37) {
                    flight.push((now + Dur::from_millis(20), to_b, buf.clone()));
                }
            }
        }
        if let Some(r) = b.receiver_mut() {
            while let Some((s, n)) = r.read() {
                for k in s.0..s.0 + n {
                    got[k as usize] = true;
                }
            }
        }
        if a.is_done() && b.is_done() {
            break;
        }
        let next_packet = flight.iter().map(|f| f.0).min();
        let next = [next_packet, a.poll_timeout(), b.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or_else(|| {
                panic!(
                    "stuck: a {:?} {:?} b {:?} {:?} una {:?} nxt {:?} fin {:?}/{:?} rcv {:?}",
                    a.state(),
                    a.outcome(),
                    b.state(),
                    b.outcome(),
                    a.sender().map(|s| s.snd_una()),
                    a.sender().map(|s| s.snd_nxt()),
                    a.fin_sent,
                    a.fin_wanted,
                    b.receiver().map(|r| r.rcv_nxt())
                )
            });
        now = next.max(now);
        let (due, rest): (Vec<_>, Vec<_>) = flight.into_iter().partition(|f| f.0 <= now);
        flight = rest;
        for (_, to_b, p) in due {
            let c = if to_b { &mut b } else { &mut a };
            // Payload bytes carry the pattern of their sequence number.
            if to_b {
                if let Ok(d) = wire::parse_tcp(&p) {
                    if !d.payload.is_empty() {
                        let off = d.tcp.seq.wrapping_sub(ISS.wrapping_add(1)) as u64;
                        assert!(d
                            .payload
                            .iter()
                            .enumerate()
                            .all(|(i, &x)| x == payload_byte(off + i as u64)));
                    }
                }
            }
            c.on_packet(now, &p).expect("valid packets");
        }
        for c in [&mut a, &mut b] {
            if c.poll_timeout().is_some_and(|d| d <= now) {
                c.on_timeout(now);
            }
        }
        if b.state() == State::CloseWait {
            b.close();
        }
    }
    assert!(got.iter().all(|&x| x), "every byte arrived");
    assert_eq!(a.outcome(), Some(Outcome::Orderly));
    assert_eq!(b.outcome(), Some(Outcome::Orderly));
    assert!(a.sender().is_some_and(|s| s.counters().retransmits > 0));
}

/// Acknowledges everything `c` sent in `out` (and the FIN if `fin_too`); returns the ack.
fn ack_all(out: &[Out]) -> Option<u32> {
    out.iter()
        .filter(|o| !o.payload.is_empty())
        .map(|o| o.tcp.seq.wrapping_add(o.payload.len() as u32))
        .max_by_key(|&e| e.wrapping_sub(ISS))
}

#[test]
fn sender_fin_follows_the_last_byte_and_the_core_repairs_data_before_it() {
    let mut c = established_sender(2 * 1388);
    let out = recv_all(&mut c, t(10));
    let end = ISS.wrapping_add(1 + 2 * 1388);
    let kinds: Vec<(TcpFlags, usize)> =
        out.iter().map(|o| (o.tcp.flags, o.payload.len())).collect();
    assert_eq!(
        kinds,
        [
            (TcpFlags::ACK, 1388),
            (TcpFlags::ACK, 1388),
            (TcpFlags::ACK | TcpFlags::FIN, 0)
        ],
        "the data (the first segment is the handshake's ACK), the FIN right behind it"
    );
    assert_eq!(out[2].tcp.seq, end);
    assert_eq!(c.state(), State::FinWait1);
    assert!(c.rtx.is_none(), "no FIN timer while data is unacknowledged");
    // The second segment is lost: the peer acknowledges the first only.
    let tsv = out[0].tcp.options.timestamps.map_or(0, |x| x.0);
    send(
        &mut c,
        t(30),
        seg(TcpFlags::ACK, IRS + 1, ISS.wrapping_add(1389)).ts(PEER_TS, tsv),
    );
    assert!(c.rtx.is_none());
    let rto = c.poll_timeout().expect("the core's RTO");
    c.on_timeout(rto);
    let again = recv(&mut c, rto).expect("retransmission");
    assert_eq!(
        (again.tcp.seq, again.payload.len()),
        (ISS.wrapping_add(1389), 1388)
    );
    assert_eq!(again.tcp.flags, TcpFlags::ACK, "data, no FIN");
    assert_eq!(again.tcp.ack, IRS + 1);
    // The repair and the FIN are acknowledged together.
    send(
        &mut c,
        rto + Dur::from_millis(20),
        seg(TcpFlags::ACK, IRS + 1, end.wrapping_add(1)).ts(PEER_TS, 0),
    );
    assert_eq!(c.state(), State::FinWait2);
    assert!(c.sender().is_some_and(|s| s.is_finished()));
}

#[test]
fn sender_fin_is_retransmitted_once_the_data_is_acknowledged() {
    let mut c = established_sender(2 * 1388);
    let _ = recv_all(&mut c, t(10));
    let end = ISS.wrapping_add(1 + 2 * 1388);
    // All data acknowledged, the FIN not (lost): its timer starts.
    send(
        &mut c,
        t(30),
        seg(TcpFlags::ACK, IRS + 1, end).ts(PEER_TS, 0),
    );
    assert_eq!(c.state(), State::FinWait1);
    let at = c.poll_timeout().expect("FIN timer");
    assert!(c.rtx.is_some_and(|b| b.deadline == at));
    c.on_timeout(at);
    let f = recv(&mut c, at).expect("FIN again");
    assert_eq!(
        (f.tcp.flags, f.tcp.seq),
        (TcpFlags::ACK | TcpFlags::FIN, end)
    );
    send(
        &mut c,
        at + Dur::from_millis(20),
        seg(TcpFlags::ACK, IRS + 1, end.wrapping_add(1)).ts(PEER_TS, 0),
    );
    assert_eq!(c.state(), State::FinWait2);
}

#[test]
fn peer_closes_before_the_sender_is_done() {
    let mut c = established_sender(10 * 1388);
    let mut out = recv_all(&mut c, t(10));
    // The peer (a receiver closing first) sends its FIN before acknowledging anything.
    send(
        &mut c,
        t(20),
        seg(TcpFlags::ACK | TcpFlags::FIN, IRS + 1, ISS.wrapping_add(1)).ts(PEER_TS, 0),
    );
    assert_eq!(c.state(), State::CloseWait);
    let a = recv(&mut c, t(20)).expect("ACK of the FIN");
    assert_eq!((a.tcp.flags, a.tcp.ack), (TcpFlags::ACK, IRS + 2));
    // We keep sending; acknowledge everything until our FIN comes.
    let end = ISS.wrapping_add(1 + 10 * 1388);
    let mut now = t(30);
    let fin = loop {
        if let Some(f) = out.iter().find(|o| o.tcp.flags.contains(TcpFlags::FIN)) {
            break f.tcp.seq;
        }
        let acked = ack_all(&out).expect("data was sent");
        send(
            &mut c,
            now,
            seg(TcpFlags::ACK, IRS + 2, acked).ts(PEER_TS, 0),
        );
        out = recv_all(&mut c, now);
        assert!(
            out.iter().all(|o| o.tcp.ack == IRS + 2),
            "the peer's FIN stays acknowledged"
        );
        now += Dur::from_millis(10);
    };
    assert_eq!(fin, end);
    assert_eq!(c.state(), State::LastAck);
    send(
        &mut c,
        now,
        seg(TcpFlags::ACK, IRS + 2, end.wrapping_add(1)).ts(PEER_TS, 0),
    );
    assert_eq!(c.outcome(), Some(Outcome::Orderly));
}

#[test]
fn an_unbounded_sender_sends_until_closed() {
    let role = Role::Sender {
        controller: ControllerSpec::named("reno"),
        recovery: RecoverySpec::named("sack"),
        app_bytes: None,
    };
    let mut c = Connection::connect(t(0), cfg(), role).expect("config");
    let _ = recv(&mut c, t(0));
    let mut sa = seg(TcpFlags::SYN | TcpFlags::ACK, IRS, ISS.wrapping_add(1));
    sa.options = full_syn_ack_options();
    sa.window = 65160;
    send(&mut c, t(10), sa);
    let _ = recv_all(&mut c, t(10));
    let acked = ISS.wrapping_add(1 + 2 * 1388);
    send(
        &mut c,
        t(20),
        seg(TcpFlags::ACK, IRS + 1, acked).ts(PEER_TS, 0),
    );
    let more = recv_all(&mut c, t(20));
    assert!(
        more.iter().all(|o| o.payload.len() == 1388),
        "more data, no FIN"
    );
    c.close();
    let end = ISS.wrapping_add(1 + (2 + more.len() as u32) * 1388);
    send(
        &mut c,
        t(30),
        seg(TcpFlags::ACK, IRS + 1, end).ts(PEER_TS, 0),
    );
    let f = recv(&mut c, t(30)).expect("FIN");
    assert_eq!(
        (f.tcp.flags, f.tcp.seq),
        (TcpFlags::ACK | TcpFlags::FIN, end)
    );
    assert_eq!(c.state(), State::FinWait1);
}

/// A peer that receives as Linux does, reduced to what the sender's undo reads: every
/// segment acknowledged at once, SACK blocks for data above a hole, and the timestamp echo
/// of RFC 7323 §4.3 (Linux `tcp_replace_ts_recent`): TS.Recent is taken from a segment
/// only when it starts at or below the last ACK sent, so the ACK that a retransmission
/// draws echoes the retransmission's TSval, never an older original's. `lose` names the
/// core offset of a segment whose first transmission is lost.
fn linux_like_transfer(c: &mut Connection, lose: u32, rounds: usize) {
    let una0 = ISS.wrapping_add(1);
    let mut rcv_nxt: u32 = 0; // offsets from una0
    let mut above: Vec<(u32, u32)> = Vec::new(); // out-of-order blocks, offsets
    let mut ts_recent: u32 = 0;
    let mut lost_once = false;
    let mut peer_ts = PEER_TS + 10;
    // Times off the microsecond grid, as a real clock's are.
    let mut now = Time::from_nanos(20_000_333);
    for _ in 0..rounds {
        let out = recv_all(c, now);
        now += Dur::from_nanos(25_000_417);
        for p in out.iter().filter(|p| !p.payload.is_empty()) {
            let off = p.tcp.seq.wrapping_sub(una0);
            let end = off + p.payload.len() as u32;
            let tsval = p.tcp.options.timestamps.expect("timestamps").0;
            if off == lose && !lost_once {
                lost_once = true;
                continue;
            }
            if off <= rcv_nxt {
                ts_recent = tsval; // at or below the last ACK sent
            }
            if off <= rcv_nxt && end > rcv_nxt {
                rcv_nxt = end;
            } else if off > rcv_nxt {
                above.push((off, end));
            }
            above.sort();
            above.retain(|&(s, e)| {
                if s <= rcv_nxt {
                    rcv_nxt = rcv_nxt.max(e);
                    false
                } else {
                    true
                }
            });
            peer_ts += 1;
            let mut a =
                seg(TcpFlags::ACK, IRS + 1, una0.wrapping_add(rcv_nxt)).ts(peer_ts, ts_recent);
            a.window = 65535;
            if let (Some(&(s, _)), Some(&(_, e))) = (above.first(), above.last()) {
                a.options.push_sack(WireSackBlock {
                    left: una0.wrapping_add(s),
                    right: una0.wrapping_add(e),
                });
            }
            send(c, now, a);
        }
    }
}

#[test]
fn an_echo_of_the_retransmission_does_not_undo_its_reduction() {
    // The wire's timestamps have microsecond ticks; the retransmission leaves between two
    // ticks, so its echo comes back rounded down, before its send time in nanoseconds.
    // Linux compares in TSval units: that echo proves nothing was spurious.
    let mut config = cfg();
    config.tcp.undo = true;
    config.tcp.sack_blocks = 3;
    let mut c = Connection::connect(t(0), config, sender_role(40 * 1388)).expect("config");
    let syn = recv(&mut c, t(0)).expect("SYN");
    let mut sa = seg(TcpFlags::SYN | TcpFlags::ACK, IRS, ISS.wrapping_add(1));
    sa.options = full_syn_ack_options();
    sa.options.timestamps = Some((PEER_TS, syn.tcp.options.timestamps.map_or(0, |x| x.0)));
    sa.window = 65535;
    send(&mut c, t(10), sa);
    linux_like_transfer(&mut c, 8 * 1388, 40);
    let s = c.sender().expect("sender");
    assert!(s.is_finished(), "the transfer completes");
    let k = s.counters();
    assert_eq!((k.recoveries, k.retransmits), (1, 1), "{k:?}");
    assert_eq!(k.undos_recovery, 0, "the loss was real: nothing to undo");
    assert!(
        s.controller().ssthresh() < u64::MAX,
        "the reduction stands: ssthresh {}",
        s.controller().ssthresh()
    );
}

/// Under the `linux` profile (receive-window autotuning on) a sender connects to a peer
/// whose SYN window (65,160) is below the profile's first buffer: the sender core's window
/// is the peer's, its own autotuning has nothing to do, and data flows.
#[test]
fn a_linux_profile_sender_connects_to_a_linux_window() {
    let mut cfg = cfg();
    cfg.tcp = TcpConfig::linux();
    let mut c = Connection::connect(t(0), cfg, sender_role(100_000)).expect("config");
    let syn = recv(&mut c, t(0)).expect("SYN");
    let ts = syn.tcp.options.timestamps.map_or(0, |x| x.0);
    let mut sa = seg(TcpFlags::SYN | TcpFlags::ACK, IRS, ISS.wrapping_add(1));
    sa.options = full_syn_ack_options();
    sa.options.timestamps = Some((PEER_TS, ts));
    sa.window = 65160;
    send(&mut c, t(10), sa);
    assert!(c.sender().is_some(), "the sender core was built");
    assert_eq!(
        recv_all(&mut c, t(10)).len(),
        10,
        "the initial window of 10"
    );
}

/// A `linux`-profile receiver offers Linux's first window in its SYN-ACK (65,160: 128 KiB of
/// buffer at half window, in whole MSS), measures its RTT from the echo of its ACKs' TSval,
/// and opens its window as segments arrive.
#[test]
fn a_linux_profile_receiver_offers_and_grows_linux_windows() {
    let mut cfg = cfg();
    cfg.remote.1 = 0;
    cfg.tcp = TcpConfig::linux();
    let mut c = Connection::listen(cfg, Role::Receiver).expect("config");
    send(&mut c, t(0), syn_from_peer(full_syn_ack_options()));
    let sa = recv(&mut c, t(0)).expect("SYN-ACK");
    assert_eq!(sa.tcp.window, 65160);
    let shift = sa.tcp.options.window_scale.expect("window scale offered");
    send(
        &mut c,
        t(1),
        seg(TcpFlags::ACK, IRS + 1, ISS.wrapping_add(1)).ts(PEER_TS, 5),
    );
    let mut windows = Vec::new();
    for i in 0..4u32 {
        send(
            &mut c,
            t(2 + u64::from(i)),
            data(IRS + 1 + i * 1448, 1448, 900 + i),
        );
        let a = recv(&mut c, t(2 + u64::from(i))).expect("an ACK per segment");
        windows.push(u64::from(a.tcp.window) << shift);
    }
    assert!(windows[0] > 65160, "{windows:?}");
    assert!(windows.windows(2).all(|w| w[1] > w[0]), "{windows:?}");
}
