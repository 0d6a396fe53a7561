//! The exhaustive search, by layers of crashed calls: every configuration
//! that has linearized k crashed calls is explored before any that has
//! linearized k + 1. A configuration whose crashed calls include those of
//! another with the same state and `:ok` calls linearized is dominated by it
//! (see `Memo` in [`super::search`]); explored in this order, a dominating
//! configuration is always met before the ones it dominates, so these are
//! pruned instead of explored and then superseded. The depth-first search
//! has no such order: on a history that is not linearizable, it followed a
//! crashed write's detour down the rest of the history and then swept the
//! same stretch again without it, once per detour.
//!
//! Within a layer the search is depth first over `:ok` calls only, with the
//! layer's crashed calls fixed; a crashed call that could be taken from a
//! configuration makes a seed of the next layer. Configurations are kept
//! explicitly (state, watermark, linearized `:ok` calls above it, crashed
//! set), and the calls that could go next are found by scanning the events
//! from the watermark's invocation to the first return of a call not yet
//! linearized.

use super::calls::Event;
use super::search::{Budget, Crashed, Ended, Found, Memo};
use super::spec::{step, Action, INITIAL};

const NIL: u32 = u32::MAX;

/// Mixes `x` into the hash `h`.
#[inline]
fn mix(h: u64, x: u32) -> u64 {
    let z = (h ^ x as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z ^ (z >> 29)
}

fn key_hash(state: u32, watermark: u32, above: &[u32]) -> u64 {
    let mut h = mix(mix(0x243f_6a88_85a3_08d3, state), watermark);
    for &a in above {
        h = mix(h, a);
    }
    h ^ (h >> 32)
}

/// A configuration in the depth-first search of a layer.
struct Frame {
    state: u32,
    watermark: u32,
    /// Its linearized `:ok` calls above the watermark (`:ok` numbers,
    /// ascending), in `above`.
    above: (u32, u32),
    /// Its `:ok` calls that could go next, in `cands`: the next to try and
    /// the end.
    cand: (u32, u32),
}

/// See the module's doc. Same contract as [`super::search::search`].
pub fn layered(
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
    // `:ok` calls numbered in invocation order; crashed calls likewise, and
    // grouped by action (those of one action are interchangeable: only
    // the earliest not linearized may be). A crashed call that cannot
    // change the state (a CAS from a value to itself) never helps.
    let crashed = Crashed::new(actions, events, finite);
    let mut part = crashed.bit.clone();
    let mut oks: Vec<u32> = Vec::new();
    let mut groups: Vec<Vec<u32>> = Vec::new();
    let mut group_of: rustc_hash::FxHashMap<Action, usize> = Default::default();
    for e in &events[..finite] {
        if let Event::Call(c) = *e {
            let ci = c as usize;
            if (ret[ci] as usize) < finite {
                part[ci] = oks.len() as u32;
                oks.push(c);
            } else {
                if matches!(actions[ci], Action::Cas(a, b) if a == b) {
                    continue;
                }
                let g = *group_of.entry(actions[ci]).or_insert_with(|| {
                    groups.push(Vec::new());
                    groups.len() - 1
                });
                groups[g].push(c);
            }
        }
    }
    let n_oks = oks.len() as u32;
    let width = crashed.width;
    let mut memo = Memo::new(&crashed);
    let is_ok = |c: u32| (ret[c as usize] as usize) < finite;

    // Seeds of the current and the next layer: [state, watermark, last,
    // n, above...] and the crashed set, `width` words.
    let mut seeds: Vec<u32> = vec![INITIAL, 0, NIL, 0];
    let mut seed_sets: Vec<u64> = vec![0; width];
    let mut next_seeds: Vec<u32> = Vec::new();
    let mut next_sets: Vec<u64> = Vec::new();

    let mut frames: Vec<Frame> = Vec::new();
    let mut above: Vec<u32> = Vec::new();
    let mut cands: Vec<u32> = Vec::new();
    let mut set: Vec<u64> = vec![0; width];
    // How many of each group's calls the layer's set holds.
    let mut taken: Vec<u32> = vec![0; groups.len()];
    let mut furthest: Option<u32> = None;
    let mut ticks = 4095u32;
    let mut bits: Vec<u64> = vec![0; n.div_ceil(64).max(1)];

    while !seeds.is_empty() {
        let (mut i, mut s) = (0usize, 0usize);
        while i < seeds.len() {
            let (state, watermark, last, k) = (seeds[i], seeds[i + 1], seeds[i + 2], seeds[i + 3]);
            let seed_above = &seeds[i + 4..i + 4 + k as usize];
            i += 4 + k as usize;
            set.copy_from_slice(&seed_sets[s..s + width]);
            s += width;
            let h = key_hash(state, watermark, seed_above);
            if !memo.insert(h, state, watermark, seed_above, &set) {
                continue;
            }
            for (g, calls) in groups.iter().enumerate() {
                taken[g] = calls
                    .iter()
                    .take_while(|&&c| {
                        let p = part[c as usize] as usize;
                        set[p / 64] & (1 << (p % 64)) != 0
                    })
                    .count() as u32;
            }
            above.clear();
            above.extend_from_slice(seed_above);
            cands.clear();
            frames.clear();
            let mut config = Some((state, watermark, (0u32, k), last));
            // Depth first over the layer's configurations from the seed.
            loop {
                ticks = ticks.wrapping_add(1);
                if ticks.is_multiple_of(4096) {
                    if budget.out_of_time() {
                        return Ended::OutOfBudget;
                    }
                    let words = memo.words()
                        + (seeds.len() + next_seeds.len() + above.len() + cands.len()) / 2
                        + seed_sets.len()
                        + next_sets.len()
                        + frames.len() * 3;
                    if words > budget.max_words {
                        budget.spent = Some("memory limit".into());
                        return Ended::OutOfBudget;
                    }
                }
                if let Some((state, watermark, (a, k), last)) = config.take() {
                    // Expand the configuration: its :ok calls that could go
                    // next, seeds of the next layer, or a linearization.
                    let lin = |above: &[u32], p: u32| {
                        p < watermark || above[a as usize..(a + k) as usize].contains(&p)
                    };
                    let c0 = cands.len() as u32;
                    let stop = if watermark == n_oks {
                        bits.fill(0);
                        for c in 0..n as u32 {
                            let p = part[c as usize] as usize;
                            if p != NIL as usize && (is_ok(c) || set[p / 64] & (1 << (p % 64)) != 0)
                            {
                                bits[c as usize / 64] |= 1 << (c % 64);
                            }
                        }
                        if visit(Found {
                            state,
                            last: (last != NIL).then_some(last),
                            bits: &bits,
                        }) {
                            return Ended::Stopped;
                        }
                        events.len()
                    } else {
                        let mut slot = inv[oks[watermark as usize] as usize] as usize;
                        loop {
                            match events[slot] {
                                Event::Call(c) if is_ok(c) && !lin(&above, part[c as usize]) => {
                                    cands.push(c)
                                }
                                Event::Return(c) if !lin(&above, part[c as usize]) => break,
                                _ => {}
                            }
                            slot += 1;
                        }
                        furthest = furthest.max(Some(slot as u32));
                        slot
                    };
                    for (g, calls) in groups.iter().enumerate() {
                        let Some(&m) = calls.get(taken[g] as usize) else {
                            continue;
                        };
                        if inv[m as usize] as usize >= stop {
                            continue;
                        }
                        // Taking m is of use only if a call that could
                        // follow does something after it that it would not
                        // do without it: otherwise every configuration past
                        // it is dominated by one without it. At the end of
                        // the history every state counts (the report lists
                        // them).
                        let differs = |s2: u32, x: u32| match step(s2, actions[x as usize]) {
                            Some(t) => step(state, actions[x as usize]) != Some(t),
                            None => false,
                        };
                        let of_use = |s2: u32| {
                            watermark == n_oks
                                || cands[c0 as usize..].iter().any(|&x| differs(s2, x))
                                || groups.iter().enumerate().any(|(g2, calls)| {
                                    let next = taken[g2] + u32::from(g2 == g);
                                    calls.get(next as usize).is_some_and(|&x| {
                                        (inv[x as usize] as usize) < stop && differs(s2, x)
                                    })
                                })
                        };
                        match step(state, actions[m as usize]) {
                            Some(s2) if s2 != state && of_use(s2) => {
                                let p = part[m as usize] as usize;
                                set[p / 64] |= 1 << (p % 64);
                                let ab = &above[a as usize..(a + k) as usize];
                                if !memo.covers(
                                    key_hash(s2, watermark, ab),
                                    s2,
                                    watermark,
                                    ab,
                                    &set,
                                ) {
                                    next_seeds.extend_from_slice(&[s2, watermark, m, k]);
                                    next_seeds.extend_from_slice(ab);
                                    next_sets.extend_from_slice(&set);
                                }
                                set[p / 64] &= !(1 << (p % 64));
                            }
                            _ => {}
                        }
                    }
                    frames.push(Frame {
                        state,
                        watermark,
                        above: (a, k),
                        cand: (c0, cands.len() as u32),
                    });
                }
                // The next :ok call to try from the deepest configuration.
                let Some(f) = frames.last_mut() else { break };
                if f.cand.0 == f.cand.1 {
                    let f = frames.pop().expect("a frame");
                    above.truncate(f.above.0 as usize);
                    cands.truncate(f.cand.0 as usize);
                    continue;
                }
                let c = cands[f.cand.0 as usize];
                f.cand.0 += 1;
                let Some(s2) = step(f.state, actions[c as usize]) else {
                    continue;
                };
                // The child's :ok part: c marked, the watermark raised past
                // what is linearized.
                let (fa, fk) = f.above;
                let p = part[c as usize];
                let a2 = above.len() as u32;
                let mut w2 = f.watermark;
                if p == w2 {
                    w2 += 1;
                    for j in fa..fa + fk {
                        let q = above[j as usize];
                        if q == w2 {
                            w2 += 1;
                        } else {
                            above.push(q);
                        }
                    }
                } else {
                    let mut put = false;
                    for j in fa..fa + fk {
                        let q = above[j as usize];
                        if !put && p < q {
                            above.push(p);
                            put = true;
                        }
                        above.push(q);
                    }
                    if !put {
                        above.push(p);
                    }
                }
                let k2 = above.len() as u32 - a2;
                let ab = &above[a2 as usize..];
                if memo.insert(key_hash(s2, w2, ab), s2, w2, ab, &set) {
                    config = Some((s2, w2, (a2, k2), c));
                } else {
                    above.truncate(a2 as usize);
                }
            }
        }
        std::mem::swap(&mut seeds, &mut next_seeds);
        std::mem::swap(&mut seed_sets, &mut next_sets);
        next_seeds.clear();
        next_sets.clear();
    }
    Ended::Exhausted {
        blocked_at: furthest.map(|slot| match events[slot as usize] {
            Event::Return(c) | Event::Call(c) => c,
        }),
    }
}
