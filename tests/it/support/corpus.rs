//! Where Elle's test histories are (../shared/conformance, beside the
//! checkout): the one locator, included by the integration tests and, as
//! `crate::corpus`, by the library's unit tests.
//!
//! Without the corpus a test skips with a message, except under CI
//! (`CI` set), where a missing corpus is a failure: CI must never pass by
//! checking nothing.

// Each test binary uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The folders that hold histories, relative to the corpus root.
pub const FOLDERS: [&str; 4] = [
    "list-append",
    "list-append/samples",
    "rw-register",
    "rw-register/samples",
];

/// The corpus root, or `None` (after saying so) when it is missing outside CI.
pub fn root() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance");
    if dir.is_dir() {
        Some(dir)
    } else if std::env::var_os("CI").is_some() {
        panic!("the conformance corpus is missing at {}", dir.display());
    } else {
        eprintln!("skipping: no conformance corpus at {}", dir.display());
        None
    }
}

/// One file of the corpus, e.g. `list-append/unfindable-g-single.edn`.
pub fn file(relative: &str) -> Option<PathBuf> {
    let p = root()?.join(relative);
    assert!(p.exists(), "{} is not in the corpus", p.display());
    Some(p)
}

/// Every file in `folders` (of [`FOLDERS`]) whose name ends with one of
/// `suffixes`, sorted; empty when the corpus is missing outside CI.
pub fn files(folders: &[&str], suffixes: &[&str]) -> Vec<PathBuf> {
    let Some(root) = root() else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = folders
        .iter()
        .filter_map(|f| std::fs::read_dir(root.join(f)).ok())
        .flat_map(|rd| rd.flatten().map(|e| e.path()))
        .filter(|p| {
            let name = p.to_string_lossy();
            suffixes.iter().any(|s| name.ends_with(s))
        })
        .collect();
    out.sort();
    out
}

/// The histories Elle's checkers read: EDN files and elle-cli JSON sources.
pub fn histories(folders: &[&str]) -> Vec<PathBuf> {
    files(folders, &[".edn", ".source.json"])
}
