//! Outcome classification of database errors, the exec protocol, and the
//! SQLite target end to end (no server needed).

mod run_support;

use isolde::history::Outcome;
use isolde::run::client::{parse_list, Completion};
use isolde::run::exec::{parse_reply, request_line};
#[cfg(feature = "run-sqlite")]
use isolde::run::sqlite;
use isolde::run::{mysql, postgres, Mop, ReadValue, WorkloadKind};

#[test]
fn postgres_sqlstates() {
    use postgres::classify;
    assert_eq!(
        classify(Some("40001")),
        Outcome::Fail,
        "serialization_failure"
    );
    assert_eq!(classify(Some("40P01")), Outcome::Fail, "deadlock_detected");
    assert_eq!(classify(Some("23505")), Outcome::Fail, "unique_violation");
    assert_eq!(classify(Some("55P03")), Outcome::Fail, "lock_not_available");
    assert_eq!(
        classify(Some("40003")),
        Outcome::Info,
        "statement_completion_unknown"
    );
    assert_eq!(
        classify(Some("57014")),
        Outcome::Info,
        "query_canceled (timeout)"
    );
    assert_eq!(
        classify(Some("57P01")),
        Outcome::Info,
        "admin_shutdown (backend terminated)"
    );
    assert_eq!(classify(Some("08006")), Outcome::Info, "connection_failure");
    assert_eq!(classify(None), Outcome::Info, "I/O error, no SQLSTATE");
}

#[test]
fn mysql_error_codes() {
    use mysql::classify;
    assert_eq!(classify(Some(1213), true), Outcome::Fail, "deadlock victim");
    assert_eq!(
        classify(Some(1205), true),
        Outcome::Fail,
        "lock wait timeout, then rolled back"
    );
    assert_eq!(
        classify(Some(1205), false),
        Outcome::Info,
        "lock wait timeout, rollback failed"
    );
    assert_eq!(
        classify(Some(1020), true),
        Outcome::Fail,
        "record changed since last read"
    );
    assert_eq!(classify(Some(1062), true), Outcome::Fail, "duplicate key");
    assert_eq!(classify(Some(2013), true), Outcome::Info, "lost connection");
    assert_eq!(
        classify(Some(1064), true),
        Outcome::Info,
        "unexpected server error"
    );
    assert_eq!(classify(None, true), Outcome::Info, "I/O error");
}

#[test]
fn mysql_session_vars_are_plain_words() {
    assert_eq!(
        mysql::parse_session_var("innodb_snapshot_isolation=ON"),
        Ok(("innodb_snapshot_isolation".into(), "ON".into()))
    );
    assert_eq!(mysql::parse_session_var("x=1.5").unwrap().1, "1.5");
    for bad in [
        "novalue",
        "=1",
        "a=",
        "a;drop=1",
        "a=1;drop table t",
        "a='x'",
    ] {
        assert!(mysql::parse_session_var(bad).is_err(), "{bad}");
    }
}

/// A real SQLite lock conflict is a definite abort; other errors are not.
#[cfg(feature = "run-sqlite")]
#[test]
fn sqlite_busy_is_fail_and_other_errors_info() {
    let path = run_support::temp_path("busy.sqlite");
    let a = rusqlite::Connection::open(&path).unwrap();
    let b = rusqlite::Connection::open(&path).unwrap();
    b.busy_timeout(std::time::Duration::ZERO).unwrap();
    a.execute_batch("CREATE TABLE t (k INTEGER PRIMARY KEY); BEGIN IMMEDIATE")
        .unwrap();
    let busy = b.execute_batch("BEGIN IMMEDIATE").unwrap_err();
    assert_eq!(sqlite::classify(&busy, true), Outcome::Fail);
    assert_eq!(
        sqlite::classify(&busy, false),
        Outcome::Info,
        "not rolled back: unknown"
    );
    a.execute_batch("COMMIT").unwrap();
    let constraint = a
        .execute_batch("INSERT INTO t VALUES (1); INSERT INTO t VALUES (1)")
        .unwrap_err();
    assert_eq!(sqlite::classify(&constraint, true), Outcome::Fail);
    let syntax = a.execute_batch("SELEKT 1").unwrap_err();
    assert_eq!(sqlite::classify(&syntax, true), Outcome::Info);
}

#[test]
fn stored_lists_parse() {
    assert_eq!(parse_list(""), Ok(vec![]));
    assert_eq!(parse_list("1,2,-3"), Ok(vec![1, 2, -3]));
    assert!(parse_list("1,,2").is_err());
    assert!(parse_list("1,x").is_err());
}

#[test]
fn exec_requests_and_replies() {
    let sent = vec![Mop::Append(3, 7), Mop::Read(4, None)];
    assert_eq!(
        request_line(&sent),
        r#"{"value":[["append",3,7],["r",4,null]]}"#
    );
    let ok = parse_reply(
        r#"{"type":"ok","value":[["append",3,7],["r",4,[1,7]]]}"#,
        &sent,
        WorkloadKind::ListAppend,
    );
    assert_eq!(
        ok,
        Ok(Completion::Ok(vec![
            Mop::Append(3, 7),
            Mop::Read(4, Some(ReadValue::List(vec![1, 7])))
        ]))
    );
    let nil = parse_reply(
        r#"{"type":"ok","value":[["append",3,7],["r",4,null]]}"#,
        &sent,
        WorkloadKind::ListAppend,
    );
    assert_eq!(nil, Ok(Completion::Ok(sent.clone())));
    assert_eq!(
        parse_reply(
            r#"{"type":"fail","error":"busy"}"#,
            &sent,
            WorkloadKind::ListAppend
        ),
        Ok(Completion::Fail("busy".into()))
    );
    assert!(matches!(
        parse_reply(r#"{"type":"info"}"#, &sent, WorkloadKind::ListAppend),
        Ok(Completion::Info(_))
    ));
    let reg = vec![Mop::Write(1, 2), Mop::Read(1, None)];
    assert_eq!(
        parse_reply(
            r#"{"type":"ok","value":[["w",1,2],["r",1,2]]}"#,
            &reg,
            WorkloadKind::RwRegister
        ),
        Ok(Completion::Ok(vec![
            Mop::Write(1, 2),
            Mop::Read(1, Some(ReadValue::Int(2)))
        ]))
    );
    // Anything malformed breaks the protocol, and the error quotes it.
    for bad in [
        "not json",
        r#"{"type":"maybe"}"#,
        r#"{"type":"ok"}"#,
        r#"{"type":"ok","value":[["append",3,7]]}"#,
        r#"{"type":"ok","value":[["append",3,8],["r",4,null]]}"#,
        r#"{"type":"ok","value":[["append",9,7],["r",4,null]]}"#,
        r#"{"type":"ok","value":[["r",3,7],["r",4,null]]}"#,
        r#"{"type":"ok","value":[["append",3,7],["r",4,5]]}"#,
        r#"{"type":"ok","value":[["append",3,7],["r",4,["a"]]]}"#,
    ] {
        let e = parse_reply(bad, &sent, WorkloadKind::ListAppend).unwrap_err();
        assert!(e.starts_with("exec: bad reply"), "{bad}: {e}");
        assert!(e.contains(&format!("{bad:?}")), "{bad}: {e}");
    }
    // A long reply is quoted only in part.
    let long = format!("x{}", "y".repeat(10_000));
    let e = parse_reply(&long, &sent, WorkloadKind::ListAppend).unwrap_err();
    assert!(e.contains("(cut)") && e.len() < 400, "{e}");
}

/// The SQLite target end to end, both workloads and both BEGIN modes: every
/// transaction completes, and the history reads back.
#[cfg(feature = "run-sqlite")]
#[test]
fn sqlite_runs_record_complete_histories() {
    for (w, begin, journal) in [
        ("list-append", "deferred", "wal"),
        ("list-append", "immediate", "delete"),
        ("rw-register", "immediate", "wal"),
    ] {
        let db = run_support::temp_path("run.sqlite");
        let db_s = db.display().to_string();
        let r = run_support::run(
            "sqlite",
            &[
                "sqlite",
                "--db",
                &db_s,
                "--begin",
                begin,
                "--journal",
                journal,
                "-w",
                w,
                "-n",
                "300",
                "-p",
                "4",
                "--key-count",
                "3",
                "--seed",
                "1",
            ],
        );
        run_support::assert_complete(&r, 300, &format!("{w} {begin}"));
        assert!(r.counts.ok > 150, "{w} {begin}: {:?}", r.counts);
    }
}

/// Unreachable servers and bad commands are reported before the run.
#[test]
fn setup_errors_are_typed() {
    let args = run_support::parse(&[
        "postgres",
        "--url",
        "postgres://nobody@127.0.0.1:1/none",
        "-n",
        "1",
    ]);
    let e = isolde::run::cli::record(&args).unwrap_err();
    assert!(e.to_string().contains("cannot set up"), "{e}");
    let args = run_support::parse(&["exec", "-n", "1", "--", "/nonexistent/client"]);
    assert!(isolde::run::cli::record(&args).is_err());
    let args = run_support::parse(&["sim", "--key-count", "0"]);
    assert!(isolde::run::cli::record(&args)
        .unwrap_err()
        .to_string()
        .contains("--key-count"));
}

/// `--rate` spaces transactions out; `--time-limit` stops the run.
#[cfg(feature = "run-sqlite")]
#[test]
fn rate_and_time_limit_bound_the_run() {
    let db = run_support::temp_path("rate.sqlite").display().to_string();
    let r = run_support::run(
        "rate",
        &[
            "sqlite", "--db", &db, "-n", "60", "-p", "3", "--rate", "100",
        ],
    );
    assert!(
        r.elapsed.as_secs_f64() >= 0.55,
        "60 txns at 100/s took {:?}",
        r.elapsed
    );
    assert_eq!(r.counts.invoked, 61);
    let db = run_support::temp_path("limit.sqlite").display().to_string();
    let r = run_support::run(
        "limit",
        &[
            "sqlite",
            "--db",
            &db,
            "--time-limit",
            "1",
            "-p",
            "2",
            "--rate",
            "50",
        ],
    );
    let secs = r.elapsed.as_secs_f64();
    assert!((0.9..5.0).contains(&secs), "took {secs}s");
    assert!((20..=80).contains(&r.counts.invoked), "{:?}", r.counts);
}
