//! Replays the fuzz corpus deterministically: every file of
//! `fuzz/corpus/<target>/` (seeds and what fuzzing kept) and of
//! `fuzz/artifacts/<target>/` (inputs that once crashed, kept as
//! regressions) goes through the same entry point the cargo-fuzz target
//! calls (`fuzz/src/lib.rs`). None may panic; typed errors are fine.

#[path = "../../fuzz/src/lib.rs"]
mod entry;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// The entry point of each target, by directory name.
fn target(name: &str) -> Option<fn(&[u8])> {
    Some(match name {
        "read_edn" => entry::read_edn,
        "read_json" => entry::read_json,
        "read_jsonl" => entry::read_jsonl,
        "read_onelite" => entry::read_onelite,
        "read_any" => entry::read_any,
        "check_list_append" => entry::check_list_append,
        "check_rw_register" => entry::check_rw_register,
        "schedule" => entry::schedule,
        _ => return None,
    })
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    out.retain(|p| p.is_file());
    out.sort();
    out
}

/// Runs every file under `root/<target>/`; returns (files run, failures).
fn replay(root: &str) -> (usize, Vec<String>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(root);
    let mut run = 0;
    let mut failures = Vec::new();
    for dir in files_and_dirs(&root) {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let f = target(&name).unwrap_or_else(|| panic!("{}: no fuzz target {name}", dir.display()));
        for file in files(&dir) {
            let data = std::fs::read(&file).unwrap();
            run += 1;
            if catch_unwind(AssertUnwindSafe(|| f(&data))).is_err() {
                failures.push(file.display().to_string());
            }
        }
    }
    (run, failures)
}

fn files_and_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    dirs.retain(|p| p.is_dir());
    dirs.sort();
    dirs
}

#[test]
fn every_corpus_input_is_handled_without_panic() {
    let (run, failures) = replay("fuzz/corpus");
    assert!(run > 100, "only {run} corpus files: is fuzz/corpus there?");
    assert!(failures.is_empty(), "these inputs panic: {failures:#?}");
}

#[test]
fn every_fixed_crash_stays_fixed() {
    let (_, failures) = replay("fuzz/artifacts");
    assert!(
        failures.is_empty(),
        "these inputs panic again: {failures:#?}"
    );
}

#[test]
fn every_target_has_seeds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    for t in [
        "read_edn",
        "read_json",
        "read_jsonl",
        "read_onelite",
        "read_any",
        "check_list_append",
        "check_rw_register",
        "schedule",
    ] {
        assert!(target(t).is_some());
        assert!(!files(&root.join(t)).is_empty(), "no seeds for {t}");
    }
}

/// Found by fuzzing (`fuzz/artifacts/read_jsonl/minimized-19-digit-integer`):
/// the single-line fast path of the EDN/JSON reader overflowed on a 19th
/// digit. Integers of 19 digits and more must go to the general path and
/// come out exact: a long when they fit, a BigInt when they do not.
#[test]
fn integers_of_19_digits_and_more_are_read_exactly() {
    use isolde::history::read::{read_history, Format};
    use isolde::history::{Datum, Observed};
    let edn = "{:index 0 :type :ok :process 0 :value [[:append 9223372036854775807 9999999999999999999] [:r 9223372036854775807 [9999999999999999999]]]}\n";
    let json = "{\"index\":0,\"type\":\"ok\",\"process\":0,\"value\":[[\"append\",9223372036854775807,9999999999999999999],[\"r\",9223372036854775807,[9999999999999999999]]]}\n";
    for (text, format) in [(edn, Format::Edn), (json, Format::Json)] {
        let h = read_history(text.as_bytes(), "t", Some(format)).unwrap();
        assert_eq!(h.keys.datum(h.mops[0].key), &Datum::Int(i64::MAX));
        let Observed::Scalar(v) = h.mops[0].value else {
            panic!("an append has a scalar value");
        };
        let big = Datum::BigInt("9999999999999999999".into());
        assert_eq!(h.values.datum(v), &big);
        let read = h.list(h.mops[1].value).unwrap();
        assert_eq!(read, [v], "the read holds the appended value");
    }
}
