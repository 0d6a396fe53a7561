//! Generates valid histories of elle-cli's non-transactional models for
//! benchmarks, as Jepsen EDN: concurrent client processes against a
//! simulated store whose every op takes effect at its completion.
//!
//! ```text
//! cargo run --release --example gen_models -- --model counter --ops 1000000 > counter.edn
//! ```
//!
//! Models: `counter` (adds of 1..5 and reads), `bank` (transfers between 10
//! accounts and reads of every balance), `set` (adds of fresh integers, one
//! final read of the whole set), `set-full` (adds and, about once every
//! `--read-every` ops, a read of the whole set), `long-fork` (write-once
//! keys and reads of groups of 3 keys). Some ops fail (no effect) or crash
//! (`:info`, effect decided by a coin, the process replaced). The output
//! is a pure function of the arguments.

use isolde::rng::Rng;
use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};

const USAGE: &str = "usage: gen_models --model counter|bank|set|set-full|long-fork [--ops N] [--processes P] [--read-every R] [--seed S]";

struct Args {
    model: String,
    ops: u64,
    processes: u64,
    read_every: u64,
    seed: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        model: String::new(),
        ops: 1_000_000,
        processes: 10,
        read_every: 20_000,
        seed: 1,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let num = |v: String| v.parse::<u64>().map_err(|e| format!("{v}: {e}"));
        match flag.as_str() {
            "--model" => a.model = value()?,
            "--ops" => a.ops = num(value()?)?,
            "--processes" => a.processes = num(value()?)?.max(1),
            "--read-every" => a.read_every = num(value()?)?.max(1),
            "--seed" => a.seed = num(value()?)?,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if !["counter", "bank", "set", "set-full", "long-fork"].contains(&a.model.as_str()) {
        return Err("--model is required".into());
    }
    Ok(a)
}

/// The simulated store.
#[derive(Default)]
struct Store {
    counter: i64,
    balances: Vec<i64>,
    /// Elements added, in order (set, set-full).
    set: Vec<u64>,
    /// Keys written (long-fork).
    written: rustc_hash::FxHashSet<u64>,
}

/// An op in flight: its function and invocation value (EDN).
struct Pending {
    f: &'static str,
    value: String,
    /// What the completion applies: an add, a transfer, a write.
    effect: Effect,
}

enum Effect {
    Add(u64),
    Transfer(usize, usize, i64),
    Write(u64),
    Read(u64),
}

struct Gen {
    a: Args,
    rng: Rng,
    store: Store,
    index: u64,
    time: u64,
    next_element: u64,
    next_key: u64,
    out: String,
}

impl Gen {
    fn line(&mut self, kind: &str, f: &str, value: &str, process: u64) {
        self.time += 1 + self.rng.below(1_000_000);
        let _ = writeln!(
            self.out,
            "{{:type :{kind}, :f :{f}, :value {value}, :process {process}, :time {}, :index {}}}",
            self.time, self.index
        );
        self.index += 1;
    }

    fn invoke(&mut self, process: u64) -> Pending {
        let read_chance = match self.a.model.as_str() {
            "set" => 0,
            "set-full" => 1_000_000 / self.a.read_every,
            _ => 500_000,
        };
        let p = if self.rng.below(1_000_000) < read_chance {
            let group = self.next_key.saturating_sub(1 + self.rng.below(6)) / 3 * 3;
            Pending {
                f: "read",
                value: if self.a.model == "long-fork" {
                    format!(
                        "[[:r {} nil] [:r {} nil] [:r {} nil]]",
                        group,
                        group + 1,
                        group + 2
                    )
                } else {
                    "nil".into()
                },
                effect: Effect::Read(group),
            }
        } else {
            match self.a.model.as_str() {
                "counter" => {
                    let n = 1 + self.rng.below(5);
                    Pending {
                        f: "add",
                        value: n.to_string(),
                        effect: Effect::Add(n),
                    }
                }
                "bank" => {
                    let from = self.rng.below(10) as usize;
                    let to = (from + 1 + self.rng.below(9) as usize) % 10;
                    let n = 1 + self.rng.below(5) as i64;
                    Pending {
                        f: "transfer",
                        value: format!("{{:from {from}, :to {to}, :amount {n}}}"),
                        effect: Effect::Transfer(from, to, n),
                    }
                }
                "long-fork" => {
                    let k = self.next_key;
                    self.next_key += 1;
                    Pending {
                        f: "write",
                        value: format!("[[:w {k} 1]]"),
                        effect: Effect::Write(k),
                    }
                }
                _ => {
                    let x = self.next_element;
                    self.next_element += 1;
                    Pending {
                        f: "add",
                        value: x.to_string(),
                        effect: Effect::Add(x),
                    }
                }
            }
        };
        let (f, v) = (p.f, p.value.clone());
        self.line("invoke", f, &v, process);
        p
    }

    /// Completes `p`; returns whether the process crashed.
    fn complete(&mut self, p: Pending, process: u64) -> bool {
        let roll = self.rng.below(100);
        let crashed = roll < 2 && !matches!(p.effect, Effect::Read(_));
        let failed = (2..4).contains(&roll) && !matches!(p.effect, Effect::Read(_));
        let applies = !failed && (!crashed || self.rng.below(2) == 0);
        let s = &mut self.store;
        let value = match p.effect {
            Effect::Add(n) => {
                if applies {
                    if self.a.model == "counter" {
                        s.counter += n as i64;
                    } else {
                        s.set.push(n);
                    }
                }
                p.value
            }
            Effect::Transfer(from, to, n) => {
                if applies && s.balances[from] >= n {
                    s.balances[from] -= n;
                    s.balances[to] += n;
                }
                p.value
            }
            Effect::Write(k) => {
                if applies {
                    s.written.insert(k);
                }
                p.value
            }
            Effect::Read(group) => match self.a.model.as_str() {
                "counter" => s.counter.to_string(),
                "bank" => {
                    let kv: Vec<String> = s
                        .balances
                        .iter()
                        .enumerate()
                        .map(|(a, b)| format!("{a} {b}"))
                        .collect();
                    format!("{{{}}}", kv.join(", "))
                }
                "long-fork" => {
                    let r = |k: u64| if s.written.contains(&k) { "1" } else { "nil" };
                    format!(
                        "[[:r {} {}] [:r {} {}] [:r {} {}]]",
                        group,
                        r(group),
                        group + 1,
                        r(group + 1),
                        group + 2,
                        r(group + 2)
                    )
                }
                _ => set_text(&s.set),
            },
        };
        let kind = if crashed {
            "info"
        } else if failed {
            "fail"
        } else {
            "ok"
        };
        self.line(kind, p.f, &value, process);
        crashed
    }
}

fn set_text(xs: &[u64]) -> String {
    let mut s = String::with_capacity(xs.len() * 7 + 2);
    s.push('[');
    for (i, x) in xs.iter().enumerate() {
        let _ = write!(s, "{}{x}", if i == 0 { "" } else { " " });
    }
    s.push(']');
    s
}

fn run(a: Args, out: &mut dyn Write) -> io::Result<()> {
    let processes = a.processes;
    let set = a.model == "set";
    let ops = a.ops;
    let mut g = Gen {
        rng: Rng::new(a.seed),
        store: Store {
            balances: vec![10; 10],
            ..Default::default()
        },
        a,
        index: 0,
        time: 0,
        next_element: 0,
        next_key: 0,
        out: String::new(),
    };
    let mut clients: Vec<(u64, Option<Pending>)> = (0..processes).map(|p| (p, None)).collect();
    // Each op is two lines; keep room for the final read of `set`.
    let (mut invoked, mut done) = (0u64, 0u64);
    let target = ops / 2 - u64::from(set);
    while done < target {
        let c = g.rng.below(clients.len() as u64) as usize;
        match clients[c].1.take() {
            Some(p) => {
                if g.complete(p, clients[c].0) {
                    clients[c].0 += processes;
                }
                done += 1;
            }
            None if invoked < target => {
                let p = g.invoke(clients[c].0);
                clients[c].1 = Some(p);
                invoked += 1;
            }
            None => continue,
        }
        out.write_all(g.out.as_bytes())?;
        g.out.clear();
    }
    if set {
        let all = set_text(&g.store.set);
        g.line("invoke", "read", "nil", 0);
        g.line("ok", "read", &all, 0);
        out.write_all(g.out.as_bytes())?;
    }
    out.flush()
}

fn main() {
    let a = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("gen_models: {e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(
        a,
        &mut BufWriter::with_capacity(1 << 20, io::stdout().lock()),
    ) {
        eprintln!("gen_models: {e}");
        std::process::exit(1);
    }
}
