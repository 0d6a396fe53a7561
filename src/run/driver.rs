//! The threaded driver for real databases: one OS thread and one connection
//! per client, a shared generator, an optional rate limit and fault injector,
//! and a final read of every key touched.
//!
//! No database can hang a run: each connection lives on a thread of its own
//! (a `Session`), and the worker waits for it only until the transaction
//! timeout. Then it asks the client to interrupt the transaction (PostgreSQL's
//! cancel request, SQLite's interrupt), waits [`INTERRUPT_GRACE`] for the
//! answer, and otherwise records `info` and abandons the thread: it ends when
//! its call returns, or with the process.

use super::client::{Completion, Interrupter, Target};
use super::fault::{self, FaultStats};
use super::generator::Generator;
use super::progress::Progress;
use super::recorder::Recorder;
use super::Txn;
use crate::history::Outcome;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, OnceLock};
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
/// names the history file (every line already written stays valid) and
/// calls `quit`, which ends the process (the binary's exits with 130).
pub fn install_interrupt_handler(quit: fn() -> !) {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        // ctrlc runs this on a thread of its own, one signal at a time.
        let _ = ctrlc::set_handler(move || {
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
            quit();
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
/// The final read gives up after this long (or the transaction timeout plus
/// grace, if longer), so that a dead server cannot hold the run.
const FINAL_READ_BUDGET: Duration = Duration::from_secs(2);
/// How long a worker waits, after interrupting a transaction that overran
/// its timeout, for the client to report how it ended (a cancelled statement
/// is a definite abort) before calling it `info`.
pub const INTERRUPT_GRACE: Duration = Duration::from_secs(1);
/// `--txn-timeout` when not given.
pub const DEFAULT_TXN_TIMEOUT: Duration = Duration::from_secs(10);
/// Least time a worker gives a connection attempt (more if `--txn-timeout`
/// is longer): a short transaction timeout must not make every connection to
/// a distant server fail. A stopping run gives up on connecting at once.
const MIN_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How to drive the clients.
#[derive(Clone, Debug)]
pub struct Plan {
    pub processes: u32,
    /// Stop after this many transactions (the final read not counted).
    pub txns: Option<u64>,
    pub time_limit: Option<Duration>,
    /// Transactions per second, over all clients.
    pub rate: Option<f64>,
    /// Shell command and interval of the fault injector.
    pub fault: Option<(String, Duration)>,
    /// Longest a transaction may take before the worker gives up on it (a
    /// connection attempt: this or 5 s, whichever is longer).
    pub txn_timeout: Duration,
    /// Extra attempts for a transaction that failed (certainly aborted).
    pub retries: u32,
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            processes: 1,
            txns: None,
            time_limit: None,
            rate: None,
            fault: None,
            txn_timeout: DEFAULT_TXN_TIMEOUT,
            retries: 0,
        }
    }
}

/// What happened besides the history.
#[derive(Clone, Debug, Default)]
pub struct DriverStats {
    pub faults: FaultStats,
    /// Messages about workers that gave up (could not reconnect).
    pub warnings: Vec<String>,
    /// Failed transactions by cause (the database's error code).
    pub fail_causes: BTreeMap<String, u64>,
    /// Attempts beyond the first (`--retries`); each is in the history.
    pub retries: u64,
}

/// A client on a thread of its own, which the worker can abandon when it
/// stops answering. Dropping the session ends the thread once its current
/// call returns (and the client with it: connection closed, child killed).
struct Session {
    requests: Sender<Txn>,
    replies: Receiver<Completion>,
    interrupter: Option<Interrupter>,
}

impl Session {
    /// Connects on a new thread; gives up after `timeout`, or early when
    /// `stop()` turns true.
    fn open(
        target: &Arc<dyn Target>,
        worker: u32,
        timeout: Duration,
        stop: impl Fn() -> bool,
    ) -> anyhow::Result<Session> {
        let (requests, request_rx) = mpsc::channel::<Txn>();
        let (reply_tx, replies) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::channel();
        let target = Arc::clone(target);
        std::thread::spawn(move || {
            let mut client = match target.connect(worker) {
                Ok(c) => c,
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return;
                }
            };
            if ready_tx.send(Ok(client.interrupter())).is_err() {
                return;
            }
            for txn in request_rx {
                if reply_tx.send(client.execute(&txn)).is_err() {
                    return;
                }
            }
        });
        let started = Instant::now();
        loop {
            match ready_rx.recv_timeout(Duration::from_millis(50)) {
                Ok(Ok(interrupter)) => {
                    return Ok(Session {
                        requests,
                        replies,
                        interrupter,
                    })
                }
                Ok(Err(e)) => return Err(e),
                Err(RecvTimeoutError::Disconnected) => anyhow::bail!("the client panicked"),
                Err(RecvTimeoutError::Timeout) => {}
            }
            if started.elapsed() >= timeout {
                anyhow::bail!("no connection within {timeout:?}");
            }
            if stop() {
                anyhow::bail!("stopped while connecting");
            }
        }
    }

    /// Runs `txn`, waiting at most `timeout` (plus [`INTERRUPT_GRACE`] once
    /// interrupted). Returns how it ended and whether this session may run
    /// another transaction: not after an interrupt, which might otherwise
    /// arrive late and hit the next one.
    fn execute(&mut self, txn: &Txn, timeout: Duration) -> (Completion, bool) {
        if self.requests.send(txn.clone()).is_err() {
            return (Completion::Info("the client thread ended".into()), false);
        }
        match self.replies.recv_timeout(timeout) {
            Ok(c) => return (c, true),
            Err(RecvTimeoutError::Disconnected) => {
                return (Completion::Info("the client panicked".into()), false)
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        if let Some(interrupt) = self.interrupter.take() {
            // On a thread of its own: a cancel request to a server that
            // stopped answering may block too.
            std::thread::spawn(interrupt);
        }
        match self.replies.recv_timeout(INTERRUPT_GRACE) {
            Ok(c) => (c, false),
            Err(RecvTimeoutError::Disconnected) => {
                (Completion::Info("the client panicked".into()), false)
            }
            Err(RecvTimeoutError::Timeout) => (
                Completion::Info(format!(
                    "no answer within {timeout:?} (--txn-timeout); connection abandoned"
                )),
                false,
            ),
        }
    }
}

struct Shared<'a> {
    target: &'a Arc<dyn Target>,
    plan: &'a Plan,
    rec: &'a Recorder,
    progress: &'a Progress,
    gen: Mutex<(Generator, u64)>,
    started: Instant,
    /// Largest process id used so far.
    max_process: AtomicI64,
    warnings: Mutex<Vec<String>>,
    fail_causes: Mutex<BTreeMap<String, u64>>,
    retries: AtomicU64,
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

    /// Worker `w`'s next transaction and its slot number, or `None` when
    /// the budget is spent.
    fn next_txn(&self, w: u32) -> Option<(Txn, u64)> {
        let mut g = self.gen.lock().unwrap_or_else(|p| p.into_inner());
        if self.plan.txns.is_some_and(|n| g.1 >= n) {
            return None;
        }
        g.1 += 1;
        let slot = g.1 - 1;
        Some((g.0.next_txn_for(w), slot))
    }

    /// Runs one transaction and records it; returns its outcome and whether
    /// the session may run another.
    fn run_one(&self, session: &mut Session, process: i64, txn: &Txn) -> (Outcome, bool) {
        self.max_process.fetch_max(process, Ordering::Relaxed);
        self.rec.invoke(process, txn);
        self.progress.invoked();
        let (completion, keep) = session.execute(txn, self.plan.txn_timeout);
        let (outcome, value, error) = match completion {
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
        (outcome, keep)
    }

    /// Connects with exponential backoff; `None` when stopping or giving up.
    fn connect(&self, worker: u32) -> Option<Session> {
        let mut backoff = Duration::from_millis(50);
        let first_failure = Instant::now();
        loop {
            let timeout = self.plan.txn_timeout.max(MIN_CONNECT_TIMEOUT);
            match Session::open(self.target, worker, timeout, || self.should_stop()) {
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
        let mut session = None;
        // A transaction that failed, to try again, and the retries it has left.
        let mut retry: Option<(Txn, u32)> = None;
        while !self.should_stop() {
            if session.is_none() {
                session = self.connect(w);
                if session.is_none() {
                    return;
                }
            }
            let (txn, retries_left) = match retry.take() {
                Some(r) => r,
                None => {
                    let Some((txn, slot)) = self.next_txn(w) else {
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
                    (txn, self.plan.retries)
                }
            };
            let s = session.as_mut().expect("connected above");
            let (outcome, keep) = self.run_one(s, process, &txn);
            self.gen
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .0
                .observe(w, &txn, outcome);
            if !keep || outcome == Outcome::Info {
                session = None;
            }
            match outcome {
                // Jepsen's rule: a process with an operation of unknown
                // outcome never runs another; this thread continues as a new
                // process, on a new connection.
                Outcome::Info => process += p,
                // Certainly aborted: the same micro-ops again, as a new
                // invocation of the same process. Written values are fresh,
                // so that no value is both failed and committed.
                Outcome::Fail if retries_left > 0 => {
                    let again = self
                        .gen
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                        .with_fresh_values(&txn);
                    self.retries.fetch_add(1, Ordering::Relaxed);
                    retry = Some((again, retries_left - 1));
                }
                _ => {}
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
        let started = Instant::now();
        let budget = FINAL_READ_BUDGET.max(self.plan.txn_timeout + INTERRUPT_GRACE);
        for attempt in 0..FINAL_READ_ATTEMPTS {
            // Not `self.connect`: the time limit has passed by now, and the
            // database may still be coming back from the last fault.
            let left = budget.saturating_sub(started.elapsed());
            match Session::open(self.target, self.plan.processes, left, || false) {
                Ok(mut session) => {
                    let process = self.max_process.load(Ordering::Relaxed) + 1;
                    if self.run_one(&mut session, process, &txn).0 == Outcome::Ok {
                        return;
                    }
                }
                Err(_) if INTERRUPTS.load(Ordering::Relaxed) > 1 => break,
                Err(_) => {}
            }
            if started.elapsed() >= budget {
                break;
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
    target: &Arc<dyn Target>,
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
        retries: AtomicU64::new(0),
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
        retries: shared.retries.into_inner(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::client::Client;
    use crate::run::Mop;

    /// How the fake client behaves.
    #[derive(Clone, Copy)]
    enum Behaviour {
        /// Commits at once.
        Quick,
        /// Blocks until interrupted, then reports a rollback.
        StuckUntilInterrupted,
        /// Blocks and offers no interrupter.
        StuckForever,
        Panics,
    }

    struct Fake(Behaviour);

    struct FakeClient {
        behaviour: Behaviour,
        interrupted: Arc<AtomicBool>,
    }

    impl Client for FakeClient {
        fn execute(&mut self, txn: &[Mop]) -> Completion {
            match self.behaviour {
                Behaviour::Quick => Completion::Ok(txn.to_vec()),
                Behaviour::StuckUntilInterrupted => {
                    while !self.interrupted.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Completion::Fail("cancelled".into())
                }
                Behaviour::StuckForever => {
                    std::thread::sleep(Duration::from_secs(3600));
                    Completion::Ok(txn.to_vec())
                }
                Behaviour::Panics => panic!("a client bug"),
            }
        }

        fn interrupter(&self) -> Option<Interrupter> {
            let flag = Arc::clone(&self.interrupted);
            match self.behaviour {
                Behaviour::StuckForever => None,
                _ => Some(Box::new(move || flag.store(true, Ordering::SeqCst))),
            }
        }
    }

    impl Target for Fake {
        fn describe(&self) -> String {
            "fake".into()
        }
        fn setup(&self) -> anyhow::Result<()> {
            Ok(())
        }
        fn connect(&self, _: u32) -> anyhow::Result<Box<dyn Client>> {
            Ok(Box::new(FakeClient {
                behaviour: self.0,
                interrupted: Arc::new(AtomicBool::new(false)),
            }))
        }
        fn teardown(&self) -> anyhow::Result<()> {
            Ok(())
        }
    }

    /// Runs one transaction on a new session of `b` with a 100 ms timeout.
    fn run(b: Behaviour) -> (Completion, bool, Duration) {
        let target: Arc<dyn Target> = Arc::new(Fake(b));
        let mut s = Session::open(&target, 0, Duration::from_secs(5), || false).unwrap();
        let started = Instant::now();
        let (c, keep) = s.execute(&vec![Mop::Append(1, 1)], Duration::from_millis(100));
        (c, keep, started.elapsed())
    }

    #[test]
    fn a_quick_transaction_keeps_its_session() {
        let (c, keep, _) = run(Behaviour::Quick);
        assert_eq!(c, Completion::Ok(vec![Mop::Append(1, 1)]));
        assert!(keep);
    }

    #[test]
    fn an_interrupted_transaction_reports_how_it_ended_and_drops_the_session() {
        let (c, keep, took) = run(Behaviour::StuckUntilInterrupted);
        assert_eq!(c, Completion::Fail("cancelled".into()));
        assert!(
            !keep,
            "a late interrupt must not reach the next transaction"
        );
        assert!(
            took < Duration::from_millis(100) + INTERRUPT_GRACE,
            "{took:?}"
        );
    }

    #[test]
    fn a_transaction_that_never_answers_is_info_after_the_grace() {
        let (c, keep, took) = run(Behaviour::StuckForever);
        assert!(
            matches!(&c, Completion::Info(m) if m.contains("--txn-timeout")),
            "{c:?}"
        );
        assert!(!keep);
        assert!(
            took >= Duration::from_millis(100) + INTERRUPT_GRACE,
            "{took:?}"
        );
        assert!(took < Duration::from_secs(3), "{took:?}");
    }

    #[test]
    fn a_client_that_panics_is_info() {
        let (c, keep, _) = run(Behaviour::Panics);
        assert!(
            matches!(&c, Completion::Info(m) if m.contains("panicked")),
            "{c:?}"
        );
        assert!(!keep);
    }

    /// A connection attempt that never returns is given up at the timeout,
    /// or at once when the run stops.
    #[test]
    fn a_connection_that_never_opens_is_given_up() {
        struct Silent;
        impl Target for Silent {
            fn describe(&self) -> String {
                "silent".into()
            }
            fn setup(&self) -> anyhow::Result<()> {
                Ok(())
            }
            fn connect(&self, _: u32) -> anyhow::Result<Box<dyn Client>> {
                std::thread::sleep(Duration::from_secs(3600));
                anyhow::bail!("unreachable")
            }
            fn teardown(&self) -> anyhow::Result<()> {
                Ok(())
            }
        }
        let target: Arc<dyn Target> = Arc::new(Silent);
        let started = Instant::now();
        let e = Session::open(&target, 0, Duration::from_millis(200), || false)
            .err()
            .expect("no session");
        assert!(e.to_string().contains("no connection within"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(2));
        let started = Instant::now();
        let e = Session::open(&target, 0, Duration::from_secs(60), || true)
            .err()
            .expect("no session");
        assert!(e.to_string().contains("stopped"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
