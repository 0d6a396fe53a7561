//! `isolde run mysql`: MySQL 8 and MariaDB through the `mysql` crate (no TLS).

pub use super::client::parse_session_var;
#[cfg(feature = "run-mysql")]
use super::client::{list_read, table_name, Client, Completion, Target};
use super::WorkloadKind;
#[cfg(feature = "run-mysql")]
use super::{Mop, ReadValue, Txn};
use crate::history::Outcome;
#[cfg(feature = "run-mysql")]
use mysql::prelude::Queryable;
#[cfg(feature = "run-mysql")]
use mysql::{Conn, Opts, OptsBuilder, Statement};
#[cfg(feature = "run-mysql")]
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MyLevel {
    ReadUncommitted,
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl MyLevel {
    /// The Elle model named like the level.
    pub fn model(self) -> &'static str {
        match self {
            MyLevel::ReadUncommitted => "read-uncommitted",
            MyLevel::ReadCommitted => "read-committed",
            MyLevel::RepeatableRead => "repeatable-read",
            MyLevel::Serializable => "serializable",
        }
    }

    #[cfg(feature = "run-mysql")]
    fn sql(self) -> &'static str {
        match self {
            MyLevel::ReadUncommitted => "READ UNCOMMITTED",
            MyLevel::ReadCommitted => "READ COMMITTED",
            MyLevel::RepeatableRead => "REPEATABLE READ",
            MyLevel::Serializable => "SERIALIZABLE",
        }
    }
}

/// Server error codes after which the transaction is certainly not
/// committed, once we have rolled it back: deadlock victim (1213), lock wait
/// timeout (1205: only the statement is undone, so the rollback matters),
/// "record has changed since last read" (1020, MariaDB's snapshot isolation),
/// duplicate key and foreign key errors (1062, 1451, 1452), NOWAIT lock
/// failure (3572).
pub fn is_definite_abort(code: u16) -> bool {
    matches!(code, 1020 | 1062 | 1205 | 1213 | 1451 | 1452 | 3572)
}

/// Outcome of a failed transaction, given the server's error code (if the
/// error came from the server) and whether our ROLLBACK succeeded.
pub fn classify(code: Option<u16>, rolled_back: bool) -> Outcome {
    match code {
        Some(c) if rolled_back && is_definite_abort(c) => Outcome::Fail,
        _ => Outcome::Info,
    }
}

/// Without `run-mysql`: `isolde run mysql` parses as always and fails at setup
/// (see [`Unavailable`](super::client::Unavailable)).
#[cfg(not(feature = "run-mysql"))]
pub struct MyTarget;

#[cfg(not(feature = "run-mysql"))]
impl MyTarget {
    /// Same arguments as the real client's constructor.
    #[allow(clippy::new_ret_no_self)] // a stand-in, not a MyTarget
    pub fn new(
        _: &str,
        _: MyLevel,
        _: Vec<(String, String)>,
        _: WorkloadKind,
        _: &str,
    ) -> anyhow::Result<super::client::Unavailable> {
        Ok(super::client::Unavailable::new("mysql", "run-mysql"))
    }
}

#[cfg(feature = "run-mysql")]
pub struct MyTarget {
    opts: Opts,
    level: MyLevel,
    session_vars: Vec<(String, String)>,
    workload: WorkloadKind,
    table: String,
}

#[cfg(feature = "run-mysql")]
impl MyTarget {
    pub fn new(
        url: &str,
        level: MyLevel,
        session_vars: Vec<(String, String)>,
        workload: WorkloadKind,
        run_id: &str,
    ) -> anyhow::Result<Self> {
        let opts =
            Opts::from_url(url).map_err(|e| anyhow::anyhow!("bad MySQL URL {url:?}: {e}"))?;
        let opts: Opts = OptsBuilder::from_opts(opts)
            .tcp_connect_timeout(Some(Duration::from_secs(5)))
            .into();
        Ok(MyTarget {
            opts,
            level,
            session_vars,
            workload,
            table: table_name(workload, run_id),
        })
    }
}

#[cfg(feature = "run-mysql")]
impl Target for MyTarget {
    fn describe(&self) -> String {
        format!("mysql {}", self.level.model())
    }

    fn setup(&self) -> anyhow::Result<()> {
        let mut c = Conn::new(self.opts.clone())?;
        let v = match self.workload {
            WorkloadKind::ListAppend => "LONGTEXT",
            WorkloadKind::RwRegister => "BIGINT",
        };
        c.query_drop(format!("DROP TABLE IF EXISTS {}", self.table))?;
        c.query_drop(format!(
            "CREATE TABLE {} (k BIGINT NOT NULL PRIMARY KEY, v {v} NOT NULL) ENGINE=InnoDB",
            self.table
        ))?;
        Ok(())
    }

    fn connect(&self, _worker: u32) -> anyhow::Result<Box<dyn Client>> {
        let mut conn = Conn::new(self.opts.clone())?;
        conn.query_drop(format!(
            "SET SESSION TRANSACTION ISOLATION LEVEL {}",
            self.level.sql()
        ))?;
        for (name, value) in &self.session_vars {
            conn.query_drop(format!("SET SESSION {name} = {value}"))?;
        }
        let t = &self.table;
        let write = match self.workload {
            WorkloadKind::ListAppend => format!(
                "INSERT INTO {t} (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = CONCAT(v, ',', VALUES(v))"
            ),
            WorkloadKind::RwRegister => {
                format!("INSERT INTO {t} (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)")
            }
        };
        let read = conn.prep(format!("SELECT v FROM {t} WHERE k = ?"))?;
        let write = conn.prep(write)?;
        Ok(Box::new(MyClient {
            conn,
            read,
            write,
            workload: self.workload,
        }))
    }

    fn teardown(&self) -> anyhow::Result<()> {
        let mut c = Conn::new(self.opts.clone())?;
        c.query_drop(format!("DROP TABLE IF EXISTS {}", self.table))?;
        Ok(())
    }
}

#[cfg(feature = "run-mysql")]
struct MyClient {
    conn: Conn,
    read: Statement,
    write: Statement,
    workload: WorkloadKind,
}

#[cfg(feature = "run-mysql")]
enum Failure {
    Db(mysql::Error),
    Data(String),
}

#[cfg(feature = "run-mysql")]
impl From<mysql::Error> for Failure {
    fn from(e: mysql::Error) -> Self {
        Failure::Db(e)
    }
}

#[cfg(feature = "run-mysql")]
impl MyClient {
    fn attempt(&mut self, txn: &[Mop]) -> Result<Txn, Failure> {
        self.conn.query_drop("START TRANSACTION")?;
        let mut done = Vec::with_capacity(txn.len());
        for m in txn {
            match m {
                Mop::Read(k, _) => {
                    let value = match self.workload {
                        WorkloadKind::ListAppend => {
                            let cell: Option<String> =
                                self.conn.exec_first(&self.read, (*k as i64,))?;
                            list_read(cell).map_err(Failure::Data)?
                        }
                        WorkloadKind::RwRegister => {
                            let cell: Option<i64> =
                                self.conn.exec_first(&self.read, (*k as i64,))?;
                            cell.map(ReadValue::Int)
                        }
                    };
                    done.push(Mop::Read(*k, value));
                }
                Mop::Append(k, v) => {
                    self.conn
                        .exec_drop(&self.write, (*k as i64, v.to_string()))?;
                    done.push(m.clone());
                }
                Mop::Write(k, v) => {
                    self.conn.exec_drop(&self.write, (*k as i64, *v))?;
                    done.push(m.clone());
                }
            }
        }
        self.conn.query_drop("COMMIT")?;
        Ok(done)
    }
}

#[cfg(feature = "run-mysql")]
impl Client for MyClient {
    fn execute(&mut self, txn: &[Mop]) -> Completion {
        match self.attempt(txn) {
            Ok(done) => Completion::Ok(done),
            Err(Failure::Data(e)) => Completion::Info(e),
            Err(Failure::Db(e)) => {
                let code = match &e {
                    mysql::Error::MySqlError(me) => Some(me.code),
                    _ => None,
                };
                let rolled_back = self.conn.query_drop("ROLLBACK").is_ok();
                match classify(code, rolled_back) {
                    Outcome::Fail => Completion::Fail(e.to_string()),
                    _ => Completion::Info(e.to_string()),
                }
            }
        }
    }
}
