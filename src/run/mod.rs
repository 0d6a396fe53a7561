//! `isolde run`: generate transactions, run them against a database, record
//! the history as JSON lines as it happens, then check it.
//!
//! ```text
//! Generator ──txn──▶ Client (sim | sqlite | postgres | mysql | exec) ──completion──▶ Recorder ──▶ check
//!                          ▲ fault injector (periodic shell command)
//! ```
//!
//! CockroachDB, YugabyteDB and TiDB run through the postgres and mysql
//! clients, with a [`dialect`] each.
//!
//! The simulated database runs under its own deterministic scheduler
//! ([`sim::run_sim`]); every real target runs one OS thread per client
//! ([`driver::run_threaded`]).

pub mod cli;
pub mod client;
pub mod dialect;
pub mod driver;
pub mod exec;
pub mod fault;
pub mod generator;
pub mod mysql;
pub mod postgres;
pub mod progress;
pub mod recorder;
pub mod sim;
pub mod sqlite;

/// A key of the generated workload.
pub type Key = u64;
/// An appended or written value.
pub type Value = i64;

/// What a read returned (or `None` in an invocation, and for a key that was
/// never written: Elle's `nil`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadValue {
    /// list-append: the whole list.
    List(Vec<Value>),
    /// rw-register: the register's value.
    Int(Value),
}

/// One micro-operation, as sent to a client and as recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mop {
    Append(Key, Value),
    Write(Key, Value),
    Read(Key, Option<ReadValue>),
}

impl Mop {
    pub fn key(&self) -> Key {
        match *self {
            Mop::Append(k, _) | Mop::Write(k, _) | Mop::Read(k, _) => k,
        }
    }

    pub fn is_read(&self) -> bool {
        matches!(self, Mop::Read(..))
    }

    /// Appends the elle-cli JSON form, e.g. `["append",3,7]`, to `out`.
    pub fn write_json(&self, out: &mut String) {
        use std::fmt::Write;
        match self {
            Mop::Append(k, v) => write!(out, "[\"append\",{k},{v}]"),
            Mop::Write(k, v) => write!(out, "[\"w\",{k},{v}]"),
            Mop::Read(k, None) => write!(out, "[\"r\",{k},null]"),
            Mop::Read(k, Some(ReadValue::Int(v))) => write!(out, "[\"r\",{k},{v}]"),
            Mop::Read(k, Some(ReadValue::List(vs))) => {
                let _ = write!(out, "[\"r\",{k},[");
                for (i, v) in vs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{v}");
                }
                out.push_str("]]");
                Ok(())
            }
        }
        .expect("writing to a String cannot fail");
    }
}

/// A transaction: its micro-ops in order.
pub type Txn = Vec<Mop>;

/// The JSON array form of a transaction's micro-ops.
pub fn txn_json(txn: &[Mop]) -> String {
    let mut s = String::with_capacity(16 * txn.len() + 2);
    s.push('[');
    for (i, m) in txn.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        m.write_json(&mut s);
    }
    s.push(']');
    s
}

/// Which data type the workload exercises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum WorkloadKind {
    /// Lists of unique values: `["append",k,v]`, `["r",k,[v...]]`.
    ListAppend,
    /// Integer registers: `["w",k,v]`, `["r",k,v]`.
    RwRegister,
}

/// Errors of the runner, before any transaction ran (bad options, a target
/// that cannot be set up).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("invalid option: {0}")]
    Option(String),
    #[error("cannot set up {target}: {message}")]
    Setup { target: String, message: String },
    #[error("interrupted while setting up {target}; nothing was run")]
    Interrupted { target: String },
    #[error("cannot write the history to {path}: {source}")]
    Record {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// A short id unique to this run (time and process id), used to name tables
/// and default history files so that runs never collide.
pub fn run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mixed = (nanos as u64) ^ ((std::process::id() as u64) << 40) ^ ((seq as u64) << 20);
    format!("{:012x}", mixed & 0xffff_ffff_ffff)
}
