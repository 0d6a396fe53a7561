//! isolde: a black-box checker of transactional isolation.
//!
//! Data flows one way: `history` (parse) → `workload` (infer) → `graph`
//! (build, search) → `model` (judge) → `explain` (render). See ARCHITECTURE.md.

pub mod check;
pub mod cli;
pub mod evidence;
pub mod explain;
pub mod graph;
pub mod history;
pub mod model;
pub mod report;
pub mod run;
pub mod schedule;
pub mod workload;
