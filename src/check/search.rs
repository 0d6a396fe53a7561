//! Cycle search as Elle runs it, per strongly connected component: first the
//! cheap "does any cycle exist in this subgraph" pass that refutes whole
//! models, then the class searches, most severe first. Every class the
//! requested models prohibit is searched in every component (one cycle per
//! class), so a reader of "G-single-item" also learns of the G2-item beside
//! it. That reports a superset of Elle's types: Elle skips a class implied
//! by one it found in the component, but its search often misses the
//! implying class and then reports the implied one. The lattice only skips what cannot change the
//! reported set: classes whose relations form no cycle there (the
//! cycle-exists pass), and classes nobody prohibits that a class already
//! found implies (they add nothing to `not`/`also-not`). The graph module
//! searches; this module supplies the lattice (hooks) and turns results
//! into findings.

use super::{explain_cycle, Finding};
use crate::evidence::Explain;
use crate::graph::{
    search, CycleClass, CycleExistsHit, DepGraph, ExplainOrder, Rels, SccPrep, SccView,
    SearchHooks, SearchLimits, SearchPlan,
};
use crate::history::History;
use crate::model::{
    all_implied_anomalies, all_impossible_models, anomaly, cycle_exists_specs, cycle_types,
    impossible_cycle_anomalies,
};
use rustc_hash::FxHashMap;
use serde_json::json;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// The lattice, as the search needs it. Its answers depend only on which
/// models a component refuted, never on the component, so they are
/// memoised: a history with tens of thousands of small cyclic components
/// asks the same few questions over and over.
struct LatticeHooks {
    /// Set of refuted specs (bit `i`: `cycle_exists_specs()[i]`) → what
    /// follows from it.
    memo: Mutex<FxHashMap<u64, Arc<Refuted>>>,
    /// Per class: the classes finding it makes redundant: those it implies
    /// that the check does not prohibit (reported or not, they rule out no
    /// model the implying class does not).
    implied: FxHashMap<CycleClass, Vec<CycleClass>>,
}

/// A subgraph as the relations left on one component: (A, B) of `A ∪ A;B`.
type Subgraph = (Rels, Rels);

/// What a set of refuted models implies.
struct Refuted {
    /// Specs (bit `i`) whose model is already impossible: no need to test.
    moot: u64,
    /// Classes the remaining possible models no longer care about.
    skip: Vec<CycleClass>,
}

impl LatticeHooks {
    /// `prohibited`: the anomaly types the check fails on; they are never
    /// skipped because another class was found.
    fn new(prohibited: &BTreeSet<String>) -> Self {
        assert!(cycle_exists_specs().len() <= 64, "specs fit a u64 mask");
        let implied = cycle_types()
            .iter()
            .filter_map(|&t| CycleClass::from_name(t))
            .map(|c| {
                let implied = all_implied_anomalies(&[c.name()])
                    .iter()
                    .filter(|a| !prohibited.contains(*a))
                    .filter_map(|a| CycleClass::from_name(a))
                    .collect();
                (c, implied)
            })
            .collect();
        LatticeHooks {
            memo: Mutex::new(FxHashMap::default()),
            implied,
        }
    }

    fn refuted(&self, mask: u64) -> Arc<Refuted> {
        if let Some(r) = self.memo.lock().expect("memo lock").get(&mask) {
            return r.clone();
        }
        let specs = cycle_exists_specs();
        let models: Vec<_> = (0..specs.len())
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| specs[i].model)
            .collect();
        let impossible = all_impossible_models(&models);
        let moot = (0..specs.len())
            .filter(|&i| impossible.contains(&specs[i].model))
            .fold(0u64, |m, i| m | (1 << i));
        let skip = impossible_cycle_anomalies(&models)
            .into_iter()
            .filter_map(CycleClass::from_name)
            .collect();
        let r = Arc::new(Refuted { moot, skip });
        self.memo.lock().expect("memo lock").insert(mask, r.clone());
        r
    }
}

impl SearchHooks for LatticeHooks {
    fn prepare(&self, scc: &SccView<'_>) -> SccPrep {
        let mut refuted = 0u64;
        let mut hits = Vec::new();
        // Specs whose subgraphs coincide on this component (e.g. the
        // strong-session ones when there are no process edges) share one
        // answer.
        let present = scc.rels();
        let mut asked: Vec<(Subgraph, Option<Vec<u32>>)> = Vec::new();
        for (i, spec) in cycle_exists_specs().iter().enumerate() {
            if self.refuted(refuted).moot & (1 << i) != 0 {
                continue;
            }
            let (a, b) = spec.subgraph.parts();
            let key = (
                a.intersect(present),
                b.map_or(Rels::NONE, |b| b.intersect(present)),
            );
            let found = match asked.iter().find(|(k, _)| *k == key) {
                Some((_, f)) => f.clone(),
                None => {
                    let f = scc.cyclic_scc(a, b);
                    asked.push((key, f.clone()));
                    f
                }
            };
            if let Some(txns) = found {
                hits.push(CycleExistsHit { spec: i, txns });
                refuted |= 1 << i;
            }
        }
        SccPrep {
            skip: self.refuted(refuted).skip.clone(),
            cycle_exists: hits,
        }
    }

    fn implied(&self, class: CycleClass) -> Vec<CycleClass> {
        self.implied.get(&class).cloned().unwrap_or_default()
    }
}

/// Searches every component; returns (anomaly type, finding) pairs: cycles,
/// cycle-exists fallbacks, and cycle-search timeouts. `prohibited`: the
/// anomaly types the check fails on (each is searched for in every
/// component).
pub(super) fn cycles(
    h: &History,
    g: &DepGraph,
    ex: &dyn Explain,
    order: ExplainOrder,
    limits: SearchLimits,
    prohibited: &BTreeSet<String>,
    notes: &mut Vec<String>,
) -> Vec<(String, Finding)> {
    let mut plan = SearchPlan::new(cycle_types());
    plan.order = order;
    let result = search(g, &plan, &limits, &LatticeHooks::new(prohibited));
    let mut out = Vec::new();
    let cycle_finding = |txns: Vec<u32>, out: &mut Vec<(String, Finding)>| {
        if let Some(c) = explain_cycle(h, g, ex, txns) {
            out.push((c.kind.name().to_string(), Finding::of_cycle(c)));
        }
    };
    for scc in result.sccs {
        for hit in &scc.cycle_exists {
            let spec = &cycle_exists_specs()[hit.spec];
            let indices: Vec<i64> = hit.txns.iter().map(|&t| h.txns[t as usize].index).collect();
            out.push((
                spec.anomaly_type.to_string(),
                Finding::eager(
                    json!({
                        "type": spec.anomaly_type,
                        "not": spec.friendly_model(),
                        "subgraph": spec.subgraph.to_json(),
                        "scc-size": hit.txns.len(),
                        "scc": indices,
                    }),
                    format!(
                        "Some cycle in the {} subgraph exists among these {} transactions (search did not name it): ops {:?}. So the history is not {}.",
                        spec.subgraph.to_json(),
                        hit.txns.len(),
                        indices,
                        spec.friendly_model()
                    ),
                ),
            ));
        }
        for found in scc.cycles {
            if !found.shortest {
                notes.push(format!(
                    "the {} cycle reported among {} transactions may not be the shortest: the search bound was hit",
                    found.class.name(),
                    scc.txns.len()
                ));
            }
            cycle_finding(found.cycle.txns, &mut out);
        }
        if let Some(t) = scc.timeout {
            let names = |cs: &[CycleClass]| cs.iter().map(|c| c.name()).collect::<Vec<_>>();
            notes.push(format!(
                "cycle search timed out in a component of {} transactions while looking for {}: classes after it were not searched there, so the anomalies found are a lower bound",
                t.scc_size,
                t.class.name()
            ));
            out.push((
                anomaly::CYCLE_SEARCH_TIMEOUT.to_string(),
                Finding::eager(
                    json!({
                        "type": anomaly::CYCLE_SEARCH_TIMEOUT,
                        "anomaly-spec-type": t.class.name(),
                        "does-not-contain": names(&t.does_not_contain),
                        "scc-size": t.scc_size,
                    }),
                    format!(
                        "The search for {} in a strongly connected component of {} transactions hit its bound{}.",
                        t.class.name(),
                        t.scc_size,
                        match names(&t.does_not_contain).join(", ") {
                            none if none.is_empty() => String::new(),
                            ruled => format!("; before it, the search found no {ruled} there"),
                        }
                    ),
                ),
            ));
            cycle_finding(t.fallback.txns, &mut out);
        }
    }
    out
}
