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

/// Checks a consistent-view execution (Adya's PL-2+: no G1, no G-single):
/// first a read-committed one ([`check_read_committed`]: committed blocks
/// in `order` are each key's versions, reads see whole blocks committed
/// before them, so ww ∪ wr follows `order` and is acyclic), then, with the
/// dependency graph recomputed from that execution, that no
/// anti-dependency `a → b` (`a` read a version of a key, `b` installed the
/// next one) has `b` reaching `a` by ww ∪ wr edges: such a path and the
/// edge would be a cycle with exactly one anti-dependency.
pub fn check_consistent_view(h: &History, order: &[TxnId]) -> Result<(), Replay> {
    check_read_committed(h, order)?;
    let n = order.len();
    let mut rank = vec![u32::MAX; h.txns.len()];
    for (i, &t) in order.iter().enumerate() {
        rank[t as usize] = i as u32;
    }
    // Per key, the writers in version order; which block starts at and
    // ends at each length.
    let mut len: FxHashMap<KeyId, u32> = FxHashMap::default();
    let mut last: FxHashMap<KeyId, TxnId> = FxHashMap::default();
    let mut starts: FxHashMap<(KeyId, u32), TxnId> = FxHashMap::default();
    let mut ends: FxHashMap<(KeyId, u32), TxnId> = FxHashMap::default();
    // ww ∪ wr, by rank.
    let mut succ: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &t in order {
        let mut own: Vec<(KeyId, u32)> = Vec::new();
        for m in h.mops(t) {
            if let (MopKind::Append, Observed::Scalar(_)) = (m.kind, m.value) {
                match own.iter_mut().find(|o| o.0 == m.key) {
                    Some(o) => o.1 += 1,
                    None => own.push((m.key, 1)),
                }
            }
        }
        for (k, w) in own {
            let l = len.entry(k).or_default();
            starts.insert((k, *l), t);
            *l += w;
            ends.insert((k, *l), t);
            if let Some(p) = last.insert(k, t) {
                succ[rank[p as usize] as usize].push(rank[t as usize]);
            }
        }
    }
    // Reads: wr from the version's writer, rw to the next version's.
    let mut rw: Vec<(u32, u32, KeyId)> = Vec::new();
    for &t in order {
        if h.txns[t as usize].outcome != Outcome::Ok {
            continue;
        }
        let mut own: FxHashMap<KeyId, u32> = FxHashMap::default();
        for m in h.mops(t) {
            match (m.kind, m.value) {
                (MopKind::Append, _) => *own.entry(m.key).or_default() += 1,
                (MopKind::Read, o) => {
                    let seen = observed(h, o).ok_or(Replay::ScalarRead(t))?;
                    // Its own appends end the read (checked above).
                    let ext =
                        (seen.len() as u32).saturating_sub(own.get(&m.key).copied().unwrap_or(0));
                    if ext > 0 {
                        if let Some(&w) = ends.get(&(m.key, ext)) {
                            if w != t {
                                succ[rank[w as usize] as usize].push(rank[t as usize]);
                            }
                        }
                    }
                    if let Some(&b) = starts.get(&(m.key, ext)) {
                        if b != t {
                            rw.push((rank[t as usize], rank[b as usize], m.key));
                        }
                    }
                }
                _ => return Err(Replay::NotListAppend(t)),
            }
        }
    }
    // Every ww and wr edge goes forward in `order`, so only an
    // anti-dependency that goes backward can close a cycle. Reachability
    // from their heads, 4096 heads at a time.
    rw.retain(|&(a, b, _)| b < a);
    let mut heads: Vec<u32> = rw.iter().map(|e| e.1).collect();
    heads.sort_unstable();
    heads.dedup();
    const WORDS: usize = 64;
    for chunk in heads.chunks(64 * WORDS) {
        let bit: FxHashMap<u32, usize> = chunk.iter().enumerate().map(|(i, &b)| (b, i)).collect();
        let mut reach = vec![[0u64; WORDS]; n];
        for i in chunk[0] as usize..n {
            if let Some(&j) = bit.get(&(i as u32)) {
                reach[i][j / 64] |= 1 << (j % 64);
            }
            let here = reach[i];
            if here.iter().all(|&x| x == 0) {
                continue;
            }
            for &s in &succ[i] {
                for (x, y) in reach[s as usize].iter_mut().zip(here.iter()) {
                    *x |= y;
                }
            }
        }
        for &(a, b, k) in &rw {
            if let Some(&j) = bit.get(&b) {
                if reach[a as usize][j / 64] >> (j % 64) & 1 == 1 {
                    return Err(Replay::SingleAntiDependency {
                        txn: order[a as usize],
                        key: k,
                        writer: order[b as usize],
                    });
                }
            }
        }
    }
    Ok(())
}

/// Checks a witness of no G0 (read uncommitted) or, with `g1c`, of no G0
/// and no G1c on list-append histories whose values may repeat: the
/// transactions in `order` committed (every `ok` one, maybe some `info`
/// ones, no `fail` one), each key's versions are their blocks in that
/// order, so ww follows `order`. Each `ok` read must be explained (see
/// [`super::uncommitted`]): its elements are the committed appends of
/// other transactions in version order, longest first as far as the read
/// contains them as a subsequence (with `g1c` only those of transactions
/// before the reader, so that wr follows `order` too), and the rest, value
/// by value, no more than appends that did not commit, the reader's own
/// appends (with `g1c` only those before the read: a later one would be a
/// future read) and the copies of a value the read shows more often than
/// the history appends it (garbage) supply.
pub fn check_uncommitted(h: &History, order: &[TxnId], g1c: bool) -> Result<(), Replay> {
    check_membership(h, order)?;
    let mut rank = vec![u32::MAX; h.txns.len()];
    for (i, &t) in order.iter().enumerate() {
        rank[t as usize] = i as u32;
    }
    let mut versions: FxHashMap<KeyId, Vec<(ValId, TxnId)>> = FxHashMap::default();
    for &t in order {
        for m in h.mops(t) {
            match (m.kind, m.value) {
                (MopKind::Append, Observed::Scalar(v)) => {
                    versions.entry(m.key).or_default().push((v, t))
                }
                (MopKind::Read, _) => {}
                _ => return Err(Replay::NotListAppend(t)),
            }
        }
    }
    // Every append of each value, and those of transactions that did not
    // commit.
    let mut supply: FxHashMap<(KeyId, ValId), u32> = FxHashMap::default();
    let mut loose: FxHashMap<(KeyId, ValId), u32> = FxHashMap::default();
    for (t, _) in h.txns.iter().enumerate() {
        for m in h.mops(t as TxnId) {
            if let (MopKind::Append, Observed::Scalar(v)) = (m.kind, m.value) {
                *supply.entry((m.key, v)).or_default() += 1;
                if rank[t] == u32::MAX {
                    *loose.entry((m.key, v)).or_default() += 1;
                }
            }
        }
    }
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.outcome != Outcome::Ok {
            continue;
        }
        let t = t as TxnId;
        let mops = h.mops(t);
        for (i, m) in mops.iter().enumerate() {
            if m.kind != MopKind::Read {
                continue;
            }
            let seen = observed(h, m.value).ok_or(Replay::ScalarRead(t))?;
            let mut left: FxHashMap<ValId, i64> = FxHashMap::default();
            for &v in seen {
                *left.entry(v).or_default() += 1;
            }
            // The supplies that stand anywhere in the read.
            let mut spare: FxHashMap<ValId, i64> = FxHashMap::default();
            for (&v, &n) in &left {
                let all = supply.get(&(m.key, v)).copied().unwrap_or(0) as i64;
                let free = loose.get(&(m.key, v)).copied().unwrap_or(0) as i64;
                spare.insert(v, free + (n - all).max(0));
            }
            for (j, o) in mops.iter().enumerate() {
                if let (MopKind::Append, Observed::Scalar(v), true) =
                    (o.kind, o.value, o.key == m.key)
                {
                    if !g1c || j < i {
                        if let Some(s) = spare.get_mut(&v) {
                            *s += 1;
                        }
                    }
                }
            }
            // The committed appends of others, longest prefix the read
            // contains as a subsequence.
            let all = versions.get(&m.key).map(Vec::as_slice).unwrap_or(&[]);
            let mut at = 0usize;
            for &(v, w) in all {
                if w == t {
                    continue;
                }
                if g1c && rank[w as usize] > rank[t as usize] {
                    break;
                }
                match seen[at..].iter().position(|&x| x == v) {
                    Some(p) => {
                        at += p + 1;
                        *left.get_mut(&v).expect("a value of the read") -= 1;
                    }
                    None => break,
                }
            }
            if left.iter().any(|(v, &n)| n > spare[v]) {
                return Err(Replay::UnexplainedRead {
                    txn: t,
                    key: m.key,
                    g1c,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(edn: &str) -> History {
        crate::history::read::read_history(edn.as_bytes(), "t", None).expect("parses")
    }

    /// T0 appends to x and y; T1 reads x empty and y with T0's append.
    const READ_SKEW: &str = r#"{:type :invoke, :process 1, :value [[:append :x 1] [:append :y 1]], :index 0}
{:type :ok, :process 1, :value [[:append :x 1] [:append :y 1]], :index 1}
{:type :invoke, :process 0, :value [[:r :x nil] [:r :y nil]], :index 2}
{:type :ok, :process 0, :value [[:r :x nil] [:r :y [1]]], :index 3}
"#;

    #[test]
    fn a_read_skew_is_read_committed_but_not_a_consistent_view() {
        let h = history(READ_SKEW);
        // T1 anti-depends on T0 (x), which it read from (y): one
        // anti-dependency closes the cycle.
        assert_eq!(check_read_committed(&h, &[0, 1]), Ok(()));
        assert!(matches!(
            check_consistent_view(&h, &[0, 1]),
            Err(Replay::SingleAntiDependency {
                txn: 1,
                writer: 0,
                ..
            })
        ));
    }

    /// T0 appends 1 to x; T1 reads [1] and appends 1; T2 reads [1 1].
    const CHAIN: &str = r#"{:type :invoke, :process 0, :value [[:append :x 1]], :index 0}
{:type :ok, :process 0, :value [[:append :x 1]], :index 1}
{:type :invoke, :process 1, :value [[:r :x nil] [:append :x 1]], :index 2}
{:type :ok, :process 1, :value [[:r :x [1]] [:append :x 1]], :index 3}
{:type :invoke, :process 2, :value [[:r :x nil] [:r :y nil]], :index 4}
{:type :ok, :process 2, :value [[:r :x [1 1]] [:r :y nil]], :index 5}
"#;

    #[test]
    fn a_serial_order_is_a_consistent_view() {
        let h = history(CHAIN);
        assert!(check_consistent_view(&h, &[0, 1, 2]).is_ok());
        // T1 first: T0's block would be the second 1, which T1 read
        // before its own append: not even read committed.
        assert!(check_consistent_view(&h, &[1, 0, 2]).is_err());
    }
}
