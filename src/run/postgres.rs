//! `isolde run postgres`: PostgreSQL through the synchronous `postgres` crate.

#[cfg(feature = "run-postgres")]
use super::client::{
    initial_rows, list_read, model_op, table_name, Client, Completion, KvTxn, ModelFailure, Target,
};
use super::dialect::PgDialect;
#[cfg(feature = "run-postgres")]
use super::dialect::Phase;
use super::WorkloadKind;
#[cfg(feature = "run-postgres")]
use super::{Key, ModelParams, Value};
#[cfg(feature = "run-postgres")]
use super::{Mop, ReadValue, Txn};
#[cfg(feature = "run-postgres")]
use crate::history::Outcome;
#[cfg(feature = "run-postgres")]
use postgres::config::Host;
#[cfg(feature = "run-postgres")]
use postgres::{Config, IsolationLevel, NoTls, Statement};
#[cfg(feature = "run-postgres")]
use std::sync::atomic::{AtomicBool, Ordering};
#[cfg(feature = "run-postgres")]
use std::sync::OnceLock;
#[cfg(feature = "run-postgres")]
use std::time::Duration;

/// `deadlock_timeout` isolde sets on its own sessions unless told to keep the
/// server's: PostgreSQL's default (1 s) stalls every deadlocked transaction
/// for a second, which turns contended workloads into a crawl (29 txn/s
/// instead of over 1,000 on the README's ladder workload).
pub const FAST_DEADLOCK_TIMEOUT: &str = "5ms";

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PgLevel {
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

#[cfg(feature = "run-postgres")]
impl PgLevel {
    fn level(self) -> IsolationLevel {
        match self {
            PgLevel::ReadCommitted => IsolationLevel::ReadCommitted,
            PgLevel::RepeatableRead => IsolationLevel::RepeatableRead,
            PgLevel::Serializable => IsolationLevel::Serializable,
        }
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
        _: PgDialect,
        _: PgLevel,
        _: Vec<(String, String)>,
        _: bool,
        _: WorkloadKind,
        _: &str,
    ) -> anyhow::Result<super::client::Unavailable> {
        Ok(super::client::Unavailable::new("postgres", "run-postgres"))
    }
}

#[cfg(feature = "run-postgres")]
pub struct PgTarget {
    config: Config,
    dialect: PgDialect,
    level: PgLevel,
    /// The model the dialect documents for `level`, for messages.
    model: &'static str,
    /// Set on every connection with `set_config` (bound parameters).
    session_vars: Vec<(String, String)>,
    /// Try [`FAST_DEADLOCK_TIMEOUT`] (PostgreSQL only; not with
    /// --server-defaults, nor when the user sets deadlock_timeout).
    fast_deadlocks: bool,
    /// Whether the server accepted it (decided once, at setup).
    fast_accepted: AtomicBool,
    /// The server's `SELECT version()`, read at setup, to warn when it is
    /// not the dialect's.
    version: OnceLock<String>,
    workload: WorkloadKind,
    table: String,
    /// `--txn-timeout`: the driver cancels a transaction that overruns it.
    txn_timeout: Duration,
    /// The model workloads' shape (bank's accounts, ...).
    params: ModelParams,
}

/// `host:port` of a PostgreSQL config, for messages.
#[cfg(feature = "run-postgres")]
fn address(config: &Config) -> String {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}")
}

/// A PostgreSQL error as one line: the server's SQLSTATE and message, or the
/// client's description (no debug structs).
#[cfg(feature = "run-postgres")]
pub fn error_text(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(cause) = src {
                let c = cause.to_string();
                if !s.contains(&c) {
                    s = format!("{s}: {c}");
                }
                src = cause.source();
            }
            s
        }
    }
}

#[cfg(feature = "run-postgres")]
impl PgTarget {
    /// Refuses a level the dialect does not have.
    pub fn new(
        url: &str,
        dialect: PgDialect,
        level: PgLevel,
        session_vars: Vec<(String, String)>,
        server_defaults: bool,
        workload: WorkloadKind,
        run_id: &str,
    ) -> anyhow::Result<Self> {
        let mut config: Config = url.parse().map_err(|e| {
            anyhow::anyhow!(
                "bad PostgreSQL URL {:?}: {e}",
                super::client::redact_url(url)
            )
        })?;
        if config.get_application_name().is_none() {
            config.application_name("isolde");
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(5));
        }
        let model = dialect.model(level).map_err(|e| anyhow::anyhow!(e))?;
        let fast_deadlocks = dialect.sets_deadlock_timeout()
            && !server_defaults
            && !session_vars.iter().any(|(n, _)| n == "deadlock_timeout");
        Ok(PgTarget {
            config,
            dialect,
            level,
            model,
            session_vars,
            fast_deadlocks,
            fast_accepted: AtomicBool::new(false),
            version: OnceLock::new(),
            workload,
            table: table_name(workload, run_id),
            txn_timeout: super::driver::DEFAULT_TXN_TIMEOUT,
            params: ModelParams::default(),
        })
    }

    /// Sets the model workloads' shape.
    pub fn with_model(mut self, params: ModelParams) -> Self {
        self.params = params;
        self
    }

    /// Sets `--txn-timeout`. The driver cancels an overrunning transaction
    /// itself; the server's `statement_timeout` (the timeout plus the grace)
    /// also ends statements of a session the driver abandoned, so that it
    /// does not hold locks for long.
    pub fn with_txn_timeout(mut self, t: Duration) -> Self {
        self.txn_timeout = t;
        self
    }
}

#[cfg(feature = "run-postgres")]
impl Target for PgTarget {
    fn describe(&self) -> String {
        format!(
            "{} {} at {}",
            self.dialect.name(),
            self.model,
            address(&self.config)
        )
    }

    /// Reads the server's version, creates the table, decides whether the
    /// short deadlock_timeout is allowed (it needs a superuser), then opens
    /// one client as the workers will, so that a rejected --session-var
    /// fails here, with the server's message, rather than in every worker's
    /// reconnect loop.
    fn setup(&self) -> anyhow::Result<()> {
        let db = |e: postgres::Error| anyhow::anyhow!(error_text(&e));
        let mut c = self.config.connect(NoTls).map_err(db)?;
        let version: String = c.query_one("SELECT version()", &[]).map_err(db)?.get(0);
        let _ = self.version.set(version);
        let v = if self.workload.int_values() {
            "BIGINT"
        } else {
            "TEXT"
        };
        // One statement each, not one batch (which runs as one transaction):
        // distributed SQL databases limit schema changes grouped in a
        // transaction.
        for ddl in [
            format!("DROP TABLE IF EXISTS {}", self.table),
            format!(
                "CREATE TABLE {} (k BIGINT PRIMARY KEY, v {v} NOT NULL)",
                self.table
            ),
        ] {
            c.batch_execute(&ddl).map_err(db)?;
        }
        for (k, v) in initial_rows(self.workload, &self.params) {
            c.execute(
                &format!("INSERT INTO {} (k, v) VALUES ($1, $2)", self.table),
                &[&(k as i64), &v],
            )
            .map_err(db)?;
        }
        if self.fast_deadlocks {
            let ok = c
                .execute(
                    "SELECT set_config('deadlock_timeout', $1, false)",
                    &[&FAST_DEADLOCK_TIMEOUT],
                )
                .is_ok();
            self.fast_accepted.store(ok, Ordering::Relaxed);
        }
        self.connect(0).map(drop)
    }

    fn notes(&self) -> Vec<String> {
        let version = self.version.get().map_or("", String::as_str);
        let mut notes: Vec<String> = self.dialect.server_note(version).into_iter().collect();
        if self.fast_deadlocks {
            notes.push(if self.fast_accepted.load(Ordering::Relaxed) {
                format!("deadlock_timeout={FAST_DEADLOCK_TIMEOUT} on isolde's sessions (--server-defaults keeps the server's)")
            } else {
                "the server's deadlock_timeout kept (setting it needs a superuser)".into()
            });
        }
        notes
    }

    fn connect(&self, _worker: u32) -> anyhow::Result<Box<dyn Client>> {
        let db = |e: postgres::Error| anyhow::anyhow!(error_text(&e));
        let mut conn = self.config.connect(NoTls).map_err(db)?;
        if self.fast_accepted.load(Ordering::Relaxed) {
            conn.execute(
                "SELECT set_config('deadlock_timeout', $1, false)",
                &[&FAST_DEADLOCK_TIMEOUT],
            )
            .map_err(db)?;
        }
        let backstop = (self.txn_timeout + super::driver::INTERRUPT_GRACE).as_millis();
        conn.execute(
            "SELECT set_config('statement_timeout', $1, false)",
            &[&backstop.to_string()],
        )
        .map_err(db)?;
        for (name, value) in &self.session_vars {
            conn.execute("SELECT set_config($1, $2, false)", &[name, value])
                .map_err(|e| anyhow::anyhow!("--session-var {name}={value}: {}", error_text(&e)))?;
        }
        let t = &self.table;
        let write = match self.workload {
            WorkloadKind::ListAppend => format!(
                "INSERT INTO {t} AS old (k, v) VALUES ($1, $2) \
                 ON CONFLICT (k) DO UPDATE SET v = old.v || ',' || EXCLUDED.v"
            ),
            _ => format!(
                "INSERT INTO {t} (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v"
            ),
        };
        let read = conn
            .prepare(&format!("SELECT v FROM {t} WHERE k = $1"))
            .map_err(db)?;
        let write = conn.prepare(&write).map_err(db)?;
        let model = match self.workload.model() {
            None => None,
            Some(_) => Some(ModelStatements {
                scan: conn
                    .prepare(&format!("SELECT k, v FROM {t} ORDER BY k"))
                    .map_err(db)?,
                add: conn
                    .prepare(&format!("UPDATE {t} SET v = v + $1 WHERE k = $2"))
                    .map_err(db)?,
                insert: conn
                    .prepare(&format!("INSERT INTO {t} (k, v) VALUES ($1, $2)"))
                    .map_err(db)?,
                put: conn
                    .prepare(&format!("UPDATE {t} SET v = $1 WHERE k = $2"))
                    .map_err(db)?,
                keys_with: conn
                    .prepare(&format!("SELECT k FROM {t} WHERE v = $1 ORDER BY k"))
                    .map_err(db)?,
                get_for_update: conn
                    .prepare(&format!("SELECT v FROM {t} WHERE k = $1 FOR UPDATE"))
                    .map_err(db)?,
            }),
        };
        Ok(Box::new(PgClient {
            conn,
            read,
            write,
            model,
            params: self.params,
            level: self.level.level(),
            dialect: self.dialect,
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
    /// For the model workloads.
    model: Option<ModelStatements>,
    params: ModelParams,
    level: IsolationLevel,
    dialect: PgDialect,
    workload: WorkloadKind,
}

/// The model workloads' statements beyond `read`.
#[cfg(feature = "run-postgres")]
struct ModelStatements {
    scan: Statement,
    add: Statement,
    insert: Statement,
    put: Statement,
    keys_with: Statement,
    get_for_update: Statement,
}

/// A transaction in progress, as [`KvTxn`] sees it.
#[cfg(feature = "run-postgres")]
struct PgKv<'a, 'b> {
    tx: &'a mut postgres::Transaction<'b>,
    read: &'a Statement,
    s: &'a ModelStatements,
}

#[cfg(feature = "run-postgres")]
impl KvTxn for PgKv<'_, '_> {
    type Error = postgres::Error;
    fn get(&mut self, k: Key) -> Result<Option<Value>, postgres::Error> {
        Ok(self
            .tx
            .query_opt(self.read, &[&(k as i64)])?
            .map(|r| r.get::<_, i64>(0)))
    }
    fn scan(&mut self) -> Result<Vec<(Key, Value)>, postgres::Error> {
        Ok(self
            .tx
            .query(&self.s.scan, &[])?
            .iter()
            .map(|r| (r.get::<_, i64>(0) as Key, r.get::<_, i64>(1)))
            .collect())
    }
    fn add(&mut self, k: Key, delta: Value) -> Result<(), postgres::Error> {
        self.tx.execute(&self.s.add, &[&delta, &(k as i64)])?;
        Ok(())
    }
    fn insert(&mut self, k: Key, v: Value) -> Result<(), postgres::Error> {
        self.tx.execute(&self.s.insert, &[&(k as i64), &v])?;
        Ok(())
    }
    fn put(&mut self, k: Key, v: Value) -> Result<(), postgres::Error> {
        self.tx.execute(&self.s.put, &[&v, &(k as i64)])?;
        Ok(())
    }
    fn keys_with(&mut self, v: Value) -> Result<Vec<Key>, postgres::Error> {
        Ok(self
            .tx
            .query(&self.s.keys_with, &[&v])?
            .iter()
            .map(|r| r.get::<_, i64>(0) as Key)
            .collect())
    }
    fn get_for_update(&mut self, k: Key) -> Result<Option<Value>, postgres::Error> {
        Ok(self
            .tx
            .query_opt(&self.s.get_for_update, &[&(k as i64)])?
            .map(|r| r.get::<_, i64>(0)))
    }
}

#[cfg(feature = "run-postgres")]
/// A failure of one attempt: a database error and where it came, a
/// transfer the client refused, or a stored value we could not understand.
enum Failure {
    Db(postgres::Error, Phase),
    Refused(String),
    Data(String),
}

#[cfg(feature = "run-postgres")]
impl From<postgres::Error> for Failure {
    fn from(e: postgres::Error) -> Self {
        Failure::Db(e, Phase::Statement)
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
        if let Some(s) = &self.model {
            let mut kv = PgKv {
                tx: &mut tx,
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
            tx.commit().map_err(|e| Failure::Db(e, Phase::Commit))?;
            return Ok(done);
        }
        for m in txn {
            match m {
                Mop::Read(k, _) => {
                    let row = tx.query_opt(&self.read, &[&(*k as i64)])?;
                    let value = match self.workload {
                        WorkloadKind::ListAppend => {
                            list_read(row.map(|r| r.get::<_, String>(0))).map_err(Failure::Data)?
                        }
                        _ => row.map(|r| ReadValue::Int(r.get::<_, i64>(0))),
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
                _ => {
                    return Err(Failure::Data(format!(
                        "{} is not an op of the {} workload",
                        super::txn_json(std::slice::from_ref(m)),
                        self.workload.name()
                    )))
                }
            }
        }
        tx.commit().map_err(|e| Failure::Db(e, Phase::Commit))?;
        Ok(done)
    }
}

#[cfg(feature = "run-postgres")]
impl Client for PgClient {
    fn execute(&mut self, txn: &[Mop]) -> Completion {
        match self.attempt(txn) {
            Ok(done) => Completion::Ok(done),
            Err(Failure::Refused(e)) => Completion::Fail(e),
            Err(Failure::Data(e)) => Completion::Info(e),
            Err(Failure::Db(e, phase)) => {
                // A closed connection is no answer, whatever came before.
                let code = e.code().filter(|_| !e.is_closed()).map(|c| c.code());
                let msg = error_text(&e);
                match self.dialect.classify(code, &msg, phase) {
                    Outcome::Fail => Completion::Fail(msg),
                    _ => Completion::Info(msg),
                }
            }
        }
    }

    /// PostgreSQL's cancel request, on a new connection to the server.
    fn interrupter(&self) -> Option<super::client::Interrupter> {
        let token = self.conn.cancel_token();
        Some(Box::new(move || {
            let _ = token.cancel_query(NoTls);
        }))
    }
}
