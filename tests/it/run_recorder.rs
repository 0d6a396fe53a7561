//! The recorder: whole lines, monotone index and time, readable after a
//! crash at any point.

use crate::support::run_support;

use isolde::history::Outcome;
use isolde::run::recorder::{Clock, Recorder};
use isolde::run::{Mop, ReadValue};
use std::time::{Duration, Instant};

fn parse_lines(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("line {l:?} is not JSON: {e}")))
        .collect()
}

#[test]
fn lines_have_elle_cli_shape() {
    let path = run_support::temp_path("shape.jsonl");
    let rec = Recorder::create(&path, Clock::Manual(Default::default())).unwrap();
    rec.set_time(5);
    let txn = vec![Mop::Append(3, 7), Mop::Read(4, None)];
    assert_eq!(rec.invoke(2, &txn), 0);
    rec.set_time(9);
    let done = vec![
        Mop::Append(3, 7),
        Mop::Read(4, Some(ReadValue::List(vec![1, 7]))),
    ];
    assert_eq!(rec.complete(2, Outcome::Ok, &done, None), 1);
    rec.complete(2, Outcome::Fail, &txn, Some("serialization \"failure\""));
    rec.fault("kill -9 x", None);
    rec.finish().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        r#"{"index":0,"type":"invoke","process":2,"f":"txn","value":[["append",3,7],["r",4,null]],"time":5}"#
    );
    assert_eq!(
        lines[1],
        r#"{"index":1,"type":"ok","process":2,"f":"txn","value":[["append",3,7],["r",4,[1,7]]],"time":9}"#
    );
    let v = parse_lines(&path);
    assert_eq!(v[2]["error"], "serialization \"failure\"");
    assert_eq!(v[3]["process"], "nemesis");
    // The history readers take it back, nemesis ops aside.
    let h = isolde::history::read::read_history_file(&path, None).unwrap();
    assert_eq!(h.txns.len(), 2);
    assert_eq!(h.txns[0].outcome, Outcome::Ok);
    assert_eq!(h.txns[0].invoke_time, Some(5));
}

#[test]
fn register_values_are_plain_integers() {
    let path = run_support::temp_path("reg.jsonl");
    let rec = Recorder::create(&path, Clock::Real(Instant::now())).unwrap();
    rec.complete(
        0,
        Outcome::Info,
        &[Mop::Write(1, 2), Mop::Read(1, Some(ReadValue::Int(2)))],
        None,
    );
    rec.finish().unwrap();
    let v = parse_lines(&path);
    assert_eq!(v[0]["value"], serde_json::json!([["w", 1, 2], ["r", 1, 2]]));
    assert_eq!(v[0]["type"], "info");
}

/// Many threads at once: every line whole, indices 0..n in file order,
/// times never decreasing.
#[test]
fn concurrent_writers_never_interleave() {
    let path = run_support::temp_path("concurrent.jsonl");
    let rec = Recorder::create(&path, Clock::Real(Instant::now())).unwrap();
    std::thread::scope(|s| {
        for p in 0..8 {
            let rec = &rec;
            s.spawn(move || {
                for i in 0..500 {
                    let txn: Vec<Mop> = (0..5).map(|k| Mop::Append(k, i)).collect();
                    rec.invoke(p, &txn);
                    rec.complete(p, Outcome::Ok, &txn, None);
                }
            });
        }
    });
    rec.finish().unwrap();
    let v = parse_lines(&path);
    assert_eq!(v.len(), 8000);
    let mut last_time = 0;
    for (i, l) in v.iter().enumerate() {
        assert_eq!(l["index"].as_u64(), Some(i as u64));
        let t = l["time"].as_u64().unwrap();
        assert!(t >= last_time);
        last_time = t;
    }
}

/// A recorder dropped without `finish` (a crashed run) leaves a readable
/// history: the open invocation becomes an indeterminate transaction.
#[test]
fn dropped_without_finishing_stays_checkable() {
    let path = run_support::temp_path("dropped.jsonl");
    {
        let rec = Recorder::create(&path, Clock::Real(Instant::now())).unwrap();
        rec.invoke(0, &[Mop::Append(1, 1)]);
        rec.complete(0, Outcome::Ok, &[Mop::Append(1, 1)], None);
        rec.invoke(1, &[Mop::Append(1, 2), Mop::Read(1, None)]);
    }
    let h = isolde::history::read::read_history_file(&path, None).unwrap();
    assert_eq!(h.txns.len(), 2);
    assert!(h
        .txns
        .iter()
        .any(|t| t.outcome == Outcome::Info && t.process == 1));
}

/// The real thing: a child process records as fast as it can and is killed
/// with SIGKILL; every line in the file is whole and the history reads.
#[test]
fn killed_writer_leaves_only_whole_lines() {
    if let Ok(p) = std::env::var("ISOLDE_TEST_RECORD_FOREVER") {
        let rec = Recorder::create(std::path::Path::new(&p), Clock::Real(Instant::now())).unwrap();
        let mut i = 0i64;
        loop {
            let txn: Vec<Mop> = (0..20).map(|k| Mop::Append(k, i)).collect();
            rec.invoke(i % 7, &txn);
            rec.complete(i % 7, Outcome::Ok, &txn, None);
            i += 1;
        }
    }
    let path = run_support::temp_path("killed.jsonl");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "run_recorder::killed_writer_leaves_only_whole_lines",
            "--exact",
            "--nocapture",
        ])
        .env("ISOLDE_TEST_RECORD_FOREVER", &path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) < 200_000 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the child wrote nothing"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let mut text = std::fs::read_to_string(&path).unwrap();
    // SIGKILL can stop a write(2) at a page boundary of the file, tearing the
    // line being written at that instant (Linux checks for fatal signals
    // between pages). Everything before it is whole; drop the torn tail, as
    // a user would, and the rest must read.
    if !text.ends_with('\n') {
        let cut = text.rfind('\n').map_or(0, |i| i + 1);
        text.truncate(cut);
        std::fs::write(&path, &text).unwrap();
    }
    let v = parse_lines(&path);
    assert!(v.len() > 100);
    let h = isolde::history::read::read_history_file(&path, None).unwrap();
    assert!(h.txns.len() * 2 >= v.len());
}

#[test]
fn default_history_names_are_timestamped_and_fresh() {
    let p = isolde::run::record::default_history_path();
    let name = p.display().to_string();
    assert!(
        name.starts_with("isolde-run-20") && name.ends_with("Z.jsonl"),
        "{name}"
    );
    assert_eq!(name.len(), "isolde-run-20261202T121653Z.jsonl".len());
    assert!(!p.exists());
}
