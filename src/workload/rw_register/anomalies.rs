//! Register anomalies that need no cycle: internal, G1a, G1b and
//! lost-update (as Elle's rw-register checker reports them), plus
//! future-read and dirty-update, which Elle reports for lists only but which
//! mean the same for registers, and garbage-read (OneLite's), which Elle
//! does not report.

use super::{read_ver, write_ver, Ambiguity, RwRegister, Ver, NIL};
use crate::history::{History, KeyId, Mop, MopKind, Observed, Outcome, TxnId, ValId};
use crate::workload::{Anomaly, AnomalyKind, Record};
use rustc_hash::FxHashMap;

fn committed(h: &History) -> impl Iterator<Item = TxnId> + '_ {
    (0..h.txns.len() as TxnId).filter(|&t| h.txns[t as usize].outcome == Outcome::Ok)
}

/// `t`'s micro-ops with their positions in `h.mops` (lazy anomalies keep
/// the position, not a reference).
fn mop_ids(h: &History, t: TxnId) -> impl Iterator<Item = (usize, &Mop)> {
    let start = h.txns[t as usize].mops_start as usize;
    h.mops(t)
        .iter()
        .enumerate()
        .map(move |(i, m)| (start + i, m))
}

/// Internal consistency (Cerone et al.'s INT): a committed transaction read
/// a key and got something other than what its own earlier read or write
/// of that key says the key holds.
pub(crate) fn internal(h: &History) -> Vec<Anomaly> {
    let mut out = Vec::new();
    for t in committed(h) {
        let mops = h.mops(t);
        if mops.len() < 2 {
            continue;
        }
        let mut state: FxHashMap<KeyId, Ver> = FxHashMap::default();
        let start = h.txns[t as usize].mops_start;
        for (j, m) in (start..).zip(mops) {
            match m.kind {
                MopKind::Write => {
                    state.insert(m.key, write_ver(m.value));
                }
                MopKind::Read => {
                    let Some(v) = read_ver(h, m.value) else {
                        state.remove(&m.key);
                        continue;
                    };
                    match state.insert(m.key, v) {
                        Some(expected) if expected != v => {
                            out.push(Anomaly::new(
                                AnomalyKind::Internal,
                                Record::InternalRegister {
                                    reader: t,
                                    mop: j,
                                    expected,
                                },
                            ));
                            break;
                        }
                        _ => {}
                    }
                }
                MopKind::Append => {}
            }
        }
    }
    out
}

/// Values written only by failed transactions: (key, value) → the last
/// failed transaction that wrote it.
fn failed_writes(h: &History, amb: &Ambiguity) -> FxHashMap<(KeyId, ValId), TxnId> {
    let mut failed = FxHashMap::default();
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.outcome != Outcome::Fail {
            continue;
        }
        for m in h.mops(t as TxnId) {
            if let (MopKind::Write, Observed::Scalar(v)) = (m.kind, m.value) {
                if !amb.written(m.key, v) {
                    failed.insert((m.key, v), t as TxnId);
                }
            }
        }
    }
    failed
}

/// Garbage read: a committed transaction read a value that no transaction
/// in the history wrote to that key, whatever its outcome (a failed writer
/// makes it G1a instead). `nil`, the initial state, is never garbage.
pub(crate) fn garbage_reads(h: &History, amb: &Ambiguity) -> Vec<Anomaly> {
    let failed = failed_writes(h, amb);
    let mut out = Vec::new();
    for t in committed(h) {
        for (i, m) in mop_ids(h, t) {
            if m.kind != MopKind::Read || m.value == Observed::Nil {
                continue;
            }
            let written = read_ver(h, m.value)
                .is_some_and(|v| amb.written(m.key, v) || failed.contains_key(&(m.key, v)));
            if written {
                continue;
            }
            out.push(Anomaly::new(
                AnomalyKind::GarbageRead,
                Record::UnwrittenValue {
                    reader: t,
                    mop: i as u32,
                },
            ));
        }
    }
    out
}

/// G1a (aborted read): a committed transaction read a value that only a
/// failed transaction wrote.
pub(crate) fn g1a(h: &History, amb: &Ambiguity) -> Vec<Anomaly> {
    let failed = failed_writes(h, amb);
    if failed.is_empty() {
        return vec![];
    }
    let mut out = Vec::new();
    for t in committed(h) {
        for (i, m) in mop_ids(h, t) {
            let (MopKind::Read, Observed::Scalar(v)) = (m.kind, m.value) else {
                continue;
            };
            let Some(&w) = failed.get(&(m.key, v)) else {
                continue;
            };
            out.push(Anomaly::new(
                AnomalyKind::G1a,
                Record::AbortedWrite {
                    reader: t,
                    mop: i as u32,
                    writer: w,
                },
            ));
        }
    }
    out
}

/// G1b (intermediate read): a committed transaction read a value that
/// another transaction wrote and then overwrote before it finished.
pub(crate) fn g1b(h: &History, amb: &Ambiguity) -> Vec<Anomaly> {
    // (key, value) → (writer, the value it wrote next)
    let mut intermediate: FxHashMap<(KeyId, ValId), (TxnId, Ver)> = FxHashMap::default();
    let mut last: FxHashMap<KeyId, ValId> = FxHashMap::default();
    let mut overwritten: Vec<(KeyId, ValId, Ver)> = Vec::new();
    for t in 0..h.txns.len() as TxnId {
        last.clear();
        overwritten.clear();
        for m in h.mops(t) {
            if m.kind != MopKind::Write {
                continue;
            }
            let v = write_ver(m.value);
            if let Some(prev) = last.insert(m.key, v) {
                if prev != NIL {
                    overwritten.push((m.key, prev, v));
                }
            }
            if v == NIL {
                last.remove(&m.key);
            }
        }
        // A value the transaction wrote again last is its final write, not
        // an intermediate one: reading it is fine (`[:w x 1] [:w x 1]`, or
        // `[:w x 1] [:w x 2] [:w x 1]`).
        for &(k, prev, next) in &overwritten {
            if last.get(&k) != Some(&prev) {
                intermediate.insert((k, prev), (t, next));
            }
        }
    }
    if intermediate.is_empty() {
        return vec![];
    }
    let mut out = Vec::new();
    for t in committed(h) {
        for (i, m) in mop_ids(h, t) {
            let (MopKind::Read, Observed::Scalar(v)) = (m.kind, m.value) else {
                continue;
            };
            let Some(&(w, next)) = intermediate.get(&(m.key, v)) else {
                continue;
            };
            // Another transaction wrote it too (for a failed writer, also
            // another failed one, whose final write it may be: G1a alone):
            // the read may be of that write.
            let other = if h.txns[w as usize].outcome == Outcome::Fail {
                amb.written(m.key, v) || amb.failed_other(m.key, v, w)
            } else {
                amb.is(m.key, v)
            };
            if w == t || other {
                continue;
            }
            out.push(Anomaly::new(
                AnomalyKind::G1b,
                Record::IntermediateWrite {
                    reader: t,
                    mop: i as u32,
                    writer: w,
                    next,
                },
            ));
        }
    }
    out
}

/// Lost update: two or more committed transactions read the same version
/// of a key and then each wrote that key. Elle's reading: a transaction's
/// first read of a key, and its first write of the key after that read.
pub(crate) fn lost_updates(rr: &RwRegister<'_>, amb: &Ambiguity) -> Vec<Anomaly> {
    let h = rr.history();
    let mut groups: FxHashMap<(KeyId, Ver), Vec<TxnId>> = FxHashMap::default();
    let mut order: Vec<(KeyId, Ver)> = Vec::new();
    let mut reads: FxHashMap<KeyId, Ver> = FxHashMap::default();
    let mut wrote: Vec<KeyId> = Vec::new();
    // The transaction's own last write of each key so far: a read that
    // returns it shows that write, not a version the transaction found.
    let mut own: FxHashMap<KeyId, Ver> = FxHashMap::default();
    for t in committed(h) {
        let mops = h.mops(t);
        if mops.len() < 2 {
            continue;
        }
        reads.clear();
        wrote.clear();
        own.clear();
        for m in mops {
            match m.kind {
                MopKind::Read => {
                    if let Some(v) = read_ver(h, m.value) {
                        if own.get(&m.key) != Some(&v) {
                            reads.entry(m.key).or_insert(v);
                        }
                    }
                }
                MopKind::Write => {
                    own.insert(m.key, write_ver(m.value));
                    let Some(&v) = reads.get(&m.key) else {
                        continue;
                    };
                    if wrote.contains(&m.key) || amb.is(m.key, v) {
                        continue;
                    }
                    wrote.push(m.key);
                    let g = groups.entry((m.key, v)).or_default();
                    if g.is_empty() {
                        order.push((m.key, v));
                    }
                    g.push(t);
                }
                MopKind::Append => {}
            }
        }
    }
    let mut out = Vec::new();
    for (k, v) in order {
        let Some(txns) = groups.remove(&(k, v)) else {
            continue;
        };
        if txns.len() < 2 {
            continue;
        }
        out.push(Anomaly::new(
            AnomalyKind::LostUpdate,
            Record::LostWrites {
                key: k,
                value: v,
                txns: txns.into(),
            },
        ));
    }
    out
}

/// Future read: a committed transaction read a value that it writes only
/// later (and nobody else wrote).
pub(crate) fn future_reads(h: &History, amb: &Ambiguity) -> Vec<Anomaly> {
    let mut out = Vec::new();
    let mut written: Vec<(KeyId, ValId)> = Vec::new();
    for t in committed(h) {
        let mops = h.mops(t);
        if mops.len() < 2 {
            continue;
        }
        written.clear();
        let mut found: Option<u32> = None;
        for (i, m) in mops.iter().enumerate() {
            match (m.kind, m.value) {
                (MopKind::Write, Observed::Scalar(v)) => written.push((m.key, v)),
                (MopKind::Read, Observed::Scalar(v)) => {
                    if amb.is(m.key, v) || written.contains(&(m.key, v)) {
                        continue;
                    }
                    let later = mops[i + 1..]
                        .iter()
                        .any(|x| x.kind == MopKind::Write && x.key == m.key && x.value == m.value);
                    if later {
                        found = Some(h.txns[t as usize].mops_start + i as u32);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(m) = found else { continue };
        out.push(Anomaly::new(
            AnomalyKind::FutureRead,
            Record::FutureWrite { reader: t, mop: m },
        ));
    }
    out
}

/// Dirty update: a committed transaction read a value only a failed
/// transaction wrote, then wrote the key itself, building a committed
/// version on top of an aborted one.
pub(crate) fn dirty_updates(rr: &RwRegister<'_>, amb: &Ambiguity) -> Vec<Anomaly> {
    let h = rr.history();
    let failed = failed_writes(h, amb);
    if failed.is_empty() {
        return vec![];
    }
    let mut out = Vec::new();
    for t in committed(h) {
        for e in rr.ext_of(t) {
            let (Some((r, _)), Some((w, _))) = (e.read, e.write) else {
                continue;
            };
            let Some(&f) = failed.get(&(e.key, r)) else {
                continue;
            };
            out.push(Anomaly::new(
                AnomalyKind::DirtyUpdate,
                Record::DirtyWrite {
                    key: e.key,
                    read: r,
                    wrote: w,
                    failed: f,
                    committed: t,
                },
            ));
        }
    }
    out
}
