//! MariaDB REPEATABLE READ with repeated register values: MDEV-26642.
//!
//! InnoDB skips an UPDATE that leaves a row unchanged. When transaction T
//! writes `v` to a key that another transaction set to `v` and committed
//! after T's read view was taken, T's write changes nothing, so T's next
//! plain SELECT still answers from its read view: T reads the old value right
//! after writing `v`. isolde reports it as `internal`. With
//! `innodb_snapshot_isolation=ON` that write fails with error 1020 instead.
//!
//! Needs MariaDB on 127.0.0.1:3306 (root, no password, database `test`;
//! ISOLDE_TEST_MYSQL_URL overrides the URL), except the saved-history test.
//! Under CI=true the live tests fail when the server is down; elsewhere they
//! skip with a message.

// Talks to MariaDB through the `mysql` crate, like `isolde run mysql`.
#![cfg(feature = "run-mysql")]

use crate::support::run_support;

use isolde::check::{Report, Workload};
use isolde::history::Outcome;
use isolde::run::dialect::{MyDialect, Phase};
use isolde::run::recorder::{Clock, Recorder};
use isolde::run::{Mop, ReadValue};
use mysql::prelude::Queryable;
use mysql::{Conn, Opts};
use run_support::{check, is_valid, run, server_up, temp_path};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// 1,000 rw-register transactions recorded by `isolde run mysql` against
/// MariaDB 10.11.19 at REPEATABLE READ, innodb_snapshot_isolation=OFF (see
/// README, "MariaDB and MDEV-26642").
const SAVED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/mariadb-rr-mdev-26642.jsonl.gz"
);

fn url() -> String {
    std::env::var("ISOLDE_TEST_MYSQL_URL")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".into())
}

fn up() -> bool {
    server_up("MariaDB", "127.0.0.1:3306")
}

/// One transaction of a recorded history: invocation and completion times,
/// outcome, micro-ops and error, as the JSON lines say.
struct Op {
    index: i64,
    start: i64,
    end: i64,
    kind: String,
    value: Vec<Value>,
    error: Option<String>,
}

/// Reads a JSON-lines history (gzip or plain), pairing each completion with
/// its process's invocation.
fn ops(path: &Path) -> Vec<Op> {
    let file = std::fs::File::open(path).expect("history file");
    let reader: Box<dyn std::io::Read> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(flate2::read::GzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut invoked = std::collections::HashMap::new();
    let mut out = vec![];
    for line in BufReader::new(reader).lines() {
        let o: Value = serde_json::from_str(&line.expect("readable line")).expect("JSON line");
        let process = o["process"].as_i64().expect("client process");
        let time = o["time"].as_i64().expect("time");
        if o["type"] == "invoke" {
            invoked.insert(process, time);
            continue;
        }
        out.push(Op {
            index: o["index"].as_i64().expect("index"),
            start: invoked
                .remove(&process)
                .expect("completion follows invocation"),
            end: time,
            kind: o["type"].as_str().expect("type").to_string(),
            value: o["value"].as_array().expect("micro-ops").clone(),
            error: o["error"].as_str().map(str::to_string),
        });
    }
    out
}

/// The last value `op` wrote to `key`, if it wrote it.
fn last_write(op: &Op, key: &Value) -> Option<Value> {
    op.value
        .iter()
        .rev()
        .find(|m| m[0] == "w" && m[1] == *key)
        .map(|m| m[2].clone())
}

/// How many of isolde's `internal` findings have the MDEV-26642 shape: the
/// transaction wrote `v` to a key and then read another value of it, and
/// some transaction that overlapped it in time committed `v` as its final
/// write to that key. Returns (internal findings, of which MDEV-shaped).
fn mdev_shaped(history: &Path, report: &Report) -> (usize, usize) {
    let h = isolde::history::read::read_history_file(history, None).expect("history");
    let json = report.to_json(&h);
    let Some(found) = json["anomalies"]["internal"].as_array() else {
        return (0, 0);
    };
    let ops = ops(history);
    let shaped = found
        .iter()
        .filter(|a| {
            let t = ops
                .iter()
                .find(|o| a["op"]["index"] == o.index)
                .expect("the finding names a transaction of the history");
            let (key, read) = (&a["mop"][1], &a["mop"][2]);
            // The read follows the transaction's own write of another value.
            let wrote = t.value.iter().enumerate().find_map(|(i, m)| {
                let before = t.value[..i].iter().rev().find(|p| p[1] == *key)?;
                (*m == a["mop"] && before[0] == "w" && before[2] != *read)
                    .then(|| before[2].clone())
            });
            let Some(v) = wrote else { return false };
            ops.iter().any(|u| {
                u.index != t.index
                    && u.kind == "ok"
                    && u.end > t.start
                    && u.start < t.end
                    && last_write(u, key) == Some(v.clone())
            })
        })
        .count();
    (found.len(), shaped)
}

fn types(r: &Report) -> Vec<&str> {
    r.anomaly_types.iter().map(String::as_str).collect()
}

#[test]
fn saved_history_shows_mdev_26642() {
    let path = Path::new(SAVED);
    let rc = check(path, Workload::RwRegister, &["read-committed"]);
    assert!(is_valid(&rc), "{:?}", rc.anomaly_types);
    let si = check(path, Workload::RwRegister, &["snapshot-isolation"]);
    assert_eq!(types(&si), ["internal", "lost-update"], "{:?}", si.notes);
    let ruled_out: Vec<&str> = si
        .not
        .iter()
        .chain(&si.also_not)
        .map(String::as_str)
        .collect();
    for m in [
        "read-atomic",
        "cursor-stability",
        "snapshot-isolation",
        "serializable",
    ] {
        assert!(ruled_out.contains(&m), "{m} not ruled out: {ruled_out:?}");
    }
    assert_eq!(mdev_shaped(path, &si), (4, 4));
}

/// Session options of the scripted schedule.
fn session(si: bool) -> Conn {
    let mut c = Conn::new(Opts::from_url(&url()).expect("URL")).expect("connect");
    c.query_drop("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        .unwrap();
    c.query_drop(format!(
        "SET SESSION innodb_snapshot_isolation = {}",
        if si { "ON" } else { "OFF" }
    ))
    .unwrap();
    c.query_drop("SET SESSION innodb_lock_wait_timeout = 5")
        .unwrap();
    c
}

/// MDEV-26642's schedule, step by step on two connections (so no timing is
/// involved), written as a history: T0 writes 1 to key 1; T2 reads key 1
/// (its read view starts); T1 writes 2 and commits; T2 writes 2 (the
/// runner's statement) and reads key 1 again; T3 reads key 1. Returns the
/// history and the server error of T2's write, if any.
fn scripted(si: bool) -> (std::path::PathBuf, Option<u16>) {
    let table = format!("isolde_mdev_{}", isolde::run::run_id());
    let mut admin = Conn::new(Opts::from_url(&url()).expect("URL")).expect("connect");
    admin
        .query_drop(format!(
            "CREATE TABLE {table} (k BIGINT NOT NULL PRIMARY KEY, v BIGINT NOT NULL) ENGINE=InnoDB"
        ))
        .unwrap();
    let write =
        format!("INSERT INTO {table} (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)");
    let read = format!("SELECT v FROM {table} WHERE k = ?");
    let (mut a, mut b) = (session(si), session(si));
    let path = temp_path(&format!("mdev-26642-{si}.jsonl"));
    let rec = Recorder::create(&path, Clock::Real(std::time::Instant::now())).unwrap();
    let writer = |c: &mut Conn, v: i64| {
        let t = [Mop::Write(1, v)];
        rec.invoke(0, &t);
        c.query_drop("START TRANSACTION").unwrap();
        c.exec_drop(&write, (1, v)).unwrap();
        c.query_drop("COMMIT").unwrap();
        rec.complete(0, Outcome::Ok, &t, None);
    };
    writer(&mut a, 1);
    let t2 = [Mop::Read(1, None), Mop::Write(1, 2), Mop::Read(1, None)];
    rec.invoke(1, &t2);
    b.query_drop("START TRANSACTION").unwrap();
    let first: Option<i64> = b.exec_first(&read, (1,)).unwrap();
    writer(&mut a, 2);
    let error = match b.exec_drop(&write, (1, 2)) {
        Ok(()) => {
            let second: Option<i64> = b.exec_first(&read, (1,)).unwrap();
            b.query_drop("COMMIT").unwrap();
            let done = [
                Mop::Read(1, first.map(ReadValue::Int)),
                Mop::Write(1, 2),
                Mop::Read(1, second.map(ReadValue::Int)),
            ];
            rec.complete(1, Outcome::Ok, &done, None);
            None
        }
        Err(e) => {
            let code = match &e {
                mysql::Error::MySqlError(me) => Some(me.code),
                _ => None,
            };
            let rolled_back = b.query_drop("ROLLBACK").is_ok();
            let outcome = MyDialect::Mysql.classify(code, Phase::Statement, rolled_back);
            rec.complete(1, outcome, &t2, Some(&e.to_string()));
            code
        }
    };
    // A final read, so that the history has a dependency to check.
    let last = [Mop::Read(1, None)];
    rec.invoke(0, &last);
    let v: Option<i64> = a.exec_first(&read, (1,)).unwrap();
    rec.complete(0, Outcome::Ok, &[Mop::Read(1, v.map(ReadValue::Int))], None);
    rec.finish().unwrap();
    admin.query_drop(format!("DROP TABLE {table}")).unwrap();
    (path, error)
}

#[test]
fn scripted_schedule_reproduces_mdev_26642_unless_snapshot_isolation() {
    if !up() {
        return;
    }
    let (path, error) = scripted(false);
    assert_eq!(error, None, "the write succeeds with the variable OFF");
    let r = check(&path, Workload::RwRegister, &["snapshot-isolation"]);
    assert_eq!(types(&r), ["internal"], "T2 wrote 2, then read 1");
    assert_eq!(mdev_shaped(&path, &r), (1, 1));

    let (path, error) = scripted(true);
    assert_eq!(error, Some(1020), "ER_CHECKREAD with the variable ON");
    assert_eq!(
        MyDialect::Mysql.classify(error, Phase::Statement, true),
        Outcome::Fail
    );
    let r = check(&path, Workload::RwRegister, &["snapshot-isolation"]);
    assert!(is_valid(&r), "{:?}", r.anomaly_types);
}

/// A contended rw-register run at REPEATABLE READ on few keys.
fn live(si: &str, duplicates: bool) -> (std::path::PathBuf, isolde::run::progress::Counts) {
    let url = url();
    let var = format!("innodb_snapshot_isolation={si}");
    let mut args = vec![
        "mysql",
        "--url",
        &url,
        "-i",
        "repeatable-read",
        "--session-var",
        &var,
        "--session-var",
        "innodb_lock_wait_timeout=5",
        "-w",
        "rw-register",
        "-n",
        "2000",
        "-p",
        "10",
        "--key-count",
        "4",
    ];
    if duplicates {
        args.extend_from_slice(&["--duplicates", "1", "--value-domain", "3"]);
    }
    let r = run(&format!("mdev-live-{si}-{duplicates}"), &args);
    (r.path, r.counts)
}

/// What a live run guarantees whatever the timing: no unknown outcomes,
/// every abort a deadlock (1213) or, with the variable ON, 1020.
fn aborts_are_failures(path: &Path, counts: isolde::run::progress::Counts, codes: &[&str]) {
    assert_eq!(counts.info, 0, "{counts:?}");
    for op in ops(path).iter().filter(|o| o.kind != "ok") {
        assert_eq!(op.kind, "fail");
        let e = op.error.as_deref().unwrap_or("");
        assert!(codes.iter().any(|c| e.contains(c)), "unexpected abort: {e}");
    }
}

#[test]
fn live_runs_with_repeated_values() {
    if !up() {
        return;
    }
    // OFF: every internal anomaly has MDEV-26642's shape (how many there
    // are depends on timing: 2 to 7 per 1,000 transactions here).
    let (path, counts) = live("OFF", true);
    aborts_are_failures(&path, counts, &["1213 ("]);
    let r = check(&path, Workload::RwRegister, &["snapshot-isolation"]);
    let (internal, shaped) = mdev_shaped(&path, &r);
    eprintln!("OFF, repeated values: {counts:?}, {internal} internal, {shaped} MDEV-26642-shaped");
    assert_eq!(internal, shaped);

    // OFF with unique values: a write always changes the row, so no internal.
    let (path, counts) = live("OFF", false);
    aborts_are_failures(&path, counts, &["1213 ("]);
    let r = check(&path, Workload::RwRegister, &["snapshot-isolation"]);
    assert!(!types(&r).contains(&"internal"), "{:?}", r.anomaly_types);

    // ON: the same-value write fails with 1020 (a definite abort), and no
    // transaction reads around its own write or loses an update.
    let (path, counts) = live("ON", true);
    aborts_are_failures(&path, counts, &["1020 (", "1213 ("]);
    let r = check(&path, Workload::RwRegister, &["snapshot-isolation"]);
    eprintln!("ON, repeated values: {counts:?}, {:?}", r.anomaly_types);
    for a in ["internal", "lost-update"] {
        assert!(!types(&r).contains(&a), "{:?}", r.anomaly_types);
    }
}
