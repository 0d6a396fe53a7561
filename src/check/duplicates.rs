//! List-append histories whose appended values repeat, judged over Elle's
//! whole lattice.
//!
//! A value no longer names its writer, so a model holds iff some *choice*
//! (which append produced each read element, which `info` transactions
//! committed, the order of versions) leaves none of the anomalies the model
//! prohibits. The solver decides seven levels exactly ([`solver::Level`]):
//! no G0 (read uncommitted) and no G0 ∪ G1c (what `-a G1c` asks), where a
//! read may show failed or uncommitted appends and end inside a block
//! ([`solver::uncommitted`]); read committed, consistent view (Adya's
//! PL-2+: no G1, no G-single), snapshot isolation, serializable, strict
//! serializable. Consistent view's
//! witness also proves forward consistent view and update serializable,
//! whose other prohibited cycles (G-SIb, G-update) a list-append history
//! cannot show.
//! Everything else follows from the lattice's prohibited-anomaly sets,
//! never from a list per model:
//! - a level's witness is a choice free of the anomalies that level
//!   prohibits, so it proves every model (or `-a` list) whose prohibited
//!   anomalies, among those a list-append history can show, it covers; each
//!   request goes to the weakest level that covers it;
//! - lost updates (as Elle defines them: committed transactions that read
//!   the same list of a key, then appended to it) are a fact of the reads,
//!   the same under every choice: present, they rule out what prohibits
//!   them; absent, no witness needs to exclude them (so cursor stability is
//!   decided by the read-committed search);
//! - a finding says "every choice has at least one of these anomalies": a
//!   fact of the reads (G1a when every possible writer of an element failed,
//!   internal, incompatible-order, a garbage read or duplicate elements: a
//!   value read more often than the history appends it) names one anomaly,
//!   a level that fails names everything it prohibits. It rules out each
//!   model (or list) that prohibits all of them, which gives `not` /
//!   `also-not`. Read uncommitted is no G0 without garbage reads or
//!   duplicate elements: absent, no witness needs to exclude them.
//!
//! Anything neither proves nor rules out is `unknown`, with the reason.

use super::lattice::{finding, observable, ruled_out_by, Forced, Item, Levels};
use super::{CheckOptions, Finding, Report, Validity};
use crate::model::{self, Model};
use crate::proof::Proof;
use crate::solver::{self, read_committed, DupAnomaly, DupKind, DupVerdict, Level};
use crate::workload::list_append;
use std::collections::{BTreeMap, BTreeSet};

/// Findings that are facts of the reads alone, the same under every choice.
const READ_FACTS: [&str; 5] = [
    "G1a",
    "internal",
    "incompatible-order",
    "garbage-read",
    "duplicate-elements",
];

/// A read holding a value more often than the history appends it.
const GARBAGE: [&str; 2] = ["garbage-read", "duplicate-elements"];

/// The anomalies a choice can have that level `l` prohibits: its model's,
/// or for the two levels below read committed, G0 (and what implies it)
/// and G1c (and what implies it: G0, future reads). Their searches take a
/// garbage read's extra copies as written by nobody, so garbage reads and
/// duplicate elements, which read uncommitted prohibits, are judged apart
/// as facts of the reads.
fn prohibits(l: Level) -> BTreeSet<String> {
    match l {
        Level::ReadUncommitted => observable(&model::all_anomalies_implying(&["G0"])),
        Level::NoG1c => observable(&model::all_anomalies_implying(&["G1c"])),
        _ => {
            let m = model::parse_model(l.name()).expect("the solver's other levels are models");
            observable(&model::anomalies_prohibited_by(&[m]))
        }
    }
}

/// The anomalies a witness of `l` excludes. Read committed's search runs
/// only when no transaction's reads disagree, so it excludes internal too.
/// (So does consistent view's, for which a non-repeatable read is a
/// G-single.) The levels below read committed allow internal anomalies.
fn covered(l: Level) -> BTreeSet<String> {
    let mut c = prohibits(l);
    if !matches!(l, Level::ReadUncommitted | Level::NoG1c) {
        c.insert("internal".into());
    }
    c
}

/// What a finding of level `l` proves: every choice has one of these. A
/// finding other than a fact of the reads comes after the reads were found
/// free of internal anomalies, which therefore never occur.
fn forced(l: Level, a: &DupAnomaly) -> Forced {
    if READ_FACTS.contains(&a.kind.name()) {
        return Forced::one_of([a.kind.name().to_string()]);
    }
    // A serial level's cycle finding is a cycle of the forced graph
    // (edges every choice has): every choice has that very cycle, so its
    // class alone is forced, and it rules out every model prohibiting it
    // (a G2-item rules out repeatable read, not only serializability).
    // Other findings (the search's "every choice closes some cycle") say
    // only that the level fails.
    if let (Level::Serializable | Level::StrictSerializable, DupKind::Cycle(c)) = (l, a.kind) {
        return Forced::one_of([c.name().to_string()]);
    }
    let mut d = prohibits(l);
    d.remove("internal");
    Forced::one_of(d)
}

/// The levels, weakest witness first, with what their witnesses exclude
/// and their findings force.
const LEVELS: Levels = Levels {
    order: &[
        Level::ReadUncommitted,
        Level::NoG1c,
        Level::ReadCommitted,
        Level::ConsistentView,
        Level::SnapshotIsolation,
        Level::Serializable,
        Level::StrictSerializable,
    ],
    covered,
    forced,
};

/// Lost updates, as Elle defines them (committed transactions that read the
/// same list of a key and then appended to it), are a fact of the reads:
/// every choice has them or none does. So cursor stability is read
/// committed without lost updates, and parallel snapshot isolation and
/// update atomic are read committed without internal anomalies or lost
/// updates: decided exactly by the read-committed search.
const LOST_UPDATE: &str = "lost-update";

/// Decides what `options` ask for on a list-append history whose appended
/// values repeat; the same [`Report`] every path returns.
pub(super) fn check(h: &crate::history::History, options: &CheckOptions) -> Report {
    let lost = list_append::lost_updates(h);
    // Garbage reads and duplicate elements are facts of the reads too.
    let garbage = solver::uncommitted::read_fact(h);
    let mut absent: BTreeSet<String> = BTreeSet::new();
    if lost.is_empty() {
        absent.insert(LOST_UPDATE.to_string());
    }
    if garbage.is_none() {
        absent.extend(GARBAGE.iter().map(|g| g.to_string()));
    }
    let items = LEVELS.items(options, &absent);
    let limits = options.solver_limits();
    // A fact of the reads settles what it rules out before any search:
    // read committed's search may take its whole time limit on a history
    // whose non-repeatable read already rules out read atomic. (The serial
    // levels' extraction stops at such a fact by itself.)
    // Read committed's extraction finds them; its search reuses it.
    let mut prepared = items
        .iter()
        .any(|i| matches!(i.level, Some(Level::ReadCommitted | Level::ConsistentView)))
        .then(|| read_committed::prepare(h, &limits));
    let facts: Vec<DupAnomaly> = prepared
        .as_ref()
        .and_then(read_committed::Prepared::finding)
        .filter(|a| READ_FACTS.contains(&a.kind.name()))
        .into_iter()
        .chain(garbage)
        .collect();
    // So do lost updates, the same under every choice: consistent view's
    // search need not run on a history with one.
    let settled = |i: &Item| {
        facts.iter().any(|a| rules_out(a, i))
            || (!lost.is_empty() && i.prohibited.contains(LOST_UPDATE))
    };
    // The serial family shares what one level implies for another; read
    // committed and consistent view run on their own (read committed
    // first: when it fails, so does consistent view).
    let mut levels: Vec<Level> = Vec::new();
    for l in items.iter().filter(|i| !settled(i)).filter_map(|i| i.level) {
        if !levels.contains(&l) {
            levels.push(l);
        }
    }
    let mut verdicts = run(h, &levels, &limits, &mut prepared);
    let undecided = items
        .iter()
        .any(|i| judge(h, i, &verdicts, !lost.is_empty(), &facts).0 == Validity::Unknown);
    if undecided && !levels.contains(&Level::ReadCommitted) {
        // A weaker level's failure may rule out what a stronger one's
        // did not.
        verdicts.extend(run(h, &[Level::ReadCommitted], &limits, &mut prepared));
    }

    let mut notes = vec![
        "appended values repeat, so the history was decided by the duplicate-value solver: a model holds iff some choice of writers leaves none of its prohibited anomalies (searched exactly for no G0 (read-uncommitted), no G0 and G1c, read-committed, consistent-view, snapshot-isolation, serializable and strict-serializable; other models follow from these through the lattice)".to_string(),
    ];
    let mut valid = Validity::True;
    let mut witness = Vec::new();
    for item in &items {
        let (v, why, proof) = judge(h, item, &verdicts, !lost.is_empty(), &facts);
        match v {
            Validity::False => valid = Validity::False,
            Validity::Unknown => {
                if valid == Validity::True {
                    valid = Validity::Unknown;
                }
                notes.push(format!("{}: {why}", item.name));
            }
            Validity::True => {}
        }
        witness.extend(item.witness(proof));
    }
    // Findings: those the requests prohibit are reported (one per reason);
    // all of them rule models out.
    let prohibited: BTreeSet<String> = items
        .iter()
        .flat_map(|i| i.prohibited.iter().cloned())
        .collect();
    let mut anomalies: BTreeMap<String, Vec<Finding>> = BTreeMap::new();
    let mut said: Vec<&Proof> = Vec::new();
    let mut ruled: BTreeSet<Model> = BTreeSet::new();
    if !lost.is_empty() {
        ruled.extend(ruled_out_by(&Forced::one_of([LOST_UPDATE.to_string()])));
        if prohibited.contains(LOST_UPDATE) {
            anomalies.insert(
                LOST_UPDATE.to_string(),
                lost.into_iter().map(Finding::of_anomaly).collect(),
            );
        }
    }
    let found = verdicts
        .iter()
        .filter_map(|v| Some((v.level, v.anomaly.as_ref()?)))
        .chain(facts.iter().map(|a| {
            // Garbage reads are found apart from read committed's facts.
            let by = if GARBAGE.contains(&a.kind.name()) {
                Level::ReadUncommitted
            } else {
                Level::ReadCommitted
            };
            (by, a)
        }));
    for (level, a) in found {
        let d = forced(level, a);
        ruled.extend(ruled_out_by(&d));
        if !d.within(&prohibited) || said.contains(&&a.proof) {
            continue;
        }
        said.push(&a.proof);
        anomalies
            .entry(a.kind.name().to_string())
            .or_default()
            .push(finding(level, a));
    }
    let (not, also_not) = if anomalies.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        let not = model::weakest_models(&ruled);
        let also: BTreeSet<Model> = ruled.difference(&not).copied().collect();
        model::Boundary {
            not,
            also_not: also,
        }
        .friendly()
    };
    Report {
        valid,
        anomaly_types: anomalies.keys().cloned().collect(),
        not,
        also_not,
        anomalies,
        notes,
        witness: options.witness.then_some(witness),
    }
}

/// Runs the levels (the serial family together; read committed and
/// consistent view from read committed's facts, `prepared` if they were
/// extracted already).
fn run(
    h: &crate::history::History,
    levels: &[Level],
    limits: &solver::Limits,
    prepared: &mut Option<read_committed::Prepared>,
) -> Vec<DupVerdict> {
    let from_rc = |l: &Level| matches!(l, Level::ReadCommitted | Level::ConsistentView);
    let below = |l: &Level| matches!(l, Level::ReadUncommitted | Level::NoG1c);
    let serial: Vec<Level> = levels
        .iter()
        .copied()
        .filter(|l| !from_rc(l) && !below(l))
        .collect();
    let mut out = if serial.is_empty() {
        Vec::new()
    } else {
        solver::check_levels(h, &serial, limits)
    };
    for l in levels.iter().copied().filter(below) {
        out.push(solver::check_duplicates(h, l, limits));
    }
    let mut rc_failed = false;
    for l in [Level::ReadCommitted, Level::ConsistentView] {
        if !levels.contains(&l) || rc_failed {
            continue;
        }
        let p = prepared.get_or_insert_with(|| read_committed::prepare(h, limits));
        let v = solver::check_prepared_at(h, p, limits, l);
        // Every choice has G1: consistent view fails too (judged from
        // read committed's finding).
        rc_failed = v.valid == Validity::False && v.anomaly.is_some();
        out.push(v);
    }
    out
}

/// Whether a fact of the reads rules `item` out (every choice has it).
fn rules_out(fact: &DupAnomaly, item: &Item) -> bool {
    forced(Level::ReadCommitted, fact).within(&item.prohibited)
}

/// An item's verdict, why (when unknown), and the level verdict that
/// proves it (when valid). `lost`: the history has lost updates; `facts`:
/// facts of the reads found before any level ran.
fn judge<'v>(
    h: &crate::history::History,
    item: &Item,
    verdicts: &'v [DupVerdict],
    lost: bool,
    facts: &[DupAnomaly],
) -> (Validity, String, Option<&'v DupVerdict>) {
    let ruled =
        lost && item.prohibited.contains(LOST_UPDATE) || facts.iter().any(|a| rules_out(a, item));
    LEVELS.judge(h, item, verdicts, ruled)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// T0 reads x twice, around two appends of the same value.
    const NON_REPEATABLE: &str = r#"{:type :invoke, :process 0, :value [[:r :x nil] [:r :x nil]], :index 0}
{:type :invoke, :process 1, :value [[:append :x 1]], :index 1}
{:type :ok, :process 1, :value [[:append :x 1]], :index 2}
{:type :invoke, :process 2, :value [[:append :x 1]], :index 3}
{:type :ok, :process 2, :value [[:append :x 1]], :index 4}
{:type :ok, :process 0, :value [[:r :x [1]] [:r :x [1 1]]], :index 5}
"#;

    fn item(name: &str) -> Item {
        let m = model::parse_model(name).expect("a model");
        LEVELS.item(
            name.to_string(),
            Some(m),
            model::anomalies_prohibited_by(&[m]),
            &BTreeSet::new(),
        )
    }

    #[test]
    fn a_non_repeatable_read_settles_read_atomic_before_any_search() {
        let h = crate::history::read::read_history(NON_REPEATABLE.as_bytes(), "t", None)
            .expect("parses");
        let fact = read_committed::prepare(&h, &solver::Limits::default())
            .finding()
            .expect("a finding of the reads");
        assert_eq!(fact.kind.name(), "internal");
        assert!(READ_FACTS.contains(&fact.kind.name()));
        // Read atomic's level is read committed, whose search it skips.
        let ra = item("read-atomic");
        assert_eq!(ra.level, Some(Level::ReadCommitted));
        assert!(rules_out(&fact, &ra));
        assert!(rules_out(&fact, &item("serializable")));
        assert!(!rules_out(&fact, &item("read-committed")));
        let r = super::super::check_history(
            &h,
            &CheckOptions {
                models: Some(vec!["read-atomic".into()]),
                ..CheckOptions::default()
            },
        );
        assert_eq!(r.valid, Validity::False);
        assert_eq!(r.anomaly_types, vec!["internal"]);
    }
}
