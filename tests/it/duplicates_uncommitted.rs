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

use crate::support::cases;
#[allow(dead_code)]
use crate::support::oracle;
use crate::support::parse_edn;

use isolde::check::{check_history, CheckOptions, Report, Validity};
use isolde::history::History;
use isolde::solver::{self, Level};
use oracle::gen::{self, Knobs, Spec};
use oracle::Hist;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};

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

/// What isolde must say of a condition the oracle finds `holds`: when it
/// fails only because some key's reads `disagree` on the order of its
/// committed appends (incompatible-order, which does not rule out read
/// uncommitted), `unknown`.
fn expect(holds: bool, disagree: bool) -> Validity {
    if !holds && disagree {
        Validity::Unknown
    } else {
        want(holds)
    }
}

fn want(b: bool) -> Validity {
    if b {
        Validity::True
    } else {
        Validity::False
    }
}

/// Compares one history; returns (no G0, no G1c, garbage read, reads
/// disagree) by the oracle, `None` when values do not repeat.
fn compare(hist: &Hist) -> Result<Option<(bool, bool, bool, bool)>, String> {
    let edn = hist.to_edn();
    let h = parse_edn(&edn);
    if !solver::has_duplicate_appends(&h) {
        return Ok(None);
    }
    let g0 = oracle::no_g0(hist);
    let g1c = oracle::no_g1c(hist);
    let garbage = oracle::reads_more_than_appended(hist);
    let disagree = oracle::orders_disagree(hist);
    if disagree && g0 {
        return Err(format!("oracle: no G0 yet the reads disagree\n{edn}"));
    }
    if g1c && !g0 {
        return Err(format!("oracle: no G1c yet G0\n{edn}"));
    }
    if oracle::read_committed(hist) == Some(true) && !g1c {
        return Err(format!("oracle: read committed yet G1c\n{edn}"));
    }
    let ru = !garbage && g0;
    let got = check(&h, vec!["read-uncommitted"], vec![]);
    let ru_want = if garbage {
        Validity::False
    } else {
        expect(g0, disagree)
    };
    if got.valid != ru_want {
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
    } else if ru_want == Validity::False && !got.not.iter().any(|m| m == "read-uncommitted") {
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
        if got.valid != self::expect(expect, disagree) {
            return Err(format!(
                "-a {list:?}: isolde says {:?}, the oracle {expect}; notes {:?}\n{edn}",
                got.valid, got.notes
            ));
        }
    }
    // The levels themselves, by their search alone (no witness taken from
    // replays or read committed), each witness replayed.
    let limits = solver::Limits {
        witness_first: false,
        ..solver::Limits::default()
    };
    for (level, expect) in [(Level::ReadUncommitted, g0), (Level::NoG1c, g1c)] {
        let v = solver::check_duplicates(&h, level, &limits);
        if v.valid != self::expect(expect, disagree) {
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
    Ok(Some((g0, g1c, garbage, disagree)))
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
    // no G0 holds / fails, no G1c holds / fails, garbage, unique values,
    // reads that disagree (no G0 and no G1c then unknown).
    let tally = std::cell::Cell::new([0usize; 7]);
    let result = runner.run(&strategy, |spec: Spec| {
        let mut hist = gen::build(&spec);
        oracle::fold_values(&mut hist, 2);
        let got = compare(&hist).map_err(TestCaseError::fail)?;
        let mut t = tally.get();
        match got {
            Some((g0, g1c, garbage, disagree)) => {
                if disagree {
                    t[6] += 1;
                } else {
                    t[if g0 { 0 } else { 1 }] += 1;
                    t[if g1c { 2 } else { 3 }] += 1;
                }
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
    let [g0_ok, g0_bad, g1c_ok, g1c_bad, garbage, unique, disagree] = tally.get();
    eprintln!(
        "no G0: {g0_ok} hold, {g0_bad} fail; no G1c: {g1c_ok} hold, {g1c_bad} fail; {disagree} whose reads disagree (unknown); {garbage} with a garbage read; {unique} with unique values"
    );
    // A G0 every choice has is rare in random histories (2 of 3,000 in one
    // run; most histories no choice explains have reads that disagree), so
    // FORCED_G0 below pins that case down; here the failures of either
    // kind must be there.
    let n = cases(3000) as usize;
    assert!(
        g0_bad + disagree >= n / 300 && g1c_bad >= n / 30 && g1c_ok >= n / 10,
        "too one-sided: {g0_ok} / {g0_bad} / {disagree}, {g1c_ok} / {g1c_bad}"
    );
}

/// T0 and T1 append to x and y in opposite orders, as T2's reads show
/// (no failed append could stand in for theirs): a G0 every choice has.
/// z's values repeat.
const FORCED_G0: &str = r#"{:type :ok, :f :txn, :process 0, :index 0, :value [[:append :x 1] [:append :y 2]]}
{:type :ok, :f :txn, :process 1, :index 1, :value [[:append :x 2] [:append :y 1]]}
{:type :ok, :f :txn, :process 2, :index 2, :value [[:r :x [1 2]] [:r :y [1 2]]]}
{:type :ok, :f :txn, :process 3, :index 3, :value [[:append :z 5]]}
{:type :ok, :f :txn, :process 4, :index 4, :value [[:append :z 5]]}
{:type :ok, :f :txn, :process 5, :index 5, :value [[:r :z [5 5]]]}
"#;

/// T0 and T1 each read the other's append: a G1c every choice has, and no
/// G0.
const FORCED_G1C: &str = r#"{:type :ok, :f :txn, :process 0, :index 0, :value [[:append :x 1] [:r :y [1]]]}
{:type :ok, :f :txn, :process 1, :index 1, :value [[:append :y 1] [:r :x [1]]]}
{:type :ok, :f :txn, :process 3, :index 3, :value [[:append :z 5]]}
{:type :ok, :f :txn, :process 4, :index 4, :value [[:append :z 5]]}
{:type :ok, :f :txn, :process 5, :index 5, :value [[:r :z [5 5]]]}
"#;

#[test]
fn a_forced_g0_rules_out_read_uncommitted_and_a_forced_g1c_read_committed() {
    let h = parse_edn(FORCED_G0);
    for (models, list) in [(vec!["read-uncommitted"], vec![]), (vec![], vec!["G0"])] {
        let r = check(&h, models, list);
        assert_eq!(r.valid, Validity::False);
        assert_eq!(r.anomaly_types, vec!["G0"]);
        assert_eq!(r.not, vec!["read-uncommitted"]);
        assert!(r.also_not.iter().any(|m| m == "read-committed"));
        let f = &r.anomalies["G0"][0];
        assert!(!f.txns.is_empty(), "the finding names its transactions");
    }
    let r = check(&h, vec![], vec!["G1c"]);
    assert_eq!(r.valid, Validity::False);

    let h = parse_edn(FORCED_G1C);
    let r = check(&h, vec!["read-uncommitted"], vec![]);
    assert_eq!(r.valid, Validity::True, "{:?}", r.notes);
    let w = &r.witness.expect("a witness")[0];
    assert_eq!(w.model, "read-uncommitted");
    solver::witness::check_uncommitted(&h, &w.order, false).unwrap();
    assert_eq!(check(&h, vec![], vec!["G0"]).valid, Validity::True);
    let r = check(&h, vec![], vec!["G1c"]);
    assert_eq!(r.valid, Validity::False);
    assert_eq!(r.anomaly_types, vec!["G1c"]);
    assert_eq!(r.not, vec!["read-committed"]);
    assert!(!r.also_not.iter().any(|m| m == "read-uncommitted"));
    // The finding names the two readers and their keys, not z's.
    let f = &r.anomalies["G1c"][0];
    assert_eq!(f.txns.len(), 2, "{:?}", f.txns);
}

/// A value read more often than the history appends it rules out read
/// uncommitted (duplicate elements), not the absence of G0.
#[test]
fn duplicate_elements_rule_out_read_uncommitted_not_g0() {
    let edn = r#"{:type :ok, :f :txn, :process 0, :index 0, :value [[:append :x 1]]}
{:type :ok, :f :txn, :process 1, :index 1, :value [[:append :x 1]]}
{:type :ok, :f :txn, :process 2, :index 2, :value [[:r :x [1 1 1]]]}
"#;
    let h = parse_edn(edn);
    let r = check(&h, vec!["read-uncommitted"], vec![]);
    assert_eq!(r.valid, Validity::False);
    assert_eq!(r.anomaly_types, vec!["duplicate-elements"]);
    assert!(r.not.iter().any(|m| m == "read-uncommitted"), "{:?}", r.not);
    for list in [vec!["G0"], vec!["G1c"]] {
        let r = check(&h, vec![], list.clone());
        assert_eq!(r.valid, Validity::True, "-a {list:?}: {:?}", r.notes);
    }
}

/// The simulated read-committed database with its aborted-read bug, on
/// keys whose values repeat: read committed fails on a forced G1a (a read
/// of a value only a failed transaction appended), and read uncommitted,
/// `-a G0` and `-a G1c`, which allow it, are decided (they hold), from the
/// command line, in well under the solver's time limit.
#[test]
fn the_aborted_read_sim_is_decided_below_read_committed() {
    let dir = std::env::temp_dir().join(format!("isolde-ru-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("h.jsonl");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_isolde"))
        .args([
            "run",
            "sim",
            "-i",
            "read-committed",
            "--bug",
            "aborted-read",
        ])
        .args(["--duplicates", "1", "--value-domain", "4", "-n", "2000"])
        .args(["--seed", "3", "-q", "-o"])
        .arg(&path)
        .output()
        .unwrap();
    // The run's own check (read committed) fails.
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = |args: &[&str]| {
        let t0 = std::time::Instant::now();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_isolde"))
            .arg("check")
            .args(args)
            .arg(&path)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            t0.elapsed(),
        )
    };
    let (code, stdout, _) = run(&["-c", "read-committed"]);
    assert_eq!(code, Some(1), "{stdout}");
    for args in [
        &["-c", "read-uncommitted", "--witness"][..],
        &["-c", "none", "-a", "G0"][..],
        &["-c", "none", "-a", "G1c"][..],
    ] {
        let (code, stdout, took) = run(args);
        assert_eq!(code, Some(0), "{args:?}: {stdout}");
        assert!(stdout.contains("true"), "{args:?}: {stdout}");
        assert!(took.as_secs() < 10, "{args:?} took {took:?}");
    }
    let (_, stdout, _) = run(&["-c", "read-uncommitted", "--witness", "-x"]);
    assert!(stdout.contains("Witness for read-uncommitted"), "{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// T1 and T2 both read x = [1] and append to it; T3 then reads [1 3] and
/// T4 [1 2]: a lost update, whose reads disagree on the order of x's
/// committed appends (Elle's incompatible-order). With unique values
/// isolde, as Elle, finds no G0 and says read uncommitted holds; the same
/// history with repeated values on another key must not turn that into a
/// G0: no choice explains x's reads, cycles or none, so it is `unknown`.
const LOST_ELEMENT: &str = r#"{:type :ok, :f :txn, :process 0, :index 0, :value [[:append :x 1]]}
{:type :ok, :f :txn, :process 1, :index 1, :value [[:r :x [1]] [:append :x 2]]}
{:type :ok, :f :txn, :process 2, :index 2, :value [[:r :x [1]] [:append :x 3]]}
{:type :ok, :f :txn, :process 3, :index 3, :value [[:r :x [1 3]]]}
{:type :ok, :f :txn, :process 4, :index 4, :value [[:r :x [1 2]]]}
"#;

#[test]
fn reads_that_disagree_on_committed_appends_are_no_g0() {
    let unique = parse_edn(LOST_ELEMENT);
    assert_eq!(
        check(&unique, vec!["read-uncommitted"], vec![]).valid,
        Validity::True
    );
    let repeated = parse_edn(&format!(
        "{LOST_ELEMENT}{}",
        "{:type :ok, :f :txn, :process 5, :index 5, :value [[:append :y 5] [:append :y 5] [:r :y [5 5]]]}\n"
    ));
    for (models, anomalies) in [
        (vec!["read-uncommitted"], vec![]),
        (vec![], vec!["G0"]),
        (vec![], vec!["G1c"]),
    ] {
        let r = check(&repeated, models.clone(), anomalies.clone());
        assert_eq!(
            r.valid,
            Validity::Unknown,
            "{models:?} {anomalies:?}: {:?}",
            r.notes
        );
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("disagree on the order of its committed appends")),
            "{:?}",
            r.notes
        );
        assert!(r.anomaly_types.is_empty(), "{:?}", r.anomaly_types);
    }
    // Read committed is still ruled out (incompatible-order is a G1a fact).
    assert_eq!(
        check(&repeated, vec!["read-committed"], vec![]).valid,
        Validity::False
    );
}
