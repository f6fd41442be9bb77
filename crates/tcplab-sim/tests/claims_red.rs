//! The RED claim of Pang et al., "Performance Study of TCP Veno over WLAN and RED Router"
//! (digest §2, Exp. 3): six homogeneous flows on the thin pipe (1.6 Mb/s, 60 ms each way,
//! buffer 12), RED with min_th 5, max_th 10, max_p 0.1, w_q 0.005: "RED does not enhance the
//! throughput" (no obvious difference) and it "improves fairness" (lower STD of per-flow
//! throughput), for Reno and for Veno. `scenarios/red-dumbbell.toml`; numbers in
//! docs/reproductions.md.
//!
//! Not modelled: the 802.11b hop (wired 100 Mb/s hops instead; the WLAN is not the
//! bottleneck of the thin pipe). Dummynet's RED spacing (`wait = false`, see
//! docs/network-models.md). Three seeds of 120 s each; the drop-tail runs draw nothing, so
//! their seeds give the same run.

use tcplab_core::cc::Growth;
use tcplab_core::{Dur, RepeatedRto, TcpConfig};
use tcplab_sim::builder::{dumbbell, ScenarioBuilder};
use tcplab_sim::scenario::{
    Buffer, Duplex, LinkDir, QueueSpec, RedMode, RedSpec, TcpFlowSpec, TraceSpec,
};
use tcplab_sim::Simulation;

/// (aggregate throughput, population STD of per-flow throughput), kb/s, mean over seeds.
fn run(controller: &str, red: bool) -> (f64, f64) {
    let mut pipe = LinkDir::new(1_600_000, Dur::from_millis(60), Buffer::Packets(12));
    if red {
        pipe = pipe.queue(QueueSpec::Red(RedSpec {
            min_th: 5.0,
            max_th: 10.0,
            max_p: 0.1,
            w_q: 0.005,
            gentle: false,
            wait: false,
            mode: RedMode::Packets,
            ecn: false,
            mean_packet_size: 1500,
        }));
    }
    let access = Duplex::symmetric(LinkDir::new(
        100_000_000,
        Dur::from_micros(100),
        Buffer::Packets(1000),
    ));
    let tcp = TcpConfig {
        mss: 1460,
        growth: Growth::PerAck,
        // The BSD senders of the papers (NetBSD 1.1, FreeBSD 4.x) recompute ssthresh at
        // every timer expiry (docs/tcp.md, `repeated_rto`).
        repeated_rto: RepeatedRto::Bsd,
        ..TcpConfig::default()
    };
    let (mut agg, mut std) = (0.0, 0.0);
    let seeds = [1, 2, 3];
    for seed in seeds {
        let mut b = ScenarioBuilder::new(
            "red",
            dumbbell(6, Duplex::symmetric(pipe.clone()), access.clone()),
        )
        .seed(seed)
        .duration(Dur::from_secs(120))
        .tcp(tcp.clone())
        .trace(TraceSpec::off());
        for i in 0..6 {
            b = b.flow(
                TcpFlowSpec::bulk(&format!("s{i}"), &format!("r{i}"))
                    .controller(controller)
                    .start(Dur::from_millis(100 * i)),
            );
        }
        let r = Simulation::run(&b.build()).unwrap();
        let th: Vec<f64> = r.flows.iter().map(|f| f.throughput_bps / 1e3).collect();
        let mean = th.iter().sum::<f64>() / th.len() as f64;
        agg += th.iter().sum::<f64>();
        std += (th.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / th.len() as f64).sqrt();
    }
    let n = seeds.len() as f64;
    (agg / n, std / n)
}

#[test]
fn red_keeps_throughput_and_improves_fairness() {
    for cc in ["reno", "veno"] {
        let (agg_dt, std_dt) = run(cc, false);
        let (agg_red, std_red) = run(cc, true);
        eprintln!(
            "{cc}: drop-tail {agg_dt:.0} kb/s STD {std_dt:.1}; RED {agg_red:.0} kb/s STD {std_red:.1}"
        );
        assert!(
            (agg_red / agg_dt - 1.0).abs() < 0.05,
            "{cc}: aggregate {agg_red:.0} vs {agg_dt:.0} kb/s"
        );
        assert!(
            std_red < 0.8 * std_dt,
            "{cc}: STD {std_red:.1} vs {std_dt:.1} kb/s"
        );
    }
}
