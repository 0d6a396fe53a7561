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
//!
//! One file per step: [`encode`] (choices as variables, their edges, the
//! constraints, and the equalities as SAT clauses), [`propagate`] (what is
//! forced, the forced graph), [`prune`], [`theory`] (acyclicity for the SAT
//! solver, the deadline), [`finding`] (findings and their typed proofs). This file
//! holds the [`Solver`] and the driver: the order of the steps, the replay
//! that seeds the search, and the SAT call.

mod encode;
mod finding;
mod propagate;
mod prune;
pub(crate) mod single;
pub(crate) mod theory;

use super::dag::{self, FORCED};
use super::problem::{BinKind, KeyFacts};
use super::windows::Windows;
use super::{Level, Limits};
use crate::history::{History, Outcome, TxnId};
use crate::proof::{Internal, Reason};
use batsat::{lbool, Lit, SolverInterface};
use encode::encode_eq;
use rustc_hash::FxHashMap;
use std::time::Instant;
use theory::{Acyclic, Deadline};

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

/// Why a forced edge holds (for proofs).
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
    Unknown(Reason),
}

/// A reason for invalidity found by the solver: the record every level's
/// verdict carries (one type, so the driver hands it on as it is).
pub use super::DupAnomaly as Finding;

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

    /// Whether each block of a uniform run gets its own place (SI, for
    /// first committer wins; consistent view, for who anti-depends on
    /// whom) rather than the run as a whole.
    fn positional(&self) -> bool {
        self.two || self.level == Level::ConsistentView
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
        if self.level == Level::ConsistentView {
            if let Err(e) = self.build_cv_orders() {
                return Outcome2::Unknown(e);
            }
            if let Err(c) = self.propagate() {
                return Outcome2::Invalid(self.explain_conflict(c));
            }
            // A G-single through edges every choice has settles it.
            let edges = self.forced_graph();
            let plain: Vec<(u32, u32)> = edges.iter().map(|e| (e.0, e.1)).collect();
            let reads = self.key_reads();
            if let Some(f) = single::find(self.nodes as usize, &plain, &reads) {
                let path = f.path.iter().map(|&i| edges[i]).collect();
                let cyc = self.single_cycle(&reads[f.key], f.reader, f.from, path);
                return Outcome2::Invalid(self.describe_single(&cyc));
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
                        let exact = self.positional()
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
                let exact = self.positional()
                    || self.keys[key as usize].bins[bin as usize].kind == BinKind::Exact;
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

    // ---- SAT ----

    fn sat(&mut self, order: &[u32], guess: &[i8]) -> Outcome2 {
        let mut sat = batsat::Solver::new(
            batsat::SolverOpts::default(),
            Deadline::new(self.start, self.limits),
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
        let mut th = Acyclic::new(
            order,
            off,
            flat,
            from_sat.clone(),
            self.limits.reorder_limit,
        );
        // Forced edges are in the initial order already; add them for real.
        for (a, b, _) in self.forced_graph() {
            if th.dag.add(a, b, FORCED).is_err() {
                return Outcome2::Unknown(Reason::Internal(Internal::ForcedGraphCyclic));
            }
        }
        let mut singles = Vec::new();
        let r = if self.level == Level::ConsistentView {
            let mut st =
                single::Single::new(th, self.key_reads(), self.nodes as usize, from_sat.clone());
            let r = sat.solve_limited_th(&mut st, &[]);
            singles = std::mem::take(&mut st.cycles);
            th = st.acyclic;
            r
        } else {
            sat.solve_limited_th(&mut th, &[])
        };
        self.stats.conflicts = sat.num_conflicts();
        if r == lbool::TRUE {
            let model: Vec<lbool> = sat.get_model().to_vec();
            for (i, &v) in from_sat.iter().enumerate() {
                self.val[v as usize] = (model[i] == lbool::TRUE) as i8;
            }
            self.finish()
        } else if r == lbool::FALSE {
            let mut cycles = std::mem::take(&mut th.cycles);
            cycles.extend(singles);
            Outcome2::Invalid(self.unsat_finding(&cycles))
        } else {
            Outcome2::Unknown(Reason::TimeInSearch {
                ms: self.limits.time_ms,
                rounds: None,
                conflicts: Some(sat.num_conflicts()),
            })
        }
    }

    /// Each key's readers, for the G-single check ([`single`]).
    fn key_reads(&self) -> Vec<single::KeyReads> {
        self.keys
            .iter()
            .enumerate()
            .map(|(k, kf)| single::KeyReads {
                base: self.base[k],
                len: kf.list.len() as u32,
                readers: kf.readers.iter().map(|r| (self.st(r.txn), r.cut)).collect(),
            })
            .collect()
    }

    /// A G-single found in the forced graph as a cycle of explained edges:
    /// the reader's anti-dependency, then the path back.
    fn single_cycle(
        &self,
        k: &single::KeyReads,
        reader: usize,
        from: u32,
        path: Vec<(u32, u32, Why)>,
    ) -> Vec<(u32, u32, Why)> {
        let ki = self.base.iter().position(|&b| b == k.base).unwrap_or(0) as u32;
        let tagged: Vec<(u32, u32, u32)> = path.iter().map(|e| (e.0, e.1, FORCED)).collect();
        let cyc = single::cycle_of(k, reader, from, tagged);
        let head = cyc.len() - path.len();
        cyc.iter()
            .enumerate()
            .map(|(i, &(a, b, _))| {
                if i >= head {
                    path[i - head]
                } else if i == 0 {
                    (
                        a,
                        b,
                        Why::Read {
                            key: ki,
                            reader: reader as u32,
                        },
                    )
                } else {
                    (a, b, Why::Chain { key: ki })
                }
            })
            .collect()
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
            Err(_) => Outcome2::Unknown(Reason::Internal(Internal::ChoiceLeftCycle)),
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Conflict {
    Lin(u32),
    Var(u32),
    Clause(u32),
}
