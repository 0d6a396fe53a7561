//! The text of findings: a conflict at level 0, a cycle in the forced
//! graph, or the cycles the SAT search met, told as steps between
//! transactions (who appended what where, who read what).

use super::super::dag::FORCED;
use super::super::problem::Names;
use super::super::{DupKind, Level};
use super::{Conflict, Finding, Origin, Solver, VarKind, Why};
use crate::anomaly::AnomalyKind;
use crate::graph::{classify, BaseClass, CycleClass, Rels, Variant};
use crate::history::TxnId;

impl Solver<'_> {
    pub(super) fn explain_conflict(&self, c: Conflict) -> Finding {
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
            kind: AnomalyKind::DuplicateAppendsUnproducibleRead.into(),
            txns,
            keys: vec![self.keys[key as usize].key],
            explanation: text,
        }
    }

    pub(super) fn explain_forced_cycle(&self, edges: &[(u32, u32, Why)], cyc: &[usize]) -> Finding {
        let steps: Vec<(u32, u32, Why)> = cyc.iter().map(|&i| edges[i]).collect();
        self.describe_cycle(&steps)
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
        let n = Names(self.h);
        // With unique values the only choices left are the orders of
        // appends no read shows (and which `info` transactions committed).
        let repeats = super::super::has_duplicate_appends(self.h);
        let mut text = format!(
            "every choice of {} closes a cycle{}",
            if repeats {
                "which appends produced the repeated values"
            } else {
                "order of the appends no read shows"
            },
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
            Level::SnapshotIsolation if !repeats => {
                AnomalyKind::UnreadAppendsNotSnapshotIsolated.into()
            }
            Level::SnapshotIsolation => AnomalyKind::DuplicateAppendsNotSnapshotIsolated.into(),
            // Every choice closes a cycle of ww and wr edges.
            Level::ReadCommitted => DupKind::Cycle(CycleClass::new(BaseClass::G1c, Variant::Plain)),
            _ if !repeats => AnomalyKind::UnreadAppendsUnserializable.into(),
            _ => AnomalyKind::DuplicateAppendsUnserializable.into(),
        };
        Finding {
            kind,
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
                kind: DupKind::Cycle(CycleClass::new(BaseClass::G0, Variant::Plain)),
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
        // Named by the one classifier (adjacency of anti-dependencies
        // included); a step told as "read, before another read the longer
        // list" stands for an anti-dependency then a read dependency.
        let steps: Vec<Rels> = rels
            .iter()
            .flat_map(|&r| match r {
                "ww" => vec![Rels::WW],
                "wr" => vec![Rels::WR],
                "rw" => vec![Rels::RW],
                "rw+wr" => vec![Rels::RW, Rels::WR],
                _ => vec![Rels::REALTIME],
            })
            .collect();
        let class =
            classify(&steps).unwrap_or_else(|| CycleClass::new(BaseClass::G0, Variant::Plain));
        let kind = DupKind::Cycle(class);
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

#[cfg(test)]
mod tests {
    use super::super::super::problem::extract;
    use super::super::super::{Level, Limits};
    use super::super::Outcome2;
    use super::*;
    use crate::history::read::read_history;

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
            (f.kind.name(), f.txns, f.keys),
            ("G2-item", vec![0, 1], vec![0, 1])
        );
        assert_eq!(
            f.explanation,
            "Let: T0, T1\nThen:\n  \
             - T0 read key :x as [], which misses T1's append of [1] at position 0.\n  \
             - T1 read key :y as [], which misses T0's append of [1] at position 0, a cycle.\n"
        );
    }
}
