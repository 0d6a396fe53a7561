//! What the integration tests share.
#![allow(dead_code)]

pub mod corpus;
pub mod duplicates_gen;
pub mod oracle;
pub mod register_gen;
pub mod run_support;
