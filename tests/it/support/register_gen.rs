//! The register workload of issue 17, for tests and `bench/registers.rs`:
//! 10 clients, a moving window of 20 keys, 1-6 micro-ops per transaction,
//! half of them reads, 5% aborts, 1% `info` (half of which took effect);
//! values unique per key, or drawn from 1..=3 (repeated). A simulated
//! database runs them:
//! - `Strict`: each transaction takes effect atomically at its completion;
//! - `Serializable`: the same, but one in ten takes effect some steps after
//!   it was acknowledged (real time broken, a serial order kept);
//! - `Snapshot`: reads from the snapshot at invocation, writes at commit,
//!   first committer wins (a conflicting transaction fails).
//!
//! `broken` percent of committed reads then return the key's previous
//! version instead (a stale read): the broken variants.

use isolde::rng::Rng;
use std::collections::HashMap;
use std::fmt::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Db {
    Strict,
    Serializable,
    Snapshot,
}

#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub txns: usize,
    pub db: Db,
    pub repeated: bool,
    /// Percent of committed reads made stale.
    pub broken: u64,
    pub seed: u64,
}

const CLIENTS: usize = 10;
const WINDOW: u64 = 20;

struct Running {
    /// (is write, key, value); reads get their value when they run.
    mops: Vec<(bool, u64, Option<u64>)>,
    snapshot: u64,
    fate: u64,
    /// Serializable: steps to wait after the acknowledgement.
    delay: u64,
}

/// Runs one transaction's micro-ops against the state after `snap`
/// commits (reads get values; `broken` percent of them stale); its writes.
fn execute(
    rng: &mut Rng,
    versions: &HashMap<u64, Vec<(u64, u64)>>,
    mops: &mut [(bool, u64, Option<u64>)],
    snap: u64,
    broken: u64,
) -> HashMap<u64, u64> {
    let mut own: HashMap<u64, u64> = HashMap::new();
    for m in mops {
        if m.0 {
            own.insert(m.1, m.2.expect("writes have values"));
            continue;
        }
        let stale = rng.below(100) < broken;
        m.2 = own.get(&m.1).copied().or_else(|| {
            let vs = versions.get(&m.1).map(Vec::as_slice).unwrap_or(&[]);
            let at = vs.partition_point(|x| x.0 <= snap);
            let at = if stale { at.saturating_sub(1) } else { at };
            (at > 0).then(|| vs[at - 1].1)
        });
    }
    own
}

fn text(mops: &[(bool, u64, Option<u64>)], invocation: bool) -> String {
    let mut s = String::from("[");
    for (i, &(w, k, v)) in mops.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        let f = if w { ":w" } else { ":r" };
        match v {
            Some(v) if w || !invocation => {
                let _ = write!(s, "[{f} {k} {v}]");
            }
            _ => {
                let _ = write!(s, "[{f} {k} nil]");
            }
        }
    }
    s.push(']');
    s
}

fn apply(versions: &mut HashMap<u64, Vec<(u64, u64)>>, commits: &mut u64, own: HashMap<u64, u64>) {
    *commits += 1;
    let mut ws: Vec<(u64, u64)> = own.into_iter().collect();
    ws.sort_unstable();
    for (k, v) in ws {
        versions.entry(k).or_default().push((*commits, v));
    }
}

/// A history as Jepsen EDN lines.
pub fn generate(p: &Params) -> String {
    let mut rng = Rng::new(p.seed);
    // Per key: versions (commit number, value), oldest first.
    let mut versions: HashMap<u64, Vec<(u64, u64)>> = HashMap::new();
    let mut next_value: HashMap<u64, u64> = HashMap::new();
    let mut commits = 0u64;
    let mut running: Vec<Option<Running>> = (0..CLIENTS).map(|_| None).collect();
    let mut process: Vec<u64> = (0..CLIENTS as u64).collect();
    let mut next_process = CLIENTS as u64;
    // Serializable: acknowledged transactions that take effect later:
    // (step, line, micro-ops, process, type).
    #[allow(clippy::type_complexity)]
    let mut pending: Vec<(u64, usize, Vec<(bool, u64, Option<u64>)>, u64, &str)> = Vec::new();
    let mut lines: Vec<String> = Vec::with_capacity(2 * p.txns);
    let (mut started, mut step) = (0usize, 0u64);
    let line = |index: usize, ty: &str, process: u64, value: &str| {
        format!("{{:index {index}, :time {index}, :type :{ty}, :process {process}, :f :txn, :value {value}}}")
    };
    while started < p.txns || running.iter().any(Option::is_some) || !pending.is_empty() {
        step += 1;
        let mut i = 0;
        while i < pending.len() {
            if pending[i].0 > step {
                i += 1;
                continue;
            }
            let (_, at, mut mops, proc_, ty) = pending.remove(i);
            let own = execute(&mut rng, &versions, &mut mops, commits, p.broken);
            apply(&mut versions, &mut commits, own);
            lines[at] = line(at, ty, proc_, &text(&mops, ty != "ok"));
        }
        let c = rng.below(CLIENTS as u64) as usize;
        match running[c].take() {
            None if started < p.txns => {
                started += 1;
                let base = started as u64 / 10;
                let len = 1 + rng.below(6);
                let mops: Vec<(bool, u64, Option<u64>)> = (0..len)
                    .map(|_| {
                        let k = base + rng.below(WINDOW);
                        if rng.chance(0.5) {
                            (false, k, None)
                        } else {
                            let v = if p.repeated {
                                1 + rng.below(3)
                            } else {
                                let n = next_value.entry(k).or_insert(0);
                                *n += 1;
                                *n
                            };
                            (true, k, Some(v))
                        }
                    })
                    .collect();
                let at = lines.len();
                lines.push(line(at, "invoke", process[c], &text(&mops, true)));
                running[c] = Some(Running {
                    mops,
                    snapshot: commits,
                    fate: rng.below(100),
                    delay: if p.db == Db::Serializable && rng.chance(0.1) {
                        1 + rng.below(30)
                    } else {
                        0
                    },
                });
            }
            None => {}
            Some(mut r) => {
                let conflict = p.db == Db::Snapshot
                    && r.mops.iter().any(|m| {
                        m.0 && versions
                            .get(&m.1)
                            .and_then(|vs| vs.last())
                            .is_some_and(|x| x.0 > r.snapshot)
                    });
                let (ty, applied) = match r.fate {
                    _ if conflict => ("fail", false),
                    0..=4 => ("fail", false),
                    5 => ("info", rng.chance(0.5)),
                    _ => ("ok", true),
                };
                let at = lines.len();
                lines.push(String::new());
                if applied && r.delay > 0 {
                    pending.push((step + r.delay, at, r.mops, process[c], ty));
                } else {
                    let snap = if p.db == Db::Snapshot {
                        r.snapshot
                    } else {
                        commits
                    };
                    let own = execute(&mut rng, &versions, &mut r.mops, snap, p.broken);
                    if applied {
                        apply(&mut versions, &mut commits, own);
                    }
                    lines[at] = line(at, ty, process[c], &text(&r.mops, ty != "ok"));
                }
                if ty == "info" {
                    process[c] = next_process;
                    next_process += 1;
                }
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}
