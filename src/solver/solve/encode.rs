//! The encoding: each choice (which place a block fills, unseen, committed,
//! which alternative spells a segment, SI commit orders) becomes a variable,
//! the edges a true variable adds to the order graph, the constraints that
//! tie the choices together as weighted equalities and clauses, and the
//! translation of those equalities into SAT clauses. The nodes and barriers
//! follow Theorem 3.1 of Cai et al. (see the module doc of [`super`]).

use super::super::problem::BinKind;
use super::super::Level;
use super::{Lin, Origin, Solver, VarKind, Why, NONE};
use crate::history::{Outcome, TxnId};
use crate::proof::Reason;
use batsat::{lbool, Callbacks, Lit, SolverInterface};
use rustc_hash::FxHashMap;

impl Solver<'_> {
    pub(super) fn new_var(&mut self, k: VarKind) -> u32 {
        self.vars.push(k);
        self.val.push(-1);
        self.occ.push(Vec::new());
        self.cocc.push(Vec::new());
        (self.vars.len() - 1) as u32
    }

    fn add_lin(
        &mut self,
        terms: Vec<(u32, u32)>,
        target: u32,
        enable: Option<u32>,
        origin: Origin,
    ) {
        let id = self.lins.len() as u32;
        let open = terms.iter().map(|t| t.1).sum();
        let heaviest = terms.iter().map(|t| t.1).max().unwrap_or(0);
        for &(v, w) in &terms {
            self.occ[v as usize].push((id, w));
        }
        if let Some(e) = enable {
            self.occ[e as usize].push((id, NONE));
        }
        self.lins.push(Lin {
            terms,
            target,
            enable,
            origin,
            fixed: 0,
            open,
            heaviest,
        });
        self.queue.push(id);
    }

    fn add_clause(&mut self, c: Vec<(u32, bool)>) {
        let id = self.clauses.len() as u32;
        for &(v, _) in &c {
            self.cocc[v as usize].push(id);
        }
        self.clauses.push(c);
        self.queue.push(u32::MAX - 1 - id);
    }

    /// The edges a true variable adds.
    pub(super) fn var_edges(&self, v: u32, out: &mut Vec<(u32, u32)>) {
        out.clear();
        match self.vars[v as usize] {
            VarKind::Place {
                key, w, start, end, ..
            } => {
                let wr = &self.keys[key as usize].writers[w as usize];
                let t = wr.txn;
                if self.two {
                    out.push((self.c(key, start), self.st(t)));
                    out.push((self.s(key, start), self.en(t)));
                } else if wr.pin.is_none() {
                    out.push((self.s(key, start), t));
                } // else: its read already puts it after M(start)
                out.push((self.en(t), self.c(key, end)));
            }
            VarKind::Unseen { key, w } | VarKind::UnseenCommitted { key, w } => {
                let wr = &self.keys[key as usize].writers[w as usize];
                if matches!(self.vars[v as usize], VarKind::Unseen { .. })
                    && wr.outcome != Outcome::Ok
                {
                    return; // info: only when committed
                }
                let n = self.keys[key as usize].list.len() as u32;
                if self.two {
                    out.push((self.c(key, n), self.st(wr.txn)));
                    out.push((self.s(key, n), self.en(wr.txn)));
                } else if wr.pin.is_none() {
                    out.push((self.s(key, n), wr.txn));
                }
            }
            VarKind::Committed { txn } => {
                if let Some(ps) = self.rt_preds.get(&txn) {
                    for &p in ps {
                        out.push((self.en(p), self.st(txn)));
                    }
                }
            }
            VarKind::Before { key, first, second } => {
                let ws = &self.keys[key as usize].writers;
                out.push((
                    self.en(ws[first as usize].txn),
                    self.st(ws[second as usize].txn),
                ));
            }
            VarKind::Alt { .. } | VarKind::Order { .. } => {}
        }
    }

    /// Builds variables and constraints for every key.
    pub(super) fn build(&mut self) -> Result<(), Reason> {
        let keys = self.keys;
        for (ki, kf) in keys.iter().enumerate() {
            let k = ki as u32;
            let n = kf.list.len() as u32;
            if kf.bins.iter().any(|b| b.cands.len() > 1)
                || kf.segments.iter().any(|s| s.alts.len() > 1)
            {
                self.stats.ambiguous_keys += 1;
            }
            // Structural edges: the barrier chain and the reads.
            for p in 0..=n {
                self.forced
                    .push((self.c(k, p), self.m(k, p), Why::Chain { key: k }));
                self.forced
                    .push((self.m(k, p), self.s(k, p), Why::Chain { key: k }));
                if p < n {
                    self.forced
                        .push((self.s(k, p), self.c(k, p + 1), Why::Chain { key: k }));
                }
            }
            let pinned: FxHashMap<TxnId, ()> = kf
                .writers
                .iter()
                .filter(|w| w.pin.is_some())
                .map(|w| (w.txn, ()))
                .collect();
            for (ri, r) in kf.readers.iter().enumerate() {
                let why = Why::Read {
                    key: k,
                    reader: ri as u32,
                };
                self.forced.push((self.c(k, r.cut), self.st(r.txn), why));
                if matches!(self.level, Level::ReadCommitted | Level::ConsistentView) {
                    // ww ∪ wr only (consistent view's anti-dependencies
                    // are checked apart: see [`super::single`]): no anti-dependency from the reader.
                } else if self.two {
                    self.forced.push((self.st(r.txn), self.s(k, r.cut), why));
                } else if pinned.contains_key(&r.txn) {
                    // Reads, then appends right there: after the other readers.
                    self.forced.push((self.m(k, r.cut), r.txn, why));
                    self.forced.push((r.txn, self.s(k, r.cut), why));
                } else {
                    self.forced.push((r.txn, self.m(k, r.cut), why));
                }
            }
            // Consistent view: a transaction that read the key (the others'
            // appends: `c` elements) and appended to it must have its block
            // right at `c`. Further on, the block at `c` is another's, which
            // it anti-depends on and which precedes its own block (ww): a
            // G-single. Before, it read its own block (a cycle). Two reads
            // seeing different lengths leave it no place (a G-single too).
            let cv_at = |t: TxnId| -> Option<Option<u32>> {
                if self.level != Level::ConsistentView {
                    return None;
                }
                let mut cuts = kf.readers.iter().filter(|r| r.txn == t).map(|r| r.cut);
                let c = cuts.next()?;
                Some(cuts.all(|d| d == c).then_some(c))
            };
            let cv_pin: Vec<Option<Option<u32>>> =
                kf.writers.iter().map(|w| cv_at(w.txn)).collect();
            let fits = |w: u32, p: u32| cv_pin[w as usize].is_none_or(|c| c == Some(p));
            // Places per writer.
            let mut places: Vec<Vec<(u32, u32)>> = vec![Vec::new(); kf.writers.len()];
            let mut bin_places: Vec<Vec<u32>> = vec![Vec::new(); kf.bins.len()];
            let mut seg_alts: Vec<Vec<u32>> = Vec::new();
            for (si, seg) in kf.segments.iter().enumerate() {
                let alt_vars: Vec<u32> = if seg.alts.len() > 1 {
                    (0..seg.alts.len() as u32)
                        .map(|a| {
                            self.new_var(VarKind::Alt {
                                key: k,
                                seg: si as u32,
                                alt: a,
                            })
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                if !alt_vars.is_empty() {
                    self.add_lin(
                        alt_vars.iter().map(|&v| (v, 1)).collect(),
                        1,
                        None,
                        Origin::AltPick { key: k },
                    );
                }
                seg_alts.push(alt_vars.clone());
                for (ai, alt) in seg.alts.iter().enumerate() {
                    let enable = alt_vars.get(ai).copied();
                    for &bi in &alt.bins {
                        let bin = &kf.bins[bi as usize];
                        let positional =
                            self.positional() && matches!(bin.kind, BinKind::Uniform(_));
                        let mut terms = Vec::new();
                        // SI: a run is a sequence of blocks, each at its own place,
                        // so that their order (first committer wins) is explicit;
                        // consistent view: so that who anti-depends on whom is.
                        let mut cover: Vec<Vec<(u32, u32)>> =
                            vec![Vec::new(); (bin.end - bin.start) as usize];
                        for &w in &bin.cands {
                            let wr = &kf.writers[w as usize];
                            if self
                                .windows
                                .is_some_and(|win| !win.bins[ki][w as usize].contains(&bi))
                            {
                                continue;
                            }
                            let starts: Vec<u32> = if positional {
                                (bin.start..=bin.end - wr.weight())
                                    .filter(|&p| wr.pin.is_none_or(|c| c == p))
                                    .filter(|&p| fits(w, p))
                                    .collect()
                            } else if fits(w, bin.start) {
                                vec![bin.start]
                            } else {
                                Vec::new()
                            };
                            for p in starts {
                                let end = if positional { p + wr.weight() } else { bin.end };
                                let v = self.new_var(VarKind::Place {
                                    key: k,
                                    w,
                                    bin: bi,
                                    start: p,
                                    end,
                                });
                                places[w as usize].push((v, 1));
                                bin_places[bi as usize].push(v);
                                terms.push((v, wr.weight()));
                                if positional {
                                    for q in p..end {
                                        cover[(q - bin.start) as usize].push((v, 1));
                                    }
                                }
                                if let Some(e) = enable {
                                    self.add_clause(vec![(v, false), (e, true)]);
                                }
                            }
                        }
                        if positional {
                            for c in cover {
                                self.add_lin(c, 1, enable, Origin::Bin { key: k, bin: bi });
                            }
                        } else {
                            let cap = bin.end - bin.start;
                            self.add_lin(terms, cap, enable, Origin::Bin { key: k, bin: bi });
                        }
                    }
                }
            }
            // Each writer: exactly one place, or unseen.
            let mut un = vec![NONE; kf.writers.len()];
            let mut pinned_places: Vec<Vec<u32>> = vec![Vec::new(); kf.writers.len()];
            for (wi, wr) in kf.writers.iter().enumerate() {
                let mut terms = std::mem::take(&mut places[wi]);
                if wr.pin.is_some() {
                    pinned_places[wi] = terms.iter().map(|t| t.0).collect();
                }
                // (An info writer keeps it: unseen is also "did not commit".)
                let window = self
                    .windows
                    .is_none_or(|win| wr.outcome != Outcome::Ok || win.unseen[ki][wi]);
                if wr.pin.is_none_or(|c| c == n) && window && fits(wi as u32, n) {
                    let u = self.new_var(VarKind::Unseen {
                        key: k,
                        w: wi as u32,
                    });
                    un[wi] = u;
                    terms.push((u, 1));
                }
                self.add_lin(
                    terms,
                    1,
                    None,
                    Origin::Writer {
                        key: k,
                        w: wi as u32,
                    },
                );
            }
            // Two transactions that read the same prefix cannot both append
            // right after it (the later one would have seen the other).
            let mut at_cut: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
            for (wi, wr) in kf.writers.iter().enumerate() {
                if let Some(c) = wr.pin {
                    at_cut.entry(c).or_default().push(wi as u32);
                }
            }
            for (c, ws) in at_cut {
                if ws.len() < 2 || self.two {
                    continue; // SI: positions already exclude each other
                }
                let here: Vec<u32> = ws
                    .iter()
                    .flat_map(|&w| {
                        let mut v: Vec<u32> = pinned_places[w as usize].clone();
                        if c == n && un[w as usize] != NONE {
                            v.push(un[w as usize]);
                        }
                        v
                    })
                    .collect();
                for i in 0..here.len() {
                    for j in i + 1..here.len() {
                        self.add_clause(vec![(here[i], false), (here[j], false)]);
                    }
                }
            }
            self.unseen.push(un);
            self.unseen_committed.push(vec![NONE; kf.writers.len()]);
            self.bin_places.push(bin_places);
            self.seg_alts.push(seg_alts);
            if self.start.elapsed().as_millis() as u64 > self.limits.time_ms {
                return Err(Reason::TimeWhileBuilding);
            }
        }
        self.stats.vars = self.vars.len();
        if self.vars.len() > self.limits.max_vars {
            return Err(Reason::TooManyChoices {
                vars: self.vars.len(),
                max: self.limits.max_vars,
            });
        }
        // Info writers: committed iff placed somewhere (WLOG: an info
        // transaction nobody saw can be taken as aborted).
        let mut placed_in: FxHashMap<TxnId, Vec<u32>> = FxHashMap::default();
        for v in 0..self.vars.len() as u32 {
            if let VarKind::Place { key, w, .. } = self.vars[v as usize] {
                let wr = &keys[key as usize].writers[w as usize];
                if wr.outcome == Outcome::Info {
                    placed_in.entry(wr.txn).or_default().push(v);
                }
            }
        }
        let mut info: Vec<TxnId> = placed_in.keys().copied().collect();
        info.sort_unstable();
        for t in info {
            let kv = self.new_var(VarKind::Committed { txn: t });
            self.committed_var[t as usize] = kv;
            let ps = placed_in[&t].clone();
            for &p in &ps {
                self.add_clause(vec![(p, false), (kv, true)]);
            }
            // And only then (an info transaction nobody saw is taken as aborted).
            let mut c: Vec<(u32, bool)> = ps.iter().map(|&p| (p, true)).collect();
            c.push((kv, false));
            self.add_clause(c);
        }
        for (ki, kf) in keys.iter().enumerate() {
            for (wi, wr) in kf.writers.iter().enumerate() {
                let u = self.unseen[ki][wi];
                let kv = self.committed_var[wr.txn as usize];
                if wr.outcome == Outcome::Info && u != NONE && kv != NONE {
                    let e = self.new_var(VarKind::UnseenCommitted {
                        key: ki as u32,
                        w: wi as u32,
                    });
                    self.unseen_committed[ki][wi] = e;
                    self.add_clause(vec![(u, false), (kv, false), (e, true)]);
                    self.add_clause(vec![(e, false), (u, true)]);
                    self.add_clause(vec![(e, false), (kv, true)]);
                }
            }
        }
        // Real-time order (strict serializability).
        if self.level == Level::StrictSerializable {
            for (a, b) in crate::graph::realtime_edges(self.h) {
                match self.h.txns[b as usize].outcome {
                    Outcome::Ok => self.forced.push((self.en(a), self.st(b), Why::Realtime)),
                    _ if self.committed_var[b as usize] != NONE => {
                        self.rt_preds.entry(b).or_default().push(a);
                    }
                    _ => {}
                }
            }
        }
        if self.two {
            for t in 0..self.ntx {
                self.forced.push((self.st(t), self.en(t), Why::Span));
            }
        }
        Ok(())
    }

    /// SI: unseen writers of one key must still commit one after the other.
    pub(super) fn build_si_orders(&mut self) -> Result<(), Reason> {
        let mut pairs = 0usize;
        for ki in 0..self.keys.len() {
            let ws = self.unseen_lits(ki);
            self.order_pairs(ki as u32, &ws, &mut pairs)?;
        }
        Ok(())
    }

    /// Consistent view: the version order among the unseen blocks of a key,
    /// as ww edges between their writers. Read committed leaves it free
    /// (any order of an acyclic ww ∪ wr will do), but which block comes
    /// first decides who anti-depends on whom, and so G-single. (Blocks of
    /// one uniform run get one place each, as under SI, for the same
    /// reason.)
    pub(super) fn build_cv_orders(&mut self) -> Result<(), Reason> {
        let mut pairs = 0usize;
        for ki in 0..self.keys.len() {
            let ws = self.unseen_lits(ki);
            self.order_pairs(ki as u32, &ws, &mut pairs)?;
        }
        Ok(())
    }

    /// The writers of key `ki` that may be unseen and committed, each with
    /// the literal saying so.
    fn unseen_lits(&self, ki: usize) -> Vec<(u32, u32)> {
        (0..self.keys[ki].writers.len())
            .filter_map(|w| {
                let u = self.unseen[ki][w];
                if u == NONE || self.val[u as usize] == 0 {
                    return None;
                }
                let wr = &self.keys[ki].writers[w];
                let lit = if wr.outcome == Outcome::Ok {
                    u
                } else {
                    self.unseen_committed[ki][w]
                };
                (lit != NONE && self.val[lit as usize] != 0).then_some((w as u32, lit))
            })
            .collect()
    }

    /// For each two of `ws` (writers of key `k`, each with the literal that
    /// puts it in the group), when both are in: one commits before the
    /// other (a [`VarKind::Before`] edge), which one an [`VarKind::Order`]
    /// variable decides.
    fn order_pairs(&mut self, k: u32, ws: &[(u32, u32)], pairs: &mut usize) -> Result<(), Reason> {
        *pairs += ws.len() * ws.len().saturating_sub(1) / 2;
        if *pairs > self.limits.max_vars {
            return Err(Reason::TooManyPairs {
                max: self.limits.max_vars,
            });
        }
        for i in 0..ws.len() {
            for j in i + 1..ws.len() {
                let (a, la) = ws[i];
                let (b, lb) = ws[j];
                let o = self.new_var(VarKind::Order { key: k, a, b });
                let ab = self.new_var(VarKind::Before {
                    key: k,
                    first: a,
                    second: b,
                });
                let ba = self.new_var(VarKind::Before {
                    key: k,
                    first: b,
                    second: a,
                });
                self.add_clause(vec![(la, false), (lb, false), (o, false), (ab, true)]);
                self.add_clause(vec![(la, false), (lb, false), (o, true), (ba, true)]);
            }
        }
        Ok(())
    }
}

/// Encodes `Σ wᵢ·xᵢ = target` (if `enable`) as a decision diagram over the
/// prefix sums; returns false if the solver became unsatisfiable.
pub(super) fn encode_eq<Cb: Callbacks>(
    sat: &mut batsat::Solver<Cb>,
    terms: &[(Lit, u32)],
    target: u32,
    enable: Option<Lit>,
) -> bool {
    #[derive(Clone, Copy, PartialEq)]
    enum Node {
        T,
        F,
        L(Lit),
    }
    let k = terms.len();
    let mut suffix = vec![0u64; k + 1];
    for i in (0..k).rev() {
        suffix[i] = suffix[i + 1] + u64::from(terms[i].1);
    }
    let t = target as usize;
    // layer[i][s] for s in 0..=target.
    let mut next: Vec<Node> = (0..=t)
        .map(|s| if s == t { Node::T } else { Node::F })
        .collect();
    let mut ok = true;
    let mut cl: Vec<Lit> = Vec::new();
    let mut prefix_max = vec![0u64; k + 1];
    for i in 0..k {
        prefix_max[i + 1] = prefix_max[i] + u64::from(terms[i].1);
    }
    for i in (0..k).rev() {
        let (x, w) = terms[i];
        let mut cur = vec![Node::F; t + 1];
        let lo_s = (target as u64).saturating_sub(suffix[i]) as usize;
        let hi_s = prefix_max[i].min(target as u64) as usize;
        for s in lo_s..=hi_s.max(lo_s).min(t) {
            if s > hi_s {
                break;
            }
            let hi = if s + w as usize <= t {
                next[s + w as usize]
            } else {
                Node::F
            };
            let lo = next[s];
            let node = match (hi, lo) {
                (Node::F, Node::F) => Node::F,
                (Node::T, Node::T) => Node::T,
                _ => {
                    let nv = Lit::new(sat.new_var(lbool::FALSE, false), true);
                    // n ∧ x → hi ; n ∧ ¬x → lo
                    match hi {
                        Node::T => {}
                        Node::F => {
                            cl.clear();
                            cl.extend([!nv, !x]);
                            ok &= sat.add_clause_reuse(&mut cl);
                        }
                        Node::L(h) => {
                            cl.clear();
                            cl.extend([!nv, !x, h]);
                            ok &= sat.add_clause_reuse(&mut cl);
                        }
                    }
                    match lo {
                        Node::T => {}
                        Node::F => {
                            cl.clear();
                            cl.extend([!nv, x]);
                            ok &= sat.add_clause_reuse(&mut cl);
                        }
                        Node::L(l) => {
                            cl.clear();
                            cl.extend([!nv, x, l]);
                            ok &= sat.add_clause_reuse(&mut cl);
                        }
                    }
                    Node::L(nv)
                }
            };
            cur[s] = node;
        }
        next = cur;
    }
    let root = next[0];
    cl.clear();
    match (root, enable) {
        (Node::T, _) => {}
        (Node::F, None) => return false,
        (Node::F, Some(e)) => {
            cl.push(!e);
            ok &= sat.add_clause_reuse(&mut cl);
        }
        (Node::L(r), None) => {
            cl.push(r);
            ok &= sat.add_clause_reuse(&mut cl);
        }
        (Node::L(r), Some(e)) => {
            cl.extend([!e, r]);
            ok &= sat.add_clause_reuse(&mut cl);
        }
    }
    ok
}
