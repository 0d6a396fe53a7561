//! The fault injector: runs a shell command every `interval` while the
//! workload runs (restart the database, kill backends, ...), and records each
//! run in the history as a nemesis op.

use super::recorder::Recorder;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What the injector did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultStats {
    /// Times the command ran.
    pub ran: u64,
    /// Of those, times it exited non-zero or could not start.
    pub failed: u64,
    /// Why the first failure failed: exit status and the first lines of
    /// its stderr (a fault that never works is no fault injected).
    pub first_failure: Option<String>,
}

/// Lines of a failing fault command's stderr kept for the warning.
const STDERR_LINES: usize = 3;

/// Runs `command` with `sh -c` every `interval` until `done` is set. The first
/// run is one interval after the start.
pub fn inject(command: &str, interval: Duration, rec: &Recorder, done: &AtomicBool) -> FaultStats {
    let mut stats = FaultStats::default();
    let mut next = Instant::now() + interval;
    loop {
        while Instant::now() < next {
            if done.load(Ordering::Relaxed) {
                return stats;
            }
            std::thread::sleep(Duration::from_millis(20).min(next - Instant::now()));
        }
        if done.load(Ordering::Relaxed) {
            return stats;
        }
        let result = Command::new("sh")
            .arg("-c")
            .arg(command)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output();
        stats.ran += 1;
        let error = match result {
            Ok(out) if out.status.success() => None,
            Ok(out) => {
                let stderr = String::from_utf8_lossy(&out.stderr);
                let lines: Vec<&str> = stderr.trim().lines().take(STDERR_LINES).collect();
                Some(format!("{}: {}", out.status, lines.join(" / ")))
            }
            Err(e) => Some(format!("cannot run sh: {e}")),
        };
        if let Some(e) = &error {
            stats.failed += 1;
            stats.first_failure.get_or_insert_with(|| e.clone());
        }
        rec.fault(command, error.as_deref());
        next = Instant::now() + interval;
    }
}
