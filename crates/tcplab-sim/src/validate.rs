//! Scenario validation. The simulator never trusts its input (the Python schema checks too,
//! but Rust users build scenarios directly): every problem is reported with the path of the
//! field, the value and what is allowed, e.g.
//! `flows[1].controller = "renoo": unknown congestion controller; known: ["reno"]`.
//! All problems found are reported together, separated by "; ".

use crate::error::{Problem, SimError};
use crate::flow_route;
use crate::framing_rules;
use crate::node::Routes;
use crate::scenario::{
    Buffer, Framing, LinkDir, LossSpec, NodeKind, QueueSpec, ReceiverStack, RedSpec, Scenario,
    SeriesMode, Stack,
};
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

/// Every problem of `s`, in the order of the scenario's fields, as one-line messages.
pub fn problems(s: &Scenario, registries: &Registries) -> Vec<String> {
    check(s, registries)
        .into_iter()
        .map(|p| p.message)
        .collect()
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
            let cfg = f.tcp.as_ref().unwrap_or(&s.tcp);
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

/// A field path, written out only when a problem names it: `base` followed by `field`
/// (validation passes over every link direction's fields, and nearly always finds nothing).
#[derive(Clone, Copy)]
struct At<'a>(&'a dyn Display, &'a str);

impl Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.0, self.1)
    }
}

/// The longest time a scenario may give (2^62 ns, about 146 years): a run's clock plus any
/// one delay, timeout or interval of the scenario then stays below `u64::MAX` ns, so time
/// arithmetic never saturates (a clock stuck at the largest time would never end the run).
pub const MAX_TIME: Dur = Dur::from_nanos(1 << 62);

/// `path = d: expected at most MAX_TIME` when `d` is longer.
fn time_limit(path: &dyn Display, d: Dur, errs: &mut Vec<Problem>) {
    if d > MAX_TIME {
        let (v, m) = (d.as_nanos(), MAX_TIME.as_nanos());
        let expected = format!("expected at most {m} ns (about 146 years)");
        errs.push(Problem::new(
            path.to_string(),
            Problem::TIME_LIMIT,
            v,
            m,
            &expected,
        ));
    }
}

/// The smallest packet any flow sends at full size (bytes on the wire): a TCP flow's MSS
/// plus its IP and TCP headers, a UDP source's packet size. None without flows.
fn smallest_packet(s: &Scenario) -> Option<u64> {
    let tcp = s.flows.iter().map(|f| {
        let mss = f.tcp.as_ref().unwrap_or(&s.tcp).mss;
        u64::from(mss) + u64::from(crate::packet::IP_TCP_HEADER)
    });
    let udp = s.udp.iter().map(|u| u64::from(u.packet_size));
    tcp.chain(udp).min()
}

/// A byte buffer that cannot hold one full-sized packet of any flow drops every such packet.
fn buffer_fits(p: &dyn Display, d: &LinkDir, packet: Option<u64>, errs: &mut Vec<Problem>) {
    let Some(packet) = packet else { return };
    // (the schedule's change, None for the direction's own buffer)
    let given = std::iter::once((None, d.buffer)).chain(
        d.schedule
            .iter()
            .enumerate()
            .filter_map(|(i, c)| Some((Some(i), c.buffer?))),
    );
    for (change, buffer) in given {
        if let Buffer::Bytes(b) = buffer {
            if b > 0 && b < packet {
                let path = match change {
                    None => format!("{p}.buffer"),
                    Some(i) => format!("{p}.schedule[{i}].buffer"),
                };
                let expected = format!(
                    "expected at least {packet} bytes, the smallest full-sized packet of the flows (a smaller buffer drops every such packet)"
                );
                errs.push(Problem::new(
                    path,
                    Problem::BUFFER_BELOW_PACKET,
                    b,
                    packet,
                    &expected,
                ));
            }
        }
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

fn link_dir(p: &dyn Display, d: &LinkDir, errs: &mut Vec<Problem>) {
    if d.rate == 0 {
        errs.push(format!("{p}.rate = 0: expected a positive rate in bit/s").into());
    }
    time_limit(&At(p, ".delay"), d.delay, errs);
    time_limit(&At(p, ".report_delay"), d.report_delay, errs);
    if !d.report_losses && d.report_delay != Dur::ZERO {
        errs.push(topology::wlan::report_delay_without_losses(
            &p.to_string(),
            d.report_delay,
        ));
    }
    empty_buffer(
        &At(p, ".buffer"),
        d.buffer,
        " (the buffer counts the packet being serialized)",
        errs,
    );
    loss_spec(&At(p, ".loss"), &d.loss, errs);
    if d.trace.is_some() {
        errs.extend(
            crate::delivery_trace::link_problems(&p.to_string(), d)
                .into_iter()
                .map(Problem::from),
        );
    }
    if let QueueSpec::Red(red) = &d.queue {
        red_spec(&At(p, ".queue"), red, errs);
    }
}

/// `buffer = {packets: 0}` or `{bytes: 0}` (rule [`Problem::EMPTY_BUFFER`], `limit`: the unit).
fn empty_buffer(p: &dyn Display, b: Buffer, why: &str, errs: &mut Vec<Problem>) {
    let (kind, unit) = match b {
        Buffer::Packets(0) => ("packets", "packet"),
        Buffer::Bytes(0) => ("bytes", "byte"),
        _ => return,
    };
    errs.push(Problem::worded(
        p.to_string(),
        Problem::EMPTY_BUFFER,
        0,
        unit,
        format!("{p} = {{{kind}: 0}}: expected at least 1 {unit}{why}"),
    ));
}

/// A probability outside [0, 1] (rule [`Problem::RANGE`]).
fn probability(p: &dyn Display, x: f64, errs: &mut Vec<Problem>) {
    if !(0.0..=1.0).contains(&x) {
        errs.push(Problem::worded(
            p.to_string(),
            Problem::RANGE,
            number(x),
            serde_json::json!([0, 1]),
            format!("{p} = {x}: expected a probability in [0, 1]"),
        ));
    }
}

/// A float as JSON (null when not finite: JSON has no NaN or infinity).
fn number(x: f64) -> serde_json::Value {
    serde_json::Number::from_f64(x).map_or(serde_json::Value::Null, serde_json::Value::Number)
}

fn loss_spec(p: &dyn Display, loss: &LossSpec, errs: &mut Vec<Problem>) {
    match loss {
        LossSpec::None | LossSpec::Trace { .. } => {}
        LossSpec::Bernoulli { p: prob } => probability(&At(p, ".p"), *prob, errs),
        LossSpec::Ber { ber } => probability(&At(p, ".ber"), *ber, errs),
        LossSpec::GilbertElliott {
            p_gb,
            p_bg,
            loss_good,
            loss_bad,
        } => {
            probability(&At(p, ".p_gb"), *p_gb, errs);
            probability(&At(p, ".p_bg"), *p_bg, errs);
            probability(&At(p, ".loss_good"), *loss_good, errs);
            probability(&At(p, ".loss_bad"), *loss_bad, errs);
        }
        LossSpec::TimeTrace { intervals, .. } => {
            for (i, &interval) in intervals.iter().enumerate() {
                errs.extend(crate::loss::time_trace::interval_problem(
                    format!("{p}.intervals[{i}]"),
                    interval,
                ));
            }
        }
    }
}

fn red_spec(p: &dyn Display, r: &RedSpec, errs: &mut Vec<Problem>) {
    if !(r.min_th >= 0.0 && r.min_th.is_finite()) {
        errs.push(Problem::worded(
            format!("{p}.min_th"),
            Problem::AT_LEAST,
            number(r.min_th),
            0,
            format!("{p}.min_th = {}: expected a finite number >= 0", r.min_th),
        ));
    }
    if !(r.max_th > r.min_th && r.max_th.is_finite()) {
        errs.push(Problem::worded(
            format!("{p}.max_th"),
            Problem::MAX_TH_ABOVE_MIN_TH,
            number(r.max_th),
            number(r.min_th),
            format!(
                "{p}.max_th = {}: expected greater than min_th ({})",
                r.max_th, r.min_th
            ),
        ));
    }
    probability(&At(p, ".max_p"), r.max_p, errs);
    if !(r.w_q > 0.0 && r.w_q <= 1.0) {
        errs.push(Problem::worded(
            format!("{p}.w_q"),
            Problem::WEIGHT,
            number(r.w_q),
            serde_json::Value::Null,
            format!("{p}.w_q = {}: expected a weight in (0, 1]", r.w_q),
        ));
    }
    if r.mean_packet_size == 0 {
        errs.push(Problem::worded(
            format!("{p}.mean_packet_size"),
            Problem::AT_LEAST,
            0,
            1,
            format!("{p}.mean_packet_size = 0: expected a positive size in bytes"),
        ));
    }
}

/// A link direction's schedule: times increasing and within the run, each change valid.
fn schedule(p: &dyn Display, d: &LinkDir, duration: Dur, errs: &mut Vec<Problem>) {
    let mut last: Option<Dur> = None;
    for (i, c) in d.schedule.iter().enumerate() {
        let q = format!("{p}.schedule[{i}]");
        if let Some(prev) = last {
            if c.at <= prev {
                let (at, prev) = (c.at.as_nanos(), prev.as_nanos());
                errs.push(Problem::worded(
                    format!("{q}.at"),
                    Problem::AFTER_PREVIOUS_CHANGE,
                    at,
                    serde_json::json!([i - 1, prev]),
                    format!("{q}.at = {at}: expected later than schedule[{}].at ({prev} ns); changes must be sorted by time", i - 1),
                ));
            }
        }
        last = Some(c.at);
        if c.at > duration {
            errs.push(at_most_duration(format!("{q}.at"), c.at, duration));
        }
        if c.rate.is_none() && c.delay.is_none() && c.buffer.is_none() && c.loss.is_none() {
            errs.push(Problem::worded(
                q.clone(),
                Problem::CHANGES_NOTHING,
                serde_json::Value::Null,
                serde_json::Value::Null,
                format!("{q}: changes nothing; give at least one of rate, delay, buffer, loss"),
            ));
        }
        if let Some(delay) = c.delay {
            time_limit(&format!("{q}.delay"), delay, errs);
        }
        if c.rate == Some(0) {
            errs.push(format!("{q}.rate = 0: expected a positive rate in bit/s").into());
        }
        if let Some(buffer) = c.buffer {
            empty_buffer(&format!("{q}.buffer"), buffer, "", errs);
        }
        if let Some(loss) = &c.loss {
            loss_spec(&format!("{q}.loss"), loss, errs);
        }
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

/// `path = at: expected at most the duration (... ns)`.
fn at_most_duration(path: String, at: Dur, duration: Dur) -> Problem {
    let (a, d) = (at.as_nanos(), duration.as_nanos());
    let expected = format!("expected at most the duration ({d} ns)");
    Problem::new(path, Problem::AT_MOST_DURATION, a, d, &expected)
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
