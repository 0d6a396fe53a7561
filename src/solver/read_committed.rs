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

use super::{problem, solve, verdict, witness, DupAnomaly, DupVerdict, Level, Limits};
use crate::history::{History, TxnId};
use crate::model::Validity;
use std::time::Instant;

/// The verdict for read committed.
pub fn decide(h: &History, limits: &Limits) -> DupVerdict {
    let level = Level::ReadCommitted;
    let t0 = Instant::now();
    let keys = match problem::extract_with(h, limits.max_alternatives, false) {
        Ok(k) => k,
        Err(problem::Extract::Contradiction(c)) => {
            // Read committed allows a transaction to see two states of a
            // key (an internal anomaly): such a history is not decided
            // here, but the finding still rules out the models above.
            let valid = if c.kind == "internal" {
                Validity::Unknown
            } else {
                Validity::False
            };
            let reason = if valid == Validity::Unknown {
                format!(
                    "not decided: {} (read-committed allows internal anomalies, the solver does not model them)",
                    c.explanation
                )
            } else {
                c.explanation.clone()
            };
            let mut v = verdict(level, valid, reason);
            v.anomaly = Some(DupAnomaly {
                kind: c.kind.to_string(),
                txns: c.txns,
                keys: c.keys,
                explanation: c.explanation,
            });
            return v;
        }
        Err(problem::Extract::Limit(m)) | Err(problem::Extract::NotListAppend(m)) => {
            return verdict(level, Validity::Unknown, m)
        }
    };
    let rest = Limits {
        time_ms: limits
            .time_ms
            .saturating_sub(t0.elapsed().as_millis() as u64),
        ..limits.clone()
    };
    let mut s = solve::Solver::new(h, level, &keys, &rest);
    let out = s.run();
    let mut v = match out {
        solve::Outcome2::Serial(order) => replayed(h, order),
        solve::Outcome2::Valid { order, committed } => replayed(
            h,
            order
                .into_iter()
                .filter(|&t| committed[t as usize])
                .collect(),
        ),
        solve::Outcome2::Invalid(f) => {
            let mut v = verdict(
                level,
                Validity::False,
                f.explanation.lines().next().unwrap_or("").to_string(),
            );
            v.anomaly = Some(f);
            v
        }
        solve::Outcome2::Unknown(m) => verdict(level, Validity::Unknown, m),
    };
    v.stats = s.stats;
    v
}

/// Valid with `order` as the witness if it replays; otherwise `unknown`
/// (a witness that does not replay is a solver bug, never a verdict).
fn replayed(h: &History, order: Vec<TxnId>) -> DupVerdict {
    let level = Level::ReadCommitted;
    match witness::check_read_committed(h, &order) {
        Ok(()) => {
            let mut v = verdict(
                level,
                Validity::True,
                format!(
                    "a commit order of {} transactions explains every read",
                    order.len()
                ),
            );
            v.witness = Some(order);
            v
        }
        Err(e) => verdict(
            level,
            Validity::Unknown,
            format!("internal: the solver's witness does not replay ({e})"),
        ),
    }
}
