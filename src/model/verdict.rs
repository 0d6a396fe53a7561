//! The last step of a check: from the anomaly types found to Elle's result
//! map (`elle.txn/result-map`): `valid?`, `anomaly-types`, `not`, `also-not`.

use std::collections::BTreeSet;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use super::{
    anomalies_to_impossible_models, boundary, cycle_exists_specs, order_graph_needed, parse_model,
    prohibited_anomaly_types, reportable_anomaly_types, Model, ModelError, OrderGraph,
};

/// What a check expects: Elle's `:consistency-models` and `:anomalies`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelOptions {
    /// `None`: option absent, Elle's default `[strict-serializable]` holds.
    /// `Some(vec![])`: `nil` or empty, no model is expected.
    pub consistency_models: Option<Vec<Model>>,
    /// Extra anomaly types that must not occur (with all that imply them).
    pub anomalies: Vec<String>,
}

impl ModelOptions {
    /// Options from model and anomaly names; unknown model names are errors.
    pub fn new(models: Option<&[&str]>, anomalies: &[&str]) -> Result<ModelOptions, ModelError> {
        Ok(ModelOptions {
            consistency_models: models.map(super::parse_models).transpose()?,
            anomalies: anomalies.iter().map(|a| bare(a).to_string()).collect(),
        })
    }

    /// Reads `"consistency-models"` (absent = default, `null` = none, else
    /// an array of names) and `"anomalies"` (absent/`null` = none) from a
    /// JSON options object; other keys are ignored.
    pub fn from_json(options: &Value) -> Result<ModelOptions, ModelError> {
        let map = options.as_object().ok_or_else(|| ModelError::BadOption {
            key: "options",
            reason: format!("expected an object, got {options}"),
        })?;
        let consistency_models = match map.get("consistency-models") {
            None => None,
            Some(v) => Some(
                names(v, "consistency-models")?
                    .into_iter()
                    .map(parse_model)
                    .collect::<Result<_, _>>()?,
            ),
        };
        let anomalies = match map.get("anomalies") {
            None => Vec::new(),
            Some(v) => names(v, "anomalies")?
                .into_iter()
                .map(|a| bare(a).to_string())
                .collect(),
        };
        Ok(ModelOptions {
            consistency_models,
            anomalies,
        })
    }

    fn anomaly_refs(&self) -> Vec<&str> {
        self.anomalies.iter().map(String::as_str).collect()
    }

    /// Anomaly types that make the check fail.
    pub fn prohibited(&self) -> BTreeSet<String> {
        prohibited_anomaly_types(self.consistency_models.as_deref(), &self.anomaly_refs())
    }

    /// Anomaly types the check reports (prohibited ∪ unknown-making).
    pub fn reportable(&self) -> BTreeSet<String> {
        reportable_anomaly_types(self.consistency_models.as_deref(), &self.anomaly_refs())
    }

    /// The order graph the search needs for these options.
    pub fn order_graph(&self) -> OrderGraph {
        order_graph_needed(&self.reportable())
    }
}

/// Strips the `:` of an EDN keyword.
fn bare(name: &str) -> &str {
    name.strip_prefix(':').unwrap_or(name)
}

/// A JSON `null` or array of strings, as a list of names.
fn names<'v>(v: &'v Value, key: &'static str) -> Result<Vec<&'v str>, ModelError> {
    let bad = || ModelError::BadOption {
        key,
        reason: format!("expected null or an array of names, got {v}"),
    };
    match v {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items.iter().map(|i| i.as_str().ok_or_else(bad)).collect(),
        _ => Err(bad()),
    }
}

/// Elle's `:valid?`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Validity {
    /// Every model asked for holds.
    True,
    /// Some model asked for is ruled out.
    False,
    /// Nothing prohibited was found, but the search was incomplete.
    Unknown,
}

impl Serialize for Validity {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Validity::True => s.serialize_bool(true),
            Validity::False => s.serialize_bool(false),
            Validity::Unknown => s.serialize_str("unknown"),
        }
    }
}

/// The judged outcome of a check; all name lists are sorted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Elle's `valid?`.
    pub valid: Validity,
    /// Reported anomaly types (Elle's `:anomaly-types`).
    pub anomaly_types: Vec<String>,
    /// Weakest models ruled out, friendly names.
    pub not: Vec<String>,
    /// The other ruled-out (stronger) models, friendly names.
    pub also_not: Vec<String>,
}

/// Serializes as Elle's map: only `"valid?"` when valid, else also
/// `"anomaly-types"`, `"not"` and `"also-not"` (even when empty).
impl Serialize for Verdict {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let full = self.valid != Validity::True;
        let mut m = s.serialize_map(Some(if full { 4 } else { 1 }))?;
        m.serialize_entry("valid?", &self.valid)?;
        if full {
            m.serialize_entry("anomaly-types", &self.anomaly_types)?;
            m.serialize_entry("not", &self.not)?;
            m.serialize_entry("also-not", &self.also_not)?;
        }
        m.end()
    }
}

/// Drops `*-cycle-exists` types whose model the other types already rule
/// out: a concrete witness beats "some cycle exists" (Elle's
/// `remove-redundant-cycle-exists`).
pub fn remove_redundant_cycle_exists<'a>(types: &BTreeSet<&'a str>) -> BTreeSet<&'a str> {
    let others: Vec<&str> = types
        .iter()
        .copied()
        .filter(|t| !t.ends_with(super::anomaly::CYCLE_EXISTS_SUFFIX))
        .collect();
    let impossible = anomalies_to_impossible_models(&others);
    let omit: BTreeSet<&str> = cycle_exists_specs()
        .iter()
        .filter(|s| impossible.contains(&s.model))
        .map(|s| s.anomaly_type)
        .collect();
    types
        .iter()
        .copied()
        .filter(|t| !omit.contains(t))
        .collect()
}

/// Judges the anomaly types found (all of them, reportable or not) against
/// `opts`, as Elle's `result-map` does:
/// - reported = found ∩ reportable, minus redundant cycle-exists types;
/// - nothing reported → valid, with no other fields;
/// - else false if any found type is prohibited, otherwise unknown;
/// - `not` / `also-not` come from ALL found types, so an anomaly that is
///   not reported still rules models out.
pub fn judge(found_types: &[&str], opts: &ModelOptions) -> Verdict {
    let found: BTreeSet<&str> = found_types.iter().copied().collect();
    let prohibited = opts.prohibited();
    let reportable = opts.reportable();
    let reported: BTreeSet<&str> = found
        .iter()
        .copied()
        .filter(|t| reportable.contains(*t))
        .collect();
    let reported = remove_redundant_cycle_exists(&reported);
    if reported.is_empty() {
        return Verdict {
            valid: Validity::True,
            anomaly_types: Vec::new(),
            not: Vec::new(),
            also_not: Vec::new(),
        };
    }
    let valid = if found.iter().any(|t| prohibited.contains(*t)) {
        Validity::False
    } else {
        Validity::Unknown
    };
    let found: Vec<&str> = found.into_iter().collect();
    let (not, also_not) = boundary(&found).friendly();
    Verdict {
        valid,
        anomaly_types: reported.into_iter().map(str::to_string).collect(),
        not,
        also_not,
    }
}
