//! Cycle search as Elle runs it, per strongly connected component: first the
//! cheap "does any cycle exist in this subgraph" pass that refutes whole
//! models, then the class searches, most severe first, skipping classes the
//! lattice makes moot. The graph module searches; this module supplies the
//! lattice (hooks) and turns results into findings.

use super::{explain_cycle, Finding};
use crate::explain::cycle::{render_text, to_json};
use crate::graph::{
    search, CycleClass, CycleExistsHit, DepGraph, ExplainOrder, SccPrep, SccView, SearchHooks,
    SearchLimits, SearchPlan,
};
use crate::history::History;
use crate::model::{
    all_implied_anomalies, all_impossible_models, anomaly, cycle_exists_specs, cycle_types,
    impossible_cycle_anomalies,
};
use crate::workload::Explain;
use serde_json::json;
use std::time::Duration;

/// The lattice, as the search needs it.
struct LatticeHooks;

impl SearchHooks for LatticeHooks {
    fn prepare(&self, scc: &SccView<'_>) -> SccPrep {
        let mut refuted = Vec::new();
        let mut hits = Vec::new();
        for (i, spec) in cycle_exists_specs().iter().enumerate() {
            if all_impossible_models(&refuted).contains(&spec.model) {
                continue;
            }
            let (a, b) = spec.subgraph.parts();
            if let Some(txns) = scc.cyclic_scc(a, b) {
                hits.push(CycleExistsHit { spec: i, txns });
                refuted.push(spec.model);
            }
        }
        let skip = impossible_cycle_anomalies(&refuted)
            .into_iter()
            .filter_map(CycleClass::from_name)
            .collect();
        SccPrep {
            skip,
            cycle_exists: hits,
        }
    }

    fn implied(&self, class: CycleClass) -> Vec<CycleClass> {
        all_implied_anomalies(&[class.name()])
            .iter()
            .filter_map(|a| CycleClass::from_name(a))
            .collect()
    }
}

/// Searches every component; returns (anomaly type, finding) pairs: cycles,
/// cycle-exists fallbacks, and cycle-search timeouts.
pub(super) fn cycles(
    h: &History,
    g: &DepGraph,
    ex: &dyn Explain,
    order: ExplainOrder,
    timeout_ms: u64,
    notes: &mut Vec<String>,
) -> Vec<(String, Finding)> {
    let mut plan = SearchPlan::new(cycle_types());
    plan.order = order;
    let limits = SearchLimits {
        scc_timeout: Some(Duration::from_millis(timeout_ms)),
        ..SearchLimits::default()
    };
    let result = search(g, &plan, &limits, &LatticeHooks);
    let mut out = Vec::new();
    let cycle_finding = |txns: Vec<u32>, out: &mut Vec<(String, Finding)>| {
        if let Some(c) = explain_cycle(h, g, ex, txns) {
            let text = render_text(h, &c);
            out.push((
                c.kind.clone(),
                Finding {
                    detail: to_json(h, &c),
                    explanation: text,
                    cycle: Some(c),
                },
            ));
        }
    };
    for scc in result.sccs {
        for hit in &scc.cycle_exists {
            let spec = &cycle_exists_specs()[hit.spec];
            let indices: Vec<i64> = hit.txns.iter().map(|&t| h.txns[t as usize].index).collect();
            out.push((
                spec.anomaly_type.to_string(),
                Finding {
                    detail: json!({
                        "type": spec.anomaly_type,
                        "not": spec.friendly_model(),
                        "subgraph": spec.subgraph.to_json(),
                        "scc-size": hit.txns.len(),
                        "scc": indices,
                    }),
                    explanation: format!(
                        "Some cycle in the {} subgraph exists among these {} transactions (search did not name it): ops {:?}. So the history is not {}.",
                        spec.subgraph.to_json(),
                        hit.txns.len(),
                        indices,
                        spec.friendly_model()
                    ),
                    cycle: None,
                },
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
                Finding {
                    detail: json!({
                        "type": anomaly::CYCLE_SEARCH_TIMEOUT,
                        "anomaly-spec-type": t.class.name(),
                        "does-not-contain": names(&t.does_not_contain),
                        "scc-size": t.scc_size,
                    }),
                    explanation: format!(
                        "The search for {} in a strongly connected component of {} transactions hit its bound; it found no {} there before.",
                        t.class.name(),
                        t.scc_size,
                        names(&t.does_not_contain).join(", ")
                    ),
                    cycle: None,
                },
            ));
            cycle_finding(t.fallback.txns, &mut out);
        }
    }
    out
}
