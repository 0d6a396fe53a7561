//! The history model shared by every stage: transactions with compact integer
//! ids, interned keys and values, micro-ops in one flat arena.
//!
//! Readers (`edn`, `json`, `onelite`, over the shared tokenizer `scan`) turn bytes into [`RawOp`](raw::RawOp)s; the
//! [`builder`] pairs invocations with completions and produces a [`History`].

pub mod builder;
pub mod datum;
pub mod edn;
pub mod error;
pub mod intern;
pub mod json;
pub mod onelite;
mod parallel;
pub mod print;
pub mod raw;
pub mod read;
pub(crate) mod scan;

pub use datum::Datum;
pub use intern::Interner;

/// Index of a transaction in [`History::txns`].
pub type TxnId = u32;
/// Interned key (see [`History::keys`]).
pub type KeyId = u32;
/// Interned value (see [`History::values`]).
pub type ValId = u32;

/// What the database said about a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Committed.
    Ok,
    /// Certainly not committed: its writes must never be seen.
    Fail,
    /// Unknown: it may or may not have committed; its reads are not trusted.
    Info,
}

impl Outcome {
    /// Jepsen's `:type` for the outcome: `ok`, `fail` or `info`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Fail => "fail",
            Outcome::Info => "info",
        }
    }
}

/// The function of a micro-op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MopKind {
    /// `[:append k v]`: list-append.
    Append,
    /// `[:w k v]`: register write.
    Write,
    /// `[:r k v]`: read (of a list or of a register).
    Read,
}

/// What a read returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Observed {
    /// `nil`: in an invocation, not known yet; in a completion, the key's
    /// initial state (no list / never written).
    Nil,
    /// A list: `len` values starting at `start` in [`History::elems`].
    List {
        /// First index in [`History::elems`].
        start: u32,
        /// Number of values.
        len: u32,
    },
    /// A single value (register read, or the value of an append/write).
    Scalar(ValId),
}

/// One micro-operation of a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mop {
    /// Append, write or read.
    pub kind: MopKind,
    /// The key, an id in [`History::keys`].
    pub key: KeyId,
    /// For appends and writes: `Scalar(v)` (or `Nil` for `[:w k nil]`).
    /// For reads: what was read.
    pub value: Observed,
}

/// A process: the client (integer) that ran a transaction. Non-integer
/// processes (`:nemesis`) never reach a [`History`]: Elle ignores them.
pub type Process = i64;

/// One transaction: an invocation paired with its completion (or an
/// invocation that never completed, or a completion that was never invoked).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Txn {
    /// Committed, aborted or unknown.
    pub outcome: Outcome,
    /// The client that ran it.
    pub process: Process,
    /// The `:index` of the completion op (or of the invocation if there is
    /// no completion). This is the number Elle uses to name the op.
    pub index: i64,
    /// The `:index` of the invocation, when there is one.
    pub invoke_index: Option<i64>,
    /// `:time` of invocation and completion, when known (-1 in Jepsen = unknown).
    pub invoke_time: Option<i64>,
    /// Completion `:time`, when known.
    pub complete_time: Option<i64>,
    /// Position of the invocation / completion in the history's event order
    /// (line order for Jepsen histories, time order for OneLite). Real-time
    /// order is `a.complete_seq < b.invoke_seq`. `None` when unknown.
    pub invoke_seq: Option<u64>,
    /// Position of the completion in the event order (see `invoke_seq`).
    pub complete_seq: Option<u64>,
    /// The micro-ops (from the completion, or the invocation when the
    /// completion carries none): a range of [`History::mops`].
    pub mops_start: u32,
    /// Number of micro-ops from `mops_start`.
    pub mops_len: u32,
    /// Line of the completion (or invocation) in the source, for messages.
    pub line: u32,
    /// `:f` of the op, when it was not `:txn` (kept for faithful printing).
    pub f: Option<ValId>,
}

/// A whole history, ready for inference.
#[derive(Clone, Debug, Default)]
pub struct History {
    /// Transactions in order of their completion op's position (Elle's order).
    pub txns: Vec<Txn>,
    /// All transactions' micro-ops, each transaction a contiguous range.
    pub mops: Vec<Mop>,
    /// Flat arena of the values of all list reads.
    pub elems: Vec<ValId>,
    /// Interned keys: [`Mop::key`] indexes this.
    pub keys: Interner,
    /// Interned values: appended, written and read values index this.
    pub values: Interner,
    /// True when at least one transaction has both an invocation and a
    /// completion, so that real-time order means something.
    pub has_invocations: bool,
    /// The first invocation by a process that still had one running, if
    /// any: not a well-formed Jepsen history (see [`DoubleInvoke`]).
    pub double_invoke: Option<DoubleInvoke>,
}

/// A process invoked an op while its previous invocation had not completed.
/// `jepsen.history` refuses to pair such a history (`::double-invoke`), so
/// Elle fails on it as soon as it needs invocations (real-time order); its
/// checkers that never pair ops accept it, and some of Elle's own tests
/// rely on that. Kept so the check can refuse it or say what it assumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DoubleInvoke {
    /// The process that invoked twice.
    pub process: Process,
    /// `:index` of the second invocation.
    pub index: i64,
    /// Line of the second invocation.
    pub line: u32,
    /// `:index` of the invocation still running.
    pub running_index: i64,
    /// Line of the invocation still running.
    pub running_line: u32,
}

impl History {
    /// The micro-ops of a transaction.
    pub fn mops(&self, t: TxnId) -> &[Mop] {
        let t = &self.txns[t as usize];
        &self.mops[t.mops_start as usize..(t.mops_start + t.mops_len) as usize]
    }

    /// The values of a list read.
    pub fn list(&self, o: Observed) -> Option<&[ValId]> {
        match o {
            Observed::List { start, len } => {
                Some(&self.elems[start as usize..(start + len) as usize])
            }
            _ => None,
        }
    }
}
