//! Generates realistic list-append histories for benchmarks: a simulated
//! database run by several concurrent client processes, written as Jepsen
//! EDN or elle-cli JSON lines, invocations and completions interleaved.
//!
//! ```text
//! cargo run --release --example gen_history -- --txns 100000 --kind valid --format edn --seed 1 > h.edn
//! ```
//!
//! Kinds (each transaction runs under one isolation discipline):
//! - `valid`: every transaction takes effect atomically at a point between
//!   its invocation and its completion: strict serializable, so the checker
//!   must build and search the whole graph and find nothing.
//! - `g2`: snapshot isolation (reads from the snapshot taken at invocation,
//!   first committer wins): write skew, so many G2-item cycles.
//! - `lost-update`: read-modify-write transactions that read a snapshot and
//!   append without any conflict check: many lost updates.
//! - `mixed`: mostly serializable, with some snapshot-isolation and
//!   lost-update transactions.
//!
//! Keys move through a window of `--keys` hot keys; a key that has had
//! `--writes-per-key` appends is retired and a fresh key takes its place, as
//! in Elle's generator, so reads return lists of moderate length. A few
//! transactions fail (no effect) or crash (`:info`, effect unknown, and the
//! process is replaced, as Jepsen does). The output is a pure function of
//! the arguments.

use isolde::rng::Rng;
use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};

/// The executions the generator can simulate.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Valid,
    G2,
    LostUpdate,
    Mixed,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Edn,
    Json,
}

/// How one transaction is executed by the simulated database.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Discipline {
    /// Atomic at commit: reads see the current state, no anomaly possible.
    Serializable,
    /// Reads from the invocation-time snapshot; aborts if a key it appends
    /// to was committed to since then.
    Snapshot,
    /// Reads from the snapshot, appends without a conflict check.
    NoConflictCheck,
}

struct Args {
    txns: u64,
    kind: Kind,
    format: Format,
    seed: u64,
    processes: u32,
    keys: u32,
    ops_per_txn: (u32, u32),
    writes_per_key: u32,
    fail_rate: f64,
    info_rate: f64,
    out: Option<String>,
}

const USAGE: &str =
    "usage: gen_history --txns N [--kind valid|g2|lost-update|mixed] [--format edn|json] [--seed S]
                   [--processes P] [--keys K] [--ops-per-txn MIN-MAX|M] [--writes-per-key W]
                   [--fail-rate F] [--info-rate F] [--out FILE]";

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        txns: 10_000,
        kind: Kind::Valid,
        format: Format::Edn,
        seed: 1,
        processes: 10,
        keys: 10,
        ops_per_txn: (2, 6),
        writes_per_key: 16,
        fail_rate: 0.01,
        info_rate: 0.001,
        out: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "-h" || flag == "--help" {
            println!("{USAGE}");
            std::process::exit(0);
        }
        let val = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = |v: &str| {
            v.parse::<u64>()
                .map_err(|_| format!("{flag}: not a number: {v}"))
        };
        let rate = |v: &str| match v.parse::<f64>() {
            Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
            _ => Err(format!("{flag}: not a rate in [0, 1]: {v}")),
        };
        match flag.as_str() {
            "--txns" => a.txns = num(&val)?,
            "--kind" => {
                a.kind = match val.as_str() {
                    "valid" => Kind::Valid,
                    "g2" => Kind::G2,
                    "lost-update" => Kind::LostUpdate,
                    "mixed" => Kind::Mixed,
                    _ => return Err(format!("unknown kind {val}")),
                }
            }
            "--format" => {
                a.format = match val.as_str() {
                    "edn" => Format::Edn,
                    "json" => Format::Json,
                    _ => return Err(format!("unknown format {val}")),
                }
            }
            "--seed" => a.seed = num(&val)?,
            "--processes" => a.processes = num(&val)?.clamp(1, 1 << 20) as u32,
            "--keys" => a.keys = num(&val)?.clamp(1, 1 << 24) as u32,
            "--ops-per-txn" => {
                let (lo, hi) = match val.split_once('-') {
                    Some((lo, hi)) => (num(lo)?, num(hi)?),
                    None => (num(&val)?, num(&val)?),
                };
                if lo == 0 || hi < lo || hi > 100_000 {
                    return Err(format!("--ops-per-txn: bad range {val}"));
                }
                a.ops_per_txn = (lo as u32, hi as u32);
            }
            "--writes-per-key" => a.writes_per_key = num(&val)?.clamp(1, u32::MAX as u64) as u32,
            "--fail-rate" => a.fail_rate = rate(&val)?,
            "--info-rate" => a.info_rate = rate(&val)?,
            "--out" => a.out = Some(val),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
}

/// A micro-op as invoked: `[:append k v]` or `[:r k nil]`.
#[derive(Clone, Copy)]
enum Mop {
    Append(u64, u64),
    Read(u64),
}

/// A transaction in flight.
struct Running {
    /// Jepsen process id (replaced after an `:info`).
    process: u64,
    discipline: Discipline,
    mops: Vec<Mop>,
    /// For each micro-op that reads, the length of the key's list at the
    /// invocation (the snapshot), for the disciplines that read snapshots.
    snapshot: Vec<usize>,
    /// Commit counter at invocation: a key committed to after it conflicts.
    started: u64,
}

/// The simulated database: one list per key, plus when each key was last
/// committed to.
struct Db {
    lists: Vec<Vec<u64>>,
    last_commit: Vec<u64>,
    commits: u64,
}

impl Db {
    fn list(&mut self, k: u64) -> &mut Vec<u64> {
        let k = k as usize;
        if self.lists.len() <= k {
            self.lists.resize_with(k + 1, Vec::new);
            self.last_commit.resize(k + 1, 0);
        }
        &mut self.lists[k]
    }
}

/// The window of hot keys, each with its next value.
struct Keys {
    active: Vec<(u64, u64)>,
    next_key: u64,
    writes_per_key: u64,
}

impl Keys {
    fn pick(&mut self, rng: &mut Rng) -> usize {
        rng.below(self.active.len() as u64) as usize
    }
    /// A fresh value for the key in slot `i`; retires the key when full.
    fn append(&mut self, i: usize) -> (u64, u64) {
        let (k, v) = self.active[i];
        self.active[i].1 += 1;
        if v >= self.writes_per_key {
            self.active[i] = (self.next_key, 1);
            self.next_key += 1;
        }
        (k, v)
    }
}

struct Gen {
    a: Args,
    rng: Rng,
    db: Db,
    keys: Keys,
    index: u64,
    time: u64,
    line: String,
}

impl Gen {
    fn discipline(&mut self) -> Discipline {
        match self.a.kind {
            Kind::Valid => Discipline::Serializable,
            Kind::G2 => Discipline::Snapshot,
            Kind::LostUpdate => Discipline::NoConflictCheck,
            Kind::Mixed => match self.rng.below(10) {
                0 => Discipline::Snapshot,
                1 => Discipline::NoConflictCheck,
                _ => Discipline::Serializable,
            },
        }
    }

    /// A new transaction's micro-ops. Lost-update transactions are
    /// read-modify-write on each key (read first, then append), so their
    /// reads never follow their own appends; the others mix freely.
    fn mops(&mut self, d: Discipline) -> Vec<Mop> {
        let (lo, hi) = self.a.ops_per_txn;
        let n = lo + self.rng.below(u64::from(hi - lo + 1)) as u32;
        let mut mops = Vec::with_capacity(n as usize);
        if d == Discipline::NoConflictCheck {
            // Distinct keys, each read (snapshot) and mostly then appended
            // to: a read never follows the transaction's own append, which
            // a snapshot without conflict checks could not keep consistent.
            let mut used: Vec<u64> = Vec::new();
            let mut tries = 0;
            while mops.len() < n as usize && tries < 4 * n {
                tries += 1;
                let slot = self.keys.pick(&mut self.rng);
                let k = self.keys.active[slot].0;
                if used.contains(&k) {
                    continue;
                }
                used.push(k);
                mops.push(Mop::Read(k));
                if self.rng.below(4) != 0 {
                    let (k, v) = self.keys.append(slot);
                    mops.push(Mop::Append(k, v));
                }
            }
            return mops;
        }
        while mops.len() < n as usize {
            let slot = self.keys.pick(&mut self.rng);
            if self.rng.below(2) == 0 {
                mops.push(Mop::Read(self.keys.active[slot].0));
            } else {
                let (k, v) = self.keys.append(slot);
                mops.push(Mop::Append(k, v));
            }
        }
        mops
    }

    fn invoke(&mut self, process: u64) -> Running {
        let discipline = self.discipline();
        let mops = self.mops(discipline);
        let snapshot = mops
            .iter()
            .map(|m| match *m {
                Mop::Read(k) => self.db.list(k).len(),
                Mop::Append(..) => 0,
            })
            .collect();
        let t = Running {
            process,
            discipline,
            mops,
            snapshot,
            started: self.db.commits,
        };
        self.emit("invoke", &t, None);
        t
    }

    /// Executes `t` at this instant and writes its completion. Returns the
    /// process that runs the next transaction of this client.
    fn complete(&mut self, t: Running) -> u64 {
        let crash = self.rng.chance(self.a.info_rate);
        let abort = !crash && self.rng.chance(self.a.fail_rate);
        let conflict = t.discipline == Discipline::Snapshot
            && t.mops.iter().any(|m| match *m {
                Mop::Append(k, _) => {
                    self.db.list(k);
                    self.db.last_commit[k as usize] > t.started
                }
                Mop::Read(_) => false,
            });
        if abort || conflict {
            self.emit("fail", &t, None);
            return t.process;
        }
        // A crashed transaction may or may not take effect.
        let applies = !crash || self.rng.below(2) == 0;
        let mut reads: Vec<Option<Vec<u64>>> = vec![None; t.mops.len()];
        // Own appends per key, for snapshot reads after one's own writes.
        let mut own: Vec<(u64, u64)> = Vec::new();
        for (i, m) in t.mops.iter().enumerate() {
            match *m {
                Mop::Read(k) => {
                    let list = match t.discipline {
                        Discipline::Serializable => self.db.list(k).clone(),
                        _ => {
                            let mut l = self.db.list(k)[..t.snapshot[i]].to_vec();
                            l.extend(own.iter().filter(|(ok, _)| *ok == k).map(|(_, v)| *v));
                            l
                        }
                    };
                    reads[i] = Some(list);
                }
                Mop::Append(k, v) => match t.discipline {
                    Discipline::Serializable => {
                        if applies {
                            self.db.list(k).push(v);
                        } else {
                            own.push((k, v));
                        }
                    }
                    _ => own.push((k, v)),
                },
            }
        }
        if applies {
            self.db.commits += 1;
            let now = self.db.commits;
            for m in &t.mops {
                if let Mop::Append(k, v) = *m {
                    if t.discipline != Discipline::Serializable {
                        self.db.list(k).push(v);
                    }
                    self.db.last_commit[k as usize] = now;
                }
            }
        }
        if crash {
            // Jepsen records the invocation's value for an indeterminate op,
            // and the client gets a fresh process.
            self.emit("info", &t, None);
            t.process + u64::from(self.a.processes)
        } else {
            self.emit("ok", &t, Some(&reads));
            t.process
        }
    }

    fn emit(&mut self, ty: &str, t: &Running, reads: Option<&[Option<Vec<u64>>]>) {
        self.time += 1 + self.rng.below(2_000_000);
        let l = &mut self.line;
        l.clear();
        let edn = self.a.format == Format::Edn;
        if edn {
            let _ = write!(l, "{{:type :{ty}, :f :txn, :value [");
        } else {
            let _ = write!(l, "{{\"type\":\"{ty}\",\"f\":\"txn\",\"value\":[");
        }
        for (i, m) in t.mops.iter().enumerate() {
            let sep = if i == 0 {
                ""
            } else if edn {
                " "
            } else {
                ","
            };
            let read = reads.and_then(|r| r[i].as_deref());
            match (*m, edn) {
                (Mop::Append(k, v), true) => {
                    let _ = write!(l, "{sep}[:append {k} {v}]");
                }
                (Mop::Append(k, v), false) => {
                    let _ = write!(l, "{sep}[\"append\",{k},{v}]");
                }
                (Mop::Read(k), true) => {
                    let _ = write!(l, "{sep}[:r {k} ");
                    match read {
                        None => l.push_str("nil"),
                        Some(xs) => {
                            l.push('[');
                            for (j, x) in xs.iter().enumerate() {
                                let _ = write!(l, "{}{x}", if j == 0 { "" } else { " " });
                            }
                            l.push(']');
                        }
                    }
                    l.push(']');
                }
                (Mop::Read(k), false) => {
                    let _ = write!(l, "{sep}[\"r\",{k},");
                    match read {
                        None => l.push_str("null"),
                        Some(xs) => {
                            l.push('[');
                            for (j, x) in xs.iter().enumerate() {
                                let _ = write!(l, "{}{x}", if j == 0 { "" } else { "," });
                            }
                            l.push(']');
                        }
                    }
                    l.push(']');
                }
            }
        }
        if edn {
            let _ = writeln!(
                l,
                "], :time {}, :process {}, :index {}}}",
                self.time, t.process, self.index
            );
        } else {
            let _ = writeln!(
                l,
                "],\"time\":{},\"process\":{},\"index\":{}}}",
                self.time, t.process, self.index
            );
        }
        self.index += 1;
    }
}

fn run(a: Args, out: &mut dyn Write) -> io::Result<()> {
    let keys = Keys {
        active: (0..u64::from(a.keys)).map(|k| (k, 1)).collect(),
        next_key: u64::from(a.keys),
        writes_per_key: u64::from(a.writes_per_key),
    };
    let mut g = Gen {
        rng: Rng::new(a.seed ^ 0x5EED_0F15_01DE),
        db: Db {
            lists: Vec::new(),
            last_commit: Vec::new(),
            commits: 0,
        },
        keys,
        index: 0,
        time: 0,
        line: String::new(),
        a,
    };
    // One slot per client: its process id and its transaction in flight.
    let mut clients: Vec<(u64, Option<Running>)> =
        (0..u64::from(g.a.processes)).map(|p| (p, None)).collect();
    let (mut invoked, mut done) = (0u64, 0u64);
    while done < g.a.txns {
        let c = g.rng.below(clients.len() as u64) as usize;
        match clients[c].1.take() {
            Some(t) => {
                clients[c].0 = g.complete(t);
                done += 1;
            }
            None if invoked < g.a.txns => {
                let t = g.invoke(clients[c].0);
                clients[c].1 = Some(t);
                invoked += 1;
            }
            None => continue,
        }
        out.write_all(g.line.as_bytes())?;
    }
    out.flush()
}

fn main() {
    let a = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("gen_history: {e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let result = match a.out.clone() {
        Some(path) => std::fs::File::create(&path)
            .and_then(|f| run(a, &mut BufWriter::with_capacity(1 << 20, f))),
        None => run(
            a,
            &mut BufWriter::with_capacity(1 << 20, io::stdout().lock()),
        ),
    };
    if let Err(e) = result {
        eprintln!("gen_history: {e}");
        std::process::exit(1);
    }
}
