//! The order relations Elle adds from the history itself (`elle.core`'s
//! `process-graph` and `realtime-graph`), independent of any workload.

use rustc_hash::FxHashMap;

use crate::history::{History, Outcome, TxnId};

/// Process order: for each process, an edge from each committed (`ok`)
/// transaction to the process's next committed one, in history order.
///
/// Like Elle, only `ok` transactions take part: an `info` transaction's
/// process is considered crashed, and a `fail` never happened.
pub fn process_edges(h: &History) -> Vec<(TxnId, TxnId)> {
    let mut last: FxHashMap<i64, TxnId> = FxHashMap::default();
    let mut edges = Vec::new();
    for (i, t) in h.txns.iter().enumerate() {
        if t.outcome != Outcome::Ok {
            continue;
        }
        if let Some(prev) = last.insert(t.process, i as TxnId) {
            edges.push((prev, i as TxnId));
        }
    }
    edges
}

/// Real-time order as a transitive reduction: `a → b` when `a` committed
/// (`ok`) before `b` was invoked, and no committed `c` fits in between
/// (`a` completed before `c` was invoked, `c` completed before `b` was
/// invoked).
///
/// Built like Elle's `realtime-graph`: walk invocations and completions in
/// event order keeping a frontier of completed `ok` transactions; each
/// invocation links the whole frontier to its transaction, and each `ok`
/// completion evicts the frontier members that were linked to it (they now
/// reach later transactions through it). Frontier members overlap pairwise,
/// so the frontier never exceeds the concurrency and the edge count stays
/// near-linear.
///
/// Targets may be `ok` or `info` (an `info` transaction may have committed
/// after its invocation); `info` transactions never become sources because
/// they never completed. An invocation that never completed is an `info`
/// transaction too and still follows what completed before it (Elle gives
/// it no edge, since it links to completions). `fail` transactions and
/// transactions without an invocation get no edges.
pub fn realtime_edges(h: &History) -> Vec<(TxnId, TxnId)> {
    // Events as (seq, kind, txn); invocations sort before completions at the
    // same position, since real-time order needs strictly `complete < invoke`.
    const INVOKE: u8 = 0;
    const COMPLETE: u8 = 1;
    let mut events: Vec<(u64, u8, TxnId)> = Vec::with_capacity(h.txns.len() * 2);
    for (i, t) in h.txns.iter().enumerate() {
        let i = i as TxnId;
        if t.outcome == Outcome::Fail {
            continue;
        }
        if let Some(inv) = t.invoke_seq {
            if t.complete_seq.is_some() || t.outcome == Outcome::Info {
                events.push((inv, INVOKE, i));
            }
        }
        if let (Outcome::Ok, Some(c)) = (t.outcome, t.complete_seq) {
            events.push((c, COMPLETE, i));
        }
    }
    events.sort_unstable();

    let n = h.txns.len();
    const ABSENT: u32 = u32::MAX;
    let mut frontier: Vec<TxnId> = Vec::new();
    let mut pos: Vec<u32> = vec![ABSENT; n];
    // The edges each transaction received at its invocation.
    let mut preds: Vec<(u32, u32)> = vec![(0, 0); n];
    let mut edges: Vec<(TxnId, TxnId)> = Vec::new();
    for &(_, kind, t) in &events {
        if kind == INVOKE {
            let start = edges.len() as u32;
            edges.extend(frontier.iter().map(|&a| (a, t)));
            preds[t as usize] = (start, edges.len() as u32);
            continue;
        }
        let (s, e) = preds[t as usize];
        for k in s..e {
            let a = edges[k as usize].0;
            let p = pos[a as usize];
            if p != ABSENT {
                frontier.swap_remove(p as usize);
                if let Some(&moved) = frontier.get(p as usize) {
                    pos[moved as usize] = p;
                }
                pos[a as usize] = ABSENT;
            }
        }
        pos[t as usize] = frontier.len() as u32;
        frontier.push(t);
    }
    edges
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{GraphBuilder, Rels};
    use crate::history::Txn;
    use proptest::prelude::*;

    fn txn(outcome: Outcome, process: i64, inv: Option<u64>, comp: Option<u64>) -> Txn {
        Txn {
            outcome,
            process,
            index: comp.or(inv).unwrap_or(0) as i64,
            invoke_index: inv.map(|x| x as i64),
            invoke_time: None,
            complete_time: None,
            invoke_seq: inv,
            complete_seq: comp,
            mops_start: 0,
            mops_len: 0,
            line: 0,
            f: None,
        }
    }

    fn history(txns: Vec<Txn>) -> History {
        History {
            txns,
            has_invocations: true,
            ..History::default()
        }
    }

    #[test]
    fn process_order_links_consecutive_ok_transactions_only() {
        let h = history(vec![
            txn(Outcome::Ok, 0, Some(0), Some(1)),
            txn(Outcome::Ok, 1, Some(2), Some(3)),
            txn(Outcome::Fail, 0, Some(4), Some(5)),
            txn(Outcome::Ok, 0, Some(6), Some(7)),
            txn(Outcome::Info, 1, Some(8), Some(9)),
            txn(Outcome::Ok, 1, Some(10), Some(11)),
        ]);
        assert_eq!(process_edges(&h), vec![(0, 3), (1, 5)]);
    }

    #[test]
    fn realtime_links_only_the_frontier() {
        // Elle's example:   ==a==       ==c== ==e==
        //                         ==b==
        //                           ==d===
        // a=0: 0-1, b=1: 2-4, d=2: 3-6, c=3: 5-7, e=4: 8-9
        let h = history(vec![
            txn(Outcome::Ok, 0, Some(0), Some(1)),
            txn(Outcome::Ok, 1, Some(2), Some(4)),
            txn(Outcome::Ok, 2, Some(3), Some(6)),
            txn(Outcome::Ok, 1, Some(5), Some(7)),
            txn(Outcome::Ok, 1, Some(8), Some(9)),
        ]);
        let mut e = realtime_edges(&h);
        e.sort_unstable();
        assert_eq!(e, vec![(0, 1), (0, 2), (1, 3), (2, 4), (3, 4)]);
    }

    #[test]
    fn realtime_info_is_a_target_never_a_source_and_fail_is_neither() {
        let h = history(vec![
            txn(Outcome::Ok, 0, Some(0), Some(1)),
            txn(Outcome::Info, 1, Some(2), Some(3)),
            txn(Outcome::Fail, 2, Some(4), Some(5)),
            txn(Outcome::Ok, 3, Some(6), Some(7)),
            // Never completed: it still follows what completed before it
            // (Elle links nothing to it; isolde does, see realtime_edges).
            txn(Outcome::Info, 4, Some(8), None),
            // Completed without an invocation: a source, never a target.
            txn(Outcome::Ok, 5, None, Some(9)),
            txn(Outcome::Ok, 6, Some(10), Some(11)),
        ]);
        let mut e = realtime_edges(&h);
        e.sort_unstable();
        assert_eq!(e, vec![(0, 1), (0, 3), (3, 4), (3, 6), (5, 6)]);
    }

    #[test]
    fn realtime_needs_strict_precedence() {
        // Completion and invocation at the same position are concurrent.
        let h = history(vec![
            txn(Outcome::Ok, 0, Some(0), Some(5)),
            txn(Outcome::Ok, 1, Some(5), Some(6)),
        ]);
        assert!(realtime_edges(&h).is_empty());
    }

    /// Random small histories: intervals per process, random outcomes.
    fn arb_history() -> impl Strategy<Value = History> {
        prop::collection::vec((0u8..4, 1u64..6, 0u64..4, 0u8..3), 0..14).prop_map(|specs| {
            let mut clock = [0u64; 4];
            let mut txns = Vec::new();
            for (p, len, gap, o) in specs {
                let p = p as usize;
                let inv = clock[p] + gap;
                let comp = inv + len;
                clock[p] = comp + 1;
                let outcome = [Outcome::Ok, Outcome::Info, Outcome::Fail][o as usize];
                txns.push(txn(outcome, p as i64, Some(inv), Some(comp)));
            }
            // Elle's order: by completion position.
            txns.sort_by_key(|t| t.complete_seq);
            history(txns)
        })
    }

    fn naive(h: &History) -> Vec<(u32, u32)> {
        let mut e = Vec::new();
        for (i, a) in h.txns.iter().enumerate() {
            for (j, b) in h.txns.iter().enumerate() {
                if a.outcome == Outcome::Ok
                    && b.outcome != Outcome::Fail
                    && a.complete_seq.unwrap() < b.invoke_seq.unwrap()
                {
                    e.push((i as u32, j as u32));
                }
            }
        }
        e
    }

    fn closure(n: usize, edges: &[(u32, u32)]) -> Vec<Vec<bool>> {
        let mut r = vec![vec![false; n]; n];
        for &(a, b) in edges {
            r[a as usize][b as usize] = true;
        }
        for k in 0..n {
            let via = r[k].clone();
            for row in r.iter_mut().filter(|row| row[k]) {
                for (cell, &b) in row.iter_mut().zip(&via) {
                    *cell |= b;
                }
            }
        }
        r
    }

    proptest! {
        #[test]
        fn realtime_reduction_has_the_naive_reachability_and_no_redundant_edge(h in arb_history()) {
            let n = h.txns.len();
            let sparse = realtime_edges(&h);
            let full = naive(&h);
            prop_assert_eq!(closure(n, &sparse), closure(n, &full));
            // Transitive reduction: no edge is implied by a two-step path.
            let reach = closure(n, &sparse);
            for &(a, b) in &sparse {
                let (a, b) = (a as usize, b as usize);
                let via = (0..n).find(|&c| reach[a][c] && reach[c][b]);
                prop_assert!(via.is_none(), "edge {}->{} is implied via {:?}", a, b, via);
            }
            // And no duplicates: building merges nothing.
            let mut g = GraphBuilder::with_nodes(n);
            g.add_all(&sparse, Rels::REALTIME);
            prop_assert_eq!(g.build().edge_count(), sparse.len());
        }
    }
}
