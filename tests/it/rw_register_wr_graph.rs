//! Elle's analyzer-level rw-register cases (`wr-graph-test--*` in
//! ../shared/conformance/rw-register): Elle runs its wr-graph analyzer
//! alone, so a case is invalid exactly when the wr edges alone form a cycle.

use crate::support::corpus;

use isolde::graph::{sccs, GraphBuilder, Rels};
use isolde::history::read::read_history_file;
use isolde::workload::rw_register;
use serde_json::Value;

#[test]
fn wr_graph_cases_match_elle() {
    let Some(root) = corpus::root() else { return };
    let dir = root.join("rw-register");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "edn")
                && p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("wr-graph-test--")
        })
        .collect();
    names.sort();
    assert_eq!(names.len(), 5, "Elle has five wr-graph cases");
    // Elle's defaults: only the initial state orders versions.
    let opts = rw_register::RegisterOptions::default();
    for edn in names {
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(edn.with_extension("expected.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(expected["options"]["analyzer"], "elle.rw-register/wr-graph");
        let h = read_history_file(&edn, None).unwrap();
        let (inf, _) = rw_register::infer_with(&h, &opts);
        let mut g = GraphBuilder::with_nodes(h.txns.len());
        for &(a, b, r) in &inf.edges {
            if r == Rels::WR {
                g.add(a, b, r);
            }
        }
        let cycles = sccs(&g.build(), Rels::WR);
        let name = edn.file_name().unwrap().to_string_lossy().to_string();
        assert_eq!(Value::Bool(cycles.is_empty()), expected["valid"], "{name}");
        if let Some(n) = expected["scc_count"].as_u64() {
            assert_eq!(cycles.len() as u64, n, "{name}");
        }
    }
}
