//! The threaded driver for real databases: one OS thread and one connection
//! per client, a shared generator, an optional rate limit and fault injector,
//! and a final read of every key touched.

use super::client::{Completion, Target};
use super::fault::{self, FaultStats};
use super::generator::Generator;
use super::progress::Progress;
use super::recorder::Recorder;
use super::Txn;
use crate::history::Outcome;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

static INTERRUPTS: AtomicU32 = AtomicU32::new(0);
/// Set when the run must end for a reason of its own (a client that broke
/// the protocol), not the user's.
static ABORTED: AtomicBool = AtomicBool::new(false);
/// When the first Ctrl-C arrived.
static FIRST_INTERRUPT: OnceLock<Instant> = OnceLock::new();
/// The history file, named when a later Ctrl-C quits at once.
static HISTORY: Mutex<Option<String>> = Mutex::new(None);

/// A second signal this soon after the first is the same interrupt:
/// `timeout -s INT` and some terminals deliver two at once.
pub const DEBOUNCE: Duration = Duration::from_millis(500);

/// Installs the SIGINT handler (once per process): the first Ctrl-C stops
/// issuing transactions and lets the run finish its file, check it and
/// print its summary; another within [`DEBOUNCE`] is ignored; a later one
/// exits at once with 130, naming the history file (every line already
/// written stays valid).
pub fn install_interrupt_handler() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        // ctrlc runs this on a thread of its own, one signal at a time.
        let _ = ctrlc::set_handler(|| {
            let first = *FIRST_INTERRUPT.get_or_init(Instant::now);
            if INTERRUPTS.load(Ordering::SeqCst) == 0 {
                INTERRUPTS.store(1, Ordering::SeqCst);
                eprintln!("\nisolde: interrupted; finishing in-flight transactions (Ctrl-C again to quit now)");
                return;
            }
            if first.elapsed() < DEBOUNCE {
                return;
            }
            INTERRUPTS.fetch_add(1, Ordering::SeqCst);
            let history = HISTORY.lock().unwrap_or_else(|p| p.into_inner()).clone();
            match history {
                Some(h) => eprintln!("\nisolde: interrupted again, quitting now; history (unchecked) {h}"),
                None => eprintln!("\nisolde: interrupted again, quitting now"),
            }
            std::process::exit(crate::cli::exit::INTERRUPTED);
        });
    });
}

/// Names the history file for the message of a Ctrl-C that quits at once.
pub fn set_history_path(path: &std::path::Path) {
    *HISTORY.lock().unwrap_or_else(|p| p.into_inner()) = Some(path.display().to_string());
}

/// True once the user pressed Ctrl-C.
pub fn interrupted() -> bool {
    INTERRUPTS.load(Ordering::Relaxed) > 0
}

/// Ends the run as Ctrl-C does, for a reason the caller reports itself.
pub fn abort_run() {
    ABORTED.store(true, Ordering::SeqCst);
}

/// True when the run must stop issuing transactions: Ctrl-C or [`abort_run`].
pub fn stopping() -> bool {
    interrupted() || ABORTED.load(Ordering::Relaxed)
}

/// How long a worker keeps trying to reconnect before giving up.
const RECONNECT_GIVE_UP: Duration = Duration::from_secs(60);
/// Attempts at the final read.
const FINAL_READ_ATTEMPTS: u32 = 8;

/// How to drive the clients.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub processes: u32,
    /// Stop after this many transactions (the final read not counted).
    pub txns: Option<u64>,
    pub time_limit: Option<Duration>,
    /// Transactions per second, over all clients.
    pub rate: Option<f64>,
    /// Shell command and interval of the fault injector.
    pub fault: Option<(String, Duration)>,
}

/// What happened besides the history.
#[derive(Clone, Debug, Default)]
pub struct DriverStats {
    pub faults: FaultStats,
    /// Messages about workers that gave up (could not reconnect).
    pub warnings: Vec<String>,
    /// Failed transactions by cause (the database's error code).
    pub fail_causes: BTreeMap<String, u64>,
}

struct Shared<'a> {
    target: &'a dyn Target,
    plan: &'a Plan,
    rec: &'a Recorder,
    progress: &'a Progress,
    gen: Mutex<(Generator, u64)>,
    started: Instant,
    /// Largest process id used so far.
    max_process: AtomicI64,
    warnings: Mutex<Vec<String>>,
    fail_causes: Mutex<BTreeMap<String, u64>>,
}

impl Shared<'_> {
    fn should_stop(&self) -> bool {
        stopping()
            || self
                .plan
                .time_limit
                .is_some_and(|l| self.started.elapsed() >= l)
    }

    /// Sleeps up to `d`, waking early when the run is stopping.
    fn nap(&self, d: Duration) {
        let until = Instant::now() + d;
        while Instant::now() < until && !self.should_stop() {
            std::thread::sleep(Duration::from_millis(10).min(until - Instant::now()));
        }
    }

    /// The next transaction and its slot number, or `None` when the budget is spent.
    fn next_txn(&self) -> Option<(Txn, u64)> {
        let mut g = self.gen.lock().unwrap_or_else(|p| p.into_inner());
        if self.plan.txns.is_some_and(|n| g.1 >= n) {
            return None;
        }
        g.1 += 1;
        let slot = g.1 - 1;
        Some((g.0.next_txn(), slot))
    }

    /// Runs one transaction and records it; returns its outcome.
    fn run_one(&self, client: &mut dyn super::client::Client, process: i64, txn: &Txn) -> Outcome {
        self.max_process.fetch_max(process, Ordering::Relaxed);
        self.rec.invoke(process, txn);
        self.progress.invoked();
        let (outcome, value, error) = match client.execute(txn) {
            Completion::Ok(done) => (Outcome::Ok, done, None),
            Completion::Fail(e) => {
                *self
                    .fail_causes
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .entry(super::client::fail_cause(&e))
                    .or_default() += 1;
                (Outcome::Fail, txn.clone(), Some(e))
            }
            Completion::Info(e) => (Outcome::Info, txn.clone(), Some(e)),
        };
        self.rec
            .complete(process, outcome, &value, error.as_deref());
        self.progress.completed(outcome);
        outcome
    }

    /// Connects with exponential backoff; `None` when stopping or giving up.
    fn connect(&self, worker: u32) -> Option<Box<dyn super::client::Client>> {
        let mut backoff = Duration::from_millis(50);
        let first_failure = Instant::now();
        loop {
            match self.target.connect(worker) {
                Ok(c) => return Some(c),
                Err(e) => {
                    if first_failure.elapsed() >= RECONNECT_GIVE_UP {
                        self.warnings
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(format!("client {worker} gave up reconnecting: {e:#}"));
                        return None;
                    }
                }
            }
            if self.should_stop() {
                return None;
            }
            self.nap(backoff);
            backoff = (backoff * 2).min(Duration::from_secs(2));
        }
    }

    fn worker(&self, w: u32) {
        let p = self.plan.processes as i64;
        let mut process = w as i64;
        let mut client = None;
        while !self.should_stop() {
            if client.is_none() {
                client = self.connect(w);
                if client.is_none() {
                    return;
                }
            }
            let Some((txn, slot)) = self.next_txn() else {
                return;
            };
            if let Some(rate) = self.plan.rate {
                let due = self.started + Duration::from_secs_f64(slot as f64 / rate);
                if let Some(wait) = due.checked_duration_since(Instant::now()) {
                    self.nap(wait);
                    if self.should_stop() {
                        return;
                    }
                }
            }
            let c = client.as_mut().expect("connected above");
            if self.run_one(c.as_mut(), process, &txn) == Outcome::Info {
                // Jepsen's rule: a process with an operation of unknown
                // outcome never runs another; this thread continues as a new
                // process, on a new connection.
                process += p;
                client = None;
            }
        }
    }

    /// Reads every key touched, retrying a few times if it does not commit.
    fn final_read(&self) {
        let txn = {
            let g = self.gen.lock().unwrap_or_else(|p| p.into_inner());
            g.0.final_read()
        };
        // After an abort the target is not to be trusted with it.
        if txn.is_empty() || ABORTED.load(Ordering::Relaxed) {
            return;
        }
        self.progress.begin_final_read();
        for attempt in 0..FINAL_READ_ATTEMPTS {
            // Not `self.connect`: the time limit has passed by now, and the
            // database may still be coming back from the last fault.
            match self.target.connect(self.plan.processes) {
                Ok(mut client) => {
                    let process = self.max_process.load(Ordering::Relaxed) + 1;
                    if self.run_one(client.as_mut(), process, &txn) == Outcome::Ok {
                        return;
                    }
                }
                Err(_) if INTERRUPTS.load(Ordering::Relaxed) > 1 => break,
                Err(_) => {}
            }
            std::thread::sleep(Duration::from_millis(100 << attempt.min(4)));
        }
        self.warnings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push("the final read did not commit".into());
    }
}

/// Runs the workload on `plan.processes` threads until the transaction budget
/// or time limit is spent (or Ctrl-C), then runs the final read.
pub fn run_threaded(
    target: &dyn Target,
    plan: &Plan,
    gen: Generator,
    rec: &Recorder,
    progress: &Progress,
) -> DriverStats {
    let shared = Shared {
        target,
        plan,
        rec,
        progress,
        gen: Mutex::new((gen, 0)),
        started: Instant::now(),
        max_process: AtomicI64::new(plan.processes as i64 - 1),
        warnings: Mutex::new(vec![]),
        fail_causes: Mutex::new(BTreeMap::new()),
    };
    let faults_done = AtomicBool::new(false);
    let mut faults = FaultStats::default();
    std::thread::scope(|s| {
        let injector = plan
            .fault
            .as_ref()
            .map(|(cmd, every)| s.spawn(|| fault::inject(cmd, *every, rec, &faults_done)));
        let workers: Vec<_> = (0..plan.processes.max(1))
            .map(|w| {
                let shared = &shared;
                s.spawn(move || shared.worker(w))
            })
            .collect();
        for w in workers {
            let _ = w.join();
        }
        faults_done.store(true, Ordering::Relaxed);
        if let Some(i) = injector {
            faults = i.join().unwrap_or_default();
        }
    });
    shared.final_read();
    DriverStats {
        faults,
        warnings: shared
            .warnings
            .into_inner()
            .unwrap_or_else(|p| p.into_inner()),
        fail_causes: shared
            .fail_causes
            .into_inner()
            .unwrap_or_else(|p| p.into_inner()),
    }
}
