//! The list-append inference as first written (hash maps keyed by
//! (key, value)), kept verbatim as a test oracle: the per-key rewrite in the
//! parent module must produce the same edges, anomalies and explanations.

#![allow(dead_code)]

use crate::evidence::{DataStep, Fact};
use crate::explain::json as js;
use crate::graph::Rels;
use crate::history::{History, KeyId, Mop, MopKind, Observed, Outcome, TxnId, ValId};
use crate::workload::Explain;

/// The reference builds every anomaly eagerly, as it always did.
pub struct Anomaly {
    pub kind: &'static str,
    pub detail: Value,
    pub explanation: String,
}

/// What the reference infers: edges, and anomalies already rendered.
pub struct Reference {
    pub edges: Vec<(TxnId, TxnId, Rels)>,
    pub anomalies: Vec<Anomaly>,
}
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{json, Value};

/// The initial (empty) state of a list, as a value id: no real value has it.
pub const INIT: ValId = u32::MAX;

/// Indices over the history, kept after inference so that edges can be
/// explained later.
pub struct ListAppend<'h> {
    h: &'h History,
    /// Version order of each key: the longest read, duplicates removed.
    order: FxHashMap<KeyId, Vec<ValId>>,
    /// Position of each (key, value) in its key's version order.
    position: FxHashMap<(KeyId, ValId), u32>,
    /// The ok/info transaction that appended each (key, value).
    writer: FxHashMap<(KeyId, ValId), TxnId>,
    /// Transactions that observed (key, last element), or (key, INIT) for an
    /// empty read.
    readers: FxHashMap<(KeyId, ValId), Vec<TxnId>>,
}

fn possible(o: Outcome) -> bool {
    matches!(o, Outcome::Ok | Outcome::Info)
}

/// Runs list-append inference: edges, non-cycle anomalies, and the indices
/// that explain the edges.
pub fn infer(h: &History) -> (Reference, ListAppend<'_>) {
    let mut anomalies = Vec::new();
    let (order, incompatible) = version_orders(h, |t| possible(h.txns[t as usize].outcome), false);
    anomalies.extend(incompatible);

    let mut la = ListAppend {
        h,
        position: FxHashMap::default(),
        writer: FxHashMap::default(),
        readers: FxHashMap::default(),
        order,
    };
    for (&k, vs) in &la.order {
        for (i, &v) in vs.iter().enumerate() {
            la.position.insert((k, v), i as u32);
        }
    }
    for (t, txn) in h.txns.iter().enumerate() {
        if !possible(txn.outcome) {
            continue;
        }
        let t = t as TxnId;
        for m in h.mops(t) {
            match (m.kind, m.value) {
                (MopKind::Append, Observed::Scalar(v)) => {
                    la.writer.insert((m.key, v), t);
                }
                (MopKind::Read, Observed::Nil) if txn.outcome == Outcome::Info => {}
                (MopKind::Read, o) => {
                    let last = h.list(o).and_then(|l| l.last().copied()).unwrap_or(INIT);
                    let rs = la.readers.entry((m.key, last)).or_default();
                    if rs.last() != Some(&t) {
                        rs.push(t);
                    }
                }
                _ => {}
            }
        }
    }

    let edges = la.edges();
    anomalies.extend(g1a(h));
    anomalies.extend(garbage(h));
    anomalies.extend(g1b(h));
    for t in 0..h.txns.len() as TxnId {
        if h.txns[t as usize].outcome == Outcome::Ok {
            anomalies.extend(internal(h, t));
            anomalies.extend(future_read(h, t));
        }
    }
    anomalies.extend(duplicate_elements(h));
    anomalies.extend(dirty_updates(h));
    anomalies.extend(lost_updates(h));
    (Reference { edges, anomalies }, la)
}

/// Version orders per key from the reads of the transactions `include`
/// selects, plus incompatible-order anomalies (reads that are not all
/// prefixes of one list). A key appended exactly once needs no read: its
/// order is that one value (Elle's special case). With `count_invocations`,
/// a transaction that had an invocation counts its appends twice, as Elle
/// does when it scans invocations and completions alike.
fn version_orders(
    h: &History,
    include: impl Fn(TxnId) -> bool,
    count_invocations: bool,
) -> (FxHashMap<KeyId, Vec<ValId>>, Vec<Anomaly>) {
    // The longest read of each key, as (txn, mop index).
    let mut longest: FxHashMap<KeyId, (TxnId, usize)> = FxHashMap::default();
    // Appends per key: the value, or None when more than one.
    let mut appends: FxHashMap<KeyId, Option<ValId>> = FxHashMap::default();
    for t in 0..h.txns.len() as TxnId {
        if !include(t) {
            continue;
        }
        let copies = if count_invocations && h.txns[t as usize].invoke_index.is_some() {
            2
        } else {
            1
        };
        for (i, m) in h.mops(t).iter().enumerate() {
            match (m.kind, m.value) {
                (MopKind::Append, v) => {
                    let v = match v {
                        Observed::Scalar(v) if copies == 1 => Some(v),
                        _ => None,
                    };
                    appends.entry(m.key).and_modify(|e| *e = None).or_insert(v);
                }
                (MopKind::Read, o @ Observed::List { len, .. }) if len > 0 => {
                    let _ = o;
                    let e = longest.entry(m.key).or_insert((t, i));
                    let cur = h.mops(e.0)[e.1].value;
                    if let Observed::List { len: cur_len, .. } = cur {
                        if len > cur_len {
                            *e = (t, i);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    // Check every read against the longest of its key.
    let mut bad_keys: FxHashSet<KeyId> = FxHashSet::default();
    for t in 0..h.txns.len() as TxnId {
        if !include(t) {
            continue;
        }
        for m in h.mops(t) {
            if m.kind != MopKind::Read || bad_keys.contains(&m.key) {
                continue;
            }
            if matches!(appends.get(&m.key), Some(Some(_))) {
                continue;
            }
            let Some(read) = h.list(m.value) else {
                continue;
            };
            if read.is_empty() {
                continue;
            }
            let &(lt, li) = longest
                .get(&m.key)
                .expect("a key with a read has a longest read");
            let long = h.list(h.mops(lt)[li].value).unwrap_or(&[]);
            if !long.starts_with(read) {
                bad_keys.insert(m.key);
            }
        }
    }
    let mut anomalies = Vec::new();
    let mut bad: Vec<KeyId> = bad_keys.into_iter().collect();
    bad.sort_unstable();
    for k in bad {
        anomalies.push(incompatible_order(h, k, &include));
    }

    let mut orders: FxHashMap<KeyId, Vec<ValId>> = FxHashMap::default();
    for (k, (t, i)) in longest {
        let long = h.list(h.mops(t)[i].value).unwrap_or(&[]);
        let mut seen = FxHashSet::default();
        orders.insert(
            k,
            long.iter().copied().filter(|v| seen.insert(*v)).collect(),
        );
    }
    for (k, a) in appends {
        if let Some(v) = a {
            orders.insert(k, vec![v]);
        }
    }
    (orders, anomalies)
}

/// Elle's report for a key whose reads disagree: the first pair of distinct
/// reads, sorted by length, where the shorter is not a prefix of the longer.
fn incompatible_order(h: &History, k: KeyId, include: &impl Fn(TxnId) -> bool) -> Anomaly {
    let mut reads: Vec<&[ValId]> = Vec::new();
    let mut seen: FxHashSet<&[ValId]> = FxHashSet::default();
    for t in 0..h.txns.len() as TxnId {
        if !include(t) {
            continue;
        }
        for m in h.mops(t) {
            if m.kind == MopKind::Read && m.key == k {
                if let Some(r) = h.list(m.value) {
                    if !r.is_empty() && seen.insert(r) {
                        reads.push(r);
                    }
                }
            }
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
    Anomaly {
        kind: "incompatible-order",
        detail: json!({"key": js::key(h, k), "values": [list(a), list(b)]}),
        explanation: format!(
            "Reads of key {} disagree on the order of appends: {} is not a prefix of {}, so no single order of appends explains both.",
            h.keys.datum(k),
            edn(a),
            edn(b)
        ),
    }
}

impl ListAppend<'_> {
    /// The element appended just before `v` to `k`, or INIT. An append that
    /// was never read still follows every element that was (Elle's rule).
    fn previous(&self, k: KeyId, v: ValId) -> ValId {
        let order = self.order.get(&k);
        match self.position.get(&(k, v)) {
            Some(&0) => INIT,
            Some(&i) => order.expect("positioned values have an order")[i as usize - 1],
            None => order.and_then(|o| o.last().copied()).unwrap_or(INIT),
        }
    }

    fn edges(&self) -> Vec<(TxnId, TxnId, Rels)> {
        let h = self.h;
        let mut edges = Vec::new();
        for (t, txn) in h.txns.iter().enumerate() {
            if !possible(txn.outcome) {
                continue;
            }
            let t = t as TxnId;
            for m in h.mops(t) {
                match (m.kind, m.value) {
                    (MopKind::Read, o) => {
                        if let Some(&last) = h.list(o).and_then(|l| l.last()) {
                            if let Some(&w) = self.writer.get(&(m.key, last)) {
                                if w != t {
                                    edges.push((w, t, Rels::WR));
                                }
                            }
                        }
                    }
                    (MopKind::Append, Observed::Scalar(v)) => {
                        let prev = self.previous(m.key, v);
                        if prev != INIT {
                            if let Some(&w) = self.writer.get(&(m.key, prev)) {
                                if w != t {
                                    edges.push((w, t, Rels::WW));
                                }
                            }
                        }
                        if let Some(rs) = self.readers.get(&(m.key, prev)) {
                            edges.extend(rs.iter().filter(|&&r| r != t).map(|&r| (r, t, Rels::RW)));
                        }
                    }
                    _ => {}
                }
            }
        }
        edges
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
            let prev = self.previous(m.key, v);
            if prev == INIT || self.writer.get(&(m.key, prev)) != Some(&a) || a == b {
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
            if self.writer.get(&(m.key, last)) != Some(&a) || a == b {
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

    fn explain_rw(&self, a: TxnId, b: TxnId) -> Option<DataStep> {
        let h = self.h;
        h.mops(b).iter().enumerate().find_map(|(bi, m)| {
            let Observed::Scalar(v) = m.value else {
                return None;
            };
            if m.kind != MopKind::Append || a == b {
                return None;
            }
            let prev = self.previous(m.key, v);
            if !self
                .readers
                .get(&(m.key, prev))
                .is_some_and(|rs| rs.contains(&a))
            {
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

/// The same dispatch as the parent module's, on purpose: the reference
/// keeps its own explainers (above, as first written), so it needs its own
/// impl of the trait to be compared with the rewrite.
impl Explain for ListAppend<'_> {
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

/// G1a (aborted read): an ok transaction read an element appended by a
/// transaction that failed.
fn g1a(h: &History) -> Vec<Anomaly> {
    let mut failed: FxHashMap<(KeyId, ValId), TxnId> = FxHashMap::default();
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.outcome == Outcome::Fail {
            for m in h.mops(t as TxnId) {
                if let (MopKind::Append, Observed::Scalar(v)) = (m.kind, m.value) {
                    failed.insert((m.key, v), t as TxnId);
                }
            }
        }
    }
    if failed.is_empty() {
        return vec![];
    }
    let mut out = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.outcome != Outcome::Ok {
            continue;
        }
        let t = t as TxnId;
        for m in h.mops(t) {
            let Some(read) = (m.kind == MopKind::Read).then(|| h.list(m.value)).flatten() else {
                continue;
            };
            for &e in read {
                if let Some(&w) = failed.get(&(m.key, e)) {
                    out.push(Anomaly {
                        kind: "G1a",
                        detail: json!({"op": js::op(h, t), "mop": js::mop(h, m),
                                       "writer": js::op(h, w), "element": js::value(h, e)}),
                        explanation: format!(
                            "{} read {} and saw {}, which was appended by a transaction that failed: {}",
                            js::op_edn(h, t),
                            js::mop_edn(h, m),
                            h.values.datum(e),
                            js::op_edn(h, w)
                        ),
                    });
                }
            }
        }
    }
    out
}

/// Garbage read: an ok transaction read an element that no transaction, of
/// any outcome, appended to that key.
fn garbage(h: &History) -> Vec<Anomaly> {
    let mut appended: FxHashSet<(KeyId, ValId)> = FxHashSet::default();
    for t in 0..h.txns.len() as TxnId {
        for m in h.mops(t) {
            if let (MopKind::Append, Observed::Scalar(v)) = (m.kind, m.value) {
                appended.insert((m.key, v));
            }
        }
    }
    let mut out = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.outcome != Outcome::Ok {
            continue;
        }
        let t = t as TxnId;
        for m in h.mops(t) {
            let Some(read) = (m.kind == MopKind::Read).then(|| h.list(m.value)).flatten() else {
                continue;
            };
            for &e in read.iter().filter(|&&e| !appended.contains(&(m.key, e))) {
                out.push(Anomaly {
                    kind: "garbage-read",
                    detail: json!({"op": js::op(h, t), "mop": js::mop(h, m),
                                   "element": js::value(h, e)}),
                    explanation: format!(
                        "{} read {} and saw {}, which no transaction in the history appended",
                        js::op_edn(h, t),
                        js::mop_edn(h, m),
                        h.values.datum(e)
                    ),
                });
            }
        }
    }
    out
}

/// G1b (intermediate read): an ok transaction's read ends with an element
/// that another transaction appended but then followed with another append
/// to the same key.
fn g1b(h: &History) -> Vec<Anomaly> {
    let mut intermediate: FxHashMap<(KeyId, ValId), TxnId> = FxHashMap::default();
    for t in 0..h.txns.len() as TxnId {
        let mut last: FxHashMap<KeyId, ValId> = FxHashMap::default();
        for m in h.mops(t) {
            if let (MopKind::Append, Observed::Scalar(v)) = (m.kind, m.value) {
                if let Some(prev) = last.insert(m.key, v) {
                    intermediate.insert((m.key, prev), t);
                }
            }
        }
    }
    if intermediate.is_empty() {
        return vec![];
    }
    let mut out = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.outcome != Outcome::Ok {
            continue;
        }
        let t = t as TxnId;
        for m in h.mops(t) {
            if m.kind != MopKind::Read {
                continue;
            }
            let Some(&e) = h.list(m.value).and_then(|l| l.last()) else {
                continue;
            };
            if let Some(&w) = intermediate.get(&(m.key, e)) {
                if w != t {
                    out.push(Anomaly {
                        kind: "G1b",
                        detail: json!({"op": js::op(h, t), "mop": js::mop(h, m),
                                       "writer": js::op(h, w), "element": js::value(h, e)}),
                        explanation: format!(
                            "{} read {}, whose last element {} was an intermediate append: its writer went on to append again to {}: {}",
                            js::op_edn(h, t),
                            js::mop_edn(h, m),
                            h.values.datum(e),
                            h.keys.datum(m.key),
                            js::op_edn(h, w)
                        ),
                    });
                }
            }
        }
    }
    out
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
                    return Some(Anomaly {
                        kind: "internal",
                        explanation: format!(
                            "{} read {}, but its own earlier reads and appends of {} imply {}",
                            js::op_edn(h, t),
                            js::mop_edn(h, m),
                            h.keys.datum(m.key),
                            expected
                        ),
                        detail: json!({"op": js::op(h, t), "mop": js::mop(h, m), "expected": expected}),
                    });
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
    if !mops.iter().any(|m| m.kind == MopKind::Read) {
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
                    return Some(Anomaly {
                        kind: "future-read",
                        detail: json!({"op": js::op(h, t), "mop": js::mop(h, read), "element": js::value(h, v)}),
                        explanation: format!(
                            "{} read {}, which already contains {}, an element the same transaction appends only later",
                            js::op_edn(h, t),
                            js::mop_edn(h, read),
                            h.values.datum(v)
                        ),
                    });
                }
            }
            _ => {}
        }
    }
    None
}

/// Duplicate elements: an ok or info read that contains the same element
/// twice, though each value is appended once.
fn duplicate_elements(h: &History) -> Vec<Anomaly> {
    let mut out = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        if !possible(txn.outcome) {
            continue;
        }
        let t = t as TxnId;
        for m in h.mops(t) {
            let Some(read) = (m.kind == MopKind::Read).then(|| h.list(m.value)).flatten() else {
                continue;
            };
            if read.len() < 2 {
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
            out.push(Anomaly {
                kind: "duplicate-elements",
                detail: json!({"op": js::op(h, t), "mop": js::mop(h, m), "duplicates": map}),
                explanation: format!(
                    "{} read {}, which holds {} more than once, though every value is appended once",
                    js::op_edn(h, t),
                    js::mop_edn(h, m),
                    dups.iter().map(|&(e, _)| h.values.datum(e).to_string()).collect::<Vec<_>>().join(", ")
                ),
            });
        }
    }
    out
}

/// Dirty update: in a key's version order, a committed append directly
/// follows (possibly across info appends) one made by a failed transaction.
/// As Elle does, this reads the orders of all client transactions, failed
/// ones included.
fn dirty_updates(h: &History) -> Vec<Anomaly> {
    if !h.txns.iter().any(|t| t.outcome == Outcome::Fail) {
        return vec![];
    }
    let (orders, _) = version_orders(h, |_| true, true);
    let mut writer: FxHashMap<(KeyId, ValId), TxnId> = FxHashMap::default();
    for t in 0..h.txns.len() as TxnId {
        for m in h.mops(t) {
            if let (MopKind::Append, Observed::Scalar(v)) = (m.kind, m.value) {
                writer.insert((m.key, v), t);
            }
        }
    }
    let mut keys: Vec<&KeyId> = orders.keys().collect();
    keys.sort_unstable();
    let mut out = Vec::new();
    for &k in keys {
        // (outcome, txn) of the last append that decides; None = initial state.
        let mut t1: (Outcome, Option<TxnId>) = (Outcome::Ok, None);
        let mut vs: Vec<ValId> = Vec::new();
        for &v in &orders[&k] {
            let Some(&t2) = writer.get(&(k, v)) else {
                continue;
            };
            vs.push(v);
            let o2 = h.txns[t2 as usize].outcome;
            use Outcome::*;
            match (t1.0, o2) {
                (Fail, Ok) => {
                    let failed = t1.1.expect("a failed state has a writer");
                    out.push(Anomaly {
                        kind: "dirty-update",
                        detail: json!({"key": js::key(h, k),
                                       "values": vs.iter().map(|&x| js::value(h, x)).collect::<Vec<_>>(),
                                       "txns": [js::op(h, failed), "...", js::op(h, t2)]}),
                        explanation: format!(
                            "On key {}, the committed transaction {} appended on top of a state written by the failed transaction {}",
                            h.keys.datum(k),
                            js::op_edn(h, t2),
                            js::op_edn(h, failed)
                        ),
                    });
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
    out
}

/// Lost update: two committed transactions read the same state of a key
/// and both appended to it.
fn lost_updates(h: &History) -> Vec<Anomaly> {
    let mut groups: FxHashMap<(KeyId, Option<&[ValId]>), Vec<TxnId>> = FxHashMap::default();
    let mut order: Vec<(KeyId, Option<&[ValId]>)> = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.outcome != Outcome::Ok {
            continue;
        }
        let t = t as TxnId;
        let mut reads: FxHashMap<KeyId, Option<&[ValId]>> = FxHashMap::default();
        let mut writes: FxHashSet<KeyId> = FxHashSet::default();
        for m in h.mops(t) {
            match m.kind {
                MopKind::Read => {
                    reads.entry(m.key).or_insert_with(|| h.list(m.value));
                }
                MopKind::Append | MopKind::Write => {
                    if writes.insert(m.key) {
                        if let Some(&read) = reads.get(&m.key) {
                            let g = groups.entry((m.key, read)).or_default();
                            if g.is_empty() {
                                order.push((m.key, read));
                            }
                            g.push(t);
                        }
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for g in order {
        let txns = &groups[&g];
        if txns.len() < 2 {
            continue;
        }
        let value = match g.1 {
            Some(l) => Value::Array(l.iter().map(|&v| js::value(h, v)).collect()),
            None => Value::Null,
        };
        out.push(Anomaly {
            kind: "lost-update",
            explanation: format!(
                "{} transactions read the same state of key {} ({}) and each appended to it, so all but one update was lost: {}",
                txns.len(),
                h.keys.datum(g.0),
                value,
                txns.iter().map(|&t| js::op_edn(h, t)).collect::<Vec<_>>().join(", ")
            ),
            detail: json!({"key": js::key(h, g.0), "value": value,
                           "txns": txns.iter().map(|&t| js::op(h, t)).collect::<Vec<_>>()}),
        });
    }
    out
}
