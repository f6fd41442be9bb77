//! Routes pinned per flow (`route = ["s0", "r1", "r2", "d0"]` in a flow): data follows the
//! listed nodes, ACKs follow them backwards (each hop's opposite link direction). Flows
//! without one use the topology's routing table.
//!
//! A route must start at the flow's `src`, end at its `dst`, join consecutive nodes by a
//! link, pass through routers only in between (hosts do not forward) and visit no node
//! twice; [`resolve`] reports each violation with the field path.

use crate::error::Problem;
use crate::packet::{Head, PacketKind};
use crate::scenario::{NodeKind, Scenario};
use crate::topology::Layout;
use serde_json::Value;

/// Per hop of a pinned route: the node and the link direction it leaves on.
type Hops = Box<[(u32, u32)]>;

/// Pinned routes of TCP flows (data and ACK) and UDP flows, by flow index.
#[derive(Clone, Debug, Default)]
pub struct PinnedRoutes {
    tcp: Vec<Option<(Hops, Hops)>>,
    udp: Vec<Option<Hops>>,
    any: bool,
}

impl PinnedRoutes {
    /// `tcp[i]` / `udp[j]`: the link directions of flow i's / j's route from src to dst.
    pub fn new(layout: &Layout, tcp: Vec<Option<Vec<u32>>>, udp: Vec<Option<Vec<u32>>>) -> Self {
        let dirs = layout.directions();
        let hops =
            |links: &[u32]| -> Hops { links.iter().map(|&l| (dirs[l as usize].0, l)).collect() };
        let any = tcp.iter().chain(&udp).any(|r| r.is_some());
        PinnedRoutes {
            tcp: tcp
                .into_iter()
                .map(|r| {
                    r.map(|links| {
                        let back: Vec<u32> = links.iter().rev().map(|&l| l ^ 1).collect();
                        (hops(&links), hops(&back))
                    })
                })
                .collect(),
            udp: udp
                .into_iter()
                .map(|r| r.map(|links| hops(&links)))
                .collect(),
            any,
        }
    }

    /// The pinned routes of a validated scenario's TCP and UDP flows over its expansion
    /// `layout` (the simulator's and the live emulator's, one derivation).
    pub fn of_scenario(s: &Scenario, layout: &Layout) -> Self {
        let node = |name: &str| layout.node(name).expect("validated node name");
        let mut errs = Vec::new();
        let mut resolve = |route: &Option<Vec<String>>, src: &str, dst: &str| {
            route
                .as_ref()
                .and_then(|r| resolve("", layout, r, node(src), node(dst), &mut errs))
        };
        let tcp = s
            .flows
            .iter()
            .map(|f| resolve(&f.route, &f.src, &f.dst))
            .collect();
        let udp = s
            .udp
            .iter()
            .map(|u| resolve(&u.route, &u.src, &u.dst))
            .collect();
        debug_assert!(errs.is_empty(), "validated: {errs:?}");
        PinnedRoutes::new(layout, tcp, udp)
    }

    /// Whether any flow has a pinned route.
    pub fn any(&self) -> bool {
        self.any
    }

    /// The link directions of the pinned route of packets of `kind` of flow `flow`, in the
    /// order they cross them (an ACK's: the data route's opposite directions, backwards).
    pub fn links(&self, kind: PacketKind, flow: u32) -> Option<Vec<u32>> {
        Some(self.hops(kind, flow)?.iter().map(|h| h.1).collect())
    }

    #[inline]
    fn hops(&self, kind: PacketKind, flow: u32) -> Option<&Hops> {
        match kind {
            PacketKind::Data => Some(&self.tcp.get(flow as usize)?.as_ref()?.0),
            PacketKind::Ack => Some(&self.tcp.get(flow as usize)?.as_ref()?.1),
            PacketKind::Udp => self.udp.get(flow as usize)?.as_ref(),
        }
    }

    /// The link direction packet `p` at node `at` leaves on, if its flow has a pinned route.
    #[inline]
    pub fn next_link(&self, p: Head, at: u32) -> Option<u32> {
        if !self.any {
            return None;
        }
        self.next_link_of(p.kind, p.flow, at)
    }

    /// The link direction a packet of `kind` of flow `flow` at node `at` leaves on, if that
    /// flow has a pinned route.
    pub fn next_link_of(&self, kind: PacketKind, flow: u32, at: u32) -> Option<u32> {
        let hops = self.hops(kind, flow)?;
        hops.iter().find(|h| h.0 == at).map(|h| h.1)
    }
}

/// The link directions of route `route` (node names) of the flow at `path` from `src` to
/// `dst`; None after appending what is wrong to `errs` (messages; [`resolve_problems`] has
/// them structured).
pub fn resolve(
    path: &str,
    layout: &Layout,
    route: &[String],
    src: u32,
    dst: u32,
    errs: &mut Vec<String>,
) -> Option<Vec<u32>> {
    let mut problems = Vec::new();
    let links = resolve_problems(path, layout, route, (src, dst), &mut problems);
    errs.extend(problems.into_iter().map(String::from));
    links
}

/// [`resolve`], its problems structured.
pub fn resolve_problems(
    path: &str,
    layout: &Layout,
    route: &[String],
    (src, dst): (u32, u32),
    errs: &mut Vec<Problem>,
) -> Option<Vec<u32>> {
    let name = |n: u32| layout.nodes[n as usize].name.as_str();
    let mut fail = |k: usize, rule: &'static str, limit: Value, expected: &str| {
        let p = format!("{path}.route[{k}]");
        errs.push(Problem::new(p, rule, route[k].as_str(), limit, expected));
        None
    };
    if route.len() < 2 {
        let n = route.len();
        let message =
            format!("{path}.route has {n} nodes: expected at least the flow's src and dst");
        let p = format!("{path}.route");
        errs.push(Problem::worded(
            p,
            Problem::ROUTE_TOO_SHORT,
            n,
            Value::Null,
            message,
        ));
        return None;
    }
    let mut ids = Vec::with_capacity(route.len());
    for (k, n) in route.iter().enumerate() {
        match layout.node(n) {
            Some(id) => ids.push(id),
            None => return fail(k, Problem::ROUTE_UNKNOWN_NODE, Value::Null, "unknown node"),
        }
    }
    let last = ids.len() - 1;
    if ids[0] != src {
        let expected = format!("expected the flow's src {:?}", name(src));
        return fail(0, Problem::ROUTE_SRC, name(src).into(), &expected);
    }
    if ids[last] != dst {
        let expected = format!("expected the flow's dst {:?}", name(dst));
        return fail(last, Problem::ROUTE_DST, name(dst).into(), &expected);
    }
    let mut seen = std::collections::HashSet::new();
    let mut links = Vec::with_capacity(last);
    for (k, w) in ids.windows(2).enumerate() {
        if !seen.insert(w[0]) {
            let expected = "visited twice; a route has no loops";
            return fail(k, Problem::ROUTE_LOOP, Value::Null, expected);
        }
        if k > 0 && layout.nodes[w[0] as usize].kind != NodeKind::Router {
            let expected = "a host in the middle of a route; hosts do not forward";
            return fail(k, Problem::ROUTE_HOST_INSIDE, Value::Null, expected);
        }
        match layout.direction_between(w[0], w[1]) {
            Some(l) => links.push(l),
            None => {
                let expected = format!("no link from {:?}; a route follows links", route[k]);
                return fail(
                    k + 1,
                    Problem::ROUTE_NOT_LINKED,
                    route[k].as_str().into(),
                    &expected,
                );
            }
        }
    }
    Some(links)
}
