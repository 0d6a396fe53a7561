//! Pruning: rules out every open place (or unseen choice) that would close
//! a cycle through the forced graph, with the barrier chain of each key
//! standing in for reachability (lanes of keys checked together).

use super::{Conflict, Solver, VarKind, NONE};

impl Solver<'_> {
    /// Sets false every open place (or unseen choice) that would close a
    /// cycle with the forced graph. Per key, barriers form a chain, so it is
    /// enough to know, for each node, the first barrier it reaches and the
    /// last barrier that reaches it. Only keys with many open choices are
    /// worth the two linear passes.
    pub(super) fn prune(&mut self, edges: &[(u32, u32)], order: &[u32]) -> Result<usize, Conflict> {
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
