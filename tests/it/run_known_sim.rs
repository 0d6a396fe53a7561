//! Known answers of the simulated database, checked by isolde's checker:
//! each level holds at its own model and fails the next stronger one; each
//! bug shows the anomaly it plants.

use crate::support::run_support;

use isolde::check::Workload;
use run_support::{check, eventually, is_valid, run};

const BASE: [&str; 8] = [
    "-n",
    "2000",
    "-p",
    "10",
    "--key-count",
    "4",
    "--max-txn-length",
    "4",
];

fn sim_run(name: &str, extra: &[&str], seed: u32) -> std::path::PathBuf {
    let seed = seed.to_string();
    let mut args = vec!["sim"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&BASE);
    args.extend_from_slice(&["--seed", &seed]);
    run(name, &args).path
}

fn la(path: &std::path::Path, models: &[&str]) -> isolde::check::Report {
    check(path, Workload::ListAppend, models)
}

#[test]
fn strict_serializable_sim_is_strict_serializable() {
    let p = sim_run("ss", &["-i", "strict-serializable"], 1);
    for m in [
        "strict-serializable",
        "serializable",
        "snapshot-isolation",
        "repeatable-read",
        "read-committed",
    ] {
        let r = la(&p, &[m]);
        assert!(is_valid(&r), "{m}: {:?}", r.anomaly_types);
    }
}

#[test]
fn serializable_sim_is_serializable_but_not_strict() {
    let p = sim_run("ser", &["-i", "serializable"], 1);
    for m in ["serializable", "read-committed"] {
        let r = la(&p, &[m]);
        assert!(is_valid(&r), "{m}: {:?}", r.anomaly_types);
    }
    assert!(eventually(3, |i| !is_valid(&la(
        &sim_run("ser-ss", &["-i", "serializable"], i + 1),
        &["strict-serializable"]
    ))));
}

#[test]
fn snapshot_isolation_sim_shows_g2_item_under_serializable() {
    let p = sim_run("si", &["-i", "snapshot-isolation"], 1);
    for m in ["snapshot-isolation", "read-committed"] {
        let r = la(&p, &[m]);
        assert!(is_valid(&r), "{m}: {:?}", r.anomaly_types);
    }
    let r = la(&p, &["serializable"]);
    assert!(!is_valid(&r));
    assert!(
        r.anomaly_types.iter().any(|a| a == "G2-item"),
        "{:?}",
        r.anomaly_types
    );
}

#[test]
fn read_committed_sim_fails_snapshot_isolation() {
    let p = sim_run("rc", &["-i", "read-committed"], 1);
    let r = la(&p, &["read-committed"]);
    assert!(is_valid(&r), "{:?}", r.anomaly_types);
    let r = la(&p, &["snapshot-isolation"]);
    assert!(
        !is_valid(&r),
        "read committed must not pass snapshot isolation"
    );
}

#[test]
fn read_uncommitted_sim_fails_read_committed() {
    let p = sim_run("ru", &["-i", "read-uncommitted"], 1);
    let r = la(&p, &["read-uncommitted"]);
    assert!(is_valid(&r), "{:?}", r.anomaly_types);
    let r = la(&p, &["read-committed"]);
    assert!(!is_valid(&r), "dirty reads must fail read committed");
}

#[test]
fn lost_update_bug_shows_lost_update() {
    for w in [
        ("list-append", Workload::ListAppend),
        ("rw-register", Workload::RwRegister),
    ] {
        let p = sim_run(
            "lu",
            &[
                "-i",
                "snapshot-isolation",
                "--bug",
                "lost-update",
                "-w",
                w.0,
            ],
            1,
        );
        let r = check(&p, w.1, &["snapshot-isolation"]);
        assert!(
            r.anomaly_types.iter().any(|a| a == "lost-update"),
            "{}: {:?}",
            w.0,
            r.anomaly_types
        );
    }
}

#[test]
fn aborted_read_bug_shows_g1a() {
    for w in [
        ("list-append", Workload::ListAppend),
        ("rw-register", Workload::RwRegister),
    ] {
        let p = sim_run(
            "ar",
            &[
                "-i",
                "snapshot-isolation",
                "--bug",
                "aborted-read",
                "-w",
                w.0,
            ],
            1,
        );
        let r = check(&p, w.1, &["read-committed"]);
        assert!(
            r.anomaly_types.iter().any(|a| a == "G1a"),
            "{}: {:?}",
            w.0,
            r.anomaly_types
        );
    }
}

#[test]
fn non_atomic_bug_fails_snapshot_isolation() {
    let p = sim_run(
        "na",
        &["-i", "snapshot-isolation", "--bug", "non-atomic"],
        1,
    );
    let r = la(&p, &["snapshot-isolation"]);
    assert!(
        !is_valid(&r),
        "fractured commits must fail snapshot isolation"
    );
}

#[test]
fn rw_register_sim_levels_hold_at_their_model() {
    for level in [
        "strict-serializable",
        "snapshot-isolation",
        "read-committed",
    ] {
        let p = sim_run("reg", &["-i", level, "-w", "rw-register"], 1);
        let r = check(&p, Workload::RwRegister, &[level]);
        assert!(is_valid(&r), "{level}: {:?}", r.anomaly_types);
    }
}

/// `isolde run` exits like `isolde check`: 0 valid, 1 invalid; `--no-check` 0.
#[test]
fn run_command_exit_codes_follow_the_verdict() {
    let out = run_support::temp_path("exit.jsonl").display().to_string();
    let code = |extra: &[&str]| {
        let mut args = vec![
            "sim",
            "-o",
            &out,
            "-i",
            "snapshot-isolation",
            "-n",
            "1000",
            "--key-count",
            "4",
            "--seed",
            "1",
        ];
        args.extend_from_slice(extra);
        crate::isolde_cli::run::run_command(&run_support::parse(&args)).unwrap()
    };
    assert_eq!(code(&[]), 0, "the default model is the level's own");
    assert_eq!(code(&["-c", "serializable"]), 1);
    assert_eq!(code(&["-c", "serializable", "--no-check"]), 0);
}
