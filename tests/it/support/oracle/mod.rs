//! An independent brute-force oracle for small list-append histories, written
//! from the definitions and sharing no code with `src/`.
//!
//! A history is *serializable* iff some subset of its `info` transactions,
//! together with all its `ok` transactions, can be put in an order whose
//! serial execution on empty lists makes every read of every `ok`
//! transaction return exactly what it returned. `fail` transactions never
//! take effect; reads of `info` and `fail` transactions are ignored.
//! Variants add order constraints (real time, process order) or relax the
//! reads to snapshots (snapshot isolation). The search is a DFS over serial
//! orders that stops extending an order as soon as one read disagrees.

pub mod gen;
pub mod register;

use std::collections::HashSet;
use std::fmt::Write as _;

/// What the database said about a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Fail,
    Info,
}

/// A micro-op: `Append(key, value)` or `Read(key, list)` (`None` = nil,
/// which for a completed read means "no list yet", i.e. empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mop {
    Append(usize, u32),
    Read(usize, Option<Vec<u32>>),
}

/// One transaction with its place in the history's event order.
#[derive(Clone, Debug)]
pub struct Txn {
    pub process: u32,
    pub outcome: Outcome,
    /// As completed (reads filled in).
    pub mops: Vec<Mop>,
    /// Event position of the invocation.
    pub invoke: u32,
    /// Event position of the completion; `None` only for an `info`
    /// transaction that never completed (the history just ends).
    pub complete: Option<u32>,
}

/// A small list-append history: keys are `0..keys`.
#[derive(Clone, Debug, Default)]
pub struct Hist {
    pub keys: usize,
    pub txns: Vec<Txn>,
}

/// Key names in EDN.
const KEY_NAMES: [&str; 4] = [":x", ":y", ":z", ":w"];

fn write_list(out: &mut String, l: &Option<Vec<u32>>) {
    match l {
        None => out.push_str("nil"),
        Some(vs) => {
            out.push('[');
            for (i, v) in vs.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                let _ = write!(out, "{v}");
            }
            out.push(']');
        }
    }
}

fn write_value(out: &mut String, mops: &[Mop], invocation: bool) {
    out.push('[');
    for (i, m) in mops.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        match m {
            Mop::Append(k, v) => {
                let _ = write!(out, "[:append {} {v}]", KEY_NAMES[*k]);
            }
            Mop::Read(k, l) => {
                let _ = write!(out, "[:r {} ", KEY_NAMES[*k]);
                write_list(out, if invocation { &None } else { l });
                out.push(']');
            }
        }
    }
    out.push(']');
}

impl Hist {
    /// The history as Jepsen EDN, one op per line, in event order.
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
            let _ = write!(
                out,
                "{{:index {index}, :time {}, :type :{ty}, :process {}, :f :txn, :value ",
                index * 10,
                t.process
            );
            write_value(&mut out, &t.mops, invocation);
            out.push_str("}\n");
        }
        out
    }

    /// Every key's appended values, in generation order.
    pub fn appended(&self) -> Vec<Vec<u32>> {
        let mut out = vec![Vec::new(); self.keys];
        for t in &self.txns {
            for m in &t.mops {
                if let Mop::Append(k, v) = m {
                    out[*k].push(*v);
                }
            }
        }
        out
    }

    /// The values each key's `ok` reads show.
    fn observed(&self) -> Vec<HashSet<u32>> {
        let mut seen: Vec<HashSet<u32>> = vec![HashSet::new(); self.keys];
        for t in self.txns.iter().filter(|t| t.outcome == Outcome::Ok) {
            for m in &t.mops {
                if let Mop::Read(k, Some(l)) = m {
                    seen[*k].extend(l.iter().copied());
                }
            }
        }
        seen
    }

    /// Elle's method sees the whole version order of what took effect:
    /// every append of an `ok` transaction shows up in some `ok` read, and
    /// an `info` transaction's appends show up all or not at all.
    pub fn fully_observed(&self) -> bool {
        let seen = self.observed();
        self.txns.iter().all(|t| {
            let mut appends = t.mops.iter().filter_map(|m| match m {
                Mop::Append(k, v) => Some(seen[*k].contains(v)),
                Mop::Read(..) => None,
            });
            match t.outcome {
                Outcome::Ok => appends.all(|s| s),
                Outcome::Info => {
                    let s: Vec<bool> = appends.collect();
                    s.iter().all(|&x| x) || s.iter().all(|&x| !x)
                }
                Outcome::Fail => true,
            }
        })
    }

    /// Some transaction ended `info` or `fail`.
    pub fn has_faults(&self) -> bool {
        self.txns.iter().any(|t| t.outcome != Outcome::Ok)
    }

    /// Every element of every `ok` read was appended by some transaction
    /// (no phantom values).
    pub fn reads_only_appended_values(&self) -> bool {
        let appended = self.appended();
        self.txns
            .iter()
            .filter(|t| t.outcome == Outcome::Ok)
            .all(|t| {
                t.mops.iter().all(|m| match m {
                    Mop::Read(k, Some(l)) => l.iter().all(|v| appended[*k].contains(v)),
                    _ => true,
                })
            })
    }

    /// Every read of an `ok` transaction shows each transaction's appends
    /// to that key in the order the transaction made them. (A read showing
    /// one transaction's appends swapped but adjacent, `[2 1]` for `append
    /// 1; append 2`, has no dependency edge and no anomaly in Elle's method.)
    pub fn reads_keep_append_order(&self) -> bool {
        use std::collections::HashMap;
        let mut rank: HashMap<(usize, u32), (usize, usize)> = HashMap::new();
        for (i, t) in self.txns.iter().enumerate() {
            let mut count = vec![0usize; self.keys];
            for m in &t.mops {
                if let Mop::Append(k, v) = m {
                    rank.insert((*k, *v), (i, count[*k]));
                    count[*k] += 1;
                }
            }
        }
        self.txns
            .iter()
            .filter(|t| t.outcome == Outcome::Ok)
            .all(|t| {
                t.mops.iter().all(|m| {
                    let Mop::Read(k, Some(l)) = m else {
                        return true;
                    };
                    let mut last: HashMap<usize, usize> = HashMap::new();
                    l.iter().all(|v| match rank.get(&(*k, *v)) {
                        Some(&(w, r)) => last.insert(w, r).is_none_or(|prev| prev <= r),
                        None => true,
                    })
                })
            })
    }
}

/// The isolation levels the oracle decides exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// Some serial order (Adya PL-3 on a fully known history).
    Serializable,
    /// Serializable, and each process's transactions in process order.
    StrongSessionSerializable,
    /// Serializable, and a transaction that completed before another was
    /// invoked comes first.
    StrictSerializable,
    /// Generalized snapshot isolation: each transaction reads the state
    /// after some prefix of the commit order (no later than its own commit)
    /// plus its own appends; two transactions appending to a common key
    /// never overlap (first committer wins).
    SnapshotIsolation,
}

/// Must `a` precede `b` (when both take effect)? Only completed `ok`
/// transactions constrain: an `info` transaction never completes.
fn must_precede(a: &Txn, b: &Txn, model: Model) -> bool {
    if a.outcome != Outcome::Ok {
        return false;
    }
    let done_before = a.complete.is_some_and(|c| c < b.invoke);
    match model {
        Model::StrictSerializable => done_before,
        Model::StrongSessionSerializable => done_before && a.process == b.process,
        Model::Serializable | Model::SnapshotIsolation => false,
    }
}

/// Do `t`'s reads all match, run on top of `lists` (plus its own appends)?
fn reads_match(t: &Txn, lists: &[Vec<u32>]) -> bool {
    let mut own: Vec<(usize, u32)> = Vec::new();
    for m in &t.mops {
        match m {
            Mop::Append(k, v) => own.push((*k, *v)),
            Mop::Read(k, got) => {
                let got: &[u32] = got.as_deref().unwrap_or(&[]);
                let base = &lists[*k];
                let mine = own.iter().filter(|(k2, _)| k2 == k).map(|(_, v)| *v);
                let expect = base.iter().copied().chain(mine);
                if !expect.eq(got.iter().copied()) {
                    return false;
                }
            }
        }
    }
    true
}

fn apply(t: &Txn, lists: &mut [Vec<u32>]) {
    for m in &t.mops {
        if let Mop::Append(k, v) = m {
            lists[*k].push(*v);
        }
    }
}

fn write_keys(t: &Txn) -> u64 {
    t.mops.iter().fold(0, |acc, m| match m {
        Mop::Append(k, _) => acc | 1 << k,
        Mop::Read(..) => acc,
    })
}

struct Search<'a> {
    h: &'a Hist,
    /// `ok` and `info` transactions: the ones that may take effect.
    candidates: Vec<usize>,
    /// Bit set of the `ok` transactions: all must be placed.
    needed: u64,
    /// Per transaction, the `ok` transactions that must come before it.
    preds: Vec<u64>,
    /// (placed set, lists) states already shown to be dead ends.
    dead: HashSet<(u64, Vec<Vec<u32>>)>,
    order: Vec<usize>,
    /// Snapshot isolation: lists after each prefix of `order`.
    prefixes: Vec<Vec<Vec<u32>>>,
}

impl Search<'_> {
    /// Serial search: the state after a prefix is determined by the set
    /// placed and the lists, so dead ends are memoized.
    fn serial(&mut self, placed: u64, lists: &mut Vec<Vec<u32>>) -> bool {
        if placed & self.needed == self.needed {
            return true;
        }
        if self.dead.contains(&(placed, lists.clone())) {
            return false;
        }
        for ci in 0..self.candidates.len() {
            let t = self.candidates[ci];
            let bit = 1u64 << t;
            if placed & bit != 0 || self.preds[t] & !placed != 0 {
                continue;
            }
            let txn = &self.h.txns[t];
            if txn.outcome == Outcome::Ok && !reads_match(txn, lists) {
                continue;
            }
            let before: Vec<usize> = lists.iter().map(Vec::len).collect();
            apply(txn, lists);
            self.order.push(t);
            if self.serial(placed | bit, lists) {
                return true;
            }
            self.order.pop();
            for (l, n) in lists.iter_mut().zip(before) {
                l.truncate(n);
            }
        }
        self.dead.insert((placed, lists.clone()));
        false
    }

    /// Snapshot search over commit orders: placing `t` at position `p`
    /// needs a snapshot prefix `s <= p` after the last commit that wrote a
    /// key `t` writes (first committer wins) whose lists explain `t`'s reads.
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
            let readable =
                txn.outcome != Outcome::Ok || (lo..=p).any(|s| reads_match(txn, &self.prefixes[s]));
            if !readable {
                continue;
            }
            let mut next = self.prefixes[p].clone();
            apply(txn, &mut next);
            self.prefixes.push(next);
            self.order.push(t);
            if self.snapshot(placed | bit) {
                return true;
            }
            self.order.pop();
            self.prefixes.pop();
        }
        false
    }
}

/// A witness order (indices into `h.txns`; `info` ones included are the
/// ones that took effect), or `None` when `h` does not satisfy `model`.
pub fn witness(h: &Hist, model: Model) -> Option<Vec<usize>> {
    assert!(
        h.txns.len() <= 16,
        "oracle is exhaustive: keep histories tiny"
    );
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
        prefixes: vec![vec![Vec::new(); h.keys]],
    };
    let found = match model {
        Model::SnapshotIsolation => s.snapshot(0),
        _ => s.serial(0, &mut vec![Vec::new(); h.keys]),
    };
    found.then_some(s.order)
}

/// Does `h` satisfy `model`?
pub fn holds(h: &Hist, model: Model) -> bool {
    witness(h, model).is_some()
}

/// Builds hand-written histories: `"ax1 ry12 r:y"` is append 1 to x, read
/// x = [1 2], read y = nil; `ry[]` reads an empty list; values are single
/// digits, or comma-separated in brackets (`rx[10,11]`).
pub fn parse_mops(s: &str) -> Vec<Mop> {
    let key = |c: char| match c {
        'x' => 0,
        'y' => 1,
        'z' => 2,
        'w' => 3,
        _ => panic!("unknown key {c}"),
    };
    s.split_whitespace()
        .map(|w| {
            let mut cs = w.chars();
            let f = cs.next().expect("mop");
            let k = key(cs.next().expect("key"));
            let rest: String = cs.collect();
            match f {
                'a' => Mop::Append(k, rest.parse().expect("value")),
                'r' if rest.is_empty() => Mop::Read(k, None),
                'r' if rest.starts_with('[') => {
                    let inner = rest.trim_start_matches('[').trim_end_matches(']');
                    let vs = inner
                        .split(',')
                        .filter(|v| !v.is_empty())
                        .map(|v| v.parse().expect("value"))
                        .collect();
                    Mop::Read(k, Some(vs))
                }
                'r' => Mop::Read(
                    k,
                    Some(
                        rest.chars()
                            .map(|c| c.to_digit(10).expect("digit"))
                            .collect(),
                    ),
                ),
                _ => panic!("unknown mop {w}"),
            }
        })
        .collect()
}

/// A hand-written transaction: process, outcome, mops, and its invocation
/// and completion positions.
pub fn txn(process: u32, outcome: Outcome, mops: &str, invoke: u32, complete: Option<u32>) -> Txn {
    Txn {
        process,
        outcome,
        mops: parse_mops(mops),
        invoke,
        complete,
    }
}

/// A history of `(process, outcome, mops)` that all overlap in time: every
/// invocation comes before every completion, so real time orders nothing.
pub fn concurrent(txns: &[(u32, Outcome, &str)]) -> Hist {
    let n = txns.len() as u32;
    let txns = txns
        .iter()
        .enumerate()
        .map(|(i, &(p, o, m))| txn(p, o, m, i as u32, Some(n + i as u32)))
        .collect();
    with_keys(txns)
}

/// A history of `(process, outcome, mops)` run one after another in real
/// time: each completes before the next is invoked.
pub fn sequential(txns: &[(u32, Outcome, &str)]) -> Hist {
    let txns = txns
        .iter()
        .enumerate()
        .map(|(i, &(p, o, m))| txn(p, o, m, 2 * i as u32, Some(2 * i as u32 + 1)))
        .collect();
    with_keys(txns)
}

/// Wraps transactions, sizing the key space to the keys they use.
pub fn with_keys(txns: Vec<Txn>) -> Hist {
    let keys = txns
        .iter()
        .flat_map(|t| t.mops.iter())
        .map(|m| match m {
            Mop::Append(k, _) | Mop::Read(k, _) => k + 1,
        })
        .max()
        .unwrap_or(1);
    Hist { keys, txns }
}

/// The definition enumerated with no pruning and no memo: every subset of
/// the `info` transactions, every order of it with the `ok` ones, each
/// replayed from scratch. Only for cross-checking [`holds`] on tiny
/// histories (factorial time).
pub fn naive_holds(h: &Hist, model: Model) -> bool {
    let of = |o: Outcome| -> Vec<usize> {
        (0..h.txns.len())
            .filter(|&i| h.txns[i].outcome == o)
            .collect()
    };
    let (oks, infos) = (of(Outcome::Ok), of(Outcome::Info));
    (0..1u32 << infos.len()).any(|mask| {
        let mut chosen = oks.clone();
        chosen.extend(
            infos
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & 1 << i != 0)
                .map(|(_, &t)| t),
        );
        permutations(&chosen)
            .iter()
            .any(|order| naive_order_ok(h, model, order))
    })
}

fn permutations(xs: &[usize]) -> Vec<Vec<usize>> {
    if xs.is_empty() {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for i in 0..xs.len() {
        let mut rest = xs.to_vec();
        let x = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, x);
            out.push(p);
        }
    }
    out
}

fn naive_order_ok(h: &Hist, model: Model, order: &[usize]) -> bool {
    // No transaction may come after one that must follow it.
    for (i, &later) in order.iter().enumerate() {
        for &earlier in &order[..i] {
            let (a, b) = (&h.txns[later], &h.txns[earlier]);
            let done_before = a.outcome == Outcome::Ok && a.complete.is_some_and(|c| c < b.invoke);
            let forced = match model {
                Model::StrictSerializable => done_before,
                Model::StrongSessionSerializable => done_before && a.process == b.process,
                _ => false,
            };
            if forced {
                return false;
            }
        }
    }
    // The lists after each prefix of the order.
    let mut states = vec![vec![Vec::new(); h.keys]];
    for &t in order {
        let mut next = states.last().expect("initial state").clone();
        for m in &h.txns[t].mops {
            if let Mop::Append(k, v) = m {
                next[*k].push(*v);
            }
        }
        states.push(next);
    }
    let writes = |t: usize| -> Vec<usize> {
        h.txns[t]
            .mops
            .iter()
            .filter_map(|m| {
                if let Mop::Append(k, _) = m {
                    Some(*k)
                } else {
                    None
                }
            })
            .collect()
    };
    order.iter().enumerate().all(|(p, &t)| {
        if h.txns[t].outcome != Outcome::Ok {
            return true;
        }
        let first = if model == Model::SnapshotIsolation {
            let mine = writes(t);
            (0..p)
                .filter(|&q| writes(order[q]).iter().any(|k| mine.contains(k)))
                .map(|q| q + 1)
                .max()
                .unwrap_or(0)
        } else {
            p
        };
        (first..=p).any(|s| {
            let mut lists = states[s].clone();
            h.txns[t].mops.iter().all(|m| match m {
                Mop::Append(k, v) => {
                    lists[*k].push(*v);
                    true
                }
                Mop::Read(k, got) => got.as_deref().unwrap_or(&[]) == lists[*k].as_slice(),
            })
        })
    })
}

/// Every value modulo `domain` (1-based), reads included: histories whose
/// values repeat, from the generator's unique ones.
#[allow(dead_code)] // used by the duplicate-value tests
pub fn fold_values(h: &mut Hist, domain: u32) {
    let f = |v: u32| (v.max(1) - 1) % domain + 1;
    for t in &mut h.txns {
        for m in &mut t.mops {
            match m {
                Mop::Append(_, v) => *v = f(*v),
                Mop::Read(_, Some(l)) => l.iter_mut().for_each(|v| *v = f(*v)),
                Mop::Read(_, None) => {}
            }
        }
    }
}

/// Read committed (Adya's PL-2) from its anomalies, by brute force over
/// every choice: which `info` transactions committed, and per key an order
/// of the committed transactions' appends (each transaction's appends to a
/// key one block, in program order: a block split by another writer is G0,
/// a read ending inside one is G1b, a read of a failed append is G1a). The
/// history is read committed iff under some choice every `ok` read, minus
/// the transaction's own earlier appends, is a prefix of the key's versions
/// that ends where a block ends, and the graph of ww edges (consecutive
/// blocks) and wr edges (the last block a read saw → the reader) has no
/// cycle (G0, G1c; a self-loop is a transaction reading its own later
/// append). Values may repeat: nothing here assumes they name a writer.
/// Each read stands alone: two reads of a key in one transaction may see
/// different states (an internal anomaly, which read committed allows).
/// `None` when some `ok` read does not end with its transaction's own
/// earlier appends (not modelled).
#[allow(dead_code)] // used by tests/it/duplicates_lattice.rs only
pub fn read_committed(h: &Hist) -> Option<bool> {
    choices(h, false)
}

/// Consistent view (Adya's PL-2+) from its anomalies, by the same brute
/// force as [`read_committed`]: some choice with no G0, G1a, G1b, G1c and
/// no G-single, a cycle with exactly one anti-dependency. A read of a
/// prefix of length `l` anti-depends on the writer of the block that
/// starts at `l` (the next version), unless that is the reader itself; a
/// G-single is such an edge whose writer reaches the reader by ww and wr
/// edges. `None` as for read committed.
#[allow(dead_code)] // used by tests/it/duplicates_lattice.rs only
pub fn consistent_view(h: &Hist) -> Option<bool> {
    choices(h, true)
}

/// Some choice passes read committed's check, and with `single`, has no
/// G-single either.
#[allow(dead_code)] // used by tests/it/duplicates_lattice.rs only
fn choices(h: &Hist, single: bool) -> Option<bool> {
    if hides_own_appends(h) {
        return None;
    }
    Some(commit_choices(h).any(|committed| {
        let writers = committed_writers(h, &committed);
        let mut orders: Vec<Vec<usize>> = writers.clone();
        any_orders(&mut orders, 0, &mut |o| {
            rc_choice_ok(h, o, &writers, single)
        })
    }))
}

/// Every choice of which transactions committed: all `ok` ones, no `fail`
/// one, each subset of the `info` ones.
#[allow(dead_code)] // used by the duplicate-value tests
fn commit_choices(h: &Hist) -> impl Iterator<Item = Vec<bool>> + '_ {
    let n = h.txns.len();
    let info: Vec<usize> = (0..n)
        .filter(|&i| h.txns[i].outcome == Outcome::Info)
        .collect();
    (0..1u32 << info.len()).map(move |mask| {
        (0..n)
            .map(|i| match h.txns[i].outcome {
                Outcome::Ok => true,
                Outcome::Fail => false,
                Outcome::Info => mask >> info.iter().position(|&j| j == i).unwrap() & 1 == 1,
            })
            .collect()
    })
}

/// Per key, the committed transactions that append to it.
#[allow(dead_code)] // used by the duplicate-value tests
fn committed_writers(h: &Hist, committed: &[bool]) -> Vec<Vec<usize>> {
    (0..h.keys)
        .map(|k| {
            (0..h.txns.len())
                .filter(|&i| committed[i] && block(&h.txns[i], k).next().is_some())
                .collect()
        })
        .collect()
}

/// Read atomic as the lattice has it: read committed, and no internal
/// anomaly (future reads are G1c already).
#[allow(dead_code)] // used by tests/it/duplicates_lattice.rs only
pub fn read_atomic(h: &Hist) -> bool {
    !has_internal(h) && read_committed(h) == Some(true)
}

/// Elle's lost update, from its definition: two `ok` transactions whose
/// first read of a key saw the same list (nil apart from `[]`, as Elle
/// compares them) and which appended to the key after that read. It looks
/// at reads only, so with repeated values every choice of writers has it or
/// none does.
#[allow(dead_code)] // used by tests/it/duplicates_lattice.rs only
pub fn has_lost_update(h: &Hist) -> bool {
    let mut seen: std::collections::HashSet<(usize, Option<Vec<u32>>)> = Default::default();
    for t in h.txns.iter().filter(|t| t.outcome == Outcome::Ok) {
        for k in 0..h.keys {
            let first_read = t
                .mops
                .iter()
                .position(|m| matches!(m, Mop::Read(k2, _) if *k2 == k));
            let Some(r) = first_read else { continue };
            let appends_after = t.mops[r + 1..]
                .iter()
                .any(|m| matches!(m, Mop::Append(k2, _) if *k2 == k));
            if !appends_after {
                continue;
            }
            let Mop::Read(_, got) = &t.mops[r] else {
                unreachable!()
            };
            if !seen.insert((k, got.clone())) {
                return true;
            }
        }
    }
    false
}

/// An `ok` read that does not end with its transaction's earlier appends.
#[allow(dead_code)] // used by tests/it/duplicates_lattice.rs only
fn hides_own_appends(h: &Hist) -> bool {
    h.txns.iter().filter(|t| t.outcome == Outcome::Ok).any(|t| {
        let mut own: Vec<Vec<u32>> = vec![Vec::new(); h.keys];
        t.mops.iter().any(|m| match m {
            Mop::Append(k, v) => {
                own[*k].push(*v);
                false
            }
            Mop::Read(k, got) => !got.clone().unwrap_or_default().ends_with(&own[*k]),
        })
    })
}

#[allow(dead_code)] // used by tests/it/duplicates_lattice.rs only
fn block(t: &Txn, k: usize) -> impl Iterator<Item = u32> + '_ {
    t.mops.iter().filter_map(move |m| match m {
        Mop::Append(k2, v) if *k2 == k => Some(*v),
        _ => None,
    })
}

/// An `ok` transaction whose read of a key does not end with its own
/// earlier appends to it, or whose reads of a key see two different states
/// of the others' appends.
#[allow(dead_code)] // used by tests/it/duplicates_lattice.rs only
fn has_internal(h: &Hist) -> bool {
    h.txns.iter().filter(|t| t.outcome == Outcome::Ok).any(|t| {
        let mut own: Vec<Vec<u32>> = vec![Vec::new(); h.keys];
        let mut ext: Vec<Option<Vec<u32>>> = vec![None; h.keys];
        for m in &t.mops {
            match m {
                Mop::Append(k, v) => own[*k].push(*v),
                Mop::Read(k, got) => {
                    let got = got.clone().unwrap_or_default();
                    if !got.ends_with(&own[*k]) {
                        return true;
                    }
                    let e = got[..got.len() - own[*k].len()].to_vec();
                    match &ext[*k] {
                        Some(prev) if *prev != e => return true,
                        _ => ext[*k] = Some(e),
                    }
                }
            }
        }
        false
    })
}

/// Tries every permutation of each key's writers (keys from `k` on):
/// whether `ok` accepts one of the resulting choices.
#[allow(dead_code)] // used by the duplicate-value tests
fn any_orders(
    orders: &mut Vec<Vec<usize>>,
    k: usize,
    ok: &mut dyn FnMut(&[Vec<usize>]) -> bool,
) -> bool {
    if k == orders.len() {
        return ok(orders);
    }
    permute(orders, k, 0, &mut |orders| any_orders(orders, k + 1, ok))
}

#[allow(dead_code)] // used by tests/it/duplicates_lattice.rs only
fn permute(
    orders: &mut Vec<Vec<usize>>,
    k: usize,
    i: usize,
    f: &mut dyn FnMut(&mut Vec<Vec<usize>>) -> bool,
) -> bool {
    if i + 1 >= orders[k].len() {
        return f(orders);
    }
    for j in i..orders[k].len() {
        orders[k].swap(i, j);
        if permute(orders, k, i + 1, f) {
            orders[k].swap(i, j);
            return true;
        }
        orders[k].swap(i, j);
    }
    false
}

#[allow(dead_code)] // used by tests/it/duplicates_lattice.rs only
fn rc_choice_ok(h: &Hist, orders: &[Vec<usize>], writers: &[Vec<usize>], single: bool) -> bool {
    let n = h.txns.len();
    let _ = writers;
    let mut edges: Vec<(usize, usize)> = Vec::new();
    let mut rw: Vec<(usize, usize)> = Vec::new();
    // Per key: the versions and, per length, the writer whose block ends there.
    let mut versions: Vec<Vec<u32>> = vec![Vec::new(); h.keys];
    let mut end_at: Vec<Vec<Option<usize>>> = vec![vec![None]; h.keys];
    // Per key, per length: the writer whose block starts there.
    let mut start_at: Vec<std::collections::HashMap<usize, usize>> =
        vec![Default::default(); h.keys];
    for k in 0..h.keys {
        for (i, &w) in orders[k].iter().enumerate() {
            if i > 0 {
                edges.push((orders[k][i - 1], w));
            }
            start_at[k].insert(versions[k].len(), w);
            versions[k].extend(block(&h.txns[w], k));
            end_at[k].resize(versions[k].len(), None);
            end_at[k].push(Some(w));
        }
    }
    for (r, t) in h.txns.iter().enumerate() {
        if t.outcome != Outcome::Ok {
            continue;
        }
        let mut own = vec![0usize; h.keys];
        for m in &t.mops {
            match m {
                Mop::Append(k, _) => own[*k] += 1,
                Mop::Read(k, got) => {
                    let got = got.clone().unwrap_or_default();
                    let ext = &got[..got.len() - own[*k]];
                    if !versions[*k].starts_with(ext) {
                        return false;
                    }
                    if let Some(&w) = start_at[*k].get(&ext.len()) {
                        if w != r {
                            rw.push((r, w));
                        }
                    }
                    if ext.is_empty() {
                        continue;
                    }
                    match end_at[*k][ext.len()] {
                        Some(w) => edges.push((w, r)),
                        None => return false,
                    }
                }
            }
        }
    }
    if !acyclic(n, &edges) {
        return false;
    }
    !single || rw.iter().all(|&(a, b)| !reaches(n, &edges, b, a))
}

/// A path from `from` to `to` along `edges`.
#[allow(dead_code)] // used by tests/it/duplicates_lattice.rs only
fn reaches(n: usize, edges: &[(usize, usize)], from: usize, to: usize) -> bool {
    let mut seen = vec![false; n];
    let mut stack = vec![from];
    while let Some(v) = stack.pop() {
        if v == to {
            return true;
        }
        if std::mem::replace(&mut seen[v], true) {
            continue;
        }
        stack.extend(edges.iter().filter(|e| e.0 == v).map(|e| e.1));
    }
    false
}

/// Kahn's algorithm; a self-loop is a cycle.
#[allow(dead_code)] // used by tests/it/duplicates_lattice.rs only
fn acyclic(n: usize, edges: &[(usize, usize)]) -> bool {
    let mut indeg = vec![0usize; n];
    for &(_, b) in edges {
        indeg[b] += 1;
    }
    let mut ready: Vec<usize> = (0..n).filter(|&v| indeg[v] == 0).collect();
    let mut done = 0;
    while let Some(v) = ready.pop() {
        done += 1;
        for &(a, b) in edges {
            if a == v {
                indeg[b] -= 1;
                if indeg[b] == 0 {
                    ready.push(b);
                }
            }
        }
    }
    done == n
}

/// No G0 (read uncommitted as far as list-append shows it: Adya's PL-1),
/// by brute force over every choice: which `info` transactions committed,
/// per key an order of the committed transactions' blocks (each one's
/// appends to the key, in program order), and per `ok` read which append
/// produced each element. An element may come from
/// - a committed append of another transaction: those a read shows are,
///   in order, a prefix of the key's versions without the reader's own
///   block (possibly ending inside a block: G1b, allowed), and the read
///   wr-depends on their writers;
/// - an append of a transaction that did not commit (G1a, allowed), or the
///   reader's own append, each used once, with no edge;
/// - nobody, for the copies of a value the read holds beyond all the
///   history's appends of it to the key (a garbage read, judged apart:
///   see [`reads_more_than_appended`]).
///
/// No G0 iff some choice leaves the ww edges (consecutive blocks of a key)
/// acyclic. Each read stands alone (internal anomalies and reads that are
/// not prefixes of one another are allowed).
#[allow(dead_code)] // used by tests/it/duplicates_uncommitted.rs only
pub fn no_g0(h: &Hist) -> bool {
    uncommitted_choices(h, false)
}

/// No G0 and no G1c, by the brute force of [`no_g0`] with wr edges too (a
/// read depends on the writer of every committed element it shows), and
/// the reader's own appends after the read not available to it (reading
/// one's own later append is a future read: a G1c). A read whose committed
/// elements are the first `l` of the versions depends on the writers of
/// those `l`: the fewer, the fewer edges, so each read takes the smallest
/// `l` it can explain.
#[allow(dead_code)] // used by tests/it/duplicates_uncommitted.rs only
pub fn no_g1c(h: &Hist) -> bool {
    uncommitted_choices(h, true)
}

/// Some key whose reads no order of its committed blocks explains, cycles
/// aside (under every choice of committed `info` transactions, the reads
/// of [`no_g0`]'s rules disagree on the order of the key's committed
/// appends: Elle's `incompatible-order`). Such a history has no choice at
/// all, so [`no_g0`] fails on it without a G0: isolde leaves it
/// `unknown`, as incompatible-order does not rule out read uncommitted.
#[allow(dead_code)] // used by tests/it/duplicates_uncommitted.rs only
pub fn orders_disagree(h: &Hist) -> bool {
    (0..h.keys).any(|k| {
        !commit_choices(h).any(|committed| {
            // Every key but `k` without writers: only `k`'s order matters.
            let mut orders: Vec<Vec<usize>> = vec![Vec::new(); h.keys];
            orders[k] = std::mem::take(&mut committed_writers(h, &committed)[k]);
            permute(&mut orders, k, 0, &mut |orders| {
                explained(h, orders, &committed, false, Some(k)).is_some()
            })
        })
    })
}

/// Some `ok` read holds a value more often than the whole history (every
/// transaction, failed ones included) appended it to that key: a garbage
/// read or duplicate elements, which read uncommitted prohibits.
#[allow(dead_code)] // used by tests/it/duplicates_uncommitted.rs only
pub fn reads_more_than_appended(h: &Hist) -> bool {
    let appended = h.appended();
    h.txns.iter().filter(|t| t.outcome == Outcome::Ok).any(|t| {
        t.mops.iter().any(|m| match m {
            Mop::Read(k, got) => {
                let got = got.clone().unwrap_or_default();
                got.iter().any(|v| {
                    got.iter().filter(|&x| x == v).count()
                        > appended[*k].iter().filter(|&x| x == v).count()
                })
            }
            Mop::Append(..) => false,
        })
    })
}

#[allow(dead_code)] // used by tests/it/duplicates_uncommitted.rs only
fn uncommitted_choices(h: &Hist, g1c: bool) -> bool {
    commit_choices(h).any(|committed| {
        let mut orders = committed_writers(h, &committed);
        any_orders(&mut orders, 0, &mut |o| {
            uncommitted_choice_ok(h, o, &committed, g1c)
        })
    })
}

#[allow(dead_code)] // used by tests/it/duplicates_uncommitted.rs only
fn uncommitted_choice_ok(h: &Hist, orders: &[Vec<usize>], committed: &[bool], g1c: bool) -> bool {
    explained(h, orders, committed, g1c, None).is_some_and(|edges| acyclic(h.txns.len(), &edges))
}

/// The edges of a choice (ww, and with `g1c` wr) when it explains every
/// `ok` read (of `only`, when given), else `None`.
#[allow(dead_code)] // used by tests/it/duplicates_uncommitted.rs only
fn explained(
    h: &Hist,
    orders: &[Vec<usize>],
    committed: &[bool],
    g1c: bool,
    only: Option<usize>,
) -> Option<Vec<(usize, usize)>> {
    let mut edges: Vec<(usize, usize)> = Vec::new();
    // Per key: the versions, each element with its writer.
    let mut versions: Vec<Vec<(usize, u32)>> = vec![Vec::new(); h.keys];
    for k in 0..h.keys {
        for (i, &w) in orders[k].iter().enumerate() {
            if i > 0 {
                edges.push((orders[k][i - 1], w));
            }
            versions[k].extend(block(&h.txns[w], k).map(|v| (w, v)));
        }
    }
    let appended = h.appended();
    for (r, t) in h.txns.iter().enumerate() {
        if t.outcome != Outcome::Ok {
            continue;
        }
        for (i, m) in t.mops.iter().enumerate() {
            let Mop::Read(k, got) = m else { continue };
            if only.is_some_and(|o| o != *k) {
                continue;
            }
            let got = got.clone().unwrap_or_default();
            // The appends that stand anywhere: those of transactions that
            // did not commit, the reader's own (before the read, for G1c),
            // and nobody's for a value read more often than appended.
            let mut free: Vec<u32> = Vec::new();
            for (j, o) in h.txns.iter().enumerate() {
                for (p, mm) in o.mops.iter().enumerate() {
                    if let Mop::Append(k2, v) = mm {
                        let own_ok = j == r && (!g1c || p < i);
                        if *k2 == *k && (!committed[j] || own_ok) {
                            free.push(*v);
                        }
                    }
                }
            }
            let mut values: Vec<u32> = got.clone();
            values.sort_unstable();
            values.dedup();
            for v in values {
                let read = got.iter().filter(|&&x| x == v).count();
                let all = appended[*k].iter().filter(|&&x| x == v).count();
                free.extend(std::iter::repeat_n(v, read.saturating_sub(all)));
            }
            let others: Vec<(usize, u32)> = versions[*k]
                .iter()
                .copied()
                .filter(|&(w, _)| w != r)
                .collect();
            let l = (0..=others.len()).find(|&l| explains(&got, &others[..l], &free))?;
            if g1c {
                edges.extend(others[..l].iter().map(|&(w, _)| (w, r)));
            }
        }
    }
    Some(edges)
}

/// Whether `read` is `committed` (in order, as a subsequence) with the
/// other positions taken by distinct appends of `free` of the same value.
#[allow(dead_code)] // used by tests/it/duplicates_uncommitted.rs only
fn explains(read: &[u32], committed: &[(usize, u32)], free: &[u32]) -> bool {
    // Reachable (position, committed elements placed); which free appends
    // are used then is fixed: the read's other elements so far.
    let mut reach = vec![vec![false; committed.len() + 1]; read.len() + 1];
    reach[0][0] = true;
    for p in 0..read.len() {
        for j in 0..=committed.len() {
            if !reach[p][j] {
                continue;
            }
            if j < committed.len() && committed[j].1 == read[p] {
                reach[p + 1][j + 1] = true;
            }
            // A free append of this value not used yet: the read's copies
            // of it up to here, less the committed ones, fit in `free`.
            let v = read[p];
            let upto = read[..=p].iter().filter(|&&x| x == v).count();
            let taken = committed[..j].iter().filter(|c| c.1 == v).count();
            if upto - taken <= free.iter().filter(|&&x| x == v).count() {
                reach[p + 1][j] = true;
            }
        }
    }
    reach[read.len()][committed.len()]
}
