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
#[derive(Clone, Debug)]
pub struct Routes {
    nodes: usize,
    next: Vec<u32>,
}

const NO_ROUTE: u32 = u32::MAX;

impl Routes {
    /// `links[i] = (from, to)` of link direction `i`.
    pub fn compute(nodes: &[Node], links: &[(u32, u32)]) -> Routes {
        let n = nodes.len();
        let mut incoming: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, &(_, to)) in links.iter().enumerate() {
            incoming[to as usize].push(i as u32);
        }
        let mut next = vec![NO_ROUTE; n * n];
        let mut seen = vec![false; n];
        let mut frontier = VecDeque::new();
        for dst in 0..n {
            if nodes[dst].kind != NodeKind::Host {
                continue;
            }
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
                    next[u * n + dst] = l;
                    if nodes[u].kind == NodeKind::Router {
                        frontier.push_back(u);
                    }
                }
            }
        }
        Routes { nodes: n, next }
    }

    /// Shortest paths by the sum of `delay[l]` over link directions `l` (ns), ties to fewer
    /// hops, then to the lower-numbered link direction out of each node.
    pub fn compute_by_delay(nodes: &[Node], links: &[(u32, u32)], delay: &[u64]) -> Routes {
        let n = nodes.len();
        let mut incoming: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, &(_, to)) in links.iter().enumerate() {
            incoming[to as usize].push(i as u32);
        }
        let mut next = vec![NO_ROUTE; n * n];
        let mut best = vec![(u64::MAX, u32::MAX); n];
        let mut done = vec![false; n];
        let mut heap = BinaryHeap::new();
        for dst in 0..n {
            if nodes[dst].kind != NodeKind::Host {
                continue;
            }
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
                    let slot = &mut next[u * n + dst];
                    if cand < best[u] || (cand == best[u] && l < *slot) {
                        best[u] = cand;
                        *slot = l;
                        heap.push(Reverse((cand.0, cand.1, u)));
                    }
                }
            }
        }
        Routes { nodes: n, next }
    }

    /// Packets at `at` for host `dst` leave on link direction `link` (a static route).
    pub fn set_next(&mut self, at: u32, dst: u32, link: u32) {
        self.next[at as usize * self.nodes + dst as usize] = link;
    }

    /// The link direction a packet at `at` for host `dst` leaves on.
    #[inline]
    pub fn next_link(&self, at: u32, dst: u32) -> Option<u32> {
        let l = self.next[at as usize * self.nodes + dst as usize];
        (l != NO_ROUTE).then_some(l)
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
}
