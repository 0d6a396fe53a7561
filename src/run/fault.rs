//! The fault injector: runs a shell command every `interval` while the
//! workload runs (restart the database, kill backends, ...), and records each
//! run in the history as a nemesis op.

use super::recorder::Recorder;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What the injector did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultStats {
    /// Times the command ran.
    pub ran: u64,
    /// Of those, times it exited non-zero or could not start.
    pub failed: u64,
}

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
            Ok(out) => Some(format!(
                "{}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )),
            Err(e) => Some(format!("cannot run sh: {e}")),
        };
        if error.is_some() {
            stats.failed += 1;
        }
        rec.fault(command, error.as_deref());
        next = Instant::now() + interval;
    }
}
