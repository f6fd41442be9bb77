//! A topology's graph by name, for readers outside the engine (the Python package's default
//! endpoints, name checks and report tables): the nodes and their kinds, the duplex links
//! with the settings each direction runs with, and the host pairs flows without `src`/`dst`
//! take. It is [`super::expand`]'s result, so there is one expansion of every preset.

use super::{expand, parking_lot};
use crate::scenario::{LinkDir, NodeKind, Topology};
use serde::Serialize;

/// The expanded topology by name (serialized as JSON for Python).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Graph {
    /// In the simulator's node order.
    pub nodes: Vec<GraphNode>,
    /// Wired duplex links in the simulator's order (802.11b hops are not duplex links).
    pub links: Vec<GraphLink>,
    /// (sender, receiver) host pairs in the order flows without src/dst take them.
    pub default_pairs: Vec<(String, String)>,
    /// Structural problems the expansion found (names, list lengths); parts with a problem
    /// are left out of `nodes` and `links`.
    pub problems: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GraphNode {
    pub name: String,
    pub kind: NodeKind,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GraphLink {
    pub from: String,
    pub to: String,
    /// As the simulator runs it (a preset's router queue filled in).
    pub forward: LinkDir,
    pub reverse: LinkDir,
    /// Where the link's settings are in the scenario (e.g. `topology.bottleneck`).
    pub spec_path: String,
}

/// The graph `t` expands to.
pub fn graph(t: &Topology) -> Graph {
    let mut problems = Vec::new();
    let layout = expand(t, &mut problems);
    super::dedup(&mut problems);
    let name = |i: u32| layout.nodes[i as usize].name.clone();
    Graph {
        nodes: layout
            .nodes
            .iter()
            .map(|n| GraphNode {
                name: n.name.clone(),
                kind: n.kind,
            })
            .collect(),
        links: layout
            .links
            .iter()
            .map(|l| GraphLink {
                from: name(l.from),
                to: name(l.to),
                forward: l.forward.clone().into_owned(),
                reverse: l.reverse.clone().into_owned(),
                spec_path: l.spec_path.clone(),
            })
            .collect(),
        default_pairs: default_pairs(t),
        problems,
    }
}

/// (sender, receiver) host pairs in the order flows without src/dst take them: dumbbell
/// `s{i}`/`r{i}`, wired-cum-wireless `server{i}`/`mobile{i}`, wlan_access `server` and each
/// station, parking lot [`parking_lot::pairs`]; none for explicit topologies.
pub fn default_pairs(t: &Topology) -> Vec<(String, String)> {
    match t {
        Topology::Dumbbell(d) => (0..d.pairs)
            .map(|i| (format!("s{i}"), format!("r{i}")))
            .collect(),
        Topology::WiredCumWireless(w) => (0..w.pairs)
            .map(|i| (format!("server{i}"), format!("mobile{i}")))
            .collect(),
        Topology::WlanAccess(w) => w
            .wlan
            .stations
            .iter()
            .map(|s| ("server".to_string(), s.node.clone()))
            .collect(),
        Topology::ParkingLot(p) => parking_lot::pairs(p),
        Topology::Explicit(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Buffer, Dumbbell, Duplex};
    use tcplab_core::Dur;

    #[test]
    fn dumbbell_by_name() {
        let d = Duplex::symmetric(LinkDir::new(
            1_000_000,
            Dur::from_millis(1),
            Buffer::Packets(10),
        ));
        let t = Topology::Dumbbell(Dumbbell {
            pairs: 2,
            bottleneck: d.clone(),
            sender_access: vec![d.clone()],
            receiver_access: vec![d.clone(), d],
        });
        let g = graph(&t);
        let names: Vec<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["s0", "s1", "left", "right", "r0", "r1"]);
        let links: Vec<String> = g
            .links
            .iter()
            .map(|l| format!("{}-{}", l.from, l.to))
            .collect();
        assert_eq!(
            links,
            ["s0-left", "s1-left", "left-right", "right-r0", "right-r1"]
        );
        assert_eq!(g.links[3].spec_path, "topology.receiver_access[0]");
        assert_eq!(g.default_pairs[1], ("s1".into(), "r1".into()));
        assert!(g.problems.is_empty());
    }

    #[test]
    fn problems_are_reported_once() {
        let d = Duplex::symmetric(LinkDir::new(
            1_000_000,
            Dur::from_millis(1),
            Buffer::Packets(10),
        ));
        let t = Topology::Dumbbell(Dumbbell {
            pairs: 3,
            bottleneck: d.clone(),
            sender_access: vec![d.clone(), d.clone()],
            receiver_access: vec![d],
        });
        let g = graph(&t);
        assert_eq!(g.problems.len(), 1, "{:?}", g.problems);
        assert!(g.problems[0].starts_with("topology.sender_access has 2 entries"));
    }
}
