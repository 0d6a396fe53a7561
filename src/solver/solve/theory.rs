//! The SAT solver's theory: the induced order graph must stay acyclic.
//! Each true literal adds its edges to an incremental topological order;
//! an edge that would close a cycle raises the cycle's literals as a
//! conflict (Theorem 3.1 of Cai et al.: a serial order exists iff the
//! graph is acyclic). Also the deadline that stops the search.

use super::super::dag::{self, Dag, Refused, FORCED};
use super::super::Limits;
use batsat::{Callbacks, Lit, Theory, TheoryArg};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Stops the SAT search at a deadline, or once a search run beside it has
/// decided ([`Limits::cancel`]).
pub(crate) struct Deadline {
    at: Instant,
    cancel: Option<Arc<AtomicBool>>,
    /// Calls since the clock was last read, and whether it said stop.
    calls: Cell<u32>,
    stopped: Cell<bool>,
}

/// The solver asks after every decision; reading the clock each time took
/// an eighth of a hard search's time, so it is read once per this many
/// calls (a few milliseconds of search at most).
const CLOCK_EVERY: u32 = 64;

impl Deadline {
    pub(crate) fn new(start: Instant, limits: &Limits) -> Self {
        Deadline {
            at: start + std::time::Duration::from_millis(limits.time_ms),
            cancel: limits.cancel.clone(),
            // The first call reads the clock: a spent budget stops at once.
            calls: Cell::new(CLOCK_EVERY - 1),
            stopped: Cell::new(false),
        }
    }
}

impl Callbacks for Deadline {
    fn stop(&self) -> bool {
        if self.stopped.get() {
            return true;
        }
        let n = self.calls.get() + 1;
        if n < CLOCK_EVERY {
            self.calls.set(n);
            return false;
        }
        self.calls.set(0);
        let stop = self
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
            || Instant::now() >= self.at;
        self.stopped.set(stop);
        stop
    }
}

/// The most the theory raises its [`Limits::reorder_limit`] to: each cycle
/// found only at the final check doubles it.
const MAX_REORDER_LIMIT: usize = 32_768;

/// The acyclicity theory: each true literal adds its edges; an edge that
/// would close a cycle raises the cycle's literals as a conflict clause.
pub(crate) struct Acyclic {
    pub(crate) dag: Dag,
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
    pub(crate) cycles: Vec<Vec<(u32, u32, u32)>>,
}

impl Acyclic {
    /// Starts from `order` (a topological order of the forced graph) with
    /// no edges; `off`/`flat` list the edges of each solver variable, whose
    /// own ids `from_sat` gives.
    pub(crate) fn new(
        order: &[u32],
        off: Vec<u32>,
        flat: Vec<(u32, u32)>,
        from_sat: Vec<u32>,
        reorder_limit: usize,
    ) -> Self {
        Acyclic {
            dag: Dag::with_order(order),
            off,
            flat,
            from_sat,
            processed: 0,
            levels: Vec::new(),
            reorder_limit,
            pending: Vec::new(),
            cycles: Vec::new(),
        }
    }

    /// Gives the next solver variable (created after [`Acyclic::new`], in
    /// order) its edges, for a solver that grows between calls.
    pub(crate) fn push_var(&mut self, edges: &[(u32, u32)], id: u32) {
        self.flat.extend_from_slice(edges);
        self.off.push(self.flat.len() as u32);
        self.from_sat.push(id);
    }

    /// Every edge of the graph, those left waiting for the final check
    /// included: (from, to, solver variable or [`FORCED`]).
    pub(crate) fn all_edges(&self) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        self.dag
            .all_edges()
            .chain(self.pending.iter().map(|&(a, b, t, _)| (a, b, t)))
    }

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

#[cfg(test)]
mod tests {
    use super::*;
    use batsat::{lbool, SolverInterface};

    /// A SAT solver with one variable per entry of `edges` (the edges its
    /// literal adds, tagged `10 + i`) and a theory over `n` nodes in order.
    fn setup(
        n: u32,
        edges: &[&[(u32, u32)]],
        decide: &[bool],
    ) -> (batsat::Solver<batsat::BasicCallbacks>, Vec<Lit>, Acyclic) {
        let mut sat = batsat::Solver::new(batsat::SolverOpts::default(), Default::default());
        let mut lits = Vec::new();
        let (mut off, mut flat) = (vec![0u32], Vec::new());
        for (i, es) in edges.iter().enumerate() {
            lits.push(Lit::new(sat.new_var(lbool::TRUE, decide[i]), true));
            flat.extend_from_slice(es);
            off.push(flat.len() as u32);
        }
        let from_sat = (10..10 + edges.len() as u32).collect();
        let order: Vec<u32> = (0..n).collect();
        (sat, lits, Acyclic::new(&order, off, flat, from_sat, 1024))
    }

    #[test]
    fn an_edge_closing_a_cycle_is_refused_with_the_cycle_as_conflict() {
        let (mut sat, l, mut th) = setup(3, &[&[(0, 1)], &[(1, 2)], &[(2, 0)]], &[true; 3]);
        for &x in &l {
            sat.add_clause_reuse(&mut vec![x]);
        }
        assert_eq!(sat.solve_limited_th(&mut th, &[]), lbool::FALSE);
        let mut cyc = th.cycles[0].clone();
        cyc.sort_unstable();
        assert_eq!(cyc, vec![(0, 1, 10), (1, 2, 11), (2, 0, 12)]);
    }

    #[test]
    fn edges_of_a_dag_are_accepted() {
        let (mut sat, l, mut th) = setup(3, &[&[(0, 1)], &[(1, 2), (0, 2)]], &[true; 2]);
        for &x in &l {
            sat.add_clause_reuse(&mut vec![x]);
        }
        assert_eq!(sat.solve_limited_th(&mut th, &[]), lbool::TRUE);
        assert_eq!(th.dag.edges(), 3);
        assert!(th.cycles.is_empty());
    }

    /// x adds 0 → 1 and implies y (through z), which adds 1 → 0. Only x is
    /// decided on, true first: the cycle is refused, and the solver can set
    /// y only if backtracking took 0 → 1 out again.
    #[test]
    fn backtracking_removes_the_edges_of_undone_literals() {
        let (mut sat, l, mut th) = setup(2, &[&[(0, 1)], &[(1, 0)], &[]], &[true, false, false]);
        let (x, y, z) = (l[0], l[1], l[2]);
        sat.add_clause_reuse(&mut vec![x, y]);
        sat.add_clause_reuse(&mut vec![!x, z]);
        sat.add_clause_reuse(&mut vec![!z, y]);
        assert_eq!(sat.solve_limited_th(&mut th, &[]), lbool::TRUE);
        assert!(!th.cycles.is_empty(), "x was tried and refused");
        assert_eq!(sat.get_model()[0], lbool::FALSE);
        // The graph tags edges by solver variable (y is the second).
        assert_eq!(th.dag.all_edges().collect::<Vec<_>>(), vec![(1, 0, 1)]);
    }

    #[test]
    fn popping_a_level_undoes_its_edges_and_pending_checks() {
        let (_, _, mut th) = setup(3, &[&[(0, 1)]], &[true]);
        th.create_level();
        th.dag.add(0, 1, 10).unwrap();
        th.processed = 1;
        th.pending.push((2, 0, 10, 0));
        th.pop_levels(1);
        assert_eq!((th.dag.edges(), th.processed, th.n_levels()), (0, 0, 0));
        assert!(th.pending.is_empty());
        assert!(th.dag.add(1, 0, 11).is_ok(), "0 → 1 is gone");
    }
}
