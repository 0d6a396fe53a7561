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

/// The anomalies a choice taking a read's value from `s` has, all of them
/// (`then_writes`: the reader writes the key after the read, so a failed
/// write read makes a dirty update too); the first is the finding's kind.
pub(crate) fn source_anomalies(s: BadSource, then_writes: bool) -> Vec<AnomalyKind> {
    let mut k = match s {
        BadSource::Failed(_) => vec![AnomalyKind::G1a],
        BadSource::FailedOverwritten(_) => vec![AnomalyKind::G1a, AnomalyKind::G1b],
        BadSource::Overwritten(_) => vec![AnomalyKind::G1b],
        BadSource::Later => vec![AnomalyKind::FutureRead],
        BadSource::Nobody => vec![AnomalyKind::GarbageRead],
    };
    if then_writes && matches!(s, BadSource::Failed(_) | BadSource::FailedOverwritten(_)) {
        k.push(AnomalyKind::DirtyUpdate);
    }
    k
}

/// The write among `failed` (transactions that failed and wrote `v` to
/// `k`) a read is best taken to have seen: one that is its writer's last
/// write of the key (G1a alone) if any, else an overwritten one (G1a and
/// G1b). `None` when `failed` is empty.
pub(crate) fn failed_source(
    h: &History,
    failed: &[TxnId],
    (k, v): (KeyId, Ver),
) -> Option<BadSource> {
    let last = |w: TxnId| {
        h.mops(w)
            .iter()
            .rev()
            .find(|m| m.kind == MopKind::Write && m.key == k)
            .map(|m| write_ver(m.value))
    };
    let &first = failed.first()?;
    Some(match failed.iter().find(|&&w| last(w) == Some(v)) {
        Some(&w) => BadSource::Failed(w),
        None => BadSource::FailedOverwritten(first),
    })
}

/// `txn`'s read of `value` from `key`, which no other committed last write
/// explains, as the contradiction every choice has: one of the anomalies
/// of `sources`, the other writes of it ([`BadSource::Nobody`] when none;
/// `then_writes`: the reader writes the key after the read). Named for the
/// first.
pub(crate) fn bad_read(
    txn: TxnId,
    key: KeyId,
    value: Option<u32>,
    mut sources: Vec<BadSource>,
    then_writes: bool,
) -> Box<Contradiction> {
    if sources.is_empty() {
        sources.push(BadSource::Nobody);
    }
    let mut txns: Vec<TxnId> = sources
        .iter()
        .filter_map(|s| match *s {
            BadSource::Failed(w) | BadSource::FailedOverwritten(w) | BadSource::Overwritten(w) => {
                Some(w)
            }
            BadSource::Later | BadSource::Nobody => None,
        })
        .collect();
    txns.push(txn);
    Box::new(Contradiction {
        kind: source_anomalies(sources[0], false)[0].into(),
        txns,
        keys: vec![key],
        proof: Proof::RegisterBadRead {
            txn,
            key,
            value,
            sources,
            dirty_update: then_writes,
        },
    })
}

/// Extracts the facts, or the first contradiction found.
pub fn extract(h: &History) -> Result<Facts, Box<Contradiction>> {
    let nk = h.keys.len();
    let mut writers: Vec<Vec<(TxnId, Ver)>> = vec![Vec::new(); nk];
    let mut writes_of: Vec<Vec<(KeyId, Ver)>> = vec![Vec::new(); h.txns.len()];
    // Every write by a transaction that never committed, or that a later
    // write of its own transaction overwrote: for naming bad reads.
    let mut aborted: FxHashMap<(KeyId, Ver), Vec<TxnId>> = FxHashMap::default();
    let mut intermediate: FxHashMap<(KeyId, Ver), Vec<TxnId>> = FxHashMap::default();
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
                        intermediate.entry((m.key, old)).or_default().push(t);
                    }
                    if txn.outcome == Outcome::Fail {
                        aborted.entry((m.key, v)).or_default().push(t);
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
            // Every other write it may have seen, each an anomaly.
            let mut sources: Vec<BadSource> = Vec::new();
            let over = intermediate.get(&(k, v)).map(Vec::as_slice).unwrap_or(&[]);
            let aborted = aborted.get(&(k, v)).map(Vec::as_slice).unwrap_or(&[]);
            if let Some(f) = failed_source(h, aborted, (k, v)) {
                sources.push(f);
            }
            let failed = |w: TxnId| h.txns[w as usize].outcome == Outcome::Fail;
            if let Some(&w) = over.iter().find(|&&w| w != t && !failed(w)) {
                sources.push(BadSource::Overwritten(w));
            }
            if by_ver.contains_key(&(k, v)) || over.contains(&t) {
                sources.push(BadSource::Later);
            }
            // An external read comes before the reader's writes of the key.
            let then_writes = h
                .mops(t)
                .iter()
                .any(|m| m.kind == MopKind::Write && m.key == k);
            return Err(bad_read(t, k, value(v), sources, then_writes));
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
