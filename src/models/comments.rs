//! The `comments` model (Jepsen's CockroachDB "comments" test): blind
//! inserts of unique ids, each `:write` of one id possibly landing on a
//! different node, and `:read`s of every id inserted so far.
//!
//! Strict serializability forbids a read that sees a write `w2` but misses a
//! write `w1` that completed before `w2` was invoked (real-time order). As in
//! Jepsen's checker, every ok read is judged against the writes that
//! completed before the invocation of any write it saw; the ones it missed
//! are its `:missing`.
//!
//! Values are plain (`:write 7`, `:read #{1 7}`), or Jepsen's independent
//! tuples (`:write [k 7]`, `:read [k #{1 7}]`), checked key by key.
//!
//! Without comparing reads to every earlier write: the writes completed
//! before an invocation are a prefix of the completion order, so each
//! write carries the prefix length at its invocation, each read expects the
//! longest prefix among what it saw, and it missed something iff fewer of
//! its values than that rank inside the prefix. Listing what it missed
//! costs the prefix, paid only for bad reads.

use super::{datum_json, op_json, op_text, short, valid_json, Op, Ops, F};
use crate::history::error::ReadError;
use crate::history::raw::OpType;
use crate::history::Datum;
use crate::model::Validity;
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{json, Map, Value};

/// A read that saw a write but missed one that completed before it began.
#[derive(Clone, Debug, PartialEq)]
pub struct BadRead {
    /// Position of the ok read in [`Ops::ops`].
    pub op: usize,
    /// Writes completed before the invocation of some write it saw, not seen;
    /// in completion order.
    pub missing: Vec<Datum>,
    /// How many writes it was expected to see (Jepsen's `:expected-count`).
    pub expected_count: usize,
}

/// The verdict for one key (the only one, `key: None`, for plain values).
#[derive(Debug, Default)]
pub struct KeyResult {
    /// The key of independent tuples.
    pub key: Option<Datum>,
    /// Ok reads judged.
    pub reads: usize,
    /// Bad reads, in history order.
    pub errors: Vec<BadRead>,
}

/// The comments verdict.
#[derive(Debug, Default)]
pub struct CommentsResult {
    /// Whether values were independent `[key value]` tuples.
    pub keyed: bool,
    /// One per key, in order of first appearance.
    pub keys: Vec<KeyResult>,
}

impl CommentsResult {
    /// Invalid iff some read is bad (as Jepsen: a history without reads is
    /// valid).
    pub fn valid(&self) -> Validity {
        if self.keys.iter().all(|k| k.errors.is_empty()) {
            Validity::True
        } else {
            Validity::False
        }
    }

    /// Every bad read, key by key.
    pub fn bad_reads(&self) -> impl Iterator<Item = &BadRead> {
        self.keys.iter().flat_map(|k| &k.errors)
    }

    fn key_json(k: &KeyResult, ops: &Ops) -> Value {
        let errors = k.errors.iter().map(|e| {
            let mut m = match op_json(&ops.ops[e.op]) {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            m.remove("value");
            m.insert(
                "missing".into(),
                Value::Array(e.missing.iter().map(datum_json).collect()),
            );
            m.insert("expected-count".into(), json!(e.expected_count));
            Value::Object(m)
        });
        json!({
            "valid?": valid_json(if k.errors.is_empty() { Validity::True } else { Validity::False }),
            "errors": Value::Array(errors.collect()),
        })
    }

    /// Jepsen's result map: `:errors`, or for tuples the independent
    /// checker's `:results` per key and `:failures`.
    pub fn to_json(&self, ops: &Ops) -> Value {
        if !self.keyed {
            let mut v = match self.keys.first() {
                Some(k) => Self::key_json(k, ops),
                None => json!({"errors": []}),
            };
            v["valid?"] = valid_json(self.valid());
            return v;
        }
        let results: Map<String, Value> = self
            .keys
            .iter()
            .map(|k| {
                let name = k.key.as_ref().map(super::key_string).unwrap_or_default();
                (name, Self::key_json(k, ops))
            })
            .collect();
        let failures = self
            .keys
            .iter()
            .filter(|k| !k.errors.is_empty())
            .map(|k| k.key.as_ref().map(datum_json).unwrap_or(Value::Null));
        json!({
            "valid?": valid_json(self.valid()),
            "results": results,
            "failures": Value::Array(failures.collect()),
        })
    }

    /// A readable account.
    pub fn explain(&self, ops: &Ops) -> String {
        let reads: usize = self.keys.iter().map(|k| k.reads).sum();
        let bad = self.bad_reads().count();
        let mut s = format!(
            "comments: {reads} reads over {} key(s), {bad} saw a write but missed one that completed before it began\n",
            self.keys.len()
        );
        for e in self.bad_reads().take(10) {
            let missing: Vec<String> = e.missing.iter().take(10).map(short).collect();
            s += &format!(
                "  {}\n    missed {} of {} expected: {}{}\n",
                op_text(&ops.ops[e.op]),
                e.missing.len(),
                e.expected_count,
                missing.join(" "),
                if e.missing.len() > 10 { " ..." } else { "" }
            );
        }
        s
    }
}

/// An op's key and payload: `[k v]` for tuples, `(None, value)` otherwise.
/// `read` says whether the payload must be a collection (or nil).
fn split(op: &Op, read: bool) -> (Option<&Datum>, &Datum) {
    if let Datum::Vector(t) = &op.value {
        if t.len() == 2 {
            let coll = matches!(
                t[1],
                Datum::Nil | Datum::Vector(_) | Datum::List(_) | Datum::Set(_)
            );
            if !read || coll {
                return (Some(&t[0]), &t[1]);
            }
        }
    }
    (None, &op.value)
}

/// Per key: the completion order of writes and, per id, its rank there and
/// the prefix completed when it was (last) invoked.
#[derive(Default)]
struct Writes<'a> {
    done: Vec<&'a Datum>,
    rank: FxHashMap<&'a Datum, usize>,
    prefix: FxHashMap<&'a Datum, usize>,
}

/// The slot of key `k`, made on first sight.
fn slot<'a>(
    k: Option<&'a Datum>,
    index: &mut FxHashMap<Option<&'a Datum>, usize>,
    writes: &mut Vec<Writes<'a>>,
    r: &mut CommentsResult,
) -> usize {
    *index.entry(k).or_insert_with(|| {
        writes.push(Writes::default());
        r.keys.push(KeyResult {
            key: k.cloned(),
            ..Default::default()
        });
        writes.len() - 1
    })
}

/// Checks a comments history.
pub fn check(ops: &Ops) -> Result<CommentsResult, ReadError> {
    let mut keyed: Option<bool> = None;
    let mut key_index: FxHashMap<Option<&Datum>, usize> = Default::default();
    let mut writes: Vec<Writes> = Vec::new();
    let mut result = CommentsResult::default();
    let mut same_shape = |op: &Op, k: Option<&Datum>| -> Result<(), ReadError> {
        let this = k.is_some();
        match keyed {
            Some(m) if m != this => Err(ops.error(
                op,
                format!(
                    "expected {} like the ops before, got {}",
                    if m {
                        "an independent [key value] tuple"
                    } else {
                        "a plain value"
                    },
                    short(&op.value)
                ),
            )),
            _ => {
                keyed = Some(this);
                Ok(())
            }
        }
    };
    // Pass 1: writes. Jepsen builds the whole precedence map before judging
    // any read, so a read is judged against later invocations too.
    for op in &ops.ops {
        if op.f != F::Write || !matches!(op.kind, OpType::Invoke | OpType::Ok) {
            continue;
        }
        let (k, id) = split(op, false);
        same_shape(op, k)?;
        let at = slot(k, &mut key_index, &mut writes, &mut result);
        let w = &mut writes[at];
        if op.kind == OpType::Invoke {
            w.prefix.insert(id, w.done.len());
        } else if !w.rank.contains_key(id) {
            w.rank.insert(id, w.done.len());
            w.done.push(id);
        }
    }
    // Pass 2: ok reads.
    for (i, op) in ops.ops.iter().enumerate() {
        if op.f != F::Read || op.kind != OpType::Ok {
            continue;
        }
        let (k, seen) = split(op, true);
        let seen: &[Datum] = match seen {
            Datum::Nil => &[],
            Datum::Vector(xs) | Datum::List(xs) | Datum::Set(xs) => xs,
            other => {
                return Err(ops.error(
                    op,
                    format!(
                        "expected a read to be a collection of ids, got {}",
                        short(other)
                    ),
                ))
            }
        };
        same_shape(op, k)?;
        let s = slot(k, &mut key_index, &mut writes, &mut result);
        let w = &writes[s];
        result.keys[s].reads += 1;
        let seen: FxHashSet<&Datum> = seen.iter().collect();
        let expected = seen
            .iter()
            .filter_map(|d| w.prefix.get(d))
            .max()
            .copied()
            .unwrap_or(0);
        let covered = seen
            .iter()
            .filter(|d| w.rank.get(**d).is_some_and(|&r| r < expected))
            .count();
        if covered < expected {
            let missing = w.done[..expected]
                .iter()
                .filter(|d| !seen.contains(**d))
                .map(|d| (*d).clone())
                .collect();
            result.keys[s].errors.push(BadRead {
                op: i,
                missing,
                expected_count: expected,
            });
        }
    }
    result.keyed = keyed.unwrap_or(false);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::tests::ops;

    fn w(p: i64, v: &str) -> String {
        format!("{{:type :invoke, :f :write, :value {v}, :process {p}}}\n{{:type :ok, :f :write, :value {v}, :process {p}}}\n")
    }

    fn r(v: &str) -> String {
        format!("{{:type :invoke, :f :read, :value nil, :process 9}}\n{{:type :ok, :f :read, :value {v}, :process 9}}\n")
    }

    #[test]
    fn reads_of_a_prefix_are_valid() {
        let h = w(0, "1") + &w(1, "2") + &r("#{}") + &r("#{1}") + &r("#{1 2}");
        let res = check(&ops(&h)).unwrap();
        assert_eq!(res.valid(), Validity::True);
        assert_eq!(res.keys[0].reads, 3);
    }

    #[test]
    fn seeing_a_later_write_but_missing_an_earlier_completed_one_is_invalid() {
        let h = w(0, "1") + &w(1, "2") + &r("#{2}");
        let o = ops(&h);
        let res = check(&o).unwrap();
        assert_eq!(res.valid(), Validity::False);
        assert_eq!(
            res.keys[0].errors,
            vec![BadRead {
                op: 5,
                missing: vec![Datum::Int(1)],
                expected_count: 1
            }]
        );
        let j = res.to_json(&o);
        assert_eq!(j["errors"][0]["missing"], json!([1]));
        assert_eq!(j["errors"][0]["expected-count"], 1);
        assert!(j["errors"][0].get("value").is_none(), "Jepsen drops :value");
    }

    #[test]
    fn concurrent_writes_may_be_seen_in_any_order() {
        // 2 is invoked before 1 completes: seeing 2 alone is fine.
        let h = "{:type :invoke, :f :write, :value 1, :process 0}\n\
                 {:type :invoke, :f :write, :value 2, :process 1}\n\
                 {:type :ok, :f :write, :value 1, :process 0}\n\
                 {:type :ok, :f :write, :value 2, :process 1}\n"
            .to_string()
            + &r("#{2}");
        assert_eq!(check(&ops(&h)).unwrap().valid(), Validity::True);
    }

    #[test]
    fn indeterminate_writes_are_never_expected() {
        let h = "{:type :invoke, :f :write, :value 1, :process 0}\n\
                 {:type :info, :f :write, :value 1, :process 0}\n"
            .to_string()
            + &w(1, "2")
            + &r("#{2}");
        assert_eq!(check(&ops(&h)).unwrap().valid(), Validity::True);
    }

    #[test]
    fn a_read_is_judged_by_the_latest_write_it_saw() {
        // 3 began after 1 and 2 completed; a read of 3 must hold both.
        let h = w(0, "1") + &w(1, "2") + &w(2, "3") + &r("[1 3]");
        let res = check(&ops(&h)).unwrap();
        assert_eq!(res.keys[0].errors[0].missing, vec![Datum::Int(2)]);
        assert_eq!(res.keys[0].errors[0].expected_count, 2);
    }

    #[test]
    fn tuples_are_checked_key_by_key() {
        let h =
            w(0, "[1 10]") + &w(1, "[2 11]") + &w(0, "[1 12]") + &r("[2 #{11}]") + &r("[1 #{12}]");
        let o = ops(&h);
        let res = check(&o).unwrap();
        assert!(res.keyed);
        assert_eq!(res.valid(), Validity::False);
        let j = res.to_json(&o);
        assert_eq!(j["failures"], json!([1]));
        assert_eq!(j["results"]["2"]["valid?"], true);
        assert_eq!(j["results"]["1"]["errors"][0]["missing"], json!([10]));
    }

    #[test]
    fn bad_values_are_input_errors() {
        let e = check(&ops(&r("7"))).unwrap_err().to_string();
        assert!(
            e.contains("expected a read to be a collection of ids, got 7"),
            "{e}"
        );
        let e = check(&ops(&(w(0, "[1 10]") + &w(0, "3"))))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("expected an independent [key value] tuple"),
            "{e}"
        );
    }

    /// Against the definition, pair by pair, on random histories.
    #[test]
    fn agrees_with_the_definition_on_random_histories() {
        let mut rng = crate::rng::Rng::new(19);
        for _ in 0..400 {
            // Random interleaving of invocations/completions of 5 writes and reads.
            let mut text = String::new();
            let mut open: Vec<i64> = Vec::new();
            let mut next = 0i64;
            for _ in 0..14 {
                match rng.below(3) {
                    0 if next < 5 => {
                        text += &format!(
                            "{{:type :invoke, :f :write, :value {next}, :process {next}}}\n"
                        );
                        open.push(next);
                        next += 1;
                    }
                    1 if !open.is_empty() => {
                        let v = open.remove(rng.below(open.len() as u64) as usize);
                        let t = if rng.below(4) == 0 { "info" } else { "ok" };
                        text += &format!("{{:type :{t}, :f :write, :value {v}, :process {v}}}\n");
                    }
                    _ => {
                        let seen: Vec<String> = (0..next)
                            .filter(|_| rng.below(2) == 0)
                            .map(|v| v.to_string())
                            .collect();
                        text += &format!(
                            "{{:type :ok, :f :read, :value #{{{}}}, :process 9}}\n",
                            seen.join(" ")
                        );
                    }
                }
            }
            let o = ops(&text);
            // Brute force: for every read, every seen w2 and every w1 whose ok
            // precedes w2's invocation, w1 must be seen.
            let pos = |kind: OpType, v: i64| {
                o.ops
                    .iter()
                    .position(|op| op.kind == kind && op.f == F::Write && op.value == Datum::Int(v))
            };
            let mut bad = Vec::new();
            for (i, op) in o.ops.iter().enumerate() {
                if op.f != F::Read {
                    continue;
                }
                let Datum::Set(seen) = &op.value else {
                    panic!()
                };
                let mut missing: Vec<i64> = Vec::new();
                for s in seen {
                    let Datum::Int(w2) = s else { panic!() };
                    let inv = pos(OpType::Invoke, *w2).unwrap();
                    for w1 in 0..next {
                        if pos(OpType::Ok, w1).is_some_and(|ok| ok < inv)
                            && !seen.contains(&Datum::Int(w1))
                            && !missing.contains(&w1)
                        {
                            missing.push(w1);
                        }
                    }
                }
                if !missing.is_empty() {
                    missing.sort_by_key(|v| pos(OpType::Ok, *v));
                    bad.push((i, missing));
                }
            }
            let got: Vec<(usize, Vec<i64>)> = check(&o)
                .unwrap()
                .bad_reads()
                .map(|b| {
                    let m = b.missing.iter().map(|d| match d {
                        Datum::Int(x) => *x,
                        _ => panic!(),
                    });
                    (b.op, m.collect())
                })
                .collect();
            assert_eq!(got, bad, "{text}");
        }
    }
}
