//! Inference: the only workload-specific stage. Each workload turns a
//! [`History`](crate::history::History) into dependency edges, non-cycle anomalies, and can later
//! explain any edge it produced.

pub mod fit;
pub mod list_append;
pub mod rw_register;

pub use crate::evidence::{DataStep, Explain, Fact, Step};
use crate::graph::Rels;
use crate::history::TxnId;

/// Which workload inference to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Workload {
    #[default]
    /// Jepsen's list-append: `[:append k v]`, `[:r k [v ...]]`.
    ListAppend,
    /// Registers: `[:w k v]`, `[:r k v]`.
    RwRegister,
}

pub use crate::anomaly::{Anomaly, AnomalyKind, Record};

/// What inference produces for one history.
#[derive(Default)]
pub struct Inference {
    /// ww / wr / rw edges (process and real-time edges are added by the graph stage).
    pub edges: Vec<(TxnId, TxnId, Rels)>,
    /// Non-cycle anomalies.
    pub anomalies: Vec<Anomaly>,
}
