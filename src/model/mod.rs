//! Consistency models, anomaly names and the implication lattice between
//! them, following Elle's `elle.consistency-model`: which anomalies each
//! model prohibits, which models a set of anomalies rules out (`not` /
//! `also-not`), and the final verdict (`judge`).
//!
//! The facts live in [`tables`]; this module only indexes and walks them.
//! Models are named canonically (Adya's `PL-*` where Elle has one) and shown
//! by their friendly names (`serializable`, `read-committed`, ...).

pub mod cycles;
pub mod tables;
mod verdict;

#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use rustc_hash::{FxHashMap, FxHashSet};

pub use cycles::{
    cycle_exists_specs, cycle_types, impossible_cycle_anomalies, order_graph_needed,
    process_anomaly_types, realtime_anomaly_types, CycleExistsSpec, OrderGraph,
};
pub use tables::{Rel, Subgraph, UNKNOWN_ANOMALY_TYPES};
pub use verdict::{judge, remove_redundant_cycle_exists, ModelOptions, Validity, Verdict};

/// Anomaly type names exactly as Elle spells them, for producers of findings.
pub mod anomaly {
    /// Write cycle: a cycle of ww edges only.
    pub const G0: &str = "G0";
    /// Aborted read: a committed transaction saw a failed one's write.
    pub const G1A: &str = "G1a";
    /// Intermediate read: a committed transaction saw a version its writer
    /// overwrote later in the same transaction.
    pub const G1B: &str = "G1b";
    /// Circular information flow: a cycle of ww and wr edges.
    pub const G1C: &str = "G1c";
    /// G1a, G1b and G1c together, as an option name.
    pub const G1: &str = "G1";
    /// Read skew: a cycle with exactly one rw (item anti-dependency) edge.
    pub const G_SINGLE_ITEM: &str = "G-single-item";
    /// Adya's G-single, predicate anti-dependencies included (an option name).
    pub const G_SINGLE: &str = "G-single";
    /// A cycle with rw item edges, no two of them adjacent.
    pub const G_NONADJACENT_ITEM: &str = "G-nonadjacent-item";
    /// Adya's G-nonadjacent, predicate anti-dependencies included.
    pub const G_NONADJACENT: &str = "G-nonadjacent";
    /// Write skew and its kin: a cycle with rw (item anti-dependency) edges.
    pub const G2_ITEM: &str = "G2-item";
    /// Adya's G2, predicate anti-dependencies included.
    pub const G2: &str = "G2";
    /// A read contradicts the transaction's own earlier micro-ops.
    pub const INTERNAL: &str = "internal";
    /// A read already shows a value its own transaction writes only later.
    pub const FUTURE_READ: &str = "future-read";
    /// A committed write follows a failed transaction's write in a key's
    /// version order.
    pub const DIRTY_UPDATE: &str = "dirty-update";
    /// Two transactions read the same version of a key and both wrote it.
    pub const LOST_UPDATE: &str = "lost-update";
    /// Two reads of a key whose lists are not prefixes of one order.
    pub const INCOMPATIBLE_ORDER: &str = "incompatible-order";
    /// A read list with the same element twice.
    pub const DUPLICATE_ELEMENTS: &str = "duplicate-elements";
    /// A committed read saw a value that no transaction in the history
    /// wrote (not even a failed one: that is G1a). Not one of Elle's
    /// anomaly types; OneLite's name.
    pub const GARBAGE_READ: &str = "garbage-read";
    /// The version order of a key contains a cycle.
    pub const CYCLIC_VERSIONS: &str = "cyclic-versions";
    /// The duplicate-value solver's: no order of appends makes some read.
    pub const DUPLICATE_APPENDS_UNPRODUCIBLE_READ: &str = "duplicate-appends-unproducible-read";
    /// The duplicate-value solver's: every choice of whose append each read
    /// saw closes a cycle (serializable and stronger).
    pub const DUPLICATE_APPENDS_UNSERIALIZABLE: &str = "duplicate-appends-unserializable";
    /// The duplicate-value solver's: every such choice breaks snapshot
    /// isolation.
    pub const DUPLICATE_APPENDS_NOT_SNAPSHOT_ISOLATED: &str =
        "duplicate-appends-not-snapshot-isolated";
    /// The solver's, on a list-append history with unique values: every
    /// order of the appends no read shows closes a cycle (serializable and
    /// stronger).
    pub const UNREAD_APPENDS_UNSERIALIZABLE: &str = "unread-appends-unserializable";
    /// The solver's, on unique values: every such order breaks snapshot
    /// isolation.
    pub const UNREAD_APPENDS_NOT_SNAPSHOT_ISOLATED: &str = "unread-appends-not-snapshot-isolated";
    /// The register solver's: every choice of version order closes a cycle
    /// (serializable and stronger).
    pub const REGISTER_UNSERIALIZABLE: &str = "register-unserializable";
    /// The register solver's: every such choice breaks snapshot isolation.
    pub const REGISTER_NOT_SNAPSHOT_ISOLATED: &str = "register-not-snapshot-isolated";
    /// The register solver's, on repeated values: every choice of what the
    /// reads saw has G1a, G1b or G1c.
    pub const REGISTER_NOT_READ_COMMITTED: &str = "register-not-read-committed";
    /// No dependency edge at all: nothing was ordered, so the verdict
    /// cannot be `true`.
    pub const EMPTY_TRANSACTION_GRAPH: &str = "empty-transaction-graph";
    /// A cycle search hit its bound; what was found is a lower bound.
    pub const CYCLE_SEARCH_TIMEOUT: &str = "cycle-search-timeout";
    /// Suffix of the "a cycle exists in this subgraph" fallback anomalies.
    pub const CYCLE_EXISTS_SUFFIX: &str = "-cycle-exists";
}

/// Errors from naming models or reading model options.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// A model name Elle does not know.
    #[error("unknown consistency model {name:?}; known models are: {known}")]
    UnknownModel {
        /// The name given.
        name: String,
        /// The known models, comma-separated, for the message.
        known: String,
    },
    /// An options value of the wrong shape.
    #[error("bad option {key:?}: {reason}")]
    BadOption {
        /// The option.
        key: &'static str,
        /// What is wrong with its value.
        reason: String,
    },
}

/// A known consistency model, held by its canonical name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Model(&'static str);

impl Model {
    /// Elle's default expectation when no models are given.
    pub const STRICT_SERIALIZABLE: Model = Model("PL-SS");

    /// Canonical name, e.g. `PL-3` for serializable.
    pub fn name(self) -> &'static str {
        self.0
    }

    /// Friendly name, e.g. `serializable` for `PL-3`.
    pub fn friendly(self) -> &'static str {
        friendly_name(self.0)
    }
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.friendly())
    }
}

impl FromStr for Model {
    type Err = ModelError;
    fn from_str(s: &str) -> Result<Model, ModelError> {
        parse_model(s)
    }
}

/// Parses any name Elle knows for a model (canonical, friendly or alias; a
/// leading `:` as in EDN keywords is ignored) into its canonical [`Model`].
pub fn parse_model(name: &str) -> Result<Model, ModelError> {
    let bare = name.strip_prefix(':').unwrap_or(name);
    let canonical = canonical_name(bare);
    match index().known_models.get(canonical) {
        Some(&known) => Ok(Model(known)),
        None => Err(ModelError::UnknownModel {
            name: name.to_string(),
            known: all_models().join(", "),
        }),
    }
}

/// Parses several model names, failing on the first unknown one.
pub fn parse_models<S: AsRef<str>>(names: &[S]) -> Result<Vec<Model>, ModelError> {
    names.iter().map(|n| parse_model(n.as_ref())).collect()
}

/// Canonical name of a model name; names without an alias map to themselves.
pub fn canonical_name(model: &str) -> &str {
    tables::CANONICAL_MODEL_NAMES
        .iter()
        .find(|(alias, _)| *alias == model)
        .map_or(model, |(_, canonical)| canonical)
}

/// Friendly name of a model name; names without one map to themselves.
pub fn friendly_name(model: &str) -> &str {
    tables::FRIENDLY_MODEL_NAMES
        .iter()
        .find(|(canonical, _)| *canonical == model)
        .map_or(model, |(_, friendly)| friendly)
}

/// Every model name Elle accepts (canonical names and aliases), sorted.
pub fn all_models() -> Vec<&'static str> {
    index().all_model_names.clone()
}

/// Anomalies that would imply any of `anomalies`, the inputs included
/// (Elle's `all-anomalies-implying`); unknown names pass through.
pub fn all_anomalies_implying(anomalies: &[&str]) -> BTreeSet<String> {
    owned(reach(&index().anomaly_in, anomalies.iter().copied()))
}

/// Anomalies implied by any of `anomalies`, the inputs included (Elle's
/// `all-implied-anomalies`).
pub fn all_implied_anomalies(anomalies: &[&str]) -> BTreeSet<String> {
    owned(reach(&index().anomaly_out, anomalies.iter().copied()))
}

/// `models` and every weaker model they imply.
pub fn all_implied_models(models: &[Model]) -> BTreeSet<Model> {
    reach(&index().model_out, models.iter().map(|m| m.0))
        .into_iter()
        .map(Model)
        .collect()
}

/// `models` and every stronger model that implies one of them: what else
/// is impossible once `models` are (Elle's `all-impossible-models`).
pub fn all_impossible_models(models: &[Model]) -> BTreeSet<Model> {
    reach(&index().model_in, models.iter().map(|m| m.0))
        .into_iter()
        .map(Model)
        .collect()
}

/// Anomalies that cannot occur if all `models` hold: their direct
/// prohibitions, those of every weaker model, and anything implying those.
pub fn anomalies_prohibited_by(models: &[Model]) -> BTreeSet<String> {
    let ix = index();
    let direct: Vec<&'static str> = all_implied_models(models)
        .into_iter()
        .flat_map(|m| ix.prohibits.get(m.0).into_iter().flatten().copied())
        .collect();
    owned(reach(&ix.anomaly_in, direct))
}

/// Models that cannot hold given these anomalies (and everything they
/// imply), plus every stronger model (Elle's `anomalies->impossible-models`).
pub fn anomalies_to_impossible_models(anomalies: &[&str]) -> BTreeSet<Model> {
    let ix = index();
    let direct: Vec<&'static str> = reach(&ix.anomaly_out, anomalies.iter().copied())
        .into_iter()
        .flat_map(|a| ix.prohibited_by.get(a).into_iter().flatten().copied())
        .collect();
    reach(&ix.model_in, direct).into_iter().map(Model).collect()
}

/// The members of `models` that imply no other member: the weakest ones.
pub fn weakest_models(models: &BTreeSet<Model>) -> BTreeSet<Model> {
    extremes(&index().model_out, models)
}

/// The members of `models` implied by no other member: the strongest ones.
pub fn strongest_models(models: &BTreeSet<Model>) -> BTreeSet<Model> {
    extremes(&index().model_in, models)
}

/// Models ruled out by some anomalies, split as Elle's `boundary` does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Boundary {
    /// The weakest models ruled out.
    pub not: BTreeSet<Model>,
    /// Every other ruled-out model (all stronger than some member of `not`).
    pub also_not: BTreeSet<Model>,
}

impl Boundary {
    /// `(not, also_not)` as sorted friendly names (Elle's `friendly-boundary`).
    pub fn friendly(&self) -> (Vec<String>, Vec<String>) {
        let names = |ms: &BTreeSet<Model>| -> Vec<String> {
            let set: BTreeSet<&str> = ms.iter().map(|m| m.friendly()).collect();
            set.into_iter().map(str::to_string).collect()
        };
        (names(&self.not), names(&self.also_not))
    }
}

/// Splits the models `anomalies` rule out into the weakest and the rest.
pub fn boundary(anomalies: &[&str]) -> Boundary {
    let impossible = anomalies_to_impossible_models(anomalies);
    let not = weakest_models(&impossible);
    let also_not = impossible.difference(&not).copied().collect();
    Boundary { not, also_not }
}

/// Anomaly types that fail a check (Elle's `prohibited-anomaly-types`):
/// those prohibited by `models` plus anything implying `anomalies`.
/// `models: None` means the option was absent, so Elle's default
/// `[strict-serializable]` applies; `Some(&[])` (EDN `nil`) means no models.
pub fn prohibited_anomaly_types(models: Option<&[Model]>, anomalies: &[&str]) -> BTreeSet<String> {
    let models = models.unwrap_or(&[Model::STRICT_SERIALIZABLE]);
    let mut out = all_anomalies_implying(anomalies);
    out.extend(anomalies_prohibited_by(models));
    out
}

/// Anomaly types worth reporting (Elle's `reportable-anomaly-types`): the
/// prohibited ones plus those that make a verdict unknown.
pub fn reportable_anomaly_types(models: Option<&[Model]>, anomalies: &[&str]) -> BTreeSet<String> {
    let mut out = prohibited_anomaly_types(models, anomalies);
    out.extend(UNKNOWN_ANOMALY_TYPES.iter().map(|s| s.to_string()));
    out
}

/// Position of an anomaly in Elle's severity order (0 = implied by nothing);
/// `None` for names Elle does not know.
pub fn anomaly_depth(anomaly: &str) -> Option<u32> {
    index().depth.get(anomaly).copied()
}

/// Every anomaly Elle knows, most severe first (Elle's `all-anomalies`).
pub fn all_anomalies() -> Vec<&'static str> {
    index().all_anomalies.clone()
}

/// Orders anomaly names by severity depth, then by name (Elle's
/// `anomaly-depth-compare`; unknown names sort first, as `nil` does).
pub fn anomaly_severity_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    (anomaly_depth(a), a).cmp(&(anomaly_depth(b), b))
}

// ---------------------------------------------------------------------------
// The index: the tables turned into adjacency maps, built once.

type Adjacency = FxHashMap<&'static str, Vec<&'static str>>;

struct Index {
    anomaly_out: Adjacency,
    anomaly_in: Adjacency,
    /// Canonical model → canonical models it implies.
    model_out: Adjacency,
    model_in: Adjacency,
    /// Canonical model → anomalies it directly prohibits, and back.
    prohibits: Adjacency,
    prohibited_by: Adjacency,
    /// Canonical names of every known model.
    known_models: FxHashSet<&'static str>,
    all_model_names: Vec<&'static str>,
    depth: FxHashMap<&'static str, u32>,
    all_anomalies: Vec<&'static str>,
}

fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(Index::build)
}

/// Adds `a → b` to `out` and `b ← a` to `inn`, once.
fn link(out: &mut Adjacency, inn: &mut Adjacency, a: &'static str, b: &'static str) {
    let succ = out.entry(a).or_default();
    if !succ.contains(&b) {
        succ.push(b);
        inn.entry(b).or_default().push(a);
    }
}

impl Index {
    fn build() -> Index {
        let (mut anomaly_out, mut anomaly_in) = (Adjacency::default(), Adjacency::default());
        for &(a, bs) in tables::IMPLIED_ANOMALIES {
            for &b in bs {
                link(&mut anomaly_out, &mut anomaly_in, a, b);
            }
        }
        let (mut model_out, mut model_in) = (Adjacency::default(), Adjacency::default());
        for &(a, bs) in tables::MODEL_IMPLICATIONS {
            for &b in bs {
                link(
                    &mut model_out,
                    &mut model_in,
                    canonical_name(a),
                    canonical_name(b),
                );
            }
        }
        let (mut prohibits, mut prohibited_by) = (Adjacency::default(), Adjacency::default());
        for &(m, anomalies) in tables::DIRECT_PROHIBITIONS {
            for &a in anomalies {
                link(&mut prohibits, &mut prohibited_by, canonical_name(m), a);
            }
        }

        // Elle's `all-models`: graph vertices, aliases and canonical names.
        let mut names: BTreeSet<&'static str> = model_out.keys().copied().collect();
        names.extend(model_in.keys().copied());
        for &(alias, canonical) in tables::CANONICAL_MODEL_NAMES {
            names.insert(alias);
            names.insert(canonical);
        }
        let known_models = names
            .iter()
            .copied()
            .filter(|&n| canonical_name(n) == n)
            .collect();
        let all_model_names = names.into_iter().collect();

        let depth = anomaly_depths(&prohibits);
        let mut all_anomalies: Vec<&'static str> = depth.keys().copied().collect();
        all_anomalies.sort_by_key(|a| (depth[a], *a));

        Index {
            anomaly_out,
            anomaly_in,
            model_out,
            model_in,
            prohibits,
            prohibited_by,
            known_models,
            all_model_names,
            depth,
            all_anomalies,
        }
    }
}

/// Elle's `anomaly-depths`: layer of each anomaly when the implication and
/// severity graphs are peeled source-first; directly prohibited anomalies
/// outside those graphs get depth 0.
fn anomaly_depths(prohibits: &Adjacency) -> FxHashMap<&'static str, u32> {
    let mut out = Adjacency::default();
    let mut inn = Adjacency::default();
    for table in [tables::IMPLIED_ANOMALIES, tables::ANOMALY_SEVERITY] {
        for &(a, bs) in table {
            for &b in bs {
                link(&mut out, &mut inn, a, b);
            }
        }
    }
    let mut vertices: BTreeSet<&'static str> = out.keys().copied().collect();
    vertices.extend(inn.keys().copied());
    let mut pending: FxHashMap<&'static str, usize> = vertices
        .iter()
        .map(|&v| (v, inn.get(v).map_or(0, Vec::len)))
        .collect();
    let mut depth = FxHashMap::default();
    let mut layer: Vec<&'static str> = vertices
        .iter()
        .copied()
        .filter(|v| pending[v] == 0)
        .collect();
    let mut d = 0;
    while !layer.is_empty() {
        let mut next = Vec::new();
        for &v in &layer {
            depth.insert(v, d);
            for &w in out.get(v).into_iter().flatten() {
                let p = pending.get_mut(w).expect("every successor is a vertex");
                *p -= 1;
                if *p == 0 {
                    next.push(w);
                }
            }
        }
        layer = next;
        d += 1;
    }
    for anomalies in prohibits.values() {
        for &a in anomalies {
            depth.entry(a).or_insert(0);
        }
    }
    depth
}

/// Closure of `starts` under `adj` (every vertex reachable), starts included.
fn reach<'a>(adj: &Adjacency, starts: impl IntoIterator<Item = &'a str>) -> BTreeSet<&'a str> {
    let mut seen: FxHashSet<&'a str> = FxHashSet::default();
    let mut queue: Vec<&'a str> = Vec::new();
    for s in starts {
        if seen.insert(s) {
            queue.push(s);
        }
    }
    while let Some(v) = queue.pop() {
        for &w in adj.get(v).into_iter().flatten() {
            if seen.insert(w) {
                queue.push(w);
            }
        }
    }
    seen.into_iter().collect()
}

/// Members of `models` from which no other member is reachable via `adj`.
fn extremes(adj: &Adjacency, models: &BTreeSet<Model>) -> BTreeSet<Model> {
    models
        .iter()
        .copied()
        .filter(|m| {
            !reach(adj, [m.0])
                .into_iter()
                .any(|r| r != m.0 && models.contains(&Model(r)))
        })
        .collect()
}

fn owned(set: BTreeSet<&str>) -> BTreeSet<String> {
    set.into_iter().map(str::to_string).collect()
}
