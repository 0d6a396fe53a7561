//! The exact search: choices as SAT variables, acyclicity as the theory,
//! and constraints added lazily from failed replays (counterexample-guided).
//!
//! Each round, the SAT solver (`batsat`, with the acyclicity theory the
//! list-append solver uses) picks which writer each ambiguous read saw,
//! which `info` transactions committed, and the order edges that earlier
//! rounds asked for, keeping the induced graph acyclic. A topological order
//! of that graph is replayed; every read that sees the wrong version names
//! a polygraph constraint the choice broke, which is added as a clause, and
//! the round repeats. Every clause is a necessary condition of every
//! execution the level allows, so "no choice satisfies the clauses" proves
//! the history invalid; a replay without a wrong read is a witness. Each
//! round breaks at least one new clause, so the rounds end.

use super::super::dag::{self, FORCED};
use super::super::solve::theory::{Acyclic, Deadline};
use super::super::{Level, Limits};
use super::facts::{Facts, INIT, NIL};
use crate::history::{History, Outcome, TxnId};
use crate::proof::{Internal, Reason, RegisterStep, RegisterWhy};
use batsat::{lbool, Lit, SolverInterface};
use rustc_hash::{FxHashMap, FxHashSet};
use std::time::Instant;

const NONE: u32 = u32::MAX;

/// The SAT solver and its theory, kept across rounds.
struct Inc {
    sat: batsat::Solver<Deadline>,
    th: Acyclic,
    /// Variables and clauses already given to `sat`.
    vars: usize,
    clauses: usize,
}

#[derive(Clone, Copy, Debug)]
enum Var {
    Committed,
    /// Read `read` saw candidate `cand` (its writer's wr edge).
    Saw {
        read: u32,
        cand: u32,
    },
    Edge {
        from: u32,
        to: u32,
        why: RegisterWhy,
    },
}

/// What the search ended with.
pub enum Found {
    /// The committed transactions in serial (SI: commit) order, and for SI
    /// how many of them committed before each one started.
    Valid {
        order: Vec<TxnId>,
        snapshots: Option<Vec<u32>>,
    },
    /// The cycle (steps between transactions, each with why) and whether
    /// no choice was involved at all.
    Invalid {
        cycle: Vec<RegisterStep>,
        forced: bool,
    },
    Unknown(Reason),
}

pub struct Search<'a> {
    h: &'a History,
    level: Level,
    facts: &'a Facts,
    limits: &'a Limits,
    start: Instant,
    si: bool,
    n_nodes: u32,
    forced: Vec<(u32, u32, RegisterWhy)>,
    vars: Vec<Var>,
    edge_var: FxHashMap<(u32, u32), u32>,
    clauses: Vec<Vec<(u32, bool)>>,
    /// Per transaction: its `Committed` variable (`info` writers only).
    committed: Vec<u32>,
    /// Per read: one `Saw` variable per candidate (empty when only one).
    saw: Vec<Vec<u32>>,
    /// Reads of each transaction, by index into `facts.reads`.
    reads_of: Vec<Vec<u32>>,
    asked: FxHashSet<(u32, u32, u32)>,
    /// The last model's values, for phases.
    val: Vec<bool>,
    inc: Option<Inc>,
    pub rounds: u32,
}

impl<'a> Search<'a> {
    pub fn new(
        h: &'a History,
        level: Level,
        facts: &'a Facts,
        limits: &'a Limits,
        start: Instant,
    ) -> Self {
        let n = h.txns.len() as u32;
        let si = level == Level::SnapshotIsolation;
        let mut s = Search {
            h,
            level,
            facts,
            limits,
            start,
            si,
            n_nodes: if si { 2 * n } else { n },
            forced: Vec::new(),
            vars: Vec::new(),
            edge_var: FxHashMap::default(),
            clauses: Vec::new(),
            committed: vec![NONE; n as usize],
            saw: vec![Vec::new(); facts.reads.len()],
            reads_of: vec![Vec::new(); n as usize],
            asked: FxHashSet::default(),
            val: Vec::new(),
            inc: None,
            rounds: 0,
        };
        for (t, txn) in h.txns.iter().enumerate() {
            if txn.outcome == Outcome::Info && !facts.writes_of[t].is_empty() {
                s.committed[t] = s.new_var(Var::Committed);
            }
            if si {
                s.forced
                    .push((2 * t as u32, 2 * t as u32 + 1, RegisterWhy::Span));
            }
        }
        for (i, r) in facts.reads.iter().enumerate() {
            s.reads_of[r.txn as usize].push(i as u32);
            if r.cands.len() == 1 {
                let w = r.cands[0];
                if w != INIT {
                    let (a, b) = s.wr_edge(w, r.txn);
                    s.forced.push((a, b, RegisterWhy::Wr { key: r.key }));
                    if s.committed[w as usize] != NONE {
                        s.clauses.push(vec![(s.committed[w as usize], true)]);
                    }
                }
                continue;
            }
            let mut any = Vec::new();
            for c in 0..r.cands.len() as u32 {
                let v = s.new_var(Var::Saw {
                    read: i as u32,
                    cand: c,
                });
                s.saw[i].push(v);
                any.push((v, true));
                let w = r.cands[c as usize];
                if w != INIT && s.committed[w as usize] != NONE {
                    s.clauses
                        .push(vec![(v, false), (s.committed[w as usize], true)]);
                }
            }
            // First guess: the candidate that completed last before the
            // reader did (the version a database would most likely show).
            let done = |t: TxnId| -> u64 {
                if t == INIT {
                    0
                } else {
                    h.txns[t as usize].complete_seq.unwrap_or(u64::MAX)
                }
            };
            let by = done(r.txn);
            let guess = (0..r.cands.len())
                .filter(|&c| done(r.cands[c]) < by)
                .max_by_key(|&c| done(r.cands[c]))
                .or_else(|| (0..r.cands.len()).min_by_key(|&c| done(r.cands[c])));
            if let Some(c) = guess {
                let v = s.saw[i][c] as usize;
                s.val[v] = true;
            }
            s.clauses.push(any);
        }
        if level == Level::StrictSerializable && h.has_invocations {
            s.realtime();
        }
        s
    }

    fn new_var(&mut self, v: Var) -> u32 {
        self.vars.push(v);
        self.val.push(false);
        (self.vars.len() - 1) as u32
    }

    fn start_node(&self, t: TxnId) -> u32 {
        if self.si {
            2 * t
        } else {
            t
        }
    }
    fn commit_node(&self, t: TxnId) -> u32 {
        if self.si {
            2 * t + 1
        } else {
            t
        }
    }
    fn wr_edge(&self, w: TxnId, r: TxnId) -> (u32, u32) {
        (self.commit_node(w), self.start_node(r))
    }
    fn txn_of(&self, node: u32) -> TxnId {
        if self.si {
            node / 2
        } else {
            node
        }
    }

    /// Real-time order in O(n log n) edges: a chain of barriers, one per
    /// `ok` completion in completion order; each completion enters its
    /// barrier, each invocation leaves the last barrier before it.
    fn realtime(&mut self) {
        let h = self.h;
        let mut done: Vec<(u64, TxnId)> = h
            .txns
            .iter()
            .enumerate()
            .filter(|(_, t)| t.outcome == Outcome::Ok)
            .filter_map(|(i, t)| Some((t.complete_seq?, i as TxnId)))
            .collect();
        done.sort_unstable();
        let base = self.n_nodes;
        self.n_nodes += done.len() as u32;
        for (i, &(_, t)) in done.iter().enumerate() {
            self.forced
                .push((t, base + i as u32, RegisterWhy::Realtime));
            if i > 0 {
                self.forced
                    .push((base + i as u32 - 1, base + i as u32, RegisterWhy::Realtime));
            }
        }
        for (u, txn) in h.txns.iter().enumerate() {
            if txn.outcome == Outcome::Fail {
                continue;
            }
            let Some(inv) = txn.invoke_seq else { continue };
            let before = done.partition_point(|&(c, _)| c < inv);
            if before > 0 {
                self.forced
                    .push((base + before as u32 - 1, u as u32, RegisterWhy::Realtime));
            }
        }
    }

    /// The variable whose truth adds `from → to`.
    fn edge(&mut self, from: u32, to: u32, why: RegisterWhy) -> u32 {
        if let Some(&v) = self.edge_var.get(&(from, to)) {
            return v;
        }
        let v = self.new_var(Var::Edge { from, to, why });
        self.edge_var.insert((from, to), v);
        // First guess: the edge holds when it agrees with the history's
        // own order (databases mostly commit in about the order they
        // answer), so the first models need few repairs.
        self.val[v as usize] = self.event(from) < self.event(to);
        v
    }

    /// A node's place in the history: a transaction's completion (its
    /// invocation for an SI start node); barrier nodes come last.
    fn event(&self, node: u32) -> u64 {
        let n = self.h.txns.len() as u32;
        let t = if self.si { node / 2 } else { node };
        if t >= n {
            return u64::MAX;
        }
        let txn = &self.h.txns[t as usize];
        let inv = txn.invoke_seq.unwrap_or(txn.index.max(0) as u64);
        if self.si && node.is_multiple_of(2) {
            inv
        } else {
            txn.complete_seq.unwrap_or(u64::MAX - 1).max(inv)
        }
    }

    fn is_committed(&self, t: TxnId) -> bool {
        match self.h.txns[t as usize].outcome {
            Outcome::Ok => true,
            Outcome::Fail => false,
            Outcome::Info => {
                let c = self.committed[t as usize];
                c != NONE && self.val[c as usize]
            }
        }
    }

    /// The candidate read `i` saw in the current model.
    fn seen(&self, i: usize) -> TxnId {
        let r = &self.facts.reads[i];
        match self.saw[i].iter().position(|&v| self.val[v as usize]) {
            Some(c) => r.cands[c],
            None => r.cands[0],
        }
    }

    pub fn run(&mut self) -> Found {
        let mut order: Vec<u32> = (0..self.n_nodes).collect();
        loop {
            self.rounds += 1;
            match self.solve(&order) {
                Ok(o) => order = o,
                Err(f) => return f,
            }
            let Some(nodes) = self.replay_order() else {
                return Found::Unknown(Reason::Internal(Internal::ChoiceLeftCycle));
            };
            let asked_before = self.clauses.len();
            let result = if self.si {
                self.replay_si(&nodes)
            } else {
                self.replay_serial(&nodes)
            };
            if let Some(found) = result {
                return found;
            }
            if self.clauses.len() == asked_before {
                return Found::Unknown(Reason::Internal(Internal::ReplayNamedNothing));
            }
            if self.start.elapsed().as_millis() as u64 >= self.limits.time_ms
                || self.limits.cancelled()
            {
                return Found::Unknown(Reason::TimeInSearch {
                    ms: self.limits.time_ms,
                    rounds: Some(self.rounds),
                    conflicts: None,
                });
            }
        }
    }

    /// The edges variable `v` adds when true.
    fn var_edges(&self, v: usize, out: &mut Vec<(u32, u32)>) {
        out.clear();
        match self.vars[v] {
            Var::Saw { read, cand } => {
                let r = &self.facts.reads[read as usize];
                let w = r.cands[cand as usize];
                if w != INIT {
                    out.push(self.wr_edge(w, r.txn));
                }
            }
            Var::Edge { from, to, .. } => out.push((from, to)),
            Var::Committed => {}
        }
    }

    /// One SAT call over every clause so far, on one solver that grows
    /// between rounds (learnt clauses and the theory's order carry over):
    /// a topological order of the graph the model induces, or the end.
    fn solve(&mut self, order: &[u32]) -> Result<Vec<u32>, Found> {
        let mut inc = match self.inc.take() {
            Some(i) => i,
            None => {
                let sat = batsat::Solver::new(
                    batsat::SolverOpts::default(),
                    Deadline::new(self.start, self.limits),
                );
                // The theory starts from a topological order of the forced
                // edges, nearest `order`: adding them to any other order
                // moves nodes for each (real time's barriers alone made
                // that quadratic: 100k transactions took over a minute).
                let mut rank = vec![0u64; order.len()];
                for (i, &v) in order.iter().enumerate() {
                    rank[v as usize] = i as u64;
                }
                let edges: Vec<(u32, u32)> = self.forced.iter().map(|&(a, b, _)| (a, b)).collect();
                let Some(start) =
                    dag::priority_order(self.n_nodes as usize, &edges, |v| rank[v as usize])
                else {
                    return Err(self.forced_cycle());
                };
                let mut th = Acyclic::new(
                    &start,
                    vec![0],
                    Vec::new(),
                    Vec::new(),
                    self.limits.reorder_limit,
                );
                for &(a, b, _) in &self.forced {
                    if th.dag.add(a, b, FORCED).is_err() {
                        return Err(self.forced_cycle());
                    }
                }
                Inc {
                    sat,
                    th,
                    vars: 0,
                    clauses: 0,
                }
            }
        };
        let mut buf = Vec::new();
        for v in inc.vars..self.vars.len() {
            let pol = if self.val[v] {
                lbool::TRUE
            } else {
                lbool::FALSE
            };
            let sv = inc.sat.new_var(pol, true);
            debug_assert_eq!(sv.idx() as usize, v);
            self.var_edges(v, &mut buf);
            inc.th.push_var(&buf, v as u32);
        }
        inc.vars = self.vars.len();
        let lit = |v: u32, pos: bool| Lit::new(batsat::Var::unsafe_from_idx(v), pos);
        let mut ok = true;
        let mut cl: Vec<Lit> = Vec::new();
        for c in &self.clauses[inc.clauses..] {
            cl.clear();
            cl.extend(c.iter().map(|&(v, pos)| lit(v, pos)));
            ok &= inc.sat.add_clause_reuse(&mut cl);
        }
        inc.clauses = self.clauses.len();
        if !ok {
            return Err(self.unsat(&[]));
        }
        let r = inc.sat.solve_limited_th(&mut inc.th, &[]);
        let out = if r == lbool::TRUE {
            let model = inc.sat.get_model();
            for (v, x) in self.val.iter_mut().enumerate() {
                *x = model[v] == lbool::TRUE;
            }
            Ok(inc.th.dag.order().to_vec())
        } else if r == lbool::FALSE {
            let cycles = std::mem::take(&mut inc.th.cycles);
            Err(self.unsat(&cycles))
        } else {
            Err(Found::Unknown(Reason::TimeInSearch {
                ms: self.limits.time_ms,
                rounds: Some(self.rounds),
                conflicts: Some(inc.sat.num_conflicts()),
            }))
        };
        self.inc = Some(inc);
        out
    }

    /// The model's graph in an order that follows the history where it can
    /// (invocations first, completions last), for witnesses that read well.
    fn replay_order(&self) -> Option<Vec<u32>> {
        let mut edges: Vec<(u32, u32)> = self.forced.iter().map(|e| (e.0, e.1)).collect();
        for (v, var) in self.vars.iter().enumerate() {
            if !self.val[v] {
                continue;
            }
            match *var {
                Var::Saw { read, cand } => {
                    let r = &self.facts.reads[read as usize];
                    let w = r.cands[cand as usize];
                    if w != INIT {
                        edges.push(self.wr_edge(w, r.txn));
                    }
                }
                Var::Edge { from, to, .. } => edges.push((from, to)),
                Var::Committed => {}
            }
        }
        let h = self.h;
        let n = h.txns.len() as u32;
        let si = self.si;
        let prio = |v: u32| -> u64 {
            let t = if si { v / 2 } else { v };
            if t >= n {
                return u64::MAX / 2;
            }
            let txn = &h.txns[t as usize];
            let inv = txn.invoke_seq.unwrap_or(txn.index.max(0) as u64);
            let done = txn.complete_seq.unwrap_or(inv);
            if si && v.is_multiple_of(2) {
                2 * inv
            } else {
                2 * done.max(inv) + 1
            }
        };
        dag::priority_order(self.n_nodes as usize, &edges, prio)
    }

    /// Serial replay: a wrong read asks that its writer's successor be
    /// ordered before the writer or after the reader (Papadimitriou's
    /// polygraph constraint).
    fn replay_serial(&mut self, nodes: &[u32]) -> Option<Found> {
        let nk = self.h.keys.len();
        let mut state: Vec<(u32, TxnId)> = vec![(NIL, INIT); nk];
        let mut order = Vec::new();
        let mut wrong = Vec::new();
        for &v in nodes {
            if v >= self.h.txns.len() as u32 || !self.is_committed(v) {
                continue;
            }
            order.push(v);
            for &i in &self.reads_of[v as usize] {
                let r = &self.facts.reads[i as usize];
                let (ver, by) = state[r.key as usize];
                if ver != r.ver {
                    wrong.push((i, self.seen(i as usize), by));
                }
            }
            for &(k, ver) in &self.facts.writes_of[v as usize] {
                state[k as usize] = (ver, v);
            }
        }
        if wrong.is_empty() {
            return Some(Found::Valid {
                order,
                snapshots: None,
            });
        }
        for (i, w, by) in wrong {
            self.ask_read(i, w, by);
        }
        None
    }

    /// Snapshot replay over start and commit events: a wrong read asks as
    /// in [`Self::replay_serial`] with commits and starts; two writers of
    /// a key that overlap ask that one commit before the other starts.
    fn replay_si(&mut self, nodes: &[u32]) -> Option<Found> {
        let nk = self.h.keys.len();
        let n = self.h.txns.len() as u32;
        // Per key: (commit number, version, writer), in commit order.
        let mut versions: Vec<Vec<(u32, u32, TxnId)>> = vec![Vec::new(); nk];
        let mut snap = vec![0u32; n as usize];
        let mut commits = 0u32;
        let mut order = Vec::new();
        let mut snaps = Vec::new();
        let mut wrong = Vec::new();
        let mut overlap = Vec::new();
        for &v in nodes {
            let t = v / 2;
            if t >= n || !self.is_committed(t) {
                continue;
            }
            if v.is_multiple_of(2) {
                snap[t as usize] = commits;
                continue;
            }
            let s = snap[t as usize];
            for &i in &self.reads_of[t as usize] {
                let r = &self.facts.reads[i as usize];
                let vs = &versions[r.key as usize];
                let at = vs.partition_point(|x| x.0 < s);
                let (ver, by) = if at == 0 {
                    (NIL, INIT)
                } else {
                    (vs[at - 1].1, vs[at - 1].2)
                };
                if ver != r.ver {
                    wrong.push((i, self.seen(i as usize), by));
                }
            }
            for &(k, ver) in &self.facts.writes_of[t as usize] {
                if let Some(&(c, _, w)) = versions[k as usize].last() {
                    if c >= s {
                        overlap.push((w, t, k));
                    }
                }
                versions[k as usize].push((commits, ver, t));
            }
            order.push(t);
            snaps.push(s);
            commits += 1;
        }
        if wrong.is_empty() && overlap.is_empty() {
            return Some(Found::Valid {
                order,
                snapshots: Some(snaps),
            });
        }
        for (i, w, by) in wrong {
            self.ask_read(i, w, by);
        }
        for (a, b, k) in overlap {
            if !self.asked.insert((NONE - 1, a.min(b), a.max(b))) {
                continue;
            }
            let mut c = Vec::new();
            for t in [a, b] {
                if self.committed[t as usize] != NONE {
                    c.push((self.committed[t as usize], false));
                }
            }
            let why = RegisterWhy::Ww { key: k };
            let e1 = self.edge(self.commit_node(a), self.start_node(b), why);
            let e2 = self.edge(self.commit_node(b), self.start_node(a), why);
            c.push((e1, true));
            c.push((e2, true));
            self.clauses.push(c);
        }
        None
    }

    /// Read `i` saw writer `w` but the replay showed `by`'s version: `by`
    /// must come before `w`, or after the reader's snapshot.
    fn ask_read(&mut self, i: u32, w: TxnId, by: TxnId) {
        if by == INIT || !self.asked.insert((i, w, by)) {
            return;
        }
        let facts = self.facts;
        let r = &facts.reads[i as usize];
        let (reader, key) = (r.txn, r.key);
        let mut c = Vec::new();
        if let Some(c0) = r.cands.iter().position(|&x| x == w) {
            if let Some(&sv) = self.saw[i as usize].get(c0) {
                c.push((sv, false));
            }
        }
        if self.committed[by as usize] != NONE {
            c.push((self.committed[by as usize], false));
        }
        if w != INIT {
            let e = self.edge(
                self.commit_node(by),
                self.commit_node(w),
                RegisterWhy::Ww { key },
            );
            c.push((e, true));
        }
        let e = self.edge(
            self.start_node(reader),
            self.commit_node(by),
            RegisterWhy::Rw { key },
        );
        c.push((e, true));
        self.clauses.push(c);
    }

    fn why_of(&self, a: u32, b: u32, tag: u32) -> RegisterWhy {
        if tag == FORCED {
            return self
                .forced
                .iter()
                .find(|e| e.0 == a && e.1 == b)
                .map_or(RegisterWhy::Realtime, |e| e.2);
        }
        match self.vars[tag as usize] {
            Var::Saw { read, .. } => RegisterWhy::Wr {
                key: self.facts.reads[read as usize].key,
            },
            Var::Edge { why, .. } => why,
            Var::Committed => RegisterWhy::Realtime,
        }
    }

    /// A cycle as transaction steps: barrier nodes and start/commit halves
    /// folded into the transactions they stand for.
    fn fold(&self, cyc: &[(u32, u32, u32)]) -> Vec<RegisterStep> {
        let n = self.h.txns.len() as u32;
        let mut out: Vec<RegisterStep> = Vec::new();
        let mut pending: Option<TxnId> = None;
        for &(a, b, tag) in cyc {
            let why = self.why_of(a, b, tag);
            if why == RegisterWhy::Span {
                continue;
            }
            let ta = self.txn_of(a);
            let tb = self.txn_of(b);
            let from = if ta < n { ta } else { pending.unwrap_or(ta) };
            if tb >= n {
                // Into a barrier: remember who entered it.
                if ta < n {
                    pending = Some(ta);
                }
                continue;
            }
            out.push(RegisterStep { from, to: tb, why });
            pending = None;
        }
        // A cycle that starts inside the barrier chain: its first step's
        // source is the last transaction that entered.
        if let (Some(p), Some(first)) = (pending, out.first_mut()) {
            if first.from >= n {
                first.from = p;
            }
        }
        out
    }

    fn forced_cycle(&self) -> Found {
        let edges: Vec<(u32, u32)> = self.forced.iter().map(|e| (e.0, e.1)).collect();
        match dag::topo_order_or_short_cycle(self.n_nodes as usize, &edges, 8) {
            Ok(_) => Found::Unknown(Reason::Internal(Internal::ForcedGraphAcyclic)),
            Err(idx) => {
                let cyc: Vec<(u32, u32, u32)> = idx
                    .iter()
                    .map(|&i| (edges[i].0, edges[i].1, FORCED))
                    .collect();
                Found::Invalid {
                    cycle: self.fold(&cyc),
                    forced: true,
                }
            }
        }
    }

    fn unsat(&self, cycles: &[Vec<(u32, u32, u32)>]) -> Found {
        let best = cycles.iter().min_by_key(|c| c.len());
        Found::Invalid {
            cycle: best.map(|c| self.fold(c)).unwrap_or_default(),
            forced: false,
        }
    }

    pub fn level(&self) -> Level {
        self.level
    }
}
