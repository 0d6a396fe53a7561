//! What every reader emits: one history operation, decoded but not yet
//! paired or interned. [`super::builder::HistoryBuilder`] turns a stream of
//! these into a [`super::History`].

use super::{Datum, MopKind, Outcome};

/// The `:type` of a Jepsen operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpType {
    /// The client asked.
    Invoke,
    /// Completed: committed.
    Ok,
    /// Completed: certainly not committed.
    Fail,
    /// Completed or not: unknown.
    Info,
}

impl OpType {
    /// Parses a `:type` name (keyword name in EDN, string in JSON).
    pub fn from_name(name: &str) -> Option<OpType> {
        Some(match name {
            "invoke" => OpType::Invoke,
            "ok" => OpType::Ok,
            "fail" => OpType::Fail,
            "info" => OpType::Info,
            _ => return None,
        })
    }

    /// The name as written in histories.
    pub fn name(self) -> &'static str {
        match self {
            OpType::Invoke => "invoke",
            OpType::Ok => "ok",
            OpType::Fail => "fail",
            OpType::Info => "info",
        }
    }

    /// The outcome a completion of this type reports (`None` for `:invoke`).
    pub fn outcome(self) -> Option<Outcome> {
        match self {
            OpType::Invoke => None,
            OpType::Ok => Some(Outcome::Ok),
            OpType::Fail => Some(Outcome::Fail),
            OpType::Info => Some(Outcome::Info),
        }
    }
}

/// The value part of a micro-op, before interning.
#[derive(Clone, Debug, PartialEq)]
pub enum RawValue {
    /// `nil`, or a 2-element read `[:r k]`.
    Nil,
    /// A list read (a vector or list of values) with some non-integer
    /// element.
    List(Vec<Datum>),
    /// A list read whose elements are all integers: the common case, kept
    /// compact. Readers always use this form when it applies.
    Ints(Vec<i64>),
    /// Any other single value (an appended or written value, a register read).
    Scalar(Datum),
}

/// One micro-op, e.g. `[:append :x 1]`.
#[derive(Clone, Debug, PartialEq)]
pub struct RawMop {
    /// Append, write or read.
    pub kind: MopKind,
    /// The key as written.
    pub key: Datum,
    /// The value or what was read.
    pub value: RawValue,
}

/// One Jepsen operation as written in the history.
#[derive(Clone, Debug, PartialEq)]
pub struct RawOp {
    /// `:index`, when the op has one.
    pub index: Option<i64>,
    /// `:time` as written (`None` when absent; `-1` is kept here and means
    /// "unknown" to the builder, as in Jepsen).
    pub time: Option<i64>,
    /// `:type`.
    pub kind: OpType,
    /// `:process` (`Nil` when absent). Only integer processes are clients.
    pub process: Datum,
    /// `:f` (`Nil` when absent).
    pub f: Datum,
    /// `:value` as micro-ops; `None` for `nil`/absent, and always `None` for
    /// non-client ops, whose values are free-form and never looked at.
    pub value: Option<Vec<RawMop>>,
    /// 1-based line and byte column where the op starts.
    pub line: u32,
    /// 1-based byte column where the op starts.
    pub col: u32,
}

impl RawOp {
    /// Jepsen's `client-op?`: does the op come from a client (integer process)?
    pub fn is_client(&self) -> bool {
        matches!(self.process, Datum::Int(_) | Datum::BigInt(_))
    }
}

/// A micro-op's value as the builder reads it, borrowed from a [`RawMop`]
/// or from an [`OpBatch`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum ValueRef<'a> {
    /// `nil`, or a 2-element read.
    Nil,
    /// A list read of integers.
    Ints(&'a [i64]),
    /// A list read with some non-integer element.
    List(&'a [Datum]),
    /// Any other single value.
    Scalar(&'a Datum),
}

/// A micro-op as the builder reads it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MopRef<'a> {
    pub kind: MopKind,
    pub key: &'a Datum,
    pub value: ValueRef<'a>,
}

impl RawMop {
    pub(crate) fn view(&self) -> MopRef<'_> {
        MopRef {
            kind: self.kind,
            key: &self.key,
            value: match &self.value {
                RawValue::Nil => ValueRef::Nil,
                RawValue::Ints(xs) => ValueRef::Ints(xs),
                RawValue::List(xs) => ValueRef::List(xs),
                RawValue::Scalar(d) => ValueRef::Scalar(d),
            },
        }
    }
}

impl MopRef<'_> {
    pub(crate) fn to_owned(self) -> RawMop {
        RawMop {
            kind: self.kind,
            key: self.key.clone(),
            value: match self.value {
                ValueRef::Nil => RawValue::Nil,
                ValueRef::Ints(xs) => RawValue::Ints(xs.to_vec()),
                ValueRef::List(xs) => RawValue::List(xs.to_vec()),
                ValueRef::Scalar(d) => RawValue::Scalar(d.clone()),
            },
        }
    }
}

/// Ops decoded into a few shared arrays, so that decoding allocates
/// nothing per op once the arrays have grown (a batch is cleared and
/// refilled): what readers hand the builder in bulk. The same fields as
/// [`RawOp`].
#[derive(Debug, Default)]
pub(crate) struct OpBatch {
    pub ops: Vec<BatchOp>,
    mops: Vec<BatchMop>,
    ints: Vec<i64>,
    /// The distinct `:f` values of the batch (nearly always just `:txn`).
    fs: Vec<Datum>,
}

/// One op of an [`OpBatch`].
#[derive(Debug)]
pub(crate) struct BatchOp {
    pub index: Option<i64>,
    pub time: Option<i64>,
    pub kind: OpType,
    pub process: Datum,
    /// Position in the batch's `:f` values.
    pub f: u32,
    /// Range of the batch's micro-ops; `None` as [`RawOp::value`].
    mops: Option<(u32, u32)>,
    pub line: u32,
    pub col: u32,
}

#[derive(Debug)]
struct BatchMop {
    kind: MopKind,
    key: Datum,
    value: BatchValue,
}

#[derive(Debug)]
enum BatchValue {
    Nil,
    /// A range of the batch's integers.
    Ints(u32, u32),
    List(Vec<Datum>),
    Scalar(Datum),
}

/// How far a batch had grown: [`OpBatch::truncate`] goes back to it.
#[derive(Clone, Copy)]
pub(crate) struct Mark(usize, usize, usize);

impl OpBatch {
    pub(crate) fn clear(&mut self) {
        self.ops.clear();
        self.mops.clear();
        self.ints.clear();
    }

    pub(crate) fn len(&self) -> usize {
        self.ops.len()
    }

    pub(crate) fn mark(&self) -> Mark {
        Mark(self.ops.len(), self.mops.len(), self.ints.len())
    }

    /// Drops what was added since `m`.
    pub(crate) fn truncate(&mut self, m: Mark) {
        self.ops.truncate(m.0);
        self.mops.truncate(m.1);
        self.ints.truncate(m.2);
    }

    /// The id of `:f` value `f` in this batch.
    fn f_id(&mut self, f: &Datum) -> u32 {
        match self.fs.iter().position(|g| g == f) {
            Some(i) => i as u32,
            None => {
                self.fs.push(f.clone());
                (self.fs.len() - 1) as u32
            }
        }
    }

    /// The id of the keyword `name` as an `:f` (in JSON the string, which
    /// readers turn into a keyword as elle-cli does).
    pub(crate) fn f_keyword(&mut self, name: &[u8]) -> u32 {
        let found = self
            .fs
            .iter()
            .position(|g| matches!(g, Datum::Keyword(k) if k.as_bytes() == name));
        match found {
            Some(i) => i as u32,
            None => {
                // Names are ASCII (the fast path checks).
                self.fs
                    .push(Datum::Keyword(String::from_utf8_lossy(name).into_owned()));
                (self.fs.len() - 1) as u32
            }
        }
    }

    /// The id of `nil` as an `:f`.
    pub(crate) fn f_nil(&mut self) -> u32 {
        self.f_id(&Datum::Nil)
    }

    /// Starts an op; its micro-ops follow with [`OpBatch::add_mop`] and
    /// friends, and [`OpBatch::end_op`] closes it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn begin_op(
        &mut self,
        index: Option<i64>,
        time: Option<i64>,
        kind: OpType,
        process: Datum,
        f: u32,
        has_mops: bool,
        line: u32,
        col: u32,
    ) {
        let start = self.mops.len() as u32;
        self.ops.push(BatchOp {
            index,
            time,
            kind,
            process,
            f,
            mops: has_mops.then_some((start, 0)),
            line,
            col,
        });
    }

    /// Sets whether the last op has micro-ops (`nil` or absent `:value`:
    /// it has none).
    pub(crate) fn set_has_mops(&mut self, has: bool) {
        let start = self.mops.len() as u32;
        if let Some(op) = self.ops.last_mut() {
            op.mops = has.then_some((start, 0));
        }
    }

    /// Adds a micro-op with a nil, integer or datum value to the last op.
    pub(crate) fn add_mop(&mut self, kind: MopKind, key: Datum, value: Option<Datum>) {
        let value = match value {
            None => BatchValue::Nil,
            Some(d) => BatchValue::Scalar(d),
        };
        self.push_mop(BatchMop { kind, key, value });
    }

    /// Starts a list read of integers in the last op; the elements follow
    /// with [`OpBatch::add_int`].
    pub(crate) fn add_ints_read(&mut self, key: Datum) {
        let start = self.ints.len() as u32;
        self.push_mop(BatchMop {
            kind: MopKind::Read,
            key,
            value: BatchValue::Ints(start, 0),
        });
    }

    /// Adds an element to the list read just started.
    pub(crate) fn add_int(&mut self, x: i64) {
        self.ints.push(x);
        if let Some(BatchMop {
            value: BatchValue::Ints(_, len),
            ..
        }) = self.mops.last_mut()
        {
            *len += 1;
        }
    }

    fn push_mop(&mut self, m: BatchMop) {
        self.mops.push(m);
        if let Some(BatchOp {
            mops: Some((_, len)),
            ..
        }) = self.ops.last_mut()
        {
            *len += 1;
        }
    }

    /// Appends a decoded op.
    pub(crate) fn push_raw(&mut self, op: RawOp) {
        let f = self.f_id(&op.f);
        self.begin_op(
            op.index,
            op.time,
            op.kind,
            op.process,
            f,
            op.value.is_some(),
            op.line,
            op.col,
        );
        for m in op.value.into_iter().flatten() {
            let value = match m.value {
                RawValue::Nil => BatchValue::Nil,
                RawValue::Ints(xs) => {
                    let start = self.ints.len() as u32;
                    self.ints.extend_from_slice(&xs);
                    BatchValue::Ints(start, xs.len() as u32)
                }
                RawValue::List(xs) => BatchValue::List(xs),
                RawValue::Scalar(d) => BatchValue::Scalar(d),
            };
            self.push_mop(BatchMop {
                kind: m.kind,
                key: m.key,
                value,
            });
        }
    }

    /// The `:f` of op `i`.
    pub(crate) fn f(&self, i: usize) -> &Datum {
        &self.fs[self.ops[i].f as usize]
    }

    /// The micro-ops of op `i` (`None`: `nil` or no `:value`).
    pub(crate) fn mops(
        &self,
        i: usize,
    ) -> Option<impl ExactSizeIterator<Item = MopRef<'_>> + Clone> {
        let (start, len) = self.ops[i].mops?;
        Some(
            self.mops[start as usize..(start + len) as usize]
                .iter()
                .map(|m| MopRef {
                    kind: m.kind,
                    key: &m.key,
                    value: match &m.value {
                        BatchValue::Nil => ValueRef::Nil,
                        BatchValue::Ints(s, l) => {
                            ValueRef::Ints(&self.ints[*s as usize..(*s + *l) as usize])
                        }
                        BatchValue::List(xs) => ValueRef::List(xs),
                        BatchValue::Scalar(d) => ValueRef::Scalar(d),
                    },
                }),
        )
    }

    /// Op `i` as a [`RawOp`].
    pub(crate) fn raw(&self, i: usize) -> RawOp {
        let op = &self.ops[i];
        RawOp {
            index: op.index,
            time: op.time,
            kind: op.kind,
            process: op.process.clone(),
            f: self.f(i).clone(),
            value: self.mops(i).map(|ms| ms.map(MopRef::to_owned).collect()),
            line: op.line,
            col: op.col,
        }
    }
}

/// One already-paired transaction, as OneLite records them: invocation and
/// completion in a single line.
#[derive(Clone, Debug, PartialEq)]
pub struct RawTxn {
    /// The transaction's id in the OneLite file.
    pub id: i64,
    /// The client that ran it.
    pub process: i64,
    /// Invocation and completion times in nanoseconds; `t1` may be absent
    /// for an `info` transaction that never returned.
    pub t0: i64,
    /// Completion time, in nanoseconds.
    pub t1: Option<i64>,
    /// How it ended.
    pub outcome: Outcome,
    /// Its micro-ops, in order.
    pub mops: Vec<RawMop>,
    /// 1-based line where it starts.
    pub line: u32,
    /// 1-based byte column where it starts.
    pub col: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_types_round_trip_their_names_and_map_to_outcomes() {
        for t in [OpType::Invoke, OpType::Ok, OpType::Fail, OpType::Info] {
            assert_eq!(OpType::from_name(t.name()), Some(t));
        }
        assert_eq!(OpType::from_name("foo"), None);
        assert_eq!(OpType::Invoke.outcome(), None);
        assert_eq!(OpType::Fail.outcome(), Some(Outcome::Fail));
    }

    #[test]
    fn only_integer_processes_are_clients() {
        let mut op = RawOp {
            index: None,
            time: None,
            kind: OpType::Info,
            process: Datum::Keyword("nemesis".into()),
            f: Datum::Nil,
            value: None,
            line: 1,
            col: 1,
        };
        assert!(!op.is_client());
        op.process = Datum::Int(3);
        assert!(op.is_client());
        op.process = Datum::Nil;
        assert!(!op.is_client());
    }
}
