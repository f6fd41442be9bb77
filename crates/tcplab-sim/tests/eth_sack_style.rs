//! `tcp.sack_style = "eth_packets"` against "ranges" in the simulator: the use of the n-th
//! SACK block (docs/eth-metrics.md) on the ETH settings with random loss of data and ACKs.
//!
//! The mechanism: with RFC 2018 ranges the packet a lost ACK reported usually comes back
//! inside the next ACK's *first* block (it is contiguous with the next arrival), so a later
//! block is new only when the lost ACK had started a hole of its own; with one packet per
//! block (the ETH framework, its Appendix A.2) the lost ACK's packet reappears as the
//! *second* entry of the next ACK. So on the same seed the share of used blocks at
//! positions 2..6 must be higher with packets. Only that direction is asserted.

use crate::common;

use common::{dir, run_completed};
use tcplab_core::cc::Growth;
use tcplab_core::config::SackStyle;
use tcplab_core::{Dur, TcpConfig};
use tcplab_sim::builder::{dumbbell, ScenarioBuilder};
use tcplab_sim::scenario::{Duplex, LossSpec, TcpFlowSpec};

/// The ETH settings of docs/eth-metrics.md (MSS 1024, initial ssthresh 64 KB, 256 KB receive
/// buffer, 6 SACK blocks, delayed ACKs): 1 MB with FACK over a 2 Mb/s, 50 ms, 20-packet
/// bottleneck losing 1 % of the packets in each direction. Returns (used, carried) per
/// block position.
fn sack_use(style: SackStyle, seed: u64) -> ([u64; 6], [u64; 6]) {
    let tcp = TcpConfig {
        mss: 1024,
        growth: Growth::ByteCounting { limit: 2 },
        initial_ssthresh: Some(64 * 1024),
        rcv_buf: 256 * 1024,
        sack_blocks: 6,
        sack_style: style,
        ..TcpConfig::default()
    };
    let lossy = dir(2_000_000, 50, 20).loss(LossSpec::Bernoulli { p: 0.01 });
    let topo = dumbbell(
        1,
        Duplex::symmetric(lossy),
        Duplex::symmetric(dir(100_000_000, 1, 1000)),
    );
    let s = ScenarioBuilder::new("eth-sack-style", topo)
        .seed(seed)
        .duration(Dur::from_secs(300))
        .tcp(tcp)
        .flow(
            TcpFlowSpec::bulk("s0", "r0")
                .controller("reno")
                .recovery("fack")
                .bytes(1 << 20),
        )
        .build();
    let f = run_completed(&s).flows[0].clone();
    (f.sack_block_used, f.sack_block_carried)
}

fn later_share(used: &[u64; 6]) -> f64 {
    let all: u64 = used.iter().sum();
    used[1..].iter().sum::<u64>() as f64 / all as f64
}

#[test]
fn packet_blocks_make_later_blocks_more_useful_than_ranges() {
    let (mut sum_r, mut sum_p) = ([0u64; 6], [0u64; 6]);
    for seed in 1..=5 {
        let (used_r, carried_r) = sack_use(SackStyle::Ranges, seed);
        let (used_p, carried_p) = sack_use(SackStyle::EthPackets, seed);
        println!("seed {seed}: ranges used {used_r:?} carried {carried_r:?}");
        println!("seed {seed}: packets used {used_p:?} carried {carried_p:?}");
        for n in 0..6 {
            sum_r[n] += used_r[n];
            sum_p[n] += used_p[n];
        }
    }
    let (share_r, share_p) = (later_share(&sum_r), later_share(&sum_p));
    println!("share of blocks 2..6 among used: ranges {share_r:.4}, packets {share_p:.4}");
    println!("used, 5 seeds: ranges {sum_r:?}, packets {sum_p:?}");
    assert!(share_p > share_r, "{sum_p:?} vs {sum_r:?}");
}
