use super::*;
use crate::explain::anomaly::Rendered;
use crate::history::read::read_history;
use crate::history::Datum;
use serde_json::json;

fn history(edn: &str) -> History {
    read_history(edn.as_bytes(), "test", None).expect("test history parses")
}

/// Edges as (completion index, completion index, relation name), sorted.
fn edges(h: &History) -> Vec<(i64, i64, &'static str)> {
    let (inf, _) = infer(h, 2);
    let mut e: Vec<_> = inf
        .edges
        .iter()
        .map(|&(a, b, r)| (h.txns[a as usize].index, h.txns[b as usize].index, r.name()))
        .collect();
    e.sort();
    e.dedup();
    e
}

fn kinds(h: &History) -> Vec<&'static str> {
    let (inf, _) = infer(h, 2);
    let mut k: Vec<_> = inf.anomalies.iter().map(|a| a.kind.name()).collect();
    k.sort();
    k
}

#[test]
fn consecutive_appends_in_the_longest_read_give_ww_and_reads_give_wr() {
    let h = history(
        "{:index 0 :type :ok :process 0 :value [[:append :x 1]]}
         {:index 1 :type :ok :process 1 :value [[:append :x 2]]}
         {:index 2 :type :ok :process 2 :value [[:r :x [1 2]]]}",
    );
    assert_eq!(edges(&h), vec![(0, 1, "ww"), (1, 2, "wr")]);
    assert!(kinds(&h).is_empty());
}

#[test]
fn a_reader_of_the_previous_state_anti_depends_on_the_next_appender() {
    let h = history(
        "{:index 0 :type :ok :process 0 :value [[:append :x 1]]}
         {:index 1 :type :ok :process 1 :value [[:r :x [1]]]}
         {:index 2 :type :ok :process 2 :value [[:append :x 2]]}
         {:index 3 :type :ok :process 3 :value [[:r :x nil]]}
         {:index 4 :type :ok :process 4 :value [[:r :x [1 2]]]}",
    );
    let e = edges(&h);
    assert!(e.contains(&(1, 2, "rw")), "{e:?}");
    // An empty read precedes the first append.
    assert!(e.contains(&(3, 0, "rw")), "{e:?}");
    assert!(e.contains(&(0, 2, "ww")), "{e:?}");
}

#[test]
fn an_append_never_read_follows_every_observed_element() {
    let h = history(
        "{:index 0 :type :ok :process 0 :value [[:append :x 1] [:append :x 2]]}
         {:index 1 :type :ok :process 1 :value [[:r :x [1 2]]]}
         {:index 2 :type :ok :process 2 :value [[:append :x 3]]}",
    );
    let e = edges(&h);
    assert!(e.contains(&(0, 2, "ww")), "{e:?}");
    assert!(e.contains(&(1, 2, "rw")), "{e:?}");
}

#[test]
fn a_key_appended_once_needs_no_read_for_its_order() {
    let h = history(
        "{:index 0 :type :ok :process 0 :value [[:r :x nil]]}
         {:index 1 :type :ok :process 1 :value [[:append :x 1]]}",
    );
    assert_eq!(edges(&h), vec![(0, 1, "rw")]);
}

#[test]
fn g1a_is_a_read_of_a_failed_append() {
    let h = history(
        "{:index 0 :type :fail :process 0 :value [[:append :x 1]]}
         {:index 1 :type :ok :process 1 :value [[:r :x [1]]]}",
    );
    assert_eq!(kinds(&h), vec!["G1a"]);
    // A failed transaction is not in the graph.
    assert!(edges(&h).is_empty());
}

#[test]
fn g1b_is_a_read_ending_in_an_intermediate_append() {
    let h = history(
        "{:index 0 :type :ok :process 0 :value [[:append :x 1] [:append :x 2]]}
         {:index 1 :type :ok :process 1 :value [[:r :x [1]]]}",
    );
    assert_eq!(kinds(&h), vec!["G1b"]);
    // The writer reading its own intermediate state is fine.
    let own = history(
        "{:index 0 :type :ok :process 0 :value [[:append :x 1] [:r :x [1]] [:append :x 2]]}",
    );
    assert!(kinds(&own).is_empty());
}

#[test]
fn internal_is_a_read_that_contradicts_the_transactions_own_writes() {
    // The values read were appended (by a failed transaction, op 9), so
    // only internal consistency is at stake.
    let elsewhere =
        "{:index 9 :type :fail :process 1 :value [[:append :x 2] [:append :x 5] [:append :x 6]]}";
    let h = history(&format!(
        "{{:index 0 :type :ok :process 0 :value [[:append :x 1] [:r :x [2]]]}}\n{elsewhere}"
    ));
    assert!(kinds(&h).contains(&"internal"), "{:?}", kinds(&h));
    let (inf, _) = infer(&h, 2);
    let internal = inf
        .anomalies
        .iter()
        .find(|a| a.kind.name() == "internal")
        .unwrap();
    assert_eq!(internal.detail(&h)["expected"], json!(["...", 1]));
    let ok = history(&format!(
        "{{:index 0 :type :ok :process 0 :value [[:r :x [5]] [:append :x 1] [:r :x [5 1]]]}}\n{elsewhere}"
    ));
    assert!(!kinds(&ok).contains(&"internal"), "{:?}", kinds(&ok));
    let changed = history(&format!(
        "{{:index 0 :type :ok :process 0 :value [[:r :x [5]] [:r :x [5 6]]]}}\n{elsewhere}"
    ));
    assert!(kinds(&changed).contains(&"internal"));
}

#[test]
fn garbage_read_is_an_element_nobody_appended() {
    // 9 was never appended; 3 only by a failed transaction (G1a); the
    // empty read is the initial state.
    let h = history(
        "{:index 0 :type :ok :process 0 :value [[:append :x 1]]}\n\
         {:index 1 :type :fail :process 1 :value [[:append :x 3]]}\n\
         {:index 2 :type :ok :process 2 :value [[:r :x [1 9]] [:r :y []]]}\n\
         {:index 3 :type :ok :process 3 :value [[:r :x [1 9 3]]]}",
    );
    let (inf, _) = infer(&h, 2);
    let garbage: Vec<String> = inf
        .anomalies
        .iter()
        .filter(|a| a.kind.name() == "garbage-read")
        .map(|a| a.explanation(&h))
        .collect();
    assert_eq!(garbage.len(), 2, "{garbage:?}");
    assert!(garbage[0]
        .contains("[:r :x [1 9]] and saw 9, which no transaction in the history appended"));
    assert!(kinds(&h).contains(&"G1a"));
    // A key appended once decides its order without reads: still seen.
    let once = history(
        "{:index 0 :type :ok :process 0 :value [[:append :x 1]]}\n\
         {:index 1 :type :ok :process 1 :value [[:r :x [7]]]}",
    );
    assert!(kinds(&once).contains(&"garbage-read"));
}

#[test]
fn future_read_sees_an_element_appended_later_by_itself() {
    let h = history("{:index 0 :type :ok :process 0 :value [[:r :x [1]] [:append :x 1]]}");
    assert!(kinds(&h).contains(&"future-read"));
}

#[test]
fn duplicate_elements_and_incompatible_orders_are_reported() {
    let dup = history(
        "{:index 0 :type :ok :process 0 :value [[:append :x 1]]}
         {:index 1 :type :ok :process 1 :value [[:append :y 3]]}
         {:index 2 :type :ok :process 2 :value [[:r :x [1 1]]]}",
    );
    assert!(kinds(&dup).contains(&"duplicate-elements"));
    let inc = history(
        "{:index 0 :type :ok :process 0 :value [[:append :x 1]]}
         {:index 1 :type :ok :process 1 :value [[:append :x 2]]}
         {:index 2 :type :ok :process 2 :value [[:r :x [1 2]]]}
         {:index 3 :type :ok :process 3 :value [[:r :x [2 1]]]}",
    );
    let (inf, _) = infer(&inc, 2);
    let a = inf
        .anomalies
        .iter()
        .find(|a| a.kind.name() == "incompatible-order")
        .expect("reported");
    assert_eq!(a.detail(&inc)["values"], json!([[1, 2], [2, 1]]));
}

#[test]
fn dirty_update_is_a_committed_append_on_a_failed_one() {
    let h = history(
        "{:index 0 :type :fail :process 0 :value [[:append :x 1]]}
         {:index 1 :type :ok :process 1 :value [[:append :x 2]]}
         {:index 2 :type :ok :process 2 :value [[:r :x [1 2]]]}",
    );
    assert!(kinds(&h).contains(&"dirty-update"));
}

#[test]
fn lost_update_is_two_committed_appends_after_reading_the_same_state() {
    let h = history(
        "{:index 0 :type :ok :process 0 :value [[:r :x [1]] [:append :x 2]]}
         {:index 1 :type :ok :process 1 :value [[:r :x [1]] [:append :x 3]]}
         {:index 2 :type :ok :process 2 :value [[:append :x 1]]}",
    );
    assert_eq!(kinds(&h), vec!["lost-update"]);
}

#[test]
fn each_edge_is_explained_with_its_key_and_values() {
    let h = history(
        "{:index 0 :type :ok :process 0 :value [[:append :x 1]]}
         {:index 1 :type :ok :process 1 :value [[:r :x [1]] [:append :y 5]]}
         {:index 2 :type :ok :process 2 :value [[:append :x 2] [:r :y nil]]}
         {:index 3 :type :ok :process 3 :value [[:r :x [1 2]]]}",
    );
    let (_, la) = infer(&h, 2);
    let k = |name: &str| h.keys.get(&Datum::Keyword(name.into())).unwrap();
    let v = |x: i64| h.values.get(&Datum::Int(x)).unwrap();
    let step = |key, a_mop, b_mop, fact| DataStep {
        key,
        a_mop,
        b_mop,
        fact,
    };
    assert_eq!(
        la.explain(&h, 0, 1, Rels::WR | Rels::RW),
        Some(step(
            k("x"),
            Some(0),
            Some(0),
            Fact::ObservedAppend { value: v(1) }
        ))
    );
    assert_eq!(
        la.explain(&h, 1, 2, Rels::RW),
        Some(step(
            k("x"),
            Some(0),
            Some(0),
            Fact::MissedAppend {
                prev: Some(v(1)),
                next: v(2)
            }
        ))
    );
    // T2 read y empty; T1 appended y's first element.
    assert_eq!(
        la.explain(&h, 2, 1, Rels::RW),
        Some(step(
            k("y"),
            Some(1),
            Some(1),
            Fact::MissedAppend {
                prev: None,
                next: v(5)
            }
        ))
    );
    assert_eq!(
        la.explain(&h, 0, 2, Rels::WW),
        Some(step(
            k("x"),
            Some(0),
            Some(0),
            Fact::Appended {
                prev: v(1),
                next: v(2)
            }
        ))
    );
    assert!(la
        .explain(&h, 3, 0, Rels::WW | Rels::WR | Rels::RW)
        .is_none());
}

/// Asserts that the per-key inference and the reference (hash-map)
/// inference agree on `h`: the same edges (as a multiset), the same
/// anomalies of each kind in the same order, and the same explanation of
/// every edge (of every pair of transactions when `all_pairs`).
fn agrees_with_reference(h: &History, all_pairs: bool) {
    let (new, la) = infer(h, 2);
    let (old, lb) = reference::infer(h);
    let sorted = |mut e: Vec<(TxnId, TxnId, Rels)>| {
        e.sort();
        e
    };
    let pairs: Vec<(TxnId, TxnId)> = if all_pairs {
        let n = h.txns.len() as TxnId;
        (0..n).flat_map(|a| (0..n).map(move |b| (a, b))).collect()
    } else {
        old.edges.iter().map(|&(a, b, _)| (a, b)).collect()
    };
    assert_eq!(sorted(new.edges), sorted(old.edges), "edges");
    let mut by_kind: std::collections::BTreeMap<&str, Vec<(String, String)>> = Default::default();
    for a in &new.anomalies {
        by_kind
            .entry(a.kind.name())
            .or_default()
            .push((a.detail(h).to_string(), a.explanation(h)));
    }
    let mut by_kind_old: std::collections::BTreeMap<&str, Vec<(String, String)>> =
        Default::default();
    for a in &old.anomalies {
        by_kind_old
            .entry(a.kind)
            .or_default()
            .push((a.detail.to_string(), a.explanation.clone()));
    }
    assert_eq!(by_kind, by_kind_old, "anomalies");
    for (a, b) in pairs {
        for r in [Rels::WW, Rels::WR, Rels::RW, Rels::WW | Rels::WR | Rels::RW] {
            assert_eq!(
                la.explain(h, a, b, r),
                lb.explain(h, a, b, r),
                "explain {a} -> {b} {r:?}"
            );
        }
    }
}

/// Inference on several threads gives exactly what one thread gives:
/// edges and anomalies in the same order, the same indices.
fn same_on_any_thread_count(h: &History) {
    let (one, la) = infer_with(h, 1);
    for threads in [2, 3, 8] {
        let (many, lb) = infer_with(h, threads);
        assert_eq!(many.edges, one.edges, "{threads} threads");
        let show = |xs: &[Anomaly]| -> Vec<(&str, String, String)> {
            xs.iter()
                .map(|a| (a.kind.name(), a.detail(h).to_string(), a.explanation(h)))
                .collect()
        };
        assert_eq!(
            show(&many.anomalies),
            show(&one.anomalies),
            "{threads} threads"
        );
        assert_eq!(
            (&lb.prev, &lb.writer),
            (&la.prev, &la.writer),
            "{threads} threads"
        );
    }
}

#[test]
fn keys_split_into_balanced_ranges() {
    let h = history(
        "{:index 0 :type :ok :process 0 :value [[:append 0 1] [:append 1 1] [:append 2 1] [:append 3 1]]}
         {:index 1 :type :ok :process 0 :value [[:r 0 [1]] [:r 1 [1]] [:r 2 [1]] [:r 3 [1]]]}",
    );
    let k = KeyIndex::new(&h);
    assert_eq!(k.split(1), vec![0..4]);
    assert_eq!(k.split(2), vec![0..2, 2..4]);
    assert_eq!(k.split(4), vec![0..1, 1..2, 2..3, 3..4]);
    assert_eq!(k.split(9).len(), 4);
    let empty = KeyIndex::new(&History::default());
    assert_eq!(empty.split(3), vec![0..0]);
    same_on_any_thread_count(&h);
}

#[test]
fn agrees_with_the_reference_on_the_conformance_histories() {
    let files = crate::corpus::files(&crate::corpus::FOLDERS[..2], &[".edn"]);
    for f in files {
        let Ok(h) = crate::history::read::read_history_file(&f, None) else {
            continue;
        };
        agrees_with_reference(&h, h.txns.len() <= 60);
        same_on_any_thread_count(&h);
    }
}

/// A small random list-append history as EDN: few keys and values, so
/// that reads collide, disagree, repeat elements and see failed or
/// intermediate appends; every outcome; some invocations.
fn arb_history_edn() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let mop = prop_oneof![
        (0u8..3, 0u8..6).prop_map(|(k, v)| format!("[:append {k} {v}]")),
        (0u8..3).prop_map(|k| format!("[:r {k} nil]")),
        (0u8..3, proptest::collection::vec(0u8..6, 0..5)).prop_map(|(k, vs)| {
            let vs: Vec<String> = vs.iter().map(u8::to_string).collect();
            format!("[:r {k} [{}]]", vs.join(" "))
        }),
    ];
    let txn = (
        0u8..3,
        0u8..3,
        any::<bool>(),
        proptest::collection::vec(mop, 1..5),
    );
    proptest::collection::vec(txn, 1..10).prop_map(|txns| {
        let mut s = String::new();
        for (i, (p, outcome, invoked, mops)) in txns.into_iter().enumerate() {
            let ty = ["ok", "fail", "info"][outcome as usize];
            let value = mops.join(" ");
            if invoked {
                s.push_str(&format!(
                    "{{:process {i} :type :invoke :value [{value}]}}\n"
                ));
            }
            let p = if invoked { i as u8 } else { p + 100 };
            let value = if ty == "info" && i % 2 == 0 {
                "nil".to_string()
            } else {
                format!("[{value}]")
            };
            s.push_str(&format!("{{:process {p} :type :{ty} :value {value}}}\n"));
        }
        s
    })
}

/// A proptest runner with a fixed seed: the same histories every run.
fn deterministic_runner() -> proptest::test_runner::TestRunner {
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    TestRunner::new_with_rng(
        Config::default(),
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    )
}

#[test]
fn agrees_with_the_reference_on_random_histories() {
    use proptest::strategy::{Strategy, ValueTree};
    let mut runner = deterministic_runner();
    let strategy = arb_history_edn();
    let mut kinds: std::collections::BTreeSet<&str> = Default::default();
    for _ in 0..4000 {
        let edn = strategy.new_tree(&mut runner).expect("a history").current();
        let h = history(&edn);
        agrees_with_reference(&h, true);
        same_on_any_thread_count(&h);
        kinds.extend(infer(&h, 2).0.anomalies.iter().map(|a| a.kind.name()));
    }
    // The histories exercise every rule.
    let all = [
        "G1a",
        "G1b",
        "dirty-update",
        "duplicate-elements",
        "future-read",
        "garbage-read",
        "incompatible-order",
        "internal",
        "lost-update",
    ];
    assert_eq!(kinds.into_iter().collect::<Vec<_>>(), all);
}

/// The in-place fast pass says "consistent" exactly when the full
/// internal and future-read checks find nothing.
#[test]
fn fast_self_consistency_pass_matches_the_full_checks() {
    use proptest::strategy::{Strategy, ValueTree};
    let mut runner = deterministic_runner();
    let strategy = arb_history_edn();
    let (mut clean, mut flagged) = (0, 0);
    for _ in 0..3000 {
        let edn = strategy.new_tree(&mut runner).expect("a history").current();
        let h = history(&edn);
        for t in 0..h.txns.len() as TxnId {
            let fast = small_and_self_consistent(&h, h.mops(t));
            let full = internal(&h, t).is_none() && future_read(&h, t).is_none();
            assert_eq!(fast, full, "txn {t} of\n{edn}");
            if fast {
                clean += 1;
            } else {
                flagged += 1;
            }
        }
    }
    assert!(
        clean > 1000 && flagged > 100,
        "{clean} clean, {flagged} flagged"
    );
}
