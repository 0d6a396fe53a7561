//! `isolde run sim`: a multi-version database in memory, implementing the
//! isolation levels the textbook way, driven by a deterministic scheduler.
//!
//! - strict-serializable: strict two-phase locking (shared locks for reads,
//!   exclusive for writes, held to commit; a transaction that would close a
//!   cycle of waits is aborted as the deadlock victim, as databases do).
//! - serializable: the same, except that read-only transactions read a
//!   snapshot up to [`STALE_LAG`] commits old: still a prefix of the commit
//!   order, so serializable, but not strict.
//! - snapshot-isolation: reads from the snapshot taken at begin, writes
//!   buffered, first committer wins.
//! - read-committed: every read sees the latest committed version; writes take
//!   exclusive locks held to commit, and build on the latest committed value
//!   (as PostgreSQL's UPDATE does).
//! - read-uncommitted: as read-committed, but reads also see the uncommitted
//!   value of the key's current writer.
//!
//! Bugs (`--bug`): `lost-update` builds writes on the begin-time snapshot
//! with no locks and no conflict check (stale write-back); `non-atomic`
//! installs a commit's writes one key per scheduler step, each with its own
//! timestamp (visible to snapshot and read-committed readers; two-phase
//! locking readers wait for it, so strict-serializable hides it);
//! `aborted-read` applies an aborted transaction's writes anyway;
//! `long-fork` serves each read-only transaction from one of two replicas,
//! each [`REPLICA_LAG`] commits behind on the other's half of the keys.
//!
//! The model workloads run on the same store: a bank account is a register,
//! a transfer reads both balances (refusing, as Jepsen's clients do, to go
//! negative unless allowed) and then writes both; a counter is one key whose
//! adds build on the value the way appends do; a set is one list the adds
//! append to; a comments table is one list; a sequential subkey, the
//! cas-register and the mutex (its holder) are registers. A cas, acquire or
//! release reads its register as SELECT ... FOR UPDATE does (locked as for
//! a write, so no lock upgrade), then writes or refuses (`Sim::decide`).
//! So `lost-update` loses transfers, adds, elements and ids and lets two
//! cas or two acquires succeed together, `non-atomic` shows a transfer's
//! debit without its credit, and `long-fork` makes long-fork's group reads
//! disagree, comments' reads see an id but miss one written before it, and
//! sequential's reads see a subkey but miss an earlier one.
//!
//! No OS threads: each scheduler step picks one simulated client from the seed
//! and lets it do one thing (begin, one micro-op, or commit). Time is virtual
//! (1 µs per step), so the same seed writes the same history, byte for byte.

use super::generator::Generator;
use super::progress::Progress;
use super::recorder::Recorder;
use super::{Key, ModelParams, Mop, ReadValue, Txn, Value, WorkloadKind, FREE};
use crate::history::Outcome;
use crate::rng::Rng;
use rustc_hash::FxHashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// How many commits old a read-only transaction's snapshot may be under
/// `serializable`.
pub const STALE_LAG: u64 = 8;

/// `long-fork` bug: how many commits a replica lags on the keys it is
/// behind on.
pub const REPLICA_LAG: u64 = 8;

/// Nanoseconds of virtual time per scheduler step.
const STEP_NS: u64 = 1_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SimLevel {
    StrictSerializable,
    Serializable,
    SnapshotIsolation,
    ReadCommitted,
    ReadUncommitted,
}

impl SimLevel {
    /// The Elle consistency model this level promises.
    pub fn model(self) -> &'static str {
        match self {
            SimLevel::StrictSerializable => "strict-serializable",
            SimLevel::Serializable => "serializable",
            SimLevel::SnapshotIsolation => "snapshot-isolation",
            SimLevel::ReadCommitted => "read-committed",
            SimLevel::ReadUncommitted => "read-uncommitted",
        }
    }

    /// Levels that lock keys before writing them.
    fn write_locks(self) -> bool {
        self != SimLevel::SnapshotIsolation
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SimBug {
    /// Writes build on the begin-time snapshot, unlocked and unchecked.
    LostUpdate,
    /// Commits become visible one key at a time.
    NonAtomic,
    /// Aborted transactions' writes are installed anyway.
    AbortedRead,
    /// Read-only transactions read from unsynchronised replicas.
    LongFork,
}

/// A stored value: the whole list (a register is a list whose last element
/// is its value).
type Stored = Rc<Vec<Value>>;

#[derive(Default)]
struct LockState {
    /// Age (begin sequence number) of the exclusive holder.
    writer: Option<u64>,
    readers: Vec<u64>,
}

/// Committed versions, locks, and (for read-uncommitted) dirty values.
#[derive(Default)]
struct Db {
    /// Per key, committed versions in ascending timestamp order.
    versions: FxHashMap<Key, Vec<(u64, Stored)>>,
    /// Timestamp of the latest commit.
    clock: u64,
    locks: FxHashMap<Key, LockState>,
    /// Uncommitted value of each key's exclusive holder.
    dirty: FxHashMap<Key, Stored>,
    /// Waits-for graph: a blocked transaction's age → the holders it waits for.
    waits: FxHashMap<u64, Vec<u64>>,
    /// `non-atomic` bug: keys a commit in progress has yet to install; they
    /// count as written for first-committer-wins, so that the bug only
    /// affects visibility.
    pending: FxHashMap<Key, u64>,
}

enum Lock {
    Granted,
    Wait,
    Die,
}

impl Db {
    fn latest(&self, k: Key) -> Option<Stored> {
        self.versions
            .get(&k)
            .and_then(|v| v.last())
            .map(|(_, s)| s.clone())
    }

    fn at(&self, k: Key, ts: u64) -> Option<Stored> {
        let vs = self.versions.get(&k)?;
        let i = vs.partition_point(|(t, _)| *t <= ts);
        (i > 0).then(|| vs[i - 1].1.clone())
    }

    fn latest_ts(&self, k: Key) -> u64 {
        self.versions
            .get(&k)
            .and_then(|v| v.last())
            .map_or(0, |(t, _)| *t)
    }

    fn install(&mut self, k: Key, ts: u64, value: Stored) {
        self.versions.entry(k).or_default().push((ts, value));
    }

    /// Takes the lock if no other transaction holds a conflicting one;
    /// otherwise returns the holders in the way.
    fn lock(&mut self, k: Key, age: u64, exclusive: bool) -> Result<(), Vec<u64>> {
        let st = self.locks.entry(k).or_default();
        let mut conflicts: Vec<u64> = st.writer.filter(|&w| w != age).into_iter().collect();
        if exclusive {
            conflicts.extend(st.readers.iter().copied().filter(|&r| r != age));
        }
        if !conflicts.is_empty() {
            return Err(conflicts);
        }
        if exclusive {
            st.writer = Some(age);
        } else if st.writer != Some(age) && !st.readers.contains(&age) {
            st.readers.push(age);
        }
        Ok(())
    }

    /// Would `age` waiting for `holders` close a cycle of waits?
    fn deadlock(&self, age: u64, holders: &[u64]) -> bool {
        let mut stack = holders.to_vec();
        let mut seen = rustc_hash::FxHashSet::default();
        while let Some(t) = stack.pop() {
            if t == age {
                return true;
            }
            if seen.insert(t) {
                if let Some(w) = self.waits.get(&t) {
                    stack.extend_from_slice(w);
                }
            }
        }
        false
    }

    fn unlock_all(&mut self, keys: &[Key], age: u64) {
        for k in keys {
            if let Some(st) = self.locks.get_mut(k) {
                if st.writer == Some(age) {
                    st.writer = None;
                    self.dirty.remove(k);
                }
                st.readers.retain(|&r| r != age);
                if st.writer.is_none() && st.readers.is_empty() {
                    self.locks.remove(k);
                }
            }
        }
    }
}

/// A transaction in flight (drive it with [`Sim::step`]).
pub struct SimTxn {
    /// Begin order: names the transaction in the lock table.
    age: u64,
    invoked: Txn,
    /// What the store runs: the micro-ops, or a model op's reads and writes.
    program: Txn,
    done: Txn,
    snapshot: u64,
    read_only: bool,
    writes: FxHashMap<Key, Stored>,
    write_order: Vec<Key>,
    /// Keys locked (either mode).
    held: Vec<Key>,
    /// `non-atomic` bug: writes still to install.
    installing: Option<usize>,
    /// The writes of a model op that reads first are chosen (`Sim::decide`).
    decided: bool,
    /// cas, acquire, release: reads lock as writes do (no lock upgrades,
    /// whose deadlocks would starve the lock's holder).
    for_update: bool,
}

/// What one step of a transaction did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Progressed,
    Blocked,
    Committed,
    Aborted(&'static str),
}

impl SimTxn {
    /// The micro-ops done so far, reads with their results.
    pub fn done(&self) -> &[Mop] {
        &self.done
    }
}

/// A register read's value, if it found one.
fn int_opt(m: &Mop) -> Option<Value> {
    match m {
        Mop::Read(_, Some(ReadValue::Int(v))) => Some(*v),
        _ => None,
    }
}

/// The simulated database.
pub struct Sim {
    level: SimLevel,
    bug: Option<SimBug>,
    workload: WorkloadKind,
    params: ModelParams,
    db: Db,
    rng: Rng,
    next_age: u64,
}

impl Sim {
    pub fn new(level: SimLevel, bug: Option<SimBug>, workload: WorkloadKind, seed: u64) -> Sim {
        Sim {
            level,
            bug,
            workload,
            params: ModelParams::default(),
            db: Db::default(),
            rng: Rng::new(seed ^ 0x5151_5151),
            next_age: 0,
        }
        .with_model(ModelParams::default())
    }

    /// Sets the model workloads' shape; for bank, opens the accounts
    /// (before any transaction ran).
    pub fn with_model(mut self, params: ModelParams) -> Sim {
        self.params = params;
        if self.workload == WorkloadKind::Bank {
            self.db.versions.clear();
            for (k, v) in params.initial_balances() {
                self.db.install(k, 0, Rc::new(vec![v]));
            }
        }
        self
    }

    /// The store's micro-ops for `txn`: a model op becomes reads (and, for
    /// a transfer, later the writes) of its keys.
    fn program(&self, txn: &Txn) -> Txn {
        match txn.as_slice() {
            [Mop::Transfer { from, to, .. }] => vec![Mop::Read(*from, None), Mop::Read(*to, None)],
            [Mop::ReadBalances(_)] => (0..self.params.accounts as Key)
                .map(|k| Mop::Read(k, None))
                .collect(),
            [Mop::Add(v)] => vec![Mop::Append(0, *v)],
            [Mop::ReadCounter(_) | Mop::ReadSet(_)] => vec![Mop::Read(0, None)],
            [Mop::WriteId(id)] => vec![Mop::Append(*id as Key % self.tables(), *id)],
            [Mop::ReadIds(_)] => (0..self.tables()).map(|t| Mop::Read(t, None)).collect(),
            [Mop::SeqWrite(k, i)] => {
                let row = self.params.subkey(*k, *i);
                vec![Mop::Write(row, row as Value)]
            }
            [Mop::SeqRead(k, _)] => (0..self.params.key_count)
                .rev()
                .map(|i| Mop::Read(self.params.subkey(*k, i), None))
                .collect(),
            [Mop::RegWrite(v)] => vec![Mop::Write(0, *v)],
            [Mop::RegRead(_) | Mop::RegCas { .. } | Mop::Acquire(_) | Mop::Release(_)] => {
                vec![Mop::Read(0, None)]
            }
            _ => txn.clone(),
        }
    }

    /// comments: the number of tables (keys of the store).
    fn tables(&self) -> Key {
        self.params.key_count.max(1) as Key
    }

    /// What `a` returned, in the shape it was invoked in.
    pub fn result(&self, a: &SimTxn) -> Txn {
        let int = |m: &Mop| match m {
            Mop::Read(_, Some(ReadValue::Int(v))) => *v,
            _ => 0,
        };
        let op = match a.invoked.as_slice() {
            [Mop::ReadBalances(_)] => {
                Mop::ReadBalances(Some(a.done.iter().map(|m| (m.key(), int(m))).collect()))
            }
            [Mop::ReadCounter(_)] => Mop::ReadCounter(Some(a.done.first().map_or(0, int))),
            [Mop::ReadSet(_)] => {
                let mut xs = match a.done.first() {
                    Some(Mop::Read(_, Some(ReadValue::List(xs)))) => xs.clone(),
                    _ => vec![],
                };
                xs.sort_unstable();
                Mop::ReadSet(Some(xs))
            }
            [Mop::ReadIds(_)] => {
                let mut ids: Vec<Value> = a
                    .done
                    .iter()
                    .flat_map(|m| match m {
                        Mop::Read(_, Some(ReadValue::List(xs))) => xs.clone(),
                        _ => vec![],
                    })
                    .collect();
                ids.sort_unstable();
                Mop::ReadIds(Some(ids))
            }
            [Mop::SeqRead(k, _)] => Mop::SeqRead(*k, Some(a.done.iter().map(int_opt).collect())),
            [Mop::RegRead(_)] => Mop::RegRead(a.done.first().and_then(int_opt)),
            [m] if m.model_f().is_some() => m.clone(),
            _ => return a.done.clone(),
        };
        vec![op]
    }

    /// Begins `txn` (taking its snapshot now).
    pub fn begin(&mut self, txn: Txn) -> SimTxn {
        let read_only = txn.iter().all(Mop::is_read);
        let for_update = matches!(
            txn[..],
            [Mop::RegCas { .. } | Mop::Acquire(_) | Mop::Release(_)]
        );
        let mut snapshot = self.db.clock;
        if self.level == SimLevel::Serializable && read_only {
            snapshot -= self.rng.below(STALE_LAG.min(snapshot) + 1);
        }
        self.next_age += 1;
        SimTxn {
            age: self.next_age,
            done: Vec::with_capacity(txn.len()),
            program: self.program(&txn),
            invoked: txn,
            snapshot,
            read_only,
            writes: FxHashMap::default(),
            write_order: Vec::new(),
            held: Vec::new(),
            installing: None,
            decided: false,
            for_update,
        }
    }

    fn lock(&mut self, a: &mut SimTxn, k: Key, exclusive: bool) -> Lock {
        match self.db.lock(k, a.age, exclusive) {
            Ok(()) => {
                self.db.waits.remove(&a.age);
                if !a.held.contains(&k) {
                    a.held.push(k);
                }
                Lock::Granted
            }
            Err(holders) => {
                if self.db.deadlock(a.age, &holders) {
                    self.db.waits.remove(&a.age);
                    Lock::Die
                } else {
                    self.db.waits.insert(a.age, holders);
                    Lock::Wait
                }
            }
        }
    }

    fn read_result(&self, s: Option<Stored>) -> Option<ReadValue> {
        let s = s?;
        Some(match self.workload {
            WorkloadKind::ListAppend
            | WorkloadKind::Set
            | WorkloadKind::SetFull
            | WorkloadKind::Comments => ReadValue::List(s.as_ref().clone()),
            _ => ReadValue::Int(*s.last()?),
        })
    }

    /// What a model op that reads before it writes writes, once its reads
    /// are done (none for the others), or why the client refuses it: a
    /// transfer that would overdraw, a cas whose value differs, an acquire
    /// of a held lock, a release of a lock the worker does not hold.
    fn decide(&self, a: &SimTxn) -> Result<Vec<Mop>, &'static str> {
        let int = |m: &Mop| match m {
            Mop::Read(_, Some(ReadValue::Int(v))) => Some(*v),
            _ => None,
        };
        let first = a.done.first().and_then(int);
        Ok(match a.invoked[..] {
            [Mop::Transfer { from, to, amount }] => {
                let b_from = first.unwrap_or(0);
                let b_to = a.done.get(1).and_then(int).unwrap_or(0);
                if b_from - amount < 0 && !self.params.allow_negative {
                    return Err("negative: the transfer would overdraw its account");
                }
                vec![
                    Mop::Write(from, b_from - amount),
                    Mop::Write(to, b_to + amount),
                ]
            }
            [Mop::RegCas { old, new }] if first == Some(old) => vec![Mop::Write(0, new)],
            [Mop::RegCas { .. }] => return Err("cas: the register holds another value"),
            [Mop::Acquire(owner)] if first.is_none_or(|v| v == FREE) => {
                vec![Mop::Write(0, owner as Value)]
            }
            [Mop::Acquire(_)] => return Err("held: the lock is taken"),
            [Mop::Release(owner)] if first == Some(owner as Value) => vec![Mop::Write(0, FREE)],
            [Mop::Release(_)] => return Err("not held: the lock is not this worker's"),
            _ => vec![],
        })
    }

    /// One unit of work for a transaction in flight: a micro-op, or the
    /// commit once all micro-ops are done.
    /// The version of `k` a write (or a read FOR UPDATE) of `a` builds on:
    /// the latest, under the exclusive lock; the lost-update bug skips the
    /// lock and reads the snapshot, as snapshot isolation does (relying on
    /// first committer wins). `Err` when `a` must wait or die.
    fn locked_view(&mut self, a: &mut SimTxn, k: Key) -> Result<Option<Stored>, Step> {
        if self.bug == Some(SimBug::LostUpdate) || !self.level.write_locks() {
            return Ok(self.db.at(k, a.snapshot));
        }
        match self.lock(a, k, true) {
            Lock::Granted => Ok(self.db.latest(k)),
            Lock::Wait => Err(Step::Blocked),
            Lock::Die => Err(Step::Aborted("deadlock victim")),
        }
    }

    pub fn step(&mut self, a: &mut SimTxn) -> Step {
        if let Some(i) = a.installing {
            // non-atomic bug: one key becomes visible (and unlocked) per step.
            let k = a.write_order[i];
            self.db.clock += 1;
            let ts = self.db.clock;
            self.db.install(k, ts, a.writes[&k].clone());
            self.db.pending.remove(&k);
            self.db.unlock_all(&[k], a.age);
            if i + 1 == a.write_order.len() {
                return Step::Committed;
            }
            a.installing = Some(i + 1);
            return Step::Progressed;
        }
        let pos = a.done.len();
        if pos == a.program.len() {
            if !a.decided {
                a.decided = true;
                match self.decide(a) {
                    Ok(writes) if writes.is_empty() => {}
                    Ok(writes) => {
                        a.program.extend(writes);
                        return Step::Progressed;
                    }
                    Err(why) => return Step::Aborted(why),
                }
            }
            return self.commit(a);
        }
        let mop = a.program[pos].clone();
        let k = mop.key();
        match mop {
            Mop::Read(..) => {
                let value = if let Some(own) = a.writes.get(&k) {
                    Some(own.clone())
                } else if a.for_update {
                    // SELECT ... FOR UPDATE: what a write would see.
                    match self.locked_view(a, k) {
                        Ok(v) => v,
                        Err(step) => return step,
                    }
                } else if self.bug == Some(SimBug::LongFork) && a.read_only {
                    // Half the keys come from a replica that lags behind.
                    let lagging = (k + a.age) % 2 == 1;
                    let lag = if lagging { REPLICA_LAG } else { 0 };
                    self.db.at(k, self.db.clock.saturating_sub(lag))
                } else {
                    match self.level {
                        SimLevel::StrictSerializable | SimLevel::Serializable
                            if !(self.level == SimLevel::Serializable && a.read_only) =>
                        {
                            match self.lock(a, k, false) {
                                Lock::Granted => self.db.latest(k),
                                Lock::Wait => return Step::Blocked,
                                Lock::Die => return Step::Aborted("deadlock victim"),
                            }
                        }
                        SimLevel::StrictSerializable
                        | SimLevel::Serializable
                        | SimLevel::SnapshotIsolation => self.db.at(k, a.snapshot),
                        SimLevel::ReadCommitted => self.db.latest(k),
                        SimLevel::ReadUncommitted => {
                            self.db.dirty.get(&k).cloned().or_else(|| self.db.latest(k))
                        }
                    }
                };
                a.done.push(Mop::Read(k, self.read_result(value)));
            }
            Mop::Append(_, v) | Mop::Write(_, v) => {
                let base = if let Some(own) = a.writes.get(&k) {
                    Some(own.clone())
                } else {
                    match self.locked_view(a, k) {
                        Ok(v) => v,
                        Err(step) => return step,
                    }
                };
                let new: Vec<Value> = match mop {
                    // The counter: one number the adds build on.
                    Mop::Append(..) if self.workload == WorkloadKind::Counter => {
                        vec![base.and_then(|b| b.last().copied()).unwrap_or(0) + v]
                    }
                    Mop::Append(..) => {
                        let mut l = base.map(|b| b.as_ref().clone()).unwrap_or_default();
                        l.push(v);
                        l
                    }
                    _ => vec![v],
                };
                let new = Rc::new(new);
                if !a.writes.contains_key(&k) {
                    a.write_order.push(k);
                }
                if self.level == SimLevel::ReadUncommitted && a.held.contains(&k) {
                    self.db.dirty.insert(k, new.clone());
                }
                a.writes.insert(k, new);
                a.done.push(mop);
            }
            // `program` holds only the store's micro-ops.
            _ => return Step::Aborted("not a micro-op of the store"),
        }
        Step::Progressed
    }

    fn commit(&mut self, a: &mut SimTxn) -> Step {
        let checks =
            self.level == SimLevel::SnapshotIsolation && self.bug != Some(SimBug::LostUpdate);
        if checks {
            for k in &a.write_order {
                let pending = self.db.pending.get(k).is_some_and(|&t| t != a.age);
                if pending || self.db.latest_ts(*k) > a.snapshot {
                    return Step::Aborted("first committer wins");
                }
            }
        }
        if self.bug == Some(SimBug::NonAtomic) && a.write_order.len() > 1 {
            // Read locks go now; each write lock goes when its key is installed.
            let reads: Vec<Key> = a
                .held
                .iter()
                .copied()
                .filter(|k| !a.writes.contains_key(k))
                .collect();
            self.db.unlock_all(&reads, a.age);
            for k in &a.write_order {
                self.db.pending.insert(*k, a.age);
            }
            a.installing = Some(0);
            return self.step(a);
        }
        self.install_all(a);
        Step::Committed
    }

    fn install_all(&mut self, a: &SimTxn) {
        if a.write_order.is_empty() {
            return;
        }
        self.db.clock += 1;
        let ts = self.db.clock;
        for k in &a.write_order {
            self.db.install(*k, ts, a.writes[k].clone());
        }
    }

    /// `aborted-read` bug: an aborted transaction's appends and writes land on
    /// the latest committed state anyway (without its reads' stale bases, so
    /// that the bug plants dirty reads and nothing else).
    fn leak(&mut self, a: &SimTxn) {
        let mut leaked: Vec<(Key, Vec<Value>)> = vec![];
        for m in &a.done {
            match *m {
                Mop::Append(k, v) | Mop::Write(k, v) => {
                    match leaked.iter_mut().find(|(x, _)| *x == k) {
                        Some((_, l)) => l.push(v),
                        None => leaked.push((k, vec![v])),
                    }
                }
                _ => {}
            }
        }
        if leaked.is_empty() {
            return;
        }
        self.db.clock += 1;
        let ts = self.db.clock;
        for (k, vs) in leaked {
            let new = match self.workload {
                WorkloadKind::ListAppend
                | WorkloadKind::Set
                | WorkloadKind::SetFull
                | WorkloadKind::Comments => {
                    let mut l = self
                        .db
                        .latest(k)
                        .map(|b| b.as_ref().clone())
                        .unwrap_or_default();
                    l.extend(vs);
                    l
                }
                WorkloadKind::Counter => {
                    let base = self.db.latest(k).and_then(|b| b.last().copied());
                    vec![base.unwrap_or(0) + vs.iter().sum::<Value>()]
                }
                _ => vec![*vs.last().expect("one write at least")],
            };
            self.db.install(k, ts, Rc::new(new));
        }
    }

    /// Ends a transaction: releases its locks; for an abort under the
    /// `aborted-read` bug, installs its writes first.
    pub fn finish(&mut self, a: &SimTxn, committed: bool) {
        if !committed && self.bug == Some(SimBug::AbortedRead) {
            self.leak(a);
        }
        self.db.waits.remove(&a.age);
        self.db.unlock_all(&a.held, a.age);
    }
}

/// What a simulated run needs besides the generator.
#[derive(Clone, Debug)]
pub struct SimRun {
    pub level: SimLevel,
    pub bug: Option<SimBug>,
    pub processes: u32,
    /// Stop after this many transactions (the final read not counted).
    pub txns: Option<u64>,
    /// Stop after this much wall-clock time.
    pub time_limit: Option<Duration>,
}

/// Runs the simulated database to completion, recording every invocation
/// and completion, and ends with a read of every key touched.
pub fn run_sim(
    cfg: &SimRun,
    gen: &mut Generator,
    rec: &Recorder,
    progress: &Progress,
    stop: &dyn Fn() -> bool,
) {
    let seed = gen.options().seed;
    let workload = gen.options().workload;
    let mut sim = Sim::new(cfg.level, cfg.bug, workload, seed).with_model(gen.options().model);
    let mut sched = Rng::new(seed ^ 0xa5a5_a5a5_a5a5);
    let p = cfg.processes.max(1) as usize;
    let mut clients: Vec<Option<SimTxn>> = (0..p).map(|_| None).collect();
    let mut issued: u64 = 0;
    let mut time: u64 = 0;
    let started = Instant::now();
    let mut out_of_budget = false;
    let mut in_flight = 0usize;
    loop {
        if !out_of_budget {
            let timed_out = cfg.time_limit.is_some_and(|l| started.elapsed() >= l);
            if cfg.txns.is_some_and(|n| issued >= n) || timed_out || stop() {
                out_of_budget = true;
            }
        }
        if out_of_budget && in_flight == 0 {
            break;
        }
        let c = sched.below(p as u64) as usize;
        time += STEP_NS;
        rec.set_time(time);
        match clients[c].as_mut() {
            None => {
                if out_of_budget {
                    continue;
                }
                let txn = gen.next_txn_for(c as u32);
                rec.invoke(c as i64, &txn);
                progress.invoked();
                issued += 1;
                in_flight += 1;
                clients[c] = Some(sim.begin(txn));
            }
            Some(a) => {
                let outcome = match sim.step(a) {
                    Step::Progressed | Step::Blocked => continue,
                    Step::Committed => None,
                    Step::Aborted(why) => Some(why),
                };
                let a = clients[c].take().expect("client is in flight");
                in_flight -= 1;
                sim.finish(&a, outcome.is_none());
                gen.observe(
                    c as u32,
                    &a.invoked,
                    if outcome.is_none() {
                        Outcome::Ok
                    } else {
                        Outcome::Fail
                    },
                );
                match outcome {
                    None => {
                        rec.complete(c as i64, Outcome::Ok, &sim.result(&a), None);
                        progress.completed(Outcome::Ok);
                    }
                    Some(why) => {
                        rec.complete(c as i64, Outcome::Fail, &a.invoked, Some(why));
                        progress.completed(Outcome::Fail);
                    }
                }
            }
        }
    }
    // The final read: nothing else is running, so it cannot block or abort.
    let final_txn = gen.final_read();
    if final_txn.is_empty() {
        return;
    }
    time += STEP_NS;
    rec.set_time(time);
    progress.begin_final_read();
    rec.invoke(0, &final_txn);
    progress.invoked();
    let mut a = sim.begin(final_txn);
    // Read the latest state, not a stale serializable snapshot: the point of
    // the final read is that no acknowledged write goes unseen.
    a.snapshot = sim.db.clock;
    let outcome = loop {
        match sim.step(&mut a) {
            Step::Progressed => {}
            Step::Blocked => break Some("blocked with nothing else running"),
            Step::Committed => break None,
            Step::Aborted(why) => break Some(why),
        }
    };
    sim.finish(&a, outcome.is_none());
    time += STEP_NS;
    rec.set_time(time);
    match outcome {
        None => rec.complete(0, Outcome::Ok, &sim.result(&a), None),
        Some(why) => rec.complete(0, Outcome::Fail, &a.invoked, Some(why)),
    };
    progress.completed(if outcome.is_none() {
        Outcome::Ok
    } else {
        Outcome::Fail
    });
}
