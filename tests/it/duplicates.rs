//! Duplicate-value list-append checking: the paper's examples (Cai et al.,
//! SCCP 2026, Fig. 1) and one test per rule of the decision procedure.

// The duplicate-value history generator shared by tests and benchmarks.
#[allow(dead_code)]
use isolde::check::{check_history, render_report, CheckOptions};
use isolde::explain::proof::{reason, render};
use isolde::history::read::read_history;
use isolde::history::History;
use isolde::model::Validity;
use isolde::solver::{
    check_duplicates, check_levels, has_duplicate_appends, witness, DupVerdict, Level, Limits,
};

/// A verdict's reason, in words.
fn why(h: &History, v: &DupVerdict) -> String {
    reason(h, &v.reason, v.proof())
}

fn hist(edn: &str) -> History {
    read_history(edn.as_bytes(), "test", None).expect("history parses")
}

/// Completed transactions, one per line: `(process type [mops])`, each one
/// invoked right before it completes (so they are ordered in real time).
fn serial(txns: &[(&str, &str)]) -> History {
    let mut s = String::new();
    for (i, (ty, mops)) in txns.iter().enumerate() {
        s.push_str(&format!(
            "{{:type :invoke, :f :txn, :process {i}, :index {}, :value {mops}}}\n",
            2 * i
        ));
        s.push_str(&format!(
            "{{:type :{ty}, :f :txn, :process {i}, :index {}, :value {mops}}}\n",
            2 * i + 1
        ));
    }
    hist(&s)
}

/// Transactions all invoked before any completes (no real-time order).
fn concurrent(txns: &[(&str, &str)]) -> History {
    let mut s = String::new();
    for (i, (_, mops)) in txns.iter().enumerate() {
        s.push_str(&format!(
            "{{:type :invoke, :f :txn, :process {i}, :index {i}, :value {mops}}}\n"
        ));
    }
    for (i, (ty, mops)) in txns.iter().enumerate() {
        s.push_str(&format!(
            "{{:type :{ty}, :f :txn, :process {i}, :index {}, :value {mops}}}\n",
            txns.len() + i
        ));
    }
    hist(&s)
}

fn lim() -> Limits {
    Limits {
        time_ms: 5_000,
        ..Limits::default()
    }
}

fn verdict(h: &History, l: Level) -> Validity {
    check_duplicates(h, l, &lim()).valid
}

#[test]
fn fig_1b_is_serializable() {
    // T1 appends 1, T2 appends 2 then 1, T3 reads [1 2 1].
    let h = concurrent(&[
        ("ok", "[[:append :x 1]]"),
        ("ok", "[[:append :x 2] [:append :x 1]]"),
        ("ok", "[[:r :x [1 2 1]]]"),
    ]);
    assert!(has_duplicate_appends(&h));
    let v = check_duplicates(&h, Level::Serializable, &lim());
    assert_eq!(v.valid, Validity::True, "{}", why(&h, &v));
    let w = v.witness.expect("a valid verdict carries a witness");
    let idx: Vec<i64> = w.iter().map(|&t| h.txns[t as usize].index).collect();
    assert_eq!(idx, vec![3, 4, 5], "T1, T2, then T3");
    witness::check_serial(&h, &w, false).unwrap();
}

#[test]
fn fig_1d_is_not_serializable() {
    // T1 and T2 each append 1 twice; T3 reads [1 1 1]: atomicity allows
    // zero, two or four 1s, never three.
    let h = concurrent(&[
        ("ok", "[[:append :x 1] [:append :x 1]]"),
        ("ok", "[[:append :x 1] [:append :x 1]]"),
        ("ok", "[[:r :x [1 1 1]]]"),
    ]);
    for l in Level::ALL {
        let v = check_duplicates(&h, l, &lim());
        assert_eq!(v.valid, Validity::False, "{l:?}");
        let a = v.anomaly.expect("an invalid verdict names its anomaly");
        assert_eq!(a.kind.name(), "duplicate-appends-unproducible-read");
        let text = render(&h, &a.proof);
        assert!(text.contains("[1 1 1]"), "{text}");
        assert!(text.contains("appended [1 1]"), "{text}");
    }
}

#[test]
fn unique_histories_are_decided_without_search() {
    let h = serial(&[
        ("ok", "[[:append :x 1] [:append :y 1]]"),
        ("ok", "[[:r :x [1]] [:append :x 2]]"),
        ("ok", "[[:r :x [1 2]] [:r :y [1]]]"),
    ]);
    assert!(!has_duplicate_appends(&h));
    let v = check_duplicates(&h, Level::StrictSerializable, &lim());
    assert_eq!(v.valid, Validity::True, "{}", why(&h, &v));
    assert_eq!(v.stats.open_vars, 0);
}

#[test]
fn a_cycle_forced_by_unique_values_is_g2() {
    // Write skew: each reads the other's key empty and appends its own.
    let h = concurrent(&[
        ("ok", "[[:r :x []] [:append :y 1]]"),
        ("ok", "[[:r :y []] [:append :x 1]]"),
    ]);
    let v = check_duplicates(&h, Level::Serializable, &lim());
    assert_eq!(v.valid, Validity::False);
    assert_eq!(v.anomaly.as_ref().unwrap().kind.name(), "G2-item");
    // Snapshot isolation allows write skew.
    assert_eq!(verdict(&h, Level::SnapshotIsolation), Validity::True);
}

#[test]
fn duplicate_values_hide_a_lost_update() {
    // T1 and T2 both read [1] and append 2: whichever went second should
    // have seen the other's 2. Elle cannot tell the two 2s apart.
    let h = concurrent(&[
        ("ok", "[[:append :x 1]]"),
        ("ok", "[[:r :x [1]] [:append :x 2]]"),
        ("ok", "[[:r :x [1]] [:append :x 2]]"),
        ("ok", "[[:r :x [1 2]]]"),
    ]);
    for l in Level::ALL {
        assert_eq!(verdict(&h, l), Validity::False, "{l:?}");
    }
}

#[test]
fn a_read_that_cuts_through_a_block_is_a_contradiction() {
    let h = concurrent(&[
        ("ok", "[[:append :x 1] [:append :x 2]]"),
        ("ok", "[[:append :x 1]]"),
        ("ok", "[[:r :x [1]]]"),
        ("ok", "[[:r :x [1 1 2]]]"),
    ]);
    // [1] must be T2's block, then T1's [1 2]: valid.
    assert_eq!(verdict(&h, Level::Serializable), Validity::True);
    let h = concurrent(&[
        ("ok", "[[:append :x 1] [:append :x 2]]"),
        ("ok", "[[:append :x 3]]"),
        ("ok", "[[:r :x [1]]]"),
        ("ok", "[[:r :x [1 2 3]]]"),
    ]);
    assert_eq!(verdict(&h, Level::Serializable), Validity::False);
}

#[test]
fn failed_appends_are_never_visible() {
    let h = concurrent(&[
        ("ok", "[[:append :x 1]]"),
        ("fail", "[[:append :x 1]]"),
        ("ok", "[[:r :x [1 1]]]"),
    ]);
    let v = check_duplicates(&h, Level::Serializable, &lim());
    assert_eq!(v.valid, Validity::False);
    assert_eq!(v.anomaly.unwrap().kind.name(), "G1a");
}

#[test]
fn info_appends_may_or_may_not_have_committed() {
    let seen = concurrent(&[
        ("ok", "[[:append :x 1]]"),
        ("info", "[[:append :x 1]]"),
        ("ok", "[[:r :x [1 1]]]"),
    ]);
    let v = check_duplicates(&seen, Level::Serializable, &lim());
    assert_eq!(v.valid, Validity::True);
    assert_eq!(
        v.witness.unwrap().len(),
        3,
        "the info transaction committed"
    );
    let unseen = concurrent(&[
        ("ok", "[[:append :x 1]]"),
        ("info", "[[:append :x 1] [:append :y 5]]"),
        ("ok", "[[:r :x [1]] [:r :y []]]"),
    ]);
    let v = check_duplicates(&unseen, Level::Serializable, &lim());
    assert_eq!(v.valid, Validity::True);
    assert_eq!(
        v.witness.unwrap().len(),
        2,
        "the info transaction did not commit"
    );
}

#[test]
fn strict_serializability_adds_real_time() {
    // T2 completes before T3 begins, yet T3's read misses T2's append.
    let h = serial(&[
        ("ok", "[[:append :x 1]]"),
        ("ok", "[[:append :x 1]]"),
        ("ok", "[[:r :x [1]]]"),
    ]);
    assert_eq!(verdict(&h, Level::Serializable), Validity::True);
    let v = check_duplicates(&h, Level::StrictSerializable, &lim());
    assert_eq!(v.valid, Validity::False);
    assert!(render(&h, &v.anomaly.unwrap().proof).contains("completed before"));
}

#[test]
fn snapshot_isolation_forbids_concurrent_appends_to_one_key() {
    // Both read y and z empty and append x; each misses the other's y or z
    // append, so they overlap, but they both appended x: not SI.
    let h = concurrent(&[
        ("ok", "[[:r :y []] [:append :z 1] [:append :x 1]]"),
        ("ok", "[[:r :z []] [:append :y 1] [:append :x 1]]"),
    ]);
    assert_eq!(verdict(&h, Level::SnapshotIsolation), Validity::False);
    // Without the x appends it is plain write skew: SI.
    let h = concurrent(&[
        ("ok", "[[:r :y []] [:append :z 1]]"),
        ("ok", "[[:r :z []] [:append :y 1]]"),
    ]);
    assert_eq!(verdict(&h, Level::SnapshotIsolation), Validity::True);
}

#[test]
fn internal_reads_must_include_own_appends() {
    let h = concurrent(&[("ok", "[[:append :x 1] [:r :x [2]]]")]);
    let v = check_duplicates(&h, Level::Serializable, &lim());
    assert_eq!(v.valid, Validity::False);
    assert_eq!(v.anomaly.unwrap().kind.name(), "internal");
}

#[test]
fn reads_that_disagree_are_incompatible() {
    let h = concurrent(&[
        ("ok", "[[:append :x 1]]"),
        ("ok", "[[:append :x 2]]"),
        ("ok", "[[:r :x [1 2]]]"),
        ("ok", "[[:r :x [2 1]]]"),
    ]);
    let v = check_duplicates(&h, Level::Serializable, &lim());
    assert_eq!(v.anomaly.unwrap().kind.name(), "incompatible-order");
}

#[test]
fn a_transaction_that_read_then_appended_starts_right_after_its_read() {
    // T2 read [1] then appended 1, so its 1 is second; T3 read [1 1] and
    // appended 2; T4 reads [1 1 2]. T1 or T2 could each be first, but T2
    // read [1], so T1 is first.
    let h = concurrent(&[
        ("ok", "[[:append :x 1]]"),
        ("ok", "[[:r :x [1]] [:append :x 1]]"),
        ("ok", "[[:r :x [1 1]] [:append :x 2]]"),
        ("ok", "[[:r :x [1 1 2]]]"),
    ]);
    let v = check_duplicates(&h, Level::Serializable, &lim());
    assert_eq!(v.valid, Validity::True, "{}", why(&h, &v));
    // Two transactions that both read [1] and appended cannot both be seen.
    let h = concurrent(&[
        ("ok", "[[:append :x 1]]"),
        ("ok", "[[:r :x [1]] [:append :x 1]]"),
        ("ok", "[[:r :x [1]] [:append :x 1]]"),
        ("ok", "[[:r :x [1 1 1]]]"),
    ]);
    for l in Level::ALL {
        assert_eq!(verdict(&h, l), Validity::False, "{l:?}");
    }
}

#[test]
fn mixed_blocks_with_several_placements_are_searched() {
    // [1 2 1 2] is [1 2][1][2] or [1][2 1][2]; then [2 1] is T2's [2 1] or
    // T4's [2] and T3's [1]: only the first spelling leaves enough.
    let h = concurrent(&[
        ("ok", "[[:append :x 1] [:append :x 2]]"),
        ("ok", "[[:append :x 2] [:append :x 1]]"),
        ("ok", "[[:append :x 1]]"),
        ("ok", "[[:append :x 2]]"),
        ("ok", "[[:r :x [1 2 1 2]]]"),
        ("ok", "[[:r :x [1 2 1 2 2 1]]]"),
    ]);
    let v = check_duplicates(&h, Level::Serializable, &lim());
    assert_eq!(v.valid, Validity::True, "{}", why(&h, &v));
    // Four 1s and four 2s, but only three of each were appended.
    let h = concurrent(&[
        ("ok", "[[:append :x 1] [:append :x 2]]"),
        ("ok", "[[:append :x 2] [:append :x 1]]"),
        ("ok", "[[:append :x 1]]"),
        ("ok", "[[:append :x 2]]"),
        ("ok", "[[:r :x [1 2 1 2]]]"),
        ("ok", "[[:r :x [1 2 1 2 2 1 1 2]]]"),
    ]);
    assert_eq!(verdict(&h, Level::Serializable), Validity::False);
}

#[test]
fn levels_share_what_they_imply() {
    let h = concurrent(&[
        ("ok", "[[:r :x []] [:append :y 1]]"),
        ("ok", "[[:r :y []] [:append :x 1]]"),
    ]);
    let vs = check_levels(&h, &Level::ALL, &lim());
    let by = |l: Level| vs.iter().find(|v| v.level == l).unwrap().valid;
    assert_eq!(by(Level::SnapshotIsolation), Validity::True);
    assert_eq!(by(Level::Serializable), Validity::False);
    assert_eq!(by(Level::StrictSerializable), Validity::False);
    // The same write skew beside a key whose value repeats, so that the
    // front door routes it to the duplicate-value solver.
    let h = concurrent(&[
        ("ok", "[[:r :x []] [:append :y 1]]"),
        ("ok", "[[:r :y []] [:append :x 1]]"),
        ("ok", "[[:append :z 1]]"),
        ("ok", "[[:append :z 1]]"),
    ]);
    assert!(has_duplicate_appends(&h));
    // The front door judges the levels once and keeps the witness typed.
    let options = CheckOptions {
        models: Some(Level::ALL.iter().map(|l| l.name().to_string()).collect()),
        witness: true,
        ..CheckOptions::default()
    };
    let r = check_history(&h, &options);
    let j = r.to_json(&h);
    assert_eq!(j["valid?"], serde_json::json!(false));
    // Write skew rules out repeatable-read (no G2-item) and what is above
    // it, as for unique values (issue 18).
    assert_eq!(j["not"], serde_json::json!(["repeatable-read"]));
    for m in ["serializable", "strong-serializable"] {
        assert!(
            j["also-not"].as_array().unwrap().iter().any(|x| x == m),
            "{m}: {}",
            j["also-not"]
        );
    }
    assert!(!j["also-not"].to_string().contains("\"snapshot-isolation\""));
    assert_eq!(j["anomaly-types"], serde_json::json!(["G2-item"]));
    let w = r.witness.as_ref().expect("witness asked for");
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].model, "snapshot-isolation");
    assert_eq!(w[0].order.len(), 4);
    assert_eq!(w[0].snapshots.as_ref().map(Vec::len), Some(4));
    assert!(j["witness"]["snapshot-isolation"]["order"].is_array());
    // The G2-item finding names both transactions, for the report's picture.
    let f = &r.anomalies["G2-item"][0];
    let mut txns = f.txns.clone();
    txns.sort_unstable();
    assert_eq!(txns, vec![0, 1]);
    let t = render_report(&h, &r, "h");
    assert!(
        t.contains("Not repeatable-read (nor serializable, strong-serializable"),
        "{t}"
    );
    assert!(
        t.contains("Witness for snapshot-isolation: op indices in commit order ["),
        "{t}"
    );
}

#[test]
fn a_register_history_is_not_decided() {
    let h = concurrent(&[("ok", "[[:w :x 1]]")]);
    let v = check_duplicates(&h, Level::Serializable, &lim());
    assert_eq!(v.valid, Validity::Unknown);
    assert!(why(&h, &v).contains("register"));
}

#[test]
fn a_limit_gives_unknown_not_a_guess() {
    // Invalid, so no replay settles it; the solver needs more than two
    // variables.
    let h = concurrent(&[
        ("ok", "[[:append :x 1]]"),
        ("ok", "[[:r :x [1]] [:append :x 2]]"),
        ("ok", "[[:r :x [1]] [:append :x 2]]"),
        ("ok", "[[:r :x [1 2]]]"),
    ]);
    let v = check_duplicates(
        &h,
        Level::Serializable,
        &Limits {
            max_vars: 2,
            ..lim()
        },
    );
    assert_eq!(v.valid, Validity::Unknown);
    assert!(why(&h, &v).contains("limit"), "{}", why(&h, &v));
}

#[test]
fn witnesses_are_replayed_independently() {
    let h = concurrent(&[
        ("ok", "[[:append :x 1]]"),
        ("ok", "[[:r :x [1]] [:append :x 1]]"),
        ("fail", "[[:append :x 3]]"),
    ]);
    witness::check_serial(&h, &[0, 1], false).unwrap();
    assert!(
        witness::check_serial(&h, &[1, 0], false).is_err(),
        "reads must match"
    );
    assert!(
        witness::check_serial(&h, &[0], false).is_err(),
        "every ok transaction"
    );
    assert!(
        witness::check_serial(&h, &[0, 1, 2], false).is_err(),
        "no failed one"
    );
    // SI: T2 starting before T1 commits would read [].
    witness::check_si(&h, &[0, 1], &[0, 1]).unwrap();
    assert!(witness::check_si(&h, &[0, 1], &[0, 0]).is_err());
    // Two appenders of :x may not overlap (first committer wins).
    let h = concurrent(&[("ok", "[[:append :x 1]]"), ("ok", "[[:append :x 2]]")]);
    witness::check_si(&h, &[0, 1], &[0, 1]).unwrap();
    assert!(witness::check_si(&h, &[0, 1], &[0, 0]).is_err());
    // Strict: a transaction may not come before one that completed before it began.
    let h = serial(&[("ok", "[[:append :x 1]]"), ("ok", "[[:append :x 2]]")]);
    witness::check_serial(&h, &[0, 1], true).unwrap();
    assert!(witness::check_serial(&h, &[1, 0], true).is_err());
    witness::check_serial(&h, &[1, 0], false).unwrap();
    // An `info` transaction invoked after T0 completed may not come before
    // it either, whether it committed or not.
    let h = serial(&[("ok", "[[:append :x 1]]"), ("info", "[[:append :y 2]]")]);
    witness::check_serial(&h, &[0, 1], true).unwrap();
    let e = witness::check_serial(&h, &[1, 0], true).unwrap_err();
    assert_eq!(
        isolde::explain::proof::replay(&h, &e),
        "T3 is placed before T1, which completed before it began"
    );
    // Keys and values are named as the history writes them.
    let h = serial(&[("ok", "[[:append :x 1]]"), ("ok", "[[:r :x [1 1]]]")]);
    let e = witness::check_serial(&h, &[0, 1], false).unwrap_err();
    assert_eq!(
        isolde::explain::proof::replay(&h, &e),
        "T3 would read :x as [1]"
    );
}

#[test]
fn generated_histories_are_deterministic_and_replay_their_truth() {
    use crate::support::duplicates_gen::{generate, generate_with_truth, Db, Params};
    let p = Params {
        txns: 300,
        sessions: 10,
        ..Params::paper_right(1.0, Db::Serializable, 5)
    };
    let (edn, truth) = generate_with_truth(&p);
    assert_eq!(edn, generate(&p));
    let h = hist(&edn);
    assert!(has_duplicate_appends(&h));
    let at: std::collections::HashMap<i64, u32> = h
        .txns
        .iter()
        .enumerate()
        .map(|(i, t)| (t.index, i as u32))
        .collect();
    let order: Vec<u32> = truth.iter().map(|&i| at[&(i as i64)]).collect();
    witness::check_serial(&h, &order, true).expect("the database's own order replays");
    assert_eq!(verdict(&h, Level::StrictSerializable), Validity::True);
    // A lost-update database breaks serializability and SI; an SI one only
    // serializability.
    let lu = hist(&generate(&Params {
        db: Db::LostUpdate,
        ..p.clone()
    }));
    assert_eq!(verdict(&lu, Level::SnapshotIsolation), Validity::False);
    let si = hist(&generate(&Params {
        db: Db::SnapshotIsolation,
        ..p.clone()
    }));
    assert_eq!(verdict(&si, Level::Serializable), Validity::False);
    assert_eq!(verdict(&si, Level::SnapshotIsolation), Validity::True);
}

#[test]
fn forced_cycles_are_explained_step_by_step() {
    let h = concurrent(&[
        ("ok", "[[:r :x []] [:append :y 1]]"),
        ("ok", "[[:r :y []] [:append :x 1]]"),
    ]);
    let a = check_duplicates(&h, Level::Serializable, &lim())
        .anomaly
        .unwrap();
    let text = render(&h, &a.proof);
    assert!(text.contains("read key :x as [], which misses"), "{text}");
    assert!(text.contains("a cycle."), "{text}");
    assert_eq!(a.txns.len(), 2);
}

/// 2,000 list-append transactions recorded by `isolde run postgres -i
/// read-committed -n 2000 --duplicates 1 --value-domain 4 --seed 5`
/// (PostgreSQL, READ COMMITTED). The read-committed search ran out of its
/// 30 s before an answer; the snapshot replay's placement, taken as a
/// commit order, is a read-committed witness found without search.
#[test]
fn postgres_read_committed_with_repeated_values_has_a_witness_without_search() {
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/postgres-rc-duplicates-2000.jsonl.gz"
    ));
    let h = isolde::history::read::read_history_file(path, None).expect("history reads");
    assert!(has_duplicate_appends(&h));
    let v = check_duplicates(&h, Level::ReadCommitted, &lim());
    assert_eq!(v.valid, Validity::True, "{}", why(&h, &v));
    let w = v.witness.expect("a valid verdict carries a witness");
    witness::check_read_committed(&h, &w).unwrap();
    assert!(v.stats.conflicts == 0, "decided without search");
}

/// 2,000 transactions recorded by `isolde run mysql -i read-committed -n
/// 2000 --duplicates 1 --value-domain 4 --seed 5` (MariaDB 10.11, READ
/// COMMITTED). Neither completion order nor the snapshot replay's placement
/// is a witness here, and the read-committed search ran out of 5 s; the
/// read-committed replay with backtracking finds one.
#[test]
fn mariadb_read_committed_with_repeated_values_has_a_witness_by_replay() {
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/mariadb-rc-duplicates-2000.jsonl.gz"
    ));
    let h = isolde::history::read::read_history_file(path, None).expect("history reads");
    assert!(has_duplicate_appends(&h));
    let (keys, _) = isolde::solver::problem::extract_with(&h, 256, false).expect("facts");
    let far = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let order = isolde::solver::rc_order::rc_order(&h, &keys, far).expect("a replay");
    witness::check_read_committed(&h, &order).unwrap();
    let v = check_duplicates(&h, Level::ReadCommitted, &lim());
    assert_eq!(v.valid, Validity::True, "{}", why(&h, &v));
    witness::check_read_committed(&h, &v.witness.expect("a witness")).unwrap();
    assert!(v.stats.conflicts == 0, "decided without search");
}

/// The paper's Fig. 3 right workload (10,000 transactions, 75% of keys
/// duplicated, a serializable database; `cargo bench --bench duplicates --
/// right` builds the same history). Consistent view's own search, whose
/// G-single check waits for full assignments, ran out of its 30 s here; a
/// serial order is a consistent-view witness, and the serial search finds
/// one in well under a second, so consistent view asks it first.
#[test]
fn consistent_view_takes_a_serial_witness_when_its_own_search_would_not_end() {
    use crate::support::duplicates_gen::{generate, Db, Params};
    let h = hist(&generate(&Params::paper_right(0.75, Db::Serializable, 11)));
    assert!(has_duplicate_appends(&h));
    // The default 30 s: the serial search gets a quarter, room enough on a
    // loaded machine.
    let v = check_duplicates(&h, Level::ConsistentView, &Limits::default());
    assert_eq!(v.valid, Validity::True, "{}", why(&h, &v));
    let w = v.witness.expect("a valid verdict carries a witness");
    witness::check_consistent_view(&h, &w).unwrap();
}

/// A history from the simulated serializable database whose non-atomic
/// bug left no trace (`isolde run sim -i serializable --bug non-atomic -n
/// 1000 --duplicates 1 --seed 3`): snapshot isolation's own search, which
/// orders a start and a commit per transaction, took 13.5 s to find a
/// witness, the serial search 0.2 s. A serial order is a snapshot-isolation
/// witness, so snapshot isolation asks the serial search first; at an 8 s
/// limit (2 s for the serial search) only that way ends in time.
#[test]
fn snapshot_isolation_takes_a_serial_witness_when_its_own_search_is_slow() {
    let dir = std::env::temp_dir().join(format!("isolde-si-serial-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("h.edn");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_isolde"))
        .args(["run", "sim", "-i", "serializable", "--bug", "non-atomic"])
        .args(["-n", "1000", "--duplicates", "1", "--seed", "3", "-q", "-o"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let h = hist(&std::fs::read_to_string(&path).unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(has_duplicate_appends(&h));
    let limits = Limits {
        time_ms: 8_000,
        ..Limits::default()
    };
    let v = check_duplicates(&h, Level::SnapshotIsolation, &limits);
    assert_eq!(v.valid, Validity::True, "{}", why(&h, &v));
    let w = v.witness.expect("a valid verdict carries a witness");
    let snaps = v
        .snapshots
        .expect("a snapshot-isolation witness has snapshots");
    witness::check_si(&h, &w, &snaps).unwrap();
}
