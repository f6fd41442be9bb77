//! tcplab-core's connection layer on a wire a third-party decoder reads: a tcplab sender
//! connection and a tcplab receiver connection (ECN, SACK, timestamps, window scale) over a
//! lossy in-memory path, captured with the pcap writer and decoded by tshark. Every packet's
//! IP and TCP checksum must verify, nothing may be malformed, and the handshake's options
//! must decode as Linux's do. Skips (saying so) without tshark (`apt-get install tshark`).

use std::process::Command;
use tcplab_core::conn::{ConnConfig, Connection, Outcome, Role, State};
use tcplab_core::{ControllerSpec, Dur, RecoverySpec, TcpConfig, Time};
use tcplab_sim::pcap::{global_header, write_packet_record};

/// Runs the transfer; returns the pcap file and the packets dropped.
fn transfer(bytes: u64) -> (Vec<u8>, u64) {
    let tcp = TcpConfig {
        ecn: true,
        ..TcpConfig::default()
    };
    let a_cfg = ConnConfig {
        tcp,
        iss: 0x8000_0000,
        ts_offset: 77,
        ..ConnConfig::default()
    };
    let b_cfg = ConnConfig {
        local: a_cfg.remote,
        remote: (a_cfg.local.0, 0),
        iss: 0xffff_0000,
        ts_offset: 1 << 31,
        ..a_cfg.clone()
    };
    let role = Role::Sender {
        controller: ControllerSpec::named("reno"),
        recovery: RecoverySpec::named("sack"),
        app_bytes: Some(bytes),
    };
    let mut a = Connection::connect(Time::ZERO, a_cfg, role).expect("config");
    let mut b = Connection::listen(b_cfg, Role::Receiver).expect("config");
    let mut file = global_header(65535).to_vec();
    let mut flight: Vec<(Time, bool, Vec<u8>)> = Vec::new();
    let (mut now, mut sent, mut dropped) = (Time::ZERO, 0u64, 0u64);
    let mut buf = Vec::new();
    for _ in 0..1_000_000 {
        for (c, to_b) in [(&mut a, true), (&mut b, false)] {
            loop {
                buf.clear();
                if c.poll_packet(now, &mut buf).is_none() {
                    break;
                }
                write_packet_record(&mut file, now, &buf, 65535);
                sent += 1;
                if sent % 29 == 0 {
                    dropped += 1;
                } else {
                    flight.push((now + Dur::from_millis(15), to_b, buf.clone()));
                }
            }
        }
        if b.state() == State::CloseWait {
            b.close();
            continue;
        }
        if a.is_done() && b.is_done() {
            break;
        }
        let next = [
            flight.iter().map(|f| f.0).min(),
            a.poll_timeout(),
            b.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
        .expect("a timer or a packet is pending until both are done");
        now = next.max(now);
        let (due, rest): (Vec<_>, Vec<_>) = flight.into_iter().partition(|f| f.0 <= now);
        flight = rest;
        for (_, to_b, p) in due {
            let c = if to_b { &mut b } else { &mut a };
            c.on_packet(now, &p).expect("valid packets");
        }
        for c in [&mut a, &mut b] {
            if c.poll_timeout().is_some_and(|d| d <= now) {
                c.on_timeout(now);
            }
        }
    }
    assert_eq!(a.outcome(), Some(Outcome::Orderly));
    assert_eq!(b.outcome(), Some(Outcome::Orderly));
    (file, dropped)
}

fn tshark(file: &std::path::Path, args: &[&str]) -> Option<String> {
    let out = Command::new("tshark")
        .arg("-r")
        .arg(file)
        .args([
            "-o",
            "tcp.check_checksum:TRUE",
            "-o",
            "ip.check_checksum:TRUE",
        ])
        .args(args)
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn tshark_decodes_a_whole_connection_without_errors() {
    let (file, dropped) = transfer(400_000);
    assert!(dropped > 0);
    let dir = std::env::temp_dir().join(format!("tcplab-conn-tshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("conn.pcap");
    std::fs::write(&path, &file).expect("write pcap");
    let fields = [
        "-T",
        "fields",
        "-E",
        "separator=;",
        "-e",
        "ip.checksum.status",
        "-e",
        "tcp.checksum.status",
        "-e",
        "_ws.malformed",
        "-e",
        "tcp.flags.str",
        "-e",
        "tcp.options.mss_val",
        "-e",
        "tcp.options.wscale.shift",
        "-e",
        "tcp.options.sack_perm",
        "-e",
        "tcp.options.timestamp.tsval",
        "-e",
        "ip.dsfield.ecn",
    ];
    let Some(text) = tshark(&path, &fields) else {
        eprintln!("skipped: tshark is not installed (apt-get install tshark)");
        let _ = std::fs::remove_dir_all(&dir);
        return;
    };
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(';').collect()).collect();
    assert!(rows.len() > 300, "{} packets", rows.len());
    for (k, r) in rows.iter().enumerate() {
        assert_eq!(r[0], "1", "packet {}: IP checksum status {:?}", k + 1, r);
        assert_eq!(r[1], "1", "packet {}: TCP checksum status {:?}", k + 1, r);
        assert_eq!(r[2], "", "packet {}: malformed {:?}", k + 1, r);
        assert!(
            !r[7].is_empty(),
            "packet {}: timestamps on every segment",
            k + 1
        );
    }
    // The SYN and the SYN-ACK: MSS 1460, window scale 7, SACK permitted, ECN setup flags.
    let syn = &rows[0];
    assert!(
        syn[3].contains('S') && syn[3].contains('C') && syn[3].contains('E'),
        "{syn:?}"
    );
    assert_eq!((syn[4], syn[5]), ("1460", "7"));
    assert!(!syn[6].is_empty(), "SACK permitted");
    let syn_ack = &rows[1];
    assert!(syn_ack[3].contains('S') && syn_ack[3].contains('A') && syn_ack[3].contains('E'));
    assert_eq!((syn_ack[4], syn_ack[5]), ("1460", "7"));
    // Data segments are ECT(0) (2); nothing else is ECN-capable.
    assert!(rows.iter().any(|r| r[8] == "2"));
    // No expert-info warnings or errors (notes such as retransmissions are expected).
    let expert = tshark(&path, &["-q", "-z", "expert,warn"]).unwrap_or_default();
    let problems: Vec<&str> = expert
        .lines()
        .filter(|l| l.contains("Warning") || l.contains("Error") || l.contains("Malformed"))
        .collect();
    assert!(problems.is_empty(), "{expert}");
    let _ = std::fs::remove_dir_all(&dir);
}
