//! The fast path for snapshot isolation: commit the `ok` transactions in
//! about the order they completed (a database commits before it answers),
//! and give each one the latest snapshot its reads and first-committer-wins
//! allow. With the commit order fixed the state of every key after every
//! commit is fixed too, so each transaction's possible snapshots are an
//! interval found by binary search: no choice, no search.
//!
//! Completion order is not quite commit order: two transactions that
//! overlap may be acknowledged in the opposite order of their commits
//! (PostgreSQL does this to about one in two hundred consecutive appends).
//! So the next commit is the first transaction in completion order whose
//! appends continue the observed lists and whose reads are already in
//! place. When none is, a transaction appending a value took the place of
//! another appending the same value: the replay learns which should go
//! first and starts over (see [`place`]).
//!
//! Latest snapshots in that order still fail when two overlapping commits
//! were acknowledged in the wrong order and a reader saw one but not the
//! other. Then the places found stay, and the commit order is rebuilt from
//! what SI demands of them: each transaction's snapshot comes after the
//! commits it saw and the commit of the previous writer of every key it
//! appends to (first committer wins), and before the commit of the first
//! writer it did not see; blocks commit in list order. Any topological
//! order of these events (ties broken by real time) is a witness.
//!
//! Histories from snapshot-isolated databases usually pass; when one does
//! not this proves nothing and the solver decides. The result is replayed
//! by [`super::witness::check_si`] before it is trusted.

use super::problem::{KeyFacts, TxnOps};
use super::replay::Replay;
use crate::history::{History, Outcome, TxnId};
use rustc_hash::FxHashMap;

/// Commit order and snapshot points (how many commits each transaction's
/// snapshot includes), or `None` when the replay gets stuck. `info`
/// transactions are taken as aborted.
pub fn replay_si(h: &History, keys: &[KeyFacts]) -> Option<(Vec<TxnId>, Vec<u32>)> {
    let ops = TxnOps::new(h.txns.len(), keys);
    // Completion order as it is first: it may leave blocks out of list
    // order where no later read minds, which [`place`] never does.
    let mut by_completion: Vec<TxnId> = (0..h.txns.len() as TxnId)
        .filter(|&t| h.txns[t as usize].outcome == Outcome::Ok)
        .collect();
    by_completion.sort_by_key(|&t| (h.txns[t as usize].complete_seq.unwrap_or(u64::MAX), t));
    if let Some(r) = latest_snapshots(keys, &ops, &by_completion) {
        return Some(r);
    }
    let order = place(h, keys, &ops).order;
    latest_snapshots(keys, &ops, &order).or_else(|| from_events(h, keys, &ops, &order))
}

/// Where the replay put each block, as a [`Replay`] (a commit order, not a
/// serial one): the exact solver starts from it for snapshot isolation.
/// Blocks that did not continue an observed list are left out.
pub fn si_placement(h: &History, keys: &[KeyFacts]) -> Replay {
    place(h, keys, &TxnOps::new(h.txns.len(), keys))
}

/// How many times [`place`] starts over with one more precedence learnt
/// from getting stuck, and how many times in a row it may do so without
/// getting further. Without real time to guide it (no invocations) the
/// places it finds taken are mostly guesses, and it does not start over.
const MAX_REPAIRS: usize = 64;
const MAX_STALE: usize = 4;

/// How far past the first open transaction, in completion order, the
/// replay looks for the next commit (it is almost always among the next
/// few; the bound keeps a history that is far from SI linear).
const WINDOW: usize = 1024;

/// How many of a key's last places [`State::stolen_place`] looks back at.
const LOOK_BACK: usize = 64;

/// The commit order: each time the first `ok` transaction in completion
/// order (among the next [`WINDOW`]) whose appends continue the observed
/// lists and whose reads are in place.
///
/// When none is, the usual cause is two transactions appending the same
/// value to a key: the earlier to complete took the place of the other,
/// which committed first in truth and now waits, through other keys, on
/// transactions that wait on it. Then the replay starts over with that
/// transaction committing before the one that took its place, up to
/// [`MAX_REPAIRS`] times; after that, or when no such place is found, the
/// first transaction commits regardless (it is `abandoned` in the result,
/// though it stays in the order).
fn place(h: &History, keys: &[KeyFacts], ops: &TxnOps) -> Replay {
    let mut first: FxHashMap<TxnId, Vec<TxnId>> = FxHashMap::default();
    // The furthest a replay got, and how many repairs since did not help.
    let (mut best, mut stale) = (0, 0);
    let repairs = if h.has_invocations { MAX_REPAIRS } else { 0 };
    for _ in 0..repairs {
        match place_once(h, keys, ops, &first, true) {
            Ok(r) => return r,
            Err((step, Some((x, w)))) if !first.get(&w).is_some_and(|v| v.contains(&x)) => {
                if step > best {
                    (best, stale) = (step, 0);
                } else {
                    stale += 1;
                    if stale == MAX_STALE {
                        break;
                    }
                }
                first.entry(w).or_default().push(x)
            }
            Err(_) => break,
        }
    }
    // Without `stop` it always returns a replay.
    place_once(h, keys, ops, &first, false).unwrap_or_default()
}

/// One replay. `first[w]`: transactions that must commit before `w`. With
/// `stop`, the first time nothing fits it returns how many committed and a
/// transaction and the one that took its place, if it finds them; without,
/// it commits the first transaction regardless.
#[allow(clippy::type_complexity)]
fn place_once(
    h: &History,
    keys: &[KeyFacts],
    ops: &TxnOps,
    first: &FxHashMap<TxnId, Vec<TxnId>>,
    stop: bool,
) -> Result<Replay, (usize, Option<(TxnId, TxnId)>)> {
    let nt = h.txns.len();
    let mut queue: Vec<TxnId> = (0..nt as TxnId)
        .filter(|&t| h.txns[t as usize].outcome == Outcome::Ok)
        .collect();
    queue.sort_by_key(|&t| (h.txns[t as usize].complete_seq.unwrap_or(u64::MAX), t));
    // Real time: a transaction commits after every one that completed
    // before it was invoked (`need[t]` of them, a prefix of the queue).
    let mut need = vec![0u32; nt];
    for &t in &queue {
        if let Some(i) = h.txns[t as usize].invoke_seq {
            need[t as usize] = queue
                .partition_point(|&q| h.txns[q as usize].complete_seq.is_some_and(|c| c < i))
                as u32;
        }
    }
    let mut st = State {
        done: vec![false; nt],
        need,
        head: 0,
        len: vec![0; keys.len()],
        agree: vec![0; keys.len()],
        slots: vec![Vec::new(); keys.len()],
    };
    let mut out = Replay::for_keys(keys);
    for _ in 0..queue.len() {
        while st.done[queue[st.head] as usize] {
            st.head += 1;
        }
        let t = queue[st.head..]
            .iter()
            .copied()
            .filter(|&t| !st.done[t as usize])
            .take(WINDOW)
            .find(|&t| st.fits(keys, ops, first, t));
        let t = match t {
            Some(t) => t,
            None if stop => {
                let fix = st.stolen_place(h, keys, ops, first, queue[st.head]);
                return Err((out.order.len(), fix));
            }
            None => {
                out.abandoned.push(queue[st.head]);
                queue[st.head]
            }
        };
        st.done[t as usize] = true;
        out.order.push(t);
        for &(k, w) in &ops.appends[t as usize] {
            let ku = k as usize;
            let kf = &keys[ku];
            let block = &kf.writers[w as usize].block;
            let p = st.len[ku];
            let n = kf.list.len() as u32;
            if st.agree[ku] == p && p >= n {
                out.placed.push((k, w, n));
            } else if st.agree[ku] == p && kf.list[p as usize..].starts_with(block) {
                out.placed.push((k, w, p));
                st.agree[ku] += block.len() as u32;
                out.reached[ku][st.agree[ku] as usize] = out.order.len() as u32;
            }
            st.slots[ku].push((t, w));
            st.len[ku] += block.len() as u32;
        }
    }
    Ok(out)
}

/// A key, a position in its list, and the block (key, writer) waiting
/// there, or none for a read: what a transaction waits for.
type Want = (u32, u32, Option<(u32, u32)>);

/// Where [`place_once`] is.
struct State {
    done: Vec<bool>,
    /// How much of the queue must be done before each transaction commits.
    need: Vec<u32>,
    /// The queue's first open transaction.
    head: usize,
    /// Per key: its length, and how long it agrees with the observed list.
    len: Vec<u32>,
    agree: Vec<u32>,
    /// Per key: the blocks appended so far (transaction, writer), in order.
    slots: Vec<Vec<(TxnId, u32)>>,
}

impl State {
    /// Whether `t` can commit next: what completed before it was invoked
    /// has committed, its reads are in place, its appends continue the
    /// observed lists, and what must commit before it has.
    fn fits(
        &self,
        keys: &[KeyFacts],
        ops: &TxnOps,
        first: &FxHashMap<TxnId, Vec<TxnId>>,
        t: TxnId,
    ) -> bool {
        let tu = t as usize;
        self.need[tu] as usize <= self.head
            && ops.reads[tu]
                .iter()
                .all(|&(k, c)| c <= self.agree[k as usize])
            && ops.appends[tu]
                .iter()
                .all(|&(k, w)| self.waits_at(keys, k, w).is_none())
            && first
                .get(&t)
                .is_none_or(|xs| xs.iter().all(|&x| self.done[x as usize]))
    }

    /// The position of key `k` where writer `w`'s block does not continue
    /// the observed list, if it does not.
    fn waits_at(&self, keys: &[KeyFacts], k: u32, w: u32) -> Option<u32> {
        let (ku, p) = (k as usize, self.len[k as usize]);
        let list = &keys[ku].list;
        let fits = self.agree[ku] < p
            || p as usize >= list.len()
            || list[p as usize..].starts_with(&keys[ku].writers[w as usize].block);
        (!fits).then_some(p)
    }

    /// Stuck at `from`: some transaction should have committed before
    /// one that took its place. Follows what each transaction waits for
    /// (the writers that could continue a list it appends to or reads),
    /// looking for, in this order: a waiting block that fits nowhere left
    /// in its key's list, so its place was taken; a place that no open
    /// block continues, so it was taken by one that fits there less well;
    /// a cycle of waits, where one of the blocks equals one already placed
    /// on that key (the latest such), whose place it should have had.
    /// Returns the transaction and the one that took its place.
    fn stolen_place(
        &self,
        h: &History,
        keys: &[KeyFacts],
        ops: &TxnOps,
        first: &FxHashMap<TxnId, Vec<TxnId>>,
        from: TxnId,
    ) -> Option<(TxnId, TxnId)> {
        const MAX_VISITS: usize = 4096;
        let (mut lost, mut displaced) = (None, None);
        // Edges out of t: (key and writer of t's block, or none for a read
        // or a learnt precedence; the transaction waited on).
        let mut edges = |t: TxnId| -> Vec<(Option<(u32, u32)>, TxnId)> {
            let mut out = Vec::new();
            for (k, p, via) in self.wants(keys, ops, t) {
                let kf = &keys[k as usize];
                if let (None, Some((_, w))) = (lost, via) {
                    let block = &kf.writers[w as usize].block;
                    let p = p as usize;
                    if !(p..kf.list.len()).any(|q| kf.list[q..].starts_with(block)) {
                        lost = self
                            .taken(h, keys, k, t, |q, _| kf.list[q..].starts_with(block))
                            .map(|t2| (t, t2));
                    }
                }
                let before = out.len();
                for x in &kf.writers {
                    if !self.done[x.txn as usize]
                        && x.txn != t
                        && kf.list[p as usize..].starts_with(&x.block)
                        && may_precede(h, x.txn, t)
                    {
                        out.push((via, x.txn));
                    }
                }
                if out.len() == before && displaced.is_none() {
                    displaced = self.displaced(h, keys, k);
                }
            }
            if let Some(xs) = first.get(&t) {
                out.extend(
                    xs.iter()
                        .filter(|&&x| !self.done[x as usize])
                        .map(|&x| (None, x)),
                );
            }
            out
        };
        let mut cycle = None;
        // Depth-first, iteratively: per step, the transaction, its edges
        // not yet followed, and the label of the edge that led to it.
        type Step = (TxnId, Vec<(Option<(u32, u32)>, TxnId)>, Option<(u32, u32)>);
        let mut on_path: FxHashMap<TxnId, usize> = FxHashMap::default();
        let mut seen: FxHashMap<TxnId, ()> = FxHashMap::default();
        let mut path: Vec<Step> = vec![(from, edges(from), None)];
        on_path.insert(from, 0);
        seen.insert(from, ());
        while let Some((_, left, _)) = path.last_mut() {
            let Some((via, y)) = left.pop() else {
                let (t, _, _) = path.pop().expect("not empty");
                on_path.remove(&t);
                continue;
            };
            if let Some(&i) = on_path.get(&y) {
                // The cycle path[i..] → y; each edge labelled with the
                // block of the transaction that waits.
                let labels = path[i + 1..].iter().map(|s| s.2).chain([via]);
                for ((x, _, _), v) in path[i..].iter().zip(labels) {
                    let Some((k, w)) = v else { continue };
                    if cycle.is_some() {
                        break;
                    }
                    let block = &keys[k as usize].writers[w as usize].block;
                    cycle = self
                        .taken(h, keys, k, *x, |_, b| b == block)
                        .map(|t2| (*x, t2));
                }
                continue;
            }
            if seen.len() >= MAX_VISITS || seen.insert(y, ()).is_some() {
                continue;
            }
            on_path.insert(y, path.len());
            let e = edges(y);
            path.push((y, e, via));
        }
        lost.or(displaced).or(cycle)
    }

    /// What `t` waits for: (key, position, its block there for an append
    /// or none for a read) where the key's list must go on first.
    fn wants(&self, keys: &[KeyFacts], ops: &TxnOps, t: TxnId) -> Vec<Want> {
        let tu = t as usize;
        let mut out = Vec::new();
        for &(k, c) in &ops.reads[tu] {
            let a = self.agree[k as usize];
            if c > a && a == self.len[k as usize] {
                out.push((k, a, None));
            }
        }
        for &(k, w) in &ops.appends[tu] {
            if let Some(p) = self.waits_at(keys, k, w) {
                out.push((k, p, Some((k, w))));
            }
        }
        out
    }

    /// Key `k` stopped where no open block continues it: the latest of its
    /// last places where an open block fits instead, with that block's
    /// transaction and the one that took the place.
    fn displaced(&self, h: &History, keys: &[KeyFacts], k: u32) -> Option<(TxnId, TxnId)> {
        let kf = &keys[k as usize];
        let mut q = self.len[k as usize] as usize;
        for &(t2, w2) in self.slots[k as usize].iter().rev().take(LOOK_BACK) {
            let b2 = &kf.writers[w2 as usize].block;
            q -= b2.len();
            let open = kf.writers.iter().find(|x| {
                !self.done[x.txn as usize]
                    && &x.block != b2
                    && kf.list[q..].starts_with(&x.block)
                    && may_precede(h, x.txn, t2)
            });
            if let Some(x) = open {
                return Some((x.txn, t2));
            }
        }
        None
    }

    /// The transaction in the latest of key `k`'s last places that `fits`
    /// (given the position and the block placed there) and that `x` may
    /// have committed before.
    fn taken(
        &self,
        h: &History,
        keys: &[KeyFacts],
        k: u32,
        x: TxnId,
        fits: impl Fn(usize, &[u32]) -> bool,
    ) -> Option<TxnId> {
        let kf = &keys[k as usize];
        let mut q = self.len[k as usize] as usize;
        for &(t2, w2) in self.slots[k as usize].iter().rev().take(LOOK_BACK) {
            let b2 = &kf.writers[w2 as usize].block;
            q -= b2.len();
            if fits(q, b2) && may_precede(h, x, t2) {
                return Some(t2);
            }
        }
        None
    }
}

/// Commits in `order`, each transaction with the latest snapshot its reads
/// and first-committer-wins allow: with the order fixed, each key's state
/// after every commit is fixed, so the snapshots that fit are an interval.
fn latest_snapshots(
    keys: &[KeyFacts],
    ops: &TxnOps,
    order: &[TxnId],
) -> Option<(Vec<TxnId>, Vec<u32>)> {
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
        for &(k, c) in &ops.reads[t as usize] {
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
        for &(k, _) in &ops.appends[t as usize] {
            if let Some(&(j, _)) = lens[k as usize].last() {
                lo = lo.max(j + 1);
            }
        }
        if lo > hi {
            return None;
        }
        snaps.push(hi);
        for &(k, w) in &ops.appends[t as usize] {
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
    Some((order.to_vec(), snaps))
}

/// The blocks stay where `order` put them; the commits and snapshots are
/// ordered by what snapshot isolation demands of those places (see the
/// module doc), ties broken by real time (a snapshot at its invocation, a
/// commit at its completion). `None` if the demands form a cycle or a read
/// does not end at a block boundary.
fn from_events(
    h: &History,
    keys: &[KeyFacts],
    ops: &TxnOps,
    order: &[TxnId],
) -> Option<(Vec<TxnId>, Vec<u32>)> {
    let nt = h.txns.len();
    // Events: 2t = t's snapshot, 2t + 1 = t's commit.
    let (snap, commit) = (|t: TxnId| 2 * t, |t: TxnId| 2 * t + 1);
    // Per key, its writers in list order with the length after each.
    let mut chain: Vec<Vec<(TxnId, u32)>> = vec![Vec::new(); keys.len()];
    for &t in order {
        for &(k, w) in &ops.appends[t as usize] {
            let c = &mut chain[k as usize];
            let end = c.last().map_or(0, |&(_, l)| l);
            c.push((
                t,
                end + keys[k as usize].writers[w as usize].block.len() as u32,
            ));
        }
    }
    let mut edges: Vec<(u32, u32)> = Vec::new();
    for c in &chain {
        for w in c.windows(2) {
            edges.push((commit(w[0].0), commit(w[1].0)));
        }
    }
    for &t in order {
        edges.push((snap(t), commit(t)));
        for &(k, cut) in &ops.reads[t as usize] {
            let c = &chain[k as usize];
            // Writers [0, e) are seen; writer e (if any) is not.
            let e = c.partition_point(|&(_, l)| l <= cut);
            if cut > 0 && (e == 0 || c[e - 1].1 != cut) {
                return None;
            }
            if e > 0 {
                edges.push((commit(c[e - 1].0), snap(t)));
            }
            if let Some(&(w, _)) = c.get(e) {
                if w != t {
                    edges.push((snap(t), commit(w)));
                }
            }
        }
        for &(k, _) in &ops.appends[t as usize] {
            let c = &chain[k as usize];
            let i = c.iter().position(|&(w, _)| w == t)?;
            if i > 0 {
                edges.push((commit(c[i - 1].0), snap(t)));
            }
        }
    }
    let time = |e: u32| {
        let x = &h.txns[(e / 2) as usize];
        let c = x.complete_seq.unwrap_or(u64::MAX / 4);
        if e.is_multiple_of(2) {
            2 * x.invoke_seq.unwrap_or(c)
        } else {
            2 * c + 1
        }
    };
    let events = super::dag::priority_order(2 * nt, &edges, time)?;
    // Events of transactions outside `order` have no edges: skipped.
    let mut inside = vec![false; nt];
    for &t in order {
        inside[t as usize] = true;
    }
    let mut commits = Vec::with_capacity(order.len());
    let mut start_at = vec![0u32; nt];
    for e in events {
        let t = e / 2;
        if !inside[t as usize] {
            continue;
        }
        if e.is_multiple_of(2) {
            start_at[t as usize] = commits.len() as u32;
        } else {
            commits.push(t);
        }
    }
    let snaps = commits.iter().map(|&t| start_at[t as usize]).collect();
    Some((commits, snaps))
}

/// Whether `x` may have committed before `y`: it was invoked before `y`
/// completed (or real time does not say).
fn may_precede(h: &History, x: TxnId, y: TxnId) -> bool {
    match (
        h.txns[x as usize].invoke_seq,
        h.txns[y as usize].complete_seq,
    ) {
        (Some(i), Some(c)) => i < c,
        _ => true,
    }
}
