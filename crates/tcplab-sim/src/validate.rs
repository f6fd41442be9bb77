//! Scenario validation. The simulator never trusts its input (the Python schema checks too,
//! but Rust users build scenarios directly): every problem is reported with the path of the
//! field, the value and what is allowed, e.g.
//! `flows[1].controller = "renoo": unknown congestion controller; known: ["reno"]`.
//! All problems found are reported together, separated by "; ".

use crate::error::{Problem, SimError};
pub use crate::field_rules::MAX_TIME;
use crate::field_rules::{
    at_most_duration, buffer_fits, link_dir, schedule, smallest_packet, time_limit, At,
};
use crate::flow_route;
use crate::framing_rules;
use crate::node::Routes;
use crate::scenario::{Framing, NodeKind, ReceiverStack, Scenario, SeriesMode, Stack};
use crate::topology::{self, Layout};
use std::fmt::Display;
use tcplab_core::registry::Registries;
use tcplab_core::{ConfigError, Dur, Sender};

impl Scenario {
    /// Checks everything `Simulation::new` relies on.
    pub fn validate(&self) -> Result<(), SimError> {
        self.validate_with(&Registries::default())
    }

    /// `validate`, with controllers and recovery strategies looked up in `registries`.
    pub fn validate_with(&self, registries: &Registries) -> Result<(), SimError> {
        self.validated(registries).map(drop)
    }

    /// `validate_with`, handing back the topology it expanded and its routes (what the
    /// simulator builds from: expanding a topology of many hosts is not done twice).
    pub(crate) fn validated(
        &self,
        registries: &Registries,
    ) -> Result<(Layout<'_>, Routes), SimError> {
        let c = checked(self, registries);
        if c.problems.is_empty() {
            Ok((c.layout, c.routes))
        } else {
            let messages: Vec<String> = c.problems.into_iter().map(|p| p.message).collect();
            Err(SimError(messages.join("; ")))
        }
    }
}

/// Every problem of `s`, in the order of the scenario's fields, structured.
pub fn check(s: &Scenario, registries: &Registries) -> Vec<Problem> {
    checked(s, registries).problems
}

/// What [`check`] found, and the topology it expanded on the way with its routes.
struct Checked<'a> {
    problems: Vec<Problem>,
    layout: Layout<'a>,
    routes: Routes,
}

fn checked<'a>(s: &'a Scenario, registries: &Registries) -> Checked<'a> {
    let mut errs: Vec<Problem> = Vec::new();
    if s.duration == Dur::ZERO {
        errs.push(String::from("duration = 0: expected a positive duration in ns").into());
    }
    time_limit(&"duration", s.duration, &mut errs);
    let layout = topology::expand_problems(&s.topology, &mut errs);
    let packet = smallest_packet(s);
    for l in &layout.links {
        let dirs = [
            (At(&l.spec_path, ".forward"), &l.forward),
            (At(&l.spec_path, ".reverse"), &l.reverse),
        ];
        // Each check on both directions before the next: the problems keep this order.
        for (at, d) in &dirs {
            link_dir(at, d, &mut errs);
        }
        for (at, d) in &dirs {
            buffer_fits(at, d, packet, &mut errs);
        }
        for (at, d) in &dirs {
            schedule(at, d, s.duration, &mut errs);
        }
    }
    for w in &layout.wlans {
        topology::wlan::check_params(&w.spec_path, w.spec, &mut errs);
    }
    dedup_keep_order(&mut errs);
    let routes = layout.routes();
    let dirs = layout.directions();
    let default_tcp_ok = match s.tcp.validate() {
        Ok(()) => true,
        Err(e) => {
            errs.push(config_problem("", e));
            false
        }
    };
    let mut names = std::collections::HashMap::new();
    for (i, f) in s.flows.iter().enumerate() {
        let p = format!("flows[{i}]");
        let name = f.name.clone().unwrap_or_else(|| format!("flow{i}"));
        unique_name(&mut names, &p, name, &mut errs);
        let src = endpoint(&layout, &At(&p, ".src"), &f.src, &mut errs);
        let dst = endpoint(&layout, &At(&p, ".dst"), &f.dst, &mut errs);
        if let (Some(a), Some(b)) = (src, dst) {
            if let Some(r) = &f.route {
                if a != b {
                    flow_route::resolve_problems(&p, &layout, r, (a, b), &mut errs);
                }
            } else {
                route(&p, &layout, &routes, &dirs, a, b, &mut errs);
                if a != b {
                    route(&p, &layout, &routes, &dirs, b, a, &mut errs);
                }
            }
        }
        times(&p, s.duration, f.start, f.stop, &mut errs);
        if f.bytes == Some(0) {
            errs.push(Problem::new(
                format!("{p}.bytes"),
                Problem::AT_LEAST,
                0,
                1,
                "expected at least 1 byte, or none for an unlimited transfer",
            ));
        }
        if f.stack != Stack::Tcplab && f.framing != Framing::Tcplab {
            errs.push(
                format!(
                    "{p}.framing = \"eth\": a framing is for stack = \"tcplab\" flows (TCP has its own)"
                )
                .into(),
            );
        }
        if f.receiver == ReceiverStack::Tcplab && f.stack != Stack::Linux {
            errs.push(
                format!(
                    "{p}.receiver = \"tcplab\": for stack = \"linux\" flows (a Linux sender to tcplab's receiver); a tcplab stack's receiver is tcplab's already"
                )
                .into(),
            );
        }
        if f.framing == Framing::Eth && f.stack == Stack::Tcplab {
            let (cfg, mss_path) = match &f.tcp {
                Some(t) => (t, format!("{p}.tcp.mss")),
                None => (&s.tcp, "tcp.mss".to_string()),
            };
            errs.extend(framing_rules::eth_framing(
                &p, i, &mss_path, cfg.mss, f.bytes,
            ));
        }
        if f.tcp.is_some() || default_tcp_ok {
            let cfg = s.tcp_of(f);
            if let Err(e) = Sender::build_with(registries, cfg, &f.controller, &f.recovery, f.bytes)
            {
                errs.push(config_problem(&p, e));
            }
        }
    }
    for (i, u) in s.udp.iter().enumerate() {
        let p = format!("udp[{i}]");
        let name = u.name.clone().unwrap_or_else(|| format!("udp{i}"));
        unique_name(&mut names, &p, name, &mut errs);
        let src = endpoint(&layout, &At(&p, ".src"), &u.src, &mut errs);
        let dst = endpoint(&layout, &At(&p, ".dst"), &u.dst, &mut errs);
        if let (Some(a), Some(b)) = (src, dst) {
            match &u.route {
                Some(r) if a != b => {
                    flow_route::resolve_problems(&p, &layout, r, (a, b), &mut errs);
                }
                _ => route(&p, &layout, &routes, &dirs, a, b, &mut errs),
            }
        }
        if u.rate == 0 {
            errs.push(format!("{p}.rate = 0: expected a positive rate in bit/s").into());
        }
        if u.packet_size == 0 {
            errs.push(Problem::new(
                format!("{p}.packet_size"),
                Problem::AT_LEAST,
                0,
                1,
                "expected a positive size in bytes on the wire",
            ));
        }
        times(&p, s.duration, u.start, u.stop, &mut errs);
    }
    pcap_trace(s, &layout, &mut errs);
    time_limit(&"trace.interval", s.trace.interval, &mut errs);
    // Series sample at it (`interval`) and the one-way delay over time is binned by it
    // (`change` too).
    if s.trace.series != SeriesMode::Off && s.trace.interval == Dur::ZERO {
        errs.push(Problem::new(
            "trace.interval".into(),
            Problem::POSITIVE_INTERVAL,
            0,
            1,
            "expected a positive interval in ns when series are recorded",
        ));
    }
    Checked {
        problems: errs,
        layout,
        routes,
    }
}

/// Places a sender-construction error under the flow's path: `flows[1].controller = ...`,
/// `flows[1].tcp.mss = ...`, or `flows[1]: ...` for messages naming no field.
pub fn flow_config_error(path: &str, e: &ConfigError) -> String {
    let m = &e.message;
    if m.starts_with("controller") || m.starts_with("recovery") || m.starts_with("tcp.") {
        format!("{path}.{m}")
    } else {
        format!("{path}: {m}")
    }
}

/// The problem of a TCP configuration or sender-construction error (`tcplab_core`'s rule,
/// field, value and limit), under `path` (`flows[1]`; "" for the scenario's own `tcp`).
fn config_problem(path: &str, e: ConfigError) -> Problem {
    let message = if path.is_empty() {
        e.message.clone()
    } else {
        flow_config_error(path, &e)
    };
    let json = |v: Option<tcplab_core::ConfigValue>| {
        v.map(|v| serde_json::to_value(v).expect("a config value is JSON"))
    };
    Problem {
        path: match (path.is_empty(), e.field.is_empty()) {
            (_, true) => path.to_string(),
            (true, false) => e.field,
            (false, false) => format!("{path}.{}", e.field),
        },
        rule: e.rule,
        value: json(e.value),
        limit: json(e.limit),
        message,
    }
}

/// A flow's name, unique among TCP flows and UDP sources together (`names`: name -> the
/// path of the flow that has it).
fn unique_name(
    names: &mut std::collections::HashMap<String, String>,
    p: &str,
    name: String,
    errs: &mut Vec<Problem>,
) {
    match names.entry(name) {
        std::collections::hash_map::Entry::Occupied(e) => {
            let (name, first) = (e.key(), e.get());
            let expected = format!("also the name of {first}; flow names must be unique");
            errs.push(Problem::new(
                format!("{p}.name"),
                Problem::DUPLICATE_FLOW_NAME,
                name.as_str(),
                first.as_str(),
                &expected,
            ));
        }
        std::collections::hash_map::Entry::Vacant(e) => {
            e.insert(p.to_string());
        }
    }
}

fn endpoint(layout: &Layout, p: &dyn Display, name: &str, errs: &mut Vec<Problem>) -> Option<u32> {
    match layout.node(name) {
        None => {
            let limit = layout.hosts_shown();
            let expected = format!("unknown node; hosts: {limit:?}");
            errs.push(Problem::new(
                p.to_string(),
                Problem::NOT_A_HOST,
                name,
                limit,
                &expected,
            ));
            None
        }
        Some(id) if layout.nodes[id as usize].kind != NodeKind::Host => {
            let expected = "a router; flows start and end at hosts";
            let limit = layout.hosts_shown();
            errs.push(Problem::new(
                p.to_string(),
                Problem::NOT_A_HOST,
                name,
                limit,
                expected,
            ));
            None
        }
        Some(id) => Some(id),
    }
}

fn route(
    p: &str,
    layout: &Layout,
    routes: &Routes,
    dirs: &[(u32, u32)],
    a: u32,
    b: u32,
    errs: &mut Vec<Problem>,
) {
    let (na, nb) = (
        &layout.nodes[a as usize].name,
        &layout.nodes[b as usize].name,
    );
    if a == b {
        let expected = "the same host as src; a flow crosses the network";
        errs.push(Problem::new(
            format!("{p}.dst"),
            Problem::SAME_HOST,
            na.as_str(),
            na.as_str(),
            expected,
        ));
    } else if routes.path(a, b, dirs).is_none() {
        errs.push(format!(
            "{p}: no route from {na:?} to {nb:?} (paths cross routers only, hosts do not forward; static_routes must not loop)"
        ).into());
    }
}

fn times(p: &str, duration: Dur, start: Dur, stop: Option<Dur>, errs: &mut Vec<Problem>) {
    if start > duration {
        errs.push(at_most_duration(format!("{p}.start"), start, duration));
    }
    if let Some(stop) = stop {
        if stop <= start {
            let (s, t) = (stop.as_nanos(), start.as_nanos());
            let expected = format!("expected later than start ({t} ns)");
            errs.push(Problem::new(
                format!("{p}.stop"),
                Problem::AFTER_START,
                s,
                t,
                &expected,
            ));
        }
    }
}

fn pcap_trace(s: &Scenario, layout: &Layout, errs: &mut Vec<Problem>) {
    if let Err(e) = crate::pcap::plan(&s.trace.pcap, layout) {
        errs.extend(e);
    }
    if !(1..=65535).contains(&s.trace.pcap_snaplen) {
        errs.push(Problem::new(
            "trace.pcap_snaplen".into(),
            Problem::RANGE,
            s.trace.pcap_snaplen,
            serde_json::json!([1, 65535]),
            "expected 1..=65535 bytes per captured packet",
        ));
    }
}

fn dedup_keep_order(v: &mut Vec<Problem>) {
    let mut seen = std::collections::HashSet::new();
    v.retain(|p| seen.insert(p.message.clone()));
}
