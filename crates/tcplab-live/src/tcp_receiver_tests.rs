//! The receiver driver against a tcplab sender connection (the Linux stream's payload):
//! scripted in memory, and whole (`run`) over a socket pair with the real clock.

use super::*;
use crate::clock::Clock;
use std::io::{self, Read};
use std::os::fd::FromRawFd;
use std::sync::atomic::AtomicBool;
use tcplab_core::{ControllerSpec, Dur, RecoverySpec};

const SENDER: ([u8; 4], u16) = ([10, 0, 0, 1], 5400);
const RECEIVER: ([u8; 4], u16) = ([10, 0, 0, 2], 5400);

fn t(ms: u64) -> Time {
    Time::ZERO + Dur::from_millis(ms)
}

fn sender(now: Time, bytes: u64) -> Connection {
    let cfg = ConnConfig {
        local: SENDER,
        remote: RECEIVER,
        iss: 0xffff_ff00, // the sequence numbers wrap early
        ts_offset: 77,
        ..ConnConfig::default()
    };
    let role = Role::Sender {
        controller: ControllerSpec::named("reno"),
        recovery: RecoverySpec::named("sack"),
        app_bytes: Some(bytes),
    };
    Connection::connect(now, cfg, role).expect("config")
}

fn receiving() -> Receiving {
    Receiving::listen(ConnConfig {
        local: RECEIVER,
        remote: (SENDER.0, 0),
        iss: 1234,
        ..ConnConfig::default()
    })
    .expect("config")
}

/// Runs a transfer of `bytes` over an in-memory path (10 ms one way); `tamper` may change
/// or drop (None) each packet to the receiver, numbered from 1.
fn transfer(
    bytes: u64,
    mut tamper: impl FnMut(u64, Vec<u8>) -> Option<Vec<u8>>,
) -> (Connection, Receiving) {
    let mut a = sender(t(0), bytes);
    let mut b = receiving();
    let mut flight: Vec<(Time, bool, Vec<u8>)> = Vec::new();
    let mut now = t(0);
    let mut to_b = 0u64;
    for _ in 0..100_000 {
        let mut buf = Vec::new();
        while a.poll_packet(now, &mut buf).is_some() {
            to_b += 1;
            if let Some(p) = tamper(to_b, std::mem::take(&mut buf)) {
                flight.push((now + Dur::from_millis(10), true, p));
            }
        }
        let mut acks = Packets(Vec::new());
        b.flush(|| now, &mut acks);
        flight.extend(
            acks.0
                .into_iter()
                .map(|p| (now + Dur::from_millis(10), false, p)),
        );
        if a.is_done() && b.is_over() || a.state() == State::TimeWait && b.is_over() {
            break;
        }
        let next = [
            flight.iter().map(|f| f.0).min(),
            a.poll_timeout(),
            b.conn().poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
        .expect("something pending");
        now = next.max(now);
        let (due, rest): (Vec<_>, Vec<_>) = flight.into_iter().partition(|f| f.0 <= now);
        flight = rest;
        for (_, to_receiver, p) in due {
            if to_receiver {
                b.on_packet(now, &p);
            } else {
                a.on_packet(now, &p).expect("valid ACKs");
            }
        }
        if a.poll_timeout().is_some_and(|d| d <= now) {
            a.on_timeout(now);
        }
        b.on_timeout(now);
    }
    (a, b)
}

/// Collects whole packets, as the attached socket does.
struct Packets(Vec<Vec<u8>>);

impl Write for Packets {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.push(b.to_vec());
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_lossy_transfer_is_read_intact_and_closed_in_order_after_the_peers_fin() {
    let bytes = 300_001u64; // not a whole number of segments or words
                            // Every 23rd packet to the receiver is lost (the SYN is number 1 and survives).
    let (a, b) = transfer(bytes, |k, p| (k % 23 != 0).then_some(p));
    let s = b.summary();
    assert_eq!(s["bytes_delivered"], bytes);
    assert_eq!(s["intact"], true, "{s}");
    assert_eq!(s["first_bad_offset"], Value::Null);
    assert_eq!(s["held_at_end"], 0);
    assert_eq!(
        (s["state"].as_str(), s["outcome"].as_str()),
        (Some("Closed"), Some("Orderly"))
    );
    assert_eq!(s["peer_fin"], true);
    assert_eq!(
        a.state(),
        State::TimeWait,
        "the sender closed first: both FINs acknowledged"
    );
    let n = &s["negotiated"];
    assert_eq!(
        (n["sack"].as_bool(), n["timestamps"].as_bool()),
        (Some(true), Some(true))
    );
    assert_eq!(
        (n["window_scaling"].as_bool(), n["rcv_wscale"].as_u64()),
        (Some(true), Some(7))
    );
    assert_eq!(s["mss"], 1448);
    assert_eq!(s["peer_port"], SENDER.1);
    assert!(a.sender().is_some_and(|s| s.counters().retransmits > 0));
    assert!(
        s["out_of_order_segments"].as_u64() > Some(0),
        "losses left holes: {s}"
    );
    assert_eq!(s["packets_refused"], 0);
}

#[test]
fn a_byte_off_the_pattern_is_named_by_its_stream_offset() {
    // The 10th packet is the 9th data segment (after the SYN; the handshake's ACK carries
    // the first data): its 100th byte changed, the checksums made right again.
    let mut bad_offset = None;
    let (_, b) = transfer(100_000, |k, p| {
        if k != 10 {
            return Some(p);
        }
        let d = wire::parse_tcp(&p).expect("ours");
        let mut payload = d.payload.to_vec();
        payload[99] ^= 0x40;
        bad_offset = Some(d.tcp.seq.wrapping_sub(0xffff_ff01) as u64 + 99);
        let mut out = Vec::new();
        wire::emit_tcp(&mut out, &d.ip, &d.tcp, &payload);
        Some(out)
    });
    let s = b.summary();
    assert_eq!(s["bytes_delivered"], 100_000);
    assert_eq!(s["intact"], false);
    assert_eq!(s["first_bad_offset"].as_u64(), bad_offset);
    assert_eq!(s["stream"]["corrupt"], 1);
    assert!(bad_offset > Some(8 * 1448));
}

#[test]
fn packets_of_another_connection_are_refused_and_counted() {
    let mut b = receiving();
    let mut a = sender(t(0), 1000);
    let mut syn = Vec::new();
    a.poll_packet(t(0), &mut syn).expect("SYN");
    let mut other = syn.clone();
    other[15] ^= 1; // another source address: the IP checksum no longer holds
    b.on_packet(t(1), &other);
    b.on_packet(t(1), &syn);
    assert_eq!(b.conn().state(), State::SynReceived);
    let s = b.summary();
    assert_eq!(
        (s["packets_in"].as_u64(), s["packets_refused"].as_u64()),
        (Some(2), Some(1))
    );
    assert!(s["first_refusal"]
        .as_str()
        .is_some_and(|e| e.contains("malformed")));
}

fn config(origin_ns: u64, duration_s: u64) -> FlowConfig {
    let scenario = format!(
        r#"{{"name": "t", "seed": 4, "duration": {},
          "topology": {{"kind": "explicit",
            "nodes": [{{"name": "a", "kind": "host"}}, {{"name": "b", "kind": "host"}}],
            "links": [{{"from": "a", "to": "b",
              "forward": {{"rate": 10000000, "delay": 5000000, "buffer": {{"packets": 50}}}},
              "reverse": {{"rate": 10000000, "delay": 5000000, "buffer": {{"packets": 50}}}}}}]}},
          "flows": [{{"src": "a", "dst": "b", "controller": {{"name": "reno"}}, "recovery": {{"name": "newreno"}},
                      "stack": "linux", "receiver": "tcplab"}}]}}"#,
        duration_s * 1_000_000_000
    );
    FlowConfig::parse(&format!(
        r#"{{"scenario": {scenario}, "flow": 0, "local": "10.0.0.2:5400",
            "peer": "10.0.0.1:5400", "clock_origin_ns": {origin_ns}}}"#
    ))
    .expect("config")
}

fn seqpacket_pair() -> (File, File) {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid array of two ints for socketpair's answer.
    let r = unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET, 0, fds.as_mut_ptr()) };
    assert_eq!(r, 0, "socketpair: {}", io::Error::last_os_error());
    for fd in fds {
        // SAFETY: fcntl on an open descriptor with plain integer flags.
        unsafe {
            let fl = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
        }
    }
    // SAFETY: both descriptors are fresh and owned by nothing else.
    unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
}

fn scratch_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("tcplab-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

#[test]
fn run_receives_over_a_socket_pair_and_ends_when_the_connection_closed() {
    let bytes = 2_000_000u64;
    let (ours, theirs) = seqpacket_pair();
    let origin = Clock::monotonic_now_ns() + 20_000_000;
    let cfg = config(origin, 20);
    let out = scratch_dir("tcp-receiver-run");
    let stop = AtomicBool::new(false);
    let dir = out.clone();
    std::thread::scope(|scope| {
        let rx = scope.spawn(|| run(&cfg, theirs, &dir, &stop));
        // The peer: a tcplab sender on the real clock, connecting at model time 0.
        let clock = EndpointClock::new(Some(origin), 1);
        clock.wait_for_origin();
        let mut dev = ours;
        let mut a = sender(clock.now(), bytes);
        let mut buf = vec![0u8; MAX_PACKET];
        let mut out = Vec::new();
        let give_up = clock.now() + Dur::from_secs(15);
        // Until the receiver ended (TIME_WAIT answers a retransmitted FIN).
        while !rx.is_finished() && clock.now() < give_up {
            loop {
                out.clear();
                if a.poll_packet(clock.now(), &mut out).is_none() {
                    break;
                }
                // A full socket buffer drops the packet, as a full queue would.
                let _ = dev.write(&out);
            }
            let next = a
                .poll_timeout()
                .map_or(clock.now() + Dur::from_millis(10), |d| {
                    d.min(clock.now() + Dur::from_millis(10))
                });
            clock.clock.wait(Some(next), &[dev.as_raw_fd()]);
            loop {
                match dev.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => a.on_packet(clock.now(), &buf[..n]).expect("valid"),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => panic!("read: {e}"),
                }
            }
            if a.poll_timeout().is_some_and(|d| d <= clock.now()) {
                a.on_timeout(clock.now());
            }
        }
        assert_eq!(a.state(), State::TimeWait);
        let r = rx.join().expect("no panic");
        assert_eq!(r, Ok(()));
    });
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).expect("summary"))
            .expect("json");
    assert_eq!(s["role"], "receiver");
    assert_eq!(s["bytes_delivered"], bytes);
    assert_eq!(s["intact"], true, "{s}");
    assert_eq!(
        (s["state"].as_str(), s["outcome"].as_str()),
        (Some("Closed"), Some("Orderly"))
    );
    assert!(
        s["stopped_ns"].as_u64() < Some(15_000_000_000),
        "ended with the connection: {s}"
    );
    let (first, last) = (
        s["first_arrival_ns"].as_u64(),
        s["last_arrival_ns"].as_u64(),
    );
    assert!(first.is_some() && first <= last);
    let _ = std::fs::remove_dir_all(&out);
}
