//! The history recorder: one JSON line per invocation and per completion, in
//! elle-cli's shape plus a `time` in nanoseconds since the run started. A
//! model op (bank, counter, set) is one Jepsen op with its own `f`, e.g.
//! `"f":"transfer","value":{"from":1,"to":2,"amount":3}`.
//!
//! Each line is formatted in full, then written with a single `write_all` on
//! an unbuffered file while a mutex is held, so lines never interleave and a
//! run killed at any moment leaves only whole lines (the kernel keeps what was
//! written even if the process dies). Index and time are taken under the same
//! mutex, so both grow monotonically down the file.

use super::{op_f_and_value, Mop};
use crate::history::Outcome;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Where `time` comes from.
#[derive(Debug)]
pub enum Clock {
    /// Wall-clock nanoseconds since the recorder was created.
    Real(Instant),
    /// Set by the caller (the simulator's virtual time).
    Manual(AtomicU64),
}

impl Clock {
    fn now(&self) -> u64 {
        match self {
            Clock::Real(start) => start.elapsed().as_nanos() as u64,
            Clock::Manual(t) => t.load(Ordering::Relaxed),
        }
    }
}

/// The process of a recorded op: a client number, or the fault injector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Process {
    Client(i64),
    Nemesis,
}

struct Inner {
    file: File,
    next_index: u64,
    /// The first write error; later writes are skipped and it is reported at
    /// [`Recorder::finish`].
    error: Option<io::Error>,
}

/// Appends history lines to a file. Shared by all workers (`&Recorder` is
/// `Sync`).
pub struct Recorder {
    path: PathBuf,
    clock: Clock,
    inner: Mutex<Inner>,
}

impl Recorder {
    /// Creates (truncates) `path`.
    pub fn create(path: &Path, clock: Clock) -> io::Result<Recorder> {
        let file = File::create(path)?;
        Ok(Recorder {
            path: path.to_path_buf(),
            clock,
            inner: Mutex::new(Inner {
                file,
                next_index: 0,
                error: None,
            }),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Sets the time of the next lines (only for [`Clock::Manual`]).
    pub fn set_time(&self, ns: u64) {
        if let Clock::Manual(t) = &self.clock {
            t.store(ns, Ordering::Relaxed);
        }
    }

    /// Records an invocation (reads carry `null`); returns its index.
    pub fn invoke(&self, process: i64, txn: &[Mop]) -> u64 {
        let (f, value) = op_f_and_value(txn);
        self.line(Process::Client(process), "invoke", f, &value, None)
    }

    /// Records a completion.
    pub fn complete(
        &self,
        process: i64,
        outcome: Outcome,
        txn: &[Mop],
        error: Option<&str>,
    ) -> u64 {
        let (f, value) = op_f_and_value(txn);
        self.line(Process::Client(process), outcome.name(), f, &value, error)
    }

    /// Records that the fault injector ran `command` (Jepsen's nemesis ops,
    /// which checkers ignore).
    pub fn fault(&self, command: &str, error: Option<&str>) -> u64 {
        let value = serde_json::Value::String(command.to_string()).to_string();
        self.line(Process::Nemesis, "info", "fault", &value, error)
    }

    fn line(
        &self,
        process: Process,
        typ: &str,
        f: &str,
        value_json: &str,
        error: Option<&str>,
    ) -> u64 {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let index = inner.next_index;
        inner.next_index += 1;
        let time = self.clock.now();
        let mut s = String::with_capacity(value_json.len() + 96);
        s.push_str("{\"index\":");
        s.push_str(&index.to_string());
        s.push_str(",\"type\":\"");
        s.push_str(typ);
        s.push_str("\",\"process\":");
        match process {
            Process::Client(p) => s.push_str(&p.to_string()),
            Process::Nemesis => s.push_str("\"nemesis\""),
        }
        s.push_str(",\"f\":\"");
        s.push_str(f);
        s.push_str("\",\"value\":");
        s.push_str(value_json);
        s.push_str(",\"time\":");
        s.push_str(&time.to_string());
        if let Some(e) = error {
            s.push_str(",\"error\":");
            s.push_str(&serde_json::Value::String(e.to_string()).to_string());
        }
        s.push_str("}\n");
        if inner.error.is_none() {
            if let Err(e) = inner.file.write_all(s.as_bytes()) {
                inner.error = Some(e);
            }
        }
        index
    }

    /// Syncs the file to disk; returns the first write error, if any.
    pub fn finish(&self) -> io::Result<()> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = inner.error.take() {
            return Err(e);
        }
        inner.file.sync_all()
    }

    /// How many lines were written.
    pub fn lines(&self) -> u64 {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .next_index
    }
}
