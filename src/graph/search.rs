//! Cycle search: in each strongly connected component, the shortest cycle
//! of exactly each requested class (Elle's `elle.txn/cycle-cases-in-scc`).
//!
//! Per component, classes are tried in the caller's order (Elle: most
//! severe first); a class the hooks call redundant once another is found
//! there is skipped (the checker's hooks only name classes no requested
//! model prohibits), and so is a class whose relations form no cycle in the
//! component. One class search:
//! 1. restricts the component to the edges whose explained relation the
//!    class allows, and splits it into sub-components;
//! 2. rotates every candidate cycle to start with an *anchor* edge (a
//!    relation every cycle of the class has: rw for the rw classes, wr for
//!    G1c, ww or the process/real-time edge for G0), so a small automaton
//!    over the step relations (see `class.rs`) decides the class exactly,
//!    wrap-around adjacency included;
//! 3. proves which anchor heads can close a cycle at all, for 64 heads at a
//!    time, by propagating bit masks over the condensation of the (vertex,
//!    state) product graph: near-linear where one BFS per head would be
//!    quadratic;
//! 4. runs a BFS over (vertex, state) from each feasible head, bounded by
//!    the best length so far; the first accepted closure is the shortest walk
//!    through that head;
//! 5. when that walk repeats a vertex (possible when a shorter cycle of a
//!    different class hides inside it), falls back to an exact bounded DFS
//!    over simple paths for that head (pruned by distance to closure in the
//!    product).
//!
//! Work is bounded by a per-class budget of edge steps and by deadlines;
//! a cut-off search reports Elle's `cycle-search-timeout` shape.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rustc_hash::FxHashSet;

use super::class::{Automaton, CycleClass, ExplainOrder, DEAD};
use super::scc::{sccs, shortest_cycle_through, Succ, Tarjan};
use super::{classify, DepGraph, Rels};

const NONE: u32 = u32::MAX;

/// A cycle: `txns = [t0, t1, .., tn]` with `tn == t0`, and `steps[i]` the one
/// relation explaining `txns[i] → txns[i+1]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    pub txns: Vec<u32>,
    pub steps: Vec<Rels>,
}

impl Cycle {
    /// The cycle through `txns` (closed: last == first), each step explained
    /// by `order`; `None` if some step has no edge in `g`.
    pub fn from_txns(g: &DepGraph, order: &ExplainOrder, txns: &[u32]) -> Option<Cycle> {
        if txns.len() < 2 || txns.first() != txns.last() {
            return None;
        }
        let steps = txns
            .windows(2)
            .map(|w| Some(order.explain(g.edge(w[0], w[1]))).filter(|r| !r.is_empty()))
            .collect::<Option<Vec<_>>>()?;
        Some(Cycle {
            txns: txns.to_vec(),
            steps,
        })
    }

    /// Number of steps.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Elle's name for this cycle.
    pub fn class(&self) -> Option<CycleClass> {
        classify(&self.steps)
    }
}

/// A cycle found by a class search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundCycle {
    pub class: CycleClass,
    pub cycle: Cycle,
    /// False when the work bound cut the search after this cycle was found,
    /// so a shorter one of the class might exist.
    pub shortest: bool,
}

/// A class search that hit its bound before finding anything (Elle's
/// `:cycle-search-timeout`). The component's remaining classes were not
/// searched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeout {
    /// Elle's `:anomaly-spec-type`.
    pub class: CycleClass,
    /// Classes fully searched before, without a cycle (`:does-not-contain`).
    pub does_not_contain: Vec<CycleClass>,
    pub scc_size: usize,
    /// Some cycle of the component, so the report can still show one (Elle's
    /// fallback); named by [`classify`] (`None` only if it has no data step).
    pub fallback: Cycle,
    pub fallback_class: Option<CycleClass>,
}

/// A cycle-exists result recorded by [`SearchHooks::prepare`]: `spec` is the
/// caller's own index, `txns` the sorted members of the cyclic component.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CycleExistsHit {
    pub spec: usize,
    pub txns: Vec<u32>,
}

/// What [`SearchHooks::prepare`] decides for one component.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SccPrep {
    /// Classes not to search here (Elle: those the models surviving the
    /// cycle-exists pass prohibit).
    pub skip: Vec<CycleClass>,
    /// Cycle-exists findings to carry into the report.
    pub cycle_exists: Vec<CycleExistsHit>,
}

/// What the search asks of the consistency-model lattice. The graph module
/// knows no models; the checker implements this over `crate::model`.
pub trait SearchHooks: Sync {
    /// Called once per component before its search.
    fn prepare(&self, _scc: &SccView<'_>) -> SccPrep {
        SccPrep::default()
    }
    /// Classes that finding `class` in a component makes redundant there
    /// (Elle's `all-implied-anomalies`).
    fn implied(&self, _class: CycleClass) -> Vec<CycleClass> {
        Vec::new()
    }
}

/// No lattice: search every requested class in every component.
pub struct NoHooks;
impl SearchHooks for NoHooks {}

/// One strongly connected component, for [`SearchHooks::prepare`].
pub struct SccView<'a> {
    local: &'a Local,
    /// The thread's reusable pass states (`cyclic_scc` takes `&self`).
    tarjan: RefCell<&'a mut Tarjan>,
    peel: RefCell<&'a mut Peel>,
}

impl SccView<'_> {
    /// Sorted members.
    /// Every relation on some edge of the component.
    pub fn rels(&self) -> Rels {
        self.local.present
    }

    pub fn txns(&self) -> &[u32] {
        &self.local.verts
    }

    /// The smallest cyclic component of this component's subgraph: edges
    /// carrying a relation in `a` when `b` is `None` (Elle's `[:union ..]`),
    /// or `A ∪ (A ; B)` when `b` is `Some` (Elle's `[:extension A B]`: a
    /// step of A, optionally followed by one step of B; there a composed
    /// self-edge `x →A y →B x` makes `{x}` cyclic). Sorted members, ties
    /// broken by smallest member.
    pub fn cyclic_scc(&self, a: Rels, b: Option<Rels>) -> Option<Vec<u32>> {
        let l = self.local;
        let m = l.verts.len();
        // Relations absent from the component change nothing; if what is
        // left of A covers every edge, the component is one cycle of A
        // (it is strongly connected), with no Tarjan pass needed.
        let a = a.intersect(l.present);
        let b = b.map(|b| b.intersect(l.present)).filter(|b| !b.is_empty());
        if a.is_empty() || m < 2 {
            return None;
        }
        if a.contains(l.present) {
            let mut all = l.verts.clone();
            all.sort_unstable();
            return Some(all);
        }
        match b {
            // Most unions asked about are acyclic: peeling says so in a
            // fraction of a Tarjan pass, and otherwise trims its roots.
            None => {
                let p = &mut **self.peel.borrow_mut();
                if !p.run(l, a) {
                    return None;
                }
                self.smallest_cyclic(&LocalRaw { l, mask: a }, Some(p))
            }
            Some(b) => self.smallest_cyclic(&Extension { l, a, b }, None),
        }
    }

    /// [`SccView::cyclic_scc`] without shortcuts: Tarjan over the subgraph.
    #[cfg(test)]
    fn cyclic_scc_by_tarjan(&self, a: Rels, b: Option<Rels>) -> Option<Vec<u32>> {
        let l = self.local;
        match b {
            None => self.smallest_cyclic(&LocalRaw { l, mask: a }, None),
            Some(b) => self.smallest_cyclic(&Extension { l, a, b }, None),
        }
    }

    /// The smallest cyclic component of `g` ([`LocalRaw`] or [`Extension`]
    /// over this component), by Tarjan from every plain vertex, or from
    /// those `left` leaves when it peeled `g` (the same components).
    fn smallest_cyclic<G: Succ>(&self, g: &G, left: Option<&Peel>) -> Option<Vec<u32>> {
        let l = self.local;
        let m = l.verts.len();
        let mut best: Option<Vec<u32>> = None;
        let mut consider = |c: &[u32]| {
            if c.len() < 2 {
                return;
            }
            let mut v: Vec<u32> = c
                .iter()
                .filter(|&&x| (x as usize) < m)
                .map(|&x| l.verts[x as usize])
                .collect();
            if v.is_empty() {
                return;
            }
            v.sort_unstable();
            let better = match &best {
                None => true,
                Some(b) => (v.len(), v[0]) < (b.len(), b[0]),
            };
            if better {
                best = Some(v);
            }
        };
        let t = &mut **self.tarjan.borrow_mut();
        t.reset(g.len());
        for v in (0..m as u32).filter(|&v| left.is_none_or(|p| p.left(v))) {
            t.run(g, v, &mut consider, &mut |_| false);
        }
        best
    }
}

/// Bounds on the search.
#[derive(Clone, Debug)]
pub struct SearchLimits {
    /// Stop everything at this instant.
    pub deadline: Option<Instant>,
    /// Time allowed per component (Elle's `:cycle-search-timeout`, 1 s by
    /// default there).
    pub scc_timeout: Option<Duration>,
    /// Edge steps allowed per class per component. Deterministic, unlike
    /// the deadlines.
    pub class_budget: u64,
    /// Components are searched on this many threads (results do not depend
    /// on it).
    pub threads: usize,
}

impl Default for SearchLimits {
    fn default() -> Self {
        SearchLimits {
            deadline: None,
            scc_timeout: None,
            class_budget: 200_000_000,
            threads: 2,
        }
    }
}

/// What to search for.
#[derive(Clone, Debug, Default)]
pub struct SearchPlan {
    /// In search order (Elle: by anomaly depth, most severe first).
    pub classes: Vec<CycleClass>,
    /// How edges are explained (depends on the workload).
    pub order: ExplainOrder,
}

impl SearchPlan {
    /// A plan for the named classes, in the given order; names that are not
    /// cycle classes (e.g. `G1a`) are ignored, as are repeats.
    pub fn new(names: &[&str]) -> SearchPlan {
        let mut classes: Vec<CycleClass> = Vec::new();
        for c in names.iter().filter_map(|n| CycleClass::from_name(n)) {
            if !classes.contains(&c) {
                classes.push(c);
            }
        }
        SearchPlan {
            classes,
            order: ExplainOrder::default(),
        }
    }
}

/// The search's findings for one component.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SccReport {
    /// Sorted members.
    pub txns: Vec<u32>,
    /// At most one cycle per class, in search order.
    pub cycles: Vec<FoundCycle>,
    /// Classes searched (not skipped), in order.
    pub searched: Vec<CycleClass>,
    pub timeout: Option<Timeout>,
    /// From [`SearchHooks::prepare`].
    pub cycle_exists: Vec<CycleExistsHit>,
}

/// The search's findings: one report per strongly connected component of
/// the whole graph, ordered by smallest member.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchResult {
    pub sccs: Vec<SccReport>,
}

impl SearchResult {
    /// Every cycle found, component by component.
    pub fn cycles(&self) -> impl Iterator<Item = &FoundCycle> {
        self.sccs.iter().flat_map(|s| s.cycles.iter())
    }

    /// Classes whose search hit a bound, one per timed-out component.
    pub fn timed_out(&self) -> Vec<CycleClass> {
        self.sccs
            .iter()
            .filter_map(|s| s.timeout.as_ref().map(|t| t.class))
            .collect()
    }
}

/// Searches every component of `g` for the named classes (list-append
/// explanation order, no lattice pruning).
pub fn find_cycles(g: &DepGraph, classes: &[&str], limits: &SearchLimits) -> SearchResult {
    search(g, &SearchPlan::new(classes), limits, &NoHooks)
}

/// Searches every component of `g` as `plan` says, asking `hooks` what to
/// skip.
pub fn search(
    g: &DepGraph,
    plan: &SearchPlan,
    limits: &SearchLimits,
    hooks: &dyn SearchHooks,
) -> SearchResult {
    let comps = sccs(g, Rels::ANY);
    let threads = limits.threads.clamp(1, comps.len().max(1));
    let mut out: Vec<(usize, SccReport)> = Vec::with_capacity(comps.len());
    if threads == 1 {
        let mut scratch = Scratch::new(g.node_count());
        for (i, c) in comps.iter().enumerate() {
            out.push((i, search_scc(g, c, plan, limits, hooks, &mut scratch)));
        }
    } else {
        let next = AtomicUsize::new(0);
        let done = Mutex::new(Vec::with_capacity(comps.len()));
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    let mut scratch = Scratch::new(g.node_count());
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(c) = comps.get(i) else { break };
                        mine.push((i, search_scc(g, c, plan, limits, hooks, &mut scratch)));
                    }
                    if let Ok(mut d) = done.lock() {
                        d.extend(mine);
                    }
                });
            }
        });
        out = done.into_inner().unwrap_or_default();
        out.sort_unstable_by_key(|(i, _)| *i);
    }
    SearchResult {
        sccs: out.into_iter().map(|(_, r)| r).collect(),
    }
}

/// Per-thread state kept across components, so thousands of small class
/// searches do not each allocate and build the same things.
struct Scratch {
    /// Graph vertex → local id (sized to the whole graph).
    local_of: Vec<u32>,
    /// Sized to the largest component so far.
    bfs: Bfs,
    /// Automata built so far, by class and anchor (they depend on nothing
    /// else).
    automata: Vec<(CycleClass, Rels, Automaton)>,
    /// For every Tarjan pass inside a component (cycle-exists subgraphs,
    /// class sub-components, product components).
    tarjan: Tarjan,
    /// For the cycle-exists unions.
    peel: Peel,
}

impl Scratch {
    fn new(n: usize) -> Self {
        Scratch {
            local_of: vec![NONE; n],
            bfs: Bfs::new(0),
            automata: Vec::new(),
            tarjan: Tarjan::new(0),
            peel: Peel::default(),
        }
    }
}

/// One component with local ids `0..m` (position in `verts`), keeping only
/// edges inside it.
struct Local {
    verts: Vec<u32>,
    off: Vec<usize>,
    tgt: Vec<u32>,
    raw: Vec<Rels>,
    /// Explained relation, as bit index 0..5.
    ty: Vec<u8>,
    /// Every relation on some edge of the component.
    present: Rels,
}

fn build_local(g: &DepGraph, members: &[u32], order: &ExplainOrder, s: &mut Scratch) -> Local {
    for (i, &v) in members.iter().enumerate() {
        s.local_of[v as usize] = i as u32;
    }
    let mut off = Vec::with_capacity(members.len() + 1);
    // Out-degrees bound the local edge count: one allocation per array.
    let bound: usize = members.iter().map(|&v| g.targets(v).len()).sum();
    let (mut tgt, mut raw, mut ty) = (
        Vec::with_capacity(bound),
        Vec::with_capacity(bound),
        Vec::with_capacity(bound),
    );
    off.push(0);
    for &v in members {
        for (w, r) in g.out(v) {
            let lw = s.local_of[w as usize];
            if lw != NONE {
                tgt.push(lw);
                raw.push(r);
                ty.push(order.explain_index(r));
            }
        }
        off.push(tgt.len());
    }
    for &v in members {
        s.local_of[v as usize] = NONE;
    }
    let present = raw.iter().fold(Rels::NONE, |p, &r| p.union(r));
    Local {
        verts: members.to_vec(),
        off,
        tgt,
        raw,
        ty,
        present,
    }
}

/// Kahn's peeling of a component's union subgraph, reusable: repeatedly
/// drops vertices that no remaining edge enters. What is left is every
/// vertex on a cycle and everything such a vertex reaches, with no edge
/// back to a dropped vertex; so the subgraph peels away entirely iff it is
/// acyclic, and Tarjan started only from what is left finds every cyclic
/// component. Two tight scans of the edges, where an acyclic Tarjan pass
/// walks the same edges through its cursor and stacks every vertex.
#[derive(Default)]
struct Peel {
    /// After [`Peel::run`]: 0 for a dropped vertex, else the number of
    /// remaining edges entering it.
    indeg: Vec<u32>,
    queue: Vec<u32>,
}

impl Peel {
    /// Peels `l` restricted to edges carrying a relation in `mask`; true
    /// when some vertex is left (a cycle).
    fn run(&mut self, l: &Local, mask: Rels) -> bool {
        let m = l.verts.len();
        self.indeg.clear();
        self.indeg.resize(m, 0);
        for (&r, &y) in l.raw.iter().zip(&l.tgt) {
            if r.intersects(mask) {
                self.indeg[y as usize] += 1;
            }
        }
        self.queue.clear();
        self.queue
            .extend((0..m as u32).filter(|&v| self.indeg[v as usize] == 0));
        let mut head = 0;
        while let Some(&x) = self.queue.get(head) {
            head += 1;
            let e = l.off[x as usize]..l.off[x as usize + 1];
            for (&r, &y) in l.raw[e.clone()].iter().zip(&l.tgt[e]) {
                if r.intersects(mask) {
                    let d = &mut self.indeg[y as usize];
                    *d -= 1;
                    if *d == 0 {
                        self.queue.push(y);
                    }
                }
            }
        }
        self.queue.len() < m
    }

    /// Whether the last [`Peel::run`] left `v`.
    fn left(&self, v: u32) -> bool {
        self.indeg[v as usize] != 0
    }
}

struct LocalRaw<'a> {
    l: &'a Local,
    mask: Rels,
}

impl Succ for LocalRaw<'_> {
    fn len(&self) -> usize {
        self.l.verts.len()
    }
    fn start(&self, v: u32) -> usize {
        self.l.off[v as usize]
    }
    fn next(&self, v: u32, cur: &mut usize) -> Option<u32> {
        let end = self.l.off[v as usize + 1];
        while *cur < end {
            let i = *cur;
            *cur += 1;
            if self.l.raw[i].intersects(self.mask) {
                return Some(self.l.tgt[i]);
            }
        }
        None
    }
}

/// `A ∪ (A ; B)` without materialising compositions: vertex `x` (< m) steps
/// along A to `y` and to `y'` (= m + y); `y'` steps along B to `z`. Paths
/// between plain vertices are exactly the extension's paths.
struct Extension<'a> {
    l: &'a Local,
    a: Rels,
    b: Rels,
}

impl Succ for Extension<'_> {
    fn len(&self) -> usize {
        2 * self.l.verts.len()
    }
    fn start(&self, v: u32) -> usize {
        let m = self.l.verts.len();
        self.l.off[v as usize % m]
    }
    fn next(&self, v: u32, cur: &mut usize) -> Option<u32> {
        let m = self.l.verts.len();
        let x = v as usize % m;
        let (s, e) = (self.l.off[x], self.l.off[x + 1]);
        if (v as usize) < m {
            // Cursor runs over the edges twice: plain targets, then primed.
            while *cur < e + (e - s) {
                let (i, primed) = if *cur < e {
                    (*cur, false)
                } else {
                    (*cur - (e - s), true)
                };
                *cur += 1;
                if self.l.raw[i].intersects(self.a) {
                    let y = self.l.tgt[i];
                    return Some(if primed { y + m as u32 } else { y });
                }
            }
        } else {
            while *cur < e {
                let i = *cur;
                *cur += 1;
                if self.l.raw[i].intersects(self.b) {
                    return Some(self.l.tgt[i]);
                }
            }
        }
        None
    }
}

/// Work counter for one class search.
struct Budget {
    left: u64,
    deadline: Option<Instant>,
    ticks: u64,
    cut: bool,
}

impl Budget {
    /// Spends `n` steps; true when the search must stop.
    fn spend(&mut self, n: u64) -> bool {
        if self.cut {
            return true;
        }
        self.ticks += n;
        if n > self.left {
            self.left = 0;
            self.cut = true;
        } else {
            self.left -= n;
        }
        if self.ticks >= 4096 {
            self.ticks = 0;
            if self.deadline.is_some_and(|d| Instant::now() >= d) {
                self.cut = true;
            }
        }
        self.cut
    }
}

fn search_scc(
    g: &DepGraph,
    members: &[u32],
    plan: &SearchPlan,
    limits: &SearchLimits,
    hooks: &dyn SearchHooks,
    scratch: &mut Scratch,
) -> SccReport {
    let local = build_local(g, members, &plan.order, scratch);
    let prep = hooks.prepare(&SccView {
        local: &local,
        tarjan: RefCell::new(&mut scratch.tarjan),
        peel: RefCell::new(&mut scratch.peel),
    });
    let mut skip: FxHashSet<CycleClass> = prep.skip.into_iter().collect();
    let deadline = match (limits.deadline, limits.scc_timeout) {
        (Some(d), Some(t)) => Some(d.min(Instant::now() + t)),
        (d, None) => d,
        (None, Some(t)) => Some(Instant::now() + t),
    };
    let mut report = SccReport {
        txns: members.to_vec(),
        cycle_exists: prep.cycle_exists,
        ..SccReport::default()
    };
    // Classes allowing the same relations share one class graph.
    let mut graphs: Vec<(Rels, ClassGraph)> = Vec::new();
    for &class in &plan.classes {
        if skip.contains(&class) || report.searched.contains(&class) {
            continue;
        }
        report.searched.push(class);
        if class.needs_predicates() {
            continue;
        }
        let mut budget = Budget {
            left: limits.class_budget,
            deadline,
            ticks: 0,
            cut: false,
        };
        let res = search_class(&local, class, &mut graphs, &mut budget, scratch);
        match res {
            Outcome::Found(c, shortest) => {
                skip.extend(hooks.implied(class));
                report.cycles.push(FoundCycle {
                    class,
                    cycle: c,
                    shortest,
                });
            }
            Outcome::None => {}
            Outcome::Cut => {
                let found: Vec<CycleClass> = report.cycles.iter().map(|c| c.class).collect();
                let n = report.searched.len() - 1;
                let does_not_contain = report.searched[..n]
                    .iter()
                    .copied()
                    .filter(|c| !found.contains(c))
                    .collect();
                let fallback = fallback_cycle(g, &plan.order, members);
                report.timeout = Some(Timeout {
                    class,
                    does_not_contain,
                    scc_size: members.len(),
                    fallback_class: fallback.class(),
                    fallback,
                });
                break;
            }
        }
    }
    report
}

/// A shortest cycle through the component's smallest member, any relations.
fn fallback_cycle(g: &DepGraph, order: &ExplainOrder, members: &[u32]) -> Cycle {
    let txns = shortest_cycle_through(g, Rels::ANY, members, members[0]);
    Cycle::from_txns(g, order, &txns).unwrap_or(Cycle {
        txns,
        steps: Vec::new(),
    })
}

enum Outcome {
    /// A cycle, and whether it is proven shortest.
    Found(Cycle, bool),
    None,
    Cut,
}

/// The component restricted to one class: edges with an allowed explained
/// relation inside one sub-component (`sub`).
struct ClassGraph {
    off: Vec<usize>,
    tgt: Vec<u32>,
    ty: Vec<u8>,
    /// Edges per explained relation (bit index).
    count: [usize; 5],
    /// Per anchor relation asked so far. Classes sharing this graph and
    /// anchor (e.g. the three rw classes of one variant) share them.
    anchors: Vec<Anchors>,
}

/// The edges of one relation in a class graph, as a class search anchors
/// cycles on them.
struct Anchors {
    /// Bit index of the relation.
    rel: u8,
    /// (head, tail), sorted.
    edges: Vec<(u32, u32)>,
    /// Distinct heads, ascending.
    heads: Vec<u32>,
}

impl ClassGraph {
    fn new(off: Vec<usize>, tgt: Vec<u32>, ty: Vec<u8>) -> Self {
        let mut count = [0usize; 5];
        for &t in &ty {
            count[t as usize] += 1;
        }
        ClassGraph {
            off,
            tgt,
            ty,
            count,
            anchors: Vec::new(),
        }
    }

    /// Position in `anchors` of the entry for relation `a_ix`, built on
    /// first use: a counting sort by head, tails ascending within a head
    /// as the scan meets them.
    fn anchors_of(&mut self, a_ix: u8) -> usize {
        if let Some(k) = self.anchors.iter().position(|e| e.rel == a_ix) {
            return k;
        }
        let m = self.off.len() - 1;
        let mut start = vec![0u32; m + 1];
        for i in 0..self.tgt.len() {
            if self.ty[i] == a_ix {
                start[self.tgt[i] as usize + 1] += 1;
            }
        }
        for v in 0..m {
            start[v + 1] += start[v];
        }
        let mut anchors = vec![(0u32, 0u32); start[m] as usize];
        for u in 0..m {
            for i in self.off[u]..self.off[u + 1] {
                if self.ty[i] == a_ix {
                    let v = self.tgt[i] as usize;
                    anchors[start[v] as usize] = (v as u32, u as u32);
                    start[v] += 1;
                }
            }
        }
        let mut heads: Vec<u32> = anchors.iter().map(|&(v, _)| v).collect();
        heads.dedup();
        self.anchors.push(Anchors {
            rel: a_ix,
            edges: anchors,
            heads,
        });
        self.anchors.len() - 1
    }
}

struct ClassSucc<'a> {
    cg: &'a ClassGraph,
}

impl Succ for ClassSucc<'_> {
    fn len(&self) -> usize {
        self.cg.off.len() - 1
    }
    fn start(&self, v: u32) -> usize {
        self.cg.off[v as usize]
    }
    fn next(&self, v: u32, cur: &mut usize) -> Option<u32> {
        if *cur < self.cg.off[v as usize + 1] {
            *cur += 1;
            Some(self.cg.tgt[*cur - 1])
        } else {
            None
        }
    }
}

/// The (vertex, state) product: node `x * S + s`.
struct Product<'a> {
    cg: &'a ClassGraph,
    a: &'a Automaton,
}

impl Succ for Product<'_> {
    fn len(&self) -> usize {
        (self.cg.off.len() - 1) * self.a.states()
    }
    fn start(&self, v: u32) -> usize {
        self.cg.off[v as usize / self.a.states()]
    }
    fn next(&self, v: u32, cur: &mut usize) -> Option<u32> {
        let ns = self.a.states();
        let (x, s) = (v as usize / ns, v as usize % ns);
        let end = self.cg.off[x + 1];
        while *cur < end {
            let i = *cur;
            *cur += 1;
            let t = self.a.trans[s][self.cg.ty[i] as usize];
            if t != DEAD {
                return Some(self.cg.tgt[i] * ns as u32 + u32::from(t));
            }
        }
        None
    }
}

/// Linear in the component, so not charged to the budget.
fn class_graph(l: &Local, allowed: Rels, t: &mut Tarjan) -> ClassGraph {
    let m = l.verts.len();
    // The component is strongly connected: a class that keeps every edge
    // keeps it whole, as one sub-component.
    if l.ty
        .iter()
        .all(|&t| t != 255 && allowed.intersects(Rels(1 << t)))
    {
        return ClassGraph::new(l.off.clone(), l.tgt.clone(), l.ty.clone());
    }
    // All allowed edges first, then split into sub-components.
    let mut off = Vec::with_capacity(m + 1);
    let (mut tgt, mut ty) = (
        Vec::with_capacity(l.tgt.len()),
        Vec::with_capacity(l.tgt.len()),
    );
    off.push(0);
    for x in 0..m {
        for i in l.off[x]..l.off[x + 1] {
            if l.ty[i] != 255 && allowed.intersects(Rels(1 << l.ty[i])) {
                tgt.push(l.tgt[i]);
                ty.push(l.ty[i]);
            }
        }
        off.push(tgt.len());
    }
    let all = ClassGraph::new(off, tgt, ty);
    t.reset(m);
    let mut sizes: Vec<u32> = Vec::new();
    for v in 0..m as u32 {
        t.run(
            &ClassSucc { cg: &all },
            v,
            &mut |c: &[u32]| sizes.push(c.len() as u32),
            &mut |_| false,
        );
    }
    let sub = |x: u32| -> u32 {
        let c = t.comp[x as usize];
        if sizes[c as usize] > 1 {
            c
        } else {
            NONE
        }
    };
    let mut off = Vec::with_capacity(m + 1);
    let (mut tgt, mut ty) = (
        Vec::with_capacity(all.tgt.len()),
        Vec::with_capacity(all.tgt.len()),
    );
    off.push(0);
    for x in 0..m {
        let sx = sub(x as u32);
        if sx != NONE {
            for i in all.off[x]..all.off[x + 1] {
                if sub(all.tgt[i]) == sx {
                    tgt.push(all.tgt[i]);
                    ty.push(all.ty[i]);
                }
            }
        }
        off.push(tgt.len());
    }
    ClassGraph::new(off, tgt, ty)
}

/// `graphs`: the class graphs built so far in this component, by allowed
/// relations.
fn search_class(
    l: &Local,
    class: CycleClass,
    graphs: &mut Vec<(Rels, ClassGraph)>,
    budget: &mut Budget,
    scratch: &mut Scratch,
) -> Outcome {
    // A relation every cycle of the class needs is on no edge at all (e.g.
    // process order in a graph with real-time order instead).
    if class.required().iter().any(|&r| !l.present.intersects(r)) {
        return Outcome::None;
    }
    let allowed = class.allowed();
    let i = match graphs.iter().position(|(a, _)| *a == allowed) {
        Some(i) => i,
        None => {
            graphs.push((allowed, class_graph(l, allowed, &mut scratch.tarjan)));
            graphs.len() - 1
        }
    };
    let m = l.verts.len();
    // Every required relation must occur inside some sub-component.
    let count = graphs[i].1.count;
    let required = class.required();
    if required
        .iter()
        .any(|r| count[r.0.trailing_zeros() as usize] == 0)
    {
        return Outcome::None;
    }
    let anchor = match (class.base, required.get(1)) {
        (super::BaseClass::G0, Some(&v)) => v,
        (super::BaseClass::G1c, Some(&v)) => {
            let (wr, var) = (count[1], count[v.0.trailing_zeros() as usize]);
            if var < wr {
                v
            } else {
                Rels::WR
            }
        }
        _ => required[0],
    };
    let a_ix = anchor.0.trailing_zeros() as u8;
    // Anchor edges (tail u → head v), grouped by head.
    let k = graphs[i].1.anchors_of(a_ix);
    let cg = &graphs[i].1;
    let (anchors, heads) = (&cg.anchors[k].edges, &cg.anchors[k].heads);
    let Scratch {
        bfs,
        automata,
        tarjan,
        ..
    } = scratch;
    let ai = match automata
        .iter()
        .position(|(c, a, _)| *c == class && *a == anchor)
    {
        Some(i) => i,
        None => {
            automata.push((class, anchor, Automaton::new(class, anchor)));
            automata.len() - 1
        }
    };
    let auto = &automata[ai].2;
    if (m as u64) * (auto.states() as u64) >= u64::from(NONE) {
        // Product ids are u32; a component this large is beyond any budget.
        return Outcome::Cut;
    }
    // Proving which heads are feasible costs about three passes over the
    // product graph. That pays off only while BFSs are unbounded (no cycle
    // yet) or loosely bounded; a BFS bounded by a short cycle already found
    // explores a few levels, and from an infeasible head it just finds
    // nothing, so the results are the same either way. Hence the first
    // `UNPROVEN_HEADS` heads run unproven while no cycle is found (the
    // first feasible head is usually among them, and its cycle often ends
    // the search or bounds the rest tightly), and the proof is made only
    // when a later BFS would be bounded by no cycle, or by one longer than
    // `SHORT_BOUND`. A history with thousands of small components, each
    // searched for several classes, mostly never needs it.
    let mut feasible: Option<Vec<bool>> = None;
    bfs.fit(m);
    // The best cycle so far: its head and its path from the head to the
    // anchor tail, as (vertex, step relation); the anchor step closes it.
    let mut best: Option<(u32, Vec<(u32, u8)>)> = None;
    let cycle_len =
        |b: &Option<(u32, Vec<(u32, u8)>)>| b.as_ref().map_or(usize::MAX, |p| p.1.len() + 1);
    let mut detours: Vec<(usize, u32)> = Vec::new(); // (walk length, head)
    let mut cut = false;
    let min_len = class.min_len();
    for (k, &v) in heads.iter().enumerate() {
        let bound = cycle_len(&best);
        if bound <= min_len {
            break;
        }
        let unproven = k < UNPROVEN_HEADS && best.is_none();
        if feasible.is_some() || (k > 0 && bound > SHORT_BOUND && !unproven) {
            let proven = match &feasible {
                Some(f) => f,
                None => match feasible_heads(cg, auto, anchors, heads, budget, tarjan) {
                    Some(f) => feasible.insert(f),
                    None => {
                        cut = true;
                        break;
                    }
                },
            };
            if !proven[k] {
                continue;
            }
        }
        let tails = anchor_tails(anchors, v);
        match bfs.run(cg, auto, v, tails, bound, budget) {
            BfsResult::Simple(path) => best = Some((v, path)),
            BfsResult::NonSimple(len, simple) => {
                detours.push((len, v));
                if let Some(p) = simple {
                    best = Some((v, p));
                }
            }
            BfsResult::None => {}
            BfsResult::Cut => {
                cut = true;
                break;
            }
        }
    }
    if !cut {
        // Heads whose shortest walk repeats a vertex: an exact search for a
        // simple cycle shorter than the best so far.
        detours.sort_unstable();
        let mut dfs: Option<Dfs> = None;
        for (len, v) in detours {
            let bound = cycle_len(&best);
            if len >= bound {
                break;
            }
            let d = dfs.get_or_insert_with(|| Dfs::new(cg));
            match d.run(cg, auto, v, anchor_tails(anchors, v), len, bound, budget) {
                Some(Some(p)) => best = Some((v, p)),
                Some(None) => {}
                None => {
                    cut = true;
                    break;
                }
            }
        }
    }
    match best {
        Some((v, path)) => {
            let u = path.last().map_or(v, |p| p.0);
            let mut txns = vec![l.verts[u as usize], l.verts[v as usize]];
            let mut steps = vec![anchor];
            for &(x, t) in &path {
                txns.push(l.verts[x as usize]);
                steps.push(Rels(1 << t));
            }
            let c = rotate_to_anchor(Cycle { txns, steps }, anchor);
            debug_assert_eq!(c.class(), Some(class), "{c:?}");
            if c.class() == Some(class) {
                Outcome::Found(c, !cut)
            } else {
                Outcome::None
            }
        }
        None if cut => Outcome::Cut,
        None => Outcome::None,
    }
}

/// Heads a class search tries before proving feasibility while it has no
/// cycle (see `search_class`): each costs at most one pass over the part of
/// the product it reaches.
const UNPROVEN_HEADS: usize = 3;

/// Cycle length below which a class search skips the feasibility proof
/// (see `search_class`): a BFS bounded by it explores at most three levels.
const SHORT_BOUND: usize = 5;

/// The same cycle, starting with the anchor step whose tail is the smallest
/// transaction (Elle's cycles open with the relation the class needs; this
/// makes the choice among several such steps deterministic).
fn rotate_to_anchor(c: Cycle, anchor: Rels) -> Cycle {
    let n = c.steps.len();
    let Some(k) = (0..n)
        .filter(|&i| c.steps[i] == anchor)
        .min_by_key(|&i| c.txns[i])
    else {
        return c;
    };
    let mut txns: Vec<u32> = (0..n).map(|i| c.txns[(k + i) % n]).collect();
    txns.push(txns[0]);
    let steps = (0..n).map(|i| c.steps[(k + i) % n]).collect();
    Cycle { txns, steps }
}

/// Tails of the anchor edges into `v` (anchors sorted by head).
fn anchor_tails(anchors: &[(u32, u32)], v: u32) -> &[(u32, u32)] {
    let s = anchors.partition_point(|&(h, _)| h < v);
    let e = anchors.partition_point(|&(h, _)| h <= v);
    &anchors[s..e]
}

/// Which heads (by position in `heads`) can close a cycle of the class:
/// some anchor tail `u` of head `v` is reachable from `(v, init)` in an
/// accepting state. `None` if the budget ran out.
fn feasible_heads(
    cg: &ClassGraph,
    a: &Automaton,
    anchors: &[(u32, u32)],
    heads: &[u32],
    budget: &mut Budget,
    t: &mut Tarjan,
) -> Option<Vec<bool>> {
    let ns = a.states() as u32;
    let p = Product { cg, a };
    t.reset(p.len());
    // Members of each product component, flat, in emission order.
    let mut members: Vec<u32> = Vec::new();
    let mut starts: Vec<u32> = Vec::new();
    let mut stop = |_: u64| budget.spend(4096);
    // Later heads first: then emission order roughly follows history order
    // backwards, which makes the rank test below reject most impossible
    // pairs without any propagation.
    for &v in heads.iter().rev() {
        let root = v * ns + u32::from(a.init);
        let ok = t.run(
            &p,
            root,
            &mut |c: &[u32]| {
                starts.push(members.len() as u32);
                members.extend_from_slice(c);
            },
            &mut stop,
        );
        if !ok {
            return None;
        }
    }
    starts.push(members.len() as u32);
    let accepting: Vec<u32> = (0..ns).filter(|&s| a.accept[s as usize]).collect();
    let mut feasible = vec![false; heads.len()];
    // Per head: the target components that rank allows (emitted no later
    // than the source's component: a component only reaches earlier ones).
    let mut pending: Vec<(usize, u32, Vec<u32>)> = Vec::new();
    let mut k = 0;
    for (hi, &v) in heads.iter().enumerate() {
        let src = t.comp[(v * ns + u32::from(a.init)) as usize];
        let mut targets = Vec::new();
        while k < anchors.len() && anchors[k].0 == v {
            let u = anchors[k].1;
            for &s in &accepting {
                let node = u * ns + s;
                if t.visited(node) {
                    let c = t.comp[node as usize];
                    if c == src {
                        feasible[hi] = true;
                    } else if c < src {
                        targets.push(c);
                    }
                }
            }
            k += 1;
        }
        if !feasible[hi] && !targets.is_empty() {
            pending.push((hi, src, targets));
        }
    }
    // Bit-parallel reachability over the condensation, 64 heads at a time,
    // visiting components in topological order (descending emission index).
    // Heads are grouped by rank, and a chunk never propagates below its
    // lowest target rank: anomalies are usually local in history order, so
    // each chunk touches a narrow window of the graph.
    pending.sort_unstable_by_key(|p| p.1);
    let comps = starts.len() - 1;
    let mut mask = vec![0u64; comps];
    let mut queue = DownQueue::new(comps);
    let mut touched: Vec<u32> = Vec::new();
    for chunk in pending.chunks(64) {
        let lo = chunk
            .iter()
            .flat_map(|p| p.2.iter())
            .copied()
            .min()
            .unwrap_or(0);
        for (bit, (_, src, _)) in chunk.iter().enumerate() {
            if mask[*src as usize] == 0 {
                queue.push(*src);
                touched.push(*src);
            }
            mask[*src as usize] |= 1 << bit;
        }
        while let Some(c) = queue.pop(lo) {
            let bits = mask[c as usize];
            let span = starts[c as usize] as usize..starts[c as usize + 1] as usize;
            for &node in &members[span] {
                let mut cur = p.start(node);
                while let Some(w) = p.next(node, &mut cur) {
                    let d = t.comp[w as usize];
                    if d != c && d >= lo && (mask[d as usize] | bits) != mask[d as usize] {
                        if mask[d as usize] == 0 {
                            touched.push(d);
                        }
                        mask[d as usize] |= bits;
                        queue.push(d);
                    }
                }
                if budget.spend(1 + (cur - p.start(node)) as u64) {
                    return None;
                }
            }
        }
        for (bit, (hi, _, targets)) in chunk.iter().enumerate() {
            if targets.iter().any(|&c| mask[c as usize] & (1 << bit) != 0) {
                feasible[*hi] = true;
            }
        }
        for &c in &touched {
            mask[c as usize] = 0;
        }
        touched.clear();
    }
    Some(feasible)
}

/// Components waiting to propagate, highest emission index first (a
/// topological order: a component only reaches lower ones, so pushes are
/// always below the last pop). A bit set scanned downwards: cheaper than a
/// binary heap, and a component pushed twice is queued once.
struct DownQueue {
    bits: Vec<u64>,
    /// Every set bit is in a word at or below this one.
    top: usize,
}

impl DownQueue {
    fn new(n: usize) -> Self {
        DownQueue {
            bits: vec![0; n.div_ceil(64)],
            top: 0,
        }
    }

    fn push(&mut self, c: u32) {
        let w = c as usize / 64;
        self.bits[w] |= 1 << (c % 64);
        self.top = self.top.max(w);
    }

    /// The highest queued component, dequeued; none are queued below
    /// `floor`, so the scan stops there.
    fn pop(&mut self, floor: u32) -> Option<u32> {
        let floor = floor as usize / 64;
        loop {
            let word = self.bits.get_mut(self.top)?;
            if *word != 0 {
                let b = 63 - word.leading_zeros();
                *word &= !(1 << b);
                return Some(self.top as u32 * 64 + b);
            }
            if self.top <= floor {
                return None;
            }
            self.top -= 1;
        }
    }
}

enum BfsResult {
    /// The shortest closing walk through the head is a simple cycle: its
    /// path from the head to the anchor tail, as (vertex, step relation).
    Simple(Vec<(u32, u8)>),
    /// The shortest closing walk (of this length) repeats a vertex; maybe a
    /// longer simple one was found.
    NonSimple(usize, Option<Vec<(u32, u8)>>),
    None,
    Cut,
}

/// Levels a BFS explores past a closure that repeats a vertex.
const EXTRA_LEVELS: usize = 2;

struct Bfs {
    /// Per vertex: the run that last reached it, and the states it was
    /// reached in during that run (one entry, so one lookup per edge).
    seen: Vec<(u32, u64)>,
    tail: Vec<u32>,
    on_path: Vec<bool>,
    run_id: u32,
    /// (vertex, state, relation of the step in, parent entry)
    queue: Vec<(u32, u8, u8, u32)>,
}

impl Bfs {
    fn new(m: usize) -> Self {
        Bfs {
            seen: vec![(0, 0); m],
            tail: vec![0; m],
            on_path: vec![false; m],
            run_id: 0,
            queue: Vec::new(),
        }
    }

    /// Makes room for a component of `m` vertices (stamps of earlier runs
    /// stay below the next run's id, so nothing needs clearing).
    fn fit(&mut self, m: usize) {
        if self.seen.len() < m {
            self.seen.resize(m, (0, 0));
            self.tail.resize(m, 0);
            self.on_path.resize(m, false);
        }
    }

    /// Shortest closing walks from head `v`, cycles shorter than `bound`
    /// steps only.
    fn run(
        &mut self,
        cg: &ClassGraph,
        a: &Automaton,
        v: u32,
        tails: &[(u32, u32)],
        bound: usize,
        budget: &mut Budget,
    ) -> BfsResult {
        self.run_id += 1;
        let id = self.run_id;
        for &(_, u) in tails {
            self.tail[u as usize] = id;
        }
        self.queue.clear();
        self.queue.push((v, a.init, 255, NONE));
        self.seen[v as usize] = (id, 1 << a.init);
        let mut nonsimple: Option<usize> = None;
        let (mut level_start, mut depth) = (0usize, 0usize);
        while level_start < self.queue.len() {
            // Entries at `depth` reach depth+1; a closure there has depth+2 steps.
            if depth + 2 >= bound {
                break;
            }
            // After a closure that repeats a vertex, look a little further
            // for a simple one; beyond that the exact DFS takes over (the
            // walk is usually two cycles of other classes glued together,
            // and the whole product may hold no simple closure at all).
            if nonsimple.is_some_and(|n| depth + 2 > n + EXTRA_LEVELS) {
                break;
            }
            let level_end = self.queue.len();
            for qi in level_start..level_end {
                let (x, s, _, _) = self.queue[qi];
                let (es, ee) = (cg.off[x as usize], cg.off[x as usize + 1]);
                if budget.spend(1 + (ee - es) as u64) {
                    return BfsResult::Cut;
                }
                let row = a.trans[s as usize];
                for (&t, &y) in cg.ty[es..ee].iter().zip(&cg.tgt[es..ee]) {
                    let ns = row[t as usize];
                    if ns == DEAD {
                        continue;
                    }
                    let yu = y as usize;
                    let seen = &mut self.seen[yu];
                    if seen.0 != id {
                        *seen = (id, 0);
                    }
                    if seen.1 & (1 << ns) != 0 {
                        continue;
                    }
                    seen.1 |= 1 << ns;
                    self.queue.push((y, ns, t, qi as u32));
                    if self.tail[yu] == id && a.accept[ns as usize] {
                        let path = self.path(self.queue.len() - 1);
                        if self.simple(&path) {
                            return match nonsimple {
                                None => BfsResult::Simple(path),
                                Some(n) => BfsResult::NonSimple(n, Some(path)),
                            };
                        }
                        nonsimple.get_or_insert(depth + 2);
                    }
                }
            }
            level_start = level_end;
            depth += 1;
        }
        match nonsimple {
            Some(n) => BfsResult::NonSimple(n, None),
            None => BfsResult::None,
        }
    }

    fn path(&self, mut qi: usize) -> Vec<(u32, u8)> {
        let mut p = Vec::new();
        while self.queue[qi].3 != NONE {
            let (x, _, t, parent) = self.queue[qi];
            p.push((x, t));
            qi = parent as usize;
        }
        p.reverse();
        p
    }

    /// Whether head → path visits no vertex twice.
    fn simple(&mut self, path: &[(u32, u8)]) -> bool {
        let head = self.queue[0].0;
        let mut simple = true;
        self.on_path[head as usize] = true;
        for &(x, _) in path {
            simple &= !std::mem::replace(&mut self.on_path[x as usize], true);
        }
        self.on_path[head as usize] = false;
        for &(x, _) in path {
            self.on_path[x as usize] = false;
        }
        simple
    }
}

/// Exact search for a simple cycle through one head: iterative deepening
/// over simple paths, pruned by the distance in the (vertex, state) product
/// to an accepting tail: a path that cannot close in the class within the
/// steps left is abandoned (plain distance to a tail ignores the class and
/// leaves most of a dense component to explore).
struct Dfs {
    /// Reverse of the class graph (sources and relations), for distances.
    roff: Vec<usize>,
    rsrc: Vec<u32>,
    rty: Vec<u8>,
    /// Product node `x * S + s` → fewest steps to a tail in an accepting
    /// state (`u32::MAX`: never).
    dist: Vec<u32>,
    on_path: Vec<bool>,
    is_tail: Vec<bool>,
}

impl Dfs {
    fn new(cg: &ClassGraph) -> Self {
        let m = cg.off.len() - 1;
        let mut roff = vec![0usize; m + 1];
        for &y in &cg.tgt {
            roff[y as usize + 1] += 1;
        }
        for i in 0..m {
            roff[i + 1] += roff[i];
        }
        let mut fill = roff.clone();
        let mut rsrc = vec![0u32; cg.tgt.len()];
        let mut rty = vec![0u8; cg.tgt.len()];
        for x in 0..m {
            for i in cg.off[x]..cg.off[x + 1] {
                let y = cg.tgt[i] as usize;
                rsrc[fill[y]] = x as u32;
                rty[fill[y]] = cg.ty[i];
                fill[y] += 1;
            }
        }
        Dfs {
            roff,
            rsrc,
            rty,
            dist: Vec::new(),
            on_path: vec![false; m],
            is_tail: vec![false; m],
        }
    }

    /// The shortest simple cycle through head `v` with `from..bound` steps:
    /// `Some(Some(path))`, `Some(None)` if there is none, `None` if cut.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        cg: &ClassGraph,
        a: &Automaton,
        v: u32,
        tails: &[(u32, u32)],
        from: usize,
        bound: usize,
        budget: &mut Budget,
    ) -> Option<Option<Vec<(u32, u8)>>> {
        // Product distances to an accepting tail, by BFS over reversed
        // product edges: (x, s) steps to (y, trans[s][t]) along x →t y.
        let ns = a.states();
        self.dist.clear();
        self.dist.resize(self.on_path.len() * ns, u32::MAX);
        let mut q = VecDeque::new();
        for &(_, u) in tails {
            self.is_tail[u as usize] = true;
            for s in (0..ns).filter(|&s| a.accept[s]) {
                let node = u as usize * ns + s;
                if self.dist[node] == u32::MAX {
                    self.dist[node] = 0;
                    q.push_back(node as u32);
                }
            }
        }
        while let Some(node) = q.pop_front() {
            let (y, sy) = (node as usize / ns, (node as usize % ns) as u8);
            let d = self.dist[node as usize] + 1;
            for i in self.roff[y]..self.roff[y + 1] {
                let (x, t) = (self.rsrc[i] as usize, self.rty[i] as usize);
                for s in 0..ns {
                    let back = x * ns + s;
                    if a.trans[s][t] == sy && self.dist[back] == u32::MAX {
                        self.dist[back] = d;
                        q.push_back(back as u32);
                    }
                }
            }
        }
        if budget.spend((cg.tgt.len() * ns) as u64) {
            return None;
        }
        let result = self.deepen(cg, a, v, from, bound, budget);
        for &(_, u) in tails {
            self.is_tail[u as usize] = false;
        }
        result
    }

    fn deepen(
        &mut self,
        cg: &ClassGraph,
        a: &Automaton,
        v: u32,
        from: usize,
        bound: usize,
        budget: &mut Budget,
    ) -> Option<Option<Vec<(u32, u8)>>> {
        let m = cg.off.len() - 1;
        let limit = bound.min(m + 1);
        for len in from.max(2)..limit {
            // A cycle of `len` steps: anchor + (len - 1) path edges v → u.
            let edges = len - 1;
            let mut path: Vec<(u32, u8)> = Vec::new();
            let mut stack: Vec<(u32, u8, usize)> = vec![(v, a.init, cg.off[v as usize])];
            self.on_path[v as usize] = true;
            let mut found = None;
            while let Some(top) = stack.last_mut() {
                let (x, s, cur) = (top.0, top.1, top.2);
                if cur >= cg.off[x as usize + 1] {
                    stack.pop();
                    self.on_path[x as usize] = false;
                    path.pop();
                    continue;
                }
                top.2 += 1;
                if budget.spend(1) {
                    self.unwind(&stack);
                    return None;
                }
                let y = cg.tgt[cur];
                let t = cg.ty[cur];
                let ns = a.trans[s as usize][t as usize];
                let depth = path.len() + 1; // edges after taking this one
                if ns == DEAD || self.on_path[y as usize] {
                    continue;
                }
                let dist = self.dist[y as usize * a.states() + usize::from(ns)];
                if dist == u32::MAX || depth + dist as usize > edges {
                    continue;
                }
                if depth == edges {
                    if self.is_tail[y as usize] && a.accept[ns as usize] {
                        path.push((y, t));
                        found = Some(path.clone());
                        break;
                    }
                    continue;
                }
                path.push((y, t));
                self.on_path[y as usize] = true;
                stack.push((y, ns, cg.off[y as usize]));
            }
            self.unwind(&stack);
            if found.is_some() {
                return Some(found);
            }
        }
        Some(None)
    }

    fn unwind(&mut self, stack: &[(u32, u8, usize)]) {
        for &(x, _, _) in stack {
            self.on_path[x as usize] = false;
        }
    }
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
