//! UDP constant-bit-rate sources: the configured rate is delivered over an idle path, and
//! what the bottleneck drops is counted, per flow, per link and in the drop log.

use crate::common;

use tcplab_core::Dur;
use tcplab_sim::builder::{dumbbell, ScenarioBuilder};
use tcplab_sim::scenario::{Duplex, TcpFlowSpec, TraceSpec, UdpFlowSpec};
use tcplab_sim::Simulation;

#[test]
fn cbr_rate_is_achieved_on_an_idle_link() {
    for (rate, size) in [(1_000_000u64, 1000u32), (3_000_000, 1500), (777_777, 333)] {
        // From 1 s to the end of the run (10 s).
        let s = ScenarioBuilder::new("cbr", common::simple_dumbbell(1, 10_000_000, 10, 50))
            .duration(Dur::from_secs(10))
            .udp(UdpFlowSpec::cbr("s0", "r0", rate, size).start(Dur::from_secs(1)))
            .trace(TraceSpec::off())
            .build();
        let r = Simulation::run(&s).unwrap();
        let u = &r.udp[0];
        assert!(r.conservation.ok, "{:?}", r.conservation.violations);
        assert_eq!(u.packets_dropped, 0);
        // Packet k leaves at 1 s + k * size * 8 / rate, for every such time before 10 s.
        let expected = (9.0 * rate as f64 / (8.0 * size as f64)).ceil() as u64;
        assert_eq!(u.packets_sent, expected, "rate {rate} size {size}");
        // All but the few still on the 12 ms path have arrived.
        let in_flight = u.packets_sent - u.packets_received;
        assert!(in_flight <= 3, "{in_flight}");
        assert_eq!(r.conservation.packets_in_flight, in_flight);
        let err = (u.throughput_bps - rate as f64).abs() / rate as f64;
        assert!(err < 0.005, "rate {rate}: got {}", u.throughput_bps);
        assert_eq!(r.stats.sim_time_ns, 10_000_000_000);
    }
}

#[test]
fn a_stopped_source_ends_the_run() {
    let s = ScenarioBuilder::new("cbr", common::simple_dumbbell(1, 10_000_000, 10, 50))
        .duration(Dur::from_secs(10))
        .udp(
            UdpFlowSpec::cbr("s0", "r0", 1_000_000, 1000)
                .start(Dur::from_secs(1))
                .stop(Dur::from_secs(3)),
        )
        .trace(TraceSpec::off())
        .build();
    let r = Simulation::run(&s).unwrap();
    assert_eq!(r.stats.sim_time_ns, 3_000_000_000);
    assert_eq!(r.udp[0].packets_sent, 250, "one every 8 ms for 2 s");
    assert!(r.conservation.ok, "{:?}", r.conservation.violations);
}

#[test]
fn udp_drops_are_counted() {
    // 2 Mb/s into a 1 Mb/s bottleneck: about half is dropped at the buffer; 1% link loss
    // on the bottleneck adds link errors.
    let bottleneck = Duplex::symmetric(common::dir(1_000_000, 10, 10).bernoulli(0.01));
    let access = Duplex::symmetric(common::dir(10_000_000, 1, 100));
    let s = ScenarioBuilder::new("udp-drops", dumbbell(1, bottleneck, access))
        .duration(Dur::from_secs(20))
        .udp(UdpFlowSpec::cbr("s0", "r0", 2_000_000, 1000))
        .trace(TraceSpec::all())
        .build();
    let r = Simulation::run(&s).unwrap();
    assert!(r.conservation.ok, "{:?}", r.conservation.violations);
    let u = &r.udp[0];
    let bn = &r.links[2];
    assert_eq!((bn.link.as_str(), bn.direction), ("left-right", "forward"));
    let [overflow, _, _, link_error, _] = bn.drops;
    assert_eq!(u.packets_dropped, overflow + link_error);
    assert_eq!(r.drops.time_ns.len() as u64, u.packets_dropped);
    assert!(r.drops.flow_kind.iter().all(|k| *k == "udp"));
    let frac = u.packets_dropped as f64 / u.packets_sent as f64;
    assert!((0.45..0.55).contains(&frac), "{frac}");
    assert!(link_error > 10, "{link_error}");
    assert!(bn.utilization > 0.99, "{}", bn.utilization);
    assert!(
        (u.throughput_bps - 990_000.0).abs() < 20_000.0,
        "{}",
        u.throughput_bps
    );
}

#[test]
fn udp_and_tcp_share_a_link() {
    let s = ScenarioBuilder::new("mix", common::simple_dumbbell(2, 2_000_000, 20, 20))
        .duration(Dur::from_secs(30))
        .flow(TcpFlowSpec::bulk("s0", "r0"))
        .udp(UdpFlowSpec::cbr("s1", "r1", 1_000_000, 1000))
        .trace(TraceSpec::off())
        .build();
    let r = Simulation::run(&s).unwrap();
    assert!(r.conservation.ok, "{:?}", r.conservation.violations);
    let tcp = r.flows[0].throughput_bps;
    let udp = r.udp[0].throughput_bps;
    assert!(tcp + udp > 1_800_000.0 && tcp > 600_000.0, "{tcp} {udp}");
}
