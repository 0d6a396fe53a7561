//! List-append inference, after Elle's list-append checker (Kingsbury &
//! Alvaro, VLDB 2020, §4): every read of a key is a prefix of one version
//! order, so the longest read gives the order of appends, and each value names
//! the one transaction that appended it.
//!
//! From the orders we derive ww (consecutive appends), wr (a read's last
//! element) and rw (a reader of the previous state → the appender) edges, and
//! the non-cycle anomalies: G1a, G1b, internal, future-read,
//! duplicate-elements, incompatible-order, dirty-update, lost-update, and
//! garbage-read (an element no transaction appended).

use super::{Anomaly, AnomalyKind, Explain, Inference, Record};
use crate::evidence::{DataStep, Fact};
use crate::graph::Rels;
use crate::history::{History, KeyId, Mop, MopKind, Observed, Outcome, TxnId, ValId};
use rustc_hash::{FxHashMap, FxHashSet};

mod anomalies;
#[cfg(test)]
mod reference;

use anomalies::*;

/// The initial (empty) state of a list, as a value id: no real value has it.
pub const INIT: ValId = u32::MAX;

/// No transaction (a `TxnId` that no transaction has).
const NONE: TxnId = u32::MAX;

/// Indices over the history, kept after inference so that edges can be
/// explained later. They are per micro-op (dense arrays parallel to
/// [`History::mops`]), so explaining an edge only looks at the micro-ops of
/// its two transactions.
pub struct ListAppend<'h> {
    h: &'h History,
    /// For each append: the element just before it in its key's version
    /// order (INIT when it is the first, or the key has no order).
    prev: Vec<ValId>,
    /// For each append: the ok/info transaction that appended `prev`; for
    /// each read of a non-empty list: the ok/info transaction that appended
    /// its last element. NONE when there is none.
    writer: Vec<TxnId>,
}

fn possible(o: Outcome) -> bool {
    matches!(o, Outcome::Ok | Outcome::Info)
}

/// Runs list-append inference: edges, non-cycle anomalies, and the indices
/// that explain the edges.
///
/// The work is done key by key (every rule below relates micro-ops of one
/// key), over the micro-ops grouped by key with a counting sort, with a
/// dense value-id → entry table reused across keys: no hashing of
/// (key, value) pairs, linear in the size of the history. Anomalies that
/// Elle reports in history order are collected per key and sorted back.
/// Works on up to `threads` threads; the result is the same on any number.
pub fn infer(h: &History, threads: usize) -> (Inference, ListAppend<'_>) {
    let threads = if h.mops.len() >= PARALLEL_MIN_MOPS {
        threads
    } else {
        1
    };
    infer_with(h, threads)
}

/// Histories with fewer micro-ops are inferred on one thread: spawning
/// would cost more than it saves.
const PARALLEL_MIN_MOPS: usize = 1 << 16;

/// [`infer`] on `threads` threads, each taking a contiguous range of keys.
/// Results are merged in key order, so they are the same whatever the
/// number of threads (the tests check it).
fn infer_with(h: &History, threads: usize) -> (Inference, ListAppend<'_>) {
    use std::sync::atomic::AtomicU32;
    let by_key = KeyIndex::new(h);
    let txns: Vec<TxnInfo> = h
        .txns
        .iter()
        .map(|t| TxnInfo {
            outcome: t.outcome,
            invoked: t.invoke_index.is_some(),
        })
        .collect();
    let any_fail = txns.iter().any(|t| t.outcome == Outcome::Fail);
    let prev: Vec<AtomicU32> = (0..h.mops.len()).map(|_| AtomicU32::new(INIT)).collect();
    let writer: Vec<AtomicU32> = (0..h.mops.len()).map(|_| AtomicU32::new(NONE)).collect();
    let ranges = by_key.split(threads.max(1));
    let run = |keys: std::ops::Range<KeyId>| {
        let mut pass = KeyPass::new(h, &txns, any_fail, &prev, &writer);
        let mut out = PassOut::default();
        for k in keys {
            let es = by_key.entries(k);
            if !es.is_empty() {
                pass.run(k, es, &mut out);
            }
        }
        out
    };
    let parts: Vec<PassOut> = if ranges.len() == 1 {
        vec![run(ranges[0].clone())]
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = ranges.iter().map(|r| s.spawn(|| run(r.clone()))).collect();
            handles
                .into_iter()
                .map(|j| j.join().expect("an inference thread panicked"))
                .collect()
        })
    };
    let mut out = PassOut::default();
    for p in parts {
        out.edges.extend(p.edges);
        out.incompatible.extend(p.incompatible);
        out.g1a.extend(p.g1a);
        out.g1b.extend(p.g1b);
        out.garbage.extend(p.garbage);
        out.dirty.extend(p.dirty);
        out.lost.extend(p.lost);
        out.dup_keys.extend(p.dup_keys);
    }
    drop(by_key);
    let la = ListAppend {
        h,
        prev: prev.into_iter().map(AtomicU32::into_inner).collect(),
        writer: writer.into_iter().map(AtomicU32::into_inner).collect(),
    };

    let mut anomalies = out.incompatible;
    out.g1a.sort_unstable();
    anomalies.extend(
        out.g1a
            .iter()
            .map(|x| g1a_anomaly(x.0, x.1 as usize, x.3, h.elems[x.2 as usize])),
    );
    out.g1b.sort_unstable();
    anomalies.extend(
        out.g1b
            .iter()
            .map(|x| g1b_anomaly(h, x.0, x.1 as usize, x.2)),
    );
    out.garbage.sort_unstable();
    anomalies.extend(
        out.garbage
            .iter()
            .map(|x| garbage_anomaly(x.0, x.1 as usize, h.elems[x.2 as usize])),
    );
    for t in 0..h.txns.len() as TxnId {
        if txns[t as usize].outcome == Outcome::Ok
            && repeats_a_key(h.mops(t))
            && !small_and_self_consistent(h, h.mops(t))
        {
            anomalies.extend(internal(h, t));
            anomalies.extend(future_read(h, t));
        }
    }
    let mut dup_keys = vec![false; h.keys.len()];
    for &k in &out.dup_keys {
        dup_keys[k as usize] = true;
    }
    anomalies.extend(duplicate_elements(h, &dup_keys));
    anomalies.extend(out.dirty);
    out.lost.sort_unstable_by_key(|g| g.first);
    for g in &out.lost {
        if g.txns.len() >= 2 {
            anomalies.push(lost_update_anomaly(g.key, g.read, &g.txns));
        }
    }
    (
        Inference {
            edges: out.edges,
            anomalies,
        },
        la,
    )
}

/// What the per-key pass needs of a transaction, packed small so that
/// looking it up for every micro-op stays in cache.
#[derive(Clone, Copy)]
struct TxnInfo {
    outcome: Outcome,
    /// It has an invocation (dirty updates count its appends twice).
    invoked: bool,
}

/// One micro-op of the current key, copied out of the history so that the
/// pass's several scans read memory in order.
#[derive(Clone, Copy)]
struct Item {
    t: TxnId,
    /// Global micro-op index.
    i: u32,
    kind: MopKind,
    value: Observed,
    outcome: Outcome,
    invoked: bool,
}

/// Every micro-op of the history grouped by key, as (transaction, global
/// micro-op index), in history order within each key.
struct KeyIndex {
    off: Vec<u32>,
    entries: Vec<(TxnId, u32)>,
}

impl KeyIndex {
    fn new(h: &History) -> Self {
        let mut off = vec![0u32; h.keys.len() + 1];
        for m in &h.mops {
            off[m.key as usize + 1] += 1;
        }
        for k in 0..h.keys.len() {
            off[k + 1] += off[k];
        }
        let mut fill = off.clone();
        let mut entries = vec![(0, 0); h.mops.len()];
        for (t, txn) in h.txns.iter().enumerate() {
            for i in txn.mops_start..txn.mops_start + txn.mops_len {
                let k = h.mops[i as usize].key as usize;
                entries[fill[k] as usize] = (t as TxnId, i);
                fill[k] += 1;
            }
        }
        KeyIndex { off, entries }
    }

    fn entries(&self, k: KeyId) -> &[(TxnId, u32)] {
        &self.entries[self.off[k as usize] as usize..self.off[k as usize + 1] as usize]
    }

    /// At most `n` contiguous, non-empty ranges of keys with about the same
    /// number of micro-ops each (one range, possibly empty, when `n` is 1).
    fn split(&self, n: usize) -> Vec<std::ops::Range<KeyId>> {
        let keys = (self.off.len() - 1) as KeyId;
        let total = self.entries.len();
        let mut ranges = Vec::new();
        let mut start: KeyId = 0;
        for part in 1..n {
            let goal = (total * part / n) as u32;
            let end = self.off.partition_point(|&o| o < goal).min(keys as usize) as KeyId;
            if end > start {
                ranges.push(start..end);
                start = end;
            }
        }
        if start < keys || ranges.is_empty() {
            ranges.push(start..keys);
        }
        ranges
    }
}

/// What the pass knows about one value of the current key.
#[derive(Clone, Copy)]
struct Entry {
    /// Position in the version order (from ok/info reads), NONE if absent.
    pos: u32,
    /// Last ok/info transaction to append it.
    writer: TxnId,
    /// Last transaction, whatever its outcome, to append it.
    writer_any: TxnId,
    /// Last failed transaction to append it.
    failed: TxnId,
    /// Last transaction that appended it and then appended again to the key.
    intermediate: TxnId,
    /// Readers whose read ended with it: a range of `KeyPass::reader_txns`.
    readers_start: u32,
    readers_len: u32,
    /// Last reader counted (a transaction counts once per value).
    last_reader: TxnId,
    /// Already placed in the all-transactions order (dirty updates).
    in_order_any: bool,
}

const EMPTY_ENTRY: Entry = Entry {
    pos: NONE,
    writer: NONE,
    writer_any: NONE,
    failed: NONE,
    intermediate: NONE,
    readers_start: 0,
    readers_len: 0,
    last_reader: NONE,
    in_order_any: false,
};

/// A group of committed read-modify-write transactions on one key that read
/// the same state.
struct LostGroup<'h> {
    /// (first transaction, its write micro-op): where Elle first sees it.
    first: (TxnId, u32),
    key: KeyId,
    read: Option<&'h [ValId]>,
    txns: Vec<TxnId>,
}

/// Results of the pass over all keys.
#[derive(Default)]
struct PassOut<'h> {
    edges: Vec<(TxnId, TxnId, Rels)>,
    incompatible: Vec<Anomaly>,
    /// (reader, read mop, element position in `elems`, failed writer).
    g1a: Vec<(TxnId, u32, u32, TxnId)>,
    /// (reader, read mop, intermediate writer).
    g1b: Vec<(TxnId, u32, TxnId)>,
    /// (reader, read mop, element position in `elems`): elements nobody
    /// appended.
    garbage: Vec<(TxnId, u32, u32)>,
    dirty: Vec<Anomaly>,
    lost: Vec<LostGroup<'h>>,
    /// Keys whose reads may hold an element twice (see `duplicate_elements`).
    dup_keys: Vec<KeyId>,
}

/// Scratch space for one key at a time, reused across keys.
struct KeyPass<'h, 'a> {
    h: &'h History,
    txns: &'a [TxnInfo],
    any_fail: bool,
    /// Where the pass writes [`ListAppend::prev`] and [`ListAppend::writer`]
    /// (shared by the threads; each micro-op belongs to one key, so to one
    /// thread).
    prev: &'a [std::sync::atomic::AtomicU32],
    writer: &'a [std::sync::atomic::AtomicU32],
    /// The current key's micro-ops.
    items: Vec<Item>,
    /// By value id: index into `table`, NONE when the value has no entry.
    slot: Vec<u32>,
    /// Entries of the current key; entry 0 stands for INIT.
    table: Vec<Entry>,
    /// Values with a slot, to clear it after the key.
    touched: Vec<ValId>,
    order: Vec<ValId>,
    order_any: Vec<ValId>,
    /// (entry, reader) pairs, then grouped by entry into `reader_txns`.
    reads: Vec<(u32, TxnId)>,
    reader_txns: Vec<TxnId>,
    lost_groups: FxHashMap<Option<&'h [ValId]>, usize>,
}

impl<'h, 'a> KeyPass<'h, 'a> {
    fn new(
        h: &'h History,
        txns: &'a [TxnInfo],
        any_fail: bool,
        prev: &'a [std::sync::atomic::AtomicU32],
        writer: &'a [std::sync::atomic::AtomicU32],
    ) -> Self {
        KeyPass {
            h,
            txns,
            any_fail,
            prev,
            writer,
            items: Vec::new(),
            slot: vec![NONE; h.values.len()],
            table: Vec::new(),
            touched: Vec::new(),
            order: Vec::new(),
            order_any: Vec::new(),
            reads: Vec::new(),
            reader_txns: Vec::new(),
            lost_groups: FxHashMap::default(),
        }
    }

    /// The entry of `v`, created if new. `v` may be INIT.
    fn entry(&mut self, v: ValId) -> usize {
        if v == INIT {
            return 0;
        }
        let s = &mut self.slot[v as usize];
        if *s == NONE {
            *s = self.table.len() as u32;
            self.table.push(EMPTY_ENTRY);
            self.touched.push(v);
        }
        *s as usize
    }

    /// The entry of `v` if it has one.
    fn find(&self, v: ValId) -> Option<usize> {
        if v == INIT {
            return Some(0);
        }
        match self.slot[v as usize] {
            NONE => None,
            s => Some(s as usize),
        }
    }

    fn run(&mut self, k: KeyId, es: &[(TxnId, u32)], out: &mut PassOut<'h>) {
        use std::sync::atomic::Ordering::Relaxed;
        let h = self.h;
        self.items.clear();
        self.items.extend(es.iter().map(|&(t, i)| {
            let m = &h.mops[i as usize];
            let x = self.txns[t as usize];
            Item {
                t,
                i,
                kind: m.kind,
                value: m.value,
                outcome: x.outcome,
                invoked: x.invoked,
            }
        }));
        let items = std::mem::take(&mut self.items);

        // Version order from ok/info reads: the longest read (the first of
        // that length), unless the key was appended exactly once.
        let mut appends = 0u32;
        let mut single: Option<ValId> = None;
        let mut longest: Option<&'h [ValId]> = None;
        for it in &items {
            if !possible(it.outcome) {
                continue;
            }
            match (it.kind, it.value) {
                (MopKind::Append, v) => {
                    appends += 1;
                    single = match v {
                        Observed::Scalar(v) if appends == 1 => Some(v),
                        _ => None,
                    };
                }
                (MopKind::Read, o @ Observed::List { len, .. })
                    if len > 0 && longest.is_none_or(|l| len as usize > l.len()) =>
                {
                    longest = h.list(o);
                }
                _ => {}
            }
        }
        // Every read must be a prefix of the longest one.
        let mut bad = single.is_some();
        if single.is_none() {
            let long = longest.unwrap_or(&[]);
            let incompatible = items.iter().any(|it| {
                it.kind == MopKind::Read
                    && possible(it.outcome)
                    && h.list(it.value)
                        .is_some_and(|r| !r.is_empty() && !long.starts_with(r))
            });
            if incompatible {
                bad = true;
                let reads = items.iter().filter_map(|it| {
                    (it.kind == MopKind::Read && possible(it.outcome))
                        .then(|| h.list(it.value))
                        .flatten()
                });
                out.incompatible.push(incompatible_order(k, reads));
            }
        }

        self.table.clear();
        self.table.push(EMPTY_ENTRY);
        self.order.clear();
        let mut longest_has_dups = false;
        match single {
            Some(v) => {
                let e = self.entry(v);
                self.table[e].pos = 0;
                self.order.push(v);
            }
            None => {
                for &v in longest.unwrap_or(&[]) {
                    let e = self.entry(v);
                    if self.table[e].pos == NONE {
                        self.table[e].pos = self.order.len() as u32;
                        self.order.push(v);
                    } else {
                        longest_has_dups = true;
                    }
                }
            }
        }
        // When every ok/info read is a prefix of a longest read without
        // repeats, none of them repeats an element.
        if bad || longest_has_dups {
            out.dup_keys.push(k);
        }

        // Writers and readers of each value.
        self.reads.clear();
        let mut prev_append: Option<(TxnId, ValId)> = None;
        for it in &items {
            let (t, o) = (it.t, it.outcome);
            match (it.kind, it.value) {
                (MopKind::Append, Observed::Scalar(v)) => {
                    let e = self.entry(v);
                    let en = &mut self.table[e];
                    en.writer_any = t;
                    match o {
                        Outcome::Ok | Outcome::Info => en.writer = t,
                        Outcome::Fail => en.failed = t,
                    }
                    if let Some((pt, pv)) = prev_append {
                        if pt == t {
                            let pe = self.entry(pv);
                            self.table[pe].intermediate = t;
                        }
                    }
                    prev_append = Some((t, v));
                }
                (MopKind::Read, Observed::Nil) if o == Outcome::Info => {}
                (MopKind::Read, v) if possible(o) => {
                    let last = h.list(v).and_then(|l| l.last().copied()).unwrap_or(INIT);
                    let e = self.entry(last);
                    if self.table[e].last_reader != t {
                        self.table[e].last_reader = t;
                        self.table[e].readers_len += 1;
                        self.reads.push((e as u32, t));
                    }
                }
                _ => {}
            }
        }
        // Group readers by entry (counting sort; history order kept).
        let mut start = 0u32;
        for en in &mut self.table {
            en.readers_start = start;
            start += en.readers_len;
            en.readers_len = 0;
        }
        self.reader_txns.clear();
        self.reader_txns.resize(start as usize, 0);
        for &(e, t) in &self.reads {
            let en = &mut self.table[e as usize];
            self.reader_txns[(en.readers_start + en.readers_len) as usize] = t;
            en.readers_len += 1;
        }

        // Per micro-op indices and the edges.
        let last_in_order = self.order.last().copied().unwrap_or(INIT);
        for it in &items {
            let (t, i) = (it.t, it.i as usize);
            let p = possible(it.outcome);
            match (it.kind, it.value) {
                (MopKind::Read, o) => {
                    let Some(&last) = h.list(o).and_then(|l| l.last()) else {
                        continue;
                    };
                    let w = self.find(last).map_or(NONE, |e| self.table[e].writer);
                    self.writer[i].store(w, Relaxed);
                    if p && w != NONE && w != t {
                        out.edges.push((w, t, Rels::WR));
                    }
                }
                (MopKind::Append, Observed::Scalar(v)) => {
                    // An append never read follows every element that was.
                    let prev = match self.find(v).map(|e| self.table[e].pos) {
                        Some(0) => INIT,
                        Some(NONE) | None => last_in_order,
                        Some(pos) => self.order[pos as usize - 1],
                    };
                    let pe = self.find(prev);
                    let w = match pe {
                        Some(e) if prev != INIT => self.table[e].writer,
                        _ => NONE,
                    };
                    self.prev[i].store(prev, Relaxed);
                    self.writer[i].store(w, Relaxed);
                    if !p {
                        continue;
                    }
                    if w != NONE && w != t {
                        out.edges.push((w, t, Rels::WW));
                    }
                    if let Some(e) = pe {
                        let en = &self.table[e];
                        let rs = &self.reader_txns[en.readers_start as usize
                            ..(en.readers_start + en.readers_len) as usize];
                        out.edges
                            .extend(rs.iter().filter(|&&r| r != t).map(|&r| (r, t, Rels::RW)));
                    }
                }
                _ => {}
            }
        }

        // Garbage reads: elements no transaction appended, whatever its
        // outcome. Every read is a prefix of the longest one unless the key
        // is `bad`, so the longest read alone decides whether to look.
        let unwritten = |pass: &Self, v: ValId| {
            pass.find(v)
                .is_none_or(|e| pass.table[e].writer_any == NONE)
        };
        let garbage = bad || self.order.iter().any(|&v| unwritten(self, v));

        // G1a and G1b: committed reads of failed or intermediate appends.
        for it in &items {
            if it.kind != MopKind::Read || it.outcome != Outcome::Ok {
                continue;
            }
            let Observed::List { start, len } = it.value else {
                continue;
            };
            if garbage {
                for j in start..start + len {
                    if unwritten(self, h.elems[j as usize]) {
                        out.garbage.push((it.t, it.i, j));
                    }
                }
            }
            if self.any_fail {
                for j in start..start + len {
                    if let Some(e) = self.find(h.elems[j as usize]) {
                        let f = self.table[e].failed;
                        if f != NONE {
                            out.g1a.push((it.t, it.i, j, f));
                        }
                    }
                }
            }
            if len > 0 {
                if let Some(e) = self.find(h.elems[(start + len - 1) as usize]) {
                    let w = self.table[e].intermediate;
                    if w != NONE && w != it.t {
                        out.g1b.push((it.t, it.i, w));
                    }
                }
            }
        }

        if self.any_fail {
            self.dirty_updates(k, &items, out);
        }
        self.lost_updates(k, &items, out);

        for &v in &self.touched {
            self.slot[v as usize] = NONE;
        }
        self.touched.clear();
        self.items = items;
    }

    /// Dirty updates on key `k`: Elle reads the version order of all client
    /// transactions here, failed ones included, and counts the appends of a
    /// transaction that has an invocation twice (it scans invocations and
    /// completions alike), so only a lone completion's single append makes
    /// an order without a read.
    fn dirty_updates(&mut self, k: KeyId, items: &[Item], out: &mut PassOut<'h>) {
        let h = self.h;
        let mut appends = 0u32;
        let mut single: Option<ValId> = None;
        let mut longest: Option<&'h [ValId]> = None;
        for it in items {
            match (it.kind, it.value) {
                (MopKind::Append, v) => {
                    appends += 1;
                    single = match v {
                        Observed::Scalar(v) if appends == 1 && !it.invoked => Some(v),
                        _ => None,
                    };
                }
                (MopKind::Read, o @ Observed::List { len, .. })
                    if len > 0 && longest.is_none_or(|l| len as usize > l.len()) =>
                {
                    longest = h.list(o);
                }
                _ => {}
            }
        }
        self.order_any.clear();
        match (single, longest) {
            (Some(v), _) => self.order_any.push(v),
            (None, Some(l)) => {
                for &v in l {
                    let e = self.entry(v);
                    if !self.table[e].in_order_any {
                        self.table[e].in_order_any = true;
                        self.order_any.push(v);
                    }
                }
            }
            (None, None) => return,
        }
        // (outcome, txn) of the last append that decides; None = initial state.
        let mut t1: (Outcome, Option<TxnId>) = (Outcome::Ok, None);
        let mut vs: Vec<ValId> = Vec::new();
        for idx in 0..self.order_any.len() {
            let v = self.order_any[idx];
            let Some(t2) = self
                .find(v)
                .map(|e| self.table[e].writer_any)
                .filter(|&w| w != NONE)
            else {
                continue;
            };
            vs.push(v);
            let o2 = self.txns[t2 as usize].outcome;
            use Outcome::*;
            match (t1.0, o2) {
                (Fail, Ok) => {
                    let failed = t1.1.expect("a failed state has a writer");
                    out.dirty.push(dirty_update_anomaly(k, &vs, failed, t2));
                    t1 = (o2, Some(t2));
                    vs = vec![v];
                }
                (_, Ok) | (Ok | Info, Fail) => {
                    t1 = (o2, Some(t2));
                    vs = vec![v];
                }
                (_, Info) | (Fail, Fail) => {}
            }
        }
    }

    /// Lost updates on key `k` (see [`lost_update_groups`]).
    fn lost_updates(&mut self, k: KeyId, items: &[Item], out: &mut PassOut<'h>) {
        lost_update_groups(self.h, k, items, &mut self.lost_groups, &mut out.lost);
    }
}

/// Lost updates on key `k`: committed transactions whose first write of the
/// key follows a read of it, grouped by what that (first) read saw. The
/// grouping is by the list read, not by who wrote it, so it holds as well
/// when appended values repeat: there it is a fact of the reads, the same
/// under every choice of writers (see `check::duplicates`).
fn lost_update_groups<'h>(
    h: &'h History,
    k: KeyId,
    items: &[Item],
    groups: &mut FxHashMap<Option<&'h [ValId]>, usize>,
    lost: &mut Vec<LostGroup<'h>>,
) {
    groups.clear();
    let mut i = 0;
    while i < items.len() {
        let t = items[i].t;
        let mut j = i;
        while j < items.len() && items[j].t == t {
            j += 1;
        }
        if items[i].outcome == Outcome::Ok {
            let mut read: Option<Option<&'h [ValId]>> = None;
            for it in &items[i..j] {
                if it.kind == MopKind::Read {
                    read.get_or_insert_with(|| h.list(it.value));
                    continue;
                }
                // The first write of the key after its first read. As in
                // Elle, appends before that read do not end the search:
                // `[:append k a] [:r k [.. a]] [:append k b]` still read
                // a state and then wrote over it.
                if let Some(r) = read {
                    let n = lost.len();
                    let g = *groups.entry(r).or_insert(n);
                    if g == n {
                        lost.push(LostGroup {
                            first: (t, it.i),
                            key: k,
                            read: r,
                            txns: Vec::new(),
                        });
                    }
                    lost[g].txns.push(t);
                    break;
                }
            }
        }
        i = j;
    }
}

/// Elle's lost updates alone: groups of two or more committed transactions
/// that read the same state of a key and then appended to it, in the order
/// [`infer`] reports them. Used where the rest of the inference does not
/// apply (appended values that repeat).
pub fn lost_updates(h: &History) -> Vec<Anomaly> {
    let by_key = KeyIndex::new(h);
    let mut groups = FxHashMap::default();
    let mut lost = Vec::new();
    let mut items = Vec::new();
    for k in 0..h.keys.len() as KeyId {
        items.clear();
        items.extend(by_key.entries(k).iter().map(|&(t, i)| {
            let m = &h.mops[i as usize];
            let x = &h.txns[t as usize];
            Item {
                t,
                i,
                kind: m.kind,
                value: m.value,
                outcome: x.outcome,
                invoked: x.invoke_index.is_some(),
            }
        }));
        lost_update_groups(h, k, &items, &mut groups, &mut lost);
    }
    lost.sort_unstable_by_key(|g| g.first);
    lost.iter()
        .filter(|g| g.txns.len() >= 2)
        .map(|g| lost_update_anomaly(g.key, g.read, &g.txns))
        .collect()
}

/// Is some key read and later appended to in these micro-ops? Only then can
/// a transaction read its own future append.
fn reads_then_appends(mops: &[Mop]) -> bool {
    if mops.len() <= 16 {
        return mops.iter().enumerate().any(|(i, m)| {
            m.kind == MopKind::Read
                && mops[i + 1..]
                    .iter()
                    .any(|x| x.kind == MopKind::Append && x.key == m.key)
        });
    }
    let mut read: FxHashSet<KeyId> = FxHashSet::default();
    mops.iter().any(|m| match m.kind {
        MopKind::Read => {
            read.insert(m.key);
            false
        }
        MopKind::Append => read.contains(&m.key),
        MopKind::Write => false,
    })
}

/// A fast pass for the common small transaction (at most 16 micro-ops):
/// true when it certainly has neither an internal nor a future-read
/// anomaly. Works in place, without the maps [`internal`] and
/// [`future_read`] build, which cost more than the rest of inference on
/// read-modify-write workloads. False means "run the full checks".
fn small_and_self_consistent(h: &History, mops: &[Mop]) -> bool {
    if mops.len() > 16 {
        return false;
    }
    fn appended(ms: &[Mop], k: KeyId) -> impl Iterator<Item = ValId> + '_ {
        ms.iter()
            .filter(move |x| x.kind == MopKind::Append && x.key == k)
            .filter_map(|x| match x.value {
                Observed::Scalar(v) => Some(v),
                _ => None,
            })
    }
    for (i, m) in mops.iter().enumerate() {
        match (m.kind, m.value) {
            (MopKind::Read, o) => {
                // internal: the read must be the last earlier read plus the
                // appends since (or end with the appends, if none).
                let read = h.list(o).unwrap_or(&[]);
                let last = mops[..i]
                    .iter()
                    .rposition(|x| x.kind == MopKind::Read && x.key == m.key);
                let from = last.map_or(0, |j| j + 1);
                let n = appended(&mops[from..i], m.key).count();
                let tail_start = match last {
                    Some(j) => {
                        let base = h.list(mops[j].value).unwrap_or(&[]);
                        if read.len() != base.len() + n || !read.starts_with(base) {
                            return false;
                        }
                        base.len()
                    }
                    None if read.len() < n => return false,
                    None => read.len() - n,
                };
                if !read[tail_start..]
                    .iter()
                    .copied()
                    .eq(appended(&mops[from..i], m.key))
                {
                    return false;
                }
            }
            (MopKind::Append, Observed::Scalar(v)) => {
                // future-read: no earlier read of the key already holds v.
                let seen = mops[..i].iter().any(|x| {
                    x.kind == MopKind::Read
                        && x.key == m.key
                        && h.list(x.value).is_some_and(|l| l.contains(&v))
                });
                if seen {
                    return false;
                }
            }
            _ => {}
        }
    }
    true
}

/// Does some key occur in more than one of these micro-ops? Only then can a
/// transaction contradict itself (internal, future-read).
fn repeats_a_key(mops: &[Mop]) -> bool {
    if mops.len() <= 16 {
        return mops
            .iter()
            .enumerate()
            .any(|(i, m)| mops[i + 1..].iter().any(|x| x.key == m.key));
    }
    let mut keys: Vec<KeyId> = mops.iter().map(|m| m.key).collect();
    keys.sort_unstable();
    keys.windows(2).any(|w| w[0] == w[1])
}

/// Elle's report for a key whose reads disagree: the first pair of distinct
/// reads, sorted by length, where the shorter is not a prefix of the longer.
/// `reads` are the key's ok/info list reads, in history order.
fn incompatible_order<'a>(k: KeyId, all: impl Iterator<Item = &'a [ValId]>) -> Anomaly {
    let mut reads: Vec<&[ValId]> = Vec::new();
    let mut seen: FxHashSet<&[ValId]> = FxHashSet::default();
    for r in all {
        if !r.is_empty() && seen.insert(r) {
            reads.push(r);
        }
    }
    reads.sort_by_key(|r| r.len());
    let (a, b) = reads
        .windows(2)
        .map(|w| (w[0], w[1]))
        .find(|(a, b)| !b.starts_with(a))
        .unwrap_or((reads[0], reads[0]));
    Anomaly::new(
        AnomalyKind::IncompatibleOrder,
        Record::IncompatibleOrder {
            key: k,
            a: a.into(),
            b: b.into(),
        },
    )
}

impl ListAppend<'_> {
    /// The global index of `t`'s `i`-th micro-op.
    fn at(&self, t: TxnId, i: usize) -> usize {
        self.h.txns[t as usize].mops_start as usize + i
    }

    fn explain_ww(&self, a: TxnId, b: TxnId) -> Option<DataStep> {
        let h = self.h;
        h.mops(b).iter().enumerate().find_map(|(bi, m)| {
            let Observed::Scalar(v) = m.value else {
                return None;
            };
            if m.kind != MopKind::Append {
                return None;
            }
            let g = self.at(b, bi);
            let prev = self.prev[g];
            if prev == INIT || self.writer[g] != a || a == b {
                return None;
            }
            let ai = h.mops(a).iter().position(|x| {
                x.kind == MopKind::Append && x.key == m.key && x.value == Observed::Scalar(prev)
            });
            Some(DataStep {
                key: m.key,
                a_mop: ai,
                b_mop: Some(bi),
                fact: Fact::Appended { prev, next: v },
            })
        })
    }

    fn explain_wr(&self, a: TxnId, b: TxnId) -> Option<DataStep> {
        let h = self.h;
        h.mops(b).iter().enumerate().find_map(|(bi, m)| {
            if m.kind != MopKind::Read {
                return None;
            }
            let &last = h.list(m.value)?.last()?;
            if self.writer[self.at(b, bi)] != a || a == b {
                return None;
            }
            let ai = h.mops(a).iter().position(|x| {
                x.kind == MopKind::Append && x.key == m.key && x.value == Observed::Scalar(last)
            });
            Some(DataStep {
                key: m.key,
                a_mop: ai,
                b_mop: Some(bi),
                fact: Fact::ObservedAppend { value: last },
            })
        })
    }

    /// Did `a` (an ok/info transaction) read `k` and see `prev` last (INIT:
    /// nothing)? An info transaction's `nil` read says nothing.
    fn observed_last(&self, a: TxnId, k: KeyId, prev: ValId) -> bool {
        let h = self.h;
        let o = h.txns[a as usize].outcome;
        possible(o)
            && h.mops(a).iter().any(|x| {
                x.kind == MopKind::Read
                    && x.key == k
                    && !(x.value == Observed::Nil && o == Outcome::Info)
                    && h.list(x.value)
                        .and_then(|l| l.last().copied())
                        .unwrap_or(INIT)
                        == prev
            })
    }

    fn explain_rw(&self, a: TxnId, b: TxnId) -> Option<DataStep> {
        let h = self.h;
        h.mops(b).iter().enumerate().find_map(|(bi, m)| {
            let Observed::Scalar(v) = m.value else {
                return None;
            };
            if m.kind != MopKind::Append || a == b {
                return None;
            }
            let prev = self.prev[self.at(b, bi)];
            if !self.observed_last(a, m.key, prev) {
                return None;
            }
            let ai = h.mops(a).iter().position(|x| {
                x.kind == MopKind::Read
                    && x.key == m.key
                    && match h.list(x.value) {
                        Some(l) => l.last().copied().unwrap_or(INIT) == prev,
                        None => prev == INIT,
                    }
            });
            Some(DataStep {
                key: m.key,
                a_mop: ai,
                b_mop: Some(bi),
                fact: Fact::MissedAppend {
                    prev: (prev != INIT).then_some(prev),
                    next: v,
                },
            })
        })
    }
}

impl Explain for ListAppend<'_> {
    /// Elle's list-append explainer tries ww, then wr, then rw.
    fn order(&self) -> &'static [Rels] {
        &[Rels::WW, Rels::WR, Rels::RW]
    }

    fn explain_rel(&self, _h: &History, a: TxnId, b: TxnId, rel: Rels) -> Option<DataStep> {
        match rel {
            Rels::WW => self.explain_ww(a, b),
            Rels::WR => self.explain_wr(a, b),
            Rels::RW => self.explain_rw(a, b),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
