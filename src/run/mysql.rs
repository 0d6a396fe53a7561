//! `isolde run mysql`: MySQL 8 and MariaDB through the `mysql` crate (no TLS).

pub use super::client::parse_session_var;
#[cfg(feature = "run-mysql")]
use super::client::{
    initial_rows, list_read, model_op, table_name, Client, Completion, KvTxn, ModelFailure, Target,
};
use super::dialect::MyDialect;
#[cfg(feature = "run-mysql")]
use super::dialect::Phase;
use super::WorkloadKind;
#[cfg(feature = "run-mysql")]
use super::{Key, ModelParams, Value};
#[cfg(feature = "run-mysql")]
use super::{Mop, ReadValue, Txn};
#[cfg(feature = "run-mysql")]
use crate::history::Outcome;
#[cfg(feature = "run-mysql")]
use mysql::prelude::Queryable;
#[cfg(feature = "run-mysql")]
use mysql::{Conn, Opts, OptsBuilder, Statement};
#[cfg(feature = "run-mysql")]
use std::sync::OnceLock;
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
    /// The level as SQL names it.
    pub fn sql(self) -> &'static str {
        match self {
            MyLevel::ReadUncommitted => "READ UNCOMMITTED",
            MyLevel::ReadCommitted => "READ COMMITTED",
            MyLevel::RepeatableRead => "REPEATABLE READ",
            MyLevel::Serializable => "SERIALIZABLE",
        }
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
        _: MyDialect,
        _: Option<MyLevel>,
        _: Vec<(String, String)>,
        _: WorkloadKind,
        _: &str,
    ) -> anyhow::Result<super::client::Unavailable> {
        Ok(super::client::Unavailable::new("mysql", "run-mysql"))
    }
}

/// How long setup waits for the server's handshake and replies: a server
/// that is not MySQL (e.g. PostgreSQL's port) never sends a greeting.
#[cfg(feature = "run-mysql")]
const SETUP_TIMEOUT: Duration = Duration::from_secs(5);

/// A MySQL error as one line, without the driver's debug-style wrappers
/// (`MySqlError { ... }`): `1213 (40001): Deadlock found ...`.
#[cfg(feature = "run-mysql")]
pub fn error_text(e: &mysql::Error) -> String {
    // A read timeout surfaces as an I/O error, directly or inside the codec's.
    let timed_out = match e {
        mysql::Error::IoError(io) => Some(io),
        mysql::Error::CodecError(c) => {
            std::error::Error::source(c).and_then(|s| s.downcast_ref::<std::io::Error>())
        }
        _ => None,
    }
    .is_some_and(|io| {
        matches!(
            io.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        )
    });
    if timed_out {
        return "no answer from the server in time (is it a MySQL or MariaDB server?)".into();
    }
    match e {
        mysql::Error::MySqlError(me) => format!("{} ({}): {}", me.code, me.state, me.message),
        mysql::Error::DriverError(d) => d.to_string(),
        mysql::Error::IoError(io) => io.to_string(),
        mysql::Error::CodecError(c) => c.to_string(),
        mysql::Error::UrlError(u) => u.to_string(),
        other => other.to_string(),
    }
}

#[cfg(feature = "run-mysql")]
pub struct MyTarget {
    opts: Opts,
    /// `opts` with read and write timeouts, for setup only (a worker's
    /// statement may wait on locks for longer).
    setup_opts: Opts,
    dialect: MyDialect,
    level: MyLevel,
    /// The model the dialect documents for `level`, for messages.
    model: &'static str,
    /// The server's `SELECT VERSION()`, read at setup: TiDB's session
    /// settings go only to a server that says it is TiDB (MySQL and MariaDB
    /// reject the unknown variables).
    version: OnceLock<String>,
    session_vars: Vec<(String, String)>,
    workload: WorkloadKind,
    table: String,
    /// `innodb_lock_wait_timeout` and `lock_wait_timeout` of every session:
    /// `--txn-timeout` rounded up to whole seconds (the variables' unit).
    lock_wait_secs: u64,
    /// The model workloads' shape (bank's accounts, ...).
    params: ModelParams,
}

#[cfg(feature = "run-mysql")]
impl MyTarget {
    /// Refuses a level the dialect does not have; without `level`, the
    /// dialect's default.
    pub fn new(
        url: &str,
        dialect: MyDialect,
        level: Option<MyLevel>,
        session_vars: Vec<(String, String)>,
        workload: WorkloadKind,
        run_id: &str,
    ) -> anyhow::Result<Self> {
        let shown = super::client::redact_url(url);
        if shown.starts_with("mariadb://") {
            anyhow::bail!(
                "bad MySQL URL {shown:?}: MariaDB speaks MySQL's protocol: use {:?}",
                shown.replacen("mariadb://", "mysql://", 1)
            );
        }
        let opts = Opts::from_url(url).map_err(|e| {
            let e = mysql::Error::UrlError(e);
            anyhow::anyhow!("bad MySQL URL {shown:?}: {}", error_text(&e))
        })?;
        let opts: Opts = OptsBuilder::from_opts(opts)
            .tcp_connect_timeout(Some(SETUP_TIMEOUT))
            .into();
        let setup_opts: Opts = OptsBuilder::from_opts(opts.clone())
            .read_timeout(Some(SETUP_TIMEOUT))
            .write_timeout(Some(SETUP_TIMEOUT))
            .into();
        let level = dialect.level(level);
        let model = dialect.model(level).map_err(|e| anyhow::anyhow!(e))?;
        Ok(MyTarget {
            opts,
            setup_opts,
            dialect,
            level,
            model,
            version: OnceLock::new(),
            session_vars,
            workload,
            table: table_name(workload, run_id),
            lock_wait_secs: 50,
            params: ModelParams::default(),
        }
        .with_txn_timeout(super::driver::DEFAULT_TXN_TIMEOUT))
    }

    /// Sets the model workloads' shape.
    pub fn with_model(mut self, params: ModelParams) -> Self {
        self.params = params;
        self
    }

    /// Bounds each transaction by `t` (`--txn-timeout`): a row or metadata
    /// lock wait ends with error 1205 (a definite abort once rolled back) after `t` rounded
    /// up to a second, and a server that stops answering makes a read or
    /// write fail (unknown outcome) a grace period after that. The driver
    /// abandons the connection at `t` plus the grace in any case.
    pub fn with_txn_timeout(mut self, t: Duration) -> Self {
        self.lock_wait_secs = t.as_secs() + u64::from(t.subsec_nanos() > 0);
        let io = Duration::from_secs(self.lock_wait_secs) + 2 * super::driver::INTERRUPT_GRACE;
        self.opts = OptsBuilder::from_opts(self.opts)
            .read_timeout(Some(io))
            .write_timeout(Some(io))
            .into();
        self
    }
}

#[cfg(feature = "run-mysql")]
impl Target for MyTarget {
    fn describe(&self) -> String {
        format!(
            "{} {} at {}:{}",
            self.dialect.name(),
            self.model,
            self.opts.get_ip_or_hostname(),
            self.opts.get_tcp_port()
        )
    }

    /// Reads the server's version, creates the table, then opens one client
    /// as the workers will, so that a rejected --session-var fails here with
    /// the server's message. Every step is bounded by `SETUP_TIMEOUT`.
    fn setup(&self) -> anyhow::Result<()> {
        let db = |e: mysql::Error| anyhow::anyhow!(error_text(&e));
        let mut c = Conn::new(self.setup_opts.clone()).map_err(db)?;
        let version: Option<String> = c.query_first("SELECT VERSION()").map_err(db)?;
        let _ = self.version.set(version.unwrap_or_default());
        let v = if self.workload.int_values() {
            "BIGINT"
        } else {
            "LONGTEXT"
        };
        c.query_drop(format!("DROP TABLE IF EXISTS {}", self.table))
            .map_err(db)?;
        c.query_drop(format!(
            "CREATE TABLE {} (k BIGINT NOT NULL PRIMARY KEY, v {v} NOT NULL) ENGINE=InnoDB",
            self.table
        ))
        .map_err(db)?;
        for (k, v) in initial_rows(self.workload, &self.params) {
            c.exec_drop(
                format!("INSERT INTO {} (k, v) VALUES (?, ?)", self.table),
                (k as i64, v),
            )
            .map_err(db)?;
        }
        self.open(self.setup_opts.clone()).map(drop)
    }

    fn connect(&self, _worker: u32) -> anyhow::Result<Box<dyn Client>> {
        self.open(self.opts.clone())
    }

    /// What the dialect did on this server: TiDB's retry settings, or a
    /// server that is not the dialect's.
    fn notes(&self) -> Vec<String> {
        let version = self.version.get().map_or("", String::as_str);
        if let Some(warning) = self.dialect.server_note(version) {
            return vec![warning];
        }
        match self.dialect {
            MyDialect::Tidb => vec!["TiDB's automatic retry off on isolde's sessions \
                 (tidb_disable_txn_auto_retry=ON, tidb_retry_limit=0)"
                .into()],
            MyDialect::Mysql => vec![],
        }
    }

    fn teardown(&self) -> anyhow::Result<()> {
        let mut c =
            Conn::new(self.setup_opts.clone()).map_err(|e| anyhow::anyhow!(error_text(&e)))?;
        c.query_drop(format!("DROP TABLE IF EXISTS {}", self.table))
            .map_err(|e| anyhow::anyhow!(error_text(&e)))?;
        Ok(())
    }
}

#[cfg(feature = "run-mysql")]
impl MyTarget {
    /// A client on a new connection: isolation level, session variables,
    /// prepared statements.
    fn open(&self, opts: Opts) -> anyhow::Result<Box<dyn Client>> {
        let db = |e: mysql::Error| anyhow::anyhow!(error_text(&e));
        let mut conn = Conn::new(opts).map_err(db)?;
        conn.query_drop(format!(
            "SET SESSION TRANSACTION ISOLATION LEVEL {}",
            self.level.sql()
        ))
        .map_err(db)?;
        // Row locks (InnoDB's timeout) and metadata locks, e.g. another
        // session's LOCK TABLES (the server's, a day or a year by default).
        conn.query_drop(format!(
            "SET SESSION innodb_lock_wait_timeout = {n}, lock_wait_timeout = {n}",
            n = self.lock_wait_secs.max(1)
        ))
        .map_err(db)?;
        let version = self.version.get().map_or("", String::as_str);
        if MyDialect::of_server(version) == self.dialect {
            for sql in self.dialect.session_setup() {
                conn.query_drop(sql)
                    .map_err(|e| anyhow::anyhow!("{sql}: {}", error_text(&e)))?;
            }
        }
        for (name, value) in &self.session_vars {
            conn.query_drop(format!("SET SESSION {name} = {value}"))
                .map_err(|e| anyhow::anyhow!("--session-var {name}={value}: {}", error_text(&e)))?;
        }
        let t = &self.table;
        let write = match self.workload {
            WorkloadKind::ListAppend => format!(
                "INSERT INTO {t} (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = CONCAT(v, ',', VALUES(v))"
            ),
            _ => {
                format!("INSERT INTO {t} (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)")
            }
        };
        let read = conn
            .prep(format!("SELECT v FROM {t} WHERE k = ?"))
            .map_err(db)?;
        let write = conn.prep(write).map_err(db)?;
        let model = match self.workload.model() {
            None => None,
            Some(_) => Some(ModelStatements {
                scan: conn
                    .prep(format!("SELECT k, v FROM {t} ORDER BY k"))
                    .map_err(db)?,
                add: conn
                    .prep(format!("UPDATE {t} SET v = v + ? WHERE k = ?"))
                    .map_err(db)?,
                insert: conn
                    .prep(format!("INSERT INTO {t} (k, v) VALUES (?, ?)"))
                    .map_err(db)?,
                put: conn
                    .prep(format!("UPDATE {t} SET v = ? WHERE k = ?"))
                    .map_err(db)?,
                keys_with: conn
                    .prep(format!("SELECT k FROM {t} WHERE v = ? ORDER BY k"))
                    .map_err(db)?,
                get_for_update: conn
                    .prep(format!("SELECT v FROM {t} WHERE k = ? FOR UPDATE"))
                    .map_err(db)?,
            }),
        };
        Ok(Box::new(MyClient {
            conn,
            read,
            write,
            model,
            params: self.params,
            dialect: self.dialect,
            workload: self.workload,
        }))
    }
}

#[cfg(feature = "run-mysql")]
struct MyClient {
    conn: Conn,
    read: Statement,
    write: Statement,
    /// For the model workloads.
    model: Option<ModelStatements>,
    params: ModelParams,
    dialect: MyDialect,
    workload: WorkloadKind,
}

/// The model workloads' statements beyond `read`.
#[cfg(feature = "run-mysql")]
struct ModelStatements {
    scan: Statement,
    add: Statement,
    insert: Statement,
    put: Statement,
    keys_with: Statement,
    get_for_update: Statement,
}

/// The connection inside `START TRANSACTION`, as [`KvTxn`] sees it.
#[cfg(feature = "run-mysql")]
struct MyKv<'a> {
    conn: &'a mut Conn,
    read: &'a Statement,
    s: &'a ModelStatements,
}

#[cfg(feature = "run-mysql")]
impl KvTxn for MyKv<'_> {
    type Error = mysql::Error;
    fn get(&mut self, k: Key) -> Result<Option<Value>, mysql::Error> {
        self.conn.exec_first(self.read, (k as i64,))
    }
    fn scan(&mut self) -> Result<Vec<(Key, Value)>, mysql::Error> {
        let rows: Vec<(i64, i64)> = self.conn.exec(&self.s.scan, ())?;
        Ok(rows.into_iter().map(|(k, v)| (k as Key, v)).collect())
    }
    fn add(&mut self, k: Key, delta: Value) -> Result<(), mysql::Error> {
        self.conn.exec_drop(&self.s.add, (delta, k as i64))
    }
    fn insert(&mut self, k: Key, v: Value) -> Result<(), mysql::Error> {
        self.conn.exec_drop(&self.s.insert, (k as i64, v))
    }
    fn put(&mut self, k: Key, v: Value) -> Result<(), mysql::Error> {
        self.conn.exec_drop(&self.s.put, (v, k as i64))
    }
    fn keys_with(&mut self, v: Value) -> Result<Vec<Key>, mysql::Error> {
        let rows: Vec<i64> = self.conn.exec(&self.s.keys_with, (v,))?;
        Ok(rows.into_iter().map(|k| k as Key).collect())
    }
    fn get_for_update(&mut self, k: Key) -> Result<Option<Value>, mysql::Error> {
        self.conn.exec_first(&self.s.get_for_update, (k as i64,))
    }
}

/// A failure of one attempt: a database error and where it came, a
/// transfer the client refused, or a stored value we could not understand.
#[cfg(feature = "run-mysql")]
enum Failure {
    Db(mysql::Error, Phase),
    Refused(String),
    Data(String),
}

#[cfg(feature = "run-mysql")]
impl From<mysql::Error> for Failure {
    fn from(e: mysql::Error) -> Self {
        Failure::Db(e, Phase::Statement)
    }
}

#[cfg(feature = "run-mysql")]
impl MyClient {
    fn attempt(&mut self, txn: &[Mop]) -> Result<Txn, Failure> {
        self.conn.query_drop("START TRANSACTION")?;
        let mut done = Vec::with_capacity(txn.len());
        if let Some(s) = &self.model {
            let mut kv = MyKv {
                conn: &mut self.conn,
                read: &self.read,
                s,
            };
            for m in txn {
                done.push(model_op(&mut kv, self.workload, m, &self.params).map_err(
                    |f| match f {
                        ModelFailure::Db(e) => Failure::Db(e, Phase::Statement),
                        ModelFailure::Refused(why) => Failure::Refused(why),
                        ModelFailure::Data(why) => Failure::Data(why),
                    },
                )?);
            }
            self.conn
                .query_drop("COMMIT")
                .map_err(|e| Failure::Db(e, Phase::Commit))?;
            return Ok(done);
        }
        for m in txn {
            match m {
                Mop::Read(k, _) => {
                    let value = match self.workload {
                        WorkloadKind::ListAppend => {
                            let cell: Option<String> =
                                self.conn.exec_first(&self.read, (*k as i64,))?;
                            list_read(cell).map_err(Failure::Data)?
                        }
                        _ => {
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
                _ => {
                    return Err(Failure::Data(format!(
                        "{} is not an op of the {} workload",
                        super::txn_json(std::slice::from_ref(m)),
                        self.workload.name()
                    )))
                }
            }
        }
        self.conn
            .query_drop("COMMIT")
            .map_err(|e| Failure::Db(e, Phase::Commit))?;
        Ok(done)
    }
}

#[cfg(feature = "run-mysql")]
impl Client for MyClient {
    fn execute(&mut self, txn: &[Mop]) -> Completion {
        match self.attempt(txn) {
            Ok(done) => Completion::Ok(done),
            Err(Failure::Refused(e)) => {
                // Jepsen's bank client refuses, and the transaction ends.
                match self.conn.query_drop("ROLLBACK") {
                    Ok(()) => Completion::Fail(e),
                    Err(r) => Completion::Info(format!("{e}; then ROLLBACK: {}", error_text(&r))),
                }
            }
            Err(Failure::Data(e)) => Completion::Info(e),
            Err(Failure::Db(e, phase)) => {
                let code = match &e {
                    mysql::Error::MySqlError(me) => Some(me.code),
                    _ => None,
                };
                let rolled_back = self.conn.query_drop("ROLLBACK").is_ok();
                match self.dialect.classify(code, phase, rolled_back) {
                    Outcome::Fail => Completion::Fail(error_text(&e)),
                    _ => Completion::Info(error_text(&e)),
                }
            }
        }
    }
}
