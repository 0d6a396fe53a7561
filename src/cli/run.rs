//! `isolde run TARGET [options]`: arguments and the command itself.

use super::exit;
use super::flags::{read_options, CheckFlags};
use clap::{Args, Subcommand};
use isolde::check::{check_history, CheckOptions, Validity, Workload};
use isolde::rng::Dist;
use isolde::run::client::parse_session_var;
use isolde::run::dialect::{MyDialect, PgDialect};
use isolde::run::driver;
use isolde::run::mysql::MyLevel;
use isolde::run::postgres::PgLevel;
use isolde::run::record::{record, Recorded, RunConfig, TargetConfig};
use isolde::run::sim::{SimBug, SimLevel};
use isolde::run::sqlite::{Begin, Journal};
use isolde::run::{RunError, WorkloadKind};
use std::path::PathBuf;

/// Run a workload against a database, record the history, then check it.
#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Exit codes: 0 valid, 1 invalid, 2 bad options, a target that cannot be set up or a client that broke the protocol, 3 unknown, 4 history unreadable, 130 stopped by Ctrl-C (the recorded history is still checked and summarized)."
)]
pub struct RunArgs {
    #[command(subcommand)]
    pub target: TargetArgs,
}

impl RunArgs {
    /// The run these arguments ask for.
    pub fn config(&self) -> RunConfig {
        self.target.config()
    }
}

/// The database to run against.
#[derive(Subcommand, Debug, Clone)]
pub enum TargetArgs {
    /// A built-in multi-version database in memory (deterministic per --seed).
    /// Checked by default against the model named by -i.
    Sim {
        /// Isolation level to implement.
        #[arg(
            short = 'i',
            long = "isolation",
            value_enum,
            ignore_case = true,
            default_value = "serializable"
        )]
        isolation: SimLevel,
        /// A deliberate bug: lost-update (stale write-back; loses bank
        /// transfers, counter adds, set elements, comments' ids; lets two
        /// cas from one value, or two acquires, both succeed), non-atomic
        /// (commits visible one key at a time to readers that take no locks:
        /// a debit without its credit), aborted-read (aborted writes leak),
        /// long-fork (read-only transactions read from two unsynchronised
        /// replicas: forks, comments reads that miss an earlier id,
        /// sequential reads that miss an earlier subkey).
        #[arg(long, value_enum)]
        bug: Option<SimBug>,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// A SQLite file through the bundled SQLite. Checked by default against serializable.
    Sqlite {
        /// Database file (default: a new file in the temporary directory, removed afterwards).
        #[arg(long)]
        db: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "deferred")]
        begin: Begin,
        #[arg(long, value_enum, default_value = "wal")]
        journal: Journal,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// PostgreSQL, or CockroachDB or YugabyteDB with --dialect. Checked by
    /// default against the level's model: read-committed, snapshot-isolation
    /// (for repeatable-read), serializable.
    Postgres {
        /// e.g. postgres://postgres@127.0.0.1:5432/test
        #[arg(long)]
        url: String,
        /// The database behind the PostgreSQL protocol: its isolation levels
        /// (cockroachdb has no repeatable-read), session settings
        /// (deadlock_timeout only for postgres) and error codes (cockroachdb's
        /// 40003 "result is ambiguous" at COMMIT is info; yugabytedb's
        /// expired transactions and timeouts at COMMIT are info).
        #[arg(long, value_enum, default_value = "postgres")]
        dialect: PgDialect,
        #[arg(
            short = 'i',
            long = "isolation",
            value_enum,
            ignore_case = true,
            default_value = "serializable"
        )]
        isolation: PgLevel,
        /// Setting to apply on every connection, NAME=VALUE (repeatable),
        /// e.g. deadlock_timeout=50ms (some need a superuser).
        #[arg(long = "session-var", value_name = "NAME=VALUE", value_parser = parse_session_var)]
        session_vars: Vec<(String, String)>,
        /// Keep the server's deadlock_timeout. By default isolde sets
        /// deadlock_timeout=5ms on its own sessions when the server allows
        /// it (superuser), since the default 1 s stalls every deadlock.
        #[arg(long)]
        server_defaults: bool,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// MySQL 8 or MariaDB, or TiDB with --dialect tidb. Checked by default
    /// against the model named like the level (TiDB: repeatable-read is
    /// snapshot-isolation).
    Mysql {
        /// e.g. mysql://root@127.0.0.1:3306/test
        #[arg(long)]
        url: String,
        /// The database behind the MySQL protocol. tidb: repeatable-read (the
        /// default) or read-committed; its automatic retry is turned off on
        /// every session (tidb_disable_txn_auto_retry=ON, tidb_retry_limit=0)
        /// when SELECT VERSION() says TiDB, else the run warns; TiDB's retryable
        /// errors (8002, 8005, 8022, 8028, 9007) are fail.
        #[arg(long, value_enum, default_value = "mysql")]
        dialect: MyDialect,
        /// Default: serializable (repeatable-read with --dialect tidb).
        #[arg(short = 'i', long = "isolation", value_enum, ignore_case = true)]
        isolation: Option<MyLevel>,
        /// Session variable to set on every connection, NAME=VALUE (repeatable),
        /// e.g. innodb_snapshot_isolation=ON.
        #[arg(long = "session-var", value_name = "NAME=VALUE", value_parser = parse_session_var)]
        session_vars: Vec<(String, String)>,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Any database, through a client program speaking JSON lines on
    /// stdin/stdout (see examples/sqlite_client.py). Checked by default against
    /// strict-serializable.
    Exec {
        /// Old name of --txn-timeout (seconds to wait for the client's reply
        /// before calling the transaction info and starting a new client).
        #[arg(long, value_name = "SECS")]
        reply_timeout: Option<f64>,
        #[command(flatten)]
        common: CommonArgs,
        /// The client command and its arguments.
        #[arg(last = true, required = true, value_name = "CMD")]
        command: Vec<String>,
    },
}

/// Options every target takes.
#[derive(Args, Debug, Clone)]
// The flags `check` shares, worded for one recorded history: `-c`'s default
// is the target's model.
#[command(
    mut_arg("consistency_models", |a| a.help(
        "Consistency models to check (comma-separated; `none` for only --anomalies). Default: the model of the requested isolation level"
    )),
    mut_arg("verbose", |a| a.help("Print the full check result as JSON (Elle's keys)"))
)]
pub struct CommonArgs {
    /// list-append and rw-register are transactions checked for Elle's
    /// anomalies; bank, counter, set, set-full, long-fork, comments,
    /// sequential, cas-register and mutex are Jepsen's workloads of those
    /// names, checked as `isolde check --model` checks them (cas-register
    /// is checked for linearizability, which the sim's serializable stale
    /// reads break: use sim -i strict-serializable).
    #[arg(short = 'w', long, value_enum, default_value = "list-append")]
    pub workload: WorkloadKind,
    /// bank: number of accounts.
    #[arg(long, default_value_t = 8, help_heading = "Model workloads")]
    pub accounts: u32,
    /// bank: the money, all in account 0 at the start; every read must show
    /// this total.
    #[arg(long, default_value_t = 100, help_heading = "Model workloads")]
    pub total_amount: i64,
    /// bank: a transfer moves 1 to this much.
    #[arg(long, default_value_t = 5, help_heading = "Model workloads")]
    pub max_transfer: u32,
    /// bank: let transfers leave negative balances (by default the client
    /// refuses such a transfer: fail), and check with negative balances allowed.
    #[arg(long, help_heading = "Model workloads")]
    pub allow_negative_balances: bool,
    /// bank (SQL clients): write the balances a transfer computed from its
    /// reads (SET v = <computed>) instead of SET v = v - amount, so that a
    /// lost update changes the total. The sim always writes this way.
    #[arg(long, help_heading = "Model workloads")]
    pub computed_transfers: bool,
    /// long-fork: keys per group read.
    #[arg(long, default_value_t = 2, help_heading = "Model workloads")]
    pub group_size: u32,
    /// Number of transactions to generate (default 1000 when --time-limit is
    /// not given); --retries adds attempts, not transactions.
    #[arg(short = 'n', long)]
    pub txns: Option<u64>,
    /// Stop issuing transactions after this many seconds.
    #[arg(long, value_name = "SECS")]
    pub time_limit: Option<f64>,
    /// Concurrent clients, one connection each.
    #[arg(short = 'p', long, default_value_t = 10)]
    pub processes: u32,
    /// Keys in the active window at any time (comments: tables;
    /// sequential: subkeys per key).
    #[arg(long, default_value_t = 10)]
    pub key_count: u32,
    #[arg(long, default_value_t = 1)]
    pub min_txn_length: u32,
    #[arg(long, default_value_t = 4)]
    pub max_txn_length: u32,
    /// A key leaves the window after at most this many writes.
    #[arg(long, default_value_t = 256)]
    pub max_writes_per_key: u32,
    /// Probability that a micro-op is a read (bank, counter, set-full,
    /// comments, sequential, cas-register: that an op is a read).
    #[arg(long, default_value_t = 0.5)]
    pub read_ratio: f64,
    /// Random seed: the same seed generates the same transactions (default: random, printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Limit on transactions per second, over all clients.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Seconds a transaction may take [default: 10]. Then isolde interrupts
    /// it: if the database says it rolled back, it is recorded fail;
    /// otherwise info, the connection (or exec's client program) is dropped
    /// and the worker continues as a new process. Also bounds each
    /// connection attempt (to at least 5 s), so a server that stops
    /// answering cannot hang the run. Not for sim.
    #[arg(long, value_name = "SECS")]
    pub txn_timeout: Option<f64>,
    /// Run a transaction the database aborted (fail) again, up to N more
    /// times, with fresh written values. Every attempt is recorded (invoke
    /// and fail; the retry a new invoke). -n counts generated transactions,
    /// not attempts; the summary says how many retries ran. Not for sim.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub retries: u32,
    /// Fraction of keys whose values are drawn from a small domain, so that
    /// values repeat.
    #[arg(long, default_value_t = 0.0)]
    pub duplicates: f64,
    /// Size of that domain (cas-register: values are 0 to N-1).
    #[arg(long, default_value_t = 5)]
    pub value_domain: u32,
    /// Distribution of duplicate values: uniform or zipf:THETA.
    #[arg(long, default_value = "uniform")]
    pub value_dist: Dist,
    /// Distribution of key choice over the window: uniform or zipf:THETA.
    #[arg(long, default_value = "uniform")]
    pub key_dist: Dist,
    /// History file (JSON lines; default: isolde-run-<UTC time>.jsonl in the current directory).
    #[arg(short = 'o', long)]
    pub out: Option<PathBuf>,
    /// Shell command to run periodically during the run (e.g. restart the database).
    #[arg(long, value_name = "CMD")]
    pub fault: Option<String>,
    /// Seconds between fault commands.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    pub fault_interval: f64,
    /// How the history is checked, as `isolde check` takes it.
    #[command(flatten)]
    pub check: CheckFlags,
    /// Print only the summary line, not the first finding of each anomaly
    /// type after it.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Write the HTML report (diagrams, timelines, text files) to this
    /// directory: a new or empty one, or one holding an earlier isolde
    /// report (whose files are replaced).
    #[arg(short = 'd', long)]
    pub directory: Option<PathBuf>,
    /// Diagram format for --directory (no short form: `-p` is --processes).
    #[arg(long = "plot-format", default_value = "svg", value_parser = ["svg", "png"])]
    pub plot_format: String,
    /// Record only; do not check.
    #[arg(long)]
    pub no_check: bool,
}

impl TargetArgs {
    pub fn common(&self) -> &CommonArgs {
        match self {
            TargetArgs::Sim { common, .. }
            | TargetArgs::Sqlite { common, .. }
            | TargetArgs::Postgres { common, .. }
            | TargetArgs::Mysql { common, .. }
            | TargetArgs::Exec { common, .. } => common,
        }
    }

    /// The run these arguments ask for.
    pub fn config(&self) -> RunConfig {
        let c = self.common();
        RunConfig {
            target: match self {
                TargetArgs::Sim { isolation, bug, .. } => TargetConfig::Sim {
                    isolation: *isolation,
                    bug: *bug,
                },
                TargetArgs::Sqlite {
                    db, begin, journal, ..
                } => TargetConfig::Sqlite {
                    db: db.clone(),
                    begin: *begin,
                    journal: *journal,
                },
                TargetArgs::Postgres {
                    url,
                    dialect,
                    isolation,
                    session_vars,
                    server_defaults,
                    ..
                } => TargetConfig::Postgres {
                    url: url.clone(),
                    dialect: *dialect,
                    isolation: *isolation,
                    session_vars: session_vars.clone(),
                    server_defaults: *server_defaults,
                },
                TargetArgs::Mysql {
                    url,
                    dialect,
                    isolation,
                    session_vars,
                    ..
                } => TargetConfig::Mysql {
                    url: url.clone(),
                    dialect: *dialect,
                    isolation: *isolation,
                    session_vars: session_vars.clone(),
                },
                TargetArgs::Exec {
                    command,
                    reply_timeout,
                    ..
                } => TargetConfig::Exec {
                    command: command.clone(),
                    reply_timeout: *reply_timeout,
                },
            },
            workload: c.workload,
            accounts: c.accounts,
            total_amount: c.total_amount,
            max_transfer: c.max_transfer,
            allow_negative_balances: c.allow_negative_balances,
            computed_transfers: c.computed_transfers,
            group_size: c.group_size,
            txns: c.txns,
            time_limit: c.time_limit,
            processes: c.processes,
            key_count: c.key_count,
            min_txn_length: c.min_txn_length,
            max_txn_length: c.max_txn_length,
            max_writes_per_key: c.max_writes_per_key,
            read_ratio: c.read_ratio,
            seed: c.seed,
            rate: c.rate,
            txn_timeout: c.txn_timeout,
            retries: c.retries,
            duplicates: c.duplicates,
            value_domain: c.value_domain,
            value_dist: c.value_dist,
            key_dist: c.key_dist,
            out: c.out.clone(),
            fault: c.fault.clone(),
            fault_interval: c.fault_interval,
        }
    }
}

/// What to use instead of a target isolde does not have under that name
/// (`isolde run mariadb`).
pub fn target_hint(name: &str) -> Option<&'static str> {
    match name.to_ascii_lowercase().as_str() {
        "mariadb" => Some("use `isolde run mysql` (MariaDB speaks MySQL's protocol)"),
        "postgresql" | "pg" | "psql" => Some("use `isolde run postgres`"),
        "sqlite3" => Some("use `isolde run sqlite`"),
        _ => None,
    }
}

impl CommonArgs {
    /// The options of the model checker that checks a model workload, as
    /// `isolde check --model` takes them.
    fn model_options(&self) -> isolde::models::Options {
        isolde::models::Options {
            bank: isolde::models::bank::BankOptions {
                negative_balances: self.allow_negative_balances,
                total_amount: Some(self.total_amount),
            },
            group_size: self.group_size as usize,
            // cas-register and mutex: the bound `isolde check` gives the
            // linearizability search.
            linearizable: isolde::models::linearizable::LinOptions {
                time_limit_ms: Some(self.check.solver_timeout),
                ..Default::default()
            },
        }
    }

    /// `isolde check` flags that check what this run records the same way.
    fn model_check_flags(&self) -> String {
        match self.workload {
            WorkloadKind::Bank => {
                let neg = if self.allow_negative_balances {
                    " --allow-negative-balances"
                } else {
                    ""
                };
                format!(" --total-amount {}{neg}", self.total_amount)
            }
            WorkloadKind::LongFork => format!(" --group-size {}", self.group_size),
            WorkloadKind::CasRegister | WorkloadKind::Mutex => {
                format!(" --solver-timeout {}", self.check.solver_timeout)
            }
            _ => String::new(),
        }
    }

    fn check_options(&self, default_model: &str) -> CheckOptions {
        let workload = match self.workload {
            WorkloadKind::RwRegister => Workload::RwRegister,
            // The models are not checked by this pipeline.
            _ => Workload::ListAppend,
        };
        self.check.options(workload, true, default_model)
    }
}

/// Ends the process at a second Ctrl-C (the driver has named the history).
fn quit() -> ! {
    std::process::exit(exit::INTERRUPTED)
}

/// The exit code of a run that did not get to record: options and a target
/// that cannot be set up (refused connection, rejected --session-var) are
/// the command line's fault (2); Ctrl-C during setup is 130, as for a
/// shell; anything else (the history file) is 4.
fn error_code(e: &anyhow::Error) -> i32 {
    match e.downcast_ref::<RunError>() {
        Some(RunError::Option(_) | RunError::Setup { .. }) => exit::USAGE,
        Some(RunError::Interrupted { .. }) => exit::INTERRUPTED,
        _ => exit::INPUT_ERROR,
    }
}

/// Runs `isolde run`; returns the exit code (as `isolde check`: 0 valid,
/// 1 invalid, 3 unknown, 4 history unreadable; 2 for bad options, a target
/// that cannot be set up, or a client that broke the protocol; 130 when
/// Ctrl-C cut the run short, whatever the verdict of what it recorded).
pub fn run_command(args: &RunArgs) -> anyhow::Result<i32> {
    let common = args.target.common();
    let cfg = args.config();
    let model = match cfg.target.default_model() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("isolde: {e}");
            return Ok(exit::USAGE);
        }
    };
    if common.workload.model().is_some() {
        return run_model_command(args, &cfg);
    }
    let options = common.check_options(model);
    if !common.no_check {
        if let Err(e) = isolde::check::validate_options(&options) {
            eprintln!("isolde: {e}");
            return Ok(exit::USAGE);
        }
    }
    // Before the run, not after it: a directory that cannot take the
    // report must not cost the run.
    if let Some(dir) = &common.directory {
        if let Err(e) = isolde::report::dir::prepare(dir) {
            eprintln!("isolde: {e}");
            return Ok(exit::USAGE);
        }
    }
    let (r, summary) = match record_to_check(args, &cfg) {
        Ok(x) => x,
        Err(code) => return Ok(code),
    };
    let stopped = |code: i32| stopped(&r, code);
    let history = match isolde::history::read::load_file_with(&r.path, &read_options(None))
        .map(|l| l.history)
    {
        Ok(h) => h,
        Err(e) => {
            eprintln!("{summary}");
            eprintln!("isolde: {e}");
            return Ok(exit::INPUT_ERROR);
        }
    };
    let report = check_history(&history, &options);
    let models = options.models.clone().unwrap_or_default().join(",");
    // `-c none`: say what was checked instead of an empty `()`.
    let models_said = if models.is_empty() {
        "no model, -a only".to_string()
    } else {
        models.clone()
    };
    let verdict = match report.valid {
        Validity::True => format!("valid ({models_said})"),
        Validity::False => format!(
            "INVALID ({models_said}): {}",
            report.anomaly_types.join(", ")
        ),
        Validity::Unknown => {
            // Why: the anomaly types (e.g. cycle-search-timeout), else the
            // last note (e.g. the duplicate-value solver's time limit).
            let why = if report.anomaly_types.is_empty() {
                report.notes.last().cloned().unwrap_or_default()
            } else {
                report.anomaly_types.join(", ")
            };
            format!("unknown ({models_said}): {why}")
        }
    };
    eprintln!("{summary}; {verdict}");
    if common.check.consistency_models.is_none() {
        if let Some(why) = cfg.target.model_reason() {
            eprintln!("isolde: {why}");
        }
    }
    let label = r.path.display().to_string();
    let shown_elsewhere = common.quiet || common.check.verbose || common.check.explain;
    if !(shown_elsewhere || report.anomalies.is_empty()) {
        print_first_findings(&history, &report, &label, common, &models);
    }
    let out = &mut std::io::stdout().lock();
    super::check::print_result(
        out,
        &history,
        &report,
        &label,
        common.check.verbose,
        common.check.explain,
    )?;
    if let Some(dir) = &common.directory {
        super::check::write_report(&history, &report, dir, &common.plot_format, &label)?;
    }
    Ok(stopped(match report.valid {
        Validity::True => exit::VALID,
        Validity::False => exit::INVALID,
        Validity::Unknown => exit::UNKNOWN,
    }))
}

/// Records the run and prints its warnings; the record and its summary
/// line, or `Err` with the exit code when the run ends before any check
/// (it failed, the client broke the protocol, or `--no-check`).
fn record_to_check(args: &RunArgs, cfg: &RunConfig) -> Result<(Recorded, String), i32> {
    driver::install_interrupt_handler(quit);
    let r = match record(cfg) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("isolde: {e:#}");
            return Err(error_code(&e));
        }
    };
    print_warnings(&r);
    let summary = summary(cfg, &r);
    if let Some(why) = &r.aborted {
        eprintln!("{summary}; not checked");
        eprintln!("isolde: run aborted: the client broke the protocol: {why}");
        return Err(exit::USAGE);
    }
    if args.target.common().no_check {
        eprintln!("{summary}; not checked");
        return Err(if r.interrupted {
            exit::INTERRUPTED
        } else {
            exit::VALID
        });
    }
    Ok((r, summary))
}

/// `isolde run -w bank|counter|set|set-full|long-fork|comments|sequential|
/// cas-register|mutex`: records as any run,
/// then checks the history with the model's checker (`src/models/`), as
/// `isolde check --model` would.
fn run_model_command(args: &RunArgs, cfg: &RunConfig) -> anyhow::Result<i32> {
    let common = args.target.common();
    let workload = common.workload.name();
    let model = common.workload.model().expect("a model workload");
    let refuse = |what: &str| {
        eprintln!("isolde: {what} does not apply to -w {workload}: its model's checker decides");
        Ok(exit::USAGE)
    };
    if common.check.consistency_models.is_some() {
        return refuse("-c");
    }
    if !common.check.anomalies.is_empty() {
        return refuse("-a");
    }
    if let Some(flag) = common.check.transactional_flags().first() {
        return refuse(flag);
    }
    if common.directory.is_some() {
        return refuse("-d (no HTML report for the model workloads; use -v or -x)");
    }
    let (r, summary) = match record_to_check(args, cfg) {
        Ok(x) => x,
        Err(code) => return Ok(code),
    };
    let stopped = |code: i32| stopped(&r, code);
    let checked = isolde::models::read_ops_file(&r.path, None).and_then(|ops| {
        isolde::models::check(model, &ops, &common.model_options()).map(|c| (ops, c))
    });
    let (ops, checked) = match checked {
        Ok(x) => x,
        Err(e) => {
            eprintln!("{summary}");
            eprintln!("isolde: {e}");
            return Ok(exit::INPUT_ERROR);
        }
    };
    let valid = checked.valid();
    let verdict = match valid {
        Validity::True => format!("valid ({workload})"),
        Validity::False => format!("INVALID ({workload})"),
        Validity::Unknown => format!("unknown ({workload})"),
    };
    eprintln!("{summary}; {verdict}");
    let label = r.path.display().to_string();
    let explained = checked.explain(&ops);
    let shown_elsewhere = common.quiet || common.check.verbose || common.check.explain;
    if valid != Validity::True && !shown_elsewhere {
        // The first findings, as `isolde check -x` words them.
        const SHOWN: usize = 12;
        eprintln!();
        for line in explained.lines().take(SHOWN) {
            eprintln!("{line}");
        }
        let more = explained.lines().count().saturating_sub(SHOWN);
        if more > 0 {
            eprintln!("({more} more lines)");
        }
        eprintln!(
            "\nall findings: isolde check -x --model {workload}{} {label}",
            common.model_check_flags()
        );
    }
    let out = &mut std::io::stdout().lock();
    use std::io::Write;
    if common.check.verbose {
        let mut j = serde_json::Map::new();
        j.insert("file".into(), label.clone().into());
        if let serde_json::Value::Object(m) = checked.to_json(&ops) {
            j.extend(m);
        }
        serde_json::to_writer_pretty(&mut *out, &j)?;
        writeln!(out)?;
    } else if common.check.explain {
        write!(out, "{label}: {}\n{explained}", valid.name())?;
    }
    Ok(stopped(match valid {
        Validity::True => exit::VALID,
        Validity::False => exit::INVALID,
        Validity::Unknown => exit::UNKNOWN,
    }))
}

/// The run's summary line, before the verdict: counts, throughput, causes
/// of failure, faults, settings, seed and history file.
fn summary(cfg: &RunConfig, r: &Recorded) -> String {
    let c = r.counts;
    let secs = r.elapsed.as_secs_f64();
    let all = c.ok + c.fail + c.info;
    // -n counts the workload's transactions; the final read of every key
    // is said apart, so that `-n 300` reads as 300.
    let final_read = match c.final_reads {
        0 => String::new(),
        1 => " plus the final read".to_string(),
        n => format!(" plus {n} attempts at the final read"),
    };
    // With --retries, -n counts transactions, and the attempts are said apart.
    let (txns, attempts) = if cfg.retries > 0 {
        (
            c.workload().saturating_sub(r.retries),
            format!(
                " ({} attempts, {} of them retries)",
                c.workload(),
                r.retries
            ),
        )
    } else {
        (c.workload(), String::new())
    };
    let mut summary = format!(
        "isolde run {}{}: {txns} txns{attempts}{final_read} ({} ok, {} fail, {} info) in {:.1}s ({:.0}/s)",
        cfg.target.name(),
        if r.interrupted { " (interrupted)" } else { "" },
        c.ok,
        c.fail,
        c.info,
        secs,
        all as f64 / secs.max(1e-9),
    );
    if !r.fail_causes.is_empty() {
        let causes: Vec<String> = r
            .fail_causes
            .iter()
            .map(|(cause, n)| format!("{cause} x{n}"))
            .collect();
        summary += &format!(", fail by cause: {}", causes.join(", "));
    }
    if cfg.fault.is_some() {
        let f = &r.faults;
        summary += &format!(", faults: {} ok, {} failed", f.ran - f.failed, f.failed);
    }
    for note in &r.notes {
        summary += &format!("; {note}");
    }
    summary + &format!("; seed {}; history {}", r.seed, r.path.display())
}

/// Prints what went wrong besides the transactions: workers that gave up,
/// a fault command that failed (its status and first lines of stderr).
fn print_warnings(r: &Recorded) {
    for w in &r.warnings {
        eprintln!("isolde: warning: {w}");
    }
    if let Some(why) = &r.faults.first_failure {
        eprintln!(
            "isolde: warning: the fault command failed {} of {} times; first failure: {why}",
            r.faults.failed, r.faults.ran
        );
    }
}

/// Prints, after the summary, the first finding of each anomaly type as
/// `isolde check -x` explains it, and how to see them all.
fn print_first_findings(
    history: &isolde::history::History,
    report: &isolde::check::Report,
    label: &str,
    common: &CommonArgs,
    models: &str,
) {
    for (kind, findings) in &report.anomalies {
        let Some(first) = findings.first() else {
            continue;
        };
        eprintln!();
        eprint!("{}", isolde::check::render_finding(history, kind, 1, first));
        if findings.len() > 1 {
            eprintln!("({} more {kind})", findings.len() - 1);
        }
    }
    let workload = common.workload.name();
    let models = if models.is_empty() { "none" } else { models };
    let anomalies = if common.check.anomalies.is_empty() {
        String::new()
    } else {
        format!(" -a {}", common.check.anomalies)
    };
    let inference = common.check.inference_flags();
    eprintln!(
        "\nall findings: isolde check -x -m {workload} -c {models}{anomalies}{inference} {label} (or -d DIR for the HTML report)"
    );
}

/// The exit code for a verdict's `code`: a run cut short by Ctrl-C is
/// checked, but never exits 0.
fn stopped(r: &Recorded, code: i32) -> i32 {
    if r.interrupted {
        exit::INTERRUPTED
    } else {
        code
    }
}
