//! Jepsen histories written as EDN: op maps, read by the shared tokenizer
//! (`scan.rs`), become [`RawOp`]s here. The op conventions (which fields,
//! what a micro-op looks like, the errors for each) are the same for
//! elle-cli's JSON, which reads through [`EdnReader`] in its JSON dialect.

use super::builder::HistoryBuilder;
use super::error::ReadError;
use super::raw::{OpBatch, OpType, RawMop, RawOp, RawValue};
use super::scan::{Atom, Coll, Dialect, Scanner, Tape};
use super::{Datum, MopKind};
use std::io::Read;

type Res<T> = Result<T, ReadError>;

/// Reads ops from the tape of one op map, under the conventions of
/// `dialect`: EDN keywords, or JSON strings normalised the way elle-cli
/// does (`type`, `f` and micro-op functions become keywords).
pub(crate) fn decode_op(
    tape: &Tape,
    dialect: Dialect,
    file: &str,
    (line, col): (u32, u32),
) -> Res<RawOp> {
    let err = |i: usize, what: String| {
        let n = tape.nodes[i];
        ReadError::invalid(file, n.line, n.col, what)
    };
    let kw = |s: &str| match dialect {
        Dialect::Edn => format!(":{s}"),
        Dialect::Json => format!("\"{s}\""),
    };
    const FIELDS: [&str; 6] = ["index", "time", "type", "process", "f", "value"];
    let mut slot: [Option<usize>; 6] = [None; 6];
    let mut kids = tape.children(0);
    while let (Some(k), Some(v)) = (kids.next(), kids.next()) {
        let f = match tape.name_bytes(k, dialect) {
            Some(b"index") => 0,
            Some(b"time") => 1,
            Some(b"type") => 2,
            Some(b"process") => 3,
            Some(b"f") => 4,
            Some(b"value") => 5,
            _ => continue,
        };
        if slot[f].is_some() {
            return Err(err(k, format!("duplicate key {} in op map", kw(FIELDS[f]))));
        }
        slot[f] = Some(v);
    }
    let [index, time, kind, process, f, value] = slot;
    let int_field = |i: Option<usize>, name: &str| -> Res<Option<i64>> {
        match i.map(|i| (i, tape.nodes[i].atom)) {
            None | Some((_, Atom::Nil)) => Ok(None),
            Some((_, Atom::Int(v))) => Ok(Some(v)),
            Some((i, _)) => Err(err(
                i,
                format!(
                    "expected {} to be an integer, got {}",
                    kw(name),
                    tape.show(i)
                ),
            )),
        }
    };
    let index = int_field(index, "index")?;
    let time = int_field(time, "time")?;
    let Some(kind_i) = kind else {
        return Err(ReadError::invalid(
            file,
            line,
            col,
            format!("op has no {}", kw("type")),
        ));
    };
    let kind = match tape.name_bytes(kind_i, dialect) {
        Some(b"invoke") => OpType::Invoke,
        Some(b"ok") => OpType::Ok,
        Some(b"fail") => OpType::Fail,
        Some(b"info") => OpType::Info,
        _ => {
            return Err(err(
                kind_i,
                format!(
                    "expected {} to be one of {} {} {} {}, got {}",
                    kw("type"),
                    kw("invoke"),
                    kw("ok"),
                    kw("fail"),
                    kw("info"),
                    tape.show(kind_i)
                ),
            ))
        }
    };
    let process = match process {
        None => Datum::Nil,
        Some(i) => match tape.nodes[i].atom {
            Atom::Int(p) => Datum::Int(p),
            _ => tape.datum(i),
        },
    };
    let f = match f {
        None => Datum::Nil,
        Some(i) => match (dialect, tape.nodes[i].atom) {
            (Dialect::Json, Atom::Str(s, l)) => Datum::Keyword(tape.text(s, l).to_string()),
            _ => tape.datum(i),
        },
    };
    let mut op = RawOp {
        index,
        time,
        kind,
        process,
        f,
        value: None,
        line,
        col,
    };
    if op.is_client() {
        if let Some(v) = value {
            op.value = decode_mops(tape, v, dialect, file)?;
        }
    }
    Ok(op)
}

/// `:value` as micro-ops; `None` for `nil`.
pub(crate) fn decode_mops(
    tape: &Tape,
    v: usize,
    dialect: Dialect,
    file: &str,
) -> Res<Option<Vec<RawMop>>> {
    let err = |i: usize, what: String| {
        let n = tape.nodes[i];
        ReadError::invalid(file, n.line, n.col, what)
    };
    let (count, is_seq) = match tape.nodes[v].atom {
        Atom::Nil => return Ok(None),
        Atom::Open { coll, count, .. } => (count, matches!(coll, Coll::Vector | Coll::List)),
        _ => (0, false),
    };
    if !is_seq {
        return Err(err(
            v,
            format!(
                "expected the value to be a vector of micro-ops, got {}{}",
                tape.show(v),
                // A bank read, a counter add, a set read: another workload.
                if matches!(tape.nodes[v].atom, Atom::Open { .. } | Atom::Int(_)) {
                    " (a history of elle-cli's bank, counter, set, set-full or long-fork \
                     model? give it with -m MODEL)"
                } else {
                    ""
                }
            ),
        ));
    }
    let mut mops = Vec::with_capacity(count as usize);
    for m in tape.children(v) {
        match tape.nodes[m].atom {
            Atom::Open {
                coll: Coll::Vector | Coll::List,
                count: 2 | 3,
                ..
            } => {}
            _ => {
                return Err(err(
                    m,
                    format!(
                        "expected a micro-op like [:append k v], [:w k v] or [:r k v], got {}",
                        tape.show(m)
                    ),
                ))
            }
        };
        let mut parts = tape.children(m);
        let (Some(fi), Some(ki)) = (parts.next(), parts.next()) else {
            return Err(err(
                m,
                "expected a micro-op with a function and a key".into(),
            ));
        };
        let kind = match tape.name_bytes(fi, dialect) {
            Some(b"append") => MopKind::Append,
            Some(b"w") => MopKind::Write,
            Some(b"r") => MopKind::Read,
            _ => {
                let shown = match (dialect, tape.nodes[fi].atom) {
                    (Dialect::Json, Atom::Str(s, l)) => format!(":{}", tape.text(s, l)),
                    _ => tape.show(fi),
                };
                return Err(err(
                    fi,
                    format!("unknown micro-op function {shown} (expected :append, :r or :w)"),
                ));
            }
        };
        let key = match tape.nodes[ki].atom {
            Atom::Int(k) => Datum::Int(k),
            _ => tape.datum(ki),
        };
        let value = match parts.next() {
            None if kind == MopKind::Read => RawValue::Nil,
            None => {
                return Err(err(
                    m,
                    format!("expected a value in micro-op {}", tape.show(m)),
                ))
            }
            Some(vi) => match tape.nodes[vi].atom {
                Atom::Nil => RawValue::Nil,
                Atom::Int(x) => RawValue::Scalar(Datum::Int(x)),
                Atom::Open {
                    coll: Coll::Vector | Coll::List,
                    count,
                    ..
                } if kind == MopKind::Read => tape.list(vi, count),
                _ => RawValue::Scalar(tape.datum(vi)),
            },
        };
        mops.push(RawMop { kind, key, value });
    }
    Ok(Some(mops))
}

/// Streams the ops of an EDN history.
pub struct EdnReader<R> {
    scanner: Scanner<R>,
    dialect: Dialect,
    /// Try the fast path first (off only in tests that compare the paths).
    pub(crate) fast: bool,
    /// Set after an error: the stream is not resumed past bad input.
    failed: bool,
}

impl<R: Read> EdnReader<R> {
    /// `file` names the input in error messages.
    pub fn new(input: R, file: &str) -> Self {
        Self::with_dialect(input, file, Dialect::Edn)
    }

    pub(crate) fn with_dialect(input: R, file: &str, dialect: Dialect) -> Self {
        Self::from_scanner(Scanner::new(input, file, dialect), dialect)
    }

    /// Ops through a scanner set up by the caller (e.g. resumed mid-input).
    pub(crate) fn from_scanner(scanner: Scanner<R>, dialect: Dialect) -> Self {
        EdnReader {
            scanner,
            dialect,
            fast: true,
            failed: false,
        }
    }

    /// The next op, or `None` at the end of the history.
    pub fn next_op(&mut self) -> Result<Option<RawOp>, ReadError> {
        let mut batch = OpBatch::default();
        Ok(self.next_into(&mut batch)?.then(|| batch.raw(0)))
    }

    /// Appends the next op to `batch`; false at the end of the history.
    pub(crate) fn next_into(&mut self, batch: &mut OpBatch) -> Result<bool, ReadError> {
        if self.failed {
            return Ok(false);
        }
        if self.fast && self.scanner.between_forms() {
            match self.scanner.simple_op(batch) {
                Ok(true) => return Ok(true),
                Ok(false) => {}
                Err(e) => {
                    self.failed = true;
                    return Err(e);
                }
            }
        }
        let r = match self.scanner.next_form() {
            Ok(None) => Ok(false),
            Ok(Some(pos)) => decode_op(&self.scanner.tape, self.dialect, &self.scanner.file, pos)
                .map(|op| {
                    batch.push_raw(op);
                    true
                }),
            Err(e) => Err(e),
        };
        self.failed = r.is_err();
        r
    }

    /// Reads every op into `b`, in batches (no allocation per op), in
    /// the order and with the first error of one op at a time.
    pub(crate) fn build(mut self, b: &mut HistoryBuilder) -> Result<(), ReadError> {
        const BATCH: usize = 1024;
        let mut batch = OpBatch::default();
        loop {
            batch.clear();
            let mut next = Ok(true);
            while batch.len() < BATCH {
                next = self.next_into(&mut batch);
                if !matches!(next, Ok(true)) {
                    break;
                }
            }
            // The ops before an error go in first: their own errors come
            // before it in the stream.
            b.push_batch(&batch)?;
            if !next? {
                return Ok(());
            }
        }
    }
}

impl<R: Read> Iterator for EdnReader<R> {
    type Item = Result<RawOp, ReadError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_op().transpose()
    }
}

/// Reads every top-level form of an EDN text as a [`Datum`] (each must be a
/// map or a vector/list of maps, as in a history). For tests and tools.
pub fn read_maps(text: &str) -> Result<Vec<Datum>, ReadError> {
    let mut s = Scanner::new(text.as_bytes(), "<string>", Dialect::Edn);
    let mut out = Vec::new();
    while s.next_form()?.is_some() {
        out.push(s.tape.datum(0));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::scan::tests::{int, kw};

    fn ops(text: &str) -> Result<Vec<RawOp>, ReadError> {
        EdnReader::new(text.as_bytes(), "t.edn").collect()
    }

    fn op_error(text: &str) -> String {
        ops(text).expect_err("should fail").to_string()
    }

    #[test]
    fn op_fields_are_decoded() {
        let o = &ops("\n{:index 3, :time 17, :type :ok, :process 2, :f :txn, :value [[:append :x 1] [:r :y [1 2]] [:r :z] [:w 5 nil] [:r 6 7]]}")
            .unwrap()[0];
        assert_eq!(o.index, Some(3));
        assert_eq!(o.time, Some(17));
        assert_eq!(o.kind, OpType::Ok);
        assert_eq!(o.process, int(2));
        assert_eq!(o.f, kw("txn"));
        assert_eq!((o.line, o.col), (2, 1));
        let m = o.value.as_ref().unwrap();
        assert_eq!(
            m[0],
            RawMop {
                kind: MopKind::Append,
                key: kw("x"),
                value: RawValue::Scalar(int(1))
            }
        );
        assert_eq!(m[1].value, RawValue::Ints(vec![1, 2]));
        assert_eq!(
            m[2],
            RawMop {
                kind: MopKind::Read,
                key: kw("z"),
                value: RawValue::Nil
            }
        );
        assert_eq!(
            m[3],
            RawMop {
                kind: MopKind::Write,
                key: int(5),
                value: RawValue::Nil
            }
        );
        assert_eq!(m[4].value, RawValue::Scalar(int(7)));
    }

    #[test]
    fn op_missing_fields_are_nil() {
        let o = &ops("{:type :invoke}").unwrap()[0];
        assert_eq!(
            (o.index, o.time, &o.process, &o.f, &o.value),
            (None, None, &Datum::Nil, &Datum::Nil, &None)
        );
        assert!(!o.is_client());
    }

    #[test]
    fn op_keys_may_be_any_datum_and_lists_count_as_vectors() {
        let o =
            &ops("{:type :ok, :process 0, :value ([:append [:anti 5] :first] (:r \"x\" (1 2)))}")
                .unwrap()[0];
        let m = o.value.as_ref().unwrap();
        assert_eq!(m[0].key, Datum::Vector(vec![kw("anti"), int(5)]));
        assert_eq!(m[0].value, RawValue::Scalar(kw("first")));
        assert_eq!(m[1].key, Datum::Str("x".into()));
        assert_eq!(m[1].value, RawValue::Ints(vec![1, 2]));
    }

    #[test]
    fn non_client_ops_keep_free_form_values() {
        let o = &ops("{:type :info, :f :leave, :value [\"n1\" {\"n1\" \"OK\"}], :process :nemesis, :extra #{1}}").unwrap()[0];
        assert_eq!(o.process, kw("nemesis"));
        assert_eq!(o.value, None);
        assert_eq!(o.f, kw("leave"));
    }

    #[test]
    fn op_errors_name_what_was_expected() {
        assert_eq!(
            op_error("{:type :foo, :process 1}"),
            "t.edn:1:8: expected :type to be one of :invoke :ok :fail :info, got :foo"
        );
        assert_eq!(op_error("\n {:process 1}"), "t.edn:2:2: op has no :type");
        assert_eq!(
            op_error("{:type :ok, :index \"7\"}"),
            "t.edn:1:20: expected :index to be an integer, got \"7\""
        );
        assert_eq!(
            op_error("{:type :ok, :time 1.5}"),
            "t.edn:1:19: expected :time to be an integer, got 1.5"
        );
        assert_eq!(
            op_error("{:type :ok, :type :ok}"),
            "t.edn:1:13: duplicate key :type in op map"
        );
        assert_eq!(
            op_error("{:type :ok, :process 0, :value [[:cas :x 1 2]]}"),
            "t.edn:1:33: expected a micro-op like [:append k v], [:w k v] or [:r k v], got [:cas :x 1 2]"
        );
        assert_eq!(
            op_error("{:type :ok, :process 0, :value [[:cas :x 1]]}"),
            "t.edn:1:34: unknown micro-op function :cas (expected :append, :r or :w)"
        );
        assert_eq!(
            op_error("{:type :ok, :process 0, :value [[:append :x]]}"),
            "t.edn:1:33: expected a value in micro-op [:append :x]"
        );
        assert_eq!(
            op_error("{:type :ok, :process 0, :value 3}"),
            "t.edn:1:32: expected the value to be a vector of micro-ops, got 3 (a history of elle-cli's bank, counter, set, set-full or long-fork model? give it with -m MODEL)"
        );
        assert_eq!(
            op_error("{:type :ok, :process 0, :value [:r :x 1]}"),
            "t.edn:1:33: expected a micro-op like [:append k v], [:w k v] or [:r k v], got :r"
        );
    }

    #[test]
    fn reader_stops_after_an_error() {
        let mut r = EdnReader::new("{:type :bad}\n{:type :ok}".as_bytes(), "t.edn");
        assert!(r.next_op().is_err());
        assert_eq!(r.next_op().unwrap(), None);
    }
}
