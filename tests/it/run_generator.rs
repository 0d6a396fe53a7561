//! The workload generator: determinism, the moving key window, value
//! uniqueness and duplicates, distributions.

use isolde::rng::{Dist, Rng, Sampler, Zipf};
use isolde::run::generator::{GenOptions, Generator};
use isolde::run::{Mop, WorkloadKind};
use std::collections::{HashMap, HashSet};

fn gen(opts: GenOptions, n: usize) -> Vec<Vec<Mop>> {
    let mut g = Generator::new(opts);
    (0..n).map(|_| g.next_txn()).collect()
}

#[test]
fn same_seed_same_transactions() {
    let o = GenOptions {
        seed: 42,
        ..Default::default()
    };
    assert_eq!(gen(o.clone(), 500), gen(o.clone(), 500));
    let other = GenOptions { seed: 43, ..o };
    assert_ne!(
        gen(other, 500),
        gen(
            GenOptions {
                seed: 42,
                ..Default::default()
            },
            500
        )
    );
}

#[test]
fn lengths_and_read_ratio_are_respected() {
    let o = GenOptions {
        min_txn_length: 2,
        max_txn_length: 3,
        seed: 1,
        ..Default::default()
    };
    for t in gen(o, 300) {
        assert!((2..=3).contains(&t.len()), "{t:?}");
    }
    let all_reads = gen(
        GenOptions {
            read_ratio: 1.0,
            ..Default::default()
        },
        100,
    );
    assert!(all_reads.iter().flatten().all(Mop::is_read));
    let no_reads = gen(
        GenOptions {
            read_ratio: 0.0,
            ..Default::default()
        },
        100,
    );
    assert!(no_reads
        .iter()
        .flatten()
        .all(|m| matches!(m, Mop::Append(..))));
    let regs = gen(
        GenOptions {
            read_ratio: 0.0,
            workload: WorkloadKind::RwRegister,
            ..Default::default()
        },
        100,
    );
    assert!(regs.iter().flatten().all(|m| matches!(m, Mop::Write(..))));
}

/// Elle's window: key_count active keys; a key takes at most
/// max_writes_per_key writes, then a fresh (larger) key replaces it.
#[test]
fn key_window_moves_on_as_keys_fill_up() {
    let o = GenOptions {
        key_count: 3,
        max_writes_per_key: 4,
        seed: 7,
        ..Default::default()
    };
    let mut g = Generator::new(o);
    let mut writes: HashMap<u64, Vec<i64>> = HashMap::new();
    let mut max_key_seen = 0;
    for _ in 0..2000 {
        let active: HashSet<u64> = g.active_keys().into_iter().collect();
        assert_eq!(
            active.len(),
            3,
            "the window always holds key_count distinct keys"
        );
        for m in g.next_txn() {
            max_key_seen = max_key_seen.max(m.key());
            if let Mop::Append(k, v) = m {
                writes.entry(k).or_default().push(v);
            }
        }
    }
    assert!(
        max_key_seen > 50,
        "keys retire and fresh ones come in (max key {max_key_seen})"
    );
    for (k, vs) in &writes {
        assert!(vs.len() <= 4, "key {k} got {} writes", vs.len());
        let expect: Vec<i64> = (1..=vs.len() as i64).collect();
        assert_eq!(vs, &expect, "values of key {k} count up from 1, unique");
    }
}

#[test]
fn final_read_covers_every_key_touched() {
    let mut g = Generator::new(GenOptions {
        key_count: 2,
        max_writes_per_key: 2,
        seed: 3,
        ..Default::default()
    });
    let mut keys = HashSet::new();
    for _ in 0..200 {
        keys.extend(g.next_txn().iter().map(Mop::key));
    }
    let fin = g.final_read();
    let fin_keys: HashSet<u64> = fin.iter().map(Mop::key).collect();
    assert_eq!(fin_keys, keys);
    assert!(fin.iter().all(|m| matches!(m, Mop::Read(_, None))));
}

#[test]
fn duplicates_draw_values_from_the_domain() {
    let o = GenOptions {
        duplicates: 1.0,
        value_domain: 3,
        read_ratio: 0.0,
        max_writes_per_key: 50,
        seed: 5,
        ..Default::default()
    };
    let mut per_key: HashMap<u64, Vec<i64>> = HashMap::new();
    for m in gen(o, 300).into_iter().flatten() {
        if let Mop::Append(k, v) = m {
            assert!((1..=3).contains(&v), "value {v} outside the domain");
            per_key.entry(k).or_default().push(v);
        }
    }
    assert!(
        per_key
            .values()
            .any(|vs| vs.len() > vs.iter().collect::<HashSet<_>>().len()),
        "values repeat"
    );

    // A fraction: some keys unique, some duplicated.
    let o = GenOptions {
        duplicates: 0.5,
        value_domain: 2,
        read_ratio: 0.0,
        max_writes_per_key: 20,
        seed: 9,
        ..Default::default()
    };
    let mut per_key: HashMap<u64, Vec<i64>> = HashMap::new();
    for m in gen(o, 2000).into_iter().flatten() {
        if let Mop::Append(k, v) = m {
            per_key.entry(k).or_default().push(v);
        }
    }
    let repeating = per_key
        .values()
        .filter(|vs| vs.len() > vs.iter().collect::<HashSet<_>>().len())
        .count();
    let long_unique = per_key
        .values()
        .filter(|vs| vs.len() >= 3 && vs.len() == vs.iter().collect::<HashSet<_>>().len())
        .count();
    assert!(
        repeating > 0 && long_unique > 0,
        "repeating {repeating}, unique {long_unique}"
    );
}

/// Register writes draw from the domain too, so two transactions write the
/// same value to a key (what MDEV-26642 needs; tests/it/mariadb_duplicates.rs).
#[test]
fn register_duplicates_repeat_across_transactions() {
    let o = GenOptions {
        workload: WorkloadKind::RwRegister,
        duplicates: 1.0,
        value_domain: 3,
        key_count: 2,
        max_txn_length: 2,
        seed: 4,
        ..Default::default()
    };
    // (key, value) → the transactions that wrote it.
    let mut writers: HashMap<(u64, i64), HashSet<usize>> = HashMap::new();
    for (t, txn) in gen(o, 300).into_iter().enumerate() {
        for m in txn {
            assert!(!matches!(m, Mop::Append(..)), "a register workload appends");
            if let Mop::Write(k, v) = m {
                assert!((1..=3).contains(&v), "value {v} outside the domain");
                writers.entry((k, v)).or_default().insert(t);
            }
        }
    }
    assert!(
        writers.values().any(|ts| ts.len() > 1),
        "two transactions write the same value to a key"
    );
}

#[test]
fn zipf_follows_its_law() {
    let z = Zipf::new(10, 1.0);
    let mut rng = Rng::new(11);
    let mut counts = [0u32; 10];
    let n = 200_000;
    for _ in 0..n {
        let x = z.sample(&mut rng) as usize;
        counts[x] += 1;
    }
    let h: f64 = (1..=10).map(|i| 1.0 / i as f64).sum();
    for (i, c) in counts.iter().enumerate() {
        let expect = n as f64 / ((i + 1) as f64 * h);
        let got = *c as f64;
        assert!(
            (got - expect).abs() < 0.05 * expect + 100.0,
            "P({i}): got {got}, expected {expect}"
        );
    }
    // Theta 0 is uniform; a big theta puts nearly everything on 0.
    let flat = Zipf::new(4, 0.0);
    let mut c = [0u32; 4];
    for _ in 0..40_000 {
        c[flat.sample(&mut rng) as usize] += 1;
    }
    assert!(c.iter().all(|&x| (9_000..11_000).contains(&x)), "{c:?}");
    let steep = Zipf::new(1000, 4.0);
    let zeros = (0..10_000).filter(|_| steep.sample(&mut rng) == 0).count();
    assert!(zeros > 9_000, "{zeros}");
    // Large domains stay in range.
    let big = Zipf::new(1 << 40, 1.2);
    assert!((0..10_000).all(|_| big.sample(&mut rng) < 1 << 40));
}

#[test]
fn key_dist_zipf_skews_toward_the_first_slot() {
    let o = GenOptions {
        key_dist: Dist::Zipf(1.5),
        read_ratio: 1.0,
        key_count: 10,
        seed: 2,
        ..Default::default()
    };
    let mut c: HashMap<u64, u32> = HashMap::new();
    for m in gen(o, 2000).into_iter().flatten() {
        *c.entry(m.key()).or_default() += 1;
    }
    assert!(c[&0] > 3 * c[&9], "{c:?}");
}

#[test]
fn distributions_parse_and_reject_nonsense() {
    assert_eq!("uniform".parse::<Dist>(), Ok(Dist::Uniform));
    assert_eq!("zipf:0.9".parse::<Dist>(), Ok(Dist::Zipf(0.9)));
    assert_eq!("zipf".parse::<Dist>(), Ok(Dist::Zipf(1.0)));
    assert!("zipf:-1".parse::<Dist>().is_err());
    assert!("zipf:x".parse::<Dist>().is_err());
    assert!("normal".parse::<Dist>().is_err());
    let mut rng = Rng::new(0);
    let s = Sampler::new(Dist::Uniform, 3);
    assert!((0..1000).all(|_| s.sample(&mut rng) < 3));
}

#[test]
fn bad_options_are_typed_errors() {
    for bad in [
        GenOptions {
            key_count: 0,
            ..Default::default()
        },
        GenOptions {
            min_txn_length: 5,
            max_txn_length: 4,
            ..Default::default()
        },
        GenOptions {
            min_txn_length: 0,
            ..Default::default()
        },
        GenOptions {
            read_ratio: 1.5,
            ..Default::default()
        },
        GenOptions {
            duplicates: -0.1,
            ..Default::default()
        },
        GenOptions {
            value_domain: 0,
            ..Default::default()
        },
        GenOptions {
            max_writes_per_key: 0,
            ..Default::default()
        },
    ] {
        assert!(bad.validate().is_err(), "{bad:?}");
    }
    assert!(GenOptions::default().validate().is_ok());
}

/// A retry (`--retries`) keeps the micro-ops' functions and keys but writes
/// fresh values, also for keys that have left the window since: no value is
/// written twice to a key, so a failed attempt's value can never be mistaken
/// for a committed one.
#[test]
fn retries_write_fresh_values() {
    for workload in [WorkloadKind::ListAppend, WorkloadKind::RwRegister] {
        let mut g = Generator::new(GenOptions {
            workload,
            seed: 9,
            key_count: 3,
            max_writes_per_key: 3,
            ..Default::default()
        });
        let mut written: HashSet<(u64, i64)> = HashSet::new();
        let mut retried_retired = 0;
        let mut record = |txn: &[Mop]| {
            for m in txn {
                if let Mop::Append(k, v) | Mop::Write(k, v) = m {
                    assert!(written.insert((*k, *v)), "{workload:?}: {k}={v} twice");
                }
            }
        };
        let mut old = vec![];
        for i in 0..2000 {
            let txn = g.next_txn();
            record(&txn);
            // Retry now, and (a key may have retired since) much later.
            let mut retry_of = vec![txn.clone()];
            if i % 7 == 0 {
                retry_of.extend(old.pop());
            }
            for t in &retry_of {
                let again = g.with_fresh_values(t);
                assert_eq!(again.len(), t.len());
                for (a, b) in again.iter().zip(t.iter()) {
                    assert_eq!(a.key(), b.key());
                    assert_eq!(std::mem::discriminant(a), std::mem::discriminant(b));
                    if a.is_read() {
                        assert_eq!(a, b, "reads are unchanged");
                    }
                }
                if !g.active_keys().contains(&t[0].key()) {
                    retried_retired += 1;
                }
                record(&again);
            }
            if i % 5 == 0 {
                old.push(txn);
            }
        }
        assert!(retried_retired > 50, "{workload:?}: {retried_retired}");
    }
}

/// Sequential: a worker's subkeys come in order, and an insert that did
/// not succeed gives its key up. Mutex: a worker releases after an acquire
/// that succeeded or whose outcome is unknown, else acquires again.
#[test]
fn sequential_and_mutex_follow_each_workers_outcomes() {
    use isolde::history::Outcome;
    let mut g = Generator::new(GenOptions {
        workload: WorkloadKind::Sequential,
        read_ratio: 0.0,
        model: isolde::run::ModelParams {
            key_count: 3,
            ..Default::default()
        },
        ..Default::default()
    });
    let a: Vec<Mop> = (0..3).map(|_| g.next_txn_for(0).remove(0)).collect();
    assert_eq!(
        a,
        vec![
            Mop::SeqWrite(0, 0),
            Mop::SeqWrite(0, 1),
            Mop::SeqWrite(0, 2)
        ]
    );
    assert_eq!(g.next_txn_for(1), vec![Mop::SeqWrite(1, 0)]);
    assert_eq!(g.next_txn_for(0), vec![Mop::SeqWrite(2, 0)]);
    let w = g.next_txn_for(1);
    assert_eq!(w, vec![Mop::SeqWrite(1, 1)]);
    g.observe(1, &w, Outcome::Info);
    assert_eq!(
        g.next_txn_for(1),
        vec![Mop::SeqWrite(3, 0)],
        "key 1 given up"
    );

    let mut g = Generator::new(GenOptions {
        workload: WorkloadKind::Mutex,
        ..Default::default()
    });
    let mut step = |w: u32, outcome| {
        let op = g.next_txn_for(w);
        g.observe(w, &op, outcome);
        op[0].clone()
    };
    assert_eq!(step(0, Outcome::Fail), Mop::Acquire(0));
    assert_eq!(step(0, Outcome::Ok), Mop::Acquire(0));
    assert_eq!(step(1, Outcome::Info), Mop::Acquire(1));
    assert_eq!(step(0, Outcome::Ok), Mop::Release(0));
    assert_eq!(step(1, Outcome::Info), Mop::Release(1));
    assert_eq!(step(1, Outcome::Fail), Mop::Release(1));
    assert_eq!(step(1, Outcome::Ok), Mop::Acquire(1));
    assert_eq!(step(0, Outcome::Ok), Mop::Acquire(0));
}
