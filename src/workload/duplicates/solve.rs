//! The decision procedure: choices as boolean variables, constraints as
//! weighted equalities, and acyclicity of the induced order as a theory.
//!
//! Nodes: one per transaction (serializable) or two, start and commit
//! (snapshot isolation), plus three *barriers* per position `p` of each
//! key's observed list: `C(p)`, after the appends that built the first `p`
//! elements committed; `M(p)`, after every read of exactly `p` elements by a
//! transaction that does not append right there; `S(p)`, after every read
//! of `p` elements. `C(0) → M(0) → S(0) → C(1) → … → S(n)`. A read of length
//! `c` sits between `C(c)` and `M(c)`; an append block filling positions
//! `p..e` sits after `S(p)` and before `C(e)` — except the block of a
//! transaction that itself read `p` elements first, which sits after `M(p)`
//! (and before `S(p)`, as a reader). A block that nobody saw sits after
//! `S(n)`. Under SI a transaction has a start node (its reads) and a commit
//! node (its appends): reads between `C(c)` and `S(c)`, a block after
//! `C(p)` (start) and `S(p)` (commit), before `C(e)` (commit). Given which
//! block fills which place, a serial order (or SI execution) exists iff
//! this graph is acyclic (Theorem 3.1 of Cai et al., lifted to whole
//! blocks).
//!
//! Steps: propagate what is forced (unique keys are decided here, as in
//! Elle), build the forced graph and look for a cycle in it, prune places
//! that would close a cycle through the forced graph, replay among the
//! places left, then hand what stays open to a CDCL SAT solver (`batsat`)
//! whose theory keeps the induced graph acyclic incrementally and turns
//! each cycle into a learnt clause. The solver starts from the replay: its
//! places as phases, its order as the theory's topological order, so that
//! the edges it adds mostly agree with the order and cost nothing. The
//! variables of the encoding's decision diagrams are not decided on (unit
//! propagation from the choices sets them); deciding on them made the
//! search wander (thousands of conflicts where tens suffice).

use super::dag::{self, Dag, Refused, FORCED};
use super::problem::{BinKind, KeyFacts, Names};
use super::windows::Windows;
use super::{Level, Limits};
use crate::history::{History, Outcome, TxnId};
use batsat::{lbool, Callbacks, Lit, SolverInterface, Theory, TheoryArg};
use rustc_hash::FxHashMap;
use std::time::Instant;

/// A choice variable and what it means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// Writer `w` of key `key` fills positions `start..end` (inside `bin`).
    Place {
        key: u32,
        w: u32,
        bin: u32,
        start: u32,
        end: u32,
    },
    /// Writer `w`'s block is not in the observed list of `key`.
    Unseen { key: u32, w: u32 },
    /// An `info` writer is unseen on `key` and committed.
    UnseenCommitted { key: u32, w: u32 },
    /// An `info` transaction committed.
    Committed { txn: TxnId },
    /// Segment `seg` of `key` is spelled by its alternative `alt`.
    Alt { key: u32, seg: u32, alt: u32 },
    /// SI: of two unseen writers of `key`, `a` commits before `b` starts.
    Order { key: u32, a: u32, b: u32 },
    /// SI: writer `first` of `key` commits before writer `second` starts.
    Before { key: u32, first: u32, second: u32 },
}

/// Why a forced edge holds (for explanations).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    Chain {
        key: u32,
    },
    Read {
        key: u32,
        reader: u32,
    },
    Var(u32),
    Realtime,
    /// SI: a transaction starts before it commits.
    Span,
}

/// Where a constraint comes from.
#[derive(Clone, Copy, Debug)]
enum Origin {
    Writer { key: u32, w: u32 },
    Bin { key: u32, bin: u32 },
    AltPick { key: u32 },
}

/// `Σ weight·var = target`, active when `enable` (if any) is true.
#[derive(Clone, Debug)]
struct Lin {
    terms: Vec<(u32, u32)>,
    target: u32,
    enable: Option<u32>,
    origin: Origin,
    /// Level-0 bookkeeping: weight of true terms, weight of open terms.
    fixed: u32,
    open: u32,
    heaviest: u32,
}

/// What the solver found.
pub enum Outcome2 {
    /// A serial order (or SI execution): transaction nodes in order.
    Valid {
        order: Vec<u32>,
        committed: Vec<bool>,
    },
    /// A serial order of the committed transactions, found by replay.
    Serial(Vec<TxnId>),
    Invalid(Finding),
    Unknown(String),
}

/// A reason for invalidity found by the solver.
#[derive(Clone, Debug)]
pub struct Finding {
    pub kind: String,
    pub txns: Vec<TxnId>,
    pub keys: Vec<u32>,
    pub explanation: String,
}

/// Counters for reports and benchmarks.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub keys: usize,
    pub ambiguous_keys: usize,
    pub vars: usize,
    pub open_vars: usize,
    pub pruned: usize,
    pub sat_vars: usize,
    pub sat_clauses: usize,
    pub conflicts: u64,
    /// Milliseconds per phase: build, propagate + forced graph, prune, SAT.
    pub ms: [f64; 4],
}

pub struct Solver<'a> {
    h: &'a History,
    level: Level,
    keys: &'a [KeyFacts],
    limits: &'a Limits,
    start: Instant,
    ntx: u32,
    two: bool,
    base: Vec<u32>,
    nodes: u32,
    vars: Vec<VarKind>,
    val: Vec<i8>,
    lins: Vec<Lin>,
    /// Per variable: (constraint, weight), weight `NONE` for an enabler.
    occ: Vec<Vec<(u32, u32)>>,
    clauses: Vec<Vec<(u32, bool)>>,
    cocc: Vec<Vec<u32>>,
    /// Per key, per writer: its Unseen var (u32::MAX if it must be seen).
    unseen: Vec<Vec<u32>>,
    /// Per key, per writer: its UnseenCommitted var for info writers.
    unseen_committed: Vec<Vec<u32>>,
    /// Per txn: its Committed var (u32::MAX: always (ok) or never).
    committed_var: Vec<u32>,
    /// Realtime predecessors of info transactions (strict only).
    rt_preds: FxHashMap<TxnId, Vec<TxnId>>,
    forced: Vec<(u32, u32, Why)>,
    queue: Vec<u32>,
    /// Per key, per bin: its place variables.
    bin_places: Vec<Vec<Vec<u32>>>,
    /// Per key, per segment: its alternative variables (empty if one).
    seg_alts: Vec<Vec<Vec<u32>>>,
    /// Places real time leaves possible; the others are not built.
    windows: Option<&'a Windows>,
    pub stats: Stats,
}

const NONE: u32 = u32::MAX;

impl<'a> Solver<'a> {
    pub fn new(h: &'a History, level: Level, keys: &'a [KeyFacts], limits: &'a Limits) -> Self {
        let ntx = h.txns.len() as u32;
        let two = level == Level::SnapshotIsolation;
        let mut base = Vec::with_capacity(keys.len());
        let mut nodes = if two { 2 * ntx } else { ntx };
        for k in keys {
            base.push(nodes);
            nodes += 3 * (k.list.len() as u32 + 1);
        }
        Solver {
            h,
            level,
            keys,
            limits,
            start: Instant::now(),
            ntx,
            two,
            base,
            nodes,
            vars: Vec::new(),
            val: Vec::new(),
            lins: Vec::new(),
            occ: Vec::new(),
            clauses: Vec::new(),
            cocc: Vec::new(),
            unseen: Vec::new(),
            unseen_committed: Vec::new(),
            committed_var: vec![NONE; ntx as usize],
            rt_preds: FxHashMap::default(),
            forced: Vec::new(),
            queue: Vec::new(),
            bin_places: Vec::new(),
            seg_alts: Vec::new(),
            windows: None,
            stats: Stats {
                keys: keys.len(),
                ..Stats::default()
            },
        }
    }

    /// Builds only the places `w` allows (real-time windows: exact for
    /// strict serializability, a guess for the other levels, where the
    /// caller only trusts a witness).
    pub fn with_windows(mut self, w: &'a Windows) -> Self {
        self.windows = Some(w);
        self
    }

    fn st(&self, t: TxnId) -> u32 {
        if self.two {
            2 * t
        } else {
            t
        }
    }
    fn en(&self, t: TxnId) -> u32 {
        if self.two {
            2 * t + 1
        } else {
            t
        }
    }
    fn c(&self, k: u32, p: u32) -> u32 {
        self.base[k as usize] + 3 * p
    }
    fn m(&self, k: u32, p: u32) -> u32 {
        self.base[k as usize] + 3 * p + 1
    }
    fn s(&self, k: u32, p: u32) -> u32 {
        self.base[k as usize] + 3 * p + 2
    }
    fn is_txn_node(&self, v: u32) -> bool {
        v < if self.two { 2 * self.ntx } else { self.ntx }
    }
    fn txn_of(&self, v: u32) -> TxnId {
        if self.two {
            v / 2
        } else {
            v
        }
    }

    fn new_var(&mut self, k: VarKind) -> u32 {
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
    fn var_edges(&self, v: u32, out: &mut Vec<(u32, u32)>) {
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
    fn build(&mut self) -> Result<(), String> {
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
                if self.two {
                    self.forced.push((self.st(r.txn), self.s(k, r.cut), why));
                } else if pinned.contains_key(&r.txn) {
                    // Reads, then appends right there: after the other readers.
                    self.forced.push((self.m(k, r.cut), r.txn, why));
                    self.forced.push((r.txn, self.s(k, r.cut), why));
                } else {
                    self.forced.push((r.txn, self.m(k, r.cut), why));
                }
            }
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
                        let positional = self.two && matches!(bin.kind, BinKind::Uniform(_));
                        let mut terms = Vec::new();
                        // SI: a run is a sequence of blocks, each at its own place,
                        // so that their order (first committer wins) is explicit.
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
                                    .collect()
                            } else {
                                vec![bin.start]
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
                if wr.pin.is_none_or(|c| c == n) && window {
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
                return Err("time limit reached while building constraints".into());
            }
        }
        self.stats.vars = self.vars.len();
        if self.vars.len() > self.limits.max_vars {
            return Err(format!(
                "{} choice variables exceed the limit of {}",
                self.vars.len(),
                self.limits.max_vars
            ));
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
    fn build_si_orders(&mut self) -> Result<(), String> {
        let mut pairs = 0usize;
        for ki in 0..self.keys.len() {
            let ws: Vec<(u32, u32)> = (0..self.keys[ki].writers.len())
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
                .collect();
            pairs += ws.len() * ws.len().saturating_sub(1) / 2;
            if pairs > self.limits.max_vars {
                return Err(format!(
                    "snapshot isolation: more than {} pairs of unseen appends to order",
                    self.limits.max_vars
                ));
            }
            for i in 0..ws.len() {
                for j in i + 1..ws.len() {
                    let (a, la) = ws[i];
                    let (b, lb) = ws[j];
                    let k = ki as u32;
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
        }
        Ok(())
    }

    // ---- level-0 propagation ----

    fn assign(&mut self, v: u32, b: bool) -> Result<(), Conflict> {
        let want = b as i8;
        let cur = self.val[v as usize];
        if cur == want {
            return Ok(());
        }
        if cur != -1 {
            return Err(Conflict::Var(v));
        }
        self.val[v as usize] = want;
        for i in 0..self.occ[v as usize].len() {
            let (l, w) = self.occ[v as usize][i];
            if w != NONE {
                let lin = &mut self.lins[l as usize];
                lin.open -= w;
                if b {
                    lin.fixed += w;
                }
            }
            self.queue.push(l);
        }
        for i in 0..self.cocc[v as usize].len() {
            let c = self.cocc[v as usize][i];
            self.queue.push(u32::MAX - 1 - c);
        }
        Ok(())
    }

    fn propagate(&mut self) -> Result<(), Conflict> {
        while let Some(q) = self.queue.pop() {
            if q >= u32::MAX / 2 {
                self.propagate_clause(u32::MAX - 1 - q)?;
                continue;
            }
            let lin = &self.lins[q as usize];
            let active = match lin.enable {
                None => true,
                Some(e) => match self.val[e as usize] {
                    1 => true,
                    0 => {
                        // Disabled: its terms are false (also implied by clauses).
                        let open: Vec<u32> = lin
                            .terms
                            .iter()
                            .map(|t| t.0)
                            .filter(|&v| self.val[v as usize] == -1)
                            .collect();
                        for v in open {
                            self.assign(v, false).map_err(|_| Conflict::Lin(q))?;
                        }
                        continue;
                    }
                    _ => {
                        // Undecided: if enabling it would fail, disable it.
                        if lin.fixed > lin.target || lin.fixed + lin.open < lin.target {
                            self.assign(e, false).map_err(|_| Conflict::Lin(q))?;
                        }
                        continue;
                    }
                },
            };
            if !active {
                continue;
            }
            let lin = &self.lins[q as usize];
            let (fixed, open, target) = (lin.fixed, lin.open, lin.target);
            if fixed > target || fixed + open < target {
                return Err(Conflict::Lin(q));
            }
            if open == 0 {
                continue;
            }
            let rest = target - fixed;
            let decide: Vec<(u32, bool)> = if rest == 0 {
                lin.terms
                    .iter()
                    .filter(|t| self.val[t.0 as usize] == -1)
                    .map(|t| (t.0, false))
                    .collect()
            } else if rest == open {
                lin.terms
                    .iter()
                    .filter(|t| self.val[t.0 as usize] == -1)
                    .map(|t| (t.0, true))
                    .collect()
            } else if lin.heaviest > rest {
                // Terms heavier than what is left cannot be true.
                lin.terms
                    .iter()
                    .filter(|t| self.val[t.0 as usize] == -1 && t.1 > rest)
                    .map(|t| (t.0, false))
                    .collect()
            } else {
                Vec::new()
            };
            for (v, b) in decide {
                self.assign(v, b).map_err(|_| Conflict::Lin(q))?;
            }
        }
        Ok(())
    }

    fn propagate_clause(&mut self, c: u32) -> Result<(), Conflict> {
        let mut open = None;
        let mut n_open = 0;
        for &(v, sign) in &self.clauses[c as usize] {
            match self.val[v as usize] {
                -1 => {
                    n_open += 1;
                    open = Some((v, sign));
                }
                x if (x == 1) == sign => return Ok(()),
                _ => {}
            }
        }
        match (n_open, open) {
            (0, _) => Err(Conflict::Clause(c)),
            (1, Some((v, sign))) => self.assign(v, sign),
            _ => Ok(()),
        }
    }

    /// Runs everything; the verdict.
    pub fn run(&mut self) -> Outcome2 {
        let mut clock = Instant::now();
        if let Err(e) = self.build() {
            return Outcome2::Unknown(e);
        }
        self.lap(0, &mut clock);
        if let Err(c) = self.propagate() {
            return Outcome2::Invalid(self.explain_conflict(c));
        }
        // Forced graph, then pruning against it, to a fixpoint (bounded).
        let mut order: Vec<u32>;
        let mut rounds = 0;
        loop {
            let edges = self.forced_graph();
            let plain: Vec<(u32, u32)> = edges.iter().map(|e| (e.0, e.1)).collect();
            // On a cycle, the shortest through one of its edges (try a few).
            match dag::topo_order_or_short_cycle(self.nodes as usize, &plain, 16) {
                Ok(o) => order = o,
                Err(cyc) => return Outcome2::Invalid(self.explain_forced_cycle(&edges, &cyc)),
            }
            self.lap(1, &mut clock);
            rounds += 1;
            if rounds > 3 {
                break;
            }
            let pruned = self.prune(&plain, &order);
            self.lap(2, &mut clock);
            match pruned {
                Ok(0) => break,
                Ok(_) => {}
                Err(c) => return Outcome2::Invalid(self.explain_conflict(c)),
            }
        }
        if self.two {
            if let Err(e) = self.build_si_orders() {
                return Outcome2::Unknown(e);
            }
            if let Err(c) = self.propagate() {
                return Outcome2::Invalid(self.explain_conflict(c));
            }
        }
        self.stats.open_vars = self.val.iter().filter(|&&x| x == -1).count();
        if self.stats.open_vars == 0 {
            return self.finish();
        }
        // Fast path: replay a serial execution among the places still
        // allowed. If it gets stuck, where it put each block seeds the SAT
        // solver's phases.
        let replay = self.replay_allowed();
        if replay.complete() && self.limits.witness_first {
            self.lap(3, &mut clock);
            return Outcome2::Serial(replay.order);
        }
        // Under SI a serial replay is a poor guide: start from the commit
        // order the SI replay found, if it placed more blocks.
        let si;
        let guide = if self.two {
            si = super::snapshot::si_placement(self.h, self.keys);
            if si.placed.len() > replay.placed.len() {
                &si
            } else {
                &replay
            }
        } else {
            &replay
        };
        let guess = self.phases(guide);
        let order = self.guided_order(guide).unwrap_or(order);
        let r = self.sat(&order, &guess);
        self.lap(3, &mut clock);
        r
    }

    fn lap(&mut self, phase: usize, clock: &mut Instant) {
        self.stats.ms[phase] += clock.elapsed().as_secs_f64() * 1e3;
        *clock = Instant::now();
    }

    /// A topological order of the forced graph that follows the replay
    /// where it can: each transaction at its turn in the replay, each key's
    /// barriers where the replay had the key at that length. The theory's
    /// graph starts in this order, so that edges the replay's guesses add
    /// agree with it and cost nothing. `None` if the forced graph has a
    /// cycle (it has not: checked before).
    fn guided_order(&self, r: &super::replay::Replay) -> Option<Vec<u32>> {
        const LATE: u64 = u64::MAX / 2;
        let n = self.nodes as usize;
        let mut prio = vec![LATE; n];
        for (i, &t) in r.order.iter().enumerate() {
            let i = i as u64;
            prio[self.st(t) as usize] = 2 * i + 1;
            prio[self.en(t) as usize] = 2 * i + 1;
        }
        for (k, kf) in self.keys.iter().enumerate() {
            let reached = &r.reached[k];
            let len = kf.list.len() as u32;
            for p in 0..=len {
                let at = |q: u32| -> u64 {
                    match reached.get(q as usize) {
                        Some(&x) if x != u32::MAX => 2 * u64::from(x),
                        _ => LATE,
                    }
                };
                // C(p) right after the append that reached p; M(p) and S(p)
                // right before the one that leaves it.
                prio[self.c(k as u32, p) as usize] = at(p);
                let next = if p < len {
                    at(p + 1).saturating_sub(2)
                } else {
                    LATE
                };
                prio[self.m(k as u32, p) as usize] = next;
                prio[self.s(k as u32, p) as usize] = next;
            }
        }
        let edges: Vec<(u32, u32)> = self.forced_graph().iter().map(|e| (e.0, e.1)).collect();
        dag::priority_order(n, &edges, |v| prio[v as usize])
    }

    /// Phases from a replay: each block's place true (its other places
    /// false), or unseen; `-1` where the replay said nothing.
    fn phases(&self, replay: &super::replay::Replay) -> Vec<i8> {
        let mut g = self.val.clone();
        let mut at: FxHashMap<(u32, u32), u32> = FxHashMap::default();
        for &(k, w, p) in &replay.placed {
            at.insert((k, w), p);
        }
        // SI: two appenders of a key commit in the replay's order.
        let mut rank = vec![u32::MAX; self.ntx as usize];
        for (i, &t) in replay.order.iter().enumerate() {
            rank[t as usize] = i as u32;
        }
        let first = |k: u32, a: u32, b: u32| -> Option<bool> {
            let ws = &self.keys[k as usize].writers;
            let (ra, rb) = (
                rank[ws[a as usize].txn as usize],
                rank[ws[b as usize].txn as usize],
            );
            (ra != u32::MAX && rb != u32::MAX).then_some(ra < rb)
        };
        for (v, kind) in self.vars.iter().enumerate() {
            if g[v] != -1 {
                continue;
            }
            match *kind {
                VarKind::Place {
                    key,
                    w,
                    start,
                    end,
                    bin,
                } => {
                    if let Some(&p) = at.get(&(key, w)) {
                        let exact = self.two
                            || self.keys[key as usize].bins[bin as usize].kind == BinKind::Exact;
                        g[v] = if exact {
                            p == start
                        } else {
                            start <= p && p < end
                        } as i8;
                    }
                }
                VarKind::Unseen { key, w } => {
                    if let Some(&p) = at.get(&(key, w)) {
                        g[v] = (p == self.keys[key as usize].list.len() as u32) as i8;
                    }
                }
                VarKind::Order { key, a, b } => {
                    if let Some(x) = first(key, a, b) {
                        g[v] = x as i8;
                    }
                }
                VarKind::Before {
                    key,
                    first: a,
                    second: b,
                } => {
                    if let Some(x) = first(key, a, b) {
                        g[v] = x as i8;
                    }
                }
                _ => {}
            }
        }
        g
    }

    /// [`super::replay::replay`], restricted to places not ruled out.
    fn replay_allowed(&self) -> super::replay::Replay {
        // Per key, per writer: allowed (start, end) ranges, and unseen.
        let mut ranges: Vec<Vec<Vec<(u32, u32)>>> = self
            .keys
            .iter()
            .map(|k| vec![Vec::new(); k.writers.len()])
            .collect();
        for v in 0..self.vars.len() {
            if self.val[v] == 0 {
                continue;
            }
            if let VarKind::Place {
                key,
                w,
                start,
                end,
                bin,
            } = self.vars[v]
            {
                let exact =
                    self.two || self.keys[key as usize].bins[bin as usize].kind == BinKind::Exact;
                // A block in an unordered run may sit anywhere inside it.
                ranges[key as usize][w as usize].push(if exact {
                    (start, start + 1)
                } else {
                    (start, end)
                });
            }
        }
        let allowed = |k: u32, w: u32, p: u32| -> bool {
            let n = self.keys[k as usize].list.len() as u32;
            if p == n {
                let u = self.unseen[k as usize][w as usize];
                return u != NONE && self.val[u as usize] != 0;
            }
            ranges[k as usize][w as usize]
                .iter()
                .any(|&(s, e)| s <= p && p < e)
        };
        super::replay::replay_best(
            self.h,
            self.keys,
            self.level == Level::StrictSerializable,
            Some(&allowed),
            true,
        )
    }

    /// Forced edges: structure plus the edges of variables fixed true.
    fn forced_graph(&self) -> Vec<(u32, u32, Why)> {
        let mut edges = self.forced.clone();
        let mut buf = Vec::new();
        for v in 0..self.vars.len() as u32 {
            if self.val[v as usize] == 1 {
                self.var_edges(v, &mut buf);
                edges.extend(buf.iter().map(|&(a, b)| (a, b, Why::Var(v))));
            }
        }
        edges
    }

    /// Sets false every open place (or unseen choice) that would close a
    /// cycle with the forced graph. Per key, barriers form a chain, so it is
    /// enough to know, for each node, the first barrier it reaches and the
    /// last barrier that reaches it. Only keys with many open choices are
    /// worth the two linear passes.
    fn prune(&mut self, edges: &[(u32, u32)], order: &[u32]) -> Result<usize, Conflict> {
        let n = self.nodes as usize;
        let mut per_key: Vec<Vec<u32>> = vec![Vec::new(); self.keys.len()];
        for v in 0..self.vars.len() as u32 {
            if self.val[v as usize] != -1 {
                continue;
            }
            match self.vars[v as usize] {
                VarKind::Place { key, .. } | VarKind::Unseen { key, .. } => {
                    per_key[key as usize].push(v)
                }
                _ => {}
            }
        }
        let mut out_off = vec![0u32; n + 1];
        let mut in_off = vec![0u32; n + 1];
        for &(a, b) in edges {
            out_off[a as usize + 1] += 1;
            in_off[b as usize + 1] += 1;
        }
        for i in 0..n {
            out_off[i + 1] += out_off[i];
            in_off[i + 1] += in_off[i];
        }
        let mut out_adj = vec![0u32; edges.len()];
        let mut in_adj = vec![0u32; edges.len()];
        let (mut fo, mut fi) = (out_off.clone(), in_off.clone());
        for &(a, b) in edges {
            out_adj[fo[a as usize] as usize] = b;
            fo[a as usize] += 1;
            in_adj[fi[b as usize] as usize] = a;
            fi[b as usize] += 1;
        }
        // Largest keys first: they hold most of the open choices.
        let mut by_size: Vec<usize> = (0..per_key.len())
            .filter(|&k| per_key[k].len() >= self.limits.prune_threshold)
            .collect();
        by_size.sort_by_key(|&k| std::cmp::Reverse(per_key[k].len()));
        // The key whose barrier a node is, if any.
        let mut key_of = vec![NONE; n];
        for &k in &by_size {
            let b0 = self.base[k] as usize;
            let nb = 3 * (self.keys[k].list.len() + 1);
            key_of[b0..b0 + nb].iter_mut().for_each(|x| *x = k as u32);
        }
        // Keys with short lists fit 16-bit barrier indices: twice as many
        // lanes per pass.
        let (small, large): (Vec<usize>, Vec<usize>) = by_size
            .iter()
            .partition(|&&k| 3 * (self.keys[k].list.len() + 1) < u16::MAX as usize - 1);
        let g = Csr {
            order,
            out_off: &out_off,
            out_adj: &out_adj,
            in_off: &in_off,
            in_adj: &in_adj,
        };
        let mut killed = Vec::new();
        self.prune_batches::<u16, 32>(&small, &per_key, &key_of, &g, &mut killed);
        self.prune_batches::<u32, 16>(&large, &per_key, &key_of, &g, &mut killed);
        self.stats.pruned += killed.len();
        let count = killed.len();
        for v in killed {
            self.assign(v, false)?;
        }
        self.propagate()?;
        Ok(count)
    }

    /// [`Solver::prune`] for `keys`, `L` at a time, one lane each: per
    /// node `v`, `first[v][l]` is the smallest barrier index of lane `l`'s
    /// key that `v` reaches (`MAX`: none); `last[v][l]` is one more than the
    /// largest that reaches `v` (0: none). Pushes the choices that would
    /// close a cycle onto `killed`.
    fn prune_batches<T: Lane, const L: usize>(
        &self,
        keys: &[usize],
        per_key: &[Vec<u32>],
        key_of: &[u32],
        g: &Csr,
        killed: &mut Vec<u32>,
    ) {
        if keys.is_empty() {
            return;
        }
        let n = self.nodes as usize;
        let mut first = vec![[T::MAX; L]; n];
        let mut last = vec![[T::ZERO; L]; n];
        let mut lane = vec![NONE; self.keys.len()];
        let mut buf = Vec::new();
        for batch in keys.chunks(L) {
            for (l, &k) in batch.iter().enumerate() {
                lane[k] = l as u32;
            }
            let own = |v: u32| -> Option<(usize, u32)> {
                let k = key_of[v as usize];
                (k != NONE && lane[k as usize] != NONE)
                    .then(|| (lane[k as usize] as usize, v - self.base[k as usize]))
            };
            for &v in g.order.iter().rev() {
                let (s, e) = (g.out_off[v as usize], g.out_off[v as usize + 1]);
                let mut m = T::fold_min::<L>(&first, &g.out_adj[s as usize..e as usize]);
                if let Some((l, i)) = own(v) {
                    m[l] = m[l].min(T::of(i));
                }
                first[v as usize] = m;
            }
            for &v in g.order.iter() {
                let (s, e) = (g.in_off[v as usize], g.in_off[v as usize + 1]);
                let mut m = T::fold_max::<L>(&last, &g.in_adj[s as usize..e as usize]);
                if let Some((l, i)) = own(v) {
                    m[l] = m[l].max(T::of(i + 1));
                }
                last[v as usize] = m;
            }
            for (l, &ki) in batch.iter().enumerate() {
                let b0 = self.base[ki];
                let nb = 3 * (self.keys[ki].list.len() as u32 + 1);
                let bar = |v: u32| (v >= b0 && v < b0 + nb).then(|| v - b0);
                for &v in &per_key[ki] {
                    // Every edge the choice would add must not close a cycle:
                    // for barrier → txn, the txn must not reach that barrier;
                    // for txn → barrier, that barrier must not reach the txn.
                    self.var_edges(v, &mut buf);
                    let bad = buf.iter().any(|&(a, b)| match (bar(a), bar(b)) {
                        (Some(i), None) => first[b as usize][l] <= T::of(i),
                        (None, Some(j)) => last[a as usize][l] > T::of(j),
                        _ => false,
                    });
                    if bad {
                        killed.push(v);
                    }
                }
            }
            for &k in batch {
                lane[k] = NONE;
            }
            if self.start.elapsed().as_millis() as u64 > self.limits.time_ms {
                break;
            }
        }
    }

    // ---- SAT ----

    fn sat(&mut self, order: &[u32], guess: &[i8]) -> Outcome2 {
        let mut sat = batsat::Solver::new(
            batsat::SolverOpts::default(),
            Deadline::new(self.start, self.limits.time_ms),
        );
        let mut to_sat = vec![batsat::Var::UNDEF; self.vars.len()];
        let mut from_sat: Vec<u32> = Vec::new();
        for v in 0..self.vars.len() {
            if self.val[v] == -1 {
                // A user polarity would override phase saving on every
                // restart; only the replay's "yes" is worth that.
                let pol = match guess[v] {
                    1 => lbool::TRUE,
                    _ => lbool::UNDEF,
                };
                let sv = sat.new_var(pol, true);
                to_sat[v] = sv;
                from_sat.push(v as u32);
            }
        }
        let lit = |v: u32, sign: bool| Lit::new(to_sat[v as usize], sign);
        let mut clause: Vec<Lit> = Vec::new();
        let mut ok = true;
        // Clauses.
        for c in &self.clauses {
            clause.clear();
            let mut sat_already = false;
            for &(v, sign) in c {
                match self.val[v as usize] {
                    -1 => clause.push(lit(v, sign)),
                    x if (x == 1) == sign => sat_already = true,
                    _ => {}
                }
            }
            if !sat_already {
                ok &= sat.add_clause_reuse(&mut clause);
            }
        }
        // Linear equalities as decision diagrams.
        for lin in &self.lins {
            let enable = match lin.enable {
                None => None,
                Some(e) => match self.val[e as usize] {
                    0 => continue,
                    1 => None,
                    _ => Some(lit(e, true)),
                },
            };
            let terms: Vec<(Lit, u32)> = lin
                .terms
                .iter()
                .filter(|t| self.val[t.0 as usize] == -1)
                .map(|t| (lit(t.0, true), t.1))
                .collect();
            if lin.fixed > lin.target {
                ok = false;
                continue;
            }
            let target = lin.target - lin.fixed;
            ok &= encode_eq(&mut sat, &terms, target, enable);
        }
        self.stats.sat_vars = sat.num_vars() as usize;
        self.stats.sat_clauses = sat.num_clauses() as usize;
        if !ok {
            return Outcome2::Invalid(self.unsat_finding(&[]));
        }
        // Edges of open variables, by solver variable.
        let mut off = vec![0u32];
        let mut flat: Vec<(u32, u32)> = Vec::new();
        let mut buf = Vec::new();
        for &v in &from_sat {
            self.var_edges(v, &mut buf);
            flat.extend_from_slice(&buf);
            off.push(flat.len() as u32);
        }
        // Remaining slots of the batsat var space (decision-diagram nodes) carry no edges.
        let mut th = Acyclic {
            dag: Dag::with_order(order),
            off,
            flat,
            from_sat: from_sat.clone(),
            processed: 0,
            levels: Vec::new(),
            reorder_limit: self.limits.reorder_limit,
            pending: Vec::new(),
            cycles: Vec::new(),
        };
        // Forced edges are in the initial order already; add them for real.
        for (a, b, _) in self.forced_graph() {
            if th.dag.add(a, b, FORCED).is_err() {
                return Outcome2::Unknown("internal: forced graph not acyclic".into());
            }
        }
        let r = sat.solve_limited_th(&mut th, &[]);
        self.stats.conflicts = sat.num_conflicts();
        if r == lbool::TRUE {
            let model: Vec<lbool> = sat.get_model().to_vec();
            for (i, &v) in from_sat.iter().enumerate() {
                self.val[v as usize] = (model[i] == lbool::TRUE) as i8;
            }
            self.finish()
        } else if r == lbool::FALSE {
            let cycles = std::mem::take(&mut th.cycles);
            Outcome2::Invalid(self.unsat_finding(&cycles))
        } else {
            Outcome2::Unknown(format!(
                "search stopped at the time limit ({} ms) after {} conflicts, without an answer",
                self.limits.time_ms,
                sat.num_conflicts()
            ))
        }
    }

    /// All variables are decided: a topological order of the full graph.
    fn finish(&self) -> Outcome2 {
        let edges: Vec<(u32, u32)> = self.forced_graph().iter().map(|e| (e.0, e.1)).collect();
        match dag::topo_order(self.nodes as usize, &edges) {
            Ok(order) => {
                let mut committed = vec![false; self.ntx as usize];
                for (t, txn) in self.h.txns.iter().enumerate() {
                    committed[t] = match txn.outcome {
                        Outcome::Ok => true,
                        Outcome::Fail => false,
                        Outcome::Info => {
                            let kv = self.committed_var[t];
                            kv != NONE && self.val[kv as usize] == 1
                        }
                    };
                }
                let order = order.into_iter().filter(|&v| self.is_txn_node(v)).collect();
                Outcome2::Valid { order, committed }
            }
            Err(_) => Outcome2::Unknown("internal: the solver's choice left a cycle".into()),
        }
    }

    // ---- explanations ----

    fn explain_conflict(&self, c: Conflict) -> Finding {
        let n = Names(self.h);
        let (key, text, mut txns) = match c {
            Conflict::Lin(l) => match self.lins[l as usize].origin {
                Origin::Bin { key, bin } => {
                    let kf = &self.keys[key as usize];
                    let b = &kf.bins[bin as usize];
                    let word = &kf.list[b.start as usize..b.end as usize];
                    let reader = kf
                        .readers
                        .iter()
                        .filter(|r| r.cut >= b.end)
                        .min_by_key(|r| r.cut)
                        .map(|r| r.txn);
                    let cands: Vec<String> = b
                        .cands
                        .iter()
                        .map(|&w| {
                            format!(
                                "{} appended {}",
                                n.txn(kf.writers[w as usize].txn),
                                n.list(&kf.writers[w as usize].block)
                            )
                        })
                        .collect();
                    let mut txns: Vec<TxnId> = b
                        .cands
                        .iter()
                        .map(|&w| kf.writers[w as usize].txn)
                        .collect();
                    txns.extend(reader);
                    (
                        key,
                        format!(
                            "{} read key {} as {}: positions {}..{} ({}) must be whole appends, but the only candidates ({}) cannot fill them exactly once the other reads are accounted for",
                            reader.map(|t| n.txn(t)).unwrap_or_else(|| "a transaction".into()),
                            n.key(kf.key),
                            n.list(&kf.list[..b.end as usize]),
                            b.start,
                            b.end,
                            n.list(word),
                            if cands.is_empty() { "none".to_string() } else { cands.join(", ") }
                        ),
                        txns,
                    )
                }
                Origin::Writer { key, w } => {
                    let kf = &self.keys[key as usize];
                    let wr = &kf.writers[w as usize];
                    (
                        key,
                        format!(
                            "{}'s append of {} to key {} fits nowhere: every place in {} (read by {}) where it could go is taken or would contradict a read",
                            n.txn(wr.txn),
                            n.list(&wr.block),
                            n.key(kf.key),
                            n.list(&kf.list),
                            kf.longest.map(|t| n.txn(t)).unwrap_or_default()
                        ),
                        vec![wr.txn],
                    )
                }
                Origin::AltPick { key } => {
                    let kf = &self.keys[key as usize];
                    (
                        key,
                        format!(
                            "no way to spell {} of key {} from whole appends",
                            n.list(&kf.list),
                            n.key(kf.key)
                        ),
                        vec![],
                    )
                }
            },
            Conflict::Var(_) | Conflict::Clause(_) => {
                let v = match c {
                    Conflict::Clause(ci) => {
                        self.clauses[ci as usize].first().map(|x| x.0).unwrap_or(0)
                    }
                    Conflict::Var(v) | Conflict::Lin(v) => v,
                };
                let key = match self.vars.get(v as usize) {
                    Some(VarKind::Place { key, .. }) | Some(VarKind::Unseen { key, .. }) => *key,
                    _ => 0,
                };
                let kf = &self.keys[key as usize];
                (
                    key,
                    format!(
                        "the reads of key {} ({}) cannot be produced by whole appends",
                        n.key(kf.key),
                        n.list(&kf.list)
                    ),
                    vec![],
                )
            }
        };
        txns.sort_unstable();
        txns.dedup();
        Finding {
            kind: "duplicate-appends-unproducible-read".into(),
            txns,
            keys: vec![self.keys[key as usize].key],
            explanation: text,
        }
    }

    fn explain_forced_cycle(&self, edges: &[(u32, u32, Why)], cyc: &[usize]) -> Finding {
        let steps: Vec<(u32, u32, Why)> = cyc.iter().map(|&i| edges[i]).collect();
        self.describe_cycle(&steps)
    }

    fn unsat_finding(&self, cycles: &[Vec<(u32, u32, u32)>]) -> Finding {
        // The smallest cycle the search ran into, as an example.
        let mut keys: Vec<u32> = Vec::new();
        let mut txns: Vec<TxnId> = Vec::new();
        for c in cycles {
            for &(a, b, _) in c {
                for v in [a, b] {
                    if self.is_txn_node(v) {
                        txns.push(self.txn_of(v));
                    } else if let Some(k) = self.key_of_node(v) {
                        keys.push(self.keys[k as usize].key);
                    }
                }
            }
        }
        txns.sort_unstable();
        txns.dedup();
        keys.sort_unstable();
        keys.dedup();
        let n = Names(self.h);
        let mut text = format!(
            "every choice of which appends produced the repeated values closes a cycle{}",
            if keys.is_empty() {
                String::new()
            } else {
                format!(
                    " (keys {}; transactions {})",
                    keys.iter()
                        .map(|&k| n.key(k))
                        .collect::<Vec<_>>()
                        .join(", "),
                    txns.iter()
                        .take(24)
                        .map(|&t| n.txn(t))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        );
        if let Some(c) = cycles.iter().min_by_key(|c| c.len()) {
            let steps: Vec<(u32, u32, Why)> = c
                .iter()
                .map(|&(a, b, t)| {
                    (
                        a,
                        b,
                        if t == FORCED {
                            self.why_of(a, b)
                        } else {
                            Why::Var(t)
                        },
                    )
                })
                .collect();
            let d = self.describe_cycle(&steps);
            text.push_str(&format!(
                ". For instance, one choice gives: {}",
                d.explanation
            ));
        }
        let kind = match self.level {
            Level::SnapshotIsolation => "duplicate-appends-not-snapshot-isolated",
            _ => "duplicate-appends-unserializable",
        };
        Finding {
            kind: kind.into(),
            txns,
            keys,
            explanation: text,
        }
    }

    /// The reason of a forced edge (looked up again for explanations).
    fn why_of(&self, a: u32, b: u32) -> Why {
        self.forced_graph()
            .into_iter()
            .find(|e| e.0 == a && e.1 == b)
            .map(|e| e.2)
            .unwrap_or(Why::Realtime)
    }

    fn key_of_node(&self, v: u32) -> Option<u32> {
        if self.is_txn_node(v) {
            return None;
        }
        let i = self.base.partition_point(|&b| b <= v);
        (i > 0).then(|| (i - 1) as u32)
    }

    /// Turns a cycle over nodes into transaction-level steps, each with the
    /// relation (ww, wr, rw, realtime) and a sentence.
    fn describe_cycle(&self, steps: &[(u32, u32, Why)]) -> Finding {
        let n = Names(self.h);
        // Rotate so the cycle starts at a transaction node.
        let Some(s0) = steps.iter().position(|e| self.is_txn_node(e.0)) else {
            return Finding {
                kind: "G0".into(),
                txns: vec![],
                keys: vec![],
                explanation: "a cycle among barriers (internal)".into(),
            };
        };
        let rot: Vec<(u32, u32, Why)> = steps[s0..]
            .iter()
            .chain(steps[..s0].iter())
            .copied()
            .collect();
        let mut parts: Vec<String> = Vec::new();
        let mut txns: Vec<TxnId> = Vec::new();
        let mut keys: Vec<u32> = Vec::new();
        let mut rels: Vec<&'static str> = Vec::new();
        let mut i = 0;
        while i < rot.len() {
            let from = self.txn_of(rot[i].0);
            // Walk to the next transaction; `first` is the edge that leaves
            // `from` (under SI, after its own start → commit edge).
            let mut j = i;
            let mut first = None;
            while j + 1 < rot.len()
                && !(self.is_txn_node(rot[j].1) && self.txn_of(rot[j].1) != from)
            {
                if first.is_none() && !(self.is_txn_node(rot[j].1) && self.txn_of(rot[j].1) == from)
                {
                    first = Some(rot[j]);
                }
                j += 1;
            }
            let last = rot[j];
            let first = first.unwrap_or(last);
            let to = self.txn_of(last.1);
            txns.push(from);
            let (rel, text, key) = self.step(first, last, from, to);
            if let Some(k) = key {
                keys.push(self.keys[k as usize].key);
            }
            rels.push(rel);
            parts.push(text);
            i = j + 1;
        }
        let rw = rels.iter().filter(|r| r.contains("rw")).count();
        let rt = rels.contains(&"realtime");
        let base = if rw == 0 {
            if rels.iter().any(|r| r.contains("wr")) {
                "G1c"
            } else {
                "G0"
            }
        } else if rw == 1 {
            "G-single"
        } else {
            "G2-item"
        };
        let kind = if rt {
            format!("{base}-realtime")
        } else {
            base.to_string()
        };
        let names: Vec<String> = txns.iter().map(|&t| n.txn(t)).collect();
        keys.sort_unstable();
        keys.dedup();
        let mut explanation = format!("Let: {}\nThen:\n", names.join(", "));
        for (idx, p) in parts.iter().enumerate() {
            explanation.push_str(&format!(
                "  - {p}{}\n",
                if idx + 1 == parts.len() {
                    ", a cycle."
                } else {
                    "."
                }
            ));
        }
        let mut tx = txns.clone();
        tx.sort_unstable();
        tx.dedup();
        Finding {
            kind,
            txns: tx,
            keys,
            explanation,
        }
    }

    /// One transaction-to-transaction step of a cycle: `first` leaves `from`,
    /// `last` enters `to`.
    fn step(
        &self,
        first: (u32, u32, Why),
        last: (u32, u32, Why),
        from: TxnId,
        to: TxnId,
    ) -> (&'static str, String, Option<u32>) {
        let n = Names(self.h);
        if let Why::Realtime = first.2 {
            return (
                "realtime",
                format!("{} completed before {} began", n.txn(from), n.txn(to)),
                None,
            );
        }
        if let Why::Var(v) = first.2 {
            if let VarKind::Committed { .. } = self.vars[v as usize] {
                return (
                    "realtime",
                    format!("{} completed before {} began", n.txn(from), n.txn(to)),
                    None,
                );
            }
            if let VarKind::Before { key, .. } = self.vars[v as usize] {
                let k = &self.keys[key as usize];
                return (
                    "ww",
                    format!("{} and {} both appended to key {}, so one committed before the other started; here {} went first", n.txn(from), n.txn(to), n.key(k.key), n.txn(from)),
                    Some(key),
                );
            }
        }
        // Role of `from` (by its outgoing edge) and of `to` (incoming edge).
        let role = |w: Why, t: TxnId| -> Option<(u32, Role)> {
            match w {
                Why::Read { key, reader } => Some((
                    key,
                    Role::Read(self.keys[key as usize].readers[reader as usize].cut),
                )),
                Why::Var(v) => match self.vars[v as usize] {
                    VarKind::Place { key, w, start, .. }
                        if self.keys[key as usize].writers[w as usize].txn == t =>
                    {
                        Some((key, Role::Write(start, w)))
                    }
                    VarKind::Unseen { key, w } | VarKind::UnseenCommitted { key, w } => {
                        Some((key, Role::Unseen(w)))
                    }
                    _ => None,
                },
                _ => None,
            }
        };
        let (a, b) = (role(first.2, from), role(last.2, to));
        let Some((key, ra)) = a else {
            return ("?", format!("{} precedes {}", n.txn(from), n.txn(to)), None);
        };
        let rb = b.map(|x| x.1);
        let kf = &self.keys[key as usize];
        let k = n.key(kf.key);
        let wtxt = |w: u32| n.list(&kf.writers[w as usize].block);
        let (rel, text) = match (ra, rb) {
            (Role::Write(s, w), Some(Role::Write(s2, w2))) => (
                "ww",
                format!(
                    "{} appended {} to key {} at position {}, before {}'s {} at position {}",
                    n.txn(from),
                    wtxt(w),
                    k,
                    s,
                    n.txn(to),
                    wtxt(w2),
                    s2
                ),
            ),
            (Role::Write(s, w), Some(Role::Unseen(w2))) => (
                "ww",
                format!(
                    "{} appended {} to key {} at position {}, before {}'s {}, which no read saw",
                    n.txn(from),
                    wtxt(w),
                    k,
                    s,
                    n.txn(to),
                    wtxt(w2)
                ),
            ),
            (Role::Write(s, w), Some(Role::Read(c))) => (
                "wr",
                format!(
                    "{} read key {} as {}, which includes {}'s append of {} at position {}",
                    n.txn(to),
                    k,
                    n.list(&kf.list[..c as usize]),
                    n.txn(from),
                    wtxt(w),
                    s
                ),
            ),
            (Role::Read(c), Some(Role::Write(s, w))) => (
                "rw",
                format!(
                    "{} read key {} as {}, which misses {}'s append of {} at position {}",
                    n.txn(from),
                    k,
                    n.list(&kf.list[..c as usize]),
                    n.txn(to),
                    wtxt(w),
                    s
                ),
            ),
            (Role::Read(c), Some(Role::Unseen(w))) => (
                "rw",
                format!(
                    "{} read key {} as {}, which misses {}'s append of {}",
                    n.txn(from),
                    k,
                    n.list(&kf.list[..c as usize]),
                    n.txn(to),
                    wtxt(w)
                ),
            ),
            (Role::Read(c), Some(Role::Read(c2))) => (
                "rw+wr",
                format!(
                    "{} read key {} as {}, before {} read the longer {}",
                    n.txn(from),
                    k,
                    n.list(&kf.list[..c as usize]),
                    n.txn(to),
                    n.list(&kf.list[..c2 as usize])
                ),
            ),
            (Role::Write(s, w), _) => (
                "ww",
                format!(
                    "{} appended {} to key {} at position {}, before {}",
                    n.txn(from),
                    wtxt(w),
                    k,
                    s,
                    n.txn(to)
                ),
            ),
            (Role::Read(c), _) => (
                "rw",
                format!(
                    "{} read key {} at length {}, before {}",
                    n.txn(from),
                    k,
                    c,
                    n.txn(to)
                ),
            ),
            (Role::Unseen(w), _) => (
                "ww",
                format!(
                    "{} appended {} to key {} after every read of it, before {}",
                    n.txn(from),
                    wtxt(w),
                    k,
                    n.txn(to)
                ),
            ),
        };
        (rel, text, Some(key))
    }
}

#[derive(Clone, Copy, Debug)]
enum Role {
    Read(u32),
    /// Start position and writer.
    Write(u32, u32),
    Unseen(u32),
}

#[derive(Clone, Copy, Debug)]
enum Conflict {
    Lin(u32),
    Var(u32),
    Clause(u32),
}

/// Encodes `Σ wᵢ·xᵢ = target` (if `enable`) as a decision diagram over the
/// prefix sums; returns false if the solver became unsatisfiable.
fn encode_eq<Cb: Callbacks>(
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

/// A graph in compressed form, with a topological order.
struct Csr<'g> {
    order: &'g [u32],
    out_off: &'g [u32],
    out_adj: &'g [u32],
    in_off: &'g [u32],
    in_adj: &'g [u32],
}

/// A barrier index as stored in the pruning lanes (narrow ones fit more
/// lanes in a pass).
trait Lane: Copy + Ord {
    const MAX: Self;
    const ZERO: Self;
    fn of(x: u32) -> Self;
    /// The lane-wise minimum of `rows[w]` over `ws` (`MAX` if none),
    /// kept out of line so that it compiles to vector instructions.
    #[inline(never)]
    fn fold_min<const L: usize>(rows: &[[Self; L]], ws: &[u32]) -> [Self; L] {
        let mut m = [Self::MAX; L];
        for &w in ws {
            let f = &rows[w as usize];
            for j in 0..L {
                m[j] = if f[j] < m[j] { f[j] } else { m[j] };
            }
        }
        m
    }
    /// The lane-wise maximum of `rows[w]` over `ws` (`ZERO` if none).
    #[inline(never)]
    fn fold_max<const L: usize>(rows: &[[Self; L]], ws: &[u32]) -> [Self; L] {
        let mut m = [Self::ZERO; L];
        for &w in ws {
            let f = &rows[w as usize];
            for j in 0..L {
                m[j] = if f[j] > m[j] { f[j] } else { m[j] };
            }
        }
        m
    }
}

impl Lane for u16 {
    const MAX: u16 = u16::MAX;
    const ZERO: u16 = 0;
    fn of(x: u32) -> u16 {
        x as u16
    }
}

impl Lane for u32 {
    const MAX: u32 = u32::MAX;
    const ZERO: u32 = 0;
    fn of(x: u32) -> u32 {
        x
    }
}

/// Stops the SAT search at a deadline.
struct Deadline {
    at: Instant,
}

impl Deadline {
    fn new(start: Instant, ms: u64) -> Self {
        Deadline {
            at: start + std::time::Duration::from_millis(ms),
        }
    }
}

impl Callbacks for Deadline {
    fn stop(&self) -> bool {
        Instant::now() >= self.at
    }
}

/// The most the theory raises its [`Limits::reorder_limit`] to: each cycle
/// found only at the final check doubles it.
const MAX_REORDER_LIMIT: usize = 32_768;

/// The acyclicity theory: each true literal adds its edges; an edge that
/// would close a cycle raises the cycle's literals as a conflict clause.
struct Acyclic {
    dag: Dag,
    /// Edges of solver variable i: `flat[off[i]..off[i+1]]`.
    off: Vec<u32>,
    flat: Vec<(u32, u32)>,
    /// Solver variable index → our variable id.
    from_sat: Vec<u32>,
    processed: usize,
    levels: Vec<(usize, usize)>,
    /// Most nodes to visit to add an edge at once ([`Limits::reorder_limit`]).
    reorder_limit: usize,
    /// Edges too costly to add at once: (from, to, solver variable, trail
    /// position of its literal). Checked when every literal is decided.
    pending: Vec<(u32, u32, u32, usize)>,
    /// A few cycles met, for explanations.
    cycles: Vec<Vec<(u32, u32, u32)>>,
}

impl Acyclic {
    /// Adds the edges of the newly true literals; raises a conflict on the
    /// first cycle.
    fn check(&mut self, acts: &mut TheoryArg) {
        let model_len = acts.model().len();
        while self.processed < model_len {
            let l = acts.model()[self.processed];
            let vi = l.var().idx() as usize;
            if l.sign() && vi + 1 < self.off.len() {
                let (s, e) = (self.off[vi] as usize, self.off[vi + 1] as usize);
                for i in s..e {
                    let (a, b) = self.flat[i];
                    match self.dag.add_within(a, b, vi as u32, self.reorder_limit) {
                        Ok(()) => {}
                        Err(Refused::TooFar) => {
                            self.pending.push((a, b, vi as u32, self.processed))
                        }
                        Err(Refused::Cycle(cyc)) => {
                            self.conflict(acts, &cyc);
                            return;
                        }
                    }
                }
            }
            self.processed += 1;
        }
    }

    /// Raises the cycle `cyc` (edges tagged by solver variables, or
    /// forced) as a conflict: not all of its literals can hold.
    fn conflict(&mut self, acts: &mut TheoryArg, cyc: &[(u32, u32, u32)]) {
        let mut lits: Vec<Lit> = cyc
            .iter()
            .filter(|c| c.2 != FORCED)
            .map(|c| !Lit::new(batsat::Var::unsafe_from_idx(c.2), true))
            .collect();
        lits.sort_unstable();
        lits.dedup();
        if self.cycles.len() < 64 {
            let named: Vec<(u32, u32, u32)> = cyc
                .iter()
                .map(|&(a, b, t)| {
                    let t = if t == FORCED {
                        FORCED
                    } else {
                        self.from_sat[t as usize]
                    };
                    (a, b, t)
                })
                .collect();
            self.cycles.push(named);
        }
        acts.raise_conflict(&lits, false);
    }

    /// With every literal decided: the edges left waiting, with the
    /// others, must not close a cycle. One topological sort of the whole
    /// graph; on a cycle, the shortest through one of its edges.
    fn check_pending(&mut self, acts: &mut TheoryArg) {
        if self.pending.is_empty() {
            return;
        }
        let mut edges: Vec<(u32, u32)> = Vec::new();
        let mut tags: Vec<u32> = Vec::new();
        for (a, b, t) in self.dag.all_edges() {
            edges.push((a, b));
            tags.push(t);
        }
        for &(a, b, t, _) in &self.pending {
            edges.push((a, b));
            tags.push(t);
        }
        let n = self.dag.order().len();
        let Err(best) = dag::topo_order_or_short_cycle(n, &edges, 8) else {
            return;
        };
        // A cycle the incremental checks let through costs a pass over the
        // whole graph: from now on, spend more on each edge to catch such
        // cycles when they close (up to `MAX_REORDER_LIMIT`). Only the
        // cost of the search changes: the final check stays complete.
        if self.reorder_limit > 0 {
            self.reorder_limit = (2 * self.reorder_limit).min(MAX_REORDER_LIMIT);
        }
        let cyc: Vec<(u32, u32, u32)> = best
            .iter()
            .map(|&i| (edges[i].0, edges[i].1, tags[i]))
            .collect();
        self.conflict(acts, &cyc);
    }
}

impl Theory for Acyclic {
    fn final_check(&mut self, acts: &mut TheoryArg) {
        self.check(acts);
        if acts.is_ok() {
            self.check_pending(acts);
        }
    }
    fn partial_check(&mut self, acts: &mut TheoryArg) {
        self.check(acts);
    }
    fn create_level(&mut self) {
        self.levels.push((self.processed, self.dag.edges()));
    }
    fn pop_levels(&mut self, n: usize) {
        let mut mark = None;
        for _ in 0..n {
            mark = self.levels.pop();
        }
        if let Some((p, e)) = mark {
            self.processed = p;
            self.dag.undo_to(e);
            self.pending.retain(|x| x.3 < p);
        }
    }
    fn n_levels(&self) -> usize {
        self.levels.len()
    }
    fn explain_propagation(&mut self, _p: Lit) -> &[Lit] {
        &[]
    }
}
