//! Evidence: why one transaction precedes another, as typed records of ids
//! and values. Inference produces it (each workload implements [`Explain`]
//! for the edges it inferred), the render layer words it (`explain::cycle`
//! for text and JSON, `report::diagram` for pictures); it sits below both,
//! so neither imports the other, and it holds no text and no JSON.

use crate::graph::{CycleClass, Rels};
use crate::history::{History, KeyId, TxnId, ValId};

/// Why `a → b` holds for one relation: the evidence behind one cycle step.
/// Process and real-time steps need nothing beyond the two transactions,
/// which the history describes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// `a` and `b` ran on one process, `a` first.
    Process,
    /// `a` completed before `b` was invoked.
    Realtime,
    /// A ww, wr or rw dependency on one key.
    Data(DataStep),
}

impl Step {
    /// The relation (exactly one bit).
    pub fn rel(&self) -> Rels {
        match self {
            Step::Process => Rels::PROCESS,
            Step::Realtime => Rels::REALTIME,
            Step::Data(d) => d.fact.rel(),
        }
    }

    /// The key of a data step.
    pub fn key(&self) -> Option<KeyId> {
        match self {
            Step::Data(d) => Some(d.key),
            _ => None,
        }
    }

    /// Positions of the justifying micro-ops in `a` and in `b`, where known.
    pub fn mops(&self) -> (Option<usize>, Option<usize>) {
        match self {
            Step::Data(d) => (d.a_mop, d.b_mop),
            _ => (None, None),
        }
    }
}

/// A data dependency between two transactions on one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataStep {
    /// The key both transactions touched.
    pub key: KeyId,
    /// Position of the justifying micro-op in the first transaction
    /// (Elle's `:a-mop-index`); `None` when it has none to point at.
    pub a_mop: Option<usize>,
    /// Position of the justifying micro-op in the second transaction.
    pub b_mop: Option<usize>,
    /// What the history shows.
    pub fact: Fact,
}

/// What the history shows about one key that orders `a` before `b`, per
/// workload and relation. A value `None` is the key's initial state (the
/// empty list before any append, or a register's initial `nil`); what a
/// transaction wrote is never that.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fact {
    /// List-append ww: `b` appended right after `a` in the key's version
    /// order.
    Appended {
        /// `a`'s append.
        prev: ValId,
        /// `b`'s append.
        next: ValId,
    },
    /// List-append wr: `b` read the key ending in `a`'s append.
    ObservedAppend {
        /// The last element `b` read, which `a` appended.
        value: ValId,
    },
    /// List-append rw: `a` read the key ending in `prev`, and `b` appended
    /// right after it.
    MissedAppend {
        /// The last element `a` read (`None`: it read the empty list).
        prev: Option<ValId>,
        /// `b`'s append.
        next: ValId,
    },
    /// Register wr: `b` read what `a` wrote.
    ReadWritten {
        /// The version `a` wrote and `b` read.
        value: ValId,
    },
    /// Register ww: `a`'s version precedes `b`'s.
    Overwrote {
        /// `a`'s write.
        from: ValId,
        /// `b`'s write.
        to: ValId,
        /// What orders the two versions.
        sources: Sources,
    },
    /// Register rw: the version `a` read precedes `b`'s.
    ReadOverwritten {
        /// The version `a` read (`None`: the initial `nil`).
        from: Option<ValId>,
        /// `b`'s write.
        to: ValId,
        /// What orders the two versions.
        sources: Sources,
    },
}

impl Fact {
    /// The relation the fact establishes.
    pub fn rel(&self) -> Rels {
        match self {
            Fact::Appended { .. } | Fact::Overwrote { .. } => Rels::WW,
            Fact::ObservedAppend { .. } | Fact::ReadWritten { .. } => Rels::WR,
            Fact::MissedAppend { .. } | Fact::ReadOverwritten { .. } => Rels::RW,
        }
    }
}

/// Where a register version-order edge comes from: the assumptions about
/// the database that order two versions of a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The initial state (`nil`) precedes every version.
    InitialState,
    /// The database's own commit order (white-box).
    TransactionOrder,
    /// A transaction's write of a key follows its read of that key.
    WfrKeys,
    /// Each process's transactions on a key follow process order.
    SequentialKeys,
    /// Transactions on a key follow real-time order.
    LinearizableKeys,
    /// Writers of a key follow real-time order.
    RealtimeVersions,
}

impl Source {
    /// In the order they are tried (Elle's; OneLite's option last).
    pub const ALL: [Source; 6] = [
        Source::InitialState,
        Source::TransactionOrder,
        Source::WfrKeys,
        Source::SequentialKeys,
        Source::LinearizableKeys,
        Source::RealtimeVersions,
    ];

    /// Elle's name for the source, as in `:sources`.
    pub fn name(self) -> &'static str {
        match self {
            Source::InitialState => "initial-state",
            Source::TransactionOrder => "transaction-order-keys",
            Source::WfrKeys => "wfr-keys",
            Source::SequentialKeys => "sequential-keys",
            Source::LinearizableKeys => "linearizable-keys",
            Source::RealtimeVersions => "realtime-versions",
        }
    }

    pub(crate) fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of [`Source`]s: those that order one pair of versions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sources(pub u8);

impl Sources {
    /// Does the set hold `s`?
    pub fn contains(self, s: Source) -> bool {
        self.0 & s.bit() != 0
    }

    /// The members, in [`Source::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Source> {
        Source::ALL.into_iter().filter(move |&s| self.contains(s))
    }
}

/// A cycle with every step explained.
#[derive(Clone, Debug)]
pub struct ExplainedCycle {
    /// Elle's name for it, from its step relations
    /// ([`crate::graph::classify`]).
    pub kind: CycleClass,
    /// The transactions, closed: the last equals the first.
    pub txns: Vec<TxnId>,
    /// One step per consecutive pair of `txns`.
    pub steps: Vec<Step>,
}

/// A workload's explainer: given an edge the inference produced, say why,
/// preferring the data relations in the workload's explanation order.
pub trait Explain {
    /// The data relations (`WW`, `WR`, `RW`, each alone) in the order this
    /// workload's explanations prefer them: Elle's explainer's order for the
    /// workload, declared once here and used by [`Explain::explain`].
    fn order(&self) -> &'static [Rels];

    /// Why `a → b` holds by the one data relation `rel`; `None` when the
    /// workload did not infer that edge by it.
    fn explain_rel(&self, h: &History, a: TxnId, b: TxnId, rel: Rels) -> Option<DataStep>;

    /// Why `a → b` holds by one of the data relations in `allowed`, the
    /// first the workload can justify in its [`Explain::order`]; `None`
    /// when it cannot justify any (the edge was not one it inferred).
    fn explain(&self, h: &History, a: TxnId, b: TxnId, allowed: Rels) -> Option<DataStep> {
        self.order()
            .iter()
            .filter(|&&r| allowed.intersects(r))
            .find_map(|&r| self.explain_rel(h, a, b, r))
    }
}

/// A process or real-time step from `a` to `b`, if `allowed` has one and
/// the history shows it.
pub fn order_step(h: &History, a: TxnId, b: TxnId, allowed: Rels) -> Option<Step> {
    let (ta, tb) = (&h.txns[a as usize], &h.txns[b as usize]);
    if allowed.intersects(Rels::PROCESS) && ta.process == tb.process && ta.index < tb.index {
        return Some(Step::Process);
    }
    if allowed.intersects(Rels::REALTIME) {
        if let (Some(ac), Some(bi)) = (ta.complete_seq, tb.invoke_seq) {
            if ac < bi {
                return Some(Step::Realtime);
            }
        }
    }
    None
}

/// Explains each step of a closed cycle: data relations first (the
/// workload's explainer, as Elle's combined explainer tries data first),
/// then process, then real time. `edge_rels(a, b)` gives the relations the
/// graph holds between a and b.
pub fn explain_steps(
    h: &History,
    ex: &dyn Explain,
    txns: &[TxnId],
    edge_rels: impl Fn(TxnId, TxnId) -> Rels,
) -> Option<Vec<Step>> {
    txns.windows(2)
        .map(|w| {
            let allowed = edge_rels(w[0], w[1]);
            ex.explain(h, w[0], w[1], allowed)
                .map(Step::Data)
                .or_else(|| order_step(h, w[0], w[1], allowed))
        })
        .collect()
}
