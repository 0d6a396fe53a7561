//! What a register history fixes before any choice: each transaction's
//! external reads and final writes per key, the writers each read may have
//! seen, and the contradictions no version order can repair (a read inside
//! a transaction that disagrees with its own writes or earlier reads, a
//! read of a value no transaction that may have committed wrote last).

use crate::anomaly::AnomalyKind;
use crate::history::{Datum, History, KeyId, MopKind, Observed, Outcome, TxnId};
use rustc_hash::FxHashMap;

/// A register version: a value id, or [`NIL`] (never written, or `nil`).
pub type Ver = u32;
pub const NIL: Ver = u32::MAX;
/// The initial state, as a writer: precedes every transaction.
pub const INIT: TxnId = u32::MAX;

/// An `ok` transaction's first look at a key, when it read before writing.
#[derive(Clone, Debug)]
pub struct Read {
    pub txn: TxnId,
    pub key: KeyId,
    pub ver: Ver,
    /// Writers whose last write to the key is `ver` ([`INIT`] for nil),
    /// never `txn` itself; at least one.
    pub cands: Vec<TxnId>,
}

/// A contradiction visible without any order (`internal`, `G1a`, `G1b`,
/// `future-read`, `garbage-read`): the list-append solver's type.
pub use crate::solver::problem::Contradiction;

pub struct Facts {
    /// Writers per key: (transaction, version of its last write), `ok` and
    /// `info` transactions only, in transaction order.
    pub writers: Vec<Vec<(TxnId, Ver)>>,
    /// Keys each transaction writes, with its last version (sorted by key).
    pub writes_of: Vec<Vec<(KeyId, Ver)>>,
    pub reads: Vec<Read>,
}

fn name(h: &History, t: TxnId) -> String {
    format!("T{}", h.txns[t as usize].index)
}

/// The version a read returned; a list is looked up as one value.
fn read_ver(h: &History, o: Observed) -> Option<Ver> {
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

fn write_ver(o: Observed) -> Ver {
    match o {
        Observed::Scalar(v) => v,
        _ => NIL,
    }
}

fn show(h: &History, v: Ver) -> String {
    if v == NIL {
        "nil".to_string()
    } else {
        h.values.datum(v).to_string()
    }
}

/// True when some key is written the same value more than once (by any
/// transactions, or twice by one): a value then does not name its write,
/// and Elle-style inference is no longer sound.
pub fn has_repeated_values(h: &History) -> bool {
    let mut seen: rustc_hash::FxHashSet<(KeyId, Ver)> = rustc_hash::FxHashSet::default();
    h.mops
        .iter()
        .filter(|m| m.kind == MopKind::Write)
        .any(|m| !seen.insert((m.key, write_ver(m.value))))
}

/// Extracts the facts, or the first contradiction found.
pub fn extract(h: &History) -> Result<Facts, Contradiction> {
    let nk = h.keys.len();
    let mut writers: Vec<Vec<(TxnId, Ver)>> = vec![Vec::new(); nk];
    let mut writes_of: Vec<Vec<(KeyId, Ver)>> = vec![Vec::new(); h.txns.len()];
    // Every write by a transaction that never committed, or that a later
    // write of its own transaction overwrote: for naming bad reads.
    let mut aborted: FxHashMap<(KeyId, Ver), TxnId> = FxHashMap::default();
    let mut intermediate: FxHashMap<(KeyId, Ver), TxnId> = FxHashMap::default();
    let mut external: Vec<(TxnId, KeyId, Ver)> = Vec::new();
    // Per key, this transaction's current value: (version, written by it).
    let mut cur: FxHashMap<KeyId, (Ver, bool)> = FxHashMap::default();
    for (t, txn) in h.txns.iter().enumerate() {
        let t = t as TxnId;
        cur.clear();
        let ok = txn.outcome == Outcome::Ok;
        for m in h.mops(t) {
            match m.kind {
                MopKind::Write => {
                    let v = write_ver(m.value);
                    if let Some(&(old, true)) = cur.get(&m.key) {
                        intermediate.insert((m.key, old), t);
                    }
                    if txn.outcome == Outcome::Fail {
                        aborted.insert((m.key, v), t);
                    }
                    cur.insert(m.key, (v, true));
                }
                MopKind::Read if ok => {
                    let Some(v) = read_ver(h, m.value) else {
                        return Err(Contradiction {
                            kind: AnomalyKind::GarbageRead.into(),
                            txns: vec![t],
                            keys: vec![m.key],
                            explanation: format!(
                                "{} read a value of {} that no transaction wrote",
                                name(h, t),
                                h.keys.datum(m.key)
                            ),
                        });
                    };
                    match cur.get(&m.key) {
                        Some(&(seen, own)) if seen != v => {
                            let what = if own {
                                "its own write of"
                            } else {
                                "its earlier read of"
                            };
                            return Err(Contradiction {
                                kind: AnomalyKind::Internal.into(),
                                txns: vec![t],
                                keys: vec![m.key],
                                explanation: format!(
                                    "{} read {} = {} after {what} {}: a transaction sees its own writes and a fixed state",
                                    name(h, t),
                                    h.keys.datum(m.key),
                                    show(h, v),
                                    show(h, seen)
                                ),
                            });
                        }
                        Some(_) => {}
                        None => {
                            cur.insert(m.key, (v, false));
                            external.push((t, m.key, v));
                        }
                    }
                }
                _ => {}
            }
        }
        if txn.outcome == Outcome::Fail {
            continue;
        }
        let mut ks: Vec<(KeyId, Ver)> = Vec::new();
        for (&k, &(v, own)) in &cur {
            if own {
                writers[k as usize].push((t, v));
                ks.push((k, v));
            }
        }
        ks.sort_unstable();
        writes_of[t as usize] = ks;
    }
    for ws in &mut writers {
        ws.sort_unstable();
    }
    let mut by_ver: FxHashMap<(KeyId, Ver), Vec<TxnId>> = FxHashMap::default();
    for (k, ws) in writers.iter().enumerate() {
        for &(w, v) in ws {
            by_ver.entry((k as KeyId, v)).or_default().push(w);
        }
    }
    let mut reads = Vec::with_capacity(external.len());
    for (t, k, v) in external {
        let mut cands: Vec<TxnId> = by_ver
            .get(&(k, v))
            .map(|ws| ws.iter().copied().filter(|&w| w != t).collect())
            .unwrap_or_default();
        if v == NIL {
            cands.insert(0, INIT);
        }
        if cands.is_empty() {
            let key = h.keys.datum(k);
            let val = show(h, v);
            let (kind, txns, why) = if let Some(&w) = aborted.get(&(k, v)) {
                (
                    AnomalyKind::G1a,
                    vec![w, t],
                    format!("{} wrote it and failed", name(h, w)),
                )
            } else if let Some(&w) = intermediate.get(&(k, v)) {
                (
                    AnomalyKind::G1b,
                    vec![w, t],
                    format!("{} wrote it and then overwrote it", name(h, w)),
                )
            } else if by_ver.contains_key(&(k, v)) {
                (
                    AnomalyKind::FutureRead,
                    vec![t],
                    "only it writes that value, later".to_string(),
                )
            } else {
                (
                    AnomalyKind::GarbageRead,
                    vec![t],
                    "no transaction wrote it".to_string(),
                )
            };
            return Err(Contradiction {
                kind: kind.into(),
                txns,
                keys: vec![k],
                explanation: format!("{} read {key} = {val}, but {why}", name(h, t)),
            });
        }
        reads.push(Read {
            txn: t,
            key: k,
            ver: v,
            cands,
        });
    }
    Ok(Facts {
        writers,
        writes_of,
        reads,
    })
}
