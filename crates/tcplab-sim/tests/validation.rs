//! Invalid scenarios are refused with messages naming the field, the value and what is
//! allowed; `Simulation::new` never panics on them.

use crate::common;

use tcplab_core::{ControllerSpec, Dur, TcpConfig};
use tcplab_sim::builder::{dumbbell, explicit, ScenarioBuilder};
use tcplab_sim::error::Problem;
use tcplab_sim::scenario::{
    Buffer, Duplex, LossSpec, NodeKind, Scenario, SeriesMode, TcpFlowSpec, Topology, TraceSpec,
    UdpFlowSpec,
};
use tcplab_sim::Simulation;

fn base() -> Scenario {
    ScenarioBuilder::new("v", common::simple_dumbbell(2, 1_000_000, 10, 10))
        .flow(TcpFlowSpec::bulk("s0", "r0"))
        .flow(TcpFlowSpec::bulk("s1", "r1"))
        .build()
}

fn error(s: &Scenario) -> String {
    match Simulation::new(s) {
        Ok(_) => panic!("accepted an invalid scenario: {s:#?}"),
        Err(e) => {
            assert_eq!(s.validate().unwrap_err(), e);
            e.0
        }
    }
}

fn expect(s: &Scenario, parts: &[&str]) {
    let e = error(s);
    for p in parts {
        assert!(e.contains(p), "message {e:?} lacks {p:?}");
    }
}

fn bottleneck(s: &mut Scenario) -> &mut Duplex {
    match &mut s.topology {
        Topology::Dumbbell(d) => &mut d.bottleneck,
        _ => unreachable!("the base scenario is a dumbbell"),
    }
}

#[test]
fn the_base_scenario_is_valid() {
    base().validate().unwrap();
    Simulation::new(&base()).unwrap();
}

#[test]
fn unknown_controller_names_the_flow_and_the_known_ones() {
    let mut s = base();
    s.flows[1].controller = ControllerSpec::named("renoo");
    let e = error(&s);
    assert!(
        e.starts_with(
            r#"flows[1].controller = "renoo": unknown congestion controller; known: ["reno", "#
        ),
        "{e}"
    );
}

#[test]
fn unknown_recovery_and_sack_without_blocks() {
    let mut s = base();
    s.flows[0] = TcpFlowSpec::bulk("s0", "r0").recovery("fackk");
    expect(
        &s,
        &[
            "flows[0].recovery = \"fackk\"",
            "known: [\"reno\", \"newreno\", \"sack\", ",
        ],
    );
    let mut s = base();
    s.flows[0] = TcpFlowSpec::bulk("s0", "r0")
        .recovery("sack")
        .tcp(TcpConfig {
            sack_blocks: 0,
            ..TcpConfig::default()
        });
    expect(&s, &["flows[0].recovery = \"sack\"", "sack_blocks"]);
}

#[test]
fn zero_rate_and_zero_buffer() {
    let mut s = base();
    bottleneck(&mut s).forward.rate = 0;
    assert_eq!(
        error(&s),
        "topology.bottleneck.forward.rate = 0: expected a positive rate in bit/s"
    );
    let mut s = base();
    bottleneck(&mut s).reverse.buffer = Buffer::Packets(0);
    expect(
        &s,
        &[
            "topology.bottleneck.reverse.buffer",
            "packets: 0",
            "at least 1 packet",
        ],
    );
    let mut s = base();
    bottleneck(&mut s).reverse.buffer = Buffer::Bytes(0);
    expect(&s, &["topology.bottleneck.reverse.buffer", "bytes: 0"]);
}

#[test]
fn negative_rate_is_refused_when_reading_json() {
    let mut v = serde_json::to_value(base()).unwrap();
    v["topology"]["bottleneck"]["forward"]["rate"] = serde_json::json!(-5);
    let e = serde_json::from_value::<Scenario>(v)
        .unwrap_err()
        .to_string();
    assert!(e.contains("-5") && e.contains("u64"), "{e}");
}

#[test]
fn loss_probability_outside_0_1_or_nan() {
    for (p, shown) in [(1.5, "1.5"), (-0.1, "-0.1"), (f64::NAN, "NaN")] {
        let mut s = base();
        bottleneck(&mut s).forward.loss = LossSpec::Bernoulli { p };
        assert_eq!(
            error(&s),
            format!(
                "topology.bottleneck.forward.loss.p = {shown}: expected a probability in [0, 1]"
            )
        );
    }
}

#[test]
fn unknown_node_in_a_flow_and_a_link() {
    let mut s = base();
    s.flows[0].dst = "r9".into();
    expect(
        &s,
        &["flows[0].dst = \"r9\": unknown node", "\"r0\", \"r1\""],
    );

    let d = Duplex::symmetric(common::dir(1_000_000, 1, 10));
    let mut s = base();
    s.topology = explicit(
        &[("a", NodeKind::Host), ("b", NodeKind::Host)],
        vec![("a", "x", d)],
    );
    s.flows = vec![TcpFlowSpec::bulk("a", "b")];
    expect(
        &s,
        &[
            "topology.links[0].to = \"x\": unknown node",
            "[\"a\", \"b\"]",
        ],
    );
}

#[test]
fn duplicate_nodes_missing_routes_and_routers_as_endpoints() {
    let d = Duplex::symmetric(common::dir(1_000_000, 1, 10));
    let mut s = base();
    s.topology = explicit(
        &[
            ("a", NodeKind::Host),
            ("a", NodeKind::Router),
            ("b", NodeKind::Host),
            ("c", NodeKind::Host),
            ("r", NodeKind::Router),
        ],
        vec![("a", "r", d.clone()), ("r", "b", d.clone()), ("c", "a", d)],
    );
    s.flows = vec![
        TcpFlowSpec::bulk("a", "b"),
        TcpFlowSpec::bulk("c", "b"),
        TcpFlowSpec::bulk("a", "r"),
    ];
    let e = error(&s);
    assert!(
        e.contains("topology.nodes[1].name = \"a\": duplicate node name"),
        "{e}"
    );
    assert!(e.contains("flows[1]: no route from \"c\" to \"b\""), "{e}");
    assert!(e.contains("flows[2].dst = \"r\": a router"), "{e}");
    assert!(!e.contains("flows[0]"), "flow 0 is fine: {e}");
}

#[test]
fn dumbbell_shape() {
    let d = Duplex::symmetric(common::dir(1_000_000, 1, 10));
    let mut s = base();
    s.topology = dumbbell(0, d.clone(), d.clone());
    s.flows.clear();
    expect(&s, &["topology.pairs = 0"]);
    let mut s = base();
    if let Topology::Dumbbell(db) = &mut s.topology {
        db.sender_access = vec![d.clone(), d.clone(), d];
    }
    expect(
        &s,
        &["topology.sender_access has 3 entries: expected 1 (for all pairs) or 2"],
    );
}

#[test]
fn tcp_settings_times_and_sizes() {
    let mut s = base();
    s.tcp.mss = 10;
    assert_eq!(error(&s), "tcp.mss = 10: expected 64..=65000 bytes");
    let mut s = base();
    s.flows[1].tcp = Some(TcpConfig {
        initial_cwnd: 0,
        ..TcpConfig::default()
    });
    expect(&s, &["flows[1].tcp.initial_cwnd = 0"]);
    let mut s = base();
    s.flows[0].start = Dur::from_secs(11);
    expect(
        &s,
        &["flows[0].start = 11000000000: expected at most the duration"],
    );
    let mut s = base();
    s.flows[0].start = Dur::from_secs(2);
    s.flows[0].stop = Some(Dur::from_secs(1));
    expect(
        &s,
        &["flows[0].stop = 1000000000: expected later than start"],
    );
    let mut s = base();
    s.flows[0].bytes = Some(0);
    expect(&s, &["flows[0].bytes = 0"]);
    let mut s = base();
    s.duration = Dur::ZERO;
    expect(&s, &["duration = 0"]);
    let mut s = base();
    s.udp.push(UdpFlowSpec::cbr("s0", "r0", 0, 0));
    expect(&s, &["udp[0].rate = 0", "udp[0].packet_size = 0"]);
    let mut s = base();
    s.trace = TraceSpec {
        series: SeriesMode::Interval,
        interval: Dur::ZERO,
        ..TraceSpec::off()
    };
    expect(&s, &["trace.interval = 0"]);
    // Series on change bin the one-way delay over time by the interval too.
    s.trace.series = SeriesMode::Change;
    let p = check(&s);
    let interval = p.iter().find(|p| p.path == "trace.interval").unwrap();
    assert_eq!(
        (interval.rule, &interval.value, &interval.limit),
        (
            Problem::POSITIVE_INTERVAL,
            &Some(serde_json::json!(0)),
            &Some(serde_json::json!(1))
        )
    );
    s.trace.series = SeriesMode::Off;
    assert!(check(&s).iter().all(|p| p.path != "trace.interval"));
    let mut s = base();
    s.flows[1].name = Some("flow0".into());
    expect(
        &s,
        &["flows[1].name = \"flow0\": also the name of flows[0]"],
    );
}

#[test]
fn several_problems_are_reported_together() {
    let mut s = base();
    bottleneck(&mut s).forward.rate = 0;
    s.flows[0].controller = ControllerSpec::named("cubik");
    let e = error(&s);
    assert!(e.contains("topology.bottleneck.forward.rate = 0"), "{e}");
    assert!(e.contains("flows[0].controller = \"cubik\""), "{e}");
}

#[test]
fn times_beyond_the_representable_clock_are_refused() {
    // A clock near u64::MAX ns saturates (now + delay == now): such a run would never end.
    let mut s = base();
    s.duration = Dur::from_nanos(u64::MAX);
    s.flows[1].start = Dur::from_nanos(u64::MAX - 1_000_000);
    expect(
        &s,
        &["duration = 18446744073709551615: expected at most 4611686018427387904 ns"],
    );
    let mut s = base();
    bottleneck(&mut s).forward.delay = Dur::from_nanos(u64::MAX);
    expect(
        &s,
        &["topology.bottleneck.forward.delay = 18446744073709551615: expected at most"],
    );
    let mut s = base();
    s.duration = tcplab_sim::validate::MAX_TIME;
    s.validate().unwrap();
}

#[test]
fn a_byte_buffer_smaller_than_every_packet_is_refused() {
    // MSS 1460 + 40 header bytes: a 1-byte (or 1499-byte) buffer drops every data segment.
    for b in [1, 1499] {
        let mut s = base();
        bottleneck(&mut s).forward.buffer = Buffer::Bytes(b);
        expect(
            &s,
            &[&format!(
                "topology.bottleneck.forward.buffer = {b}: expected at least 1500 bytes"
            )],
        );
    }
    let mut s = base();
    bottleneck(&mut s).forward.buffer = Buffer::Bytes(1500);
    s.validate().unwrap();
}

#[test]
fn flow_names_are_unique_across_tcp_and_udp() {
    let mut s = base();
    let mut u = UdpFlowSpec::cbr("s0", "r0", 1_000_000, 1000);
    u.name = Some("flow1".into());
    s.udp.push(u);
    let p = check(&s);
    let dup = p.iter().find(|p| p.rule == Problem::DUPLICATE_FLOW_NAME);
    let dup = dup.expect("a duplicate name problem");
    assert_eq!(dup.path, "udp[0].name");
    assert_eq!(dup.limit, Some("flows[1]".into()));
    assert!(dup
        .message
        .starts_with("udp[0].name = \"flow1\": also the name of flows[1]"));
}

#[test]
fn endpoints_are_hosts_and_differ_structured() {
    let mut s = base();
    s.flows[0].dst = "s0".into();
    s.flows[1].src = "nobody".into();
    let p = check(&s);
    let same = p.iter().find(|p| p.rule == Problem::SAME_HOST).unwrap();
    assert_eq!(
        (same.path.as_str(), same.value.clone()),
        ("flows[0].dst", Some("s0".into()))
    );
    let host = p.iter().find(|p| p.rule == Problem::NOT_A_HOST).unwrap();
    assert_eq!(host.path, "flows[1].src");
    assert_eq!(host.value, Some("nobody".into()));
    let mut s = base();
    s.flows[0].dst = "left".into();
    let host = check(&s)
        .into_iter()
        .find(|p| p.rule == Problem::NOT_A_HOST)
        .unwrap();
    assert!(
        host.message
            .contains("a router; flows start and end at hosts"),
        "{host:?}"
    );
}

#[test]
fn an_unknown_endpoint_lists_a_few_hosts_only() {
    // 50 pairs: 100 hosts, of which the message shows 8 and "...".
    let mut s = ScenarioBuilder::new("v", common::simple_dumbbell(50, 1_000_000, 10, 10))
        .flow(TcpFlowSpec::bulk("s0", "r0"))
        .build();
    s.flows[0].src = "nobody".into();
    let host = check(&s)
        .into_iter()
        .find(|p| p.rule == Problem::NOT_A_HOST)
        .unwrap();
    let shown = host.limit.unwrap();
    assert_eq!(shown.as_array().unwrap().len(), 9, "{shown}");
    assert_eq!(shown[8], "...");
}

/// A TCP rule (tcplab_core's `ConfigError`) becomes a problem under the field's path, with
/// the core's rule, value and limit; the message is the core's, under the flow.
#[test]
fn tcp_config_errors_are_structured_problems() {
    let mut s = base();
    s.tcp.rcv_buf = 1000;
    s.flows[1].tcp = Some(TcpConfig {
        initial_cwnd: 0,
        ..TcpConfig::default()
    });
    let p = check(&s);
    let scenario = p.iter().find(|p| p.path == "tcp.rcv_buf").unwrap();
    assert_eq!(scenario.rule, tcplab_core::ConfigError::RCV_BUF_BELOW_MSS);
    assert_eq!(scenario.value, Some(serde_json::json!(1000)));
    assert_eq!(scenario.limit, Some(serde_json::json!(1460)));
    assert_eq!(
        scenario.message,
        "tcp.rcv_buf = 1000: expected at least one MSS"
    );
    let flow = p
        .iter()
        .find(|p| p.path == "flows[1].tcp.initial_cwnd")
        .unwrap();
    assert_eq!(flow.rule, tcplab_core::ConfigError::RANGE);
    assert_eq!(flow.limit, Some(serde_json::json!([1, 10_000])));
    assert!(
        flow.message
            .starts_with("flows[1].tcp.initial_cwnd = 0: expected"),
        "{}",
        flow.message
    );
}

fn check(s: &Scenario) -> Vec<Problem> {
    tcplab_sim::validate::check(s, &tcplab_core::registry::Registries::default())
}

/// A link direction's rules (the one home of them; Python only words them): each problem
/// carries its rule, the field's path and the value.
#[test]
fn link_rules_are_structured_problems() {
    use tcplab_sim::scenario::{LinkChange, QueueSpec, RedMode, RedSpec};
    let mut s = base();
    let b = bottleneck(&mut s);
    b.forward.buffer = Buffer::Packets(0);
    b.reverse.buffer = Buffer::Bytes(0);
    b.forward.loss = LossSpec::GilbertElliott {
        p_gb: 1.5,
        p_bg: 0.5,
        loss_good: 0.0,
        loss_bad: 1.0,
    };
    b.reverse.loss = LossSpec::TimeTrace {
        times: vec![],
        intervals: vec![[Dur::from_secs(2), Dur::from_secs(1)]],
    };
    b.forward.queue = QueueSpec::Red(RedSpec {
        min_th: -1.0,
        max_th: -2.0,
        max_p: 2.0,
        w_q: 0.0,
        gentle: false,
        wait: true,
        mode: RedMode::Packets,
        ecn: false,
        mean_packet_size: 0,
    });
    b.reverse.report_delay = Dur::from_millis(5);
    b.forward.schedule = vec![LinkChange {
        at: Dur::from_millis(1),
        ..LinkChange::default()
    }];
    let problems = check(&s);
    let find = |path: &str| {
        let path = format!("topology.bottleneck.{path}");
        problems
            .iter()
            .find(|p| p.path == path)
            .unwrap_or_else(|| panic!("no problem at {path}: {problems:#?}"))
    };
    let json = |v: serde_json::Value| Some(v);
    let cases = [
        (
            "forward.buffer",
            Problem::EMPTY_BUFFER,
            json(0.into()),
            json("packet".into()),
        ),
        (
            "reverse.buffer",
            Problem::EMPTY_BUFFER,
            json(0.into()),
            json("byte".into()),
        ),
        (
            "forward.loss.p_gb",
            Problem::RANGE,
            json(1.5.into()),
            json(serde_json::json!([0, 1])),
        ),
        (
            "reverse.loss.intervals[0]",
            Problem::START_BEFORE_END,
            json(serde_json::json!([2_000_000_000u64, 1_000_000_000u64])),
            json(serde_json::Value::Null),
        ),
        (
            "forward.queue.min_th",
            Problem::AT_LEAST,
            json((-1.0).into()),
            json(0.into()),
        ),
        (
            "forward.queue.max_th",
            Problem::MAX_TH_ABOVE_MIN_TH,
            json((-2.0).into()),
            json((-1.0).into()),
        ),
        (
            "forward.queue.max_p",
            Problem::RANGE,
            json(2.0.into()),
            json(serde_json::json!([0, 1])),
        ),
        (
            "forward.queue.w_q",
            Problem::WEIGHT,
            json(0.0.into()),
            json(serde_json::Value::Null),
        ),
        (
            "forward.queue.mean_packet_size",
            Problem::AT_LEAST,
            json(0.into()),
            json(1.into()),
        ),
        (
            "reverse.report_delay",
            Problem::REPORT_DELAY_NEEDS_LOSSES,
            json(5_000_000u64.into()),
            json(serde_json::Value::Null),
        ),
        (
            "forward.schedule[0]",
            Problem::CHANGES_NOTHING,
            json(serde_json::Value::Null),
            json(serde_json::Value::Null),
        ),
    ];
    for (path, rule, value, limit) in cases {
        let p = find(path);
        assert_eq!(
            (p.rule, &p.value, &p.limit),
            (rule, &value, &limit),
            "{path}"
        );
        assert!(
            p.message
                .starts_with(&format!("topology.bottleneck.{path}")),
            "{}",
            p.message
        );
    }
    // A schedule change's buffer and loss follow the same rules.
    let mut s = base();
    bottleneck(&mut s).forward.schedule = vec![LinkChange {
        at: Dur::from_millis(1),
        buffer: Some(Buffer::Packets(0)),
        loss: Some(LossSpec::Bernoulli { p: -0.5 }),
        ..LinkChange::default()
    }];
    let problems = check(&s);
    let rules: Vec<_> = problems.iter().map(|p| (p.path.as_str(), p.rule)).collect();
    // Changes are sorted by time.
    let mut s = base();
    let change = |ms| LinkChange {
        at: Dur::from_millis(ms),
        rate: Some(1_000_000),
        ..LinkChange::default()
    };
    bottleneck(&mut s).forward.schedule = vec![change(20), change(10)];
    let p = check(&s);
    let order = p
        .iter()
        .find(|p| p.path == "topology.bottleneck.forward.schedule[1].at")
        .unwrap_or_else(|| panic!("{p:#?}"));
    assert_eq!(order.rule, Problem::AFTER_PREVIOUS_CHANGE);
    assert_eq!(order.value, Some(serde_json::json!(10_000_000)));
    assert_eq!(order.limit, Some(serde_json::json!([0, 20_000_000])));
    assert!(
        rules.contains(&(
            "topology.bottleneck.forward.schedule[0].buffer",
            Problem::EMPTY_BUFFER
        )),
        "{rules:?}"
    );
    assert!(
        rules.contains(&(
            "topology.bottleneck.forward.schedule[0].loss.p",
            Problem::RANGE
        )),
        "{rules:?}"
    );
}

/// Sizes of 0 bytes (a flow's transfer, a UDP packet, a parking lot's packet) and a pcap
/// snap length out of range are the simulator's rules, structured for the Python schema
/// (whose size parser accepts 0 and words these): field, rule, value, limit.
#[test]
fn zero_sizes_and_the_snap_length_are_structured_problems() {
    let mut s = base();
    s.flows[0].bytes = Some(0);
    s.udp.push(UdpFlowSpec::cbr("s1", "r1", 1_000_000, 0));
    s.trace.pcap_snaplen = 70_000;
    let problems = check(&s);
    let find = |path: &str| {
        problems
            .iter()
            .find(|p| p.path == path)
            .unwrap_or_else(|| panic!("no problem at {path}: {problems:#?}"))
    };
    let one = Some(serde_json::json!(1));
    let zero = Some(serde_json::json!(0));
    let bytes = find("flows[0].bytes");
    assert_eq!(
        (bytes.rule, &bytes.value, &bytes.limit),
        (Problem::AT_LEAST, &zero, &one)
    );
    let size = find("udp[0].packet_size");
    assert_eq!(
        (size.rule, &size.value, &size.limit),
        (Problem::AT_LEAST, &zero, &one)
    );
    let snap = find("trace.pcap_snaplen");
    assert_eq!(snap.rule, Problem::RANGE);
    assert_eq!(snap.value, Some(serde_json::json!(70_000)));
    assert_eq!(snap.limit, Some(serde_json::json!([1, 65535])));
    assert!(snap.message.starts_with("trace.pcap_snaplen = 70000: "));

    let mut lot: tcplab_sim::scenario::ParkingLot =
        serde_json::from_value(serde_json::json!({
            "hops": 1, "bottleneck": [serde_json::to_value(bottleneck(&mut base()).clone()).unwrap()],
            "access": serde_json::to_value(tcplab_sim::scenario::Dumbbell::default_access(1_000_000)).unwrap(),
            "long_pairs": 1, "cross_pairs": [0], "reverse_pairs": 0,
        }))
        .unwrap();
    assert_eq!(lot.packet_size, 1500, "the serde default");
    lot.packet_size = 0;
    let mut s = base();
    s.topology = Topology::ParkingLot(lot);
    s.flows.truncate(1);
    s.flows[0].src = "ls0".into();
    s.flows[0].dst = "lr0".into();
    let p = check(&s);
    let size = p
        .iter()
        .find(|p| p.path == "topology.packet_size")
        .expect("a problem at topology.packet_size");
    assert_eq!((size.rule, &size.value), (Problem::AT_LEAST, &zero));
}
