//! An incrementally maintained DAG: edges are added one at a time, each
//! addition either keeps the graph acyclic or reports the cycle it would
//! close, and additions are undone in LIFO order on backtracking.
//!
//! Pearce & Kelly, "A dynamic topological sort algorithm for directed
//! acyclic graphs" (JEA 2006): keep a topological order; an edge `a → b`
//! that agrees with it costs nothing, one that disagrees only reorders the
//! nodes whose positions lie between `b` and `a`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Who added an edge: a solver literal (`u32` code) or nobody (forced).
pub const FORCED: u32 = u32::MAX;
/// Why [`Dag::add_within`] did not add an edge.
#[derive(Debug)]
pub enum Refused {
    /// It would close this cycle (edges `(from, to, tag)`, the new one first).
    Cycle(Vec<(u32, u32, u32)>),
    /// Keeping the order would have cost more than the limit.
    TooFar,
}

#[derive(Clone, Debug, Default)]
pub struct Dag {
    /// Out- and in-neighbours, each with the tag of the edge.
    out: Vec<Vec<(u32, u32)>>,
    inn: Vec<Vec<u32>>,
    /// `ord[v]`: v's position in the topological order; `at[i]`: the node at i.
    ord: Vec<u32>,
    at: Vec<u32>,
    /// Added edges, for undo.
    log: Vec<(u32, u32)>,
    /// DFS scratch.
    mark: Vec<u32>,
    stamp: u32,
    parent: Vec<u32>,
    fwd: Vec<u32>,
    bwd: Vec<u32>,
    stack: Vec<u32>,
}

impl Dag {
    /// A DAG over `n` nodes whose initial topological order is `order` (a
    /// permutation of `0..n`), with no edges yet.
    pub fn with_order(order: &[u32]) -> Dag {
        let n = order.len();
        let mut ord = vec![0u32; n];
        for (i, &v) in order.iter().enumerate() {
            ord[v as usize] = i as u32;
        }
        Dag {
            out: vec![Vec::new(); n],
            inn: vec![Vec::new(); n],
            ord,
            at: order.to_vec(),
            log: Vec::new(),
            mark: vec![0; n],
            stamp: 0,
            parent: vec![u32::MAX; n],
            fwd: Vec::new(),
            bwd: Vec::new(),
            stack: Vec::new(),
        }
    }

    /// Number of edges added so far (a mark for [`Dag::undo_to`]).
    pub fn edges(&self) -> usize {
        self.log.len()
    }

    /// Removes the edges added after `mark`, newest first. The order stays
    /// topological: removing edges never breaks it.
    pub fn undo_to(&mut self, mark: usize) {
        while self.log.len() > mark {
            let (a, b) = self.log.pop().expect("log is longer than mark");
            self.out[a as usize].pop();
            self.inn[b as usize].pop();
        }
    }

    fn bump(&mut self) -> u32 {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.mark.iter_mut().for_each(|m| *m = 0);
            self.stamp = 1;
        }
        self.stamp
    }

    /// Adds `a → b` tagged `tag`. On a cycle the edge is not added and the
    /// cycle is returned as its edges `(from, to, tag)`, starting with the
    /// new one.
    pub fn add(&mut self, a: u32, b: u32, tag: u32) -> Result<(), Vec<(u32, u32, u32)>> {
        match self.add_within(a, b, tag, usize::MAX) {
            Ok(()) => Ok(()),
            Err(Refused::Cycle(c)) => Err(c),
            Err(Refused::TooFar) => unreachable!("no bound"),
        }
    }

    /// [`Dag::add`], but refusing (and changing nothing) when keeping the
    /// order would look at more than `limit` nodes and edges (a barrier
    /// many transactions read from has thousands of edges).
    pub fn add_within(&mut self, a: u32, b: u32, tag: u32, limit: usize) -> Result<(), Refused> {
        if a == b {
            return Err(Refused::Cycle(vec![(a, b, tag)]));
        }
        let (oa, ob) = (self.ord[a as usize], self.ord[b as usize]);
        if oa > ob {
            // Forward from b among nodes ordered before a, breadth first:
            // if it meets a, the parents give a shortest cycle (a short
            // cycle makes a short, strong learnt clause).
            let s = self.bump();
            self.fwd.clear();
            self.fwd.push(b);
            self.mark[b as usize] = s;
            self.parent[b as usize] = u32::MAX;
            let mut i = 0;
            let mut work = 0usize;
            while i < self.fwd.len() {
                let v = self.fwd[i];
                i += 1;
                work += 1 + self.out[v as usize].len();
                if work > limit {
                    return Err(Refused::TooFar);
                }
                for j in 0..self.out[v as usize].len() {
                    let (w, _) = self.out[v as usize][j];
                    if w == a {
                        self.parent[a as usize] = v;
                        return Err(Refused::Cycle(self.cycle(a, b, tag)));
                    }
                    let ow = self.ord[w as usize];
                    if ow < oa && self.mark[w as usize] != s {
                        self.mark[w as usize] = s;
                        self.parent[w as usize] = v;
                        self.fwd.push(w);
                    }
                }
            }
            // Backward from a among nodes ordered after b.
            let s2 = self.bump();
            self.bwd.clear();
            self.stack.clear();
            self.stack.push(a);
            self.mark[a as usize] = s2;
            while let Some(v) = self.stack.pop() {
                self.bwd.push(v);
                work += 1 + self.inn[v as usize].len();
                if work > limit {
                    return Err(Refused::TooFar);
                }
                for i in 0..self.inn[v as usize].len() {
                    let w = self.inn[v as usize][i];
                    if self.ord[w as usize] > ob && self.mark[w as usize] != s2 {
                        self.mark[w as usize] = s2;
                        self.stack.push(w);
                    }
                }
            }
            self.reorder();
        }
        self.out[a as usize].push((b, tag));
        self.inn[b as usize].push(a);
        self.log.push((a, b));
        Ok(())
    }

    /// The cycle `a → b ⇝ a` found by a search (parents set).
    fn cycle(&self, a: u32, b: u32, tag: u32) -> Vec<(u32, u32, u32)> {
        let mut path = Vec::new();
        let mut v = a;
        while v != b {
            let p = self.parent[v as usize];
            let t = self.out[p as usize]
                .iter()
                .find(|&&(w, _)| w == v)
                .map(|&(_, t)| t)
                .unwrap_or(FORCED);
            path.push((p, v, t));
            v = p;
        }
        path.reverse();
        let mut c = vec![(a, b, tag)];
        c.extend(path);
        c
    }

    /// Pearce–Kelly reordering: the backward set takes the lowest of the
    /// freed positions, the forward set the rest, each keeping its order.
    fn reorder(&mut self) {
        let ord = &self.ord;
        self.fwd.sort_unstable_by_key(|&v| ord[v as usize]);
        self.bwd.sort_unstable_by_key(|&v| ord[v as usize]);
        let mut slots: Vec<u32> = self
            .bwd
            .iter()
            .chain(self.fwd.iter())
            .map(|&v| self.ord[v as usize])
            .collect();
        slots.sort_unstable();
        for (i, &v) in self.bwd.iter().chain(self.fwd.iter()).enumerate() {
            self.ord[v as usize] = slots[i];
            self.at[slots[i] as usize] = v;
        }
    }

    /// Every edge `(from, to, tag)` in the graph.
    pub fn all_edges(&self) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        self.out
            .iter()
            .enumerate()
            .flat_map(|(a, es)| es.iter().map(move |&(b, t)| (a as u32, b, t)))
    }

    /// The current topological order, first to last.
    pub fn order(&self) -> &[u32] {
        &self.at
    }

    /// `v`'s position in the current topological order.
    pub fn pos(&self, v: u32) -> u32 {
        self.ord[v as usize]
    }
}

/// Out-edges by node, as edge indices: `adj[off[v]..off[v + 1]]`.
fn out_csr(n: usize, edges: &[(u32, u32)]) -> (Vec<u32>, Vec<u32>) {
    let mut off = vec![0u32; n + 1];
    for &(a, _) in edges {
        off[a as usize + 1] += 1;
    }
    for i in 0..n {
        off[i + 1] += off[i];
    }
    let mut adj = vec![0u32; edges.len()];
    let mut fill = off.clone();
    for (i, &(a, _)) in edges.iter().enumerate() {
        adj[fill[a as usize] as usize] = i as u32;
        fill[a as usize] += 1;
    }
    (off, adj)
}

/// A topological order of `n` nodes under `edges` (Kahn), or a cycle as a
/// list of edge indices when there is none.
pub fn topo_order(n: usize, edges: &[(u32, u32)]) -> Result<Vec<u32>, Vec<usize>> {
    let (off, adj) = out_csr(n, edges);
    kahn(n, edges, &off, &adj).map_err(|(cyc, _)| cyc)
}

/// [`topo_order`], but on a cycle the shortest one through any of the
/// first `tries` edges of the cycle Kahn's leftovers give. The searches
/// share one adjacency and stay inside the strongly connected component of
/// that cycle, so that a few short cycles cost about one pass over the
/// graph, not one each.
pub fn topo_order_or_short_cycle(
    n: usize,
    edges: &[(u32, u32)],
    tries: usize,
) -> Result<Vec<u32>, Vec<usize>> {
    let (off, adj) = out_csr(n, edges);
    let (cyc, indeg) = match kahn(n, edges, &off, &adj) {
        Ok(o) => return Ok(o),
        Err(x) => x,
    };
    // The component: reachable from the cycle among Kahn's leftovers (every
    // node on a cycle is one), and reaching back to it.
    let root = edges[cyc[0]].0 as usize;
    let mut fwd = vec![false; n];
    let mut queue = vec![root as u32];
    fwd[root] = true;
    let mut i = 0;
    while i < queue.len() {
        let v = queue[i] as usize;
        i += 1;
        for &e in &adj[off[v] as usize..off[v + 1] as usize] {
            let w = edges[e as usize].1 as usize;
            if !fwd[w] && indeg[w] > 0 {
                fwd[w] = true;
                queue.push(w as u32);
            }
        }
    }
    let mut inn: Vec<Vec<u32>> = Vec::new();
    let mut slot = vec![u32::MAX; n];
    for &v in &queue {
        slot[v as usize] = inn.len() as u32;
        inn.push(Vec::new());
    }
    for &v in &queue {
        for &e in &adj[off[v as usize] as usize..off[v as usize + 1] as usize] {
            let w = edges[e as usize].1 as usize;
            if fwd[w] {
                inn[slot[w] as usize].push(v);
            }
        }
    }
    let mut comp = vec![false; n];
    let mut stack = vec![root as u32];
    comp[root] = true;
    while let Some(v) = stack.pop() {
        for &u in &inn[slot[v as usize] as usize] {
            if !comp[u as usize] {
                comp[u as usize] = true;
                stack.push(u);
            }
        }
    }
    let mut best = cyc.clone();
    let mut via = vec![u32::MAX; n];
    let mut seen: Vec<u32> = Vec::new();
    for &first in cyc.iter().take(tries) {
        let (a, b) = edges[first];
        if a == b {
            return Err(vec![first]);
        }
        for &v in &seen {
            via[v as usize] = u32::MAX;
        }
        seen.clear();
        const START: u32 = u32::MAX - 1;
        via[b as usize] = START;
        seen.push(b);
        let mut i = 0;
        while i < seen.len() && via[a as usize] == u32::MAX {
            let v = seen[i] as usize;
            i += 1;
            for &e in &adj[off[v] as usize..off[v + 1] as usize] {
                let w = edges[e as usize].1 as usize;
                if comp[w] && via[w] == u32::MAX {
                    via[w] = e;
                    seen.push(w as u32);
                }
            }
        }
        if via[a as usize] == u32::MAX {
            continue;
        }
        let mut path = Vec::new();
        let mut v = a as usize;
        while v != b as usize {
            let e = via[v] as usize;
            path.push(e);
            v = edges[e].0 as usize;
        }
        path.push(first);
        path.reverse();
        if path.len() < best.len() {
            best = path;
        }
    }
    Err(best)
}

/// A topological order of `n` nodes under `edges` that, among the nodes
/// ready at each step, takes the one with the lowest `prio` (ties by id);
/// `None` on a cycle.
pub fn priority_order(
    n: usize,
    edges: &[(u32, u32)],
    prio: impl Fn(u32) -> u64,
) -> Option<Vec<u32>> {
    let (off, adj) = out_csr(n, edges);
    let mut indeg = vec![0u32; n];
    for &(_, b) in edges {
        indeg[b as usize] += 1;
    }
    let mut heap: BinaryHeap<Reverse<(u64, u32)>> = (0..n as u32)
        .filter(|&v| indeg[v as usize] == 0)
        .map(|v| Reverse((prio(v), v)))
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse((_, v))) = heap.pop() {
        order.push(v);
        for &e in &adj[off[v as usize] as usize..off[v as usize + 1] as usize] {
            let w = edges[e as usize].1;
            indeg[w as usize] -= 1;
            if indeg[w as usize] == 0 {
                heap.push(Reverse((prio(w), w)));
            }
        }
    }
    (order.len() == n).then_some(order)
}

/// Kahn's algorithm over a CSR; on failure, a cycle (edge indices) and the
/// in-degrees left (positive exactly on nodes reachable from a cycle).
#[allow(clippy::type_complexity)]
fn kahn(
    n: usize,
    edges: &[(u32, u32)],
    off: &[u32],
    adj: &[u32],
) -> Result<Vec<u32>, (Vec<usize>, Vec<u32>)> {
    let mut indeg = vec![0u32; n];
    for &(_, b) in edges {
        indeg[b as usize] += 1;
    }
    let mut order: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
    let mut i = 0;
    while i < order.len() {
        let v = order[i] as usize;
        i += 1;
        for &e in &adj[off[v] as usize..off[v + 1] as usize] {
            let b = edges[e as usize].1 as usize;
            indeg[b] -= 1;
            if indeg[b] == 0 {
                order.push(b as u32);
            }
        }
    }
    if order.len() == n {
        return Ok(order);
    }
    // Some node still has in-degree > 0: walk predecessors among them
    // until one repeats; that loop is a cycle.
    let mut pred: Vec<u32> = vec![u32::MAX; n];
    for (i, &(a, b)) in edges.iter().enumerate() {
        if indeg[a as usize] > 0 && indeg[b as usize] > 0 && pred[b as usize] == u32::MAX {
            pred[b as usize] = i as u32;
        }
    }
    let start = (0..n)
        .find(|&v| indeg[v] > 0 && pred[v] != u32::MAX)
        .unwrap_or(0);
    let mut seen = vec![u32::MAX; n];
    let mut walk = Vec::new();
    let mut v = start;
    while seen[v] == u32::MAX {
        seen[v] = walk.len() as u32;
        let e = pred[v] as usize;
        walk.push(e);
        v = edges[e].0 as usize;
    }
    let mut cyc: Vec<usize> = walk[seen[v] as usize..].to_vec();
    cyc.reverse();
    Err((cyc, indeg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edge_that_closes_a_cycle_is_refused_and_reported() {
        let mut d = Dag::with_order(&[0, 1, 2, 3]);
        d.add(0, 1, 10).unwrap();
        d.add(1, 2, 11).unwrap();
        let c = d.add(2, 0, 12).unwrap_err();
        assert_eq!(c, vec![(2, 0, 12), (0, 1, 10), (1, 2, 11)]);
        // A backward edge that closes nothing reorders instead.
        d.add(3, 0, 13).unwrap();
        let o = d.order();
        let pos = |v: u32| o.iter().position(|&x| x == v).unwrap();
        assert!(pos(3) < pos(0) && pos(0) < pos(1) && pos(1) < pos(2));
    }

    #[test]
    fn undo_removes_the_newest_edges_only() {
        let mut d = Dag::with_order(&[0, 1, 2]);
        d.add(0, 1, 0).unwrap();
        let m = d.edges();
        d.add(1, 2, 1).unwrap();
        assert!(d.add(2, 0, 2).is_err());
        d.undo_to(m);
        assert!(d.add(2, 0, 2).is_ok());
    }

    #[test]
    fn an_edge_too_costly_to_order_is_refused_and_changes_nothing() {
        // 0 → 1 → 2 with 3 first in the order: 2 → 3 moves 3 after 2.
        let mut d = Dag::with_order(&[0, 1, 2, 3]);
        d.add(0, 1, 0).unwrap();
        d.add(1, 2, 1).unwrap();
        let mut e = Dag::with_order(&[3, 0, 1, 2]);
        e.add(0, 1, 0).unwrap();
        e.add(1, 2, 1).unwrap();
        assert!(matches!(e.add_within(2, 3, 2, 1), Err(Refused::TooFar)));
        assert_eq!(e.edges(), 2);
        assert_eq!(e.order(), &[3, 0, 1, 2]);
        // With room enough it reorders, or finds the cycle.
        e.add_within(2, 3, 2, 8).unwrap();
        assert!(matches!(e.add_within(3, 0, 3, 0), Err(Refused::TooFar)));
        assert!(matches!(e.add_within(3, 0, 3, 8), Err(Refused::Cycle(c)) if c.len() == 4));
        // An edge that agrees with the order costs nothing, so no limit applies.
        d.add_within(2, 3, 2, 0).unwrap();
    }

    #[test]
    fn kahn_finds_an_order_or_a_cycle() {
        assert_eq!(topo_order(3, &[(2, 1), (1, 0)]).unwrap(), vec![2, 1, 0]);
        let edges = [(0, 1), (1, 2), (2, 0), (2, 3)];
        let cyc = topo_order(4, &edges).unwrap_err();
        assert_eq!(cyc.len(), 3);
        for w in 0..3 {
            assert_eq!(edges[cyc[w]].1, edges[cyc[(w + 1) % 3]].0);
        }
    }

    #[test]
    fn the_short_cycle_search_stays_in_the_component_and_finds_the_shortest() {
        // 0 → 1 → 2 → 3 → 0, with a chord 1 → 3, and a tail 3 → 4 → 5.
        let edges = [(0, 1), (1, 2), (2, 3), (3, 0), (1, 3), (3, 4), (4, 5)];
        let c = topo_order_or_short_cycle(6, &edges, 8).unwrap_err();
        assert_eq!(c.len(), 3);
        for w in 0..c.len() {
            assert_eq!(edges[c[w]].1, edges[c[(w + 1) % c.len()]].0);
        }
        // Acyclic: the same order as Kahn.
        let dag = [(2, 1), (1, 0)];
        assert_eq!(
            topo_order_or_short_cycle(3, &dag, 8).unwrap(),
            topo_order(3, &dag).unwrap()
        );
        // A self-loop is its own shortest cycle.
        assert_eq!(
            topo_order_or_short_cycle(2, &[(0, 1), (1, 1)], 8).unwrap_err(),
            vec![1]
        );
    }

    #[test]
    fn the_priority_order_takes_the_lowest_ready_node_and_sees_cycles() {
        // 2 waits for 0 and 1, then goes first (lowest value); 3 is free
        // from the start but has the highest value.
        let prio = [5u64, 1, 0, 9];
        let o = priority_order(4, &[(0, 2), (1, 2)], |v| prio[v as usize]).unwrap();
        assert_eq!(o, vec![1, 0, 2, 3]);
        assert!(priority_order(3, &[(0, 1), (1, 2), (2, 0)], |_| 0).is_none());
    }
}
