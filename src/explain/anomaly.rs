//! Renders non-cycle anomalies ([`crate::anomaly::Record`]) as Elle-shaped
//! detail maps and sentences a person can read. The only place their JSON
//! and text are made.

use super::json as js;
use crate::anomaly::{Anomaly, Record, Ver, NIL};
use crate::history::{History, ValId};
use serde_json::{json, Value};

/// Elle-shaped detail map and explanation of `a`.
pub fn render(h: &History, a: &Anomaly) -> (Value, String) {
    use Record::*;
    let mop = |i: u32| &h.mops[i as usize];
    match &a.record {
        AbortedAppend {
            reader,
            mop: i,
            writer,
            element,
        } => {
            let m = mop(*i);
            (
                json!({"op": js::op(h, *reader), "mop": js::mop(h, m),
                       "writer": js::op(h, *writer), "element": js::value(h, *element)}),
                format!(
                    "{} read {} and saw {}, which was appended by a transaction that failed: {}",
                    js::op_edn(h, *reader),
                    js::mop_edn(h, m),
                    h.values.datum(*element),
                    js::op_edn(h, *writer)
                ),
            )
        }
        UnwrittenElement {
            reader,
            mop: i,
            element,
        } => {
            let m = mop(*i);
            (
                json!({"op": js::op(h, *reader), "mop": js::mop(h, m), "element": js::value(h, *element)}),
                format!(
                    "{} read {} and saw {}, which no transaction in the history appended",
                    js::op_edn(h, *reader),
                    js::mop_edn(h, m),
                    h.values.datum(*element),
                ),
            )
        }
        IntermediateAppend {
            reader,
            mop: i,
            writer,
            element,
        } => {
            let m = mop(*i);
            (
                json!({"op": js::op(h, *reader), "mop": js::mop(h, m),
                       "writer": js::op(h, *writer), "element": js::value(h, *element)}),
                format!(
                    "{} read {}, whose last element {} was an intermediate append: its writer went on to append again to {}: {}",
                    js::op_edn(h, *reader),
                    js::mop_edn(h, m),
                    h.values.datum(*element),
                    h.keys.datum(m.key),
                    js::op_edn(h, *writer)
                ),
            )
        }
        DirtyAppend {
            key,
            values,
            failed,
            committed,
        } => (
            json!({"key": js::key(h, *key),
                   "values": values.iter().map(|&x| js::value(h, x)).collect::<Vec<_>>(),
                   "txns": [js::op(h, *failed), "...", js::op(h, *committed)]}),
            format!(
                "On key {}, the committed transaction {} appended on top of a state written by the failed transaction {}",
                h.keys.datum(*key),
                js::op_edn(h, *committed),
                js::op_edn(h, *failed)
            ),
        ),
        LostAppends { key, read, txns } => {
            let value = match read {
                Some(l) => list(h, l),
                None => Value::Null,
            };
            (
                json!({"key": js::key(h, *key), "value": value,
                       "txns": txns.iter().map(|&t| js::op(h, t)).collect::<Vec<_>>()}),
                format!(
                    "{} transactions read the same state of key {} ({}) and each appended to it, so all but one update was lost: {}",
                    txns.len(),
                    h.keys.datum(*key),
                    value,
                    ops_edn(h, txns)
                ),
            )
        }
        InternalList {
            reader,
            mop: i,
            expected,
            tail,
        } => {
            let m = mop(*i);
            let expected = if *tail {
                Value::Array(
                    std::iter::once(json!("..."))
                        .chain(expected.iter().map(|&v| js::value(h, v)))
                        .collect(),
                )
            } else {
                list(h, expected)
            };
            (
                json!({"op": js::op(h, *reader), "mop": js::mop(h, m), "expected": expected}),
                format!(
                    "{} read {}, but its own earlier reads and appends of {} imply {}",
                    js::op_edn(h, *reader),
                    js::mop_edn(h, m),
                    h.keys.datum(m.key),
                    expected
                ),
            )
        }
        FutureAppend {
            reader,
            mop: i,
            element,
        } => {
            let m = mop(*i);
            (
                json!({"op": js::op(h, *reader), "mop": js::mop(h, m), "element": js::value(h, *element)}),
                format!(
                    "{} read {}, which already contains {}, an element the same transaction appends only later",
                    js::op_edn(h, *reader),
                    js::mop_edn(h, m),
                    h.values.datum(*element)
                ),
            )
        }
        DuplicateElements {
            reader,
            mop: i,
            duplicates,
        } => {
            let m = mop(*i);
            let mut map = serde_json::Map::new();
            for &(e, c) in duplicates.iter() {
                map.insert(h.values.datum(e).to_string(), json!(c));
            }
            (
                json!({"op": js::op(h, *reader), "mop": js::mop(h, m), "duplicates": map}),
                format!(
                    "{} read {}, which holds {} more than once, though every value is appended once",
                    js::op_edn(h, *reader),
                    js::mop_edn(h, m),
                    duplicates
                        .iter()
                        .map(|&(e, _)| h.values.datum(e).to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        }
        IncompatibleOrder { key, a, b } => {
            let edn = |r: &[ValId]| {
                let xs: Vec<String> = r.iter().map(|&v| h.values.datum(v).to_string()).collect();
                format!("[{}]", xs.join(" "))
            };
            (
                json!({"key": js::key(h, *key), "values": [list(h, a), list(h, b)]}),
                format!(
                    "Reads of key {} disagree on the order of appends: {} is not a prefix of {}, so no single order of appends explains both.",
                    h.keys.datum(*key),
                    edn(a),
                    edn(b)
                ),
            )
        }
        InternalRegister {
            reader,
            mop: i,
            expected,
        } => {
            let m = mop(*i);
            (
                json!({"op": js::op(h, *reader), "mop": js::mop(h, m),
                       "expected": ver_json(h, *expected)}),
                format!(
                    "{} read {}, but its own earlier read or write of {} says the key holds {}",
                    js::op_edn(h, *reader),
                    js::mop_edn(h, m),
                    h.keys.datum(m.key),
                    ver_text(h, *expected)
                ),
            )
        }
        UnwrittenValue { reader, mop: i } => {
            let m = mop(*i);
            (
                json!({"op": js::op(h, *reader), "mop": js::mop(h, m)}),
                format!(
                    "{} read {}, but no transaction in the history wrote that value",
                    js::op_edn(h, *reader),
                    js::mop_edn(h, m),
                ),
            )
        }
        AbortedWrite {
            reader,
            mop: i,
            writer,
        } => {
            let m = mop(*i);
            (
                json!({"op": js::op(h, *reader), "writer": js::op(h, *writer), "mop": js::mop(h, m)}),
                format!(
                    "{} read {}, but {} was written only by a transaction that failed: {}",
                    js::op_edn(h, *reader),
                    js::mop_edn(h, m),
                    js::observed_edn(h, m.value),
                    js::op_edn(h, *writer)
                ),
            )
        }
        IntermediateWrite {
            reader,
            mop: i,
            writer,
            next,
        } => {
            let m = mop(*i);
            (
                json!({"op": js::op(h, *reader), "writer": js::op(h, *writer), "mop": js::mop(h, m)}),
                format!(
                    "{} read {}, but {} was an intermediate write: its writer went on to write {} to {}: {}",
                    js::op_edn(h, *reader),
                    js::mop_edn(h, m),
                    js::observed_edn(h, m.value),
                    ver_text(h, *next),
                    h.keys.datum(m.key),
                    js::op_edn(h, *writer)
                ),
            )
        }
        LostWrites { key, value, txns } => (
            json!({"key": js::key(h, *key), "value": ver_json(h, *value),
                   "txns": txns.iter().map(|&t| js::op(h, t)).collect::<Vec<_>>()}),
            format!(
                "{} committed transactions read key {} = {} and each wrote it, so all but one of their updates were lost: {}",
                txns.len(),
                h.keys.datum(*key),
                ver_text(h, *value),
                ops_edn(h, txns)
            ),
        ),
        FutureWrite { reader, mop: i } => {
            let m = mop(*i);
            (
                json!({"op": js::op(h, *reader), "mop": js::mop(h, m), "value": js::observed(h, m.value)}),
                format!(
                    "{} read {}, a value that the same transaction writes only later",
                    js::op_edn(h, *reader),
                    js::mop_edn(h, m)
                ),
            )
        }
        DirtyWrite {
            key,
            read,
            wrote,
            failed,
            committed,
        } => (
            json!({"key": js::key(h, *key),
                   "values": [ver_json(h, *read), ver_json(h, *wrote)],
                   "txns": [js::op(h, *failed), js::op(h, *committed)]}),
            format!(
                "On key {}, the committed transaction {} read {}, written by the failed transaction {}, and wrote {} over it",
                h.keys.datum(*key),
                js::op_edn(h, *committed),
                ver_text(h, *read),
                js::op_edn(h, *failed),
                ver_text(h, *wrote)
            ),
        ),
        CyclicVersions {
            key,
            scc,
            cycle,
            sources,
        } => {
            let cycle: Vec<String> = cycle.iter().map(|&v| ver_text(h, v)).collect();
            (
                json!({
                    "key": js::key(h, *key),
                    "scc": scc.iter().map(|&v| ver_json(h, v)).collect::<Vec<_>>(),
                    "sources": sources,
                }),
                format!(
                    "The versions of key {} cannot be ordered: assuming {}, {} would each precede the next, around a cycle.",
                    h.keys.datum(*key),
                    sources.join(", "),
                    cycle.join(" < ")
                ),
            )
        }
        Solver {
            level,
            txns,
            keys,
            proof,
        } => {
            let explanation = super::proof::render(h, proof);
            (
                json!({
                    "level": level,
                    "ops": txns.iter().map(|&t| js::op(h, t)).collect::<Vec<_>>(),
                    "keys": keys.iter().map(|&k| js::key(h, k)).collect::<Vec<_>>(),
                    "explanation": explanation,
                }),
                explanation,
            )
        }
    }
}

/// Elle-shaped detail map of `a`.
pub fn detail(h: &History, a: &Anomaly) -> Value {
    render(h, a).0
}

/// The sentence or two explaining `a`.
pub fn explanation(h: &History, a: &Anomaly) -> String {
    render(h, a).1
}

fn list(h: &History, l: &[ValId]) -> Value {
    Value::Array(l.iter().map(|&v| js::value(h, v)).collect())
}

fn ops_edn(h: &History, txns: &[u32]) -> String {
    txns.iter()
        .map(|&t| js::op_edn(h, t))
        .collect::<Vec<_>>()
        .join(", ")
}

fn ver_json(h: &History, v: Ver) -> Value {
    if v == NIL {
        Value::Null
    } else {
        js::value(h, v)
    }
}

fn ver_text(h: &History, v: Ver) -> String {
    if v == NIL {
        "nil".into()
    } else {
        h.values.datum(v).to_string()
    }
}

/// Rendering as methods, for tests that assert on what users see.
#[cfg(test)]
pub(crate) trait Rendered {
    /// [`detail`].
    fn detail(&self, h: &History) -> Value;
    /// [`explanation`].
    fn explanation(&self, h: &History) -> String;
}

#[cfg(test)]
impl Rendered for Anomaly {
    fn detail(&self, h: &History) -> Value {
        detail(h, self)
    }
    fn explanation(&self, h: &History) -> String {
        explanation(h, self)
    }
}
