//! Level-0 propagation: what the constraints force before any search
//! (unit propagation over the weighted equalities and clauses; keys with a
//! unique reading are decided here, as in Elle), and the forced graph, the
//! edges that hold whatever the solver chooses.

use super::{Conflict, Solver, Why, NONE};

impl Solver<'_> {
    pub(super) fn assign(&mut self, v: u32, b: bool) -> Result<(), Conflict> {
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

    pub(super) fn propagate(&mut self) -> Result<(), Conflict> {
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

    /// Forced edges: structure plus the edges of variables fixed true.
    pub(super) fn forced_graph(&self) -> Vec<(u32, u32, Why)> {
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
}

#[cfg(test)]
mod tests {
    use super::super::super::problem::extract;
    use super::super::super::{Level, Limits};
    use super::super::VarKind;
    use super::*;
    use crate::history::read::read_history;

    /// x ends as [1 2 1]: T0 and T3 both append 1, T2 appends 2.
    const TWO_ONES: &str = "\
{:type :ok, :f :txn, :process 0, :index 0, :value [[:append :x 1]]}
{:type :ok, :f :txn, :process 1, :index 1, :value [[:r :x [1]]]}
{:type :ok, :f :txn, :process 2, :index 2, :value [[:append :x 2]]}
{:type :ok, :f :txn, :process 3, :index 3, :value [[:append :x 1]]}
{:type :ok, :f :txn, :process 4, :index 4, :value [[:r :x [1 2 1]]]}
";

    /// The value of each place variable, by (writer's transaction, start).
    fn places(s: &Solver) -> Vec<(u32, u32, i8)> {
        let mut out = Vec::new();
        for (v, k) in s.vars.iter().enumerate() {
            if let VarKind::Place { key, w, start, .. } = *k {
                let t = s.keys[key as usize].writers[w as usize].txn;
                out.push((t, start, s.val[v]));
            }
        }
        out.sort_unstable();
        out
    }

    #[test]
    fn the_only_writer_of_a_value_is_forced_to_its_place() {
        let h = read_history(TWO_ONES.as_bytes(), "test", None).unwrap();
        let keys = extract(&h, 256).unwrap_or_else(|_| panic!("no contradiction"));
        let limits = Limits::default();
        let mut s = Solver::new(&h, Level::Serializable, &keys, &limits);
        s.build().unwrap();
        s.propagate().unwrap();
        let p = places(&s);
        // The 2 can only be at position 1.
        assert!(p.contains(&(2, 1, 1)), "{p:?}");
        // Either 1 may come first: both writers keep both places open.
        for t in [0, 3] {
            for start in [0, 2] {
                let open = p
                    .iter()
                    .any(|&(pt, ps, x)| pt == t && ps == start && x == -1);
                assert!(open, "T{t} at {start} stays open: {p:?}");
            }
        }
    }
}
