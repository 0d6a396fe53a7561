//! Exactness of duplicate-value checking against brute force.
//!
//! The oracle knows nothing of blocks, barriers or SAT: it tries every
//! serial order of the committed transactions (each `info` one committed or
//! not), replaying reads position by position, so repeated values are
//! handled by where they sit in the list, not by who wrote them. For
//! snapshot isolation it also tries every snapshot point of every
//! transaction and enforces first-committer-wins. On thousands of random
//! small histories — from a serializable, a snapshot-isolated and a
//! lost-update database, half of them with a corrupted read — the checker's
//! verdict must equal the oracle's at every level, never `unknown`.

// The duplicate-value history generator shared by tests and benchmarks.
#[allow(dead_code)]
use crate::support::duplicates_gen;

use duplicates_gen::{generate, Db, Params};
use isolde::explain::proof::{reason, render};
use isolde::history::read::read_history;
use isolde::history::{History, KeyId, MopKind, Observed, Outcome, TxnId, ValId};
use isolde::model::Validity;
use isolde::rng::Rng;
use isolde::solver::{check_duplicates, Level, Limits};
use std::collections::HashMap;

fn committable(h: &History) -> Vec<TxnId> {
    (0..h.txns.len() as TxnId)
        .filter(|&t| h.txns[t as usize].outcome != Outcome::Fail)
        .collect()
}

fn all_ok_placed(h: &History, used: &[bool]) -> bool {
    h.txns
        .iter()
        .enumerate()
        .all(|(i, t)| t.outcome != Outcome::Ok || used[i])
}

fn read_list(h: &History, o: Observed) -> Vec<ValId> {
    h.list(o).map(|l| l.to_vec()).unwrap_or_default()
}

/// Runs `t` against `state` (a view); true if its reads match. Appends go
/// to `own` so the caller decides when they become visible.
fn replay(
    h: &History,
    t: TxnId,
    view: &HashMap<KeyId, Vec<ValId>>,
    own: &mut HashMap<KeyId, Vec<ValId>>,
) -> bool {
    let check = h.txns[t as usize].outcome == Outcome::Ok;
    for m in h.mops(t) {
        match (m.kind, m.value) {
            (MopKind::Append, Observed::Scalar(v)) => own.entry(m.key).or_default().push(v),
            (MopKind::Read, o) if check => {
                let mut l = view.get(&m.key).cloned().unwrap_or_default();
                l.extend(own.get(&m.key).cloned().unwrap_or_default());
                if read_list(h, o) != l {
                    return false;
                }
            }
            _ => {}
        }
    }
    true
}

/// Serializable (strict: respecting real time) by exhaustive search.
fn oracle_serial(h: &History, strict: bool) -> bool {
    fn dfs(
        h: &History,
        strict: bool,
        cands: &[TxnId],
        used: &mut Vec<bool>,
        state: &mut HashMap<KeyId, Vec<ValId>>,
    ) -> bool {
        if all_ok_placed(h, used) {
            return true;
        }
        for &t in cands {
            if used[t as usize] {
                continue;
            }
            if strict {
                // Nobody still to come completed before t began.
                let inv = h.txns[t as usize].invoke_seq.unwrap_or(0);
                let late = cands.iter().any(|&u| {
                    u != t
                        && !used[u as usize]
                        && h.txns[u as usize].outcome == Outcome::Ok
                        && h.txns[u as usize].complete_seq.is_some_and(|c| c < inv)
                });
                if late {
                    continue;
                }
            }
            let mut own = HashMap::new();
            if !replay(h, t, state, &mut own) {
                continue;
            }
            let saved = state.clone();
            for (k, b) in own {
                state.entry(k).or_default().extend(b);
            }
            used[t as usize] = true;
            if dfs(h, strict, cands, used, state) {
                return true;
            }
            used[t as usize] = false;
            *state = saved;
        }
        false
    }
    let cands = committable(h);
    dfs(
        h,
        strict,
        &cands,
        &mut vec![false; h.txns.len()],
        &mut HashMap::new(),
    )
}

/// Snapshot isolation by exhaustive search over commit orders and, for each
/// transaction, the number of commits its snapshot includes.
fn oracle_si(h: &History) -> bool {
    struct S<'h> {
        h: &'h History,
        cands: Vec<TxnId>,
        used: Vec<bool>,
        /// Committed so far: (txn, its appends).
        done: Vec<(TxnId, HashMap<KeyId, Vec<ValId>>)>,
    }
    fn dfs(s: &mut S) -> bool {
        if all_ok_placed(s.h, &s.used) {
            return true;
        }
        let j = s.done.len();
        for ci in 0..s.cands.len() {
            let t = s.cands[ci];
            if s.used[t as usize] {
                continue;
            }
            for sp in 0..=j {
                let mut view: HashMap<KeyId, Vec<ValId>> = HashMap::new();
                for (_, w) in &s.done[..sp] {
                    for (k, b) in w {
                        view.entry(*k).or_default().extend(b.iter().copied());
                    }
                }
                let mut own = HashMap::new();
                if !replay(s.h, t, &view, &mut own) {
                    continue;
                }
                // First committer wins: nobody committed an append to one of
                // t's keys after t's snapshot.
                if s.done[sp..]
                    .iter()
                    .any(|(_, w)| w.keys().any(|k| own.contains_key(k)))
                {
                    continue;
                }
                s.used[t as usize] = true;
                s.done.push((t, own));
                if dfs(s) {
                    return true;
                }
                s.done.pop();
                s.used[t as usize] = false;
            }
        }
        false
    }
    let mut s = S {
        h,
        cands: committable(h),
        used: vec![false; h.txns.len()],
        done: Vec::new(),
    };
    dfs(&mut s)
}

/// Changes one `ok` read: drops, repeats, swaps or rewrites an element,
/// truncates, or extends the list.
fn corrupt(h: &mut History, rng: &mut Rng) {
    let reads: Vec<usize> = (0..h.mops.len())
        .filter(|&i| {
            h.mops[i].kind == MopKind::Read && matches!(h.mops[i].value, Observed::List { .. })
        })
        .filter(|&i| {
            h.txns.iter().any(|t| {
                t.outcome == Outcome::Ok
                    && (t.mops_start as usize..(t.mops_start + t.mops_len) as usize).contains(&i)
            })
        })
        .collect();
    if reads.is_empty() {
        return;
    }
    let values: Vec<ValId> = h
        .mops
        .iter()
        .filter_map(|m| match (m.kind, m.value) {
            (MopKind::Append, Observed::Scalar(v)) => Some(v),
            _ => None,
        })
        .collect();
    let i = reads[rng.below(reads.len() as u64) as usize];
    let mut l = read_list(h, h.mops[i].value);
    match rng.below(6) {
        0 if !l.is_empty() => {
            l.remove(rng.below(l.len() as u64) as usize);
        }
        1 if !l.is_empty() => {
            let p = rng.below(l.len() as u64) as usize;
            l.insert(p, l[p]);
        }
        2 if l.len() > 1 => {
            let p = rng.below(l.len() as u64 - 1) as usize;
            l.swap(p, p + 1);
        }
        3 if !l.is_empty() && !values.is_empty() => {
            let p = rng.below(l.len() as u64) as usize;
            l[p] = values[rng.below(values.len() as u64) as usize];
        }
        4 if !l.is_empty() => l.truncate(rng.below(l.len() as u64) as usize),
        _ if !values.is_empty() => l.push(values[rng.below(values.len() as u64) as usize]),
        _ => {}
    }
    let start = h.elems.len() as u32;
    h.elems.extend_from_slice(&l);
    h.mops[i].value = Observed::List {
        start,
        len: l.len() as u32,
    };
}

fn small(rng: &mut Rng, seed: u64) -> Params {
    let db = match rng.below(3) {
        0 => Db::Serializable,
        1 => Db::SnapshotIsolation,
        _ => Db::LostUpdate,
    };
    Params {
        sessions: 1 + rng.below(4) as u32,
        txns: 2 + rng.below(6) as u32,
        ops_per_txn: 1 + rng.below(4) as u32,
        keys: 1 + rng.below(3) as u32,
        read_fraction: 0.3 + 0.1 * rng.below(4) as f64,
        dup_key_fraction: if rng.chance(0.8) { 1.0 } else { 0.5 },
        values: 1 + rng.below(3) as u32,
        value_theta: 1.0,
        key_theta: 0.5,
        info_rate: 0.15,
        abort_rate: 0.1,
        db,
        seed,
    }
}

fn run(level: Level, cases: u64, seed0: u64) {
    run_with(
        level,
        cases,
        seed0,
        &Limits {
            time_ms: 10_000,
            ..Limits::default()
        },
    );
}

/// The exact solver alone (no replay, no real-time windows), its theory
/// deferring every backward edge to the final check: it must find the
/// witnesses itself, and its cycle check at the end must be complete.
fn run_exact(level: Level, cases: u64, seed0: u64) {
    run_with(
        level,
        cases,
        seed0,
        &Limits {
            time_ms: 10_000,
            witness_first: false,
            reorder_limit: 0,
            prune_threshold: usize::MAX,
            ..Limits::default()
        },
    );
}

fn run_with(level: Level, cases: u64, seed0: u64, limits: &Limits) {
    run_gen(level, cases, seed0, limits, false)
}

/// [`run_with`]; `strip` drops the invocations (completions only: no
/// real-time order at all, so strict serializability is serializability).
fn run_gen(level: Level, cases: u64, seed0: u64, limits: &Limits, strip: bool) {
    let mut rng = Rng::new(seed0);
    let (mut valid, mut invalid) = (0, 0);
    for case in 0..cases {
        let p = small(&mut rng, seed0 * 1_000_003 + case);
        let mut edn = generate(&p);
        if strip {
            edn = edn
                .lines()
                .filter(|l| !l.contains(":type :invoke"))
                .map(|l| format!("{l}\n"))
                .collect();
        }
        let mut h = read_history(edn.as_bytes(), "gen", None).expect("generated history parses");
        if rng.chance(0.5) {
            corrupt(&mut h, &mut rng);
        }
        let expect = match level {
            Level::Serializable => oracle_serial(&h, false),
            Level::StrictSerializable => oracle_serial(&h, true),
            Level::SnapshotIsolation => oracle_si(&h),
            Level::ReadCommitted | Level::ConsistentView => {
                unreachable!("read committed, consistent view: tests/it/duplicates_lattice.rs")
            }
            Level::ReadUncommitted | Level::NoG1c => {
                unreachable!("no G0, no G1c: tests/it/duplicates_uncommitted.rs")
            }
        };
        let v = check_duplicates(&h, level, limits);
        let got = match v.valid {
            Validity::True => true,
            Validity::False => false,
            Validity::Unknown => panic!(
                "case {case}: unknown ({}) on\n{edn}",
                reason(&h, &v.reason, v.proof())
            ),
        };
        if got != expect {
            panic!(
                "case {case} ({:?}, {:?}): checker says {got}, oracle says {expect}: {}\n{:?}\n{edn}",
                level,
                p.db,
                reason(&h, &v.reason, v.proof()),
                v.anomaly.map(|a| render(&h, &a.proof))
            );
        }
        if got {
            assert!(v.witness.is_some());
            valid += 1;
        } else {
            let a = v.anomaly.expect("invalid verdicts name an anomaly");
            assert!(!render(&h, &a.proof).is_empty());
            invalid += 1;
        }
    }
    // Both answers must be common, or the comparison proves little.
    eprintln!("{level:?}: {valid} valid, {invalid} invalid");
    assert!(
        valid > cases / 10 && invalid > cases / 10,
        "{valid} valid, {invalid} invalid"
    );
}

#[test]
fn serializable_verdicts_match_brute_force() {
    run(Level::Serializable, 8000, 1);
}

#[test]
fn strict_serializable_verdicts_match_brute_force() {
    run(Level::StrictSerializable, 8000, 2);
}

#[test]
fn snapshot_isolation_verdicts_match_brute_force() {
    run(Level::SnapshotIsolation, 5000, 3);
}

#[test]
fn the_exact_solver_alone_matches_brute_force() {
    run_exact(Level::Serializable, 3000, 4);
    run_exact(Level::StrictSerializable, 3000, 5);
    run_exact(Level::SnapshotIsolation, 2000, 6);
}

#[test]
fn verdicts_without_invocations_match_brute_force() {
    let limits = Limits {
        time_ms: 10_000,
        ..Limits::default()
    };
    run_gen(Level::Serializable, 3000, 7, &limits, true);
    run_gen(Level::StrictSerializable, 1500, 8, &limits, true);
    run_gen(Level::SnapshotIsolation, 2000, 9, &limits, true);
}
