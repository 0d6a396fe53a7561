//! The fast path for valid histories: rebuild a serial execution by running
//! transactions one at a time, earliest deadline (completion) first, each
//! as soon as it can run: every read it made matches the current state of
//! its key, and every block it appended matches the next positions of the
//! observed list (or lands after it, once all reads of the full list ran).
//! Histories from real databases follow real time closely, so this usually
//! finds an order without any search; the order is then replayed by
//! [`super::witness`]. When it gets stuck it proves nothing: the solver
//! decides.

use super::problem::KeyFacts;
use crate::history::{History, Outcome, TxnId};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

struct Need {
    /// (key, cut) for each read; (key, writer) for each block.
    reads: Vec<(u32, u32)>,
    appends: Vec<(u32, u32)>,
}

/// A serial order of the transactions that commit (`ok` ones and the `info`
/// ones needed), or `None` if the replay got stuck.
pub fn replay_serial(h: &History, keys: &[KeyFacts], strict: bool) -> Option<Vec<TxnId>> {
    let nt = h.txns.len();
    let mut need: Vec<Need> = (0..nt).map(|_| Need { reads: Vec::new(), appends: Vec::new() }).collect();
    // Per key: readers left at each cut; readers by cut; writers by first value.
    let mut left: Vec<FxHashMap<u32, u32>> = Vec::with_capacity(keys.len());
    let mut readers_at: Vec<FxHashMap<u32, Vec<TxnId>>> = Vec::with_capacity(keys.len());
    let mut writers_by: Vec<FxHashMap<u32, Vec<TxnId>>> = Vec::with_capacity(keys.len());
    let mut next_cut: Vec<Vec<u32>> = Vec::with_capacity(keys.len());
    for (ki, kf) in keys.iter().enumerate() {
        let mut l: FxHashMap<u32, u32> = FxHashMap::default();
        let mut ra: FxHashMap<u32, Vec<TxnId>> = FxHashMap::default();
        for r in &kf.readers {
            *l.entry(r.cut).or_default() += 1;
            ra.entry(r.cut).or_default().push(r.txn);
            need[r.txn as usize].reads.push((ki as u32, r.cut));
        }
        let mut wb: FxHashMap<u32, Vec<TxnId>> = FxHashMap::default();
        for (wi, w) in kf.writers.iter().enumerate() {
            wb.entry(w.block[0]).or_default().push(w.txn);
            need[w.txn as usize].appends.push((ki as u32, wi as u32));
        }
        // next_cut[p]: the first cut strictly after p.
        let n = kf.list.len();
        let mut nc = vec![u32::MAX; n + 1];
        let mut cut = u32::MAX;
        for p in (0..=n).rev() {
            nc[p] = cut;
            if l.contains_key(&(p as u32)) || p == n {
                cut = p as u32;
            }
        }
        left.push(l);
        readers_at.push(ra);
        writers_by.push(wb);
        next_cut.push(nc);
    }
    let mut pos: Vec<u32> = vec![0; keys.len()];
    let mut closed: Vec<bool> = keys.iter().map(|k| k.list.is_empty() && k.readers.is_empty()).collect();
    let mut done = vec![false; nt];
    // Real time: ok transactions by completion; the earliest not yet run.
    let mut by_complete: Vec<TxnId> = (0..nt as TxnId)
        .filter(|&t| h.txns[t as usize].outcome == Outcome::Ok && h.txns[t as usize].complete_seq.is_some())
        .collect();
    by_complete.sort_by_key(|&t| h.txns[t as usize].complete_seq);
    let mut lo = 0usize;
    let mut by_invoke: Vec<TxnId> = (0..nt as TxnId).filter(|&t| h.txns[t as usize].invoke_seq.is_some()).collect();
    by_invoke.sort_by_key(|&t| h.txns[t as usize].invoke_seq);
    let mut inv_ptr = 0usize;
    let deadline = |t: TxnId| {
        let x = &h.txns[t as usize];
        (x.outcome != Outcome::Ok, x.complete_seq.unwrap_or(u64::MAX), t)
    };
    let mut heap: BinaryHeap<Reverse<(bool, u64, TxnId)>> = (0..nt as TxnId)
        .filter(|&t| h.txns[t as usize].outcome != Outcome::Fail)
        .map(|t| Reverse(deadline(t)))
        .collect();
    let ok_total = h.txns.iter().filter(|t| t.outcome == Outcome::Ok).count();
    let mut ok_done = 0usize;
    let mut order = Vec::new();
    let realtime_ok = |t: TxnId, lo: usize| -> bool {
        if !strict {
            return true;
        }
        let x = &h.txns[t as usize];
        match (x.invoke_seq, x.complete_seq, by_complete.get(lo)) {
            (Some(inv), Some(_), Some(&first)) => h.txns[first as usize].complete_seq.is_none_or(|c| c >= inv),
            _ => true,
        }
    };
    while let Some(Reverse((_, _, t))) = heap.pop() {
        if done[t as usize] {
            continue;
        }
        // Can t run now?
        let nd = &need[t as usize];
        let mut can = realtime_ok(t, lo);
        for &(k, c) in &nd.reads {
            if !can {
                break;
            }
            can = !closed[k as usize] && pos[k as usize] == c;
        }
        for &(k, w) in &nd.appends {
            if !can {
                break;
            }
            let k = k as usize;
            if closed[k] {
                continue;
            }
            let p = pos[k];
            let own_read = nd.reads.iter().any(|&(k2, c)| k2 as usize == k && c == p);
            let waiting = left[k].get(&p).copied().unwrap_or(0) - own_read as u32;
            let block = &keys[k].writers[w as usize].block;
            let n = keys[k].list.len() as u32;
            can = waiting == 0
                && (p == n
                    || (p + block.len() as u32 <= next_cut[k][p as usize]
                        && keys[k].list[p as usize..].starts_with(block)));
        }
        if !can {
            continue; // woken again when one of its keys moves
        }
        done[t as usize] = true;
        order.push(t);
        if h.txns[t as usize].outcome == Outcome::Ok {
            ok_done += 1;
        }
        let mut woken: Vec<TxnId> = Vec::new();
        for &(k, c) in &need[t as usize].reads {
            let e = left[k as usize].entry(c).or_default();
            *e -= 1;
            if *e == 0 && pos[k as usize] == c {
                // Writers waiting for the readers of this prefix.
                if let Some(&v) = keys[k as usize].list.get(c as usize) {
                    woken.extend(writers_by[k as usize].get(&v).into_iter().flatten());
                } else {
                    woken.extend(keys[k as usize].writers.iter().map(|w| w.txn));
                }
            }
        }
        for &(k, w) in &need[t as usize].appends {
            let k = k as usize;
            if closed[k] {
                continue;
            }
            let n = keys[k].list.len() as u32;
            if pos[k] == n {
                closed[k] = true;
                woken.extend(keys[k].writers.iter().map(|w| w.txn));
                continue;
            }
            pos[k] += keys[k].writers[w as usize].block.len() as u32;
            let p = pos[k];
            woken.extend(readers_at[k].get(&p).into_iter().flatten());
            match keys[k].list.get(p as usize) {
                Some(&v) => woken.extend(writers_by[k].get(&v).into_iter().flatten()),
                None => woken.extend(keys[k].writers.iter().map(|w| w.txn)),
            }
        }
        if strict {
            while lo < by_complete.len() && done[by_complete[lo] as usize] {
                lo += 1;
            }
            let bound = by_complete.get(lo).and_then(|&f| h.txns[f as usize].complete_seq).unwrap_or(u64::MAX);
            while inv_ptr < by_invoke.len() && h.txns[by_invoke[inv_ptr] as usize].invoke_seq.is_some_and(|i| i <= bound) {
                woken.push(by_invoke[inv_ptr]);
                inv_ptr += 1;
            }
        }
        for w in woken {
            if !done[w as usize] && h.txns[w as usize].outcome != Outcome::Fail {
                heap.push(Reverse(deadline(w)));
            }
        }
        if ok_done == ok_total {
            return Some(order);
        }
    }
    (ok_done == ok_total).then_some(order)
}
