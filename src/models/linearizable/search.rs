//! Just-in-time linearization (Wing & Gong, with Lowe's memoisation as in
//! "Testing for linearizability", 2017): walk the history's events in order
//! on a doubly linked list; at a call, linearize it now if the object allows
//! it and the configuration (set of linearized calls, object state) is new,
//! lifting the call and its return out of the list; at a return whose call
//! is not yet linearized, undo the latest choice. The memo of configurations
//! keeps the search from exploring the same configuration twice, which is
//! what makes it fast on real histories.
//!
//! Crashed calls return "at infinity" (after every finite event): reaching
//! that part of the list means every `:ok` call is linearized, and the
//! crashed ones left are those the linearization leaves out. Crashed calls
//! that do the same thing are interchangeable, so of those invoked so far
//! only the earliest not yet linearized may be: without this, every subset
//! of them would be a configuration of its own. Beyond that, a configuration
//! whose crashed calls include all those of one already seen with the same
//! state and the same `:ok` calls linearized is pruned: it can reach nothing
//! the smaller one cannot (see `Memo`). And no call is taken right after
//! a crashed call when it would lead to the same state without it (a write
//! after a crashed write): the crashed call was wasted there.
//!
//! Depth first is the right order to find a linearization, not to exhaust
//! the configurations: [`search`] gives it a bounded number of them, then
//! hands over to the sweep of `super::sweep`.

use super::calls::Event;
use super::spec::{step, Action, INITIAL};
use std::time::Instant;

/// What bounds a search; shared by the searches of one check.
#[derive(Debug)]
pub struct Budget {
    /// Give up after this instant.
    pub deadline: Option<Instant>,
    /// Give up once the memo holds this many 64-bit words (its memory / 8).
    pub max_words: usize,
    /// Why the budget ran out, once it did.
    pub spent: Option<String>,
    /// Configurations the depth-first search may make before the search
    /// starts over as a sweep (see [`search`]); `None`:
    /// `DEPTH_FIRST_PER_EVENT` per event.
    pub depth_first: Option<usize>,
}

impl Budget {
    /// A budget of `ms` milliseconds (none: no time limit) and `max_words`.
    pub fn new(ms: Option<u64>, max_words: usize) -> Budget {
        Budget {
            deadline: ms.map(|ms| Instant::now() + std::time::Duration::from_millis(ms)),
            max_words,
            spent: None,
            depth_first: None,
        }
    }

    /// True, with `spent` saying so, once the deadline has passed; called
    /// every few thousand steps (a clock read is not free).
    pub(super) fn out_of_time(&mut self) -> bool {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.spent = Some("time limit".into());
            return true;
        }
        false
    }
}

/// How a search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The visitor took a linearization and asked to stop.
    Stopped,
    /// Every configuration was explored (no linearization left to visit).
    Exhausted {
        /// The call whose return the configurations got furthest to without
        /// passing it: the history is linearizable up to just before that
        /// return, and not with it (none if no return ever blocked).
        blocked_at: Option<u32>,
    },
    /// The budget ran out first ([`Budget::spent`] says which part).
    OutOfBudget,
}

/// A linearization the search found: the object's final state, the call
/// linearized last, and the linearized calls as a bit set.
pub struct Found<'a> {
    /// The object's state after the linearization.
    pub state: u32,
    /// The call linearized last, if any.
    pub last: Option<u32>,
    /// Bit `c` set iff call `c` was linearized.
    pub bits: &'a [u64],
}

const NIL: u32 = u32::MAX;

/// One 64-bit word per call id, mixed (SplitMix64's finalizer): the
/// incremental hash of a set of calls is the xor of its members' words.
#[inline]
fn word(c: u32) -> u64 {
    let mut z = (c as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Configurations seen. A configuration is the object's state and the set
/// of linearized calls, split in two parts stored differently:
///
/// - calls that return in the history ("finite"), numbered in invocation
///   order: every one below the lowest unlinearized one (the watermark) is
///   linearized, so the watermark and the few linearized above it (calls
///   concurrent with it) say which. A memo entry costs the history's
///   concurrency, not its length.
/// - crashed calls, as a bit set laid out by [`Crashed`]. A configuration
///   is dominated by one seen with the same state and finite part whose
///   crashed calls left can do all that its own can ([`Crashed::dominates`]),
///   and pruned: whatever follows it can follow the other, each crashed
///   call taking effect at most once, or never. This keeps a
///   non-linearizable history with crashed writes from listing every subset
///   of them that has taken effect.
pub(super) struct Memo {
    /// Words of a crashed-call bit set.
    crash_width: usize,
    /// The sets' layout.
    crashed: Crashed,
    /// The finite part's linearized calls above each entry's watermark.
    above: Vec<u32>,
    entries: Vec<Entry>,
    /// The latest entry with each hash; the others chain through
    /// [`Entry::next`].
    by_hash: rustc_hash::FxHashMap<u64, u32>,
    /// Words the entries' sets hold, all told.
    set_words: usize,
}

/// One (state, finite part) and the minimal crashed sets seen with it.
struct Entry {
    state: u32,
    watermark: u32,
    above: (u32, u32),
    /// The previous entry with the same hash, or `NIL`.
    next: u32,
    /// The crashed sets kept, `crash_width` words each, side by side so a
    /// lookup reads one block; none is a subset of another.
    sets: Vec<u64>,
}

impl Memo {
    /// An empty memo of crashed sets laid out by `crashed`.
    pub(super) fn new(crashed: Crashed) -> Memo {
        Memo {
            crash_width: crashed.width,
            crashed,
            above: Vec::new(),
            entries: Vec::new(),
            by_hash: Default::default(),
            set_words: 0,
        }
    }

    /// The entry of (`state`, `watermark`, `above`) with hash `h`.
    fn find(&self, h: u64, state: u32, watermark: u32, above: &[u32]) -> (u32, u32) {
        let first = *self.by_hash.get(&h).unwrap_or(&NIL);
        let mut e = first;
        while e != NIL {
            let entry = &self.entries[e as usize];
            let (a, n) = entry.above;
            if entry.state == state
                && entry.watermark == watermark
                && self.above[a as usize..(a + n) as usize] == *above
            {
                break;
            }
            e = entry.next;
        }
        (first, e)
    }

    /// Adds the configuration (`state`; finite calls below `watermark` and
    /// those in `above`; crashed calls `crashed`) with hash `h` of its state
    /// and finite part; false if it or one that dominates it was there.
    pub(super) fn insert(
        &mut self,
        h: u64,
        state: u32,
        watermark: u32,
        above: &[u32],
        crashed: &[u64],
    ) -> bool {
        let (first, mut e) = self.find(h, state, watermark, above);
        if e == NIL {
            e = self.entries.len() as u32;
            let a = self.above.len() as u32;
            self.above.extend_from_slice(above);
            self.entries.push(Entry {
                state,
                watermark,
                above: (a, above.len() as u32),
                next: first,
                sets: crashed.to_vec(),
            });
            self.set_words += crashed.len();
            self.by_hash.insert(h, e);
            return true;
        }
        let w = self.crash_width;
        let mut sets = std::mem::take(&mut self.entries[e as usize].sets);
        if w == 0
            || sets
                .chunks_exact(w)
                .any(|s| self.crashed.dominates(s, crashed))
        {
            self.entries[e as usize].sets = sets;
            return false;
        }
        // Sets the new one dominates can prune nothing it cannot.
        self.set_words -= sets.len();
        let (mut kept, mut i) = (0, 0);
        while i < sets.len() {
            if !self.crashed.dominates(crashed, &sets[i..i + w]) {
                sets.copy_within(i..i + w, kept);
                kept += w;
            }
            i += w;
        }
        sets.truncate(kept);
        sets.extend_from_slice(crashed);
        self.set_words += sets.len();
        self.entries[e as usize].sets = sets;
        true
    }

    /// Roughly the memo's size in 64-bit words: the arena, and per entry
    /// its fields, its sets and its place in the hash map.
    pub(super) fn words(&self) -> usize {
        self.above.len() / 2 + self.entries.len() * 9 + self.set_words
    }
}

/// Where each crashed call sits in a crashed-call bit set. Crashed calls
/// are those invoked in `events[..finite]` that return at infinity; they
/// are laid out by action, then in invocation order. Of the crashed calls
/// of one action only the earliest not taken may be taken (they are
/// interchangeable, and it is free the soonest), so a set holds a prefix of
/// each action's run of bits.
pub(super) struct Crashed {
    /// Each call's bit, `NIL` for calls that are not crashed.
    pub bit: Vec<u32>,
    /// Each bit's call.
    pub calls: Vec<u32>,
    /// Each bit's action.
    actions: Vec<Action>,
    /// Words of a set.
    pub width: usize,
}

/// The most calls on either side of the difference of two crashed sets
/// [`Crashed::dominates`] compares (beyond: not dominated).
const MAX_DIFFERENCE: usize = 16;

/// Steps of one [`Crashed::dominates`] comparison (beyond: not dominated).
const MAX_STEPS: u32 = 256;

impl Crashed {
    pub(super) fn new(actions: &[Action], events: &[Event], finite: usize) -> Crashed {
        let mut returns = vec![false; actions.len()];
        for e in &events[..finite] {
            if let Event::Return(c) = *e {
                returns[c as usize] = true;
            }
        }
        let key = |a: Action| match a {
            Action::Write(v) => (0, v, 0),
            Action::Cas(x, v) => (1, x, v),
            Action::Read(v) => (2, v.unwrap_or(NIL), 0),
            Action::Acquire => (3, 0, 0),
            Action::Release => (4, 0, 0),
        };
        let mut calls: Vec<u32> = events[..finite]
            .iter()
            .filter_map(|e| match *e {
                Event::Call(c) if !returns[c as usize] => Some(c),
                _ => None,
            })
            .collect();
        // Stable: invocation order within an action.
        calls.sort_by_key(|&c| key(actions[c as usize]));
        let mut bit = vec![NIL; actions.len()];
        for (b, &c) in calls.iter().enumerate() {
            bit[c as usize] = b as u32;
        }
        Crashed {
            bit,
            actions: calls.iter().map(|&c| actions[c as usize]).collect(),
            width: calls.len().div_ceil(64),
            calls,
        }
    }

    /// Whether the crashed calls left after taking those of `s` can do all
    /// that those left after `t` can, so that a configuration with `t`
    /// reaches nothing one with `s` cannot (same state and finite part).
    /// Both sets hold crashed calls invoked before the same point (the first
    /// return of an unlinearized finite call, fixed by the finite part), so
    /// what each leaves is all free from here on. What `t` leaves and `s`
    /// does not (calls `s` took) must each be done by calls `s` leaves and
    /// `t` does not (calls `t` took), a chain of them in a row, no call in
    /// two chains: a write of `v` does a CAS to `v`; a write of 1 then a
    /// CAS from 1 to 4 do a write of 4. Taking a subset is the plain case.
    /// A difference too big to compare counts as not dominated, which only
    /// prunes less.
    pub(super) fn dominates(&self, s: &[u64], t: &[u64]) -> bool {
        let (mut nd, mut ne) = (0u32, 0u32);
        for (x, y) in s.iter().zip(t) {
            nd += (x & !y).count_ones();
            ne += (y & !x).count_ones();
        }
        if nd == 0 {
            return true;
        }
        if ne < nd || ne as usize > MAX_DIFFERENCE {
            return false;
        }
        let mut d = [Action::Acquire; MAX_DIFFERENCE];
        let mut e = [Action::Acquire; MAX_DIFFERENCE];
        let (mut i, mut j) = (0, 0);
        for (w, (x, y)) in s.iter().zip(t).enumerate() {
            let (mut xd, mut xe) = (x & !y, y & !x);
            while xd != 0 {
                d[i] = self.actions[w * 64 + xd.trailing_zeros() as usize];
                xd &= xd - 1;
                i += 1;
            }
            while xe != 0 {
                e[j] = self.actions[w * 64 + xe.trailing_zeros() as usize];
                xe &= xe - 1;
                j += 1;
            }
        }
        cover(&d[..i], &e[..j], 0, &mut 0)
    }
}

/// Whether each call of `todo` can be done by a chain of calls of `by`, no
/// call in two chains nor in `used` (a bit set over `by`), within
/// `MAX_STEPS` (`steps` counts them).
fn cover(todo: &[Action], by: &[Action], used: u32, steps: &mut u32) -> bool {
    let Some((&first, rest)) = todo.split_first() else {
        return true;
    };
    // From the state it needs (a write: any, so the chain must begin with a
    // write) to the state it leaves.
    let (from, to) = match first {
        Action::Write(v) => (None, v),
        Action::Cas(x, v) => (Some(x), v),
        Action::Acquire => (Some(0), 1),
        Action::Release => (Some(1), 0),
        Action::Read(_) => return false,
    };
    chain(from, to, by, used, rest, steps)
}

/// Whether a chain of calls of `by` not in `used` leads from `at` (`None`:
/// any state) to `to`, the rest of `todo` still covered by what is left.
fn chain(
    at: Option<u32>,
    to: u32,
    by: &[Action],
    used: u32,
    todo: &[Action],
    steps: &mut u32,
) -> bool {
    for (i, &a) in by.iter().enumerate() {
        if used & (1 << i) != 0 {
            continue;
        }
        *steps += 1;
        if *steps > MAX_STEPS {
            return false;
        }
        let next = match (at, a) {
            (None, Action::Write(v)) => v,
            (None, _) => continue,
            (Some(st), _) => match step(st, a) {
                Some(n) if n != st => n,
                _ => continue,
            },
        };
        let used = used | 1 << i;
        if next == to {
            if cover(todo, by, used, steps) {
                return true;
            }
        } else if chain(Some(next), to, by, used, todo, steps) {
            return true;
        }
    }
    false
}

/// The set of linearized calls, kept three ways: a bit set over all calls
/// (for visitors), and the memo's two parts (see [`Memo`]).
struct Linearized {
    bits: Vec<u64>,
    /// Each call's number among the finite or among the crashed calls.
    part: Vec<u32>,
    is_finite: Vec<bool>,
    finite: Vec<u64>,
    crashed: Vec<u64>,
    n_finite: u32,
    /// The lowest unlinearized finite call.
    watermark: u32,
    /// How many finite calls are linearized.
    n_linearized: u32,
    /// Hash of the linearized finite calls.
    hash: u64,
}

#[inline]
fn has(bits: &[u64], i: u32) -> bool {
    bits[i as usize / 64] & (1 << (i % 64)) != 0
}

impl Linearized {
    fn new(
        n_calls: usize,
        events: &[Event],
        finite: usize,
        ret: &[u32],
        crashed: &Crashed,
    ) -> Linearized {
        let mut part = crashed.bit.clone();
        let mut is_finite = vec![false; n_calls];
        let mut n_finite = 0u32;
        for e in &events[..finite] {
            if let Event::Call(c) = *e {
                let c = c as usize;
                is_finite[c] = (ret[c] as usize) < finite;
                if is_finite[c] {
                    part[c] = n_finite;
                    n_finite += 1;
                }
            }
        }
        Linearized {
            bits: vec![0; n_calls.div_ceil(64).max(1)],
            part,
            is_finite,
            finite: vec![0; (n_finite as usize).div_ceil(64)],
            crashed: vec![0; crashed.width],
            n_finite,
            watermark: 0,
            n_linearized: 0,
            hash: 0,
        }
    }

    fn mark(&mut self, c: u32) {
        let (ci, p) = (c as usize, self.part[c as usize]);
        self.bits[ci / 64] |= 1 << (ci % 64);
        if self.is_finite[ci] {
            self.finite[p as usize / 64] |= 1 << (p % 64);
            self.n_linearized += 1;
            self.hash ^= word(c);
            while self.watermark < self.n_finite && has(&self.finite, self.watermark) {
                self.watermark += 1;
            }
        } else {
            self.crashed[p as usize / 64] |= 1 << (p % 64);
        }
    }

    /// Undoes [`Linearized::mark`] of the call marked last.
    fn unmark(&mut self, c: u32) {
        let (ci, p) = (c as usize, self.part[c as usize]);
        self.bits[ci / 64] &= !(1 << (ci % 64));
        if self.is_finite[ci] {
            self.finite[p as usize / 64] &= !(1 << (p % 64));
            self.n_linearized -= 1;
            self.hash ^= word(c);
            self.watermark = self.watermark.min(p);
        } else {
            self.crashed[p as usize / 64] &= !(1 << (p % 64));
        }
    }

    /// The linearized finite calls above the watermark, into `out`.
    fn above(&self, out: &mut Vec<u32>) {
        out.clear();
        let mut f = self.watermark + 1;
        while (out.len() as u32) < self.n_linearized - self.watermark {
            if has(&self.finite, f) {
                out.push(f);
            }
            f += 1;
        }
    }
}

/// Searches linearizations of `events` (calls numbered below `n_calls`;
/// `events[finite..]` are returns at infinity). Each linearization found
/// is shown to `visit`, which returns true to stop there or false to look
/// for another (each configuration is visited at most once).
///
/// Depth first first: on a linearizable history it goes straight to a
/// linearization. When that has explored `DEPTH_FIRST_PER_EVENT` times
/// as many configurations as there are events without deciding, the
/// history is likely not linearizable, and the search starts over as a
/// sweep (`super::sweep`), which makes each configuration that is not
/// dominated once, count of `:ok` calls by count.
pub fn search(
    actions: &[Action],
    events: &[Event],
    finite: usize,
    budget: &mut Budget,
    mut visit: impl FnMut(Found) -> bool,
) -> Ended {
    let mut seen: rustc_hash::FxHashSet<(u32, Vec<u64>)> = Default::default();
    let max_configs = budget
        .depth_first
        .unwrap_or(DEPTH_FIRST_PER_EVENT * events.len() + 4096);
    let mut first = |f: Found| {
        seen.insert((f.state, f.bits.to_vec()));
        visit(f)
    };
    if let Some(ended) = depth_first(actions, events, finite, budget, max_configs, &mut first) {
        return ended;
    }
    // Linearizations the depth-first search showed are not shown again.
    super::sweep::sweep(actions, events, finite, budget, &mut |f: Found| {
        !seen.contains(&(f.state, f.bits.to_vec())) && visit(f)
    })
}

/// See [`search`].
const DEPTH_FIRST_PER_EVENT: usize = 4;

/// The depth-first search; `None` once it has made more than `max_configs`
/// configurations.
fn depth_first(
    actions: &[Action],
    events: &[Event],
    finite: usize,
    budget: &mut Budget,
    max_configs: usize,
    visit: &mut impl FnMut(Found) -> bool,
) -> Option<Ended> {
    let mut configs = 0usize;
    let m = events.len();
    let head = m;
    // The list: slots 0..m are events, slot m the head.
    let mut next = vec![NIL; m + 1];
    let mut prev = vec![NIL; m + 1];
    for i in 0..m {
        next[i] = if i + 1 < m { i as u32 + 1 } else { NIL };
        prev[i] = if i == 0 { head as u32 } else { i as u32 - 1 };
    }
    next[head] = if m > 0 { 0 } else { NIL };
    // The slot of each call's return.
    let mut ret = vec![NIL; actions.len()];
    for (i, e) in events.iter().enumerate() {
        if let Event::Return(c) = e {
            ret[*c as usize] = i as u32;
        }
    }
    // For each crashed call, the crashed call with the same action invoked
    // just before it: it must be linearized first.
    let mut before_same = vec![NIL; actions.len()];
    let mut latest: rustc_hash::FxHashMap<Action, u32> = Default::default();
    for e in &events[..finite] {
        if let Event::Call(c) = *e {
            if ret[c as usize] as usize >= finite {
                if let Some(b) = latest.insert(actions[c as usize], c) {
                    before_same[c as usize] = b;
                }
            }
        }
    }
    let layout = Crashed::new(actions, events, finite);
    let mut lin = Linearized::new(actions.len(), events, finite, &ret, &layout);
    let mut above: Vec<u32> = Vec::new();
    let mut memo = Memo::new(layout);
    let mut state = INITIAL;
    // (call slot, state before it) of each linearized call, latest last.
    let mut stack: Vec<(u32, u32)> = Vec::new();
    let mut entry = next[head];
    // The clock is read every 4096 steps, the first step included (a zero
    // time limit stops at once).
    let mut ticks = 4095u32;
    // The latest slot of a return that blocked a configuration.
    let mut furthest: Option<u32> = None;

    let remove = |next: &mut Vec<u32>, prev: &mut Vec<u32>, i: usize| {
        let (p, n) = (prev[i], next[i]);
        next[p as usize] = n;
        if n != NIL {
            prev[n as usize] = p;
        }
    };
    let restore = |next: &mut Vec<u32>, prev: &mut Vec<u32>, i: usize| {
        let (p, n) = (prev[i], next[i]);
        next[p as usize] = i as u32;
        if n != NIL {
            prev[n as usize] = i as u32;
        }
    };

    loop {
        ticks = ticks.wrapping_add(1);
        if ticks.is_multiple_of(4096) && budget.out_of_time() {
            return Some(Ended::OutOfBudget);
        }
        let backtrack = if entry == NIL || entry as usize >= finite {
            // No :ok return is left: a linearization.
            let last = stack.last().map(|&(slot, _)| match events[slot as usize] {
                Event::Call(c) => c,
                Event::Return(c) => c,
            });
            if visit(Found {
                state,
                last,
                bits: &lin.bits,
            }) {
                return Some(Ended::Stopped);
            }
            true
        } else {
            match events[entry as usize] {
                Event::Call(c) => {
                    let ci = c as usize;
                    let b = before_same[ci] as usize;
                    let canonical = b == NIL as usize || lin.bits[b / 64] & (1 << (b % 64)) != 0;
                    // A crashed call whose effect the next call erases (it
                    // leads to the same state without it, as a write does)
                    // is wasted: the configuration without it, reached by
                    // taking this call directly, reaches everything this
                    // one can with a crashed call fewer.
                    let wasted = |s2: u32| {
                        stack.last().is_some_and(|&(slot, before)| {
                            matches!(events[slot as usize],
                                Event::Call(p) if ret[p as usize] as usize >= finite)
                                && step(before, actions[ci]) == Some(s2)
                        })
                    };
                    if let Some(s2) =
                        step(state, actions[ci]).filter(|&s2| canonical && !wasted(s2))
                    {
                        lin.mark(c);
                        lin.above(&mut above);
                        let h = lin.hash ^ word(s2 ^ 0x8000_0000);
                        if memo.insert(h, s2, lin.watermark, &above, &lin.crashed) {
                            configs += 1;
                            if configs > max_configs {
                                return None;
                            }
                            if memo.words() > budget.max_words {
                                budget.spent = Some("memory limit".into());
                                return Some(Ended::OutOfBudget);
                            }
                            stack.push((entry, state));
                            state = s2;
                            remove(&mut next, &mut prev, entry as usize);
                            remove(&mut next, &mut prev, ret[ci] as usize);
                            entry = next[head];
                            continue;
                        }
                        lin.unmark(c);
                    }
                    entry = next[entry as usize];
                    false
                }
                Event::Return(_) => {
                    furthest = furthest.max(Some(entry));
                    true
                }
            }
        };
        if backtrack {
            let Some((slot, before)) = stack.pop() else {
                return Some(Ended::Exhausted {
                    blocked_at: furthest.map(|slot| match events[slot as usize] {
                        Event::Return(c) | Event::Call(c) => c,
                    }),
                });
            };
            let Event::Call(c) = events[slot as usize] else {
                unreachable!("only calls are pushed")
            };
            let ci = c as usize;
            state = before;
            lin.unmark(c);
            restore(&mut next, &mut prev, ret[ci] as usize);
            restore(&mut next, &mut prev, slot as usize);
            entry = next[slot as usize];
        }
    }
}
