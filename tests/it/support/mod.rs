//! What the integration tests share.
#![allow(dead_code)]

pub mod corpus;
pub mod duplicates_gen;
pub mod oracle;
pub mod register_gen;
pub mod run_support;

/// `PROPTEST_CASES`, else `release` cases in a release build and a tenth
/// of that in a debug build (same properties, smaller sample).
pub fn cases(release: u32) -> u32 {
    let default = if cfg!(debug_assertions) {
        release / 10
    } else {
        release
    };
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A generated EDN history, read (a generator bug if it does not parse).
pub fn parse_edn(edn: &str) -> isolde::history::History {
    isolde::history::read::read_history(edn.as_bytes(), "generated", None)
        .unwrap_or_else(|e| panic!("generated EDN parses: {e}\n{edn}"))
}
