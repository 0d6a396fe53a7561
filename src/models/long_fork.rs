//! The `long-fork` model: each key is written once (`[[:w k v]]`), and
//! read transactions (`[[:r k1 v1] [:r k2 v2] ...]`) read a whole group of
//! keys at once.
//!
//! Under snapshot isolation the reads of one group are totally ordered:
//! each later read sees every write an earlier one saw. Two reads that each
//! saw a write the other missed are a *long fork* (allowed by parallel
//! snapshot isolation, not by snapshot isolation). As in Jepsen's checker,
//! a key written twice makes the verdict unknown (the test assumes it
//! never happens), and so does a group read of the wrong size or two reads
//! with different values for one key.
//!
//! Finding forks without comparing every pair of reads: in a group sorted
//! by the number of writes seen, every pair is comparable iff each
//! neighbour sees all its predecessor saw. So each fork reported is such a
//! neighbouring pair, and a group with forks reports at least one; not
//! every incomparable pair is listed (Jepsen lists them all).

use super::{datum_json, op_json, op_text, valid_json, Op, Ops};
use crate::history::raw::OpType;
use crate::history::Datum;
use crate::model::Validity;
use rustc_hash::FxHashMap;
use serde_json::{json, Map, Value};

/// The long-fork verdict.
#[derive(Debug, Default)]
pub struct LongForkResult {
    /// Ok read transactions.
    pub reads_count: usize,
    /// Reads that saw no write.
    pub early_read_count: usize,
    /// Reads that saw every key written.
    pub late_read_count: usize,
    /// Why the history cannot be judged (Jepsen's `:error`), if it cannot.
    pub error: Option<Value>,
    /// Pairs of incomparable reads, by op position.
    pub forks: Vec<(usize, usize)>,
}

impl LongForkResult {
    /// Unknown with an error, invalid with forks, else valid.
    pub fn valid(&self) -> Validity {
        if self.error.is_some() {
            Validity::Unknown
        } else if self.forks.is_empty() {
            Validity::True
        } else {
            Validity::False
        }
    }

    /// Jepsen's result map: the read counts, and `:forks` or `:error`.
    pub fn to_json(&self, ops: &Ops) -> Value {
        let mut m = Map::new();
        m.insert("reads-count".into(), json!(self.reads_count));
        m.insert("early-read-count".into(), json!(self.early_read_count));
        m.insert("late-read-count".into(), json!(self.late_read_count));
        m.insert("valid?".into(), valid_json(self.valid()));
        if let Some(e) = &self.error {
            m.insert("error".into(), e.clone());
        } else if !self.forks.is_empty() {
            let forks = self
                .forks
                .iter()
                .map(|&(a, b)| json!([op_json(&ops.ops[a]), op_json(&ops.ops[b])]));
            m.insert("forks".into(), Value::Array(forks.collect()));
        }
        Value::Object(m)
    }

    /// A readable account.
    pub fn explain(&self, ops: &Ops) -> String {
        let mut s = format!(
            "long-fork: {} reads ({} saw no write, {} saw every key), {} forks\n",
            self.reads_count,
            self.early_read_count,
            self.late_read_count,
            self.forks.len()
        );
        if let Some(e) = &self.error {
            s += &format!("  cannot judge: {e}\n");
        }
        for &(a, b) in self.forks.iter().take(10) {
            s += &format!(
                "  fork: each saw a write the other missed:\n    {}\n    {}\n",
                op_text(&ops.ops[a]),
                op_text(&ops.ops[b])
            );
        }
        s
    }
}

/// The micro-ops `[f k v]` of a transaction value, if it is one.
fn mops(op: &Op) -> Option<Vec<(&str, &Datum, &Datum)>> {
    let (Datum::Vector(xs) | Datum::List(xs)) = &op.value else {
        return None;
    };
    xs.iter()
        .map(|m| match m {
            Datum::Vector(t) if t.len() == 3 => match &t[0] {
                Datum::Keyword(f) | Datum::Str(f) => Some((f.as_str(), &t[1], &t[2])),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// Checks a long-fork history; `group_size` 0 accepts reads of any size.
pub fn check(ops: &Ops, group_size: usize) -> LongForkResult {
    let mut result = LongForkResult::default();
    // A key written twice: the first such write.
    let mut written: rustc_hash::FxHashSet<&Datum> = Default::default();
    for op in ops.ops.iter().filter(|o| o.kind == OpType::Invoke) {
        if let Some(m) = mops(op) {
            if let [("w", k, _)] = m.as_slice() {
                if !written.insert(*k) && result.error.is_none() {
                    result.error = Some(json!(["multiple-writes", datum_json(k)]));
                }
            }
        }
    }
    // Ok reads, grouped by their set of keys (sorted).
    let mut groups: FxHashMap<Vec<&Datum>, Vec<(usize, Vec<&Datum>)>> = Default::default();
    for (i, op) in ops.ops.iter().enumerate() {
        if op.kind != OpType::Ok {
            continue;
        }
        let Some(m) = mops(op) else { continue };
        if m.is_empty() || m.iter().any(|(f, _, _)| *f != "r") {
            continue;
        }
        result.reads_count += 1;
        let mut kv: Vec<(&Datum, &Datum)> = m.iter().map(|&(_, k, v)| (k, v)).collect();
        // As a map: the last read of a key wins.
        kv.reverse();
        kv.sort_by(|a, b| a.0.cmp(b.0));
        kv.dedup_by(|a, b| a.0 == b.0);
        if kv.iter().all(|(_, v)| **v == Datum::Nil) {
            result.early_read_count += 1;
        }
        if kv.iter().all(|(_, v)| **v != Datum::Nil) {
            result.late_read_count += 1;
        }
        if group_size > 0 && kv.len() != group_size && result.error.is_none() {
            result.error = Some(json!(format!(
                "every read should observe {group_size} keys, but {} observed {}",
                op_text(op),
                kv.len()
            )));
        }
        let (keys, values) = kv.into_iter().unzip();
        groups.entry(keys).or_default().push((i, values));
    }
    if result.error.is_some() {
        return result;
    }
    let mut forks = Vec::new();
    for (keys, mut reads) in groups {
        // One value per key across the group, or the test's premise fails.
        for k in 0..keys.len() {
            let mut value: Option<(usize, &Datum)> = None;
            for (i, vs) in &reads {
                if *vs[k] == Datum::Nil {
                    continue;
                }
                match value {
                    Some((_, v)) if v != vs[k] => {
                        result.error = Some(json!(format!(
                            "two reads saw different values of key {}, which should be written once: {} and {}",
                            keys[k],
                            op_text(&ops.ops[value.expect("set").0]),
                            op_text(&ops.ops[*i])
                        )));
                        return result;
                    }
                    Some(_) => {}
                    None => value = Some((*i, vs[k])),
                }
            }
        }
        let seen = |vs: &[&Datum]| vs.iter().filter(|v| ***v != Datum::Nil).count();
        reads.sort_by_key(|(i, vs)| (seen(vs), *i));
        for pair in reads.windows(2) {
            let ((a, va), (b, vb)) = (&pair[0], &pair[1]);
            let contained = va
                .iter()
                .zip(vb)
                .all(|(x, y)| **x == Datum::Nil || **y != Datum::Nil);
            if !contained {
                forks.push(((*a).min(*b), (*a).max(*b)));
            }
        }
    }
    forks.sort_unstable();
    result.forks = forks;
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::tests::ops;

    fn read(values: &str) -> String {
        format!("{{:type :invoke, :f :read, :value nil, :process 0}}\n{{:type :ok, :f :read, :value {values}, :process 0}}\n")
    }

    #[test]
    fn reads_in_a_chain_are_valid() {
        let h = read("[[:r 0 nil] [:r 1 nil]]")
            + &read("[[:r 1 1] [:r 0 nil]]")
            + &read("[[:r 0 1] [:r 1 1]]");
        let r = check(&ops(&h), 2);
        assert_eq!(r.valid(), Validity::True);
        assert_eq!(
            (r.reads_count, r.early_read_count, r.late_read_count),
            (3, 1, 1)
        );
    }

    #[test]
    fn reads_that_each_miss_the_others_write_are_a_fork() {
        let h = read("[[:r 0 1] [:r 1 nil]]") + &read("[[:r 1 1] [:r 0 nil]]");
        let r = check(&ops(&h), 2);
        assert_eq!(r.valid(), Validity::False);
        assert_eq!(r.forks, vec![(1, 3)]);
        assert_eq!(r.to_json(&ops(&h))["forks"][0][1]["index"], 3);
    }

    #[test]
    fn a_near_miss_across_groups_is_no_fork() {
        // Incomparable, but reads of different groups never compare.
        let h = read("[[:r 0 1] [:r 1 nil]]") + &read("[[:r 2 1] [:r 3 nil]]");
        assert_eq!(check(&ops(&h), 2).valid(), Validity::True);
    }

    #[test]
    fn a_key_written_twice_or_a_wrong_group_is_unknown() {
        let w = "{:type :invoke, :f :write, :value [[:w 0 1]], :process 1}\n";
        let r = check(&ops(&format!("{w}{w}")), 2);
        assert_eq!(r.valid(), Validity::Unknown);
        assert_eq!(r.error, Some(json!(["multiple-writes", 0])));
        let r = check(&ops(&read("[[:r 0 1]]")), 2);
        assert_eq!(r.valid(), Validity::Unknown);
        let r = check(&ops(&(read("[[:r 0 1]]") + &read("[[:r 0 2]]"))), 0);
        assert_eq!(r.valid(), Validity::Unknown);
    }

    /// Neighbours in the sorted order find a fork exactly when some pair is
    /// incomparable: checked against all pairs on random groups.
    #[test]
    fn neighbour_checks_agree_with_all_pairs() {
        let mut rng = crate::rng::Rng::new(5);
        for _ in 0..500 {
            let reads: Vec<Vec<bool>> = (0..1 + rng.below(5))
                .map(|_| (0..3).map(|_| rng.below(2) == 0).collect())
                .collect();
            let h: String = reads
                .iter()
                .map(|r| {
                    let mops: Vec<String> = r
                        .iter()
                        .enumerate()
                        .map(|(k, &w)| format!("[:r {k} {}]", if w { "1" } else { "nil" }))
                        .collect();
                    read(&format!("[{}]", mops.join(" ")))
                })
                .collect();
            let sub = |a: &[bool], b: &[bool]| a.iter().zip(b).all(|(x, y)| !x || *y);
            let fork = reads
                .iter()
                .any(|a| reads.iter().any(|b| !sub(a, b) && !sub(b, a)));
            assert_eq!(check(&ops(&h), 3).forks.is_empty(), !fork, "{h}");
        }
    }
}
