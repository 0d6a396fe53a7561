//! A serial order guessed from the history's timing, before any search.
//!
//! Databases that serialize read-write transactions by locks (MySQL's and
//! the simulator's serializable) commit them in about the order they
//! answer, and let read-only transactions read a slightly older snapshot.
//! So each workload replays its writers (committed transactions that write)
//! in completion order, checking their reads, and records what state each
//! key is in along that sequence; then [`place_readers`] gives each
//! read-only transaction the latest point, no later than its own
//! completion, at which every key it read was in the state it read (when
//! there is none, the earliest point after). It is only a guess: when it
//! fails (a writer read something else, or no point fits a reader) the
//! search decides, and when it succeeds the caller replays the order
//! against the history before saying "valid". The register workload
//! ([`super::register::serial_guess`]) compares values, so values that
//! repeat need no choice of writer; list-append ([`list_append`]) compares
//! how much of each key's observed list was in place.

use super::problem::KeyFacts;
use crate::history::{History, KeyId, Outcome, TxnId};
use rustc_hash::FxHashMap;

/// When a transaction took effect, at the latest: its completion (for an
/// `info` one that never completed, a guess: its invocation).
pub fn when(h: &History, t: TxnId) -> u64 {
    let txn = &h.txns[t as usize];
    let inv = txn.invoke_seq.unwrap_or(txn.index.max(0) as u64);
    txn.complete_seq.unwrap_or(inv)
}

/// The committed transactions that `writes`, in completion order (`info`
/// ones, at their invocation, only with `info_commits`); `None` when
/// `info_commits` adds nothing (no `info` writer).
pub fn writers(
    h: &History,
    info_commits: bool,
    writes: impl Fn(TxnId) -> bool,
) -> Option<Vec<TxnId>> {
    let mut any_info = false;
    let mut ws: Vec<TxnId> = (0..h.txns.len() as TxnId)
        .filter(|&t| {
            let committed = match h.txns[t as usize].outcome {
                Outcome::Ok => true,
                Outcome::Info => info_commits,
                Outcome::Fail => false,
            };
            let w = committed && writes(t);
            any_info |= w && h.txns[t as usize].outcome == Outcome::Info;
            w
        })
        .collect();
    if info_commits && !any_info {
        return None;
    }
    ws.sort_by_key(|&t| (when(h, t), t));
    Some(ws)
}

/// Per (key, state), the positions along the writers' sequence at which the
/// key is in that state, as intervals `[start, end]` in order; position `p`
/// is the state after the first `p` writers.
struct Holds(FxHashMap<(KeyId, u32), Vec<(u32, u32)>>);

impl Holds {
    /// From each key's changes `(position, state)`, the first `(0, initial)`,
    /// positions increasing, over `writers` writers.
    fn of(timeline: &[Vec<(u32, u32)>], writers: usize) -> Self {
        let mut m: FxHashMap<(KeyId, u32), Vec<(u32, u32)>> = FxHashMap::default();
        for (k, tl) in timeline.iter().enumerate() {
            for (j, &(start, s)) in tl.iter().enumerate() {
                let end = tl.get(j + 1).map_or(writers as u32, |n| n.0 - 1);
                m.entry((k as KeyId, s)).or_default().push((start, end));
            }
        }
        Holds(m)
    }

    /// The latest position `<= p` at which `k` is in state `s`.
    fn latest(&self, k: KeyId, s: u32, p: u32) -> Option<u32> {
        let ivs = self.0.get(&(k, s))?;
        let i = ivs.partition_point(|iv| iv.0 <= p);
        (i > 0).then(|| p.min(ivs[i - 1].1))
    }

    /// The earliest position `>= p` at which `k` is in state `s`.
    fn earliest(&self, k: KeyId, s: u32, p: u32) -> Option<u32> {
        let ivs = self.0.get(&(k, s))?;
        let i = ivs.partition_point(|iv| iv.1 < p);
        ivs.get(i).map(|iv| p.max(iv.0))
    }
}

/// The serial order: `writers` in turn (`timeline`: each key's changes of
/// state along them, see [`Holds::of`]), each reader (an `ok` transaction
/// that does not `write`; `reads`: the `(key, state)` of each of its reads)
/// placed at the latest position no later than its completion where every
/// read holds (`strict`: no earlier than the writers that completed before
/// it began; else, failing that, the earliest position after). `None` when
/// a reader fits nowhere.
pub fn place_readers(
    h: &History,
    writers: &[TxnId],
    timeline: &[Vec<(u32, u32)>],
    writes: impl Fn(TxnId) -> bool,
    reads: impl Fn(TxnId) -> Vec<(KeyId, u32)>,
    strict: bool,
) -> Option<Vec<TxnId>> {
    let holds = &Holds::of(timeline, writers.len());
    let readers = (0..h.txns.len() as TxnId)
        .filter(|&t| h.txns[t as usize].outcome == Outcome::Ok && !writes(t))
        .map(|t| (t, reads(t)));
    let done: Vec<u64> = writers.iter().map(|&w| when(h, w)).collect();
    // (position, when, txn)
    let mut placed: Vec<(u32, u64, TxnId)> = Vec::new();
    for (t, reads) in readers {
        let at = when(h, t);
        let pref = done.partition_point(|&d| d < at) as u32;
        let lo = if strict {
            let inv = h.txns[t as usize].invoke_seq.unwrap_or(0);
            done.partition_point(|&d| d < inv) as u32
        } else {
            0
        };
        let p = down(holds, &reads, pref, lo)
            .or_else(|| (!strict).then(|| up(holds, &reads, pref)).flatten())?;
        placed.push((p, at, t));
    }
    Some(merge(writers, placed).0)
}

/// `writers` in turn with each reader `(position, when, txn)` placed before
/// the writer at its position; and per position, the index in that order
/// of the writer there (the order's length past the last).
fn merge(writers: &[TxnId], mut placed: Vec<(u32, u64, TxnId)>) -> (Vec<TxnId>, Vec<u32>) {
    placed.sort_unstable();
    let mut order = Vec::with_capacity(writers.len() + placed.len());
    let mut at = Vec::with_capacity(writers.len() + 1);
    let mut next = placed.iter().peekable();
    for (i, &w) in writers.iter().enumerate() {
        while let Some(&(_, _, r)) = next.next_if(|x| x.0 as usize <= i) {
            order.push(r);
        }
        at.push(order.len() as u32);
        order.push(w);
    }
    order.extend(next.map(|x| x.2));
    at.push(order.len() as u32);
    (order, at)
}

/// Snapshot isolation's guess: `writers` commit in turn (`timeline`: each
/// key's changes of state along them); each writer's snapshot is the latest
/// position, no later than its own commit and after every earlier commit
/// of a key it writes (first committer wins: `wrote`, the keys it writes),
/// at which its reads hold; each reader commits where its reads hold, as in
/// [`place_readers`]. The commit order and each commit's snapshot (how many
/// of the commits before it the snapshot holds), or `None`.
pub fn place_snapshots(
    h: &History,
    writers: &[TxnId],
    timeline: &[Vec<(u32, u32)>],
    wrote: impl Fn(TxnId) -> Vec<KeyId>,
    reads: impl Fn(TxnId) -> Vec<(KeyId, u32)>,
) -> Option<(Vec<TxnId>, Vec<u32>)> {
    let holds = &Holds::of(timeline, writers.len());
    // Per key, one past the position of its last writer so far.
    let mut after: FxHashMap<KeyId, u32> = FxHashMap::default();
    let mut snap_at: Vec<u32> = Vec::with_capacity(writers.len());
    let mut is_writer = vec![false; h.txns.len()];
    for (i, &w) in writers.iter().enumerate() {
        is_writer[w as usize] = true;
        let keys = wrote(w);
        let lo = keys
            .iter()
            .filter_map(|k| after.get(k))
            .max()
            .copied()
            .unwrap_or(0);
        snap_at.push(down(holds, &reads(w), i as u32, lo)?);
        for k in keys {
            after.insert(k, i as u32 + 1);
        }
    }
    let done: Vec<u64> = writers.iter().map(|&w| when(h, w)).collect();
    let mut placed: Vec<(u32, u64, TxnId)> = Vec::new();
    for t in 0..h.txns.len() as TxnId {
        if h.txns[t as usize].outcome != Outcome::Ok || is_writer[t as usize] {
            continue;
        }
        let r = reads(t);
        let at = when(h, t);
        let pref = done.partition_point(|&d| d < at) as u32;
        let p = down(holds, &r, pref, 0).or_else(|| up(holds, &r, pref))?;
        placed.push((p, at, t));
    }
    let (order, at) = merge(writers, placed);
    let mut snap_of: FxHashMap<TxnId, u32> = FxHashMap::default();
    for (i, &w) in writers.iter().enumerate() {
        snap_of.insert(w, at[snap_at[i] as usize]);
    }
    // A reader's snapshot is everything committed before it.
    let snapshots = order
        .iter()
        .enumerate()
        .map(|(i, t)| snap_of.get(t).copied().unwrap_or(i as u32))
        .collect();
    Some((order, snapshots))
}

/// The latest position in `[lo, p]` at which every read holds.
fn down(holds: &Holds, reads: &[(KeyId, u32)], mut p: u32, lo: u32) -> Option<u32> {
    loop {
        let mut q = p;
        for &(k, s) in reads {
            q = q.min(holds.latest(k, s, p)?);
        }
        if q < lo {
            return None;
        }
        if q == p {
            return Some(p);
        }
        p = q;
    }
}

/// The earliest position `>= p` at which every read holds.
fn up(holds: &Holds, reads: &[(KeyId, u32)], mut p: u32) -> Option<u32> {
    loop {
        let mut q = p;
        for &(k, s) in reads {
            q = q.max(holds.earliest(k, s, p)?);
        }
        if q == p {
            return Some(p);
        }
        p = q;
    }
}

/// The guess for a list-append history (`keys`: its facts, by key index):
/// a key's state is how much of its observed list is in place (one past
/// its length once a block lands after every read); a writer must find its
/// key at the length it read, and its block must continue the observed
/// list there. Tried with `info` writers as not committed, then as
/// committed.
pub fn list_append(h: &History, keys: &[KeyFacts], strict: bool) -> Option<Vec<TxnId>> {
    let ops = super::problem::TxnOps::new(h.txns.len(), keys);
    [false, true].into_iter().find_map(|info_commits| {
        let ws = writers(h, info_commits, |t| !ops.appends[t as usize].is_empty())?;
        let mut pos: Vec<u32> = vec![0; keys.len()];
        let mut timeline: Vec<Vec<(u32, u32)>> = vec![vec![(0, 0)]; keys.len()];
        for (i, &w) in ws.iter().enumerate() {
            if ops.reads[w as usize]
                .iter()
                .any(|&(k, cut)| pos[k as usize] != cut)
            {
                return None;
            }
            for &(k, wi) in &ops.appends[w as usize] {
                let kf = &keys[k as usize];
                let n = kf.list.len() as u32;
                let p = pos[k as usize];
                let block = &kf.writers[wi as usize].block;
                let seen = &kf.list[p.min(n) as usize..];
                let fits = seen.iter().zip(block).all(|(a, b)| a == b);
                if !fits {
                    return None;
                }
                let to = if p >= n || p as usize + block.len() > n as usize {
                    n + 1
                } else {
                    p + block.len() as u32
                };
                pos[k as usize] = to;
                timeline[k as usize].push((i as u32 + 1, to));
            }
        }
        place_readers(
            h,
            &ws,
            &timeline,
            |t| !ops.appends[t as usize].is_empty(),
            |t| ops.reads[t as usize].clone(),
            strict,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(edn: &str) -> History {
        crate::history::read::read_history(edn.as_bytes(), "t", None).expect("parses")
    }

    fn guessed(h: &History) -> Option<Vec<TxnId>> {
        let Ok(keys) = super::super::problem::extract(h, 64) else {
            panic!("the facts extract");
        };
        let order = list_append(h, &keys, false)?;
        assert_eq!(
            super::super::witness::check_serial(h, &order, false),
            Ok(())
        );
        Some(order)
    }

    /// T0 then T1 append 1 and 2 to x (values repeat: T2 appends 1 again);
    /// T3 completes last but read x = [1]: it goes back to where x held
    /// exactly that.
    #[test]
    fn a_stale_list_reader_goes_back_to_the_prefix_it_read() {
        let h = history(
            r#"{:type :invoke, :process 0, :value [[:append :x 1]], :index 0}
{:type :ok, :process 0, :value [[:append :x 1]], :index 1}
{:type :invoke, :process 3, :value [[:r :x nil]], :index 2}
{:type :invoke, :process 1, :value [[:append :x 2]], :index 3}
{:type :ok, :process 1, :value [[:append :x 2]], :index 4}
{:type :invoke, :process 2, :value [[:r :x nil] [:append :x 1]], :index 5}
{:type :ok, :process 2, :value [[:r :x [1 2]] [:append :x 1]], :index 6}
{:type :ok, :process 3, :value [[:r :x [1]]], :index 7}
{:type :invoke, :process 4, :value [[:r :x nil]], :index 8}
{:type :ok, :process 4, :value [[:r :x [1 2 1]]], :index 9}"#,
        );
        let order = guessed(&h).expect("a guess");
        let pos = |t: TxnId| order.iter().position(|&x| x == t);
        // Transactions are numbered by invocation: T0 x1, T1 reader, T2
        // x2, T3 reads [1 2] and appends 1, T4 reads [1 2 1].
        assert!(pos(0) < pos(1) && pos(1) < pos(2), "{order:?}");
    }

    /// A block that does not continue the observed list where its writer
    /// comes in completion order defeats the guess (the search decides).
    #[test]
    fn a_block_out_of_completion_order_defeats_the_guess() {
        let h = history(
            r#"{:type :invoke, :process 0, :value [[:append :x 1]], :index 0}
{:type :invoke, :process 1, :value [[:append :x 2]], :index 1}
{:type :ok, :process 0, :value [[:append :x 1]], :index 2}
{:type :ok, :process 1, :value [[:append :x 2]], :index 3}
{:type :invoke, :process 2, :value [[:r :x nil]], :index 4}
{:type :ok, :process 2, :value [[:r :x [2 1]]], :index 5}"#,
        );
        assert_eq!(guessed(&h), None);
    }
}
