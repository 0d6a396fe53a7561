//! The serial guess ([`crate::solver::serial_guess`]) for registers: a
//! key's state is its value, so a read names no writer and values that
//! repeat need no choice; writers' reads are checked against the values
//! their predecessors left.

use super::facts::{Facts, NIL};
use crate::history::{History, TxnId};
use crate::solver::serial_guess::{place_readers, writers};

/// A serial order of the committed transactions (with `info` writers taken
/// as not committed, then as committed), or `None`. `strict`: a reader is
/// placed no earlier than the writers that completed before it began.
pub fn guess(h: &History, facts: &Facts, strict: bool) -> Option<Vec<TxnId>> {
    let mut reads_of: Vec<Vec<u32>> = vec![Vec::new(); h.txns.len()];
    for (i, r) in facts.reads.iter().enumerate() {
        reads_of[r.txn as usize].push(i as u32);
    }
    let nk = h.keys.len();
    [false, true].into_iter().find_map(|info_commits| {
        let ws = writers(h, info_commits, |t| !facts.writes_of[t as usize].is_empty())?;
        let mut state: Vec<u32> = vec![NIL; nk];
        let mut timeline: Vec<Vec<(u32, u32)>> = vec![vec![(0, NIL)]; nk];
        for (i, &w) in ws.iter().enumerate() {
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
        let reads = |t: TxnId| {
            reads_of[t as usize]
                .iter()
                .map(|&r| (facts.reads[r as usize].key, facts.reads[r as usize].ver))
                .collect()
        };
        let writes = |t: TxnId| !facts.writes_of[t as usize].is_empty();
        place_readers(h, &ws, &timeline, writes, reads, strict)
    })
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
