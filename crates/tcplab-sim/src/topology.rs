//! Expansion of a scenario's [`Topology`] into nodes and duplex links.
//!
//! Dumbbell with `n` pairs: hosts `s0..s{n-1}`, routers `left` and `right`, hosts
//! `r0..r{n-1}` (in that order); links `s{i}-left` (all i), `left-right`, `right-r{i}` (all i),
//! each forward from the sender side towards the receiver side. An access list of one entry
//! applies to every pair, otherwise it has one entry per pair.
//!
//! Presets other than the dumbbell have their own modules: [`parking_lot`] (Adaptive Reno
//! Fig. 5: cascaded bottlenecks with cross and reverse traffic) and [`wired_wireless`]
//! (Venoplus Fig. 2, Veno Fig. 3b: server, wired path, base station, lossy last hop).
//!
//! Each duplex link `i` becomes link directions `2i` (forward, `from` to `to`) and `2i + 1`
//! (reverse); that is also the order of `Results::links`.
//!
//! WLAN segments (explicit `wlan` entries, the `wlan_access` preset) come after the wired
//! links: station j of a segment adds direction `AP -> station` then `station -> AP`,
//! segment after segment, numbered from `2 * links.len()` (also their order in
//! `Results::links`). `wlan_access`: host `server`, routers `router` and `ap`, the
//! stations; links `server-router` (access) and `router-ap` (the Dummynet pipe).

pub mod graph;
pub mod parking_lot;
pub mod wired_wireless;
pub mod wlan;

use crate::error::Problem;
use crate::node::Node;
use crate::node::Routes;
use crate::scenario::{Dumbbell, Duplex, Explicit, LinkDir, NodeKind, Routing, Topology, WlanSpec};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;

/// One duplex link of the expanded topology.
#[derive(Clone, Debug)]
pub struct DuplexLink<'a> {
    /// `"{from}-{to}"`.
    pub name: String,
    pub from: u32,
    pub to: u32,
    /// Borrowed from the scenario, or built by a preset (e.g. its router queues).
    pub forward: Cow<'a, LinkDir>,
    pub reverse: Cow<'a, LinkDir>,
    /// Where the link's settings are in the scenario, for error messages
    /// (e.g. `topology.sender_access[0]`).
    pub spec_path: String,
}

#[derive(Clone, Debug)]
pub struct Layout<'a> {
    pub nodes: Vec<Node>,
    pub links: Vec<DuplexLink<'a>>,
    pub by_name: HashMap<String, u32>,
    pub routing: Routing,
    /// Static routing entries: (node, destination host, link direction to leave on).
    pub static_routes: Vec<(u32, u32, u32)>,
    pub wlans: Vec<WlanLayout<'a>>,
}

/// One WLAN segment of the expanded topology.
#[derive(Clone, Debug)]
pub struct WlanLayout<'a> {
    pub spec: &'a WlanSpec,
    pub ap: u32,
    /// Node of each station, in `spec.stations` order.
    pub stations: Vec<u32>,
    /// Where the segment is in the scenario (e.g. `topology.wlan[0]`).
    pub spec_path: String,
}

impl Layout<'_> {
    pub fn node(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }
    /// The hosts an error about a node shows: the first few (a topology may have thousands),
    /// then "..." when there are more.
    pub fn hosts_shown(&self) -> Vec<&str> {
        const SHOWN: usize = 8;
        let mut hosts = self.nodes.iter().filter(|n| n.kind == NodeKind::Host);
        let mut v: Vec<&str> = hosts
            .by_ref()
            .take(SHOWN)
            .map(|n| n.name.as_str())
            .collect();
        if hosts.next().is_some() {
            v.push("...");
        }
        v
    }
    /// The routing table: shortest paths (by hops or delay), then the static entries.
    pub fn routes(&self) -> Routes {
        let dirs = self.directions();
        let mut r = match self.routing {
            Routing::Hops => Routes::compute(&self.nodes, &dirs),
            Routing::Delay => {
                // WLAN hops (after the wired directions) count no propagation delay.
                let mut delay: Vec<u64> = self
                    .links
                    .iter()
                    .flat_map(|l| [l.forward.delay.as_nanos(), l.reverse.delay.as_nanos()])
                    .collect();
                delay.resize(dirs.len(), 0);
                Routes::compute_by_delay(&self.nodes, &dirs, &delay)
            }
        };
        for &(at, dst, link) in &self.static_routes {
            r.set_next(at, dst, link);
        }
        r
    }
    /// The link direction from node `a` to its neighbour `b` (the first, if several).
    pub fn direction_between(&self, a: u32, b: u32) -> Option<u32> {
        self.links.iter().enumerate().find_map(|(i, l)| {
            if (l.from, l.to) == (a, b) {
                Some(2 * i as u32)
            } else if (l.to, l.from) == (a, b) {
                Some(2 * i as u32 + 1)
            } else {
                None
            }
        })
    }
    /// `(from, to)` of every link direction, in index order.
    pub fn directions(&self) -> Vec<(u32, u32)> {
        let wired = self
            .links
            .iter()
            .flat_map(|l| [(l.from, l.to), (l.to, l.from)]);
        let wlan = self
            .wlans
            .iter()
            .flat_map(|w| w.stations.iter().flat_map(|&s| [(w.ap, s), (s, w.ap)]));
        wired.chain(wlan).collect()
    }
}

/// Expands `t`; structural problems (names, list lengths) are appended to `errs` and the
/// offending parts left out.
pub fn expand<'a>(t: &'a Topology, errs: &mut Vec<String>) -> Layout<'a> {
    let mut problems = Vec::new();
    let layout = expand_problems(t, &mut problems);
    errs.extend(problems.into_iter().map(String::from));
    layout
}

/// [`expand`], its problems structured.
pub fn expand_problems<'a>(t: &'a Topology, errs: &mut Vec<Problem>) -> Layout<'a> {
    let mut texts = Vec::new();
    let layout = match t {
        Topology::Dumbbell(d) => dumbbell(d, &mut texts),
        Topology::Explicit(e) => explicit(e, errs),
        Topology::ParkingLot(p) => {
            if p.packet_size == 0 {
                errs.push(Problem::new(
                    "topology.packet_size".into(),
                    Problem::AT_LEAST,
                    0,
                    1,
                    "expected a positive size in bytes",
                ));
            }
            parking_lot::expand(p, &mut texts)
        }
        Topology::WiredCumWireless(w) => wired_wireless::expand(w, &mut texts),
        Topology::WlanAccess(w) => wlan::wlan_access(w, errs),
    };
    errs.extend(texts.into_iter().map(Problem::from));
    layout
}

/// The two directions of `d`, borrowed (what [`push_link`] takes).
pub(crate) fn borrowed(d: &Duplex) -> (Cow<'_, LinkDir>, Cow<'_, LinkDir>) {
    (Cow::Borrowed(&d.forward), Cow::Borrowed(&d.reverse))
}

/// Appends duplex link `from`-`to` (node indices) named after the nodes.
pub(crate) fn push_link<'a>(
    nodes: &[Node],
    links: &mut Vec<DuplexLink<'a>>,
    (from, to): (u32, u32),
    forward: Cow<'a, LinkDir>,
    reverse: Cow<'a, LinkDir>,
    spec_path: String,
) {
    links.push(DuplexLink {
        name: format!("{}-{}", nodes[from as usize].name, nodes[to as usize].name),
        from,
        to,
        forward,
        reverse,
        spec_path,
    });
}

/// The entry of a one-or-per-item list that item `i` uses, with its scenario path
/// (`topology.{field}[j]`); None (and an error, once) when the list has a wrong length.
pub(crate) fn one_or_each<'a, T>(
    field: &str,
    list: &'a [T],
    n: usize,
    i: usize,
    errs: &mut Vec<String>,
) -> Option<(&'a T, String)> {
    if list.len() != 1 && list.len() != n {
        errs.push(format!(
            "topology.{field} has {} entries: expected 1 (for all) or {n} (one each)",
            list.len()
        ));
        return None;
    }
    pick_entry(field, list, i)
}

/// The entry of a one-or-per-item list that item `i` uses (the only one, or the i-th), with
/// its scenario path `topology.{field}[j]`; None when there is none.
fn pick_entry<'a, T>(field: &str, list: &'a [T], i: usize) -> Option<(&'a T, String)> {
    let j = if list.len() == 1 { 0 } else { i };
    list.get(j).map(|x| (x, format!("topology.{field}[{j}]")))
}

fn dumbbell<'a>(d: &'a Dumbbell, errs: &mut Vec<String>) -> Layout<'a> {
    let n = d.pairs as usize;
    if n == 0 {
        errs.push("topology.pairs = 0: expected at least 1 sender/receiver pair".into());
    }
    for (field, list) in [
        ("sender_access", &d.sender_access),
        ("receiver_access", &d.receiver_access),
    ] {
        if list.len() != 1 && list.len() != n {
            errs.push(format!(
                "topology.{field} has {} entries: expected 1 (for all pairs) or {n} (one per pair)",
                list.len()
            ));
        }
    }
    let mut nodes = Vec::with_capacity(2 * n + 2);
    for i in 0..n {
        nodes.push(host(format!("s{i}")));
    }
    let left = nodes.len() as u32;
    nodes.push(router("left"));
    let right = nodes.len() as u32;
    nodes.push(router("right"));
    for i in 0..n {
        nodes.push(host(format!("r{i}")));
    }
    let mut links = Vec::with_capacity(2 * n + 1);
    for i in 0..n {
        if let Some((dx, path)) = pick_entry("sender_access", &d.sender_access, i) {
            let (f, r) = borrowed(dx);
            push_link(&nodes, &mut links, (i as u32, left), f, r, path);
        }
    }
    let (f, r) = borrowed(&d.bottleneck);
    let bottleneck = "topology.bottleneck".to_string();
    push_link(&nodes, &mut links, (left, right), f, r, bottleneck);
    for i in 0..n {
        if let Some((dx, path)) = pick_entry("receiver_access", &d.receiver_access, i) {
            let (f, r) = borrowed(dx);
            push_link(
                &nodes,
                &mut links,
                (right, right + 1 + i as u32),
                f,
                r,
                path,
            );
        }
    }
    finish(nodes, links)
}

fn explicit<'a>(e: &'a Explicit, errs: &mut Vec<Problem>) -> Layout<'a> {
    let mut by_name: HashMap<String, u32> = HashMap::new();
    let mut nodes = Vec::with_capacity(e.nodes.len());
    for (i, n) in e.nodes.iter().enumerate() {
        if n.name.is_empty() {
            errs.push(Problem::from(format!(
                "topology.nodes[{i}].name = \"\": expected a non-empty name"
            )));
        }
        if by_name.contains_key(&n.name) {
            let first = e.nodes.iter().position(|m| m.name == n.name).unwrap_or(i);
            let (path, rule) = (format!("topology.nodes[{i}].name"), Problem::DUPLICATE_NODE);
            let value = n.name.as_str();
            errs.push(Problem::new(
                path,
                rule,
                value,
                first,
                "duplicate node name",
            ));
            continue;
        }
        by_name.insert(n.name.clone(), nodes.len() as u32);
        nodes.push(Node {
            name: n.name.clone(),
            kind: n.kind,
        });
    }
    let node_names: Vec<&str> = e.nodes.iter().map(|n| n.name.as_str()).collect();
    let unknown = |path: String, name: &str| {
        let expected = format!("unknown node; known: {node_names:?}");
        Problem::new(
            path,
            Problem::UNKNOWN_NODE,
            name,
            node_names.clone(),
            &expected,
        )
    };
    let mut links = Vec::with_capacity(e.links.len());
    let mut names: HashMap<String, usize> = HashMap::new();
    for (i, l) in e.links.iter().enumerate() {
        let mut end = |field: &str, name: &str| match by_name.get(name) {
            Some(&id) => Some(id),
            None => {
                errs.push(unknown(format!("topology.links[{i}].{field}"), name));
                None
            }
        };
        let (Some(from), Some(to)) = (end("from", &l.from), end("to", &l.to)) else {
            continue;
        };
        if from == to {
            let message = format!(
                "topology.links[{i}]: from and to are the same node {:?}; a link joins two nodes",
                l.from
            );
            let (path, rule) = (format!("topology.links[{i}].to"), Problem::SELF_LINK);
            errs.push(Problem::worded(
                path,
                rule,
                l.to.as_str(),
                Value::Null,
                message,
            ));
            continue;
        }
        let name = format!("{}-{}", l.from, l.to);
        if let Some(j) = names.insert(name.clone(), i) {
            errs.push(Problem::from(format!(
                "topology.links[{i}] = {name:?}: duplicate of topology.links[{j}]; link names must be unique"
            )));
            continue;
        }
        links.push(DuplexLink {
            name,
            from,
            to,
            forward: Cow::Borrowed(&l.forward),
            reverse: Cow::Borrowed(&l.reverse),
            spec_path: format!("topology.links[{i}]"),
        });
    }
    let mut layout = finish(nodes, links);
    layout.routing = e.routing;
    for (i, r) in e.static_routes.iter().enumerate() {
        let p = format!("topology.static_routes[{i}]");
        let find = |field: &str, name: &str, errs: &mut Vec<Problem>| {
            let id = layout.node(name);
            if id.is_none() {
                errs.push(unknown(format!("{p}.{field}"), name));
            }
            id
        };
        let (Some(at), Some(dst), Some(next)) = (
            find("at", &r.at, errs),
            find("dst", &r.dst, errs),
            find("next", &r.next, errs),
        ) else {
            continue;
        };
        if layout.nodes[dst as usize].kind != NodeKind::Host {
            let (path, rule) = (format!("{p}.dst"), Problem::ROUTE_TO_ROUTER);
            let expected = "a router; routes lead to hosts";
            errs.push(Problem::new(
                path,
                rule,
                r.dst.as_str(),
                Value::Null,
                expected,
            ));
            continue;
        }
        match layout.direction_between(at, next) {
            Some(l) => layout.static_routes.push((at, dst, l)),
            None => {
                let (path, rule) = (format!("{p}.next"), Problem::NOT_NEIGHBOUR);
                let expected = format!("not a neighbour of {:?} (no link joins them)", r.at);
                errs.push(Problem::new(
                    path,
                    rule,
                    r.next.as_str(),
                    r.at.as_str(),
                    &expected,
                ));
            }
        }
    }
    wlan::explicit_segments(&mut layout, &e.wlan, errs);
    layout
}

pub(crate) fn finish<'a>(nodes: Vec<Node>, links: Vec<DuplexLink<'a>>) -> Layout<'a> {
    let by_name = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.clone(), i as u32))
        .collect();
    Layout {
        nodes,
        links,
        by_name,
        routing: Routing::Hops,
        static_routes: Vec::new(),
        wlans: Vec::new(),
    }
}

/// Drops repeated messages (a wrong list length is found once per item).
pub(crate) fn dedup(errs: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    errs.retain(|e| seen.insert(e.clone()));
}

pub(crate) fn host(name: String) -> Node {
    Node {
        name,
        kind: NodeKind::Host,
    }
}
pub(crate) fn router(name: &str) -> Node {
    Node {
        name: name.into(),
        kind: NodeKind::Router,
    }
}
