//! The simulated database: each isolation level's textbook behaviour on
//! scripted interleavings, and whole runs (determinism, no lost appends).

use crate::support::run_support;

use isolde::run::sim::{Sim, SimBug, SimLevel, SimTxn, Step};
use isolde::run::{Mop, ReadValue, WorkloadKind};
use std::collections::HashMap;

fn sim(level: SimLevel, bug: Option<SimBug>) -> Sim {
    Sim::new(level, bug, WorkloadKind::ListAppend, 0)
}

fn r(k: u64) -> Mop {
    Mop::Read(k, None)
}
fn a(k: u64, v: i64) -> Mop {
    Mop::Append(k, v)
}

/// Steps `t` until it commits or aborts; panics if it blocks.
fn run_to_end(s: &mut Sim, t: &mut SimTxn) -> Step {
    loop {
        match s.step(t) {
            Step::Progressed => {}
            Step::Blocked => panic!("blocked"),
            end => {
                s.finish(t, end == Step::Committed);
                return end;
            }
        }
    }
}

fn read_of(t: &SimTxn, i: usize) -> Option<Vec<i64>> {
    match &t.done()[i] {
        Mop::Read(_, Some(ReadValue::List(l))) => Some(l.clone()),
        Mop::Read(_, None) => None,
        m => panic!("not a read: {m:?}"),
    }
}

/// Final state of key `k`, read by a fresh transaction.
fn final_list(s: &mut Sim, k: u64) -> Option<Vec<i64>> {
    let mut t = s.begin(vec![r(k)]);
    assert_eq!(run_to_end(s, &mut t), Step::Committed);
    read_of(&t, 0)
}

/// Write skew (G2-item): T1 reads x and appends to y, T2 reads y and appends
/// to x, interleaved. Snapshot isolation commits both; two-phase locking
/// does not.
fn write_skew(level: SimLevel) -> (Step, Step) {
    let mut s = sim(level, None);
    let mut t1 = s.begin(vec![r(1), a(2, 1)]);
    let mut t2 = s.begin(vec![r(2), a(1, 1)]);
    assert_eq!(s.step(&mut t1), Step::Progressed);
    assert_eq!(s.step(&mut t2), Step::Progressed);
    let s1 = s.step(&mut t1);
    let s2 = s.step(&mut t2);
    let end = |s: &mut Sim, t: &mut SimTxn, first: Step| match first {
        Step::Aborted(_) => {
            s.finish(t, false);
            first
        }
        _ => loop {
            match s.step(t) {
                Step::Progressed | Step::Blocked => {}
                e => {
                    s.finish(t, e == Step::Committed);
                    break e;
                }
            }
        },
    };
    let e2 = end(&mut s, &mut t2, s2);
    let e1 = end(&mut s, &mut t1, s1);
    (e1, e2)
}

#[test]
fn snapshot_isolation_allows_write_skew() {
    assert_eq!(
        write_skew(SimLevel::SnapshotIsolation),
        (Step::Committed, Step::Committed)
    );
}

#[test]
fn two_phase_locking_prevents_write_skew() {
    for level in [SimLevel::StrictSerializable, SimLevel::Serializable] {
        let (e1, e2) = write_skew(level);
        assert!(
            !(e1 == Step::Committed && e2 == Step::Committed),
            "{level:?}: {e1:?} {e2:?}"
        );
        assert_eq!(
            e1,
            Step::Committed,
            "{level:?}: the transaction that closes the cycle of waits is the victim"
        );
        assert_eq!(e2, Step::Aborted("deadlock victim"), "{level:?}");
    }
}

/// Two transactions read x then append to it, concurrently.
fn concurrent_increments(level: SimLevel, bug: Option<SimBug>) -> (Step, Step, Option<Vec<i64>>) {
    let mut s = sim(level, bug);
    let mut t1 = s.begin(vec![r(1), a(1, 1)]);
    let mut t2 = s.begin(vec![r(1), a(1, 2)]);
    s.step(&mut t1);
    s.step(&mut t2);
    let e1 = run_to_end(&mut s, &mut t1);
    let e2 = run_to_end(&mut s, &mut t2);
    (e1, e2, final_list(&mut s, 1))
}

#[test]
fn snapshot_isolation_never_loses_an_update() {
    let (e1, e2, fin) = concurrent_increments(SimLevel::SnapshotIsolation, None);
    assert_eq!(e1, Step::Committed);
    assert_eq!(e2, Step::Aborted("first committer wins"));
    assert_eq!(fin, Some(vec![1]));
}

#[test]
fn lost_update_bug_loses_an_update() {
    for level in [
        SimLevel::SnapshotIsolation,
        SimLevel::ReadCommitted,
        SimLevel::StrictSerializable,
    ] {
        let (e1, e2, fin) = concurrent_increments(level, Some(SimBug::LostUpdate));
        assert_eq!((e1, e2), (Step::Committed, Step::Committed), "{level:?}");
        assert_eq!(
            fin,
            Some(vec![2]),
            "{level:?}: the stale write-back overwrote [1]"
        );
    }
}

#[test]
fn read_committed_appends_build_on_the_latest_commit() {
    // Under read committed both commit and both appends survive: write locks
    // serialize the writes and each builds on the latest committed list.
    let mut s = sim(SimLevel::ReadCommitted, None);
    let mut t1 = s.begin(vec![r(1), a(1, 1)]);
    let mut t2 = s.begin(vec![r(1), a(1, 2)]);
    s.step(&mut t1);
    s.step(&mut t2);
    assert_eq!(run_to_end(&mut s, &mut t1), Step::Committed);
    assert_eq!(run_to_end(&mut s, &mut t2), Step::Committed);
    assert_eq!(final_list(&mut s, 1), Some(vec![1, 2]));
    assert_eq!(read_of(&t2, 0), None, "t2 read before t1 committed");
}

/// T1 reads x twice; T2 appends to x and commits in between.
fn second_read(level: SimLevel) -> (Option<Vec<i64>>, Option<Vec<i64>>) {
    let mut s = sim(level, None);
    let mut t1 = s.begin(vec![r(1), r(1)]);
    assert_eq!(s.step(&mut t1), Step::Progressed);
    let mut t2 = s.begin(vec![a(1, 5)]);
    let e2 = loop {
        match s.step(&mut t2) {
            Step::Progressed => {}
            e => break e,
        }
    };
    if e2 == Step::Blocked {
        // Two-phase locking: T2 waits for T1's shared lock.
        assert_eq!(run_to_end(&mut s, &mut t1), Step::Committed);
        return (read_of(&t1, 0), read_of(&t1, 1));
    }
    s.finish(&t2, e2 == Step::Committed);
    assert_eq!(run_to_end(&mut s, &mut t1), Step::Committed);
    (read_of(&t1, 0), read_of(&t1, 1))
}

#[test]
fn read_committed_allows_non_repeatable_reads() {
    assert_eq!(second_read(SimLevel::ReadCommitted), (None, Some(vec![5])));
    assert_eq!(
        second_read(SimLevel::ReadUncommitted),
        (None, Some(vec![5]))
    );
}

#[test]
fn snapshots_and_locks_give_repeatable_reads() {
    for level in [
        SimLevel::SnapshotIsolation,
        SimLevel::Serializable,
        SimLevel::StrictSerializable,
    ] {
        let (x, y) = second_read(level);
        assert_eq!(x, y, "{level:?}");
    }
}

/// T2 appends to x but has not committed when T1 reads x.
fn dirty_read(level: SimLevel) -> Option<Vec<i64>> {
    let mut s = sim(level, None);
    let mut t2 = s.begin(vec![a(1, 5), r(2)]);
    assert_eq!(s.step(&mut t2), Step::Progressed);
    let mut t1 = s.begin(vec![r(1)]);
    assert_eq!(run_to_end(&mut s, &mut t1), Step::Committed);
    read_of(&t1, 0)
}

#[test]
fn only_read_uncommitted_reads_uncommitted_writes() {
    assert_eq!(dirty_read(SimLevel::ReadUncommitted), Some(vec![5]));
    assert_eq!(dirty_read(SimLevel::ReadCommitted), None);
    assert_eq!(dirty_read(SimLevel::SnapshotIsolation), None);
}

#[test]
fn non_atomic_bug_exposes_half_a_commit() {
    let mut s = sim(SimLevel::SnapshotIsolation, Some(SimBug::NonAtomic));
    let mut t1 = s.begin(vec![a(1, 1), a(2, 1)]);
    s.step(&mut t1);
    s.step(&mut t1);
    assert_eq!(
        s.step(&mut t1),
        Step::Progressed,
        "commit installs key 1 only"
    );
    let mut t2 = s.begin(vec![r(1), r(2)]);
    assert_eq!(run_to_end(&mut s, &mut t2), Step::Committed);
    assert_eq!((read_of(&t2, 0), read_of(&t2, 1)), (Some(vec![1]), None));
    assert_eq!(run_to_end(&mut s, &mut t1), Step::Committed);

    // Without the bug the commit is one step.
    let mut s = sim(SimLevel::SnapshotIsolation, None);
    let mut t1 = s.begin(vec![a(1, 1), a(2, 1)]);
    s.step(&mut t1);
    s.step(&mut t1);
    assert_eq!(s.step(&mut t1), Step::Committed);
}

#[test]
fn aborted_read_bug_leaks_aborted_writes() {
    // With the bug, the aborted append lands on top of the committed one.
    for (bug, expect) in [(None, vec![1]), (Some(SimBug::AbortedRead), vec![1, 2])] {
        let mut s = sim(SimLevel::SnapshotIsolation, bug);
        let mut t1 = s.begin(vec![a(1, 1)]);
        let mut t2 = s.begin(vec![a(1, 2)]);
        s.step(&mut t1);
        s.step(&mut t2);
        assert_eq!(run_to_end(&mut s, &mut t1), Step::Committed);
        assert!(matches!(run_to_end(&mut s, &mut t2), Step::Aborted(_)));
        assert_eq!(final_list(&mut s, 1), Some(expect), "{bug:?}");
    }
}

#[test]
fn registers_read_the_last_write() {
    let mut s = Sim::new(
        SimLevel::SnapshotIsolation,
        None,
        WorkloadKind::RwRegister,
        0,
    );
    let mut t = s.begin(vec![Mop::Write(1, 3), Mop::Write(1, 4), r(1)]);
    assert_eq!(run_to_end(&mut s, &mut t), Step::Committed);
    assert_eq!(t.done()[2], Mop::Read(1, Some(ReadValue::Int(4))));
    let mut t = s.begin(vec![r(1), r(9)]);
    assert_eq!(run_to_end(&mut s, &mut t), Step::Committed);
    assert_eq!(
        t.done(),
        &[Mop::Read(1, Some(ReadValue::Int(4))), Mop::Read(9, None)]
    );
}

// ---- whole runs ----

fn lines(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn same_seed_same_history_bytes() {
    let args = [
        "sim",
        "-i",
        "snapshot-isolation",
        "-n",
        "300",
        "-p",
        "5",
        "--key-count",
        "4",
        "--seed",
        "17",
    ];
    let a = run_support::run("det-a", &args);
    let b = run_support::run("det-b", &args);
    assert_eq!(
        std::fs::read(&a.path).unwrap(),
        std::fs::read(&b.path).unwrap()
    );
    let c = run_support::run(
        "det-c",
        &[
            "sim",
            "-i",
            "snapshot-isolation",
            "-n",
            "300",
            "-p",
            "5",
            "--seed",
            "18",
        ],
    );
    assert_ne!(
        std::fs::read(&a.path).unwrap(),
        std::fs::read(&c.path).unwrap()
    );
    assert_eq!(
        a.counts.ok + a.counts.fail + a.counts.info,
        301,
        "300 and the final read"
    );
    assert!(
        a.counts.fail > 0,
        "contention on 4 keys makes first-committer-wins abort some"
    );
}

/// Properties that need no checker: every committed append shows up in the
/// final read, every list read is a prefix of the final list (versions only
/// grow), and no read shows a failed append.
fn assert_no_lost_or_dirty_appends(path: &std::path::Path) {
    let v = lines(path);
    let last_read = v.iter().rev().find(|l| l["type"] == "ok").unwrap();
    let mut fin: HashMap<u64, Vec<i64>> = HashMap::new();
    for m in last_read["value"].as_array().unwrap() {
        let l = m[2]
            .as_array()
            .map(|l| l.iter().map(|x| x.as_i64().unwrap()).collect())
            .unwrap_or_default();
        fin.insert(m[1].as_u64().unwrap(), l);
    }
    for l in &v {
        for m in l["value"].as_array().unwrap() {
            let k = m[1].as_u64().unwrap();
            let f = &fin[&k];
            match (l["type"].as_str().unwrap(), m[0].as_str().unwrap()) {
                ("ok", "append") => assert!(
                    f.contains(&m[2].as_i64().unwrap()),
                    "lost append {m} in {l}"
                ),
                ("fail", "append") => assert!(
                    !f.contains(&m[2].as_i64().unwrap()),
                    "failed append visible {m}"
                ),
                ("ok", "r") => {
                    if let Some(xs) = m[2].as_array() {
                        let xs: Vec<i64> = xs.iter().map(|x| x.as_i64().unwrap()).collect();
                        assert!(
                            f.starts_with(&xs),
                            "read {xs:?} of {k} is no prefix of {f:?}"
                        );
                    }
                }
                _ => {}
            }
        }
    }
}

#[test]
fn correct_levels_lose_nothing() {
    for level in [
        "strict-serializable",
        "serializable",
        "snapshot-isolation",
        "read-committed",
    ] {
        let r = run_support::run(
            level,
            &[
                "sim",
                "-i",
                level,
                "-n",
                "500",
                "-p",
                "10",
                "--key-count",
                "3",
                "--seed",
                "1",
            ],
        );
        assert_eq!(r.counts.info, 0);
        assert!(r.counts.ok > 100, "{level}: {:?}", r.counts);
        assert_no_lost_or_dirty_appends(&r.path);
    }
}

#[test]
fn lost_update_bug_run_loses_appends() {
    let r = run_support::run(
        "lu",
        &[
            "sim",
            "-i",
            "snapshot-isolation",
            "--bug",
            "lost-update",
            "-n",
            "300",
            "--key-count",
            "3",
            "--seed",
            "1",
        ],
    );
    let res = std::panic::catch_unwind(|| assert_no_lost_or_dirty_appends(&r.path));
    assert!(
        res.is_err(),
        "the lost-update bug must lose some acknowledged append"
    );
}

#[test]
fn every_run_ends_with_a_read_of_every_key() {
    let r = run_support::run(
        "final",
        &[
            "sim",
            "-n",
            "200",
            "--key-count",
            "3",
            "--max-writes-per-key",
            "3",
            "--seed",
            "4",
        ],
    );
    let v = lines(&r.path);
    let mut keys = std::collections::BTreeSet::new();
    for l in &v[..v.len() - 2] {
        for m in l["value"].as_array().unwrap() {
            keys.insert(m[1].as_u64().unwrap());
        }
    }
    let last = &v[v.len() - 1];
    assert_eq!(last["type"], "ok");
    let read: std::collections::BTreeSet<u64> = last["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m[1].as_u64().unwrap())
        .collect();
    assert_eq!(read, keys);
    assert!(keys.len() > 10, "the window moved on");
}
