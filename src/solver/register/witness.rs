//! Replays a claimed register execution against the history itself (not
//! the solver's facts): each `ok` transaction once, no `fail` one; every
//! read of an `ok` transaction returns its own latest write to the key, or
//! else the key's latest version in the state it reads (the serial prefix,
//! or its snapshot); strict: real time respected; snapshot isolation: a
//! snapshot no earlier than the last commit of a key it writes.

use super::facts::NIL;
use crate::history::{Datum, History, KeyId, MopKind, Observed, Outcome, TxnId};
use crate::proof::Replay;
use crate::solver::witness::{check_membership, check_realtime};
use rustc_hash::FxHashMap;

fn read_ver(h: &History, o: Observed) -> Option<u32> {
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

/// `t`'s reads against `base` (the version it sees of a key) and its own
/// writes; its last writes, on success.
fn run_txn(
    h: &History,
    t: TxnId,
    base: impl Fn(KeyId) -> u32,
) -> Result<Vec<(KeyId, u32)>, Replay> {
    let mut own: FxHashMap<KeyId, u32> = FxHashMap::default();
    let ok = h.txns[t as usize].outcome == Outcome::Ok;
    for m in h.mops(t) {
        match m.kind {
            MopKind::Write => {
                let v = match m.value {
                    Observed::Scalar(v) => v,
                    _ => NIL,
                };
                own.insert(m.key, v);
            }
            MopKind::Read if ok => {
                let want = own.get(&m.key).copied().unwrap_or_else(|| base(m.key));
                if read_ver(h, m.value) != Some(want) {
                    return Err(Replay::ReadsDifferently { txn: t, key: m.key });
                }
            }
            _ => {}
        }
    }
    Ok(own.into_iter().collect())
}

/// Serial execution of `order`; `strict`: real time too.
pub fn check_serial(h: &History, order: &[TxnId], strict: bool) -> Result<(), Replay> {
    check_membership(h, order)?;
    if strict {
        check_realtime(h, order)?;
    }
    let mut state: FxHashMap<KeyId, u32> = FxHashMap::default();
    for &t in order {
        let writes = run_txn(h, t, |k| state.get(&k).copied().unwrap_or(NIL))?;
        state.extend(writes);
    }
    Ok(())
}

/// Snapshot execution: `commits` in commit order, entry `i` reading the
/// state after `snapshots[i]` commits.
pub fn check_si(h: &History, commits: &[TxnId], snapshots: &[u32]) -> Result<(), Replay> {
    check_membership(h, commits)?;
    if commits.len() != snapshots.len() {
        return Err(Replay::SnapshotCount);
    }
    let mut versions: FxHashMap<KeyId, Vec<(u32, u32)>> = FxHashMap::default();
    for (i, (&t, &s)) in commits.iter().zip(snapshots).enumerate() {
        if s as usize > i {
            return Err(Replay::StartsAfterCommit(t));
        }
        let at = |k: KeyId| -> u32 {
            let vs = versions.get(&k).map(Vec::as_slice).unwrap_or(&[]);
            let p = vs.partition_point(|x| x.0 < s);
            if p == 0 {
                NIL
            } else {
                vs[p - 1].1
            }
        };
        let writes = run_txn(h, t, at)?;
        for (k, v) in writes {
            let vs = versions.entry(k).or_default();
            if vs.last().is_some_and(|x| x.0 >= s) {
                return Err(Replay::OverlappingWriter { txn: t, key: k });
            }
            vs.push((i as u32, v));
        }
    }
    Ok(())
}
