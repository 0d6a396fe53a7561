//! The dependency graph: compact (u32 transaction ids, relation bits per
//! edge), built once, then searched. Knows nothing about lists or registers.
//!
//! OWNER: graph helper. Public API the rest of the crate relies on:
//! - [`Rels`]: relation bit set (WW, WR, RW, PROCESS, REALTIME).
//! - [`GraphBuilder`]: `add(a, b, rels)`, then `build()` → [`DepGraph`]
//!   (parallel edges merged by OR-ing their bits; self-loops kept out).
//! - `DepGraph::out(v)` → iterator of `(to, Rels)`.
//! - [`sccs`], [`topological_order`] (module `scc`).
//! - [`process_edges`], [`realtime_edges`] (module `order`): the order
//!   relations Elle adds from the history.
//! - [`classify`], [`CycleClass`], [`ExplainOrder`] (module `class`): Elle's
//!   names for cycles.
//! - [`find_cycles`] / [`search`] (module `search`): the shortest cycle of
//!   each requested class in each strongly connected component.

mod class;
mod order;
mod scc;
mod search;

pub use class::{classify, BaseClass, CycleClass, ExplainOrder, Variant};
pub use order::{process_edges, realtime_edges};
pub use scc::{sccs, topological_order, topological_order_in};
pub use search::{
    find_cycles, search, Cycle, CycleExistsHit, FoundCycle, NoHooks, SccPrep, SccReport, SccView,
    SearchHooks, SearchLimits, SearchPlan, SearchResult, Timeout,
};

/// A set of dependency relations, one bit each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rels(pub u8);

impl Rels {
    pub const NONE: Rels = Rels(0);
    /// Write-write: b overwrote (appended after) a.
    pub const WW: Rels = Rels(1);
    /// Write-read: b read what a wrote.
    pub const WR: Rels = Rels(2);
    /// Read-write (anti-dependency): a read a version that b overwrote.
    pub const RW: Rels = Rels(4);
    /// Same process, a completed before b was invoked.
    pub const PROCESS: Rels = Rels(8);
    /// a completed before b was invoked (any processes).
    pub const REALTIME: Rels = Rels(16);

    pub fn contains(self, o: Rels) -> bool {
        self.0 & o.0 == o.0
    }
    pub fn intersects(self, o: Rels) -> bool {
        self.0 & o.0 != 0
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn union(self, o: Rels) -> Rels {
        Rels(self.0 | o.0)
    }
    pub fn intersect(self, o: Rels) -> Rels {
        Rels(self.0 & o.0)
    }
    /// The name Elle gives a single relation.
    pub fn name(self) -> &'static str {
        match self {
            Rels::WW => "ww",
            Rels::WR => "wr",
            Rels::RW => "rw",
            Rels::PROCESS => "process",
            Rels::REALTIME => "realtime",
            _ => "mixed",
        }
    }
}

impl std::ops::BitOr for Rels {
    type Output = Rels;
    fn bitor(self, o: Rels) -> Rels {
        self.union(o)
    }
}

impl Rels {
    /// The five relations, in Elle's default explanation priority.
    pub const ALL: [Rels; 5] = [Rels::WW, Rels::WR, Rels::RW, Rels::PROCESS, Rels::REALTIME];
    /// Every relation bit.
    pub const ANY: Rels = Rels(31);

    /// The single relations in this set, lowest bit first.
    pub fn iter(self) -> impl Iterator<Item = Rels> {
        Rels::ALL.into_iter().filter(move |r| self.contains(*r))
    }
}

/// Collects edges, then packs them into a [`DepGraph`].
///
/// Edges may come in any order and repeat; `build` sorts them by (from, to)
/// with a counting sort on `from`, so 10M edges take well under a second.
#[derive(Clone, Debug, Default)]
pub struct GraphBuilder {
    nodes: usize,
    from: Vec<u32>,
    to: Vec<u32>,
    rels: Vec<u8>,
    self_loops: u64,
}

impl GraphBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// A builder whose graph has at least `n` vertices (ids `0..n`), even if
    /// some of them have no edges.
    pub fn with_nodes(n: usize) -> Self {
        GraphBuilder {
            nodes: n,
            ..Self::default()
        }
    }

    /// Makes room for `additional` more edges.
    pub fn reserve(&mut self, additional: usize) {
        self.from.reserve(additional);
        self.to.reserve(additional);
        self.rels.reserve(additional);
    }

    /// Ensures the graph has at least `n` vertices.
    pub fn ensure_nodes(&mut self, n: usize) {
        self.nodes = self.nodes.max(n);
    }

    /// Adds `a → b` with relations `r`. Empty `r` adds nothing. A self-loop
    /// (`a == b`) is counted but not stored: a transaction never depends on
    /// itself in Elle's graphs (its inference skips them too).
    pub fn add(&mut self, a: u32, b: u32, r: Rels) {
        if r.is_empty() {
            return;
        }
        self.nodes = self.nodes.max(a.max(b) as usize + 1);
        if a == b {
            self.self_loops += 1;
            return;
        }
        self.from.push(a);
        self.to.push(b);
        self.rels.push(r.0 & Rels::ANY.0);
    }

    /// Adds every `(a, b)` pair with the same relation `r`.
    pub fn add_all(&mut self, edges: &[(u32, u32)], r: Rels) {
        self.reserve(edges.len());
        for &(a, b) in edges {
            self.add(a, b, r);
        }
    }

    /// Edges added so far (before merging parallel ones).
    pub fn len(&self) -> usize {
        self.from.len()
    }

    pub fn is_empty(&self) -> bool {
        self.from.is_empty()
    }

    /// Packs the edges: CSR with each vertex's targets ascending and
    /// parallel edges merged by OR-ing their relations.
    pub fn build(self) -> DepGraph {
        let n = self.nodes;
        let m = self.from.len();
        // Counting sort by source: `off[v]..off[v+1]` will hold v's edges.
        let mut off = vec![0usize; n + 1];
        for &a in &self.from {
            off[a as usize + 1] += 1;
        }
        for v in 0..n {
            off[v + 1] += off[v];
        }
        // Pack (to, rels) in one u64 so a plain sort orders by target.
        let mut slots = vec![0u64; m];
        let mut fill = off.clone();
        for i in 0..m {
            let a = self.from[i] as usize;
            slots[fill[a]] = (u64::from(self.to[i]) << 8) | u64::from(self.rels[i]);
            fill[a] += 1;
        }
        drop(fill);
        drop(self.from);
        drop(self.to);
        drop(self.rels);
        let mut targets = Vec::with_capacity(m);
        let mut rels: Vec<Rels> = Vec::with_capacity(m);
        let mut new_off = Vec::with_capacity(n + 1);
        new_off.push(0);
        for v in 0..n {
            let seg = &mut slots[off[v]..off[v + 1]];
            seg.sort_unstable();
            let mut last: Option<u32> = None;
            for &s in seg.iter() {
                let b = (s >> 8) as u32;
                let r = (s & 0xff) as u8;
                if last == Some(b) {
                    let k = rels.len() - 1;
                    rels[k] = Rels(rels[k].0 | r);
                } else {
                    targets.push(b);
                    rels.push(Rels(r));
                    last = Some(b);
                }
            }
            new_off.push(targets.len());
        }
        targets.shrink_to_fit();
        rels.shrink_to_fit();
        DepGraph {
            off: new_off,
            targets,
            rels,
            self_loops: self.self_loops,
        }
    }
}

/// A dependency graph over transactions `0..node_count()`, in CSR form:
/// each vertex's out-edges are contiguous and sorted by target, one edge per
/// (from, to) pair carrying all its relation bits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DepGraph {
    off: Vec<usize>,
    targets: Vec<u32>,
    rels: Vec<Rels>,
    self_loops: u64,
}

impl DepGraph {
    /// Number of vertices (transaction ids `0..n`).
    pub fn node_count(&self) -> usize {
        self.off.len().saturating_sub(1)
    }

    /// Number of distinct (from, to) edges.
    pub fn edge_count(&self) -> usize {
        self.targets.len()
    }

    /// Self-loops that were added and dropped.
    pub fn self_loops(&self) -> u64 {
        self.self_loops
    }

    fn range(&self, v: u32) -> std::ops::Range<usize> {
        let v = v as usize;
        if v + 1 < self.off.len() {
            self.off[v]..self.off[v + 1]
        } else {
            0..0
        }
    }

    /// Targets of `v`'s out-edges, ascending (empty for an unknown vertex).
    pub fn targets(&self, v: u32) -> &[u32] {
        &self.targets[self.range(v)]
    }

    /// Relations of `v`'s out-edges, parallel to [`DepGraph::targets`].
    pub fn out_rels(&self, v: u32) -> &[Rels] {
        &self.rels[self.range(v)]
    }

    /// `v`'s out-edges as `(to, rels)`.
    pub fn out(&self, v: u32) -> impl Iterator<Item = (u32, Rels)> + '_ {
        let r = self.range(v);
        self.targets[r.clone()]
            .iter()
            .copied()
            .zip(self.rels[r].iter().copied())
    }

    /// The relations on `a → b` ([`Rels::NONE`] when there is no edge).
    pub fn edge(&self, a: u32, b: u32) -> Rels {
        let t = self.targets(a);
        match t.binary_search(&b) {
            Ok(i) => self.out_rels(a)[i],
            Err(_) => Rels::NONE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_merges_parallel_edges_and_drops_self_loops() {
        let mut b = GraphBuilder::new();
        b.add(2, 0, Rels::RW);
        b.add(0, 1, Rels::WW);
        b.add(0, 1, Rels::RW);
        b.add(1, 1, Rels::WR);
        b.add(0, 2, Rels::NONE);
        b.add(1, 0, Rels::WR);
        let g = b.build();
        assert_eq!(g.node_count(), 3);
        assert_eq!(g.edge_count(), 3);
        assert_eq!(g.self_loops(), 1);
        assert_eq!(g.edge(0, 1), Rels::WW | Rels::RW);
        assert_eq!(g.edge(1, 0), Rels::WR);
        assert_eq!(g.edge(0, 2), Rels::NONE);
        assert_eq!(g.out(2).collect::<Vec<_>>(), vec![(0, Rels::RW)]);
        assert_eq!(g.targets(7), &[] as &[u32]);
    }

    #[test]
    fn builder_sorts_targets_and_keeps_isolated_vertices() {
        let mut b = GraphBuilder::with_nodes(10);
        for t in [5u32, 3, 9, 3, 1] {
            b.add(0, t, Rels::WW);
        }
        let g = b.build();
        assert_eq!(g.node_count(), 10);
        assert_eq!(g.targets(0), &[1, 3, 5, 9]);
        assert!(g.targets(4).is_empty());
    }
}
