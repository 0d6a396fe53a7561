//! Strongly connected components (iterative Tarjan, no recursion, so deep
//! histories cannot overflow the stack) and topological order.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::{DepGraph, Rels};

const NONE: u32 = u32::MAX;

/// A graph Tarjan can walk: vertices `0..len()`, successors enumerated with
/// a resumable cursor (so the walk keeps an explicit stack instead of
/// recursing).
pub(crate) trait Succ {
    fn len(&self) -> usize;
    /// The cursor before `v`'s first successor.
    fn start(&self, v: u32) -> usize;
    /// The successor at or after `*cur`, advancing `*cur` past it.
    fn next(&self, v: u32, cur: &mut usize) -> Option<u32>;
}

/// Tarjan's working state, reusable across runs over graphs of one size.
pub(crate) struct Tarjan {
    index: Vec<u32>,
    low: Vec<u32>,
    /// Component of each finished vertex, numbered in emission order (which
    /// is reverse topological: a component is emitted after every component
    /// it reaches).
    pub comp: Vec<u32>,
    stack: Vec<u32>,
    call: Vec<(u32, usize)>,
    counter: u32,
    /// Number of components emitted.
    pub comps: u32,
    /// Successor steps taken, for work budgets.
    pub work: u64,
}

impl Tarjan {
    pub fn new(n: usize) -> Self {
        let mut t = Tarjan {
            index: Vec::new(),
            low: Vec::new(),
            comp: Vec::new(),
            stack: Vec::new(),
            call: Vec::new(),
            counter: 0,
            comps: 0,
            work: 0,
        };
        t.reset(n);
        t
    }

    /// Forgets every run and sizes the state for a graph of `n` vertices,
    /// keeping the allocations: thousands of small passes (one per
    /// component and relation subset) then allocate nothing.
    pub fn reset(&mut self, n: usize) {
        self.index.clear();
        self.index.resize(n, NONE);
        self.comp.clear();
        self.comp.resize(n, NONE);
        // Written on entering a vertex before any read.
        if self.low.len() < n {
            self.low.resize(n, 0);
        }
        self.stack.clear();
        self.call.clear();
        self.counter = 0;
        self.comps = 0;
        self.work = 0;
    }

    /// Whether `v` has been reached by some run.
    pub fn visited(&self, v: u32) -> bool {
        self.index[v as usize] != NONE
    }

    /// Visits everything reachable from `root` (if not visited yet), calling
    /// `emit` with each component's members as it completes. `stop` is polled
    /// now and then; when it returns true the run is abandoned (returns
    /// false) and the state must not be used further.
    pub fn run<G: Succ>(
        &mut self,
        g: &G,
        root: u32,
        emit: &mut impl FnMut(&[u32]),
        stop: &mut impl FnMut(u64) -> bool,
    ) -> bool {
        if self.index[root as usize] != NONE {
            return true;
        }
        self.enter(g, root);
        while let Some(&mut (v, ref mut cur)) = self.call.last_mut() {
            self.work += 1;
            if self.work & 0xfff == 0 && stop(self.work) {
                return false;
            }
            if let Some(w) = g.next(v, cur) {
                if self.index[w as usize] == NONE {
                    self.enter(g, w);
                } else if self.comp[w as usize] == NONE {
                    // On the stack: w is an ancestor or in v's component.
                    let l = &mut self.low[v as usize];
                    *l = (*l).min(self.index[w as usize]);
                }
                continue;
            }
            self.call.pop();
            let lv = self.low[v as usize];
            if let Some(&(p, _)) = self.call.last() {
                let l = &mut self.low[p as usize];
                *l = (*l).min(lv);
            }
            if lv == self.index[v as usize] {
                let pos = self.stack.iter().rposition(|&x| x == v).unwrap_or(0);
                for &x in &self.stack[pos..] {
                    self.comp[x as usize] = self.comps;
                }
                emit(&self.stack[pos..]);
                self.stack.truncate(pos);
                self.comps += 1;
            }
        }
        true
    }

    fn enter<G: Succ>(&mut self, g: &G, v: u32) {
        self.index[v as usize] = self.counter;
        self.low[v as usize] = self.counter;
        self.counter += 1;
        self.stack.push(v);
        self.call.push((v, g.start(v)));
    }
}

/// `g` restricted to edges carrying any relation in `mask`.
struct Masked<'a> {
    g: &'a DepGraph,
    mask: Rels,
}

impl Succ for Masked<'_> {
    fn len(&self) -> usize {
        self.g.node_count()
    }
    fn start(&self, v: u32) -> usize {
        self.g.off[v as usize]
    }
    fn next(&self, v: u32, cur: &mut usize) -> Option<u32> {
        let end = self.g.off[v as usize + 1];
        while *cur < end {
            let i = *cur;
            *cur += 1;
            if self.g.rels[i].intersects(self.mask) {
                return Some(self.g.targets[i]);
            }
        }
        None
    }
}

/// Components of `g` with two or more vertices (Elle's `strongly-connected-
/// components`: self-loops are never stored, so a single vertex is never
/// cyclic), counting only edges that carry a relation in `mask`. Each
/// component is sorted ascending; components are ordered by their smallest
/// member.
pub fn sccs(g: &DepGraph, mask: Rels) -> Vec<Vec<u32>> {
    let view = Masked { g, mask };
    let mut t = Tarjan::new(view.len());
    let mut out: Vec<Vec<u32>> = Vec::new();
    for v in 0..view.len() as u32 {
        t.run(
            &view,
            v,
            &mut |c: &[u32]| {
                if c.len() > 1 {
                    let mut c = c.to_vec();
                    c.sort_unstable();
                    out.push(c);
                }
            },
            &mut |_| false,
        );
    }
    out.sort_unstable_by_key(|c| c[0]);
    out
}

/// A serial order of all vertices consistent with every edge, taking the
/// smallest ready id first (so unconstrained transactions keep history
/// order). On a cyclic graph, `Err` holds a shortest cycle through the
/// smallest vertex of the first cyclic component, closed: `[t0, .., tn]`
/// with `tn == t0`.
pub fn topological_order(g: &DepGraph) -> Result<Vec<u32>, Vec<u32>> {
    topological_order_in(g, Rels::ANY)
}

/// [`topological_order`] counting only edges that carry a relation in `mask`.
pub fn topological_order_in(g: &DepGraph, mask: Rels) -> Result<Vec<u32>, Vec<u32>> {
    let n = g.node_count();
    let mut indeg = vec![0u32; n];
    for (i, &b) in g.targets.iter().enumerate() {
        if g.rels[i].intersects(mask) {
            indeg[b as usize] += 1;
        }
    }
    let mut ready: BinaryHeap<Reverse<u32>> = (0..n as u32)
        .filter(|&v| indeg[v as usize] == 0)
        .map(Reverse)
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(v)) = ready.pop() {
        order.push(v);
        for (b, r) in g.out(v) {
            if r.intersects(mask) {
                indeg[b as usize] -= 1;
                if indeg[b as usize] == 0 {
                    ready.push(Reverse(b));
                }
            }
        }
    }
    if order.len() == n {
        return Ok(order);
    }
    let comps = sccs(g, mask);
    let comp = &comps[0];
    Err(shortest_cycle_through(g, mask, comp, comp[0]))
}

/// A shortest cycle through `v` inside `comp` (sorted members of a strongly
/// connected component containing `v`), closed.
pub(crate) fn shortest_cycle_through(g: &DepGraph, mask: Rels, comp: &[u32], v: u32) -> Vec<u32> {
    let inside = |x: u32| comp.binary_search(&x).is_ok();
    let mut parent: rustc_hash::FxHashMap<u32, u32> = Default::default();
    let mut queue = VecDeque::from([v]);
    while let Some(x) = queue.pop_front() {
        for (y, r) in g.out(x) {
            if !r.intersects(mask) || !inside(y) {
                continue;
            }
            if y == v {
                let mut path = vec![v, x];
                let mut c = x;
                while c != v {
                    c = parent[&c];
                    path.push(c);
                }
                path.reverse();
                return path;
            }
            if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(y) {
                e.insert(x);
                queue.push_back(y);
            }
        }
    }
    // Unreachable for a true component; a one-vertex "cycle" is the honest
    // degenerate answer.
    vec![v, v]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::GraphBuilder;

    fn graph(n: usize, edges: &[(u32, u32, Rels)]) -> DepGraph {
        let mut b = GraphBuilder::with_nodes(n);
        for &(a, c, r) in edges {
            b.add(a, c, r);
        }
        b.build()
    }

    #[test]
    fn sccs_finds_nontrivial_components_only() {
        let g = graph(
            6,
            &[
                (0, 1, Rels::WW),
                (1, 0, Rels::WR),
                (1, 2, Rels::WW),
                (2, 3, Rels::RW),
                (3, 4, Rels::WW),
                (4, 2, Rels::WW),
            ],
        );
        assert_eq!(sccs(&g, Rels::ANY), vec![vec![0, 1], vec![2, 3, 4]]);
        // Without rw edges the second component falls apart.
        assert_eq!(sccs(&g, Rels::WW | Rels::WR), vec![vec![0, 1]]);
        assert!(sccs(&g, Rels::WW).is_empty());
    }

    #[test]
    fn sccs_survives_a_million_vertex_chain_without_recursion() {
        let n = 1_000_000u32;
        let mut b = GraphBuilder::with_nodes(n as usize);
        for v in 0..n - 1 {
            b.add(v, v + 1, Rels::WW);
        }
        b.add(n - 1, 0, Rels::RW);
        let g = b.build();
        let c = sccs(&g, Rels::ANY);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].len(), n as usize);
        assert!(sccs(&g, Rels::WW).is_empty());
    }

    #[test]
    fn topological_order_prefers_smallest_ready_id() {
        let g = graph(5, &[(3, 1, Rels::WW), (4, 0, Rels::WR), (1, 2, Rels::RW)]);
        assert_eq!(topological_order(&g), Ok(vec![3, 1, 2, 4, 0]));
    }

    #[test]
    fn topological_order_returns_a_shortest_cycle_on_failure() {
        // 1 → 2 → 3 → 4 → 1 and the chord 3 → 1: shortest cycle through 1 is
        // 1 → 2 → 3 → 1.
        let g = graph(
            6,
            &[
                (0, 1, Rels::WW),
                (1, 2, Rels::WW),
                (2, 3, Rels::WR),
                (3, 4, Rels::RW),
                (4, 1, Rels::WW),
                (3, 1, Rels::RW),
                (4, 5, Rels::WW),
            ],
        );
        assert_eq!(topological_order(&g), Err(vec![1, 2, 3, 1]));
        // Ignoring rw edges, the graph is acyclic.
        assert_eq!(
            topological_order_in(&g, Rels::WW | Rels::WR),
            Ok(vec![0, 4, 1, 2, 3, 5])
        );
    }
}
