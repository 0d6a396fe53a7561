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
//! of them would be a configuration of its own.

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
}

impl Budget {
    /// A budget of `ms` milliseconds (none: no time limit) and `max_words`.
    pub fn new(ms: Option<u64>, max_words: usize) -> Budget {
        Budget {
            deadline: ms.map(|ms| Instant::now() + std::time::Duration::from_millis(ms)),
            max_words,
            spent: None,
        }
    }
}

/// How a search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The visitor took a linearization and asked to stop.
    Stopped,
    /// Every configuration was explored (no linearization left to visit).
    Exhausted,
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

/// Configurations seen: bit sets stored flat in one arena, found by hash.
struct Memo {
    width: usize,
    arena: Vec<u64>,
    states: Vec<u32>,
    by_hash: rustc_hash::FxHashMap<u64, Vec<u32>>,
}

impl Memo {
    /// Adds (bits, state) with hash `h`; false if it was there already.
    fn insert(&mut self, h: u64, bits: &[u64], state: u32) -> bool {
        let bucket = self.by_hash.entry(h).or_default();
        for &i in bucket.iter() {
            let i = i as usize;
            if self.states[i] == state && self.arena[i * self.width..(i + 1) * self.width] == *bits
            {
                return false;
            }
        }
        bucket.push(self.states.len() as u32);
        self.states.push(state);
        self.arena.extend_from_slice(bits);
        true
    }
}

/// Searches linearizations of `events` (calls numbered below `n_calls`;
/// `events[finite..]` are returns at infinity). Each linearization found
/// is shown to `visit`, which returns true to stop there or false to look
/// for another (each configuration is visited at most once).
pub fn search(
    actions: &[Action],
    events: &[Event],
    finite: usize,
    budget: &mut Budget,
    mut visit: impl FnMut(Found) -> bool,
) -> Ended {
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
    let width = actions.len().div_ceil(64).max(1);
    let mut bits = vec![0u64; width];
    let mut hash = 0u64;
    let mut memo = Memo {
        width,
        arena: Vec::new(),
        states: Vec::new(),
        by_hash: Default::default(),
    };
    let mut state = INITIAL;
    // (call slot, state before it) of each linearized call, latest last.
    let mut stack: Vec<(u32, u32)> = Vec::new();
    let mut entry = next[head];
    let mut ticks = 0u32;

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
        if ticks.is_multiple_of(4096) {
            if let Some(d) = budget.deadline {
                if Instant::now() >= d {
                    budget.spent = Some("time limit".into());
                    return Ended::OutOfBudget;
                }
            }
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
                bits: &bits,
            }) {
                return Ended::Stopped;
            }
            true
        } else {
            match events[entry as usize] {
                Event::Call(c) => {
                    let ci = c as usize;
                    let b = before_same[ci] as usize;
                    let canonical = b == NIL as usize || bits[b / 64] & (1 << (b % 64)) != 0;
                    if let Some(s2) = step(state, actions[ci]).filter(|_| canonical) {
                        bits[ci / 64] |= 1 << (ci % 64);
                        hash ^= word(c);
                        let h = hash ^ word(s2 ^ 0x8000_0000);
                        if memo.insert(h, &bits, s2) {
                            if memo.arena.len() > budget.max_words {
                                budget.spent = Some("memory limit".into());
                                return Ended::OutOfBudget;
                            }
                            stack.push((entry, state));
                            state = s2;
                            remove(&mut next, &mut prev, entry as usize);
                            remove(&mut next, &mut prev, ret[ci] as usize);
                            entry = next[head];
                            continue;
                        }
                        bits[ci / 64] &= !(1 << (ci % 64));
                        hash ^= word(c);
                    }
                    entry = next[entry as usize];
                    false
                }
                Event::Return(_) => true,
            }
        };
        if backtrack {
            let Some((slot, before)) = stack.pop() else {
                return Ended::Exhausted;
            };
            let Event::Call(c) = events[slot as usize] else {
                unreachable!("only calls are pushed")
            };
            let ci = c as usize;
            state = before;
            bits[ci / 64] &= !(1 << (ci % 64));
            hash ^= word(c);
            restore(&mut next, &mut prev, ret[ci] as usize);
            restore(&mut next, &mut prev, slot as usize);
            entry = next[slot as usize];
        }
    }
}
