//! OneLite's history format: JSON lines, a header `{"history":"list-append"}`
//! (or `"register"`), then one whole transaction per line:
//! `{"id":7,"p":2,"t0":100,"t1":250,"o":"ok","m":[["a",3,41],["r",3,[41]]]}`.
//!
//! `m` holds micro-ops `["a",k,v]` (append), `["w",k,v]` (write) and
//! `["r",k,v]` (read: a list for list-append; for registers a value, where
//! `0` is the initial state, i.e. nil). `o` is `ok`, `fail` or `info`;
//! `t0`/`t1` are invocation and completion times in nanoseconds (`t1` may be
//! absent or null for an `info` transaction). Event order comes from the
//! times: see [`super::builder::HistoryBuilder::finish`].

use super::error::ReadError;
use super::raw::{RawMop, RawTxn, RawValue};
use super::scan::{Atom, Coll, Dialect, Scanner, Tape};
use super::{MopKind, Outcome};
use std::io::Read;

/// The workload named in the header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OneLiteWorkload {
    /// List-append transactions.
    ListAppend,
    /// Read-write register transactions.
    Register,
}

impl OneLiteWorkload {
    /// The name isolde (and Elle) use for the workload.
    pub fn name(self) -> &'static str {
        match self {
            OneLiteWorkload::ListAppend => "list-append",
            OneLiteWorkload::Register => "rw-register",
        }
    }
}

/// Streams the transactions of a OneLite history.
pub struct OneLiteReader<R> {
    scanner: Scanner<R>,
    workload: Option<OneLiteWorkload>,
    failed: bool,
}

type Res<T> = Result<T, ReadError>;

impl<R: Read> OneLiteReader<R> {
    /// `file` names the input in error messages.
    pub fn new(input: R, file: &str) -> Self {
        OneLiteReader {
            scanner: Scanner::new(input, file, Dialect::Json),
            workload: None,
            failed: false,
        }
    }

    /// The workload of the header (read on first use).
    pub fn workload(&mut self) -> Res<Option<OneLiteWorkload>> {
        if self.workload.is_none() && !self.failed {
            let r = self.header();
            self.failed = r.is_err();
            r?;
        }
        Ok(self.workload)
    }

    fn header(&mut self) -> Res<()> {
        let Some((line, col)) = self.scanner.next_form()? else {
            return Ok(());
        };
        let tape = &self.scanner.tape;
        let file = &self.scanner.file;
        let mut kids = tape.children(0);
        let mut name = None;
        while let (Some(k), Some(v)) = (kids.next(), kids.next()) {
            if tape.name(k, Dialect::Json) == Some("history") {
                name = Some(v);
            }
        }
        let Some(v) = name else {
            return Err(ReadError::invalid(
                file,
                line,
                col,
                "expected the OneLite header {\"history\": \"list-append\"} or {\"history\": \"register\"}",
            ));
        };
        self.workload = Some(match tape.name(v, Dialect::Json) {
            Some("list-append") => OneLiteWorkload::ListAppend,
            Some("register") | Some("rw-register") => OneLiteWorkload::Register,
            _ => {
                let n = tape.nodes[v];
                return Err(ReadError::invalid(
                    file,
                    n.line,
                    n.col,
                    format!(
                        "expected \"history\" to be \"list-append\" or \"register\", got {}",
                        tape.show(v)
                    ),
                ));
            }
        });
        Ok(())
    }

    /// The next transaction, or `None` at the end of the history.
    pub fn next_txn(&mut self) -> Res<Option<RawTxn>> {
        if self.workload()?.is_none() || self.failed {
            return Ok(None);
        }
        let r = match self.scanner.next_form() {
            Ok(None) => Ok(None),
            Ok(Some(pos)) => decode_txn(
                &self.scanner.tape,
                &self.scanner.file,
                pos,
                self.workload.unwrap_or(OneLiteWorkload::ListAppend),
            )
            .map(Some),
            Err(e) => Err(e),
        };
        self.failed = r.is_err();
        r
    }
}

fn decode_txn(tape: &Tape, file: &str, (line, col): (u32, u32), w: OneLiteWorkload) -> Res<RawTxn> {
    let err = |i: usize, what: String| {
        let n = tape.nodes[i];
        ReadError::invalid(file, n.line, n.col, what)
    };
    const FIELDS: [&str; 6] = ["id", "p", "t0", "t1", "o", "m"];
    let mut slot: [Option<usize>; 6] = [None; 6];
    let mut kids = tape.children(0);
    while let (Some(k), Some(v)) = (kids.next(), kids.next()) {
        if let Some(f) = tape
            .name(k, Dialect::Json)
            .and_then(|n| FIELDS.iter().position(|&f| f == n))
        {
            if slot[f].is_some() {
                return Err(err(k, format!("duplicate key \"{}\"", FIELDS[f])));
            }
            slot[f] = Some(v);
        }
    }
    let int = |f: usize, required: bool| -> Res<Option<i64>> {
        match slot[f].map(|i| (i, tape.nodes[i].atom)) {
            Some((_, Atom::Int(v))) => Ok(Some(v)),
            None | Some((_, Atom::Nil)) if !required => Ok(None),
            None => Err(ReadError::invalid(
                file,
                line,
                col,
                format!("transaction has no \"{}\"", FIELDS[f]),
            )),
            Some((i, _)) => Err(err(
                i,
                format!(
                    "expected \"{}\" to be an integer, got {}",
                    FIELDS[f],
                    tape.show(i)
                ),
            )),
        }
    };
    let id = int(0, true)?.unwrap_or_default();
    let process = int(1, true)?.unwrap_or_default();
    let t0 = int(2, true)?.unwrap_or_default();
    let t1 = int(3, false)?;
    let outcome = match slot[4].map(|i| (i, tape.name(i, Dialect::Json))) {
        Some((_, Some("ok"))) => Outcome::Ok,
        Some((_, Some("fail"))) => Outcome::Fail,
        Some((_, Some("info"))) => Outcome::Info,
        Some((i, _)) => {
            return Err(err(
                i,
                format!(
                    "expected \"o\" to be one of \"ok\" \"fail\" \"info\", got {}",
                    tape.show(i)
                ),
            ))
        }
        None => {
            return Err(ReadError::invalid(
                file,
                line,
                col,
                "transaction has no \"o\"",
            ))
        }
    };
    if t1.is_none() && outcome != Outcome::Info {
        return Err(ReadError::invalid(
            file,
            line,
            col,
            "transaction has no \"t1\" (only an info transaction may lack one)",
        ));
    }
    let mops = match slot[5] {
        None => {
            return Err(ReadError::invalid(
                file,
                line,
                col,
                "transaction has no \"m\"",
            ))
        }
        Some(m) => decode_mops(tape, m, w, &err)?,
    };
    Ok(RawTxn {
        id,
        process,
        t0,
        t1,
        outcome,
        mops,
        line,
        col,
    })
}

fn decode_mops(
    tape: &Tape,
    m: usize,
    w: OneLiteWorkload,
    err: &dyn Fn(usize, String) -> ReadError,
) -> Res<Vec<RawMop>> {
    match tape.nodes[m].atom {
        Atom::Nil => return Ok(Vec::new()),
        Atom::Open {
            coll: Coll::Vector, ..
        } => {}
        _ => {
            return Err(err(
                m,
                format!(
                    "expected \"m\" to be an array of micro-ops, got {}",
                    tape.show(m)
                ),
            ))
        }
    }
    let mut mops = Vec::new();
    for op in tape.children(m) {
        let mut parts = tape.children(op);
        let (Some(fi), Some(ki), Some(vi), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(err(
                op,
                format!(
                    "expected a micro-op [\"a\"|\"w\"|\"r\", key, value], got {}",
                    tape.show(op)
                ),
            ));
        };
        if !matches!(
            tape.nodes[op].atom,
            Atom::Open {
                coll: Coll::Vector,
                ..
            }
        ) {
            return Err(err(
                op,
                format!("expected a micro-op array, got {}", tape.show(op)),
            ));
        }
        let kind = match tape.name(fi, Dialect::Json) {
            Some("a") => MopKind::Append,
            Some("w") => MopKind::Write,
            Some("r") => MopKind::Read,
            _ => {
                return Err(err(
                    fi,
                    format!(
                        "unknown micro-op function {} (expected \"a\", \"r\" or \"w\")",
                        tape.show(fi)
                    ),
                ))
            }
        };
        let key = tape.datum(ki);
        let v = tape.nodes[vi].atom;
        let value = match (kind, v) {
            (_, Atom::Nil) => RawValue::Nil,
            (MopKind::Read, Atom::Int(0)) if w == OneLiteWorkload::Register => RawValue::Nil,
            (MopKind::Write, Atom::Int(0)) => {
                return Err(err(
                    vi,
                    "a register write must not be 0 (0 is the initial state)".into(),
                ))
            }
            (
                MopKind::Read,
                Atom::Open {
                    coll: Coll::Vector, ..
                },
            ) => tape.list(vi, tape.children(vi).count() as u32),
            _ => RawValue::Scalar(tape.datum(vi)),
        };
        mops.push(RawMop { kind, key, value });
    }
    Ok(mops)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Datum;

    fn read(text: &str) -> Result<(Option<OneLiteWorkload>, Vec<RawTxn>), ReadError> {
        let mut r = OneLiteReader::new(text.as_bytes(), "t.jsonl");
        let w = r.workload()?;
        let mut out = Vec::new();
        while let Some(t) = r.next_txn()? {
            out.push(t);
        }
        Ok((w, out))
    }

    fn err(text: &str) -> String {
        read(text).expect_err("should fail").to_string()
    }

    #[test]
    fn list_append_lines() {
        let (w, ts) = read(
            "{\"history\":\"list-append\"}\n{\"id\":7,\"p\":2,\"t0\":100,\"t1\":250,\"o\":\"ok\",\"m\":[[\"a\",3,41],[\"r\",3,[41]],[\"r\",4,null]]}\n",
        )
        .unwrap();
        assert_eq!(w, Some(OneLiteWorkload::ListAppend));
        let t = &ts[0];
        assert_eq!(
            (t.id, t.process, t.t0, t.t1, t.outcome),
            (7, 2, 100, Some(250), Outcome::Ok)
        );
        assert_eq!((t.line, t.col), (2, 1));
        assert_eq!(
            t.mops,
            vec![
                RawMop {
                    kind: MopKind::Append,
                    key: Datum::Int(3),
                    value: RawValue::Scalar(Datum::Int(41))
                },
                RawMop {
                    kind: MopKind::Read,
                    key: Datum::Int(3),
                    value: RawValue::Ints(vec![41])
                },
                RawMop {
                    kind: MopKind::Read,
                    key: Datum::Int(4),
                    value: RawValue::Nil
                },
            ]
        );
    }

    #[test]
    fn register_reads_of_zero_are_the_initial_nil() {
        let (w, ts) = read(
            "{\"history\":\"register\"}\n{\"id\":1,\"p\":0,\"t0\":1,\"t1\":2,\"o\":\"info\",\"m\":[[\"r\",1,0],[\"w\",1,5],[\"r\",2,7]]}",
        )
        .unwrap();
        assert_eq!(w, Some(OneLiteWorkload::Register));
        assert_eq!(w.unwrap().name(), "rw-register");
        let m = &ts[0].mops;
        assert_eq!(m[0].value, RawValue::Nil);
        assert_eq!(m[1].kind, MopKind::Write);
        assert_eq!(m[1].value, RawValue::Scalar(Datum::Int(5)));
        assert_eq!(m[2].value, RawValue::Scalar(Datum::Int(7)));
    }

    #[test]
    fn info_may_lack_t1() {
        let (_, ts) = read("{\"history\":\"register\"}\n{\"id\":1,\"p\":0,\"t0\":1,\"o\":\"info\",\"m\":[]}\n{\"id\":2,\"p\":0,\"t0\":1,\"t1\":null,\"o\":\"info\",\"m\":[]}").unwrap();
        assert_eq!((ts[0].t1, ts[1].t1), (None, None));
    }

    #[test]
    fn empty_input_has_no_header_and_no_txns() {
        assert_eq!(read("").unwrap(), (None, vec![]));
    }

    #[test]
    fn errors() {
        assert_eq!(
            err("{\"id\":1}"),
            "t.jsonl:1:1: expected the OneLite header {\"history\": \"list-append\"} or {\"history\": \"register\"}"
        );
        assert_eq!(
            err("{\"history\":\"bank\"}"),
            "t.jsonl:1:12: expected \"history\" to be \"list-append\" or \"register\", got \"bank\""
        );
        let h = "{\"history\":\"list-append\"}\n";
        assert_eq!(
            err(&format!(
                "{h}{{\"id\":1,\"p\":0,\"t0\":1,\"t1\":2,\"o\":\"maybe\",\"m\":[]}}"
            )),
            "t.jsonl:2:33: expected \"o\" to be one of \"ok\" \"fail\" \"info\", got \"maybe\""
        );
        assert_eq!(
            err(&format!(
                "{h}{{\"id\":1,\"p\":0,\"t0\":1,\"o\":\"ok\",\"m\":[]}}"
            )),
            "t.jsonl:2:1: transaction has no \"t1\" (only an info transaction may lack one)"
        );
        assert_eq!(
            err(&format!(
                "{h}{{\"p\":0,\"t0\":1,\"t1\":2,\"o\":\"ok\",\"m\":[]}}"
            )),
            "t.jsonl:2:1: transaction has no \"id\""
        );
        assert_eq!(
            err(&format!(
                "{h}{{\"id\":\"x\",\"p\":0,\"t0\":1,\"t1\":2,\"o\":\"ok\",\"m\":[]}}"
            )),
            "t.jsonl:2:7: expected \"id\" to be an integer, got \"x\""
        );
        assert_eq!(
            err(&format!(
                "{h}{{\"id\":1,\"p\":0,\"t0\":1,\"t1\":2,\"o\":\"ok\"}}"
            )),
            "t.jsonl:2:1: transaction has no \"m\""
        );
        assert_eq!(
            err(&format!(
                "{h}{{\"id\":1,\"p\":0,\"t0\":1,\"t1\":2,\"o\":\"ok\",\"m\":[[\"cas\",1,2]]}}"
            )),
            "t.jsonl:2:44: unknown micro-op function \"cas\" (expected \"a\", \"r\" or \"w\")"
        );
        assert_eq!(
            err(&format!(
                "{h}{{\"id\":1,\"p\":0,\"t0\":1,\"t1\":2,\"o\":\"ok\",\"m\":[[\"a\",1]]}}"
            )),
            "t.jsonl:2:43: expected a micro-op [\"a\"|\"w\"|\"r\", key, value], got [\"a\" 1]"
        );
        assert_eq!(
            err(&format!(
                "{h}{{\"id\":1,\"p\":0,\"t0\":1,\"t1\":2,\"o\":\"ok\",\"m\":[[\"w\",1,0]]}}"
            )),
            "t.jsonl:2:50: a register write must not be 0 (0 is the initial state)"
        );
        assert_eq!(
            err(&format!(
                "{h}{{\"id\":1,\"p\":0,\"t0\":1,\"t1\":2,\"o\":\"ok\",\"m\":5}}"
            )),
            "t.jsonl:2:42: expected \"m\" to be an array of micro-ops, got 5"
        );
        assert_eq!(
            err(&format!("{h}{{\"id\":1,\"id\":2}}")),
            "t.jsonl:2:9: duplicate key \"id\""
        );
    }
}
