//! Databases that speak another database's wire protocol: CockroachDB and
//! YugabyteDB speak PostgreSQL's, TiDB speaks MySQL's. The client code is
//! the protocol's; a dialect owns what differs: the isolation levels it has
//! and the model each is checked against, the session settings isolde sends,
//! and what an error says about the transaction (one classification per
//! protocol, parameterised by dialect). Everything here is pure, so the
//! rules are tested from the documented codes without a server.

#![warn(missing_docs)]

use super::mysql::MyLevel;
use super::postgres::PgLevel;
use crate::history::Outcome;

/// Where a transaction was when its error came.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// BEGIN, a read or a write. isolde sends no COMMIT after an error, so
    /// such a transaction never commits, whatever the error says about the
    /// statement itself.
    Statement,
    /// The COMMIT: the one point where the outcome can be unknown to the
    /// client (the commit may have happened before the error or the loss of
    /// the connection).
    Commit,
}

/// A database reached through the PostgreSQL protocol (`isolde run postgres
/// --dialect ...`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum PgDialect {
    /// PostgreSQL itself.
    #[default]
    Postgres,
    /// CockroachDB: SERIALIZABLE (its default) and READ COMMITTED.
    Cockroachdb,
    /// YugabyteDB's YSQL: SERIALIZABLE, REPEATABLE READ (snapshot), READ COMMITTED.
    Yugabytedb,
}

impl PgDialect {
    /// The name `--dialect` takes, for messages.
    pub fn name(self) -> &'static str {
        match self {
            PgDialect::Postgres => "postgres",
            PgDialect::Cockroachdb => "cockroachdb",
            PgDialect::Yugabytedb => "yugabytedb",
        }
    }

    /// The model a run at `level` is checked against by default: what the
    /// database documents for the level. A level the dialect does not have
    /// is refused (the server would silently run another one).
    pub fn model(self, level: PgLevel) -> Result<&'static str, String> {
        match (self, level) {
            // PostgreSQL's REPEATABLE READ is snapshot isolation
            // (https://www.postgresql.org/docs/current/transaction-iso.html).
            // YugabyteDB maps REPEATABLE READ to its Snapshot level and, unless
            // yb_enable_read_committed_isolation is set, READ COMMITTED to
            // Snapshot too: stronger than read committed, so checking
            // read-committed stays sound
            // (https://docs.yugabyte.com/stable/explore/transactions/isolation-levels/).
            (PgDialect::Postgres | PgDialect::Yugabytedb, PgLevel::RepeatableRead) => {
                Ok("snapshot-isolation")
            }
            // CockroachDB: SERIALIZABLE by default; READ COMMITTED since 23.2
            // (run as SERIALIZABLE when the cluster setting
            // sql.txn.read_committed_isolation.enabled is off, which is
            // stronger) (https://www.cockroachlabs.com/docs/stable/read-committed).
            (PgDialect::Cockroachdb, PgLevel::RepeatableRead) => Err(
                "--dialect cockroachdb: CockroachDB documents SERIALIZABLE and READ COMMITTED, \
                 not REPEATABLE READ (older versions run it as SERIALIZABLE); \
                 use -i serializable or -i read-committed"
                    .into(),
            ),
            (_, PgLevel::ReadCommitted) => Ok("read-committed"),
            (_, PgLevel::Serializable) => Ok("serializable"),
        }
    }

    /// The server a `SELECT version()` names: CockroachDB says e.g.
    /// `CockroachDB CCL v23.2.0 (...)`, YugabyteDB `PostgreSQL 11.2-YB-2.20.1.0-b0
    /// on ...`; anything else is taken for PostgreSQL.
    pub fn of_server(version: &str) -> PgDialect {
        if version.contains("CockroachDB") {
            PgDialect::Cockroachdb
        } else if version.contains("-YB-") {
            PgDialect::Yugabytedb
        } else {
            PgDialect::Postgres
        }
    }

    /// A warning for the run's summary when `version` names another server
    /// than the dialect's: its levels and error codes would be the wrong ones.
    pub fn server_note(self, version: &str) -> Option<String> {
        let found = PgDialect::of_server(version);
        (found != self).then(|| {
            mismatch(
                self.server(),
                version,
                &format!("use --dialect {}", found.name()),
            )
        })
    }

    /// The server's name, for messages.
    fn server(self) -> &'static str {
        match self {
            PgDialect::Postgres => "PostgreSQL",
            PgDialect::Cockroachdb => "CockroachDB",
            PgDialect::Yugabytedb => "YugabyteDB",
        }
    }

    /// Whether isolde may shorten `deadlock_timeout` on its sessions. Only
    /// PostgreSQL's lock manager waits that long before looking for a
    /// deadlock; CockroachDB has no such setting, and YugabyteDB detects
    /// deadlocks in its storage layer, so neither is sent it.
    pub fn sets_deadlock_timeout(self) -> bool {
        self == PgDialect::Postgres
    }

    /// Outcome of a transaction that ended in an error. `sqlstate` is the
    /// server's code, `None` when the server gave no answer (connection
    /// lost, I/O); `message` is the error's text.
    ///
    /// - No answer: unknown in either phase. At COMMIT the commit may have
    ///   happened; before it the server rolls back, but the driver must
    ///   reconnect, which only `info` makes it do.
    /// - Class 40 (transaction rollback), class 23 (constraint violation),
    ///   55P03 (lock not available): a definite abort, in either phase. This
    ///   covers CockroachDB's 40001 for every retry reason
    ///   (<https://www.cockroachlabs.com/docs/stable/transaction-retry-error-reference>)
    ///   and YugabyteDB's 40001 and 40P01
    ///   (<https://docs.yugabyte.com/stable/develop/learn/transactions/transactions-errorcodes-ysql/>).
    /// - 40003 (statement completion unknown; CockroachDB's "result is
    ///   ambiguous",
    ///   <https://www.cockroachlabs.com/docs/stable/common-errors#result-is-ambiguous>):
    ///   unknown at COMMIT; on a statement, the transaction is not committed.
    /// - YugabyteDB, at COMMIT: an expired transaction or a timeout is
    ///   unknown even under 40001 ("Operation expired: Transaction ...
    ///   expired or aborted by a conflict", yugabyte-db issues 5228, 11994):
    ///   the client did not hear the transaction status tablet's decision.
    /// - 57014 (query canceled: `--txn-timeout`'s cancel request, or the
    ///   `statement_timeout` backstop) on a statement: the server aborts the
    ///   whole transaction on any error and isolde sends no COMMIT after one,
    ///   so it never commits. At COMMIT the cancel may have come too late:
    ///   unknown.
    /// - Anything else (timeouts, shutdowns, unexpected errors): unknown.
    pub fn classify(self, sqlstate: Option<&str>, message: &str, phase: Phase) -> Outcome {
        let Some(code) = sqlstate else {
            return Outcome::Info;
        };
        if phase == Phase::Commit
            && (code == "40003" || (self == PgDialect::Yugabytedb && expired_or_timed_out(message)))
        {
            return Outcome::Info;
        }
        if code == "57014" {
            return if phase == Phase::Statement {
                Outcome::Fail
            } else {
                Outcome::Info
            };
        }
        if code.starts_with("40") || code.starts_with("23") || code == "55P03" {
            Outcome::Fail
        } else {
            Outcome::Info
        }
    }
}

/// The warning of a run whose server is not the one `--dialect` names.
fn mismatch(expected: &str, version: &str, consequence: &str) -> String {
    format!("warning: not a {expected} server (version {version:?}): {consequence}")
}

/// Whether an error message says the operation expired or timed out.
fn expired_or_timed_out(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("expired") || m.contains("timed out") || m.contains("timeout")
}

/// A database reached through the MySQL protocol (`isolde run mysql
/// --dialect ...`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum MyDialect {
    /// MySQL 8 or MariaDB.
    #[default]
    Mysql,
    /// TiDB: REPEATABLE READ (snapshot isolation) and READ COMMITTED.
    Tidb,
}

/// What a TiDB session runs before its first transaction: no automatic
/// retry of optimistic transactions. A retried transaction re-runs its
/// statements at a new snapshot after its reads were returned, so the
/// client's history would hide the anomalies it causes
/// (<https://docs.pingcap.com/tidb/stable/optimistic-transaction#automatic-retry>,
/// <https://docs.pingcap.com/tidb/stable/system-variables#tidb_retry_limit>).
/// Off by default since TiDB 3.0; set anyway, since a cluster may turn it on.
pub const TIDB_SESSION: [&str; 2] = [
    "SET SESSION tidb_disable_txn_auto_retry = ON",
    "SET SESSION tidb_retry_limit = 0",
];

impl MyDialect {
    /// The name `--dialect` takes, for messages.
    pub fn name(self) -> &'static str {
        match self {
            MyDialect::Mysql => "mysql",
            MyDialect::Tidb => "tidb",
        }
    }

    /// The level of a run without `-i`: SERIALIZABLE, or TiDB's default
    /// REPEATABLE READ (TiDB has no SERIALIZABLE).
    pub fn level(self, given: Option<MyLevel>) -> MyLevel {
        given.unwrap_or(match self {
            MyDialect::Mysql => MyLevel::Serializable,
            MyDialect::Tidb => MyLevel::RepeatableRead,
        })
    }

    /// The model a run at `level` is checked against by default; a level
    /// the dialect does not have is refused.
    pub fn model(self, level: MyLevel) -> Result<&'static str, String> {
        match (self, level) {
            // MySQL and MariaDB: the model named like the level.
            (MyDialect::Mysql, MyLevel::ReadUncommitted) => Ok("read-uncommitted"),
            (MyDialect::Mysql, MyLevel::RepeatableRead) => Ok("repeatable-read"),
            (MyDialect::Mysql, MyLevel::Serializable) => Ok("serializable"),
            (_, MyLevel::ReadCommitted) => Ok("read-committed"),
            // TiDB's REPEATABLE READ is snapshot isolation; its READ COMMITTED
            // takes effect in pessimistic mode (optimistic transactions keep
            // the snapshot, which is stronger)
            // (https://docs.pingcap.com/tidb/stable/transaction-isolation-levels).
            (MyDialect::Tidb, MyLevel::RepeatableRead) => Ok("snapshot-isolation"),
            // TiDB rejects SERIALIZABLE and READ UNCOMMITTED (error 8048)
            // unless tidb_skip_isolation_level_check is set, and then runs
            // them at its own level: a run would check a level the server
            // never gave.
            (MyDialect::Tidb, MyLevel::Serializable | MyLevel::ReadUncommitted) => Err(format!(
                "--dialect tidb: TiDB has no {} (it accepts the level only with \
                 tidb_skip_isolation_level_check, and then runs another); \
                 use -i repeatable-read (snapshot isolation) or -i read-committed",
                level.sql()
            )),
        }
    }

    /// Statements run on every new session, before the first transaction.
    pub fn session_setup(self) -> &'static [&'static str] {
        match self {
            MyDialect::Mysql => &[],
            MyDialect::Tidb => &TIDB_SESSION,
        }
    }

    /// The server a `SELECT VERSION()` names: TiDB reports e.g.
    /// `8.0.11-TiDB-v7.5.0`; anything else is taken for MySQL or MariaDB.
    pub fn of_server(version: &str) -> MyDialect {
        if version.contains("TiDB") {
            MyDialect::Tidb
        } else {
            MyDialect::Mysql
        }
    }

    /// A warning for the run's summary when `version` names another server
    /// than the dialect's (TiDB's session settings are then not sent).
    pub fn server_note(self, version: &str) -> Option<String> {
        match (self, MyDialect::of_server(version)) {
            (MyDialect::Tidb, MyDialect::Mysql) => Some(mismatch(
                "TiDB",
                version,
                "tidb_disable_txn_auto_retry and tidb_retry_limit not set",
            )),
            (MyDialect::Mysql, MyDialect::Tidb) => Some(mismatch(
                "MySQL or MariaDB",
                version,
                "use --dialect tidb, which turns TiDB's automatic retry off",
            )),
            _ => None,
        }
    }

    /// Outcome of a transaction that ended in an error. `code` is the
    /// server's error number (`None`: no answer, e.g. the connection was
    /// lost, during COMMIT or before it); `rolled_back` says our ROLLBACK
    /// after the error succeeded (the connection is alive, and the
    /// transaction a statement error left open is ended).
    ///
    /// Definite aborts, once rolled back: deadlock victim (1213), lock wait
    /// timeout on a statement (1205: only the statement is undone, so the
    /// rollback matters), "record has changed since last read" (1020,
    /// MariaDB's snapshot isolation), duplicate key and foreign key errors
    /// (1062, 1451, 1452), NOWAIT lock failure (3572). TiDB adds its retryable
    /// errors (<https://docs.pingcap.com/tidb/stable/error-codes>): 8002
    /// (SELECT FOR UPDATE write conflict), 8005 and 9007 (write conflicts),
    /// 8022 (commit failed, rolled back), 8028 (schema changed during the
    /// transaction). Everything else, and any error without a code, is
    /// unknown.
    pub fn classify(self, code: Option<u16>, phase: Phase, rolled_back: bool) -> Outcome {
        let definite = |c: u16| match c {
            1020 | 1062 | 1213 | 1451 | 1452 | 3572 => true,
            1205 => phase == Phase::Statement,
            8002 | 8005 | 8022 | 8028 | 9007 => self == MyDialect::Tidb,
            _ => false,
        };
        match code {
            Some(c) if rolled_back && definite(c) => Outcome::Fail,
            _ => Outcome::Info,
        }
    }
}
