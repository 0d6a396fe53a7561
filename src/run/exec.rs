//! `isolde run exec -- CMD ARGS...`: any database, through a client program
//! that speaks one JSON line per transaction on stdin/stdout.
//!
//! isolde writes `{"value":[["append",3,7],["r",4,null]]}` and reads back
//! `{"type":"ok","value":[["append",3,7],["r",4,[1,7]]]}` (or `"fail"` /
//! `"info"`, with an optional `"error"`). One program runs per worker; after
//! an `info` (or a crash, a timeout, a malformed line) it is killed and a new
//! one started. The program sees `ISOLDE_TABLE` (a table name unique to the
//! run), `ISOLDE_WORKLOAD` and `ISOLDE_WORKER` in its environment.
//!
//! The model workloads' ops (bank, counter, set, set-full) go as Jepsen ops:
//! `{"f":"transfer","value":{"from":1,"to":2,"amount":3}}`, `{"f":"add","value":4}`,
//! `{"f":"read","value":null}`; the reply is `{"type":"ok"}` (a read's with
//! its `"value"`: bank a map of balances `{"0":97,...}`, counter a number,
//! set a list), or `fail` for a transfer the client refused (a negative
//! balance, unless `ISOLDE_ALLOW_NEGATIVE=1`). Bank's program opens
//! `ISOLDE_ACCOUNTS` accounts with `ISOLDE_TOTAL_AMOUNT` in account 0 when
//! started on an empty input (setup). Long-fork is transactions of `w` and
//! `r` micro-ops, as rw-register. Comments: `{"f":"write","value":7}` and
//! reads answered with a list of ids; sequential: `{"f":"write","value":[k,i]}`
//! and `{"f":"read","value":[k,null]}` answered with the subkeys' values
//! latest first (`null` for one not found; `ISOLDE_KEY_COUNT` subkeys);
//! cas-register: `read` (answered with a number or `null`), `write`,
//! `{"f":"cas","value":[old,new]}` (`fail` when the register holds another
//! value); mutex: `acquire` and `release` (value `null`, the holder being
//! `ISOLDE_WORKER`), `fail` when held, or not held by this worker.

use super::client::{table_name, Client, Completion, Target};
use super::{op_f_and_value, txn_json, Key, ModelParams, Mop, ReadValue, WorkloadKind};
use serde_json::Value as Json;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Longest part of a bad reply quoted in messages, in characters.
const QUOTE_MAX: usize = 200;

pub struct ExecTarget {
    pub command: Vec<String>,
    pub workload: WorkloadKind,
    pub table: String,
    /// How long to wait for a reply before calling the transaction `info`.
    pub timeout: Duration,
    /// The first protocol error of any worker's client; set, it ends the run.
    pub protocol_error: Arc<Mutex<Option<String>>>,
    /// The model workloads' shape, passed in the environment.
    pub params: ModelParams,
}

impl ExecTarget {
    pub fn new(
        command: Vec<String>,
        workload: WorkloadKind,
        run_id: &str,
        timeout: Duration,
    ) -> Self {
        ExecTarget {
            command,
            workload,
            table: table_name(workload, run_id),
            timeout,
            protocol_error: Arc::default(),
            params: ModelParams::default(),
        }
    }

    /// Sets the model workloads' shape.
    pub fn with_model(mut self, params: ModelParams) -> Self {
        self.params = params;
        self
    }

    fn spawn(&self, worker: u32) -> anyhow::Result<Child> {
        let (prog, args) = self.command.split_first().ok_or_else(|| {
            anyhow::anyhow!("exec: no command given (isolde run exec -- CMD ARGS...)")
        })?;
        Command::new(prog)
            .args(args)
            .env("ISOLDE_TABLE", &self.table)
            .env("ISOLDE_WORKLOAD", self.workload.name())
            .env("ISOLDE_ACCOUNTS", self.params.accounts.to_string())
            .env("ISOLDE_TOTAL_AMOUNT", self.params.total_amount.to_string())
            .env(
                "ISOLDE_ALLOW_NEGATIVE",
                if self.params.allow_negative { "1" } else { "0" },
            )
            .env("ISOLDE_KEY_COUNT", self.params.key_count.to_string())
            .env("ISOLDE_WORKER", worker.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| anyhow::anyhow!("exec: cannot start {prog:?}: {e}"))
    }
}

impl Target for ExecTarget {
    fn describe(&self) -> String {
        format!("exec {}", self.command.join(" "))
    }

    /// Starts the program once with an empty stdin, which it must answer by
    /// exiting with status 0: a command that cannot start or crashes at once
    /// is reported before the run.
    fn setup(&self) -> anyhow::Result<()> {
        let mut child = self.spawn(u32::MAX)?;
        drop(child.stdin.take());
        let status = child.wait()?;
        if !status.success() {
            anyhow::bail!(
                "exec: {:?} exited with {status} on an empty input",
                self.command.join(" ")
            );
        }
        Ok(())
    }

    fn connect(&self, worker: u32) -> anyhow::Result<Box<dyn Client>> {
        let mut child = self.spawn(worker)?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, rx) = mpsc::channel();
        // A reader thread, so that a client that hangs can be timed out.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let end = line.is_err();
                if tx.send(line).is_err() || end {
                    break;
                }
            }
        });
        Ok(Box::new(ExecClient {
            child,
            stdin,
            lines: rx,
            timeout: self.timeout,
            workload: self.workload,
            protocol_error: Arc::clone(&self.protocol_error),
        }))
    }

    fn teardown(&self) -> anyhow::Result<()> {
        Ok(())
    }
}

struct ExecClient {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<std::io::Result<String>>,
    timeout: Duration,
    workload: WorkloadKind,
    protocol_error: Arc<Mutex<Option<String>>>,
}

impl Drop for ExecClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Client for ExecClient {
    fn execute(&mut self, txn: &[Mop]) -> Completion {
        let request = request_line(txn) + "\n";
        if let Err(e) = self
            .stdin
            .write_all(request.as_bytes())
            .and_then(|_| self.stdin.flush())
        {
            return Completion::Info(format!("exec: cannot write to the client: {e}"));
        }
        match self.lines.recv_timeout(self.timeout) {
            Ok(Ok(line)) => parse_reply(&line, txn, self.workload).unwrap_or_else(|e| {
                // The transaction may have run: info. The run stops here.
                self.protocol_error
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get_or_insert_with(|| e.clone());
                super::driver::abort_run();
                Completion::Info(e)
            }),
            Ok(Err(e)) => Completion::Info(format!("exec: cannot read from the client: {e}")),
            Err(RecvTimeoutError::Timeout) => {
                Completion::Info(format!("exec: no reply within {:?}", self.timeout))
            }
            Err(RecvTimeoutError::Disconnected) => {
                Completion::Info("exec: the client exited".into())
            }
        }
    }
}

/// Interprets one reply line to `sent`; `Err` says how a malformed reply
/// breaks the protocol, quoting its start.
pub fn parse_reply(line: &str, sent: &[Mop], workload: WorkloadKind) -> Result<Completion, String> {
    let bad = |why: String| {
        let quoted: String = line.chars().take(QUOTE_MAX).collect();
        let cut = if quoted.len() < line.len() {
            " (cut)"
        } else {
            ""
        };
        Err(format!("exec: bad reply {quoted:?}{cut}: {why}"))
    };
    let reply: Json = match serde_json::from_str(line) {
        Ok(j) => j,
        Err(e) => return bad(e.to_string()),
    };
    let error = reply.get("error").map(|e| match e {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    });
    match reply.get("type").and_then(Json::as_str) {
        Some("ok") => {}
        Some("fail") => return Ok(Completion::Fail(error.unwrap_or_else(|| "fail".into()))),
        Some("info") => return Ok(Completion::Info(error.unwrap_or_else(|| "info".into()))),
        _ => return bad("\"type\" must be \"ok\", \"fail\" or \"info\"".into()),
    }
    if let [m] = sent {
        if m.model_f().is_some() {
            return match model_reply(m, reply.get("value").unwrap_or(&Json::Null)) {
                Ok(done) => Ok(Completion::Ok(vec![done])),
                Err(why) => bad(why),
            };
        }
    }
    let Some(values) = reply.get("value").and_then(Json::as_array) else {
        return bad("an ok reply needs \"value\": an array of micro-ops".into());
    };
    if values.len() != sent.len() {
        return bad(format!(
            "{} micro-ops sent, {} returned",
            sent.len(),
            values.len()
        ));
    }
    let mut done = Vec::with_capacity(sent.len());
    for (i, (got, want)) in values.iter().zip(sent).enumerate() {
        match check_mop(got, want, workload) {
            Ok(m) => done.push(m),
            Err(why) => return bad(format!("micro-op {i}: {why}")),
        }
    }
    Ok(Completion::Ok(done))
}

/// A model op completed with what an ok reply's `"value"` says: a read's
/// result (the value sent back is not checked for adds and transfers).
fn model_reply(sent: &Mop, value: &Json) -> Result<Mop, String> {
    let int = |x: &Json| x.as_i64().ok_or_else(|| format!("{x} is not an integer"));
    Ok(match sent {
        Mop::ReadBalances(_) => {
            let m = value
                .as_object()
                .ok_or("a bank read needs \"value\": an object of balances")?;
            let mut bs = m
                .iter()
                .map(|(k, v)| {
                    let k: Key = k
                        .parse()
                        .map_err(|_| format!("account {k:?} is not a non-negative integer"))?;
                    Ok((k, int(v)?))
                })
                .collect::<Result<Vec<_>, String>>()?;
            bs.sort_unstable();
            Mop::ReadBalances(Some(bs))
        }
        Mop::ReadCounter(_) => Mop::ReadCounter(Some(int(value)?)),
        Mop::ReadSet(_) | Mop::ReadIds(_) => {
            let xs = value
                .as_array()
                .ok_or("a set or comments read needs \"value\": an array of elements")?;
            let mut xs = xs.iter().map(int).collect::<Result<Vec<_>, _>>()?;
            xs.sort_unstable();
            if matches!(sent, Mop::ReadIds(_)) {
                Mop::ReadIds(Some(xs))
            } else {
                Mop::ReadSet(Some(xs))
            }
        }
        Mop::SeqRead(k, _) => {
            let xs = value.as_array().ok_or(
                "a sequential read needs \"value\": an array of the subkeys' values (latest first)",
            )?;
            let xs = xs
                .iter()
                .map(|x| {
                    if x.is_null() {
                        Ok(None)
                    } else {
                        int(x).map(Some)
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            Mop::SeqRead(*k, Some(xs))
        }
        Mop::RegRead(_) if value.is_null() => Mop::RegRead(None),
        Mop::RegRead(_) => Mop::RegRead(Some(int(value)?)),
        other => other.clone(),
    })
}

/// Checks that a returned micro-op is the one sent (same function, key and
/// written value) and decodes what a read returned.
fn check_mop(got: &Json, want: &Mop, workload: WorkloadKind) -> Result<Mop, String> {
    let arr = got
        .as_array()
        .filter(|a| a.len() == 3)
        .ok_or("expected [f, key, value]")?;
    let f = arr[0].as_str().ok_or("f must be a string")?;
    let k = arr[1]
        .as_u64()
        .ok_or("key must be a non-negative integer")?;
    if k != want.key() {
        return Err(format!("key {k} returned for key {}", want.key()));
    }
    match (want, f) {
        (Mop::Append(_, v), "append") | (Mop::Write(_, v), "w") => {
            if arr[2].as_i64() != Some(*v) {
                return Err(format!("written value changed to {}", arr[2]));
            }
            Ok(want.clone())
        }
        (Mop::Read(..), "r") => {
            let value = match (&arr[2], workload) {
                (Json::Null, _) => None,
                (Json::Array(xs), WorkloadKind::ListAppend) => Some(ReadValue::List(
                    xs.iter()
                        .map(|x| {
                            x.as_i64()
                                .ok_or_else(|| format!("list element {x} is not an integer"))
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                )),
                (Json::Number(n), w) if w.int_values() => Some(ReadValue::Int(
                    n.as_i64().ok_or("register value must be an integer")?,
                )),
                (other, _) => {
                    return Err(format!(
                        "read returned {other}, not a value of this workload"
                    ))
                }
            };
            Ok(Mop::Read(k, value))
        }
        _ => Err(format!(
            "function {f:?} returned for {}",
            txn_json(std::slice::from_ref(want))
        )),
    }
}

/// The line isolde sends for `txn` (without the newline).
pub fn request_line(txn: &[Mop]) -> String {
    match op_f_and_value(txn) {
        ("txn", value) => format!("{{\"value\":{value}}}"),
        (f, value) => format!("{{\"f\":\"{f}\",\"value\":{value}}}"),
    }
}
