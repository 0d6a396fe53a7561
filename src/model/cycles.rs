//! What the graph stage needs from the lattice: the cycle classes and their
//! search order, which extra order graph (process / real-time) a check
//! needs, and the cycle-exists subgraphs that refute whole models at once
//! (Elle's `elle.txn` cycle machinery, as data).

use std::collections::BTreeSet;
use std::sync::OnceLock;

use serde_json::{json, Value};

use super::tables::{self, Rel, Subgraph};
use super::{all_impossible_models, anomalies_prohibited_by, index, Model};
use crate::graph::Rels;

impl Rel {
    /// Elle's keyword for this relation (`ww`, `wwp`, ..., `realtime`).
    pub fn name(self) -> &'static str {
        match self {
            Rel::Ww => "ww",
            Rel::Wwp => "wwp",
            Rel::Wr => "wr",
            Rel::Wrp => "wrp",
            Rel::Rw => "rw",
            Rel::Rwp => "rwp",
            Rel::Process => "process",
            Rel::Realtime => "realtime",
        }
    }

    /// The dependency-graph bit; predicate relations have none (no workload
    /// here produces predicate edges, so they project to nothing).
    pub fn rels(self) -> Rels {
        match self {
            Rel::Ww => Rels::WW,
            Rel::Wr => Rels::WR,
            Rel::Rw => Rels::RW,
            Rel::Process => Rels::PROCESS,
            Rel::Realtime => Rels::REALTIME,
            Rel::Wwp | Rel::Wrp | Rel::Rwp => Rels::NONE,
        }
    }
}

/// Union of the graph bits of `rels`.
fn union_bits(rels: &[Rel]) -> Rels {
    rels.iter().fold(Rels::NONE, |acc, r| acc | r.rels())
}

impl Subgraph {
    /// `(A, Some(B))` for `A ∪ (A ; B)`, `(A, None)` for a plain union, as
    /// graph bits.
    pub fn parts(&self) -> (Rels, Option<Rels>) {
        match *self {
            Subgraph::Union(a) => (union_bits(a), None),
            Subgraph::Extension(a, b) => (union_bits(a), Some(union_bits(b))),
        }
    }

    /// Elle's printed form, e.g. `["union","ww","wwp"]` or
    /// `["extension",["union",..],["union",..]]`.
    pub fn to_json(&self) -> Value {
        fn union(rels: &[Rel]) -> Value {
            let mut v = vec![json!("union")];
            v.extend(rels.iter().map(|r| json!(r.name())));
            Value::Array(v)
        }
        match *self {
            Subgraph::Union(a) => union(a),
            Subgraph::Extension(a, b) => json!(["extension", union(a), union(b)]),
        }
    }
}

/// A model refuted by any cycle in `subgraph` (one row of Elle's
/// `cycle-exists-specs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CycleExistsSpec {
    /// The model such a cycle refutes.
    pub model: Model,
    /// The relations the cycle may use.
    pub subgraph: Subgraph,
    /// The anomaly type reported, `<canonical model>-cycle-exists`.
    pub anomaly_type: &'static str,
}

impl CycleExistsSpec {
    /// The model's friendly name, reported as the anomaly's `not`.
    pub fn friendly_model(&self) -> &'static str {
        self.model.friendly()
    }
}

/// How much order a check must add to the data dependency graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum OrderGraph {
    /// Data dependencies (ww, wr, rw) only.
    None,
    /// Plus per-process order.
    Process,
    /// Plus real-time order (which subsumes process order).
    Realtime,
}

struct CycleTables {
    types: Vec<&'static str>,
    process: Vec<&'static str>,
    realtime: Vec<&'static str>,
    specs: Vec<CycleExistsSpec>,
}

fn cycle_tables() -> &'static CycleTables {
    static TABLES: OnceLock<CycleTables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let ix = index();
        // Every cycle type is a vertex of the anomaly graph, so its
        // `'static` name can be borrowed from the depth map.
        let known = |name: String| -> &'static str {
            ix.depth
                .get_key_value(name.as_str())
                .map(|(k, _)| *k)
                .unwrap_or_else(|| panic!("cycle type {name} missing from the anomaly tables"))
        };
        let mut types: Vec<&'static str> = Vec::new();
        for base in tables::BASE_CYCLE_TYPES {
            for suffix in ["", "-process", "-realtime"] {
                types.push(known(format!("{base}{suffix}")));
            }
        }
        types.sort_by(|a, b| super::anomaly_severity_cmp(a, b));
        let with = |s: &str| types.iter().copied().filter(|t| t.contains(s)).collect();
        let specs = tables::CYCLE_EXISTS_SPECS
            .iter()
            .map(|&(model, subgraph)| CycleExistsSpec {
                model: super::parse_model(model).expect("spec models are known"),
                subgraph,
                anomaly_type: ix
                    .prohibited_by
                    .get_key_value(format!("{model}-cycle-exists").as_str())
                    .map(|(k, _)| *k)
                    .expect("each spec's anomaly is directly prohibited by its model"),
            })
            .collect();
        CycleTables {
            process: with("-process"),
            realtime: with("-realtime"),
            types,
            specs,
        }
    })
}

/// All 24 cycle anomaly types, in Elle's search order (most severe first).
pub fn cycle_types() -> &'static [&'static str] {
    &cycle_tables().types
}

/// Cycle types that need process edges (`*-process`).
pub fn process_anomaly_types() -> &'static [&'static str] {
    &cycle_tables().process
}

/// Cycle types that need real-time edges (`*-realtime`).
pub fn realtime_anomaly_types() -> &'static [&'static str] {
    &cycle_tables().realtime
}

/// The cycle-exists specs in Elle's order, weakest model first.
pub fn cycle_exists_specs() -> &'static [CycleExistsSpec] {
    &cycle_tables().specs
}

/// Which order graph to build for these reportable types (Elle's
/// `additional-graphs`): real-time if any real-time type is reportable,
/// else process if any process type is, else none.
pub fn order_graph_needed(reportable: &BTreeSet<String>) -> OrderGraph {
    let any = |types: &[&str]| types.iter().any(|t| reportable.contains(*t));
    if any(realtime_anomaly_types()) {
        OrderGraph::Realtime
    } else if any(process_anomaly_types()) {
        OrderGraph::Process
    } else {
        OrderGraph::None
    }
}

/// Cycle types that cannot exist in an SCC where only the models in
/// `refuted` had a cycle-exists hit: whatever the surviving spec models
/// prohibit (Elle's `cycle-exists-cases->impossible-cycle-anomalies`).
pub fn impossible_cycle_anomalies(refuted: &[Model]) -> BTreeSet<&'static str> {
    let impossible = all_impossible_models(refuted);
    let possible: Vec<Model> = cycle_exists_specs()
        .iter()
        .map(|s| s.model)
        .filter(|m| !impossible.contains(m))
        .collect();
    let prohibited = anomalies_prohibited_by(&possible);
    cycle_types()
        .iter()
        .copied()
        .filter(|t| prohibited.contains(*t))
        .collect()
}
