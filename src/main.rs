//! The `isolde` binary: a thin layer over the library.

use clap::{Parser, Subcommand};
mod cli;

use cli::exit;

/// isolde: a black-box checker of transactional isolation.
#[derive(Parser, Debug)]
#[command(
    name = "isolde",
    version,
    about,
    after_help = "Exit codes: 0 valid, 1 invalid, 2 bad usage, 3 unknown, 4 unreadable input; `isolde run` stopped by Ctrl-C: 130.
`isolde -m list-append FILE` (no subcommand) works as `isolde check`, like elle-cli;
-m also takes elle-cli's bank, counter, set, set-full, long-fork, comments and sequential.
ISOLDE_THREADS=N: threads to read and check on (default: every core); results never depend on it."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check histories for isolation anomalies (elle-cli compatible).
    Check(cli::check::CheckArgs),
    /// Run a workload against a database, record the history, and check it.
    Run(cli::run::RunArgs),
    /// Analyze textbook schedules: conflict and view serializability,
    /// recoverability, named anomalies. Exit 0 = conflict serializable, 1 = not.
    Schedule(cli::schedule::ScheduleArgs),
}

const SUBCOMMANDS: &[&str] = &[
    "check",
    "run",
    "schedule",
    "help",
    "-h",
    "--help",
    "-V",
    "--version",
];

/// Exits with clap's "unrecognized subcommand" error when the first
/// argument is no file but close to a subcommand's name (`isolde chek
/// FILE`), which elle-cli mode would otherwise take for a history file.
fn refuse_misspelled_subcommand(args: &[std::ffi::OsString]) {
    if std::path::Path::new(&args[1]).exists() {
        return;
    }
    if let Err(e) = Cli::try_parse_from(args) {
        let suggested = e
            .get(clap::error::ContextKind::SuggestedSubcommand)
            .is_some();
        if e.kind() == clap::error::ErrorKind::InvalidSubcommand && suggested {
            e.exit();
        }
    }
}

fn main() {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // elle-cli compatibility: without a subcommand, the arguments are `check`'s.
    if args.len() > 1 && !SUBCOMMANDS.iter().any(|s| args[1] == *s) {
        refuse_misspelled_subcommand(&args);
        args.insert(1, "check".into());
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            // `isolde run mariadb`: clap's message, then which target to use.
            let hint = (e.kind() == clap::error::ErrorKind::InvalidSubcommand
                && args.get(1).is_some_and(|a| a == "run"))
            .then(|| {
                args.get(2)
                    .and_then(|t| cli::run::target_hint(&t.to_string_lossy()))
            })
            .flatten();
            if let Some(hint) = hint {
                let _ = e.print();
                eprintln!("hint: {hint}");
                std::process::exit(exit::USAGE);
            }
            e.exit()
        }
    };
    let result = match &cli.command {
        Command::Check(a) => cli::check::run(a),
        Command::Run(a) => cli::run::run_command(a),
        Command::Schedule(a) => cli::schedule::schedule_command(a),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            // A closed pipe (`isolde ... | head`) is not an error worth a message.
            if cli::is_broken_pipe(&e) {
                std::process::exit(exit::VALID);
            }
            eprintln!("isolde: {e:#}");
            std::process::exit(exit::INPUT_ERROR);
        }
    }
}
