//! Every cycle class a history contains is reported (issue 15, item 1).
//!
//! Elle searches each strongly connected component for a cycle of every
//! cycle-anomaly type the requested models prohibit and reports each type it
//! finds, not only the most severe one. The oracle here enumerates every
//! simple cycle of the dependency graph of a small generated history (brute
//! force, no search, no lattice), names each one, and asserts that isolde's
//! reported cycle anomaly types are exactly the classes that exist among
//! those the model prohibits.
//!
//! The graph is built as the checker builds it (list-append inference, plus
//! real-time or process order when the model needs it): what is under test
//! is the search and the lattice's pruning, not inference.
//!
//! `PROPTEST_CASES=N` scales the sample.

use crate::support::cases;
#[allow(dead_code)]
use crate::support::oracle;
use crate::support::parse_edn;

use isolde::check::{check_history, CheckOptions};
use isolde::graph::{
    process_edges, realtime_edges, sccs, Cycle, CycleClass, DepGraph, ExplainOrder, GraphBuilder,
    Rels,
};
use isolde::history::History;
use isolde::model::{ModelOptions, OrderGraph};
use isolde::solver as duplicates;
use isolde::workload::list_append;
use oracle::gen::{self, Knobs, Spec};
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use std::collections::BTreeSet;

/// Models whose prohibited classes differ: all classes, data classes only,
/// data + process, G0/G1c/G-single/G-nonadjacent (+ variants), G0/G1c.
const MODELS: [&str; 5] = [
    "strict-serializable",
    "serializable",
    "strong-session-serializable",
    "snapshot-isolation",
    "read-committed",
];

/// The dependency graph the checker searches for `model`.
fn graph(h: &History, model: &str) -> DepGraph {
    let (inference, _) = list_append::infer(h, 2);
    let mut b = GraphBuilder::with_nodes(h.txns.len());
    for (x, y, r) in inference.edges {
        b.add(x, y, r);
    }
    let mopts = ModelOptions::new(Some(&[model]), &[]).expect("known model");
    match mopts.order_graph() {
        OrderGraph::Realtime => b.add_all(&realtime_edges(h), Rels::REALTIME),
        OrderGraph::Process => b.add_all(&process_edges(h), Rels::PROCESS),
        OrderGraph::None => {}
    }
    b.build()
}

/// The class of every simple cycle of `g`, by exhaustive enumeration: each
/// cycle is grown from its smallest vertex through larger ones only, so it
/// is seen once per rotation-free form.
fn classes_by_enumeration(g: &DepGraph) -> BTreeSet<&'static str> {
    fn grow(g: &DepGraph, path: &mut Vec<u32>, out: &mut BTreeSet<&'static str>) {
        let (start, x) = (path[0], *path.last().expect("non-empty"));
        for &y in g.targets(x) {
            if y == start {
                path.push(start);
                let cycle = Cycle::from_txns(g, &ExplainOrder::LIST_APPEND, path)
                    .expect("every step is an edge");
                path.pop();
                if let Some(c) = cycle.class() {
                    out.insert(c.name());
                }
            } else if y > start && !path.contains(&y) {
                path.push(y);
                grow(g, path, out);
                path.pop();
            }
        }
    }
    let mut out = BTreeSet::new();
    // Only vertices on some cycle can start one; components keep it small.
    for comp in sccs(g, Rels::ANY) {
        if comp.len() > 1 {
            for &s in &comp {
                grow(g, &mut vec![s], &mut out);
            }
        }
    }
    out
}

/// isolde's reported cycle classes == the oracle's, for classes `model`
/// prohibits. Returns how many classes were compared.
fn compare(h: &History, edn: &str, model: &str) -> Result<usize, String> {
    let prohibited = ModelOptions::new(Some(&[model]), &[])
        .expect("known model")
        .prohibited();
    let want: BTreeSet<&str> = classes_by_enumeration(&graph(h, model))
        .into_iter()
        .filter(|c| prohibited.contains(*c))
        .collect();
    let r = check_history(
        h,
        &CheckOptions {
            models: Some(vec![model.to_string()]),
            ..CheckOptions::default()
        },
    );
    if r.anomaly_types.iter().any(|t| t == "cycle-search-timeout") {
        return Err(format!("{model}: the search timed out on a small history"));
    }
    let got: BTreeSet<&str> = r
        .anomaly_types
        .iter()
        .map(String::as_str)
        .filter(|t| CycleClass::from_name(t).is_some())
        .collect();
    if got != want {
        return Err(format!(
            "{model}: isolde reports cycle classes {got:?}, the enumeration finds {want:?}\n{edn}"
        ));
    }
    Ok(want.len())
}

#[test]
fn every_prohibited_cycle_class_present_is_reported() {
    let knobs = Knobs {
        faults: true,
        corrupt: true,
        final_read: 5,
        max_txns: 7,
        fault_reads: false,
    };
    let config = Config {
        cases: cases(3000),
        failure_persistence: None,
        max_shrink_iters: 4096,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let strategy = gen::spec(gen::any_semantics(), knobs);
    let multi = std::cell::Cell::new(0usize);
    let result = runner.run(&strategy, |spec: Spec| {
        let hist = gen::build(&spec);
        let edn = hist.to_edn();
        let h = parse_edn(&edn);
        // Repeated appends go to the duplicate-value solver, not the search.
        if duplicates::has_duplicate_appends(&h) {
            return Ok(());
        }
        for model in MODELS {
            let n = compare(&h, &edn, model).map_err(TestCaseError::fail)?;
            multi.set(multi.get() + usize::from(n > 1));
        }
        Ok(())
    });
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, spec)) => panic!("{why}\nminimal spec: {spec:?}"),
        Err(e) => panic!("{e}"),
    }
    // The property says something only if histories with several classes
    // at once occur.
    let multi = multi.get();
    eprintln!("checks reporting two or more cycle classes: {multi}");
    assert!(multi > 50, "too few multi-class cases: {multi}");
}

/// One component with a G-single-item and, through the same transactions,
/// a G2-item: both are reported (Elle's per-class search), where a
/// most-severe-first search that skips implied classes stopped at the first.
#[test]
fn write_skew_beside_g_single_is_reported() {
    // T1 and T2 each read x and y empty and append to one of them: T1 -rw->
    // T2 -rw-> T1, a G2-item. T3 appends y after T2 and z, which T1 read:
    // T1 -rw-> T2 -ww-> T3 -wr-> T1, a G-single-item.
    let edn = r#"
{:index 0, :type :invoke, :process 0, :f :txn, :value [[:r :x nil] [:r :y nil] [:r :z nil] [:append :x 1]]}
{:index 1, :type :invoke, :process 1, :f :txn, :value [[:r :x nil] [:r :y nil] [:append :y 1]]}
{:index 2, :type :invoke, :process 2, :f :txn, :value [[:append :y 2] [:append :z 1]]}
{:index 3, :type :ok, :process 2, :f :txn, :value [[:append :y 2] [:append :z 1]]}
{:index 4, :type :ok, :process 0, :f :txn, :value [[:r :x []] [:r :y []] [:r :z [1]] [:append :x 1]]}
{:index 5, :type :ok, :process 1, :f :txn, :value [[:r :x []] [:r :y []] [:append :y 1]]}
{:index 6, :type :invoke, :process 3, :f :txn, :value [[:r :x nil] [:r :y nil] [:r :z nil]]}
{:index 7, :type :ok, :process 3, :f :txn, :value [[:r :x [1]] [:r :y [1 2]] [:r :z [1]]]}
"#;
    let h = parse_edn(edn);
    let r = check_history(
        &h,
        &CheckOptions {
            models: Some(vec!["serializable".into()]),
            ..CheckOptions::default()
        },
    );
    let cycles: Vec<&str> = r
        .anomaly_types
        .iter()
        .map(String::as_str)
        .filter(|t| CycleClass::from_name(t).is_some())
        .collect();
    assert_eq!(cycles, ["G-single-item", "G2-item"]);
    assert_eq!(compare(&h, edn, "serializable"), Ok(2));
}
