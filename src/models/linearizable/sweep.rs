//! The exhaustive search, as a sweep: every configuration with k `:ok` calls
//! linearized is made before any with k + 1. A configuration is an `:ok`
//! part (the watermark and the calls linearized above it, see `Memo` in
//! [`super::search`]), a state and a set of crashed calls taken; the sweep
//! keeps one node per `:ok` part and state, holding the crashed sets that
//! reach it, none dominated by another ([`Crashed::dominates`]).
//!
//! Why: the depth-first search, and the search by layers of crashed calls
//! that came before this one, handled each configuration on its own, so a
//! stretch of history that several crashed sets get through was scanned,
//! looked up and stepped once per set. Here the calls that could go next
//! are found once per node, the sets ride along each step together, and
//! only the nodes of two counts are alive at a time, so memory stays in the
//! size of the history's concurrency.
//!
//! Within one count, crashed calls are taken by the size of the set (all
//! sets of size j before any of size j + 1), so a set that dominates
//! another, never bigger, is there first and the other is dropped before
//! it is stepped. A crashed call is taken only when the next step needs
//! it: some call that could go next fails in the present state and not in
//! the one the crashed call leaves. Any other place for it can be moved
//! later past the calls that do not need it (nothing returns before a
//! crashed call's invocation can force it earlier): past a nil read, which
//! reads any state, or into a write, which erases it; at the end of the
//! history every state counts (the report lists them).

use super::calls::Event;
use super::search::{Budget, Crashed, Ended, Found};
use super::spec::{step, Action, INITIAL};

const NIL: u32 = u32::MAX;

/// Crashed calls of one action: bits `start..end` of a set, taken in order.
struct Group {
    start: u32,
    end: u32,
    action: Action,
}

/// An `:ok` part and a state, and the crashed sets that reach them.
struct Node {
    state: u32,
    /// The `:ok` part in [`Level::keys`]: the watermark, then the `:ok`
    /// calls linearized above it, ascending.
    key: (u32, u32),
    /// The `:ok` calls that could go next, in [`Level::cands`].
    cands: (u32, u32),
    /// The first slot of `events` no call may pass: the return of an
    /// unlinearized `:ok` call, or the end.
    stop: u32,
    /// The previous node with the same hash, or `NIL`.
    next: u32,
    /// The crashed sets, `width` words each followed by the call
    /// linearized last.
    sets: Vec<u64>,
}

/// The nodes of one count of `:ok` calls linearized.
#[derive(Default)]
struct Level {
    keys: Vec<u32>,
    cands: Vec<u32>,
    nodes: Vec<Node>,
    by_hash: rustc_hash::FxHashMap<u64, u32>,
}

fn key_hash(state: u32, key: &[u32]) -> u64 {
    let mut h = 0x243f_6a88_85a3_08d3u64 ^ state as u64;
    for &k in key {
        h = (h ^ k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^= h >> 29;
    }
    h
}

impl Level {
    fn clear(&mut self) {
        self.keys.clear();
        self.cands.clear();
        self.nodes.clear();
        self.by_hash.clear();
    }

    fn key(&self, n: &Node) -> &[u32] {
        &self.keys[n.key.0 as usize..n.key.1 as usize]
    }

    /// The node of `state` and the `:ok` part `key`, if there is one, and
    /// the hash chain it would head.
    fn find(&self, h: u64, state: u32, key: &[u32]) -> (Option<u32>, u32) {
        let first = *self.by_hash.get(&h).unwrap_or(&NIL);
        let mut e = first;
        while e != NIL {
            let n = &self.nodes[e as usize];
            if n.state == state && self.key(n) == key {
                return (Some(e), first);
            }
            e = n.next;
        }
        (None, first)
    }

    fn words(&self) -> usize {
        (self.keys.len() + self.cands.len()) / 2
            + self.nodes.len() * 8
            + self.nodes.iter().map(|n| n.sets.len()).sum::<usize>()
    }
}

/// Adds the crashed set `set` (with `last`) to `sets` unless one there
/// dominates it, dropping those it dominates; whether it was added.
fn add(crashed: &Crashed, sets: &mut Vec<u64>, set: &[u64], last: u32) -> bool {
    let stride = set.len() + 1;
    if sets
        .chunks_exact(stride)
        .any(|s| crashed.dominates(&s[..set.len()], set))
    {
        return false;
    }
    let (mut kept, mut i) = (0, 0);
    while i < sets.len() {
        if !crashed.dominates(set, &sets[i..i + set.len()]) {
            sets.copy_within(i..i + stride, kept);
            kept += stride;
        }
        i += stride;
    }
    sets.truncate(kept);
    sets.extend_from_slice(set);
    sets.push(last as u64);
    true
}

/// How many bits of `set` are in `start..end`.
fn count(set: &[u64], start: u32, end: u32) -> u32 {
    (start..end)
        .filter(|&i| set[i as usize / 64] & (1 << (i % 64)) != 0)
        .count() as u32
}

/// See the module's doc. Same contract as [`super::search::search`].
pub fn sweep(
    actions: &[Action],
    events: &[Event],
    finite: usize,
    budget: &mut Budget,
    visit: &mut impl FnMut(Found) -> bool,
) -> Ended {
    let n = actions.len();
    let mut inv = vec![NIL; n];
    let mut ret = vec![NIL; n];
    for (i, e) in events.iter().enumerate() {
        match *e {
            Event::Call(c) => inv[c as usize] = i as u32,
            Event::Return(c) => ret[c as usize] = i as u32,
        }
    }
    let is_ok = |c: u32| (ret[c as usize] as usize) < finite;
    // :ok calls numbered in invocation order.
    let mut part = vec![NIL; n];
    let mut oks: Vec<u32> = Vec::new();
    for e in &events[..finite] {
        if let Event::Call(c) = *e {
            if is_ok(c) {
                part[c as usize] = oks.len() as u32;
                oks.push(c);
            }
        }
    }
    let n_oks = oks.len() as u32;
    let crashed = Crashed::new(actions, events, finite);
    let width = crashed.width;
    // A crashed CAS from a value to itself never changes anything.
    let mut groups: Vec<Group> = Vec::new();
    let mut b = 0;
    while b < crashed.calls.len() {
        let action = actions[crashed.calls[b] as usize];
        let end = (b..crashed.calls.len())
            .find(|&j| actions[crashed.calls[j] as usize] != action)
            .unwrap_or(crashed.calls.len());
        if !matches!(action, Action::Cas(x, y) if x == y) {
            groups.push(Group {
                start: b as u32,
                end: end as u32,
                action,
            });
        }
        b = end;
    }

    let mut furthest: Option<u32> = None;
    let mut ticks = 4095u32;
    let mut cur = Level::default();
    let mut next = Level::default();
    // Scans the :ok part `key` for the calls that could go next, into
    // `level.cands`; their range and the stop slot.
    let scan = |level: &mut Level, key: (u32, u32), furthest: &mut Option<u32>| {
        let (watermark, a, b) = (level.keys[key.0 as usize], key.0 + 1, key.1);
        let c0 = level.cands.len() as u32;
        if watermark == n_oks {
            return ((c0, c0), events.len() as u32);
        }
        let lin = |level: &Level, p: u32| {
            p < watermark || level.keys[a as usize..b as usize].contains(&p)
        };
        let mut slot = inv[oks[watermark as usize] as usize] as usize;
        loop {
            match events[slot] {
                Event::Call(c) if is_ok(c) && !lin(level, part[c as usize]) => level.cands.push(c),
                Event::Return(c) if !lin(level, part[c as usize]) => break,
                _ => {}
            }
            slot += 1;
        }
        *furthest = (*furthest).max(Some(slot as u32));
        ((c0, level.cands.len() as u32), slot as u32)
    };
    {
        cur.keys.push(0);
        let (cands, stop) = scan(&mut cur, (0, 1), &mut furthest);
        let mut sets = vec![0u64; width];
        sets.push(NIL as u64);
        cur.nodes.push(Node {
            state: INITIAL,
            key: (0, 1),
            cands,
            stop,
            next: NIL,
            sets,
        });
        cur.by_hash.insert(key_hash(INITIAL, &[0]), 0);
    }

    // Sets waiting to be stepped by crashed calls, by size: the node, then
    // the set.
    let mut buckets: Vec<Vec<u64>> = Vec::new();
    let mut set: Vec<u64> = vec![0; width];
    let mut key: Vec<u32> = Vec::new();
    let mut bits: Vec<u64> = vec![0; n.div_ceil(64).max(1)];
    // Per group: its next call to take, if any may be taken now.
    let mut free: Vec<u32> = vec![NIL; groups.len()];
    let stride = width + 1;
    // The actions of the :ok calls that could go next.
    let mut next_actions: Vec<Action> = Vec::new();

    for k in 0..=n_oks {
        // Crashed calls, smallest sets first.
        for (i, node) in cur.nodes.iter().enumerate() {
            for s in node.sets.chunks_exact(stride) {
                let size: u32 = s[..width].iter().map(|x| x.count_ones()).sum();
                if buckets.len() <= size as usize {
                    buckets.resize_with(size as usize + 1, Vec::new);
                }
                buckets[size as usize].push(i as u64);
                buckets[size as usize].extend_from_slice(&s[..width]);
            }
        }
        let mut size = 0;
        while size < buckets.len() {
            let mut bucket = std::mem::take(&mut buckets[size]);
            for entry in bucket.chunks_exact(stride) {
                ticks = ticks.wrapping_add(1);
                if ticks.is_multiple_of(4096) {
                    if budget.out_of_time() {
                        return Ended::OutOfBudget;
                    }
                    let words =
                        cur.words() + next.words() + buckets.iter().map(Vec::len).sum::<usize>();
                    if words > budget.max_words {
                        budget.spent = Some("memory limit".into());
                        return Ended::OutOfBudget;
                    }
                }
                let i = entry[0] as usize;
                set.copy_from_slice(&entry[1..]);
                let node = &cur.nodes[i];
                if !node
                    .sets
                    .chunks_exact(stride)
                    .any(|s| s[..width] == set[..])
                {
                    // Dominated since it was queued.
                    continue;
                }
                let (state, stop, cands, nkey) = (node.state, node.stop, node.cands, node.key);
                next_actions.clear();
                next_actions.extend(
                    cur.cands[cands.0 as usize..cands.1 as usize]
                        .iter()
                        .map(|&x| actions[x as usize]),
                );
                for (g, grp) in groups.iter().enumerate() {
                    let t = grp.start + count(&set, grp.start, grp.end);
                    free[g] = if t < grp.end && inv[crashed.calls[t as usize] as usize] < stop {
                        t
                    } else {
                        NIL
                    };
                }
                // Whether a call that could go next after state `s2` fails
                // in `state` and not in `s2`.
                let needed = |s2: u32| {
                    let enabled = |a: Action| step(state, a).is_none() && step(s2, a).is_some();
                    k == n_oks
                        || next_actions.iter().any(|&a| enabled(a))
                        || groups
                            .iter()
                            .zip(&free)
                            .any(|(grp, &f)| f != NIL && enabled(grp.action))
                };
                for (g, grp) in groups.iter().enumerate() {
                    let t = free[g];
                    if t == NIL {
                        continue;
                    }
                    let Some(s2) = step(state, grp.action).filter(|&s2| s2 != state && needed(s2))
                    else {
                        continue;
                    };
                    set[t as usize / 64] |= 1 << (t % 64);
                    key.clear();
                    key.extend_from_slice(cur.key(&cur.nodes[i]));
                    let h = key_hash(s2, &key);
                    let j = match cur.find(h, s2, &key) {
                        (Some(j), _) => j,
                        (None, first) => {
                            let j = cur.nodes.len() as u32;
                            cur.nodes.push(Node {
                                state: s2,
                                key: nkey,
                                cands,
                                stop,
                                next: first,
                                sets: Vec::new(),
                            });
                            cur.by_hash.insert(h, j);
                            j
                        }
                    };
                    let m = crashed.calls[t as usize];
                    if add(&crashed, &mut cur.nodes[j as usize].sets, &set, m) {
                        if buckets.len() <= size + 1 {
                            buckets.resize_with(size + 2, Vec::new);
                        }
                        buckets[size + 1].push(j as u64);
                        buckets[size + 1].extend_from_slice(&set);
                    }
                    set[t as usize / 64] &= !(1 << (t % 64));
                }
            }
            bucket.clear();
            buckets[size] = bucket;
            size += 1;
        }

        if k == n_oks {
            // Every :ok call linearized: each configuration is one.
            for node in &cur.nodes {
                for s in node.sets.chunks_exact(stride) {
                    bits.fill(0);
                    for &c in &oks {
                        bits[c as usize / 64] |= 1 << (c % 64);
                    }
                    for (b, &c) in crashed.calls.iter().enumerate() {
                        if s[b / 64] & (1 << (b % 64)) != 0 {
                            bits[c as usize / 64] |= 1 << (c % 64);
                        }
                    }
                    let last = s[width] as u32;
                    if visit(Found {
                        state: node.state,
                        last: (last != NIL).then_some(last),
                        bits: &bits,
                    }) {
                        return Ended::Stopped;
                    }
                }
            }
            break;
        }

        // The :ok calls: each node's sets go together to the next count.
        next.clear();
        for node in &cur.nodes {
            if node.sets.is_empty() {
                continue;
            }
            let ok_key = cur.key(node);
            let (watermark, above) = (ok_key[0], &ok_key[1..]);
            for &c in &cur.cands[node.cands.0 as usize..node.cands.1 as usize] {
                let Some(s2) = step(node.state, actions[c as usize]) else {
                    continue;
                };
                // The child's :ok part: c marked, the watermark raised past
                // what is linearized.
                let p = part[c as usize];
                key.clear();
                key.push(0);
                let mut w2 = watermark;
                if p == w2 {
                    w2 += 1;
                    for &q in above {
                        if q == w2 {
                            w2 += 1;
                        } else {
                            key.push(q);
                        }
                    }
                } else {
                    let at = above.partition_point(|&q| q < p);
                    key.extend_from_slice(&above[..at]);
                    key.push(p);
                    key.extend_from_slice(&above[at..]);
                }
                key[0] = w2;
                let h = key_hash(s2, &key);
                let j = match next.find(h, s2, &key) {
                    (Some(j), _) => j,
                    (None, first) => {
                        let a = next.keys.len() as u32;
                        next.keys.extend_from_slice(&key);
                        let nkey = (a, next.keys.len() as u32);
                        let (cands, stop) = scan(&mut next, nkey, &mut furthest);
                        let j = next.nodes.len() as u32;
                        next.nodes.push(Node {
                            state: s2,
                            key: nkey,
                            cands,
                            stop,
                            next: first,
                            sets: Vec::new(),
                        });
                        next.by_hash.insert(h, j);
                        j
                    }
                };
                let target = &mut next.nodes[j as usize].sets;
                for s in node.sets.chunks_exact(stride) {
                    add(&crashed, target, &s[..width], c);
                }
            }
        }
        std::mem::swap(&mut cur, &mut next);
    }
    Ended::Exhausted {
        blocked_at: furthest.map(|slot| match events[slot as usize] {
            Event::Return(c) | Event::Call(c) => c,
        }),
    }
}
