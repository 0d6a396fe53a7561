//! Non-cycle anomalies as typed records: what inference found (G1a, G1b,
//! internal, lost-update, ...), as transaction, micro-op, key and value
//! ids and nothing else. Inference builds them; [`crate::explain::anomaly`]
//! turns them into Elle-shaped JSON and text when they are printed, so
//! inference builds no JSON and a history with a million findings costs a
//! few words each until somebody reads them.
//!
//! This module sits below both inference (`workload`, the solver's front
//! door) and rendering (`explain`, `report`); it imports only `history` and
//! the names in `model`.

use crate::history::{KeyId, TxnId, ValId};
use crate::model::anomaly as name;
use crate::proof::Proof;

/// The kind of a non-cycle anomaly: every such finding's name comes from
/// here (cycle anomalies are named by [`crate::graph::CycleClass`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AnomalyKind {
    /// A committed read saw a failed transaction's write.
    G1a,
    /// A committed read saw a version its writer overwrote itself.
    G1b,
    /// A read contradicts the transaction's own earlier micro-ops.
    Internal,
    /// A read shows a value its own transaction writes only later.
    FutureRead,
    /// A committed write on top of a failed transaction's version.
    DirtyUpdate,
    /// Transactions read the same version of a key and each wrote it.
    LostUpdate,
    /// Reads of a key that no single order of appends explains.
    IncompatibleOrder,
    /// A read list holding one element twice.
    DuplicateElements,
    /// A committed read of a value nobody wrote.
    GarbageRead,
    /// A key whose versions cannot be ordered.
    CyclicVersions,
    /// A reason the duplicate-value solver found; not one of Elle's types
    /// (the front door files it under its level's name).
    Solver,
    /// The solver's: no order of the appends makes some read's list.
    DuplicateAppendsUnproducibleRead,
    /// The solver's: no choice of appends read is serializable.
    DuplicateAppendsUnserializable,
    /// The solver's: no choice of appends read is snapshot isolated.
    DuplicateAppendsNotSnapshotIsolated,
    /// The solver's, on unique values: no order of the appends no read
    /// shows is serializable.
    UnreadAppendsUnserializable,
    /// The solver's, on unique values: no order of the appends no read
    /// shows is snapshot isolated.
    UnreadAppendsNotSnapshotIsolated,
    /// The register solver's: no version order is serializable.
    RegisterUnserializable,
    /// The register solver's: no version order is snapshot isolated.
    RegisterNotSnapshotIsolated,
    /// The register solver's, on repeated values: no choice of what the
    /// reads saw is read committed.
    RegisterNotReadCommitted,
}

impl AnomalyKind {
    /// Elle's name for the kind (empty for [`AnomalyKind::Solver`], whose
    /// findings are filed under the level they break).
    pub fn name(self) -> &'static str {
        match self {
            AnomalyKind::G1a => name::G1A,
            AnomalyKind::G1b => name::G1B,
            AnomalyKind::Internal => name::INTERNAL,
            AnomalyKind::FutureRead => name::FUTURE_READ,
            AnomalyKind::DirtyUpdate => name::DIRTY_UPDATE,
            AnomalyKind::LostUpdate => name::LOST_UPDATE,
            AnomalyKind::IncompatibleOrder => name::INCOMPATIBLE_ORDER,
            AnomalyKind::DuplicateElements => name::DUPLICATE_ELEMENTS,
            AnomalyKind::GarbageRead => name::GARBAGE_READ,
            AnomalyKind::CyclicVersions => name::CYCLIC_VERSIONS,
            AnomalyKind::Solver => "",
            AnomalyKind::DuplicateAppendsUnproducibleRead => {
                name::DUPLICATE_APPENDS_UNPRODUCIBLE_READ
            }
            AnomalyKind::DuplicateAppendsUnserializable => name::DUPLICATE_APPENDS_UNSERIALIZABLE,
            AnomalyKind::DuplicateAppendsNotSnapshotIsolated => {
                name::DUPLICATE_APPENDS_NOT_SNAPSHOT_ISOLATED
            }
            AnomalyKind::UnreadAppendsUnserializable => name::UNREAD_APPENDS_UNSERIALIZABLE,
            AnomalyKind::UnreadAppendsNotSnapshotIsolated => {
                name::UNREAD_APPENDS_NOT_SNAPSHOT_ISOLATED
            }
            AnomalyKind::RegisterUnserializable => name::REGISTER_UNSERIALIZABLE,
            AnomalyKind::RegisterNotSnapshotIsolated => name::REGISTER_NOT_SNAPSHOT_ISOLATED,
            AnomalyKind::RegisterNotReadCommitted => name::REGISTER_NOT_READ_COMMITTED,
        }
    }
}

impl std::fmt::Display for AnomalyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A register version: a value id, or [`NIL`] for the initial `nil`.
pub type Ver = u32;
/// The version of a key nobody wrote yet (reads `nil`).
pub const NIL: Ver = u32::MAX;

/// What a non-cycle anomaly is about. `mop` fields are indices into
/// `History::mops` (the read that shows the anomaly); `reader` is the
/// transaction holding it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    // ------------------------------------------------------- list-append
    /// G1a: the read saw `element`, appended by the failed `writer`.
    AbortedAppend {
        /// The committed transaction that read.
        reader: TxnId,
        /// Its read.
        mop: u32,
        /// The failed transaction that appended `element`.
        writer: TxnId,
        /// The element read.
        element: ValId,
    },
    /// Garbage read: the read saw `element`, which nobody appended.
    UnwrittenElement {
        /// The committed transaction that read.
        reader: TxnId,
        /// Its read.
        mop: u32,
        /// The element nobody appended.
        element: ValId,
    },
    /// G1b: the read ends with `element`, which `writer` followed with
    /// another append to the key.
    IntermediateAppend {
        /// The committed transaction that read.
        reader: TxnId,
        /// Its read.
        mop: u32,
        /// The transaction that appended again after `element`.
        writer: TxnId,
        /// The last element of the read.
        element: ValId,
    },
    /// Dirty update: `committed` appended to `key` on top of a state the
    /// failed `failed` wrote (`values`: that state on).
    DirtyAppend {
        /// The key.
        key: KeyId,
        /// The values from the failed transaction's state on.
        values: Box<[ValId]>,
        /// The failed transaction.
        failed: TxnId,
        /// The committed one that built on it.
        committed: TxnId,
    },
    /// Lost update: `txns` read the same state `read` of `key` (`None`:
    /// nothing read yet) and each appended to it.
    LostAppends {
        /// The key.
        key: KeyId,
        /// The state they all read.
        read: Option<Box<[ValId]>>,
        /// The transactions, at least two.
        txns: Box<[TxnId]>,
    },
    /// Internal: the read disagrees with what the transaction's own earlier
    /// reads and appends say the list holds: `expected`, or (`tail`) a list
    /// ending with it.
    InternalList {
        /// The transaction.
        reader: TxnId,
        /// The read that disagrees.
        mop: u32,
        /// What its own micro-ops imply.
        expected: Box<[ValId]>,
        /// Only the end of the list is known.
        tail: bool,
    },
    /// Future read: the read already holds `element`, which the same
    /// transaction appends only later.
    FutureAppend {
        /// The transaction.
        reader: TxnId,
        /// The read.
        mop: u32,
        /// The element it appends later.
        element: ValId,
    },
    /// Duplicate elements: the read holds these elements this many times.
    DuplicateElements {
        /// The transaction.
        reader: TxnId,
        /// The read.
        mop: u32,
        /// Each repeated element and its count, in the order of the
        /// elements' data.
        duplicates: Box<[(ValId, u32)]>,
    },
    /// Incompatible order: two reads of `key` neither of which is a prefix
    /// of the other.
    IncompatibleOrder {
        /// The key.
        key: KeyId,
        /// One read.
        a: Box<[ValId]>,
        /// The other.
        b: Box<[ValId]>,
    },
    // ----------------------------------------------------------- register
    /// Internal: the read disagrees with the transaction's own earlier read
    /// or write of the key, which says it holds `expected`.
    InternalRegister {
        /// The transaction.
        reader: TxnId,
        /// The read.
        mop: u32,
        /// What the key holds by its own micro-ops.
        expected: Ver,
    },
    /// Garbage read: nobody wrote the value the read returned.
    UnwrittenValue {
        /// The committed transaction that read.
        reader: TxnId,
        /// Its read.
        mop: u32,
    },
    /// G1a: the value read was written only by the failed `writer`.
    AbortedWrite {
        /// The committed transaction that read.
        reader: TxnId,
        /// Its read.
        mop: u32,
        /// The failed writer.
        writer: TxnId,
    },
    /// G1b: the value read was overwritten by its own `writer` with `next`.
    IntermediateWrite {
        /// The committed transaction that read.
        reader: TxnId,
        /// Its read.
        mop: u32,
        /// The transaction that wrote the value and then `next`.
        writer: TxnId,
        /// What the writer wrote next.
        next: Ver,
    },
    /// Lost update: `txns` read `value` of `key` and each wrote the key.
    LostWrites {
        /// The key.
        key: KeyId,
        /// The version they all read.
        value: Ver,
        /// The transactions, at least two.
        txns: Box<[TxnId]>,
    },
    /// Future read: the read returned a value the transaction writes later.
    FutureWrite {
        /// The transaction.
        reader: TxnId,
        /// The read.
        mop: u32,
    },
    /// Dirty update: `committed` read `read` of `key`, written by the failed
    /// `failed`, and wrote `wrote` over it.
    DirtyWrite {
        /// The key.
        key: KeyId,
        /// The failed transaction's version.
        read: Ver,
        /// The committed transaction's version over it.
        wrote: Ver,
        /// The failed transaction.
        failed: TxnId,
        /// The committed one.
        committed: TxnId,
    },
    /// Cyclic versions: assuming `sources`, the versions of `key` in `scc`
    /// cannot be ordered; `cycle` is one way around.
    CyclicVersions {
        /// The key.
        key: KeyId,
        /// The versions caught in the cycle (Elle's `:scc`).
        scc: Box<[Ver]>,
        /// The cycle, first version repeated at the end.
        cycle: Box<[Ver]>,
        /// The names of the version-order sources assumed.
        sources: Box<[&'static str]>,
    },
    // ------------------------------------------------------------- solver
    /// A reason the duplicate-value solver found against `level`: the
    /// transactions and keys whose constraints conflict, and its proof.
    Solver {
        /// Elle's name of the level.
        level: &'static str,
        /// The transactions involved.
        txns: Box<[TxnId]>,
        /// The keys involved.
        keys: Box<[KeyId]>,
        /// The solver's proof.
        proof: Proof,
    },
}

/// A non-cycle anomaly: its kind and what it is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anomaly {
    /// Which anomaly.
    pub kind: AnomalyKind,
    /// The ids it is about.
    pub record: Record,
}

impl Anomaly {
    /// An anomaly of `kind` about `record`.
    pub fn new(kind: AnomalyKind, record: Record) -> Self {
        Anomaly { kind, record }
    }

    /// The transactions the anomaly names, in the order they are drawn:
    /// the writer before the reader (G1a, G1b), else the reader, or the
    /// group (its first and last for a dirty update).
    pub fn txns(&self) -> Vec<TxnId> {
        self.involved().into_iter().map(|i| i.txn).collect()
    }

    /// Who the anomaly names and which of their micro-ops show it, in the
    /// order they are drawn (see [`Anomaly::txns`]).
    pub fn involved(&self) -> Vec<Involved> {
        use Record::*;
        let one = |role, txn, mops: Vec<Marked>| Involved { role, txn, mops };
        let group = |ts: &[TxnId]| {
            ts.iter()
                .map(|&t| one(Role::Txn, t, Vec::new()))
                .collect::<Vec<_>>()
        };
        let reader = |t, mop| one(Role::Reader, t, vec![Marked::Mop(mop)]);
        let writer = |w, mop, element| {
            one(
                Role::Writer,
                w,
                vec![Marked::WriteOf { read: mop, element }],
            )
        };
        let mut out = match &self.record {
            AbortedAppend {
                reader: r,
                mop,
                writer: w,
                element,
            }
            | IntermediateAppend {
                reader: r,
                mop,
                writer: w,
                element,
            } => vec![writer(*w, *mop, Some(*element)), reader(*r, *mop)],
            AbortedWrite {
                reader: r,
                mop,
                writer: w,
            }
            | IntermediateWrite {
                reader: r,
                mop,
                writer: w,
                ..
            } => vec![writer(*w, *mop, None), reader(*r, *mop)],
            UnwrittenElement { reader: r, mop, .. }
            | InternalList { reader: r, mop, .. }
            | FutureAppend { reader: r, mop, .. }
            | DuplicateElements { reader: r, mop, .. }
            | InternalRegister { reader: r, mop, .. }
            | UnwrittenValue { reader: r, mop }
            | FutureWrite { reader: r, mop } => vec![reader(*r, *mop)],
            DirtyAppend {
                failed, committed, ..
            }
            | DirtyWrite {
                failed, committed, ..
            } => group(&[*failed, *committed]),
            LostAppends { txns, .. } | LostWrites { txns, .. } | Solver { txns, .. } => group(txns),
            IncompatibleOrder { .. } | CyclicVersions { .. } => Vec::new(),
        };
        // One box per transaction: a transaction that read its own write
        // is drawn once, as the writer.
        let mut seen: Vec<TxnId> = Vec::new();
        out.retain(|i| {
            let new = !seen.contains(&i.txn);
            seen.push(i.txn);
            new
        });
        out
    }
}

/// A transaction's part in an anomaly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Wrote what the reader saw.
    Writer,
    /// Read and shows the anomaly.
    Reader,
    /// One of a group (lost update, dirty update, a solver's reason).
    Txn,
}

/// Micro-ops of an involved transaction to mark in a picture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marked {
    /// This micro-op (an index into `History::mops`).
    Mop(u32),
    /// The writes of the value the read `read` saw: of `element` when
    /// given (a list element), else of the value the read returned.
    WriteOf {
        /// The read (an index into `History::mops`).
        read: u32,
        /// The list element seen, for list appends.
        element: Option<ValId>,
    },
}

/// One transaction an anomaly names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Involved {
    /// Its part.
    pub role: Role,
    /// The transaction.
    pub txn: TxnId,
    /// What to mark in it.
    pub mops: Vec<Marked>,
}
