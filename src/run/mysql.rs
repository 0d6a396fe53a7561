//! `isolde run mysql`: MySQL 8 and MariaDB through the `mysql` crate (no TLS).

pub use super::client::parse_session_var;
use super::client::{list_read, table_name, Client, Completion, Target};
use super::{Mop, ReadValue, Txn, WorkloadKind};
use crate::history::Outcome;
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder, Statement};
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

pub struct MyTarget {
    opts: Opts,
    level: MyLevel,
    session_vars: Vec<(String, String)>,
    workload: WorkloadKind,
    table: String,
}

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

struct MyClient {
    conn: Conn,
    read: Statement,
    write: Statement,
    workload: WorkloadKind,
}

enum Failure {
    Db(mysql::Error),
    Data(String),
}

impl From<mysql::Error> for Failure {
    fn from(e: mysql::Error) -> Self {
        Failure::Db(e)
    }
}

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
