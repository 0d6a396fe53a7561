//! isolde: a black-box checker of transactional isolation.
//!
//! Give it a history (what clients asked a database and what it answered)
//! and the consistency models the database claims; it infers the
//! dependencies between transactions and reports the anomalies that rule
//! models out, like Jepsen's Elle.
//!
//! Data flows one way: `history` (parse) → `workload` (infer) → `graph`
//! (build, search) → `model` (judge) → `explain` (render). See
//! ARCHITECTURE.md. The items re-exported here are the embedding API; the
//! modules below them are public for the binary and the tests.
//!
//! ```
//! use isolde::{check, read_history, CheckOptions, Validity};
//!
//! // T1 appends 2 to x and 1 to y; T2 appends 1 to x and reads y = [1].
//! // The final read of x says T2's append came first: a G1c cycle.
//! let edn = "{:index 0, :type :ok, :process 0, :value [[:append :x 1] [:r :y [1]]]}
//!            {:index 1, :type :ok, :process 1, :value [[:append :x 2] [:append :y 1]]}
//!            {:index 2, :type :ok, :process 2, :value [[:r :x [1 2]]]}";
//! let history = read_history(edn.as_bytes(), "example", None)?;
//! let options = CheckOptions {
//!     models: Some(vec!["serializable".into()]),
//!     ..Default::default()
//! };
//! let report = check(&history, &options);
//! assert_eq!(report.valid, Validity::False);
//! assert_eq!(report.anomaly_types, ["G1c"]);
//! assert!(report.not.contains(&"read-committed".to_string()));
//! // Elle's result map, as `isolde check -v` prints it.
//! assert_eq!(report.to_json(&history)["valid?"], false);
//! # Ok::<(), isolde::ReadError>(())
//! ```
//!
//! Cargo features, all on by default: `run-sqlite`, `run-postgres`,
//! `run-mysql` (the database clients of `isolde run`) and `png` (PNG
//! diagrams in the report). The checker alone needs none of them:
//! `default-features = false`.

#![warn(missing_docs)]

pub mod anomaly;
pub mod check;
pub mod evidence;
pub mod explain;
// Internal: dependency graphs and cycle search, used through `check`.
#[allow(missing_docs)]
pub mod graph;
pub mod history;
pub mod model;
// elle-cli's non-transactional models: bank, counter, set, set-full, long-fork,
// comments, sequential, cas-register, mutex.
pub mod models;
pub mod proof;
pub mod report;
pub mod rng;
// Internal: the exact solver for list-append histories whose values repeat,
// used through `check`.
#[allow(missing_docs, rustdoc::private_intra_doc_links)]
pub mod solver;
// Internal: `isolde run`'s generator, clients, recorder and the run
// itself (`run::record`); the binary parses its arguments.
#[allow(missing_docs)]
pub mod run;
// Internal: `isolde schedule`, textbook schedules.
#[allow(missing_docs)]
pub mod schedule;
// Internal: per-workload inference, used through `check`; its docs link
// private items (`cargo doc --document-private-items` resolves them).
#[allow(missing_docs, rustdoc::private_intra_doc_links)]
pub mod workload;

// Unit tests find Elle's histories with the integration tests' locator.
#[cfg(test)]
#[path = "../tests/it/support/corpus.rs"]
mod corpus;

/// Checks a history against [`CheckOptions`]: the one entry point of the
/// checker, under the name the façade gives it.
pub use check::check_history as check;
pub use check::{render_report, validate_options, CheckOptions, Finding, Report, Workload};
pub use history::error::ReadError;
pub use history::read::{read_history, read_history_file, Format};
pub use history::History;
pub use model::Validity;
pub use report::{write_report, PlotFormat, ReportOptions};
