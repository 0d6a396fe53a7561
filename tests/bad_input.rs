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
