//! No G0 (read uncommitted) and no G0 ∪ G1c on list-append histories whose
//! values repeat ([`Level::ReadUncommitted`], [`Level::NoG1c`]).
//!
//! # What is decided
//!
//! A choice is: which append produced each element of each `ok` read,
//! whether each `info` transaction committed, and the version order of
//! each key's committed blocks (a committed transaction's appends to a key
//! are one block, in program order; a block split by another committed
//! writer is itself a ww cycle, G0). The history has no G0 (resp. no G0
//! and no G1c) iff some choice leaves the graph of ww edges (resp. ww ∪ wr
//! edges) among committed transactions acyclic. Each read stands alone
//! (two reads of a key may see different states: internal anomalies are
//! not prohibited here, and an aborted append once seen may have been
//! rolled back by the next read, so reads need not be prefixes of one
//! another either: `incompatible-order` implies only G1a in the lattice).
//! An element of a read may be produced by:
//! - the committed append of another transaction: the committed elements
//!   a read shows are, in order, a prefix of the key's committed versions
//!   without the reader's own block (committed appends are never rolled
//!   back, and a read sees all that was appended before it), which may end
//!   inside a block (G1b, allowed). The read wr-depends on each of their
//!   writers (as Elle's edge from the writer of the last element does,
//!   through ww, on the earlier ones);
//! - an append of a `fail` or uncommitted `info` transaction: a dirty read
//!   (G1a, allowed here), no edge, wherever it shows;
//! - the reader's own append: a transaction sees its own writes, with no
//!   edge, wherever they show (a read that misplaces them is an internal
//!   anomaly, not prohibited here). For no G1c only an append made before
//!   the read: reading one's own later append is a future read, which the
//!   lattice counts as G1c (a wr self-loop);
//! - nothing, for the copies of a value the read holds more often than the
//!   whole history appended it (a garbage read, or duplicate elements):
//!   read uncommitted prohibits those, but as facts of the reads, found
//!   apart ([`read_fact`]); no G0 and no G1c do not.
//!
//! # Reduction
//!
//! Uncommitted `info` transactions only remove nodes and edges, so every
//! `info` transaction is taken as aborted. An acyclic graph has a
//! topological order π of the `ok` transactions, and each key's versions
//! follow π; conversely π fixes the versions. Given π, each read decides
//! alone: the committed elements it shows can be any prefix of the others'
//! blocks in π order (for no G1c: of those before the reader in π, so
//! that wr follows π) that the read contains as a subsequence, and the
//! longest such prefix is best (each value it covers is one fewer for the
//! other sources, which supply a number of copies of each value, wherever
//! they stand). So: a history passes iff some order π leaves every read
//! *satisfied*: the greedy embedding of the others' blocks in π order
//! covers, value by value, what the read holds beyond its other sources.
//!
//! The problem contains ordering blocks so that they spell a read (which
//! the serial levels solve with SAT), so no polynomial procedure is
//! claimed: the search builds π by depth-first search in completion order,
//! only among transactions that append to a key with an unsatisfied read
//! (the others can go last: they change nothing), refusing a placement
//! that leaves a read unable to be satisfied (its embedding breaks, or the
//! rest of the read lacks a needed value), never placing a reader before
//! its reads are satisfied (no G1c), giving up at once on a state where
//! writers that short reads cannot do without must each precede another's
//! reader in a cycle (no G1c), and remembering the states (placed set and
//! every read's embedding) that lead nowhere. It is exact: a
//! witness is replayed by [`super::witness::check_uncommitted`]; "invalid"
//! only once every order was ruled out; the time limit gives `unknown`.

use super::{verdict, witness, DupAnomaly, DupKind, DupVerdict, Level, Limits};
use crate::anomaly::AnomalyKind;
use crate::graph::{BaseClass, CycleClass, Variant};
use crate::history::{History, KeyId, MopKind, Observed, Outcome, TxnId, ValId};
use crate::model::Validity;
use crate::proof::{NotListAppend, Proof, Reason};
use rustc_hash::{FxHashMap, FxHashSet};
use std::time::{Duration, Instant};

/// A read some choice must explain with other transactions' committed
/// appends: what it holds beyond its other sources.
struct Read {
    txn: TxnId,
    key: u32,
    list: Vec<ValId>,
    /// The values it needs from committed appends, and how many of each.
    vals: Vec<ValId>,
    need: Vec<u32>,
    /// Per position p and needed value i, `suffix[p * vals.len() + i]`:
    /// copies of `vals[i]` in `list[p..]`.
    suffix: Vec<u32>,
}

/// A read's progress: the next position its embedding may use, what it
/// still needs (`unmet` values short), and its contribution to the state
/// hash.
#[derive(Clone)]
struct Progress {
    at: u32,
    unmet: u32,
    need: Vec<u32>,
    hash: u128,
}

/// The history's first read that holds a value more often than the whole
/// history appended it to the key: a garbage read (never appended) or
/// duplicate elements. Read uncommitted prohibits both; every choice has it.
pub fn read_fact(h: &History) -> Option<DupAnomaly> {
    let mut supply: FxHashMap<(KeyId, ValId), usize> = FxHashMap::default();
    for m in &h.mops {
        if let (MopKind::Append, Observed::Scalar(v)) = (m.kind, m.value) {
            *supply.entry((m.key, v)).or_default() += 1;
        }
    }
    let mut count: FxHashMap<ValId, usize> = FxHashMap::default();
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.outcome != Outcome::Ok {
            continue;
        }
        for m in h.mops(t as TxnId) {
            let (MopKind::Read, Some(seen)) = (m.kind, h.list(m.value)) else {
                continue;
            };
            count.clear();
            for &v in seen {
                *count.entry(v).or_default() += 1;
            }
            // The first value of the read that is short.
            let short = seen
                .iter()
                .find(|v| count[v] > supply.get(&(m.key, **v)).copied().unwrap_or(0));
            if let Some(&v) = short {
                let appended = supply.get(&(m.key, v)).copied().unwrap_or(0);
                let kind = if appended == 0 {
                    AnomalyKind::GarbageRead
                } else {
                    AnomalyKind::DuplicateElements
                };
                return Some(DupAnomaly {
                    kind: kind.into(),
                    txns: vec![t as TxnId],
                    keys: vec![m.key],
                    proof: Proof::ReadMoreThanAppended {
                        key: m.key,
                        reader: t as TxnId,
                        read: seen.to_vec(),
                        value: v,
                        read_times: count[&v],
                        appended_times: appended,
                    },
                });
            }
        }
    }
    None
}

/// The verdict for [`Level::ReadUncommitted`] (no G0) or [`Level::NoG1c`]
/// (no G0, no G1c); see the module doc.
pub fn decide(h: &History, level: Level, limits: &Limits) -> DupVerdict {
    let t0 = Instant::now();
    let g1c = level == Level::NoG1c;
    if limits.witness_first {
        if let Some(mut v) = witness_first(h, level, limits) {
            v.elapsed_ms = t0.elapsed().as_secs_f64() * 1e3;
            return v;
        }
    }
    // Each key alone first, with a quarter of the time: a key whose reads
    // no order explains leaves no choice at all, which the whole search
    // would only find after trying every order (see `disagreeing_key`).
    let quarter = limits.left_since(t0, 4);
    let alone = disagreeing_key(h, Instant::now(), &quarter);
    if let Ok(Some(key)) = alone {
        let mut v = verdict(level, Validity::Unknown, Reason::OrdersDisagree { key });
        v.elapsed_ms = t0.elapsed().as_secs_f64() * 1e3;
        return v;
    }
    let rest = limits.left_since(t0, 1);
    let limits = &rest;
    let mut v = match Search::new(h, g1c) {
        Err(r) => verdict(level, Validity::Unknown, r),
        Ok(mut s) => match s.run_both(Instant::now(), limits) {
            Run::Found => {
                let order = s.witness();
                let replay = witness::check_uncommitted(h, &order, g1c);
                super::witnessed(level, order, replay)
            }
            Run::None => match alone.or_else(|_| disagreeing_key(h, Instant::now(), limits)) {
                // Not a cycle: no version order of that key explains its
                // reads, cycles or none.
                Ok(Some(key)) => verdict(level, Validity::Unknown, Reason::OrdersDisagree { key }),
                Ok(None) => {
                    let mut v = verdict(level, Validity::False, Reason::ProofHeadline);
                    v.anomaly = Some(s.finding());
                    v
                }
                Err(steps) => stopped(level, limits, steps),
            },
            Run::Stopped(steps) => stopped(level, limits, steps),
        },
    };
    v.elapsed_ms = t0.elapsed().as_secs_f64() * 1e3;
    v
}

/// `unknown` at the time limit, after `steps` placements.
fn stopped(level: Level, limits: &Limits, steps: u64) -> DupVerdict {
    verdict(
        level,
        Validity::Unknown,
        Reason::TimeInSearch {
            ms: limits.time_ms,
            rounds: Some(steps.min(u32::MAX as u64) as u32),
            conflicts: None,
        },
    )
}

/// After the search found no order: a key whose reads no version order of
/// its own explains (each key searched alone for no G0, where no cycle can
/// form: a key's blocks are totally ordered), or `None` when each key
/// alone is explained, so that what every order breaks is acyclicity: a
/// G0 (or G1c, or future read) is then forced. A key whose reads disagree
/// on the order of committed appends under every choice is what Elle
/// calls `incompatible-order`, which the lattice does not count against
/// read uncommitted (with unique values isolde says read uncommitted holds
/// there): the verdict is then `unknown`, never a G0 that is not one.
/// `Err`: the time limit, with the placements made.
fn disagreeing_key(h: &History, t0: Instant, limits: &Limits) -> Result<Option<KeyId>, u64> {
    let mut keys: Vec<KeyId> = h
        .mops
        .iter()
        .filter(|m| m.kind == MopKind::Read)
        .map(|m| m.key)
        .collect();
    keys.sort_unstable();
    keys.dedup();
    for key in keys {
        let one = only_key(h, key);
        let Ok(mut s) = Search::new(&one, false) else {
            return Ok(Some(key));
        };
        match s.run_both(t0, limits) {
            Run::Found => {}
            Run::None => return Ok(Some(key)),
            Run::Stopped(steps) => return Err(steps),
        }
    }
    Ok(None)
}

/// `h` with only the micro-ops on `key` (the same transactions, ids and
/// outcomes).
fn only_key(h: &History, key: KeyId) -> History {
    let mut one = History {
        txns: Vec::with_capacity(h.txns.len()),
        mops: Vec::new(),
        elems: Vec::new(),
        keys: h.keys.clone(),
        values: h.values.clone(),
        has_invocations: h.has_invocations,
        double_invoke: h.double_invoke,
    };
    for (t, txn) in h.txns.iter().enumerate() {
        let mut txn = txn.clone();
        txn.mops_start = one.mops.len() as u32;
        for m in h.mops(t as TxnId).iter().filter(|m| m.key == key) {
            let mut m = *m;
            if let Some(list) = h.list(m.value) {
                let start = one.elems.len() as u32;
                one.elems.extend_from_slice(list);
                m.value = Observed::List {
                    start,
                    len: list.len() as u32,
                };
            }
            one.mops.push(m);
        }
        txn.mops_len = one.mops.len() as u32 - txn.mops_start;
        one.txns.push(txn);
    }
    one
}

/// A witness without search, if one of these replays: the `ok`
/// transactions in completion order; a read-committed witness (every
/// read-committed execution has no G0 and no G1c), from read committed's
/// own replays and search, given a quarter of the time. `None` leaves the
/// question to the search.
fn witness_first(h: &History, level: Level, limits: &Limits) -> Option<DupVerdict> {
    let g1c = level == Level::NoG1c;
    let mut done: Vec<TxnId> = (0..h.txns.len() as TxnId)
        .filter(|&t| h.txns[t as usize].outcome == Outcome::Ok)
        .collect();
    done.sort_by_key(|&t| (h.txns[t as usize].complete_seq, t));
    let valid = |order: Vec<TxnId>| super::witnessed(level, order, Ok(()));
    if witness::check_uncommitted(h, &done, g1c).is_ok() {
        return Some(valid(done));
    }
    let quarter = Limits {
        time_ms: limits.time_ms / 4,
        ..limits.clone()
    };
    let rc = super::read_committed::decide(h, &quarter);
    let order = rc.witness.filter(|_| rc.valid == Validity::True)?;
    witness::check_uncommitted(h, &order, g1c).ok()?;
    Some(valid(order))
}

enum Run {
    Found,
    None,
    /// The time limit (or a cancel), after this many placements.
    Stopped(u64),
}

/// One depth of the search: the trail length to come back to, the state's
/// hash, its candidates in the order they are tried, and the next one.
struct Frame {
    mark: usize,
    hash: u128,
    cands: Vec<TxnId>,
    next: usize,
}

/// How many candidates a depth scores by the positions they skip.
const WINDOW: usize = 24;

/// Most (short read, writer of its key) pairs the necessity check of no
/// G1c looks at in one state.
const NECESSITY_WORK: usize = 20_000;

/// Most dead states remembered (about 100 MB); past it the search goes on
/// without remembering more.
const MAX_DEAD: usize = 4_000_000;

struct Search {
    /// Judging no G1c (else no G0).
    g1c: bool,
    /// Per `ok` transaction: its blocks (key index, values in program
    /// order), and its reads that need committed appends.
    blocks: Vec<Vec<(u32, Vec<ValId>)>>,
    reads_of: Vec<Vec<u32>>,
    reads: Vec<Read>,
    /// Per key index: its reads that need committed appends, and its `ok`
    /// writers.
    by_key: Vec<Vec<u32>>,
    writers_of: Vec<Vec<TxnId>>,
    keys: Vec<KeyId>,
    /// The transactions a placement may matter for, in completion order.
    cands: Vec<TxnId>,
    /// Every `ok` transaction, in completion order.
    all_ok: Vec<TxnId>,
    prog: Vec<Progress>,
    /// Per key index: its reads still short.
    unsat_by_key: Vec<u32>,
    unsat: u32,
    placed: Vec<bool>,
    order: Vec<TxnId>,
    zobrist: Vec<u128>,
    /// Per read: the seed of its progress's hash.
    seeds: Vec<u128>,
    hash: u128,
    /// Undo log: (read, its progress before), or `u32::MAX` for a
    /// placement.
    trail: Vec<(u32, Progress)>,
    dead: FxHashSet<u128>,
    /// Reads that refused a placement (for the finding), first ones.
    blamed: Vec<u32>,
    /// The reads left short at the first dead end (for the finding).
    stuck: Vec<u32>,
    /// Positions of reads the last placement's embeddings skipped.
    skip: u64,
    /// The reads of the last necessity cycle found (for the finding).
    cycle_reads: Vec<u32>,
}

/// A 128-bit mix of a read's progress.
fn mix(seed: u128, p: &Progress) -> u128 {
    let mut x = seed ^ ((p.at as u128) << 64) ^ p.unmet as u128;
    for &n in &p.need {
        x = (x ^ n as u128).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835);
        x ^= x >> 61;
    }
    x.wrapping_mul(0xD6E8_FEB8_6659_FD93_2B0E_5C1D_A2C6_2F11)
}

impl Search {
    fn new(h: &History, g1c: bool) -> Result<Search, Reason> {
        let nt = h.txns.len();
        let mut key_ix: FxHashMap<KeyId, u32> = FxHashMap::default();
        let mut keys: Vec<KeyId> = Vec::new();
        let mut ix = |k: KeyId, keys: &mut Vec<KeyId>| -> u32 {
            *key_ix.entry(k).or_insert_with(|| {
                keys.push(k);
                keys.len() as u32 - 1
            })
        };
        // Every append of each value (`supply`), and those that did not
        // commit (`loose`: `fail` and `info`).
        let mut supply: FxHashMap<(KeyId, ValId), u32> = FxHashMap::default();
        let mut loose: FxHashMap<(KeyId, ValId), u32> = FxHashMap::default();
        let mut blocks: Vec<Vec<(u32, Vec<ValId>)>> = vec![Vec::new(); nt];
        for (t, txn) in h.txns.iter().enumerate() {
            for m in h.mops(t as TxnId) {
                match (m.kind, m.value) {
                    (MopKind::Append, Observed::Scalar(v)) => {
                        *supply.entry((m.key, v)).or_default() += 1;
                        if txn.outcome != Outcome::Ok {
                            *loose.entry((m.key, v)).or_default() += 1;
                            continue;
                        }
                        let k = ix(m.key, &mut keys);
                        match blocks[t].iter_mut().find(|(bk, _)| *bk == k) {
                            Some((_, b)) => b.push(v),
                            None => blocks[t].push((k, vec![v])),
                        }
                    }
                    (MopKind::Append, _) => {
                        return Err(Reason::NotListAppend {
                            txn: t as TxnId,
                            what: NotListAppend::CompoundAppend,
                        })
                    }
                    (MopKind::Write, _) => {
                        return Err(Reason::NotListAppend {
                            txn: t as TxnId,
                            what: NotListAppend::RegisterWrite,
                        })
                    }
                    (MopKind::Read, Observed::Scalar(_)) if txn.outcome == Outcome::Ok => {
                        return Err(Reason::NotListAppend {
                            txn: t as TxnId,
                            what: NotListAppend::ScalarRead,
                        })
                    }
                    (MopKind::Read, _) => {}
                }
            }
        }
        let mut reads: Vec<Read> = Vec::new();
        let mut reads_of: Vec<Vec<u32>> = vec![Vec::new(); nt];
        let mut count: FxHashMap<ValId, u32> = FxHashMap::default();
        for (t, txn) in h.txns.iter().enumerate() {
            if txn.outcome != Outcome::Ok {
                continue;
            }
            let mops = h.mops(t as TxnId);
            for (i, m) in mops.iter().enumerate() {
                let (MopKind::Read, Some(seen)) = (m.kind, h.list(m.value)) else {
                    continue;
                };
                count.clear();
                for &v in seen {
                    *count.entry(v).or_default() += 1;
                }
                // Other sources: appends that did not commit, the copies
                // nobody appended, the reader's own appends (before the
                // read, for no G1c).
                for (&v, n) in count.iter_mut() {
                    let all = supply.get(&(m.key, v)).copied().unwrap_or(0);
                    let free = loose.get(&(m.key, v)).copied().unwrap_or(0);
                    *n = (*n).min(all).saturating_sub(free);
                }
                for (j, o) in mops.iter().enumerate() {
                    if let (MopKind::Append, Observed::Scalar(v), true) =
                        (o.kind, o.value, o.key == m.key)
                    {
                        if !g1c || j < i {
                            if let Some(n) = count.get_mut(&v) {
                                *n = n.saturating_sub(1);
                            }
                        }
                    }
                }
                let mut vals: Vec<ValId> = count
                    .iter()
                    .filter(|(_, &n)| n > 0)
                    .map(|(&v, _)| v)
                    .collect();
                if vals.is_empty() {
                    continue;
                }
                vals.sort_unstable();
                let need: Vec<u32> = vals.iter().map(|v| count[v]).collect();
                let nv = vals.len();
                let mut suffix = vec![0u32; (seen.len() + 1) * nv];
                for p in (0..seen.len()).rev() {
                    for i in 0..nv {
                        suffix[p * nv + i] = suffix[(p + 1) * nv + i] + (seen[p] == vals[i]) as u32;
                    }
                }
                let key = ix(m.key, &mut keys);
                reads_of[t].push(reads.len() as u32);
                reads.push(Read {
                    txn: t as TxnId,
                    key,
                    list: seen.to_vec(),
                    vals,
                    need,
                    suffix,
                });
            }
        }
        let mut writers_of: Vec<Vec<TxnId>> = vec![Vec::new(); keys.len()];
        for (t, bs) in blocks.iter().enumerate() {
            for (k, _) in bs {
                writers_of[*k as usize].push(t as TxnId);
            }
        }
        let mut by_key: Vec<Vec<u32>> = vec![Vec::new(); keys.len()];
        for (r, read) in reads.iter().enumerate() {
            by_key[read.key as usize].push(r as u32);
        }
        let mut rng = crate::rng::Rng::new(0x5EED_0F1C_0A5E_ED0F);
        let mut wide = || ((rng.next_u64() as u128) << 64) | rng.next_u64() as u128;
        let zobrist: Vec<u128> = (0..nt).map(|_| wide()).collect();
        let seeds: Vec<u128> = (0..reads.len()).map(|_| wide()).collect();
        let mut hash = 0u128;
        let prog: Vec<Progress> = reads
            .iter()
            .zip(&seeds)
            .map(|(r, &seed)| {
                let mut p = Progress {
                    at: 0,
                    unmet: r.need.len() as u32,
                    need: r.need.clone(),
                    hash: 0,
                };
                p.hash = mix(seed, &p);
                hash ^= p.hash;
                p
            })
            .collect();
        let mut unsat_by_key = vec![0u32; keys.len()];
        for r in &reads {
            unsat_by_key[r.key as usize] += 1;
        }
        let when = |t: TxnId| (h.txns[t as usize].complete_seq.unwrap_or(u64::MAX), t);
        let mut all_ok: Vec<TxnId> = (0..nt as TxnId)
            .filter(|&t| h.txns[t as usize].outcome == Outcome::Ok)
            .collect();
        all_ok.sort_by_key(|&t| when(t));
        let cands: Vec<TxnId> = all_ok
            .iter()
            .copied()
            .filter(|&t| {
                blocks[t as usize]
                    .iter()
                    .any(|(k, _)| !by_key[*k as usize].is_empty())
            })
            .collect();
        Ok(Search {
            g1c,
            seeds,
            blocks,
            reads_of,
            unsat: reads.len() as u32,
            reads,
            by_key,
            writers_of,
            keys,
            cands,
            all_ok,
            prog,
            unsat_by_key,
            placed: vec![false; nt],
            order: Vec::new(),
            zobrist,
            hash,
            trail: Vec::new(),
            dead: FxHashSet::default(),
            blamed: Vec::new(),
            stuck: Vec::new(),
            skip: 0,
            cycle_reads: Vec::new(),
        })
    }

    /// Whether placing `t` now could change anything: it appends to a key
    /// that another transaction's read still needs.
    fn matters(&self, t: TxnId) -> bool {
        self.blocks[t as usize].iter().any(|(k, _)| {
            let own = self.reads_of[t as usize]
                .iter()
                .filter(|&&r| self.reads[r as usize].key == *k && self.prog[r as usize].unmet > 0)
                .count() as u32;
            self.unsat_by_key[*k as usize] > own
        })
    }

    /// For no G1c: whether `t`'s reads are satisfied (placing it ends them).
    fn ready(&self, t: TxnId) -> bool {
        self.reads_of[t as usize]
            .iter()
            .all(|&r| self.prog[r as usize].unmet == 0)
    }

    /// Places `t` next in the order; false (to be undone) when a read it
    /// appends to can no longer be satisfied.
    fn place(&mut self, t: TxnId) -> bool {
        self.placed[t as usize] = true;
        self.order.push(t);
        self.hash ^= self.zobrist[t as usize];
        self.trail.push((u32::MAX, Progress::empty()));
        for bi in 0..self.blocks[t as usize].len() {
            let k = self.blocks[t as usize][bi].0;
            for ri in 0..self.by_key[k as usize].len() {
                let r = self.by_key[k as usize][ri];
                let read = &self.reads[r as usize];
                if read.txn == t || self.prog[r as usize].unmet == 0 {
                    continue;
                }
                let old = self.prog[r as usize].clone();
                let mut p = old.clone();
                let block = &self.blocks[t as usize][bi].1;
                let mut broken = false;
                for &v in block {
                    match read.list[p.at as usize..].iter().position(|&x| x == v) {
                        Some(off) => {
                            p.at += off as u32 + 1;
                            self.skip += off as u64;
                            if let Ok(i) = read.vals.binary_search(&v) {
                                if p.need[i] > 0 {
                                    p.need[i] -= 1;
                                    if p.need[i] == 0 {
                                        p.unmet -= 1;
                                        if p.unmet == 0 {
                                            break;
                                        }
                                    }
                                }
                            }
                        }
                        None => {
                            broken = true;
                            break;
                        }
                    }
                }
                let nv = read.vals.len();
                let short = p.unmet > 0
                    && (broken
                        || p.need
                            .iter()
                            .enumerate()
                            .any(|(i, &n)| n > read.suffix[p.at as usize * nv + i]));
                self.hash ^= old.hash;
                p.hash = mix(self.seeds[r as usize], &p);
                self.hash ^= p.hash;
                if p.unmet == 0 {
                    self.unsat -= 1;
                    self.unsat_by_key[k as usize] -= 1;
                }
                self.prog[r as usize] = p;
                self.trail.push((r, old));
                if short {
                    if self.blamed.len() < 16 && !self.blamed.contains(&r) {
                        self.blamed.push(r);
                    }
                    return false;
                }
            }
        }
        true
    }

    /// Undoes placements and read progress back to trail length `mark`.
    fn undo_to(&mut self, mark: usize) {
        while self.trail.len() > mark {
            let (r, old) = self.trail.pop().expect("above the mark");
            if r == u32::MAX {
                let t = self.order.pop().expect("a placement");
                self.placed[t as usize] = false;
                self.hash ^= self.zobrist[t as usize];
                continue;
            }
            let cur = &self.prog[r as usize];
            if cur.unmet == 0 && old.unmet > 0 {
                self.unsat += 1;
                self.unsat_by_key[self.reads[r as usize].key as usize] += 1;
            }
            self.hash ^= cur.hash ^ old.hash;
            self.prog[r as usize] = old;
        }
    }

    /// Depth-first search for an order that satisfies every read, until
    /// `deadline`. Each depth tries its candidates (transactions whose
    /// placement matters and, for no G1c, whose reads are satisfied) in
    /// completion order; with `tight`, first the ones among the first
    /// [`WINDOW`] whose blocks embed skipping the fewest positions of the
    /// reads (a skipped position must come from elsewhere: where commits
    /// and completions disagree, the right next writer usually skips none).
    /// Every candidate is tried before a depth gives up, so the order of
    /// trials changes the time, not the answer.
    fn run(&mut self, deadline: Instant, limits: &Limits, tight: bool) -> Run {
        let window = if tight { WINDOW } else { 0 };
        let mut steps: u64 = 0;
        let mut frames: Vec<Frame> = Vec::new();
        let mut descend = true;
        loop {
            if descend {
                if self.unsat == 0 {
                    return Run::Found;
                }
                let hopeless = self.dead.contains(&self.hash) || self.g1c && self.necessity_cycle();
                if hopeless && self.stuck.is_empty() {
                    self.stuck = self.cycle_reads.clone();
                }
                if !hopeless {
                    let mark = self.trail.len();
                    let mut cands: Vec<TxnId> = Vec::new();
                    let mut scored: Vec<(u64, TxnId)> = Vec::new();
                    for i in 0..self.cands.len() {
                        let t = self.cands[i];
                        if self.placed[t as usize]
                            || !self.matters(t)
                            || (self.g1c && !self.ready(t))
                        {
                            continue;
                        }
                        if scored.len() < window {
                            // Tried now: a candidate that fails here is dropped.
                            steps += 1;
                            self.skip = 0;
                            if self.place(t) {
                                scored.push((self.skip, t));
                            }
                            self.undo_to(mark);
                        } else {
                            cands.push(t);
                        }
                    }
                    scored.sort_by_key(|&(cost, _)| cost);
                    let mut list: Vec<TxnId> = scored.into_iter().map(|(_, t)| t).collect();
                    list.extend(cands);
                    frames.push(Frame {
                        mark,
                        hash: self.hash,
                        cands: list,
                        next: 0,
                    });
                }
            }
            let Some(f) = frames.last_mut() else {
                return Run::None;
            };
            let mark = f.mark;
            self.undo_to(mark);
            let mut found = false;
            while f.next < f.cands.len() {
                let t = f.cands[f.next];
                f.next += 1;
                steps += 1;
                if steps.is_multiple_of(256) && (Instant::now() >= deadline || limits.cancelled()) {
                    return Run::Stopped(steps);
                }
                if self.place(t) {
                    found = true;
                    break;
                }
                self.undo_to(mark);
            }
            if found {
                descend = true;
                continue;
            }
            if self.stuck.is_empty() {
                // The first dead end: the reads left short there.
                self.stuck = (0..self.reads.len() as u32)
                    .filter(|&r| self.prog[r as usize].unmet > 0)
                    .take(16)
                    .collect();
            }
            let f = frames.pop().expect("a frame");
            if self.dead.len() < MAX_DEAD {
                self.dead.insert(f.hash);
            }
            descend = false;
        }
    }

    /// For no G1c: whether the unplaced transactions must each precede
    /// another in a cycle. A writer is necessary to a short read when the
    /// other unplaced writers of its key cannot supply what it needs
    /// without it; a reader is placed only once its reads are satisfied,
    /// so a necessary writer precedes the reader. Skipped (false) when the
    /// reads left short would cost more than [`NECESSITY_WORK`] to look at.
    fn necessity_cycle(&mut self) -> bool {
        let short: Vec<u32> = (0..self.reads.len() as u32)
            .filter(|&r| self.prog[r as usize].unmet > 0)
            .collect();
        let work: usize = short
            .iter()
            .map(|&r| self.writers_of[self.reads[r as usize].key as usize].len())
            .sum();
        if work > NECESSITY_WORK {
            return false;
        }
        let mut edges: Vec<(u32, u32)> = Vec::new();
        let mut from: Vec<u32> = Vec::new();
        for &r in &short {
            let read = &self.reads[r as usize];
            let p = &self.prog[r as usize];
            let ws = &self.writers_of[read.key as usize];
            for (i, &v) in read.vals.iter().enumerate() {
                if p.need[i] == 0 {
                    continue;
                }
                let count = |w: TxnId| -> u32 {
                    self.blocks[w as usize]
                        .iter()
                        .find(|(k, _)| *k == read.key)
                        .map_or(0, |(_, b)| b.iter().filter(|&&x| x == v).count() as u32)
                };
                let open = |w: TxnId| w != read.txn && !self.placed[w as usize];
                let avail: u32 = ws.iter().filter(|&&w| open(w)).map(|&w| count(w)).sum();
                for &w in ws.iter().filter(|&&w| open(w)) {
                    if avail - count(w) < p.need[i] {
                        edges.push((w, read.txn));
                        from.push(r);
                    }
                }
            }
        }
        if edges.is_empty() {
            return false;
        }
        match super::dag::topo_order(self.placed.len(), &edges) {
            Ok(_) => false,
            Err(cycle) => {
                // The reads whose necessary writers close the cycle.
                let mut reads: Vec<u32> = cycle.iter().map(|&e| from[e]).collect();
                reads.sort_unstable();
                reads.dedup();
                reads.truncate(16);
                self.cycle_reads = reads;
                true
            }
        }
    }

    /// [`Search::run`] in turns, in completion order then with `tight`
    /// trials, each turn with twice the time of the previous pair (from
    /// 20 ms), keeping the dead states found (dead whatever the order of
    /// trials): whichever order suits the history finds its witness soon.
    fn run_both(&mut self, t0: Instant, limits: &Limits) -> Run {
        // A read that needs more copies of a value than the others' `ok`
        // appends hold is never satisfied (for no G1c: only the reader's
        // own later append, a future read, could supply it).
        let mut supply: FxHashMap<(u32, ValId, TxnId), u32> = FxHashMap::default();
        let mut total: FxHashMap<(u32, ValId), u32> = FxHashMap::default();
        for (t, blocks) in self.blocks.iter().enumerate() {
            for (k, b) in blocks {
                for &v in b {
                    *supply.entry((*k, v, t as TxnId)).or_default() += 1;
                    *total.entry((*k, v)).or_default() += 1;
                }
            }
        }
        for (r, read) in self.reads.iter().enumerate() {
            let short = read.vals.iter().zip(&read.need).any(|(&v, &n)| {
                let all = total.get(&(read.key, v)).copied().unwrap_or(0);
                let own = supply.get(&(read.key, v, read.txn)).copied().unwrap_or(0);
                n > all - own
            });
            if short {
                self.stuck = vec![r as u32];
                return Run::None;
            }
        }
        let end = t0 + Duration::from_millis(limits.time_ms);
        let mut slice = Duration::from_millis(20);
        let mut steps = 0;
        for tight in [false, true].into_iter().cycle() {
            let stop = (Instant::now() + slice).min(end);
            self.undo_to(0);
            match self.run(stop, limits, tight) {
                Run::Stopped(n) => steps += n,
                r => return r,
            }
            if Instant::now() >= end || limits.cancelled() {
                break;
            }
            if tight {
                slice *= 2;
            }
        }
        Run::Stopped(steps)
    }

    /// The witness: the order found, then every other `ok` transaction in
    /// completion order (they change no read's fate).
    fn witness(&self) -> Vec<TxnId> {
        let mut order = self.order.clone();
        order.extend(
            self.all_ok
                .iter()
                .copied()
                .filter(|&t| !self.placed[t as usize]),
        );
        order
    }

    /// Every order leaves some read unexplained: every choice closes a
    /// cycle (ww for no G0; ww ∪ wr for no G1c).
    fn finding(&self) -> DupAnomaly {
        let mut keys: Vec<KeyId> = Vec::new();
        let mut txns: Vec<TxnId> = Vec::new();
        // The reads that refused a placement, else those left short where
        // the search first got stuck.
        let blamed = if self.blamed.is_empty() {
            &self.stuck
        } else {
            &self.blamed
        };
        for &r in blamed {
            let read = &self.reads[r as usize];
            keys.push(self.keys[read.key as usize]);
            txns.push(read.txn);
        }
        keys.sort_unstable();
        keys.dedup();
        txns.sort_unstable();
        txns.dedup();
        let base = if self.g1c {
            BaseClass::G1c
        } else {
            BaseClass::G0
        };
        DupAnomaly {
            kind: DupKind::Cycle(CycleClass::new(base, Variant::Plain)),
            txns: txns.clone(),
            keys: keys.clone(),
            proof: Proof::EveryChoiceCycles {
                repeats: true,
                keys,
                txns: txns.into_iter().take(24).collect(),
                example: None,
            },
        }
    }
}

impl Progress {
    fn empty() -> Progress {
        Progress {
            at: 0,
            unmet: 0,
            need: Vec::new(),
            hash: 0,
        }
    }
}
