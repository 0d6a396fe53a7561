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

pub mod client;
pub mod dialect;
pub mod driver;
pub mod exec;
pub mod fault;
pub mod generator;
pub mod mysql;
pub mod postgres;
pub mod progress;
pub mod record;
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
///
/// The others are the operations of Jepsen's non-transactional models
/// (bank, counter, set, set-full, comments, sequential, cas-register,
/// mutex): each is a transaction on its own, recorded as one Jepsen op with
/// its own `:f` (see [`op_f_and_value`]). Long-fork uses `Write` and `Read`,
/// in transactions of `:f :txn`, as Jepsen does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mop {
    Append(Key, Value),
    Write(Key, Value),
    Read(Key, Option<ReadValue>),
    /// bank: move `amount` from account `from` to account `to`.
    Transfer {
        from: Key,
        to: Key,
        amount: Value,
    },
    /// bank: every balance, by account ascending (`None` in an invocation).
    ReadBalances(Option<Vec<(Key, Value)>>),
    /// counter: add a positive number; set, set-full: add an element.
    Add(Value),
    /// counter: the counter's value.
    ReadCounter(Option<Value>),
    /// set, set-full: every element, ascending.
    ReadSet(Option<Vec<Value>>),
    /// comments: insert a unique id (into table `id mod --key-count`).
    WriteId(Value),
    /// comments: every id of every table, ascending.
    ReadIds(Option<Vec<Value>>),
    /// sequential: insert subkey `i` of key `k` (its own transaction).
    SeqWrite(Key, u32),
    /// sequential: read key `k`'s subkeys, latest first (`None` for a
    /// subkey not found); the outer `None` in an invocation.
    SeqRead(Key, Option<Vec<Option<Value>>>),
    /// cas-register: read the register (`None`: not written yet, or an
    /// invocation).
    RegRead(Option<Value>),
    /// cas-register: write a value.
    RegWrite(Value),
    /// cas-register: set the register to `new` if it holds `old`, else fail.
    RegCas {
        old: Value,
        new: Value,
    },
    /// mutex: take the lock for worker `owner` (fail if it is held).
    Acquire(u32),
    /// mutex: give back the lock `owner` holds (fail if it does not).
    Release(u32),
}

impl Mop {
    /// The key of a transactional micro-op (a model op's first account, or 0).
    pub fn key(&self) -> Key {
        match *self {
            Mop::Append(k, _) | Mop::Write(k, _) | Mop::Read(k, _) => k,
            Mop::Transfer { from, .. } => from,
            _ => 0,
        }
    }

    pub fn is_read(&self) -> bool {
        matches!(
            self,
            Mop::Read(..)
                | Mop::ReadBalances(_)
                | Mop::ReadCounter(_)
                | Mop::ReadSet(_)
                | Mop::ReadIds(_)
                | Mop::SeqRead(..)
                | Mop::RegRead(_)
        )
    }

    /// A model op's Jepsen `:f` (`None` for a transactional micro-op).
    pub fn model_f(&self) -> Option<&'static str> {
        match self {
            Mop::Append(..) | Mop::Write(..) | Mop::Read(..) => None,
            Mop::Transfer { .. } => Some("transfer"),
            Mop::Add(_) => Some("add"),
            Mop::ReadBalances(_)
            | Mop::ReadCounter(_)
            | Mop::ReadSet(_)
            | Mop::ReadIds(_)
            | Mop::SeqRead(..)
            | Mop::RegRead(_) => Some("read"),
            Mop::WriteId(_) | Mop::SeqWrite(..) | Mop::RegWrite(_) => Some("write"),
            Mop::RegCas { .. } => Some("cas"),
            Mop::Acquire(_) => Some("acquire"),
            Mop::Release(_) => Some("release"),
        }
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
            // Model ops: their Jepsen `:value`.
            Mop::Transfer { from, to, amount } => {
                write!(out, "{{\"from\":{from},\"to\":{to},\"amount\":{amount}}}")
            }
            Mop::Add(v)
            | Mop::ReadCounter(Some(v))
            | Mop::WriteId(v)
            | Mop::RegWrite(v)
            | Mop::RegRead(Some(v)) => write!(out, "{v}"),
            Mop::ReadBalances(None)
            | Mop::ReadCounter(None)
            | Mop::ReadSet(None)
            | Mop::ReadIds(None)
            | Mop::RegRead(None)
            | Mop::Acquire(_)
            | Mop::Release(_) => write!(out, "null"),
            Mop::SeqWrite(k, i) => write!(out, "[{k},{i}]"),
            Mop::SeqRead(k, None) => write!(out, "[{k},null]"),
            Mop::SeqRead(k, Some(vs)) => {
                let _ = write!(out, "[{k},[");
                for (i, v) in vs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = match v {
                        Some(v) => write!(out, "{v}"),
                        None => write!(out, "null"),
                    };
                }
                out.push_str("]]");
                Ok(())
            }
            Mop::RegCas { old, new } => write!(out, "[{old},{new}]"),
            Mop::ReadBalances(Some(bs)) => {
                out.push('{');
                for (i, (k, v)) in bs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "\"{k}\":{v}");
                }
                out.push('}');
                Ok(())
            }
            Mop::ReadSet(Some(xs)) | Mop::ReadIds(Some(xs)) => {
                out.push('[');
                for (i, v) in xs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{v}");
                }
                out.push(']');
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

/// A recorded op's `:f` and `:value` (JSON): a model op's own, else
/// `txn` and the micro-ops.
pub fn op_f_and_value(txn: &[Mop]) -> (&'static str, String) {
    match txn {
        [m] if m.model_f().is_some() => {
            let mut s = String::new();
            m.write_json(&mut s);
            (m.model_f().expect("checked"), s)
        }
        _ => ("txn", txn_json(txn)),
    }
}

/// Which data type the workload exercises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum WorkloadKind {
    /// Lists of unique values: `["append",k,v]`, `["r",k,[v...]]`.
    ListAppend,
    /// Integer registers: `["w",k,v]`, `["r",k,v]`.
    RwRegister,
    /// Jepsen's bank: transfers between accounts and reads of every balance.
    Bank,
    /// Jepsen's counter: adds of small positive numbers and reads.
    Counter,
    /// Jepsen's set: adds of unique elements and a final read.
    Set,
    /// Jepsen's set-full: adds of unique elements and frequent reads.
    SetFull,
    /// Jepsen's long-fork: write-once keys and reads of groups of keys.
    LongFork,
    /// Jepsen's comments: unique ids inserted into one of --key-count
    /// tables, reads of every table.
    Comments,
    /// Jepsen's sequential: each key's --key-count subkeys inserted in
    /// order by one process, reads of them in reverse.
    Sequential,
    /// Knossos's cas-register: read, write and cas of one register.
    CasRegister,
    /// Knossos's mutex: acquire and release of one lock.
    Mutex,
}

impl WorkloadKind {
    /// The name `-w` takes.
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::ListAppend => "list-append",
            WorkloadKind::RwRegister => "rw-register",
            WorkloadKind::Bank => "bank",
            WorkloadKind::Counter => "counter",
            WorkloadKind::Set => "set",
            WorkloadKind::SetFull => "set-full",
            WorkloadKind::LongFork => "long-fork",
            WorkloadKind::Comments => "comments",
            WorkloadKind::Sequential => "sequential",
            WorkloadKind::CasRegister => "cas-register",
            WorkloadKind::Mutex => "mutex",
        }
    }

    /// The non-transactional model that checks this workload, if it is one.
    pub fn model(self) -> Option<crate::models::Model> {
        use crate::models::Model;
        Some(match self {
            WorkloadKind::ListAppend | WorkloadKind::RwRegister => return None,
            WorkloadKind::Bank => Model::Bank,
            WorkloadKind::Counter => Model::Counter,
            WorkloadKind::Set => Model::Set,
            WorkloadKind::SetFull => Model::SetFull,
            WorkloadKind::LongFork => Model::LongFork,
            WorkloadKind::Comments => Model::Comments,
            WorkloadKind::Sequential => Model::Sequential,
            WorkloadKind::CasRegister => Model::CasRegister,
            WorkloadKind::Mutex => Model::Mutex,
        })
    }

    /// Whether a stored value is one integer (every workload but list-append).
    pub fn int_values(self) -> bool {
        self != WorkloadKind::ListAppend
    }
}

/// mutex: the value of the lock's row while no worker holds it.
pub const FREE: Value = -1;

/// The shape of the model workloads, as Jepsen's workloads take it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelParams {
    /// bank: accounts 0..accounts.
    pub accounts: u32,
    /// bank: the money, all in account 0 at the start.
    pub total_amount: i64,
    /// bank: transfers move 1..=max_transfer.
    pub max_transfer: u32,
    /// bank: a transfer may leave a negative balance (else the client
    /// refuses it: `fail`).
    pub allow_negative: bool,
    /// bank: a transfer writes the balances it computed from its reads
    /// (`SET v = <computed>`) rather than `SET v = v - amount`: a lost update
    /// then changes the total.
    pub computed_writes: bool,
    /// long-fork: keys per group read.
    pub group_size: u32,
    /// comments: tables; sequential: subkeys per key (--key-count).
    pub key_count: u32,
}

impl Default for ModelParams {
    /// Jepsen's defaults (bank.clj: 8 accounts, 100, 5; long_fork.clj: 2).
    fn default() -> Self {
        ModelParams {
            accounts: 8,
            total_amount: 100,
            max_transfer: 5,
            allow_negative: false,
            computed_writes: false,
            group_size: 2,
            key_count: 10,
        }
    }
}

impl ModelParams {
    /// Rejects parameters no workload can run with.
    pub fn validate(&self) -> Result<(), String> {
        if self.accounts < 2 {
            return Err("--accounts must be at least 2 (a transfer needs two)".into());
        }
        if self.total_amount < 0 {
            return Err(format!(
                "--total-amount must not be negative, got {}",
                self.total_amount
            ));
        }
        if self.max_transfer == 0 {
            return Err("--max-transfer must be at least 1".into());
        }
        if self.group_size == 0 {
            return Err("--group-size must be at least 1".into());
        }
        if self.key_count == 0 {
            return Err("--key-count must be at least 1".into());
        }
        Ok(())
    }

    /// sequential: the row of subkey `i` of key `k` (its value is the same
    /// number, so that a read of it shows which row it found).
    pub fn subkey(&self, k: Key, i: u32) -> Key {
        k * self.key_count as Key + i as Key
    }

    /// bank: the rows a run starts with, (account, balance).
    pub fn initial_balances(&self) -> Vec<(Key, Value)> {
        (0..self.accounts as Key)
            .map(|k| (k, if k == 0 { self.total_amount } else { 0 }))
            .collect()
    }
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
