//! Generates list-append histories with duplicate values from a simulated
//! database, for tests and benchmarks. The workload follows Appendix C of
//! Cai et al.: sessions run transactions of a fixed number of operations,
//! a share of reads, Zipfian key access, and on a chosen share of keys
//! append values drawn from a Zipfian distribution over a small domain (the
//! other keys get unique values).
//!
//! The database is one of:
//! - [`Db::Serializable`]: each transaction takes effect atomically at some
//!   instant between its invocation and completion (strictly serializable);
//! - [`Db::SnapshotIsolation`]: reads from a snapshot taken at invocation,
//!   first committer wins (a conflicting later committer fails);
//! - [`Db::LostUpdate`]: reads from a snapshot, no conflict check; each
//!   committed append rewrites the key as "my snapshot + my appends",
//!   losing concurrent appends.
//!
//! Output: Jepsen EDN, one op per line, invocations and completions.

use isolde::rng::{Rng, Zipf};
use std::fmt::Write as _;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Db {
    Serializable,
    SnapshotIsolation,
    LostUpdate,
}

/// Workload and database parameters.
#[derive(Clone, Debug)]
pub struct Params {
    pub sessions: u32,
    /// Total transactions (spread over the sessions).
    pub txns: u32,
    pub ops_per_txn: u32,
    pub keys: u32,
    /// Probability that an operation is a read.
    pub read_fraction: f64,
    /// Share of keys whose appended values are drawn from `values` (and so
    /// repeat); the others get unique values.
    pub dup_key_fraction: f64,
    pub values: u32,
    pub value_theta: f64,
    pub key_theta: f64,
    /// Probability that a completion is lost (`info`; it committed or not).
    pub info_rate: f64,
    /// Probability that a transaction aborts by itself (`fail`).
    pub abort_rate: f64,
    pub db: Db,
    pub seed: u64,
}

impl Params {
    /// Figure 3 (left): 20 sessions, 20 ops per transaction, 5,000 keys, 50%
    /// reads, half the keys duplicated, values Zipf θ=0.5 over 100.
    pub fn paper_left(txns: u32, db: Db, seed: u64) -> Params {
        Params {
            sessions: 20,
            txns,
            ops_per_txn: 20,
            keys: 5000,
            read_fraction: 0.5,
            dup_key_fraction: 0.5,
            values: 100,
            value_theta: 0.5,
            key_theta: 0.8,
            info_rate: 0.0,
            abort_rate: 0.0,
            db,
            seed,
        }
    }

    /// Figure 3 (right): 100 sessions × 100 transactions of 8 ops, 5,000
    /// keys, 50% reads, values Zipf θ=1.5 over 100, a given duplicate share.
    pub fn paper_right(dup_key_fraction: f64, db: Db, seed: u64) -> Params {
        Params {
            sessions: 100,
            txns: 10_000,
            ops_per_txn: 8,
            keys: 5000,
            read_fraction: 0.5,
            dup_key_fraction,
            values: 100,
            value_theta: 1.5,
            key_theta: 0.8,
            info_rate: 0.0,
            abort_rate: 0.0,
            db,
            seed,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Read(u32),
    Append(u32, u64),
}

/// What one key looks like over time: its versions as (commit number, list).
#[derive(Clone, Debug, Default)]
struct Store {
    /// Per key: versions, newest last.
    versions: Vec<Vec<(u64, Vec<u64>)>>,
    commits: u64,
}

impl Store {
    fn current(&self, k: u32) -> &[u64] {
        self.versions[k as usize]
            .last()
            .map(|v| v.1.as_slice())
            .unwrap_or(&[])
    }
    /// The list as of `snap` commits.
    fn at(&self, k: u32, snap: u64) -> &[u64] {
        let vs = &self.versions[k as usize];
        let i = vs.partition_point(|v| v.0 <= snap);
        if i == 0 {
            &[]
        } else {
            &vs[i - 1].1
        }
    }
    fn last_commit(&self, k: u32) -> u64 {
        self.versions[k as usize].last().map(|v| v.0).unwrap_or(0)
    }
    fn set(&mut self, k: u32, list: Vec<u64>) {
        let c = self.commits;
        let vs = &mut self.versions[k as usize];
        match vs.last_mut() {
            Some(v) if v.0 == c => v.1 = list,
            _ => vs.push((c, list)),
        }
    }
}

struct Running {
    txn: usize,
    snapshot: u64,
    executed: bool,
}

/// Generates a history as EDN text.
pub fn generate(p: &Params) -> String {
    generate_with_truth(p).0
}

/// [`generate`], plus the order in which the database applied the
/// transactions that took effect (by completion `:index`): a witness.
pub fn generate_with_truth(p: &Params) -> (String, Vec<u64>) {
    let mut rng = Rng::new(p.seed ^ 0xD1B5_4A32_D192_ED03);
    let kz = Zipf::new(u64::from(p.keys), p.key_theta);
    let vz = Zipf::new(u64::from(p.values), p.value_theta);
    // Which keys repeat values: a fixed pseudo-random share, not by popularity.
    let dup: Vec<bool> = (0..p.keys)
        .map(|k| {
            let mut r = Rng::new(p.seed.wrapping_mul(31).wrapping_add(u64::from(k)));
            r.unit() < p.dup_key_fraction
        })
        .collect();
    let mut counter: Vec<u64> = vec![0; p.keys as usize];
    let txns: Vec<Vec<Op>> = (0..p.txns)
        .map(|_| {
            (0..p.ops_per_txn)
                .map(|_| {
                    let k = kz.sample(&mut rng) as u32;
                    if rng.chance(p.read_fraction) {
                        Op::Read(k)
                    } else if dup[k as usize] {
                        Op::Append(k, vz.sample(&mut rng) + 1)
                    } else {
                        counter[k as usize] += 1;
                        Op::Append(k, counter[k as usize])
                    }
                })
                .collect()
        })
        .collect();
    let sessions = p.sessions.max(1) as usize;
    let mut queues: Vec<Vec<usize>> = vec![Vec::new(); sessions];
    for i in (0..txns.len()).rev() {
        queues[i % sessions].push(i);
    }
    let mut store = Store {
        versions: vec![Vec::new(); p.keys as usize],
        commits: 0,
    };
    let mut running: Vec<Option<Running>> = (0..sessions).map(|_| None).collect();
    let mut results: Vec<Option<Vec<Option<Vec<u64>>>>> = vec![None; txns.len()];
    let mut out = String::new();
    let mut applied: Vec<usize> = Vec::new();
    let mut index = 0u64;
    let mut time = 0u64;
    let mut completion_index: Vec<u64> = vec![0; txns.len()];
    let mut live: Vec<usize> = (0..sessions).filter(|&s| !queues[s].is_empty()).collect();
    while !live.is_empty() {
        time += 1000;
        let li = rng.below(live.len() as u64) as usize;
        let s = live[li];
        if p.db == Db::Serializable {
            // A running transaction takes effect at some instant of its interval.
            for r in running.iter_mut().flatten() {
                if !r.executed && rng.chance(0.3) {
                    r.executed = true;
                    results[r.txn] = Some(execute(&txns[r.txn], &mut store));
                    applied.push(r.txn);
                }
            }
        }
        match running[s].take() {
            None => {
                let t = queues[s].pop().expect("live sessions have work");
                write_op(&mut out, index, time, s, "invoke", &txns[t], None);
                index += 1;
                running[s] = Some(Running {
                    txn: t,
                    snapshot: store.commits,
                    executed: false,
                });
            }
            Some(r) => {
                let t = r.txn;
                let info = rng.chance(p.info_rate);
                let abort = rng.chance(p.abort_rate);
                let committed = match p.db {
                    Db::Serializable => {
                        if abort && !r.executed {
                            false
                        } else {
                            if !r.executed && (!info || rng.chance(0.5)) {
                                results[t] = Some(execute(&txns[t], &mut store));
                                applied.push(t);
                            }
                            results[t].is_some()
                        }
                    }
                    Db::SnapshotIsolation | Db::LostUpdate => {
                        let conflict = p.db == Db::SnapshotIsolation
                            && txns[t].iter().any(|o| matches!(o, Op::Append(k, _) if store.last_commit(*k) > r.snapshot));
                        if abort || conflict || (info && rng.chance(0.5)) {
                            false
                        } else {
                            results[t] =
                                Some(commit_snapshot(&txns[t], &mut store, r.snapshot, p.db));
                            applied.push(t);
                            true
                        }
                    }
                };
                let kind = if info {
                    "info"
                } else if committed {
                    "ok"
                } else {
                    "fail"
                };
                let reads = if kind == "ok" {
                    results[t].as_ref()
                } else {
                    None
                };
                write_op(&mut out, index, time, s, kind, &txns[t], reads);
                completion_index[t] = index;
                index += 1;
                if queues[s].is_empty() {
                    live.swap_remove(li);
                }
            }
        }
    }
    let truth = applied.iter().map(|&t| completion_index[t]).collect();
    (out, truth)
}

/// Runs a transaction atomically on the current state; its reads.
fn execute(ops: &[Op], store: &mut Store) -> Vec<Option<Vec<u64>>> {
    store.commits += 1;
    let mut reads = Vec::with_capacity(ops.len());
    for &o in ops {
        match o {
            Op::Read(k) => reads.push(Some(store.current(k).to_vec())),
            Op::Append(k, v) => {
                let mut l = store.current(k).to_vec();
                l.push(v);
                store.set(k, l);
                reads.push(None);
            }
        }
    }
    reads
}

/// Commits a transaction that read from snapshot `snap`: reads see the
/// snapshot plus its own appends; appends extend the current list (SI) or
/// rewrite it from the snapshot (lost update).
fn commit_snapshot(ops: &[Op], store: &mut Store, snap: u64, db: Db) -> Vec<Option<Vec<u64>>> {
    let mut own: Vec<(u32, Vec<u64>)> = Vec::new();
    let mut reads = Vec::with_capacity(ops.len());
    for &o in ops {
        match o {
            Op::Read(k) => {
                let mut l = store.at(k, snap).to_vec();
                if let Some((_, b)) = own.iter().find(|(kk, _)| *kk == k) {
                    l.extend_from_slice(b);
                }
                reads.push(Some(l));
            }
            Op::Append(k, v) => {
                match own.iter_mut().find(|(kk, _)| *kk == k) {
                    Some((_, b)) => b.push(v),
                    None => own.push((k, vec![v])),
                }
                reads.push(None);
            }
        }
    }
    store.commits += 1;
    for (k, b) in own {
        let mut l = match db {
            Db::LostUpdate => store.at(k, snap).to_vec(),
            _ => store.current(k).to_vec(),
        };
        l.extend(b);
        store.set(k, l);
    }
    reads
}

fn write_op(
    out: &mut String,
    index: u64,
    time: u64,
    process: usize,
    kind: &str,
    ops: &[Op],
    reads: Option<&Vec<Option<Vec<u64>>>>,
) {
    let _ = write!(
        out,
        "{{:type :{kind}, :f :txn, :process {process}, :time {time}, :index {index}, :value ["
    );
    for (i, o) in ops.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        match *o {
            Op::Append(k, v) => {
                let _ = write!(out, "[:append {k} {v}]");
            }
            Op::Read(k) => match reads.and_then(|r| r[i].as_ref()) {
                Some(l) => {
                    let _ = write!(out, "[:r {k} [");
                    for (j, v) in l.iter().enumerate() {
                        if j > 0 {
                            out.push(' ');
                        }
                        let _ = write!(out, "{v}");
                    }
                    out.push_str("]]");
                }
                None => {
                    let _ = write!(out, "[:r {k} nil]");
                }
            },
        }
    }
    out.push_str("]}\n");
}
