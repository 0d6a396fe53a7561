//! G-single for consistent view (Adya's PL-2+): a cycle of the dependency
//! graph with exactly one anti-dependency edge.
//!
//! The order graph of read committed's encoding holds ww ∪ wr only (see
//! the module doc of [`super`]): barriers `C(p) → M(p) → S(p) → C(p+1)`
//! per key, a reader of `c` elements after `C(c)`, a block filling
//! `p..e` after `S(p)` and before `C(e)`, an unseen block after `S(n)`,
//! and (consistent view only) each block of a uniform run at its own place
//! and the order of the unseen blocks as edges between their writers. A reader `r`
//! of `c` elements anti-depends on the writer of the block at `c` (the next
//! version). Every node reachable from `S(c)` other than `S(c)` itself
//! comes after some block at `c` or later: `S(c)`'s successors are the
//! blocks at `c` and `C(c+1)`, which follows the block filling position
//! `c`. So `r` closes a G-single cycle iff some path from `S(c)` reaches
//! `r` other than the edge `S(c) → r` of `r`'s own block at `c`: the
//! writer `w` of the next version reaches `r` by ww ∪ wr (if `w` is `r`
//! itself, a later writer reaches `r` and ww ∪ wr has a cycle).
//!
//! [`find`] looks for one: per key, in a topological order, the furthest
//! `S(p)` reaching each node, then each reader's in-edges other than its
//! own block's. [`Single`] runs it as a SAT theory, on full assignments
//! only (when the acyclicity theory accepted every edge): a path found
//! becomes a learnt clause forbidding the choices that gave its edges.
//! Before the search, the same check on the forced graph (edges every
//! choice has) proves that every choice has G-single.

use super::super::dag::{self, FORCED};
use super::theory::Acyclic;
use batsat::{Lit, Theory, TheoryArg};

/// One key's readers, for [`find`]: barrier `S(p)` is node `base + 3p + 2`.
#[derive(Clone, Debug)]
pub(crate) struct KeyReads {
    pub(crate) base: u32,
    /// The key's observed length.
    pub(crate) len: u32,
    /// (reader's transaction node, cut).
    pub(crate) readers: Vec<(u32, u32)>,
}

impl KeyReads {
    fn s(&self, p: u32) -> u32 {
        self.base + 3 * p + 2
    }
}

/// A G-single found: key `key`'s reader `reader` (indices into
/// [`KeyReads`]), and `path`, indices of edges from some `S(p)` (`p` at
/// least the reader's cut) to the reader, the last entering it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) key: usize,
    pub(crate) reader: usize,
    pub(crate) from: u32,
    pub(crate) path: Vec<usize>,
}

const NONE: u32 = u32::MAX;

/// A G-single in the acyclic graph of `n` nodes and `edges`, if any (see
/// the module doc). `None` also when the graph has a cycle (that is the
/// acyclicity check's to report).
pub(crate) fn find(n: usize, edges: &[(u32, u32)], keys: &[KeyReads]) -> Option<Found> {
    if keys.iter().all(|k| k.readers.is_empty()) {
        return None;
    }
    let order = dag::topo_order(n, edges).ok()?;
    let mut pos = vec![0u32; n];
    for (i, &v) in order.iter().enumerate() {
        pos[v as usize] = i as u32;
    }
    // Out- and in-edges, by edge index.
    let csr = |from: &dyn Fn(&(u32, u32)) -> u32| -> (Vec<u32>, Vec<u32>) {
        let mut off = vec![0u32; n + 1];
        for e in edges {
            off[from(e) as usize + 1] += 1;
        }
        for i in 0..n {
            off[i + 1] += off[i];
        }
        let mut at = off.clone();
        let mut list = vec![0u32; edges.len()];
        for (i, e) in edges.iter().enumerate() {
            let f = from(e) as usize;
            list[at[f] as usize] = i as u32;
            at[f] += 1;
        }
        (off, list)
    };
    let (out_off, out) = csr(&|e| e.0);
    let (in_off, inn) = csr(&|e| e.1);
    // Per node: the furthest S(p) of the current key reaching it (-1: none),
    // and the edge it came by.
    let mut best = vec![-1i64; n];
    let mut parent = vec![NONE; n];
    let mut touched: Vec<u32> = Vec::new();
    for (ki, k) in keys.iter().enumerate() {
        if k.readers.is_empty() {
            continue;
        }
        for &v in &touched {
            best[v as usize] = -1;
            parent[v as usize] = NONE;
        }
        touched.clear();
        let lo = (0..=k.len).map(|p| pos[k.s(p) as usize]).min()? as usize;
        let hi = k.readers.iter().map(|r| pos[r.0 as usize]).max()? as usize;
        for &v in order.iter().take(hi + 1).skip(lo) {
            let vi = v as usize;
            if v >= k.base && v <= k.s(k.len) && (v - k.base) % 3 == 2 {
                let p = i64::from((v - k.base) / 3);
                if p > best[vi] {
                    best[vi] = p;
                    parent[vi] = NONE;
                    touched.push(v);
                }
            }
            if best[vi] < 0 {
                continue;
            }
            for &e in &out[out_off[vi] as usize..out_off[vi + 1] as usize] {
                let w = edges[e as usize].1 as usize;
                if best[vi] > best[w] {
                    if best[w] < 0 {
                        touched.push(w as u32);
                    }
                    best[w] = best[vi];
                    parent[w] = e;
                }
            }
        }
        for (ri, &(r, c)) in k.readers.iter().enumerate() {
            let ri_ = r as usize;
            for &e in &inn[in_off[ri_] as usize..in_off[ri_ + 1] as usize] {
                let u = edges[e as usize].0;
                if u == k.s(c) || best[u as usize] < i64::from(c) {
                    continue;
                }
                let mut path = vec![e as usize];
                let mut at = u;
                while parent[at as usize] != NONE {
                    let pe = parent[at as usize] as usize;
                    path.push(pe);
                    at = edges[pe].0;
                }
                path.reverse();
                return Some(Found {
                    key: ki,
                    reader: ri,
                    from: at,
                    path,
                });
            }
        }
    }
    None
}

/// Acyclicity and, on full assignments, no G-single: the SAT theory of
/// consistent view. Each G-single found is raised as a conflict over the
/// choices that gave its path's edges.
pub(crate) struct Single {
    pub(crate) acyclic: Acyclic,
    keys: Vec<KeyReads>,
    nodes: usize,
    /// A few G-single cycles met (tags: our variable ids, or FORCED), each
    /// from the reader through `M(c)`, `S(c)` and the barrier chain to the
    /// path's start, then the path: for explanations.
    pub(crate) cycles: Vec<Vec<(u32, u32, u32)>>,
    /// Solver variable index → our variable id.
    from_sat: Vec<u32>,
}

impl Single {
    pub(crate) fn new(
        acyclic: Acyclic,
        keys: Vec<KeyReads>,
        nodes: usize,
        from_sat: Vec<u32>,
    ) -> Self {
        Single {
            acyclic,
            keys,
            nodes,
            cycles: Vec::new(),
            from_sat,
        }
    }

    fn check_single(&mut self, acts: &mut TheoryArg) {
        let mut edges: Vec<(u32, u32)> = Vec::new();
        let mut tags: Vec<u32> = Vec::new();
        for (a, b, t) in self.acyclic.all_edges() {
            edges.push((a, b));
            tags.push(t);
        }
        let Some(f) = find(self.nodes, &edges, &self.keys) else {
            return;
        };
        let mut lits: Vec<Lit> = f
            .path
            .iter()
            .map(|&i| tags[i])
            .filter(|&t| t != FORCED)
            .map(|t| !Lit::new(batsat::Var::unsafe_from_idx(t), true))
            .collect();
        lits.sort_unstable();
        lits.dedup();
        if self.cycles.len() < 64 {
            let named: Vec<(u32, u32, u32)> = f
                .path
                .iter()
                .map(|&i| {
                    let t = tags[i];
                    let t = if t == FORCED {
                        FORCED
                    } else {
                        self.from_sat[t as usize]
                    };
                    (edges[i].0, edges[i].1, t)
                })
                .collect();
            self.cycles
                .push(cycle_of(&self.keys[f.key], f.reader, f.from, named));
        }
        acts.raise_conflict(&lits, false);
    }
}

/// The G-single cycle of a found path (edges tagged as the caller likes):
/// the reader's anti-dependency `r → M(c) → S(c)` (tagged [`FORCED`]), the
/// barrier chain from `S(c)` to `from`, then `path`.
pub(crate) fn cycle_of(
    k: &KeyReads,
    reader: usize,
    from: u32,
    path: Vec<(u32, u32, u32)>,
) -> Vec<(u32, u32, u32)> {
    let (r, c) = k.readers[reader];
    let m = |p: u32| k.base + 3 * p + 1;
    let cn = |p: u32| k.base + 3 * p;
    let mut cyc = vec![(r, m(c), FORCED), (m(c), k.s(c), FORCED)];
    let mut p = c;
    while k.s(p) != from && p < k.len {
        cyc.push((k.s(p), cn(p + 1), FORCED));
        cyc.push((cn(p + 1), m(p + 1), FORCED));
        cyc.push((m(p + 1), k.s(p + 1), FORCED));
        p += 1;
    }
    cyc.extend(path);
    cyc
}

impl Theory for Single {
    fn final_check(&mut self, acts: &mut TheoryArg) {
        self.acyclic.final_check(acts);
        if acts.is_ok() {
            self.check_single(acts);
        }
    }
    fn partial_check(&mut self, acts: &mut TheoryArg) {
        self.acyclic.partial_check(acts);
    }
    fn create_level(&mut self) {
        self.acyclic.create_level();
    }
    fn pop_levels(&mut self, n: usize) {
        self.acyclic.pop_levels(n);
    }
    fn n_levels(&self) -> usize {
        self.acyclic.n_levels()
    }
    fn explain_propagation(&mut self, p: Lit) -> &[Lit] {
        self.acyclic.explain_propagation(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One key of length 1: barriers C(0)=0, M(0)=1, S(0)=2, C(1)=3,
    /// M(1)=4, S(1)=5; transactions 6 (appends at 0), 7 (reads 0), 8.
    fn key() -> KeyReads {
        KeyReads {
            base: 0,
            len: 1,
            readers: vec![(7, 0)],
        }
    }

    /// The key's barrier chain, then `extra`.
    fn barriers_and(extra: &[(u32, u32)]) -> Vec<(u32, u32)> {
        let mut e = vec![(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)];
        e.extend_from_slice(extra);
        e
    }

    /// 7 reads 0 elements; 6 appends at 0.
    fn chain() -> Vec<(u32, u32)> {
        barriers_and(&[(0, 7), (2, 6), (6, 3)])
    }

    #[test]
    fn a_writer_after_the_read_that_reaches_the_reader_is_a_g_single() {
        // 6 wrote the version after the one 7 read; 6 → 8 → 7 (wr on
        // other keys): 7 → 6 (rw), 6 → 8 → 7.
        let mut e = chain();
        e.push((6, 8));
        e.push((8, 7));
        let f = find(9, &e, &[key()]).expect("a G-single");
        assert_eq!((f.key, f.reader, f.from), (0, 0, 2));
        let path: Vec<(u32, u32)> = f.path.iter().map(|&i| e[i]).collect();
        assert_eq!(path, vec![(2, 6), (6, 8), (8, 7)]);
        let cyc = cycle_of(
            &key(),
            0,
            f.from,
            path.iter().map(|&(a, b)| (a, b, 0)).collect(),
        );
        assert_eq!(cyc.first().map(|c| c.0), Some(7));
        assert_eq!(cyc.last().map(|c| c.1), Some(7));
    }

    #[test]
    fn no_path_back_or_only_the_readers_own_block_is_no_g_single() {
        // 7 read before 6's block and nothing leads back to it.
        let mut e = chain();
        e.push((7, 8));
        assert_eq!(find(9, &e, &[key()]), None);
        // 7 reads 0 elements and appends right there: its own block's
        // edge S(0) → 7 is not a path back.
        let e = barriers_and(&[(0, 7), (2, 7), (7, 3)]);
        assert_eq!(find(9, &e, &[key()]), None);
    }

    #[test]
    fn a_later_read_of_the_same_key_is_a_g_single() {
        // 7 reads 0 elements, then (a non-repeatable read) 1: the chain
        // C(1) → 7 comes after the block at 0.
        let mut e = chain();
        e.push((3, 7));
        let k = KeyReads {
            readers: vec![(7, 0), (7, 1)],
            ..key()
        };
        assert!(find(9, &e, &[k]).is_some());
    }
}
