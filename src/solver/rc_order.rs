//! A read-committed commit order found by replay with backtracking.
//!
//! Under read committed a read need not come from one snapshot: a read of
//! `c` elements of a key only needs those `c` to be whole committed blocks
//! when its transaction commits (the witness asks no more, see
//! [`super::witness::check_read_committed`]). So the replay commits `ok`
//! transactions one at a time, each when its appends continue the observed
//! lists and each of its reads ends at a block boundary already reached,
//! choosing the earliest to complete among those that can (a database
//! commits before it answers), and never before a transaction that
//! completed before it was invoked (real time, which every database keeps).
//!
//! With values repeating, a transaction appending a value can take the
//! place of another appending the same value, which committed first in
//! truth and now waits, through other keys, on transactions that wait on
//! it. The snapshot replay's repairs ([`super::snapshot`]) guess who took
//! whose place; here the replay backtracks instead, depth first:
//! - only transactions competing for a place are choices; one whose places
//!   no other open transaction could fill commits without branching;
//! - a commit is a dead end at once when a key's next place is left with
//!   no open block to fill it that was invoked before the first reader
//!   past that place completed (that reader saw the filler committed);
//! - a block never straddles the end of a read of its key;
//! - a dead end is blamed on the keys the stuck transactions wait on, and
//!   the search jumps back to the last choice that touched one of them
//!   (conflict-directed backjumping), remembering the sets of committed
//!   transactions found dead. A conflict no choice touched ends it.
//!
//! The mistake is usually a few choices back, among the few transactions
//! running at once, so little is explored; a budget bounds it all the same.
//! The set alone is remembered, though the block boundaries reached also
//! depend on the order, and the blame is a heuristic: both cost
//! completeness only. The order is replayed by the caller before it is
//! trusted; failing here proves nothing.

use super::problem::{KeyFacts, TxnOps};
use crate::history::{History, Outcome, TxnId, ValId};
use rustc_hash::FxHashMap;
use std::time::Instant;

/// How many open transactions past the first one, in completion order, may
/// commit next (the next commit is almost always among the first few).
const WINDOW: usize = 1024;

/// Commits plus undos allowed per `ok` transaction, and how often (in
/// steps) the clock is read.
const STEPS_PER_TXN: usize = 20;
const CLOCK_EVERY: usize = 1024;

/// A commit order of the `ok` transactions under which every read sees
/// whole committed blocks that continue the observed lists, or `None` when
/// the search runs out of its budget (or `deadline`) or of choices. `info`
/// transactions are left out (taken as aborted).
pub fn rc_order(h: &History, keys: &[KeyFacts], deadline: Instant) -> Option<Vec<TxnId>> {
    let mut st = State::new(h, keys);
    let n = st.queue.len();
    // Sets of committed transactions known to lead nowhere, with the keys
    // their dead ends were blamed on.
    let mut dead: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
    let mut frames: Vec<Frame> = Vec::new();
    let budget = STEPS_PER_TXN * n + 10_000;
    let (mut steps, mut clock_at) = (0usize, 0usize);
    loop {
        let base = st.order.len();
        let free = st.free_commits(&mut steps);
        if st.order.len() == n {
            return Some(st.order);
        }
        let (cands, conflict) = match free {
            Ok(()) => match st.candidates() {
                c if c.is_empty() => (c, st.blocking_keys()),
                c => (c, Vec::new()),
            },
            Err(k) => (Vec::new(), vec![k]),
        };
        frames.push(Frame {
            base,
            top: st.order.len(),
            cands,
            next: 0,
            conflict,
        });
        // Commit the next candidate not known to lead nowhere. When a
        // depth has none left, its states are dead, and so are those back
        // to the last depth whose commits touched a key of the conflict:
        // the search jumps back there (conflict-directed backjumping).
        loop {
            steps += 1;
            if steps > budget {
                return None;
            }
            if steps >= clock_at {
                if Instant::now() >= deadline {
                    return None;
                }
                clock_at = steps + CLOCK_EVERY;
            }
            let f = frames.last_mut()?;
            st.undo_to(f.top);
            // Skipping a dead candidate takes on the blame of its dead end.
            let mut pick = None;
            while let Some(&t) = f.cands.get(f.next) {
                match dead.get(&(st.hash ^ st.zobrist[t as usize])) {
                    Some(keys) => {
                        merge(&mut f.conflict, keys);
                        f.next += 1;
                    }
                    None => {
                        pick = Some(t);
                        break;
                    }
                }
            }
            let Some(t) = pick else {
                let conflict = std::mem::take(&mut f.conflict);
                // The deepest earlier depth whose commits touched the
                // conflict; none: no choice made could have avoided it.
                let target = (0..frames.len() - 1)
                    .rev()
                    .find(|&g| st.touches(&frames[g], &conflict))?;
                while frames.len() > target + 1 {
                    let f = frames.pop().expect("above the target");
                    st.undo_to(f.top);
                    dead.insert(st.hash, conflict.clone());
                    st.undo_to(f.base);
                    dead.insert(st.hash, conflict.clone());
                    steps += f.top - f.base;
                }
                let g = frames.last_mut()?;
                merge(&mut g.conflict, &conflict);
                continue;
            };
            f.next += 1;
            match st.commit(t) {
                Ok(()) => break,
                Err(k) => {
                    merge(&mut f.conflict, &[k]);
                    dead.insert(st.hash, vec![k]);
                }
            }
        }
    }
}

/// Adds `keys` to `conflict`.
fn merge(conflict: &mut Vec<u32>, keys: &[u32]) {
    for &k in keys {
        if !conflict.contains(&k) {
            conflict.push(k);
        }
    }
}

/// One depth of the search: where it started, where its free commits
/// ended, the competing transactions that could commit there and the next
/// to try, and the keys its dead ends were blamed on.
struct Frame {
    base: usize,
    top: usize,
    cands: Vec<TxnId>,
    next: usize,
    conflict: Vec<u32>,
}

/// The replay's state: what has committed, and each key's list so far.
struct State<'a> {
    keys: &'a [KeyFacts],
    /// Per transaction: its external reads (key, length) and appends (key,
    /// writer), by key index.
    reads: Vec<Vec<(u32, u32)>>,
    appends: Vec<Vec<(u32, u32)>>,
    /// The `ok` transactions in completion order, and each one's place there.
    queue: Vec<TxnId>,
    at: Vec<u32>,
    /// How much of the queue completed before each transaction was invoked:
    /// it commits after all of that.
    need: Vec<u32>,
    done: Vec<bool>,
    /// The queue's first open transaction.
    head: usize,
    /// Per key: its length, and per position up to the observed list's
    /// length whether a block ends there.
    len: Vec<u32>,
    boundary: Vec<Vec<bool>>,
    /// Per key, per position of the observed list: whether a read ends
    /// there (no block may straddle it).
    cut: Vec<Vec<bool>>,
    /// Per key: its `ok` writers by the first value of their block.
    by_first: Vec<FxHashMap<ValId, Vec<u32>>>,
    /// Per key, per position of the observed list: the first completion of
    /// a transaction that read past it. Whoever fills the place committed
    /// before that reader, so it was invoked before the reader completed.
    by: Vec<Vec<u64>>,
    /// Per transaction: when it was invoked (0: unknown).
    invoked: Vec<u64>,
    order: Vec<TxnId>,
    /// Zobrist keys of the transactions, and the hash of the committed set.
    zobrist: Vec<u64>,
    hash: u64,
}

impl<'a> State<'a> {
    fn new(h: &History, keys: &'a [KeyFacts]) -> State<'a> {
        let nt = h.txns.len();
        let TxnOps { reads, appends } = TxnOps::new(nt, keys);
        let mut queue: Vec<TxnId> = (0..nt as TxnId)
            .filter(|&t| h.txns[t as usize].outcome == Outcome::Ok)
            .collect();
        queue.sort_by_key(|&t| (h.txns[t as usize].complete_seq.unwrap_or(u64::MAX), t));
        let mut at = vec![u32::MAX; nt];
        let mut need = vec![0u32; nt];
        for (i, &t) in queue.iter().enumerate() {
            at[t as usize] = i as u32;
            if let Some(inv) = h.txns[t as usize].invoke_seq {
                need[t as usize] = queue
                    .partition_point(|&q| h.txns[q as usize].complete_seq.is_some_and(|c| c < inv))
                    as u32;
            }
        }
        // Zobrist keys: the hash of a set of committed transactions.
        let mut rng = crate::rng::Rng::new(0x9E37_79B9_7F4A_7C15);
        let zobrist: Vec<u64> = (0..nt).map(|_| rng.next_u64()).collect();
        State {
            keys,
            reads,
            appends,
            queue,
            at,
            need,
            done: vec![false; nt],
            head: 0,
            len: vec![0; keys.len()],
            boundary: keys
                .iter()
                .map(|k| {
                    let mut b = vec![false; k.list.len() + 1];
                    b[0] = true;
                    b
                })
                .collect(),
            cut: keys
                .iter()
                .map(|k| {
                    let mut c = vec![false; k.list.len() + 1];
                    for r in &k.readers {
                        c[r.cut as usize] = true;
                    }
                    c
                })
                .collect(),
            by_first: keys
                .iter()
                .map(|k| {
                    let mut m: FxHashMap<ValId, Vec<u32>> = FxHashMap::default();
                    for (wi, w) in k.writers.iter().enumerate() {
                        if w.outcome == Outcome::Ok {
                            m.entry(w.block[0]).or_default().push(wi as u32);
                        }
                    }
                    m
                })
                .collect(),
            by: keys
                .iter()
                .map(|k| {
                    let mut by = vec![u64::MAX; k.list.len() + 1];
                    for r in &k.readers {
                        if let (Some(c), true) = (h.txns[r.txn as usize].complete_seq, r.cut > 0) {
                            let b = &mut by[r.cut as usize - 1];
                            *b = (*b).min(c);
                        }
                    }
                    for p in (0..k.list.len()).rev() {
                        by[p] = by[p].min(by[p + 1]);
                    }
                    by
                })
                .collect(),
            invoked: h.txns.iter().map(|t| t.invoke_seq.unwrap_or(0)).collect(),
            order: Vec::new(),
            zobrist,
            hash: 0,
        }
    }

    /// Whether writer `w`'s block continues key `k`'s observed list at
    /// position `p` without straddling the end of a read (past the list's
    /// end anything does).
    fn fits_at(&self, k: u32, w: u32, p: u32) -> bool {
        let (ku, pu) = (k as usize, p as usize);
        let kf = &self.keys[ku];
        let block = &kf.writers[w as usize].block;
        pu >= kf.list.len()
            || (kf.list[pu..].starts_with(block)
                && !self.cut[ku][pu + 1..pu + block.len()].contains(&true))
    }

    /// Whether an open writer other than `but` could fill key `k`'s next
    /// place in time for the readers past it (always, past the observed
    /// list).
    fn fillable(&self, k: u32, but: Option<u32>) -> bool {
        let (ku, p) = (k as usize, self.len[k as usize]);
        let Some(v) = self.keys[ku].list.get(p as usize) else {
            return true;
        };
        let by = self.by[ku][p as usize];
        self.by_first[ku].get(v).is_some_and(|ws| {
            ws.iter().any(|&w| {
                let t = self.keys[ku].writers[w as usize].txn as usize;
                Some(w) != but && !self.done[t] && self.invoked[t] < by && self.fits_at(k, w, p)
            })
        })
    }

    /// Whether `t` can commit now.
    fn ready(&self, t: TxnId) -> bool {
        let tu = t as usize;
        self.need[tu] as usize <= self.head
            && self.reads[tu]
                .iter()
                .all(|&(k, c)| c <= self.len[k as usize] && self.boundary[k as usize][c as usize])
            && self.appends[tu]
                .iter()
                .all(|&(k, w)| self.fits_at(k, w, self.len[k as usize]))
    }

    /// The open transactions that can commit now, in completion order.
    fn candidates(&self) -> Vec<TxnId> {
        self.open().filter(|&t| self.ready(t)).collect()
    }

    /// The open transactions the next commit is chosen among.
    fn open(&self) -> impl Iterator<Item = TxnId> + '_ {
        self.queue[self.head..]
            .iter()
            .copied()
            .filter(|&t| !self.done[t as usize])
            .take(WINDOW)
    }

    /// Whether another open transaction could take one of the places `t`
    /// would fill now within the observed lists (past them, order is free).
    fn competes(&self, t: TxnId) -> bool {
        self.appends[t as usize].iter().any(|&(k, w)| {
            (self.len[k as usize] as usize) < self.keys[k as usize].list.len()
                && self.fillable(k, Some(w))
        })
    }

    /// Commits, in completion order, the transactions that can commit and
    /// compete with nobody, until none is left; fails as [`State::commit`].
    fn free_commits(&mut self, steps: &mut usize) -> Result<(), u32> {
        loop {
            *steps += 1;
            let Some(t) = self.open().find(|&t| self.ready(t) && !self.competes(t)) else {
                return Ok(());
            };
            self.commit(t)?;
        }
    }

    /// Commits `t`; fails with a key `t` appended to whose next place
    /// within the observed list no open writer can fill, if there is one.
    fn commit(&mut self, t: TxnId) -> Result<(), u32> {
        self.done[t as usize] = true;
        self.hash ^= self.zobrist[t as usize];
        self.order.push(t);
        for &(k, w) in &self.appends[t as usize] {
            let ku = k as usize;
            self.len[ku] += self.keys[ku].writers[w as usize].weight();
            if let Some(b) = self.boundary[ku].get_mut(self.len[ku] as usize) {
                *b = true;
            }
        }
        while self.head < self.queue.len() && self.done[self.queue[self.head] as usize] {
            self.head += 1;
        }
        match self.appends[t as usize]
            .iter()
            .find(|&&(k, _)| !self.fillable(k, None))
        {
            Some(&(k, _)) => Err(k),
            None => Ok(()),
        }
    }

    /// Whether the commits of depth `f` (its free ones and the one chosen)
    /// appended to a key in `keys`.
    fn touches(&self, f: &Frame, keys: &[u32]) -> bool {
        self.order[f.base..=f.top.min(self.order.len() - 1)]
            .iter()
            .any(|&t| {
                self.appends[t as usize]
                    .iter()
                    .any(|(k, _)| keys.contains(k))
            })
    }

    /// The keys the open transactions that real time lets commit now wait
    /// on: a read longer than the key, an append that does not continue it.
    fn blocking_keys(&self) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        for t in self.open() {
            let tu = t as usize;
            if self.need[tu] as usize > self.head {
                continue;
            }
            let reads = self.reads[tu]
                .iter()
                .filter(|&&(k, c)| c > self.len[k as usize])
                .map(|&(k, _)| k);
            let appends = self.appends[tu]
                .iter()
                .filter(|&&(k, w)| !self.fits_at(k, w, self.len[k as usize]))
                .map(|&(k, _)| k);
            for k in reads.chain(appends) {
                if !out.contains(&k) {
                    out.push(k);
                }
            }
        }
        out
    }

    /// Takes back the commits after the first `n`.
    fn undo_to(&mut self, n: usize) {
        while self.order.len() > n {
            self.undo();
        }
    }

    /// Takes back the last commit.
    fn undo(&mut self) {
        let Some(t) = self.order.pop() else { return };
        self.done[t as usize] = false;
        self.hash ^= self.zobrist[t as usize];
        for &(k, w) in self.appends[t as usize].iter().rev() {
            let ku = k as usize;
            if let Some(b) = self.boundary[ku].get_mut(self.len[ku] as usize) {
                *b = false;
            }
            self.len[ku] -= self.keys[ku].writers[w as usize].weight();
        }
        self.head = self.head.min(self.at[t as usize] as usize);
    }
}
