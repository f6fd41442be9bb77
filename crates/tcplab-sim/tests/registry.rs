//! An embedding program extends the registries without editing tcplab: its own controller
//! (a `WindowRule` defined here) and a built-in under another name run through
//! `Simulation::with_registries`; `Simulation::new` (the built-ins only) refuses them.

use tcplab_core::cc::reno::{reno_reduction, Reno};
use tcplab_core::cc::{AckSample, CongestionControl, CongestionEvent, Verdict, Window, WindowRule};
use tcplab_core::registry::Registries;
use tcplab_core::{Dur, ParamReader};
use tcplab_sim::builder::{dumbbell, ScenarioBuilder};
use tcplab_sim::scenario::{Buffer, Duplex, LinkDir, Scenario, TcpFlowSpec, TraceSpec};
use tcplab_sim::Simulation;

/// Reno growth; at a congestion signal ssthresh = 3/4 cwnd (timeouts as Reno).
struct Gentle {
    w: Window,
}

impl WindowRule for Gentle {
    const NAME: &'static str = "gentle";
    fn window(&self) -> &Window {
        &self.w
    }
    fn window_mut(&mut self) -> &mut Window {
        &mut self.w
    }
    fn grow(&mut self, s: &AckSample) {
        self.w.grow(s);
    }
    fn reduce(&mut self, ev: &CongestionEvent) -> Verdict {
        if ev.kind != tcplab_core::cc::CongestionKind::FastRetransmit {
            return reno_reduction(&mut self.w, ev);
        }
        self.w.set_ssthresh(self.w.cwnd * 3 / 4);
        Verdict {
            label: "3/4",
            value: 0.75,
        }
    }
}

fn registries() -> Registries {
    let mut reg = Registries::default();
    reg.controllers
        .register("gentle", "ssthresh = 3/4 cwnd", |params, ctx| {
            ParamReader::new("gentle", params).finish()?;
            let w = Window::new(ctx.mss, ctx.initial_cwnd, ctx.initial_ssthresh, ctx.growth);
            Ok(Box::new(Gentle { w }) as Box<dyn CongestionControl>)
        });
    reg.controllers
        .register("reno-again", "reno", |params, ctx| {
            Ok(Box::new(Reno::from_params(ctx, params)?) as Box<dyn CongestionControl>)
        });
    reg
}

fn scenario(controller: &str) -> Scenario {
    let pipe = LinkDir::new(5_000_000, Dur::from_millis(20), Buffer::Packets(20)).bernoulli(5e-3);
    let access = Duplex::symmetric(LinkDir::new(
        50_000_000,
        Dur::from_millis(1),
        Buffer::Packets(1000),
    ));
    ScenarioBuilder::new(
        "registry",
        dumbbell(1, Duplex::new(pipe.clone(), pipe), access),
    )
    .seed(3)
    .duration(Dur::from_secs(20))
    .flow(
        TcpFlowSpec::bulk("s0", "r0")
            .controller(controller)
            .recovery("sack"),
    )
    .trace(TraceSpec::off())
    .build()
}

fn run(controller: &str) -> tcplab_sim::Results {
    let mut sim = Simulation::with_registries(&scenario(controller), &registries()).unwrap();
    let end = sim.end_time();
    sim.run_until(end);
    sim.finish()
}

#[test]
fn a_built_in_registered_again_gives_the_same_results() {
    let a = Simulation::run(&scenario("reno")).unwrap();
    let mut b = run("reno-again");
    assert_eq!(b.flows[0].controller, "reno-again");
    b.flows[0].controller = "reno".into();
    assert_eq!(a.flows, b.flows);
    assert!(
        a.flows[0].sender.retransmits > 10,
        "the path loses segments"
    );
}

#[test]
fn an_embedders_controller_runs_and_answers_with_its_own_rule() {
    let reno = Simulation::run(&scenario("reno")).unwrap();
    let gentle = run("gentle");
    assert!(gentle.conservation.ok);
    assert!(gentle.flows[0].bytes_delivered > 0);
    assert_ne!(
        gentle.flows[0].sender.segments_sent,
        reno.flows[0].sender.segments_sent
    );
}

#[test]
fn the_built_in_tables_do_not_know_it() {
    let e = Simulation::new(&scenario("gentle"))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("flows[0].controller = \"gentle\": unknown congestion controller"),
        "{e}"
    );
    assert!(Scenario::validate_with(&scenario("gentle"), &registries()).is_ok());
}
