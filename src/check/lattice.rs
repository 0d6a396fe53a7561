//! Requests judged over the lattice from the exact levels' verdicts, on
//! histories whose values repeat (list-append: [`super::duplicates`];
//! registers: [`super::registers`]). A request (a model, or the `-a` list)
//! holds iff some choice leaves none of its prohibited anomalies: the
//! witness of a level that excludes every prohibited anomaly the history
//! could show proves it; a finding rules it out when the request prohibits
//! all the finding says every choice has. Anything else is `unknown`.

use super::{CheckOptions, Finding, Validity, Witness};
use crate::anomaly::{Anomaly, AnomalyKind, Record};
use crate::explain;
use crate::history::History;
use crate::model::{self, Model};
use crate::solver::{DupAnomaly, DupVerdict, Level};
use std::collections::BTreeSet;

/// Anomalies a list-append history can show besides cycles (the cycle
/// classes come from the lattice's tables). Elle's `cyclic-versions` is
/// absent: a choice orders versions totally.
const NON_CYCLE: [&str; 9] = [
    "G1a",
    "G1b",
    "internal",
    "future-read",
    "dirty-update",
    "lost-update",
    "incompatible-order",
    "duplicate-elements",
    "garbage-read",
];

/// `set` restricted to anomalies a list-append choice can have: the
/// non-cycle ones above and the item cycle classes (no predicates).
pub(super) fn observable(set: &BTreeSet<String>) -> BTreeSet<String> {
    const ITEM_CYCLES: [&str; 5] = [
        "G0",
        "G1c",
        "G-single-item",
        "G-nonadjacent-item",
        "G2-item",
    ];
    let cycles = model::cycle_types();
    set.iter()
        .filter(|a| {
            let base = a
                .strip_suffix("-process")
                .or_else(|| a.strip_suffix("-realtime"))
                .unwrap_or(a);
            NON_CYCLE.contains(&a.as_str())
                || (cycles.contains(&a.as_str()) && ITEM_CYCLES.contains(&base))
        })
        .cloned()
        .collect()
}

/// What a finding proves: every choice has all the anomalies of at least
/// one of these sets. A failing level gives one set per anomaly it
/// prohibits ("one of these"); a read whose every possible source is bad
/// gives one set per source (a failed write another wrote over is read as
/// both G1a and G1b).
pub(super) struct Forced(pub Vec<BTreeSet<String>>);

impl Forced {
    /// Every choice has one of `kinds`.
    pub fn one_of<I: IntoIterator<Item = String>>(kinds: I) -> Self {
        Forced(kinds.into_iter().map(|k| [k].into()).collect())
    }

    /// Whether every choice has one of `prohibited`.
    pub fn within(&self, prohibited: &BTreeSet<String>) -> bool {
        self.0
            .iter()
            .all(|all| all.iter().any(|k| prohibited.contains(k)))
    }
}

/// What the judge needs of a workload's levels.
pub(super) struct Levels {
    /// The levels with an exact procedure, weakest witness first.
    pub order: &'static [Level],
    /// The anomalies a choice can have that a witness of the level excludes.
    pub covered: fn(Level) -> BTreeSet<String>,
    /// What a finding of the level proves every choice has.
    pub forced: fn(Level, &DupAnomaly) -> Forced,
}

/// One thing asked for: a model, or the `-a` list.
pub(super) struct Item {
    pub name: String,
    pub model: Option<Model>,
    pub prohibited: BTreeSet<String>,
    /// What a witness must exclude: the prohibited anomalies a choice can
    /// have, minus those the reads show no choice has.
    pub obs: BTreeSet<String>,
    /// The weakest level whose witness proves it (`None`: nothing the
    /// history could show is prohibited).
    pub level: Option<Level>,
}

impl Item {
    /// The witness `proof` (the verdict that proves this item) gives, named
    /// after the item's model; `None` for the `-a` list or no witness.
    pub fn witness(&self, proof: Option<&DupVerdict>) -> Option<Witness> {
        let (m, p) = (self.model?, proof?);
        Some(Witness {
            model: m.friendly(),
            order: p.witness.clone()?,
            snapshots: p.snapshots.clone(),
        })
    }
}

impl Levels {
    /// The requests of `options` (each model once, then the `-a` list);
    /// `absent`: anomalies no choice has.
    pub fn items(&self, options: &CheckOptions, absent: &BTreeSet<String>) -> Vec<Item> {
        let requested: Vec<String> = options
            .models
            .clone()
            .unwrap_or_else(|| vec!["strict-serializable".to_string()]);
        let mut items: Vec<Item> = Vec::new();
        for m in &requested {
            let model = model::parse_model(m).expect("validated names parse");
            if !items.iter().any(|i| i.model == Some(model)) {
                let prohibited = model::anomalies_prohibited_by(&[model]);
                items.push(self.item(
                    model.friendly().to_string(),
                    Some(model),
                    prohibited,
                    absent,
                ));
            }
        }
        if !options.anomalies.is_empty() {
            let names: Vec<&str> = options
                .anomalies
                .iter()
                .map(|a| a.strip_prefix(':').unwrap_or(a))
                .collect();
            let prohibited = model::all_anomalies_implying(&names);
            items.push(self.item(
                format!("anomalies {}", names.join(", ")),
                None,
                prohibited,
                absent,
            ));
        }
        items
    }

    pub fn item(
        &self,
        name: String,
        model: Option<Model>,
        prohibited: BTreeSet<String>,
        absent: &BTreeSet<String>,
    ) -> Item {
        let obs: BTreeSet<String> = observable(&prohibited)
            .difference(absent)
            .cloned()
            .collect();
        let level = if obs.is_empty() {
            None
        } else {
            self.order
                .iter()
                .copied()
                .find(|&l| obs.is_subset(&(self.covered)(l)))
        };
        Item {
            name,
            model,
            prohibited,
            obs,
            level,
        }
    }

    /// Whether some level's finding rules `item` out.
    pub fn ruled_by(&self, item: &Item, verdicts: &[DupVerdict]) -> bool {
        verdicts.iter().any(|v| {
            v.anomaly
                .as_ref()
                .is_some_and(|a| (self.forced)(v.level, a).within(&item.prohibited))
        })
    }

    /// An item's verdict, why (when unknown), and the level verdict that
    /// proves it (when valid); `ruled`: a fact found apart rules it out.
    pub fn judge<'v>(
        &self,
        h: &History,
        item: &Item,
        verdicts: &'v [DupVerdict],
        ruled: bool,
    ) -> (Validity, String, Option<&'v DupVerdict>) {
        if ruled || self.ruled_by(item, verdicts) {
            return (Validity::False, String::new(), None);
        }
        let Some(level) = item.level else {
            return (Validity::True, String::new(), None);
        };
        if let Some(v) = verdicts
            .iter()
            .find(|v| v.valid == Validity::True && item.obs.is_subset(&(self.covered)(v.level)))
        {
            return (Validity::True, String::new(), Some(v));
        }
        let why = match verdicts.iter().find(|v| v.level == level) {
            Some(v) if v.valid == Validity::Unknown => explain::proof::reason(h, &v.reason, v.proof()),
            Some(_) => format!(
                "not decided: {} does not hold, which does not settle it (a choice may still avoid every anomaly it prohibits)",
                level.name()
            ),
            None => "not decided".to_string(),
        };
        (Validity::Unknown, why, None)
    }
}

/// Every model that `d` rules out (every choice has an anomaly it
/// prohibits).
pub(super) fn ruled_out_by(d: &Forced) -> BTreeSet<Model> {
    let mut out = BTreeSet::new();
    for name in model::all_models() {
        let Ok(m) = model::parse_model(name) else {
            continue;
        };
        if d.within(&model::anomalies_prohibited_by(&[m])) {
            out.insert(m);
        }
    }
    out
}

/// A reason the duplicate-value solver found, as a finding that names its
/// transactions (for pictures) and renders Elle-shaped detail on demand:
/// `{"level", "ops", "keys", "explanation"}`, the explanation worded from
/// its proof.
pub(super) fn finding(level: Level, a: &DupAnomaly) -> Finding {
    Finding::of_txns(
        a.txns.clone(),
        Anomaly::new(
            AnomalyKind::Solver,
            Record::Solver {
                level: level.name(),
                txns: a.txns.as_slice().into(),
                keys: a.keys.as_slice().into(),
                proof: a.proof.clone(),
            },
        ),
    )
}
