//! The `isolde` binary: a thin layer over the library.

use clap::{Parser, Subcommand};
use isolde::cli::{self, exit};

/// isolde: a black-box checker of transactional isolation.
///
/// Exit codes: 0 valid, 1 invalid, 2 bad usage, 3 unknown, 4 unreadable input.
/// `isolde -m list-append FILE` (no subcommand) works as `isolde check`, like elle-cli.
#[derive(Parser, Debug)]
#[command(
    name = "isolde",
    version,
    about,
    after_help = "Exit codes: 0 valid, 1 invalid, 2 bad usage, 3 unknown, 4 unreadable input.\n`isolde -m list-append FILE` (no subcommand) works as `isolde check`, like elle-cli."
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
    Run(isolde::run::cli::RunArgs),
    /// Analyze textbook schedules: conflict and view serializability,
    /// recoverability, named anomalies. Exit 0 = conflict serializable, 1 = not.
    Schedule(isolde::schedule::cli::ScheduleArgs),
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

fn main() {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // elle-cli compatibility: without a subcommand, the arguments are `check`'s.
    if args.len() > 1 && !SUBCOMMANDS.iter().any(|s| args[1] == *s) {
        args.insert(1, "check".into());
    }
    let cli = Cli::parse_from(args);
    let result = match &cli.command {
        Command::Check(a) => cli::check::run(a),
        Command::Run(a) => isolde::run::cli::run_command(a),
        Command::Schedule(a) => isolde::schedule::cli::schedule_command(a),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            // A closed pipe (`isolde ... | head`) is not an error worth a message.
            let broken_pipe = e
                .chain()
                .filter_map(|c| c.downcast_ref::<std::io::Error>())
                .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe);
            if broken_pipe {
                std::process::exit(exit::VALID);
            }
            eprintln!("isolde: {e:#}");
            std::process::exit(exit::INPUT_ERROR);
        }
    }
}
