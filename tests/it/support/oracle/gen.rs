//! Random small list-append histories for property tests.
//!
//! A [`Spec`] is plain data (so proptest shrinks it structurally: fewer
//! transactions, fewer micro-ops, smaller choices); [`build`] runs it as a
//! tiny database would and records the history. Semantics range from a
//! genuinely serial execution (valid by construction) through snapshot
//! isolation and read committed to read uncommitted (so anomalies occur),
//! and corruptions then damage reads (prefixes, reorders, duplicates,
//! phantom values).

use super::{Hist, Mop, Outcome, Txn};
use proptest::prelude::*;

/// How the simulated database runs transactions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Semantics {
    /// One at a time, in spec order, each atomically at a point inside its
    /// interval when `realtime` (else intervals are placed at random).
    Serial { realtime: bool },
    /// Reads see the snapshot taken at begin plus own appends; at commit,
    /// appends go to the end of the committed lists. `fcw`: a transaction
    /// whose write set meets that of one committed since its begin aborts.
    Snapshot { fcw: bool },
    /// Reads see the latest committed lists plus own appends; an append
    /// takes the key's write lock until commit (no dirty writes, so every
    /// list read is a real version), and a deadlock aborts a transaction.
    ReadCommitted,
    /// Appends go straight into the shared lists and stay there even if the
    /// transaction aborts; reads see everything.
    ReadUncommitted,
}

/// One transaction to run: micro-ops `(is_read, key)` and its fate.
#[derive(Clone, Debug)]
pub struct TxnSpec {
    pub mops: Vec<(bool, u8)>,
    pub outcome: Outcome,
    /// For `info`: whether it took effect.
    pub applied: bool,
    /// For `info`: whether its completion is recorded at all.
    pub completes: bool,
    /// For `fail` and `info` completions when [`Knobs::fault_reads`]:
    /// 0 = reads nil, 1 = what it saw, 2 = garbage. Otherwise 0.
    pub junk_reads: u8,
}

/// A damage to one read: `(txn, mop, how, arg)`, all taken modulo sizes.
pub type Corruption = (u8, u8, u8, u8);

/// Everything [`build`] needs; shrinks structurally.
#[derive(Clone, Debug)]
pub struct Spec {
    pub semantics: Semantics,
    pub keys: u8,
    /// Maximum number of transactions in flight at once (concurrent runs).
    pub concurrency: u8,
    pub txns: Vec<TxnSpec>,
    /// Scheduling choices, consumed in order (0 when exhausted).
    pub choices: Vec<u8>,
    pub corruptions: Vec<Corruption>,
    /// Append a final `ok` transaction that reads every key after all others.
    pub final_read: bool,
    /// See [`Knobs::fault_reads`]; off, corruptions spare `info` and
    /// `fail` reads.
    pub fault_reads: bool,
}

/// Knobs for [`spec`].
#[derive(Clone, Copy, Debug)]
pub struct Knobs {
    /// Allow `fail` and `info` outcomes.
    pub faults: bool,
    /// Allow read corruptions.
    pub corrupt: bool,
    /// Probability weight (of 10) of a final full read.
    pub final_read: u32,
    /// Maximum number of generated transactions (2..=max).
    pub max_txns: usize,
    /// Let `info` and `fail` completions carry non-nil reads. Off: they
    /// carry their invocation's nil reads, as Jepsen clients record them.
    /// (isolde, like Elle, uses non-nil reads of such transactions; the
    /// oracle ignores them: see the `*_reads_*` unit tests.)
    pub fault_reads: bool,
}

fn txn_spec(keys: u8, faults: bool, fault_reads: bool) -> impl Strategy<Value = TxnSpec> {
    let outcome = if faults {
        prop_oneof![8 => Just(Outcome::Ok), 1 => Just(Outcome::Fail), 1 => Just(Outcome::Info)]
            .boxed()
    } else {
        Just(Outcome::Ok).boxed()
    };
    (
        prop::collection::vec((any::<bool>(), 0..keys), 1..=4),
        outcome,
        any::<bool>(),
        any::<bool>(),
        0u8..3,
    )
        .prop_map(
            move |(mops, outcome, applied, completes, junk_reads)| TxnSpec {
                mops,
                outcome,
                applied,
                completes,
                junk_reads: if outcome != Outcome::Ok && !fault_reads {
                    0
                } else {
                    junk_reads
                },
            },
        )
}

/// A strategy for specs with the given semantics.
pub fn spec(
    semantics: impl Strategy<Value = Semantics>,
    knobs: Knobs,
) -> impl Strategy<Value = Spec> {
    (semantics, 1u8..=3, 1u8..=4).prop_flat_map(move |(semantics, keys, concurrency)| {
        let corruptions = if knobs.corrupt {
            prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>()), 0..=2)
                .boxed()
        } else {
            Just(Vec::new()).boxed()
        };
        (
            prop::collection::vec(
                txn_spec(keys, knobs.faults, knobs.fault_reads),
                2..=knobs.max_txns,
            ),
            prop::collection::vec(any::<u8>(), 0..48),
            corruptions,
            prop::bool::weighted(f64::from(knobs.final_read) / 10.0),
        )
            .prop_map(move |(txns, choices, corruptions, final_read)| Spec {
                semantics,
                keys,
                concurrency,
                txns,
                choices,
                corruptions,
                final_read,
                fault_reads: knobs.fault_reads,
            })
    })
}

/// Any of the semantics.
pub fn any_semantics() -> impl Strategy<Value = Semantics> {
    prop_oneof![
        Just(Semantics::Serial { realtime: true }),
        Just(Semantics::Serial { realtime: false }),
        Just(Semantics::Snapshot { fcw: true }),
        Just(Semantics::Snapshot { fcw: false }),
        Just(Semantics::ReadCommitted),
        Just(Semantics::ReadUncommitted),
    ]
}

/// Scheduling choices, read front to back.
struct Choices<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Choices<'_> {
    /// A number below `n` (0 when `n <= 1` or the choices ran out).
    fn pick(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        let b = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b as usize % n
    }
}

/// Hands out Jepsen-style processes: one transaction at a time each, and a
/// process whose transaction ended `info` is never used again.
struct Processes {
    /// Per process: busy, or crashed.
    busy: Vec<bool>,
    crashed: Vec<bool>,
}

impl Processes {
    fn new() -> Self {
        Processes {
            busy: Vec::new(),
            crashed: Vec::new(),
        }
    }
    fn take(&mut self, c: &mut Choices) -> u32 {
        let free: Vec<usize> = (0..self.busy.len())
            .filter(|&p| !self.busy[p] && !self.crashed[p])
            .collect();
        let pick = c.pick(free.len() + 1);
        let p = if pick < free.len() {
            free[pick]
        } else {
            self.busy.push(false);
            self.crashed.push(false);
            self.busy.len() - 1
        };
        self.busy[p] = true;
        p as u32
    }
    fn release(&mut self, p: u32, crashed: bool) {
        self.busy[p as usize] = false;
        self.crashed[p as usize] |= crashed;
    }
}

/// Runs a spec and records the history.
pub fn build(spec: &Spec) -> Hist {
    let keys = spec.keys as usize;
    let mut c = Choices {
        bytes: &spec.choices,
        at: 0,
    };
    let (mut h, state) = match spec.semantics {
        Semantics::Serial { realtime } => serial(spec, keys, realtime, &mut c),
        _ => concurrent(spec, keys, &mut c),
    };
    if spec.final_read {
        let end = h
            .txns
            .iter()
            .flat_map(|t| [Some(t.invoke), t.complete])
            .flatten()
            .max()
            .unwrap_or(0);
        let process = h.txns.iter().map(|t| t.process).max().unwrap_or(0) + 1;
        let mops = (0..keys)
            .map(|k| Mop::Read(k, nil_if_empty(state[k].clone(), &mut c)))
            .collect();
        h.txns.push(Txn {
            process,
            outcome: Outcome::Ok,
            mops,
            invoke: end + 1,
            complete: Some(end + 2),
        });
    }
    corrupt(&mut h, &spec.corruptions, spec.fault_reads);
    h
}

/// An empty read is written as nil or as `[]`, both meaning "empty".
fn nil_if_empty(l: Vec<u32>, c: &mut Choices) -> Option<Vec<u32>> {
    if l.is_empty() && c.pick(2) == 0 {
        None
    } else {
        Some(l)
    }
}

/// Completion-time reads of an `info` or `fail` transaction.
fn junk(mops: &[Mop], how: u8) -> Vec<Mop> {
    mops.iter()
        .map(|m| match (m, how) {
            (Mop::Read(k, _), 0) => Mop::Read(*k, None),
            (Mop::Read(k, _), 2) => Mop::Read(*k, Some(vec![77, 78])),
            _ => m.clone(),
        })
        .collect()
}

/// Runs the transactions one at a time; returns the history and the final lists.
fn serial(spec: &Spec, keys: usize, realtime: bool, c: &mut Choices) -> (Hist, Vec<Vec<u32>>) {
    let mut next = vec![1u32; keys];
    let mut lists: Vec<Vec<u32>> = vec![Vec::new(); keys];
    // (txn, invoke time, complete time); times are spaced so that each
    // transaction's serial point 10*j + 5 lies strictly inside its interval.
    let mut txns = Vec::new();
    let mut times = Vec::new();
    let n = spec.txns.len() as i64;
    for (j, ts) in spec.txns.iter().enumerate() {
        let mut local = lists.clone();
        let mut mops = Vec::new();
        for &(read, k) in &ts.mops {
            let k = k as usize;
            if read {
                mops.push(Mop::Read(k, nil_if_empty(local[k].clone(), c)));
            } else {
                local[k].push(next[k]);
                mops.push(Mop::Append(k, next[k]));
                next[k] += 1;
            }
        }
        let takes_effect = match ts.outcome {
            Outcome::Ok => true,
            Outcome::Fail => false,
            Outcome::Info => ts.applied,
        };
        if takes_effect {
            lists = local;
        }
        if ts.outcome != Outcome::Ok {
            mops = junk(&mops, ts.junk_reads);
        }
        let (inv, comp) = if realtime {
            let point = 10 * j as i64 + 5;
            (
                point - 1 - 10 * c.pick(3) as i64 - c.pick(9) as i64,
                point + 1 + 10 * c.pick(3) as i64 + c.pick(9) as i64,
            )
        } else {
            let a = c.pick(10 * n as usize) as i64;
            (a, a + 1 + c.pick(30) as i64)
        };
        let complete = ts.outcome != Outcome::Info || ts.completes;
        times.push((inv, comp, complete));
        txns.push(Txn {
            process: 0,
            outcome: ts.outcome,
            mops,
            invoke: 0,
            complete: None,
        });
    }
    // Event positions: sort by time; ties keep any order (serial points lie
    // strictly inside intervals, so every tie order is consistent).
    let mut events: Vec<(i64, usize, usize, bool)> = Vec::new();
    for (i, &(inv, comp, complete)) in times.iter().enumerate() {
        events.push((inv, c.pick(4), i, true));
        if complete {
            events.push((comp, c.pick(4), i, false));
        }
    }
    events.sort();
    let mut procs = Processes::new();
    let mut proc_of = vec![0u32; txns.len()];
    for (pos, &(_, _, i, invocation)) in events.iter().enumerate() {
        if invocation {
            proc_of[i] = procs.take(c);
            txns[i].invoke = pos as u32;
            txns[i].process = proc_of[i];
            if !times[i].2 {
                procs.release(proc_of[i], true);
            }
        } else {
            txns[i].complete = Some(pos as u32);
            procs.release(proc_of[i], txns[i].outcome == Outcome::Info);
        }
    }
    (Hist { keys, txns }, lists)
}

/// A transaction in flight in a concurrent run.
struct Running {
    spec: usize,
    /// Next micro-op to run.
    step: usize,
    snapshot: Vec<Vec<u32>>,
    /// Commits seen at begin (first-committer-wins).
    begun_at: usize,
    own: Vec<(usize, u32)>,
    mops: Vec<Mop>,
    process: u32,
    invoke: u32,
}

/// The shared state of a concurrent run.
struct Db {
    committed: Vec<Vec<u32>>,
    /// Read uncommitted: the shared lists, dirty appends included.
    shared: Vec<Vec<u32>>,
    /// Per key, the commit count at its last committed append.
    last_write: Vec<usize>,
    /// Read committed: per key, the running transaction (spec index)
    /// holding its write lock until it ends, so there are no dirty writes.
    locks: Vec<Option<usize>>,
    commits: usize,
    /// Next event position.
    pos: u32,
}

/// Interleaves the transactions; returns the history and the final lists.
fn concurrent(spec: &Spec, keys: usize, c: &mut Choices) -> (Hist, Vec<Vec<u32>>) {
    let mut next = vec![1u32; keys];
    let mut db = Db {
        committed: vec![Vec::new(); keys],
        shared: vec![Vec::new(); keys],
        last_write: vec![0; keys],
        locks: vec![None; keys],
        commits: 0,
        pos: 0,
    };
    let mut procs = Processes::new();
    let mut running: Vec<Running> = Vec::new();
    let mut out: Vec<Option<Txn>> = vec![None; spec.txns.len()];
    let mut started = 0;
    let blocked = |db: &Db, r: &Running| match spec.txns[r.spec].mops.get(r.step) {
        Some(&(false, k)) => db.locks[k as usize].is_some_and(|owner| owner != r.spec),
        _ => false,
    };
    while started < spec.txns.len() || !running.is_empty() {
        let can_start =
            started < spec.txns.len() && running.len() < spec.concurrency.max(1) as usize;
        let ready: Vec<usize> = (0..running.len())
            .filter(|&i| !blocked(&db, &running[i]))
            .collect();
        if ready.is_empty() && !can_start {
            // Every transaction waits for a lock: the database aborts one.
            let r = running.swap_remove(c.pick(running.len()));
            let t = end(spec, &mut db, &mut procs, r, true);
            out[t.0] = Some(t.1);
            continue;
        }
        let choice = c.pick(ready.len() + usize::from(can_start));
        if choice == ready.len() {
            let process = procs.take(c);
            running.push(Running {
                spec: started,
                step: 0,
                snapshot: db.committed.clone(),
                begun_at: db.commits,
                own: Vec::new(),
                mops: Vec::new(),
                process,
                invoke: db.pos,
            });
            db.pos += 1;
            started += 1;
            continue;
        }
        let r = &mut running[ready[choice]];
        let ts = &spec.txns[r.spec];
        if r.step == ts.mops.len() {
            let r = running.swap_remove(ready[choice]);
            let t = end(spec, &mut db, &mut procs, r, false);
            out[t.0] = Some(t.1);
            continue;
        }
        let (read, k) = ts.mops[r.step];
        let k = k as usize;
        r.step += 1;
        if read {
            let mut seen = match spec.semantics {
                Semantics::Snapshot { .. } => r.snapshot[k].clone(),
                Semantics::ReadCommitted => db.committed[k].clone(),
                _ => db.shared[k].clone(),
            };
            if spec.semantics != Semantics::ReadUncommitted {
                seen.extend(r.own.iter().filter(|(k2, _)| *k2 == k).map(|(_, v)| *v));
            }
            r.mops.push(Mop::Read(k, nil_if_empty(seen, c)));
        } else {
            let v = next[k];
            next[k] += 1;
            r.own.push((k, v));
            r.mops.push(Mop::Append(k, v));
            match spec.semantics {
                Semantics::ReadUncommitted => db.shared[k].push(v),
                Semantics::ReadCommitted => db.locks[k] = Some(r.spec),
                _ => {}
            }
        }
    }
    let state = if spec.semantics == Semantics::ReadUncommitted {
        db.shared
    } else {
        db.committed
    };
    let txns = out
        .into_iter()
        .map(|t| t.expect("every transaction ran"))
        .collect();
    (Hist { keys, txns }, state)
}

/// Commits or aborts a running transaction (`abort`: the database chose
/// to, e.g. on deadlock); returns its spec index and its record.
fn end(spec: &Spec, db: &mut Db, procs: &mut Processes, r: Running, abort: bool) -> (usize, Txn) {
    let ts = &spec.txns[r.spec];
    let conflict = abort
        || (spec.semantics == (Semantics::Snapshot { fcw: true })
            && r.own.iter().any(|&(k, _)| db.last_write[k] > r.begun_at));
    let mut outcome = ts.outcome;
    if conflict && outcome == Outcome::Ok {
        outcome = Outcome::Fail;
    }
    let takes_effect = !conflict
        && match outcome {
            Outcome::Ok => true,
            Outcome::Fail => false,
            Outcome::Info => ts.applied,
        };
    if takes_effect {
        db.commits += 1;
        for &(k, v) in &r.own {
            db.committed[k].push(v);
            db.last_write[k] = db.commits;
        }
    }
    for l in db.locks.iter_mut() {
        if *l == Some(r.spec) {
            *l = None;
        }
    }
    let mut mops = r.mops;
    if outcome != Outcome::Ok {
        mops = junk(&mops, ts.junk_reads);
    }
    let completes = outcome != Outcome::Info || ts.completes;
    let complete = completes.then(|| {
        db.pos += 1;
        db.pos - 1
    });
    procs.release(r.process, outcome == Outcome::Info);
    let txn = Txn {
        process: r.process,
        outcome,
        mops,
        invoke: r.invoke,
        complete,
    };
    (r.spec, txn)
}

/// Damages reads: `how` picks truncation, removal, adjacent swap,
/// duplication, a phantom value, nil, or a prefix of everything appended.
fn corrupt(h: &mut Hist, corruptions: &[Corruption], fault_reads: bool) {
    let appended = h.appended();
    let n = h.txns.len();
    for &(t, m, how, arg) in corruptions {
        let t = &mut h.txns[t as usize % n];
        if t.outcome != Outcome::Ok && !fault_reads {
            continue;
        }
        let reads: Vec<usize> = (0..t.mops.len())
            .filter(|&i| matches!(t.mops[i], Mop::Read(..)))
            .collect();
        if reads.is_empty() {
            continue;
        }
        let i = reads[m as usize % reads.len()];
        let Mop::Read(k, l) = &mut t.mops[i] else {
            unreachable!()
        };
        let mut vs = l.clone().unwrap_or_default();
        let a = arg as usize;
        match how % 7 {
            0 => vs.truncate(a % (vs.len() + 1)),
            1 if !vs.is_empty() => {
                vs.remove(a % vs.len());
            }
            2 if vs.len() >= 2 => {
                let i = a % (vs.len() - 1);
                vs.swap(i, i + 1);
            }
            3 if !vs.is_empty() => vs.push(vs[a % vs.len()]),
            4 => vs.push(100 + (a % 5) as u32),
            5 => {
                *l = None;
                continue;
            }
            _ => {
                let all = &appended[*k];
                vs = all[..a % (all.len() + 1)].to_vec();
            }
        }
        *l = Some(vs);
    }
}
