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

/// Which places the solver still allows: `allowed(key, writer, position)`,
/// the position being the observed list's length for "after every read".
pub type Allowed<'a> = &'a dyn Fn(u32, u32, u32) -> bool;

/// A serial order of the transactions that commit (`ok` ones and the `info`
/// ones needed), or `None` if the replay got stuck.
pub fn replay_serial(
    h: &History,
    keys: &[KeyFacts],
    strict: bool,
    allowed: Option<Allowed>,
) -> Option<Vec<TxnId>> {
    let r = replay(h, keys, strict, allowed, 6);
    (r.abandoned.is_empty()).then_some(r.order)
}

/// What a replay did.
pub struct Replay {
    /// Transactions run, in order.
    pub order: Vec<TxnId>,
    /// `ok` transactions given up on to get unstuck (none: a full witness).
    pub abandoned: Vec<TxnId>,
    /// Where each block went: (key, writer, position); the position is the
    /// list's length for a block appended after every read of it.
    pub placed: Vec<(u32, u32, u32)>,
}

/// Replays as far as possible (see [`replay_once`]); when some transaction
/// had to be abandoned — usually because another writer of the same value
/// took its place — tries again with the abandoned ones first, up to
/// `rounds` times.
pub fn replay(
    h: &History,
    keys: &[KeyFacts],
    strict: bool,
    allowed: Option<Allowed>,
    rounds: usize,
) -> Replay {
    let mut boost = vec![false; h.txns.len()];
    let mut best = replay_once(h, keys, strict, allowed, &boost);
    for _ in 1..rounds {
        if best.abandoned.is_empty() {
            break;
        }
        for &t in &best.abandoned {
            boost[t as usize] = true;
        }
        let r = replay_once(h, keys, strict, allowed, &boost);
        if r.abandoned.len() < best.abandoned.len() {
            best = r;
        }
    }
    best
}

/// One replay: when stuck, gives up on the stuck `ok` transaction that
/// should have run first (releasing the prefixes it was reading) and goes
/// on, so that the result still places most blocks. `boost`ed transactions
/// run before others.
fn replay_once(
    h: &History,
    keys: &[KeyFacts],
    strict: bool,
    allowed: Option<Allowed>,
    boost: &[bool],
) -> Replay {
    let nt = h.txns.len();
    let mut need: Vec<Need> = (0..nt)
        .map(|_| Need {
            reads: Vec::new(),
            appends: Vec::new(),
        })
        .collect();
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
    let mut closed: Vec<bool> = keys
        .iter()
        .map(|k| k.list.is_empty() && k.readers.is_empty())
        .collect();
    let mut done = vec![false; nt];
    // Real time: ok transactions by completion; the earliest not yet run.
    let mut by_complete: Vec<TxnId> = (0..nt as TxnId)
        .filter(|&t| {
            h.txns[t as usize].outcome == Outcome::Ok && h.txns[t as usize].complete_seq.is_some()
        })
        .collect();
    by_complete.sort_by_key(|&t| h.txns[t as usize].complete_seq);
    let mut lo = 0usize;
    let mut by_invoke: Vec<TxnId> = (0..nt as TxnId)
        .filter(|&t| h.txns[t as usize].invoke_seq.is_some())
        .collect();
    by_invoke.sort_by_key(|&t| h.txns[t as usize].invoke_seq);
    let mut inv_ptr = 0usize;
    // The best guess of when a transaction took effect: the middle of its
    // interval (its completion when the invocation is unknown).
    let deadline = |t: TxnId| {
        let x = &h.txns[t as usize];
        let c = x.complete_seq.unwrap_or(u64::MAX / 4);
        (
            x.outcome != Outcome::Ok,
            !boost[t as usize],
            x.invoke_seq.unwrap_or(c).saturating_add(c),
            t,
        )
    };
    let mut heap: BinaryHeap<Reverse<(bool, bool, u64, TxnId)>> = (0..nt as TxnId)
        .filter(|&t| h.txns[t as usize].outcome != Outcome::Fail)
        .map(|t| Reverse(deadline(t)))
        .collect();
    let ok_total = h.txns.iter().filter(|t| t.outcome == Outcome::Ok).count();
    let mut ok_done = 0usize;
    let mut order = Vec::new();
    let mut placed: Vec<(u32, u32, u32)> = Vec::new();
    let mut abandoned: Vec<TxnId> = Vec::new();
    let mut by_priority: Vec<TxnId> = (0..nt as TxnId)
        .filter(|&t| h.txns[t as usize].outcome == Outcome::Ok)
        .collect();
    by_priority.sort_by_key(|&t| deadline(t));
    let mut give_up_ptr = 0usize;
    let realtime_ok = |t: TxnId, lo: usize| -> bool {
        if !strict {
            return true;
        }
        let x = &h.txns[t as usize];
        match (x.invoke_seq, x.complete_seq, by_complete.get(lo)) {
            (Some(inv), Some(_), Some(&first)) => {
                h.txns[first as usize].complete_seq.is_none_or(|c| c >= inv)
            }
            _ => true,
        }
    };
    loop {
        let (t, give_up) = match heap.pop() {
            Some(Reverse((_, _, _, t))) => (t, false),
            None => {
                // Stuck: give up on the first ok transaction still waiting.
                while give_up_ptr < by_priority.len() && done[by_priority[give_up_ptr] as usize] {
                    give_up_ptr += 1;
                }
                match by_priority.get(give_up_ptr) {
                    Some(&t) => (t, true),
                    None => break,
                }
            }
        };
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
                        && keys[k].list[p as usize..].starts_with(block)))
                && allowed.is_none_or(|f| f(k as u32, w, p));
        }
        if !can && !give_up {
            continue; // woken again when one of its keys moves
        }
        done[t as usize] = true;
        if h.txns[t as usize].outcome == Outcome::Ok {
            ok_done += 1;
        }
        if give_up {
            abandoned.push(t);
        } else {
            order.push(t);
        }
        let mut woken: Vec<TxnId> = Vec::new();
        for &(k, c) in &need[t as usize].reads {
            let e = left[k as usize].entry(c).or_default();
            *e -= 1;
            if *e == 1 && pos[k as usize] == c {
                // The last reader may be the one that appends right here.
                woken.extend(readers_at[k as usize].get(&c).into_iter().flatten());
            }
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
            if give_up {
                break;
            }
            let k = k as usize;
            let n = keys[k].list.len() as u32;
            placed.push((k as u32, w, if closed[k] { n } else { pos[k] }));
            if closed[k] {
                continue;
            }
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
            let bound = by_complete
                .get(lo)
                .and_then(|&f| h.txns[f as usize].complete_seq)
                .unwrap_or(u64::MAX);
            while inv_ptr < by_invoke.len()
                && h.txns[by_invoke[inv_ptr] as usize]
                    .invoke_seq
                    .is_some_and(|i| i <= bound)
            {
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
            break;
        }
    }
    Replay {
        order,
        abandoned,
        placed,
    }
}
