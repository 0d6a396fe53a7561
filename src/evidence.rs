//! Evidence: why one transaction precedes another. Inference produces it
//! (each workload implements [`Explain`] for the edges it inferred), the
//! cycle explainer and the report consume it; it sits below both, so
//! neither imports the other.

use crate::graph::Rels;
use crate::history::{History, KeyId, TxnId};

/// Why `a → b` holds for one relation: the evidence behind one cycle step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// Exactly one relation bit.
    pub rel: Rels,
    /// For ww/wr/rw: the key, the value(s) and the micro-op positions in the
    /// two transactions (Elle's `:key :value :value' :a-mop-index :b-mop-index`).
    pub key: Option<KeyId>,
    pub value: Option<serde_json::Value>,
    pub value2: Option<serde_json::Value>,
    pub a_mop_index: Option<usize>,
    pub b_mop_index: Option<usize>,
    /// The clause that justifies the step, e.g.
    /// "T2 observed T1's append of 5 to key 3".
    pub because: String,
}

/// A workload's explainer: given an edge the inference produced, say why,
/// preferring relations in Elle's order (ww, wr, rw).
pub trait Explain {
    fn explain(&self, h: &History, a: TxnId, b: TxnId, allowed: Rels) -> Option<Step>;
}
