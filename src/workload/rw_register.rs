//! Read-write register inference, after Elle's rw-register checker
//! (Kingsbury & Alvaro, VLDB 2020, §5).
//!
//! A register read names one value, and written values are unique per key,
//! so a read names its writer (wr edges) — but reads say nothing about the
//! order of versions. That order is inferred, partially, from several
//! sources, each an assumption about the database ([`versions`]):
//! the initial state precedes every write; the white-box commit order
//! (`transaction-order`); writes follow reads inside a transaction
//! (`wfr-keys`); process order (`sequential-keys`); real-time order
//! (`linearizable-keys`, and OneLite's writers-only `realtime-versions`).
//! A source whose order would make some key's versions cyclic is set aside
//! and reported as `cyclic-versions`, as Elle does.
//!
//! From the accepted (partial) version order come ww and rw edges; the
//! non-cycle anomalies (internal, G1a, G1b, lost-update, future-read,
//! dirty-update, garbage-read) are in [`anomalies`].
//!
//! Only a transaction's *external* effects on a key take part: its first
//! micro-op on the key when that is a read (what it saw of other
//! transactions), and its last write (what others can see). Committed
//! transactions alone carry edges, as in Elle: an `info` transaction's
//! writes still shape version orders, but its reads are not trusted.
//!
//! Where isolde departs from Elle, on purpose, to stay sound:
//! - a value written by more than one transaction (Elle throws) is
//!   ambiguous: it yields no edges and no version constraints;
//! - `[:w k nil]` makes `nil` ambiguous on that key in the same way;
//! - a transaction missing from `transaction-order` is left unordered
//!   (Elle sorts it before every ordered one).

mod anomalies;
mod versions;

#[cfg(test)]
mod tests;

use super::{DataStep, Explain, Fact, Inference};
use crate::evidence::Sources;
use crate::graph::Rels;
use crate::history::{Datum, History, KeyId, MopKind, Observed, Outcome, TxnId, ValId};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;

pub use versions::Source;

/// A version of a register (a value id) and the initial `nil` one.
pub use crate::anomaly::{Ver, NIL};

/// What one transaction did to one key, seen from outside the transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ext {
    pub key: KeyId,
    /// Position of the transaction's first micro-op on the key.
    pub first: u32,
    /// The first micro-op on the key, when it is a read: (version read,
    /// micro-op index).
    pub read: Option<(Ver, u32)>,
    /// The last write to the key: (version written, micro-op index).
    pub write: Option<(Ver, u32)>,
}

/// Which version-order sources to use: register inference's own options
/// (the front door builds them from its `CheckOptions`).
#[derive(Clone, Copy, Debug)]
pub struct RegisterOptions<'o> {
    /// Writes follow reads within a transaction (off unless asked for, in
    /// Elle's `check`; Jepsen's test harness turns it on).
    pub wfr_keys: bool,
    /// Each process's transactions on a key follow process order.
    pub sequential_keys: bool,
    /// Transactions on a key follow real-time order (reads and writes).
    pub linearizable_keys: bool,
    /// Writers of a key follow real-time order (OneLite's
    /// `--realtime-versions`; implied by strict serializability).
    pub realtime_versions: bool,
    /// The database's commit order: op `:index` → position.
    pub transaction_order: Option<&'o BTreeMap<i64, i64>>,
}

impl Default for RegisterOptions<'_> {
    /// Elle's defaults (its `check` and elle-cli alike): only the initial
    /// state; a missing `:wfr-keys?` is false.
    fn default() -> Self {
        RegisterOptions {
            wfr_keys: false,
            sequential_keys: false,
            linearizable_keys: false,
            realtime_versions: false,
            transaction_order: None,
        }
    }
}

/// One edge of the accepted version order: `from` precedes `to` on `key`,
/// by the sources whose bits are set in `sources`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct VEdge {
    pub key: KeyId,
    pub from: Ver,
    pub to: Ver,
    pub sources: u8,
}

/// Indices over the history, kept after inference so that edges can be
/// explained later.
pub struct RwRegister<'h> {
    h: &'h History,
    /// External effects of transaction `t`: `ext[ext_start[t]..ext_start[t+1]]`,
    /// in order of each key's first micro-op.
    ext_start: Vec<u32>,
    ext: Vec<Ext>,
    /// The committed transaction whose external write is (key, value), for
    /// unambiguous values only.
    writer: FxHashMap<(KeyId, ValId), TxnId>,
    /// The accepted version order, sorted by (key, from, to).
    order: Vec<VEdge>,
    /// Names of the accepted sources, in the order they were tried.
    sources: Vec<&'static str>,
}

/// Runs rw-register inference with the version-order sources `opts` asks
/// for: edges, non-cycle anomalies, and the indices that explain the edges.
pub fn infer_with<'h>(h: &'h History, opts: &RegisterOptions<'_>) -> (Inference, RwRegister<'h>) {
    let (ext_start, ext) = external_effects(h);
    let amb = Ambiguity::of(h);
    let mut rr = RwRegister {
        h,
        ext_start,
        ext,
        writer: FxHashMap::default(),
        order: Vec::new(),
        sources: Vec::new(),
    };
    let mut writer = FxHashMap::default();
    for t in 0..h.txns.len() as TxnId {
        if h.txns[t as usize].outcome != Outcome::Ok {
            continue;
        }
        for e in rr.ext_of(t) {
            if let Some((v, _)) = e.write {
                if v != NIL && !amb.is(e.key, v) {
                    writer.insert((e.key, v), t);
                }
            }
        }
    }
    rr.writer = writer;
    let mut anomalies = Vec::new();
    let found = versions::infer_order(&rr, &amb, opts);
    rr.order = found.order;
    rr.sources = found.sources;
    anomalies.extend(found.cyclic);

    let edges = rr.edges(&amb);
    anomalies.extend(anomalies::internal(h));
    anomalies.extend(anomalies::g1a(h, &amb));
    anomalies.extend(anomalies::garbage_reads(h, &amb));
    anomalies.extend(anomalies::g1b(h, &amb));
    anomalies.extend(anomalies::lost_updates(&rr, &amb));
    anomalies.extend(anomalies::future_reads(h, &amb));
    anomalies.extend(anomalies::dirty_updates(&rr, &amb));
    (Inference { edges, anomalies }, rr)
}

/// The version a read returned, or `None` when it cannot be named (a list
/// that no transaction wrote as a value).
pub(crate) fn read_ver(h: &History, o: Observed) -> Option<Ver> {
    match o {
        Observed::Nil => Some(NIL),
        Observed::Scalar(v) => Some(v),
        Observed::List { .. } => {
            let xs = h.list(o).unwrap_or(&[]);
            let d = Datum::Vector(xs.iter().map(|&v| h.values.datum(v).clone()).collect());
            h.values.get(&d)
        }
    }
}

/// The version a write wrote (a written list is interned as one value).
pub(crate) fn write_ver(o: Observed) -> Ver {
    match o {
        Observed::Scalar(v) => v,
        _ => NIL,
    }
}

/// Every transaction's external effects, as a flat arena with offsets.
fn external_effects(h: &History) -> (Vec<u32>, Vec<Ext>) {
    let mut start = Vec::with_capacity(h.txns.len() + 1);
    let mut ext: Vec<Ext> = Vec::with_capacity(h.mops.len());
    let mut by_key: Vec<(KeyId, u32)> = Vec::new();
    for t in 0..h.txns.len() as TxnId {
        start.push(ext.len() as u32);
        let mops = h.mops(t);
        by_key.clear();
        for (i, m) in mops.iter().enumerate() {
            let known = match m.kind {
                MopKind::Write => true,
                MopKind::Read => read_ver(h, m.value).is_some(),
                MopKind::Append => false,
            };
            if known {
                by_key.push((m.key, i as u32));
            }
        }
        by_key.sort_unstable();
        let from = ext.len();
        for group in by_key.chunk_by(|a, b| a.0 == b.0) {
            let (key, first) = group[0];
            let m = &mops[first as usize];
            let read = (m.kind == MopKind::Read)
                .then(|| read_ver(h, m.value).map(|v| (v, first)))
                .flatten();
            let write = group
                .iter()
                .rev()
                .find(|&&(_, i)| mops[i as usize].kind == MopKind::Write)
                .map(|&(_, i)| (write_ver(mops[i as usize].value), i));
            ext.push(Ext {
                key,
                first,
                read,
                write,
            });
        }
        ext[from..].sort_unstable_by_key(|e| e.first);
    }
    start.push(ext.len() as u32);
    (start, ext)
}

/// Values that do not name one writer. A value written (anywhere in a
/// transaction) by two transactions that may have committed, or by one and
/// a failed one, could have come from either, and `nil` is ambiguous on a
/// key someone wrote `nil` to.
pub(crate) struct Ambiguity {
    /// The first transaction (not failed) that wrote each (key, value).
    writers: FxHashMap<(KeyId, ValId), TxnId>,
    /// Values written by two or more such transactions, or by one of them
    /// and a failed one.
    values: FxHashSet<(KeyId, ValId)>,
    nil_keys: FxHashSet<KeyId>,
    /// Values failed transactions wrote: the first writer, and whether
    /// another failed one wrote it too.
    failed: FxHashMap<(KeyId, ValId), (TxnId, bool)>,
}

impl Ambiguity {
    fn of(h: &History) -> Self {
        let mut writers: FxHashMap<(KeyId, ValId), TxnId> = FxHashMap::default();
        let mut values = FxHashSet::default();
        let mut nil_keys = FxHashSet::default();
        let mut failed: FxHashMap<(KeyId, ValId), (TxnId, bool)> = FxHashMap::default();
        for (t, txn) in h.txns.iter().enumerate() {
            let t = t as TxnId;
            if txn.outcome == Outcome::Fail {
                for m in h.mops(t) {
                    if let (MopKind::Write, Observed::Scalar(v)) = (m.kind, m.value) {
                        let (w, shared) = failed.entry((m.key, v)).or_insert((t, false));
                        *shared |= *w != t;
                    }
                }
                continue;
            }
            for m in h.mops(t) {
                match (m.kind, m.value) {
                    (MopKind::Write, Observed::Scalar(v)) => {
                        let w = *writers.entry((m.key, v)).or_insert(t);
                        if w != t {
                            values.insert((m.key, v));
                        }
                    }
                    (MopKind::Write, _) => {
                        nil_keys.insert(m.key);
                    }
                    _ => {}
                }
            }
        }
        // A value a failed transaction wrote too may have been read from
        // it (G1a) rather than from the one that may have committed.
        for kv in failed.keys() {
            if writers.contains_key(kv) {
                values.insert(*kv);
            }
        }
        Ambiguity {
            writers,
            values,
            nil_keys,
            failed,
        }
    }

    /// Did a transaction that may have committed write `v` to `k`?
    pub fn written(&self, k: KeyId, v: ValId) -> bool {
        self.writers.contains_key(&(k, v))
    }

    /// Did a failed transaction other than `w` write `v` to `k`?
    pub fn failed_other(&self, k: KeyId, v: ValId, w: TxnId) -> bool {
        self.failed
            .get(&(k, v))
            .is_some_and(|&(first, shared)| shared || first != w)
    }

    /// Is version `v` of key `k` ambiguous?
    pub fn is(&self, k: KeyId, v: Ver) -> bool {
        if v == NIL {
            self.nil_keys.contains(&k)
        } else {
            !self.values.is_empty() && self.values.contains(&(k, v))
        }
    }
}

impl<'h> RwRegister<'h> {
    pub(crate) fn history(&self) -> &'h History {
        self.h
    }

    /// The external effects of transaction `t`.
    pub(crate) fn ext_of(&self, t: TxnId) -> &[Ext] {
        &self.ext[self.ext_start[t as usize] as usize..self.ext_start[t as usize + 1] as usize]
    }

    /// `t`'s external effect on `k`, if any.
    fn ext_on(&self, t: TxnId, k: KeyId) -> Option<&Ext> {
        self.ext_of(t).iter().find(|e| e.key == k)
    }

    /// The accepted version order, as (key, earlier, later) with `None` for
    /// the initial state.
    pub fn version_order(
        &self,
    ) -> impl Iterator<Item = (KeyId, Option<ValId>, Option<ValId>)> + '_ {
        let opt = |v: Ver| (v != NIL).then_some(v);
        self.order
            .iter()
            .map(move |e| (e.key, opt(e.from), opt(e.to)))
    }

    /// Names of the version-order sources that were used (Elle's `:sources`).
    pub fn sources(&self) -> &[&'static str] {
        &self.sources
    }

    /// Position of the edge `from → to` on `k` in the accepted order.
    fn order_edge(&self, k: KeyId, from: Ver, to: Ver) -> Option<&VEdge> {
        self.order
            .binary_search_by(|e| (e.key, e.from, e.to).cmp(&(k, from, to)))
            .ok()
            .map(|i| &self.order[i])
    }

    /// ww, wr and rw edges between committed transactions.
    fn edges(&self, amb: &Ambiguity) -> Vec<(TxnId, TxnId, Rels)> {
        let h = self.h;
        let mut edges = Vec::new();
        // Readers of each (key, version), for rw edges.
        let mut readers: FxHashMap<(KeyId, Ver), Vec<TxnId>> = FxHashMap::default();
        for t in 0..h.txns.len() as TxnId {
            if h.txns[t as usize].outcome != Outcome::Ok {
                continue;
            }
            for e in self.ext_of(t) {
                let Some((v, _)) = e.read else { continue };
                if amb.is(e.key, v) {
                    continue;
                }
                if let Some(&w) = self.writer.get(&(e.key, v)) {
                    if w != t {
                        edges.push((w, t, Rels::WR));
                    }
                }
                readers.entry((e.key, v)).or_default().push(t);
            }
        }
        for e in &self.order {
            let Some(&w2) = self.writer.get(&(e.key, e.to)) else {
                continue;
            };
            if let Some(&w1) = self.writer.get(&(e.key, e.from)) {
                if w1 != w2 {
                    edges.push((w1, w2, Rels::WW));
                }
            }
            if let Some(rs) = readers.get(&(e.key, e.from)) {
                edges.extend(rs.iter().filter(|&&r| r != w2).map(|&r| (r, w2, Rels::RW)));
            }
        }
        edges
    }

    /// First micro-op of `t` that writes `v` to `k` (Elle's `index-of`).
    fn write_index(&self, t: TxnId, k: KeyId, v: Ver) -> Option<usize> {
        self.h
            .mops(t)
            .iter()
            .position(|m| m.kind == MopKind::Write && m.key == k && write_ver(m.value) == v)
    }

    fn explain_wr(&self, a: TxnId, b: TxnId) -> Option<DataStep> {
        self.ext_of(a).iter().find_map(|ea| {
            let (v, _) = ea.write?;
            if self.writer.get(&(ea.key, v)) != Some(&a) {
                return None;
            }
            let eb = self.ext_on(b, ea.key)?;
            let (r, bi) = eb.read?;
            (r == v).then(|| DataStep {
                key: ea.key,
                a_mop: self.write_index(a, ea.key, v),
                b_mop: Some(bi as usize),
                fact: Fact::ReadWritten { value: v },
            })
        })
    }

    fn explain_ww(&self, a: TxnId, b: TxnId) -> Option<DataStep> {
        self.ext_of(a).iter().find_map(|ea| {
            let (v1, _) = ea.write?;
            if self.writer.get(&(ea.key, v1)) != Some(&a) {
                return None;
            }
            let (v2, _) = self.ext_on(b, ea.key)?.write?;
            if self.writer.get(&(ea.key, v2)) != Some(&b) {
                return None;
            }
            let edge = self.order_edge(ea.key, v1, v2)?;
            Some(DataStep {
                key: ea.key,
                a_mop: self.write_index(a, ea.key, v1),
                b_mop: self.write_index(b, ea.key, v2),
                fact: Fact::Overwrote {
                    from: v1,
                    to: v2,
                    sources: Sources(edge.sources),
                },
            })
        })
    }

    fn explain_rw(&self, a: TxnId, b: TxnId) -> Option<DataStep> {
        self.ext_of(a).iter().find_map(|ea| {
            let (v1, ai) = ea.read?;
            let (v2, _) = self.ext_on(b, ea.key)?.write?;
            if self.writer.get(&(ea.key, v2)) != Some(&b) {
                return None;
            }
            let edge = self.order_edge(ea.key, v1, v2)?;
            Some(DataStep {
                key: ea.key,
                a_mop: Some(ai as usize),
                b_mop: self.write_index(b, ea.key, v2),
                fact: Fact::ReadOverwritten {
                    from: (v1 != NIL).then_some(v1),
                    to: v2,
                    sources: Sources(edge.sources),
                },
            })
        })
    }
}

impl Explain for RwRegister<'_> {
    /// Elle's rw-register explainer tries wr first (its wr graph comes
    /// first in the combined analyzer), then ww, then rw.
    fn order(&self) -> &'static [Rels] {
        &[Rels::WR, Rels::WW, Rels::RW]
    }

    fn explain_rel(&self, _h: &History, a: TxnId, b: TxnId, rel: Rels) -> Option<DataStep> {
        if a == b
            || self.h.txns[a as usize].outcome != Outcome::Ok
            || self.h.txns[b as usize].outcome != Outcome::Ok
        {
            return None;
        }
        match rel {
            Rels::WW => self.explain_ww(a, b),
            Rels::WR => self.explain_wr(a, b),
            Rels::RW => self.explain_rw(a, b),
            _ => None,
        }
    }
}
