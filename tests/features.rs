//! A binary built without some default features (see Cargo.toml's
//! `[features]`) keeps its command line and names the missing feature.
//! Each test runs only in a build that leaves its feature out, e.g.
//! `cargo test --release --no-default-features --test features` (CI does).

use std::path::PathBuf;
use std::process::{Command, Output};

fn isolde(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_isolde"))
        .args(args)
        .output()
        .expect("isolde runs")
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("isolde-features-{}-{name}", std::process::id()))
}

/// Runs `isolde run ARGS` with `--out`; asserts it failed naming `feature`
/// and recorded nothing.
#[allow(dead_code)]
fn run_fails_naming(feature: &str, args: &[&str]) {
    let out = temp(&format!("{feature}.jsonl"));
    let out_s = out.to_string_lossy();
    let mut v = vec!["run", args[0], "--out", &out_s, "-n", "1"];
    v.extend_from_slice(&args[1..]);
    let o = isolde(&v);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(err.contains(&format!("built without {feature}")), "{err}");
    assert!(!out.exists(), "no history is recorded");
}

#[cfg(not(feature = "run-sqlite"))]
#[test]
fn run_sqlite_without_its_feature_names_it() {
    run_fails_naming("run-sqlite", &["sqlite"]);
}

#[cfg(not(feature = "run-postgres"))]
#[test]
fn run_postgres_without_its_feature_names_it() {
    run_fails_naming(
        "run-postgres",
        &[
            "postgres",
            "--url",
            "postgres://postgres@127.0.0.1:5432/test",
        ],
    );
}

#[cfg(not(feature = "run-mysql"))]
#[test]
fn run_mysql_without_its_feature_names_it() {
    run_fails_naming(
        "run-mysql",
        &["mysql", "--url", "mysql://root@127.0.0.1:3306/test"],
    );
}

/// Without `png`, `-p png` fails before the report directory is made, and
/// the verdict is unchanged; SVG reports still work.
#[cfg(not(feature = "png"))]
#[test]
fn png_plots_without_the_feature_fail_and_svg_still_works() {
    let history = temp("g1c.edn");
    std::fs::write(
        &history,
        "{:index 0, :type :ok, :process 0, :value [[:append :x 1] [:r :y [1]]]}\n\
         {:index 1, :type :ok, :process 1, :value [[:append :x 2] [:append :y 1]]}\n\
         {:index 2, :type :ok, :process 2, :value [[:r :x [1 2]]]}\n",
    )
    .unwrap();
    let h = history.to_string_lossy();
    let png_dir = temp("png-report");
    let o = isolde(&["check", "-d", &png_dir.to_string_lossy(), "-p", "png", &h]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("built without png"), "{err}");
    assert_ne!(o.status.code(), Some(0));
    assert!(!png_dir.exists(), "nothing is written");
    let svg_dir = temp("svg-report");
    let o = isolde(&["check", "-d", &svg_dir.to_string_lossy(), &h]);
    assert_eq!(o.status.code(), Some(1), "G1c: invalid");
    assert!(svg_dir.join("G1c/1.svg").exists());
    let _ = std::fs::remove_dir_all(svg_dir);
    let _ = std::fs::remove_file(history);
}
