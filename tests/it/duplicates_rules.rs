//! The rules that speed up duplicate-value checking, one by one: each is
//! shown to fire on a small history and to hold back where it must.

// The duplicate-value history generator shared by tests and benchmarks.
#[allow(dead_code)]
use crate::support::duplicates_gen;

use duplicates_gen::{generate, generate_with_truth, Db, Params};
use isolde::explain::proof::reason;
use isolde::history::read::read_history;
use isolde::history::{History, TxnId};
use isolde::model::Validity;
use isolde::solver::problem::{extract, KeyFacts};
use isolde::solver::replay::{self, Clock};
use isolde::solver::sessions::with_session_intervals;
use isolde::solver::snapshot::{replay_si, si_placement};
use isolde::solver::windows::Windows;
use isolde::solver::{check_duplicates, witness, Level, Limits};

fn hist(edn: &str) -> History {
    read_history(edn.as_bytes(), "test", None).expect("history parses")
}

/// A history from events in order: `("invoke" | "ok" | ..., process, mops)`.
fn events(evs: &[(&str, u32, &str)]) -> History {
    let mut s = String::new();
    for (i, (ty, p, mops)) in evs.iter().enumerate() {
        s.push_str(&format!(
            "{{:type :{ty}, :f :txn, :process {p}, :index {i}, :value {mops}}}\n"
        ));
    }
    hist(&s)
}

fn keys(h: &History) -> Vec<KeyFacts> {
    extract(h, 256).unwrap_or_else(|_| panic!("no contradiction"))
}

/// The transaction whose completion has `:index` `i`.
fn txn(h: &History, i: i64) -> TxnId {
    h.txns.iter().position(|t| t.index == i).expect("a txn") as TxnId
}

/// Writer `t`'s index among the writers of key `k`.
fn writer(kf: &KeyFacts, t: TxnId) -> u32 {
    kf.writers
        .iter()
        .position(|w| w.txn == t)
        .expect("a writer") as u32
}

/// The bin of key `k` that starts at `p`.
fn bin_at(kf: &KeyFacts, p: u32) -> u32 {
    kf.bins.iter().position(|b| b.start == p).expect("a bin") as u32
}

/// x ends as [1 2 1]: T1 and T4 both append 1, T3 appends 2, T2 reads
/// [1] and T5 the whole list. In real time T1, T2, T3, T4 follow each
/// other (so T1's 1 is the first and T4's the last), or T1 and T4 both run
/// alongside T2 and T3 (so either may be first). T4 completes at `:index`
/// 7 either way; T1 at 1 when they follow each other.
fn two_ones(overlapping: bool) -> History {
    let a1 = ("[[:append :x 1]]", "[[:append :x 1]]");
    let evs: Vec<(&str, u32, &str)> = if overlapping {
        vec![
            ("invoke", 1, a1.0),
            ("invoke", 4, a1.0),
            ("invoke", 2, "[[:r :x nil]]"),
            ("ok", 2, "[[:r :x [1]]]"),
            ("invoke", 3, "[[:append :x 2]]"),
            ("ok", 3, "[[:append :x 2]]"),
            ("ok", 1, a1.1),
            ("ok", 4, a1.1),
            ("invoke", 5, "[[:r :x nil]]"),
            ("ok", 5, "[[:r :x [1 2 1]]]"),
        ]
    } else {
        vec![
            ("invoke", 1, a1.0),
            ("ok", 1, a1.1),
            ("invoke", 2, "[[:r :x nil]]"),
            ("ok", 2, "[[:r :x [1]]]"),
            ("invoke", 3, "[[:append :x 2]]"),
            ("ok", 3, "[[:append :x 2]]"),
            ("invoke", 4, a1.0),
            ("ok", 4, a1.1),
            ("invoke", 5, "[[:r :x nil]]"),
            ("ok", 5, "[[:r :x [1 2 1]]]"),
        ]
    };
    events(&evs)
}

#[test]
fn real_time_windows_rule_out_places_real_time_forbids() {
    let h = two_ones(false);
    let ks = keys(&h);
    let x = &ks[0];
    let (first, last) = (bin_at(x, 0), bin_at(x, 2));
    let t1 = writer(x, txn(&h, 1));
    let t4 = writer(x, txn(&h, 7));
    // Both 1s could be either one, as far as the reads go.
    assert!(x.bins[first as usize].cands.contains(&t4));
    assert!(x.bins[last as usize].cands.contains(&t1));
    let w = Windows::realtime(&h, &ks, 8).expect("strictly serializable");
    assert_eq!(w.bins[0][t1 as usize], vec![first]);
    assert_eq!(w.bins[0][t4 as usize], vec![last]);
    assert!(!w.allows(&ks, 0, t4, 0) && w.allows(&ks, 0, t4, 2));
}

#[test]
fn real_time_windows_keep_the_places_of_concurrent_writers() {
    // T1 and T4 run alongside T2 and T3: either 1 may be the first.
    let h = two_ones(true);
    let ks = keys(&h);
    let x = &ks[0];
    let t4 = writer(x, txn(&h, 7));
    let w = Windows::realtime(&h, &ks, 8).expect("strictly serializable");
    let mut got = w.bins[0][t4 as usize].clone();
    got.sort_unstable();
    assert_eq!(got, vec![bin_at(x, 0), bin_at(x, 2)]);
    assert!(w.allows(&ks, 0, t4, 0) && w.allows(&ks, 0, t4, 2));
}

/// Where each block of `order` lands, replaying it: (key, writer, start),
/// the start being the list's length when the block comes after it.
fn places(h: &History, ks: &[KeyFacts], order: &[TxnId]) -> Vec<(u32, u32, u32)> {
    let mut len = vec![0u32; ks.len()];
    let mut out = Vec::new();
    for &t in order {
        for (k, kf) in ks.iter().enumerate() {
            if let Some(w) = kf.writers.iter().position(|w| w.txn == t) {
                let n = kf.list.len() as u32;
                out.push((k as u32, w as u32, len[k].min(n)));
                len[k] += kf.writers[w].block.len() as u32;
            }
        }
    }
    let _ = h;
    out
}

#[test]
fn real_time_windows_never_rule_out_where_the_database_put_a_block() {
    for seed in 0..40 {
        let p = Params {
            txns: 200 + 20 * seed as u32,
            sessions: 2 + seed as u32 % 12,
            keys: 20,
            ..Params::paper_right(0.5 + 0.0125 * seed as f64, Db::Serializable, seed)
        };
        let (edn, truth) = generate_with_truth(&p);
        let h = hist(&edn);
        let ks = keys(&h);
        let at: std::collections::HashMap<i64, TxnId> = h
            .txns
            .iter()
            .enumerate()
            .map(|(i, t)| (t.index, i as TxnId))
            .collect();
        let order: Vec<TxnId> = truth.iter().map(|&i| at[&(i as i64)]).collect();
        let w = Windows::realtime(&h, &ks, 8).expect("the database is strictly serializable");
        for (k, wr, p) in places(&h, &ks, &order) {
            assert!(
                w.allows(&ks, k, wr, p),
                "seed {seed}: key {k} writer {wr} at {p} ruled out"
            );
        }
    }
}

#[test]
fn relaxed_windows_forgive_a_stale_read_and_nothing_else() {
    // T3 completes after T2's append of 1, begins after it, and reads x
    // without it: serializable (T3 first), not strictly.
    let h = events(&[
        ("invoke", 1, "[[:append :x 1]]"),
        ("ok", 1, "[[:append :x 1]]"),
        ("invoke", 2, "[[:append :x 1]]"),
        ("ok", 2, "[[:append :x 1]]"),
        ("invoke", 3, "[[:r :x nil] [:append :y 1]]"),
        ("ok", 3, "[[:r :x [1]] [:append :y 1]]"),
        ("invoke", 4, "[[:r :x nil] [:r :y nil]]"),
        ("ok", 4, "[[:r :x [1 1]] [:r :y [1]]]"),
    ]);
    let ks = keys(&h);
    assert!(Windows::realtime(&h, &ks, 8).is_none());
    let w = Windows::relaxed(&h, &ks, 8, 8).expect("one stale read");
    // The serial order T1 T3 T2 T4 is within them: T2's 1 second.
    let order = [txn(&h, 1), txn(&h, 5), txn(&h, 3), txn(&h, 7)];
    witness::check_serial(&h, &order, false).unwrap();
    for (k, wr, p) in places(&h, &ks, &order) {
        assert!(w.allows(&ks, k, wr, p), "key {k} writer {wr} at {p}");
    }
    assert_eq!(
        check_duplicates(&h, Level::Serializable, &Limits::default()).valid,
        Validity::True
    );
    // Without a contradiction, relaxed windows are the real-time ones.
    let h = two_ones(false);
    let ks = keys(&h);
    let (a, b) = (
        Windows::realtime(&h, &ks, 8).unwrap(),
        Windows::relaxed(&h, &ks, 8, 8).unwrap(),
    );
    assert_eq!(a.bins, b.bins);
    assert_eq!((a.lo, a.hi), (b.lo, b.hi));
}

#[test]
fn the_replay_tries_other_guesses_of_when_transactions_took_effect() {
    // A's 1 on x is the one R saw (R also saw A's y), B's the second. The
    // middle of the intervals puts B first and gets stuck; invocation
    // order does not.
    let h = events(&[
        ("invoke", 1, "[[:append :x 1] [:append :y 7]]"),
        ("invoke", 2, "[[:append :x 1]]"),
        ("invoke", 3, "[[:r :x nil] [:r :y nil]]"),
        ("ok", 3, "[[:r :x [1]] [:r :y [7]]]"),
        ("ok", 2, "[[:append :x 1]]"),
        ("ok", 1, "[[:append :x 1] [:append :y 7]]"),
        ("invoke", 4, "[[:r :x nil]]"),
        ("ok", 4, "[[:r :x [1 1]]]"),
    ]);
    let ks = keys(&h);
    let mid = replay::replay(&h, &ks, false, Clock::Middle, None, 1);
    assert!(!mid.complete());
    let inv = replay::replay(&h, &ks, false, Clock::Invoke, None, 1);
    assert!(inv.complete());
    let order = replay::replay_serial(&h, &ks, false, None).expect("a witness");
    witness::check_serial(&h, &order, true).unwrap();
    // With a single writer of each value there is nothing to guess: every
    // clock replays the same order.
    let h = events(&[
        ("invoke", 1, "[[:append :x 1]]"),
        ("invoke", 2, "[[:append :x 2]]"),
        ("ok", 1, "[[:append :x 1]]"),
        ("ok", 2, "[[:append :x 2]]"),
        ("invoke", 3, "[[:r :x nil]]"),
        ("ok", 3, "[[:r :x [1 2]]]"),
    ]);
    let ks = keys(&h);
    for c in replay::CLOCKS {
        assert!(
            replay::replay(&h, &ks, false, c, None, 1).complete(),
            "{c:?}"
        );
    }
}

#[test]
fn snapshot_replay_commits_in_completion_order() {
    // Write skew with a repeated value: SI, and completion order works.
    let h = events(&[
        ("invoke", 1, "[[:r :x nil] [:append :y 1]]"),
        ("invoke", 2, "[[:r :y nil] [:append :x 1]]"),
        ("ok", 1, "[[:r :x []] [:append :y 1]]"),
        ("ok", 2, "[[:r :y []] [:append :x 1]]"),
        ("invoke", 3, "[[:append :x 1]]"),
        ("ok", 3, "[[:append :x 1]]"),
        ("invoke", 4, "[[:r :x nil]]"),
        ("ok", 4, "[[:r :x [1 1]]]"),
    ]);
    let ks = keys(&h);
    let (order, snaps) = replay_si(&h, &ks).expect("a commit order");
    witness::check_si(&h, &order, &snaps).unwrap();
    assert_eq!(snaps[..2], [0, 0], "both started from the empty state");
    // A lost update: both read [] and appended to x; first committer wins
    // forbids it, so no snapshot fits.
    let h = events(&[
        ("invoke", 1, "[[:r :x nil] [:append :x 1]]"),
        ("invoke", 2, "[[:r :x nil] [:append :x 1]]"),
        ("ok", 1, "[[:r :x []] [:append :x 1]]"),
        ("ok", 2, "[[:r :x []] [:append :x 1]]"),
    ]);
    let ks = keys(&h);
    assert!(replay_si(&h, &ks).is_none());
    assert_eq!(
        check_duplicates(&h, Level::SnapshotIsolation, &Limits::default()).valid,
        Validity::False
    );
}

#[test]
fn snapshot_replay_looks_ahead_past_a_late_acknowledgement() {
    // T1 and T2 overlap; T2 is acknowledged first, but T1's 1 comes first
    // in x, and T3 saw T1's 1 alone. In completion order T2's 2 would land
    // where the list has 1.
    let h = events(&[
        ("invoke", 1, "[[:append :x 1]]"),
        ("invoke", 2, "[[:append :x 2]]"),
        ("invoke", 3, "[[:r :x nil]]"),
        ("ok", 3, "[[:r :x [1]]]"),
        ("ok", 2, "[[:append :x 2]]"),
        ("ok", 1, "[[:append :x 1]]"),
        ("invoke", 4, "[[:append :x 1]]"),
        ("ok", 4, "[[:append :x 1]]"),
        ("invoke", 5, "[[:r :x nil]]"),
        ("ok", 5, "[[:r :x [1 2 1]]]"),
    ]);
    let ks = keys(&h);
    let (order, snaps) = replay_si(&h, &ks).expect("looking ahead finds T1");
    assert_eq!(
        order[0],
        txn(&h, 5),
        "T1 (completed at :index 5) commits first"
    );
    witness::check_si(&h, &order, &snaps).unwrap();
}

#[test]
fn snapshot_replay_orders_commits_by_what_the_snapshots_saw() {
    // W1 appends to x, W2 to y; W1 is acknowledged first. R missed W1's
    // append (it read x empty) but appended to y after W2's 5, so under
    // first committer wins its snapshot follows W2's commit: W2 committed
    // before W1, though acknowledged after it. Latest snapshots in
    // completion order fail; ordering the events by what they demand
    // works.
    let h = events(&[
        ("invoke", 1, "[[:append :x 1]]"),
        ("invoke", 2, "[[:append :y 5]]"),
        ("invoke", 3, "[[:r :x nil] [:append :y 5]]"),
        ("ok", 1, "[[:append :x 1]]"),
        ("ok", 2, "[[:append :y 5]]"),
        ("ok", 3, "[[:r :x []] [:append :y 5]]"),
        ("invoke", 4, "[[:r :x nil] [:r :y nil]]"),
        ("ok", 4, "[[:r :x [1]] [:r :y [5 5]]]"),
    ]);
    let ks = keys(&h);
    let (order, snaps) = replay_si(&h, &ks).expect("a commit order");
    witness::check_si(&h, &order, &snaps).unwrap();
    let at = |i| order.iter().position(|&t| t == txn(&h, i)).unwrap();
    assert!(at(4) < at(3), "W2 commits before W1");
    assert_eq!(
        check_duplicates(&h, Level::SnapshotIsolation, &Limits::default()).valid,
        Validity::True
    );
}

#[test]
fn snapshot_replay_gives_back_a_place_taken_by_an_equal_value() {
    // x ends as [0 5 0 0]: A appends 0, B appends 0 5 0, and B committed
    // first though A was acknowledged first. Taking A's 0 first puts it
    // where B's block begins, and then nothing can continue x: the replay
    // learns that B commits before A and starts over.
    let h = events(&[
        ("invoke", 1, "[[:append :x 0]]"),
        (
            "invoke",
            2,
            "[[:append :x 0] [:append :x 5] [:append :x 0]]",
        ),
        ("ok", 1, "[[:append :x 0]]"),
        ("ok", 2, "[[:append :x 0] [:append :x 5] [:append :x 0]]"),
        ("invoke", 3, "[[:r :x nil]]"),
        ("ok", 3, "[[:r :x [0 5 0 0]]]"),
    ]);
    let ks = keys(&h);
    let p = si_placement(&h, &ks);
    assert!(p.abandoned.is_empty(), "nothing committed out of place");
    assert_eq!(p.order[..2], [txn(&h, 3), txn(&h, 2)], "B, then A");
    let (order, snaps) = replay_si(&h, &ks).expect("a commit order");
    witness::check_si(&h, &order, &snaps).unwrap();
}

#[test]
fn snapshot_replay_explains_a_snapshot_isolated_database() {
    for seed in 0..10 {
        let p = Params {
            txns: 500,
            sessions: 20,
            keys: 50,
            ..Params::paper_right(1.0, Db::SnapshotIsolation, seed)
        };
        let h = hist(&generate(&p));
        let ks = keys(&h);
        let (order, snaps) = replay_si(&h, &ks).expect("completion order is the commit order");
        witness::check_si(&h, &order, &snaps).unwrap();
    }
}

/// `:invoke` lines dropped: completions only.
fn without_invocations(edn: &str) -> String {
    edn.lines()
        .filter(|l| !l.contains(":type :invoke"))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn session_intervals_start_each_transaction_after_its_process_last_completed() {
    // Completions only: A (process 1), B (process 2), C (process 1).
    let h = events(&[
        ("ok", 1, "[[:append :x 1]]"),
        ("ok", 2, "[[:append :x 2]]"),
        ("ok", 1, "[[:r :x [1 2]]]"),
    ]);
    assert!(!h.has_invocations);
    let s = with_session_intervals(&h).expect("no invocations: intervals from sessions");
    let (a, b, c) = (txn(&s, 0), txn(&s, 1), txn(&s, 2));
    let rt = isolde::graph::realtime_edges(&s);
    // A completed before its process invoked C; B, of another process,
    // completed after that and is concurrent with C.
    assert!(rt.contains(&(a, c)));
    assert!(!rt.contains(&(b, c)));
    // The first transaction of each process may have started at once.
    assert!(!rt.iter().any(|&(_, t)| t == a || t == b));
    // A history with invocations keeps its own intervals.
    assert!(with_session_intervals(&two_ones(false)).is_none());
}

#[test]
fn session_intervals_find_witnesses_without_invocations() {
    // From a serializable database, completions only: the windows of the
    // sessions' intervals rule out places, never the one the database
    // used, and the check finds a witness.
    let mut ruled_out = 0;
    for seed in 0..6 {
        let p = Params {
            txns: 1500,
            sessions: 30,
            keys: 60,
            ..Params::paper_right(1.0, Db::Serializable, seed)
        };
        let (edn, truth) = generate_with_truth(&p);
        let h = hist(&without_invocations(&edn));
        assert!(!h.has_invocations);
        let ks = keys(&h);
        let s = with_session_intervals(&h).expect("intervals");
        let at: std::collections::HashMap<i64, TxnId> = h
            .txns
            .iter()
            .enumerate()
            .map(|(i, t)| (t.index, i as TxnId))
            .collect();
        let order: Vec<TxnId> = truth.iter().map(|&i| at[&(i as i64)]).collect();
        let w = Windows::realtime(&s, &ks, 8).expect("the database kept session order");
        for (k, wr, p) in places(&h, &ks, &order) {
            assert!(
                w.allows(&ks, k, wr, p),
                "seed {seed}: key {k} writer {wr} at {p} ruled out"
            );
        }
        for (k, kf) in ks.iter().enumerate() {
            for (wi, _) in kf.writers.iter().enumerate() {
                let all = kf
                    .bins
                    .iter()
                    .filter(|b| b.cands.contains(&(wi as u32)))
                    .count();
                ruled_out += all - w.bins[k][wi].len();
            }
        }
        for level in [Level::Serializable, Level::SnapshotIsolation] {
            let v = check_duplicates(&h, level, &Limits::default());
            assert_eq!(
                v.valid,
                Validity::True,
                "seed {seed} {level:?}: {}",
                reason(&h, &v.reason, v.proof())
            );
        }
    }
    assert!(ruled_out > 0, "the sessions' windows ruled out nothing");
}

#[test]
fn session_intervals_never_constrain_a_history_without_invocations() {
    // Process 1 appended 1 to x, then read x empty: serializable only
    // against its session order (the read first). The sessions' guess
    // fails; the verdict does not depend on it.
    let h = events(&[
        ("ok", 1, "[[:append :x 1]]"),
        ("ok", 1, "[[:r :x []]]"),
        ("ok", 2, "[[:r :x [1]] [:append :x 1]]"),
        ("ok", 2, "[[:r :x [1 1]]]"),
    ]);
    let ks = keys(&h);
    let s = with_session_intervals(&h).expect("intervals");
    assert!(replay::replay_serial(&s, &ks, true, None).is_none());
    for level in [
        Level::Serializable,
        Level::StrictSerializable,
        Level::SnapshotIsolation,
    ] {
        let v = check_duplicates(&h, level, &Limits::default());
        assert_eq!(
            v.valid,
            Validity::True,
            "{level:?}: {}",
            reason(&h, &v.reason, v.proof())
        );
        witness::check_serial(&h, v.witness.as_ref().expect("a witness"), false)
            .or_else(|_| {
                witness::check_si(
                    &h,
                    v.witness.as_ref().expect("a witness"),
                    v.snapshots.as_ref().expect("snapshots"),
                )
            })
            .unwrap();
    }
}
