//! Replays a claimed execution against the history, independently of how
//! it was found: a serial order (serializable, strict serializable) or a
//! commit order with snapshot points (snapshot isolation). A "valid"
//! verdict is only given with a witness that passes these checks.

use crate::history::{History, KeyId, MopKind, Observed, Outcome, TxnId, ValId};
use rustc_hash::FxHashMap;

fn name(h: &History, t: TxnId) -> String {
    format!("T{}", h.txns[t as usize].index)
}

/// Each `ok` transaction exactly once, no `fail` one.
fn check_membership(h: &History, order: &[TxnId]) -> Result<(), String> {
    let mut seen = vec![false; h.txns.len()];
    for &t in order {
        let Some(s) = seen.get_mut(t as usize) else {
            return Err(format!("unknown transaction id {t}"));
        };
        if *s {
            return Err(format!("{} appears twice", name(h, t)));
        }
        *s = true;
        if h.txns[t as usize].outcome == Outcome::Fail {
            return Err(format!("{} failed but is in the order", name(h, t)));
        }
    }
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.outcome == Outcome::Ok && !seen[t] {
            return Err(format!(
                "{} committed but is missing from the order",
                name(h, t as TxnId)
            ));
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
pub fn check_serial(h: &History, order: &[TxnId], strict: bool) -> Result<(), String> {
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
                        return Err(format!(
                            "{} would read key {} as {:?}",
                            name(h, t),
                            m.key,
                            cur
                        ));
                    }
                }
                (MopKind::Read, _) => {}
                _ => {
                    return Err(format!(
                        "{} has a micro-op that is not list-append",
                        name(h, t)
                    ))
                }
            }
        }
    }
    if strict {
        // No transaction may be placed before one that completed before it began.
        let mut min_complete = u64::MAX;
        let mut min_at = 0;
        for &t in order.iter().rev() {
            let txn = &h.txns[t as usize];
            if let Some(inv) = txn.invoke_seq {
                if min_complete < inv && txn.complete_seq.is_some() {
                    return Err(format!(
                        "{} is placed before {}, which completed before it began",
                        name(h, t),
                        name(h, min_at)
                    ));
                }
            }
            if txn.outcome == Outcome::Ok {
                if let Some(c) = txn.complete_seq {
                    if c < min_complete {
                        min_complete = c;
                        min_at = t;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Checks a snapshot-isolation execution: transactions commit in `commits`
/// order; `snapshots[i]` is how many of them had committed when
/// `commits[i]` started (at most `i`). Reads see that snapshot plus their
/// own appends; two transactions appending to one key never overlap (the
/// later one starts after the earlier one commits).
pub fn check_si(h: &History, commits: &[TxnId], snapshots: &[u32]) -> Result<(), String> {
    check_membership(h, commits)?;
    if snapshots.len() != commits.len() {
        return Err("one snapshot point per committed transaction is needed".into());
    }
    let mut state: FxHashMap<KeyId, Vec<ValId>> = FxHashMap::default();
    // Per key: (commit position, length after it).
    let mut lens: FxHashMap<KeyId, Vec<(u32, u32)>> = FxHashMap::default();
    for (j, &t) in commits.iter().enumerate() {
        let sp = snapshots[j];
        if sp as usize > j {
            return Err(format!("{} starts after it commits", name(h, t)));
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
                        return Err(format!(
                            "{} would read key {} as {:?}",
                            name(h, t),
                            m.key,
                            view
                        ));
                    }
                }
                (MopKind::Read, _) => {}
                _ => {
                    return Err(format!(
                        "{} has a micro-op that is not list-append",
                        name(h, t)
                    ))
                }
            }
        }
        for (k, block) in own {
            let hist = lens.entry(k).or_default();
            if let Some(&(c, _)) = hist.last() {
                if c >= sp {
                    return Err(format!(
                        "{} appends to key {} concurrently with an earlier committer",
                        name(h, t),
                        k
                    ));
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
pub fn check_read_committed(h: &History, order: &[TxnId]) -> Result<(), String> {
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
                    let seen = observed(h, o)
                        .ok_or_else(|| format!("{} reads a single value", name(h, t)))?;
                    let mine = own.get(&m.key).map(Vec::as_slice).unwrap_or(&[]);
                    if !seen.ends_with(mine) {
                        return Err(format!(
                            "{} read key {} without its own appends",
                            name(h, t),
                            m.key
                        ));
                    }
                    let ext = &seen[..seen.len() - mine.len()];
                    if ext.is_empty() {
                        continue;
                    }
                    let all = versions.get(&m.key).map(Vec::as_slice).unwrap_or(&[]);
                    if !all.starts_with(ext) {
                        return Err(format!(
                            "{} read key {} as {:?}, not a prefix of its versions {:?}",
                            name(h, t),
                            m.key,
                            ext,
                            all
                        ));
                    }
                    match ends.get(&(m.key, ext.len() as u32)) {
                        Some(&w) if rank[w as usize] < rank[t as usize] => {}
                        Some(&w) => {
                            return Err(format!(
                                "{} read key {} up to {}'s block, which commits later",
                                name(h, t),
                                m.key,
                                name(h, w)
                            ))
                        }
                        None => {
                            return Err(format!(
                                "{} read key {} up to the middle of a block",
                                name(h, t),
                                m.key
                            ))
                        }
                    }
                }
                _ => {
                    return Err(format!(
                        "{} has a micro-op that is not list-append",
                        name(h, t)
                    ))
                }
            }
        }
    }
    Ok(())
}
