//! Nodes and static routing. Hosts are where flows start and end; routers forward. Routes are
//! shortest paths in hops, computed once by breadth-first search from every host over the
//! link directions reversed; a host never forwards traffic that is not its own, so paths
//! cross routers only. Among equally short paths the one through the lower-numbered link
//! direction wins, so routing is deterministic.
//!
//! [`Routes::compute_by_delay`] minimizes the sum of propagation delays instead (Dijkstra);
//! ties go to fewer hops, then to the lower-numbered first link direction.
//! [`Routes::set_next`] overrides one entry (static routing entries of a scenario).

use crate::scenario::NodeKind;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    pub kind: NodeKind,
}

/// Next-hop table: for each (node, destination host), the link direction to take.
///
/// Stored by column: a host whose only way in is one link from a router (every host of the
/// presets) shares the column of that router (the shortest paths to the host are those to
/// its router, then the last link; hosts never forward, so nothing else leads to it), and
/// only other hosts get a column of their own. Memory and time are then proportional to the
/// number of nodes times the number of such routers and hosts, not to nodes squared. Small
/// networks (up to [`DENSE_NODES`] nodes) also keep every answer in a dense matrix, since a
/// look-up there costs one load (each packet's every hop looks one up).
#[derive(Clone, Debug)]
pub struct Routes {
    nodes: usize,
    /// Per node (as a destination): where its column is and its last hop.
    target: Vec<Target>,
    /// Column `c` holds the next link of every node at `c * nodes ..`.
    next: Vec<u32>,
    /// Up to [`DENSE_NODES`] nodes, the same answers as a node × node matrix (row `at`,
    /// column `dst`): every packet's hop is then one load; else empty.
    dense: Vec<u32>,
}

/// The most nodes for which [`Routes`] also keeps the dense matrix (256 KB at most).
const DENSE_NODES: usize = 256;

/// How `next_link(at, dst)` finds its answer for destination `dst`.
#[derive(Clone, Copy, Debug)]
struct Target {
    /// At `router` (NO_ROUTE: none), take `last`; elsewhere, column `col`.
    router: u32,
    last: u32,
    col: u32,
}

const NO_ROUTE: u32 = u32::MAX;

/// Which nodes need a column (routers that are the only way into a host, hosts that are
/// not), and each host's target with its column still to be numbered (`col` = the node
/// whose column it uses).
fn plan(nodes: &[Node], incoming: &[Vec<u32>], links: &[(u32, u32)]) -> (Vec<Target>, Vec<u32>) {
    let n = nodes.len();
    let none = Target {
        router: NO_ROUTE,
        last: NO_ROUTE,
        col: NO_ROUTE,
    };
    let mut target = vec![none; n];
    let mut col_of = vec![NO_ROUTE; n];
    let mut roots = Vec::new();
    let mut root = |v: usize, roots: &mut Vec<u32>| {
        if col_of[v] == NO_ROUTE {
            col_of[v] = roots.len() as u32;
            roots.push(v as u32);
        }
        col_of[v]
    };
    for dst in 0..n {
        if nodes[dst].kind != NodeKind::Host {
            continue;
        }
        target[dst] = match incoming[dst].as_slice() {
            &[l] if nodes[links[l as usize].0 as usize].kind == NodeKind::Router => {
                let r = links[l as usize].0;
                Target {
                    router: r,
                    last: l,
                    col: root(r as usize, &mut roots),
                }
            }
            _ => Target {
                router: NO_ROUTE,
                last: NO_ROUTE,
                col: root(dst, &mut roots),
            },
        };
    }
    (target, roots)
}

fn incoming_links(n: usize, links: &[(u32, u32)]) -> Vec<Vec<u32>> {
    let mut incoming: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (i, &(_, to)) in links.iter().enumerate() {
        incoming[to as usize].push(i as u32);
    }
    incoming
}

impl Routes {
    /// `links[i] = (from, to)` of link direction `i`.
    pub fn compute(nodes: &[Node], links: &[(u32, u32)]) -> Routes {
        let n = nodes.len();
        let incoming = incoming_links(n, links);
        let (target, roots) = plan(nodes, &incoming, links);
        let mut next = vec![NO_ROUTE; roots.len() * n];
        let mut seen = vec![false; n];
        let mut frontier = VecDeque::new();
        for (c, &dst) in roots.iter().enumerate() {
            let dst = dst as usize;
            let column = &mut next[c * n..(c + 1) * n];
            seen.iter_mut().for_each(|s| *s = false);
            seen[dst] = true;
            frontier.clear();
            frontier.push_back(dst);
            while let Some(v) = frontier.pop_front() {
                for &l in &incoming[v] {
                    let u = links[l as usize].0 as usize;
                    if seen[u] {
                        continue;
                    }
                    seen[u] = true;
                    column[u] = l;
                    if nodes[u].kind == NodeKind::Router {
                        frontier.push_back(u);
                    }
                }
            }
        }
        Routes {
            nodes: n,
            target,
            next,
            dense: Vec::new(),
        }
        .with_dense()
    }

    /// Shortest paths by the sum of `delay[l]` over link directions `l` (ns), ties to fewer
    /// hops, then to the lower-numbered link direction out of each node.
    pub fn compute_by_delay(nodes: &[Node], links: &[(u32, u32)], delay: &[u64]) -> Routes {
        let n = nodes.len();
        let incoming = incoming_links(n, links);
        let (target, roots) = plan(nodes, &incoming, links);
        let mut next = vec![NO_ROUTE; roots.len() * n];
        let mut best = vec![(u64::MAX, u32::MAX); n];
        let mut done = vec![false; n];
        let mut heap = BinaryHeap::new();
        for (c, &dst) in roots.iter().enumerate() {
            let dst = dst as usize;
            let column = &mut next[c * n..(c + 1) * n];
            best.iter_mut().for_each(|b| *b = (u64::MAX, u32::MAX));
            done.iter_mut().for_each(|d| *d = false);
            best[dst] = (0, 0);
            heap.clear();
            heap.push(Reverse((0u64, 0u32, dst)));
            while let Some(Reverse((d, h, v))) = heap.pop() {
                if done[v] || (d, h) != best[v] {
                    continue;
                }
                done[v] = true;
                if v != dst && nodes[v].kind != NodeKind::Router {
                    continue; // a host is an end, never a transit node
                }
                for &l in &incoming[v] {
                    let u = links[l as usize].0 as usize;
                    if done[u] {
                        continue;
                    }
                    let cand = (d.saturating_add(delay[l as usize]), h + 1);
                    let slot = &mut column[u];
                    if cand < best[u] || (cand == best[u] && l < *slot) {
                        best[u] = cand;
                        *slot = l;
                        heap.push(Reverse((cand.0, cand.1, u)));
                    }
                }
            }
        }
        Routes {
            nodes: n,
            target,
            next,
            dense: Vec::new(),
        }
        .with_dense()
    }

    /// Packets at `at` for host `dst` leave on link direction `link` (a static route). A
    /// host sharing its router's column gets a column of its own first.
    pub fn set_next(&mut self, at: u32, dst: u32, link: u32) {
        let n = self.nodes;
        let t = &mut self.target[dst as usize];
        if t.router != NO_ROUTE || t.col == NO_ROUTE {
            let col = (self.next.len() / n.max(1)) as u32;
            let start = self.next.len();
            if t.col == NO_ROUTE {
                self.next.resize(start + n, NO_ROUTE);
            } else {
                let from = t.col as usize * n;
                self.next.extend_from_within(from..from + n);
            }
            if t.router != NO_ROUTE {
                self.next[start + t.router as usize] = t.last;
            }
            *t = Target {
                router: NO_ROUTE,
                last: NO_ROUTE,
                col,
            };
        }
        self.next[t.col as usize * n + at as usize] = link;
        if !self.dense.is_empty() {
            self.dense[at as usize * n + dst as usize] = link;
        }
    }

    /// Fills the dense matrix from the columns, when there are at most [`DENSE_NODES`] nodes.
    fn with_dense(mut self) -> Routes {
        let n = self.nodes;
        if n <= DENSE_NODES {
            // Column `dst` of the matrix is what `by_column(at, dst)` answers for every `at`:
            // the node's column of `next` (or none), then the last hop at its router.
            let mut dense = vec![NO_ROUTE; n * n];
            for (dst, t) in self.target.iter().enumerate() {
                if t.col != NO_ROUTE {
                    let col = &self.next[t.col as usize * n..(t.col as usize + 1) * n];
                    for (at, &l) in col.iter().enumerate() {
                        dense[at * n + dst] = l;
                    }
                }
                if t.router != NO_ROUTE {
                    dense[t.router as usize * n + dst] = t.last;
                }
            }
            self.dense = dense;
        }
        self
    }

    /// The link direction a packet at `at` (not `dst` itself) for host `dst` leaves on.
    #[inline]
    pub fn next_link(&self, at: u32, dst: u32) -> Option<u32> {
        let l = match self.dense.get(at as usize * self.nodes + dst as usize) {
            Some(&l) => l,
            None => self.by_column(at, dst),
        };
        (l != NO_ROUTE).then_some(l)
    }

    /// [`next_link`](Self::next_link) from the columns (NO_ROUTE: none).
    #[inline]
    fn by_column(&self, at: u32, dst: u32) -> u32 {
        let t = self.target[dst as usize];
        if at == t.router {
            t.last
        } else if t.col == NO_ROUTE {
            NO_ROUTE
        } else {
            self.next[t.col as usize * self.nodes + at as usize]
        }
    }

    /// The link directions from `src` to host `dst`, or None when there is no route.
    pub fn path(&self, src: u32, dst: u32, links: &[(u32, u32)]) -> Option<Vec<u32>> {
        let mut at = src;
        let mut path = Vec::new();
        while at != dst {
            let l = self.next_link(at, dst)?;
            path.push(l);
            at = links[l as usize].1;
            if path.len() > self.nodes {
                return None;
            }
        }
        Some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, kind: NodeKind) -> Node {
        Node {
            name: name.into(),
            kind,
        }
    }

    #[test]
    fn shortest_path_through_routers_only() {
        // a - r1 - b, and a - h - b through a host (not a path), and a long way r1 - r2 - b.
        let nodes = vec![
            node("a", NodeKind::Host),
            node("r1", NodeKind::Router),
            node("b", NodeKind::Host),
            node("h", NodeKind::Host),
            node("r2", NodeKind::Router),
        ];
        let links = vec![
            (0, 1),
            (1, 0),
            (1, 4),
            (4, 1),
            (4, 2),
            (2, 4),
            (0, 3),
            (3, 0),
            (3, 2),
            (2, 3),
        ];
        let r = Routes::compute(&nodes, &links);
        assert_eq!(r.path(0, 2, &links), Some(vec![0, 2, 4]));
        assert_eq!(r.path(2, 0, &links), Some(vec![5, 3, 1]));
        // Without the routers, a cannot reach b (h does not forward).
        let r = Routes::compute(&nodes, &links[6..]);
        assert_eq!(r.path(0, 2, &links[6..]), None);
        assert_eq!(r.path(0, 3, &links[6..]), Some(vec![0]));
    }

    #[test]
    fn by_delay_prefers_the_faster_longer_path_and_breaks_ties_by_hops() {
        // a - r1 - b directly (100 ms), or a - r1 - r2 - r3 - b (3 x 10 ms).
        let nodes = vec![
            node("a", NodeKind::Host),
            node("r1", NodeKind::Router),
            node("r2", NodeKind::Router),
            node("r3", NodeKind::Router),
            node("b", NodeKind::Host),
        ];
        let both = |a: u32, b: u32| [(a, b), (b, a)];
        let links: Vec<(u32, u32)> =
            [both(0, 1), both(1, 4), both(1, 2), both(2, 3), both(3, 4)].concat();
        let ms = 1_000_000;
        let mut delay = vec![
            ms,
            ms,
            100 * ms,
            100 * ms,
            10 * ms,
            10 * ms,
            10 * ms,
            10 * ms,
            10 * ms,
            10 * ms,
        ];
        let r = Routes::compute_by_delay(&nodes, &links, &delay);
        assert_eq!(r.path(0, 4, &links), Some(vec![0, 4, 6, 8]));
        assert_eq!(r.path(4, 0, &links), Some(vec![9, 7, 5, 1]));
        let hops = Routes::compute(&nodes, &links);
        assert_eq!(hops.path(0, 4, &links), Some(vec![0, 2]));
        // Equal delays (30 ms both ways): the path with fewer hops wins.
        delay[2] = 30 * ms;
        let r = Routes::compute_by_delay(&nodes, &links, &delay);
        assert_eq!(r.path(0, 4, &links), Some(vec![0, 2]));
        // A static route overrides one entry; a loop has no path.
        let mut r = Routes::compute(&nodes, &links);
        r.set_next(1, 4, 4);
        r.set_next(2, 4, 6);
        assert_eq!(r.path(0, 4, &links), Some(vec![0, 4, 6, 8]));
        r.set_next(3, 4, 7);
        assert_eq!(r.path(0, 4, &links), None);
    }

    /// The dense table the columns replace: one breadth-first search per host.
    fn dense_hops(nodes: &[Node], links: &[(u32, u32)]) -> Vec<u32> {
        let n = nodes.len();
        let mut next = vec![NO_ROUTE; n * n];
        for dst in (0..n).filter(|&d| nodes[d].kind == NodeKind::Host) {
            let mut seen = vec![false; n];
            seen[dst] = true;
            let mut frontier = VecDeque::from([dst]);
            while let Some(v) = frontier.pop_front() {
                for (l, &(u, to)) in links.iter().enumerate() {
                    let u = u as usize;
                    if to as usize != v || seen[u] {
                        continue;
                    }
                    seen[u] = true;
                    next[u * n + dst] = l as u32;
                    if nodes[u].kind == NodeKind::Router {
                        frontier.push_back(u);
                    }
                }
            }
        }
        next
    }

    /// The dense table the columns replace: one Dijkstra search per host.
    fn dense(nodes: &[Node], links: &[(u32, u32)], delay: &[u64]) -> Vec<u32> {
        let n = nodes.len();
        let mut next = vec![NO_ROUTE; n * n];
        for dst in (0..n).filter(|&d| nodes[d].kind == NodeKind::Host) {
            let (mut best, mut done) = (vec![(u64::MAX, u32::MAX); n], vec![false; n]);
            best[dst] = (0, 0);
            let mut heap = BinaryHeap::from([Reverse((0u64, 0u32, dst))]);
            while let Some(Reverse((d, h, v))) = heap.pop() {
                let transit = v == dst || nodes[v].kind == NodeKind::Router;
                if (d, h) > best[v] || done[v] {
                    continue; // a stale entry, or a node already settled
                }
                done[v] = true;
                if !transit {
                    continue;
                }
                for (l, &(u, to)) in links.iter().enumerate() {
                    let (u, l) = (u as usize, l as u32);
                    if to as usize != v || done[u] {
                        continue;
                    }
                    let cand = (d + delay[l as usize], h + 1);
                    let slot = &mut next[u * n + dst];
                    if cand < best[u] || (cand == best[u] && l < *slot) {
                        best[u] = cand;
                        *slot = l;
                        heap.push(Reverse((cand.0, cand.1, u)));
                    }
                }
            }
        }
        next
    }

    #[test]
    fn columns_give_the_routes_of_one_search_per_host() {
        // Routers in a ring with chords; hosts on one router, on two routers, or linked one
        // way only; pseudo-random delays (a fixed LCG: no RNG crate needed here).
        let mut x: u64 = 12;
        let mut rnd = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let routers = 7u32;
        let mut nodes: Vec<Node> = (0..routers)
            .map(|i| node(&format!("r{i}"), NodeKind::Router))
            .collect();
        let mut links = Vec::new();
        for i in 0..routers {
            links.push((i, (i + 1) % routers));
            links.push(((i + 1) % routers, i));
            if i % 3 == 0 {
                links.push((i, (i + 3) % routers));
            }
        }
        for h in 0..12u32 {
            let id = nodes.len() as u32;
            nodes.push(node(&format!("h{h}"), NodeKind::Host));
            let r = rnd(routers as u64) as u32;
            links.push((id, r));
            match h % 4 {
                0 => {}
                1 => links.push((r, id)),
                2 => {
                    links.push((r, id));
                    links.push(((r + 2) % routers, id));
                }
                _ => {
                    links.push((r, id));
                    links.push((id, (r + 1) % routers));
                }
            }
        }
        let delay: Vec<u64> = links.iter().map(|_| 1 + rnd(5)).collect();
        let n = nodes.len();
        for by_delay in [false, true] {
            let (r, d) = if by_delay {
                let d = dense(&nodes, &links, &delay);
                (Routes::compute_by_delay(&nodes, &links, &delay), d)
            } else {
                (Routes::compute(&nodes, &links), dense_hops(&nodes, &links))
            };
            for dst in 0..n {
                for at in (0..n).filter(|&a| a != dst) {
                    let want = d[at * n + dst];
                    let got = r.next_link(at as u32, dst as u32).unwrap_or(NO_ROUTE);
                    assert_eq!(got, want, "by_delay {by_delay}: at {at}, dst {dst}");
                }
            }
            // A static entry for one host leaves the others sharing its router alone.
            let mut r2 = r.clone();
            let (h, at) = ((routers + 1) as usize, 3usize);
            r2.set_next(at as u32, h as u32, 0);
            for dst in 0..n {
                for a in (0..n).filter(|&a| a != dst) {
                    let want = if (a, dst) == (at, h) {
                        0
                    } else {
                        d[a * n + dst]
                    };
                    assert_eq!(r2.next_link(a as u32, dst as u32).unwrap_or(NO_ROUTE), want);
                }
            }
            // The dense matrix (these few nodes have one) gives what the columns give.
            for routes in [&r, &r2] {
                assert_eq!(routes.dense.len(), n * n);
                for (i, &l) in routes.dense.iter().enumerate() {
                    assert_eq!(l, routes.by_column((i / n) as u32, (i % n) as u32));
                }
            }
        }
    }
}
