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
    (
        &["--model", "cas-register"],
        "knossos/cas-register/bad/bad-analysis.edn",
        1,
    ),
    (
        &["--model", "cas-register"],
        "knossos/cas-register/bad/cas-failure.edn",
        1,
    ),
    (
        &["--model", "cas-register"],
        "knossos/cas-register/bad/mongodb-v0-ack-rollback-6.edn",
        1,
    ),
    (
        &["--model", "cas-register"],
        "knossos/cas-register/bad/rethink-fail.edn",
        1,
    ),
    (
        &["--model", "cas-register"],
        "knossos/cas-register/bad/rethink-fail-minimal.edn",
        1,
    ),
    (
        &["--model", "cas-register"],
        "knossos/cas-register/bad/rethink-fail-smaller.edn",
        1,
    ),
    (
        &["--model", "cas-register"],
        "knossos/cas-register/good/memstress3-9.edn",
        0,
    ),
    (
        &["--model", "cas-register"],
        "knossos/cas-register/good/memstress3-9.json",
        0,
    ),
    (&["--model", "mutex"], "knossos/mutex/bad/etcd.edn", 1),
    (&["--model", "mutex"], "knossos/mutex/bad/etcd.json", 1),
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
}

/// A scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("isolde-models-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A sequential history: two good reads, then one that saw 0_2 but not 0_1.
const SEQUENTIAL: &str = "{:type :invoke, :f :write, :value 0, :process 0}\n\
{:type :ok, :f :write, :value 0, :process 0}\n\
{:type :invoke, :f :read, :value 0, :process 1}\n\
{:type :ok, :f :read, :value [0 [nil \"0_1\" \"0_0\"]], :process 1}\n\
{:type :invoke, :f :read, :value 0, :process 1}\n\
{:type :ok, :f :read, :value [0 [\"0_2\" \"0_1\" \"0_0\"]], :process 1}\n\
{:type :invoke, :f :read, :value 0, :process 1}\n\
{:type :ok, :f :read, :value [0 [\"0_2\" nil \"0_0\"]], :process 1}\n";

#[test]
fn comments_and_sequential_find_their_bad_reads() {
    // elle-cli's example: the read saw 430 but not 425, which completed
    // before 430's write began.
    let o = isolde(&["-m", "comments", "-v", &data("comments.edn")]);
    assert_eq!(o.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(j["errors"][0]["missing"], serde_json::json!([425]));
    assert_eq!(j["errors"][0]["index"], 6);

    let dir = scratch("sequential");
    let f = dir.join("sequential.edn");
    std::fs::write(&f, SEQUENTIAL).unwrap();
    let f = f.to_string_lossy().into_owned();
    let o = isolde(&["-m", "sequential", &f]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), format!("{f}\tfalse\n"));
    let o = isolde(&["-m", "sequential", "-v", &f]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(
        (j["bad-count"].as_u64(), j["all-count"].as_u64()),
        (Some(1), Some(1))
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `-d` writes each model's page: the plot where the model has one, its
/// bad reads listed, Jepsen's result map beside it, the manifest.
#[test]
fn directory_writes_a_report_page_for_each_model() {
    let dir = scratch("report");
    let seq = dir.join("sequential.edn");
    std::fs::write(&seq, SEQUENTIAL).unwrap();
    let seq = seq.to_string_lossy().into_owned();
    // (flags, history, exit, pieces the page must hold)
    let cases: &[(&[&str], String, i32, &[&str])] = &[
        (
            &["-m", "bank"],
            data("bank-tidb.edn"),
            1,
            &[
                "id=\"bank-totals\"",
                "<svg",
                "expected total",
                "<td>wrong-total</td>",
            ],
        ),
        (
            &["-m", "bank"],
            data("bank.edn"),
            0,
            &[
                "id=\"bank-totals\"",
                "<svg",
                "<p id=\"bad-reads\">None.</p>",
            ],
        ),
        (
            &["-m", "counter"],
            data("counter.edn"),
            0,
            &["id=\"counter-bounds\"", "<svg", "upper bound"],
        ),
        (&["-m", "set"], data("set.edn"), 0, &["id=\"bad-elements\""]),
        (
            &["-m", "set-full"],
            data("set_full.edn"),
            1,
            &["id=\"set-full-timeline\"", "<svg", "<td>lost</td>"],
        ),
        (
            &["-m", "long-fork", "-g", "3"],
            data("long-fork.edn"),
            1,
            &["<table id=\"forks\">"],
        ),
        (
            &["-m", "comments"],
            data("comments.edn"),
            1,
            &["<table id=\"bad-reads\">", "<td>425</td>"],
        ),
        (
            &["-m", "sequential"],
            seq.clone(),
            1,
            &[
                "<table id=\"bad-reads\">",
                "[0 [&quot;0_2&quot; nil &quot;0_0&quot;]]",
            ],
        ),
    ];
    for (i, (flags, file, code, pieces)) in cases.iter().enumerate() {
        let out = dir.join(format!("r{i}"));
        let mut args: Vec<&str> = flags.to_vec();
        let out_s = out.to_string_lossy().into_owned();
        args.extend(["-d", &out_s, file]);
        let o = isolde(&args);
        assert_eq!(
            o.status.code(),
            Some(*code),
            "{file}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let page = std::fs::read_to_string(out.join("index.html")).expect("index.html");
        roxmltree::Document::parse_with_options(
            &page,
            roxmltree::ParsingOptions {
                allow_dtd: true,
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{file}: not well-formed: {e}"));
        let verdict = if *code == 0 {
            "valid? true"
        } else {
            "valid? false"
        };
        assert!(page.contains(verdict), "{file}");
        for p in *pieces {
            assert!(page.contains(p), "{file}: no {p}");
        }
        let j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap())
                .unwrap();
        assert_eq!(j["valid?"], *code == 0, "{file}");
        assert!(out.join(".isolde-report").exists(), "{file}: manifest");
    }
    // Several histories: one page each, and an index listing them.
    let out = dir.join("several");
    let out_s = out.to_string_lossy().into_owned();
    let o = isolde(&[
        "-m",
        "bank",
        "-d",
        &out_s,
        &data("bank.edn"),
        &data("bank-tidb.edn"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        index.contains("bank.edn/index.html") && index.contains("bank-tidb.edn/index.html"),
        "{index}"
    );
    assert!(out.join("bank-tidb.edn/index.html").exists());
    std::fs::remove_dir_all(&dir).ok();
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
    for model in [
        "bank",
        "counter",
        "set",
        "set-full",
        "comments",
        "sequential",
    ] {
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

/// The op Knossos's own tests (test/knossos/wgl_test.clj) blame in these
/// histories, and the last ok op before it.
#[test]
fn cas_register_blames_the_op_knossos_blames() {
    let cases: &[(&str, i64, Option<i64>)] = &[
        ("knossos/cas-register/bad/bad-analysis.edn", 14, Some(11)),
        ("knossos/cas-register/bad/cas-failure.edn", 491, Some(478)),
        (
            "knossos/cas-register/bad/rethink-fail-minimal.edn",
            4,
            Some(1),
        ),
        (
            "knossos/cas-register/bad/rethink-fail-smaller.edn",
            217,
            Some(183),
        ),
    ];
    for (file, op, previous) in cases {
        let o = isolde(&["check", "--model", "cas-register", "-v", &data(file)]);
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        assert_eq!(j["valid?"], false, "{file}");
        assert_eq!(j["op"]["index"], *op, "{file}");
        assert_eq!(j["previous-ok"]["index"].as_i64(), *previous, "{file}");
        assert!(!j["final-paths"].as_array().unwrap().is_empty(), "{file}");
    }
    // cas-failure: the one path Knossos's test names among ours.
    let o = isolde(&[
        "-m",
        "cas-register",
        "-v",
        &data("knossos/cas-register/bad/cas-failure.edn"),
    ]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(j["final-paths"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p[0]["op"]["index"] == 472
            && p[1]["model"]["msg"] == "can't read 0 from register 2"));
    let o = isolde(&["-m", "mutex", "-x", &data("knossos/mutex/bad/etcd.edn")]);
    let text = stdout(&o);
    assert!(
        text.contains("cannot be placed: op 1119 (ok acquire nil, process 0"),
        "{text}"
    );
    assert!(
        text.contains("locked after op 1109: already held"),
        "{text}"
    );
}

#[test]
fn linearizability_input_errors_and_budget() {
    let dir = std::env::temp_dir().join(format!("isolde-lin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.edn");
    std::fs::write(
        &bad,
        "{:type :invoke, :f :read, :process 0}\n{:type :invoke, :f :write, :value 1, :process 0}\n",
    )
    .unwrap();
    let o = isolde(&["-m", "cas-register", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(4));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.edn:2:"), "{err}");
    assert!(
        err.contains("invoked again while its call at line 1 is still open"),
        "{err}"
    );
    let o = isolde(&[
        "-m",
        "mutex",
        &data("knossos/cas-register/bad/bad-analysis.edn"),
    ]);
    assert_eq!(o.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&o.stderr).contains("expected :f to be acquire or release"));
    // Twelve concurrent writes then an impossible read: no linearization;
    // a zero time limit stops the search at once.
    let mut h = String::new();
    for p in 0..12 {
        h += &format!("{{:type :invoke, :f :write, :value {p}, :process {p}}}\n");
    }
    h += "{:type :invoke, :f :read, :process 99}\n{:type :ok, :f :read, :value 77, :process 99}\n";
    let slow = dir.join("slow.edn");
    std::fs::write(&slow, h).unwrap();
    let o = isolde(&[
        "-m",
        "cas-register",
        "--solver-timeout",
        "0",
        "-v",
        slow.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stdout(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["valid?"], "unknown");
    assert_eq!(j["cause"], "time limit");
    let o = isolde(&["-m", "cas-register", slow.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    std::fs::remove_dir_all(&dir).ok();
}

/// Jepsen's independent keys (`[key value]` tuples, as its etcd test writes
/// them): each key is its own register, as Jepsen's independent checker
/// wraps Knossos. Key 1 reads 4, which only key 2's failed CAS meant to
/// write; key 2 is fine.
#[test]
fn independent_keys_are_checked_key_by_key() {
    let dir = std::env::temp_dir().join(format!("isolde-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("keyed.edn");
    std::fs::write(
        &f,
        "{:type :invoke, :f :write, :value [1 3], :process 0}
{:type :ok, :f :write, :value [1 3], :process 0}
{:type :invoke, :f :cas, :value [2 [nil 4]], :process 1}
{:type :fail, :f :cas, :value [2 [nil 4]], :process 1}
{:type :invoke, :f :read, :value [1 nil], :process 1}
{:type :ok, :f :read, :value [1 4], :process 1}
{:type :invoke, :f :read, :value [2 nil], :process 0}
{:type :ok, :f :read, :value [2 nil], :process 0}
",
    )
    .unwrap();
    let o = isolde(&["-m", "cas-register", "-v", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["failures"], serde_json::json!([1]));
    assert_eq!(j["results"]["1"]["op"]["value"], 4);
    assert_eq!(j["results"]["2"]["valid?"], true);
    let report = dir.join("report");
    let o = isolde(&[
        "-m",
        "cas-register",
        "-d",
        report.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let page = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(
        page.contains("Key 1: calls per process"),
        "the failing key's timeline"
    );
    assert!(page.contains("key 1:"), "the -x text names the key");
    std::fs::remove_dir_all(&dir).ok();
}
