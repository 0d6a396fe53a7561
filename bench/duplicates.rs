//! Benchmark of duplicate-value checking with the workload parameters of
//! Cai et al., Appendix C (Fig. 3 left and right), on histories from a
//! simulated serializable database and two broken ones (snapshot isolation,
//! lost update).
//!
//! Usage: `cargo bench --bench duplicates -- [left|right|all] [--quick] [--save DIR] [--level NAME]... [--time-ms N] [--exact]`
//! (`--exact`: the exact solver alone, without the replays and real-time windows),
//! or `... -- --file PATH...` to check saved histories (e.g. from `--save`).
//! Prints one Markdown table row per history and level.

// The duplicate-value history generator shared by tests and benchmarks.
#[allow(dead_code)]
#[path = "../tests/it/support/duplicates_gen.rs"]
mod duplicates_gen;

use duplicates_gen::{generate, Db, Params};
use isolde::history::read::read_history;
use isolde::solver::{check_duplicates, Level, Limits};
use std::time::Instant;

fn db_name(db: Db) -> &'static str {
    match db {
        Db::Serializable => "serializable",
        Db::SnapshotIsolation => "SI",
        Db::LostUpdate => "lost-update",
    }
}

fn run(label: &str, p: &Params, save: Option<&str>, levels: &[Level], limits: &Limits) {
    let t = Instant::now();
    let edn = generate(p);
    let gen_ms = t.elapsed().as_secs_f64() * 1e3;
    if let Some(dir) = save {
        let _ = std::fs::create_dir_all(dir);
        let name = format!(
            "{dir}/{}-{}.edn",
            label.replace([' ', '%', '='], "_"),
            db_name(p.db)
        );
        let _ = std::fs::write(name, &edn);
    }
    check_text(label, db_name(p.db), &edn, gen_ms, levels, limits);
}

/// Parses and checks one history at each level, one table row per level.
fn check_text(label: &str, db: &str, edn: &str, gen_ms: f64, levels: &[Level], limits: &Limits) {
    let t = Instant::now();
    let h = match read_history(edn.as_bytes(), "bench", None) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("{label}: history does not parse: {e}");
            return;
        }
    };
    let parse_ms = t.elapsed().as_secs_f64() * 1e3;
    let ops: u32 = h.txns.iter().map(|t| t.mops_len).sum();
    for &level in levels {
        let v = check_duplicates(&h, level, limits);
        let s = v.stats;
        println!(
            "| {label} | {} | {} | {} | {} | {} | {:.0} | {:.0}/{:.0}/{:.0}/{:.0} | {} | {} | {} | {} | {} | {:.0} / {:.0} |",
            db,
            h.txns.len(),
            ops,
            level.name(),
            v.valid.name(),
            v.elapsed_ms,
            s.ms[0],
            s.ms[1],
            s.ms[2],
            s.ms[3],
            s.ambiguous_keys,
            s.vars,
            s.open_vars,
            s.sat_clauses,
            s.conflicts,
            gen_ms,
            parse_ms,
        );
        if v.valid.name() == "unknown" {
            eprintln!(
                "  unknown: {}",
                isolde::explain::proof::reason(&h, &v.reason, v.proof())
            );
        }
    }
}

fn main() {
    // `cargo test --all-targets` runs bench targets too, without `--bench`:
    // then this is only a build check, not a minutes-long benchmark.
    if !std::env::args().any(|a| a == "--bench") {
        println!("duplicates benchmark: run it with `cargo bench --bench duplicates` (or bench/duplicates.sh)");
        return;
    }
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let quick = args.iter().any(|a| a == "--quick");
    let save = args
        .iter()
        .position(|a| a == "--save")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str);
    let mut levels: Vec<Level> = Vec::new();
    for (i, _) in args.iter().enumerate().filter(|(_, a)| *a == "--level") {
        let name = args.get(i + 1).map_or("", String::as_str);
        match Level::from_name(name) {
            Some(l) => levels.push(l),
            None => {
                // A typo must not quietly bench the default levels instead.
                eprintln!("--level {name:?}: not a solver level (read-committed, consistent-view, snapshot-isolation, serializable, strict-serializable)");
                std::process::exit(2);
            }
        }
    }
    if levels.is_empty() {
        levels = vec![
            Level::Serializable,
            Level::StrictSerializable,
            Level::SnapshotIsolation,
        ];
    }
    let value_of = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
    };
    let limits = Limits {
        time_ms: match value_of("--time-ms").map(|s| s.parse()) {
            None => 60_000,
            Some(Ok(ms)) => ms,
            Some(Err(_)) => {
                eprintln!("--time-ms takes a number of milliseconds");
                std::process::exit(2);
            }
        },
        // --exact: no replay, no real-time windows: the exact solver alone.
        witness_first: !args.iter().any(|a| a == "--exact"),
        ..Limits::default()
    };
    let positional: Vec<&str> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| {
            !a.starts_with("--")
                && (*i == 0 || !matches!(args[i - 1].as_str(), "--save" | "--level" | "--time-ms"))
        })
        .map(|(_, a)| a.as_str())
        .collect();
    let files = args.iter().any(|a| a == "--file");
    let which = if files {
        "files"
    } else {
        positional.first().copied().unwrap_or("all")
    };
    println!("| workload | database | txns | micro-ops | level | valid? | check ms | build/forced/prune/SAT ms | ambiguous keys | choice vars | open after propagation | SAT clauses | conflicts | generate / parse ms |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    if files {
        for path in &positional {
            match std::fs::read_to_string(path) {
                Ok(edn) => check_text(path, "file", &edn, 0.0, &levels, &limits),
                Err(e) => eprintln!("{path}: {e}"),
            }
        }
    }
    if which == "left" || which == "all" {
        let sizes: &[u32] = if quick {
            &[1000]
        } else {
            &[1000, 2000, 3000, 4000, 5000]
        };
        for &n in sizes {
            run(
                &format!("left {n} txns"),
                &Params::paper_left(n, Db::Serializable, 7),
                save,
                &levels,
                &limits,
            );
        }
        let n = *sizes.last().unwrap_or(&1000);
        for db in [Db::SnapshotIsolation, Db::LostUpdate] {
            run(
                &format!("left {n} txns"),
                &Params::paper_left(n, db, 7),
                save,
                &levels,
                &limits,
            );
        }
    }
    if which == "right" || which == "all" {
        let shares: &[f64] = if quick {
            &[1.0]
        } else {
            &[0.0, 0.25, 0.5, 0.75, 1.0]
        };
        for &d in shares {
            let mut p = Params::paper_right(d, Db::Serializable, 11);
            if quick {
                p.txns = 2000;
            }
            run(
                &format!("right dup={:.0}%", d * 100.0),
                &p,
                save,
                &levels,
                &limits,
            );
        }
        for db in [Db::SnapshotIsolation, Db::LostUpdate] {
            let mut p = Params::paper_right(1.0, db, 11);
            if quick {
                p.txns = 2000;
            }
            run("right dup=100%", &p, save, &levels, &limits);
        }
    }
}
