//! List-append histories with unique values whose reads leave part of a
//! version order open: exact verdicts at serializable, strict serializable
//! and snapshot isolation.
//!
//! Elle's inference orders a key's versions by its longest read and puts
//! every append no read shows after all of them (the last observed writer
//! `ww`-precedes it, the readers of the last version `rw`-precede it). What
//! it cannot know is the order *among* those unread appends when two or
//! more transactions made them, and it adds no edge between them.
//!
//! - Serializable and strict serializable are acyclicity conditions (of
//!   the dependency graph, plus real-time edges for strict): when
//!   inference's graph is acyclic, orienting the unread appends along any
//!   topological order keeps it acyclic, and when it is cyclic no choice
//!   removes the cycle. So inference is exact there; the topological order
//!   is the serial witness, replayed by [`witness::check_serial`] before it
//!   is believed.
//! - Snapshot isolation is not an acyclicity condition: a cycle is allowed
//!   unless it has a single anti-dependency or none adjacent (Cerone &
//!   Gotsman, "Analysing Snapshot Isolation", J. ACM 2018: SI holds iff
//!   some version order makes every cycle of the dependency graph contain
//!   two adjacent anti-dependencies). Both orders of two unread appends can
//!   close a cycle with one anti-dependency each, which no fixed graph
//!   shows. When an acyclic graph gives a serial witness it is also an SI
//!   witness (each snapshot right after the previous commit), and no
//!   order of the unread appends can close a cycle; on a cyclic graph,
//!   when a key has unread appends by two or more transactions, the
//!   solver ([`solver::check_levels`]) searches the orders exactly.
//!
//! With `--witness`, every level that holds gets its replayed witness.

use super::{exact_levels, merge_exact, CheckOptions, Report, Validity};
use crate::graph::{sccs, topological_order, DepGraph, Rels};
use crate::history::{History, KeyId, MopKind, Observed, Outcome, TxnId, ValId};
use crate::model::{self, OrderGraph};
use crate::proof::Reason;
use crate::solver::{self, witness, DupVerdict, Level};
use rustc_hash::{FxHashMap, FxHashSet};

/// Decides what inference leaves open (see the module doc); `g` is
/// inference's graph, with the order edges `order` names.
pub(super) fn decide(
    h: &History,
    options: &CheckOptions,
    report: Report,
    g: &DepGraph,
    order: OrderGraph,
) -> Report {
    if options.inference_only || report.valid == Validity::False {
        return report;
    }
    let (levels, others) = exact_levels(options);
    let ruled_out = |l: Level| {
        report.not.iter().chain(&report.also_not).any(|m| {
            let f = model::friendly_name(m);
            f == l.name() || (f == "strong-serializable" && l == Level::StrictSerializable)
        })
    };
    let open: Vec<Level> = levels.iter().copied().filter(|&l| !ruled_out(l)).collect();
    let closed = levels.len() - open.len();
    let si = open.contains(&Level::SnapshotIsolation);
    if !options.witness && !si {
        return report;
    }
    let topo = topological_order(g).ok();
    let si_search = si && topo.is_none() && hidden_cycles_possible(h, g);
    if !options.witness && !si_search {
        return report;
    }
    let mut verdicts: Vec<DupVerdict> = Vec::new();
    // A graph with real-time edges gives an order that should replay as a
    // strict one; it is replayed once, strictly if so.
    let realtime = order == OrderGraph::Realtime && h.has_invocations;
    if let Some((order_, strict)) = topo.and_then(|t| serial_witness(h, t, realtime)) {
        for &l in &open {
            if l == Level::StrictSerializable && !strict {
                continue;
            }
            let mut v = solver::verdict(l, Validity::True, Reason::TopologicalOrder);
            // A serial execution is an SI one whose every snapshot is
            // taken right after the previous commit.
            if l == Level::SnapshotIsolation {
                v.snapshots = Some((0..order_.len() as u32).collect());
            }
            v.witness = Some(order_.clone());
            verdicts.push(v);
        }
    }
    let rest: Vec<Level> = open
        .iter()
        .copied()
        .filter(|l| !verdicts.iter().any(|v| v.level == *l))
        .filter(|&l| options.witness || (l == Level::SnapshotIsolation && si_search))
        .collect();
    let mut report = report;
    if !rest.is_empty() {
        let limits = options.solver_limits();
        let names: Vec<&str> = rest.iter().map(|l| l.name()).collect();
        report.notes.push(if si_search {
            format!(
                "decided exactly by the solver: {} (the reads hide the order of some appends; inference alone: --inference-only)",
                names.join(", ")
            )
        } else {
            format!("witness searched by the solver: {}", names.join(", "))
        });
        verdicts.extend(solver::check_levels(h, &rest, &limits));
    }
    let decided_all = others.is_empty()
        && closed
            + open
                .iter()
                .filter(|l| verdicts.iter().any(|v| v.level == **l))
                .count()
            == levels.len();
    merge_exact(h, report, options, &verdicts, decided_all)
}

/// `topo` (a topological order of inference's graph) without `fail`
/// transactions, when it replays as a serial execution, and whether it
/// replays as a strict one (tried first when `realtime`: strict implies
/// serial, so the common case replays once).
fn serial_witness(h: &History, topo: Vec<TxnId>, realtime: bool) -> Option<(Vec<TxnId>, bool)> {
    let order: Vec<TxnId> = topo
        .into_iter()
        .filter(|&t| h.txns[t as usize].outcome != Outcome::Fail)
        .collect();
    if realtime && witness::check_serial(h, &order, true).is_ok() {
        return Some((order, true));
    }
    witness::check_serial(h, &order, false).ok()?;
    Some((order, false))
}

/// Whether the orders of the unread appends still need the solver for
/// snapshot isolation, given that inference found no cycle SI prohibits in
/// its graph `g`.
///
/// Cycles lie inside strongly connected components (of the data edges).
/// Two unread appends to a key in different components can be ordered
/// along a topological order of the components: every such edge goes
/// forward, no component grows, and the cycles stay `g`'s. Inside a
/// component every order of its unread appends is tried (a few at most)
/// against Cerone & Gotsman's test for a fixed graph: every cycle has two
/// adjacent anti-dependencies iff `D ∪ D;RW` is acyclic, `D = WW ∪ WR`.
/// Components are independent, so one good order each proves SI. Only a
/// component that no order passes, or one with too many orders, is left
/// to the solver (which also explains the failure).
fn hidden_cycles_possible(h: &History, g: &DepGraph) -> bool {
    let Some(groups) = unread_appenders(h) else {
        return true;
    };
    if groups.is_empty() {
        return false;
    }
    let data = Rels::WW.union(Rels::WR).union(Rels::RW);
    let comps = sccs(g, data);
    let mut component = vec![u32::MAX; h.txns.len()];
    for (i, c) in comps.iter().enumerate() {
        for &t in c {
            component[t as usize] = i as u32;
        }
    }
    // Per component, the groups of unread appenders (of one key) in it.
    let mut choices: FxHashMap<u32, Vec<Vec<TxnId>>> = FxHashMap::default();
    for ts in &groups {
        let mut by: FxHashMap<u32, Vec<TxnId>> = FxHashMap::default();
        for &t in ts {
            let c = component[t as usize];
            if c != u32::MAX {
                by.entry(c).or_default().push(t);
            }
        }
        for (c, members) in by {
            if members.len() >= 2 {
                choices.entry(c).or_default().push(members);
            }
        }
    }
    choices
        .iter()
        .any(|(&c, groups)| !some_order_is_si(g, &comps[c as usize], groups))
}

/// Most orders of one component's unread appends to try.
const MAX_ORDERS: usize = 720;

/// Whether some order of each group's appends (a chain of `ww` edges)
/// leaves `D ∪ D;RW` acyclic on the component `nodes` (sorted).
fn some_order_is_si(g: &DepGraph, nodes: &[TxnId], groups: &[Vec<TxnId>]) -> bool {
    let mut count = 1usize;
    for gr in groups {
        for i in 2..=gr.len() {
            count = count.saturating_mul(i);
        }
    }
    if count > MAX_ORDERS {
        return false;
    }
    let local = |t: TxnId| nodes.binary_search(&t).ok();
    let d = Rels::WW.union(Rels::WR);
    // The fixed part: D and D;RW inside the component.
    let mut fixed: Vec<(usize, usize)> = Vec::new();
    for (a, &t) in nodes.iter().enumerate() {
        for (u, r) in g.out(t) {
            let Some(b) = local(u) else { continue };
            if !r.intersects(d) {
                continue;
            }
            fixed.push((a, b));
            fixed.extend(
                g.out(u)
                    .filter(|(_, r2)| r2.intersects(Rels::RW))
                    .filter_map(|(w, _)| local(w))
                    .map(|c| (a, c)),
            );
        }
    }
    let mut orders: Vec<Vec<TxnId>> = groups.to_vec();
    for gr in &mut orders {
        gr.sort_unstable();
    }
    loop {
        let mut edges = fixed.clone();
        for gr in &orders {
            for w in gr.windows(2) {
                let (a, b) = (local(w[0]).expect("in"), local(w[1]).expect("in"));
                edges.push((a, b));
                edges.extend(
                    g.out(w[1])
                        .filter(|(_, r)| r.intersects(Rels::RW))
                        .filter_map(|(x, _)| local(x))
                        .map(|c| (a, c)),
                );
            }
        }
        if acyclic(nodes.len(), &edges) {
            return true;
        }
        // The next combination: advance the first group that has a next
        // permutation, resetting those before it.
        let mut advanced = false;
        for gr in &mut orders {
            if next_permutation(gr) {
                advanced = true;
                break;
            }
            gr.sort_unstable();
        }
        if !advanced {
            return false;
        }
    }
}

/// Kahn's algorithm on `n` nodes.
fn acyclic(n: usize, edges: &[(usize, usize)]) -> bool {
    let mut indeg = vec![0u32; n];
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        if a == b {
            return false;
        }
        out[a].push(b);
        indeg[b] += 1;
    }
    let mut ready: Vec<usize> = (0..n).filter(|&v| indeg[v] == 0).collect();
    let mut done = 0;
    while let Some(v) = ready.pop() {
        done += 1;
        for &b in &out[v] {
            indeg[b] -= 1;
            if indeg[b] == 0 {
                ready.push(b);
            }
        }
    }
    done == n
}

/// Rearranges `xs` into the next permutation in lexicographic order;
/// false (and `xs` unchanged) at the last one.
fn next_permutation(xs: &mut [TxnId]) -> bool {
    let Some(i) = (1..xs.len()).rev().find(|&i| xs[i - 1] < xs[i]) else {
        return false;
    };
    let j = (i..xs.len())
        .rev()
        .find(|&j| xs[j] > xs[i - 1])
        .expect("exists");
    xs.swap(i - 1, j);
    xs[i..].reverse();
    true
}

/// For each key to which two or more transactions that may have committed
/// (`ok` or `info`) appended values no read shows, those transactions:
/// their relative order is hidden. `None` when some key's reads are not
/// all prefixes of its longest read (inference reports that; any order
/// question there is the solver's).
fn unread_appenders(h: &History) -> Option<Vec<Vec<TxnId>>> {
    let mut longest: FxHashMap<KeyId, &[ValId]> = FxHashMap::default();
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.outcome != Outcome::Ok {
            continue;
        }
        for m in h.mops(t as TxnId) {
            if m.kind != MopKind::Read {
                continue;
            }
            let Some(l) = h.list(m.value) else { continue };
            let e = longest.entry(m.key).or_insert(l);
            if l.len() > e.len() {
                if !l.starts_with(e) {
                    return None;
                }
                *e = l;
            } else if !e.starts_with(l) {
                return None;
            }
        }
    }
    let seen: FxHashSet<(KeyId, ValId)> = longest
        .iter()
        .flat_map(|(&k, l)| l.iter().map(move |&v| (k, v)))
        .collect();
    let mut unread: FxHashMap<KeyId, Vec<TxnId>> = FxHashMap::default();
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.outcome == Outcome::Fail {
            continue;
        }
        for m in h.mops(t as TxnId) {
            let (MopKind::Append, Observed::Scalar(v)) = (m.kind, m.value) else {
                continue;
            };
            if seen.contains(&(m.key, v)) {
                continue;
            }
            let ts = unread.entry(m.key).or_default();
            if ts.last() != Some(&(t as TxnId)) {
                ts.push(t as TxnId);
            }
        }
    }
    Some(unread.into_values().filter(|ts| ts.len() >= 2).collect())
}
