//! Known answers against PostgreSQL (127.0.0.1:5432, database `test`, trust
//! auth). Under CI=true these fail when the server is down; elsewhere they skip.
//! Override the URL with ISOLDE_TEST_PG_URL.

#![cfg(feature = "run-postgres")]

use crate::support::run_support;

use isolde::check::Validity;
use isolde::check::Workload;
use isolde::models::Model;
use run_support::{
    assert_complete, check, check_model, eventually, is_valid, model_defaults, run, server_up,
};

fn url() -> String {
    std::env::var("ISOLDE_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

fn up() -> bool {
    server_up("PostgreSQL", "127.0.0.1:5432")
}

fn pg(name: &str, level: &str, extra: &[&str]) -> isolde::run::record::Recorded {
    let url = url();
    // Deadlocks are common under READ COMMITTED with 5 keys; detect them in
    // 20 ms rather than PostgreSQL's default second (needs a superuser).
    let mut args = vec![
        "postgres",
        "--url",
        &url,
        "-i",
        level,
        "-p",
        "10",
        "--key-count",
        "5",
        "--session-var",
        "deadlock_timeout=20ms",
    ];
    args.extend_from_slice(extra);
    run(name, &args)
}

#[test]
fn postgres_records_complete_histories() {
    if !up() {
        return;
    }
    for w in ["list-append", "rw-register"] {
        let r = pg("pg-rec", "serializable", &["-n", "500", "-w", w]);
        assert_complete(&r, 500, w);
        assert!(
            r.counts.fail > 0,
            "{w}: 10 clients on 5 keys must meet serialization failures"
        );
    }
}

#[test]
fn postgres_serializable_is_strict_serializable() {
    if !up() {
        return;
    }
    let r = pg("pg-ser", "serializable", &["-n", "2000"]);
    let rep = check(&r.path, Workload::ListAppend, &["strict-serializable"]);
    assert!(is_valid(&rep), "{:?}", rep.anomaly_types);
}

#[test]
fn postgres_repeatable_read_is_snapshot_isolation_not_serializable() {
    if !up() {
        return;
    }
    let found = eventually(3, |i| {
        let r = pg("pg-rr", "repeatable-read", &["-n", "2000"]);
        let si = check(&r.path, Workload::ListAppend, &["snapshot-isolation"]);
        assert!(
            is_valid(&si),
            "attempt {i}: REPEATABLE READ must be snapshot isolation: {:?}",
            si.anomaly_types
        );
        let ser = check(&r.path, Workload::ListAppend, &["serializable"]);
        !is_valid(&ser) && ser.anomaly_types.iter().any(|a| a == "G2-item")
    });
    assert!(found, "no G2-item in 3 runs of REPEATABLE READ");
}

#[test]
fn postgres_read_committed_is_not_snapshot_isolation() {
    if !up() {
        return;
    }
    let found = eventually(3, |_| {
        let r = pg("pg-rc", "read-committed", &["-n", "2000"]);
        let rc = check(&r.path, Workload::ListAppend, &["read-committed"]);
        assert!(is_valid(&rc), "{:?}", rc.anomaly_types);
        !is_valid(&check(
            &r.path,
            Workload::ListAppend,
            &["snapshot-isolation"],
        ))
    });
    assert!(found, "READ COMMITTED passed snapshot isolation 3 times");
}

/// Backends are terminated every 2 s; clients reconnect under new process
/// ids, the history stays complete and SERIALIZABLE still holds.
#[test]
fn postgres_survives_terminated_backends() {
    if !up() {
        return;
    }
    let app = format!("isolde_fault_{}", isolde::run::run_id());
    let url = format!("{}?application_name={app}", url());
    let fault = format!(
        "psql -h 127.0.0.1 -U postgres -d test -qAtc \"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '{app}'\""
    );
    let r = run(
        "pg-fault",
        &[
            "postgres",
            "--url",
            &url,
            "-i",
            "serializable",
            "-p",
            "10",
            "--key-count",
            "5",
            "--session-var",
            "deadlock_timeout=20ms",
            "--time-limit",
            "7",
            "--fault",
            &fault,
            "--fault-interval",
            "2",
            "--rate",
            "400",
        ],
    );
    // Ran, and worked: a failing fault command injects nothing.
    assert!(
        r.faults.ran >= 2 && r.faults.failed == 0,
        "faults: {:?}",
        r.faults
    );
    assert!(
        r.counts.info > 0,
        "terminated backends give info outcomes: {:?}",
        r.counts
    );
    assert!(r.counts.ok > 200, "{:?}", r.counts);
    let h = isolde::history::read::read_history_file(&r.path, None).unwrap();
    let max_process = h.txns.iter().map(|t| t.process).max().unwrap();
    assert!(max_process >= 10, "clients continued under new process ids");
    let rep = check(&r.path, Workload::ListAppend, &["serializable"]);
    assert!(is_valid(&rep), "{:?}", rep.anomaly_types);
}

/// `--dialect cockroachdb` and `--dialect yugabytedb` run their DDL, session
/// setup, transactions and upserts against PostgreSQL itself: the SQL the
/// dialects send is PostgreSQL's, and the servers speak it. What this cannot
/// try is the servers' own behaviour (their errors, their isolation): see
/// the unit tests of their documented codes in `run_clients.rs`.
#[test]
fn cockroachdb_and_yugabytedb_dialects_run_their_sql_on_postgresql() {
    if !up() {
        return;
    }
    let url = url();
    for (dialect, level, model) in [
        ("cockroachdb", "serializable", "serializable"),
        ("cockroachdb", "read-committed", "read-committed"),
        ("yugabytedb", "serializable", "serializable"),
        ("yugabytedb", "repeatable-read", "snapshot-isolation"),
        ("yugabytedb", "read-committed", "read-committed"),
    ] {
        let what = format!("{dialect} {level}");
        let r = run(
            "pg-dialect",
            &[
                "postgres",
                "--url",
                &url,
                "--dialect",
                dialect,
                "-i",
                level,
                "-p",
                "6",
                "--key-count",
                "8",
                "-n",
                "300",
            ],
        );
        assert_complete(&r, 300, &what);
        // Neither database has PostgreSQL's deadlock_timeout to shorten; the
        // summary says the server is not the dialect's.
        let server = if dialect == "cockroachdb" {
            "CockroachDB"
        } else {
            "YugabyteDB"
        };
        assert_eq!(r.notes.len(), 1, "{what}: {:?}", r.notes);
        assert!(
            r.notes[0].starts_with(&format!(
                "warning: not a {server} server (version \"PostgreSQL"
            )) && r.notes[0].ends_with("use --dialect postgres"),
            "{what}: {:?}",
            r.notes
        );
        assert!(
            r.fail_causes.keys().all(|c| c.starts_with("40")),
            "{what}: only transaction rollbacks are fail: {:?}",
            r.fail_causes
        );
        let rep = check(&r.path, Workload::ListAppend, &[model]);
        assert!(is_valid(&rep), "{what}: {:?}", rep.anomaly_types);
    }
}

/// `--retries 5` under SERIALIZABLE with contention: more generated
/// transactions commit than without, every attempt is in the history (a
/// retry is a new invocation after a fail), and the history checks.
#[test]
fn postgres_retries_commit_more_transactions() {
    if !up() {
        return;
    }
    let n = 400;
    let args = |retries: &'static str| {
        vec![
            "-n",
            "400",
            "--seed",
            "11",
            "-w",
            "rw-register",
            "--retries",
            retries,
        ]
    };
    let plain = pg("pg-no-retry", "serializable", &args("0"));
    let retried = pg("pg-retry", "serializable", &args("5"));
    assert_eq!(plain.retries, 0);
    assert!(plain.counts.fail > 20, "contention: {:?}", plain.counts);
    // Generated transactions that committed (one committed attempt each;
    // the final read is one more ok).
    let (without, with) = (plain.counts.ok - 1, retried.counts.ok - 1);
    assert!(
        with > without,
        "retries commit more: {with} vs {without} ({:?} vs {:?})",
        retried.counts,
        plain.counts
    );
    let c = retried.counts;
    let attempts = c.ok + c.fail + c.info;
    assert!(retried.retries > 0 && c.fail >= retried.retries, "{c:?}");
    // Every generated transaction and every retry, plus the final read
    // (which may take a few attempts).
    assert!(
        (n + retried.retries + 1..=n + retried.retries + 8).contains(&attempts),
        "{attempts} attempts, {} retries: {c:?}",
        retried.retries
    );
    let h = isolde::history::read::read_history_file(&retried.path, None).unwrap();
    assert_eq!(h.txns.len() as u64, attempts);
    let rep = check(&retried.path, Workload::RwRegister, &["serializable"]);
    assert!(is_valid(&rep), "{:?}", rep.anomaly_types);
}

/// Bank, counter, set, set-full and long-fork under SERIALIZABLE: valid.
#[test]
fn postgres_serializable_is_valid_for_the_models() {
    if !up() {
        return;
    }
    for (w, model) in [
        ("bank", Model::Bank),
        ("counter", Model::Counter),
        ("set", Model::Set),
        ("set-full", Model::SetFull),
        ("long-fork", Model::LongFork),
    ] {
        for _ in 0..2 {
            let r = pg(&format!("pg-{w}"), "serializable", &["-n", "300", "-w", w]);
            assert!(r.counts.ok > 100, "{w}: {:?}", r.counts);
            let (v, report) = check_model(&r.path, model, &model_defaults());
            assert_eq!(v, Validity::True, "{w}: {report}");
        }
    }
}

/// Sequential, cas-register and mutex hold at READ COMMITTED too, every
/// run: sequential reads its subkeys latest first, one statement each, so a
/// later statement sees at least what an earlier one saw; a cas, acquire or
/// release reads the row FOR UPDATE, which waits for its writer and reads
/// the latest version; a plain read reads the latest committed value.
#[test]
fn postgres_read_committed_is_valid_for_sequential_cas_register_and_mutex() {
    if !up() {
        return;
    }
    for (w, model) in [
        ("sequential", Model::Sequential),
        ("cas-register", Model::CasRegister),
        ("mutex", Model::Mutex),
    ] {
        let r = pg(
            &format!("pg-rc-{w}"),
            "read-committed",
            &["-n", "300", "-w", w],
        );
        assert_eq!(r.counts.info, 0, "{w}: {:?}", r.counts);
        let (v, report) = check_model(&r.path, model, &model_defaults());
        assert_eq!(v, Validity::True, "{w}: {report}");
    }
}

/// Comments, sequential, cas-register and mutex under SERIALIZABLE: valid
/// (PostgreSQL's serializable snapshots are taken after every commit that
/// completed before the transaction began, so reads keep real time too),
/// with the register and the lock used (cas, acquire and release read the
/// row FOR UPDATE).
#[test]
fn postgres_serializable_is_valid_for_comments_sequential_cas_register_and_mutex() {
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
            let r = pg(&format!("pg-{w}"), "serializable", &["-n", "300", "-w", w]);
            // Ten workers contend for the lock: most acquires fail.
            let least = if w == "mutex" { 4 } else { 30 };
            assert!(r.counts.ok >= least, "{w}: {:?}", r.counts);
            assert_eq!(r.counts.info, 0, "{w}: {:?}", r.counts);
            let (v, report) = check_model(&r.path, model, &model_defaults());
            assert_eq!(v, Validity::True, "{w}: {report}");
        }
    }
}

/// Under READ COMMITTED a transfer's balance check reads a committed
/// balance that a concurrent transfer then lowers (write skew on one row):
/// both debit it, and reads show negative balances, every run we tried
/// (the total stays: the updates are relative, `v = v - amount`).
#[test]
fn postgres_read_committed_bank_overdraws() {
    if !up() {
        return;
    }
    let mut last = String::new();
    let seen = eventually(3, |_| {
        let r = pg("pg-bank-rc", "read-committed", &["-n", "400", "-w", "bank"]);
        let (v, report) = check_model(&r.path, Model::Bank, &model_defaults());
        assert!(
            !report.contains("wrong-total"),
            "relative updates keep the total: {report}"
        );
        last = report;
        v == Validity::False && last.contains("negative-value")
    });
    assert!(seen, "no overdraft in 3 runs: {last}");
}

/// With `--computed-transfers` a transfer writes the balances it read and
/// computed: under READ COMMITTED two transfers from one account both write
/// back, one update is lost, and reads show a wrong total (every run we
/// tried); under SERIALIZABLE one of them aborts and the bank stays valid.
#[test]
fn postgres_read_committed_computed_transfers_lose_money() {
    if !up() {
        return;
    }
    let mut last = String::new();
    let seen = eventually(3, |_| {
        let r = pg(
            "pg-bank-rc-computed",
            "read-committed",
            &["-n", "400", "-w", "bank", "--computed-transfers"],
        );
        let (v, report) = check_model(&r.path, Model::Bank, &model_defaults());
        last = report;
        v == Validity::False && last.contains("wrong-total")
    });
    assert!(seen, "no wrong total in 3 runs: {last}");
    let r = pg(
        "pg-bank-ser-computed",
        "serializable",
        &["-n", "300", "-w", "bank", "--computed-transfers"],
    );
    let (v, report) = check_model(&r.path, Model::Bank, &model_defaults());
    assert_eq!(v, Validity::True, "{report}");
}
