//! `isolde check`: the elle-cli-compatible checker command.

use super::exit;
use super::flags::{read_options, CheckFlags};
use clap::{Args, ValueEnum};
use isolde::check::{check_history, CheckOptions, Validity, Workload};
use isolde::history::read::{load_file_with, load_with, Format};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ModelArg {
    /// Lists of appended values: `[:append k v]`, `[:r k [v ...]]`.
    ListAppend,
    /// Registers: `[:w k v]`, `[:r k v]`.
    RwRegister,
    /// Jepsen's bank: `:transfer` ops and `:read`s of every balance, which
    /// must keep the total.
    Bank,
    /// Jepsen's counter: `:add` and `:read`; each read within the bounds of
    /// the adds before and during it.
    Counter,
    /// Jepsen's set: `:add` ops and a final `:read` of the whole set.
    Set,
    /// Jepsen's set-full: `:add` and `:read`; each element's lifetime
    /// (stable, lost, never read, stale).
    SetFull,
    /// Jepsen's long-fork: write-once keys and group reads, which must be
    /// totally ordered.
    LongFork,
    /// Knossos's cas-register: `:read`, `:write`, `:cas [old new]` on one
    /// register that starts nil; the history must be linearizable.
    CasRegister,
    /// Knossos's mutex: `:acquire` and `:release` of one lock; the history
    /// must be linearizable.
    Mutex,
    /// Jepsen's comments: `:write` of unique ids and `:read`s of all; a read
    /// that saw a write must see every write completed before it began.
    Comments,
    /// Jepsen's sequential: subkeys inserted in order by one process, read
    /// latest first (`[k [v ...]]`); once one is seen, all earlier must be.
    Sequential,
}

impl ModelArg {
    /// Whether this is one of the non-transactional models
    /// (`isolde::models`), checked apart from the cycle search.
    pub fn is_plain(self) -> bool {
        !matches!(self, ModelArg::ListAppend | ModelArg::RwRegister)
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FormatArg {
    /// Jepsen EDN (one op map per line, or a vector of them).
    Edn,
    /// elle-cli JSON: an array of op objects, or one object per line.
    Json,
    /// OneLite JSON lines (a `{"history": ...}` header, then one txn per line).
    Onelite,
}

/// `-c` when not given.
const DEFAULT_MODELS: &str = "strict-serializable";

/// Check histories against consistency models, like elle-cli.
#[derive(Args, Debug, Clone)]
#[command(mut_arg("consistency_models", |a| a.default_value(DEFAULT_MODELS)))]
pub struct CheckArgs {
    /// History files (EDN, JSON, JSON lines or OneLite; gzip/zstd read
    /// directly); `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Workload; list-append or rw-register is inferred from the history's
    /// micro-ops when omitted (a note names it); elle-cli's other models must
    /// be named. Ops that do not fit it are refused (exit 4).
    #[arg(short = 'm', long = "model", value_enum)]
    pub model: Option<ModelArg>,
    /// Input format; detected from the first bytes when omitted.
    #[arg(short = 'f', long, value_enum)]
    pub format: Option<FormatArg>,
    #[command(flatten)]
    pub check: CheckFlags,
    /// rw-register: the database's own commit order, a JSON object mapping an
    /// op's :index to its position (Elle's :transaction-order).
    #[arg(long = "transaction-order", value_name = "FILE")]
    pub transaction_order: Option<PathBuf>,
    /// Write a report to this directory: index.html (verdict, models ruled
    /// out, every anomaly explained next to its diagram, timelines), one
    /// text file per anomaly type (like Elle's G2-item.txt) and one diagram
    /// per drawn cycle. With several files, one such report per history in
    /// a subdirectory named after its file, and an index.html listing them.
    /// For bank, counter, set, set-full, long-fork, comments and sequential:
    /// a page with the model's plots and bad reads, and result.json.
    /// DIR must be new, empty, or hold an earlier isolde report (whose files
    /// are removed first).
    #[arg(short = 'd', long)]
    pub directory: Option<PathBuf>,
    /// Diagram format for --directory.
    #[arg(short = 'p', long = "plot-format", default_value = "svg", value_parser = ["svg", "png"])]
    pub plot_format: String,
    /// elle-cli's flag: milliseconds spent drawing the diagrams of one
    /// anomaly type for --directory; the rest of that type is listed
    /// undrawn, and the page says so. No bound unless given.
    #[arg(short = 't', long = "plot-timeout")]
    pub plot_timeout: Option<u64>,
    /// elle-cli's flag: a diagram larger than this many bytes (of SVG; Elle
    /// counts DOT) is not drawn in --directory's report, and the page says
    /// so. No bound unless given.
    #[arg(short = 'b', long = "max-plot-bytes")]
    pub max_plot_bytes: Option<usize>,
    /// long-fork: keys per group read; a read of another number of keys
    /// makes the verdict unknown, as in Jepsen. Any size when 0.
    #[arg(short = 'g', long = "group-size", default_value_t = 0)]
    pub group_size: usize,
    /// bank: negative balances are allowed.
    #[arg(short = 'n', long = "allow-negative-balances")]
    pub allow_negative_balances: bool,
    /// bank: the total every read must show (default: the first read's).
    #[arg(short = 'o', long = "total-amount")]
    pub total_amount: Option<i64>,
    /// bank: the largest transfer tried. Accepted for elle-cli
    /// compatibility; neither elle-cli's bank check nor isolde's uses it.
    #[arg(long = "max-transfer")]
    pub max_transfer: Option<i64>,
}

impl CheckArgs {
    /// The library options these arguments ask for.
    pub fn options(&self) -> CheckOptions {
        let workload = match self.model {
            Some(ModelArg::RwRegister) => Workload::RwRegister,
            _ => Workload::ListAppend,
        };
        self.check
            .options(workload, self.model.is_some(), DEFAULT_MODELS)
    }
}

/// Runs `isolde check`; returns the exit code.
pub fn run(args: &CheckArgs) -> anyhow::Result<i32> {
    if let Some(model) = args.model.filter(|m| m.is_plain()) {
        return super::models::run(model, args);
    }
    let mut options = args.options();
    if let Err(e) = isolde::check::validate_options(&options) {
        eprintln!("isolde: {e}");
        return Ok(exit::USAGE);
    }
    if let Some(path) = &args.transaction_order {
        match read_transaction_order(path) {
            Ok(order) => options.transaction_order = Some(order),
            Err(e) => {
                eprintln!("isolde: {}: {e}", path.display());
                return Ok(exit::INPUT_ERROR);
            }
        }
    }
    let format = args.format.map(|f| match f {
        FormatArg::Edn => Format::Edn,
        FormatArg::Json => Format::Json,
        FormatArg::Onelite => Format::OneLite,
    });
    if let Some(dir) = &args.directory {
        if let Err(e) = isolde::report::dir::prepare(dir) {
            eprintln!("isolde: {e}");
            return Ok(exit::USAGE);
        }
    }
    let mut out_dir = args
        .directory
        .as_deref()
        .map(|d| ReportDir::new(d, args.files.len()));
    let mut worst = exit::VALID;
    let stdout = std::io::stdout();
    // Set when the reader of stdout went away: the rest is checked for the
    // exit code, printing nothing.
    let mut closed = false;
    for file in &args.files {
        let mut clock = isolde::check::timing::Stopwatch::start();
        let read = if file.as_os_str() == "-" {
            load_with(std::io::stdin().lock(), "<stdin>", &read_options(format))
        } else {
            load_file_with(file, &read_options(format))
        }
        .map(|l| l.history);
        let history = match read {
            Ok(h) => h,
            Err(e) => {
                eprintln!("isolde: {e}");
                worst = exit::INPUT_ERROR;
                if let Some(d) = &mut out_dir {
                    d.unreadable(file, e.to_string());
                }
                continue;
            }
        };
        clock.lap("read");
        let realtime = isolde::check::needs_realtime(&options);
        if let Some(r) =
            isolde::workload::fit::refusal(&history, options.given_workload(), realtime)
        {
            let msg = format!("{}:{}: {}", file.display(), r.line, r.what);
            eprintln!("isolde: {msg}");
            worst = exit::INPUT_ERROR;
            if let Some(d) = &mut out_dir {
                d.unreadable(file, msg);
            }
            continue;
        }
        let report = check_history(&history, &options);
        let label = file.display().to_string();
        if !closed {
            let printed = print_result(
                &mut stdout.lock(),
                &history,
                &report,
                &label,
                args.check.verbose,
                args.check.explain,
            );
            match printed {
                Err(e) if super::is_broken_pipe(&e) => closed = true,
                other => other?,
            }
        }
        if let Some(d) = &mut out_dir {
            d.add(file, &history, &report, &args.report_options(&label)?)?;
        }
        let code = match report.valid {
            Validity::True => exit::VALID,
            Validity::False => exit::INVALID,
            Validity::Unknown => exit::UNKNOWN,
        };
        worst = worse(worst, code);
        if Some(file) == args.files.last() {
            // The process ends next: let the OS take back the history and
            // the report at once rather than free millions of small
            // allocations one by one (a second on large histories).
            std::mem::forget(report);
            std::mem::forget(history);
        }
    }
    if let Some(d) = out_dir {
        d.finish()?;
    }
    Ok(worst)
}

/// The `-d` report as it is written, history by history: with one history,
/// its report fills the directory; with several, each goes to a
/// subdirectory and an index page lists them. Every file written is
/// recorded in the manifest, so the next report can remove it. Used by the
/// transactional report and by the models' (`super::models`).
pub(super) struct ReportDir<'a> {
    dir: &'a Path,
    several: bool,
    taken: HashSet<String>,
    written: Vec<String>,
    entries: Vec<isolde::report::dir::Entry>,
}

impl<'a> ReportDir<'a> {
    pub(super) fn new(dir: &'a Path, histories: usize) -> Self {
        ReportDir {
            dir,
            several: histories > 1,
            taken: HashSet::new(),
            written: vec![],
            entries: vec![],
        }
    }

    /// Writes the report of one checked history.
    fn add(
        &mut self,
        file: &Path,
        history: &isolde::history::History,
        report: &isolde::check::Report,
        opts: &isolde::report::ReportOptions,
    ) -> anyhow::Result<()> {
        let what = report.anomaly_types.join(", ");
        self.add_with(file, report.valid, what, |dir| {
            write_report_with(history, report, dir, opts)
        })
    }

    /// Writes one history's report with `write`, given the directory it
    /// goes to; `valid` and `what` are its line on the index page.
    pub(super) fn add_with(
        &mut self,
        file: &Path,
        valid: Validity,
        what: String,
        write: impl FnOnce(&Path) -> anyhow::Result<Vec<String>>,
    ) -> anyhow::Result<()> {
        if !self.several {
            self.written = write(self.dir)?;
            return Ok(());
        }
        let sub = isolde::report::dir::subdir_name(file, &mut self.taken);
        let files = write(&self.dir.join(&sub))?;
        self.written
            .extend(files.into_iter().map(|f| format!("{sub}/{f}")));
        self.entries.push(isolde::report::dir::Entry {
            label: file.display().to_string(),
            link: Some(format!("{sub}/index.html")),
            valid: Some(valid),
            what,
        });
        Ok(())
    }

    /// Lists a history that could not be checked, with why.
    pub(super) fn unreadable(&mut self, file: &Path, why: String) {
        self.entries.push(isolde::report::dir::Entry {
            label: file.display().to_string(),
            link: None,
            valid: None,
            what: why,
        });
    }

    /// Writes the index (several histories) and the manifest, and says
    /// where the report is.
    pub(super) fn finish(mut self) -> anyhow::Result<()> {
        if self.several {
            isolde::report::dir::write_index(self.dir, &self.entries).map_err(|e| {
                anyhow::anyhow!("writing the report to {}: {e}", self.dir.display())
            })?;
            self.written.push("index.html".into());
        }
        finish_report(self.dir, &self.written)
    }
}

/// Records the report's files in its manifest and prints its path (when a
/// page was written: a lone unreadable history leaves none).
fn finish_report(dir: &Path, written: &[String]) -> anyhow::Result<()> {
    if written.is_empty() {
        return Ok(());
    }
    isolde::report::dir::write_manifest(dir, written)
        .map_err(|e| anyhow::anyhow!("writing the report to {}: {e}", dir.display()))?;
    eprintln!("report: {}", dir.join("index.html").display());
    Ok(())
}

/// Prints one history's result: `LABEL<TAB>verdict`, or the JSON result
/// (`verbose`), or the human report (`explain`).
pub fn print_result(
    out: &mut impl Write,
    history: &isolde::history::History,
    report: &isolde::check::Report,
    label: &str,
    verbose: bool,
    explain: bool,
) -> anyhow::Result<()> {
    if verbose {
        let mut w = std::io::BufWriter::new(&mut *out);
        report.write_json(history, label, &mut w)?;
        writeln!(w)?;
        w.flush()?;
    } else if explain {
        writeln!(
            out,
            "{}",
            isolde::check::render_report(history, report, label)
        )?;
    } else {
        writeln!(out, "{label}\t{}", report.valid.name())?;
    }
    Ok(())
}

/// Writes the HTML report (with text files and diagrams) into `dir`, with
/// elle-cli's default plot bounds (`isolde run`'s report), records its
/// files and prints its path. `dir` went through
/// [`isolde::report::dir::prepare`] before.
pub fn write_report(
    history: &isolde::history::History,
    report: &isolde::check::Report,
    dir: &std::path::Path,
    plot_format: &str,
    title: &str,
) -> anyhow::Result<()> {
    let opts = isolde::report::ReportOptions {
        plot_format: plot_format.parse()?,
        title: Some(title.to_string()),
        ..Default::default()
    };
    let written = write_report_with(history, report, dir, &opts)?;
    finish_report(dir, &written)
}

/// Writes the report as `opts` asks, naming `dir` in an error.
fn write_report_with(
    history: &isolde::history::History,
    report: &isolde::check::Report,
    dir: &std::path::Path,
    opts: &isolde::report::ReportOptions,
) -> anyhow::Result<Vec<String>> {
    isolde::report::write_report(history, report, dir, opts)
        .map_err(|e| anyhow::anyhow!("writing the report to {}: {e}", dir.display()))
}

impl CheckArgs {
    /// The report options `-p`, `-t` and `-b` ask for.
    fn report_options(&self, title: &str) -> anyhow::Result<isolde::report::ReportOptions> {
        Ok(isolde::report::ReportOptions {
            plot_format: self.plot_format.parse()?,
            title: Some(title.to_string()),
            plot_timeout: self.plot_timeout.map(std::time::Duration::from_millis),
            max_plot_bytes: self.max_plot_bytes,
            ..Default::default()
        })
    }
}

/// Reads `{"<op index>": position, ...}`.
fn read_transaction_order(
    path: &std::path::Path,
) -> anyhow::Result<std::collections::BTreeMap<i64, i64>> {
    let text = std::fs::read_to_string(path)?;
    let map: std::collections::BTreeMap<String, i64> =
        serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!("expected a JSON object mapping op indices to positions: {e}")
        })?;
    map.into_iter()
        .map(|(k, v)| {
            Ok((
                k.trim()
                    .parse::<i64>()
                    .map_err(|_| anyhow::anyhow!("{k:?} is not an op index"))?,
                v,
            ))
        })
        .collect()
}

/// Combines exit codes: input errors dominate, then invalid, then unknown.
pub(crate) fn worse(a: i32, b: i32) -> i32 {
    let rank = |c: i32| match c {
        exit::INPUT_ERROR => 3,
        exit::INVALID => 2,
        exit::UNKNOWN => 1,
        _ => 0,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}
