//! Replays a claimed register execution against the history itself (not
//! the solver's facts): each `ok` transaction once, no `fail` one; every
//! read of an `ok` transaction returns its own latest write to the key, or
//! else the key's latest version in the state it reads (the serial prefix,
//! or its snapshot); strict: real time respected; snapshot isolation: a
//! snapshot no earlier than the last commit of a key it writes.

use super::facts::{read_ver, write_ver, NIL};
use crate::history::{History, KeyId, MopKind, Outcome, TxnId};
use crate::proof::{Level, Replay};
use crate::solver::witness::{check_membership, check_realtime};
use rustc_hash::FxHashMap;

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
                own.insert(m.key, write_ver(m.value));
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

/// Read committed in commit order `order`: each read of an `ok`
/// transaction returns its own latest write of the key, `nil`, or the last
/// write of a transaction committed earlier. No G1c also accepts an earlier
/// transaction's overwritten write, a failed transaction's write and a
/// value nobody wrote; read uncommitted, any value some transaction wrote.
pub fn check_read_committed(h: &History, order: &[TxnId], level: Level) -> Result<(), Replay> {
    let relaxed = level != Level::ReadCommitted;
    check_membership(h, order)?;
    let mut failed: rustc_hash::FxHashSet<(KeyId, u32)> = rustc_hash::FxHashSet::default();
    let mut written: rustc_hash::FxHashSet<(KeyId, u32)> = rustc_hash::FxHashSet::default();
    for (t, txn) in h.txns.iter().enumerate() {
        for m in h.mops(t as TxnId) {
            if m.kind == MopKind::Write {
                let v = write_ver(m.value);
                written.insert((m.key, v));
                if txn.outcome == Outcome::Fail {
                    failed.insert((m.key, v));
                }
            }
        }
    }
    // Versions committed so far: last writes (and, relaxed, overwritten ones).
    let mut committed: rustc_hash::FxHashSet<(KeyId, u32)> = rustc_hash::FxHashSet::default();
    let mut own: FxHashMap<KeyId, u32> = FxHashMap::default();
    // What `t` wrote so far: a read of one of them saw its own version.
    let mut wrote: rustc_hash::FxHashSet<(KeyId, u32)> = rustc_hash::FxHashSet::default();
    for &t in order {
        own.clear();
        wrote.clear();
        let ok = h.txns[t as usize].outcome == Outcome::Ok;
        for m in h.mops(t) {
            match m.kind {
                MopKind::Write => {
                    let v = write_ver(m.value);
                    if let (true, Some(old)) = (relaxed, own.insert(m.key, v)) {
                        committed.insert((m.key, old));
                    }
                    wrote.insert((m.key, v));
                }
                MopKind::Read if ok => {
                    let got = read_ver(h, m.value);
                    let fine = match got {
                        Some(v) if wrote.contains(&(m.key, v)) => true,
                        None => level == Level::NoG1c,
                        Some(NIL) => true,
                        Some(v) if level == Level::ReadUncommitted => written.contains(&(m.key, v)),
                        Some(v) => {
                            committed.contains(&(m.key, v))
                                || (relaxed
                                    && (failed.contains(&(m.key, v))
                                        || (level == Level::NoG1c
                                            && !written.contains(&(m.key, v)))))
                        }
                    };
                    if !fine {
                        return Err(Replay::ReadsDifferently { txn: t, key: m.key });
                    }
                }
                _ => {}
            }
        }
        committed.extend(own.iter().map(|(&k, &v)| (k, v)));
    }
    Ok(())
}
