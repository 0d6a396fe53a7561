//! `isolde schedule`: the table in schedule_cases.txt, plus the report's
//! shape, the conventions (aborts, every conflict an edge), errors and the
//! command's exit codes.

use crate::isolde_cli::schedule::{run_schedule, schedule_command, ScheduleArgs};
use isolde::schedule::{analyze, parse_schedules, ScheduleError, ScheduleReport, MAX_VIEW_TXNS};

fn report(text: &str) -> ScheduleReport {
    let s = parse_schedules(text).unwrap();
    assert_eq!(s.len(), 1, "{text}");
    analyze(&s[0])
}

fn yes_no(v: &str) -> Option<bool> {
    match v {
        "yes" => Some(true),
        "no" => Some(false),
        "unknown" => None,
        _ => panic!("bad expectation {v}"),
    }
}

fn nums(v: &str) -> Vec<u32> {
    v.split(',').map(|n| n.parse().unwrap()).collect()
}

#[test]
fn table_of_textbook_cases() {
    let table = include_str!("schedule_cases.txt");
    let mut checked = 0;
    for (ln, line) in table.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (sched, expect) = line.split_once('|').expect("schedule | expectations");
        let r = report(sched);
        let at = format!("schedule_cases.txt:{}: {sched}\n{r}", ln + 1);
        for e in expect.split_whitespace() {
            let (k, v) = e.split_once('=').expect("key=value");
            match k {
                "csr" => assert_eq!(Some(r.conflict_serializable), yes_no(v), "{at}"),
                "vsr" => assert_eq!(r.view_serializable, yes_no(v), "{at}"),
                "rc" => assert_eq!(Some(r.recoverable), yes_no(v), "{at}"),
                "aca" => assert_eq!(Some(r.avoids_cascading_aborts), yes_no(v), "{at}"),
                "strict" => assert_eq!(Some(r.strict), yes_no(v), "{at}"),
                "order" => assert_eq!(r.serial_order, Some(nums(v)), "{at}"),
                "vorder" => assert_eq!(r.view_serial_order, Some(nums(v)), "{at}"),
                "shapes" => {
                    let got: Vec<&str> = r.shapes.iter().map(|s| s.name).collect();
                    let want: Vec<&str> = if v == "-" {
                        vec![]
                    } else {
                        v.split(',').collect()
                    };
                    assert_eq!(got, want, "{at}");
                }
                _ => panic!("unknown key {k} at line {}", ln + 1),
            }
        }
        // Invariants every report keeps.
        assert_eq!(r.conflict_serializable, r.cycle.is_none(), "{at}");
        assert!(!r.strict || r.avoids_cascading_aborts, "{at}");
        assert!(!r.avoids_cascading_aborts || r.recoverable, "{at}");
        checked += 1;
    }
    assert!(checked >= 25, "only {checked} cases");
}

#[test]
fn lost_update_cycle_and_edges_point_at_operations() {
    let r = report("r1(x) r2(x) w1(x) w2(x) c1 c2");
    type Steps<'a> = Vec<(&'a str, u32, u32)>;
    let edges: Vec<(u32, u32, Steps)> = r
        .edges
        .iter()
        .map(|e| {
            let cs = e
                .conflicts
                .iter()
                .map(|c| (c.kind, c.first.step, c.second.step))
                .collect();
            (e.from, e.to, cs)
        })
        .collect();
    assert_eq!(
        edges,
        vec![
            // Every conflict: r1(x) < w2(x) as well as w1(x) < w2(x).
            (1, 2, vec![("ww", 3, 4), ("rw", 1, 4)]),
            (2, 1, vec![("rw", 2, 3)]),
        ]
    );
    let cycle = r.cycle.expect("a cycle");
    assert_eq!(cycle.len(), 2);
    assert_eq!(cycle[0].to, cycle[1].from);
    assert_eq!(cycle[1].to, cycle[0].from);
    assert!(cycle.iter().all(|e| e.conflicts.len() == 1));
    let lu = r.shapes.iter().find(|s| s.name == "lost-update").unwrap();
    let steps: Vec<u32> = lu.ops.iter().map(|o| o.step).collect();
    assert_eq!((lu.txns.clone(), steps), (vec![2, 1], vec![2, 3, 4]));
    assert_eq!(lu.ops[0].op, "r2(x)");
    assert_eq!((lu.ops[0].line, lu.ops[0].column), (1, 7));
}

#[test]
fn write_skew_points_at_both_anti_dependencies() {
    let r = report("r1(x) r2(y) w1(y) w2(x) c1 c2");
    let ws = r.shapes.iter().find(|s| s.name == "write-skew").unwrap();
    assert_eq!(ws.txns, vec![1, 2]);
    assert_eq!(ws.items, vec!["x", "y"]);
    let ops: Vec<&str> = ws.ops.iter().map(|o| o.op.as_str()).collect();
    assert_eq!(ops, vec!["r1(x)", "r2(y)", "w1(y)", "w2(x)"]);
    // Sharing a written item makes it something else (here: no write skew).
    let r = report("r1(x) r2(y) w1(y) w2(x) w1(z) w2(z) c1 c2");
    assert!(r.shapes.iter().all(|s| s.name != "write-skew"));
}

#[test]
fn dirty_read_with_abort_is_not_recoverable() {
    let r = report("w1(x) r2(x) c2 a1");
    assert!(!r.recoverable);
    let v = &r.class_violations[0];
    assert_eq!(v.class, "recoverable");
    let ops: Vec<&str> = v.ops.iter().map(|o| o.op.as_str()).collect();
    assert_eq!(ops, vec!["w1(x)", "r2(x)", "c2", "a1"]);
    assert!(v.explanation.contains("T1 aborted"), "{}", v.explanation);
    let dr = r.shapes.iter().find(|s| s.name == "dirty-read").unwrap();
    assert_eq!(dr.ops.len(), 3);
    assert!(
        dr.explanation.contains("aborted later"),
        "{}",
        dr.explanation
    );
    // T1 aborted, so the graph has no vertex for it and no edge.
    assert_eq!(r.aborted, vec![1]);
    assert!(r.edges.is_empty());
    assert_eq!(r.serial_order, Some(vec![2]));
}

#[test]
fn aborted_transactions_are_excluded_from_the_graph() {
    // With T2 committed: a cycle. With T2 aborted: T2's write is gone.
    assert!(!report("r1(x) w2(x) w1(x) c1 c2").conflict_serializable);
    let r = report("r1(x) w2(x) w1(x) c1 a2");
    assert!(r.conflict_serializable);
    assert!(r.edges.is_empty());
    assert_eq!(r.serial_order, Some(vec![1]));
    assert_eq!(r.view_serializable, Some(true));
    assert_eq!((r.committed, r.aborted), (vec![1], vec![2]));
    // ...but its write still counts for the recoverability classes.
    assert!(!r.strict);
}

#[test]
fn edges_are_every_conflict_like_a_textbook_precedence_graph() {
    // w1 → w2 → w3: T1 → T3 is a conflict too, and listed.
    let r = report("w1(x) w2(x) w3(x) c1 c2 c3");
    let pairs: Vec<(u32, u32)> = r.edges.iter().map(|e| (e.from, e.to)).collect();
    assert_eq!(pairs, vec![(1, 2), (1, 3), (2, 3)]);
    assert!(r.all_conflict_edges);
    assert_eq!(r.serial_order, Some(vec![1, 2, 3]));
    let text = r.to_string();
    assert!(text.contains("T1 -> T3   ww w1(x)#1 < w3(x)#3"), "{text}");
    // Reads after reads conflict with nothing; r1 → w2 (rw) and w2 → r3 (wr)
    // make T1 → T2 and T2 → T3 only, and the read r1 before w2 makes no edge
    // to the reader T3.
    let r = report("r1(x) w2(x) r3(x) c1 c2 c3");
    let pairs: Vec<(u32, u32)> = r.edges.iter().map(|e| (e.from, e.to)).collect();
    assert_eq!(pairs, vec![(1, 2), (2, 3)]);
    let kinds: Vec<&str> = r.edges.iter().map(|e| e.conflicts[0].kind).collect();
    assert_eq!(kinds, vec!["rw", "wr"]);
}

#[test]
fn view_serializability_is_unknown_past_the_limit() {
    // The blind-write example plus enough independent transactions.
    let mut text = String::from("r1(x) w2(x) w1(x) w3(x)");
    for t in 4..=(MAX_VIEW_TXNS as u32 + 1) {
        text.push_str(&format!(" w{t}(y{t})"));
    }
    let r = report(&text);
    assert!(!r.conflict_serializable);
    assert_eq!(r.view_serializable, None);
    assert!(
        r.view_reason.contains("exact search stops at 12"),
        "{}",
        r.view_reason
    );
    // Without blind writes the answer stays exact at any size.
    let mut text = String::from("r1(x) r2(x) w1(x) w2(x)");
    for t in 3..=40 {
        text.push_str(&format!(" r{t}(y{t}) w{t}(y{t})"));
    }
    assert_eq!(report(&text).view_serializable, Some(false));
    // Nor when conflict serializable.
    let text: Vec<String> = (1..=40).map(|t| format!("r{t}(x) w{t}(x) c{t}")).collect();
    let r = report(&text.join(" "));
    assert_eq!(r.view_serializable, Some(true));
    assert_eq!(r.view_serial_order, r.serial_order);
}

#[test]
fn view_serializability_explains_impossible_reads() {
    for (text, why) in [
        // T2 reads a write that T1 later overwrites: no serial order shows it.
        (
            "w1(x) r2(x) w1(x) c1 c2",
            "which its own transaction overwrites later (w1(x)#3)",
        ),
        // T1 reads T2's x after writing x itself.
        (
            "w1(x) w2(x) r1(x) w3(x) c1 c2 c3",
            "reads its own earlier write w1(x)#1",
        ),
        // T1 reads x twice from different writers.
        (
            "r1(x) w2(x) w3(y) r1(x) c1 c2 c3",
            "read x from different writes",
        ),
        // Blind writes, but no order fits the final write and the read.
        (
            "r1(x) w2(x) w1(x) c1 c2",
            "no serial order has the same reads-from",
        ),
    ] {
        let r = report(text);
        assert_eq!(r.view_serializable, Some(false), "{text}");
        assert!(r.view_reason.contains(why), "{text}: {}", r.view_reason);
    }
}

#[test]
fn json_report_uses_kebab_case_names() {
    let r = report("r1(x) w2(x) w1(x) w3(x) c1 c2 c3");
    let v = serde_json::to_value(&r).unwrap();
    for k in [
        "conflict-serializable",
        "edges",
        "serial-order",
        "cycle",
        "recoverable",
        "avoids-cascading-aborts",
        "strict",
        "class-violations",
        "view-serializable",
        "view-serial-order",
        "view-reason",
        "shapes",
    ] {
        assert!(v.get(k).is_some(), "missing {k} in {v}");
    }
    assert_eq!(v["serial-order"], serde_json::Value::Null);
    assert_eq!(v["view-serializable"], serde_json::json!(true));
    let first = &v["edges"][0]["conflicts"][0]["first"];
    assert!(
        first.get("step").is_some() && first.get("column").is_some(),
        "{first}"
    );
}

#[test]
fn text_report_names_each_verdict() {
    let text = report("r1(x) r2(x) w1(x) w2(x) c1 c2").to_string();
    for needle in [
        "conflict-serializable: no",
        "T1 -> T2",
        "cycle: T1 -",
        "recoverable: yes",
        "avoids-cascading-aborts: yes",
        "strict: no",
        "view-serializable: no",
        "lost-update: T2 read x (r2(x)#2)",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    let text = report("w1(x) r2(x) c2 a1").to_string();
    assert!(
        text.contains("recoverable fails: T2 read x (r2(x)#2) from T1 (w1(x)#1) and committed (c2#3), but T1 aborted (a1#4)"),
        "{text}"
    );
    let text = report("r1(x) w1(x) c1 r2(x) c2").to_string();
    assert!(text.contains("serial order: T1 T2"), "{text}");
    assert!(text.contains("shapes: none"), "{text}");
}

#[test]
fn parse_errors_carry_line_and_column() {
    let e = parse_schedules("r1(x) w2(x)\nr1(x) q2(x)").unwrap_err();
    assert_eq!(e.position(), (2, 7));
    assert!(matches!(e, ScheduleError::Syntax { .. }));
    assert!(
        e.to_string()
            .starts_with("line 2, column 7: unknown operation `q`"),
        "{e}"
    );
    let shown = isolde::schedule::render_error("r1(x) w2(x)\nr1(x) q2(x)", &e);
    assert!(shown.ends_with("  r1(x) q2(x)\n        ^\n"), "{shown}");
}

#[test]
fn big_schedules_stay_fast() {
    // 20k readers of one item then a writer, and a long chain of writers:
    // a quadratic graph construction would take minutes here.
    let mut text = String::new();
    for t in 1..=20_000 {
        text.push_str(&format!("r{t}(x) "));
    }
    text.push_str("w0(x) ");
    for t in 20_001..=40_000 {
        text.push_str(&format!("w{t}(y) r{t}(x) "));
    }
    let start = std::time::Instant::now();
    let r = report(&text);
    assert!(r.conflict_serializable);
    assert_eq!(r.serial_order.as_ref().unwrap().len(), 40_001);
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
    // Every conflict would be 200 million edges: the adjacent ones are
    // listed, and the text says so.
    assert!(!r.all_conflict_edges);
    assert!(r
        .to_string()
        .contains("only conflicts between adjacent accesses listed"));
}

fn run(expr: Option<&str>, file: Option<std::path::PathBuf>) -> i32 {
    run_to(expr, file, true).0
}

/// Exit status, stdout and stderr of the command.
fn run_to(
    expr: Option<&str>,
    file: Option<std::path::PathBuf>,
    verbose: bool,
) -> (i32, String, String) {
    let args = ScheduleArgs {
        expr: expr.map(str::to_string),
        file,
        verbose,
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_schedule(&args, &mut out, &mut err).unwrap();
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn command_output() {
    let (code, out, err) = run_to(Some("r1(x) w1(x) c1\nr1(x) r2(x) w1(x) w2(x)"), None, true);
    assert_eq!((code, err.as_str()), (1, ""));
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["line"], 2);
    assert_eq!(lines[1]["conflict-serializable"], false);
    let (code, out, _) = run_to(Some("r1(x) w1(x) c1\nr2(y) c2"), None, false);
    assert_eq!(code, 0);
    assert!(
        out.contains("schedule (line 1)") && out.contains("\n\nschedule (line 2)"),
        "{out}"
    );
    let (code, out, err) = run_to(Some("r1(x) w2[x"), None, false);
    assert_eq!((code, out.as_str()), (4, ""));
    assert!(
        err.contains("line 1, column 9") && err.ends_with("          ^\n"),
        "{err}"
    );
    // schedule_command is the same, writing to the process's stdout/stderr.
    let args = ScheduleArgs {
        expr: Some("w1(x)".into()),
        file: None,
        verbose: true,
    };
    assert_eq!(schedule_command(&args).unwrap(), 0);
}

#[test]
fn exit_codes() {
    assert_eq!(run(Some("r1(x) w1(x) c1 r2(x) c2"), None), 0);
    assert_eq!(run(Some("r1(x) r2(x) w1(x) w2(x)"), None), 1);
    assert_eq!(run(Some("r1(x) w2(x"), None), 4);
    assert_eq!(run(Some("# nothing"), None), 4);
    let dir = std::env::temp_dir().join(format!("isolde-schedule-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("s.txt");
    std::fs::write(&f, "r1(x) w1(x) c1\nr1(x) r2(x) w1(x) w2(x)\n").unwrap();
    assert_eq!(run(None, Some(f.clone())), 1);
    std::fs::write(
        &f,
        "{\"txn\":1,\"op\":\"w\",\"item\":\"x\"}\n{\"txn\":1,\"op\":\"c\"}\n",
    )
    .unwrap();
    assert_eq!(run(None, Some(f.clone())), 0);
    assert_eq!(run(None, Some(dir.join("missing.txt"))), 4);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn arguments_parse_with_clap() {
    use clap::Parser;
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: ScheduleArgs,
    }
    let c = Cli::try_parse_from(["x", "-e", "r1(x)", "-v"]).unwrap();
    assert_eq!(c.args.expr.as_deref(), Some("r1(x)"));
    assert!(c.args.verbose);
    let c = Cli::try_parse_from(["x", "file.txt"]).unwrap();
    assert_eq!(c.args.file.unwrap().to_str(), Some("file.txt"));
    assert!(Cli::try_parse_from(["x"]).is_err());
    assert!(Cli::try_parse_from(["x", "-e", "r1(x)", "file.txt"]).is_err());
}
