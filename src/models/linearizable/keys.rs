//! Jepsen's independent keys: a history whose every op holds a `[key value]`
//! tuple is many single-object histories run side by side, one per key
//! (`jepsen.independent`). Each key is checked as an object of its own, the
//! way Jepsen's independent checker wraps Knossos; keys are small, so this
//! is also what keeps keyed histories (etcd's, for one) fast.

use super::spec::Object;
use super::{check, LinOptions, LinResult};
use crate::history::error::ReadError;
use crate::history::Datum;
use crate::model::Validity;
use crate::models::{datum_json, key_string, valid_json, Ops};
use serde_json::{json, Map, Value};

/// One key's history and its result.
#[derive(Debug)]
pub struct KeyResult {
    /// The key.
    pub key: Datum,
    /// The key's ops, values without the key (what the checker saw).
    pub ops: Ops,
    /// The key's verdict.
    pub result: LinResult,
}

/// The results of a history of independent keys, in order of first
/// appearance.
#[derive(Debug)]
pub struct KeyedResult {
    /// Per key.
    pub keys: Vec<KeyResult>,
}

/// Splits `ops` by key when every op's value is a `[key value]` tuple (and,
/// for cas-register, every CAS's value `[key [old new]]`, since a plain
/// CAS is a pair too); `None` for a single-object history.
pub fn split(ops: &Ops, object: Object) -> Option<Vec<(Datum, Ops)>> {
    let pair = |d: &Datum| match d {
        Datum::Vector(t) if t.len() == 2 => Some((t[0].clone(), t[1].clone())),
        _ => None,
    };
    if ops.ops.is_empty() {
        return None;
    }
    let mut keys: Vec<(Datum, Ops)> = Vec::new();
    let mut index: rustc_hash::FxHashMap<Datum, usize> = Default::default();
    for op in &ops.ops {
        let (k, v) = pair(&op.value)?;
        if object == Object::CasRegister && op.f.name() == "cas" && pair(&v).is_none() {
            return None;
        }
        let i = *index.entry(k.clone()).or_insert_with(|| {
            keys.push((
                k,
                Ops {
                    file: ops.file.clone(),
                    ops: Vec::new(),
                },
            ));
            keys.len() - 1
        });
        let mut op = op.clone();
        op.value = v;
        keys[i].1.ops.push(op);
    }
    Some(keys)
}

/// Checks each key of a history of independent keys, within one time limit.
pub fn check_keys(
    keys: Vec<(Datum, Ops)>,
    object: Object,
    options: &LinOptions,
) -> Result<KeyedResult, ReadError> {
    let deadline = options
        .time_limit_ms
        .map(|ms| std::time::Instant::now() + std::time::Duration::from_millis(ms));
    let mut out = Vec::with_capacity(keys.len());
    for (key, ops) in keys {
        let left = deadline.map(|d| {
            d.saturating_duration_since(std::time::Instant::now())
                .as_millis() as u64
        });
        let o = LinOptions {
            time_limit_ms: left,
            ..options.clone()
        };
        let result = check(&ops, object, &o)?;
        out.push(KeyResult { key, ops, result });
    }
    Ok(KeyedResult { keys: out })
}

impl KeyedResult {
    /// Invalid if a key is; else unknown if a key is; else valid.
    pub fn valid(&self) -> Validity {
        let vs: Vec<Validity> = self.keys.iter().map(|k| k.result.valid()).collect();
        if vs.contains(&Validity::False) {
            Validity::False
        } else if vs.contains(&Validity::Unknown) {
            Validity::Unknown
        } else {
            Validity::True
        }
    }

    /// Jepsen's independent checker's map: `valid?`, `results` per key,
    /// `failures` (the keys not valid).
    pub fn to_json(&self) -> Value {
        let results: Map<String, Value> = self
            .keys
            .iter()
            .map(|k| (key_string(&k.key), k.result.to_json(&k.ops)))
            .collect();
        let failures: Vec<Value> = self.failing().map(|k| datum_json(&k.key)).collect();
        json!({
            "valid?": valid_json(self.valid()),
            "results": results,
            "failures": failures,
        })
    }

    /// The keys that are not valid (invalid or unknown).
    pub fn failing(&self) -> impl Iterator<Item = &KeyResult> {
        self.keys
            .iter()
            .filter(|k| k.result.valid() != Validity::True)
    }

    /// A line for the whole, then each key that is not valid, explained.
    pub fn explain(&self) -> String {
        let bad: Vec<&KeyResult> = self.failing().collect();
        let mut s = format!(
            "{} independent keys, {} not linearizable or undecided\n",
            self.keys.len(),
            bad.len()
        );
        for k in bad {
            s += &format!("key {}:\n", key_string(&k.key));
            for line in k.result.explain(&k.ops).lines() {
                s += &format!("  {line}\n");
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::tests::ops;

    const KEYED: &str = "{:type :invoke, :f :write, :value [1 3], :process 0}
{:type :ok, :f :write, :value [1 3], :process 0}
{:type :invoke, :f :cas, :value [2 [nil 4]], :process 1}
{:type :fail, :f :cas, :value [2 [nil 4]], :process 1}
{:type :invoke, :f :read, :value [1 nil], :process 1}
{:type :ok, :f :read, :value [1 4], :process 1}
{:type :invoke, :f :read, :value [2 nil], :process 0}
{:type :ok, :f :read, :value [2 nil], :process 0}";

    #[test]
    fn tuples_split_by_key_and_plain_pairs_do_not() {
        let keys = split(&ops(KEYED), Object::CasRegister).expect("keyed");
        let names: Vec<String> = keys.iter().map(|(k, _)| key_string(k)).collect();
        assert_eq!(names, ["1", "2"]);
        assert_eq!(keys[0].1.ops.len(), 4);
        assert_eq!(keys[0].1.ops[3].value, Datum::Int(4), "the key is stripped");
        // A plain CAS is a pair [old new] too: not a tuple.
        let plain = "{:type :invoke, :f :cas, :value [1 2], :process 0}
{:type :ok, :f :cas, :value [1 2], :process 0}";
        assert!(split(&ops(plain), Object::CasRegister).is_none());
        // One op without a tuple: a single object.
        let mixed = format!("{KEYED}\n{{:type :invoke, :f :read, :value nil, :process 3}}");
        assert!(split(&ops(&mixed), Object::CasRegister).is_none());
        let mutex = "{:type :invoke, :f :acquire, :value [7 nil], :process 0}
{:type :ok, :f :acquire, :value [7 nil], :process 0}";
        assert_eq!(split(&ops(mutex), Object::Mutex).map(|k| k.len()), Some(1));
    }

    #[test]
    fn a_key_that_is_not_linearizable_makes_the_history_invalid() {
        let keys = split(&ops(KEYED), Object::CasRegister).unwrap();
        let r = check_keys(keys, Object::CasRegister, &LinOptions::default()).unwrap();
        // Key 1 read 4, which only the failed CAS of key 2 meant to write.
        assert_eq!(r.keys[0].result.valid(), Validity::False);
        assert_eq!(r.keys[1].result.valid(), Validity::True);
        assert_eq!(r.valid(), Validity::False);
        let j = r.to_json();
        assert_eq!(j["valid?"], false);
        assert_eq!(j["failures"], json!([1]));
        assert_eq!(j["results"]["2"]["valid?"], true);
        assert_eq!(j["results"]["1"]["op"]["value"], 4);
        let x = r.explain();
        assert!(
            x.starts_with("2 independent keys, 1 not linearizable"),
            "{x}"
        );
        assert!(x.contains("key 1:\n"), "{x}");
        assert!(!x.contains("key 2:"), "{x}");
    }
}
