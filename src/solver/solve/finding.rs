//! The findings of the search: a conflict at level 0, a cycle in the
//! forced graph, or the cycles the SAT search met, each with its proof
//! told as steps between transactions (who appended what where, who read
//! what), as typed records ([`crate::proof`]).

use super::super::dag::FORCED;
use super::super::{DupKind, Level};
use super::{Conflict, Finding, Origin, Solver, VarKind, Why};
use crate::anomaly::AnomalyKind;
use crate::graph::{classify, BaseClass, CycleClass, Rels, Variant};
use crate::history::TxnId;
use crate::proof::{AppendStep, AppendWhy, Proof};

impl Solver<'_> {
    pub(super) fn explain_conflict(&self, c: Conflict) -> Finding {
        let (key, proof, mut txns) = match c {
            Conflict::Lin(l) => match self.lins[l as usize].origin {
                Origin::Bin { key, bin } => {
                    let kf = &self.keys[key as usize];
                    let b = &kf.bins[bin as usize];
                    let reader = kf
                        .readers
                        .iter()
                        .filter(|r| r.cut >= b.end)
                        .min_by_key(|r| r.cut)
                        .map(|r| r.txn);
                    let candidates: Vec<(TxnId, Vec<_>)> = b
                        .cands
                        .iter()
                        .map(|&w| {
                            let wr = &kf.writers[w as usize];
                            (wr.txn, wr.block.clone())
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
                        Proof::Unfillable {
                            key: kf.key,
                            reader,
                            read: kf.list[..b.end as usize].to_vec(),
                            start: b.start,
                            end: b.end,
                            candidates,
                        },
                        txns,
                    )
                }
                Origin::Writer { key, w } => {
                    let kf = &self.keys[key as usize];
                    let wr = &kf.writers[w as usize];
                    (
                        key,
                        Proof::Homeless {
                            key: kf.key,
                            txn: wr.txn,
                            block: wr.block.clone(),
                            list: kf.list.clone(),
                            reader: kf.longest,
                        },
                        vec![wr.txn],
                    )
                }
                Origin::AltPick { key } => {
                    let kf = &self.keys[key as usize];
                    (
                        key,
                        Proof::NoSpelling {
                            key: kf.key,
                            list: kf.list.clone(),
                        },
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
                    Proof::UnproducibleReads {
                        key: kf.key,
                        list: kf.list.clone(),
                    },
                    vec![],
                )
            }
        };
        txns.sort_unstable();
        txns.dedup();
        Finding {
            kind: AnomalyKind::DuplicateAppendsUnproducibleRead.into(),
            txns,
            keys: vec![self.keys[key as usize].key],
            proof,
        }
    }

    pub(super) fn explain_forced_cycle(&self, edges: &[(u32, u32, Why)], cyc: &[usize]) -> Finding {
        let steps: Vec<(u32, u32, Why)> = cyc.iter().map(|&i| edges[i]).collect();
        self.describe_cycle(&steps)
    }

    /// A G-single every choice has (found in the forced graph): its cycle,
    /// named G-single-item whatever its steps classify as (the reader's
    /// anti-dependency is the one rw edge).
    pub(super) fn describe_single(&self, steps: &[(u32, u32, Why)]) -> Finding {
        let mut f = self.describe_cycle(steps);
        f.kind = DupKind::Cycle(CycleClass::new(BaseClass::GSingleItem, Variant::Plain));
        f
    }

    pub(super) fn unsat_finding(&self, cycles: &[Vec<(u32, u32, u32)>]) -> Finding {
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
        // With unique values the only choices left are the orders of
        // appends no read shows (and which `info` transactions committed).
        let repeats = super::super::has_duplicate_appends(self.h);
        let example = cycles.iter().min_by_key(|c| c.len()).map(|c| {
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
            Box::new(self.describe_cycle(&steps).proof)
        });
        // The proof names the keys and the first 24 transactions.
        let proof = Proof::EveryChoiceCycles {
            repeats,
            keys: keys.clone(),
            txns: if keys.is_empty() {
                Vec::new()
            } else {
                txns.iter().copied().take(24).collect()
            },
            example,
        };
        let kind = match self.level {
            Level::SnapshotIsolation if !repeats => {
                AnomalyKind::UnreadAppendsNotSnapshotIsolated.into()
            }
            Level::SnapshotIsolation => AnomalyKind::DuplicateAppendsNotSnapshotIsolated.into(),
            // Every choice closes a cycle of ww and wr edges.
            Level::ReadCommitted => DupKind::Cycle(CycleClass::new(BaseClass::G1c, Variant::Plain)),
            // Every choice closes a cycle of ww and wr edges, or one with a
            // single anti-dependency.
            Level::ConsistentView => {
                DupKind::Cycle(CycleClass::new(BaseClass::GSingleItem, Variant::Plain))
            }
            _ if !repeats => AnomalyKind::UnreadAppendsUnserializable.into(),
            _ => AnomalyKind::DuplicateAppendsUnserializable.into(),
        };
        Finding {
            kind,
            txns,
            keys,
            proof,
        }
    }

    /// The reason of a forced edge (looked up again for proofs).
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

    /// Turns a cycle over nodes into transaction-level steps, each with
    /// what shows it (ww, wr, rw, realtime).
    fn describe_cycle(&self, steps: &[(u32, u32, Why)]) -> Finding {
        // Rotate so the cycle starts at a transaction node.
        let Some(s0) = steps.iter().position(|e| self.is_txn_node(e.0)) else {
            return Finding {
                kind: DupKind::Cycle(CycleClass::new(BaseClass::G0, Variant::Plain)),
                txns: vec![],
                keys: vec![],
                proof: Proof::BarrierCycle,
            };
        };
        let rot: Vec<(u32, u32, Why)> = steps[s0..]
            .iter()
            .chain(steps[..s0].iter())
            .copied()
            .collect();
        let mut parts: Vec<AppendStep> = Vec::new();
        let mut txns: Vec<TxnId> = Vec::new();
        let mut keys: Vec<u32> = Vec::new();
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
            let why = self.step(first, last, from, to);
            keys.extend(why.key());
            parts.push(AppendStep { from, to, why });
            i = j + 1;
        }
        // Named by the one classifier (adjacency of anti-dependencies
        // included); a step told as "read, before another read the longer
        // list" stands for an anti-dependency then a read dependency.
        let steps: Vec<Rels> = parts
            .iter()
            .flat_map(|s| s.why.rels().iter().copied())
            .collect();
        let class =
            classify(&steps).unwrap_or_else(|| CycleClass::new(BaseClass::G0, Variant::Plain));
        let kind = DupKind::Cycle(class);
        keys.sort_unstable();
        keys.dedup();
        let mut tx = txns.clone();
        tx.sort_unstable();
        tx.dedup();
        Finding {
            kind,
            txns: tx,
            keys,
            proof: Proof::AppendCycle { steps: parts },
        }
    }

    /// One transaction-to-transaction step of a cycle: `first` leaves `from`,
    /// `last` enters `to`; what shows it.
    fn step(
        &self,
        first: (u32, u32, Why),
        last: (u32, u32, Why),
        from: TxnId,
        to: TxnId,
    ) -> AppendWhy {
        if let Why::Realtime = first.2 {
            return AppendWhy::Realtime;
        }
        if let Why::Var(v) = first.2 {
            if let VarKind::Committed { .. } = self.vars[v as usize] {
                return AppendWhy::Realtime;
            }
            if let VarKind::Before { key, .. } = self.vars[v as usize] {
                return AppendWhy::FirstCommitter {
                    key: self.keys[key as usize].key,
                };
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
            return AppendWhy::Precedes;
        };
        let rb = b.map(|x| x.1);
        let kf = &self.keys[key as usize];
        let k = kf.key;
        let block = |w: u32| kf.writers[w as usize].block.clone();
        let read = |c: u32| kf.list[..c as usize].to_vec();
        match (ra, rb) {
            (Role::Write(s, w), Some(Role::Write(s2, w2))) => AppendWhy::AppendedBefore {
                key: k,
                block: block(w),
                at: s,
                next: block(w2),
                next_at: s2,
            },
            (Role::Write(s, w), Some(Role::Unseen(w2))) => AppendWhy::AppendedBeforeUnseen {
                key: k,
                block: block(w),
                at: s,
                next: block(w2),
            },
            (Role::Write(s, w), Some(Role::Read(c))) => AppendWhy::ReadIncludes {
                key: k,
                read: read(c),
                block: block(w),
                at: s,
            },
            (Role::Read(c), Some(Role::Write(s, w))) => AppendWhy::ReadMisses {
                key: k,
                read: read(c),
                block: block(w),
                at: s,
            },
            (Role::Read(c), Some(Role::Unseen(w))) => AppendWhy::ReadMissesUnseen {
                key: k,
                read: read(c),
                block: block(w),
            },
            (Role::Read(c), Some(Role::Read(c2))) => AppendWhy::ReadBeforeLonger {
                key: k,
                read: read(c),
                longer: read(c2),
            },
            (Role::Write(s, w), _) => AppendWhy::AppendedAt {
                key: k,
                block: block(w),
                at: s,
            },
            (Role::Read(c), _) => AppendWhy::ReadLength { key: k, len: c },
            (Role::Unseen(w), _) => AppendWhy::AppendedUnseen {
                key: k,
                block: block(w),
            },
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Role {
    Read(u32),
    /// Start position and writer.
    Write(u32, u32),
    Unseen(u32),
}

#[cfg(test)]
mod tests {
    use super::super::super::problem::extract;
    use super::super::super::{Level, Limits};
    use super::super::Outcome2;
    use super::*;
    use crate::history::read::read_history;
    use crate::history::Datum;

    /// Write skew: T0 misses T1's append to x, T1 misses T0's append to y,
    /// and T2 saw both appends.
    const WRITE_SKEW: &str = "\
{:type :ok, :f :txn, :process 0, :index 0, :value [[:r :x []] [:append :y 1]]}
{:type :ok, :f :txn, :process 1, :index 1, :value [[:r :y []] [:append :x 1]]}
{:type :ok, :f :txn, :process 2, :index 2, :value [[:r :x [1]] [:r :y [1]]]}
";

    #[test]
    fn a_cycle_is_told_as_steps_between_transactions() {
        let h = read_history(WRITE_SKEW.as_bytes(), "test", None).unwrap();
        let keys = extract(&h, 256).unwrap_or_else(|_| panic!("no contradiction"));
        let limits = Limits {
            witness_first: false,
            ..Limits::default()
        };
        let Outcome2::Invalid(f) = Solver::new(&h, Level::Serializable, &keys, &limits).run()
        else {
            panic!("write skew is not serializable");
        };
        assert_eq!(
            (f.kind.name(), f.txns.clone(), f.keys.clone()),
            ("G2-item", vec![0, 1], vec![0, 1])
        );
        // T0 read x as [], which misses T1's append of [1] at position 0;
        // T1 read y as [], which misses T0's append of [1] at position 0.
        let one = h.values.get(&Datum::Int(1)).expect("1 is appended");
        let (x, y) = (f.keys[0], f.keys[1]);
        let missed = |key, from, to| AppendStep {
            from,
            to,
            why: AppendWhy::ReadMisses {
                key,
                read: vec![],
                block: vec![one],
                at: 0,
            },
        };
        assert_eq!(
            f.proof,
            Proof::AppendCycle {
                steps: vec![missed(x, 0, 1), missed(y, 1, 0)]
            }
        );
    }
}
