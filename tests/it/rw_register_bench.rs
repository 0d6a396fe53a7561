//! Benchmark (ignored by default): a generated 100k-transaction register
//! history, checked end to end. Run with
//! `cargo test --release --test it rw_register_bench:: -- --ignored --nocapture`.
//!
//! The history imitates Elle's `wr-txns` generator against a strictly
//! serializable database: 10 processes, 1-4 micro-ops per transaction, half
//! reads, 10 active keys each retired after up to 256 writes, values unique
//! per key; each transaction takes effect at its completion; 4% `info`
//! (half of them took effect), 4% `fail`.

use isolde::check::{check_history, CheckOptions, Validity, Workload};
use isolde::history::read::read_history;
use isolde::rng::Rng;
use isolde::workload::rw_register::{infer_with, RegisterOptions};
use std::collections::HashMap;
use std::fmt::Write;
use std::time::Instant;

/// A register history of `n` transactions, as EDN lines: valid, except
/// that `stale` percent of committed reads return the key's previous
/// version.
pub fn generate(n: usize, seed: u64, stale: u64) -> String {
    const PROCS: usize = 10;
    const KEYS: usize = 10;
    const MAX_WRITES: u64 = 256;
    let mut rng = Rng::new(seed);
    let mut slots: Vec<(u64, u64)> = (0..KEYS as u64)
        .map(|k| (k, 1 + rng.below(MAX_WRITES)))
        .collect();
    let mut next_key = KEYS as u64;
    let mut written: HashMap<u64, u64> = HashMap::new();
    // Current and previous value of each key.
    let mut state: HashMap<u64, (u64, u64)> = HashMap::new();
    // Per process: the running txn's micro-ops (is write, key, value).
    let mut running: Vec<Option<Vec<(bool, u64, u64)>>> = vec![None; PROCS];
    let mut out = String::with_capacity(n * 160);
    let (mut started, mut index) = (0usize, 0u64);
    let mops_text = |mops: &[(bool, u64, u64)], blind: bool| {
        let mut s = String::from("[");
        for (i, &(w, k, v)) in mops.iter().enumerate() {
            if i > 0 {
                s.push(' ');
            }
            let v = if (blind && !w) || v == 0 {
                "nil".to_string()
            } else {
                v.to_string()
            };
            let _ = write!(s, "[{} {k} {v}]", if w { ":w" } else { ":r" });
        }
        s.push(']');
        s
    };
    while started < n || running.iter().any(Option::is_some) {
        let p = rng.below(PROCS as u64) as usize;
        match running[p].take() {
            None if started < n => {
                started += 1;
                let len = 1 + rng.below(4);
                let mut mops = Vec::new();
                for _ in 0..len {
                    let slot = rng.below(KEYS as u64) as usize;
                    if rng.below(2) == 0 {
                        mops.push((false, slots[slot].0, 0));
                    } else {
                        if slots[slot].1 == 0 {
                            slots[slot] = (next_key, 1 + rng.below(MAX_WRITES));
                            next_key += 1;
                        }
                        slots[slot].1 -= 1;
                        let k = slots[slot].0;
                        let v = written.entry(k).or_insert(0);
                        *v += 1;
                        mops.push((true, k, *v));
                    }
                }
                let _ = writeln!(
                    out,
                    "{{:index {index}, :type :invoke, :process {p}, :f :txn, :value {}}}",
                    mops_text(&mops, true)
                );
                index += 1;
                running[p] = Some(mops);
            }
            None => {}
            Some(mut mops) => {
                let roll = rng.below(100);
                let kind = match roll {
                    0..=3 => "fail",
                    4..=7 => "info",
                    _ => "ok",
                };
                if kind == "ok" || (kind == "info" && roll.is_multiple_of(2)) {
                    for m in &mut mops {
                        let cur = state.get(&m.1).copied().unwrap_or((0, 0));
                        if m.0 {
                            state.insert(m.1, (m.2, cur.0));
                        } else if rng.below(100) < stale {
                            m.2 = cur.1;
                        } else {
                            m.2 = cur.0;
                        }
                    }
                }
                let _ = writeln!(
                    out,
                    "{{:index {index}, :type :{kind}, :process {p}, :f :txn, :value {}}}",
                    mops_text(&mops, kind != "ok")
                );
                index += 1;
            }
        }
    }
    out
}

#[test]
#[ignore = "benchmark: run in release with --ignored --nocapture"]
fn bench_100k_register_history() {
    let text = generate(100_000, 42, 0);
    let t0 = Instant::now();
    let h = read_history(text.as_bytes(), "generated", None).unwrap();
    let parse = t0.elapsed();
    eprintln!(
        "{} txns, {} micro-ops, {} bytes; parse {:?}",
        h.txns.len(),
        h.mops.len(),
        text.len(),
        parse
    );

    for (name, o) in [
        ("infer, Elle defaults", RegisterOptions::default()),
        (
            "infer, wfr",
            RegisterOptions {
                wfr_keys: true,
                ..RegisterOptions::default()
            },
        ),
        (
            "infer, all sources",
            RegisterOptions {
                wfr_keys: true,
                sequential_keys: true,
                linearizable_keys: true,
                realtime_versions: true,
                transaction_order: None,
            },
        ),
    ] {
        let t = Instant::now();
        let (inf, rr) = infer_with(&h, &o);
        eprintln!(
            "{name}: {:?}, {} edges, {} version-order edges, {} anomalies, sources {:?}",
            t.elapsed(),
            inf.edges.len(),
            rr.version_order().count(),
            inf.anomalies.len(),
            rr.sources()
        );
        assert!(
            inf.anomalies.is_empty(),
            "{:?}",
            inf.anomalies
                .first()
                .map(|a| isolde::explain::anomaly::explanation(&h, a))
        );
    }

    for (name, models, lin) in [
        ("check, strict-serializable", None, false),
        ("check, strict-serializable + linearizable-keys", None, true),
        (
            "check, serializable",
            Some(vec!["serializable".to_string()]),
            false,
        ),
    ] {
        let opts = CheckOptions {
            workload: Workload::RwRegister,
            workload_given: true,
            models,
            linearizable_keys: lin,
            sequential_keys: lin,
            ..CheckOptions::default()
        };
        let t = Instant::now();
        let report = check_history(&h, &opts);
        eprintln!(
            "{name}: {:?}, valid {:?}, {:?}",
            t.elapsed(),
            report.valid,
            report.anomaly_types
        );
        assert!(matches!(report.valid, Validity::True));
    }
}

#[test]
#[ignore = "benchmark: run in release with --ignored --nocapture"]
fn bench_100k_register_history_with_stale_reads() {
    let text = generate(100_000, 7, 1);
    let h = read_history(text.as_bytes(), "generated", None).unwrap();
    for (name, lin) in [
        ("strict-serializable", false),
        ("strict-serializable + linearizable-keys", true),
    ] {
        let opts = CheckOptions {
            workload: Workload::RwRegister,
            workload_given: true,
            linearizable_keys: lin,
            ..CheckOptions::default()
        };
        let t = Instant::now();
        let report = check_history(&h, &opts);
        let counts: Vec<String> = report
            .anomalies
            .iter()
            .map(|(k, v)| format!("{k}: {}", v.len()))
            .collect();
        eprintln!(
            "stale 1%, check {name}: {:?}, valid {:?}, {}",
            t.elapsed(),
            report.valid,
            counts.join(", ")
        );
        assert!(matches!(report.valid, Validity::False));
    }
}
