//! The non-cycle anomalies of list-append, as findings: G1a, G1b,
//! garbage-read, dirty-update and lost-update records built by the key pass,
//! and the per-transaction checks (internal, future-read) and per-key ones
//! (duplicate-elements).

use super::*;

/// G1a (aborted read): ok transaction `t`'s read (micro-op `i`) saw `e`,
/// appended by `w`, a transaction that failed.
pub(super) fn g1a_anomaly(t: TxnId, i: usize, w: TxnId, e: ValId) -> Anomaly {
    Anomaly::new(
        AnomalyKind::G1a,
        Record::AbortedAppend {
            reader: t,
            mop: i as u32,
            writer: w,
            element: e,
        },
    )
}

/// Garbage read: ok transaction `t`'s read (micro-op `i`) saw `e`, which no
/// transaction in the history appended (not even a failed one, which would
/// make it G1a).
pub(super) fn garbage_anomaly(t: TxnId, i: usize, e: ValId) -> Anomaly {
    Anomaly::new(
        AnomalyKind::GarbageRead,
        Record::UnwrittenElement {
            reader: t,
            mop: i as u32,
            element: e,
        },
    )
}

/// G1b (intermediate read): ok transaction `t`'s read (micro-op `i`) ends
/// with an element that `w` appended but then followed with another append
/// to the same key.
pub(super) fn g1b_anomaly(h: &History, t: TxnId, i: usize, w: TxnId) -> Anomaly {
    let e = *h
        .list(h.mops[i].value)
        .and_then(|l| l.last())
        .expect("a G1b read is not empty");
    Anomaly::new(
        AnomalyKind::G1b,
        Record::IntermediateAppend {
            reader: t,
            mop: i as u32,
            writer: w,
            element: e,
        },
    )
}

/// Dirty update on key `k`: committed `t2` appended on top of a state
/// written by the failed `failed` (`vs`: the values from that state on).
pub(super) fn dirty_update_anomaly(k: KeyId, vs: &[ValId], failed: TxnId, t2: TxnId) -> Anomaly {
    Anomaly::new(
        AnomalyKind::DirtyUpdate,
        Record::DirtyAppend {
            key: k,
            values: vs.into(),
            failed,
            committed: t2,
        },
    )
}

/// Lost update: committed `txns` read the same state `read` of key `k` and
/// all appended to it.
pub(super) fn lost_update_anomaly(k: KeyId, read: Option<&[ValId]>, txns: &[TxnId]) -> Anomaly {
    Anomaly::new(
        AnomalyKind::LostUpdate,
        Record::LostAppends {
            key: k,
            read: read.map(Box::from),
            txns: txns.into(),
        },
    )
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
pub(super) fn internal(h: &History, t: TxnId) -> Option<Anomaly> {
    let mut state: FxHashMap<KeyId, Expected> = FxHashMap::default();
    let start = h.txns[t as usize].mops_start;
    for (j, m) in (start..).zip(h.mops(t)) {
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
                    let (expected, tail) = match &state[&m.key] {
                        Expected::Whole(xs) => (xs.as_slice().into(), false),
                        Expected::Tail(xs) => (xs.as_slice().into(), true),
                    };
                    return Some(Anomaly::new(
                        AnomalyKind::Internal,
                        Record::InternalList {
                            reader: t,
                            mop: j,
                            expected,
                            tail,
                        },
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
pub(super) fn future_read(h: &History, t: TxnId) -> Option<Anomaly> {
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
                    return Some(Anomaly::new(
                        AnomalyKind::FutureRead,
                        Record::FutureAppend {
                            reader: t,
                            mop: h.txns[t as usize].mops_start + ri as u32,
                            element: v,
                        },
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
pub(super) fn duplicate_elements(h: &History, check: &[bool]) -> Vec<Anomaly> {
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
        let start = h.txns[t as usize].mops_start;
        for (j, m) in (start..).zip(h.mops(t)) {
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
            out.push(Anomaly::new(
                AnomalyKind::DuplicateElements,
                Record::DuplicateElements {
                    reader: t,
                    mop: j,
                    duplicates: dups.into(),
                },
            ));
        }
    }
    out
}
