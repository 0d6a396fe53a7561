//! `isolde schedule`: arguments and the command. Exit codes: 0 when every
//! schedule is conflict-serializable, 1 when at least one is not, 2 on bad
//! input (unreadable file, syntax error, no schedule).

use super::{analyze, parse_schedules, ScheduleError};
use std::io::{Read, Write};
use std::path::PathBuf;

/// Judge textbook schedules: conflict and view serializability (with the
/// precedence graph), recoverability classes, and named anomalies.
///
/// A schedule is written `r1(x) w2(x) w1(x) c1 c2` (also `r1[x]`, `R1(X)`,
/// commas; `c` commit, `a` abort); a file holds one schedule per line, or
/// JSON lines `{"txn":1,"op":"r","item":"x"}` forming one schedule.
/// Exit status: 0 all conflict-serializable, 1 some not, 2 bad input.
#[derive(clap::Args, Debug, Clone)]
pub struct ScheduleArgs {
    /// The schedule(s) to judge, one per line, e.g. "r1(x) w2(x) w1(x) c1 c2".
    #[arg(
        short = 'e',
        long = "expr",
        value_name = "SCHEDULE",
        conflicts_with = "file"
    )]
    pub expr: Option<String>,
    /// File of schedules (one per line) or of JSON-lines operations; `-` reads stdin.
    #[arg(value_name = "FILE", required_unless_present = "expr")]
    pub file: Option<PathBuf>,
    /// Print each report as one line of JSON instead of text.
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
}

/// Runs the command, printing reports to stdout and input errors to stderr.
/// Returns the exit status (see the module docs).
pub fn schedule_command(args: &ScheduleArgs) -> anyhow::Result<i32> {
    let (stdout, stderr) = (std::io::stdout(), std::io::stderr());
    run_schedule(args, &mut stdout.lock(), &mut stderr.lock())
}

/// [`schedule_command`] writing reports to `out` and input errors to `err`.
/// `Err` only when writing fails.
pub fn run_schedule(
    args: &ScheduleArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<i32> {
    let text = match (&args.expr, &args.file) {
        (Some(e), _) => e.clone(),
        (None, Some(p)) if p.as_os_str() == "-" => {
            let mut s = String::new();
            if let Err(e) = std::io::stdin().read_to_string(&mut s) {
                writeln!(err, "error: cannot read stdin: {e}")?;
                return Ok(2);
            }
            s
        }
        (None, Some(p)) => match std::fs::read_to_string(p) {
            Ok(s) => s,
            Err(e) => {
                writeln!(err, "error: cannot read {}: {e}", p.display())?;
                return Ok(2);
            }
        },
        (None, None) => {
            writeln!(err, "error: give a schedule with -e or a FILE")?;
            return Ok(2);
        }
    };
    let schedules = match parse_schedules(&text) {
        Ok(s) => s,
        Err(e) => {
            write!(err, "{}", render_error(&text, &e))?;
            return Ok(2);
        }
    };
    if schedules.is_empty() {
        writeln!(err, "error: no schedule in the input")?;
        return Ok(2);
    }
    let mut all_serializable = true;
    for (i, s) in schedules.iter().enumerate() {
        let report = analyze(s);
        all_serializable &= report.conflict_serializable;
        if args.verbose {
            writeln!(out, "{}", serde_json::to_string(&report)?)?;
        } else {
            if i > 0 {
                writeln!(out)?;
            }
            write!(out, "{report}")?;
        }
    }
    out.flush()?;
    Ok(if all_serializable { 0 } else { 1 })
}

/// The error, the offending line, and a caret under the bad column.
pub fn render_error(text: &str, e: &ScheduleError) -> String {
    let (line, column) = e.position();
    let mut s = format!("error: {e}\n");
    if let Some(src) = text.lines().nth(line.saturating_sub(1) as usize) {
        let pad: String = src
            .chars()
            .take(column.saturating_sub(1) as usize)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        s.push_str(&format!("  {src}\n  {pad}^\n"));
    }
    s
}
