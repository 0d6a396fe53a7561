//! Replays a claimed execution against the history, independently of how
//! it was found: a serial order (serializable, strict serializable) or a
//! commit order with snapshot points (snapshot isolation). A "valid"
//! verdict is only given with a witness that passes these checks.

use crate::history::{History, KeyId, MopKind, Observed, Outcome, TxnId, ValId};
use crate::proof::Replay;
use rustc_hash::FxHashMap;

/// Each `ok` transaction exactly once, no `fail` one.
pub(crate) fn check_membership(h: &History, order: &[TxnId]) -> Result<(), Replay> {
    let mut seen = vec![false; h.txns.len()];
    for &t in order {
        let Some(s) = seen.get_mut(t as usize) else {
            return Err(Replay::UnknownTxn(t));
        };
        if *s {
            return Err(Replay::Twice(t));
        }
        *s = true;
        if h.txns[t as usize].outcome == Outcome::Fail {
            return Err(Replay::Failed(t));
        }
    }
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.outcome == Outcome::Ok && !seen[t] {
            return Err(Replay::Missing(t as TxnId));
        }
    }
    Ok(())
}

/// No transaction placed before one that completed before it was invoked
/// (real time, for the strict levels).
pub(crate) fn check_realtime(h: &History, order: &[TxnId]) -> Result<(), Replay> {
    // Scanning from the end: the earliest completion among the committed
    // transactions placed after this one.
    let mut min_complete = u64::MAX;
    let mut min_at = 0;
    for &t in order.iter().rev() {
        let txn = &h.txns[t as usize];
        if txn.invoke_seq.is_some_and(|inv| min_complete < inv) {
            return Err(Replay::BeforeEarlier {
                txn: t,
                earlier: min_at,
            });
        }
        if txn.outcome == Outcome::Ok {
            if let Some(c) = txn.complete_seq.filter(|&c| c < min_complete) {
                min_complete = c;
                min_at = t;
            }
        }
    }
    Ok(())
}

fn observed(h: &History, o: Observed) -> Option<&[ValId]> {
    match o {
        Observed::Nil => Some(&[]),
        Observed::List { .. } => h.list(o),
        Observed::Scalar(_) => None,
    }
}

/// Checks that running `order` one transaction at a time produces every
/// `ok` read; with `strict`, also that the order respects real time.
pub fn check_serial(h: &History, order: &[TxnId], strict: bool) -> Result<(), Replay> {
    check_membership(h, order)?;
    let mut state: FxHashMap<KeyId, Vec<ValId>> = FxHashMap::default();
    for &t in order {
        let ok = h.txns[t as usize].outcome == Outcome::Ok;
        for m in h.mops(t) {
            match (m.kind, m.value) {
                (MopKind::Append, Observed::Scalar(v)) => state.entry(m.key).or_default().push(v),
                (MopKind::Read, o) if ok => {
                    let cur = state.get(&m.key).map(Vec::as_slice).unwrap_or(&[]);
                    if observed(h, o) != Some(cur) {
                        return Err(Replay::WouldRead {
                            txn: t,
                            key: m.key,
                            got: cur.to_vec(),
                        });
                    }
                }
                (MopKind::Read, _) => {}
                _ => return Err(Replay::NotListAppend(t)),
            }
        }
    }
    if strict {
        check_realtime(h, order)?;
    }
    Ok(())
}

/// Checks a snapshot-isolation execution: transactions commit in `commits`
/// order; `snapshots[i]` is how many of them had committed when
/// `commits[i]` started (at most `i`). Reads see that snapshot plus their
/// own appends; two transactions appending to one key never overlap (the
/// later one starts after the earlier one commits).
pub fn check_si(h: &History, commits: &[TxnId], snapshots: &[u32]) -> Result<(), Replay> {
    check_membership(h, commits)?;
    if snapshots.len() != commits.len() {
        return Err(Replay::SnapshotCount);
    }
    let mut state: FxHashMap<KeyId, Vec<ValId>> = FxHashMap::default();
    // Per key: (commit position, length after it).
    let mut lens: FxHashMap<KeyId, Vec<(u32, u32)>> = FxHashMap::default();
    for (j, &t) in commits.iter().enumerate() {
        let sp = snapshots[j];
        if sp as usize > j {
            return Err(Replay::StartsAfterCommit(t));
        }
        let ok = h.txns[t as usize].outcome == Outcome::Ok;
        let mut own: FxHashMap<KeyId, Vec<ValId>> = FxHashMap::default();
        for m in h.mops(t) {
            match (m.kind, m.value) {
                (MopKind::Append, Observed::Scalar(v)) => own.entry(m.key).or_default().push(v),
                (MopKind::Read, o) if ok => {
                    let hist = lens.get(&m.key).map(Vec::as_slice).unwrap_or(&[]);
                    let i = hist.partition_point(|&(c, _)| c < sp);
                    let len = if i == 0 { 0 } else { hist[i - 1].1 } as usize;
                    let mut view: Vec<ValId> = state
                        .get(&m.key)
                        .map(|l| l[..len].to_vec())
                        .unwrap_or_default();
                    view.extend(own.get(&m.key).map(Vec::as_slice).unwrap_or(&[]));
                    if observed(h, o) != Some(view.as_slice()) {
                        return Err(Replay::WouldRead {
                            txn: t,
                            key: m.key,
                            got: view,
                        });
                    }
                }
                (MopKind::Read, _) => {}
                _ => return Err(Replay::NotListAppend(t)),
            }
        }
        for (k, block) in own {
            let hist = lens.entry(k).or_default();
            if let Some(&(c, _)) = hist.last() {
                if c >= sp {
                    return Err(Replay::ConcurrentAppend { txn: t, key: k });
                }
            }
            let l = state.entry(k).or_default();
            l.extend(block);
            hist.push((j as u32, l.len() as u32));
        }
    }
    Ok(())
}

/// Checks a read-committed execution: transactions commit in `order`, and
/// each key's versions are the committed blocks in that order (a block
/// nobody read comes after every read one, as ww needs). Each `ok` read
/// sees its transaction's own earlier appends on top of a prefix of those
/// versions that ends where a block ends (no intermediate read, G1b) and
/// whose last block committed before the reader (wr forward, so that ww and
/// wr, both following `order`, close no cycle: no G0, G1c). Reads of one key
/// in one transaction may see different prefixes (read committed allows
/// it). `fail` transactions are never in `order` (no G1a).
pub fn check_read_committed(h: &History, order: &[TxnId]) -> Result<(), Replay> {
    check_membership(h, order)?;
    let mut rank = vec![u32::MAX; h.txns.len()];
    for (i, &t) in order.iter().enumerate() {
        rank[t as usize] = i as u32;
    }
    // Per key: the versions, and which transaction's block ends at each length.
    let mut versions: FxHashMap<KeyId, Vec<ValId>> = FxHashMap::default();
    let mut ends: FxHashMap<(KeyId, u32), TxnId> = FxHashMap::default();
    for &t in order {
        let mut own: FxHashMap<KeyId, ()> = FxHashMap::default();
        for m in h.mops(t) {
            if let (MopKind::Append, Observed::Scalar(v)) = (m.kind, m.value) {
                versions.entry(m.key).or_default().push(v);
                own.insert(m.key, ());
            }
        }
        for k in own.keys() {
            ends.insert((*k, versions[k].len() as u32), t);
        }
    }
    for &t in order {
        if h.txns[t as usize].outcome != Outcome::Ok {
            continue;
        }
        let mut own: FxHashMap<KeyId, Vec<ValId>> = FxHashMap::default();
        for m in h.mops(t) {
            match (m.kind, m.value) {
                (MopKind::Append, Observed::Scalar(v)) => own.entry(m.key).or_default().push(v),
                (MopKind::Read, o) => {
                    let seen = observed(h, o).ok_or(Replay::ScalarRead(t))?;
                    let mine = own.get(&m.key).map(Vec::as_slice).unwrap_or(&[]);
                    if !seen.ends_with(mine) {
                        return Err(Replay::WithoutOwnAppends { txn: t, key: m.key });
                    }
                    let ext = &seen[..seen.len() - mine.len()];
                    if ext.is_empty() {
                        continue;
                    }
                    let all = versions.get(&m.key).map(Vec::as_slice).unwrap_or(&[]);
                    if !all.starts_with(ext) {
                        return Err(Replay::NotPrefix {
                            txn: t,
                            key: m.key,
                            read: ext.to_vec(),
                            versions: all.to_vec(),
                        });
                    }
                    match ends.get(&(m.key, ext.len() as u32)) {
                        Some(&w) if rank[w as usize] < rank[t as usize] => {}
                        Some(&w) => {
                            return Err(Replay::ReadsLaterBlock {
                                txn: t,
                                key: m.key,
                                writer: w,
                            })
                        }
                        None => return Err(Replay::MidBlock { txn: t, key: m.key }),
                    }
                }
                _ => return Err(Replay::NotListAppend(t)),
            }
        }
    }
    Ok(())
}
