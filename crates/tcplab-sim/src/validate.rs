//! Scenario validation. The simulator never trusts its input (the Python schema checks too,
//! but Rust users build scenarios directly): every problem is reported with the path of the
//! field, the value and what is allowed, e.g.
//! `flows[1].controller = "renoo": unknown congestion controller; known: ["reno"]`.
//! All problems found are reported together, separated by "; ".

use crate::flow_route;
use crate::node::Routes;
use crate::scenario::{Buffer, LinkDir, LossSpec, NodeKind, Scenario, SeriesMode};
use crate::sim::SimError;
use crate::topology::{self, Layout};
use tcplab_core::{ConfigError, Dur, Sender};

impl Scenario {
    /// Checks everything `Simulation::new` relies on.
    pub fn validate(&self) -> Result<(), SimError> {
        let errs = problems(self);
        if errs.is_empty() {
            Ok(())
        } else {
            Err(SimError(errs.join("; ")))
        }
    }
}

/// Every problem of `s`, in the order of the scenario's fields.
pub fn problems(s: &Scenario) -> Vec<String> {
    let mut errs = Vec::new();
    if s.duration == Dur::ZERO {
        errs.push("duration = 0: expected a positive duration in ns".into());
    }
    let layout = topology::expand(&s.topology, &mut errs);
    for l in &layout.links {
        link_dir(&format!("{}.forward", l.spec_path), &l.forward, &mut errs);
        link_dir(&format!("{}.reverse", l.spec_path), &l.reverse, &mut errs);
    }
    dedup_keep_order(&mut errs);
    let routes = layout.routes();
    let dirs = layout.directions();
    let default_tcp_ok = match s.tcp.validate() {
        Ok(()) => true,
        Err(e) => {
            errs.push(e.0);
            false
        }
    };
    let mut names = std::collections::HashMap::new();
    for (i, f) in s.flows.iter().enumerate() {
        let p = format!("flows[{i}]");
        let name = f.name.clone().unwrap_or_else(|| format!("flow{i}"));
        if let Some(j) = names.insert(name.clone(), i) {
            errs.push(format!(
                "{p}.name = {name:?}: also the name of flows[{j}]; flow names must be unique"
            ));
        }
        let src = endpoint(&layout, &format!("{p}.src"), &f.src, &mut errs);
        let dst = endpoint(&layout, &format!("{p}.dst"), &f.dst, &mut errs);
        if let (Some(a), Some(b)) = (src, dst) {
            if let Some(r) = &f.route {
                if a != b {
                    flow_route::resolve(&p, &layout, r, a, b, &mut errs);
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
            errs.push(format!(
                "{p}.bytes = 0: expected at least 1 byte, or none for an unlimited transfer"
            ));
        }
        if f.tcp.is_some() || default_tcp_ok {
            let cfg = f.tcp.as_ref().unwrap_or(&s.tcp);
            if let Err(e) = Sender::build(cfg, &f.controller, &f.recovery, f.bytes) {
                errs.push(flow_config_error(&p, e));
            }
        }
    }
    let mut names = std::collections::HashMap::new();
    for (i, u) in s.udp.iter().enumerate() {
        let p = format!("udp[{i}]");
        let name = u.name.clone().unwrap_or_else(|| format!("udp{i}"));
        if let Some(j) = names.insert(name.clone(), i) {
            errs.push(format!(
                "{p}.name = {name:?}: also the name of udp[{j}]; flow names must be unique"
            ));
        }
        let src = endpoint(&layout, &format!("{p}.src"), &u.src, &mut errs);
        let dst = endpoint(&layout, &format!("{p}.dst"), &u.dst, &mut errs);
        if let (Some(a), Some(b)) = (src, dst) {
            match &u.route {
                Some(r) if a != b => {
                    flow_route::resolve(&p, &layout, r, a, b, &mut errs);
                }
                _ => route(&p, &layout, &routes, &dirs, a, b, &mut errs),
            }
        }
        if u.rate == 0 {
            errs.push(format!("{p}.rate = 0: expected a positive rate in bit/s"));
        }
        if u.packet_size == 0 {
            errs.push(format!(
                "{p}.packet_size = 0: expected a positive size in bytes on the wire"
            ));
        }
        times(&p, s.duration, u.start, u.stop, &mut errs);
    }
    pcap_trace(s, &layout, &mut errs);
    if s.trace.series == SeriesMode::Interval && s.trace.interval == Dur::ZERO {
        errs.push(
            "trace.interval = 0: expected a positive sampling interval in ns with series = \"interval\""
                .into(),
        );
    }
    errs
}

/// Places a sender-construction error under the flow's path: `flows[1].controller = ...`,
/// `flows[1].tcp.mss = ...`, or `flows[1]: ...` for messages naming no field.
pub fn flow_config_error(path: &str, e: ConfigError) -> String {
    let m = e.0;
    if m.starts_with("controller") || m.starts_with("recovery") || m.starts_with("tcp.") {
        format!("{path}.{m}")
    } else {
        format!("{path}: {m}")
    }
}

fn link_dir(p: &str, d: &LinkDir, errs: &mut Vec<String>) {
    if d.rate == 0 {
        errs.push(format!("{p}.rate = 0: expected a positive rate in bit/s"));
    }
    if !d.report_losses && d.report_delay != Dur::ZERO {
        errs.push(format!(
            "{p}.report_delay = {}: only meaningful with report_losses = true",
            d.report_delay.as_nanos()
        ));
    }
    match d.buffer {
        Buffer::Packets(0) => errs.push(format!(
            "{p}.buffer = {{packets: 0}}: expected at least 1 packet (the buffer counts the packet being serialized)"
        )),
        Buffer::Bytes(0) => errs.push(format!(
            "{p}.buffer = {{bytes: 0}}: expected at least 1 byte (the buffer counts the packet being serialized)"
        )),
        _ => {}
    }
    match &d.loss {
        LossSpec::None | LossSpec::Trace { .. } => {}
        LossSpec::Bernoulli { p: prob } => {
            if !(0.0..=1.0).contains(prob) {
                errs.push(format!(
                    "{p}.loss.p = {prob}: expected a probability in [0, 1]"
                ));
            }
        }
    }
}

fn endpoint(layout: &Layout, p: &str, name: &str, errs: &mut Vec<String>) -> Option<u32> {
    match layout.node(name) {
        None => {
            let hosts: Vec<&str> = layout
                .nodes
                .iter()
                .filter(|n| n.kind == NodeKind::Host)
                .map(|n| n.name.as_str())
                .collect();
            errs.push(format!("{p} = {name:?}: unknown node; hosts: {hosts:?}"));
            None
        }
        Some(id) if layout.nodes[id as usize].kind != NodeKind::Host => {
            errs.push(format!(
                "{p} = {name:?}: a router; flows start and end at hosts"
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
    errs: &mut Vec<String>,
) {
    let (na, nb) = (
        &layout.nodes[a as usize].name,
        &layout.nodes[b as usize].name,
    );
    if a == b {
        errs.push(format!(
            "{p}: src and dst are the same host {na:?}; a flow crosses the network"
        ));
    } else if routes.path(a, b, dirs).is_none() {
        errs.push(format!(
            "{p}: no route from {na:?} to {nb:?} (paths cross routers only, hosts do not forward; static_routes must not loop)"
        ));
    }
}

fn times(p: &str, duration: Dur, start: Dur, stop: Option<Dur>, errs: &mut Vec<String>) {
    if start > duration {
        errs.push(format!(
            "{p}.start = {}: expected at most the duration ({} ns)",
            start.as_nanos(),
            duration.as_nanos()
        ));
    }
    if let Some(stop) = stop {
        if stop <= start {
            errs.push(format!(
                "{p}.stop = {}: expected later than start ({} ns)",
                stop.as_nanos(),
                start.as_nanos()
            ));
        }
    }
}

fn pcap_trace(s: &Scenario, layout: &Layout, errs: &mut Vec<String>) {
    if let Err(e) = crate::pcap::plan(&s.trace.pcap, layout) {
        errs.extend(e);
    }
    if !(1..=65535).contains(&s.trace.pcap_snaplen) {
        errs.push(format!(
            "trace.pcap_snaplen = {}: expected 1..=65535 bytes per captured packet",
            s.trace.pcap_snaplen
        ));
    }
}

fn dedup_keep_order(v: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    v.retain(|s| seen.insert(s.clone()));
}
