//! `isolde run exec` with the Python SQLite client of examples/.

use crate::support::run_support;

use isolde::check::Workload;
use run_support::{assert_complete, check, is_valid, python_available, run};

fn client() -> String {
    format!("{}/examples/sqlite_client.py", env!("CARGO_MANIFEST_DIR"))
}

fn exec_run(name: &str, workload: &str) -> isolde::run::record::Recorded {
    let db = run_support::temp_path("exec.sqlite").display().to_string();
    let client = client();
    run(
        name,
        &[
            "exec",
            "-w",
            workload,
            "-n",
            "600",
            "-p",
            "5",
            "--key-count",
            "4",
            "--seed",
            "3",
            "--",
            "python3",
            &client,
            &db,
        ],
    )
}

#[test]
fn python_client_records_complete_histories() {
    if !python_available() {
        return;
    }
    for w in ["list-append", "rw-register"] {
        let r = exec_run("exec-rec", w);
        assert_complete(&r, 600, w);
        assert_eq!(r.counts.info, 0, "{w}: {:?}", r.counts);
    }
}

#[test]
fn python_sqlite_client_is_strict_serializable() {
    if !python_available() {
        return;
    }
    let r = exec_run("exec-check", "list-append");
    let rep = check(&r.path, Workload::ListAppend, &["strict-serializable"]);
    assert!(is_valid(&rep), "{:?}", rep.anomaly_types);
}

/// A client that dies or answers `info` gives info outcomes, and the
/// worker continues under a new process id with a fresh client. (A reply
/// that breaks the protocol ends the run instead: tests/it/run_cli.rs.)
#[test]
fn misbehaving_clients_are_info_and_replaced() {
    if !python_available() {
        return;
    }
    let script = run_support::temp_path("bad_client.py");
    std::fs::write(
        &script,
        "import sys, json, os\n\
         n = 0\n\
         for line in sys.stdin:\n\
         \x20   n += 1\n\
         \x20   v = json.loads(line)['value']\n\
         \x20   if n == 3: sys.exit(1)\n\
         \x20   if n == 2: print(json.dumps({'type': 'info', 'error': 'lost'}), flush=True); continue\n\
         \x20   print(json.dumps({'type': 'ok', 'value': [[f, k, v if f != 'r' else None] for f, k, v in v]}), flush=True)\n",
    )
    .unwrap();
    let s = script.display().to_string();
    let r = run(
        "exec-bad",
        &["exec", "-n", "40", "-p", "2", "--", "python3", &s],
    );
    assert!(r.counts.info >= 4, "{:?}", r.counts);
    assert!(r.counts.ok >= 10, "{:?}", r.counts);
    let h = isolde::history::read::read_history_file(&r.path, None).unwrap();
    assert!(
        h.txns.iter().any(|t| t.process >= 4),
        "new process ids after info"
    );
}
