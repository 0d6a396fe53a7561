//! Histories that do not fit the model are refused, not judged; verdicts
//! that are not yes or no say why. Each test runs the built binary.

use std::path::PathBuf;
use std::process::{Command, Output};

fn isolde(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_isolde"))
        .args(args)
        .output()
        .expect("isolde runs")
}

/// Writes `text` to a fresh file named `name` and returns its path.
fn history(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("isolde-bad-input-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p: PathBuf = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_token_that_is_not_edn_is_a_read_error_with_its_position() {
    let f = history(
        "not-edn.edn",
        "{:type :invoke, :process 0, :value [[:append :x 1]]}\n\
         {:type :ok, :process 0, :value [[:append :x @@]]}\n",
    );
    let o = isolde(&["check", &f]);
    assert_eq!(o.status.code(), Some(4), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(err.contains("not-edn.edn:2:45:"), "{err}");
    assert!(err.contains("got `@@`, which is not EDN"), "{err}");
    assert!(o.stdout.is_empty(), "no verdict: {}", stdout(&o));
}

#[test]
fn a_read_that_is_not_a_list_is_refused_under_list_append() {
    let f = history(
        "scalar-read.edn",
        "{:type :invoke, :process 0, :f :txn, :value [[:append :x 1]]}\n\
         {:type :ok, :process 0, :f :txn, :value [[:append :x 1]]}\n\
         {:type :invoke, :process 1, :f :txn, :value [[:r :x nil]]}\n\
         {:type :ok, :process 1, :f :txn, :value [[:r :x 5]]}\n",
    );
    for args in [vec!["check", "-m", "list-append"], vec!["check"]] {
        let o = isolde(&[args.as_slice(), &[f.as_str()]].concat());
        assert_eq!(o.status.code(), Some(4), "{args:?}: {}", stdout(&o));
        let err = stderr(&o);
        assert!(
            err.contains("scalar-read.edn:4: micro-op [:r :x 5] (number 1 of {:index 3,"),
            "{err}"
        );
        assert!(err.contains("does not fit the list-append model"), "{err}");
        assert!(o.stdout.is_empty(), "no verdict: {}", stdout(&o));
    }
}

#[test]
fn a_list_append_history_is_refused_as_registers() {
    let f = history(
        "appends.edn",
        "{:type :invoke, :process 0, :value [[:append :x 1]]}\n\
         {:type :ok, :process 0, :value [[:append :x 1]]}\n\
         {:type :invoke, :process 1, :value [[:r :x nil]]}\n\
         {:type :ok, :process 1, :value [[:r :x [1]]]}\n",
    );
    let o = isolde(&["check", "-m", "rw-register", &f]);
    assert_eq!(o.status.code(), Some(4), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("appends.edn:2: micro-op [:append :x 1]"),
        "{err}"
    );
    assert!(err.contains("rw-register model (given with -m)"), "{err}");
    // The same history as what it is: valid, and the note says the model was inferred.
    let o = isolde(&["check", "-v", &f]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        v["notes"][0]
            .as_str()
            .unwrap()
            .contains("checked as list-append, inferred"),
        "{v}"
    );
    let o = isolde(&["check", "-x", &f]);
    assert!(
        stdout(&o).contains("Note: no model given (-m): checked as list-append"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_register_history_of_numeric_reads_is_inferred_as_registers() {
    let f = history(
        "reads.edn",
        "{:type :invoke, :process 0, :value [[:r :x nil]]}\n\
         {:type :ok, :process 0, :value [[:r :x 5]]}\n",
    );
    let o = isolde(&["check", "-x", &f]);
    // Nobody wrote 5: a garbage read, so `false` (exit 1).
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("garbage-read"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("checked as rw-register, inferred"),
        "{}",
        stdout(&o)
    );
}

/// jepsen.history refuses to pair a process's second invocation while its
/// first runs (`::double-invoke`); Elle needs the pairs for real-time order
/// only, and its own tests check such histories at serializable.
#[test]
fn two_running_invocations_of_one_process_are_refused_when_real_time_order_is_needed() {
    let f = history(
        "double-invoke.edn",
        "{:type :invoke, :process 0, :value [[:append :x 1]]}\n\
         {:type :invoke, :process 0, :value [[:append :x 2]]}\n\
         {:type :ok, :process 0, :value [[:append :x 2]]}\n",
    );
    let o = isolde(&["check", &f]);
    assert_eq!(o.status.code(), Some(4), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains(
            "double-invoke.edn:2: process 0 invokes op 1 while its op 0 (line 1) has not completed"
        ),
        "{err}"
    );
    let o = isolde(&["check", "-c", "serializable", "-m", "list-append", "-v", &f]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        v["notes"]
            .to_string()
            .contains("process 0 invokes op 1 (line 2)"),
        "{v}"
    );
}

#[test]
fn an_unknown_verdict_says_why() {
    // One committed append and nothing else: no edge at all.
    let f = history(
        "lonely.edn",
        "{:type :invoke, :process 0, :f :txn, :value [[:append :x 1]]}\n\
         {:type :ok, :process 0, :f :txn, :value [[:append :x 1]]}\n",
    );
    let o = isolde(&["check", "-m", "list-append", "-x", &f]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stdout(&o).contains("Note: unknown: the transaction graph is empty"),
        "{}",
        stdout(&o)
    );
    let o = isolde(&["check", "-m", "list-append", "-v", &f]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        v["notes"]
            .to_string()
            .contains("transaction graph is empty"),
        "{v}"
    );
    // A read of a failed append under read-uncommitted: G1a is found but not
    // prohibited there, so the verdict is unknown, and the note says so.
    let f = history(
        "g1a.edn",
        "{:type :invoke, :process 0, :f :txn, :value [[:append :x 1]]}\n\
         {:type :fail, :process 0, :f :txn, :value [[:append :x 1]]}\n\
         {:type :invoke, :process 1, :f :txn, :value [[:r :x nil]]}\n\
         {:type :ok, :process 1, :f :txn, :value [[:r :x [1]]]}\n",
    );
    let o = isolde(&[
        "check",
        "-m",
        "list-append",
        "-c",
        "read-uncommitted",
        "-x",
        &f,
    ]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stdout(&o).contains("transaction graph is empty"),
        "{}",
        stdout(&o)
    );
}
