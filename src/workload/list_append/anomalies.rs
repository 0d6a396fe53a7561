//! The non-cycle anomalies of list-append, as findings: G1a, G1b,
//! garbage-read, dirty-update and lost-update records built by the key pass,
//! and the per-transaction checks (internal, future-read) and per-key ones
//! (duplicate-elements).

use super::*;

/// G1a (aborted read): ok transaction `t`'s read (micro-op `i`) saw `e`,
/// appended by `w`, a transaction that failed.
pub(super) fn g1a_anomaly(t: TxnId, i: usize, w: TxnId, e: ValId) -> Anomaly {
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
pub(super) fn garbage_anomaly(t: TxnId, i: usize, e: ValId) -> Anomaly {
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
pub(super) fn g1b_anomaly(h: &History, t: TxnId, i: usize, w: TxnId) -> Anomaly {
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
pub(super) fn dirty_update_anomaly(k: KeyId, vs: &[ValId], failed: TxnId, t2: TxnId) -> Anomaly {
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
pub(super) fn lost_update_anomaly(k: KeyId, read: Option<&[ValId]>, txns: &[TxnId]) -> Anomaly {
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
pub(super) fn internal(h: &History, t: TxnId) -> Option<Anomaly> {
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
