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
