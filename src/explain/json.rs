//! JSON renderings of history pieces, shaped like Elle's EDN (keywords become
//! strings without the colon; ops are maps with `index`, `type`, ...).
//! The EDN text of the same pieces is the history's own printing
//! ([`crate::history::print`]), re-exported here for the renderers.

use crate::history::{Datum, History, Mop, MopKind, Observed, TxnId};
use serde_json::{json, Map, Value};

/// A datum as JSON. Integers beyond 64 bits and floats keep their exact text
/// as strings; keywords and symbols lose their colon, as elle-cli prints them.
pub fn datum(d: &Datum) -> Value {
    match d {
        Datum::Nil => Value::Null,
        Datum::Bool(b) => Value::Bool(*b),
        Datum::Int(i) => json!(i),
        Datum::BigInt(s) | Datum::Float(s) => Value::String(s.clone()),
        Datum::Str(s) | Datum::Keyword(s) | Datum::Symbol(s) => Value::String(s.clone()),
        Datum::Char(c) => Value::String(c.to_string()),
        Datum::Vector(xs) | Datum::List(xs) | Datum::Set(xs) => {
            Value::Array(xs.iter().map(datum).collect())
        }
        Datum::Map(kvs) => {
            let mut m = Map::new();
            for (k, v) in kvs {
                let key = match datum(k) {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                m.insert(key, datum(v));
            }
            Value::Object(m)
        }
    }
}

/// A key as JSON.
pub fn key(h: &History, k: u32) -> Value {
    datum(h.keys.datum(k))
}

/// A value as JSON.
pub fn value(h: &History, v: u32) -> Value {
    datum(h.values.datum(v))
}

/// What a read observed (or what a write wrote), as JSON.
pub fn observed(h: &History, o: Observed) -> Value {
    match o {
        Observed::Nil => Value::Null,
        Observed::Scalar(v) => value(h, v),
        Observed::List { .. } => Value::Array(
            h.list(o)
                .unwrap_or(&[])
                .iter()
                .map(|&v| value(h, v))
                .collect(),
        ),
    }
}

/// A micro-op as JSON: `["append", k, v]`, `["r", k, [..]]`, `["w", k, v]`.
pub fn mop(h: &History, m: &Mop) -> Value {
    let f = match m.kind {
        MopKind::Append => "append",
        MopKind::Write => "w",
        MopKind::Read => "r",
    };
    json!([f, key(h, m.key), observed(h, m.value)])
}

/// A transaction as the op map Elle prints for it (its completion).
pub fn op(h: &History, t: TxnId) -> Value {
    let txn = &h.txns[t as usize];
    let mut m = Map::new();
    m.insert("index".into(), json!(txn.index));
    if let Some(time) = txn.complete_time.or(txn.invoke_time) {
        m.insert("time".into(), json!(time));
    }
    m.insert("type".into(), json!(txn.outcome.name()));
    m.insert("process".into(), json!(txn.process));
    let f = match txn.f {
        Some(f) => value(h, f),
        None => json!("txn"),
    };
    m.insert("f".into(), f);
    let mops: Vec<Value> = h.mops(t).iter().map(|x| mop(h, x)).collect();
    m.insert("value".into(), Value::Array(mops));
    Value::Object(m)
}

/// The invocation of a transaction, as an op map (`type` "invoke").
pub fn invocation(h: &History, t: TxnId) -> Value {
    let txn = &h.txns[t as usize];
    let mut m = op(h, t);
    if let Value::Object(o) = &mut m {
        o.insert("index".into(), json!(txn.invoke_index.unwrap_or(txn.index)));
        o.insert("type".into(), json!("invoke"));
        match txn.invoke_time {
            Some(time) => o.insert("time".into(), json!(time)),
            None => o.remove("time"),
        };
    }
    m
}

pub use crate::history::print::{mop_edn, observed_edn, op_edn};
