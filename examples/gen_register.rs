//! Generates Knossos-style histories of one compare-and-set register, as
//! Jepsen EDN, for `bench/linearizable.sh`: etcd-like clients doing reads,
//! writes and CAS over a small value domain against a simulated register
//! whose every op takes effect at one instant between its invocation and its
//! completion, so the history is linearizable. Some ops crash (`:info`,
//! effect decided by a coin; the process is replaced, as Jepsen does).
//! `--corrupt` changes the value of one ok read in the middle that no
//! linearization can explain, so the history is not linearizable.
//! `--keys K` runs K independent registers, as Jepsen's etcd test does: each
//! op picks one, and its value is the tuple `[key value]`.
//!
//! ```text
//! cargo run --release --example gen_register -- --ops 10000 --processes 5 > register.edn
//! ```

use isolde::rng::Rng;
use std::io::{self, BufWriter, Write};

const USAGE: &str = "usage: gen_register [--ops N] [--processes P] [--values V] [--crash-rate R] [--corrupt] [--seed S] [--keys K]";

struct Op {
    f: &'static str,
    /// Value written, [old new] of a CAS, or what a read returned.
    value: String,
    applied: bool,
    /// The register (0 without --keys).
    key: usize,
}

fn main() {
    let (mut ops, mut procs, mut values, mut crash, mut corrupt, mut seed) =
        (10_000u64, 5u64, 5u64, 0.01f64, false, 1u64);
    let mut keys = 0u64;
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut num = || -> f64 {
            it.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| {
                eprintln!("{USAGE}");
                std::process::exit(2)
            })
        };
        match flag.as_str() {
            "--ops" => ops = num() as u64,
            "--processes" => procs = (num() as u64).max(1),
            "--values" => values = (num() as u64).max(1),
            "--crash-rate" => crash = num(),
            "--seed" => seed = num() as u64,
            "--corrupt" => corrupt = true,
            "--keys" => keys = num() as u64,
            _ => {
                eprintln!("{USAGE}");
                std::process::exit(2)
            }
        }
    }
    let mut rng = Rng::new(seed);
    let out = io::stdout();
    let mut w = BufWriter::new(out.lock());
    let mut registers: Vec<Option<u64>> = vec![None; keys.max(1) as usize];
    // The op's value as written: a tuple with --keys.
    let tuple = |key: usize, v: &str| {
        if keys > 0 {
            format!("[{key} {v}]")
        } else {
            v.to_string()
        }
    };
    // Per client slot: its process id and its op in flight.
    let mut process: Vec<u64> = (0..procs).collect();
    let mut flight: Vec<Option<Op>> = (0..procs).map(|_| None).collect();
    let (mut invoked, mut index, mut time) = (0u64, 0u64, 0u64);
    let show = |v: Option<u64>| v.map_or("nil".to_string(), |v| v.to_string());
    let mut emit = |w: &mut BufWriter<_>, kind: &str, f: &str, value: &str, p: u64| {
        time += 1 + rng.below(1000);
        let line = format!(
            "{{:type :{kind}, :f :{f}, :value {value}, :process {p}, :time {time}, :index {index}}}\n"
        );
        index += 1;
        w.write_all(line.as_bytes())
    };
    let mut rng = Rng::new(seed ^ 0x5eed);
    let corrupt_at = ops / 2;
    loop {
        let busy = flight.iter().any(Option::is_some);
        if invoked >= ops && !busy {
            break;
        }
        let c = rng.below(procs) as usize;
        let p = process[c];
        match flight[c].take() {
            None if invoked < ops => {
                invoked += 1;
                let v = rng.below(values);
                let key = rng.below(keys.max(1)) as usize;
                let op = match rng.below(4) {
                    0 | 1 => Op {
                        f: "read",
                        value: "nil".into(),
                        applied: false,
                        key,
                    },
                    2 => Op {
                        f: "write",
                        value: v.to_string(),
                        applied: false,
                        key,
                    },
                    _ => Op {
                        f: "cas",
                        value: format!("[{} {v}]", rng.below(values)),
                        applied: false,
                        key,
                    },
                };
                emit(&mut w, "invoke", op.f, &tuple(op.key, &op.value), p).unwrap();
                flight[c] = Some(op);
            }
            None => {}
            Some(mut op) if !op.applied => {
                // The instant the op takes effect.
                op.applied = true;
                let register = &mut registers[op.key];
                match op.f {
                    "read" => op.value = show(*register),
                    "write" => *register = op.value.parse().ok(),
                    _ => {
                        let (old, new) = op.value[1..op.value.len() - 1].split_once(' ').unwrap();
                        if show(*register) == old {
                            *register = new.parse().ok();
                        } else {
                            op.f = "cas-fail";
                        }
                    }
                }
                flight[c] = Some(op);
            }
            Some(mut op) => {
                let f = if op.f == "cas-fail" { "cas" } else { op.f };
                if rng.chance(crash) {
                    // Crashed: the effect may or may not have happened.
                    let value = if f == "read" {
                        "nil".to_string()
                    } else {
                        op.value.clone()
                    };
                    emit(&mut w, "info", f, &tuple(op.key, &value), p).unwrap();
                    process[c] += procs;
                } else if op.f == "cas-fail" {
                    emit(&mut w, "fail", f, &tuple(op.key, &op.value), p).unwrap();
                } else {
                    if corrupt && f == "read" && invoked >= corrupt_at {
                        // No op ever wrote this value.
                        op.value = (values + 1000).to_string();
                        corrupt = false;
                    }
                    emit(&mut w, "ok", f, &tuple(op.key, &op.value), p).unwrap();
                }
            }
        }
    }
    w.flush().unwrap();
}
