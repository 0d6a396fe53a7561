//! An independent brute-force oracle for small read-write register
//! histories, written from the definitions and sharing no code with `src/`
//! (nor with the list-append oracle beside it).
//!
//! A history is *serializable* iff some subset of its `info` transactions,
//! with all its `ok` transactions, has an order whose serial execution from
//! the initial state (every key nil) makes every read of every `ok`
//! transaction return what it returned: the transaction's own latest write
//! to the key if it wrote it, else the key's latest committed value.
//! *Strict*: also a transaction that completed before another was invoked
//! comes first. *Snapshot isolation*: each transaction reads the state after
//! some prefix of the commit order (up to its own commit) plus its own
//! writes, and two transactions that write a common key never overlap
//! (first committer wins). `fail` transactions never take effect; reads of
//! `info` and `fail` transactions are ignored. The search is a DFS over
//! orders that stops extending an order as soon as one read disagrees.
//!
//! [`gen`] builds random small histories by running transactions on a tiny
//! database (serial, snapshot, read committed), with blind writes,
//! repeated values, `info`/`fail` outcomes and corrupted reads.

use std::collections::HashSet;
use std::fmt::Write as _;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Fail,
    Info,
}

/// `Write(key, value)` or `Read(key, value)`, `None` = nil.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mop {
    Write(usize, u32),
    Read(usize, Option<u32>),
}

#[derive(Clone, Debug)]
pub struct Txn {
    pub process: u32,
    pub outcome: Outcome,
    pub mops: Vec<Mop>,
    /// Event positions of invocation and completion (`None`: never completed).
    pub invoke: u32,
    pub complete: Option<u32>,
}

#[derive(Clone, Debug, Default)]
pub struct Hist {
    pub keys: usize,
    pub txns: Vec<Txn>,
}

const KEY_NAMES: [&str; 4] = [":x", ":y", ":z", ":w"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    Serializable,
    StrictSerializable,
    SnapshotIsolation,
}

impl Hist {
    /// Jepsen EDN, one op per line in event order; `info`/`fail`
    /// completions carry nil reads, as Jepsen clients record them.
    pub fn to_edn(&self) -> String {
        let mut events: Vec<(u32, usize, bool)> = Vec::new();
        for (i, t) in self.txns.iter().enumerate() {
            events.push((t.invoke, i, true));
            if let Some(c) = t.complete {
                events.push((c, i, false));
            }
        }
        events.sort();
        let mut out = String::new();
        for (index, &(_, i, invocation)) in events.iter().enumerate() {
            let t = &self.txns[i];
            let ty = match (invocation, t.outcome) {
                (true, _) => "invoke",
                (false, Outcome::Ok) => "ok",
                (false, Outcome::Fail) => "fail",
                (false, Outcome::Info) => "info",
            };
            let blank = invocation || t.outcome != Outcome::Ok;
            let _ = write!(
                out,
                "{{:index {index}, :time {}, :type :{ty}, :process {}, :f :txn, :value [",
                index * 10,
                t.process
            );
            for (j, m) in t.mops.iter().enumerate() {
                if j > 0 {
                    out.push(' ');
                }
                match m {
                    Mop::Write(k, v) => {
                        let _ = write!(out, "[:w {} {v}]", KEY_NAMES[*k]);
                    }
                    Mop::Read(k, v) => match v {
                        Some(v) if !blank => {
                            let _ = write!(out, "[:r {} {v}]", KEY_NAMES[*k]);
                        }
                        _ => {
                            let _ = write!(out, "[:r {} nil]", KEY_NAMES[*k]);
                        }
                    },
                }
            }
            out.push_str("]}\n");
        }
        out
    }

    /// The oracle's transaction for each invocation event position (to map
    /// a parsed history's transactions back by their invocation index).
    pub fn by_invoke_rank(&self) -> Vec<usize> {
        let mut events: Vec<(u32, usize)> = Vec::new();
        for (i, t) in self.txns.iter().enumerate() {
            events.push((t.invoke, i));
            if let Some(c) = t.complete {
                events.push((c, usize::MAX - i));
            }
        }
        events.sort();
        events.iter().map(|e| e.1).collect()
    }
}

fn must_precede(a: &Txn, b: &Txn, model: Model) -> bool {
    model == Model::StrictSerializable
        && a.outcome == Outcome::Ok
        && a.complete.is_some_and(|c| c < b.invoke)
}

/// Do `t`'s reads match on top of `state` (plus its own writes)?
pub fn reads_match(t: &Txn, state: &[Option<u32>]) -> bool {
    let mut cur = state.to_vec();
    for m in &t.mops {
        match m {
            Mop::Write(k, v) => cur[*k] = Some(*v),
            Mop::Read(k, v) => {
                if cur[*k] != *v {
                    return false;
                }
            }
        }
    }
    true
}

fn apply(t: &Txn, state: &mut [Option<u32>]) {
    for m in &t.mops {
        if let Mop::Write(k, v) = m {
            state[*k] = Some(*v);
        }
    }
}

fn write_keys(t: &Txn) -> u64 {
    t.mops.iter().fold(0, |acc, m| match m {
        Mop::Write(k, _) => acc | 1 << k,
        Mop::Read(..) => acc,
    })
}

struct Search<'a> {
    h: &'a Hist,
    candidates: Vec<usize>,
    needed: u64,
    preds: Vec<u64>,
    dead: HashSet<(u64, Vec<Option<u32>>)>,
    order: Vec<usize>,
    /// Snapshot isolation: states after each prefix of `order`, and the
    /// snapshot chosen for each entry.
    prefixes: Vec<Vec<Option<u32>>>,
    snaps: Vec<usize>,
}

impl Search<'_> {
    fn serial(&mut self, placed: u64, state: &mut Vec<Option<u32>>) -> bool {
        if placed & self.needed == self.needed {
            return true;
        }
        if self.dead.contains(&(placed, state.clone())) {
            return false;
        }
        for ci in 0..self.candidates.len() {
            let t = self.candidates[ci];
            let bit = 1u64 << t;
            if placed & bit != 0 || self.preds[t] & !placed != 0 {
                continue;
            }
            let txn = &self.h.txns[t];
            if txn.outcome == Outcome::Ok && !reads_match(txn, state) {
                continue;
            }
            let before = state.clone();
            apply(txn, state);
            self.order.push(t);
            if self.serial(placed | bit, state) {
                return true;
            }
            self.order.pop();
            *state = before;
        }
        self.dead.insert((placed, state.clone()));
        false
    }

    fn snapshot(&mut self, placed: u64) -> bool {
        if placed & self.needed == self.needed {
            return true;
        }
        let p = self.order.len();
        for ci in 0..self.candidates.len() {
            let t = self.candidates[ci];
            let bit = 1u64 << t;
            if placed & bit != 0 {
                continue;
            }
            let txn = &self.h.txns[t];
            let w = write_keys(txn);
            let lo = (0..p)
                .rev()
                .find(|&q| write_keys(&self.h.txns[self.order[q]]) & w != 0)
                .map_or(0, |q| q + 1);
            let snap = if txn.outcome != Outcome::Ok {
                Some(p)
            } else {
                (lo..=p).find(|&s| reads_match(txn, &self.prefixes[s]))
            };
            let Some(snap) = snap else { continue };
            // Any snapshot that explains the reads will do: the state after
            // the commit does not depend on which one.
            let mut next = self.prefixes[p].clone();
            apply(txn, &mut next);
            self.prefixes.push(next);
            self.order.push(t);
            self.snaps.push(snap);
            if self.snapshot(placed | bit) {
                return true;
            }
            self.order.pop();
            self.snaps.pop();
            self.prefixes.pop();
        }
        false
    }
}

/// A witness: the order (indices into `h.txns`) and, for snapshot
/// isolation, each entry's snapshot (commits before it that it sees).
pub fn witness(h: &Hist, model: Model) -> Option<(Vec<usize>, Vec<usize>)> {
    assert!(h.txns.len() <= 16, "oracle is exhaustive: keep it tiny");
    let n = h.txns.len();
    let candidates: Vec<usize> = (0..n)
        .filter(|&i| h.txns[i].outcome != Outcome::Fail)
        .collect();
    let needed = (0..n)
        .filter(|&i| h.txns[i].outcome == Outcome::Ok)
        .fold(0u64, |m, i| m | 1 << i);
    let preds = (0..n)
        .map(|b| {
            (0..n)
                .filter(|&a| a != b && must_precede(&h.txns[a], &h.txns[b], model))
                .fold(0u64, |m, a| m | 1 << a)
        })
        .collect();
    let mut s = Search {
        h,
        candidates,
        needed,
        preds,
        dead: HashSet::new(),
        order: Vec::new(),
        prefixes: vec![vec![None; h.keys]],
        snaps: Vec::new(),
    };
    let found = match model {
        Model::SnapshotIsolation => s.snapshot(0),
        _ => s.serial(0, &mut vec![None; h.keys]),
    };
    found.then_some((s.order, s.snaps))
}

pub fn holds(h: &Hist, model: Model) -> bool {
    witness(h, model).is_some()
}

/// Replays a claimed witness from the definition: `order` holds every `ok`
/// transaction once, no `fail` one; with `snaps` (snapshot isolation) each
/// entry reads the state after that many commits, no earlier than the last
/// commit that wrote a key it writes; strict: real time respected.
pub fn replay(h: &Hist, model: Model, order: &[usize], snaps: &[usize]) -> Result<(), String> {
    let mut seen = vec![false; h.txns.len()];
    for &t in order {
        if t >= h.txns.len() || seen[t] || h.txns[t].outcome == Outcome::Fail {
            return Err(format!("bad entry {t} in {order:?}"));
        }
        seen[t] = true;
    }
    if let Some(t) = (0..h.txns.len()).find(|&t| h.txns[t].outcome == Outcome::Ok && !seen[t]) {
        return Err(format!("ok txn {t} missing from {order:?}"));
    }
    for (i, &a) in order.iter().enumerate() {
        for &b in &order[..i] {
            if must_precede(&h.txns[a], &h.txns[b], model) {
                return Err(format!("{a} must precede {b} in real time"));
            }
        }
    }
    let mut states = vec![vec![None; h.keys]];
    for &t in order {
        let mut next = states.last().expect("initial").clone();
        apply(&h.txns[t], &mut next);
        states.push(next);
    }
    for (p, &t) in order.iter().enumerate() {
        let s = if model == Model::SnapshotIsolation {
            let s = *snaps.get(p).ok_or("missing snapshot")?;
            let w = write_keys(&h.txns[t]);
            let lo = (0..p)
                .filter(|&q| write_keys(&h.txns[order[q]]) & w != 0)
                .map(|q| q + 1)
                .max()
                .unwrap_or(0);
            if s < lo || s > p {
                return Err(format!("snapshot {s} of entry {p} outside {lo}..={p}"));
            }
            s
        } else {
            p
        };
        if h.txns[t].outcome == Outcome::Ok && !reads_match(&h.txns[t], &states[s]) {
            return Err(format!("txn {t} at {p} (snapshot {s}) reads differ"));
        }
    }
    Ok(())
}

/// The levels below snapshot isolation that the register solver decides by
/// placement, from Adya's definitions: some subset of the `info`
/// transactions commits, and some commit order of the committed ones
/// (versions of each key in that order, so `ww` follows it) makes every
/// read's writer precede its reader (so `wr` follows it, and `ww ∪ wr` is
/// acyclic: no G0, no G1c), where a read of an `ok` transaction that does
/// not return a write the transaction made before it saw:
/// - read committed: `nil`, or the last write of another transaction
///   committed before it (a committed, final version: no G1a, no G1b);
/// - no G1c: also an overwritten write of such a transaction, any write of
///   a `fail` transaction (no edge), or a value nobody wrote (a garbage
///   read: G1a, not G1c); never only the reader's own later write (a
///   future read counts as G1c);
/// - read uncommitted (no G0): `nil` or any value some transaction wrote
///   (the order of versions is free, so only `ww` must be acyclic).
///
/// The search tries every set of placed transactions (memoized), not a
/// greedy order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weak {
    ReadUncommitted,
    NoG1c,
    ReadCommitted,
}

/// Does read `(k, v)` of `t` have a source at `w`, with `placed` committed
/// before it? (`own`: `t` wrote `v` to `k` before this read.)
fn read_fine(
    h: &Hist,
    t: usize,
    k: usize,
    v: Option<u32>,
    own: bool,
    placed: u64,
    w: Weak,
) -> bool {
    // `nil` is the initial version, which every level lets a read see; a
    // transaction's own earlier write is its own version (no edge).
    let Some(v) = v else { return true };
    if own {
        return true;
    }
    // (writer, is its last write of k, writer's outcome)
    let mut writes: Vec<(usize, bool, Outcome)> = Vec::new();
    for (u, txn) in h.txns.iter().enumerate() {
        let ws: Vec<u32> = txn
            .mops
            .iter()
            .filter_map(|m| match m {
                Mop::Write(k2, x) if *k2 == k => Some(*x),
                _ => None,
            })
            .collect();
        for (i, &x) in ws.iter().enumerate() {
            if x == v {
                writes.push((u, i + 1 == ws.len(), txn.outcome));
            }
        }
    }
    let before = |u: usize| u != t && placed & (1 << u) != 0;
    match w {
        Weak::ReadUncommitted => !writes.is_empty(),
        Weak::ReadCommitted => writes
            .iter()
            .any(|&(u, last, o)| last && o != Outcome::Fail && before(u)),
        Weak::NoG1c => {
            writes.is_empty()
                || writes
                    .iter()
                    .any(|&(u, _, o)| o == Outcome::Fail || (o != Outcome::Fail && before(u)))
        }
    }
}

/// Are all of `t`'s reads fine with `placed` committed before it?
fn weak_reads_fine(h: &Hist, t: usize, placed: u64, w: Weak) -> bool {
    let txn = &h.txns[t];
    if txn.outcome != Outcome::Ok {
        return true;
    }
    let mut wrote: Vec<(usize, u32)> = Vec::new();
    for m in &txn.mops {
        match m {
            Mop::Write(k, v) => wrote.push((*k, *v)),
            Mop::Read(k, v) => {
                let own = v.is_some_and(|v| wrote.contains(&(*k, v)));
                if !read_fine(h, t, *k, *v, own, placed, w) {
                    return false;
                }
            }
        }
    }
    true
}

/// A commit order witnessing `w`, if there is one.
pub fn weak_witness(h: &Hist, w: Weak) -> Option<Vec<usize>> {
    assert!(h.txns.len() <= 16, "oracle is exhaustive: keep it tiny");
    let n = h.txns.len();
    let needed = (0..n)
        .filter(|&i| h.txns[i].outcome == Outcome::Ok)
        .fold(0u64, |m, i| m | 1 << i);
    fn go(
        h: &Hist,
        w: Weak,
        needed: u64,
        placed: u64,
        order: &mut Vec<usize>,
        dead: &mut HashSet<u64>,
    ) -> bool {
        if placed & needed == needed {
            return true;
        }
        if dead.contains(&placed) {
            return false;
        }
        for t in 0..h.txns.len() {
            if placed & (1 << t) != 0 || h.txns[t].outcome == Outcome::Fail {
                continue;
            }
            if !weak_reads_fine(h, t, placed, w) {
                continue;
            }
            order.push(t);
            if go(h, w, needed, placed | 1 << t, order, dead) {
                return true;
            }
            order.pop();
        }
        dead.insert(placed);
        false
    }
    let mut order = Vec::new();
    go(h, w, needed, 0, &mut order, &mut HashSet::new()).then_some(order)
}

/// Replays a claimed commit order at `w` from the definition above.
pub fn weak_replay(h: &Hist, w: Weak, order: &[usize]) -> Result<(), String> {
    let mut placed = 0u64;
    for &t in order {
        if t >= h.txns.len() || placed & (1 << t) != 0 || h.txns[t].outcome == Outcome::Fail {
            return Err(format!("bad entry {t} in {order:?}"));
        }
        if !weak_reads_fine(h, t, placed, w) {
            return Err(format!("txn {t} has a read with no source at {w:?}"));
        }
        placed |= 1 << t;
    }
    match (0..h.txns.len()).find(|&t| h.txns[t].outcome == Outcome::Ok && placed & (1 << t) == 0) {
        Some(t) => Err(format!("ok txn {t} missing from {order:?}")),
        None => Ok(()),
    }
}

/// Whether some choice of what each read saw avoids every anomaly of
/// `kinds` (any of `G1a`, `G1b`, `future-read`, `garbage-read`,
/// `dirty-update`; others are ignored): with no cycle prohibited, any
/// version order will do, so each read chooses alone. A read of an `ok`
/// transaction that does not return a write the reader made before it saw
/// `nil` (fine), or a write of its value: another committed (`ok` or
/// `info`) transaction's last write of the key (fine), a `fail`
/// transaction's (G1a, and a dirty update if the reader writes the key
/// after the read), another's overwritten one (G1b, also when it failed),
/// the reader's own later one (a future read); or, when nobody wrote the
/// value, nothing (a garbage read). A write is overwritten when its writer
/// wrote the key last with another value.
pub fn read_anomalies_avoidable(h: &Hist, kinds: &[&str]) -> bool {
    let fine = |class: &[&str]| class.iter().all(|c| !kinds.contains(c));
    h.txns.iter().enumerate().all(|(t, txn)| {
        if txn.outcome != Outcome::Ok {
            return true;
        }
        txn.mops.iter().enumerate().all(|(at, m)| {
            let Mop::Read(k, Some(v)) = *m else {
                return true;
            };
            let earlier = &txn.mops[..at];
            if earlier
                .iter()
                .any(|m| matches!(*m, Mop::Write(k2, x) if k2 == k && x == v))
            {
                return true;
            }
            let then_writes = txn.mops[at..]
                .iter()
                .any(|m| matches!(*m, Mop::Write(k2, _) if k2 == k));
            let mut classes: Vec<Vec<&str>> = Vec::new();
            for (u, other) in h.txns.iter().enumerate() {
                let ws: Vec<u32> = other
                    .mops
                    .iter()
                    .filter_map(|m| match *m {
                        Mop::Write(k2, x) if k2 == k => Some(x),
                        _ => None,
                    })
                    .collect();
                if !ws.contains(&v) {
                    continue;
                }
                // Elle counts a failed transaction's overwritten write
                // as an intermediate one too.
                let overwritten = ws.last() != Some(&v);
                let mut class = Vec::new();
                if u == t {
                    class.push("future-read");
                } else {
                    if other.outcome == Outcome::Fail {
                        class.push("G1a");
                        if then_writes {
                            class.push("dirty-update");
                        }
                    }
                    if overwritten {
                        class.push("G1b");
                    }
                }
                classes.push(class);
            }
            if classes.is_empty() {
                classes.push(vec!["garbage-read"]);
            }
            classes.iter().any(|c| fine(c))
        })
    })
}

pub mod gen {
    //! Random small register histories, from plain-data specs (proptest
    //! shrinks them structurally).
    use super::{Hist, Mop, Outcome, Txn};
    use proptest::prelude::*;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Semantics {
        /// One at a time; intervals around the execution point when
        /// `realtime`, placed at random otherwise.
        Serial { realtime: bool },
        /// Snapshot at begin, first committer wins when `fcw`.
        Snapshot { fcw: bool },
        /// Each read sees the latest committed value.
        ReadCommitted,
        /// Each read sees the latest value written, committed or not.
        Dirty,
    }

    #[derive(Clone, Debug)]
    pub struct TxnSpec {
        /// (is read, key)
        pub mops: Vec<(bool, u8)>,
        pub outcome: Outcome,
        /// `info`: took effect; completion recorded.
        pub applied: bool,
        pub completes: bool,
    }

    #[derive(Clone, Debug)]
    pub struct Spec {
        pub semantics: Semantics,
        pub keys: u8,
        pub concurrency: u8,
        /// Values repeat (drawn from 1..=2) instead of being unique.
        pub repeat: bool,
        pub txns: Vec<TxnSpec>,
        pub choices: Vec<u8>,
        /// (txn, mop, new value): damage a read.
        pub corruptions: Vec<(u8, u8, u8)>,
    }

    pub fn spec(faults: bool, max_txns: usize) -> impl Strategy<Value = Spec> {
        let sem = prop_oneof![
            Just(Semantics::Serial { realtime: true }),
            Just(Semantics::Serial { realtime: false }),
            Just(Semantics::Snapshot { fcw: true }),
            Just(Semantics::Snapshot { fcw: false }),
            Just(Semantics::ReadCommitted),
            Just(Semantics::Dirty),
        ];
        spec_of(sem.boxed(), faults, max_txns, 1..=3, 1..=4)
    }

    /// Half of them from a database that shows uncommitted writes (dirty
    /// reads, and cycles of them), the rest as [`spec`].
    pub fn dirty_spec(max_txns: usize) -> impl Strategy<Value = Spec> {
        let sem = prop_oneof![
            3 => Just(Semantics::Dirty),
            1 => Just(Semantics::ReadCommitted),
            1 => Just(Semantics::Snapshot { fcw: false }),
            1 => Just(Semantics::Serial { realtime: true }),
        ];
        spec_of(sem.boxed(), true, max_txns, 2..=2, 3..=4)
    }

    fn spec_of(
        sem: BoxedStrategy<Semantics>,
        faults: bool,
        max_txns: usize,
        keys: std::ops::RangeInclusive<u8>,
        concurrency: std::ops::RangeInclusive<u8>,
    ) -> impl Strategy<Value = Spec> {
        (sem, keys, concurrency, any::<bool>()).prop_flat_map(
            move |(semantics, keys, concurrency, repeat)| {
                let outcome = if faults {
                    prop_oneof![7 => Just(Outcome::Ok), 1 => Just(Outcome::Fail), 2 => Just(Outcome::Info)].boxed()
                } else {
                    Just(Outcome::Ok).boxed()
                };
                let txn = (
                    prop::collection::vec((any::<bool>(), 0..keys), 1..=4),
                    outcome,
                    any::<bool>(),
                    any::<bool>(),
                )
                    .prop_map(|(mops, outcome, applied, completes)| TxnSpec {
                        mops,
                        outcome,
                        applied,
                        completes,
                    });
                (
                    prop::collection::vec(txn, 2..=max_txns),
                    prop::collection::vec(any::<u8>(), 0..48),
                    prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 0..=1),
                )
                    .prop_map(move |(txns, choices, corruptions)| Spec {
                        semantics,
                        keys,
                        concurrency,
                        repeat,
                        txns,
                        choices,
                        corruptions,
                    })
            },
        )
    }

    struct Choices<'a> {
        bytes: &'a [u8],
        at: usize,
    }

    impl Choices<'_> {
        fn pick(&mut self, n: usize) -> usize {
            if n <= 1 {
                return 0;
            }
            let b = self.bytes.get(self.at).copied().unwrap_or(0);
            self.at += 1;
            b as usize % n
        }
    }

    /// Runs the spec: transactions start in spec order, at most
    /// `concurrency` at once; the choices pick which running one acts next
    /// (a micro-op, or its commit once its micro-ops are done).
    pub fn build(s: &Spec) -> Hist {
        let n = s.txns.len();
        let mut c = Choices {
            bytes: &s.choices,
            at: 0,
        };
        let mut next_value = 0u32;
        let mut value = |c: &mut Choices| -> u32 {
            if s.repeat {
                1 + c.pick(2) as u32
            } else {
                next_value += 1;
                next_value
            }
        };
        let keys = s.keys as usize;
        let mut committed: Vec<Option<u32>> = vec![None; keys];
        let mut dirty: Vec<Option<u32>> = vec![None; keys];
        // Commit index of each key's last writer (first committer wins).
        let mut last_commit: Vec<usize> = vec![0; keys];
        let mut commits = 0usize;
        let mut mops: Vec<Vec<Mop>> = vec![Vec::new(); n];
        let mut snapshot: Vec<Vec<Option<u32>>> = vec![Vec::new(); n];
        let mut start_commit = vec![0usize; n];
        let mut invoke = vec![0u32; n];
        let mut complete: Vec<Option<u32>> = vec![None; n];
        let mut outcome = vec![Outcome::Ok; n];
        let mut clock = 0u32;
        let mut running: Vec<(usize, usize)> = Vec::new(); // (txn, next mop)
        let mut started = 0usize;
        let serial = matches!(s.semantics, Semantics::Serial { .. });
        while started < n || !running.is_empty() {
            let cap = if serial { 1 } else { s.concurrency as usize };
            if started < n && (running.len() < cap || running.is_empty()) {
                let t = started;
                started += 1;
                invoke[t] = clock;
                clock += 1;
                snapshot[t] = committed.clone();
                start_commit[t] = commits;
                running.push((t, 0));
                continue;
            }
            let i = c.pick(running.len());
            let (t, at) = running[i];
            let spec = &s.txns[t];
            if at < spec.mops.len() {
                let (is_read, k) = spec.mops[at];
                let k = k as usize;
                let m = if is_read {
                    let own = mops[t].iter().rev().find_map(|m| match m {
                        Mop::Write(k2, v) if *k2 == k => Some(*v),
                        _ => None,
                    });
                    let seen = match s.semantics {
                        Semantics::Snapshot { .. } => own.or(snapshot[t][k]),
                        Semantics::Dirty => own.or(dirty[k]),
                        _ => own.or(committed[k]),
                    };
                    Mop::Read(k, seen)
                } else {
                    let v = value(&mut c);
                    dirty[k] = Some(v);
                    Mop::Write(k, v)
                };
                mops[t].push(m);
                running[i].1 += 1;
                continue;
            }
            running.remove(i);
            let conflict = matches!(s.semantics, Semantics::Snapshot { fcw: true })
                && mops[t]
                    .iter()
                    .any(|m| matches!(m, Mop::Write(k, _) if last_commit[*k] > start_commit[t]));
            let (out, applied) = match spec.outcome {
                _ if conflict => (Outcome::Fail, false),
                Outcome::Ok => (Outcome::Ok, true),
                Outcome::Fail => (Outcome::Fail, false),
                Outcome::Info => (Outcome::Info, spec.applied),
            };
            outcome[t] = out;
            if applied {
                commits += 1;
                for m in &mops[t] {
                    if let Mop::Write(k, v) = m {
                        committed[*k] = Some(*v);
                        last_commit[*k] = commits;
                    }
                }
            }
            if out != Outcome::Info || spec.completes {
                complete[t] = Some(clock);
            }
            clock += 1;
        }
        let mut txns: Vec<Txn> = (0..n)
            .map(|t| Txn {
                process: t as u32,
                outcome: outcome[t],
                mops: mops[t].clone(),
                invoke: invoke[t],
                complete: complete[t],
            })
            .collect();
        if let Semantics::Serial { realtime: false } = s.semantics {
            // Intervals at random: invocations and completions shuffled.
            for (i, t) in txns.iter_mut().enumerate() {
                let a = 2 * c.pick(2 * n) as u32;
                let b = a + 1 + 2 * c.pick(n) as u32;
                t.invoke = 4 * a + i as u32 % 2;
                t.complete = t.complete.map(|_| 4 * b + 2);
            }
        }
        // Processes: one transaction at a time each (Jepsen's rule); give
        // each transaction the lowest process free at its invocation.
        let mut busy_until: Vec<Option<u32>> = Vec::new();
        let mut idx: Vec<usize> = (0..n).collect();
        idx.sort_by_key(|&i| txns[i].invoke);
        for i in idx {
            let inv = txns[i].invoke;
            let p = busy_until
                .iter()
                .position(|b| b.is_some_and(|b| b < inv))
                .unwrap_or_else(|| {
                    busy_until.push(None);
                    busy_until.len() - 1
                });
            // An info transaction never frees its process.
            busy_until[p] = match txns[i].outcome {
                Outcome::Info => Some(u32::MAX),
                _ => txns[i].complete.or(Some(u32::MAX)),
            };
            txns[i].process = p as u32;
        }
        for &(t, m, v) in &s.corruptions {
            let t = t as usize % n;
            let len = txns[t].mops.len();
            if let Mop::Read(k, _) = txns[t].mops[m as usize % len] {
                let v = if s.repeat { v as u32 % 3 } else { v as u32 % 6 };
                txns[t].mops[m as usize % len] = Mop::Read(k, (v > 0).then_some(v));
            }
        }
        Hist { keys, txns }
    }
}
