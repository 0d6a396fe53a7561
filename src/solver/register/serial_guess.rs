//! A serial order guessed from the history's timing, before any search.
//!
//! Databases that serialize read-write transactions by locks (MySQL's and
//! the simulator's serializable) commit them in about the order they
//! answer, and let read-only transactions read a slightly older snapshot.
//! So: replay the writers (committed transactions that write) in completion
//! order, checking their reads; then give each read-only transaction the
//! latest point in that sequence, no later than its own completion, where
//! every key it read held the value it read (or, when there is none, the
//! earliest point after). With repeated values a read names no writer, and
//! the search must choose one for every read; this guess needs no choice:
//! it compares values only. It is only a guess: when it fails (a writer
//! read something else, or no point fits a reader), the search decides, and
//! when it succeeds the caller replays the order against the history before
//! saying "valid".

use super::facts::{Facts, Ver, NIL};
use crate::history::{History, KeyId, Outcome, TxnId};
use rustc_hash::FxHashMap;

/// A serial order of the committed transactions (with `info` writers taken
/// as not committed, then as committed), or `None`. `strict`: a reader is
/// placed no earlier than the writers that completed before it began.
pub fn guess(h: &History, facts: &Facts, strict: bool) -> Option<Vec<TxnId>> {
    let mut reads_of: Vec<Vec<u32>> = vec![Vec::new(); h.txns.len()];
    for (i, r) in facts.reads.iter().enumerate() {
        reads_of[r.txn as usize].push(i as u32);
    }
    [false, true]
        .into_iter()
        .find_map(|info_commits| attempt(h, facts, &reads_of, strict, info_commits))
}

/// When a transaction took effect, at the latest: its completion (an
/// `info` one's invocation; it never completed).
fn when(h: &History, t: TxnId) -> u64 {
    let txn = &h.txns[t as usize];
    let inv = txn.invoke_seq.unwrap_or(txn.index.max(0) as u64);
    match txn.outcome {
        Outcome::Info => inv,
        _ => txn.complete_seq.unwrap_or(inv),
    }
}

/// Per (key, version), the positions in the writers' sequence at which the
/// key holds it, as intervals `[start, end]` in order; position `p` is the
/// state after the first `p` writers.
struct Holds(FxHashMap<(KeyId, Ver), Vec<(u32, u32)>>);

impl Holds {
    fn of(timeline: &[Vec<(u32, Ver)>], writers: u32) -> Self {
        let mut m: FxHashMap<(KeyId, Ver), Vec<(u32, u32)>> = FxHashMap::default();
        for (k, tl) in timeline.iter().enumerate() {
            for (j, &(start, v)) in tl.iter().enumerate() {
                let end = tl.get(j + 1).map_or(writers, |n| n.0 - 1);
                m.entry((k as KeyId, v)).or_default().push((start, end));
            }
        }
        Holds(m)
    }

    /// The latest position `<= p` at which `k` holds `v`.
    fn latest(&self, k: KeyId, v: Ver, p: u32) -> Option<u32> {
        let ivs = self.0.get(&(k, v))?;
        let i = ivs.partition_point(|iv| iv.0 <= p);
        (i > 0).then(|| p.min(ivs[i - 1].1))
    }

    /// The earliest position `>= p` at which `k` holds `v`.
    fn earliest(&self, k: KeyId, v: Ver, p: u32) -> Option<u32> {
        let ivs = self.0.get(&(k, v))?;
        let i = ivs.partition_point(|iv| iv.1 < p);
        ivs.get(i).map(|iv| p.max(iv.0))
    }
}

fn attempt(
    h: &History,
    facts: &Facts,
    reads_of: &[Vec<u32>],
    strict: bool,
    info_commits: bool,
) -> Option<Vec<TxnId>> {
    let committed = |t: usize| match h.txns[t].outcome {
        Outcome::Ok => true,
        Outcome::Info => info_commits,
        Outcome::Fail => false,
    };
    let mut writers: Vec<TxnId> = (0..h.txns.len())
        .filter(|&t| committed(t) && !facts.writes_of[t].is_empty())
        .map(|t| t as TxnId)
        .collect();
    if info_commits
        && !writers
            .iter()
            .any(|&t| h.txns[t as usize].outcome == Outcome::Info)
    {
        // Nothing differs from the first attempt.
        return None;
    }
    writers.sort_by_key(|&t| (when(h, t), t));
    let nk = h.keys.len();
    let mut state: Vec<Ver> = vec![NIL; nk];
    let mut timeline: Vec<Vec<(u32, Ver)>> = vec![vec![(0, NIL)]; nk];
    for (i, &w) in writers.iter().enumerate() {
        for &r in &reads_of[w as usize] {
            let r = &facts.reads[r as usize];
            if state[r.key as usize] != r.ver {
                return None;
            }
        }
        for &(k, v) in &facts.writes_of[w as usize] {
            state[k as usize] = v;
            timeline[k as usize].push((i as u32 + 1, v));
        }
    }
    let holds = Holds::of(&timeline, writers.len() as u32);
    let done: Vec<u64> = writers.iter().map(|&w| when(h, w)).collect();
    // Readers: (position, when, txn).
    let mut placed: Vec<(u32, u64, TxnId)> = Vec::new();
    for t in 0..h.txns.len() {
        if h.txns[t].outcome != Outcome::Ok || !facts.writes_of[t].is_empty() {
            continue;
        }
        let t = t as TxnId;
        let reads: Vec<(KeyId, Ver)> = reads_of[t as usize]
            .iter()
            .map(|&r| (facts.reads[r as usize].key, facts.reads[r as usize].ver))
            .collect();
        let at = when(h, t);
        let pref = done.partition_point(|&d| d < at) as u32;
        let lo = if strict {
            let inv = h.txns[t as usize].invoke_seq.unwrap_or(0);
            done.partition_point(|&d| d < inv) as u32
        } else {
            0
        };
        let p = down(&holds, &reads, pref, lo)
            .or_else(|| (!strict).then(|| up(&holds, &reads, pref)).flatten())?;
        placed.push((p, at, t));
    }
    placed.sort_unstable();
    let mut order = Vec::with_capacity(writers.len() + placed.len());
    let mut next = placed.iter().peekable();
    for (i, &w) in writers.iter().enumerate() {
        while let Some(&(_, _, r)) = next.next_if(|x| x.0 as usize <= i) {
            order.push(r);
        }
        order.push(w);
    }
    order.extend(next.map(|x| x.2));
    Some(order)
}

/// The latest position in `[lo, p]` at which every read holds.
fn down(holds: &Holds, reads: &[(KeyId, Ver)], mut p: u32, lo: u32) -> Option<u32> {
    loop {
        let mut q = p;
        for &(k, v) in reads {
            q = q.min(holds.latest(k, v, p)?);
        }
        if q < lo {
            return None;
        }
        if q == p {
            return Some(p);
        }
        p = q;
    }
}

/// The earliest position `>= p` at which every read holds.
fn up(holds: &Holds, reads: &[(KeyId, Ver)], mut p: u32) -> Option<u32> {
    loop {
        let mut q = p;
        for &(k, v) in reads {
            q = q.max(holds.earliest(k, v, p)?);
        }
        if q == p {
            return Some(p);
        }
        p = q;
    }
}

#[cfg(test)]
mod tests {
    use super::super::{facts, witness};
    use super::*;

    /// `(process, invoke index, complete index, outcome, micro-ops)`.
    fn history(txns: &[(u32, u32, u32, &str, &str)]) -> History {
        let mut lines: Vec<(u32, String)> = Vec::new();
        for &(p, inv, done, outcome, mops) in txns {
            lines.push((
                inv,
                format!("{{:type :invoke, :process {p}, :f :txn, :value {mops}, :index {inv}}}"),
            ));
            lines.push((
                done,
                format!(
                    "{{:type :{outcome}, :process {p}, :f :txn, :value {mops}, :index {done}}}"
                ),
            ));
        }
        lines.sort();
        let edn: Vec<String> = lines.into_iter().map(|l| l.1).collect();
        crate::history::read::read_history(edn.join("\n").as_bytes(), "t", None).expect("parses")
    }

    fn guessed(h: &History, strict: bool) -> Option<Vec<TxnId>> {
        let f = facts::extract(h).expect("no contradiction");
        let order = guess(h, &f, strict)?;
        assert_eq!(witness::check_serial(h, &order, strict), Ok(()));
        Some(order)
    }

    /// A read-only transaction that read an older state (a stale snapshot)
    /// goes back to where that state held; a strict guess may not place it
    /// before a writer that completed before it began.
    #[test]
    fn a_stale_reader_goes_back_to_the_state_it_read() {
        let h = history(&[
            (0, 0, 1, "ok", "[[:w :x 1]]"),
            (1, 2, 3, "ok", "[[:w :x 2]]"),
            (2, 4, 5, "ok", "[[:r :x 1]]"),
        ]);
        let order = guessed(&h, false).expect("a guess");
        let pos = |t: TxnId| order.iter().position(|&x| x == t);
        assert!(pos(0) < pos(2) && pos(2) < pos(1), "{order:?}");
        assert_eq!(guessed(&h, true), None);
    }

    /// Values repeat: the guess compares values, so any write of 1 will do.
    #[test]
    fn repeated_values_need_no_choice_of_writer() {
        let h = history(&[
            (0, 0, 1, "ok", "[[:w :x 1]]"),
            (1, 2, 3, "ok", "[[:w :x 2]]"),
            (2, 4, 5, "ok", "[[:w :x 1]]"),
            (3, 6, 7, "ok", "[[:r :x 1] [:r :y nil]]"),
            (4, 8, 9, "ok", "[[:r :x 2]]"),
        ]);
        let order = guessed(&h, false).expect("a guess");
        assert_eq!(order.len(), 5);
    }

    /// A writer that read an older state is not moved: the guess gives up
    /// (the search decides; this history is serializable: T0 T2 T1).
    #[test]
    fn a_writer_out_of_completion_order_defeats_the_guess() {
        let h = history(&[
            (0, 0, 1, "ok", "[[:w :x 1]]"),
            (1, 2, 3, "ok", "[[:w :x 2]]"),
            (2, 4, 5, "ok", "[[:r :x 1] [:w :y 1]]"),
        ]);
        assert_eq!(guessed(&h, false), None);
    }

    /// An `info` writer whose value was read is taken as committed in the
    /// second attempt, at its invocation.
    #[test]
    fn an_info_writer_read_by_others_is_taken_as_committed() {
        let h = history(&[
            (0, 0, 90, "info", "[[:w :x 1]]"),
            (1, 2, 3, "ok", "[[:r :x 1]]"),
        ]);
        let order = guessed(&h, false).expect("a guess");
        assert_eq!(order.len(), 2);
    }
}
