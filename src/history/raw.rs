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
