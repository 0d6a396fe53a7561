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

use super::{Key, Mop, Txn, Value, WorkloadKind};
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
}

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

    /// The next transaction (reads carry `None`).
    pub fn next_txn(&mut self) -> Txn {
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
                WorkloadKind::RwRegister => Mop::Write(k, v),
            });
        }
        txn
    }

    /// `txn` (a retry of a failed attempt) with every written value
    /// replaced by a fresh one for its key: a value written by both a failed
    /// and a committed attempt would make a read of it look like an aborted
    /// read.
    pub fn with_fresh_values(&mut self, txn: &Txn) -> Txn {
        txn.iter()
            .map(|m| match *m {
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

    /// The final transaction of a run: a read of every key touched.
    pub fn final_read(&self) -> Txn {
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
