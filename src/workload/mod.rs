//! Inference: the only workload-specific stage. Each workload turns a
//! [`History`] into dependency edges, non-cycle anomalies, and can later
//! explain any edge it produced.

pub mod duplicates;
pub mod fit;
pub mod list_append;
pub mod rw_register;

use crate::graph::Rels;
use crate::history::{History, KeyId, TxnId};

/// Renders an anomaly's Elle-shaped detail and its text explanation.
pub type RenderFn = dyn Fn(&History) -> (serde_json::Value, String) + Send + Sync;

/// A non-cycle anomaly (G1a, internal, lost-update, ...), shaped like Elle's.
///
/// Only the type and a compact record (transaction ids, keys, values) are
/// kept; the detail map and the explanation are rendered when printed. A
/// history full of anomalies (a million transactions can hold hundreds of
/// thousands of lost updates) would otherwise spend most of its check
/// building JSON nobody asked for.
pub struct Anomaly {
    /// Elle's anomaly type name, e.g. `"G1a"`, `"incompatible-order"`.
    pub kind: &'static str,
    render: Box<RenderFn>,
}

impl Anomaly {
    /// An anomaly rendered on demand by `render`, which should capture only
    /// ids and small vectors.
    pub fn new(
        kind: &'static str,
        render: impl Fn(&History) -> (serde_json::Value, String) + Send + Sync + 'static,
    ) -> Self {
        Anomaly {
            kind,
            render: Box::new(render),
        }
    }

    /// An anomaly whose detail and explanation are already built.
    pub fn eager(kind: &'static str, detail: serde_json::Value, explanation: String) -> Self {
        Anomaly::new(kind, move |_| (detail.clone(), explanation.clone()))
    }

    /// Elle-shaped detail map. Operations inside it are written with
    /// [`crate::explain::json::op`] (an object with at least `"index"`).
    pub fn detail(&self, h: &History) -> serde_json::Value {
        (self.render)(h).0
    }

    /// A sentence or two a person can read.
    pub fn explanation(&self, h: &History) -> String {
        (self.render)(h).1
    }

    /// Detail and explanation at once.
    pub fn render(&self, h: &History) -> (serde_json::Value, String) {
        (self.render)(h)
    }

    /// The renderer, to hand on to a report.
    pub fn into_render(self) -> Box<RenderFn> {
        self.render
    }
}

impl std::fmt::Debug for Anomaly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Anomaly").field("kind", &self.kind).finish()
    }
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
