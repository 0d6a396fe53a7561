//! Checkers of elle-cli's non-transactional models: `bank`, `counter`,
//! `set`, `set-full`, `long-fork`, `comments`, `sequential`, and the
//! linearizability models `cas-register` and `mutex` (not to be confused with
//! [`crate::model`], the lattice of consistency models).
//!
//! These histories are plain Jepsen op maps whose `:value` is a number, a
//! map of balances, a collection of elements or a group read, so they are
//! not read into [`crate::history::History`] (which interns transactions):
//! [`read_ops`] decodes them with the shared tokenizer into [`Op`]s that
//! keep the value as a [`Datum`], and each model is a pure function from
//! those ops to a typed result, rendered as Jepsen's result map (`-v`) or
//! as text (`-x`).

pub mod bank;
pub mod comments;
pub mod counter;
pub mod linearizable;
pub mod long_fork;
pub mod sequential;
pub mod set;
pub mod set_full;

use crate::history::error::ReadError;
use crate::history::raw::OpType;
use crate::history::read::{open_boxed, Format};
use crate::history::scan::{Atom, Coll, Dialect, Scanner};
use crate::history::Datum;
use crate::model::Validity;
use serde_json::{json, Map, Value};
use std::io::Read;

/// An op's `:f`, as far as these models care.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum F {
    /// `:add` (counter, set, set-full).
    Add,
    /// `:read`.
    Read,
    /// `:transfer` (bank).
    Transfer,
    /// `:write` (long-fork's writes).
    Write,
    /// `:txn`.
    Txn,
    /// Any other function, by name (long-fork's `:txn`, `:write`, ...).
    Other(Box<str>),
}

impl F {
    fn from_name(name: &str) -> F {
        match name {
            "add" => F::Add,
            "read" => F::Read,
            "transfer" => F::Transfer,
            "write" => F::Write,
            "txn" => F::Txn,
            other => F::Other(other.into()),
        }
    }

    /// The name as written in histories.
    pub fn name(&self) -> &str {
        match self {
            F::Add => "add",
            F::Read => "read",
            F::Transfer => "transfer",
            F::Write => "write",
            F::Txn => "txn",
            F::Other(s) => s,
        }
    }
}

/// One client operation of a non-transactional history.
#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    /// The op's `:index`, or its position among the ops read when it has none.
    pub index: i64,
    /// `:type`.
    pub kind: OpType,
    /// `:f`.
    pub f: F,
    /// `:process`; `None` when absent (such ops pair up as one process).
    pub process: Option<i64>,
    /// `:time` in nanoseconds.
    pub time: Option<i64>,
    /// `:value` (`nil` when absent).
    pub value: Datum,
    /// Where the value (or, without one, the op) starts: for errors.
    pub line: u32,
    /// Column of `line`.
    pub col: u32,
}

/// The client ops of one history, in file order.
#[derive(Debug)]
pub struct Ops {
    /// The input's name, for error messages.
    pub file: String,
    /// Ops whose `:process` is an integer or absent; nemesis ops (a keyword
    /// process) are left out, as Jepsen's checkers leave them out.
    pub ops: Vec<Op>,
}

impl Ops {
    /// An input error about `op`'s value.
    pub fn error(&self, op: &Op, what: impl Into<String>) -> ReadError {
        ReadError::invalid(&self.file, op.line, op.col, what)
    }

    /// For each op, the position of its partner: an invocation's completion
    /// or a completion's invocation (by process, in file order); `None` for
    /// an invocation that never completed or a completion without one.
    pub fn partners(&self) -> Vec<Option<usize>> {
        let mut open: rustc_hash::FxHashMap<Option<i64>, usize> = Default::default();
        let mut out = vec![None; self.ops.len()];
        for (i, op) in self.ops.iter().enumerate() {
            if op.kind == OpType::Invoke {
                open.insert(op.process, i);
            } else if let Some(j) = open.remove(&op.process) {
                out[i] = Some(j);
                out[j] = Some(i);
            }
        }
        out
    }
}

/// Reads the ops of an EDN or elle-cli JSON history from a file (gzip and
/// zstd decoded); `format` as `isolde check -f` gives it.
pub fn read_ops_file(path: &std::path::Path, format: Option<Format>) -> Result<Ops, ReadError> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| ReadError::io(&name, e))?;
    read_ops(file, &name, format)
}

/// Reads the ops of an EDN or elle-cli JSON history; `name` names it in errors.
pub fn read_ops<R: Read + 'static>(
    input: R,
    name: &str,
    format: Option<Format>,
) -> Result<Ops, ReadError> {
    let (format, input) = open_boxed(input, name, format)?;
    let dialect = match format {
        Format::Edn => Dialect::Edn,
        Format::Json => Dialect::Json,
        Format::OneLite => return Err(ReadError::invalid(
            name,
            1,
            1,
            "expected Jepsen op maps (EDN or elle-cli JSON); OneLite histories hold transactions",
        )),
    };
    let mut s = Scanner::new(input, name, dialect);
    let mut ops = Vec::new();
    let mut position = 0i64;
    while let Some((line, col)) = s.next_form()? {
        if let Some(op) = decode(&s.tape, dialect, name, position, line, col)? {
            ops.push(op);
        }
        position += 1;
    }
    Ok(Ops {
        file: name.to_string(),
        ops,
    })
}

/// Decodes the op map at the start of `tape`; `None` for a nemesis op.
fn decode(
    tape: &crate::history::scan::Tape,
    dialect: Dialect,
    file: &str,
    position: i64,
    line: u32,
    col: u32,
) -> Result<Option<Op>, ReadError> {
    let bad = |l: u32, c: u32, what: String| ReadError::invalid(file, l, c, what);
    if !matches!(
        tape.nodes[0].atom,
        Atom::Open {
            coll: Coll::Map,
            ..
        }
    ) {
        return Err(bad(
            line,
            col,
            format!("expected an op map, got {}", tape.show(0)),
        ));
    }
    let mut op = Op {
        index: position,
        kind: OpType::Invoke,
        f: F::Other("".into()),
        process: None,
        time: None,
        value: Datum::Nil,
        line,
        col,
    };
    let mut kind = None;
    let mut children = tape.children(0);
    while let (Some(k), Some(v)) = (children.next(), children.next()) {
        let node = tape.nodes[v];
        let int = || match node.atom {
            Atom::Int(x) => Ok(x),
            _ => Err(bad(
                node.line,
                node.col,
                format!("expected an integer, got {}", tape.show(v)),
            )),
        };
        match tape.name(k, dialect) {
            Some("type") => {
                let t = tape.name(v, dialect).and_then(OpType::from_name);
                kind = Some(t.ok_or_else(|| {
                    bad(
                        node.line,
                        node.col,
                        format!(
                            "expected :type to be invoke, ok, fail or info, got {}",
                            tape.show(v)
                        ),
                    )
                })?);
            }
            Some("f") => {
                op.f = F::from_name(tape.name(v, dialect).ok_or_else(|| {
                    bad(
                        node.line,
                        node.col,
                        format!("expected :f to be a name, got {}", tape.show(v)),
                    )
                })?)
            }
            Some("process") => match node.atom {
                Atom::Int(p) => op.process = Some(p),
                Atom::Nil => {}
                // The nemesis and other non-client processes.
                _ => return Ok(None),
            },
            Some("time") => op.time = Some(int()?),
            Some("index") => op.index = int()?,
            Some("value") => {
                op.value = tape.datum(v);
                (op.line, op.col) = (node.line, node.col);
            }
            _ => {}
        }
    }
    op.kind = kind.ok_or_else(|| bad(line, col, "expected a :type in the op map".into()))?;
    Ok(Some(op))
}

/// A datum as JSON, the way elle-cli prints Clojure data: keywords and
/// symbols as their names, sets and lists as arrays, map keys as strings.
pub fn datum_json(d: &Datum) -> Value {
    match d {
        Datum::Nil => Value::Null,
        Datum::Bool(b) => Value::Bool(*b),
        Datum::Int(i) => json!(i),
        Datum::BigInt(s) | Datum::Float(s) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        Datum::Str(s) | Datum::Keyword(s) | Datum::Symbol(s) => Value::String(s.clone()),
        Datum::Char(c) => Value::String(c.to_string()),
        Datum::Vector(xs) | Datum::List(xs) | Datum::Set(xs) => {
            Value::Array(xs.iter().map(datum_json).collect())
        }
        Datum::Map(kvs) => Value::Object(
            kvs.iter()
                .map(|(k, v)| (key_string(k), datum_json(v)))
                .collect(),
        ),
    }
}

/// A map key as a JSON object key: names as they are, other data as EDN.
pub fn key_string(k: &Datum) -> String {
    match k {
        Datum::Str(s) | Datum::Keyword(s) | Datum::Symbol(s) => s.clone(),
        other => other.to_string(),
    }
}

/// An op as JSON, with Jepsen's keys.
pub fn op_json(op: &Op) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), json!(op.kind.name()));
    m.insert("f".into(), json!(op.f.name()));
    m.insert("value".into(), datum_json(&op.value));
    if let Some(p) = op.process {
        m.insert("process".into(), json!(p));
    }
    if let Some(t) = op.time {
        m.insert("time".into(), json!(t));
    }
    m.insert("index".into(), json!(op.index));
    Value::Object(m)
}

/// A datum as EDN, cut to 80 characters: for messages about values that
/// may be huge (a read of a whole set).
pub fn short(d: &Datum) -> String {
    let s = d.to_string();
    if s.chars().count() > 80 {
        let cut: String = s.chars().take(77).collect();
        format!("{cut}...")
    } else {
        s
    }
}

/// An op in one line of text, for `-x`.
pub fn op_text(op: &Op) -> String {
    format!(
        "op {} ({} {} {}, process {}, line {})",
        op.index,
        op.kind.name(),
        op.f.name(),
        short(&op.value),
        op.process.map_or("-".to_string(), |p| p.to_string()),
        op.line
    )
}

/// Jepsen's `:valid?` value.
pub fn valid_json(v: Validity) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// The items of a set as Jepsen's `integer-interval-set-str` shows them:
/// runs of consecutive integers as `a..b`, e.g. `#{1..3 7}`; other
/// elements as EDN, after the integers. `xs` must be sorted.
pub fn interval_set_str(xs: &[&Datum]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut run: Option<(i64, i64)> = None;
    let flush = |run: &mut Option<(i64, i64)>, parts: &mut Vec<String>| {
        if let Some((a, b)) = run.take() {
            parts.push(if a == b {
                a.to_string()
            } else {
                format!("{a}..{b}")
            });
        }
    };
    for x in xs {
        match (x, run) {
            (Datum::Int(i), Some((a, b))) if b.checked_add(1) == Some(*i) => run = Some((a, *i)),
            (Datum::Int(i), _) => {
                flush(&mut run, &mut parts);
                run = Some((*i, *i));
            }
            (other, _) => {
                flush(&mut run, &mut parts);
                parts.push(other.to_string());
            }
        }
    }
    flush(&mut run, &mut parts);
    format!("#{{{}}}", parts.join(" "))
}

/// The elements of a collection value (vector, list or set), or an input
/// error naming what was expected.
pub fn elements<'a>(ops: &Ops, op: &'a Op, what: &str) -> Result<&'a [Datum], ReadError> {
    match &op.value {
        Datum::Vector(xs) | Datum::List(xs) | Datum::Set(xs) => Ok(xs),
        other => Err(ops.error(
            op,
            format!(
                "expected {what} to be a collection of elements, got {}",
                short(other)
            ),
        )),
    }
}

/// One of the models of this folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// [`bank`].
    Bank,
    /// [`counter`].
    Counter,
    /// [`set`].
    Set,
    /// [`set_full`].
    SetFull,
    /// [`long_fork`].
    LongFork,
    /// [`linearizable`] with [`linearizable::Object::CasRegister`].
    CasRegister,
    /// [`linearizable`] with [`linearizable::Object::Mutex`].
    Mutex,
    /// [`comments`].
    Comments,
    /// [`sequential`].
    Sequential,
}

/// The options of every model (each reads its own).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// For [`Model::Bank`].
    pub bank: bank::BankOptions,
    /// For [`Model::LongFork`]: keys per group read (0: any).
    pub group_size: usize,
    /// For [`Model::CasRegister`] and [`Model::Mutex`].
    pub linearizable: linearizable::LinOptions,
}

/// A model's result.
#[derive(Debug)]
pub enum Checked {
    /// [`bank::check`]'s.
    Bank(bank::BankResult),
    /// [`counter::check`]'s.
    Counter(counter::CounterResult),
    /// [`set::check`]'s.
    Set(set::SetResult),
    /// [`set_full::check`]'s.
    SetFull(set_full::SetFullResult),
    /// [`long_fork::check`]'s.
    LongFork(long_fork::LongForkResult),
    /// [`linearizable::check`]'s.
    Linearizable(linearizable::LinResult),
    /// [`linearizable::keys::check_keys`]'s: a history of independent keys.
    LinearizableKeys(linearizable::keys::KeyedResult),
    /// [`comments::check`]'s.
    Comments(comments::CommentsResult),
    /// [`sequential::check`]'s.
    Sequential(sequential::SequentialResult),
}

/// Checks `ops` against `model`; `Err` for ops that do not fit the model.
pub fn check(model: Model, ops: &Ops, options: &Options) -> Result<Checked, ReadError> {
    Ok(match model {
        Model::Bank => Checked::Bank(bank::check(ops, &options.bank)?),
        Model::Counter => Checked::Counter(counter::check(ops)?),
        Model::Set => Checked::Set(set::check(ops)?),
        Model::SetFull => Checked::SetFull(set_full::check(ops)?),
        Model::LongFork => Checked::LongFork(long_fork::check(ops, options.group_size)),
        Model::CasRegister => linearizable_check(
            ops,
            linearizable::Object::CasRegister,
            &options.linearizable,
        )?,
        Model::Mutex => {
            linearizable_check(ops, linearizable::Object::Mutex, &options.linearizable)?
        }
        Model::Comments => Checked::Comments(comments::check(ops)?),
        Model::Sequential => Checked::Sequential(sequential::check(ops)?),
    })
}

/// A single object, or each key of a history of independent keys.
fn linearizable_check(
    ops: &Ops,
    object: linearizable::Object,
    options: &linearizable::LinOptions,
) -> Result<Checked, ReadError> {
    Ok(match linearizable::keys::split(ops, object) {
        Some(keys) => {
            Checked::LinearizableKeys(linearizable::keys::check_keys(keys, object, options)?)
        }
        None => Checked::Linearizable(linearizable::check(ops, object, options)?),
    })
}

impl Checked {
    /// The verdict.
    pub fn valid(&self) -> Validity {
        match self {
            Checked::Bank(r) => r.valid(),
            Checked::Counter(r) => r.valid(),
            Checked::Set(r) => r.valid(),
            Checked::SetFull(r) => r.valid(),
            Checked::LongFork(r) => r.valid(),
            Checked::Linearizable(r) => r.valid(),
            Checked::LinearizableKeys(r) => r.valid(),
            Checked::Comments(r) => r.valid(),
            Checked::Sequential(r) => r.valid(),
        }
    }

    /// Jepsen's result map.
    pub fn to_json(&self, ops: &Ops) -> Value {
        match self {
            Checked::Bank(r) => r.to_json(ops),
            Checked::Counter(r) => r.to_json(),
            Checked::Set(r) => r.to_json(),
            Checked::SetFull(r) => r.to_json(ops),
            Checked::LongFork(r) => r.to_json(ops),
            Checked::Linearizable(r) => r.to_json(ops),
            Checked::LinearizableKeys(r) => r.to_json(),
            Checked::Comments(r) => r.to_json(ops),
            Checked::Sequential(r) => r.to_json(ops),
        }
    }

    /// The readable report.
    pub fn explain(&self, ops: &Ops) -> String {
        match self {
            Checked::Bank(r) => r.explain(ops),
            Checked::Counter(r) => r.explain(ops),
            Checked::Set(r) => r.explain(ops),
            Checked::SetFull(r) => r.explain(ops),
            Checked::LongFork(r) => r.explain(ops),
            Checked::Linearizable(r) => r.explain(ops),
            Checked::LinearizableKeys(r) => r.explain(),
            Checked::Comments(r) => r.explain(ops),
            Checked::Sequential(r) => r.explain(ops),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Ops from EDN text (a test helper for every model).
    pub(crate) fn ops(text: &str) -> Ops {
        read_ops(std::io::Cursor::new(text.to_string()), "t.edn", None).expect("readable")
    }

    #[test]
    fn reads_op_fields_and_skips_the_nemesis() {
        let o = ops("{:type :invoke, :f :add, :value 3, :process 1, :time 5, :index 7}\n{:type :info, :f :start, :process :nemesis}\n{:type :ok, :f :add, :value 3, :process 1}");
        assert_eq!(o.ops.len(), 2);
        assert_eq!(o.ops[0].index, 7);
        assert_eq!(o.ops[0].f, F::Add);
        assert_eq!(o.ops[0].value, Datum::Int(3));
        assert_eq!(o.ops[1].index, 2, "position when no :index");
        assert_eq!(o.partners(), vec![Some(1), Some(0)]);
    }

    #[test]
    fn bad_ops_are_input_errors_with_positions() {
        let e = read_ops(
            std::io::Cursor::new("{:type :ok}\n{:type :done, :f :add}".to_string()),
            "t.edn",
            None,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "t.edn:2:8: expected :type to be invoke, ok, fail or info, got :done"
        );
        let e = read_ops(std::io::Cursor::new("{:f :add}".to_string()), "t.edn", None)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.edn:1:1: expected a :type"), "{e}");
    }

    #[test]
    fn json_ops_read_like_edn() {
        let o = read_ops(
            std::io::Cursor::new(
                r#"[{"type":"ok","f":"read","value":{"0":1},"process":0}]"#.to_string(),
            ),
            "t.json",
            None,
        )
        .unwrap();
        assert_eq!(o.ops[0].f, F::Read);
        assert_eq!(
            o.ops[0].value,
            Datum::Map(vec![(Datum::Str("0".into()), Datum::Int(1))])
        );
    }

    #[test]
    fn interval_sets_join_runs() {
        let xs = [1, 2, 3, 5, 7, 8].map(Datum::Int);
        let refs: Vec<&Datum> = xs.iter().collect();
        assert_eq!(interval_set_str(&refs), "#{1..3 5 7..8}");
        assert_eq!(interval_set_str(&[]), "#{}");
    }
}
