//! Inference: the only workload-specific stage. Each workload turns a
//! [`History`] into dependency edges, non-cycle anomalies, and can later
//! explain any edge it produced.

pub mod duplicates;
pub mod list_append;
pub mod rw_register;

use crate::graph::Rels;
use crate::history::{History, KeyId, TxnId};

/// A non-cycle anomaly (G1a, internal, lost-update, ...), shaped like Elle's.
#[derive(Clone, Debug)]
pub struct Anomaly {
    /// Elle's anomaly type name, e.g. `"G1a"`, `"incompatible-order"`.
    pub kind: &'static str,
    /// Elle-shaped detail map. Operations inside it are written with
    /// [`crate::explain::json::op`] (an object with at least `"index"`).
    pub detail: serde_json::Value,
    /// A sentence or two a person can read.
    pub explanation: String,
}

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

/// What inference produces for one history.
#[derive(Default)]
pub struct Inference {
    /// ww / wr / rw edges (process and real-time edges are added by the graph stage).
    pub edges: Vec<(TxnId, TxnId, Rels)>,
    /// Non-cycle anomalies.
    pub anomalies: Vec<Anomaly>,
}

/// A workload's explainer: given an edge the inference produced, say why,
/// preferring relations in Elle's order (ww, wr, rw).
pub trait Explain {
    fn explain(&self, h: &History, a: TxnId, b: TxnId, allowed: Rels) -> Option<Step>;
}
