//! pcap capture through a whole run: what each file holds matches the simulator's own
//! counters, captures do not change results, and bad selectors are reported by field.

use crate::common;

use tcplab_core::Dur;
use tcplab_sim::builder::{dumbbell, ScenarioBuilder};
use tcplab_sim::scenario::{Duplex, Scenario, TcpFlowSpec, TraceSpec, UdpFlowSpec};
use tcplab_sim::Simulation;

fn scenario(trace: TraceSpec) -> Scenario {
    let bottleneck = Duplex::symmetric(common::dir(4_000_000, 20, 20).bernoulli(0.01));
    let access = Duplex::symmetric(common::dir(100_000_000, 1, 1000));
    ScenarioBuilder::new("pcap", dumbbell(2, bottleneck, access))
        .seed(3)
        .duration(Dur::from_secs(10))
        .flow(
            TcpFlowSpec::bulk("s0", "r0")
                .recovery("sack")
                .bytes(400_000),
        )
        .udp(UdpFlowSpec::cbr("s1", "r1", 200_000, 500).stop(Dur::from_secs(3)))
        .trace(trace)
        .build()
}

/// (records, sum of original lengths) of a pcap file, walking its record headers.
fn walk(bytes: &[u8]) -> (u64, u64) {
    assert_eq!(&bytes[..4], &0xa1b2_3c4du32.to_le_bytes());
    let (mut at, mut n, mut total) = (24, 0, 0);
    let mut last = 0u64;
    while at < bytes.len() {
        let u = |i: usize| u32::from_le_bytes(bytes[at + i..at + i + 4].try_into().unwrap());
        let t = u(0) as u64 * 1_000_000_000 + u(4) as u64;
        assert!(t >= last, "records in time order");
        last = t;
        total += u(12) as u64;
        at += 16 + u(8) as usize;
        n += 1;
    }
    assert_eq!(at, bytes.len());
    (n, total)
}

#[test]
fn captures_match_the_simulators_counts_and_change_nothing() {
    let plain = Simulation::run(&scenario(TraceSpec::off())).unwrap();
    let traced = Simulation::run(&scenario(TraceSpec::off().pcap(&[
        "s0-left",
        "left-right/forward",
        "s1-left",
    ])))
    .unwrap();
    assert_eq!(plain.flows, traced.flows, "capturing changes nothing");
    assert_eq!(plain.links, traced.links);
    let names: Vec<&str> = traced.pcap.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["s0-left", "left-right.forward", "s1-left"]);

    // Every flow ends before the run does, so nothing is left half-sent.
    assert!(traced.stats.sim_time_ns < 10_000_000_000);
    let flow = &traced.flows[0];
    assert!(
        flow.sender.retransmits > 5,
        "a lossy run: {}",
        flow.sender.retransmits
    );
    // The sender's access link sees every transmission of flow 0 and every ACK it gets.
    let access = &traced.pcap.files[0];
    assert_eq!(access.counts.tcp_data, flow.sender.segments_sent);
    assert_eq!(access.counts.tcp_retransmissions, flow.sender.retransmits);
    assert!(access.counts.acks_with_sack > 0);
    let (records, total) = walk(&access.bytes);
    assert_eq!(records, access.counts.packets);
    // Both directions of s0-left, by bytes sent.
    let link = |name: &str, dir: &str| {
        traced
            .links
            .iter()
            .find(|l| l.link == name && l.direction == dir)
            .unwrap()
            .clone()
    };
    let (fwd, rev) = (link("s0-left", "forward"), link("s0-left", "reverse"));
    assert_eq!(records, fwd.packets_sent + rev.packets_sent);
    assert_eq!(
        total,
        fwd.bytes_sent + rev.bytes_sent,
        "IP lengths = wire sizes"
    );
    // UDP on its access link.
    assert_eq!(traced.pcap.files[2].counts.udp, traced.udp[0].packets_sent);
    let (n, _) = walk(&traced.pcap.files[1].bytes);
    assert_eq!(n, link("left-right", "forward").packets_sent);
}

#[test]
fn bad_selectors_name_the_field() {
    let s = scenario(TraceSpec::off().pcap(&["left-rigth", "left-right/up"]));
    let e = Simulation::new(&s).err().unwrap().0;
    assert!(
        e.contains("trace.pcap[0] = \"left-rigth\": unknown link"),
        "{e}"
    );
    assert!(
        e.contains("trace.pcap[1] = \"left-right/up\": unknown direction"),
        "{e}"
    );
    let mut s = scenario(TraceSpec::off().pcap(&["all"]));
    s.trace.pcap_snaplen = 0;
    let e = Simulation::new(&s).err().unwrap().0;
    assert!(e.contains("trace.pcap_snaplen = 0"), "{e}");
}
