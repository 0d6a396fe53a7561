//! The fast path for valid histories: rebuild a serial execution by running
//! transactions one at a time, each as soon as it can run — every read it
//! made matches the current state of its key, and every block it appended
//! matches the next positions of the observed list (or lands after it, once
//! all reads of the full list ran) — picking among the runnable ones by a
//! guess of when each took effect ([`Clock`]). Histories from real databases
//! follow real time closely, so this usually finds an order without any
//! search; the order is then replayed by [`super::witness`]. When it gets
//! stuck it proves nothing: the solver decides, seeded with where the replay
//! put each block.
//!
//! A transaction that cannot run waits on one condition it misses (a key
//! reaching the length it read, a key reaching a place for its block, the
//! transactions that completed before it began), so each step only looks
//! at the transactions that step may have unblocked.

use super::problem::KeyFacts;
use crate::history::{History, Outcome, TxnId, ValId};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Which places the solver still allows: `allowed(key, writer, position)`,
/// the position being the observed list's length for "after every read".
pub type Allowed<'a> = &'a dyn Fn(u32, u32, u32) -> bool;

/// When a transaction is guessed to have taken effect, to choose among
/// the runnable ones (the earliest first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// At its invocation (databases that fix the order at start).
    Invoke,
    /// At its completion (databases that fix the order at commit).
    Complete,
    /// Half-way.
    Middle,
}

/// The guesses tried, in turn, by [`replay_serial`].
pub const CLOCKS: [Clock; 3] = [Clock::Invoke, Clock::Complete, Clock::Middle];

/// What a replay did.
#[derive(Clone, Debug, Default)]
pub struct Replay {
    /// Transactions run, in order.
    pub order: Vec<TxnId>,
    /// `ok` transactions given up on to get unstuck (none: a full witness).
    pub abandoned: Vec<TxnId>,
    /// Where each block went: (key, writer, position); the position is the
    /// list's length for a block appended after every read of it.
    pub placed: Vec<(u32, u32, u32)>,
    /// Places no remaining block could fill, skipped to get unstuck.
    pub skipped: usize,
    /// Per key, per position `p`: how many transactions had run when the
    /// key's first `p` elements were in place (`u32::MAX`: never).
    pub reached: Vec<Vec<u32>>,
}

impl Replay {
    /// Nothing run yet: every key at position 0 (reached with none run).
    pub fn for_keys(keys: &[KeyFacts]) -> Replay {
        Replay {
            reached: keys
                .iter()
                .map(|k| {
                    let mut r = vec![u32::MAX; k.list.len() + 1];
                    r[0] = 0;
                    r
                })
                .collect(),
            ..Replay::default()
        }
    }

    /// True when every `ok` transaction ran and nothing was skipped.
    pub fn complete(&self) -> bool {
        self.abandoned.is_empty() && self.skipped == 0
    }
    /// How far it got: fewer abandoned and skipped is better.
    fn misses(&self) -> usize {
        self.abandoned.len() + self.skipped
    }
}

/// A serial order of the transactions that commit (`ok` ones and the `info`
/// ones needed), trying each [`Clock`] in turn; `None` if every replay got
/// stuck. With `strict` false it first tries real-time order anyway (a
/// strictly serializable order is serializable, and real time steers the
/// replay away from wrong guesses).
pub fn replay_serial(
    h: &History,
    keys: &[KeyFacts],
    strict: bool,
    allowed: Option<Allowed>,
) -> Option<Vec<TxnId>> {
    let best = replay_best(h, keys, strict, allowed, false);
    best.complete().then_some(best.order)
}

/// The first complete replay among those [`replay_serial`] tries. Each
/// attempt stops early once it had to give up on a few transactions (a
/// wrong guess then usually cascades); if none completes and `full`, the
/// attempt that got farthest is run to the end, for the places it finds.
pub fn replay_best(
    h: &History,
    keys: &[KeyFacts],
    strict: bool,
    allowed: Option<Allowed>,
    full: bool,
) -> Replay {
    let modes: &[bool] = if strict || !h.has_invocations {
        &[strict]
    } else {
        &[true, false]
    };
    let st = Static::new(h, keys);
    let quit = 8 + h.txns.len() / 500;
    let mut best: Option<(Replay, bool, Clock)> = None;
    for &rt in modes {
        for &clock in &CLOCKS {
            let r = replay_with(h, keys, &st, rt, clock, allowed, 3, quit);
            if r.complete() {
                return r;
            }
            if best
                .as_ref()
                .is_none_or(|b| r.order.len() > b.0.order.len())
            {
                best = Some((r, rt, clock));
            }
        }
    }
    match best {
        Some((_, rt, clock)) if full => {
            replay_with(h, keys, &st, rt, clock, allowed, 1, usize::MAX)
        }
        Some((r, _, _)) => r,
        None => Replay::default(),
    }
}

/// Replays as far as possible (see [`Run::go`]); when only a few
/// transactions had to be abandoned — usually because another writer of
/// the same value took their place — tries again with those first, up to
/// `rounds` times.
pub fn replay(
    h: &History,
    keys: &[KeyFacts],
    strict: bool,
    clock: Clock,
    allowed: Option<Allowed>,
    rounds: usize,
) -> Replay {
    let st = Static::new(h, keys);
    replay_with(h, keys, &st, strict, clock, allowed, rounds, usize::MAX)
}

/// [`replay`], stopping a run once it missed more than `quit` places.
#[allow(clippy::too_many_arguments)]
fn replay_with(
    h: &History,
    keys: &[KeyFacts],
    st: &Static,
    strict: bool,
    clock: Clock,
    allowed: Option<Allowed>,
    rounds: usize,
    quit: usize,
) -> Replay {
    let mut boost = vec![false; h.txns.len()];
    let mut best = Run::new(h, keys, st, strict, clock, allowed, &boost).go(quit);
    for _ in 1..rounds {
        if best.complete() || best.misses() > quit {
            break;
        }
        for &t in &best.abandoned {
            boost[t as usize] = true;
        }
        let r = Run::new(h, keys, st, strict, clock, allowed, &boost).go(quit);
        if r.misses() < best.misses() {
            best = r;
        } else {
            break;
        }
    }
    best
}

/// What does not change between runs: each transaction's reads and blocks,
/// each key's cuts and readers.
struct Static {
    /// Per transaction: (key, cut) of each read, (key, writer) of each block.
    reads: Vec<Vec<(u32, u32)>>,
    appends: Vec<Vec<(u32, u32)>>,
    /// Per key, per position: readers of exactly that many elements.
    readers_at: Vec<Vec<Vec<TxnId>>>,
    /// Per key, per position: the first cut strictly after it.
    next_cut: Vec<Vec<u32>>,
}

impl Static {
    fn new(h: &History, keys: &[KeyFacts]) -> Static {
        let nt = h.txns.len();
        let mut reads = vec![Vec::new(); nt];
        let mut appends = vec![Vec::new(); nt];
        let mut readers_at = Vec::with_capacity(keys.len());
        let mut next_cut = Vec::with_capacity(keys.len());
        for (ki, kf) in keys.iter().enumerate() {
            let n = kf.list.len();
            let mut ra: Vec<Vec<TxnId>> = vec![Vec::new(); n + 1];
            for r in &kf.readers {
                ra[r.cut as usize].push(r.txn);
                reads[r.txn as usize].push((ki as u32, r.cut));
            }
            for (wi, w) in kf.writers.iter().enumerate() {
                appends[w.txn as usize].push((ki as u32, wi as u32));
            }
            let mut nc = vec![u32::MAX; n + 1];
            let mut cut = u32::MAX;
            for p in (0..=n).rev() {
                nc[p] = cut;
                if !ra[p].is_empty() || p == n {
                    cut = p as u32;
                }
            }
            readers_at.push(ra);
            next_cut.push(nc);
        }
        Static {
            reads,
            appends,
            readers_at,
            next_cut,
        }
    }
}

/// Why a transaction cannot run now.
enum Wait {
    /// It never can in this replay (a key went past what it read).
    Dead,
    /// Until the transactions that completed before it began have run.
    Realtime,
    /// Until a key reaches the length it read (woken by that key's move).
    Read,
    /// Until key `.0` is at a place for a block starting with `.1`.
    Place(u32, ValId),
}

/// One replay.
struct Run<'a> {
    h: &'a History,
    keys: &'a [KeyFacts],
    st: &'a Static,
    strict: bool,
    allowed: Option<Allowed<'a>>,
    prio: Vec<u64>,
    pos: Vec<u32>,
    closed: Vec<bool>,
    /// Per key, per position: readers of it still to run.
    left: Vec<Vec<u32>>,
    /// Per (key, first value): blocks not yet placed nor given up.
    remaining: FxHashMap<(u32, ValId), u32>,
    done: Vec<bool>,
    /// Per transaction: bumped when it starts waiting anew, so that stale
    /// entries in `watch` are ignored.
    gen: Vec<u32>,
    /// Per (key, first value): transactions waiting for a place there.
    watch: FxHashMap<(u32, ValId), Vec<(TxnId, u32)>>,
    /// Per key: the values in `watch` (to wake all of a key's waiters).
    watched: Vec<Vec<ValId>>,
    heap: BinaryHeap<Reverse<(u64, TxnId)>>,
    /// Real time: `ok` transactions by completion, the first not yet run,
    /// and transactions by invocation, the first not yet released.
    by_complete: Vec<TxnId>,
    lo: usize,
    by_invoke: Vec<TxnId>,
    inv_ptr: usize,
    out: Replay,
}

impl<'a> Run<'a> {
    fn new(
        h: &'a History,
        keys: &'a [KeyFacts],
        st: &'a Static,
        strict: bool,
        clock: Clock,
        allowed: Option<Allowed<'a>>,
        boost: &[bool],
    ) -> Run<'a> {
        let nt = h.txns.len();
        let prio: Vec<u64> = h
            .txns
            .iter()
            .enumerate()
            .map(|(t, x)| {
                let c = x.complete_seq.unwrap_or(u64::MAX >> 4).min(u64::MAX >> 4);
                let i = x.invoke_seq.unwrap_or(c).min(c);
                let time = match clock {
                    Clock::Invoke => 2 * i,
                    Clock::Complete => 2 * c,
                    Clock::Middle => i + c,
                };
                (((x.outcome != Outcome::Ok) as u64) << 63) | ((!boost[t] as u64) << 62) | time
            })
            .collect();
        let mut remaining: FxHashMap<(u32, ValId), u32> = FxHashMap::default();
        for (ki, kf) in keys.iter().enumerate() {
            for w in &kf.writers {
                *remaining.entry((ki as u32, w.block[0])).or_default() += 1;
            }
        }
        let mut by_complete: Vec<TxnId> = (0..nt as TxnId)
            .filter(|&t| {
                let x = &h.txns[t as usize];
                x.outcome == Outcome::Ok && x.complete_seq.is_some()
            })
            .collect();
        by_complete.sort_by_key(|&t| h.txns[t as usize].complete_seq);
        let mut by_invoke: Vec<TxnId> = (0..nt as TxnId)
            .filter(|&t| h.txns[t as usize].invoke_seq.is_some())
            .collect();
        by_invoke.sort_by_key(|&t| h.txns[t as usize].invoke_seq);
        let heap = (0..nt as TxnId)
            .filter(|&t| h.txns[t as usize].outcome != Outcome::Fail)
            .map(|t| Reverse((prio[t as usize], t)))
            .collect();
        Run {
            h,
            keys,
            st,
            strict,
            allowed,
            prio,
            pos: vec![0; keys.len()],
            closed: keys
                .iter()
                .map(|k| k.list.is_empty() && k.readers.is_empty())
                .collect(),
            left: st
                .readers_at
                .iter()
                .map(|ra| ra.iter().map(|r| r.len() as u32).collect())
                .collect(),
            remaining,
            done: vec![false; nt],
            gen: vec![0; nt],
            watch: FxHashMap::default(),
            watched: vec![Vec::new(); keys.len()],
            heap,
            by_complete,
            lo: 0,
            by_invoke,
            inv_ptr: 0,
            out: Replay::for_keys(keys),
        }
    }

    /// Runs until every `ok` transaction ran or was given up on: when
    /// nothing can run, skips a place no remaining block can fill, or else
    /// gives up on the `ok` transaction that should have run first.
    fn go(mut self, quit: usize) -> Replay {
        let h = self.h;
        let ok_total = h.txns.iter().filter(|t| t.outcome == Outcome::Ok).count();
        let mut ok_seen = 0usize;
        let mut by_prio: Vec<TxnId> = (0..h.txns.len() as TxnId)
            .filter(|&t| h.txns[t as usize].outcome == Outcome::Ok)
            .collect();
        by_prio.sort_by_key(|&t| self.prio[t as usize]);
        let mut give_up_ptr = 0usize;
        if self.strict {
            self.release_realtime();
        }
        while ok_seen < ok_total && self.out.misses() <= quit {
            let Some(Reverse((_, t))) = self.heap.pop() else {
                if self.skip_unfillable() {
                    continue;
                }
                while give_up_ptr < by_prio.len() && self.done[by_prio[give_up_ptr] as usize] {
                    give_up_ptr += 1;
                }
                let Some(&t) = by_prio.get(give_up_ptr) else {
                    break;
                };
                self.abandon(t);
                ok_seen += 1;
                continue;
            };
            if self.done[t as usize] {
                continue;
            }
            match self.check(t) {
                Ok(()) => {
                    self.run(t);
                    if h.txns[t as usize].outcome == Outcome::Ok {
                        ok_seen += 1;
                    }
                }
                Err(Wait::Dead) => {
                    if h.txns[t as usize].outcome == Outcome::Ok {
                        self.abandon(t);
                        ok_seen += 1;
                    } else {
                        self.drop_info(t);
                    }
                }
                Err(Wait::Realtime) | Err(Wait::Read) => {
                    // Woken by the real-time pointer or by the key's move.
                    self.gen[t as usize] += 1;
                }
                Err(Wait::Place(k, v)) => {
                    self.gen[t as usize] += 1;
                    let g = self.gen[t as usize];
                    let e = self.watch.entry((k, v)).or_default();
                    if e.is_empty() {
                        self.watched[k as usize].push(v);
                    }
                    e.push((t, g));
                }
            }
        }
        self.out
    }

    fn realtime_ok(&self, t: TxnId) -> bool {
        if !self.strict {
            return true;
        }
        let x = &self.h.txns[t as usize];
        match (x.invoke_seq, x.complete_seq, self.by_complete.get(self.lo)) {
            (Some(inv), Some(_), Some(&first)) => self.h.txns[first as usize]
                .complete_seq
                .is_none_or(|c| c >= inv),
            _ => true,
        }
    }

    /// Can `t` run now? If not, what it waits for.
    fn check(&self, t: TxnId) -> Result<(), Wait> {
        if !self.realtime_ok(t) {
            return Err(Wait::Realtime);
        }
        let st = self.st;
        for &(k, c) in &st.reads[t as usize] {
            let k = k as usize;
            if self.closed[k] || self.pos[k] > c {
                return Err(Wait::Dead);
            }
            if self.pos[k] < c {
                return Err(Wait::Read);
            }
        }
        for &(k, w) in &st.appends[t as usize] {
            let ku = k as usize;
            let kf = &self.keys[ku];
            let n = kf.list.len() as u32;
            let allowed = |p: u32| self.allowed.is_none_or(|f| f(k, w, p));
            if self.closed[ku] {
                if !allowed(n) {
                    return Err(Wait::Dead);
                }
                continue;
            }
            let p = self.pos[ku];
            let block = &kf.writers[w as usize].block;
            let own = st.reads[t as usize].contains(&(k, p)) as u32;
            let fits = self.left[ku][p as usize] == own
                && (p == n
                    || (p + block.len() as u32 <= st.next_cut[ku][p as usize]
                        && kf.list[p as usize..].starts_with(block)))
                && allowed(p);
            if !fits {
                return Err(Wait::Place(k, block[0]));
            }
        }
        Ok(())
    }

    /// Runs `t`: its reads are done, its blocks placed.
    fn run(&mut self, t: TxnId) {
        self.done[t as usize] = true;
        self.out.order.push(t);
        self.release_reads(t);
        let st = self.st;
        for &(k, w) in &st.appends[t as usize] {
            self.place(k, w);
        }
        if self.strict {
            self.release_realtime();
        }
    }

    /// Gives up on `t`: its reads no longer hold anyone back; the blocks
    /// that fit where their keys are now are placed (so that one wrong
    /// guess does not stall every key it touched), the others never will.
    fn abandon(&mut self, t: TxnId) {
        self.done[t as usize] = true;
        self.out.abandoned.push(t);
        self.release_reads(t);
        let st = self.st;
        for &(k, w) in &st.appends[t as usize] {
            let ku = k as usize;
            let kf = &self.keys[ku];
            let p = self.pos[ku];
            let block = &kf.writers[w as usize].block;
            let fits = !self.closed[ku]
                && p < kf.list.len() as u32
                && self.left[ku][p as usize] == 0
                && p + block.len() as u32 <= st.next_cut[ku][p as usize]
                && kf.list[p as usize..].starts_with(block);
            if fits {
                self.place(k, w);
            } else {
                self.forget(k, block[0]);
            }
        }
        if self.strict {
            self.release_realtime();
        }
    }

    /// An `info` transaction that cannot run any more: it did not commit.
    fn drop_info(&mut self, t: TxnId) {
        self.done[t as usize] = true;
        for &(k, w) in &self.st.appends[t as usize] {
            let v = self.keys[k as usize].writers[w as usize].block[0];
            self.forget(k, v);
        }
    }

    fn forget(&mut self, k: u32, v: ValId) {
        if let Some(c) = self.remaining.get_mut(&(k, v)) {
            *c = c.saturating_sub(1);
        }
    }

    fn release_reads(&mut self, t: TxnId) {
        let st = self.st;
        for &(k, c) in &st.reads[t as usize] {
            let ku = k as usize;
            let l = &mut self.left[ku][c as usize];
            *l -= 1;
            if *l <= 1 && self.pos[ku] == c {
                // The last reader may be the one that appends right here.
                if *l == 1 {
                    for &r in &st.readers_at[ku][c as usize] {
                        if !self.done[r as usize] {
                            self.push(r);
                        }
                    }
                }
                self.wake_at(k);
            }
        }
    }

    /// Places writer `w`'s block where key `k` is now.
    fn place(&mut self, k: u32, w: u32) {
        let ku = k as usize;
        let kf = &self.keys[ku];
        let n = kf.list.len() as u32;
        let block0 = kf.writers[w as usize].block[0];
        self.forget(k, block0);
        if self.closed[ku] {
            self.out.placed.push((k, w, n));
            return;
        }
        let p = self.pos[ku];
        self.out.placed.push((k, w, p));
        if p == n {
            self.closed[ku] = true;
            self.wake_key(k);
            return;
        }
        let len = kf.writers[w as usize].block.len() as u32;
        self.advance(k, p + len);
    }

    /// Moves key `k` to position `p`.
    fn advance(&mut self, k: u32, p: u32) {
        let ku = k as usize;
        self.pos[ku] = p;
        self.out.reached[ku][p as usize] = self.out.order.len() as u32;
        let st = self.st;
        for &r in &st.readers_at[ku][p as usize] {
            if !self.done[r as usize] {
                self.push(r);
            }
        }
        if self.left[ku][p as usize] <= 1 {
            self.wake_at(k);
        }
    }

    /// Wakes the transactions waiting for a place where key `k` is now.
    fn wake_at(&mut self, k: u32) {
        let kf = &self.keys[k as usize];
        let p = self.pos[k as usize] as usize;
        match kf.list.get(p) {
            Some(&v) => self.wake(k, v),
            None => self.wake_key(k),
        }
    }

    fn wake_key(&mut self, k: u32) {
        let vs = std::mem::take(&mut self.watched[k as usize]);
        for &v in &vs {
            self.wake(k, v);
        }
    }

    fn wake(&mut self, k: u32, v: ValId) {
        if let Some(ws) = self.watch.remove(&(k, v)) {
            for (t, g) in ws {
                if self.gen[t as usize] == g && !self.done[t as usize] {
                    self.push(t);
                }
            }
        }
    }

    fn push(&mut self, t: TxnId) {
        self.heap.push(Reverse((self.prio[t as usize], t)));
    }

    /// Real time: releases the transactions that may run now that every
    /// transaction completed before their invocation ran.
    fn release_realtime(&mut self) {
        while self.lo < self.by_complete.len() && self.done[self.by_complete[self.lo] as usize] {
            self.lo += 1;
        }
        let bound = self
            .by_complete
            .get(self.lo)
            .and_then(|&f| self.h.txns[f as usize].complete_seq)
            .unwrap_or(u64::MAX);
        while self.inv_ptr < self.by_invoke.len() {
            let t = self.by_invoke[self.inv_ptr];
            if self.h.txns[t as usize]
                .invoke_seq
                .is_some_and(|i| i > bound)
            {
                break;
            }
            if !self.done[t as usize] && self.h.txns[t as usize].outcome != Outcome::Fail {
                self.push(t);
            }
            self.inv_ptr += 1;
        }
    }

    /// Skips the place of a key that waits for a block no remaining
    /// transaction can supply (its writer was used elsewhere): the key
    /// jumps to its next cut. True if some key moved.
    fn skip_unfillable(&mut self) -> bool {
        let mut moved = false;
        for k in 0..self.keys.len() {
            let kf = &self.keys[k];
            let p = self.pos[k];
            let n = kf.list.len() as u32;
            if self.closed[k] || p >= n || self.left[k][p as usize] != 0 {
                continue;
            }
            let v = kf.list[p as usize];
            if self.remaining.get(&(k as u32, v)).copied().unwrap_or(0) == 0 {
                let next = self.st.next_cut[k][p as usize].min(n);
                self.out.skipped += 1;
                self.advance(k as u32, next);
                moved = true;
            }
        }
        moved
    }
}
