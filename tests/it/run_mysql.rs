//! Known answers against MariaDB / MySQL (127.0.0.1:3306, root, no password,
//! database `test`). Under CI=true these fail when the server is down;
//! elsewhere they skip. Override the URL with ISOLDE_TEST_MYSQL_URL.

#![cfg(feature = "run-mysql")]

use crate::support::run_support;

use isolde::check::Validity;
use isolde::check::Workload;
use isolde::models::Model;
use run_support::{
    assert_complete, check, check_model, eventually, is_valid, model_defaults, run, server_up,
};

fn url() -> String {
    std::env::var("ISOLDE_TEST_MYSQL_URL")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".into())
}

fn up() -> bool {
    server_up("MariaDB", "127.0.0.1:3306")
}

fn my(name: &str, level: &str, extra: &[&str]) -> isolde::run::record::Recorded {
    let url = url();
    let mut args = vec![
        "mysql",
        "--url",
        &url,
        "-i",
        level,
        "-p",
        "10",
        "--key-count",
        "5",
    ];
    args.extend_from_slice(extra);
    run(name, &args)
}

#[test]
fn mysql_records_complete_histories() {
    if !up() {
        return;
    }
    for w in ["list-append", "rw-register"] {
        let r = my(
            "my-rec",
            "serializable",
            &[
                "-n",
                "500",
                "-w",
                w,
                "--session-var",
                "innodb_lock_wait_timeout=5",
            ],
        );
        assert_complete(&r, 500, w);
    }
}

#[test]
fn mariadb_serializable_is_serializable() {
    if !up() {
        return;
    }
    let r = my("my-ser", "serializable", &["-n", "2000"]);
    let rep = check(&r.path, Workload::ListAppend, &["serializable"]);
    assert!(is_valid(&rep), "{:?}", rep.anomaly_types);
}

#[test]
fn mariadb_repeatable_read_is_read_committed_not_snapshot_isolation() {
    if !up() {
        return;
    }
    let found = eventually(3, |_| {
        let r = my("my-rr", "repeatable-read", &["-n", "2000"]);
        let rc = check(&r.path, Workload::ListAppend, &["read-committed"]);
        assert!(is_valid(&rc), "{:?}", rc.anomaly_types);
        !is_valid(&check(
            &r.path,
            Workload::ListAppend,
            &["snapshot-isolation"],
        ))
    });
    assert!(found, "REPEATABLE READ passed snapshot isolation 3 times");
}

/// `--dialect tidb` against MariaDB: MariaDB has none of TiDB's session
/// variables, so they are not sent and the run says so; the transactions,
/// DDL and upserts are the same SQL and run. A TiDB server itself was not
/// tried here (see the unit tests of its documented codes in
/// `run_clients.rs`).
#[test]
fn tidb_dialect_on_mariadb_warns_and_runs_without_tidb_settings() {
    if !up() {
        return;
    }
    let url = url();
    // No -i: TiDB's default level, REPEATABLE READ.
    let r = run(
        "my-tidb",
        &[
            "mysql",
            "--url",
            &url,
            "--dialect",
            "tidb",
            "-p",
            "6",
            "--key-count",
            "8",
            "-n",
            "300",
            "--session-var",
            "innodb_lock_wait_timeout=5",
        ],
    );
    assert_complete(&r, 300, "tidb on mariadb");
    assert!(
        r.notes
            .iter()
            .any(|n| n.starts_with("warning: not a TiDB server")
                && n.contains("MariaDB")
                && n.contains("tidb_retry_limit not set")),
        "{:?}",
        r.notes
    );
    // MariaDB's REPEATABLE READ is read committed here (README).
    let rc = check(&r.path, Workload::ListAppend, &["read-committed"]);
    assert!(is_valid(&rc), "{:?}", rc.anomaly_types);

    let r = my("my-plain", "serializable", &["-n", "100"]);
    assert!(r.notes.is_empty(), "plain MariaDB: {:?}", r.notes);
}

/// Sequential, cas-register and mutex hold at READ COMMITTED too, every
/// run: sequential reads its subkeys latest first, one statement each, so a
/// later statement sees at least what an earlier one saw; a cas, acquire or
/// release reads the row FOR UPDATE, which waits for its writer and reads
/// the latest version; a plain read reads the latest committed value.
#[test]
fn mysql_read_committed_is_valid_for_sequential_cas_register_and_mutex() {
    if !up() {
        return;
    }
    for (w, model) in [
        ("sequential", Model::Sequential),
        ("cas-register", Model::CasRegister),
        ("mutex", Model::Mutex),
    ] {
        let r = my(
            &format!("my-rc-{w}"),
            "read-committed",
            &["-n", "300", "-w", w],
        );
        assert_eq!(r.counts.info, 0, "{w}: {:?}", r.counts);
        let (v, report) = check_model(&r.path, model, &model_defaults());
        assert_eq!(v, Validity::True, "{w}: {report}");
    }
}

/// Comments, sequential, cas-register and mutex under SERIALIZABLE: valid
/// (cas, acquire and release read the row FOR UPDATE: the others wait, or
/// one of them is the deadlock victim: fail).
#[test]
fn mysql_serializable_is_valid_for_comments_sequential_cas_register_and_mutex() {
    if !up() {
        return;
    }
    for (w, model) in [
        ("comments", Model::Comments),
        ("sequential", Model::Sequential),
        ("cas-register", Model::CasRegister),
        ("mutex", Model::Mutex),
    ] {
        for _ in 0..2 {
            let r = my(&format!("my-{w}"), "serializable", &["-n", "300", "-w", w]);
            // Ten workers contend for the lock: most acquires fail.
            let least = if w == "mutex" { 4 } else { 30 };
            assert!(r.counts.ok >= least, "{w}: {:?}", r.counts);
            assert_eq!(r.counts.info, 0, "{w}: {:?}", r.counts);
            let (v, report) = check_model(&r.path, model, &model_defaults());
            assert_eq!(v, Validity::True, "{w}: {report}");
        }
    }
}

/// Bank, counter and set under SERIALIZABLE: valid.
#[test]
fn mysql_serializable_is_valid_for_the_models() {
    if !up() {
        return;
    }
    for (w, model) in [
        ("bank", Model::Bank),
        ("counter", Model::Counter),
        ("set", Model::Set),
        ("long-fork", Model::LongFork),
    ] {
        for extra in [None, Some("--computed-transfers")] {
            if extra.is_some() && w != "bank" {
                continue;
            }
            let mut args = vec!["-n", "300", "-w", w];
            args.extend(extra);
            let r = my(&format!("my-{w}"), "serializable", &args);
            assert!(r.counts.ok > 100, "{w}: {:?}", r.counts);
            let (v, report) = check_model(&r.path, model, &model_defaults());
            assert_eq!(v, Validity::True, "{w}: {report}");
        }
    }
}
