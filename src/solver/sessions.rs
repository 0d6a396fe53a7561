//! Intervals from sessions, for histories without invocations.
//!
//! A history of completions only has no real-time order, so the replays
//! and the real-time windows ([`super::windows`]) have nothing to steer
//! them. But a process runs one transaction at a time: each transaction was
//! invoked after the previous completion of its process. Taking that
//! completion as the invocation gives every transaction an interval that
//! contains its real one; a database that applies each transaction inside
//! its real interval applies it inside this one too, so the windows and
//! the replay guided by these intervals find its order as they would with
//! the real invocations.
//!
//! The intervals are a guess, never a constraint of any level: only a
//! witness found with them is used, and it is replayed against the real
//! history, where no real-time order applies.

use crate::history::{History, Outcome, Process};
use rustc_hash::FxHashMap;

/// A copy of `h` (which has no invocations) where each transaction is
/// invoked right after the previous completion of its process, or at the
/// start for the first one. Sequence numbers are doubled so that the
/// previous completion precedes the invocation strictly (`2c + 1 < 2c + 2`)
/// and any later completion follows it. `None` if `h`
/// has invocations already or some completion has no position.
pub fn with_session_intervals(h: &History) -> Option<History> {
    if h.has_invocations || h.txns.iter().any(|t| t.complete_seq.is_none()) {
        return None;
    }
    let mut s = h.clone();
    let mut by_seq: Vec<usize> = (0..s.txns.len()).collect();
    by_seq.sort_by_key(|&t| s.txns[t].complete_seq);
    let mut last: FxHashMap<Process, u64> = FxHashMap::default();
    for t in by_seq {
        let x = &mut s.txns[t];
        let c = x.complete_seq.unwrap_or(0);
        let inv = last.get(&x.process).map_or(0, |&p| 2 * p + 2);
        x.invoke_seq = Some(inv);
        x.complete_seq = Some(2 * c + 1);
        // An info transaction never completed: its process moves on under a
        // new id in Jepsen, but a reused id must not order after it.
        if x.outcome != Outcome::Info {
            last.insert(x.process, c);
        }
    }
    s.has_invocations = true;
    Some(s)
}
