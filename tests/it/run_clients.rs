//! Outcome classification of database errors, the exec protocol, and the
//! SQLite target end to end (no server needed).

use crate::support::run_support;

use isolde::history::Outcome;
use isolde::run::client::{parse_list, Completion};
use isolde::run::dialect::{MyDialect, PgDialect, Phase};
use isolde::run::exec::{parse_reply, request_line};
use isolde::run::mysql::MyLevel;
use isolde::run::postgres::PgLevel;
#[cfg(feature = "run-sqlite")]
use isolde::run::sqlite;
use isolde::run::{mysql, Mop, ReadValue, WorkloadKind};

/// Both phases give `want` for this error.
fn pg_both(d: PgDialect, code: Option<&str>, message: &str, want: Outcome, what: &str) {
    for phase in [Phase::Statement, Phase::Commit] {
        assert_eq!(
            d.classify(code, message, phase),
            want,
            "{}: {what} ({code:?} {message:?}) at {phase:?}",
            d.name()
        );
    }
}

const PG_DIALECTS: [PgDialect; 3] = [
    PgDialect::Postgres,
    PgDialect::Cockroachdb,
    PgDialect::Yugabytedb,
];

#[test]
fn postgres_protocol_sqlstates_in_every_dialect() {
    use Outcome::{Fail, Info};
    for d in PG_DIALECTS {
        pg_both(
            d,
            Some("40001"),
            "could not serialize access",
            Fail,
            "serialization_failure",
        );
        pg_both(
            d,
            Some("40P01"),
            "deadlock detected",
            Fail,
            "deadlock_detected",
        );
        pg_both(
            d,
            Some("23505"),
            "duplicate key value",
            Fail,
            "unique_violation",
        );
        pg_both(
            d,
            Some("55P03"),
            "could not obtain lock",
            Fail,
            "lock_not_available",
        );
        // A cancelled statement (--txn-timeout's cancel request): no COMMIT
        // follows it, so the transaction never commits; a cancelled COMMIT
        // may have committed.
        let canceled = "canceling statement due to user request";
        assert_eq!(
            d.classify(Some("57014"), canceled, Phase::Statement),
            Fail,
            "{}",
            d.name()
        );
        assert_eq!(
            d.classify(Some("57014"), canceled, Phase::Commit),
            Info,
            "{}",
            d.name()
        );
        pg_both(
            d,
            Some("57P01"),
            "terminating connection",
            Info,
            "admin_shutdown",
        );
        pg_both(
            d,
            Some("08006"),
            "connection failure",
            Info,
            "connection_failure",
        );
        pg_both(d, Some("XX000"), "internal error", Info, "internal_error");
        pg_both(
            d,
            None,
            "connection closed",
            Info,
            "no answer: connection lost, I/O",
        );
        // Statement completion unknown: only a COMMIT can leave the
        // transaction's fate open; after a failed statement isolde sends no
        // COMMIT, so the transaction did not commit.
        assert_eq!(d.classify(Some("40003"), "", Phase::Commit), Info);
        assert_eq!(d.classify(Some("40003"), "", Phase::Statement), Fail);
    }
}

/// CockroachDB's transaction retry errors are 40001 whatever the reason
/// (https://www.cockroachlabs.com/docs/stable/transaction-retry-error-reference);
/// messages from that page. "result is ambiguous" is 40003
/// (https://www.cockroachlabs.com/docs/stable/common-errors).
#[test]
fn cockroachdb_retry_errors_fail_and_ambiguous_commits_are_info() {
    let d = PgDialect::Cockroachdb;
    for reason in [
        "restart transaction: TransactionRetryWithProtoRefreshError: TransactionRetryError: retry txn (RETRY_WRITE_TOO_OLD)",
        "restart transaction: TransactionRetryWithProtoRefreshError: TransactionRetryError: retry txn (RETRY_SERIALIZABLE)",
        "restart transaction: TransactionRetryWithProtoRefreshError: TransactionRetryError: retry txn (RETRY_ASYNC_WRITE_FAILURE)",
        "restart transaction: TransactionRetryWithProtoRefreshError: ReadWithinUncertaintyIntervalError",
        "restart transaction: TransactionRetryWithProtoRefreshError: TransactionRetryError: retry txn (RETRY_COMMIT_DEADLINE_EXCEEDED)",
        "restart transaction: TransactionRetryWithProtoRefreshError: TransactionAbortedError(ABORT_REASON_ABORTED_RECORD_FOUND)",
        "restart transaction: TransactionRetryWithProtoRefreshError: TransactionAbortedError(ABORT_REASON_CLIENT_REJECT)",
        "restart transaction: TransactionRetryWithProtoRefreshError: TransactionAbortedError(ABORT_REASON_PUSHER_ABORTED)",
        "restart transaction: TransactionRetryWithProtoRefreshError: TransactionAbortedError(ABORT_REASON_ABORT_SPAN)",
        "restart transaction: TransactionRetryWithProtoRefreshError: TransactionAbortedError(ABORT_REASON_NEW_LEASE_PREVENTS_TXN)",
        "restart transaction: TransactionRetryWithProtoRefreshError: TransactionAbortedError(ABORT_REASON_TIMESTAMP_CACHE_REJECTED)",
    ] {
        pg_both(d, Some("40001"), reason, Outcome::Fail, "retry error");
    }
    let ambiguous = "result is ambiguous (error=rpc error: code = Unavailable)";
    assert_eq!(
        d.classify(Some("40003"), ambiguous, Phase::Commit),
        Outcome::Info
    );
    assert_eq!(
        d.classify(None, "connection reset", Phase::Commit),
        Outcome::Info
    );
}

/// YugabyteDB: 40001 and 40P01 are retryable aborts
/// (https://docs.yugabyte.com/stable/develop/learn/transactions/transactions-errorcodes-ysql/);
/// an expired transaction or a timeout at COMMIT is unknown. Messages as
/// reported in yugabyte-db issues 5228, 11994 and 18081.
#[test]
fn yugabytedb_conflicts_fail_and_expired_commits_are_info() {
    use Outcome::{Fail, Info};
    let d = PgDialect::Yugabytedb;
    let conflict = "Operation failed. Try again: Conflicts with higher priority transaction";
    pg_both(d, Some("40001"), conflict, Fail, "conflict");
    pg_both(
        d,
        Some("40001"),
        "could not serialize access due to concurrent update",
        Fail,
        "serialization",
    );
    pg_both(d, Some("40P01"), "deadlock detected", Fail, "deadlock");
    let expired = "Operation expired: Transaction expired or aborted by a conflict: 40001";
    assert_eq!(d.classify(Some("40001"), expired, Phase::Commit), Info);
    assert_eq!(d.classify(Some("40001"), expired, Phase::Statement), Fail);
    let timed_out = "Timed out: Perform RPC timed out after 60.000s";
    assert_eq!(d.classify(Some("XX000"), timed_out, Phase::Commit), Info);
    assert_eq!(d.classify(Some("40001"), timed_out, Phase::Commit), Info);
    assert_eq!(d.classify(Some("XX000"), timed_out, Phase::Statement), Info);
    assert_eq!(
        d.classify(Some("57014"), "statement timeout", Phase::Commit),
        Info
    );
    // PostgreSQL and CockroachDB have no such rule: 40001 at COMMIT is an abort.
    for other in [PgDialect::Postgres, PgDialect::Cockroachdb] {
        assert_eq!(other.classify(Some("40001"), expired, Phase::Commit), Fail);
    }
}

#[test]
fn isolation_levels_per_dialect() {
    use PgLevel::*;
    let pg = |d: PgDialect, l| d.model(l);
    for d in PG_DIALECTS {
        assert_eq!(pg(d, ReadCommitted), Ok("read-committed"));
        assert_eq!(pg(d, Serializable), Ok("serializable"));
    }
    assert_eq!(
        pg(PgDialect::Postgres, RepeatableRead),
        Ok("snapshot-isolation")
    );
    assert_eq!(
        pg(PgDialect::Yugabytedb, RepeatableRead),
        Ok("snapshot-isolation")
    );
    let e = pg(PgDialect::Cockroachdb, RepeatableRead).unwrap_err();
    assert!(
        e.contains("cockroachdb") && e.contains("-i serializable"),
        "{e}"
    );
    assert!(PgDialect::Postgres.sets_deadlock_timeout());
    assert!(!PgDialect::Cockroachdb.sets_deadlock_timeout());
    assert!(!PgDialect::Yugabytedb.sets_deadlock_timeout());

    let (my, ti) = (MyDialect::Mysql, MyDialect::Tidb);
    assert_eq!(my.level(None), MyLevel::Serializable);
    assert_eq!(ti.level(None), MyLevel::RepeatableRead);
    assert_eq!(
        ti.level(Some(MyLevel::ReadCommitted)),
        MyLevel::ReadCommitted
    );
    assert_eq!(my.model(MyLevel::RepeatableRead), Ok("repeatable-read"));
    assert_eq!(my.model(MyLevel::ReadUncommitted), Ok("read-uncommitted"));
    assert_eq!(ti.model(MyLevel::RepeatableRead), Ok("snapshot-isolation"));
    assert_eq!(ti.model(MyLevel::ReadCommitted), Ok("read-committed"));
    for refused in [MyLevel::Serializable, MyLevel::ReadUncommitted] {
        let e = ti.model(refused).unwrap_err();
        assert!(
            e.contains("TiDB has no") && e.contains(refused.sql()),
            "{e}"
        );
    }
}

#[test]
fn tidb_session_settings_go_only_to_tidb() {
    let tidb = "8.0.11-TiDB-v7.5.0";
    let maria = "10.11.6-MariaDB-0+deb12u1";
    assert_eq!(MyDialect::of_server(tidb), MyDialect::Tidb);
    assert_eq!(MyDialect::of_server(maria), MyDialect::Mysql);
    assert_eq!(MyDialect::of_server("8.0.36"), MyDialect::Mysql);
    assert_eq!(
        MyDialect::Tidb.session_setup(),
        [
            "SET SESSION tidb_disable_txn_auto_retry = ON",
            "SET SESSION tidb_retry_limit = 0"
        ]
    );
    assert!(MyDialect::Mysql.session_setup().is_empty());
    assert_eq!(MyDialect::Tidb.server_note(tidb), None);
    assert_eq!(MyDialect::Mysql.server_note(maria), None);
    let w = MyDialect::Tidb.server_note(maria).unwrap();
    assert!(w.starts_with("warning: not a TiDB server"), "{w}");
    assert!(
        w.contains(maria) && w.contains("tidb_retry_limit not set"),
        "{w}"
    );
    let w = MyDialect::Mysql.server_note(tidb).unwrap();
    assert!(w.contains(tidb) && w.contains("use --dialect tidb"), "{w}");
}

#[test]
fn postgres_protocol_servers_are_told_apart_by_version() {
    let pg = "PostgreSQL 15.14 (Debian 15.14-0+deb12u1) on x86_64-pc-linux-gnu";
    let crdb = "CockroachDB CCL v23.2.0 (x86_64-pc-linux-gnu, built 2024/01/16 19:06:36, go1.21.5 X:nocoverageredesign)";
    let yb =
        "PostgreSQL 11.2-YB-2.20.1.0-b0 on x86_64-pc-linux-gnu, compiled by clang version 16.0.6";
    for (version, d) in [
        (pg, PgDialect::Postgres),
        (crdb, PgDialect::Cockroachdb),
        (yb, PgDialect::Yugabytedb),
    ] {
        assert_eq!(PgDialect::of_server(version), d);
        assert_eq!(d.server_note(version), None);
    }
    let w = PgDialect::Cockroachdb.server_note(pg).unwrap();
    assert!(w.starts_with("warning: not a CockroachDB server"), "{w}");
    assert!(w.ends_with("use --dialect postgres"), "{w}");
    let w = PgDialect::Postgres.server_note(yb).unwrap();
    assert!(w.starts_with("warning: not a PostgreSQL server"), "{w}");
    assert!(w.ends_with("use --dialect yugabytedb"), "{w}");
}

#[test]
fn mysql_error_codes() {
    use Outcome::{Fail, Info};
    let c = |d: MyDialect, code, phase, rolled_back| d.classify(code, phase, rolled_back);
    for d in [MyDialect::Mysql, MyDialect::Tidb] {
        for phase in [Phase::Statement, Phase::Commit] {
            for (code, what) in [
                (1213, "deadlock victim"),
                (1020, "record changed since last read"),
                (1062, "duplicate key"),
                (1451, "foreign key (parent)"),
                (1452, "foreign key (child)"),
                (3572, "NOWAIT lock failure"),
            ] {
                assert_eq!(c(d, Some(code), phase, true), Fail, "{what} at {phase:?}");
                assert_eq!(
                    c(d, Some(code), phase, false),
                    Info,
                    "{what}, rollback failed"
                );
            }
            assert_eq!(c(d, Some(2013), phase, true), Info, "lost connection");
            assert_eq!(
                c(d, Some(1064), phase, true),
                Info,
                "unexpected server error"
            );
            assert_eq!(c(d, None, phase, true), Info, "I/O error, no answer");
            assert_eq!(c(d, None, phase, false), Info, "connection lost");
        }
        // A lock wait timeout undoes only its statement: an abort once rolled back.
        assert_eq!(c(d, Some(1205), Phase::Statement, true), Fail);
        assert_eq!(c(d, Some(1205), Phase::Statement, false), Info);
        assert_eq!(c(d, Some(1205), Phase::Commit, true), Info);
    }
}

/// TiDB's own codes (https://docs.pingcap.com/tidb/stable/error-codes): the
/// transaction is rolled back and may be retried; MySQL does not use them.
#[test]
fn tidb_retryable_errors_fail_and_a_lost_commit_is_info() {
    use Outcome::{Fail, Info};
    let (ti, my) = (MyDialect::Tidb, MyDialect::Mysql);
    for (code, what) in [
        (8002, "SELECT FOR UPDATE write conflict"),
        (8005, "Write Conflict, txnStartTS is stale"),
        (8022, "commit failed, rolled back"),
        (8028, "information schema changed"),
        (9007, "write conflict in TiKV"),
        (1213, "deadlock (pessimistic mode)"),
    ] {
        for phase in [Phase::Statement, Phase::Commit] {
            assert_eq!(
                ti.classify(Some(code), phase, true),
                Fail,
                "{what} at {phase:?}"
            );
            assert_eq!(
                ti.classify(Some(code), phase, false),
                Info,
                "{what}, no rollback"
            );
        }
        if code != 1213 {
            assert_eq!(
                my.classify(Some(code), Phase::Commit, true),
                Info,
                "mysql {code}"
            );
        }
    }
    // The connection lost during COMMIT: it may have committed.
    assert_eq!(ti.classify(None, Phase::Commit, false), Info);
    assert_eq!(ti.classify(None, Phase::Commit, true), Info);
    // TiKV server timeout and PD timeout: unknown.
    assert_eq!(ti.classify(Some(9002), Phase::Commit, true), Info);
    assert_eq!(ti.classify(Some(9001), Phase::Commit, true), Info);
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
    assert_eq!(sqlite::classify(&busy, false, true), Outcome::Fail);
    assert_eq!(
        sqlite::classify(&busy, false, false),
        Outcome::Info,
        "not rolled back: unknown"
    );
    a.execute_batch("COMMIT").unwrap();
    let constraint = a
        .execute_batch("INSERT INTO t VALUES (1); INSERT INTO t VALUES (1)")
        .unwrap_err();
    assert_eq!(sqlite::classify(&constraint, false, true), Outcome::Fail);
    let syntax = a.execute_batch("SELEKT 1").unwrap_err();
    assert_eq!(sqlite::classify(&syntax, false, true), Outcome::Info);
    // The driver's --txn-timeout interrupt: before COMMIT a definite abort,
    // during COMMIT unknown.
    let interrupted = rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_INTERRUPT),
        None,
    );
    assert_eq!(sqlite::classify(&interrupted, false, true), Outcome::Fail);
    assert_eq!(sqlite::classify(&interrupted, true, true), Outcome::Info);
    assert_eq!(sqlite::classify(&interrupted, false, false), Outcome::Info);
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

/// The model ops go as Jepsen ops and come back with a read's value.
#[test]
fn exec_model_requests_and_replies() {
    let t = vec![Mop::Transfer {
        from: 1,
        to: 2,
        amount: 3,
    }];
    assert_eq!(
        request_line(&t),
        r#"{"f":"transfer","value":{"from":1,"to":2,"amount":3}}"#
    );
    assert_eq!(
        parse_reply(r#"{"type":"ok"}"#, &t, WorkloadKind::Bank),
        Ok(Completion::Ok(t.clone()))
    );
    assert_eq!(
        parse_reply(
            r#"{"type":"fail","error":"negative"}"#,
            &t,
            WorkloadKind::Bank
        ),
        Ok(Completion::Fail("negative".into()))
    );
    let read = vec![Mop::ReadBalances(None)];
    assert_eq!(request_line(&read), r#"{"f":"read","value":null}"#);
    assert_eq!(
        parse_reply(
            r#"{"type":"ok","value":{"1":4,"0":96}}"#,
            &read,
            WorkloadKind::Bank
        ),
        Ok(Completion::Ok(vec![Mop::ReadBalances(Some(vec![
            (0, 96),
            (1, 4)
        ]))]))
    );
    let add = vec![Mop::Add(4)];
    assert_eq!(request_line(&add), r#"{"f":"add","value":4}"#);
    let set = vec![Mop::ReadSet(None)];
    assert_eq!(
        parse_reply(r#"{"type":"ok","value":[3,1,2]}"#, &set, WorkloadKind::Set),
        Ok(Completion::Ok(vec![Mop::ReadSet(Some(vec![1, 2, 3]))]))
    );
    let counter = vec![Mop::ReadCounter(None)];
    assert_eq!(
        parse_reply(
            r#"{"type":"ok","value":17}"#,
            &counter,
            WorkloadKind::Counter
        ),
        Ok(Completion::Ok(vec![Mop::ReadCounter(Some(17))]))
    );
    for (bad, sent) in [
        (r#"{"type":"ok"}"#, &read),
        (r#"{"type":"ok","value":{"a":1}}"#, &read),
        (r#"{"type":"ok","value":{"0":"x"}}"#, &read),
        (r#"{"type":"ok","value":[1,"x"]}"#, &set),
        (r#"{"type":"ok","value":null}"#, &counter),
    ] {
        let e = parse_reply(bad, sent, WorkloadKind::Bank).unwrap_err();
        assert!(e.starts_with("exec: bad reply"), "{bad}: {e}");
    }
}

/// The exec messages of comments, sequential, cas-register and mutex.
#[test]
fn exec_requests_and_replies_of_comments_sequential_cas_register_and_mutex() {
    let ok = |line: &str, sent: &[Mop], w| parse_reply(line, sent, w).unwrap();
    let w = vec![Mop::WriteId(7)];
    assert_eq!(request_line(&w), r#"{"f":"write","value":7}"#);
    let r = vec![Mop::ReadIds(None)];
    assert_eq!(request_line(&r), r#"{"f":"read","value":null}"#);
    assert_eq!(
        ok(r#"{"type":"ok","value":[7,2]}"#, &r, WorkloadKind::Comments),
        Completion::Ok(vec![Mop::ReadIds(Some(vec![2, 7]))])
    );
    let w = vec![Mop::SeqWrite(3, 2)];
    assert_eq!(request_line(&w), r#"{"f":"write","value":[3,2]}"#);
    let r = vec![Mop::SeqRead(3, None)];
    assert_eq!(request_line(&r), r#"{"f":"read","value":[3,null]}"#);
    assert_eq!(
        ok(
            r#"{"type":"ok","value":[null,31,30]}"#,
            &r,
            WorkloadKind::Sequential
        ),
        Completion::Ok(vec![Mop::SeqRead(3, Some(vec![None, Some(31), Some(30)]))])
    );
    let r = vec![Mop::RegRead(None)];
    assert_eq!(
        ok(
            r#"{"type":"ok","value":null}"#,
            &r,
            WorkloadKind::CasRegister
        ),
        Completion::Ok(vec![Mop::RegRead(None)])
    );
    assert_eq!(
        ok(r#"{"type":"ok","value":4}"#, &r, WorkloadKind::CasRegister),
        Completion::Ok(vec![Mop::RegRead(Some(4))])
    );
    let cas = vec![Mop::RegCas { old: 4, new: 1 }];
    assert_eq!(request_line(&cas), r#"{"f":"cas","value":[4,1]}"#);
    assert_eq!(
        ok(
            r#"{"type":"fail","error":"cas"}"#,
            &cas,
            WorkloadKind::CasRegister
        ),
        Completion::Fail("cas".into())
    );
    let acquire = vec![Mop::Acquire(2)];
    assert_eq!(request_line(&acquire), r#"{"f":"acquire","value":null}"#);
    assert_eq!(
        request_line(&[Mop::Release(2)]),
        r#"{"f":"release","value":null}"#
    );
    assert_eq!(
        ok(r#"{"type":"ok"}"#, &acquire, WorkloadKind::Mutex),
        Completion::Ok(acquire.clone())
    );
    let seq = vec![Mop::SeqRead(3, None)];
    let ids = vec![Mop::ReadIds(None)];
    let reg = vec![Mop::RegRead(None)];
    for (bad, sent) in [
        (r#"{"type":"ok","value":{"a":1}}"#, &seq),
        (r#"{"type":"ok","value":[1,"x"]}"#, &seq),
        (r#"{"type":"ok","value":null}"#, &ids),
        (r#"{"type":"ok","value":"4"}"#, &reg),
    ] {
        let e = parse_reply(bad, sent, WorkloadKind::Sequential).unwrap_err();
        assert!(e.starts_with("exec: bad reply"), "{bad}: {e}");
    }
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
    let e = isolde::run::record::record(&args.config()).unwrap_err();
    assert!(e.to_string().contains("cannot set up"), "{e}");
    let args = run_support::parse(&["exec", "-n", "1", "--", "/nonexistent/client"]);
    assert!(isolde::run::record::record(&args.config()).is_err());
    let args = run_support::parse(&["sim", "--key-count", "0"]);
    assert!(isolde::run::record::record(&args.config())
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
