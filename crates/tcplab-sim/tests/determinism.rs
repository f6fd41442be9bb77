//! Same scenario and seed: identical results, column for column. Another seed: another loss
//! process. Simulations running in parallel threads match sequential runs (no shared state).

use crate::common;

use tcplab_core::Dur;
use tcplab_sim::builder::{dumbbell, ScenarioBuilder};
use tcplab_sim::scenario::{Duplex, Scenario, TcpFlowSpec, TraceSpec, UdpFlowSpec};
use tcplab_sim::{Results, Simulation};

fn scenario(seed: u64) -> Scenario {
    let bottleneck = Duplex::new(
        common::dir(3_000_000, 15, 25).bernoulli(0.01),
        common::dir(3_000_000, 15, 25).bernoulli(0.005),
    );
    let access = Duplex::symmetric(common::dir(100_000_000, 1, 1000));
    ScenarioBuilder::new("determinism", dumbbell(3, bottleneck, access))
        .seed(seed)
        .duration(Dur::from_secs(20))
        .flow(TcpFlowSpec::bulk("s0", "r0"))
        .flow(
            TcpFlowSpec::bulk("s1", "r1")
                .recovery("sack")
                .start(Dur::from_millis(300)),
        )
        .flow(
            TcpFlowSpec::bulk("s2", "r2")
                .recovery("reno")
                .bytes(1_000_000),
        )
        .udp(UdpFlowSpec::cbr("s2", "r2", 300_000, 500).stop(Dur::from_secs(15)))
        .trace(TraceSpec::all())
        .build()
}

fn run(seed: u64) -> Results {
    Simulation::run(&scenario(seed)).unwrap()
}

fn assert_same(a: &Results, b: &Results) {
    // Table by table first, for a readable failure.
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.udp, b.udp);
    assert_eq!(a.links, b.links);
    assert_eq!(a.series, b.series);
    assert_eq!(a.queues, b.queues);
    assert_eq!(a.drops, b.drops);
    assert_eq!(a.events, b.events);
    assert_eq!(a.segments, b.segments);
    assert_eq!(a.conservation, b.conservation);
    assert_eq!(a.stats, b.stats);
    assert!(a == b);
}

#[test]
fn same_seed_same_results() {
    let a = run(7);
    let b = run(7);
    // Every table has content, so the comparison means something.
    assert!(!a.series.time_ns.is_empty() && !a.queues.time_ns.is_empty());
    assert!(!a.drops.time_ns.is_empty() && !a.events.time_ns.is_empty());
    assert!(!a.segments.time_ns.is_empty());
    assert!(a.conservation.ok, "{:?}", a.conservation.violations);
    assert_same(&a, &b);
}

#[test]
fn different_seeds_different_drop_patterns() {
    let a = run(7);
    let b = run(8);
    assert_ne!(a.drops, b.drops);
    assert_ne!(a.flows, b.flows);
}

#[test]
fn loss_process_depends_on_the_seed_and_link_not_on_the_algorithm() {
    // One flow, random loss only (huge buffers). NewReno and SACK send the same packets
    // until the first loss, so with the bottleneck's own loss stream they lose the same
    // packet at the same time; afterwards they differ.
    let mk = |recovery: &str| {
        let bottleneck = Duplex::symmetric(common::dir(10_000_000, 10, 10_000).bernoulli(0.02));
        let access = Duplex::symmetric(common::dir(100_000_000, 1, 10_000));
        let s = ScenarioBuilder::new("same-loss", dumbbell(1, bottleneck, access))
            .seed(3)
            .duration(Dur::from_secs(5))
            .flow(TcpFlowSpec::bulk("s0", "r0").recovery(recovery))
            .trace(TraceSpec::all())
            .build();
        Simulation::run(&s).unwrap()
    };
    let a = mk("newreno");
    let b = mk("sack");
    // Before the first loss both senders behave identically: same first drop.
    let first = |r: &Results| {
        let j = (0..r.drops.link.len())
            .find(|&j| r.drops.link[j] == 2)
            .unwrap();
        (r.drops.time_ns[j], r.drops.seq[j])
    };
    assert_eq!(first(&a), first(&b));
    assert_ne!(
        a.segments, b.segments,
        "the strategies do differ afterwards"
    );
}

#[test]
fn parallel_threads_match_sequential_runs() {
    let seeds = [1u64, 2, 3, 4];
    let sequential: Vec<Results> = seeds.iter().map(|&s| run(s)).collect();
    let parallel: Vec<Results> = std::thread::scope(|scope| {
        let handles: Vec<_> = seeds.iter().map(|&s| scope.spawn(move || run(s))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (a, b) in sequential.iter().zip(&parallel) {
        assert_same(a, b);
    }
}

#[test]
fn tracing_does_not_change_what_happens() {
    let traced = run(5);
    for trace in [
        TraceSpec::off(),
        TraceSpec {
            series: tcplab_sim::scenario::SeriesMode::Interval,
            ..TraceSpec::all()
        },
    ] {
        let mut s = scenario(5);
        s.trace = trace;
        let r = Simulation::run(&s).unwrap();
        assert_eq!(r.flows, traced.flows);
        assert_eq!(r.udp, traced.udp);
        assert_eq!(r.links, traced.links);
        assert_eq!(r.conservation, traced.conservation);
        assert_eq!(r.stats.transmissions, traced.stats.transmissions);
        assert_eq!(r.stats.sim_time_ns, traced.stats.sim_time_ns);
    }
}

#[test]
fn simulations_and_results_can_move_between_threads() {
    fn send<T: Send + 'static>() {}
    send::<Simulation>();
    send::<Results>();
    // A simulation built on one thread runs on another.
    let mut sim = Simulation::new(&scenario(9)).unwrap();
    sim.run_until(tcplab_core::Time::from_secs(5));
    let r = std::thread::spawn(move || {
        sim.run_until(sim.end_time());
        sim.finish()
    })
    .join()
    .unwrap();
    assert_same(&r, &run(9));
}
