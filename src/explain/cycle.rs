//! Cycle explanations: each step of a cycle justified by the evidence behind
//! it, rendered as Elle renders them ("Let: T1 = ... Then: T1 < T2, because
//! ... However, ...: a contradiction!") and as Elle-shaped JSON.

use crate::evidence::{Explain, Step};
use crate::explain::json as js;
use crate::graph::{CycleClass, Rels};
use crate::history::{History, TxnId};
use serde_json::{json, Map, Value};

/// A cycle with every step explained.
#[derive(Clone, Debug)]
pub struct ExplainedCycle {
    /// Elle's name for it, from its step relations
    /// ([`crate::graph::classify`]).
    pub kind: CycleClass,
    /// The transactions, closed: the last equals the first.
    pub txns: Vec<TxnId>,
    /// One step per consecutive pair of `txns`.
    pub steps: Vec<Step>,
}

/// Explains process and real-time order, after the workload's data
/// relations (Elle's combined explainer tries data first).
pub struct OrderExplainer;

impl OrderExplainer {
    /// A process or real-time step from `a` to `b`, if `allowed` has one and the history shows it.
    pub fn explain(&self, h: &History, a: TxnId, b: TxnId, allowed: Rels) -> Option<Step> {
        let (ta, tb) = (&h.txns[a as usize], &h.txns[b as usize]);
        if allowed.intersects(Rels::PROCESS) && ta.process == tb.process && ta.index < tb.index {
            return Some(Step {
                rel: Rels::PROCESS,
                key: None,
                value: Some(json!(ta.process)),
                value2: None,
                a_mop_index: None,
                b_mop_index: None,
                because: format!("process {} executed {{a}} before {{b}}", ta.process),
            });
        }
        if allowed.intersects(Rels::REALTIME) {
            if let (Some(ac), Some(bi)) = (ta.complete_seq, tb.invoke_seq) {
                if ac < bi {
                    let gap = match (ta.complete_time, tb.invoke_time) {
                        (Some(x), Some(y)) if y > x => {
                            format!(" {:.3} seconds", (y - x) as f64 / 1e9)
                        }
                        (Some(_), Some(_)) => " just".to_string(),
                        _ => String::new(),
                    };
                    let b_index = tb.invoke_index.unwrap_or(tb.index);
                    return Some(Step {
                        rel: Rels::REALTIME,
                        key: None,
                        value: Some(js::op(h, a)),
                        value2: Some(js::invocation(h, b)),
                        a_mop_index: None,
                        b_mop_index: None,
                        because: format!(
                            "{{a}} completed at index {},{} before the invocation of {{b}}, at index {}",
                            ta.index, gap, b_index
                        ),
                    });
                }
            }
        }
        None
    }
}

/// Explains each step of a closed cycle: data relations first (the
/// workload's explainer), then process, then real time. `edge_rels(a, b)`
/// gives the relations the graph holds between a and b.
pub fn explain_steps(
    h: &History,
    ex: &dyn Explain,
    txns: &[TxnId],
    edge_rels: impl Fn(TxnId, TxnId) -> Rels,
) -> Option<Vec<Step>> {
    txns.windows(2)
        .map(|w| {
            let allowed = edge_rels(w[0], w[1]);
            ex.explain(h, w[0], w[1], allowed)
                .or_else(|| OrderExplainer.explain(h, w[0], w[1], allowed))
        })
        .collect()
}

/// Substitutes transaction names into a step's clause.
fn clause(step: &Step, a: &str, b: &str) -> String {
    step.because.replace("{a}", a).replace("{b}", b)
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
        let why = format!("{a} < {b}, because {}", clause(step, &a, &b));
        if i + 1 == c.steps.len() {
            s.push_str(&format!("  - However, {why}: a contradiction!"));
        } else {
            s.push_str(&format!("  - {why}.\n"));
        }
    }
    s
}

/// One step as Elle's step map.
pub fn step_json(h: &History, step: &Step) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), json!(step.rel.name()));
    match step.rel {
        Rels::PROCESS => {
            m.insert("process".into(), step.value.clone().unwrap_or(Value::Null));
        }
        Rels::REALTIME => {
            m.insert("a'".into(), step.value.clone().unwrap_or(Value::Null));
            m.insert("b".into(), step.value2.clone().unwrap_or(Value::Null));
        }
        _ => {
            if let Some(k) = step.key {
                m.insert("key".into(), js::key(h, k));
            }
            m.insert("value".into(), step.value.clone().unwrap_or(Value::Null));
            if let Some(v2) = &step.value2 {
                m.insert("value'".into(), v2.clone());
            }
            m.insert("a-mop-index".into(), json!(step.a_mop_index));
            m.insert("b-mop-index".into(), json!(step.b_mop_index));
        }
    }
    Value::Object(m)
}

/// The cycle as Elle's anomaly map: `{"cycle": [ops], "steps": [...], "type": ..}`.
pub fn to_json(h: &History, c: &ExplainedCycle) -> Value {
    json!({
        "cycle": c.txns.iter().map(|&t| js::op(h, t)).collect::<Vec<_>>(),
        "steps": c.steps.iter().map(|s| step_json(h, s)).collect::<Vec<_>>(),
        "type": c.kind.name(),
    })
}
