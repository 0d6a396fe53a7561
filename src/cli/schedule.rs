//! `isolde schedule`: arguments and the command. Exit codes: 0 when every
//! schedule is conflict-serializable, 1 when at least one is not, 2 on a bad
//! command line, 4 on unreadable input (missing file, syntax error, no
//! schedule).

use super::{exit, is_broken_pipe};
use isolde::schedule::{analyze, parse_schedule_lines, render_error};
use std::io::{Read, Write};
use std::path::PathBuf;

/// Judge textbook schedules: conflict and view serializability (with the
/// precedence graph), recoverability classes, and named anomalies.
///
/// A schedule is written `r1(x) w2(x) w1(x) c1 c2` (also `r1[x]`, `R1(X)`,
/// commas; `c` commit, `a` abort); a file holds one schedule per line, or
/// JSON lines `{"txn":1,"op":"r","item":"x"}` forming one schedule.
/// Exit status: 0 all conflict-serializable, 1 some not, 2 bad command
/// line, 4 unreadable input (the other lines' reports are still printed).
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
                return Ok(exit::INPUT_ERROR);
            }
            s
        }
        (None, Some(p)) => match std::fs::read_to_string(p) {
            Ok(s) => s,
            Err(e) => {
                writeln!(err, "error: cannot read {}: {e}", p.display())?;
                let text = p.to_string_lossy();
                if !p.exists() && text.contains(['(', '[', ' ']) {
                    writeln!(
                        err,
                        "  to judge a schedule written on the command line, use -e: isolde schedule -e \"{text}\""
                    )?;
                }
                return Ok(exit::INPUT_ERROR);
            }
        },
        (None, None) => {
            writeln!(err, "error: give a schedule with -e or a FILE")?;
            return Ok(exit::USAGE);
        }
    };
    let schedules = parse_schedule_lines(&text);
    if schedules.is_empty() {
        writeln!(err, "error: no schedule in the input")?;
        return Ok(exit::INPUT_ERROR);
    }
    let (mut all_serializable, mut unreadable) = (true, false);
    // Set when the reader of `out` went away: judge the rest for the exit
    // code, printing nothing.
    let mut closed = false;
    let mut printed = 0;
    for s in &schedules {
        let s = match s {
            Ok(s) => s,
            Err(e) => {
                write!(err, "{}", render_error(&text, e))?;
                unreadable = true;
                continue;
            }
        };
        let report = analyze(s);
        all_serializable &= report.conflict_serializable;
        if closed {
            continue;
        }
        let written = (|| -> anyhow::Result<()> {
            if args.verbose {
                writeln!(out, "{}", serde_json::to_string(&report)?)?;
            } else {
                if printed > 0 {
                    writeln!(out)?;
                }
                write!(out, "{report}")?;
            }
            Ok(out.flush()?)
        })();
        match written {
            Err(e) if is_broken_pipe(&e) => closed = true,
            other => other?,
        }
        printed += 1;
    }
    Ok(if unreadable {
        exit::INPUT_ERROR
    } else if all_serializable {
        exit::VALID
    } else {
        exit::INVALID
    })
}
