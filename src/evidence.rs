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
    /// For ww/wr/rw: the key (Elle's `:key`).
    pub key: Option<KeyId>,
    /// The value the step is about (Elle's `:value`): the version written
    /// or read; for process and real-time steps, the process or first op.
    pub value: Option<serde_json::Value>,
    /// The second value, where a step names two (Elle's `:value'`: the
    /// version that overwrote the one read, or the later invocation).
    pub value2: Option<serde_json::Value>,
    /// Position of the justifying micro-op in the first transaction.
    pub a_mop_index: Option<usize>,
    /// Position of the justifying micro-op in the second transaction.
    pub b_mop_index: Option<usize>,
    /// The clause that justifies the step, e.g.
    /// "T2 observed T1's append of 5 to key 3".
    pub because: String,
}

/// A workload's explainer: given an edge the inference produced, say why,
/// preferring relations in Elle's order (ww, wr, rw).
pub trait Explain {
    /// Why `a → b` holds by one of the relations in `allowed`, the first
    /// the workload can justify in its explanation order; `None` when it
    /// cannot justify any (the edge was not one it inferred).
    fn explain(&self, h: &History, a: TxnId, b: TxnId, allowed: Rels) -> Option<Step>;
}
