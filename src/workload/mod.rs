//! Inference: the only workload-specific stage. Each workload turns a
//! [`History`] into dependency edges, non-cycle anomalies, and can later
//! explain any edge it produced.

pub mod fit;
pub mod list_append;
pub mod rw_register;

pub use crate::evidence::{Explain, Step};
use crate::graph::Rels;
use crate::history::{History, TxnId};

/// Which workload inference to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Workload {
    #[default]
    /// Jepsen's list-append: `[:append k v]`, `[:r k [v ...]]`.
    ListAppend,
    /// Registers: `[:w k v]`, `[:r k v]`.
    RwRegister,
}

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

/// What inference produces for one history.
#[derive(Default)]
pub struct Inference {
    /// ww / wr / rw edges (process and real-time edges are added by the graph stage).
    pub edges: Vec<(TxnId, TxnId, Rels)>,
    /// Non-cycle anomalies.
    pub anomalies: Vec<Anomaly>,
}
