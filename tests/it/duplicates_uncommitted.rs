//! Repeated values below read committed (issue 18): isolde's verdicts for
//! read uncommitted (`-c read-uncommitted`: no G0, no garbage read or
//! duplicate elements), `-a G0` and `-a G1c` on small list-append
//! histories whose values repeat agree with the brute-force oracle
//! (`oracle::no_g0`, `oracle::no_g1c`, `oracle::reads_more_than_appended`,
//! written from the definitions: some choice of writers, commits and
//! version orders, where a read may show failed or uncommitted appends and
//! end inside a block, with no ww cycle, or no ww ∪ wr cycle). No false
//! alarm, no miss, no `unknown`; every witness replays.
//!
//! Histories come from the oracle's generator (serial, snapshot, read
//! committed and read uncommitted databases, faults, corrupted reads) with
//! every value taken modulo 2, so that values repeat. `PROPTEST_CASES=N`
//! scales the sample.

#[allow(dead_code)]
use crate::support::oracle;

use isolde::check::{check_history, CheckOptions, Report, Validity};
use isolde::history::read::read_history;
use isolde::history::History;
use isolde::solver::{self, Level};
use oracle::gen::{self, Knobs, Spec};
use oracle::{Hist, Mop};
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};

fn parse(edn: &str) -> History {
    read_history(edn.as_bytes(), "generated", None)
        .unwrap_or_else(|e| panic!("generated EDN parses: {e}\n{edn}"))
}

/// Every value modulo `domain` (1-based), reads included.
fn fold_values(h: &mut Hist, domain: u32) {
    let f = |v: u32| (v.max(1) - 1) % domain + 1;
    for t in &mut h.txns {
        for m in &mut t.mops {
            match m {
                Mop::Append(_, v) => *v = f(*v),
                Mop::Read(_, Some(l)) => l.iter_mut().for_each(|v| *v = f(*v)),
                Mop::Read(_, None) => {}
            }
        }
    }
}

fn check(h: &History, models: Vec<&str>, anomalies: Vec<&str>) -> Report {
    check_history(
        h,
        &CheckOptions {
            models: Some(models.into_iter().map(String::from).collect()),
            anomalies: anomalies.into_iter().map(String::from).collect(),
            witness: true,
            ..CheckOptions::default()
        },
    )
}

fn want(b: bool) -> Validity {
    if b {
        Validity::True
    } else {
        Validity::False
    }
}

fn cases(release: u32) -> u32 {
    let default = if cfg!(debug_assertions) {
        release / 10
    } else {
        release
    };
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Compares one history; returns (no G0, no G1c) by the oracle, `None`
/// when values do not repeat.
fn compare(hist: &Hist) -> Result<Option<(bool, bool, bool)>, String> {
    let edn = hist.to_edn();
    let h = parse(&edn);
    if !solver::has_duplicate_appends(&h) {
        return Ok(None);
    }
    let g0 = oracle::no_g0(hist);
    let g1c = oracle::no_g1c(hist);
    let garbage = oracle::reads_more_than_appended(hist);
    if g1c && !g0 {
        return Err(format!("oracle: no G1c yet G0\n{edn}"));
    }
    if oracle::read_committed(hist) == Some(true) && !g1c {
        return Err(format!("oracle: read committed yet G1c\n{edn}"));
    }
    let ru = !garbage && g0;
    let got = check(&h, vec!["read-uncommitted"], vec![]);
    if got.valid != want(ru) {
        return Err(format!(
            "read-uncommitted: isolde says {:?}, the oracle {ru}; notes {:?}\n{edn}",
            got.valid, got.notes
        ));
    }
    if ru {
        let w = got
            .witness
            .as_ref()
            .and_then(|w| w.first())
            .ok_or_else(|| format!("read-uncommitted true without a witness\n{edn}"))?;
        solver::witness::check_uncommitted(&h, &w.order, false)
            .map_err(|e| format!("read-uncommitted witness does not replay: {e:?}\n{edn}"))?;
    } else if !got.not.iter().any(|m| m == "read-uncommitted") {
        return Err(format!(
            "read-uncommitted false but not ruled out: not {:?}\n{edn}",
            got.not
        ));
    }
    for (list, expect) in [
        (vec!["G0"], g0),
        (vec!["G1c"], g1c),
        (vec!["G0", "G1c"], g1c),
    ] {
        let got = check(&h, vec![], list.clone());
        if got.valid != want(expect) {
            return Err(format!(
                "-a {list:?}: isolde says {:?}, the oracle {expect}; notes {:?}\n{edn}",
                got.valid, got.notes
            ));
        }
    }
    // The levels themselves, each witness replayed.
    let limits = solver::Limits::default();
    for (level, expect) in [(Level::ReadUncommitted, g0), (Level::NoG1c, g1c)] {
        let v = solver::check_duplicates(&h, level, &limits);
        if v.valid != want(expect) {
            return Err(format!(
                "{}: the level says {:?}, the oracle {expect}\n{edn}",
                level.name(),
                v.valid
            ));
        }
        if expect {
            let order = v
                .witness
                .as_ref()
                .ok_or("a valid level without a witness")?;
            solver::witness::check_uncommitted(&h, order, level == Level::NoG1c)
                .map_err(|e| format!("{} witness does not replay: {e:?}\n{edn}", level.name()))?;
        }
    }
    Ok(Some((g0, g1c, garbage)))
}

#[test]
fn read_uncommitted_g0_and_g1c_match_brute_force() {
    let knobs = Knobs {
        faults: true,
        corrupt: true,
        final_read: 5,
        max_txns: 6,
        fault_reads: false,
    };
    let config = Config {
        cases: cases(3000),
        failure_persistence: None,
        max_shrink_iters: 4096,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let strategy = gen::spec(gen::any_semantics(), knobs);
    // no G0 holds / fails, no G1c holds / fails, garbage, unique values.
    let tally = std::cell::Cell::new([0usize; 6]);
    let result = runner.run(&strategy, |spec: Spec| {
        let mut hist = gen::build(&spec);
        fold_values(&mut hist, 2);
        let got = compare(&hist).map_err(TestCaseError::fail)?;
        let mut t = tally.get();
        match got {
            Some((g0, g1c, garbage)) => {
                t[if g0 { 0 } else { 1 }] += 1;
                t[if g1c { 2 } else { 3 }] += 1;
                t[4] += garbage as usize;
            }
            None => t[5] += 1,
        }
        tally.set(t);
        Ok(())
    });
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, spec)) => panic!("{why}\nminimal spec: {spec:?}"),
        Err(e) => panic!("{e}"),
    }
    let [g0_ok, g0_bad, g1c_ok, g1c_bad, garbage, unique] = tally.get();
    eprintln!(
        "no G0: {g0_ok} hold, {g0_bad} fail; no G1c: {g1c_ok} hold, {g1c_bad} fail; {garbage} with a garbage read; {unique} with unique values"
    );
    let n = cases(3000) as usize;
    assert!(
        g0_bad >= n / 300 && g1c_bad >= n / 30 && g1c_ok >= n / 10,
        "too one-sided: {g0_ok} / {g0_bad}, {g1c_ok} / {g1c_bad}"
    );
}
