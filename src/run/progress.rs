//! Live counters of a run, shown as a progress bar when stderr is a terminal.

use crate::history::Outcome;
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Final counts of a run. `ok`, `fail` and `info` count every transaction,
/// the final read's attempts included; `final_reads` says how many of them
/// were attempts at the final read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub invoked: u64,
    pub ok: u64,
    pub fail: u64,
    pub info: u64,
    pub final_reads: u64,
}

impl Counts {
    /// Transactions of the workload, the final read left out (what `-n`
    /// counts).
    pub fn workload(&self) -> u64 {
        // Saturating: the bar's ticker may read the counters mid-update.
        (self.ok + self.fail + self.info).saturating_sub(self.final_reads)
    }
}

#[derive(Default)]
struct Counters {
    invoked: AtomicU64,
    ok: AtomicU64,
    fail: AtomicU64,
    info: AtomicU64,
    final_reads: AtomicU64,
    in_final_read: AtomicBool,
}

impl Counters {
    fn snapshot(&self) -> Counts {
        Counts {
            invoked: self.invoked.load(Ordering::Relaxed),
            ok: self.ok.load(Ordering::Relaxed),
            fail: self.fail.load(Ordering::Relaxed),
            info: self.info.load(Ordering::Relaxed),
            final_reads: self.final_reads.load(Ordering::Relaxed),
        }
    }
}

/// Counters plus an optional bar redrawn by a ticker thread (workers only
/// bump atomics, never format strings).
pub struct Progress {
    counters: Arc<Counters>,
    done: Arc<AtomicBool>,
    ticker: Mutex<Option<(ProgressBar, JoinHandle<()>)>>,
}

impl Progress {
    /// `total`: the number of transactions when known. `show`: draw a bar.
    pub fn new(total: Option<u64>, show: bool) -> Progress {
        let counters = Arc::new(Counters::default());
        let done = Arc::new(AtomicBool::new(false));
        let ticker = show.then(|| {
            let bar = match total {
                Some(n) => ProgressBar::new(n),
                None => ProgressBar::new_spinner(),
            };
            let template = if total.is_some() {
                "{elapsed_precise} [{bar:30}] {pos}/{len} txns {msg}"
            } else {
                "{elapsed_precise} {spinner} {pos} txns {msg}"
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style.progress_chars("=> "));
            }
            let (c, d, b) = (counters.clone(), done.clone(), bar.clone());
            let handle = std::thread::spawn(move || loop {
                let n = c.snapshot();
                // The bar counts what -n counts; the final read is said apart.
                let done = n.workload();
                let rate = done as f64 / b.elapsed().as_secs_f64().max(1e-3);
                b.set_position(done);
                let last = if c.in_final_read.load(Ordering::Relaxed) {
                    ", final read"
                } else {
                    ""
                };
                b.set_message(format!(
                    "{rate:.0}/s  ok {} fail {} info {}{last}",
                    n.ok, n.fail, n.info
                ));
                if d.load(Ordering::Relaxed) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            });
            (bar, handle)
        });
        Progress {
            counters,
            done,
            ticker: Mutex::new(ticker),
        }
    }

    pub fn invoked(&self) {
        self.counters.invoked.fetch_add(1, Ordering::Relaxed);
    }

    /// Marks what follows as the final read: counted apart from the
    /// workload's transactions.
    pub fn begin_final_read(&self) {
        self.counters.in_final_read.store(true, Ordering::Relaxed);
    }

    pub fn completed(&self, outcome: Outcome) {
        if self.counters.in_final_read.load(Ordering::Relaxed) {
            self.counters.final_reads.fetch_add(1, Ordering::Relaxed);
        }
        let c = match outcome {
            Outcome::Ok => &self.counters.ok,
            Outcome::Fail => &self.counters.fail,
            Outcome::Info => &self.counters.info,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    pub fn counts(&self) -> Counts {
        self.counters.snapshot()
    }

    /// Stops the ticker and clears the bar; returns the final counts.
    pub fn finish(&self) -> Counts {
        self.done.store(true, Ordering::Relaxed);
        let ticker = self.ticker.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some((bar, handle)) = ticker {
            let _ = handle.join();
            bar.finish_and_clear();
        }
        self.counts()
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
