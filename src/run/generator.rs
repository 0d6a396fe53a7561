//! The transaction generator: random reads and writes over a moving window of
//! hot keys, the way Elle's `wr-txns` generator works.
//!
//! `key_count` slots each hold one active key. Every key gets a write budget
//! (1 + a Zipf draw below `max_writes_per_key`, so that keys retire at
//! different times); when a write picks a key whose budget is spent, that slot
//! gets a fresh key (one more than the largest key so far) and the pick is
//! redone. Values written to a key count up from 1, so they are unique per
//! key, except on keys chosen for duplicates (`duplicates` of them), which
//! draw values from `[1, value_domain]`.
//!
//! The model workloads (bank, counter, set, set-full, long-fork, comments,
//! sequential, cas-register, mutex) have generators of their own, the shapes
//! of Jepsen's workloads; see [`Generator::next_txn_for`]. Sequential and
//! mutex keep state per worker, which [`Generator::observe`] updates with
//! each op's outcome.

use super::{Key, ModelParams, Mop, Txn, Value, WorkloadKind};
use crate::history::Outcome;
use crate::rng::{Dist, Rng, Sampler, Zipf};

/// Everything that shapes the generated transactions.
#[derive(Clone, Debug)]
pub struct GenOptions {
    pub workload: WorkloadKind,
    pub key_count: u32,
    pub min_txn_length: u32,
    pub max_txn_length: u32,
    pub max_writes_per_key: u32,
    /// Probability that a micro-op is a read.
    pub read_ratio: f64,
    pub seed: u64,
    /// Fraction of keys whose values come from a small domain.
    pub duplicates: f64,
    pub value_domain: u32,
    pub value_dist: Dist,
    pub key_dist: Dist,
    /// The model workloads' shape.
    pub model: ModelParams,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            workload: WorkloadKind::ListAppend,
            key_count: 10,
            min_txn_length: 1,
            max_txn_length: 4,
            max_writes_per_key: 256,
            read_ratio: 0.5,
            seed: 0,
            duplicates: 0.0,
            value_domain: 5,
            value_dist: Dist::Uniform,
            key_dist: Dist::Uniform,
            model: ModelParams::default(),
        }
    }
}

impl GenOptions {
    /// Rejects option combinations that cannot generate anything sensible.
    pub fn validate(&self) -> Result<(), String> {
        if self.key_count == 0 {
            return Err("--key-count must be at least 1".into());
        }
        if self.min_txn_length == 0 || self.min_txn_length > self.max_txn_length {
            return Err(format!(
                "need 1 <= --min-txn-length <= --max-txn-length, got {} and {}",
                self.min_txn_length, self.max_txn_length
            ));
        }
        if self.max_writes_per_key == 0 {
            return Err("--max-writes-per-key must be at least 1".into());
        }
        if !(0.0..=1.0).contains(&self.read_ratio) {
            return Err(format!(
                "--read-ratio must be in [0, 1], got {}",
                self.read_ratio
            ));
        }
        if !(0.0..=1.0).contains(&self.duplicates) {
            return Err(format!(
                "--duplicates must be in [0, 1], got {}",
                self.duplicates
            ));
        }
        if self.value_domain == 0 {
            return Err("--value-domain must be at least 1".into());
        }
        if self.workload.model().is_some() {
            self.model.validate()?;
        }
        Ok(())
    }
}

/// One slot of the active-key window.
#[derive(Clone, Debug)]
struct Slot {
    key: Key,
    writes: u32,
    budget: u32,
    /// Draws values from the small domain rather than counting up.
    duplicates: bool,
}

/// Generates transactions; the same options (seed included) give the same
/// sequence of transactions.
#[derive(Clone, Debug)]
pub struct Generator {
    opts: GenOptions,
    rng: Rng,
    slots: Vec<Slot>,
    next_key: Key,
    key_sampler: Sampler,
    value_sampler: Sampler,
    budget_sampler: Zipf,
    /// Keys that appeared in some transaction, in order of first use.
    touched: Vec<Key>,
    touched_set: rustc_hash::FxHashSet<Key>,
    /// Keys that left the window: writes so far and whether values repeat
    /// (for [`Generator::with_fresh_values`]).
    retired: rustc_hash::FxHashMap<Key, (u32, bool)>,
    /// set, set-full: the next element; long-fork, sequential: the next key
    /// to write; comments: the next id.
    next_fresh: Value,
    /// long-fork: keys written whose group has not been read since.
    unread: std::collections::VecDeque<Key>,
    /// long-fork: the last keys written (at most [`ACTIVE_GROUPS`]);
    /// sequential: the last keys begun.
    recent: std::collections::VecDeque<Key>,
    /// sequential: per worker, the key it is inserting and its next subkey.
    writing: rustc_hash::FxHashMap<u32, (Key, u32)>,
    /// mutex: the workers whose next op is a release.
    releasing: rustc_hash::FxHashSet<u32>,
}

/// long-fork: how many recently written keys a read of "another active
/// group" picks from (Jepsen's: one per worker thread).
const ACTIVE_GROUPS: usize = 10;

impl Generator {
    pub fn new(opts: GenOptions) -> Generator {
        let mut rng = Rng::new(opts.seed);
        let budget_sampler = Zipf::new(opts.max_writes_per_key.max(1) as u64, 1.0);
        let mut g = Generator {
            key_sampler: Sampler::new(opts.key_dist, opts.key_count as u64),
            value_sampler: Sampler::new(opts.value_dist, opts.value_domain as u64),
            budget_sampler,
            slots: Vec::with_capacity(opts.key_count as usize),
            next_key: 0,
            touched: Vec::new(),
            touched_set: Default::default(),
            retired: Default::default(),
            next_fresh: 0,
            unread: Default::default(),
            recent: Default::default(),
            writing: Default::default(),
            releasing: Default::default(),
            rng: rng.fork(),
            opts,
        };
        for _ in 0..g.opts.key_count {
            let slot = g.fresh_slot();
            g.slots.push(slot);
        }
        g
    }

    pub fn options(&self) -> &GenOptions {
        &self.opts
    }

    fn fresh_slot(&mut self) -> Slot {
        let key = self.next_key;
        self.next_key += 1;
        Slot {
            key,
            writes: 0,
            budget: 1 + self.budget_sampler.sample(&mut self.rng) as u32,
            duplicates: self.opts.duplicates > 0.0 && self.rng.chance(self.opts.duplicates),
        }
    }

    /// The next transaction (reads carry `None`), for worker 0.
    pub fn next_txn(&mut self) -> Txn {
        self.next_txn_for(0)
    }

    /// The next transaction for worker `worker` (reads carry `None`).
    ///
    /// The models, after Jepsen's workloads (`read_ratio` is the chance of a
    /// read where a workload mixes reads in):
    /// - bank: a read of every balance, or a transfer of 1..=max-transfer
    ///   between two distinct random accounts (bank.clj's `diff-transfer`);
    /// - counter: a read, or an add of 1..=5;
    /// - set: adds of 0, 1, 2, ... only (the run's final read reads the set);
    /// - set-full: adds of 0, 1, 2, ... and reads of the whole set;
    /// - long-fork: `[[w k 1]]` to a fresh key k, or a read of a group of
    ///   `group_size` keys (k - k mod n ..< + n, shuffled) holding a key
    ///   written earlier: half the time the oldest group not read since its
    ///   write, else (or when none) a random recent group, or a write when no
    ///   key was written yet. Jepsen keeps this state per worker thread
    ///   (a worker reads the group it just wrote); the generator here is
    ///   shared, so it keeps one queue;
    /// - comments: writes of ids 0, 1, 2, ... (each to table id mod
    ///   key-count) and reads of every table;
    /// - sequential: a worker inserts the subkeys 0..key-count of a fresh
    ///   key one op at a time, in order, and starts a new key when done or
    ///   when an insert did not succeed (a later subkey must never follow
    ///   one that may be missing); reads are of a recently begun key, its
    ///   subkeys latest first;
    /// - cas-register: reads, or (evenly) writes of a value below
    ///   value-domain and cas of two such values;
    /// - mutex: a worker acquires, then (once its acquire did not fail)
    ///   releases.
    pub fn next_txn_for(&mut self, worker: u32) -> Txn {
        match self.opts.workload {
            WorkloadKind::ListAppend | WorkloadKind::RwRegister => self.next_elle_txn(),
            WorkloadKind::Sequential => vec![self.next_sequential(worker)],
            WorkloadKind::Mutex if self.releasing.contains(&worker) => vec![Mop::Release(worker)],
            WorkloadKind::Mutex => vec![Mop::Acquire(worker)],
            _ => self.next_model_txn(),
        }
    }

    /// Learns how worker `worker`'s op `txn` ended (sequential and mutex
    /// choose a worker's next op by it).
    pub fn observe(&mut self, worker: u32, txn: &[Mop], outcome: Outcome) {
        match (txn, outcome) {
            ([Mop::SeqWrite(..)], Outcome::Fail | Outcome::Info) => {
                self.writing.remove(&worker);
            }
            // The lock may be ours: try to give it back.
            ([Mop::Acquire(_)], Outcome::Ok | Outcome::Info)
            | ([Mop::Release(_)], Outcome::Info) => {
                self.releasing.insert(worker);
            }
            ([Mop::Acquire(_) | Mop::Release(_)], _) => {
                self.releasing.remove(&worker);
            }
            _ => {}
        }
    }

    fn next_sequential(&mut self, worker: u32) -> Mop {
        if !self.recent.is_empty() && self.rng.chance(self.opts.read_ratio) {
            let i = self.rng.below(self.recent.len() as u64) as usize;
            return Mop::SeqRead(self.recent[i], None);
        }
        let (k, i) = match self.writing.get(&worker) {
            Some(&at) => at,
            None => {
                let k = self.fresh() as Key;
                self.recent.push_back(k);
                if self.recent.len() > ACTIVE_GROUPS {
                    self.recent.pop_front();
                }
                (k, 0)
            }
        };
        if i + 1 < self.opts.model.key_count {
            self.writing.insert(worker, (k, i + 1));
        } else {
            self.writing.remove(&worker);
        }
        Mop::SeqWrite(k, i)
    }

    fn next_model_txn(&mut self) -> Txn {
        let m = self.opts.model;
        let read = self.rng.chance(self.opts.read_ratio);
        let op = match self.opts.workload {
            WorkloadKind::Bank if read => Mop::ReadBalances(None),
            WorkloadKind::Bank => {
                let n = m.accounts as u64;
                let from = self.rng.below(n);
                let mut to = self.rng.below(n - 1);
                if to >= from {
                    to += 1;
                }
                let amount = 1 + self.rng.below(m.max_transfer as u64) as Value;
                Mop::Transfer { from, to, amount }
            }
            WorkloadKind::Counter if read => Mop::ReadCounter(None),
            WorkloadKind::Counter => Mop::Add(1 + self.rng.below(5) as Value),
            WorkloadKind::SetFull if read => Mop::ReadSet(None),
            WorkloadKind::Set | WorkloadKind::SetFull => Mop::Add(self.fresh()),
            WorkloadKind::LongFork => return self.next_long_fork(),
            WorkloadKind::Comments if read => Mop::ReadIds(None),
            WorkloadKind::Comments => Mop::WriteId(self.fresh()),
            WorkloadKind::CasRegister if read => Mop::RegRead(None),
            WorkloadKind::CasRegister => {
                let d = self.opts.value_domain as u64;
                if self.rng.chance(0.5) {
                    Mop::RegWrite(self.rng.below(d) as Value)
                } else {
                    let old = self.rng.below(d) as Value;
                    let new = self.rng.below(d) as Value;
                    Mop::RegCas { old, new }
                }
            }
            WorkloadKind::ListAppend
            | WorkloadKind::RwRegister
            | WorkloadKind::Sequential
            | WorkloadKind::Mutex => unreachable!("generated elsewhere"),
        };
        vec![op]
    }

    /// The next unused element or key.
    fn fresh(&mut self) -> Value {
        self.next_fresh += 1;
        self.next_fresh - 1
    }

    fn next_long_fork(&mut self) -> Txn {
        let k = if !self.unread.is_empty() && self.rng.chance(0.5) {
            self.unread.pop_front()
        } else if !self.recent.is_empty() && self.rng.chance(0.5) {
            let i = self.rng.below(self.recent.len() as u64) as usize;
            Some(self.recent[i])
        } else {
            None
        };
        match k {
            Some(k) => self.group_read(k),
            None => vec![self.long_fork_write()],
        }
    }

    /// `[w k 1]` to a fresh key, remembered for group reads.
    fn long_fork_write(&mut self) -> Mop {
        let k = self.fresh() as Key;
        self.unread.push_back(k);
        self.recent.push_back(k);
        if self.recent.len() > ACTIVE_GROUPS {
            self.recent.pop_front();
        }
        Mop::Write(k, 1)
    }

    /// A read of the group of `k`, in shuffled order.
    fn group_read(&mut self, k: Key) -> Txn {
        let n = self.opts.model.group_size as Key;
        let low = k - k % n;
        let mut keys: Vec<Key> = (low..low + n).collect();
        for i in (1..keys.len()).rev() {
            let j = self.rng.below(i as u64 + 1) as usize;
            keys.swap(i, j);
        }
        keys.into_iter().map(|k| Mop::Read(k, None)).collect()
    }

    fn next_elle_txn(&mut self) -> Txn {
        let span = (self.opts.max_txn_length - self.opts.min_txn_length) as u64 + 1;
        let len = self.opts.min_txn_length as u64 + self.rng.below(span);
        let mut txn = Vec::with_capacity(len as usize);
        while (txn.len() as u64) < len {
            let read = self.rng.chance(self.opts.read_ratio);
            let i = self.key_sampler.sample(&mut self.rng) as usize;
            if read {
                let k = self.slots[i].key;
                self.touch(k);
                txn.push(Mop::Read(k, None));
                continue;
            }
            if self.slots[i].writes >= self.slots[i].budget {
                // Retire this key and pick again, as Elle does.
                let fresh = self.fresh_slot();
                let old = std::mem::replace(&mut self.slots[i], fresh);
                self.retired.insert(old.key, (old.writes, old.duplicates));
                continue;
            }
            let slot = &mut self.slots[i];
            slot.writes += 1;
            let (k, dup, count) = (slot.key, slot.duplicates, slot.writes);
            let v: Value = if dup {
                1 + self.value_sampler.sample(&mut self.rng) as Value
            } else {
                count as Value
            };
            self.touch(k);
            txn.push(match self.opts.workload {
                WorkloadKind::ListAppend => Mop::Append(k, v),
                _ => Mop::Write(k, v),
            });
        }
        txn
    }

    /// `txn` (a retry of a failed attempt) with every written value
    /// replaced by a fresh one for its key: a value written by both a failed
    /// and a committed attempt would make a read of it look like an aborted
    /// read.
    /// A model op keeps its values, except that a set element becomes a new
    /// one and a long-fork write goes to a new key (each is written once).
    pub fn with_fresh_values(&mut self, txn: &Txn) -> Txn {
        let w = self.opts.workload;
        txn.iter()
            .map(|m| match *m {
                Mop::Add(_) if matches!(w, WorkloadKind::Set | WorkloadKind::SetFull) => {
                    Mop::Add(self.fresh())
                }
                Mop::WriteId(_) => Mop::WriteId(self.fresh()),
                Mop::Write(..) if w == WorkloadKind::LongFork => self.long_fork_write(),
                Mop::Append(k, _) => Mop::Append(k, self.fresh_value(k)),
                Mop::Write(k, _) => Mop::Write(k, self.fresh_value(k)),
                ref read => read.clone(),
            })
            .collect()
    }

    /// The next value for key `k`, in or out of the window. A key in the
    /// window may go over its write budget by its retries.
    fn fresh_value(&mut self, k: Key) -> Value {
        let (writes, dup) = match self.slots.iter_mut().find(|s| s.key == k) {
            Some(slot) => (&mut slot.writes, slot.duplicates),
            None => {
                let (w, d) = self.retired.entry(k).or_insert((0, false));
                (w, *d)
            }
        };
        *writes += 1;
        let count = *writes;
        if dup {
            1 + self.value_sampler.sample(&mut self.rng) as Value
        } else {
            count as Value
        }
    }

    fn touch(&mut self, k: Key) {
        if self.touched_set.insert(k) {
            self.touched.push(k);
        }
    }

    /// Every key some generated transaction used, ascending.
    pub fn touched_keys(&self) -> Vec<Key> {
        let mut ks = self.touched.clone();
        ks.sort_unstable();
        ks
    }

    /// The final transaction of a run: a read of every key touched; for the
    /// models, their read (none for long-fork, whose reads are its groups,
    /// nor for comments, sequential, cas-register and mutex, whose
    /// checkers judge the reads during the run).
    pub fn final_read(&self) -> Txn {
        match self.opts.workload {
            WorkloadKind::ListAppend | WorkloadKind::RwRegister => {}
            WorkloadKind::Bank => return vec![Mop::ReadBalances(None)],
            WorkloadKind::Counter => return vec![Mop::ReadCounter(None)],
            WorkloadKind::Set | WorkloadKind::SetFull => return vec![Mop::ReadSet(None)],
            WorkloadKind::LongFork
            | WorkloadKind::Comments
            | WorkloadKind::Sequential
            | WorkloadKind::CasRegister
            | WorkloadKind::Mutex => return vec![],
        }
        self.touched_keys()
            .into_iter()
            .map(|k| Mop::Read(k, None))
            .collect()
    }

    /// The keys currently in the window, by slot.
    pub fn active_keys(&self) -> Vec<Key> {
        self.slots.iter().map(|s| s.key).collect()
    }
}
