//! Exact checking of read-write register histories at serializable, strict
//! serializable and snapshot isolation, with unique or repeated values.
//!
//! A register read names one value, so the version order of a key is
//! unknown wherever no read pins it; with repeated values, which write a
//! read saw is unknown too; and an `info` transaction may or may not have
//! committed (`fail` ones never did). A history is valid at a level iff
//! some choice of all three admits an execution, which is decided here:
//!
//! - **Serializable**: some choice makes SO-free `WR ∪ WW ∪ RW` acyclic
//!   (Adya, PL-3), i.e. the polygraph of Papadimitriou (JACM 1979) is
//!   acyclic: for every read R of key k by T that saw writer W and every
//!   other committed writer W' of k, W' precedes W or T precedes W'.
//!   Only constraints a replay breaks are ever built (see [`search`]).
//! - **Strict serializable**: the same, with real-time order (a
//!   transaction completed before another was invoked precedes it) added
//!   as fixed edges.
//! - **Snapshot isolation**: Cerone & Gotsman (PODC 2016, "Analysing
//!   snapshot isolation"): some version order makes
//!   `(WR ∪ WW) ; RW?` acyclic — a dependency followed by at most one
//!   anti-dependency. Here in its equivalent start/commit form (Adya's
//!   start-ordered serialization graph, as the list-append solver uses it):
//!   each transaction T is two events `S(T) → C(T)`; T read W's version
//!   gives `C(W) → S(T)`; another writer W' of the key commits before W
//!   (`C(W') → C(W)`) or after T's snapshot (`S(T) → C(W')`); two writers
//!   of a key never overlap (`C(A) → S(B)` or `C(B) → S(A)`, first
//!   committer wins). An acyclic choice gives an execution by topological
//!   order: commits in order, each snapshot the commits before its start.
//!
//! Cheapest first: contradictions need no order ([`facts`]: a read inside
//! a transaction that disagrees with its own writes, a read of a value no
//! committed transaction wrote last); an execution guessed from the
//! history's timing ([`serial_guess`], linear up to sorts: a serial order,
//! or for snapshot isolation commits in completion order with the latest
//! snapshots that fit); then the search, whose first round
//! is a replay of the order the fixed edges and the history's timing give,
//! so most valid histories end there with a witness. Every witness is
//! replayed by [`witness`] against the history before "valid" is said; a
//! search that reaches the time limit says `unknown`.

pub mod committed;
pub mod facts;
pub mod search;
pub mod serial_guess;
pub mod witness;

use super::{verdict, DupAnomaly, DupKind, DupVerdict, Level, Limits};
use crate::anomaly::AnomalyKind;
use crate::graph::{BaseClass, CycleClass, Rels, Variant};
use crate::history::{History, KeyId, TxnId};
use crate::model::Validity;
use crate::proof::{Proof, Reason, RegisterStep, RegisterWhy};
use search::{Found, Search};
use std::time::Instant;

/// Decides `level` for a register history.
pub fn check(h: &History, level: Level, limits: &Limits) -> DupVerdict {
    let t0 = Instant::now();
    let mut v = decide(h, level, limits, t0);
    v.elapsed_ms = t0.elapsed().as_secs_f64() * 1e3;
    v
}

/// Decides each of `levels`, sharing what implies what
/// ([`super::share_levels`]).
pub fn check_levels(h: &History, levels: &[Level], limits: &Limits) -> Vec<DupVerdict> {
    if levels == [Level::SnapshotIsolation] {
        return vec![snapshot_isolation(h, limits)];
    }
    super::share_levels(levels, |l| check(h, l, limits))
}

/// Snapshot isolation asked alone. A serializable witness is a
/// snapshot-isolation one, and on histories from serializable databases
/// the serial search is much the quicker, while on others only snapshot
/// isolation's own search ends: with two threads both run at once, each
/// with the whole budget, and the first to decide stops the other (a
/// serial search that fails leaves snapshot isolation's running). On one
/// thread the serial search gets a quarter of the budget first (a tenth
/// left 100k-transaction histories whose serial search needs 7 s of 60 s
/// undecided). The verdict is the same either way, up to the time limit;
/// which witness is printed may differ.
fn snapshot_isolation(h: &History, limits: &Limits) -> DupVerdict {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let t0 = Instant::now();
    if limits.threads < 2 {
        let quick = Limits {
            time_ms: limits.time_ms / 4,
            ..limits.clone()
        };
        let s = check(h, Level::Serializable, &quick);
        if s.valid == Validity::True {
            return super::si_from_serial(&s);
        }
        let rest = limits.left_since(t0, 1);
        return check(h, Level::SnapshotIsolation, &rest);
    }
    let (stop_ser, stop_si) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let with = |flag: &Arc<AtomicBool>| Limits {
        cancel: Some(flag.clone()),
        ..limits.clone()
    };
    let (ser_limits, si_limits) = (with(&stop_ser), with(&stop_si));
    std::thread::scope(|s| {
        let ser = s.spawn(|| {
            let v = check(h, Level::Serializable, &ser_limits);
            if v.valid == Validity::True {
                stop_si.store(true, Ordering::Relaxed);
            }
            v
        });
        let si = check(h, Level::SnapshotIsolation, &si_limits);
        if si.valid != Validity::Unknown {
            stop_ser.store(true, Ordering::Relaxed);
        }
        match ser.join() {
            Ok(v) if v.valid == Validity::True => super::si_from_serial(&v),
            _ => si,
        }
    })
}

fn decide(h: &History, level: Level, limits: &Limits, t0: Instant) -> DupVerdict {
    let facts = match facts::extract(h) {
        Ok(f) => f,
        Err(c) => {
            let mut v = verdict(level, Validity::False, Reason::Proof);
            v.anomaly = Some((*c).into());
            return v;
        }
    };
    let strict = level == Level::StrictSerializable;
    let guessed = match level {
        Level::Serializable | Level::StrictSerializable => {
            serial_guess::guess(h, &facts, strict).map(|o| (o, None))
        }
        Level::SnapshotIsolation => serial_guess::guess_si(h, &facts).map(|(o, s)| (o, Some(s))),
        _ => None,
    };
    if let Some((order, snapshots)) = guessed {
        let v = replayed(h, level, order, snapshots, None);
        if v.valid == Validity::True {
            return v;
        }
    }
    let mut s = Search::new(h, level, &facts, limits, t0);
    let found = s.run();
    let rounds = s.rounds;
    match found {
        Found::Valid { order, snapshots } => replayed(h, level, order, snapshots, Some(rounds)),
        Found::Invalid { cycle, forced } => {
            let mut v = verdict(level, Validity::False, Reason::Proof);
            v.anomaly = Some(finding(level, cycle, forced));
            v
        }
        Found::Unknown(m) => verdict(level, Validity::Unknown, m),
    }
}

/// Valid with `order` (and, for snapshot isolation, `snapshots`) as the
/// witness if it replays against the history; else unknown, with why.
fn replayed(
    h: &History,
    level: Level,
    order: Vec<TxnId>,
    snapshots: Option<Vec<u32>>,
    rounds: Option<u32>,
) -> DupVerdict {
    let replay = match &snapshots {
        Some(sp) => witness::check_si(h, &order, sp),
        None => witness::check_serial(h, &order, level == Level::StrictSerializable),
    };
    let reason = Reason::SerialOrder {
        txns: order.len(),
        rounds,
    };
    super::witnessed_as(level, reason, order, snapshots, replay)
}

/// Elle's name for a cycle of these steps, from the one classifier
/// ([`crate::graph::classify`]: adjacency of anti-dependencies included);
/// an SI cycle's start-to-commit steps carry no relation.
fn classify(cycle: &[RegisterStep]) -> CycleClass {
    let steps: Vec<Rels> = cycle
        .iter()
        .filter_map(|e| match e.why {
            RegisterWhy::Wr { .. } => Some(Rels::WR),
            RegisterWhy::Ww { .. } => Some(Rels::WW),
            RegisterWhy::Rw { .. } => Some(Rels::RW),
            RegisterWhy::Realtime => Some(Rels::REALTIME),
            RegisterWhy::Span => None,
        })
        .collect();
    crate::graph::classify(&steps).unwrap_or_else(|| CycleClass::new(BaseClass::G0, Variant::Plain))
}

/// The finding for a cycle the search ended with: `forced` (no choice
/// avoids it) or one that every choice's cycles exemplify.
fn finding(level: Level, cycle: Vec<RegisterStep>, forced: bool) -> DupAnomaly {
    let mut txns: Vec<TxnId> = cycle.iter().map(|e| e.from).collect();
    let mut keys: Vec<KeyId> = cycle
        .iter()
        .filter_map(|e| match e.why {
            RegisterWhy::Wr { key } | RegisterWhy::Ww { key } | RegisterWhy::Rw { key } => {
                Some(key)
            }
            _ => None,
        })
        .collect();
    keys.sort_unstable();
    keys.dedup();
    txns.dedup();
    let (kind, proof) = if forced {
        (
            DupKind::Cycle(classify(&cycle)),
            Proof::RegisterCycle { steps: cycle },
        )
    } else {
        let kind = match level {
            Level::SnapshotIsolation => AnomalyKind::RegisterNotSnapshotIsolated.into(),
            _ => AnomalyKind::RegisterUnserializable.into(),
        };
        (
            kind,
            Proof::RegisterChoices {
                level,
                steps: cycle,
            },
        )
    };
    DupAnomaly {
        kind,
        txns,
        keys,
        proof,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cycle names the register solver gives come from the one
    /// classifier: anti-dependencies counted, their adjacency (around the
    /// cycle) checked, real-time steps named, SI's start-to-commit steps
    /// skipped.
    #[test]
    fn forced_cycles_are_named_like_inference_names_them() {
        let (ww, wr, rw) = (
            RegisterWhy::Ww { key: 2 },
            RegisterWhy::Wr { key: 0 },
            RegisterWhy::Rw { key: 1 },
        );
        let name = |whys: &[RegisterWhy]| {
            let cycle: Vec<RegisterStep> = whys
                .iter()
                .enumerate()
                .map(|(i, &why)| RegisterStep {
                    from: i as TxnId,
                    to: ((i + 1) % whys.len()) as TxnId,
                    why,
                })
                .collect();
            classify(&cycle).name()
        };
        assert_eq!(name(&[ww, ww]), "G0");
        assert_eq!(name(&[wr, wr]), "G1c");
        assert_eq!(name(&[ww, wr]), "G1c");
        assert_eq!(name(&[wr, RegisterWhy::Realtime]), "G1c-realtime");
        assert_eq!(name(&[wr, rw]), "G-single-item");
        assert_eq!(name(&[rw, RegisterWhy::Span, wr]), "G-single-item");
        assert_eq!(name(&[rw, RegisterWhy::Realtime]), "G-single-item-realtime");
        // Two anti-dependencies in a two-step cycle are adjacent.
        assert_eq!(name(&[rw, rw]), "G2-item");
        assert_eq!(name(&[rw, rw, RegisterWhy::Realtime]), "G2-item-realtime");
        assert_eq!(name(&[rw, wr, rw, wr]), "G-nonadjacent-item");
    }
}
