//! `isolde run`'s work without its command line: a typed [`RunConfig`]
//! (the target and the workload), and [`record`], which runs the workload
//! against the target and records the history, unchecked. The binary builds
//! the configuration from its arguments, checks the history and prints.

use super::client::Target;
use super::dialect::{MyDialect, PgDialect};
use super::driver::{self, Plan};
use super::exec::ExecTarget;
use super::generator::{GenOptions, Generator};
use super::mysql::{MyLevel, MyTarget};
use super::postgres::{PgLevel, PgTarget};
use super::progress::{Counts, Progress};
use super::recorder::{Clock, Recorder};
use super::sim::{run_sim, SimBug, SimLevel, SimRun};
use super::sqlite::{Begin, Journal, SqliteTarget};
use super::{run_id, ModelParams, RunError, WorkloadKind};
use crate::rng::Dist;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The database to run against, and its target-specific settings.
#[derive(Clone, Debug)]
pub enum TargetConfig {
    /// The built-in multi-version database in memory.
    Sim {
        isolation: SimLevel,
        /// A deliberate bug.
        bug: Option<SimBug>,
    },
    /// A SQLite file through the bundled SQLite.
    Sqlite {
        /// The database file; `None`: a new file in the temporary
        /// directory, removed afterwards.
        db: Option<PathBuf>,
        begin: Begin,
        journal: Journal,
    },
    /// PostgreSQL, or a database speaking its protocol.
    Postgres {
        url: String,
        dialect: PgDialect,
        isolation: PgLevel,
        /// Settings applied on every connection, (name, value).
        session_vars: Vec<(String, String)>,
        /// Keep the server's deadlock_timeout.
        server_defaults: bool,
    },
    /// MySQL or MariaDB, or a database speaking their protocol.
    Mysql {
        url: String,
        dialect: MyDialect,
        /// `None`: the dialect's default level.
        isolation: Option<MyLevel>,
        /// Session variables set on every connection, (name, value).
        session_vars: Vec<(String, String)>,
    },
    /// A client program speaking JSON lines on stdin/stdout.
    Exec {
        /// The program and its arguments.
        command: Vec<String>,
        /// Old name of the transaction timeout, in seconds.
        reply_timeout: Option<f64>,
    },
}

impl TargetConfig {
    /// The model checked when none is asked for; an isolation level the
    /// dialect does not have is an option error.
    pub fn default_model(&self) -> Result<&'static str, RunError> {
        Ok(match self {
            TargetConfig::Sim { isolation, .. } => isolation.model(),
            TargetConfig::Sqlite { .. } => "serializable",
            TargetConfig::Postgres {
                isolation, dialect, ..
            } => dialect.model(*isolation).map_err(RunError::Option)?,
            TargetConfig::Mysql {
                isolation, dialect, ..
            } => dialect
                .model(dialect.level(*isolation))
                .map_err(RunError::Option)?,
            TargetConfig::Exec { .. } => "strict-serializable",
        })
    }

    /// Why the default model of this target and level is the one it is,
    /// where a reader could expect another.
    pub fn model_reason(&self) -> Option<&'static str> {
        match self {
            TargetConfig::Postgres {
                isolation: PgLevel::RepeatableRead,
                dialect: PgDialect::Postgres,
                ..
            } => Some("PostgreSQL's REPEATABLE READ is snapshot isolation, so it is checked against snapshot-isolation (write skew, G2-item, allowed)"),
            TargetConfig::Postgres {
                isolation: PgLevel::RepeatableRead,
                dialect: PgDialect::Yugabytedb,
                ..
            } => Some("YugabyteDB's REPEATABLE READ is its snapshot isolation level, so it is checked against snapshot-isolation (write skew, G2-item, allowed)"),
            TargetConfig::Mysql {
                isolation, dialect, ..
            } if dialect.level(*isolation) == MyLevel::RepeatableRead => Some(match dialect {
                MyDialect::Mysql => "MySQL/MariaDB REPEATABLE READ is checked against repeatable-read (Adya's PL-2.99: no G1, G2-item or lost-update), the level its name promises; InnoDB reads from a snapshot but locking writes see the latest row, so it may lose updates; -c snapshot-isolation asks the weaker question",
                MyDialect::Tidb => "TiDB's REPEATABLE READ is snapshot isolation, so it is checked against snapshot-isolation (write skew, G2-item, allowed)",
            }),
            _ => None,
        }
    }

    /// The target's name, as `isolde run` spells it.
    pub fn name(&self) -> &'static str {
        match self {
            TargetConfig::Sim { .. } => "sim",
            TargetConfig::Sqlite { .. } => "sqlite",
            TargetConfig::Postgres { .. } => "postgres",
            TargetConfig::Mysql { .. } => "mysql",
            TargetConfig::Exec { .. } => "exec",
        }
    }
}

/// Everything a run needs besides checking: the target, the workload and
/// how to drive it. The fields are `isolde run`'s options of the same
/// names; times are in seconds, validated by [`record`].
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub target: TargetConfig,
    pub workload: WorkloadKind,
    /// bank: number of accounts.
    pub accounts: u32,
    /// bank: the money, all in account 0 at the start.
    pub total_amount: i64,
    /// bank: a transfer moves 1 to this much.
    pub max_transfer: u32,
    /// bank: let transfers leave negative balances.
    pub allow_negative_balances: bool,
    /// bank (SQL clients): write the balances a transfer computed.
    pub computed_transfers: bool,
    /// long-fork: keys per group read.
    pub group_size: u32,
    /// Transactions to generate (1000 when neither this nor `time_limit`
    /// is given).
    pub txns: Option<u64>,
    pub time_limit: Option<f64>,
    /// Concurrent clients, one connection each.
    pub processes: u32,
    pub key_count: u32,
    pub min_txn_length: u32,
    pub max_txn_length: u32,
    pub max_writes_per_key: u32,
    pub read_ratio: f64,
    /// `None`: drawn from the clock (and reported in [`Recorded::seed`]).
    pub seed: Option<u64>,
    /// Transactions per second, over all clients.
    pub rate: Option<f64>,
    pub txn_timeout: Option<f64>,
    pub retries: u32,
    pub duplicates: f64,
    pub value_domain: u32,
    pub value_dist: Dist,
    pub key_dist: Dist,
    /// The history file; `None`: [`default_history_path`].
    pub out: Option<PathBuf>,
    /// Shell command run every `fault_interval` seconds.
    pub fault: Option<String>,
    pub fault_interval: f64,
}

impl RunConfig {
    fn gen_options(&self, seed: u64) -> Result<GenOptions, RunError> {
        let opts = GenOptions {
            workload: self.workload,
            key_count: self.key_count,
            min_txn_length: self.min_txn_length,
            max_txn_length: self.max_txn_length,
            max_writes_per_key: self.max_writes_per_key,
            read_ratio: self.read_ratio,
            seed,
            duplicates: self.duplicates,
            value_domain: self.value_domain,
            value_dist: self.value_dist,
            key_dist: self.key_dist,
            model: self.model_params(),
        };
        opts.validate().map_err(RunError::Option)?;
        Ok(opts)
    }

    fn model_params(&self) -> ModelParams {
        ModelParams {
            accounts: self.accounts,
            total_amount: self.total_amount,
            max_transfer: self.max_transfer,
            allow_negative: self.allow_negative_balances,
            computed_writes: self.computed_transfers,
            group_size: self.group_size,
            key_count: self.key_count,
        }
    }

    fn plan(&self) -> Result<Plan, RunError> {
        if self.processes == 0 {
            return Err(RunError::Option("--processes must be at least 1".into()));
        }
        let time_limit = self
            .time_limit
            .map(|s| secs("--time-limit", s))
            .transpose()?;
        if let Some(r) = self.rate {
            if !(r.is_finite() && r > 0.0) {
                return Err(RunError::Option(format!(
                    "--rate must be positive, got {r}"
                )));
            }
        }
        let fault = match &self.fault {
            Some(cmd) => Some((cmd.clone(), secs("--fault-interval", self.fault_interval)?)),
            None => None,
        };
        Ok(Plan {
            txn_timeout: match self.txn_timeout {
                Some(t) => secs("--txn-timeout", t)?,
                None => driver::DEFAULT_TXN_TIMEOUT,
            },
            retries: self.retries,
            processes: self.processes,
            txns: self.txns.or(if time_limit.is_none() {
                Some(1000)
            } else {
                None
            }),
            time_limit,
            rate: self.rate,
            fault,
        })
    }
}

fn secs(name: &str, s: f64) -> Result<Duration, RunError> {
    if s.is_finite() && s > 0.0 {
        Ok(Duration::from_secs_f64(s))
    } else {
        Err(RunError::Option(format!(
            "{name} must be a positive number of seconds, got {s}"
        )))
    }
}

/// `isolde-run-20261202T121653Z.jsonl` (UTC) in the current directory, with
/// `-1`, `-2`, ... when that file exists.
pub fn default_history_path() -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let stem = format!(
        "isolde-run-{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    );
    // Two runs started in the same second must not share a file.
    (0..)
        .map(|i| match i {
            0 => PathBuf::from(format!("{stem}.jsonl")),
            i => PathBuf::from(format!("{stem}-{i}.jsonl")),
        })
        .find(|p| !p.exists())
        .expect("some suffix is free")
}

/// What a run produced, before checking.
#[derive(Debug)]
pub struct Recorded {
    pub path: PathBuf,
    pub counts: Counts,
    pub elapsed: Duration,
    pub seed: u64,
    pub faults: super::fault::FaultStats,
    /// Stopped early by Ctrl-C.
    pub interrupted: bool,
    /// Why the run was aborted (a client that broke the protocol).
    pub aborted: Option<String>,
    pub warnings: Vec<String>,
    /// Settings isolde chose for the target (e.g. PostgreSQL's deadlock_timeout).
    pub notes: Vec<String>,
    /// Failed transactions by cause (the database's error code).
    pub fail_causes: BTreeMap<String, u64>,
    /// Attempts beyond the first of a transaction (`--retries`).
    pub retries: u64,
}

/// Longest a target's setup may take when its own timeouts do not fire (a
/// server that accepts the connection and never answers).
const SETUP_LIMIT: Duration = Duration::from_secs(30);

/// Runs `f(t)` on a thread of its own, which the caller may abandon; its
/// result arrives on the receiver.
fn on_own_thread<R: Send + 'static>(
    t: &Arc<dyn Target>,
    f: impl FnOnce(&dyn Target) -> R + Send + 'static,
) -> std::sync::mpsc::Receiver<R> {
    let (tx, rx) = std::sync::mpsc::channel();
    let t = Arc::clone(t);
    std::thread::spawn(move || {
        let _ = tx.send(f(t.as_ref()));
    });
    rx
}

/// Runs `t.setup()` on its own thread so that Ctrl-C, or a server that never
/// answers, cannot hang the run before it starts (the thread is abandoned:
/// the process ends soon after).
fn guarded_setup(t: &Arc<dyn Target>) -> Result<(), RunError> {
    let rx = on_own_thread(t, |t| t.setup());
    let started = Instant::now();
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(result) => {
                return result.map_err(|e| RunError::Setup {
                    target: t.describe(),
                    message: format!("{e:#}"),
                })
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(RunError::Setup {
                    target: t.describe(),
                    message: "setup panicked".into(),
                })
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
        if driver::interrupted() {
            return Err(RunError::Interrupted {
                target: t.describe(),
            });
        }
        if started.elapsed() >= SETUP_LIMIT {
            return Err(RunError::Setup {
                target: t.describe(),
                message: format!("no answer within {} s", SETUP_LIMIT.as_secs()),
            });
        }
    }
}

/// Drops the run's tables on a thread of its own: a server that stopped
/// answering, or locks an abandoned transaction still holds, must not hold
/// the run past `limit`.
fn guarded_teardown(t: &Arc<dyn Target>, limit: Duration) -> anyhow::Result<()> {
    match on_own_thread(t, |t| t.teardown()).recv_timeout(limit) {
        Ok(result) => result,
        Err(_) => anyhow::bail!("no answer within {limit:?}; the run's table is left behind"),
    }
}

/// Runs the workload and records the history; does not check it.
///
/// A first Ctrl-C stops the run gracefully (what was recorded is kept and
/// [`Recorded::interrupted`] says so) only when the program installed
/// [`driver::install_interrupt_handler`] before.
pub fn record(cfg: &RunConfig) -> anyhow::Result<Recorded> {
    let seed = cfg.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64 % 1_000_000_000)
            .unwrap_or(0)
    });
    let gen_opts = cfg.gen_options(seed)?;
    let mut plan = cfg.plan()?;
    cfg.target.default_model()?;
    let path = cfg.out.clone().unwrap_or_else(default_history_path);
    let id = run_id();
    driver::set_history_path(&path);
    let show = std::io::stderr().is_terminal();
    let progress = Progress::new(plan.txns, show);
    let started = Instant::now();
    let mut faults = Default::default();
    let mut aborted = None;
    let mut warnings = vec![];
    let mut notes = vec![];
    let mut fail_causes = BTreeMap::new();
    let mut retries = 0;
    let record_error = |e: std::io::Error| RunError::Record {
        path: path.display().to_string(),
        source: e,
    };
    let rec;
    match &cfg.target {
        TargetConfig::Sim { isolation, bug, .. } => {
            if plan.fault.is_some()
                || plan.rate.is_some()
                || cfg.txn_timeout.is_some()
                || plan.retries > 0
            {
                let msg = "--fault, --rate, --txn-timeout and --retries do not apply to sim (its time is virtual)";
                return Err(RunError::Option(msg.into()).into());
            }
            rec =
                Recorder::create(&path, Clock::Manual(Default::default())).map_err(record_error)?;
            let cfg = SimRun {
                level: *isolation,
                bug: *bug,
                processes: plan.processes,
                txns: plan.txns,
                time_limit: plan.time_limit,
            };
            run_sim(
                &cfg,
                &mut Generator::new(gen_opts),
                &rec,
                &progress,
                &driver::interrupted,
            );
        }
        target => {
            let mut temp_db = None;
            let mut protocol_error = None;
            let t: Arc<dyn Target> = match target {
                TargetConfig::Sqlite {
                    db, begin, journal, ..
                } => {
                    let file = db.clone().unwrap_or_else(|| {
                        let f = std::env::temp_dir().join(format!("isolde-{id}.sqlite"));
                        temp_db = Some(f.clone());
                        f
                    });
                    Arc::new(
                        SqliteTarget::new(file, *begin, *journal, cfg.workload, &id)
                            .with_txn_timeout(plan.txn_timeout)
                            .with_model(gen_opts.model),
                    )
                }
                TargetConfig::Postgres {
                    url,
                    dialect,
                    isolation,
                    session_vars,
                    server_defaults,
                    ..
                } => Arc::new(
                    PgTarget::new(
                        url,
                        *dialect,
                        *isolation,
                        session_vars.clone(),
                        *server_defaults,
                        cfg.workload,
                        &id,
                    )
                    .map_err(|e| RunError::Option(format!("{e:#}")))?
                    .with_txn_timeout(plan.txn_timeout)
                    .with_model(gen_opts.model),
                ),
                TargetConfig::Mysql {
                    url,
                    dialect,
                    isolation,
                    session_vars,
                    ..
                } => Arc::new(
                    MyTarget::new(
                        url,
                        *dialect,
                        *isolation,
                        session_vars.clone(),
                        cfg.workload,
                        &id,
                    )
                    .map_err(|e| RunError::Option(format!("{e:#}")))?
                    .with_txn_timeout(plan.txn_timeout)
                    .with_model(gen_opts.model),
                ),
                TargetConfig::Exec {
                    command,
                    reply_timeout,
                    ..
                } => {
                    let timeout = match (reply_timeout, cfg.txn_timeout) {
                        (Some(_), Some(_)) => {
                            let msg = "--reply-timeout is the old name of --txn-timeout: give one";
                            return Err(RunError::Option(msg.into()).into());
                        }
                        (Some(r), None) => secs("--reply-timeout", *r)?,
                        _ => plan.txn_timeout,
                    };
                    plan.txn_timeout = timeout;
                    let exec = ExecTarget::new(command.clone(), cfg.workload, &id, timeout)
                        .with_model(gen_opts.model);
                    protocol_error = Some(Arc::clone(&exec.protocol_error));
                    Arc::new(exec)
                }
                TargetConfig::Sim { .. } => unreachable!("handled above"),
            };
            guarded_setup(&t)?;
            notes = t.notes();
            rec = Recorder::create(&path, Clock::Real(Instant::now())).map_err(record_error)?;
            let stats =
                driver::run_threaded(&t, &plan, Generator::new(gen_opts.clone()), &rec, &progress);
            faults = stats.faults;
            aborted =
                protocol_error.and_then(|e| e.lock().unwrap_or_else(|p| p.into_inner()).take());
            warnings = stats.warnings;
            fail_causes = stats.fail_causes;
            retries = stats.retries;
            if let Err(e) = guarded_teardown(&t, plan.txn_timeout + driver::INTERRUPT_GRACE) {
                warnings.push(format!("cleanup failed: {e:#}"));
            }
            if let Some(f) = temp_db {
                for suffix in ["", "-wal", "-shm", "-journal"] {
                    let mut p = f.clone().into_os_string();
                    p.push(suffix);
                    let _ = std::fs::remove_file(p);
                }
            }
        }
    }
    let counts = progress.finish();
    rec.finish().map_err(record_error)?;
    Ok(Recorded {
        path,
        counts,
        elapsed: started.elapsed(),
        seed,
        faults,
        interrupted: driver::interrupted(),
        aborted,
        warnings,
        notes,
        fail_causes,
        retries,
    })
}
