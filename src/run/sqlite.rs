//! `isolde run sqlite`: a file database through the bundled SQLite.

#[cfg(feature = "run-sqlite")]
use super::client::{
    initial_rows, list_read, model_op, table_name, Client, Completion, KvTxn, ModelFailure, Target,
};
use super::WorkloadKind;
#[cfg(feature = "run-sqlite")]
use super::{Key, ModelParams, Value};
#[cfg(feature = "run-sqlite")]
use super::{Mop, ReadValue, Txn};
#[cfg(feature = "run-sqlite")]
use crate::history::Outcome;
#[cfg(feature = "run-sqlite")]
use rusqlite::{Connection, ErrorCode, OptionalExtension};
use std::path::PathBuf;
#[cfg(feature = "run-sqlite")]
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Begin {
    /// Take locks at the first read or write (SQLite's default).
    Deferred,
    /// Take the write lock at BEGIN.
    Immediate,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Journal {
    Wal,
    Delete,
}

/// Without `run-sqlite`: `isolde run sqlite` parses as always and fails at setup
/// (see [`Unavailable`](super::client::Unavailable)).
#[cfg(not(feature = "run-sqlite"))]
pub struct SqliteTarget;

#[cfg(not(feature = "run-sqlite"))]
impl SqliteTarget {
    /// Same arguments as the real client's constructor.
    #[allow(clippy::new_ret_no_self)] // a stand-in, not a SqliteTarget
    pub fn new(
        _: PathBuf,
        _: Begin,
        _: Journal,
        _: WorkloadKind,
        _: &str,
    ) -> super::client::Unavailable {
        super::client::Unavailable::new("sqlite", "run-sqlite")
    }
}

#[cfg(feature = "run-sqlite")]
/// A SQLite file and the table of this run.
pub struct SqliteTarget {
    pub path: PathBuf,
    pub begin: Begin,
    pub journal: Journal,
    pub workload: WorkloadKind,
    pub table: String,
    /// Busy timeout of every connection (`--txn-timeout`).
    pub busy_timeout: Duration,
    /// The model workloads' shape (bank's accounts, ...).
    pub params: ModelParams,
}

#[cfg(feature = "run-sqlite")]
impl SqliteTarget {
    pub fn new(
        path: PathBuf,
        begin: Begin,
        journal: Journal,
        workload: WorkloadKind,
        run_id: &str,
    ) -> Self {
        SqliteTarget {
            path,
            begin,
            journal,
            workload,
            table: table_name(workload, run_id),
            busy_timeout: super::driver::DEFAULT_TXN_TIMEOUT,
            params: ModelParams::default(),
        }
    }

    /// Sets the model workloads' shape.
    pub fn with_model(mut self, params: ModelParams) -> Self {
        self.params = params;
        self
    }

    /// Waits for locks up to `t` (`--txn-timeout`).
    pub fn with_txn_timeout(mut self, t: Duration) -> Self {
        self.busy_timeout = t;
        self
    }

    fn open(&self) -> rusqlite::Result<Connection> {
        let conn = Connection::open(&self.path)?;
        // Wait for locks rather than failing at once; a busy error after
        // this long is a definite abort (see `classify`).
        conn.busy_timeout(self.busy_timeout)?;
        let mode = match self.journal {
            Journal::Wal => "wal",
            Journal::Delete => "delete",
        };
        conn.pragma_update(None, "journal_mode", mode)?;
        Ok(conn)
    }
}

#[cfg(feature = "run-sqlite")]
impl Target for SqliteTarget {
    fn describe(&self) -> String {
        format!("sqlite {}", self.path.display())
    }

    fn setup(&self) -> anyhow::Result<()> {
        let conn = self.open()?;
        let v = if self.workload.int_values() {
            "INTEGER"
        } else {
            "TEXT"
        };
        conn.execute_batch(&format!(
            "DROP TABLE IF EXISTS {t}; CREATE TABLE {t} (k INTEGER PRIMARY KEY, v {v} NOT NULL)",
            t = self.table
        ))?;
        for (k, v) in initial_rows(self.workload, &self.params) {
            conn.execute(
                &format!("INSERT INTO {} (k, v) VALUES (?1, ?2)", self.table),
                rusqlite::params![k as i64, v],
            )?;
        }
        Ok(())
    }

    fn connect(&self, _worker: u32) -> anyhow::Result<Box<dyn Client>> {
        let conn = self.open()?;
        let t = &self.table;
        let write = match self.workload {
            WorkloadKind::ListAppend => format!(
                "INSERT INTO {t} (k, v) VALUES (?1, ?2) ON CONFLICT (k) DO UPDATE SET v = v || ',' || excluded.v"
            ),
            _ => format!(
                "INSERT INTO {t} (k, v) VALUES (?1, ?2) ON CONFLICT (k) DO UPDATE SET v = excluded.v"
            ),
        };
        Ok(Box::new(SqliteClient {
            conn,
            begin: match self.begin {
                Begin::Deferred => "BEGIN DEFERRED",
                Begin::Immediate => "BEGIN IMMEDIATE",
            },
            read: format!("SELECT v FROM {t} WHERE k = ?1"),
            write,
            table: t.clone(),
            params: self.params,
            workload: self.workload,
            committing: false,
        }))
    }

    fn teardown(&self) -> anyhow::Result<()> {
        let conn = self.open()?;
        conn.execute_batch(&format!("DROP TABLE IF EXISTS {}", self.table))?;
        Ok(())
    }
}

#[cfg(feature = "run-sqlite")]
struct SqliteClient {
    conn: Connection,
    begin: &'static str,
    read: String,
    write: String,
    table: String,
    params: ModelParams,
    workload: WorkloadKind,
    /// Whether the last attempt reached COMMIT (an interrupt there leaves
    /// the outcome unknown).
    committing: bool,
}

/// The connection inside BEGIN, as [`KvTxn`] sees it.
#[cfg(feature = "run-sqlite")]
struct SqliteKv<'a> {
    conn: &'a Connection,
    table: &'a str,
}

#[cfg(feature = "run-sqlite")]
impl KvTxn for SqliteKv<'_> {
    type Error = rusqlite::Error;
    fn get(&mut self, k: Key) -> rusqlite::Result<Option<Value>> {
        let sql = format!("SELECT v FROM {} WHERE k = ?1", self.table);
        self.conn
            .prepare_cached(&sql)?
            .query_row([k as i64], |r| r.get(0))
            .optional()
    }
    fn scan(&mut self) -> rusqlite::Result<Vec<(Key, Value)>> {
        let sql = format!("SELECT k, v FROM {} ORDER BY k", self.table);
        let mut st = self.conn.prepare_cached(&sql)?;
        let rows = st.query_map([], |r| Ok((r.get::<_, i64>(0)? as Key, r.get(1)?)))?;
        rows.collect()
    }
    fn add(&mut self, k: Key, delta: Value) -> rusqlite::Result<()> {
        let sql = format!("UPDATE {} SET v = v + ?1 WHERE k = ?2", self.table);
        self.conn
            .prepare_cached(&sql)?
            .execute(rusqlite::params![delta, k as i64])
            .map(drop)
    }
    fn put(&mut self, k: Key, v: Value) -> rusqlite::Result<()> {
        let sql = format!("UPDATE {} SET v = ?1 WHERE k = ?2", self.table);
        self.conn
            .prepare_cached(&sql)?
            .execute(rusqlite::params![v, k as i64])
            .map(drop)
    }
    fn insert(&mut self, k: Key, v: Value) -> rusqlite::Result<()> {
        let sql = format!("INSERT INTO {} (k, v) VALUES (?1, ?2)", self.table);
        self.conn
            .prepare_cached(&sql)?
            .execute(rusqlite::params![k as i64, v])
            .map(drop)
    }
    fn keys_with(&mut self, v: Value) -> rusqlite::Result<Vec<Key>> {
        let sql = format!("SELECT k FROM {} WHERE v = ?1 ORDER BY k", self.table);
        let mut st = self.conn.prepare_cached(&sql)?;
        let rows = st.query_map([v], |r| Ok(r.get::<_, i64>(0)? as Key))?;
        rows.collect()
    }
}

#[cfg(feature = "run-sqlite")]
/// Errors after which SQLite has certainly not committed (once we roll back):
/// lock contention and constraint violations.
pub fn is_definite_abort(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked | ErrorCode::ConstraintViolation
    )
}

#[cfg(feature = "run-sqlite")]
/// Outcome of a failed transaction, given the error, whether it came from
/// COMMIT, and whether the rollback that followed left the connection outside
/// any transaction. An interrupt (the driver's `--txn-timeout`) before COMMIT
/// is a definite abort once rolled back; during COMMIT it is unknown.
pub fn classify(e: &rusqlite::Error, committing: bool, rolled_back: bool) -> Outcome {
    match e {
        rusqlite::Error::SqliteFailure(f, _)
            if rolled_back
                && (is_definite_abort(f.code)
                    || (f.code == ErrorCode::OperationInterrupted && !committing)) =>
        {
            Outcome::Fail
        }
        _ => Outcome::Info,
    }
}

#[cfg(feature = "run-sqlite")]
impl SqliteClient {
    /// A model workload's transaction.
    fn attempt_model(&mut self, txn: &[Mop]) -> Result<Txn, ModelFailure<rusqlite::Error>> {
        self.committing = false;
        self.conn.execute_batch(self.begin)?;
        let mut kv = SqliteKv {
            conn: &self.conn,
            table: &self.table,
        };
        let done = txn
            .iter()
            .map(|m| model_op(&mut kv, self.workload, m, &self.params))
            .collect::<Result<Txn, _>>()?;
        self.committing = true;
        self.conn.execute_batch("COMMIT")?;
        Ok(done)
    }

    fn attempt(&mut self, txn: &[Mop]) -> rusqlite::Result<Txn> {
        self.committing = false;
        self.conn.execute_batch(self.begin)?;
        let mut done = Vec::with_capacity(txn.len());
        for m in txn {
            match m {
                Mop::Read(k, _) => {
                    let mut st = self.conn.prepare_cached(&self.read)?;
                    let value = match self.workload {
                        WorkloadKind::ListAppend => {
                            let cell: Option<String> =
                                st.query_row([*k as i64], |r| r.get(0)).optional()?;
                            list_read(cell).map_err(|e| {
                                rusqlite::Error::FromSqlConversionFailure(
                                    0,
                                    rusqlite::types::Type::Text,
                                    e.into(),
                                )
                            })?
                        }
                        _ => st
                            .query_row([*k as i64], |r| r.get::<_, i64>(0))
                            .optional()?
                            .map(ReadValue::Int),
                    };
                    done.push(Mop::Read(*k, value));
                }
                Mop::Append(k, v) => {
                    let mut st = self.conn.prepare_cached(&self.write)?;
                    st.execute(rusqlite::params![*k as i64, v.to_string()])?;
                    done.push(m.clone());
                }
                Mop::Write(k, v) => {
                    let mut st = self.conn.prepare_cached(&self.write)?;
                    st.execute(rusqlite::params![*k as i64, *v])?;
                    done.push(m.clone());
                }
                _ => {
                    return Err(rusqlite::Error::InvalidParameterName(format!(
                        "{} is not an op of the {} workload",
                        super::txn_json(std::slice::from_ref(m)),
                        self.workload.name()
                    )))
                }
            }
        }
        self.committing = true;
        self.conn.execute_batch("COMMIT")?;
        Ok(done)
    }
}

#[cfg(feature = "run-sqlite")]
impl Client for SqliteClient {
    fn execute(&mut self, txn: &[Mop]) -> Completion {
        let result = if self.workload.model().is_some() {
            self.attempt_model(txn)
        } else {
            self.attempt(txn).map_err(ModelFailure::Db)
        };
        let e = match result {
            Ok(done) => return Completion::Ok(done),
            Err(e) => e,
        };
        let rolled_back = if self.conn.is_autocommit() {
            true
        } else {
            self.conn.execute_batch("ROLLBACK").is_ok() && self.conn.is_autocommit()
        };
        match e {
            ModelFailure::Refused(why) if rolled_back => Completion::Fail(why),
            ModelFailure::Refused(why) | ModelFailure::Data(why) => Completion::Info(why),
            ModelFailure::Db(e) => match classify(&e, self.committing, rolled_back) {
                Outcome::Fail => Completion::Fail(e.to_string()),
                _ => Completion::Info(e.to_string()),
            },
        }
    }

    fn interrupter(&self) -> Option<super::client::Interrupter> {
        let handle = self.conn.get_interrupt_handle();
        Some(Box::new(move || handle.interrupt()))
    }
}
