//! Tests of the cycle search: one hand-built graph per class, the bounds,
//! the hooks, and a brute-force oracle over random small graphs.

use super::*;
use crate::graph::{BaseClass, GraphBuilder, Variant};
use proptest::prelude::*;

const WW: Rels = Rels::WW;
const WR: Rels = Rels::WR;
const RW: Rels = Rels::RW;
const P: Rels = Rels::PROCESS;
const RT: Rels = Rels::REALTIME;

fn graph(edges: &[(u32, u32, Rels)]) -> DepGraph {
    let mut b = GraphBuilder::new();
    for &(a, c, r) in edges {
        b.add(a, c, r);
    }
    b.build()
}

/// Every non-predicate class, in Elle's severity order.
const ITEM_CLASSES: [&str; 15] = [
    "G0",
    "G0-process",
    "G0-realtime",
    "G1c",
    "G1c-process",
    "G1c-realtime",
    "G-single-item",
    "G-single-item-process",
    "G-single-item-realtime",
    "G-nonadjacent-item",
    "G-nonadjacent-item-process",
    "G-nonadjacent-item-realtime",
    "G2-item",
    "G2-item-process",
    "G2-item-realtime",
];

/// The class names found, with their cycles as (txns, step names).
fn found(g: &DepGraph, classes: &[&str]) -> Vec<(&'static str, Vec<u32>, Vec<&'static str>)> {
    find_cycles(g, classes, &SearchLimits::default())
        .cycles()
        .map(|f| {
            (
                f.class.name(),
                f.cycle.txns.clone(),
                f.cycle.steps.iter().map(|s| s.name()).collect(),
            )
        })
        .collect()
}

fn names(g: &DepGraph, classes: &[&str]) -> Vec<&'static str> {
    found(g, classes).into_iter().map(|f| f.0).collect()
}

#[test]
fn g0_is_a_cycle_of_ww_edges() {
    let g = graph(&[(0, 1, WW), (1, 0, WW)]);
    assert_eq!(
        found(&g, &["G0"]),
        vec![("G0", vec![0, 1, 0], vec!["ww", "ww"])]
    );
    assert_eq!(names(&g, &ITEM_CLASSES), vec!["G0"]);
}

#[test]
fn g1c_starts_with_its_wr_edge() {
    let g = graph(&[(0, 1, WW), (1, 0, WR)]);
    assert_eq!(
        found(&g, &ITEM_CLASSES),
        vec![("G1c", vec![1, 0, 1], vec!["wr", "ww"])]
    );
}

#[test]
fn g_single_item_has_exactly_one_rw() {
    let g = graph(&[(0, 1, RW), (1, 0, WW)]);
    assert_eq!(
        found(&g, &ITEM_CLASSES),
        vec![("G-single-item", vec![0, 1, 0], vec!["rw", "ww"])]
    );
}

#[test]
fn g_nonadjacent_item_alternates_rw() {
    let g = graph(&[(0, 1, RW), (1, 2, WR), (2, 3, RW), (3, 0, WR)]);
    assert_eq!(
        found(&g, &ITEM_CLASSES),
        vec![(
            "G-nonadjacent-item",
            vec![0, 1, 2, 3, 0],
            vec!["rw", "wr", "rw", "wr"]
        )]
    );
}

#[test]
fn adjacent_rw_edges_are_g2_item_not_g_nonadjacent() {
    let g = graph(&[(0, 1, RW), (1, 2, RW), (2, 0, WR)]);
    assert_eq!(names(&g, &ITEM_CLASSES), vec!["G2-item"]);
    // Adjacent through the wrap-around: rw wr ww rw.
    let g = graph(&[(0, 1, RW), (1, 2, WR), (2, 3, WW), (3, 0, RW)]);
    assert_eq!(names(&g, &ITEM_CLASSES), vec!["G2-item"]);
    let g = graph(&[(0, 1, RW), (1, 0, RW)]);
    assert_eq!(
        found(&g, &ITEM_CLASSES),
        vec![("G2-item", vec![0, 1, 0], vec!["rw", "rw"])]
    );
}

#[test]
fn process_and_realtime_variants() {
    let g = graph(&[(0, 1, RW), (1, 0, P)]);
    assert_eq!(names(&g, &ITEM_CLASSES), vec!["G-single-item-process"]);
    let g = graph(&[(0, 1, RW), (1, 0, RT)]);
    assert_eq!(names(&g, &ITEM_CLASSES), vec!["G-single-item-realtime"]);
    // Real-time wins over process in the name.
    let g = graph(&[(0, 1, WW), (1, 2, P), (2, 0, RT)]);
    assert_eq!(names(&g, &ITEM_CLASSES), vec!["G0-realtime"]);
    let g = graph(&[(0, 1, WR), (1, 2, WR), (2, 0, P)]);
    // One process edge against two wr edges: the process edge anchors it.
    assert_eq!(
        found(&g, &ITEM_CLASSES),
        vec![("G1c-process", vec![2, 0, 1, 2], vec!["process", "wr", "wr"])]
    );
    // A process edge that also carries ww is explained as ww: plain G0.
    let g = graph(&[(0, 1, WW), (1, 0, WW | P)]);
    assert_eq!(names(&g, &ITEM_CLASSES), vec!["G0"]);
}

#[test]
fn an_edge_carrying_ww_and_rw_is_explained_as_ww() {
    let g = graph(&[(0, 1, WW | RW), (1, 0, WW)]);
    assert_eq!(names(&g, &ITEM_CLASSES), vec!["G0"]);
    assert!(names(&g, &["G-single-item", "G2-item"]).is_empty());
}

#[test]
fn rw_register_order_explains_wr_before_ww() {
    let g = graph(&[(0, 1, WW | WR), (1, 0, WW)]);
    let plan = |order| SearchPlan {
        classes: SearchPlan::new(&ITEM_CLASSES).classes,
        order,
    };
    let la = search(
        &g,
        &plan(ExplainOrder::LIST_APPEND),
        &SearchLimits::default(),
        &NoHooks,
    );
    let rr = search(
        &g,
        &plan(ExplainOrder::RW_REGISTER),
        &SearchLimits::default(),
        &NoHooks,
    );
    assert_eq!(
        la.cycles().map(|f| f.class.name()).collect::<Vec<_>>(),
        vec!["G0"]
    );
    assert_eq!(
        rr.cycles().map(|f| f.class.name()).collect::<Vec<_>>(),
        vec!["G1c"]
    );
}

#[test]
fn the_shortest_cycle_of_a_class_wins() {
    // A G-single of 5 steps through 0..4, and one of 3 steps through 5..7,
    // all in one component.
    let g = graph(&[
        (0, 1, RW),
        (1, 2, WW),
        (2, 3, WW),
        (3, 4, WW),
        (4, 0, WW),
        (4, 5, WW),
        (5, 6, RW),
        (6, 7, WR),
        (7, 5, WW),
        (7, 0, WW),
    ]);
    let r = find_cycles(&g, &["G-single-item"], &SearchLimits::default());
    assert_eq!(r.sccs.len(), 1);
    let f: Vec<_> = r.cycles().collect();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].cycle.txns, vec![5, 6, 7, 5]);
    assert!(f[0].shortest);
}

#[test]
fn a_walk_that_repeats_a_vertex_is_not_a_cycle() {
    // Anchor rw 3 → 0. The shortest closing walk with a real-time step goes
    // 0 → 1 → 2 → 1 → 3 (repeating 1); the only simple one is
    // 0 → 4 → 5 → 6 → 3, two steps longer.
    let mut edges = vec![(3, 0, RW), (0, 1, WW), (1, 3, WW), (1, 2, RT), (2, 1, WW)];
    edges.extend([(0, 4, WW), (4, 5, RT), (5, 6, WW), (6, 3, WW)]);
    let g = graph(&edges);
    assert_eq!(
        found(&g, &["G-single-item-realtime"]),
        vec![(
            "G-single-item-realtime",
            vec![3, 0, 4, 5, 6, 3],
            vec!["rw", "ww", "realtime", "ww", "ww"]
        )]
    );
    // Without the long way round, there is no such cycle at all.
    let g = graph(&[(3, 0, RW), (0, 1, WW), (1, 3, WW), (1, 2, RT), (2, 1, WW)]);
    assert!(found(&g, &["G-single-item-realtime"]).is_empty());
    assert_eq!(
        names(&g, &["G-single-item", "G0-realtime"]),
        vec!["G-single-item", "G0-realtime"]
    );
}

#[test]
fn one_cycle_per_class_per_component() {
    let g = graph(&[
        (0, 1, WW),
        (1, 0, WW),
        (2, 3, WW),
        (3, 2, WW),
        (3, 4, WW),
        (4, 2, WW),
    ]);
    let r = find_cycles(&g, &["G0"], &SearchLimits::default());
    assert_eq!(r.sccs.len(), 2);
    assert_eq!(r.sccs[0].txns, vec![0, 1]);
    assert_eq!(r.sccs[1].txns, vec![2, 3, 4]);
    assert_eq!(r.sccs[1].cycles.len(), 1);
    assert_eq!(r.sccs[1].cycles[0].cycle.txns, vec![2, 3, 2]);
}

#[test]
fn a_class_without_a_cycle_in_its_relations_is_not_searched_in_vain() {
    // Cyclic only through rw: G0 and G1c have no cycle in their subgraph.
    let g = graph(&[(0, 1, WW), (1, 2, WR), (2, 0, RW)]);
    let r = find_cycles(&g, &ITEM_CLASSES, &SearchLimits::default());
    assert_eq!(r.sccs[0].searched.len(), 15);
    assert_eq!(names(&g, &ITEM_CLASSES), vec!["G-single-item"]);
}

#[test]
fn predicate_classes_and_other_names_are_never_found() {
    let g = graph(&[(0, 1, RW), (1, 0, WW)]);
    assert_eq!(
        names(&g, &["G-single", "G2", "G1a", "G-single-item"]),
        vec!["G-single-item"]
    );
}

#[test]
fn a_tiny_budget_times_out_with_elles_fields() {
    let mut edges = Vec::new();
    for v in 0..200u32 {
        edges.push((v, (v + 1) % 200, WW));
        edges.push((v, (v + 7) % 200, WR));
    }
    let g = graph(&edges);
    let limits = SearchLimits {
        class_budget: 50,
        ..SearchLimits::default()
    };
    let r = find_cycles(&g, &["G-single-item", "G0", "G1c"], &limits);
    let t = r.sccs[0].timeout.clone().expect("timed out");
    assert_eq!(t.class.name(), "G0");
    // G-single-item was searched (nothing to find: no rw) before G0 timed out.
    assert_eq!(
        t.does_not_contain,
        vec![CycleClass::from_name("G-single-item").unwrap()]
    );
    assert_eq!(t.scc_size, 200);
    assert_eq!(t.fallback.txns.first(), Some(&0));
    assert_eq!(t.fallback.txns.first(), t.fallback.txns.last());
    assert!(t.fallback_class.is_some());
    // The search stops at the timeout: G1c was not searched.
    assert_eq!(r.sccs[0].searched.len(), 2);
    assert_eq!(r.timed_out().len(), 1);
}

#[test]
fn a_passed_deadline_times_out() {
    let g = graph(&[(0, 1, WW), (1, 0, WW)]);
    let limits = SearchLimits {
        deadline: Some(Instant::now() - Duration::from_millis(1)),
        class_budget: u64::MAX,
        ..SearchLimits::default()
    };
    // Tiny searches may finish before the first deadline poll; a big one
    // cannot.
    let mut edges = Vec::new();
    for v in 0..20_000u32 {
        edges.push((v, (v + 1) % 20_000, RW));
        edges.push((v, (v + 3) % 20_000, WR));
    }
    let big = graph(&edges);
    let r = find_cycles(&big, &["G-single-item"], &limits);
    assert!(r.sccs[0].timeout.is_some());
    assert!(find_cycles(&g, &["G0"], &limits).sccs[0].timeout.is_none());
}

struct Lattice;
impl SearchHooks for Lattice {
    fn prepare(&self, scc: &SccView<'_>) -> SccPrep {
        let mut hits = Vec::new();
        if let Some(txns) = scc.cyclic_scc(WW | WR, Some(RW)) {
            hits.push(CycleExistsHit { spec: 7, txns });
        }
        SccPrep {
            skip: vec![CycleClass::from_name("G2-item").unwrap()],
            cycle_exists: hits,
        }
    }
    fn implied(&self, class: CycleClass) -> Vec<CycleClass> {
        if class.base == BaseClass::G0 {
            vec![CycleClass::new(BaseClass::G1c, class.variant)]
        } else {
            vec![]
        }
    }
}

#[test]
fn hooks_skip_implied_and_impossible_classes() {
    let g = graph(&[
        (0, 1, WW),
        (1, 0, WW),
        (1, 2, WR),
        (2, 0, WR),
        (0, 2, RW),
        (2, 1, RW),
    ]);
    let plan = SearchPlan::new(&["G0", "G1c", "G2-item", "G-single-item"]);
    let r = search(&g, &plan, &SearchLimits::default(), &Lattice);
    let s = &r.sccs[0];
    let searched: Vec<_> = s.searched.iter().map(|c| c.name()).collect();
    assert_eq!(searched, vec!["G0", "G-single-item"]);
    assert_eq!(
        s.cycle_exists,
        vec![CycleExistsHit {
            spec: 7,
            txns: vec![0, 1, 2]
        }]
    );
    assert_eq!(s.cycles.len(), 2);
}

#[test]
fn cycle_exists_counts_a_composed_self_edge() {
    // 0 →ww 1 →rw 0: in ww ∪ (ww ; rw), 0 has a self-edge.
    let g = graph(&[(0, 1, WW), (1, 0, RW)]);
    struct Probe(Mutex<Vec<Option<Vec<u32>>>>);
    impl SearchHooks for Probe {
        fn prepare(&self, scc: &SccView<'_>) -> SccPrep {
            let mut p = self.0.lock().unwrap();
            p.push(scc.cyclic_scc(WW, None));
            p.push(scc.cyclic_scc(WW, Some(RW)));
            p.push(scc.cyclic_scc(WW | RW, None));
            SccPrep::default()
        }
    }
    let probe = Probe(Mutex::new(Vec::new()));
    search(&g, &SearchPlan::default(), &SearchLimits::default(), &probe);
    assert_eq!(
        *probe.0.lock().unwrap(),
        vec![None, Some(vec![0]), Some(vec![0, 1])]
    );
}

#[test]
fn cycle_exists_picks_the_smallest_component() {
    // Two rw-extension cycles inside one component: 0..3 (4 vertices) and
    // 4,5 (2 vertices), joined by realtime edges.
    let g = graph(&[
        (0, 1, WW),
        (1, 2, WW),
        (2, 3, WW),
        (3, 0, WW),
        (4, 5, WR),
        (5, 4, WW),
        (3, 4, RT),
        (5, 0, RT),
    ]);
    struct Probe(Mutex<Option<Vec<u32>>>);
    impl SearchHooks for Probe {
        fn prepare(&self, scc: &SccView<'_>) -> SccPrep {
            *self.0.lock().unwrap() = scc.cyclic_scc(WW | WR, None);
            SccPrep::default()
        }
    }
    let probe = Probe(Mutex::new(None));
    search(&g, &SearchPlan::default(), &SearchLimits::default(), &probe);
    assert_eq!(*probe.0.lock().unwrap(), Some(vec![4, 5]));
}

#[test]
fn cycle_from_txns_explains_each_step() {
    let g = graph(&[(0, 1, WW | RW), (1, 0, RT | WR)]);
    let c = Cycle::from_txns(&g, &ExplainOrder::LIST_APPEND, &[0, 1, 0]).unwrap();
    assert_eq!(c.steps, vec![WW, WR]);
    assert_eq!(c.class().map(|c| c.name()), Some("G1c"));
    assert!(Cycle::from_txns(&g, &ExplainOrder::LIST_APPEND, &[0, 1]).is_none());
    assert!(Cycle::from_txns(&g, &ExplainOrder::LIST_APPEND, &[1, 2, 1]).is_none());
}

// ---------------------------------------------------------------------------
// Oracle: enumerate every simple cycle of a small graph, name it, and check
// that the search finds, per component and class, exactly the classes that
// exist, each with a cycle of minimal length.

/// All simple cycles, each once (rotated to start at its smallest vertex).
fn simple_cycles(g: &DepGraph) -> Vec<Vec<u32>> {
    let n = g.node_count() as u32;
    let mut out = Vec::new();
    fn extend(g: &DepGraph, start: u32, path: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        let x = *path.last().unwrap();
        for &y in g.targets(x) {
            if y == start {
                let mut c = path.clone();
                c.push(start);
                out.push(c);
            } else if y > start && !path.contains(&y) {
                path.push(y);
                extend(g, start, path, out);
                path.pop();
            }
        }
    }
    for s in 0..n {
        extend(g, s, &mut vec![s], &mut out);
    }
    out
}

fn check_against_oracle(g: &DepGraph, order: ExplainOrder) -> Result<(), TestCaseError> {
    let comps = sccs(g, Rels::ANY);
    let plan = SearchPlan {
        classes: SearchPlan::new(&ITEM_CLASSES).classes,
        order,
    };
    let r1 = search(
        g,
        &plan,
        &SearchLimits {
            threads: 1,
            ..SearchLimits::default()
        },
        &NoHooks,
    );
    let r2 = search(
        g,
        &plan,
        &SearchLimits {
            threads: 2,
            ..SearchLimits::default()
        },
        &NoHooks,
    );
    prop_assert_eq!(&r1, &r2);
    prop_assert_eq!(r1.sccs.len(), comps.len());
    // Minimal length per (component, class).
    let mut want: std::collections::BTreeMap<(usize, CycleClass), usize> = Default::default();
    for c in simple_cycles(g) {
        let steps: Vec<Rels> = c
            .windows(2)
            .map(|w| order.explain(g.edge(w[0], w[1])))
            .collect();
        let Some(class) = classify(&steps) else {
            continue;
        };
        let k = comps
            .iter()
            .position(|s| s.binary_search(&c[0]).is_ok())
            .unwrap();
        let e = want.entry((k, class)).or_insert(usize::MAX);
        *e = (*e).min(steps.len());
    }
    let mut got: std::collections::BTreeMap<(usize, CycleClass), usize> = Default::default();
    for (k, s) in r1.sccs.iter().enumerate() {
        prop_assert!(s.timeout.is_none());
        for f in &s.cycles {
            let c = &f.cycle;
            // A closed simple cycle inside the component, steps explained.
            prop_assert_eq!(c.txns.first(), c.txns.last());
            let mut vs = c.txns[1..].to_vec();
            vs.sort_unstable();
            vs.dedup();
            prop_assert_eq!(vs.len(), c.len());
            for (i, w) in c.txns.windows(2).enumerate() {
                prop_assert_eq!(order.explain(g.edge(w[0], w[1])), c.steps[i]);
                prop_assert!(s.txns.binary_search(&w[0]).is_ok());
            }
            prop_assert_eq!(classify(&c.steps), Some(f.class));
            prop_assert!(f.shortest);
            got.insert((k, f.class), c.len());
        }
    }
    prop_assert_eq!(got, want);
    Ok(())
}

fn arb_graph(max_n: u32) -> impl Strategy<Value = DepGraph> {
    (2..=max_n).prop_flat_map(|n| {
        prop::collection::vec((0..n, 0..n, 1u8..32), 0..(3 * n as usize)).prop_map(move |edges| {
            let mut b = GraphBuilder::with_nodes(n as usize);
            for (a, c, r) in edges {
                // Mostly single relations, as real graphs have.
                let r = if r % 4 == 0 { r } else { 1 << (r % 5) };
                b.add(a, c, Rels(r));
            }
            b.build()
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn search_matches_brute_force_enumeration(g in arb_graph(7)) {
        check_against_oracle(&g, ExplainOrder::LIST_APPEND)?;
    }

    #[test]
    fn search_matches_brute_force_enumeration_rw_register(g in arb_graph(6)) {
        check_against_oracle(&g, ExplainOrder::RW_REGISTER)?;
    }
}

/// Random graphs biased towards the shapes where shortest walks repeat
/// vertices: few rw and real-time edges in a dense ww/wr mesh.
fn arb_mesh() -> impl Strategy<Value = DepGraph> {
    (5u32..9).prop_flat_map(|n| {
        prop::collection::vec((0..n, 0..n, 0u8..10), n as usize..(4 * n as usize)).prop_map(
            move |edges| {
                let mut b = GraphBuilder::with_nodes(n as usize);
                for (a, c, k) in edges {
                    let r = match k {
                        0 => RW,
                        1 => RT,
                        2 => P,
                        3..=5 => WW,
                        _ => WR,
                    };
                    b.add(a, c, r);
                }
                b.build()
            },
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn search_matches_brute_force_on_meshes(g in arb_mesh()) {
        check_against_oracle(&g, ExplainOrder::LIST_APPEND)?;
    }
}

#[test]
fn variant_names_are_consistent_with_bases() {
    let c = CycleClass::new(BaseClass::G2Item, Variant::Realtime);
    assert_eq!(c.name(), "G2-item-realtime");
}

/// `cargo test --release --lib graph::search::tests::perf -- --ignored --nocapture`
#[test]
#[ignore]
fn perf_million_vertex_acyclic_graph() {
    let n = 1_000_000u32;
    let mut seed = 0x9e3779b97f4a7c15u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let t0 = Instant::now();
    let mut b = GraphBuilder::with_nodes(n as usize);
    b.reserve(5_000_000);
    for _ in 0..5_000_000 {
        let a = (rnd() % u64::from(n)) as u32;
        let span = 1 + (rnd() % 1000) as u32;
        let c = (a + span).min(n - 1);
        if c != a {
            b.add(a, c, Rels(1 << (rnd() % 5)));
        }
    }
    let g = b.build();
    let built = t0.elapsed();
    let t1 = Instant::now();
    let r = find_cycles(&g, &ITEM_CLASSES, &SearchLimits::default());
    let searched = t1.elapsed();
    assert!(r.sccs.is_empty());
    println!(
        "build {} edges: {:?}; search (no cycles): {:?}",
        g.edge_count(),
        built,
        searched
    );
    let t2 = Instant::now();
    let order = crate::graph::topological_order(&g).expect("acyclic");
    println!(
        "topological order of {} vertices: {:?}",
        order.len(),
        t2.elapsed()
    );
    // The builder alone on 10M edges (generation excluded).
    let edges: Vec<(u32, u32)> = (0..10_000_000)
        .map(|_| ((rnd() % 2_000_000) as u32, (rnd() % 2_000_000) as u32))
        .collect();
    let t3 = Instant::now();
    let mut b = GraphBuilder::with_nodes(2_000_000);
    b.add_all(&edges, Rels::WW);
    let g = b.build();
    println!(
        "build of {} edges from 10M pairs: {:?}",
        g.edge_count(),
        t3.elapsed()
    );
}

/// The dependency graph of Elle's `unfindable-g-single` test: a ring of
/// 1000 appends (a ww chain) closed by one rw edge, plus 28 noise
/// transactions hanging off each ring element whose cycles all have two
/// adjacent rw edges (G2-item). Elle's search times out there and falls
/// back to `PL-SI-cycle-exists`; ours finds the 1000-step G-single.
#[test]
fn unfindable_g_single_is_found() {
    let ring = 1000u32;
    let noise = 29u32;
    let mut b = GraphBuilder::new();
    for i in 0..ring - 1 {
        b.add(i, i + 1, WW);
    }
    // The last ring element missed the first one's append.
    b.add(ring - 1, 0, RW);
    // The read of the whole ring.
    b.add(ring - 1, ring, WR);
    let mut next = ring + 1;
    for i in 1..ring - 1 {
        let chain: Vec<u32> = (0..noise).map(|k| next + k).collect();
        next += noise;
        b.add(i, chain[0], WW);
        for k in 0..noise as usize - 3 {
            b.add(chain[k], chain[k + 1], WW);
        }
        let (pen, last) = (chain[noise as usize - 2], chain[noise as usize - 1]);
        b.add(chain[noise as usize - 3], pen, WR);
        b.add(pen, last, RW);
        b.add(last, 0, RW);
    }
    let g = b.build();
    let t = Instant::now();
    let plan = SearchPlan::new(&ITEM_CLASSES);
    let r = search(&g, &plan, &SearchLimits::default(), &ElleImplied);
    let found: Vec<_> = r
        .cycles()
        .map(|f| (f.class.name(), f.cycle.len(), f.shortest))
        .collect();
    assert_eq!(found, vec![("G-single-item", 1000, true)]);
    let c = &r.cycles().next().unwrap().cycle;
    assert_eq!(&c.txns[..3], &[999, 0, 1]);
    assert!(t.elapsed() < Duration::from_secs(20));
}

/// A history-shaped graph: `n` transactions in time order, data edges mostly
/// forward in time, real-time edges forward, and `back` rw edges pointing
/// backwards (the anomalies), which fuse much of it into one component.
fn history_shaped(n: u32, back: u32, span: u32, seed: u64) -> DepGraph {
    let mut seed = seed | 1;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut b = GraphBuilder::with_nodes(n as usize);
    for a in 0..n {
        for _ in 0..3 {
            let c = a + 1 + (rnd() % 40) as u32;
            if c < n {
                b.add(a, c, [WW, WR, RW][(rnd() % 3) as usize]);
            }
        }
        let c = a + 1 + (rnd() % 8) as u32;
        if c < n {
            b.add(a, c, RT);
        }
    }
    for _ in 0..back {
        let a = (rnd() % u64::from(n)) as u32;
        let c = a.saturating_sub(1 + (rnd() % u64::from(span)) as u32);
        b.add(a, c, RW);
    }
    b.build()
}

/// Elle's implications between cycle classes (`implied-anomalies` in
/// `elle.consistency-model`), restricted to the item classes: finding a
/// class makes these redundant in the component.
struct ElleImplied;
impl SearchHooks for ElleImplied {
    fn implied(&self, class: CycleClass) -> Vec<CycleClass> {
        let direct = |c: &str| -> &[&str] {
            match c {
                "G0" => &["G1c", "G0-process"],
                "G0-process" => &["G1c-process", "G0-realtime"],
                "G0-realtime" => &["G1c-realtime"],
                "G1c" => &["G1c-process"],
                "G1c-process" => &["G1c-realtime"],
                "G-single-item" => &["G-single-item-process", "G-nonadjacent-item"],
                "G-single-item-process" => {
                    &["G-single-item-realtime", "G-nonadjacent-item-process"]
                }
                "G-single-item-realtime" => &["G-nonadjacent-item-realtime"],
                "G-nonadjacent-item" => &["G2-item", "G-nonadjacent-item-process"],
                "G-nonadjacent-item-process" => &["G2-item-process", "G-nonadjacent-item-realtime"],
                "G-nonadjacent-item-realtime" => &["G2-item-realtime"],
                "G2-item" => &["G2-item-process"],
                "G2-item-process" => &["G2-item-realtime"],
                _ => &[],
            }
        };
        let mut out: Vec<&str> = vec![class.name()];
        let mut i = 0;
        while i < out.len() {
            for &d in direct(out[i]) {
                if !out.contains(&d) {
                    out.push(d);
                }
            }
            i += 1;
        }
        out.into_iter()
            .skip(1)
            .filter_map(CycleClass::from_name)
            .collect()
    }
}

/// `cargo test --release --lib graph::search::tests::perf -- --ignored --nocapture`
#[test]
#[ignore]
fn perf_history_shaped_cyclic_graph() {
    let cases = [
        (100_000u32, 100u32, 30u32),
        (100_000, 5_000, 30),
        (1_000_000, 1_000, 30),
        (100_000, 20_000, 3_000),
        (1_000_000, 200_000, 3_000),
    ];
    for (n, back, span) in cases {
        let g = history_shaped(n, back, span, 42);
        let t = Instant::now();
        let plan = SearchPlan::new(&ITEM_CLASSES);
        let pruned = search(&g, &plan, &SearchLimits::default(), &ElleImplied);
        let el_pruned = t.elapsed();
        let t = Instant::now();
        let r = find_cycles(&g, &ITEM_CLASSES, &SearchLimits::default());
        let el = t.elapsed();
        println!(
            "  with Elle's implications: {} cycles, {} timeouts, {el_pruned:?}",
            pruned.cycles().count(),
            pruned.timed_out().len()
        );
        let biggest = r.sccs.iter().map(|s| s.txns.len()).max().unwrap_or(0);
        let found: usize = r.sccs.iter().map(|s| s.cycles.len()).sum();
        println!(
            "n={n} back={back} span={span}: {} sccs (largest {biggest}), {found} cycles, {} timeouts, {el:?}",
            r.sccs.len(),
            r.timed_out().len()
        );
    }
}

/// Records, per component, `cyclic_scc` and the plain Tarjan pass for every
/// pair of relation sets.
struct CompareShortcuts(std::sync::Mutex<Vec<String>>);
impl SearchHooks for CompareShortcuts {
    fn prepare(&self, scc: &SccView<'_>) -> SccPrep {
        for a in 1..32u8 {
            for b in 0..32u8 {
                let b = (b != 0).then_some(Rels(b));
                let fast = scc.cyclic_scc(Rels(a), b);
                let slow = scc.cyclic_scc_by_tarjan(Rels(a), b);
                if fast != slow {
                    self.0.lock().unwrap().push(format!(
                        "a={a} b={b:?} members={:?}: {fast:?} vs {slow:?}",
                        scc.txns()
                    ));
                }
            }
        }
        SccPrep::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The shortcuts (relations absent from a component, a subgraph that
    /// keeps every edge) give what Tarjan gives.
    #[test]
    fn cycle_exists_shortcuts_match_tarjan(g in arb_graph(7)) {
        let hooks = CompareShortcuts(Default::default());
        search(&g, &SearchPlan::new(&[]), &SearchLimits::default(), &hooks);
        let bad = hooks.0.into_inner().unwrap();
        prop_assert!(bad.is_empty(), "{:?}", bad);
    }
}
