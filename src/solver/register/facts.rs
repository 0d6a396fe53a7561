//! What a register history fixes before any choice: each transaction's
//! external reads and final writes per key, the writers each read may have
//! seen, and the contradictions no version order can repair (a read inside
//! a transaction that disagrees with its own writes or earlier reads, a
//! read of a value no transaction that may have committed wrote last).

use crate::anomaly::AnomalyKind;
use crate::history::{Datum, History, KeyId, MopKind, Observed, Outcome, TxnId};
use crate::proof::{BadSource, Proof};
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

/// The version a read returned; a list is looked up as one value.
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

/// The version a write wrote (`nil` for anything but a scalar).
pub(crate) fn write_ver(o: Observed) -> Ver {
    match o {
        Observed::Scalar(v) => v,
        _ => NIL,
    }
}

/// A version as a proof names it: `None` for `nil`.
fn value(v: Ver) -> Option<u32> {
    (v != NIL).then_some(v)
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
pub fn extract(h: &History) -> Result<Facts, Box<Contradiction>> {
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
                        return Err(Box::new(Contradiction {
                            kind: AnomalyKind::GarbageRead.into(),
                            txns: vec![t],
                            keys: vec![m.key],
                            proof: Proof::UnwrittenValue { txn: t, key: m.key },
                        }));
                    };
                    match cur.get(&m.key) {
                        Some(&(seen, own)) if seen != v => {
                            return Err(Box::new(Contradiction {
                                kind: AnomalyKind::Internal.into(),
                                txns: vec![t],
                                keys: vec![m.key],
                                proof: Proof::RegisterInternal {
                                    txn: t,
                                    key: m.key,
                                    read: value(v),
                                    before: value(seen),
                                    own,
                                },
                            }));
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
            let (kind, txns, source) = if let Some(&w) = aborted.get(&(k, v)) {
                (AnomalyKind::G1a, vec![w, t], BadSource::Failed(w))
            } else if let Some(&w) = intermediate.get(&(k, v)) {
                (AnomalyKind::G1b, vec![w, t], BadSource::Overwritten(w))
            } else if by_ver.contains_key(&(k, v)) {
                (AnomalyKind::FutureRead, vec![t], BadSource::Later)
            } else {
                (AnomalyKind::GarbageRead, vec![t], BadSource::Nobody)
            };
            return Err(Box::new(Contradiction {
                kind: kind.into(),
                txns,
                keys: vec![k],
                proof: Proof::RegisterBadRead {
                    txn: t,
                    key: k,
                    value: value(v),
                    source,
                },
            }));
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
