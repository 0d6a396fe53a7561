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

use super::{Anomaly, Explain, Inference, Step};
use crate::explain::json as js;
use crate::graph::Rels;
use crate::history::{History, KeyId, Mop, MopKind, Observed, Outcome, TxnId, ValId};
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{json, Value};

#[cfg(test)]
mod reference;

/// The initial (empty) state of a list, as a value id: no real value has it.
pub const INIT: ValId = u32::MAX;

/// Elle's name for the initial state, as it appears in explanations.
const INIT_NAME: &str = "elle.list-append/init";

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
pub fn infer(h: &History) -> (Inference, ListAppend<'_>) {
    let threads = if h.mops.len() >= PARALLEL_MIN_MOPS {
        crate::history::read::threads()
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
                out.incompatible.push(incompatible_order(h, k, reads));
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

    /// Lost updates on key `k`: committed transactions whose first write of
    /// the key follows a read of it, grouped by what that (first) read saw.
    fn lost_updates(&mut self, k: KeyId, items: &[Item], out: &mut PassOut<'h>) {
        let h = self.h;
        self.lost_groups.clear();
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
                        let n = out.lost.len();
                        let g = *self.lost_groups.entry(r).or_insert(n);
                        if g == n {
                            out.lost.push(LostGroup {
                                first: (t, it.i),
                                key: k,
                                read: r,
                                txns: Vec::new(),
                            });
                        }
                        out.lost[g].txns.push(t);
                        break;
                    }
                }
            }
            i = j;
        }
    }
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
fn incompatible_order<'a>(
    h: &History,
    k: KeyId,
    all: impl Iterator<Item = &'a [ValId]>,
) -> Anomaly {
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
    let list = |r: &[ValId]| Value::Array(r.iter().map(|&v| js::value(h, v)).collect());
    let edn = |r: &[ValId]| {
        let xs: Vec<String> = r.iter().map(|&v| h.values.datum(v).to_string()).collect();
        format!("[{}]", xs.join(" "))
    };
    Anomaly::eager(
        "incompatible-order",
        json!({"key": js::key(h, k), "values": [list(a), list(b)]}),
        format!(
            "Reads of key {} disagree on the order of appends: {} is not a prefix of {}, so no single order of appends explains both.",
            h.keys.datum(k),
            edn(a),
            edn(b)
        ),
    )
}

impl ListAppend<'_> {
    /// The global index of `t`'s `i`-th micro-op.
    fn at(&self, t: TxnId, i: usize) -> usize {
        self.h.txns[t as usize].mops_start as usize + i
    }

    fn value_json(&self, v: ValId) -> Value {
        if v == INIT {
            json!(INIT_NAME)
        } else {
            js::value(self.h, v)
        }
    }

    fn explain_ww(&self, a: TxnId, b: TxnId) -> Option<Step> {
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
            Some(Step {
                rel: Rels::WW,
                key: Some(m.key),
                value: Some(self.value_json(prev)),
                value2: Some(js::value(h, v)),
                a_mop_index: ai,
                b_mop_index: Some(bi),
                because: format!(
                    "{{b}} appended {} after {{a}} appended {} to {}",
                    h.values.datum(v),
                    h.values.datum(prev),
                    h.keys.datum(m.key)
                ),
            })
        })
    }

    fn explain_wr(&self, a: TxnId, b: TxnId) -> Option<Step> {
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
            Some(Step {
                rel: Rels::WR,
                key: Some(m.key),
                value: Some(js::value(h, last)),
                value2: None,
                a_mop_index: ai,
                b_mop_index: Some(bi),
                because: format!(
                    "{{b}} observed {{a}}'s append of {} to key {}",
                    h.values.datum(last),
                    h.keys.datum(m.key)
                ),
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

    fn explain_rw(&self, a: TxnId, b: TxnId) -> Option<Step> {
        let h = self.h;
        h.mops(b).iter().enumerate().find_map(|(bi, m)| {
            let Observed::Scalar(v) = m.value else { return None };
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
            let because = if prev == INIT {
                format!(
                    "{{a}} observed the initial (nil) state of {}, which {{b}} created by appending {}",
                    h.keys.datum(m.key),
                    h.values.datum(v)
                )
            } else {
                format!(
                    "{{a}} did not observe {{b}}'s append of {} to {}",
                    h.values.datum(v),
                    h.keys.datum(m.key)
                )
            };
            Some(Step {
                rel: Rels::RW,
                key: Some(m.key),
                value: Some(self.value_json(prev)),
                value2: Some(js::value(h, v)),
                a_mop_index: ai,
                b_mop_index: Some(bi),
                because,
            })
        })
    }
}

impl Explain for ListAppend<'_> {
    fn explain(&self, _h: &History, a: TxnId, b: TxnId, allowed: Rels) -> Option<Step> {
        let ww = || {
            allowed
                .intersects(Rels::WW)
                .then(|| self.explain_ww(a, b))
                .flatten()
        };
        let wr = || {
            allowed
                .intersects(Rels::WR)
                .then(|| self.explain_wr(a, b))
                .flatten()
        };
        let rw = || {
            allowed
                .intersects(Rels::RW)
                .then(|| self.explain_rw(a, b))
                .flatten()
        };
        ww().or_else(wr).or_else(rw)
    }
}

/// G1a (aborted read): ok transaction `t`'s read (micro-op `i`) saw `e`,
/// appended by `w`, a transaction that failed.
fn g1a_anomaly(t: TxnId, i: usize, w: TxnId, e: ValId) -> Anomaly {
    Anomaly::new("G1a", move |h| {
        let m = &h.mops[i];
        (
            json!({"op": js::op(h, t), "mop": js::mop(h, m),
                   "writer": js::op(h, w), "element": js::value(h, e)}),
            format!(
                "{} read {} and saw {}, which was appended by a transaction that failed: {}",
                js::op_edn(h, t),
                js::mop_edn(h, m),
                h.values.datum(e),
                js::op_edn(h, w)
            ),
        )
    })
}

/// Garbage read: ok transaction `t`'s read (micro-op `i`) saw `e`, which no
/// transaction in the history appended (not even a failed one, which would
/// make it G1a).
fn garbage_anomaly(t: TxnId, i: usize, e: ValId) -> Anomaly {
    Anomaly::new(crate::model::anomaly::GARBAGE_READ, move |h| {
        let m = &h.mops[i];
        (
            json!({"op": js::op(h, t), "mop": js::mop(h, m), "element": js::value(h, e)}),
            format!(
                "{} read {} and saw {}, which no transaction in the history appended",
                js::op_edn(h, t),
                js::mop_edn(h, m),
                h.values.datum(e),
            ),
        )
    })
}

/// G1b (intermediate read): ok transaction `t`'s read (micro-op `i`) ends
/// with an element that `w` appended but then followed with another append
/// to the same key.
fn g1b_anomaly(h: &History, t: TxnId, i: usize, w: TxnId) -> Anomaly {
    let e = *h
        .list(h.mops[i].value)
        .and_then(|l| l.last())
        .expect("a G1b read is not empty");
    Anomaly::new("G1b", move |h| {
        let m = &h.mops[i];
        (
            json!({"op": js::op(h, t), "mop": js::mop(h, m),
                   "writer": js::op(h, w), "element": js::value(h, e)}),
            format!(
                "{} read {}, whose last element {} was an intermediate append: its writer went on to append again to {}: {}",
                js::op_edn(h, t),
                js::mop_edn(h, m),
                h.values.datum(e),
                h.keys.datum(m.key),
                js::op_edn(h, w)
            ),
        )
    })
}

/// Dirty update on key `k`: committed `t2` appended on top of a state
/// written by the failed `failed` (`vs`: the values from that state on).
fn dirty_update_anomaly(k: KeyId, vs: &[ValId], failed: TxnId, t2: TxnId) -> Anomaly {
    let vs = vs.to_vec();
    Anomaly::new("dirty-update", move |h| {
        (
            json!({"key": js::key(h, k),
                   "values": vs.iter().map(|&x| js::value(h, x)).collect::<Vec<_>>(),
                   "txns": [js::op(h, failed), "...", js::op(h, t2)]}),
            format!(
                "On key {}, the committed transaction {} appended on top of a state written by the failed transaction {}",
                h.keys.datum(k),
                js::op_edn(h, t2),
                js::op_edn(h, failed)
            ),
        )
    })
}

/// Lost update: committed `txns` read the same state `read` of key `k` and
/// all appended to it.
fn lost_update_anomaly(k: KeyId, read: Option<&[ValId]>, txns: &[TxnId]) -> Anomaly {
    let read: Option<Box<[ValId]>> = read.map(Box::from);
    let txns: Box<[TxnId]> = Box::from(txns);
    Anomaly::new("lost-update", move |h| {
        let value = match &read {
            Some(l) => Value::Array(l.iter().map(|&v| js::value(h, v)).collect()),
            None => Value::Null,
        };
        (
            json!({"key": js::key(h, k), "value": value,
                   "txns": txns.iter().map(|&t| js::op(h, t)).collect::<Vec<_>>()}),
            format!(
                "{} transactions read the same state of key {} ({}) and each appended to it, so all but one update was lost: {}",
                txns.len(),
                h.keys.datum(k),
                value,
                txns.iter().map(|&t| js::op_edn(h, t)).collect::<Vec<_>>().join(", ")
            ),
        )
    })
}

/// What a transaction expects a key to hold, from its own earlier reads and
/// appends: the whole list, or only its tail (after an unknown prefix).
enum Expected {
    Whole(Vec<ValId>),
    Tail(Vec<ValId>),
}

/// Internal consistency (Cerone et al.'s INT): a read disagrees with the
/// transaction's own earlier read or appends of the same key. A `nil` read
/// counts as the empty list (Elle distinguishes them; we do not, since both
/// say the key is empty).
fn internal(h: &History, t: TxnId) -> Option<Anomaly> {
    let mut state: FxHashMap<KeyId, Expected> = FxHashMap::default();
    for m in h.mops(t) {
        match (m.kind, m.value) {
            (MopKind::Append, Observed::Scalar(v)) => match state.get_mut(&m.key) {
                Some(Expected::Whole(xs)) | Some(Expected::Tail(xs)) => xs.push(v),
                None => {
                    state.insert(m.key, Expected::Tail(vec![v]));
                }
            },
            (MopKind::Read, o) => {
                let read = h.list(o).unwrap_or(&[]);
                let ok = match state.get(&m.key) {
                    None => true,
                    Some(Expected::Whole(xs)) => xs.as_slice() == read,
                    Some(Expected::Tail(xs)) => read.ends_with(xs),
                };
                if !ok {
                    let expected = match &state[&m.key] {
                        Expected::Whole(xs) => {
                            Value::Array(xs.iter().map(|&v| js::value(h, v)).collect())
                        }
                        Expected::Tail(xs) => Value::Array(
                            std::iter::once(json!("..."))
                                .chain(xs.iter().map(|&v| js::value(h, v)))
                                .collect(),
                        ),
                    };
                    return Some(Anomaly::eager(
                        "internal",
                        json!({"op": js::op(h, t), "mop": js::mop(h, m), "expected": expected}),
                        format!(
                            "{} read {}, but its own earlier reads and appends of {} imply {}",
                            js::op_edn(h, t),
                            js::mop_edn(h, m),
                            h.keys.datum(m.key),
                            expected
                        ),
                    ));
                }
                state.insert(m.key, Expected::Whole(read.to_vec()));
            }
            _ => {}
        }
    }
    None
}

/// Future read: a transaction read an element it only appends later.
fn future_read(h: &History, t: TxnId) -> Option<Anomaly> {
    let mops = h.mops(t);
    if !reads_then_appends(mops) {
        return None;
    }
    let mut seen: FxHashMap<(KeyId, ValId), usize> = FxHashMap::default();
    for (i, m) in mops.iter().enumerate() {
        match (m.kind, m.value) {
            (MopKind::Read, o) => {
                for &e in h.list(o).unwrap_or(&[]) {
                    seen.entry((m.key, e)).or_insert(i);
                }
            }
            (MopKind::Append, Observed::Scalar(v)) => {
                if let Some(&ri) = seen.get(&(m.key, v)) {
                    let read: &Mop = &mops[ri];
                    return Some(Anomaly::eager(
                        "future-read",
                        json!({"op": js::op(h, t), "mop": js::mop(h, read), "element": js::value(h, v)}),
                        format!(
                            "{} read {}, which already contains {}, an element the same transaction appends only later",
                            js::op_edn(h, t),
                            js::mop_edn(h, read),
                            h.values.datum(v)
                        ),
                    ));
                }
            }
            _ => {}
        }
    }
    None
}

/// Duplicate elements: an ok or info read that contains the same element
/// twice, though each value is appended once.
///
/// Only keys in `check` (by key id) can have such reads: the per-key pass
/// clears the others.
fn duplicate_elements(h: &History, check: &[bool]) -> Vec<Anomaly> {
    // A cheap filter first: stamp each element with the read's number; a
    // stamp already there means a repeat, and only then are they counted.
    let mut stamp: Vec<u32> = vec![u32::MAX; h.values.len()];
    let mut reads = 0u32;
    let mut out = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        if !possible(txn.outcome) {
            continue;
        }
        let t = t as TxnId;
        for m in h.mops(t) {
            if m.kind != MopKind::Read || !check[m.key as usize] {
                continue;
            }
            let Some(read) = h.list(m.value) else {
                continue;
            };
            if read.len() < 2 {
                continue;
            }
            reads = reads.wrapping_add(1);
            if !read
                .iter()
                .any(|&e| std::mem::replace(&mut stamp[e as usize], reads) == reads)
            {
                continue;
            }
            let mut counts: FxHashMap<ValId, u32> = FxHashMap::default();
            for &e in read {
                *counts.entry(e).or_default() += 1;
            }
            let mut dups: Vec<(ValId, u32)> = counts.into_iter().filter(|&(_, c)| c > 1).collect();
            if dups.is_empty() {
                continue;
            }
            dups.sort_by(|a, b| h.values.datum(a.0).cmp(h.values.datum(b.0)));
            let mut map = serde_json::Map::new();
            for &(e, c) in &dups {
                map.insert(h.values.datum(e).to_string(), json!(c));
            }
            out.push(Anomaly::eager(
                "duplicate-elements",
                json!({"op": js::op(h, t), "mop": js::mop(h, m), "duplicates": map}),
                format!(
                    "{} read {}, which holds {} more than once, though every value is appended once",
                    js::op_edn(h, t),
                    js::mop_edn(h, m),
                    dups.iter().map(|&(e, _)| h.values.datum(e).to_string()).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::read::read_history;

    fn history(edn: &str) -> History {
        read_history(edn.as_bytes(), "test", None).expect("test history parses")
    }

    /// Edges as (completion index, completion index, relation name), sorted.
    fn edges(h: &History) -> Vec<(i64, i64, &'static str)> {
        let (inf, _) = infer(h);
        let mut e: Vec<_> = inf
            .edges
            .iter()
            .map(|&(a, b, r)| (h.txns[a as usize].index, h.txns[b as usize].index, r.name()))
            .collect();
        e.sort();
        e.dedup();
        e
    }

    fn kinds(h: &History) -> Vec<&'static str> {
        let (inf, _) = infer(h);
        let mut k: Vec<_> = inf.anomalies.iter().map(|a| a.kind).collect();
        k.sort();
        k
    }

    #[test]
    fn consecutive_appends_in_the_longest_read_give_ww_and_reads_give_wr() {
        let h = history(
            "{:index 0 :type :ok :process 0 :value [[:append :x 1]]}
             {:index 1 :type :ok :process 1 :value [[:append :x 2]]}
             {:index 2 :type :ok :process 2 :value [[:r :x [1 2]]]}",
        );
        assert_eq!(edges(&h), vec![(0, 1, "ww"), (1, 2, "wr")]);
        assert!(kinds(&h).is_empty());
    }

    #[test]
    fn a_reader_of_the_previous_state_anti_depends_on_the_next_appender() {
        let h = history(
            "{:index 0 :type :ok :process 0 :value [[:append :x 1]]}
             {:index 1 :type :ok :process 1 :value [[:r :x [1]]]}
             {:index 2 :type :ok :process 2 :value [[:append :x 2]]}
             {:index 3 :type :ok :process 3 :value [[:r :x nil]]}
             {:index 4 :type :ok :process 4 :value [[:r :x [1 2]]]}",
        );
        let e = edges(&h);
        assert!(e.contains(&(1, 2, "rw")), "{e:?}");
        // An empty read precedes the first append.
        assert!(e.contains(&(3, 0, "rw")), "{e:?}");
        assert!(e.contains(&(0, 2, "ww")), "{e:?}");
    }

    #[test]
    fn an_append_never_read_follows_every_observed_element() {
        let h = history(
            "{:index 0 :type :ok :process 0 :value [[:append :x 1] [:append :x 2]]}
             {:index 1 :type :ok :process 1 :value [[:r :x [1 2]]]}
             {:index 2 :type :ok :process 2 :value [[:append :x 3]]}",
        );
        let e = edges(&h);
        assert!(e.contains(&(0, 2, "ww")), "{e:?}");
        assert!(e.contains(&(1, 2, "rw")), "{e:?}");
    }

    #[test]
    fn a_key_appended_once_needs_no_read_for_its_order() {
        let h = history(
            "{:index 0 :type :ok :process 0 :value [[:r :x nil]]}
             {:index 1 :type :ok :process 1 :value [[:append :x 1]]}",
        );
        assert_eq!(edges(&h), vec![(0, 1, "rw")]);
    }

    #[test]
    fn g1a_is_a_read_of_a_failed_append() {
        let h = history(
            "{:index 0 :type :fail :process 0 :value [[:append :x 1]]}
             {:index 1 :type :ok :process 1 :value [[:r :x [1]]]}",
        );
        assert_eq!(kinds(&h), vec!["G1a"]);
        // A failed transaction is not in the graph.
        assert!(edges(&h).is_empty());
    }

    #[test]
    fn g1b_is_a_read_ending_in_an_intermediate_append() {
        let h = history(
            "{:index 0 :type :ok :process 0 :value [[:append :x 1] [:append :x 2]]}
             {:index 1 :type :ok :process 1 :value [[:r :x [1]]]}",
        );
        assert_eq!(kinds(&h), vec!["G1b"]);
        // The writer reading its own intermediate state is fine.
        let own = history(
            "{:index 0 :type :ok :process 0 :value [[:append :x 1] [:r :x [1]] [:append :x 2]]}",
        );
        assert!(kinds(&own).is_empty());
    }

    #[test]
    fn internal_is_a_read_that_contradicts_the_transactions_own_writes() {
        // The values read were appended (by a failed transaction, op 9), so
        // only internal consistency is at stake.
        let elsewhere = "{:index 9 :type :fail :process 1 :value [[:append :x 2] [:append :x 5] [:append :x 6]]}";
        let h = history(&format!(
            "{{:index 0 :type :ok :process 0 :value [[:append :x 1] [:r :x [2]]]}}\n{elsewhere}"
        ));
        assert!(kinds(&h).contains(&"internal"), "{:?}", kinds(&h));
        let (inf, _) = infer(&h);
        let internal = inf.anomalies.iter().find(|a| a.kind == "internal").unwrap();
        assert_eq!(internal.detail(&h)["expected"], json!(["...", 1]));
        let ok = history(&format!(
            "{{:index 0 :type :ok :process 0 :value [[:r :x [5]] [:append :x 1] [:r :x [5 1]]]}}\n{elsewhere}"
        ));
        assert!(!kinds(&ok).contains(&"internal"), "{:?}", kinds(&ok));
        let changed = history(&format!(
            "{{:index 0 :type :ok :process 0 :value [[:r :x [5]] [:r :x [5 6]]]}}\n{elsewhere}"
        ));
        assert!(kinds(&changed).contains(&"internal"));
    }

    #[test]
    fn garbage_read_is_an_element_nobody_appended() {
        // 9 was never appended; 3 only by a failed transaction (G1a); the
        // empty read is the initial state.
        let h = history(
            "{:index 0 :type :ok :process 0 :value [[:append :x 1]]}\n\
             {:index 1 :type :fail :process 1 :value [[:append :x 3]]}\n\
             {:index 2 :type :ok :process 2 :value [[:r :x [1 9]] [:r :y []]]}\n\
             {:index 3 :type :ok :process 3 :value [[:r :x [1 9 3]]]}",
        );
        let (inf, _) = infer(&h);
        let garbage: Vec<String> = inf
            .anomalies
            .iter()
            .filter(|a| a.kind == "garbage-read")
            .map(|a| a.explanation(&h))
            .collect();
        assert_eq!(garbage.len(), 2, "{garbage:?}");
        assert!(garbage[0]
            .contains("[:r :x [1 9]] and saw 9, which no transaction in the history appended"));
        assert!(kinds(&h).contains(&"G1a"));
        // A key appended once decides its order without reads: still seen.
        let once = history(
            "{:index 0 :type :ok :process 0 :value [[:append :x 1]]}\n\
             {:index 1 :type :ok :process 1 :value [[:r :x [7]]]}",
        );
        assert!(kinds(&once).contains(&"garbage-read"));
    }

    #[test]
    fn future_read_sees_an_element_appended_later_by_itself() {
        let h = history("{:index 0 :type :ok :process 0 :value [[:r :x [1]] [:append :x 1]]}");
        assert!(kinds(&h).contains(&"future-read"));
    }

    #[test]
    fn duplicate_elements_and_incompatible_orders_are_reported() {
        let dup = history(
            "{:index 0 :type :ok :process 0 :value [[:append :x 1]]}
             {:index 1 :type :ok :process 1 :value [[:append :y 3]]}
             {:index 2 :type :ok :process 2 :value [[:r :x [1 1]]]}",
        );
        assert!(kinds(&dup).contains(&"duplicate-elements"));
        let inc = history(
            "{:index 0 :type :ok :process 0 :value [[:append :x 1]]}
             {:index 1 :type :ok :process 1 :value [[:append :x 2]]}
             {:index 2 :type :ok :process 2 :value [[:r :x [1 2]]]}
             {:index 3 :type :ok :process 3 :value [[:r :x [2 1]]]}",
        );
        let (inf, _) = infer(&inc);
        let a = inf
            .anomalies
            .iter()
            .find(|a| a.kind == "incompatible-order")
            .expect("reported");
        assert_eq!(a.detail(&inc)["values"], json!([[1, 2], [2, 1]]));
    }

    #[test]
    fn dirty_update_is_a_committed_append_on_a_failed_one() {
        let h = history(
            "{:index 0 :type :fail :process 0 :value [[:append :x 1]]}
             {:index 1 :type :ok :process 1 :value [[:append :x 2]]}
             {:index 2 :type :ok :process 2 :value [[:r :x [1 2]]]}",
        );
        assert!(kinds(&h).contains(&"dirty-update"));
    }

    #[test]
    fn lost_update_is_two_committed_appends_after_reading_the_same_state() {
        let h = history(
            "{:index 0 :type :ok :process 0 :value [[:r :x [1]] [:append :x 2]]}
             {:index 1 :type :ok :process 1 :value [[:r :x [1]] [:append :x 3]]}
             {:index 2 :type :ok :process 2 :value [[:append :x 1]]}",
        );
        assert_eq!(kinds(&h), vec!["lost-update"]);
    }

    #[test]
    fn each_edge_is_explained_with_its_key_and_values() {
        let h = history(
            "{:index 0 :type :ok :process 0 :value [[:append :x 1]]}
             {:index 1 :type :ok :process 1 :value [[:r :x [1]] [:append :y 5]]}
             {:index 2 :type :ok :process 2 :value [[:append :x 2] [:r :y nil]]}
             {:index 3 :type :ok :process 3 :value [[:r :x [1 2]]]}",
        );
        let (_, la) = infer(&h);
        let wr = la.explain(&h, 0, 1, Rels::WR | Rels::RW).expect("wr edge");
        assert_eq!(wr.rel, Rels::WR);
        assert_eq!(wr.because, "{b} observed {a}'s append of 1 to key :x");
        let rw = la.explain(&h, 1, 2, Rels::RW).expect("rw edge");
        assert_eq!(rw.because, "{a} did not observe {b}'s append of 2 to :x");
        let init = la
            .explain(&h, 2, 1, Rels::RW)
            .expect("rw from the initial state");
        assert!(
            init.because.contains("initial (nil) state of :y"),
            "{}",
            init.because
        );
        assert_eq!(init.value, Some(json!(INIT_NAME)));
        let ww = la.explain(&h, 0, 2, Rels::WW).expect("ww edge");
        assert_eq!((ww.a_mop_index, ww.b_mop_index), (Some(0), Some(0)));
        assert!(la
            .explain(&h, 3, 0, Rels::WW | Rels::WR | Rels::RW)
            .is_none());
    }

    /// Asserts that the per-key inference and the reference (hash-map)
    /// inference agree on `h`: the same edges (as a multiset), the same
    /// anomalies of each kind in the same order, and the same explanation of
    /// every edge (of every pair of transactions when `all_pairs`).
    fn agrees_with_reference(h: &History, all_pairs: bool) {
        let (new, la) = infer(h);
        let (old, lb) = reference::infer(h);
        let sorted = |mut e: Vec<(TxnId, TxnId, Rels)>| {
            e.sort();
            e
        };
        let pairs: Vec<(TxnId, TxnId)> = if all_pairs {
            let n = h.txns.len() as TxnId;
            (0..n).flat_map(|a| (0..n).map(move |b| (a, b))).collect()
        } else {
            old.edges.iter().map(|&(a, b, _)| (a, b)).collect()
        };
        assert_eq!(sorted(new.edges), sorted(old.edges), "edges");
        let by_kind = |xs: &[Anomaly]| {
            let mut m: std::collections::BTreeMap<&str, Vec<(String, String)>> = Default::default();
            for a in xs {
                m.entry(a.kind)
                    .or_default()
                    .push((a.detail(h).to_string(), a.explanation(h)));
            }
            m
        };
        assert_eq!(
            by_kind(&new.anomalies),
            by_kind(&old.anomalies),
            "anomalies"
        );
        for (a, b) in pairs {
            for r in [Rels::WW, Rels::WR, Rels::RW, Rels::WW | Rels::WR | Rels::RW] {
                assert_eq!(
                    la.explain(h, a, b, r),
                    lb.explain(h, a, b, r),
                    "explain {a} -> {b} {r:?}"
                );
            }
        }
    }

    /// Inference on several threads gives exactly what one thread gives:
    /// edges and anomalies in the same order, the same indices.
    fn same_on_any_thread_count(h: &History) {
        let (one, la) = infer_with(h, 1);
        for threads in [2, 3, 8] {
            let (many, lb) = infer_with(h, threads);
            assert_eq!(many.edges, one.edges, "{threads} threads");
            let show = |xs: &[Anomaly]| -> Vec<(&str, String, String)> {
                xs.iter()
                    .map(|a| (a.kind, a.detail(h).to_string(), a.explanation(h)))
                    .collect()
            };
            assert_eq!(
                show(&many.anomalies),
                show(&one.anomalies),
                "{threads} threads"
            );
            assert_eq!(
                (&lb.prev, &lb.writer),
                (&la.prev, &la.writer),
                "{threads} threads"
            );
        }
    }

    #[test]
    fn keys_split_into_balanced_ranges() {
        let h = history(
            "{:index 0 :type :ok :process 0 :value [[:append 0 1] [:append 1 1] [:append 2 1] [:append 3 1]]}
             {:index 1 :type :ok :process 0 :value [[:r 0 [1]] [:r 1 [1]] [:r 2 [1]] [:r 3 [1]]]}",
        );
        let k = KeyIndex::new(&h);
        assert_eq!(k.split(1), vec![0..4]);
        assert_eq!(k.split(2), vec![0..2, 2..4]);
        assert_eq!(k.split(4), vec![0..1, 1..2, 2..3, 3..4]);
        assert_eq!(k.split(9).len(), 4);
        let empty = KeyIndex::new(&History::default());
        assert_eq!(empty.split(3), vec![0..0]);
        same_on_any_thread_count(&h);
    }

    #[test]
    fn agrees_with_the_reference_on_the_conformance_histories() {
        let files = crate::corpus::files(&crate::corpus::FOLDERS[..2], &[".edn"]);
        for f in files {
            let Ok(h) = crate::history::read::read_history_file(&f, None) else {
                continue;
            };
            agrees_with_reference(&h, h.txns.len() <= 60);
            same_on_any_thread_count(&h);
        }
    }

    /// A small random list-append history as EDN: few keys and values, so
    /// that reads collide, disagree, repeat elements and see failed or
    /// intermediate appends; every outcome; some invocations.
    fn arb_history_edn() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let mop = prop_oneof![
            (0u8..3, 0u8..6).prop_map(|(k, v)| format!("[:append {k} {v}]")),
            (0u8..3).prop_map(|k| format!("[:r {k} nil]")),
            (0u8..3, proptest::collection::vec(0u8..6, 0..5)).prop_map(|(k, vs)| {
                let vs: Vec<String> = vs.iter().map(u8::to_string).collect();
                format!("[:r {k} [{}]]", vs.join(" "))
            }),
        ];
        let txn = (
            0u8..3,
            0u8..3,
            any::<bool>(),
            proptest::collection::vec(mop, 1..5),
        );
        proptest::collection::vec(txn, 1..10).prop_map(|txns| {
            let mut s = String::new();
            for (i, (p, outcome, invoked, mops)) in txns.into_iter().enumerate() {
                let ty = ["ok", "fail", "info"][outcome as usize];
                let value = mops.join(" ");
                if invoked {
                    s.push_str(&format!(
                        "{{:process {i} :type :invoke :value [{value}]}}\n"
                    ));
                }
                let p = if invoked { i as u8 } else { p + 100 };
                let value = if ty == "info" && i % 2 == 0 {
                    "nil".to_string()
                } else {
                    format!("[{value}]")
                };
                s.push_str(&format!("{{:process {p} :type :{ty} :value {value}}}\n"));
            }
            s
        })
    }

    /// A proptest runner with a fixed seed: the same histories every run.
    fn deterministic_runner() -> proptest::test_runner::TestRunner {
        use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
        TestRunner::new_with_rng(
            Config::default(),
            TestRng::deterministic_rng(RngAlgorithm::ChaCha),
        )
    }

    #[test]
    fn agrees_with_the_reference_on_random_histories() {
        use proptest::strategy::{Strategy, ValueTree};
        let mut runner = deterministic_runner();
        let strategy = arb_history_edn();
        let mut kinds: std::collections::BTreeSet<&str> = Default::default();
        for _ in 0..4000 {
            let edn = strategy.new_tree(&mut runner).expect("a history").current();
            let h = history(&edn);
            agrees_with_reference(&h, true);
            same_on_any_thread_count(&h);
            kinds.extend(infer(&h).0.anomalies.iter().map(|a| a.kind));
        }
        // The histories exercise every rule.
        let all = [
            "G1a",
            "G1b",
            "dirty-update",
            "duplicate-elements",
            "future-read",
            "garbage-read",
            "incompatible-order",
            "internal",
            "lost-update",
        ];
        assert_eq!(kinds.into_iter().collect::<Vec<_>>(), all);
    }

    /// The in-place fast pass says "consistent" exactly when the full
    /// internal and future-read checks find nothing.
    #[test]
    fn fast_self_consistency_pass_matches_the_full_checks() {
        use proptest::strategy::{Strategy, ValueTree};
        let mut runner = deterministic_runner();
        let strategy = arb_history_edn();
        let (mut clean, mut flagged) = (0, 0);
        for _ in 0..3000 {
            let edn = strategy.new_tree(&mut runner).expect("a history").current();
            let h = history(&edn);
            for t in 0..h.txns.len() as TxnId {
                let fast = small_and_self_consistent(&h, h.mops(t));
                let full = internal(&h, t).is_none() && future_read(&h, t).is_none();
                assert_eq!(fast, full, "txn {t} of\n{edn}");
                if fast {
                    clean += 1;
                } else {
                    flagged += 1;
                }
            }
        }
        assert!(
            clean > 1000 && flagged > 100,
            "{clean} clean, {flagged} flagged"
        );
    }
}
