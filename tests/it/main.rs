//! isolde's integration tests, one binary: each file below is a module
//! that exercises the library API or the `isolde` binary from outside;
//! `support` holds what they share (Elle's corpus locator, history
//! generators, the brute-force oracles, the helpers of the `run` tests).
//! One binary links the crate once instead of once per file, and the
//! helpers are written once. `tests/features.rs` stays a binary of its own:
//! CI builds it without default features.
//!
//! Run one file's tests with a filter: `cargo test --release --test it run_postgres::`.

mod support;

// The binary's command line (argument structs, the commands), for the tests
// that parse arguments or run a command in process.
#[allow(dead_code)]
#[path = "../../src/cli/mod.rs"]
mod isolde_cli;

mod adversarial;
mod bad_input;
mod cli;
mod conformance;
mod duplicates;
mod duplicates_lattice;
mod duplicates_props;
mod duplicates_rules;
mod duplicates_uncommitted;
mod elle_cli_suite;
mod fuzz_corpus;
mod history_readers;
mod lost_update;
mod mariadb_duplicates;
mod models;
mod oracle_cycles;
mod oracle_list_append;
mod oracle_register;
mod report;
mod report_chromium;
mod run_cli;
mod run_clients;
mod run_exec;
mod run_generator;
mod run_known_sim;
mod run_models;
mod run_mysql;
mod run_postgres;
mod run_recorder;
mod run_sim;
mod run_timeouts;
mod rw_register_bench;
mod rw_register_props;
mod rw_register_wr_graph;
mod schedule;
mod schedule_props;
