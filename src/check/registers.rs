//! rw-register histories: inference's report, then the exact register
//! solvers.
//!
//! With unique values the register solver decides serializable, strict
//! serializable and snapshot isolation, and weaker models keep inference's
//! answer (a read names its writer; read committed's cycles are then all
//! in the graph inference builds). With repeated values and no
//! version-order assumptions, a read no longer names its writer, so
//! inference's "valid" proves nothing for any model: every requested model
//! and the `-a` list are judged over the lattice, as list-append's repeated
//! values are ([`super::duplicates`]), from the register levels' exact
//! verdicts: read uncommitted, no G1c and read committed (polynomial,
//! [`solver::register::committed`]), snapshot isolation, serializable and
//! strict serializable (the search). A level's witness proves each request
//! whose prohibited anomalies (those a register history can show) it
//! excludes; a finding rules out each request that prohibits everything
//! it says every choice has.

use super::lattice::{finding, observable, ruled_out_by, Forced, Item, Levels};
use super::{exact_levels, merge_exact, CheckOptions, Report, Validity, Witness};
use crate::history::History;
use crate::model::{self, Model};
use crate::proof::Proof;
use crate::solver::register::facts::source_anomalies;
use crate::solver::{self, DupAnomaly, DupKind, DupVerdict, Level};
use std::collections::{BTreeMap, BTreeSet};

/// Register levels, weakest witness first, with what their witnesses
/// exclude and their findings force.
const LEVELS: Levels = Levels {
    order: &[
        Level::ReadUncommitted,
        Level::NoG1c,
        Level::ReadCommitted,
        Level::SnapshotIsolation,
        Level::Serializable,
        Level::StrictSerializable,
    ],
    covered,
    forced,
};

/// Anomalies a register history cannot show (list-append's).
const LIST_ONLY: [&str; 2] = ["incompatible-order", "duplicate-elements"];

/// Findings of the reads alone: a read's possible sources, each an
/// anomaly.
const READ_FACTS: [&str; 5] = ["G1a", "G1b", "future-read", "garbage-read", "internal"];

/// What a read's choice of source alone decides: an `-a` list of these
/// alone is decided read by read.
const READ_KINDS: [&str; 6] = [
    "G1a",
    "G1b",
    "future-read",
    "garbage-read",
    "dirty-update",
    "internal",
];

/// The observable anomalies level `l` prohibits: what its witness excludes.
fn covered(l: Level) -> BTreeSet<String> {
    let mut c = match l {
        Level::NoG1c => observable(&model::all_anomalies_implying(&["G1c"])),
        _ => {
            let m = model::parse_model(l.name()).expect("the other register levels are models");
            observable(&model::anomalies_prohibited_by(&[m]))
        }
    };
    // The search's levels stop at an internal anomaly before any search.
    if matches!(
        l,
        Level::SnapshotIsolation | Level::Serializable | Level::StrictSerializable
    ) {
        c.insert("internal".into());
    }
    c
}

/// What a finding of level `l` proves every choice has.
fn forced(l: Level, a: &DupAnomaly) -> Forced {
    match a.kind {
        // A forced cycle of the search, or "every choice closes a cycle
        // of reads" (each a G1c).
        DupKind::Cycle(c) => Forced::one_of([c.name().to_string()]),
        // A read no committed last write explains: every choice takes one
        // of the writes it may have seen instead, with all its anomalies.
        DupKind::Anomaly(k) if READ_FACTS.contains(&k.name()) => match &a.proof {
            Proof::RegisterBadRead {
                sources,
                dirty_update,
                ..
            } => Forced(
                sources
                    .iter()
                    .map(|&s| {
                        source_anomalies(s, *dirty_update)
                            .iter()
                            .map(|k| k.name().to_string())
                            .collect()
                    })
                    .collect(),
            ),
            _ => Forced::one_of([k.name().to_string()]),
        },
        // The level fails: every choice has one of its anomalies.
        _ => {
            let mut d = covered(l);
            d.remove("internal");
            Forced::one_of(d)
        }
    }
}

/// Decides what `options` ask of a register history, from inference's
/// `report`.
pub(super) fn decide(h: &History, options: &CheckOptions, report: Report) -> Report {
    let assumptions = options.wfr_keys
        || options.sequential_keys
        || options.linearizable_keys
        || options.realtime_versions
        || options.transaction_order.is_some();
    let repeated = solver::register::facts::has_repeated_values(h) && !assumptions;
    if repeated {
        return lattice(h, options, report);
    }
    let (levels, others) = exact_levels(options);
    if levels.is_empty() {
        return report;
    }
    // Inference is sound, so a level it rules out stays ruled out with its
    // Elle-style finding.
    let ruled_out = |l: &Level| {
        report.not.iter().chain(&report.also_not).any(|m| {
            let f = model::friendly_name(m);
            f == l.name() || (f == "strong-serializable" && *l == Level::StrictSerializable)
        })
    };
    let open: Vec<Level> = levels.iter().copied().filter(|l| !ruled_out(l)).collect();
    let verdicts = solver::register::check_levels(h, &open, &options.solver_limits());
    let report = note_levels(report, &open);
    let decided_all = others.is_empty() && open.len() == levels.len();
    merge_exact(h, report, options, &verdicts, decided_all)
}

fn note_levels(mut report: Report, levels: &[Level]) -> Report {
    let names: Vec<&str> = levels.iter().map(|l| l.name()).collect();
    if !names.is_empty() {
        report.notes.push(format!(
            "decided exactly by the register solver: {} (inference alone: --inference-only)",
            names.join(", ")
        ));
    }
    report
}

/// Repeated values: every request judged over the lattice. Placement
/// (linear) runs first; a search level runs only for a request that
/// neither inference nor placement has ruled out.
fn lattice(h: &History, options: &CheckOptions, report: Report) -> Report {
    let limits = options.solver_limits();
    // Anomalies no choice has: list-append's own, and internal when the
    // reads show none (it is the same under every choice).
    let mut absent: BTreeSet<String> = LIST_ONLY.iter().map(|s| s.to_string()).collect();
    if !report.anomaly_types.iter().any(|t| t == "internal") {
        absent.insert("internal".into());
    }
    let items = LEVELS.items(options, &absent);
    // Read committed's placement always runs (it is linear, and its
    // finding may settle what a search would take long to, or what a
    // stronger level's failure would not), with the levels below it that
    // requests need; a search level runs for each request still open.
    let inferred: Vec<String> = report.anomaly_types.clone();
    let mut verdicts: Vec<DupVerdict> =
        vec![solver::register::committed::check(h, Level::ReadCommitted)];
    for l in [Level::ReadUncommitted, Level::NoG1c] {
        if items.iter().any(|i| i.level == Some(l)) {
            verdicts.push(solver::register::committed::check(h, l));
        }
    }
    // An `-a` list of read anomalies alone is decided read by read.
    let mut by_reads = vec![false; items.len()];
    for (i, it) in items.iter().enumerate() {
        if it.obs.is_empty() || !it.obs.iter().all(|a| READ_KINDS.contains(&a.as_str())) {
            continue;
        }
        match solver::register::committed::forced_read(h, &it.obs) {
            Some(v) => verdicts.push(v),
            None => by_reads[i] = true,
        }
    }
    let mut searched: Vec<Level> = Vec::new();
    for i in &items {
        let Some(l) = i.level.filter(|l| solver::Level::ALL.contains(l)) else {
            continue;
        };
        if !searched.contains(&l) && !by_inference(i, &inferred) && !LEVELS.ruled_by(i, &verdicts) {
            searched.push(l);
        }
    }
    verdicts.extend(solver::register::check_levels(h, &searched, &limits));
    let mut report = note_levels(report, &searched);
    report.notes.push(
        "values repeat, so a read does not name its write: every model asked for was decided from the register levels' exact verdicts (read uncommitted, no G1c and read committed by placing transactions; snapshot isolation, serializable and strict serializable by the search), through the lattice".to_string(),
    );

    // Every request is decided here: inference's "valid" proves nothing
    // and its "unknown" (an empty graph) no longer applies; its "invalid"
    // stands (its findings rule requests out below too).
    let mut valid = match report.valid {
        Validity::False => Validity::False,
        _ => Validity::True,
    };
    let mut witness: Vec<Witness> = Vec::new();
    for (it, by_reads) in items.iter().zip(by_reads) {
        let ruled = by_inference(it, &inferred);
        let (v, why, proof) = match by_reads && !ruled {
            true => (Validity::True, String::new(), None),
            false => LEVELS.judge(h, it, &verdicts, ruled),
        };
        match v {
            Validity::False => valid = Validity::False,
            Validity::Unknown => {
                if valid != Validity::False {
                    valid = Validity::Unknown;
                }
                report.notes.push(format!("{}: {why}", it.name));
            }
            Validity::True => {}
        }
        witness.extend(it.witness(proof));
    }
    report.valid = valid;
    report.notes.retain(|n| !n.starts_with("unknown:"));
    report
        .anomaly_types
        .retain(|t| t.as_str() != model::anomaly::EMPTY_TRANSACTION_GRAPH);

    // Findings the requests prohibit are reported; all rule models out.
    let prohibited: BTreeSet<String> = items
        .iter()
        .flat_map(|i| i.prohibited.iter().cloned())
        .collect();
    let mut ruled: BTreeSet<Model> = report
        .not
        .iter()
        .chain(&report.also_not)
        .filter_map(|m| model::parse_model(m).ok())
        .collect();
    let before = ruled.len();
    let mut said: Vec<&crate::proof::Proof> = Vec::new();
    let mut added: BTreeMap<String, Vec<super::Finding>> = BTreeMap::new();
    for v in &verdicts {
        let Some(a) = &v.anomaly else { continue };
        let d = forced(v.level, a);
        ruled.extend(ruled_out_by(&d));
        if !d.within(&prohibited)
            || said.contains(&&a.proof)
            || inferred.iter().any(|k| k == a.kind.name())
            || report.anomalies.contains_key(a.kind.name())
        {
            continue;
        }
        said.push(&a.proof);
        added
            .entry(a.kind.name().to_string())
            .or_default()
            .push(finding(v.level, a));
    }
    for (k, fs) in added {
        report.anomaly_types.push(k.clone());
        report.anomalies.insert(k, fs);
    }
    report.anomaly_types.sort();
    report.anomaly_types.dedup();
    if ruled.len() != before {
        let not = model::weakest_models(&ruled);
        let also: BTreeSet<Model> = ruled.difference(&not).copied().collect();
        (report.not, report.also_not) = model::Boundary {
            not,
            also_not: also,
        }
        .friendly();
    }
    if options.witness {
        report.witness = Some(witness);
    }
    report
}

/// Whether one of inference's findings rules `item` out (it reports only
/// what every choice has: a value that does not name one writer draws no
/// edge and no anomaly).
fn by_inference(item: &Item, inferred: &[String]) -> bool {
    inferred.iter().any(|k| item.prohibited.contains(k))
}
