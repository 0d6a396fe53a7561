//! `isolde run` through the built binary: exit codes and messages of setup
//! failures (rejected settings, refused or silent servers, Ctrl-C), option
//! errors, and what the summary says. The database tests need PostgreSQL on
//! 127.0.0.1:5432 and MariaDB on 127.0.0.1:3306 (under CI=true they fail when
//! a server is down; elsewhere they skip).

use crate::support::run_support;

use run_support::{server_up, temp_path};
use std::net::TcpListener;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const PG: &str = "postgres://postgres@127.0.0.1:5432/test";
const MY: &str = "mysql://root@127.0.0.1:3306/test";

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_isolde"))
}

/// Runs `isolde run ARGS -o TEMP`, bounded by `limit`; returns its output
/// and how long it took.
fn run(args: &[&str], limit: Duration) -> (Output, Duration) {
    let out = temp_path("run-cli.jsonl");
    let started = Instant::now();
    let mut child = bin()
        .arg("run")
        .args(args)
        .arg("-o")
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("isolde runs");
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("isolde run {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().expect("output");
    let _ = std::fs::remove_file(&out);
    (output, started.elapsed())
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A loopback port nothing listens on.
fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn option_errors_exit_2() {
    for args in [
        &["sim", "--read-ratio", "2"][..],
        &["sim", "-p", "0"],
        &["sim", "--time-limit", "0"],
        &["sim", "--rate", "5"],
        &["exec", "--reply-timeout", "0", "--", "true"],
        &["sqlite", "--txn-timeout", "0"],
        &["sqlite", "--txn-timeout=-1"],
        &["sim", "--txn-timeout", "1"],
        &["sim", "--retries", "2"],
        &[
            "exec",
            "--reply-timeout",
            "1",
            "--txn-timeout",
            "2",
            "--",
            "true",
        ],
    ] {
        let (o, _) = run(args, Duration::from_secs(20));
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains("invalid option"), "{args:?}: {e}");
    }
}

#[test]
fn refused_connections_exit_2_naming_host_and_port() {
    let port = closed_port();
    let pg = format!("postgres://postgres@127.0.0.1:{port}/test");
    let my = format!("mysql://root:s3cret@127.0.0.1:{port}/test");
    for (target, url) in [("postgres", &pg), ("mysql", &my)] {
        let (o, took) = run(&[target, "--url", url, "-n", "5"], Duration::from_secs(20));
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{target}: {e}");
        assert!(e.contains(&format!("127.0.0.1:{port}")), "{target}: {e}");
        assert!(e.contains("refused"), "{target}: {e}");
        assert!(!e.contains("s3cret"), "{target}: a password echoed: {e}");
        assert!(!e.contains("Error {"), "{target}: a debug struct: {e}");
        assert!(took < Duration::from_secs(10), "{target}: {took:?}");
    }
}

#[test]
fn bad_urls_hide_the_password_and_hint_at_mysql() {
    let (o, _) = run(
        &[
            "mysql",
            "--url",
            "mariadb://root:s3cret@127.0.0.1:3306/test",
        ],
        Duration::from_secs(20),
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("use \"mysql://root:***@127.0.0.1:3306/test\""),
        "{e}"
    );
    assert!(!e.contains("s3cret"), "{e}");
    let (o, _) = run(
        &["mysql", "--url", "mysql://root:s3cret@127.0.0.1:nope/test"],
        Duration::from_secs(20),
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("bad MySQL URL") && !e.contains("s3cret"), "{e}");
}

#[test]
fn ctrl_c_aborts_a_setup_the_server_never_answers() {
    // Accepts connections and never says a word (what a MySQL client meets
    // at a server that waits for the client to speak first).
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = vec![];
        for s in listener.incoming().flatten() {
            held.push(s);
        }
    });
    let url = format!("mysql://root@127.0.0.1:{port}/test");
    let child = bin()
        .args(["run", "mysql", "--url", &url, "-n", "5", "-o"])
        .arg(temp_path("ctrl-c.jsonl"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    let sent = Instant::now();
    sigint(child.id());
    let o = ended_within(
        child,
        sent,
        Duration::from_secs(3),
        "Ctrl-C did not end setup",
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{e}");
    assert!(e.contains("interrupted while setting up mysql"), "{e}");
}

/// A server that accepts and never answers: PostgreSQL's client has no
/// timeout on its startup exchange, so the setup cap (30 s) ends it.
#[test]
fn postgres_setup_at_a_silent_server_fails_within_the_cap() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = vec![];
        for s in listener.incoming().flatten() {
            held.push(s);
        }
    });
    let url = format!("postgres://postgres@127.0.0.1:{port}/test");
    let (o, took) = run(
        &["postgres", "--url", &url, "-n", "5", "--txn-timeout", "1"],
        Duration::from_secs(45),
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains(&format!("127.0.0.1:{port}")), "{e}");
    assert!(e.contains("no answer within 30 s"), "{e}");
    assert!(took < Duration::from_secs(35), "{took:?}");
}

#[test]
fn mysql_at_a_postgres_port_fails_in_seconds() {
    if !server_up("PostgreSQL", "127.0.0.1:5432") {
        return;
    }
    let (o, took) = run(
        &[
            "mysql",
            "--url",
            "mysql://root@127.0.0.1:5432/test",
            "-n",
            "5",
        ],
        Duration::from_secs(30),
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("127.0.0.1:5432"), "{e}");
    assert!(took < Duration::from_secs(10), "{took:?}: {e}");
}

#[test]
fn rejected_postgres_settings_fail_setup_with_the_servers_message() {
    if !server_up("PostgreSQL", "127.0.0.1:5432") {
        return;
    }
    for (var, says) in [
        ("no_such_var=1", "unrecognized configuration parameter"),
        ("deadlock_timeout=banana", "banana"),
    ] {
        let (o, took) = run(
            &["postgres", "--url", PG, "-n", "5", "--session-var", var],
            Duration::from_secs(20),
        );
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{var}: {e}");
        assert!(e.contains(&format!("--session-var {var}")), "{var}: {e}");
        assert!(e.contains(says), "{var}: {e}");
        assert!(took < Duration::from_secs(10), "{var}: {took:?}");
    }
}

#[test]
fn rejected_mysql_settings_fail_setup_with_the_servers_message() {
    if !server_up("MariaDB", "127.0.0.1:3306") {
        return;
    }
    let (o, took) = run(
        &[
            "mysql",
            "--url",
            MY,
            "-n",
            "5",
            "--session-var",
            "no_such_var=1",
        ],
        Duration::from_secs(20),
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("Unknown system variable"), "{e}");
    assert!(!e.contains("MySqlError {"), "{e}");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn postgres_runs_with_a_short_deadlock_timeout_unless_told_not_to() {
    if !server_up("PostgreSQL", "127.0.0.1:5432") {
        return;
    }
    let base = [
        "postgres",
        "--url",
        PG,
        "-i",
        "serializable",
        "-n",
        "300",
        "--key-count",
        "3",
        "--seed",
        "1",
    ];
    let (o, _) = run(&base, Duration::from_secs(60));
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(
        e.contains("deadlock_timeout=5ms on isolde's sessions"),
        "{e}"
    );
    // 10 clients on 3 keys under SERIALIZABLE meet serialization failures.
    assert!(e.contains("fail by cause: 40001 x"), "{e}");
    assert!(e.contains("/s)"), "{e}");
    let mut keep = base.to_vec();
    keep.push("--server-defaults");
    let (o, _) = run(&keep, Duration::from_secs(60));
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(!e.contains("deadlock_timeout"), "{e}");
}

#[test]
fn a_run_checked_against_no_model_says_so() {
    let (o, _) = run(
        &["sim", "-n", "50", "-c", "none", "--seed", "1"],
        Duration::from_secs(30),
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(e.contains("valid (no model, -a only)"), "{e}");
    assert!(!e.contains("()"), "{e}");
}

#[test]
fn levels_a_dialect_lacks_are_refused_before_connecting() {
    let port = closed_port();
    let pg = format!("postgres://postgres@127.0.0.1:{port}/test");
    let my = format!("mysql://root@127.0.0.1:{port}/test");
    for (args, level) in [
        (
            [
                "postgres",
                "--url",
                &pg,
                "--dialect",
                "cockroachdb",
                "-i",
                "repeatable-read",
            ],
            "REPEATABLE READ",
        ),
        (
            [
                "mysql",
                "--url",
                &my,
                "--dialect",
                "tidb",
                "-i",
                "serializable",
            ],
            "SERIALIZABLE",
        ),
        (
            [
                "mysql",
                "--url",
                &my,
                "--dialect",
                "tidb",
                "-i",
                "read-uncommitted",
            ],
            "READ UNCOMMITTED",
        ),
    ] {
        let (o, _) = run(&args, Duration::from_secs(20));
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains("invalid option: --dialect"), "{args:?}: {e}");
        assert!(e.contains(level), "{args:?}: {e}");
        assert!(!e.contains("refused"), "{args:?}: connected first: {e}");
    }
    // Each protocol takes its own dialects.
    let (o, _) = run(
        &["postgres", "--url", &pg, "--dialect", "tidb"],
        Duration::from_secs(20),
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("'tidb'"), "{e}");
}

/// The summary counts attempts, and says how many of them were retries.
#[test]
fn the_summary_says_how_many_attempts_were_retries() {
    if !server_up("PostgreSQL", "127.0.0.1:5432") {
        return;
    }
    let (o, _) = run(
        &[
            "postgres",
            "--url",
            PG,
            "-n",
            "300",
            "--key-count",
            "3",
            "--seed",
            "1",
            "--retries",
            "3",
        ],
        Duration::from_secs(60),
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    let retries: u64 = e
        .split(" of them retries")
        .next()
        .and_then(|head| head.rsplit(", ").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no retry count: {e}"));
    let attempts: u64 = e
        .split(" attempts, ")
        .next()
        .and_then(|head| head.rsplit('(').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no attempt count: {e}"));
    assert!(retries > 0, "{e}");
    // -n counts transactions; every retry is one more attempt.
    assert_eq!(attempts, 300 + retries, "{e}");
    assert!(e.contains(": 300 txns ("), "{e}");
}

/// Ctrl-C once while every client program is stuck: the run does not wait
/// for them past --txn-timeout (and the grace second), finishes its file,
/// and the history reads back with the stuck transactions as info.
#[test]
fn ctrl_c_during_stuck_transactions_ends_the_run_on_time() {
    if !run_support::python_available() {
        return;
    }
    // Answers (reads empty) until its third transaction, then hangs.
    let script = temp_path("stuck_client.py");
    std::fs::write(
        &script,
        "import sys, json, time\n\
         n = 0\n\
         for line in sys.stdin:\n\
         \x20   n += 1\n\
         \x20   if n > 2: time.sleep(3600)\n\
         \x20   v = json.loads(line)['value']\n\
         \x20   print(json.dumps({'type': 'ok', 'value': [[f, k, x if f != 'r' else None] for f, k, x in v]}), flush=True)\n",
    )
    .unwrap();
    let out = temp_path("ctrl-c-stuck.jsonl");
    let child = bin()
        .args(["run", "exec", "-n", "1000", "-p", "3", "--txn-timeout", "5"])
        .args(["--no-check", "-o"])
        .arg(&out)
        .args(["--", "python3"])
        .arg(&script)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Every client is stuck on its third transaction by now.
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Instant::now();
    sigint(child.id());
    // The stuck transactions (5 s + 1 s), the final read (a new client
    // answers at once).
    let o = ended_within(
        child,
        sent,
        Duration::from_secs(9),
        "one Ctrl-C did not end the run",
    );
    let e = stderr(&o);
    // A run cut short by Ctrl-C exits 130 whatever its verdict.
    assert_eq!(o.status.code(), Some(130), "{e}");
    assert!(e.contains("(interrupted)"), "{e}");
    let h = isolde::history::read::read_history_file(&out, None)
        .unwrap_or_else(|err| panic!("history unreadable: {err}; {e}"));
    let info = h
        .txns
        .iter()
        .filter(|t| t.outcome == isolde::history::Outcome::Info)
        .count();
    assert_eq!(info, 3, "one stuck transaction per client: {e}");
    let _ = std::fs::remove_file(&out);
}

/// Runs `isolde ARGS` to completion (bounded by `limit`) and keeps whatever
/// it wrote.
fn isolde(args: &[&str], limit: Duration) -> Output {
    let started = Instant::now();
    let mut child = bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("isolde runs");
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("isolde {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

/// The output of `child`, which must end within `limit` of `since`.
fn ended_within(mut child: Child, since: Instant, limit: Duration, what: &str) -> Output {
    while child.try_wait().unwrap().is_none() {
        assert!(since.elapsed() < limit, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn sigint(pid: u32) {
    let kill = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
}

/// Two SIGINTs 30 ms apart (what `timeout -s INT` and some terminals
/// deliver) are one interrupt: the run finishes its file, checks it, says
/// "interrupted" and names the history, and exits 130, never 0.
#[test]
fn two_quick_interrupts_end_the_run_once_with_summary_and_exit_130() {
    let out = temp_path("interrupted.jsonl");
    let out_s = out.display().to_string();
    let child = bin()
        .args(["run", "sim", "--time-limit", "30", "-q", "-o", &out_s])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    sigint(child.id());
    std::thread::sleep(Duration::from_millis(30));
    sigint(child.id());
    let sent = Instant::now();
    let o = ended_within(
        child,
        sent,
        Duration::from_secs(60),
        "the run did not end after Ctrl-C",
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{e}");
    assert_eq!(e.matches("isolde: interrupted;").count(), 1, "{e}");
    assert!(!e.contains("quitting now"), "the second signal quit: {e}");
    assert!(e.contains("isolde run sim (interrupted): "), "{e}");
    assert!(
        e.contains(&format!("history {out_s}; valid (serializable)")),
        "{e}"
    );
    // The history is whole: `isolde check` reads it (valid, exit 0).
    let c = isolde(
        &["check", "-m", "list-append", "-c", "serializable", &out_s],
        Duration::from_secs(120),
    );
    assert_eq!(c.status.code(), Some(0), "{}", stderr(&c));
    let _ = std::fs::remove_file(&out);
}

/// After the summary, the first finding of each anomaly type as `check -x`
/// prints it (same text, same number), and how to see them all; `-q` keeps
/// the summary only. `-n 300` reads as 300 transactions plus the final read.
#[test]
fn a_run_shows_the_first_finding_of_each_type_unless_quiet() {
    let out = temp_path("lost-update.jsonl");
    let out_s = out.display().to_string();
    let args = [
        "run",
        "sim",
        "--bug",
        "lost-update",
        "-n",
        "300",
        "--seed",
        "1",
        "-o",
        &out_s,
    ];
    let o = isolde(&args, Duration::from_secs(60));
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("isolde run sim: 300 txns plus the final read (301 ok, 0 fail, 0 info)"),
        "{e}"
    );
    let all = format!("all findings: isolde check -x -m list-append -c serializable {out_s}");
    assert!(e.contains(&all), "{e}");
    // Each anomaly type the verdict names is shown, numbered #1.
    let verdict = e
        .lines()
        .find_map(|l| l.split_once("INVALID (serializable): "))
        .map(|(_, types)| types.to_string())
        .expect("an INVALID verdict");
    let x = isolde(
        &[
            "check",
            "-x",
            "-m",
            "list-append",
            "-c",
            "serializable",
            &out_s,
        ],
        Duration::from_secs(60),
    );
    let explained = String::from_utf8_lossy(&x.stdout).into_owned();
    for kind in verdict.split(", ") {
        let head = format!("\n{kind} #1\n");
        let start = e
            .find(&head)
            .unwrap_or_else(|| panic!("no {kind} #1 in {e}"));
        // The block as run printed it, up to the next blank line, is what
        // `check -x` prints for that finding.
        let block = &e[start + 1..];
        let block = &block[..block.find("\n\n").unwrap_or(block.len())];
        // Less the "(N more ...)" line run adds.
        let block = match block.rsplit_once('\n') {
            Some((head, last)) if last.starts_with('(') && last.contains(" more ") => head,
            _ => block,
        };
        assert!(explained.contains(block), "{block}\nnot in\n{explained}");
    }
    let q = isolde(&[&args[..], &["-q"]].concat(), Duration::from_secs(60));
    let qe = stderr(&q);
    assert_eq!(q.status.code(), Some(1), "{qe}");
    assert!(qe.contains("INVALID (serializable)"), "{qe}");
    assert!(!qe.contains(" #1") && !qe.contains("all findings"), "{qe}");
    let _ = std::fs::remove_file(&out);
}

#[test]
fn unknown_targets_and_upper_case_levels_get_help() {
    let o = isolde(&["run", "mariadb", "-n", "5"], Duration::from_secs(20));
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("unrecognized subcommand 'mariadb'"), "{e}");
    assert!(
        e.contains("hint: use `isolde run mysql` (MariaDB speaks MySQL's protocol)"),
        "{e}"
    );
    let (o, _) = run(
        &["sim", "-i", "SNAPSHOT-ISOLATION", "-n", "20", "--seed", "1"],
        Duration::from_secs(30),
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(e.contains("valid (snapshot-isolation)"), "{e}");
}

/// A client that answers garbage ends the run at once: the first bad reply
/// quoted, the history named and kept, exit 2, nothing checked.
#[test]
fn an_exec_client_that_breaks_the_protocol_aborts_the_run() {
    let out = temp_path("garbage.jsonl");
    let out_s = out.display().to_string();
    let o = isolde(
        &[
            "run",
            "exec",
            "-n",
            "100",
            "-o",
            &out_s,
            "--",
            "sh",
            "-c",
            "while read l; do echo 'not json, garbage'; done",
        ],
        Duration::from_secs(30),
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains(
            "run aborted: the client broke the protocol: exec: bad reply \"not json, garbage\""
        ),
        "{e}"
    );
    assert!(e.contains(&format!("history {out_s}; not checked")), "{e}");
    // Stopped at the first bad replies, not after 100 info.
    let h = isolde::history::read::read_history_file(&out, None).unwrap();
    assert!(!h.txns.is_empty() && h.txns.len() <= 20, "{}", h.txns.len());
    let _ = std::fs::remove_file(&out);
}

/// A fault command that always fails is counted as failed, not as faults
/// injected, and a warning shows its exit status and stderr.
#[cfg(feature = "run-sqlite")]
#[test]
fn failing_fault_commands_are_counted_and_shown() {
    let (o, _) = run(
        &[
            "sqlite",
            "-n",
            "150",
            "--rate",
            "200",
            "--fault",
            "echo no such database >&2; exit 3",
            "--fault-interval",
            "0.1",
        ],
        Duration::from_secs(60),
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(e.contains(", faults: 0 ok, "), "{e}");
    assert!(
        e.contains("warning: the fault command failed")
            && e.contains("first failure: exit status: 3: no such database"),
        "{e}"
    );
}

#[test]
fn run_says_where_the_report_went() {
    let dir = temp_path("run-report");
    let d = dir.display().to_string();
    let (o, _) = run(
        &["sim", "-n", "50", "--seed", "1", "-q", "-d", &d],
        Duration::from_secs(30),
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(e.contains(&format!("report: {d}/index.html")), "{e}");
    assert!(dir.join("index.html").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Without -c, the summary says which model REPEATABLE READ is checked
/// against on each database, and why they differ.
#[test]
fn repeatable_read_runs_say_which_model_and_why() {
    for (target, url, want) in [
        (
            "postgres",
            PG,
            "PostgreSQL's REPEATABLE READ is snapshot isolation",
        ),
        (
            "mysql",
            MY,
            "MySQL/MariaDB REPEATABLE READ is checked against repeatable-read (Adya's PL-2.99",
        ),
    ] {
        let addr = &url[url.find('@').unwrap() + 1..url.rfind('/').unwrap()];
        if !server_up(target, addr) {
            continue;
        }
        let (o, _) = run(
            &[
                target,
                "--url",
                url,
                "-i",
                "repeatable-read",
                "-n",
                "30",
                "-q",
            ],
            Duration::from_secs(60),
        );
        let e = stderr(&o);
        assert!(matches!(o.status.code(), Some(0 | 1)), "{target}: {e}");
        assert!(e.contains(want), "{target}: {e}");
    }
}

/// `run` takes `check`'s checking flags (one struct in the binary): the
/// serial order of `--witness`, the inference flags in the command that
/// shows every finding, `-v` with `-x` refused as `check` refuses it, and
/// the transactional flags refused for a model workload.
#[test]
fn run_takes_the_checking_flags_of_check() {
    let (o, _) = run(
        &[
            "sim",
            "-w",
            "rw-register",
            "-n",
            "50",
            "--seed",
            "1",
            "-c",
            "serializable",
            "--witness",
            "-x",
        ],
        Duration::from_secs(60),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.contains("Witness for serializable:"), "{out}");
    let (o, _) = run(
        &[
            "sim",
            "--bug",
            "lost-update",
            "-n",
            "300",
            "--seed",
            "1",
            "--inference-only",
        ],
        Duration::from_secs(60),
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains(
            "all findings: isolde check -x -m list-append -c serializable --inference-only "
        ),
        "{e}"
    );
    let (o, _) = run(&["sim", "-n", "5", "-v", "-x"], Duration::from_secs(20));
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("cannot be used with"), "{e}");
    for flag in [
        "--witness",
        "--inference-only",
        "--wfr-keys",
        "--realtime-versions",
    ] {
        let (o, _) = run(
            &["sim", "-w", "bank", "-n", "5", flag],
            Duration::from_secs(20),
        );
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{flag}: {e}");
        assert!(
            e.contains(&format!("{flag} does not apply to -w bank")),
            "{flag}: {e}"
        );
    }
}
