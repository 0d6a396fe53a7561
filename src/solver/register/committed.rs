//! Read committed, and no G1c, on register histories whose values repeat:
//! polynomial and exact.
//!
//! Read committed (Adya's PL-2) prohibits G0, G1a, G1b and G1c. A choice
//! (which write each read saw, which `info` transactions committed, the
//! version order of each key) has none of them iff every read saw a
//! committed transaction's last write of the key (no G1a, no G1b) and
//! `ww ∪ wr` is acyclic. If `wr` alone is acyclic, versions ordered by one
//! of its topological orders make `ww` follow that order too; so the
//! question is whether there is an order of the committed transactions in
//! which every read's writer comes before the reader. Every read counts, as
//! in Adya's definitions, except one that returns a write the reader made
//! before it (its own version; an internal anomaly, which these levels
//! allow, if it overwrote it since): a transaction that reads a key twice
//! and gets two values (internal too) read two versions, each from some
//! writer. (Elle's inference draws edges from a
//! transaction's first read of a key only; with unique values the two
//! agree wherever no internal anomaly is reported.)
//!
//! Growing that order greedily is exact: placing a transaction only adds
//! candidates for other reads, so if some order exists, repeatedly placing
//! every transaction whose reads all have a placed candidate places
//! everything. What stays unplaced is a set in which every transaction has
//! a read whose candidates are all unplaced too: whatever each read is
//! taken to have seen, following readers to writers inside the set closes a
//! `wr` cycle. `info` transactions show no reads, so each is placed at once
//! (taking one as committed only adds candidates). Linear in the number of
//! candidates.
//!
//! With failed and overwritten writes also allowed as what a read saw (G1a
//! and G1b, which `-a G1c` does not prohibit: a failed write adds no edge,
//! an overwritten one an edge from its writer), and reads of values nobody
//! wrote left unexplained (garbage reads imply G1a only), the same greedy
//! decides no G1c. A read whose value only the reader itself writes, later,
//! is a future read, which the lattice counts as G1c.

use super::super::{verdict, witnessed, DupAnomaly, DupKind, DupVerdict, Level};
use super::facts::{
    bad_read, failed_source, read_ver, source_anomalies, write_ver, Contradiction, Ver, NIL,
};
use crate::anomaly::AnomalyKind;
use crate::graph::{BaseClass, CycleClass, Variant};
use crate::history::{History, KeyId, MopKind, Outcome, TxnId};
use crate::model::Validity;
use crate::proof::{BadSource, Proof, Reason, RegisterStep, RegisterWhy};
use rustc_hash::FxHashMap;
use std::collections::BTreeSet;

/// A read that does not return a write the reader made before it (each
/// distinct one once); `ver: None` is a value no write has (a list
/// nobody wrote).
struct Read {
    txn: TxnId,
    key: KeyId,
    ver: Option<Ver>,
    /// The reader writes the key after this read (so a failed write it saw
    /// makes a dirty update too).
    then_writes: bool,
}

type ByVer = FxHashMap<(KeyId, Ver), Vec<TxnId>>;

/// The reads that constrain a choice, and who wrote each (key, version):
/// committed (`ok` or `info`) transactions' last writes, their overwritten
/// writes, and writes of `fail` transactions.
#[derive(Default)]
struct Sources {
    reads: Vec<Read>,
    last: ByVer,
    overwritten: ByVer,
    failed: ByVer,
}

fn sources(h: &History) -> Sources {
    let mut s = Sources::default();
    // This transaction's latest write per key, every (key, version) it
    // wrote so far, and the reads recorded.
    let mut own: FxHashMap<KeyId, Ver> = FxHashMap::default();
    let mut wrote: rustc_hash::FxHashSet<(KeyId, Ver)> = Default::default();
    let mut recorded: Vec<(KeyId, Option<Ver>)> = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        let t = t as TxnId;
        own.clear();
        wrote.clear();
        recorded.clear();
        let first_read = s.reads.len();
        let failed = txn.outcome == Outcome::Fail;
        for m in h.mops(t) {
            match m.kind {
                MopKind::Write => {
                    let v = write_ver(m.value);
                    if failed {
                        s.failed.entry((m.key, v)).or_default().push(t);
                    } else if let Some(&old) = own.get(&m.key) {
                        s.overwritten.entry((m.key, old)).or_default().push(t);
                    }
                    own.insert(m.key, v);
                    wrote.insert((m.key, v));
                    for r in s.reads[first_read..].iter_mut().filter(|r| r.key == m.key) {
                        r.then_writes = true;
                    }
                }
                MopKind::Read if txn.outcome == Outcome::Ok => {
                    let ver = read_ver(h, m.value);
                    // A read of its own earlier write has that source (an
                    // internal anomaly when overwritten since; no edge).
                    if ver.is_some_and(|v| wrote.contains(&(m.key, v)))
                        || recorded.contains(&(m.key, ver))
                    {
                        continue;
                    }
                    recorded.push((m.key, ver));
                    s.reads.push(Read {
                        txn: t,
                        key: m.key,
                        ver,
                        then_writes: false,
                    });
                }
                _ => {}
            }
        }
        if !failed {
            for (&k, &v) in &own {
                s.last.entry((k, v)).or_default().push(t);
            }
        }
    }
    s
}

/// A read of a value no write has (a list nobody wrote): a garbage read.
fn unwritten(r: &Read) -> Box<Contradiction> {
    Box::new(Contradiction {
        kind: AnomalyKind::GarbageRead.into(),
        txns: vec![r.txn],
        keys: vec![r.key],
        proof: Proof::UnwrittenValue {
            txn: r.txn,
            key: r.key,
        },
    })
}

/// What a read may have seen at `level`: `None` when it needs no writer
/// placed first (the initial state; below read committed, a failed write;
/// for no G1c, a garbage value; for read uncommitted, any write at all),
/// else the transactions one of which must be placed first.
fn cands(
    h: &History,
    s: &Sources,
    r: &Read,
    level: Level,
) -> Result<Option<Vec<TxnId>>, Box<Contradiction>> {
    let relaxed = level != Level::ReadCommitted;
    let Some(ver) = r.ver else {
        if level == Level::NoG1c {
            return Ok(None);
        }
        return Err(unwritten(r));
    };
    if ver == NIL {
        return Ok(None);
    }
    let kv = (r.key, ver);
    // Read uncommitted prohibits no read of a write (G1a, G1b, a future
    // read), only reads of values nobody wrote; version orders are free, so
    // no G0 is ever forced.
    let written = s.last.contains_key(&kv) || s.overwritten.contains_key(&kv);
    if level == Level::ReadUncommitted && (written || s.failed.contains_key(&kv)) {
        return Ok(None);
    }
    let others = |m: &ByVer| -> Vec<TxnId> {
        m.get(&kv)
            .map(|ws| ws.iter().copied().filter(|&x| x != r.txn).collect())
            .unwrap_or_default()
    };
    let mut c = others(&s.last);
    if relaxed {
        if s.failed.contains_key(&kv) {
            return Ok(None);
        }
        c.extend(others(&s.overwritten));
    }
    if !c.is_empty() {
        return Ok(Some(c));
    }
    let sources = bad_sources(h, s, r, kv);
    // A garbage read implies G1a only.
    if level == Level::NoG1c && sources.is_empty() {
        return Ok(None);
    }
    Err(bad_read(r.txn, r.key, Some(ver), sources, r.then_writes))
}

/// The writes of `kv` other than other transactions' committed last ones:
/// what `r` may have read when no such write explains it, each an anomaly
/// (a failed write, another's overwritten write, the reader's own write).
fn bad_sources(h: &History, s: &Sources, r: &Read, kv: (KeyId, Ver)) -> Vec<BadSource> {
    let mut sources = Vec::new();
    let failed = s.failed.get(&kv).map(Vec::as_slice).unwrap_or(&[]);
    if let Some(f) = failed_source(h, failed, kv) {
        sources.push(f);
    }
    let over = s.overwritten.get(&kv).map(Vec::as_slice).unwrap_or(&[]);
    if let Some(&o) = over.iter().find(|&&o| o != r.txn) {
        sources.push(BadSource::Overwritten(o));
    }
    let last = s.last.get(&kv).map(Vec::as_slice).unwrap_or(&[]);
    if over.contains(&r.txn) || last.contains(&r.txn) {
        sources.push(BadSource::Later);
    }
    sources
}

/// A read every choice explains only by one of `avoid`'s anomalies (what
/// it saw is a failed write: G1a, and a dirty update when the reader then
/// writes the key; another's overwritten write: G1b; its own later write: a
/// future read; nobody's: a garbage read), as read committed's finding;
/// `None` when every read can avoid them. Exact for an anomaly list of
/// these alone: with no cycle prohibited, any version order will do, so
/// each read's source is chosen on its own.
pub fn forced_read(h: &History, avoid: &BTreeSet<String>) -> Option<DupVerdict> {
    let s = sources(h);
    let bad = |b: BadSource, r: &Read| {
        source_anomalies(b, r.then_writes)
            .iter()
            .any(|k| avoid.contains(k.name()))
    };
    for r in &s.reads {
        let c = match r.ver {
            None if bad(BadSource::Nobody, r) => unwritten(r),
            None | Some(NIL) => continue,
            Some(ver) => {
                let kv = (r.key, ver);
                if s.last
                    .get(&kv)
                    .is_some_and(|ws| ws.iter().any(|&w| w != r.txn))
                {
                    continue;
                }
                let mut sources = bad_sources(h, &s, r, kv);
                if sources.is_empty() {
                    sources.push(BadSource::Nobody);
                }
                if !sources.iter().all(|&b| bad(b, r)) {
                    continue;
                }
                bad_read(r.txn, r.key, Some(ver), sources, r.then_writes)
            }
        };
        let mut v = verdict(Level::ReadCommitted, Validity::False, Reason::Proof);
        v.anomaly = Some((*c).into());
        return Some(v);
    }
    None
}

/// The greedy placement: the committed transactions in the order placed,
/// and per transaction left unplaced one read that blocks it (its key and
/// candidates, all unplaced).
struct Placement {
    order: Vec<TxnId>,
    blocked: Vec<(TxnId, KeyId, Vec<TxnId>)>,
}

fn place(h: &History, s: &Sources, level: Level) -> Result<Placement, Box<Contradiction>> {
    let n = h.txns.len();
    // Per transaction its reads not yet met; per writer the reads it meets.
    let mut unmet = vec![0u32; n];
    let mut waiting: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut cand_of: Vec<Option<Vec<TxnId>>> = Vec::with_capacity(s.reads.len());
    for (i, r) in s.reads.iter().enumerate() {
        let c = cands(h, s, r, level)?;
        if let Some(ws) = &c {
            unmet[r.txn as usize] += 1;
            for &w in ws {
                waiting[w as usize].push(i as u32);
            }
        }
        cand_of.push(c);
    }
    let mut met = vec![false; s.reads.len()];
    let mut placed = vec![false; n];
    let mut order = Vec::new();
    // Transactions become ready in history order where they can, so the
    // witness reads like the history.
    let mut ready: Vec<TxnId> = (0..n as TxnId)
        .rev()
        .filter(|&t| h.txns[t as usize].outcome != Outcome::Fail && unmet[t as usize] == 0)
        .collect();
    while let Some(t) = ready.pop() {
        if std::mem::replace(&mut placed[t as usize], true) {
            continue;
        }
        order.push(t);
        for &i in &waiting[t as usize] {
            if std::mem::replace(&mut met[i as usize], true) {
                continue;
            }
            let reader = s.reads[i as usize].txn as usize;
            unmet[reader] -= 1;
            if unmet[reader] == 0 {
                ready.push(reader as TxnId);
            }
        }
    }
    let mut blocked: Vec<(TxnId, KeyId, Vec<TxnId>)> = Vec::new();
    for (i, r) in s.reads.iter().enumerate() {
        if let (false, Some(c)) = (met[i], &cand_of[i]) {
            if blocked.last().map(|b| b.0) != Some(r.txn) {
                blocked.push((r.txn, r.key, c.clone()));
            }
        }
    }
    Ok(Placement { order, blocked })
}

/// A cycle one choice closes among the unplaced: from each reader to the
/// first candidate of its blocked read (unplaced too), until a transaction
/// repeats; written writer → reader.
fn example_cycle(blocked: &[(TxnId, KeyId, Vec<TxnId>)]) -> Vec<RegisterStep> {
    let of: FxHashMap<TxnId, (KeyId, TxnId)> =
        blocked.iter().map(|(t, k, c)| (*t, (*k, c[0]))).collect();
    let mut path: Vec<TxnId> = Vec::new();
    let Some(mut at) = blocked.first().map(|b| b.0) else {
        return Vec::new();
    };
    while !path.contains(&at) {
        path.push(at);
        at = of[&at].1;
    }
    let p = path
        .iter()
        .position(|&t| t == at)
        .expect("the loop closes on the path");
    let mut steps: Vec<RegisterStep> = path[p..]
        .iter()
        .map(|&reader| {
            let (key, writer) = of[&reader];
            RegisterStep {
                from: writer,
                to: reader,
                why: RegisterWhy::Wr { key },
            }
        })
        .collect();
    // Each step's writer is the next reader on the path: reversed, every
    // step starts where the previous one ended.
    steps.reverse();
    steps
}

/// Decides read uncommitted, no G1c or read committed on a register
/// history. A valid verdict's witness is the order placed, replayed by
/// [`super::witness::check_read_committed`].
pub fn check(h: &History, level: Level) -> DupVerdict {
    let t0 = std::time::Instant::now();
    assert!(
        matches!(
            level,
            Level::ReadUncommitted | Level::NoG1c | Level::ReadCommitted
        ),
        "placement decides the levels up to read committed"
    );
    let mut v = decide(h, level);
    v.elapsed_ms = t0.elapsed().as_secs_f64() * 1e3;
    v
}

fn decide(h: &History, level: Level) -> DupVerdict {
    let s = sources(h);
    let found = |a: DupAnomaly| {
        let mut v = verdict(level, Validity::False, Reason::Proof);
        v.anomaly = Some(a);
        v
    };
    let p = match place(h, &s, level) {
        Ok(p) => p,
        Err(c) => return found((*c).into()),
    };
    if p.blocked.is_empty() {
        let replay = super::witness::check_read_committed(h, &p.order, level);
        return witnessed(level, p.order, replay);
    }
    // Read committed: if failed or overwritten writes explain what is
    // left, every choice has G1a, G1b or G1c; else every one has G1c,
    // among the transactions the relaxed placement leaves.
    // (Read uncommitted places everything: it needs no writer first.)
    let relaxed_p = match level {
        Level::ReadCommitted => place(h, &s, Level::NoG1c)
            .ok()
            .filter(|r| !r.blocked.is_empty()),
        _ => None,
    };
    let dirty = level == Level::ReadCommitted && relaxed_p.is_none();
    let left = relaxed_p.as_ref().unwrap_or(&p);
    let txns: Vec<TxnId> = left.blocked.iter().map(|b| b.0).collect();
    let mut keys: Vec<KeyId> = left.blocked.iter().map(|b| b.1).collect();
    keys.sort_unstable();
    keys.dedup();
    let kind = if dirty {
        AnomalyKind::RegisterNotReadCommitted.into()
    } else {
        DupKind::Cycle(CycleClass::new(BaseClass::G1c, Variant::Plain))
    };
    found(DupAnomaly {
        kind,
        txns: txns.clone(),
        keys: keys.clone(),
        proof: Proof::RegisterReadCycles {
            dirty,
            keys,
            txns: txns.into_iter().take(24).collect(),
            example: example_cycle(&left.blocked),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One transaction per line: `(outcome, micro-ops)`, run one after
    /// another by process 0.
    fn history(txns: &[(&str, &str)]) -> History {
        let mut edn = String::new();
        for (i, (outcome, mops)) in txns.iter().enumerate() {
            edn += &format!(
                "{{:type :invoke, :process 0, :f :txn, :value {mops}, :index {}}}\n",
                2 * i
            );
            edn += &format!(
                "{{:type :{outcome}, :process 0, :f :txn, :value {mops}, :index {}}}\n",
                2 * i + 1
            );
        }
        crate::history::read::read_history(edn.as_bytes(), "t", None).expect("parses")
    }

    fn at(h: &History, level: Level) -> (Validity, Option<String>) {
        let v = check(h, level);
        if let Some(w) = &v.witness {
            assert_eq!(
                super::super::witness::check_read_committed(h, w, level),
                Ok(())
            );
        }
        (v.valid, v.anomaly.map(|a| a.kind.name().to_string()))
    }

    fn kind(k: &str) -> Option<String> {
        Some(k.to_string())
    }

    /// T0 reads x = 1 and writes y = 1; T1 and T2 each read y = 1 and
    /// write x = 1: whichever of them T0 read, the two read each other.
    #[test]
    fn every_choice_of_writer_closing_a_cycle_is_g1c() {
        let h = history(&[
            ("ok", "[[:r :x 1] [:w :y 1]]"),
            ("ok", "[[:r :y 1] [:w :x 1]]"),
            ("ok", "[[:r :y 1] [:w :x 1]]"),
        ]);
        assert_eq!(at(&h, Level::ReadCommitted), (Validity::False, kind("G1c")));
        assert_eq!(at(&h, Level::NoG1c), (Validity::False, kind("G1c")));
        assert_eq!(at(&h, Level::ReadUncommitted).0, Validity::True);
        let v = check(&h, Level::ReadCommitted);
        let Some(Proof::RegisterReadCycles { dirty, example, .. }) = v.proof() else {
            panic!("a cycle of reads: {:?}", v.proof());
        };
        assert!(!dirty);
        // The example is a closed walk of wr steps.
        assert!(example.len() >= 2);
        for (i, s) in example.iter().enumerate() {
            assert_eq!(s.to, example[(i + 1) % example.len()].from);
            assert!(matches!(s.why, RegisterWhy::Wr { .. }));
        }
    }

    /// As above, but a failed transaction also wrote x = 1: T0 may have
    /// read it (G1a), so only read committed fails, with its own kind.
    #[test]
    fn a_cycle_a_dirty_read_avoids_fails_read_committed_only() {
        let h = history(&[
            ("fail", "[[:w :x 1]]"),
            ("ok", "[[:r :x 1] [:w :y 1]]"),
            ("ok", "[[:r :y 1] [:w :x 1]]"),
        ]);
        assert_eq!(
            at(&h, Level::ReadCommitted),
            (Validity::False, kind("register-not-read-committed"))
        );
        assert_eq!(at(&h, Level::NoG1c).0, Validity::True);
        assert_eq!(at(&h, Level::ReadUncommitted).0, Validity::True);
    }

    #[test]
    fn reads_of_failed_overwritten_own_later_and_unwritten_values() {
        let failed = history(&[("fail", "[[:w :x 1]]"), ("ok", "[[:r :x 1]]")]);
        assert_eq!(
            at(&failed, Level::ReadCommitted),
            (Validity::False, kind("G1a"))
        );
        assert_eq!(at(&failed, Level::NoG1c).0, Validity::True);
        let overwritten = history(&[("ok", "[[:w :x 1] [:w :x 2]]"), ("ok", "[[:r :x 1]]")]);
        assert_eq!(
            at(&overwritten, Level::ReadCommitted),
            (Validity::False, kind("G1b"))
        );
        assert_eq!(at(&overwritten, Level::NoG1c).0, Validity::True);
        let future = history(&[("ok", "[[:r :x 1] [:w :x 1]]")]);
        assert_eq!(
            at(&future, Level::ReadCommitted),
            (Validity::False, kind("future-read"))
        );
        assert_eq!(
            at(&future, Level::NoG1c),
            (Validity::False, kind("future-read"))
        );
        assert_eq!(at(&future, Level::ReadUncommitted).0, Validity::True);
        let garbage = history(&[("ok", "[[:w :x 1]]"), ("ok", "[[:r :x 7]]")]);
        assert_eq!(
            at(&garbage, Level::ReadCommitted),
            (Validity::False, kind("garbage-read"))
        );
        assert_eq!(at(&garbage, Level::NoG1c).0, Validity::True);
        assert_eq!(
            at(&garbage, Level::ReadUncommitted),
            (Validity::False, kind("garbage-read"))
        );
    }

    /// A read no committed last write explains names every write it may
    /// have seen instead; an `-a` list of read anomalies is forced only
    /// when each of them is one it prohibits.
    #[test]
    fn a_bad_read_names_every_source_it_may_have_had() {
        let h = history(&[
            ("fail", "[[:w :x 1]]"),
            ("ok", "[[:w :x 1] [:w :x 2]]"),
            ("ok", "[[:r :x 1] [:w :x 3]]"),
        ]);
        let v = check(&h, Level::ReadCommitted);
        let Some(Proof::RegisterBadRead {
            sources,
            dirty_update,
            ..
        }) = v.proof()
        else {
            panic!("a bad read: {:?}", v.proof());
        };
        assert_eq!(sources, &[BadSource::Failed(0), BadSource::Overwritten(1)]);
        assert!(dirty_update);
        let text = crate::explain::proof::reason(&h, &v.reason, v.proof());
        assert!(
            text.contains("wrote it and failed (and the reader then writes")
                && text.contains("wrote it and then overwrote it"),
            "{text}"
        );
        let forced = |avoid: &[&str]| {
            let avoid: BTreeSet<String> = avoid.iter().map(|a| a.to_string()).collect();
            forced_read(&h, &avoid).map(|v| v.valid)
        };
        assert_eq!(forced(&["G1a"]), None);
        assert_eq!(forced(&["G1b"]), None);
        assert_eq!(forced(&["G1a", "G1b"]), Some(Validity::False));
        assert_eq!(forced(&["dirty-update", "G1b"]), Some(Validity::False));
        assert_eq!(forced(&["future-read", "garbage-read"]), None);
    }

    /// Read committed allows stale and non-repeatable reads, and reads of
    /// an `info` transaction's writes (it may have committed); every read
    /// still needs a committed writer placed before it.
    #[test]
    fn stale_non_repeatable_and_info_reads_are_read_committed() {
        let h = history(&[
            ("ok", "[[:w :x 1]]"),
            ("ok", "[[:w :x 2]]"),
            ("info", "[[:w :y 5]]"),
            ("ok", "[[:r :x 2] [:r :x 1] [:r :y 5] [:r :x nil]]"),
            ("ok", "[[:w :x 3] [:r :x 3]]"),
        ]);
        assert_eq!(at(&h, Level::ReadCommitted), (Validity::True, None));
        let v = check(&h, Level::ReadCommitted);
        let order = v.witness.expect("a witness");
        // The info writer is placed (committed) before its reader.
        let pos = |t: TxnId| order.iter().position(|&x| x == t);
        assert!(pos(2) < pos(3));
    }
}
