//! The serial guess ([`crate::solver::serial_guess`]) for registers: a
//! key's state is its value, so a read names no writer and values that
//! repeat need no choice; writers' reads are checked against the values
//! their predecessors left.

use super::facts::{Facts, NIL};
use crate::history::{History, KeyId, Outcome, TxnId};
use crate::solver::serial_guess::{place_readers, place_snapshots, when};

/// A serial order of the committed transactions, or `None`. `strict`: a
/// reader is placed no earlier than the writers that completed before it
/// began.
pub fn guess(h: &History, facts: &Facts, strict: bool) -> Option<Vec<TxnId>> {
    let reads_of = reads_of(h, facts);
    let looks = [
        Look::CompletedAfter,
        Look::BeganAfter,
        Look::CompletedSinceBegun,
    ];
    looks.into_iter().find_map(|look| {
        let ws = committed_writers(h, facts, &reads_of, look);
        let timeline = replay(h, facts, &ws, Some(&reads_of))?;
        let reads = |t: TxnId| reads(facts, &reads_of, t);
        let writes = |t: TxnId| !facts.writes_of[t as usize].is_empty();
        place_readers(h, &ws, &timeline, writes, reads, strict)
    })
}

/// A snapshot-isolated execution ([`place_snapshots`]: writers commit in
/// completion order, each reading the latest state its reads fit that
/// first committer wins allows): the commit order and snapshots, or `None`.
pub fn guess_si(h: &History, facts: &Facts) -> Option<(Vec<TxnId>, Vec<u32>)> {
    let reads_of = reads_of(h, facts);
    let looks = [
        Look::BeganAfter,
        Look::CompletedAfter,
        Look::CompletedSinceBegun,
    ];
    looks.into_iter().find_map(|look| {
        let ws = committed_writers(h, facts, &reads_of, look);
        let timeline = replay(h, facts, &ws, None)?;
        let reads = |t: TxnId| reads(facts, &reads_of, t);
        let wrote = |t: TxnId| facts.writes_of[t as usize].iter().map(|w| w.0).collect();
        place_snapshots(h, &ws, &timeline, wrote, reads)
    })
}

/// How many transactions a guess looks ahead for one that looks at a key an
/// `info` transaction wrote (keys retire: a scan to the end for each would
/// be quadratic).
const LOOK: usize = 256;

/// Where to look for the transaction whose read says whether an `info`
/// writer committed: the next one to look at a key it wrote (reading it
/// before writing it).
#[derive(Clone, Copy)]
enum Look {
    /// The next to complete (a database that takes effect at commit).
    CompletedAfter,
    /// The first to begin after it completed, when no other writer of the
    /// key completed in between (what a snapshot taken at the start shows).
    BeganAfter,
    /// The first to complete after it began (it may have taken effect long
    /// before it was reported).
    CompletedSinceBegun,
}

/// The writers taken as committed, in completion order: every `ok` one,
/// and each `info` one whose write the transaction `look` finds, for some
/// key it wrote, saw rather than the value before it (and for no key the
/// other way round). A guess: when the two values are the same, or nobody
/// looks, it is taken as not committed.
fn committed_writers(h: &History, facts: &Facts, reads_of: &[Vec<u32>], look: Look) -> Vec<TxnId> {
    let mut by_when: Vec<TxnId> = (0..h.txns.len() as TxnId)
        .filter(|&t| h.txns[t as usize].outcome != Outcome::Fail)
        .collect();
    by_when.sort_by_key(|&t| (when(h, t), t));
    let invoked = |t: TxnId| h.txns[t as usize].invoke_seq.unwrap_or(0);
    let mut by_invoke: Vec<TxnId> = (0..h.txns.len() as TxnId)
        .filter(|&t| h.txns[t as usize].outcome == Outcome::Ok)
        .collect();
    by_invoke.sort_by_key(|&t| (invoked(t), t));
    let read_of = |t: TxnId, k: KeyId| {
        reads_of[t as usize]
            .iter()
            .map(|&r| &facts.reads[r as usize])
            .find(|r| r.key == k)
            .map(|r| r.ver)
    };
    let writes = |t: TxnId, k: KeyId| facts.writes_of[t as usize].iter().any(|w| w.0 == k);
    let mut state: Vec<u32> = vec![NIL; h.keys.len()];
    let mut out = Vec::new();
    for (i, &t) in by_when.iter().enumerate() {
        let ws = &facts.writes_of[t as usize];
        if ws.is_empty() {
            continue;
        }
        let after = when(h, t);
        let vote = |&(k, v): &(KeyId, u32)| {
            // Another `info` writer's blind write may not have happened: it
            // does not end the look.
            let touches = |u: &&TxnId| {
                read_of(**u, k).is_some()
                    || (writes(**u, k) && h.txns[**u as usize].outcome == Outcome::Ok)
            };
            let (next, between) = match look {
                Look::BeganAfter => {
                    let from = by_invoke.partition_point(|&u| invoked(u) <= after);
                    let next = *by_invoke[from..].iter().take(LOOK).find(touches)?;
                    let between = by_when[i + 1..]
                        .iter()
                        .take_while(|&&u| when(h, u) < invoked(next))
                        .any(|&u| writes(u, k));
                    (next, between)
                }
                Look::CompletedAfter => (*by_when[i + 1..].iter().take(LOOK).find(touches)?, false),
                Look::CompletedSinceBegun => {
                    let from = by_when.partition_point(|&u| when(h, u) <= invoked(t));
                    let later = by_when[from..].iter().filter(|&&u| u != t);
                    (*later.take(LOOK).find(touches)?, false)
                }
            };
            let saw = read_of(next, k)?;
            let before = state[k as usize];
            (!between && (saw != before || saw != v)).then_some(saw == v)
        };
        // Committed when some key's reader saw its value and none saw the
        // value before it.
        let commits = h.txns[t as usize].outcome == Outcome::Ok || {
            let votes: Vec<bool> = ws.iter().filter_map(vote).collect();
            votes.contains(&true) && !votes.contains(&false)
        };
        if commits {
            for &(k, v) in ws {
                state[k as usize] = v;
            }
            out.push(t);
        }
    }
    out
}

/// Each transaction's external reads, by index into `facts.reads`.
fn reads_of(h: &History, facts: &Facts) -> Vec<Vec<u32>> {
    let mut reads_of: Vec<Vec<u32>> = vec![Vec::new(); h.txns.len()];
    for (i, r) in facts.reads.iter().enumerate() {
        reads_of[r.txn as usize].push(i as u32);
    }
    reads_of
}

/// `t`'s reads as (key, value).
fn reads(facts: &Facts, reads_of: &[Vec<u32>], t: TxnId) -> Vec<(KeyId, u32)> {
    reads_of[t as usize]
        .iter()
        .map(|&r| (facts.reads[r as usize].key, facts.reads[r as usize].ver))
        .collect()
}

/// Each key's values along `ws` (see the core's timeline); with
/// `check_reads`, `None` when a writer read something other than what its
/// predecessors left.
fn replay(
    h: &History,
    facts: &Facts,
    ws: &[TxnId],
    check_reads: Option<&[Vec<u32>]>,
) -> Option<Vec<Vec<(u32, u32)>>> {
    let nk = h.keys.len();
    let mut state: Vec<u32> = vec![NIL; nk];
    let mut timeline: Vec<Vec<(u32, u32)>> = vec![vec![(0, NIL)]; nk];
    for (i, &w) in ws.iter().enumerate() {
        for &r in check_reads.map_or(&[][..], |c| &c[w as usize]) {
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
    Some(timeline)
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

    /// An `info` writer whose value the next transaction to look at the
    /// key read is taken as committed, though it was reported later.
    #[test]
    fn an_info_writer_read_by_others_is_taken_as_committed() {
        let h = history(&[
            (0, 0, 90, "info", "[[:w :x 1]]"),
            (1, 2, 3, "ok", "[[:r :x 1]]"),
        ]);
        let order = guessed(&h, false).expect("a guess");
        assert_eq!(order.len(), 2);
        // One whose write nobody saw is not.
        let h = history(&[
            (0, 0, 90, "info", "[[:w :x 1]]"),
            (1, 2, 3, "ok", "[[:r :x nil]]"),
            (2, 4, 5, "ok", "[[:r :x nil] [:w :x 2]]"),
        ]);
        let order = guessed(&h, false).expect("a guess");
        assert_eq!(order.len(), 2);
    }

    /// Snapshot isolation's guess: two transactions that each read both
    /// keys from the same snapshot and write one (a write skew) commit in
    /// completion order with their snapshots at their start; no serial
    /// order exists.
    #[test]
    fn a_write_skew_gets_snapshots_and_no_serial_order() {
        let h = history(&[
            (0, 0, 3, "ok", "[[:r :x nil] [:r :y nil] [:w :x 1]]"),
            (1, 1, 4, "ok", "[[:r :x nil] [:r :y nil] [:w :y 1]]"),
            (2, 5, 6, "ok", "[[:r :x 1] [:r :y 1]]"),
        ]);
        let f = facts::extract(&h).expect("no contradiction");
        let (order, snaps) = guess_si(&h, &f).expect("a guess");
        assert_eq!(witness::check_si(&h, &order, &snaps), Ok(()));
        assert_eq!(snaps, vec![0, 0, 2]);
        assert_eq!(guessed(&h, false), None);
    }
}
