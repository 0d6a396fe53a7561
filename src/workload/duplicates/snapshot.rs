//! The fast path for snapshot isolation: commit the `ok` transactions in
//! the order they completed (a database commits before it answers), and
//! give each one the latest snapshot its reads and first-committer-wins
//! allow. With the commit order fixed the state of every key after every
//! commit is fixed too, so each transaction's possible snapshots are an
//! interval found by binary search: no choice, no search. Histories from
//! snapshot-isolated databases usually pass; when one does not this proves
//! nothing and the solver decides. The result is replayed by
//! [`super::witness::check_si`] before it is trusted.

use super::problem::KeyFacts;
use crate::history::{History, Outcome, TxnId};

/// Commit order and snapshot points (how many commits each transaction's
/// snapshot includes), or `None` when completion order does not work.
/// `info` transactions are taken as aborted.
pub fn replay_si(h: &History, keys: &[KeyFacts]) -> Option<(Vec<TxnId>, Vec<u32>)> {
    let nt = h.txns.len();
    let mut reads: Vec<Vec<(u32, u32)>> = vec![Vec::new(); nt];
    let mut appends: Vec<Vec<(u32, u32)>> = vec![Vec::new(); nt];
    for (ki, kf) in keys.iter().enumerate() {
        for r in &kf.readers {
            reads[r.txn as usize].push((ki as u32, r.cut));
        }
        for (wi, w) in kf.writers.iter().enumerate() {
            appends[w.txn as usize].push((ki as u32, wi as u32));
        }
    }
    let mut order: Vec<TxnId> = (0..nt as TxnId)
        .filter(|&t| h.txns[t as usize].outcome == Outcome::Ok)
        .collect();
    order.sort_by_key(|&t| (h.txns[t as usize].complete_seq.unwrap_or(u64::MAX), t));
    // Per key: (commit number, length after it), lengths increasing; and
    // how long the key's state agrees with the observed list.
    let mut lens: Vec<Vec<(u32, u32)>> = vec![Vec::new(); keys.len()];
    let mut len: Vec<u32> = vec![0; keys.len()];
    let mut agree: Vec<u32> = vec![0; keys.len()];
    let mut snaps = Vec::with_capacity(order.len());
    for (i, &t) in order.iter().enumerate() {
        let i = i as u32;
        // Snapshots j (commits seen) with j in [lo, hi].
        let (mut lo, mut hi) = (0u32, i);
        for &(k, c) in &reads[t as usize] {
            let k = k as usize;
            if c > agree[k] {
                return None;
            }
            let hs = &lens[k];
            // The key has length c after commit e (or from the start).
            let e = hs.partition_point(|&(_, l)| l < c);
            let from = if c == 0 {
                0
            } else if e < hs.len() && hs[e].1 == c {
                hs[e].0 + 1
            } else {
                return None;
            };
            let next = if c == 0 { 0 } else { e + 1 };
            let until = hs.get(next).map_or(i, |&(j, _)| j);
            lo = lo.max(from);
            hi = hi.min(until);
        }
        // First committer wins: nobody appended to its keys since.
        for &(k, _) in &appends[t as usize] {
            if let Some(&(j, _)) = lens[k as usize].last() {
                lo = lo.max(j + 1);
            }
        }
        if lo > hi {
            return None;
        }
        snaps.push(hi);
        for &(k, w) in &appends[t as usize] {
            let ku = k as usize;
            let kf = &keys[ku];
            let block = &kf.writers[w as usize].block;
            let p = len[ku];
            if agree[ku] == p && kf.list[p as usize..].starts_with(block) {
                agree[ku] += block.len() as u32;
            }
            len[ku] += block.len() as u32;
            lens[ku].push((i, len[ku]));
        }
    }
    Some((order, snaps))
}
