//! elle-cli's non-transactional models through the binary: elle-cli's own
//! histories with the exit codes of its test.sh (tests/data/elle-cli), the
//! output shapes, the flags, and bad input.

use std::path::PathBuf;
use std::process::{Command, Output};

fn isolde(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_isolde"))
        .args(args)
        .output()
        .expect("isolde runs")
}

fn data(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/elle-cli")
        .join(name);
    assert!(p.exists(), "missing test data {}", p.display());
    p.to_string_lossy().into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// elle-cli's test.sh, case by case: (arguments before the file, file, exit code).
const TEST_SH: &[(&[&str], &str, i32)] = &[
    (&["--model", "counter"], "counter.edn", 0),
    (&["--model", "counter"], "counter.json", 0),
    (&["--model", "set-full"], "set_full.edn", 1),
    (&["--model", "set-full"], "set_full.json", 1),
    (&["--model", "set"], "set.edn", 0),
    (&["--model", "bank"], "bank.edn", 0),
    (&["--model", "bank"], "bank.json", 0),
    (&["--model", "bank"], "bank-tidb.edn", 1),
    (&["--model", "bank"], "bank-neg.edn", 0),
    (&["--model", "bank"], "bank-negative-balances.json", 1),
    (
        &["--model", "long-fork", "--group-size", "3"],
        "long-fork.edn",
        1,
    ),
];

#[test]
fn elle_cli_histories_get_test_sh_results() {
    for (flags, file, code) in TEST_SH {
        let path = data(file);
        let mut args: Vec<&str> = flags.to_vec();
        args.push(&path);
        let o = isolde(&args);
        let verdict = if *code == 0 { "true" } else { "false" };
        assert_eq!(
            o.status.code(),
            Some(*code),
            "{file}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(stdout(&o), format!("{path}\t{verdict}\n"), "{file}");
    }
}

#[test]
fn the_check_subcommand_takes_the_same_models() {
    let o = isolde(&["check", "-m", "counter", &data("counter.edn")]);
    assert_eq!(o.status.code(), Some(0));
    // No HTML report for these models: refused rather than silently skipped.
    let o = isolde(&[
        "check",
        "-m",
        "counter",
        "-d",
        "/nonexistent",
        &data("counter.edn"),
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn negative_balances_pass_when_allowed_and_totals_can_be_given() {
    let f = data("bank-negative-balances.json");
    assert_eq!(isolde(&["-m", "bank", "-n", &f]).status.code(), Some(0));
    assert_eq!(
        isolde(&[
            "-m",
            "bank",
            "--allow-negative-balances",
            "--max-transfer",
            "5",
            &f
        ])
        .status
        .code(),
        Some(0)
    );
    // Every read of bank.edn totals 100, so any other total is refused.
    let o = isolde(&["-m", "bank", "--total-amount", "99", &data("bank.edn")]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn verbose_prints_jepsens_result_map() {
    let o = isolde(&["-m", "bank", "-v", &data("bank-tidb.edn")]);
    assert_eq!(o.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(j["valid?"], false);
    assert!(j["read-count"].as_u64().unwrap() > 0);
    assert!(j["error-count"].as_u64().unwrap() > 0);
    assert_eq!(j["first-error"]["type"], "wrong-total");
    assert!(j["errors"]["wrong-total"]["count"].as_u64().unwrap() > 0);

    let o = isolde(&["-m", "set-full", "-v", &data("set_full.edn")]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(j["lost-count"], 293);
    assert_eq!(j["stable-count"], 0);
    assert_eq!(j["attempt-count"], 293);

    let o = isolde(&["-m", "counter", "-v", &data("counter.edn")]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(j["valid?"], true);
    assert_eq!(j["errors"], serde_json::json!([]));
}

#[test]
fn explain_names_the_bad_items() {
    let o = isolde(&["-m", "long-fork", "-g", "3", "-x", &data("long-fork.edn")]);
    let s = stdout(&o);
    assert!(s.contains("1 forks"), "{s}");
    assert!(s.contains("op 1 ") && s.contains("op 3 "), "{s}");
}

#[test]
fn bad_input_is_an_error_with_its_position() {
    let dir = std::env::temp_dir().join(format!("isolde-models-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.edn");
    std::fs::write(
        &f,
        "{:type :invoke, :f :read, :process 0}\n{:type :ok, :f :read, :process 0, :value 7}\n",
    )
    .unwrap();
    let f = f.to_string_lossy().into_owned();
    for model in ["bank", "counter", "set", "set-full"] {
        let o = isolde(&["-m", model, &f]);
        let err = String::from_utf8_lossy(&o.stderr);
        if model == "counter" {
            // A counter read of 7 with no adds: a well-formed, invalid history.
            assert_eq!(o.status.code(), Some(1), "{model}: {err}");
            continue;
        }
        assert_eq!(o.status.code(), Some(4), "{model}: {err}");
        assert!(
            err.contains(&format!("{f}:2:42: expected")),
            "{model}: {err}"
        );
    }
    let o = isolde(&["-m", "counter", "-"]);
    assert_eq!(o.status.code(), Some(0), "empty stdin: no reads, valid");
    std::fs::remove_dir_all(&dir).ok();
}
