//! Proofs: why the exact solvers decided as they did, as typed records of
//! transaction, key and value ids. The solvers (`solver`, its `register`
//! part) build them while they decide; the render layer
//! (`explain::proof`) words them, from the history and these records
//! alone. It sits below both, so neither imports the other, and it holds
//! no text and no JSON.
//!
//! A [`Proof`] backs a finding (a level fails: a contradiction in the
//! reads, or a cycle no choice avoids); a [`Reason`] says in one line why a
//! verdict is valid, invalid or unknown, and may point at the finding's
//! proof. Equal proofs are worded alike, so findings are told apart (and
//! deduplicated) by their proofs.

use crate::graph::Rels;
use crate::history::{KeyId, TxnId, ValId};

/// An isolation level the exact solvers decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// No G0 (read uncommitted, Adya's PL-1, as far as list-append shows
    /// it): on the choice of writers (a failed or uncommitted append may
    /// produce a read element, a read may end inside a block), the ww
    /// edges among committed transactions are acyclic. Its witness is a
    /// commit order (replayed by the solver's `witness::check_uncommitted`).
    ReadUncommitted,
    /// No G0 and no G1c: as [`Level::ReadUncommitted`], with ww ∪ wr
    /// acyclic (a read of the reader's own later append, a future read, is
    /// a wr self-loop). Not a model of the lattice: what `-a G1c` asks.
    NoG1c,
    /// Read committed (Adya's PL-2) on the choice of writers: reads see
    /// whole blocks of committed transactions and ww ∪ wr is acyclic. Its
    /// witness is a commit order (replayed by the solver's
    /// `witness::check_read_committed`).
    ReadCommitted,
    /// Consistent view: Adya's PL-2+ (A. Adya, "Weak Consistency: A
    /// Generalized Theory and Optimistic Implementations for Distributed
    /// Transactions", PhD thesis, MIT, 1999, the section defining PL-2+):
    /// no G1, and no G-single (a cycle of the dependency
    /// graph with exactly one anti-dependency edge; on list-append,
    /// G-single-item). On the choice of writers: ww ∪ wr is acyclic and no
    /// anti-dependency `a → b` has `b` reaching `a` by ww ∪ wr edges. Its
    /// witness is a commit order (replayed by the solver's
    /// `witness::check_consistent_view`).
    ConsistentView,
    /// Serializable: some serial order explains every read.
    Serializable,
    /// Serializable, in an order that respects real time.
    StrictSerializable,
    /// Snapshot isolation.
    SnapshotIsolation,
}

impl Level {
    /// Elle's name for the level.
    pub fn name(self) -> &'static str {
        match self {
            Level::ReadUncommitted => "read-uncommitted",
            Level::NoG1c => "no-G1c",
            Level::ReadCommitted => "read-committed",
            Level::ConsistentView => "consistent-view",
            Level::Serializable => "serializable",
            Level::StrictSerializable => "strict-serializable",
            Level::SnapshotIsolation => "snapshot-isolation",
        }
    }
    /// From Elle's name.
    pub fn from_name(s: &str) -> Option<Level> {
        Some(match s {
            "read-uncommitted" => Level::ReadUncommitted,
            "no-G1c" => Level::NoG1c,
            "read-committed" => Level::ReadCommitted,
            "consistent-view" => Level::ConsistentView,
            "serializable" => Level::Serializable,
            "strict-serializable" => Level::StrictSerializable,
            "snapshot-isolation" => Level::SnapshotIsolation,
            _ => return None,
        })
    }
    /// The levels of the serial family (a serial order or an SI execution
    /// is their witness), weakest to strongest: each implies the ones
    /// before it. [`Level::ReadCommitted`] and [`Level::ConsistentView`],
    /// below all of them (decided from read committed's facts), stand apart.
    pub const ALL: [Level; 3] = [
        Level::SnapshotIsolation,
        Level::Serializable,
        Level::StrictSerializable,
    ];
}

/// A list of values as read or appended (a read's external part, a
/// transaction's block of appends to one key).
pub type Values = Vec<ValId>;

/// Why a level cannot hold: what the history shows, or a cycle every
/// choice of writers (or of version order) closes. Lists are the values
/// as read; positions count elements from the start of a key's list.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Proof {
    // ------------------------------------------- list-append, from the reads
    /// `txn` appended `appended` to `key`, then read `read`, which does not
    /// end with its own appends (internal).
    OwnAppendsUnread {
        /// The transaction.
        txn: TxnId,
        /// The key.
        key: KeyId,
        /// Its appends to the key before the read.
        appended: Values,
        /// What it read.
        read: Values,
    },
    /// `txn` read `key` twice and saw two states of the other
    /// transactions' appends (internal).
    TwoStates {
        /// The transaction.
        txn: TxnId,
        /// The key.
        key: KeyId,
        /// The first state (its own appends left out).
        first: Values,
        /// The second one.
        second: Values,
    },
    /// Two reads of `key` neither of which is a prefix of the other: no
    /// single order of appends explains both (incompatible order).
    IncompatibleReads {
        /// The key.
        key: KeyId,
        /// One reader.
        txn: TxnId,
        /// What it read (its own appends left out).
        read: Values,
        /// The reader of the longest list.
        other: TxnId,
        /// The longest list.
        other_read: Values,
    },
    /// `txn` read `prefix` of `key`, then appended `block`, so its block
    /// comes right after that prefix; but `reader` read `read`, which
    /// continues differently.
    PinnedAppend {
        /// The key.
        key: KeyId,
        /// The transaction that read, then appended.
        txn: TxnId,
        /// What it read.
        prefix: Values,
        /// What it appended.
        block: Values,
        /// The reader of the longest list.
        reader: TxnId,
        /// The longest list.
        read: Values,
    },
    /// `reader` read `read` of `key`, but `value` was only appended by the
    /// `failed` transactions (G1a).
    FailedValue {
        /// The key.
        key: KeyId,
        /// The reader.
        reader: TxnId,
        /// What it read.
        read: Values,
        /// The value no transaction that may have committed appended.
        value: ValId,
        /// The failed transactions that appended it.
        failed: Vec<TxnId>,
    },
    /// `reader` read `read` of `key`, but no transaction that may have
    /// committed appended `value` to it.
    UnappendedValue {
        /// The key.
        key: KeyId,
        /// The reader.
        reader: TxnId,
        /// What it read.
        read: Values,
        /// The value nobody appended.
        value: ValId,
    },
    /// `reader` read `read` of `key`, holding `value` `read_times` times,
    /// more often than the whole history (every transaction, failed ones
    /// included) appended it: a garbage read (never appended) or duplicate
    /// elements.
    ReadMoreThanAppended {
        /// The key.
        key: KeyId,
        /// The reader.
        reader: TxnId,
        /// What it read.
        read: Values,
        /// The value.
        value: ValId,
        /// How often the read holds it.
        read_times: usize,
        /// How often the history appended it to the key.
        appended_times: usize,
    },
    /// `reader` read `read` of `key`, holding `value` more often than the
    /// transactions that may have committed appended it.
    TooFewAppends {
        /// The key.
        key: KeyId,
        /// The reader.
        reader: TxnId,
        /// What it read.
        read: Values,
        /// The value.
        value: ValId,
        /// How often the read holds it.
        read_times: usize,
        /// How often transactions that may have committed appended it.
        appended_times: usize,
        /// Failed transactions that appended it too (never visible).
        failed: Vec<TxnId>,
    },
    /// `reader` read `read` of `key`; its elements from position `from`
    /// on were appended after what `prior` read (the first `from`), and no
    /// sequence of whole blocks of `appends` spells them.
    Unspellable {
        /// The key.
        key: KeyId,
        /// The reader of the first `from` elements, when `from > 0`.
        prior: Option<TxnId>,
        /// The reader of `read`.
        reader: TxnId,
        /// What it read.
        read: Values,
        /// Where the elements no sequence of blocks spells start.
        from: u32,
        /// The transactions that appended any of those values, with their
        /// blocks.
        appends: Vec<(TxnId, Values)>,
    },
    // ------------------------------------------ list-append, from the search
    /// Positions `start..end` of what `reader` read must be whole blocks,
    /// but the `candidates` cannot fill them exactly once the other reads
    /// are accounted for.
    Unfillable {
        /// The key.
        key: KeyId,
        /// The shortest reader that saw position `end - 1`, if any.
        reader: Option<TxnId>,
        /// The key's list up to `end`.
        read: Values,
        /// First position.
        start: u32,
        /// Position after the last.
        end: u32,
        /// The transactions whose blocks could go there, with the blocks.
        candidates: Vec<(TxnId, Values)>,
    },
    /// `txn`'s block of appends to `key` fits nowhere in `list` (read by
    /// `reader`): every place is taken or contradicts a read.
    Homeless {
        /// The key.
        key: KeyId,
        /// The transaction.
        txn: TxnId,
        /// Its block.
        block: Values,
        /// The longest read of the key.
        list: Values,
        /// Who read it.
        reader: Option<TxnId>,
    },
    /// No way to spell `list` of `key` from whole blocks.
    NoSpelling {
        /// The key.
        key: KeyId,
        /// The longest read of the key.
        list: Values,
    },
    /// The reads of `key` (the longest: `list`) cannot be produced by whole
    /// blocks.
    UnproducibleReads {
        /// The key.
        key: KeyId,
        /// The longest read of the key.
        list: Values,
    },
    /// A cycle of the solver's graph that passes no transaction (a solver
    /// bug, never a verdict about the history).
    BarrierCycle,
    /// A cycle between transactions, step by step.
    AppendCycle {
        /// The steps, each from the previous step's `to`.
        steps: Vec<AppendStep>,
    },
    /// Every choice closes a cycle: of which blocks produced the repeated
    /// values (`repeats`), or of the order of the appends no read shows.
    EveryChoiceCycles {
        /// The history's appended values repeat.
        repeats: bool,
        /// The keys of the cycles the search met.
        keys: Vec<KeyId>,
        /// Their transactions (the first 24).
        txns: Vec<TxnId>,
        /// The shortest of those cycles, as an example.
        example: Option<Box<Proof>>,
    },
    // ------------------------------------------------------------ registers
    /// `txn` read a value of `key` that no transaction wrote (a value of a
    /// shape no write has).
    UnwrittenValue {
        /// The reader.
        txn: TxnId,
        /// The key.
        key: KeyId,
    },
    /// `txn` read `read` from `key` after its own write (`own`) or earlier
    /// read of `before` (internal). `None` is `nil`.
    RegisterInternal {
        /// The transaction.
        txn: TxnId,
        /// The key.
        key: KeyId,
        /// What it read.
        read: Option<ValId>,
        /// What it wrote or read before.
        before: Option<ValId>,
        /// `before` was its own write (else an earlier read).
        own: bool,
    },
    /// `txn` read `value` from `key`, which no other transaction that may
    /// have committed wrote last: every choice has one of the anomalies of
    /// `sources`, the writes that could explain it instead.
    RegisterBadRead {
        /// The reader.
        txn: TxnId,
        /// The key.
        key: KeyId,
        /// What it read (`None`: `nil`).
        value: Option<ValId>,
        /// Every kind of write it may have come from (never empty; the
        /// first names the finding's kind).
        sources: Vec<BadSource>,
        /// The reader writes the key after the read: a failed write it saw
        /// makes that a dirty update.
        dirty_update: bool,
    },
    /// Register reads whose values repeat: every choice of which committed
    /// transaction's last write each read saw closes a `wr` cycle among
    /// `txns` (keys of their reads: `keys`), `example` one such cycle. With
    /// `dirty`, reading a failed or overwritten write instead (G1a, G1b)
    /// would avoid the cycle; without, nothing does (G1c).
    RegisterReadCycles {
        /// Failed or overwritten writes could explain the reads instead.
        dirty: bool,
        /// The keys of the reads no placement explained.
        keys: Vec<KeyId>,
        /// Their readers (the first 24).
        txns: Vec<TxnId>,
        /// A cycle one choice closes.
        example: Vec<RegisterStep>,
    },
    /// A register cycle no choice of version order avoids.
    RegisterCycle {
        /// The steps, each from the previous step's `to`.
        steps: Vec<RegisterStep>,
    },
    /// No choice of version order, written values and committed `info`
    /// transactions admits a `level` execution; `steps` is a cycle one
    /// choice closes (empty when the constraints conflict directly).
    RegisterChoices {
        /// The level.
        level: Level,
        /// The example cycle.
        steps: Vec<RegisterStep>,
    },
}

/// One step of a list-append cycle: `from` precedes `to`, and why.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AppendStep {
    /// The earlier transaction.
    pub from: TxnId,
    /// The later one.
    pub to: TxnId,
    /// Why.
    pub why: AppendWhy,
}

/// Why one transaction precedes another in a list-append cycle. Positions
/// count from the start of the key's list; `read` is the list a
/// transaction read of the key (its own appends left out).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AppendWhy {
    /// `from` completed before `to` began (real time).
    Realtime,
    /// Under snapshot isolation: both appended to `key`, so one committed
    /// before the other started, `from` first (ww).
    FirstCommitter {
        /// The key.
        key: KeyId,
    },
    /// Nothing the solver can name (shown as "precedes").
    Precedes,
    /// `from`'s `block` at position `at`, then `to`'s `next` at `next_at`
    /// (ww).
    AppendedBefore {
        /// The key.
        key: KeyId,
        /// `from`'s block.
        block: Values,
        /// Its position.
        at: u32,
        /// `to`'s block.
        next: Values,
        /// Its position.
        next_at: u32,
    },
    /// `from`'s `block` at position `at`, then `to`'s `next`, which no read
    /// saw (ww).
    AppendedBeforeUnseen {
        /// The key.
        key: KeyId,
        /// `from`'s block.
        block: Values,
        /// Its position.
        at: u32,
        /// `to`'s block.
        next: Values,
    },
    /// `to` read `read`, which includes `from`'s `block` at position `at`
    /// (wr).
    ReadIncludes {
        /// The key.
        key: KeyId,
        /// What `to` read.
        read: Values,
        /// `from`'s block.
        block: Values,
        /// Its position.
        at: u32,
    },
    /// `from` read `read`, which misses `to`'s `block` at position `at`
    /// (rw).
    ReadMisses {
        /// The key.
        key: KeyId,
        /// What `from` read.
        read: Values,
        /// `to`'s block.
        block: Values,
        /// Its position.
        at: u32,
    },
    /// `from` read `read`, which misses `to`'s `block`, which no read saw
    /// (rw).
    ReadMissesUnseen {
        /// The key.
        key: KeyId,
        /// What `from` read.
        read: Values,
        /// `to`'s block.
        block: Values,
    },
    /// `from` read `read`, before `to` read the longer `longer` (rw, then
    /// wr through the appends in between).
    ReadBeforeLonger {
        /// The key.
        key: KeyId,
        /// What `from` read.
        read: Values,
        /// What `to` read.
        longer: Values,
    },
    /// `from` appended `block` at position `at`, before `to` (ww).
    AppendedAt {
        /// The key.
        key: KeyId,
        /// `from`'s block.
        block: Values,
        /// Its position.
        at: u32,
    },
    /// `from` read `len` elements, before `to` (rw).
    ReadLength {
        /// The key.
        key: KeyId,
        /// How many elements it read.
        len: u32,
    },
    /// `from` appended `block` after every read of the key, before `to`
    /// (ww).
    AppendedUnseen {
        /// The key.
        key: KeyId,
        /// `from`'s block.
        block: Values,
    },
}

impl AppendWhy {
    /// The relations the step stands for, in order (a read before a longer
    /// read is an anti-dependency, then a read dependency); real time for
    /// a step the solver cannot name.
    pub fn rels(&self) -> &'static [Rels] {
        match self {
            AppendWhy::FirstCommitter { .. }
            | AppendWhy::AppendedBefore { .. }
            | AppendWhy::AppendedBeforeUnseen { .. }
            | AppendWhy::AppendedAt { .. }
            | AppendWhy::AppendedUnseen { .. } => &[Rels::WW],
            AppendWhy::ReadIncludes { .. } => &[Rels::WR],
            AppendWhy::ReadMisses { .. }
            | AppendWhy::ReadMissesUnseen { .. }
            | AppendWhy::ReadLength { .. } => &[Rels::RW],
            AppendWhy::ReadBeforeLonger { .. } => &[Rels::RW, Rels::WR],
            AppendWhy::Realtime | AppendWhy::Precedes => &[Rels::REALTIME],
        }
    }

    /// The key the step is about, if any.
    pub fn key(&self) -> Option<KeyId> {
        match self {
            AppendWhy::Realtime | AppendWhy::Precedes => None,
            AppendWhy::FirstCommitter { key }
            | AppendWhy::AppendedBefore { key, .. }
            | AppendWhy::AppendedBeforeUnseen { key, .. }
            | AppendWhy::ReadIncludes { key, .. }
            | AppendWhy::ReadMisses { key, .. }
            | AppendWhy::ReadMissesUnseen { key, .. }
            | AppendWhy::ReadBeforeLonger { key, .. }
            | AppendWhy::AppendedAt { key, .. }
            | AppendWhy::ReadLength { key, .. }
            | AppendWhy::AppendedUnseen { key, .. } => Some(*key),
        }
    }
}

/// One step of a register cycle: `from` precedes `to`, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegisterStep {
    /// The earlier transaction (or event: under snapshot isolation a
    /// transaction's start precedes its commit).
    pub from: TxnId,
    /// The later one.
    pub to: TxnId,
    /// Why.
    pub why: RegisterWhy,
}

/// Why one register event precedes another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegisterWhy {
    /// The reader saw the writer's version of `key`.
    Wr {
        /// The key.
        key: KeyId,
    },
    /// Two writers of `key`, the first version before the second.
    Ww {
        /// The key.
        key: KeyId,
    },
    /// The reader saw a version of `key` older than the writer's.
    Rw {
        /// The key.
        key: KeyId,
    },
    /// The first completed before the second was invoked.
    Realtime,
    /// A transaction starts before it commits (snapshot isolation).
    Span,
}

/// Where a register value no committed write explains may have come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BadSource {
    /// A transaction that failed wrote it (G1a).
    Failed(TxnId),
    /// A transaction that failed wrote it and then overwrote it (G1a, and
    /// G1b as Elle counts intermediate writes of any transaction).
    FailedOverwritten(TxnId),
    /// A transaction wrote it and then overwrote it (G1b).
    Overwritten(TxnId),
    /// Only the reader itself writes it, later (future read).
    Later,
    /// Nobody wrote it (garbage read).
    Nobody,
}

/// Why a verdict is valid, invalid or unknown, in one line.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    // ------------------------------------------------------------- valid
    /// A serial order of `txns` committed transactions explains every
    /// read (found in `rounds` rounds, when the search counts them).
    SerialOrder {
        /// How many transactions the order holds.
        txns: usize,
        /// The register search's rounds.
        rounds: Option<u32>,
    },
    /// A commit order of `txns` transactions explains every read.
    CommitOrder {
        /// How many transactions the order holds.
        txns: usize,
    },
    /// A topological order of inference's dependency graph replays as a
    /// serial execution.
    TopologicalOrder,
    /// Serializable, hence snapshot-isolated, for the serializable
    /// verdict's reason.
    FromSerializable(Box<Reason>),
    // ----------------------------------------------------------- invalid
    /// The finding's proof, in full.
    Proof,
    /// The first line of the finding's proof.
    ProofHeadline,
    // ----------------------------------------------------------- unknown
    /// The finding (an internal anomaly) is one read committed allows and
    /// the solver does not model.
    Unmodelled,
    /// The history is not a list-append one: `txn` does `what`.
    NotListAppend {
        /// The transaction.
        txn: TxnId,
        /// What it does.
        what: NotListAppend,
    },
    /// Positions `start..end` of `key` can be spelled in more than `max`
    /// ways by its blocks of mixed values.
    TooManyPlacements {
        /// The key.
        key: KeyId,
        /// First position.
        start: u32,
        /// Position after the last.
        end: u32,
        /// The bound.
        max: usize,
    },
    /// `vars` choice variables exceed the bound `max`.
    TooManyChoices {
        /// How many were built.
        vars: usize,
        /// The bound.
        max: usize,
    },
    /// Snapshot isolation: more than `max` pairs of unseen appends to
    /// order.
    TooManyPairs {
        /// The bound.
        max: usize,
    },
    /// Under every choice the reads of `key` disagree on the order of its
    /// committed appends (Elle's `incompatible-order`), which does not rule
    /// out read uncommitted: the levels below read committed are not
    /// decided then.
    OrdersDisagree {
        /// The key.
        key: KeyId,
    },
    /// The time limit of `ms` was reached before any search.
    TimeBeforeSearch {
        /// The limit.
        ms: u64,
    },
    /// The time limit was reached while building the constraints.
    TimeWhileBuilding,
    /// The search stopped at the time limit of `ms`, after `rounds` rounds
    /// (the register search) and `conflicts` SAT conflicts, as counted.
    TimeInSearch {
        /// The limit.
        ms: u64,
        /// Rounds of the register search.
        rounds: Option<u32>,
        /// SAT conflicts.
        conflicts: Option<u64>,
    },
    /// The solver's witness does not replay (a solver bug, never a
    /// verdict).
    NoReplay(Replay),
    /// Another solver bug.
    Internal(Internal),
}

/// What makes a history not list-append.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NotListAppend {
    /// A register write (`[:w ...]`).
    RegisterWrite,
    /// An append of something other than a single value.
    CompoundAppend,
    /// A read of a single value, not a list.
    ScalarRead,
}

/// A solver bug, caught before it became a verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Internal {
    /// The forced graph, found acyclic, was refused by the theory.
    ForcedGraphCyclic,
    /// The forced graph, reported cyclic, has no cycle.
    ForcedGraphAcyclic,
    /// The choices made leave a cycle.
    ChoiceLeftCycle,
    /// A replay failed without naming a constraint.
    ReplayNamedNothing,
}

/// Why a claimed witness does not replay against the history (list-append
/// and register witnesses alike).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Replay {
    /// No such transaction id.
    UnknownTxn(TxnId),
    /// The transaction appears twice.
    Twice(TxnId),
    /// A failed transaction is in the order.
    Failed(TxnId),
    /// A committed transaction is missing from the order.
    Missing(TxnId),
    /// One snapshot per committed transaction is needed.
    SnapshotCount,
    /// The transaction's snapshot comes after its commit.
    StartsAfterCommit(TxnId),
    /// A micro-op that is not list-append.
    NotListAppend(TxnId),
    /// Placed before `earlier`, which completed before it began.
    BeforeEarlier {
        /// The transaction.
        txn: TxnId,
        /// The one that completed before it began.
        earlier: TxnId,
    },
    /// It would read `key` as `got`.
    WouldRead {
        /// The transaction.
        txn: TxnId,
        /// The key.
        key: KeyId,
        /// What it would read.
        got: Values,
    },
    /// It appends to `key` concurrently with an earlier committer.
    ConcurrentAppend {
        /// The transaction.
        txn: TxnId,
        /// The key.
        key: KeyId,
    },
    /// It reads a single value (read committed).
    ScalarRead(TxnId),
    /// It read `key` without its own appends (read committed).
    WithoutOwnAppends {
        /// The transaction.
        txn: TxnId,
        /// The key.
        key: KeyId,
    },
    /// It read `read` of `key`, not a prefix of its `versions` (read
    /// committed).
    NotPrefix {
        /// The transaction.
        txn: TxnId,
        /// The key.
        key: KeyId,
        /// What it read (its own appends left out).
        read: Values,
        /// The key's versions.
        versions: Values,
    },
    /// It read `key` up to `writer`'s block, which commits later (read
    /// committed).
    ReadsLaterBlock {
        /// The transaction.
        txn: TxnId,
        /// The key.
        key: KeyId,
        /// The block's writer.
        writer: TxnId,
    },
    /// It read `key` up to the middle of a block (read committed).
    MidBlock {
        /// The transaction.
        txn: TxnId,
        /// The key.
        key: KeyId,
    },
    /// It read `key` before `writer`'s block, and `writer` reaches it by
    /// write and read dependencies: a cycle with one anti-dependency
    /// (G-single, consistent view).
    SingleAntiDependency {
        /// The reader.
        txn: TxnId,
        /// The key.
        key: KeyId,
        /// The writer of the version after the one it read.
        writer: TxnId,
    },
    /// It reads `key` differently in the witness (registers).
    ReadsDifferently {
        /// The transaction.
        txn: TxnId,
        /// The key.
        key: KeyId,
    },
    /// It overlaps a committed writer of `key` (registers, snapshot
    /// isolation).
    OverlappingWriter {
        /// The transaction.
        txn: TxnId,
        /// The key.
        key: KeyId,
    },
    /// Its read of `key` is not explained by the commit order (read
    /// uncommitted, no G1c): the committed appends of others the read can
    /// show in version order (before it commits, with `g1c`) leave more of
    /// some value than failed, uncommitted and its own appends supply.
    UnexplainedRead {
        /// The reader.
        txn: TxnId,
        /// The key.
        key: KeyId,
        /// Judged for no G1c (else for no G0).
        g1c: bool,
    },
}
