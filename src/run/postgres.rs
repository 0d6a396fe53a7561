//! `isolde run postgres`: PostgreSQL through the synchronous `postgres` crate.

#[cfg(feature = "run-postgres")]
use super::client::{list_read, table_name, Client, Completion, Target};
use super::WorkloadKind;
#[cfg(feature = "run-postgres")]
use super::{Mop, ReadValue, Txn};
use crate::history::Outcome;
#[cfg(feature = "run-postgres")]
use postgres::{Config, IsolationLevel, NoTls, Statement};
#[cfg(feature = "run-postgres")]
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PgLevel {
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl PgLevel {
    /// The model PostgreSQL documents for the level (its REPEATABLE READ is
    /// snapshot isolation).
    pub fn model(self) -> &'static str {
        match self {
            PgLevel::ReadCommitted => "read-committed",
            PgLevel::RepeatableRead => "snapshot-isolation",
            PgLevel::Serializable => "serializable",
        }
    }

    #[cfg(feature = "run-postgres")]
    fn level(self) -> IsolationLevel {
        match self {
            PgLevel::ReadCommitted => IsolationLevel::ReadCommitted,
            PgLevel::RepeatableRead => IsolationLevel::RepeatableRead,
            PgLevel::Serializable => IsolationLevel::Serializable,
        }
    }
}

/// Outcome of a transaction that ended in an error with this SQLSTATE:
/// class 40 (transaction rollback: serialization failure, deadlock), class 23
/// (constraint violation) and 55P03 (lock not available) are definite aborts,
/// except 40003 (statement completion unknown). Everything else, and errors
/// without a SQLSTATE (connection lost, I/O), is unknown.
pub fn classify(sqlstate: Option<&str>) -> Outcome {
    match sqlstate {
        Some("40003") => Outcome::Info,
        Some(c) if c.starts_with("40") || c.starts_with("23") || c == "55P03" => Outcome::Fail,
        _ => Outcome::Info,
    }
}

/// Without `run-postgres`: `isolde run postgres` parses as always and fails at setup
/// (see [`Unavailable`](super::client::Unavailable)).
#[cfg(not(feature = "run-postgres"))]
pub struct PgTarget;

#[cfg(not(feature = "run-postgres"))]
impl PgTarget {
    /// Same arguments as the real client's constructor.
    #[allow(clippy::new_ret_no_self)] // a stand-in, not a PgTarget
    pub fn new(
        _: &str,
        _: PgLevel,
        _: Vec<(String, String)>,
        _: WorkloadKind,
        _: &str,
    ) -> anyhow::Result<super::client::Unavailable> {
        Ok(super::client::Unavailable::new("postgres", "run-postgres"))
    }
}

#[cfg(feature = "run-postgres")]
pub struct PgTarget {
    config: Config,
    level: PgLevel,
    /// Set on every connection with `set_config` (bound parameters).
    session_vars: Vec<(String, String)>,
    workload: WorkloadKind,
    table: String,
}

#[cfg(feature = "run-postgres")]
impl PgTarget {
    pub fn new(
        url: &str,
        level: PgLevel,
        session_vars: Vec<(String, String)>,
        workload: WorkloadKind,
        run_id: &str,
    ) -> anyhow::Result<Self> {
        let mut config: Config = url
            .parse()
            .map_err(|e| anyhow::anyhow!("bad PostgreSQL URL {url:?}: {e}"))?;
        if config.get_application_name().is_none() {
            config.application_name("isolde");
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(5));
        }
        Ok(PgTarget {
            config,
            level,
            session_vars,
            workload,
            table: table_name(workload, run_id),
        })
    }
}

#[cfg(feature = "run-postgres")]
impl Target for PgTarget {
    fn describe(&self) -> String {
        format!("postgres {}", self.level.model())
    }

    fn setup(&self) -> anyhow::Result<()> {
        let mut c = self.config.connect(NoTls)?;
        let v = match self.workload {
            WorkloadKind::ListAppend => "TEXT",
            WorkloadKind::RwRegister => "BIGINT",
        };
        c.batch_execute(&format!(
            "DROP TABLE IF EXISTS {t}; CREATE TABLE {t} (k BIGINT PRIMARY KEY, v {v} NOT NULL)",
            t = self.table
        ))?;
        Ok(())
    }

    fn connect(&self, _worker: u32) -> anyhow::Result<Box<dyn Client>> {
        let mut conn = self.config.connect(NoTls)?;
        for (name, value) in &self.session_vars {
            conn.execute("SELECT set_config($1, $2, false)", &[name, value])?;
        }
        let t = &self.table;
        let write = match self.workload {
            WorkloadKind::ListAppend => format!(
                "INSERT INTO {t} AS old (k, v) VALUES ($1, $2) \
                 ON CONFLICT (k) DO UPDATE SET v = old.v || ',' || EXCLUDED.v"
            ),
            WorkloadKind::RwRegister => format!(
                "INSERT INTO {t} (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v"
            ),
        };
        let read = conn.prepare(&format!("SELECT v FROM {t} WHERE k = $1"))?;
        let write = conn.prepare(&write)?;
        Ok(Box::new(PgClient {
            conn,
            read,
            write,
            level: self.level.level(),
            workload: self.workload,
        }))
    }

    fn teardown(&self) -> anyhow::Result<()> {
        let mut c = self.config.connect(NoTls)?;
        c.batch_execute(&format!("DROP TABLE IF EXISTS {}", self.table))?;
        Ok(())
    }
}

#[cfg(feature = "run-postgres")]
struct PgClient {
    conn: postgres::Client,
    read: Statement,
    write: Statement,
    level: IsolationLevel,
    workload: WorkloadKind,
}

#[cfg(feature = "run-postgres")]
/// A failure of one attempt: a database error, or a stored value we could
/// not understand.
enum Failure {
    Db(postgres::Error),
    Data(String),
}

#[cfg(feature = "run-postgres")]
impl From<postgres::Error> for Failure {
    fn from(e: postgres::Error) -> Self {
        Failure::Db(e)
    }
}

#[cfg(feature = "run-postgres")]
impl PgClient {
    fn attempt(&mut self, txn: &[Mop]) -> Result<Txn, Failure> {
        // Dropping the transaction on an error rolls it back.
        let mut tx = self
            .conn
            .build_transaction()
            .isolation_level(self.level)
            .start()?;
        let mut done = Vec::with_capacity(txn.len());
        for m in txn {
            match m {
                Mop::Read(k, _) => {
                    let row = tx.query_opt(&self.read, &[&(*k as i64)])?;
                    let value = match self.workload {
                        WorkloadKind::ListAppend => {
                            list_read(row.map(|r| r.get::<_, String>(0))).map_err(Failure::Data)?
                        }
                        WorkloadKind::RwRegister => row.map(|r| ReadValue::Int(r.get::<_, i64>(0))),
                    };
                    done.push(Mop::Read(*k, value));
                }
                Mop::Append(k, v) => {
                    tx.execute(&self.write, &[&(*k as i64), &v.to_string()])?;
                    done.push(m.clone());
                }
                Mop::Write(k, v) => {
                    tx.execute(&self.write, &[&(*k as i64), v])?;
                    done.push(m.clone());
                }
            }
        }
        tx.commit()?;
        Ok(done)
    }
}

#[cfg(feature = "run-postgres")]
impl Client for PgClient {
    fn execute(&mut self, txn: &[Mop]) -> Completion {
        match self.attempt(txn) {
            Ok(done) => Completion::Ok(done),
            Err(Failure::Data(e)) => Completion::Info(e),
            Err(Failure::Db(e)) => {
                let code = e.code().map(|c| c.code());
                let msg = match e.as_db_error() {
                    Some(db) => format!("{}: {}", db.code().code(), db.message()),
                    None => e.to_string(),
                };
                match classify(code) {
                    Outcome::Fail if !e.is_closed() => Completion::Fail(msg),
                    _ => Completion::Info(msg),
                }
            }
        }
    }
}
