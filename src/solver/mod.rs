//! Exact checking of list-append histories whose appended values repeat
//! (Cai, Liu, Wei & Chen, "Extending Elle for Transaction Workloads with
//! Duplicate Values", SCCP 2026), for serializability, strict
//! serializability and snapshot isolation; read committed and consistent
//! view from read committed's facts ([`read_committed`]).
//!
//! Elle names the writer of each read value; with repeats a value names
//! several candidates. Here every key is cut into the places its reads
//! force ([`problem`]); a transaction's appends to a key are one block that
//! fills one place, and a choice of places is accepted iff the order it
//! induces is acyclic ([`solve`]). The pipeline, cheapest first:
//! 1. contradictions visible in the reads alone (a read no sequence of whole
//!    blocks spells, reads that are not prefixes of one another, ...);
//! 2. replays that look for a witness without search: for snapshot
//!    isolation, commits in completion order ([`snapshot`]); for every
//!    level, a serial execution guided by real time ([`replay`]). Most valid
//!    histories end here;
//! 3. the solver, for strict serializability, among the places real-time
//!    windows leave ([`windows`]: a few percent of them on histories from
//!    real runs); below strict, with windows relaxed where real time is
//!    contradicted; without invocations, the replays and windows again
//!    with each transaction invoked after its process's previous completion
//!    ([`sessions`]). Only a witness is taken from these attempts;
//! 4. the exact solver: propagation of forced choices (keys with unique
//!    values are decided here, as in Elle), a cycle search in the forced
//!    graph, pruning of places that would close a cycle through it, the
//!    replay again, and a CDCL SAT solver (`batsat`) whose theory keeps the
//!    induced graph acyclic incrementally.
//!
//! Verdicts are exact: "valid" only with a witness replayed by [`witness`],
//! "invalid" only from a contradiction or a cycle no choice avoids, and a
//! search that hits a [`Limits`] bound says `unknown` and why.

pub mod dag;
pub mod problem;
pub mod rc_order;
pub mod read_committed;
pub mod register;
pub mod replay;
pub mod serial_guess;
pub mod sessions;
pub mod snapshot;
pub mod solve;
pub mod uncommitted;
pub mod windows;
pub mod witness;

use crate::anomaly::AnomalyKind;
use crate::graph::CycleClass;
use crate::history::{History, KeyId, MopKind, Observed, TxnId};
use crate::model::Validity;
use crate::proof::{Proof, Reason};
use rustc_hash::FxHashSet;
use std::time::Instant;

pub use solve::Stats;

/// The isolation level to decide (a proof names it, so it sits in
/// [`crate::proof`]).
pub use crate::proof::Level;

/// Bounds on the work; reaching one gives `unknown`, never a guess.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Wall-clock budget for one check, in milliseconds.
    pub time_ms: u64,
    /// Most choice variables (places, unseen flags, SI orders) to build.
    pub max_vars: usize,
    /// Most ways to place mixed (multi-value) blocks in one segment.
    pub max_alternatives: usize,
    /// Keys with at least this many open choices get reachability pruning.
    pub prune_threshold: usize,
    /// Most nodes and edges the acyclicity theory looks at to add one edge
    /// at once; a costlier edge is checked when every choice is made.
    pub reorder_limit: usize,
    /// Look for a witness by replay and among real-time windows before the
    /// exact solver (off: the exact solver decides everything, as tests of
    /// its completeness want).
    pub witness_first: bool,
    /// Set by another search run beside this one once it has decided the
    /// question (see [`register::check_levels`]): stop as at the time
    /// limit. `None`: nothing else runs.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Threads a search may use (see [`register`]: with two, the serial
    /// and snapshot searches run side by side). The verdict never depends
    /// on it.
    pub threads: usize,
}

impl Limits {
    /// These limits with the time left since `t0`, divided into `parts`
    /// (1: all of it), for a search that follows or shares others.
    pub fn left_since(&self, t0: Instant, parts: u64) -> Limits {
        Limits {
            time_ms: self.time_ms.saturating_sub(t0.elapsed().as_millis() as u64) / parts,
            ..self.clone()
        }
    }

    /// Has [`Limits::cancel`] been set?
    pub fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            time_ms: 30_000,
            max_vars: 20_000_000,
            max_alternatives: 256,
            prune_threshold: 8,
            reorder_limit: 1024,
            witness_first: true,
            cancel: None,
            threads: crate::history::read::default_threads(),
        }
    }
}

/// The kind of a solver finding: a non-cycle kind (Elle's, such as
/// `internal` or `G1a`, or the solver's own, such as
/// `duplicate-appends-unserializable`) or a cycle class every choice
/// closes. Every solver finding's name comes from here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DupKind {
    /// A non-cycle kind.
    Anomaly(AnomalyKind),
    /// A cycle class.
    Cycle(CycleClass),
}

impl DupKind {
    /// The finding's anomaly name.
    pub fn name(self) -> &'static str {
        match self {
            DupKind::Anomaly(k) => k.name(),
            DupKind::Cycle(c) => c.name(),
        }
    }
}

impl From<AnomalyKind> for DupKind {
    fn from(k: AnomalyKind) -> Self {
        DupKind::Anomaly(k)
    }
}

impl std::fmt::Display for DupKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One reason a level does not hold.
#[derive(Clone, Debug)]
pub struct DupAnomaly {
    /// Which anomaly.
    pub kind: DupKind,
    pub txns: Vec<TxnId>,
    pub keys: Vec<KeyId>,
    /// Why: the typed record the render layer words.
    pub proof: Proof,
}

/// `level` does not hold, for the solver's finding `f` (the first line
/// of its proof is the verdict's reason).
pub(crate) fn invalid_verdict(level: Level, f: DupAnomaly) -> DupVerdict {
    let mut v = verdict(level, Validity::False, Reason::ProofHeadline);
    v.anomaly = Some(f);
    v
}

impl From<problem::Contradiction> for DupAnomaly {
    fn from(c: problem::Contradiction) -> Self {
        DupAnomaly {
            kind: c.kind,
            txns: c.txns,
            keys: c.keys,
            proof: c.proof,
        }
    }
}

/// The verdict for one level.
#[derive(Clone, Debug)]
pub struct DupVerdict {
    pub level: Level,
    pub valid: Validity,
    /// Why valid, invalid or unknown (quoting the finding's proof, when it
    /// says so).
    pub reason: Reason,
    pub anomaly: Option<DupAnomaly>,
    /// Valid: the serial order (SI: the commit order) of the committed
    /// transactions, `info` ones included when they must have committed.
    pub witness: Option<Vec<TxnId>>,
    /// SI only: for each witness entry, how many witness transactions had
    /// committed when it started.
    pub snapshots: Option<Vec<u32>>,
    pub stats: Stats,
    pub elapsed_ms: f64,
}

impl DupVerdict {
    /// The proof of the verdict's finding, if it has one.
    pub fn proof(&self) -> Option<&Proof> {
        self.anomaly.as_ref().map(|a| &a.proof)
    }
}

/// True when some key gets the same value appended more than once (by any
/// transactions, or twice by one), i.e. Elle's unique-value inference does
/// not apply.
pub fn has_duplicate_appends(h: &History) -> bool {
    let mut seen: FxHashSet<(KeyId, u32)> = FxHashSet::default();
    h.mops.iter().any(|m| match (m.kind, m.value) {
        (MopKind::Append, Observed::Scalar(v)) => !seen.insert((m.key, v)),
        _ => false,
    })
}

/// Decides `level` for a list-append history, duplicates or not.
pub fn check_duplicates(h: &History, level: Level, limits: &Limits) -> DupVerdict {
    let t0 = Instant::now();
    let mut v = decide(h, level, limits);
    v.elapsed_ms = t0.elapsed().as_secs_f64() * 1e3;
    v
}

/// [`check_duplicates`] at read committed, from its facts extracted
/// already (timed from extraction on).
pub fn check_prepared(h: &History, p: read_committed::Prepared, limits: &Limits) -> DupVerdict {
    let t0 = p.started();
    let mut v = p.decide(h, limits);
    v.elapsed_ms = t0.elapsed().as_secs_f64() * 1e3;
    v
}

/// [`check_duplicates`] at read committed or consistent view, from read
/// committed's facts extracted already (timed from now on).
pub fn check_prepared_at(
    h: &History,
    p: &read_committed::Prepared,
    limits: &Limits,
    level: Level,
) -> DupVerdict {
    let t0 = Instant::now();
    let mut v = p.decide_at(h, limits, level);
    v.elapsed_ms = t0.elapsed().as_secs_f64() * 1e3;
    v
}

/// Valid with the commit order `order` as the witness, when `replay` (its
/// replay against the history) passed; otherwise `unknown` (a witness that
/// does not replay is a solver bug, never a verdict).
pub(crate) fn witnessed(
    level: Level,
    order: Vec<TxnId>,
    replay: Result<(), crate::proof::Replay>,
) -> DupVerdict {
    let reason = Reason::CommitOrder { txns: order.len() };
    witnessed_as(level, reason, order, None, replay)
}

/// [`witnessed`] for any witness: `order` (with `snapshots` for snapshot
/// isolation), valid for `reason` when `replay` passed.
pub(crate) fn witnessed_as(
    level: Level,
    reason: Reason,
    order: Vec<TxnId>,
    snapshots: Option<Vec<u32>>,
    replay: Result<(), crate::proof::Replay>,
) -> DupVerdict {
    match replay {
        Ok(()) => {
            let mut v = verdict(level, Validity::True, reason);
            v.witness = Some(order);
            v.snapshots = snapshots;
            v
        }
        Err(e) => verdict(level, Validity::Unknown, Reason::NoReplay(e)),
    }
}

pub(crate) fn verdict(level: Level, valid: Validity, reason: Reason) -> DupVerdict {
    DupVerdict {
        level,
        valid,
        reason,
        anomaly: None,
        witness: None,
        snapshots: None,
        stats: Stats::default(),
        elapsed_ms: 0.0,
    }
}

fn decide(h: &History, level: Level, limits: &Limits) -> DupVerdict {
    if matches!(level, Level::ReadUncommitted | Level::NoG1c) {
        return uncommitted::decide(h, level, limits);
    }
    if level == Level::ReadCommitted {
        return read_committed::decide(h, limits);
    }
    if level == Level::ConsistentView {
        return read_committed::decide_consistent_view(h, limits);
    }
    let t0 = Instant::now();
    let keys = match problem::extract(h, limits.max_alternatives) {
        Ok(k) => k,
        Err(problem::Extract::Contradiction(c)) => {
            let mut v = verdict(level, Validity::False, Reason::Proof);
            v.anomaly = Some((*c).into());
            return v;
        }
        Err(problem::Extract::Undecided(r)) => return verdict(level, Validity::Unknown, r),
    };
    // The time limit covers every search for a witness, replays included.
    if t0.elapsed().as_millis() as u64 >= limits.time_ms {
        return verdict(
            level,
            Validity::Unknown,
            Reason::TimeBeforeSearch { ms: limits.time_ms },
        );
    }
    if limits.witness_first {
        if let Some(v) = fast_path(h, level, &keys) {
            return v;
        }
        if let Some(v) = windowed(h, level, &keys, limits) {
            return v;
        }
        if let Some(v) = by_sessions(h, level, &keys, limits) {
            return v;
        }
        if level == Level::SnapshotIsolation {
            if let Some(v) = serial_first(h, &keys, limits, t0) {
                return v;
            }
        }
    }
    let rest = limits.left_since(t0, 1);
    let mut s = solve::Solver::new(h, level, &keys, &rest);
    let out = s.run();
    let mut v = solver_verdict(h, level, out);
    v.stats = s.stats;
    v
}

/// A serial order is a snapshot-isolation witness (each transaction's
/// snapshot taken right after the previous commit), and on histories from
/// serializable databases the serial solver finds one far sooner than
/// snapshot isolation's own, which orders two nodes per transaction: it
/// gets a quarter of the time left. `None` when it finds no serial order.
fn serial_first(
    h: &History,
    keys: &[problem::KeyFacts],
    limits: &Limits,
    t0: Instant,
) -> Option<DupVerdict> {
    let quarter = limits.left_since(t0, 4);
    let mut s = solve::Solver::new(h, Level::Serializable, keys, &quarter);
    let out = s.run();
    let ser = solver_verdict(h, Level::Serializable, out);
    let order = ser.witness.filter(|_| ser.valid == Validity::True)?;
    let mut v = serial_verdict(h, Level::SnapshotIsolation, order);
    v.stats = s.stats;
    (v.valid == Validity::True).then_some(v)
}

/// The verdict for what the solver found, a witness replayed first.
fn solver_verdict(h: &History, level: Level, out: solve::Outcome2) -> DupVerdict {
    match out {
        solve::Outcome2::Serial(order) => serial_verdict(h, level, order),
        solve::Outcome2::Valid { order, committed } if level == Level::SnapshotIsolation => {
            witness_from(h, level, &order, &committed)
        }
        solve::Outcome2::Valid { order, committed } => serial_verdict(
            h,
            level,
            order
                .into_iter()
                .filter(|&t| committed[t as usize])
                .collect(),
        ),
        solve::Outcome2::Invalid(f) => invalid_verdict(level, f),
        solve::Outcome2::Unknown(m) => verdict(level, Validity::Unknown, m),
    }
}

/// A serial order of committed transactions as a witness for `level`
/// (under snapshot isolation each one starts right after the previous
/// commit), replayed; `unknown` if it does not replay.
fn serial_verdict(h: &History, level: Level, order: Vec<TxnId>) -> DupVerdict {
    let snaps =
        (level == Level::SnapshotIsolation).then(|| (0..order.len() as u32).collect::<Vec<_>>());
    replayed_verdict(h, level, order, snaps)
}

/// `level` holds if `order` (with `snaps`, the snapshot of each commit, for
/// snapshot isolation) replays; otherwise `unknown`: a witness that does
/// not replay is a solver bug, never a verdict.
fn replayed_verdict(
    h: &History,
    level: Level,
    order: Vec<TxnId>,
    snaps: Option<Vec<u32>>,
) -> DupVerdict {
    let replay = match &snaps {
        Some(sp) => witness::check_si(h, &order, sp),
        None => witness::check_serial(h, &order, level == Level::StrictSerializable),
    };
    let reason = Reason::SerialOrder {
        txns: order.len(),
        rounds: None,
    };
    witnessed_as(level, reason, order, snaps, replay)
}

/// A witness found by the solver among the places real-time windows leave:
/// far fewer choices, and a history from a real run usually has one. First
/// for strict serializability (which implies the other two levels) within
/// exact windows; failing that, below strict, within windows that drop real
/// time where it is contradicted (a stale read): for serializability, then
/// (for snapshot isolation) for snapshot isolation itself. Only a witness
/// is taken from these attempts, each with a sixth of the time; anything
/// else leaves the question to the exact solver.
fn windowed(
    h: &History,
    level: Level,
    keys: &[problem::KeyFacts],
    limits: &Limits,
) -> Option<DupVerdict> {
    if !h.has_invocations {
        return None;
    }
    let budget = Limits {
        time_ms: limits.time_ms / 6,
        ..limits.clone()
    };
    let attempt = |w: &windows::Windows, as_level: Level| -> Option<DupVerdict> {
        let mut s = solve::Solver::new(h, as_level, keys, &budget).with_windows(w);
        let out = s.run();
        if !matches!(
            out,
            solve::Outcome2::Serial(_) | solve::Outcome2::Valid { .. }
        ) {
            return None;
        }
        // The witness is for `as_level` (a serial order unless it is SI);
        // it is replayed at `level` too.
        let mut v = solver_verdict(h, as_level, out);
        if v.valid == Validity::True && as_level != level {
            v = serial_verdict(h, level, v.witness.take()?);
        }
        v.stats = s.stats;
        (v.valid == Validity::True).then_some(v)
    };
    let exact = windows::Windows::realtime(h, keys, 8);
    if let Some(w) = &exact {
        if let Some(v) = attempt(w, Level::StrictSerializable) {
            return Some(v);
        }
    }
    if level == Level::StrictSerializable {
        return None;
    }
    let w = match exact {
        Some(w) => w,
        None => {
            let w = windows::Windows::relaxed(h, keys, 8, 8)?;
            if let Some(v) = attempt(&w, Level::Serializable) {
                return Some(v);
            }
            w
        }
    };
    if level == Level::SnapshotIsolation {
        return attempt(&w, Level::SnapshotIsolation);
    }
    None
}

/// Without invocations: the replays and windows again, on a copy of the
/// history whose transactions are invoked right after the previous
/// completion of their process ([`sessions`]). Only a witness is taken,
/// replayed against `h` itself (where no real-time order applies).
fn by_sessions(
    h: &History,
    level: Level,
    keys: &[problem::KeyFacts],
    limits: &Limits,
) -> Option<DupVerdict> {
    let hs = sessions::with_session_intervals(h)?;
    // Without invocations strict serializability is serializability.
    let as_level = match level {
        Level::StrictSerializable => Level::Serializable,
        l => l,
    };
    let v = fast_path(&hs, as_level, keys).or_else(|| windowed(&hs, as_level, keys, limits))?;
    let order = v.witness?;
    let mut out = match v.snapshots {
        Some(sp) if level == Level::SnapshotIsolation => {
            replayed_verdict(h, level, order, Some(sp))
        }
        _ => serial_verdict(h, level, order),
    };
    out.stats = v.stats;
    (out.valid == Validity::True).then_some(out)
}

/// A witness found without search, if a replay finds one: for snapshot
/// isolation first commits in completion order, then (for every level) a
/// serial execution ([`serial_guess`], then [`replay`]), since serializable
/// implies snapshot isolation.
fn fast_path(h: &History, level: Level, keys: &[problem::KeyFacts]) -> Option<DupVerdict> {
    if level == Level::SnapshotIsolation {
        if let Some((order, snaps)) = snapshot::replay_si(h, keys) {
            let replay = witness::check_si(h, &order, &snaps);
            if replay.is_ok() {
                let reason = Reason::CommitOrder { txns: order.len() };
                let mut v = witnessed_as(level, reason, order, Some(snaps), replay);
                v.stats.keys = keys.len();
                return Some(v);
            }
        }
    }
    // Writers in completion order with read-only transactions moved back
    // to what they read (linear), then the replays that guess each
    // transaction's moment.
    let strict = level == Level::StrictSerializable;
    let guessed = serial_guess::list_append(h, keys, strict)
        .map(|order| serial_verdict(h, level, order))
        .filter(|v| v.valid == Validity::True);
    let mut v = match guessed {
        Some(v) => v,
        None => {
            let order = replay::replay_serial(h, keys, strict, None)?;
            serial_verdict(h, level, order)
        }
    };
    v.stats.keys = keys.len();
    (v.valid == Validity::True).then_some(v)
}

/// Turns the solver's node order into a witness and replays it.
fn witness_from(h: &History, level: Level, order: &[u32], committed: &[bool]) -> DupVerdict {
    let (commits, snaps) = if level == Level::SnapshotIsolation {
        let mut commits = Vec::new();
        let mut start_at = vec![0u32; h.txns.len()];
        for &node in order {
            let t = node / 2;
            if !committed[t as usize] {
                continue;
            }
            if node % 2 == 0 {
                start_at[t as usize] = commits.len() as u32;
            } else {
                commits.push(t);
            }
        }
        let snaps: Vec<u32> = commits.iter().map(|&t| start_at[t as usize]).collect();
        (commits, Some(snaps))
    } else {
        (
            order
                .iter()
                .copied()
                .filter(|&t| committed[t as usize])
                .collect(),
            None,
        )
    };
    replayed_verdict(h, level, commits, snaps)
}

/// Checks several levels, reusing what one verdict implies for another:
/// serializable ⇒ snapshot isolation; not serializable ⇒ not strict
/// serializable.
pub fn check_levels(h: &History, levels: &[Level], limits: &Limits) -> Vec<DupVerdict> {
    share_levels(levels, |l| check_duplicates(h, l, limits))
}

/// Decides each of `levels` with `check`, sharing what implies what: a
/// serializable witness is a snapshot-isolation one (each snapshot right
/// after the previous commit), and a history that is not serializable is
/// not strict serializable either.
pub(crate) fn share_levels(
    levels: &[Level],
    check: impl Fn(Level) -> DupVerdict,
) -> Vec<DupVerdict> {
    let ser = (levels.contains(&Level::Serializable) || levels.len() > 1)
        .then(|| check(Level::Serializable));
    levels
        .iter()
        .map(|&l| match (l, &ser) {
            (Level::Serializable, Some(s)) => s.clone(),
            (Level::SnapshotIsolation, Some(s)) if s.valid == Validity::True => si_from_serial(s),
            (Level::StrictSerializable, Some(s)) if s.valid == Validity::False => {
                let mut v = s.clone();
                v.level = l;
                v.witness = None;
                v
            }
            _ => check(l),
        })
        .collect()
}

/// A valid serializable verdict as a snapshot-isolation one: its serial
/// order, each snapshot right after the previous commit.
pub(crate) fn si_from_serial(s: &DupVerdict) -> DupVerdict {
    let mut v = s.clone();
    v.level = Level::SnapshotIsolation;
    v.reason = Reason::FromSerializable(Box::new(s.reason.clone()));
    v.snapshots = s.witness.as_ref().map(|w| (0..w.len() as u32).collect());
    v
}

/// Overall validity: false if any level failed, unknown if any is unknown.
pub fn overall(vs: &[DupVerdict]) -> Validity {
    if vs.iter().any(|v| v.valid == Validity::False) {
        Validity::False
    } else if vs.iter().any(|v| v.valid == Validity::Unknown) {
        Validity::Unknown
    } else {
        Validity::True
    }
}

/// Models ruled out: the weakest failing levels (`not`) and the stronger
/// ones they imply (`also-not`).
pub fn ruled_out(vs: &[DupVerdict]) -> (Vec<&'static str>, Vec<&'static str>) {
    let failed: Vec<Level> = Level::ALL
        .iter()
        .copied()
        .filter(|l| {
            vs.iter()
                .any(|v| v.level == *l && v.valid == Validity::False)
        })
        .collect();
    let Some(&weakest) = failed.first() else {
        return (vec![], vec![]);
    };
    let pos = Level::ALL.iter().position(|l| *l == weakest).unwrap_or(0);
    let also = Level::ALL[pos + 1..].iter().map(|l| l.name()).collect();
    (vec![weakest.name()], also)
}
