//! Read committed (Adya's PL-2) on list-append histories whose values
//! repeat. A history is read committed iff some choice (which committed
//! block produced each element of each read, whether each `info`
//! transaction committed, the order of versions) leaves no G0, G1a, G1b or
//! G1c. Choices that read a failed transaction's append (G1a), stop inside
//! a block (G1b) or split one (G0) are ruled out by construction, so this
//! is the serializable search of [`super::solve`] with two things dropped:
//! a transaction that read a key before appending to it is not pinned to
//! the length it read (others may commit in between), and reads add no
//! anti-dependency edge, so the acyclicity theory keeps only ww ∪ wr
//! acyclic. A valid verdict carries a commit order, replayed by
//! [`super::witness::check_read_committed`].
//!
//! Consistent view ([`Level::ConsistentView`], Adya's PL-2+: no G1, no
//! G-single) is decided from the same facts by the same search, with two
//! things added: the version order among the blocks of one uniform run
//! (each block at its own place, as under snapshot isolation) and among a
//! key's unseen blocks becomes a choice (it decides who
//! anti-depends on whom), and a second theory ([`super::solve::single`])
//! refuses full assignments where a reader's anti-dependency closes a
//! cycle with ww ∪ wr edges; a G-single in the graph every choice shares
//! settles it before the search. Its witness, a commit order, is replayed
//! by [`super::witness::check_consistent_view`]. Known limit: the G-single
//! check runs on full assignments only, so a large history with many
//! conflicting choices (thousands of transactions on a few dozen keys) may
//! reach the time limit and end `unknown`.

use super::{
    invalid_verdict, problem, solve, verdict, witness, DupAnomaly, DupVerdict, Level, Limits,
};
use crate::anomaly::AnomalyKind;
use crate::history::{History, Outcome, TxnId};
use crate::model::Validity;
use crate::proof::Reason;
use rustc_hash::{FxHashMap, FxHashSet};
use std::time::Instant;

/// The verdict for read committed.
pub fn decide(h: &History, limits: &Limits) -> DupVerdict {
    prepare(h, limits).decide(h, limits)
}

/// The verdict for consistent view (see the module doc).
pub fn decide_consistent_view(h: &History, limits: &Limits) -> DupVerdict {
    prepare(h, limits).decide_at(h, limits, Level::ConsistentView)
}

/// Read committed's facts of a history, extracted once: what the reads
/// alone show ([`Prepared::finding`]) can settle models before the search
/// ([`Prepared::decide`]) runs, or instead of it.
pub struct Prepared {
    /// The per-key facts and the first non-repeatable read, or the verdict
    /// the reads alone give.
    facts: Result<(Vec<problem::KeyFacts>, Option<problem::Contradiction>), DupVerdict>,
    /// When extraction began: the time limit covers it.
    t0: Instant,
    /// How long extraction took (each level's search is charged for it).
    took: std::time::Duration,
}

/// Extracts read committed's facts of `h` (see [`Prepared`]).
pub fn prepare(h: &History, limits: &Limits) -> Prepared {
    let level = Level::ReadCommitted;
    let t0 = Instant::now();
    let facts = match problem::extract_with(h, limits.max_alternatives, false) {
        Ok(k) => Ok(k),
        Err(problem::Extract::Contradiction(c)) => {
            // A transaction that does not see its own appends: not modelled
            // (read committed allows internal anomalies), but the finding
            // still rules out the models that forbid them.
            let valid = if c.kind == AnomalyKind::Internal.into() {
                Validity::Unknown
            } else {
                Validity::False
            };
            let reason = if valid == Validity::Unknown {
                Reason::Unmodelled
            } else {
                Reason::Proof
            };
            let mut v = verdict(level, valid, reason);
            v.anomaly = Some((*c).into());
            Err(v)
        }
        Err(problem::Extract::Undecided(r)) => Err(verdict(level, Validity::Unknown, r)),
    };
    Prepared {
        facts,
        t0,
        took: t0.elapsed(),
    }
}

impl Prepared {
    /// What the reads alone show before any choice: a transaction that saw
    /// two states of a key or missed its own appends (internal), reads no
    /// order of whole blocks explains, ... The caller keeps those every
    /// choice shares; a model they rule out needs no search (read atomic
    /// with a non-repeatable read).
    pub fn finding(&self) -> Option<DupAnomaly> {
        match &self.facts {
            Ok((_, internal)) => internal.clone().map(DupAnomaly::from),
            Err(v) => v.anomaly.clone(),
        }
    }

    /// When extraction began.
    pub fn started(&self) -> Instant {
        self.t0
    }

    /// The verdict: the reads' own, or a witness found by replay, or the
    /// search's answer.
    pub fn decide(self, h: &History, limits: &Limits) -> DupVerdict {
        self.decide_at(h, limits, Level::ReadCommitted)
    }

    /// [`Prepared::decide`] at `level`: read committed or consistent view,
    /// which share the facts (each search gets the whole time limit, less
    /// the extraction).
    pub fn decide_at(&self, h: &History, limits: &Limits, level: Level) -> DupVerdict {
        let t0 = Instant::now().checked_sub(self.took).unwrap_or(self.t0);
        match &self.facts {
            Ok((keys, internal)) => search(h, limits, t0, keys, internal.clone(), level),
            Err(v) => {
                let mut v = v.clone();
                v.level = level;
                v
            }
        }
    }
}

/// Read committed once the reads showed no contradiction: a witness by
/// replay, else the search.
fn search(
    h: &History,
    limits: &Limits,
    t0: Instant,
    keys: &[problem::KeyFacts],
    internal: Option<problem::Contradiction>,
    level: Level,
) -> DupVerdict {
    if limits.witness_first {
        // The replay with backtracking may use a quarter of the time.
        let deadline = t0 + std::time::Duration::from_millis(limits.time_ms / 4);
        if let Some(mut v) = witness_first(h, keys, deadline, level) {
            v.anomaly = internal.map(DupAnomaly::from);
            return v;
        }
    }
    if level == Level::ConsistentView && limits.witness_first {
        // A serial order is a consistent-view witness, and on histories
        // from serializable databases the serial search (windows, replays,
        // then its own solver) finds one far sooner than consistent view's
        // search, whose G-single check waits for full assignments: it gets
        // a quarter of the time left.
        let quarter = limits.left_since(t0, 4);
        let s = super::check_duplicates(h, Level::Serializable, &quarter);
        if let (Validity::True, Some(order)) = (s.valid, s.witness) {
            let mut v = replayed(h, order, level);
            if v.valid == Validity::True {
                v.anomaly = internal.map(DupAnomaly::from);
                return v;
            }
        }
    }
    let rest = limits.left_since(t0, 1);
    let mut s = solve::Solver::new(h, level, keys, &rest);
    let out = s.run();
    let mut v = match out {
        solve::Outcome2::Serial(order) => replayed(h, order, level),
        solve::Outcome2::Valid { order, committed } => replayed(
            h,
            order
                .into_iter()
                .filter(|&t| committed[t as usize])
                .collect(),
            level,
        ),
        solve::Outcome2::Invalid(f) => invalid_verdict(level, f),
        solve::Outcome2::Unknown(m) => verdict(level, Validity::Unknown, m),
    };
    v.stats = s.stats;
    // A non-repeatable read is no anomaly here, but it rules out the
    // models that forbid internal anomalies: the verdict carries it.
    if let (Some(c), None) = (internal, &v.anomaly) {
        v.anomaly = Some(c.into());
    }
    v
}

/// A witness without search, if one of these guesses replays: the `ok`
/// transactions in completion order (a read-committed database makes
/// writes visible at commit, which precedes completion); each run of a key
/// filled by its candidates in completion order ([`by_completion`]); the
/// read-committed replay with backtracking ([`super::rc_order`], until
/// `deadline`); the snapshot replay's placement as a commit order; a
/// snapshot or serial execution found by replay (either is a
/// read-committed one). `None` leaves the question to the solver.
fn witness_first(
    h: &History,
    keys: &[problem::KeyFacts],
    deadline: Instant,
    level: Level,
) -> Option<DupVerdict> {
    let check = |order: &[TxnId]| replays(h, order, level);
    let mut done: Vec<TxnId> = (0..h.txns.len() as TxnId)
        .filter(|&t| h.txns[t as usize].outcome == Outcome::Ok)
        .collect();
    done.sort_by_key(|&t| h.txns[t as usize].complete_seq);
    if check(&done) {
        return Some(replayed(h, done, level));
    }
    if let Some(order) = by_completion(h, keys) {
        if check(&order) {
            return Some(replayed(h, order, level));
        }
    }
    if let Some(order) = super::rc_order::rc_order(h, keys, deadline) {
        if check(&order) {
            return Some(replayed(h, order, level));
        }
    }
    // The snapshot replay's commit order, when it placed every block: a
    // read-committed database commits in about completion order too, and
    // its reads need only be in place by commit (the replay asks that).
    let placed = super::snapshot::si_placement(h, keys);
    if placed.complete() && check(&placed.order) {
        return Some(replayed(h, placed.order, level));
    }
    let keys = problem::extract(h, Limits::default().max_alternatives).ok()?;
    let v = super::fast_path(h, Level::SnapshotIsolation, &keys)?;
    let order = v.witness?;
    let out = replayed(h, order, level);
    (out.valid == Validity::True).then_some(out)
}

/// Whether `order` replays as a witness of `level`.
fn replays(h: &History, order: &[TxnId], level: Level) -> bool {
    replay_at(h, order, level).is_ok()
}

fn replay_at(h: &History, order: &[TxnId], level: Level) -> Result<(), crate::proof::Replay> {
    if level == Level::ConsistentView {
        witness::check_consistent_view(h, order)
    } else {
        witness::check_read_committed(h, order)
    }
}

/// Valid with `order` as the witness if it replays; otherwise `unknown`
/// (a witness that does not replay is a solver bug, never a verdict).
fn replayed(h: &History, order: Vec<TxnId>, level: Level) -> DupVerdict {
    let replay = replay_at(h, &order, level);
    super::witnessed(level, order, replay)
}

/// A guess of the choice: per key, each run of the longest read filled by
/// its candidate blocks in completion order (segments spelled one way
/// only), unseen committed blocks after; `info` transactions commit iff
/// some read saw them. Then an order of ww ∪ wr that follows completion
/// where it can. `None` when the guess does not fit or closes a cycle.
fn by_completion(h: &History, keys: &[problem::KeyFacts]) -> Option<Vec<TxnId>> {
    let when = |t: TxnId| h.txns[t as usize].complete_seq.unwrap_or(u64::MAX);
    let mut committed: Vec<bool> = h.txns.iter().map(|t| t.outcome == Outcome::Ok).collect();
    let mut seen: Vec<Vec<(u32, u32)>> = Vec::with_capacity(keys.len()); // (writer, end)
    for kf in keys {
        let mut used = vec![false; kf.writers.len()];
        // A block cannot start before what its own transaction read.
        let mut floor: FxHashMap<TxnId, u32> = FxHashMap::default();
        for r in &kf.readers {
            let f = floor.entry(r.txn).or_default();
            *f = (*f).max(r.cut);
        }
        let mut blocks = Vec::new();
        for seg in &kf.segments {
            // The first spelling of the segment the candidates can fill.
            let filled = seg.alts.iter().find_map(|alt| {
                let mut used = used.clone();
                let mut got = Vec::new();
                for &bi in &alt.bins {
                    let bin = &kf.bins[bi as usize];
                    let mut cands: Vec<u32> = bin
                        .cands
                        .iter()
                        .copied()
                        .filter(|&w| !used[w as usize])
                        .collect();
                    cands.sort_by_key(|&w| when(kf.writers[w as usize].txn));
                    let mut at = bin.start;
                    for w in cands {
                        let wr = &kf.writers[w as usize];
                        let wt = wr.weight();
                        let low = floor.get(&wr.txn).copied().unwrap_or(0);
                        if at + wt <= bin.end && at >= low {
                            used[w as usize] = true;
                            at += wt;
                            got.push((w, at));
                        }
                        if at == bin.end {
                            break;
                        }
                    }
                    if at != bin.end {
                        return None;
                    }
                }
                Some((used, got))
            });
            let (u, got) = filled?;
            used = u;
            blocks.extend(got);
        }
        for &(w, _) in &blocks {
            committed[kf.writers[w as usize].txn as usize] = true;
        }
        seen.push(blocks);
    }
    let mut edges: Vec<(u32, u32)> = Vec::new();
    for (kf, blocks) in keys.iter().zip(&seen) {
        let mut chain: Vec<TxnId> = blocks
            .iter()
            .map(|&(w, _)| kf.writers[w as usize].txn)
            .collect();
        let placed: FxHashSet<TxnId> = chain.iter().copied().collect();
        let mut rest: Vec<TxnId> = kf
            .writers
            .iter()
            .map(|w| w.txn)
            .filter(|&t| committed[t as usize] && !placed.contains(&t))
            .collect();
        rest.sort_by_key(|&t| when(t));
        chain.extend(rest);
        edges.extend(chain.windows(2).map(|p| (p[0], p[1])));
        for r in &kf.readers {
            if r.cut == 0 {
                continue;
            }
            let i = blocks.iter().position(|&(_, e)| e == r.cut)?;
            edges.push((kf.writers[blocks[i].0 as usize].txn, r.txn));
        }
    }
    let order = super::dag::priority_order(h.txns.len(), &edges, when)?;
    Some(
        order
            .into_iter()
            .filter(|&t| committed[t as usize])
            .collect(),
    )
}
