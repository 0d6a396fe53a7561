//! Cycle explanations: each step of a cycle, a typed record from
//! [`crate::evidence`], rendered from it and the history as Elle renders
//! them ("Let: T1 = ... Then: T1 < T2, because ... However, ...: a
//! contradiction!") and as Elle-shaped JSON. The only place a step's words
//! and JSON are made.

use crate::evidence::{DataStep, ExplainedCycle, Fact, Source, Sources, Step};
use crate::explain::json as js;
use crate::history::{History, TxnId, ValId};
use serde_json::{json, Map, Value};

/// Elle's name for the empty list before a key's first append.
const LIST_INIT: &str = "elle.list-append/init";

/// A list-append version as JSON: a value, or Elle's init marker.
fn list_version_json(h: &History, v: Option<ValId>) -> Value {
    match v {
        Some(v) => js::value(h, v),
        None => json!(LIST_INIT),
    }
}

/// A register version as JSON: a value, or `null` for the initial `nil`.
fn register_json(h: &History, v: Option<ValId>) -> Value {
    match v {
        Some(v) => js::value(h, v),
        None => Value::Null,
    }
}

/// A register version as text.
fn register_text(h: &History, v: Option<ValId>) -> String {
    match v {
        Some(v) => h.values.datum(v).to_string(),
        None => "nil".into(),
    }
}

/// The JSON values a data step names (Elle's `:value` and `:value'`).
pub(crate) fn fact_values(h: &History, f: &Fact) -> (Value, Option<Value>) {
    match *f {
        Fact::Appended { prev, next } => (js::value(h, prev), Some(js::value(h, next))),
        Fact::ObservedAppend { value } => (js::value(h, value), None),
        Fact::MissedAppend { prev, next } => (list_version_json(h, prev), Some(js::value(h, next))),
        Fact::ReadWritten { value } => (js::value(h, value), None),
        Fact::Overwrote { from, to, .. } => (js::value(h, from), Some(js::value(h, to))),
        Fact::ReadOverwritten { from, to, .. } => (register_json(h, from), Some(js::value(h, to))),
    }
}

/// How a source justifies an order, for explanations.
fn source_reason(s: Source) -> &'static str {
    match s {
        Source::InitialState => "as the initial state",
        Source::TransactionOrder => "in the given transaction order",
        Source::WfrKeys => "because writes follow reads",
        Source::SequentialKeys => "in process order",
        Source::LinearizableKeys => "in real-time order",
        Source::RealtimeVersions => "in real-time order of writers",
    }
}

/// Why `from` precedes `to` in a register's version order, in a few words;
/// nothing when it is the initial state.
fn why_order(h: &History, from: Option<ValId>, to: ValId, sources: Sources) -> String {
    if from.is_none() && sources.contains(Source::InitialState) {
        return String::new();
    }
    let names: Vec<&str> = sources
        .iter()
        .filter(|&s| s != Source::InitialState)
        .map(source_reason)
        .collect();
    format!(
        " ({} precedes {} {})",
        register_text(h, from),
        register_text(h, Some(to)),
        names.join(" and ")
    )
}

/// The clause of a data step, naming the transactions `a` and `b`.
fn data_clause(h: &History, d: &DataStep, a: &str, b: &str) -> String {
    let k = h.keys.datum(d.key);
    let v = |v: ValId| h.values.datum(v);
    match d.fact {
        Fact::Appended { prev, next } => {
            format!(
                "{b} appended {} after {a} appended {} to {k}",
                v(next),
                v(prev)
            )
        }
        Fact::ObservedAppend { value } => {
            format!("{b} observed {a}'s append of {} to key {k}", v(value))
        }
        Fact::MissedAppend { prev: None, next } => format!(
            "{a} observed the initial (nil) state of {k}, which {b} created by appending {}",
            v(next)
        ),
        Fact::MissedAppend {
            prev: Some(_),
            next,
        } => {
            format!("{a} did not observe {b}'s append of {} to {k}", v(next))
        }
        Fact::ReadWritten { value } => {
            format!("{b} read key {k} = {}, which {a} wrote", v(value))
        }
        Fact::Overwrote { from, to, sources } => format!(
            "{a} wrote key {k} = {}, and {b} overwrote it with {}{}",
            v(from),
            v(to),
            why_order(h, Some(from), to, sources)
        ),
        Fact::ReadOverwritten { from, to, sources } => {
            let read = match from {
                None => "nil (its initial state)".to_string(),
                Some(_) => register_text(h, from),
            };
            format!(
                "{a} read key {k} = {read}, and {b} overwrote it with {}{}",
                v(to),
                why_order(h, from, to, sources)
            )
        }
    }
}

/// Why step `ta → tb` holds, naming them `a` and `b`, e.g.
/// "T2 observed T1's append of 5 to key 3".
pub fn clause(h: &History, ta: TxnId, tb: TxnId, step: &Step, a: &str, b: &str) -> String {
    match step {
        Step::Process => format!(
            "process {} executed {a} before {b}",
            h.txns[ta as usize].process
        ),
        Step::Realtime => {
            let (x, y) = (&h.txns[ta as usize], &h.txns[tb as usize]);
            let gap = match (x.complete_time, y.invoke_time) {
                (Some(c), Some(i)) if i > c => format!(" {:.3} seconds", (i - c) as f64 / 1e9),
                (Some(_), Some(_)) => " just".to_string(),
                _ => String::new(),
            };
            format!(
                "{a} completed at index {},{gap} before the invocation of {b}, at index {}",
                x.index,
                y.invoke_index.unwrap_or(y.index)
            )
        }
        Step::Data(d) => data_clause(h, d, a, b),
    }
}

/// The text explanation, in Elle's words.
pub fn render_text(h: &History, c: &ExplainedCycle) -> String {
    let n = c.txns.len() - 1;
    let name = |i: usize| format!("T{}", i % n + 1);
    let mut s = String::from("Let:\n");
    for (i, &t) in c.txns[..n].iter().enumerate() {
        s.push_str(&format!("  {} = {}\n", name(i), js::op_edn(h, t)));
    }
    s.push_str("\nThen:\n");
    for (i, step) in c.steps.iter().enumerate() {
        let (a, b) = (name(i), name(i + 1));
        let why = clause(h, c.txns[i], c.txns[i + 1], step, &a, &b);
        let why = format!("{a} < {b}, because {why}");
        if i + 1 == c.steps.len() {
            s.push_str(&format!("  - However, {why}: a contradiction!"));
        } else {
            s.push_str(&format!("  - {why}.\n"));
        }
    }
    s
}

/// Step `a → b` as Elle's step map.
pub fn step_json(h: &History, a: TxnId, b: TxnId, step: &Step) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), json!(step.rel().name()));
    match step {
        Step::Process => {
            m.insert("process".into(), json!(h.txns[a as usize].process));
        }
        Step::Realtime => {
            m.insert("a'".into(), js::op(h, a));
            m.insert("b".into(), js::invocation(h, b));
        }
        Step::Data(d) => {
            let (value, value2) = fact_values(h, &d.fact);
            m.insert("key".into(), js::key(h, d.key));
            m.insert("value".into(), value);
            if let Some(v2) = value2 {
                m.insert("value'".into(), v2);
            }
            m.insert("a-mop-index".into(), json!(d.a_mop));
            m.insert("b-mop-index".into(), json!(d.b_mop));
        }
    }
    Value::Object(m)
}

/// The cycle as Elle's anomaly map: `{"cycle": [ops], "steps": [...], "type": ..}`.
pub fn to_json(h: &History, c: &ExplainedCycle) -> Value {
    json!({
        "cycle": c.txns.iter().map(|&t| js::op(h, t)).collect::<Vec<_>>(),
        "steps": c
            .steps
            .iter()
            .zip(c.txns.windows(2))
            .map(|(s, w)| step_json(h, w[0], w[1], s))
            .collect::<Vec<_>>(),
        "type": c.kind.name(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::read::read_history;

    fn history(edn: &str) -> History {
        read_history(edn.as_bytes(), "test.edn", None).expect("a valid history")
    }

    fn data(h: &History, key: &str, fact: Fact) -> Step {
        let key = h
            .keys
            .get(&crate::history::Datum::Keyword(key.into()))
            .expect("a key of the history");
        Step::Data(DataStep {
            key,
            a_mop: Some(0),
            b_mop: Some(1),
            fact,
        })
    }

    fn val(h: &History, v: i64) -> ValId {
        h.values
            .get(&crate::history::Datum::Int(v))
            .expect("a value of the history")
    }

    /// Every fact's clause and JSON values, as the workloads' explainers
    /// worded them before steps were typed.
    #[test]
    fn facts_render_in_elles_words_and_values() {
        let h = history(
            "{:index 0 :type :ok :process 0 :value [[:append :x 1] [:w :y 4]]}
             {:index 1 :type :ok :process 1 :value [[:append :x 2] [:w :y 2]]}",
        );
        let (one, two, four) = (val(&h, 1), val(&h, 2), val(&h, 4));
        let cases = [
            (
                data(&h, "x", Fact::Appended { prev: one, next: two }),
                "T2 appended 2 after T1 appended 1 to :x",
                json!({"type": "ww", "key": "x", "value": 1, "value'": 2, "a-mop-index": 0, "b-mop-index": 1}),
            ),
            (
                data(&h, "x", Fact::ObservedAppend { value: one }),
                "T2 observed T1's append of 1 to key :x",
                json!({"type": "wr", "key": "x", "value": 1, "a-mop-index": 0, "b-mop-index": 1}),
            ),
            (
                data(&h, "x", Fact::MissedAppend { prev: None, next: one }),
                "T1 observed the initial (nil) state of :x, which T2 created by appending 1",
                json!({"type": "rw", "key": "x", "value": LIST_INIT, "value'": 1, "a-mop-index": 0, "b-mop-index": 1}),
            ),
            (
                data(&h, "x", Fact::MissedAppend { prev: Some(one), next: two }),
                "T1 did not observe T2's append of 2 to :x",
                json!({"type": "rw", "key": "x", "value": 1, "value'": 2, "a-mop-index": 0, "b-mop-index": 1}),
            ),
            (
                data(&h, "y", Fact::ReadWritten { value: four }),
                "T2 read key :y = 4, which T1 wrote",
                json!({"type": "wr", "key": "y", "value": 4, "a-mop-index": 0, "b-mop-index": 1}),
            ),
            (
                data(
                    &h,
                    "y",
                    Fact::Overwrote {
                        from: four,
                        to: two,
                        sources: Sources(Source::TransactionOrder.bit()),
                    },
                ),
                "T1 wrote key :y = 4, and T2 overwrote it with 2 (4 precedes 2 in the given transaction order)",
                json!({"type": "ww", "key": "y", "value": 4, "value'": 2, "a-mop-index": 0, "b-mop-index": 1}),
            ),
            (
                data(
                    &h,
                    "y",
                    Fact::ReadOverwritten {
                        from: None,
                        to: two,
                        sources: Sources(Source::InitialState.bit()),
                    },
                ),
                "T1 read key :y = nil (its initial state), and T2 overwrote it with 2",
                json!({"type": "rw", "key": "y", "value": null, "value'": 2, "a-mop-index": 0, "b-mop-index": 1}),
            ),
            (
                data(
                    &h,
                    "y",
                    Fact::ReadOverwritten {
                        from: Some(four),
                        to: two,
                        sources: Sources(Source::WfrKeys.bit() | Source::SequentialKeys.bit()),
                    },
                ),
                "T1 read key :y = 4, and T2 overwrote it with 2 (4 precedes 2 because writes follow reads and in process order)",
                json!({"type": "rw", "key": "y", "value": 4, "value'": 2, "a-mop-index": 0, "b-mop-index": 1}),
            ),
        ];
        for (step, text, value) in cases {
            assert_eq!(clause(&h, 0, 1, &step, "T1", "T2"), text);
            assert_eq!(step_json(&h, 0, 1, &step), value, "{text}");
        }
    }

    #[test]
    fn process_and_realtime_steps_are_read_from_the_history() {
        let h = history(
            "{:index 0 :time 1000000000 :type :invoke :process 0 :value [[:append :x 1]]}
             {:index 1 :time 2000000000 :type :ok :process 0 :value [[:append :x 1]]}
             {:index 2 :time 3500000000 :type :invoke :process 1 :value [[:r :x nil]]}
             {:index 3 :time 4000000000 :type :ok :process 1 :value [[:r :x [1]]]}",
        );
        assert_eq!(
            clause(&h, 0, 1, &Step::Realtime, "T1", "T2"),
            "T1 completed at index 1, 1.500 seconds before the invocation of T2, at index 2"
        );
        let j = step_json(&h, 0, 1, &Step::Realtime);
        assert_eq!(j["type"], "realtime");
        assert_eq!(j["a'"]["index"], 1);
        assert_eq!(
            (&j["b"]["index"], &j["b"]["type"]),
            (&json!(2), &json!("invoke"))
        );
        assert_eq!(
            clause(&h, 0, 0, &Step::Process, "T1", "T2"),
            "process 0 executed T1 before T2"
        );
        assert_eq!(
            step_json(&h, 0, 0, &Step::Process),
            json!({"type": "process", "process": 0})
        );
    }
}
