//! Version orders of registers, from several sources tried in Elle's order.
//! Each source yields "version v precedes version v' of key k" edges; a
//! source whose edges, added to those already accepted, make some key's
//! versions cyclic is set aside, and each cycle is reported as
//! `cyclic-versions` (naming the sources that took part).

use super::{Ambiguity, Ext, RegisterOptions, RwRegister, VEdge, Ver, NIL};
use crate::graph::{sccs, DepGraph, GraphBuilder, Rels};
use crate::history::{Datum, History, KeyId, Outcome, Process, TxnId};
use crate::workload::{Anomaly, AnomalyKind, Record};
use rustc_hash::FxHashMap;

pub use crate::evidence::Source;

/// What [`infer_order`] found.
pub(crate) struct Found {
    pub order: Vec<VEdge>,
    pub sources: Vec<&'static str>,
    pub cyclic: Vec<Anomaly>,
}

/// Tries each source the options ask for, in order, keeping those that
/// leave every key's version order acyclic.
pub(crate) fn infer_order(
    rr: &RwRegister<'_>,
    amb: &Ambiguity,
    opts: &RegisterOptions<'_>,
) -> Found {
    let h = rr.history();
    let mut found = Found {
        order: Vec::new(),
        sources: Vec::new(),
        cyclic: Vec::new(),
    };
    for src in Source::ALL {
        let raw = match src {
            Source::InitialState => initial_state(rr),
            Source::TransactionOrder => match opts.transaction_order {
                Some(order) => transaction_order(rr, order),
                None => continue,
            },
            Source::WfrKeys if opts.wfr_keys => wfr(rr),
            Source::SequentialKeys if opts.sequential_keys => sequential(rr),
            Source::LinearizableKeys if opts.linearizable_keys => realtime(rr, false),
            Source::RealtimeVersions if opts.realtime_versions => realtime(rr, true),
            _ => continue,
        };
        let (union, touched) = merge(&found.order, raw, src.bit(), amb);
        // The accepted order is acyclic: a cycle needs one of the new edges.
        let cycles = cyclic_keys(h, &union, &touched);
        if cycles.is_empty() {
            found.order = union;
            found.sources.push(src.name());
        } else {
            let mut names = found.sources.clone();
            names.push(src.name());
            for c in cycles {
                found.cyclic.push(cyclic_anomaly(&c, &names));
            }
        }
    }
    found
}

/// `accepted` (sorted) plus `new` (tagged `bit`), without self-loops or
/// ambiguous versions, sorted by (key, from, to), parallel edges merged.
/// Also returns the keys `new` touches, sorted.
fn merge(
    accepted: &[VEdge],
    mut new: Vec<(KeyId, Ver, Ver)>,
    bit: u8,
    amb: &Ambiguity,
) -> (Vec<VEdge>, Vec<KeyId>) {
    new.retain(|&(k, a, b)| a != b && !amb.is(k, a) && !amb.is(k, b));
    new.sort_unstable();
    new.dedup();
    let mut touched: Vec<KeyId> = new.iter().map(|e| e.0).collect();
    touched.dedup();
    let mut out: Vec<VEdge> = Vec::with_capacity(accepted.len() + new.len());
    let mut old = accepted.iter().peekable();
    for (key, from, to) in new {
        while let Some(e) = old.next_if(|e| (e.key, e.from, e.to) < (key, from, to)) {
            out.push(*e);
        }
        match old.next_if(|e| (e.key, e.from, e.to) == (key, from, to)) {
            Some(e) => out.push(VEdge {
                sources: e.sources | bit,
                ..*e
            }),
            None => out.push(VEdge {
                key,
                from,
                to,
                sources: bit,
            }),
        }
    }
    out.extend(old);
    (out, touched)
}

/// The version a transaction leaves a key in, for ordering later ones
/// (Elle: its last write, else its first read; an `info` transaction only
/// by its writes).
fn out_version(outcome: Outcome, e: &Ext) -> Option<Ver> {
    match outcome {
        Outcome::Ok => Some(match (e.write, e.read) {
            (Some((w, _)), _) if w != NIL => w,
            (_, Some((r, _))) => r,
            _ => NIL,
        }),
        Outcome::Info => e.write.map(|(w, _)| w),
        Outcome::Fail => None,
    }
}

/// The version a transaction first meets on a key, for ordering it after
/// earlier ones (Elle: its first read unless `nil`, else its write).
fn in_version(outcome: Outcome, e: &Ext) -> Option<Ver> {
    match outcome {
        Outcome::Ok => Some(match (e.read, e.write) {
            (Some((r, _)), _) if r != NIL => r,
            (_, Some((w, _))) => w,
            _ => NIL,
        }),
        Outcome::Info => e.write.map(|(w, _)| w),
        Outcome::Fail => None,
    }
}

/// `nil` precedes every version written (by a transaction that may have
/// committed) or read (by a committed one).
fn initial_state(rr: &RwRegister<'_>) -> Vec<(KeyId, Ver, Ver)> {
    let h = rr.history();
    let mut out = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.outcome == Outcome::Fail {
            continue;
        }
        for e in rr.ext_of(t as TxnId) {
            if let Some((w, _)) = e.write {
                out.push((e.key, NIL, w));
            }
            if let (Outcome::Ok, Some((r, _))) = (txn.outcome, e.read) {
                out.push((e.key, NIL, r));
            }
        }
    }
    out
}

/// Writes to each key follow the given commit order of their transactions.
/// Transactions without a position are left out.
fn transaction_order(
    rr: &RwRegister<'_>,
    order: &std::collections::BTreeMap<i64, i64>,
) -> Vec<(KeyId, Ver, Ver)> {
    let h = rr.history();
    // (key, position, txn, version written)
    let mut writes: Vec<(KeyId, i64, TxnId, Ver)> = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.outcome == Outcome::Fail {
            continue;
        }
        let Some(&pos) = order.get(&txn.index) else {
            continue;
        };
        for e in rr.ext_of(t as TxnId) {
            if let Some((w, _)) = e.write {
                writes.push((e.key, pos, t as TxnId, w));
            }
        }
    }
    writes.sort_unstable();
    writes
        .windows(2)
        .filter(|p| p[0].0 == p[1].0)
        .map(|p| (p[0].0, p[0].3, p[1].3))
        .collect()
}

/// A committed transaction that read a key and then wrote it wrote a later
/// version than the one it read.
fn wfr(rr: &RwRegister<'_>) -> Vec<(KeyId, Ver, Ver)> {
    let h = rr.history();
    let mut out = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.outcome != Outcome::Ok {
            continue;
        }
        for e in rr.ext_of(t as TxnId) {
            if let (Some((r, _)), Some((w, _))) = (e.read, e.write) {
                if r != NIL && w != NIL {
                    out.push((e.key, r, w));
                }
            }
        }
    }
    out
}

/// Each process's committed transactions, in order: the version one leaves
/// a key in precedes the version the next one on that key meets.
fn sequential(rr: &RwRegister<'_>) -> Vec<(KeyId, Ver, Ver)> {
    let h = rr.history();
    let mut last: FxHashMap<(Process, KeyId), Ver> = FxHashMap::default();
    let mut out = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.outcome != Outcome::Ok {
            continue;
        }
        for e in rr.ext_of(t as TxnId) {
            let vin = in_version(txn.outcome, e).unwrap_or(NIL);
            let vout = out_version(txn.outcome, e).unwrap_or(NIL);
            if let Some(prev) = last.insert((txn.process, e.key), vout) {
                out.push((e.key, prev, vin));
            }
        }
    }
    out
}

/// One transaction touching one key, for real-time ordering.
#[derive(Clone, Copy)]
struct Toucher {
    key: KeyId,
    invoke: u64,
    /// Completion, for committed transactions only: the others never
    /// complete for real-time purposes.
    complete: u64,
    vin: Ver,
    vout: Ver,
}

/// Real-time order on each key, reads included (Elle's `linearizable-keys`
/// version graphs): if `a` completed before `b` was invoked, the version `a`
/// leaves precedes the version `b` meets. Each transaction is linked to
/// every later one on the key except those that follow transitively, through
/// a transaction between them that meets and leaves the key at one version. With `writers_only` (OneLite's
/// `--realtime-versions`), only transactions that write the key take part,
/// ordered by the versions they write.
fn realtime(rr: &RwRegister<'_>, writers_only: bool) -> Vec<(KeyId, Ver, Ver)> {
    let h = rr.history();
    let mut ts: Vec<Toucher> = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.outcome == Outcome::Fail {
            continue;
        }
        let complete = match (txn.outcome, txn.complete_seq) {
            (Outcome::Ok, Some(c)) => c,
            _ => u64::MAX,
        };
        let invoke = txn.invoke_seq.unwrap_or(u64::MAX);
        if invoke == u64::MAX && complete == u64::MAX {
            continue;
        }
        for e in rr.ext_of(t as TxnId) {
            let (vin, vout) = if writers_only {
                match e.write {
                    Some((w, _)) => (w, w),
                    None => continue,
                }
            } else {
                match (in_version(txn.outcome, e), out_version(txn.outcome, e)) {
                    (Some(i), Some(o)) => (i, o),
                    _ => continue,
                }
            };
            ts.push(Toucher {
                key: e.key,
                invoke,
                complete,
                vin,
                vout,
            });
        }
    }
    ts.sort_unstable_by_key(|x| (x.key, x.invoke));
    let mut out = Vec::new();
    let mut suffix_min: Vec<u64> = Vec::new();
    for group in ts.chunk_by(|a, b| a.key == b.key) {
        // Transactions with no invocation cannot follow anything: they sort last.
        let cands = &group[..group.partition_point(|x| x.invoke != u64::MAX)];
        // A transaction that meets and leaves the key at one version carries
        // the order through: what precedes it precedes all it precedes. One
        // that reads a version and writes another does not (that link would
        // be wfr), so successors past it are linked directly.
        suffix_min.clear();
        suffix_min.resize(cands.len() + 1, u64::MAX);
        for i in (0..cands.len()).rev() {
            let c = &cands[i];
            let through = if c.vin == c.vout {
                c.complete
            } else {
                u64::MAX
            };
            suffix_min[i] = suffix_min[i + 1].min(through);
        }
        for a in group.iter().filter(|a| a.complete != u64::MAX) {
            let i0 = cands.partition_point(|b| b.invoke < a.complete);
            // Nothing invoked after `bound` needs a link: the transaction
            // completing at `bound` comes between and carries the order.
            let bound = suffix_min[i0];
            for b in cands[i0..].iter().take_while(|b| b.invoke < bound) {
                out.push((a.key, a.vout, b.vin));
            }
        }
    }
    out
}

/// A cyclic key: its strongly connected set of versions and one cycle.
pub(crate) struct CyclicKey {
    key: KeyId,
    scc: Vec<Ver>,
    cycle: Vec<Ver>,
}

/// Every strongly connected set of two or more versions of the keys in
/// `keys` (sorted); within a key, sorted as Elle sorts them (by least value
/// when all are integers, else by size).
fn cyclic_keys(h: &History, order: &[VEdge], keys: &[KeyId]) -> Vec<CyclicKey> {
    let mut out: Vec<CyclicKey> = Vec::new();
    let mut nodes: Vec<Ver> = Vec::new();
    let mut local: Vec<(u32, u32)> = Vec::new();
    for group in order.chunk_by(|a, b| a.key == b.key) {
        let key = group[0].key;
        if keys.binary_search(&key).is_err() {
            continue;
        }
        // Local node ids: the key's versions, sorted.
        nodes.clear();
        nodes.extend(group.iter().flat_map(|e| [e.from, e.to]));
        nodes.sort_unstable();
        nodes.dedup();
        let id = |v: Ver| nodes.binary_search(&v).expect("every endpoint is a node") as u32;
        local.clear();
        local.extend(group.iter().map(|e| (id(e.from), id(e.to))));
        if acyclic(nodes.len(), &local) {
            continue;
        }
        let mut g = GraphBuilder::with_nodes(nodes.len());
        for &(a, b) in &local {
            g.add(a, b, Rels::WW);
        }
        let g = g.build();
        let mut cyclic: Vec<CyclicKey> = sccs(&g, Rels::WW)
            .into_iter()
            .map(|comp| {
                let mut scc: Vec<Ver> = comp.iter().map(|&n| nodes[n as usize]).collect();
                sort_versions(h, &mut scc);
                let cycle = cycle_in(&g, &comp)
                    .iter()
                    .map(|&n| nodes[n as usize])
                    .collect();
                CyclicKey { key, scc, cycle }
            })
            .collect();
        sort_like_elle(h, &mut cyclic);
        out.extend(cyclic);
    }
    out.sort_by(|a, b| h.keys.datum(a.key).cmp(h.keys.datum(b.key)));
    out
}

/// Kahn's algorithm: does the graph of `n` nodes and `edges` (sorted by
/// source) have no cycle?
fn acyclic(n: usize, edges: &[(u32, u32)]) -> bool {
    let mut indeg = vec![0u32; n];
    for &(_, b) in edges {
        indeg[b as usize] += 1;
    }
    let mut start = vec![0u32; n + 1];
    for &(a, _) in edges {
        start[a as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut ready: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
    let mut seen = 0;
    while let Some(v) = ready.pop() {
        seen += 1;
        for &(_, b) in &edges[start[v as usize] as usize..start[v as usize + 1] as usize] {
            indeg[b as usize] -= 1;
            if indeg[b as usize] == 0 {
                ready.push(b);
            }
        }
    }
    seen == n
}

/// Orders one key's cyclic sets as Elle does: by least value when every
/// value is an integer, else by size (then by value, for stability).
fn sort_like_elle(h: &History, cyclic: &mut [CyclicKey]) {
    let datum = |v: Ver| (v != NIL).then(|| h.values.datum(v));
    let ints = cyclic.iter().all(|c| {
        c.scc
            .iter()
            .all(|&v| matches!(datum(v), Some(Datum::Int(_))))
    });
    if ints {
        cyclic.sort_by_key(|c| {
            c.scc
                .iter()
                .filter_map(|&v| match datum(v) {
                    Some(Datum::Int(i)) => Some(*i),
                    _ => None,
                })
                .min()
        });
    } else {
        cyclic.sort_by(|a, b| {
            let da: Vec<Option<&Datum>> = a.scc.iter().map(|&v| datum(v)).collect();
            let db: Vec<Option<&Datum>> = b.scc.iter().map(|&v| datum(v)).collect();
            a.scc.len().cmp(&b.scc.len()).then(da.cmp(&db))
        });
    }
}

/// Versions sorted as Elle's JSON sets are: `nil` first, then by value.
fn sort_versions(h: &History, vs: &mut [Ver]) {
    vs.sort_by(|&a, &b| {
        let d = |v: Ver| (v != NIL).then(|| h.values.datum(v));
        d(a).cmp(&d(b))
    });
}

/// A shortest cycle through the first node of a strongly connected `comp`
/// (breadth-first inside it), closed: the last node equals the first.
fn cycle_in(g: &DepGraph, comp: &[u32]) -> Vec<u32> {
    let start = comp[0];
    let inside = |x: u32| comp.binary_search(&x).is_ok();
    let mut parent: FxHashMap<u32, u32> = FxHashMap::default();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in g.targets(v) {
            if !inside(w) {
                continue;
            }
            if w == start {
                let mut path = vec![start, v];
                let mut x = v;
                while x != start {
                    x = parent[&x];
                    path.push(x);
                }
                path.reverse();
                return path;
            }
            if let std::collections::hash_map::Entry::Vacant(e) = parent.entry(w) {
                e.insert(v);
                queue.push_back(w);
            }
        }
    }
    vec![start, start]
}

/// Elle's `cyclic-versions` anomaly: `{key, scc, sources}`.
fn cyclic_anomaly(c: &CyclicKey, sources: &[&'static str]) -> Anomaly {
    Anomaly::new(
        AnomalyKind::CyclicVersions,
        Record::CyclicVersions {
            key: c.key,
            scc: c.scc.as_slice().into(),
            cycle: c.cycle.as_slice().into(),
            sources: sources.into(),
        },
    )
}
