//! The RED claim of Pang et al., "Performance Study of TCP Veno over WLAN and RED Router"
//! (digest §2, Exp. 3): six homogeneous flows on the thin pipe (1.6 Mb/s, 60 ms each way,
//! buffer 12), RED with min_th 5, max_th 10, max_p 0.1, w_q 0.005: "RED does not enhance the
//! throughput" (no obvious difference) and it "improves fairness" (lower STD of per-flow
//! throughput), for Reno and for Veno. Setting: `scenarios/red-dumbbell.toml`
//! (`common::settings`); numbers in docs/reproductions.md.
//!
//! Not modelled: the 802.11b hop (wired 100 Mb/s hops instead; the WLAN is not the
//! bottleneck of the thin pipe). Dummynet's RED spacing (`wait = false`, see
//! docs/network-models.md). Three seeds of 120 s each; the drop-tail runs draw nothing, so
//! their seeds give the same run.

use crate::common::settings::{dumbbell, setting};

use tcplab_core::ControllerSpec;
use tcplab_sim::scenario::{QueueSpec, Scenario};
use tcplab_sim::Simulation;

/// `red-dumbbell` with every flow's controller `controller`, its RED pipe (both ways) or,
/// without `red`, the drop-tail baseline.
fn red_dumbbell(controller: &str, red: bool) -> Scenario {
    let mut s = setting("red-dumbbell");
    if !red {
        let pipe = &mut dumbbell(&mut s).bottleneck;
        pipe.forward.queue = QueueSpec::DropTail;
        pipe.reverse.queue = QueueSpec::DropTail;
    }
    for f in &mut s.flows {
        f.controller = ControllerSpec::named(controller);
    }
    s
}

/// (aggregate throughput, population STD of per-flow throughput), kb/s, mean over seeds.
fn run(controller: &str, red: bool) -> (f64, f64) {
    let (mut agg, mut std) = (0.0, 0.0);
    let seeds = [1, 2, 3];
    for seed in seeds {
        let mut s = red_dumbbell(controller, red);
        s.seed = seed;
        let r = Simulation::run(&s).unwrap();
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
