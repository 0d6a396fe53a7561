//! Command-line front end: argument parsing, printing, exit codes. The work
//! itself is library code.

pub mod check;
pub mod flags;
pub mod models;
pub mod run;
pub mod schedule;

/// Exit codes shared by every subcommand.
pub mod exit {
    /// Every history valid (or, for `schedule`, conflict serializable).
    pub const VALID: i32 = 0;
    /// Some history invalid.
    pub const INVALID: i32 = 1;
    /// Bad command line (clap's own code).
    pub const USAGE: i32 = 2;
    /// No history invalid, but some verdict unknown.
    pub const UNKNOWN: i32 = 3;
    /// A history could not be read (malformed, missing file, ...).
    pub const INPUT_ERROR: i32 = 4;
    /// `isolde run` stopped by Ctrl-C (SIGINT), as a shell reports it: the
    /// history recorded so far is still checked and the verdict printed,
    /// but a run cut short never exits 0.
    pub const INTERRUPTED: i32 = 130;
}

/// Whether writing failed because the reader closed the pipe (`isolde ... |
/// head`): output ends quietly there, and the exit code still tells the
/// verdict.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        let kind = c
            .downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind)
            .or_else(|| c.downcast_ref::<serde_json::Error>()?.io_error_kind());
        kind == Some(std::io::ErrorKind::BrokenPipe)
    })
}
