//! Two Reno flows with equal RTTs on one drop-tail bottleneck share it fairly.

use crate::common;

use tcplab_core::Dur;
use tcplab_sim::builder::ScenarioBuilder;
use tcplab_sim::scenario::{TcpFlowSpec, TraceSpec};
use tcplab_sim::Simulation;

#[test]
fn two_reno_flows_share_a_drop_tail_bottleneck_fairly() {
    // 10 Mb/s, 20 ms one way (RTT 48 ms with the access links), buffer about one BDP.
    let s = ScenarioBuilder::new("fairness", common::simple_dumbbell(2, 10_000_000, 20, 40))
        .seed(5)
        .duration(Dur::from_secs(100))
        .flow(
            TcpFlowSpec::bulk("s0", "r0")
                .controller("reno")
                .recovery("newreno"),
        )
        .flow(
            TcpFlowSpec::bulk("s1", "r1")
                .controller("reno")
                .recovery("newreno")
                .start(Dur::from_millis(50)),
        )
        .trace(TraceSpec::off())
        .build();
    let r = Simulation::run(&s).unwrap();
    assert!(r.conservation.ok, "{:?}", r.conservation.violations);
    let bottleneck = r
        .links
        .iter()
        .find(|l| l.link == "left-right" && l.direction == "forward")
        .unwrap();
    let x: Vec<f64> = r.flows.iter().map(|f| f.throughput_bps).collect();
    let j = common::jain(&x);
    let total: f64 = x.iter().sum();
    eprintln!(
        "throughputs {x:?}, Jain index {j:.4}, utilization {:.3}, loss events {:?}",
        bottleneck.utilization,
        r.flows
            .iter()
            .map(|f| f.sender.loss_events)
            .collect::<Vec<_>>()
    );
    assert!(
        total > 9_000_000.0,
        "the flows fill the bottleneck: {total}"
    );
    assert!(bottleneck.utilization > 0.9, "{}", bottleneck.utilization);
    assert!(j >= 0.95, "Jain index {j} of {x:?}");
}
