//! Shared helpers of the `run_*` integration tests.
#![allow(dead_code)]

use crate::isolde_cli::run::RunArgs;
use clap::Parser;
use isolde::check::{check_history, CheckOptions, Report, Validity, Workload};
use isolde::run::record::{record, Recorded};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser)]
#[command(name = "isolde-run")]
struct Cli {
    #[command(flatten)]
    run: RunArgs,
}

/// Parses `isolde run` arguments (without the `run`).
pub fn parse(args: &[&str]) -> RunArgs {
    let mut v = vec!["isolde-run"];
    v.extend_from_slice(args);
    Cli::try_parse_from(v)
        .unwrap_or_else(|e| panic!("bad test arguments {args:?}: {e}"))
        .run
}

/// A fresh path for a history file.
pub fn temp_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "isolde-test-{}-{}-{name}",
        std::process::id(),
        isolde::run::run_id()
    ))
}

/// Records a run; `args` are the target and its options, `--out` is added.
pub fn run(name: &str, args: &[&str]) -> Recorded {
    let out = temp_path(&format!("{name}.jsonl"));
    let out_s = out.display().to_string();
    // Right after the target: exec's trailing `-- CMD...` must stay last.
    let mut v: Vec<&str> = args[..1].to_vec();
    v.extend_from_slice(&["--out", &out_s]);
    v.extend_from_slice(&args[1..]);
    record(&parse(&v).config()).unwrap_or_else(|e| panic!("run {args:?} failed: {e:#}"))
}

/// Checks a recorded history against `models`.
pub fn check(path: &std::path::Path, workload: Workload, models: &[&str]) -> Report {
    let h = isolde::history::read::read_history_file(path, None)
        .unwrap_or_else(|e| panic!("history {} unreadable: {e}", path.display()));
    let opts = CheckOptions {
        workload,
        workload_given: true,
        models: Some(models.iter().map(|s| s.to_string()).collect()),
        ..Default::default()
    };
    check_history(&h, &opts)
}

/// Asserts that a run of `txns` transactions kept every one of them and
/// the final read (ok, fail or info), that over 100 committed, and that the
/// file reads back whole.
pub fn assert_complete(r: &Recorded, txns: u64, what: &str) {
    let c = &r.counts;
    assert_eq!(c.ok + c.fail + c.info, txns + 1, "{what}: {c:?}");
    assert!(c.ok > 100, "{what}: {c:?}");
    let h = isolde::history::read::read_history_file(&r.path, None).unwrap();
    assert_eq!(h.txns.len() as u64, txns + 1, "{what}");
}

pub fn is_valid(r: &Report) -> bool {
    r.valid == Validity::True
}

/// True when a server listens on `addr`. When it does not: under CI
/// (`CI=true`) the test fails; elsewhere it is skipped with a message.
pub fn server_up(name: &str, addr: &str) -> bool {
    let a: SocketAddr = addr.parse().expect("socket address");
    if TcpStream::connect_timeout(&a, Duration::from_secs(2)).is_ok() {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{name} is not reachable on {addr}, and CI=true: this test must run");
    }
    eprintln!("SKIPPED: {name} is not reachable on {addr} (set CI=true to make this a failure)");
    false
}

/// Runs `attempt` up to `tries` times until it returns true (for anomalies
/// that a short run may miss); returns whether it ever did.
pub fn eventually(tries: u32, attempt: impl FnMut(u32) -> bool) -> bool {
    (0..tries).any(attempt)
}

/// Whether python3 (the example exec clients' language) runs here; under
/// CI its absence is a failure, never a skip.
pub fn python_available() -> bool {
    let ok = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("python3 is missing, and CI=true: this test must run");
        }
        eprintln!("SKIPPED: python3 not found");
    }
    ok
}

/// Checks a recorded model-workload history (`-w bank` ...) with the
/// model's checker, as `isolde run` does: (verdict, readable report).
pub fn check_model(
    path: &std::path::Path,
    model: isolde::models::Model,
    options: &isolde::models::Options,
) -> (Validity, String) {
    let ops = isolde::models::read_ops_file(path, None)
        .unwrap_or_else(|e| panic!("history {} unreadable: {e}", path.display()));
    let checked = isolde::models::check(model, &ops, options)
        .unwrap_or_else(|e| panic!("history {} does not fit: {e}", path.display()));
    (checked.valid(), checked.explain(&ops))
}

/// The model checker's options matching `isolde run`'s defaults (bank's
/// total 100, long-fork's groups of 2).
pub fn model_defaults() -> isolde::models::Options {
    isolde::models::Options {
        bank: isolde::models::bank::BankOptions {
            negative_balances: false,
            total_amount: Some(100),
        },
        group_size: 2,
        ..Default::default()
    }
}
