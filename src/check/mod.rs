//! The checker's front door: history in, verdict out.
//! `check_history(&history, &options) -> Report`. (Being assembled.)

use crate::history::History;
use std::collections::BTreeMap;

/// Which workload inference to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Workload {
    #[default]
    ListAppend,
    RwRegister,
}

/// What to check for: Elle's options.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    pub workload: Workload,
    /// False: infer the workload from the history's micro-ops.
    pub workload_given: bool,
    /// Consistency models expected to hold. `None` = Elle's default
    /// (`strict-serializable`); `Some(vec![])` = no models, only `anomalies`.
    pub models: Option<Vec<String>>,
    /// Additional anomalies that must not occur.
    pub anomalies: Vec<String>,
    /// Bound on cycle search, in milliseconds.
    pub cycle_search_timeout_ms: u64,
    /// rw-register: each process's operations on a key follow process order.
    pub sequential_keys: bool,
    /// rw-register: operations on each key follow real-time order.
    pub linearizable_keys: bool,
    /// rw-register: writes follow reads within a transaction (Elle's default).
    pub wfr_keys: bool,
    /// rw-register: the database's own commit order, op `:index` → position.
    pub transaction_order: Option<BTreeMap<i64, i64>>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            workload: Workload::ListAppend,
            workload_given: false,
            models: None,
            anomalies: vec![],
            cycle_search_timeout_ms: 1000,
            sequential_keys: false,
            linearizable_keys: false,
            wfr_keys: true,
            transaction_order: None,
        }
    }
}

pub use crate::model::Validity;

/// The result of checking one history.
#[derive(Clone, Debug)]
pub struct Report {
    pub valid: Validity,
    /// Sorted anomaly type names.
    pub anomaly_types: Vec<String>,
    /// Weakest models ruled out, and all models ruled out that are stronger.
    pub not: Vec<String>,
    pub also_not: Vec<String>,
    /// The full Elle-shaped result, as printed by `-v`.
    pub json: serde_json::Value,
}

/// Checks a history. (Being written by the lead: inference, graph, search, judge.)
pub fn check_history(history: &History, options: &CheckOptions) -> Report {
    let _ = (history, options);
    unimplemented!("check_history is being written")
}
