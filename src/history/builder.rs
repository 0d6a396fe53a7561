//! Pairs a stream of [`RawOp`]s into [`Txn`]s the way Jepsen and Elle do,
//! interning keys and values on the way.
//!
//! Rules (Elle's checkers see only "client" ops):
//! - an op whose `:process` is not an integer (`:nemesis`, `nil`) is ignored;
//! - an invocation is paired with the next completion of the same process.
//!   Elle's own tests sometimes let one process invoke several ops before
//!   completing them (`unobserved-write-test`, rw-register `initial-state`);
//!   `jepsen.history` would refuse to pair those, and Elle only gets away
//!   with it because it never pairs them. Here such a completion takes the
//!   pending invocation with the same micro-ops (same functions, keys and
//!   written values; reads ignored), or else the oldest one;
//! - a completion with no pending invocation is a [`Txn`] whose
//!   `invoke_seq` is `None` (Elle's tests build such histories);
//! - an invocation never completed is an [`Outcome::Info`] txn with
//!   `complete_seq` and `complete_time` `None`: it may or may not have taken
//!   effect, and it never completes for real-time purposes;
//! - a txn's micro-ops come from the completion's `:value`, or from the
//!   invocation's when the completion's is `nil`;
//! - `:index` is kept as written when the first op has one (then every op
//!   must); otherwise ops are numbered 0, 1, 2, ... in order, as
//!   `jepsen.history/history` does;
//! - `:time` of `-1` (or none) means unknown;
//! - `invoke_seq`/`complete_seq` are positions in the op stream (all ops,
//!   clients or not), so real-time order is `a.complete_seq < b.invoke_seq`;
//! - txns are ordered by the position of their completion (or, for a lone
//!   invocation, of the invocation).
//!
//! OneLite transactions arrive already paired ([`HistoryBuilder::push_txn`]);
//! their event order is computed from times, see [`HistoryBuilder::finish`].

use super::error::ReadError;
use super::raw::{MopRef, OpBatch, OpType, RawMop, RawOp, RawTxn, ValueRef};
use super::{Datum, DoubleInvoke, History, Interner, Mop, MopKind, Observed, Outcome, Txn};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::VecDeque;

/// An invocation waiting for its completion.
struct Pending {
    index: i64,
    time: Option<i64>,
    seq: u64,
    line: u32,
    /// `None`: `:txn`.
    f: Option<Datum>,
    mops: Option<Vec<RawMop>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Numbering {
    /// The first op had an `:index`: keep them all as written.
    Given,
    /// The first op had none: number ops by position.
    Positional,
}

/// Builds a [`History`] from ops pushed in stream order.
pub struct HistoryBuilder {
    file: String,
    h: History,
    /// Running invocations by process (almost always zero or one each; the
    /// queue is kept once allocated so the common case never allocates).
    pending: FxHashMap<i64, VecDeque<Pending>>,
    ops: u64,
    numbering: Option<Numbering>,
    /// OneLite: `(t0, t1)` of each txn, by txn id.
    times: Vec<(i64, Option<i64>)>,
    ids: FxHashSet<i64>,
    key_cache: IntCache,
    val_cache: IntCache,
}

/// A direct-mapped cache of recently interned integers in front of an
/// [`Interner`]: list reads repeat the same values over and over, and a
/// slot compare is cheaper than a hash-table probe.
struct IntCache {
    slots: Vec<(i64, u32)>,
}

impl IntCache {
    const SLOTS: usize = 1 << 12;

    fn new() -> Self {
        // (0, MAX) marks an empty slot: no id is u32::MAX in practice, and a
        // miss only costs a lookup.
        IntCache {
            slots: vec![(0, u32::MAX); Self::SLOTS],
        }
    }

    #[inline]
    fn intern(&mut self, interner: &mut Interner, d: &Datum) -> u32 {
        match d {
            Datum::Int(i) => self.intern_int(interner, *i),
            d => interner.intern_ref(d),
        }
    }

    #[inline]
    fn intern_int(&mut self, interner: &mut Interner, i: i64) -> u32 {
        let slot = &mut self.slots[(i as u64 as usize) & (Self::SLOTS - 1)];
        if slot.0 == i && slot.1 != u32::MAX {
            return slot.1;
        }
        let id = interner.intern_int(i);
        *slot = (i, id);
        id
    }
}

impl HistoryBuilder {
    /// `file` names the input in error messages.
    pub fn new(file: &str) -> Self {
        HistoryBuilder {
            file: file.to_string(),
            h: History::default(),
            pending: FxHashMap::default(),
            ops: 0,
            numbering: None,
            times: Vec::new(),
            ids: FxHashSet::default(),
            key_cache: IntCache::new(),
            val_cache: IntCache::new(),
        }
    }

    /// Number of ops (or OneLite transactions) pushed so far, clients or not.
    pub fn ops(&self) -> u64 {
        self.ops
    }

    fn err(&self, line: u32, col: u32, what: impl Into<String>) -> ReadError {
        ReadError::invalid(&self.file, line, col, what)
    }

    /// Adds the next Jepsen op of the stream.
    pub fn push(&mut self, op: RawOp) -> Result<(), ReadError> {
        let mut batch = OpBatch::default();
        batch.push_raw(op);
        self.push_batch(&batch)
    }

    /// Adds the ops of `batch`, in order (what readers do: see
    /// [`OpBatch`]).
    pub(crate) fn push_batch(&mut self, batch: &OpBatch) -> Result<(), ReadError> {
        for i in 0..batch.len() {
            self.push_one(batch, i)?;
        }
        Ok(())
    }

    fn push_one(&mut self, batch: &OpBatch, i: usize) -> Result<(), ReadError> {
        let op = &batch.ops[i];
        if !self.times.is_empty() {
            return Err(self.err(
                op.line,
                op.col,
                "cannot mix Jepsen ops with OneLite transactions",
            ));
        }
        let seq = self.ops;
        self.ops += 1;
        let numbering = *self.numbering.get_or_insert(if op.index.is_some() {
            Numbering::Given
        } else {
            Numbering::Positional
        });
        let index = match (numbering, op.index) {
            (Numbering::Positional, _) => seq as i64,
            (Numbering::Given, Some(i)) => i,
            (Numbering::Given, None) => {
                return Err(self.err(
                    op.line,
                    op.col,
                    "op has no :index, but the first op has one",
                ))
            }
        };
        let process = match op.process {
            Datum::Int(p) => p,
            Datum::BigInt(ref p) => {
                return Err(self.err(
                    op.line,
                    op.col,
                    format!("process {p} does not fit in 64 bits"),
                ))
            }
            _ => return Ok(()),
        };
        let time = op.time.filter(|&t| t != -1);
        if op.kind == OpType::Invoke {
            let queue = self.pending.entry(process).or_default();
            if let (Some(running), None) = (queue.back(), &self.h.double_invoke) {
                self.h.double_invoke = Some(DoubleInvoke {
                    process,
                    index,
                    line: op.line,
                    running_index: running.index,
                    running_line: running.line,
                });
            }
            queue.push_back(Pending {
                index,
                time,
                seq,
                line: op.line,
                f: not_txn(batch.f(i)).cloned(),
                mops: batch.mops(i).map(|ms| ms.map(MopRef::to_owned).collect()),
            });
            return Ok(());
        }
        let outcome = op.kind.outcome().unwrap_or(Outcome::Info);
        let done = batch.mops(i);
        let invocation = self
            .pending
            .get_mut(&process)
            .and_then(|q| take_matching(q, done.clone()));
        let txn = Txn {
            outcome,
            process,
            index,
            invoke_index: invocation.as_ref().map(|i| i.index),
            invoke_time: invocation.as_ref().and_then(|i| i.time),
            complete_time: time,
            invoke_seq: invocation.as_ref().map(|i| i.seq),
            complete_seq: Some(seq),
            mops_start: 0,
            mops_len: 0,
            line: op.line,
            f: None,
        };
        let f = not_txn(batch.f(i));
        match (done, invocation.as_ref().and_then(|i| i.mops.as_deref())) {
            (Some(mops), _) => self.add(txn, f, mops, op.line, op.col),
            (None, Some(mops)) => self.add(txn, f, mops.iter().map(RawMop::view), op.line, op.col),
            (None, None) => self.add(txn, f, [].into_iter(), op.line, op.col),
        }
    }

    /// Adds one already-paired OneLite transaction.
    pub fn push_txn(&mut self, t: RawTxn) -> Result<(), ReadError> {
        if self.ops > self.times.len() as u64 {
            return Err(self.err(
                t.line,
                t.col,
                "cannot mix OneLite transactions with Jepsen ops",
            ));
        }
        if !self.ids.insert(t.id) {
            return Err(self.err(t.line, t.col, format!("duplicate transaction id {}", t.id)));
        }
        if let Some(t1) = t.t1 {
            if t1 < t.t0 {
                return Err(self.err(t.line, t.col, format!("t1 ({t1}) is before t0 ({})", t.t0)));
            }
        }
        self.ops += 1;
        self.times.push((t.t0, t.t1));
        let txn = Txn {
            outcome: t.outcome,
            process: t.process,
            index: t.id,
            invoke_index: None,
            invoke_time: Some(t.t0),
            complete_time: t.t1,
            invoke_seq: None,
            complete_seq: None,
            mops_start: 0,
            mops_len: 0,
            line: t.line,
            f: None,
        };
        self.add(txn, None, t.mops.iter().map(RawMop::view), t.line, t.col)
    }

    /// Interns the txn's micro-ops and `:f` (`None`: `:txn`), and appends
    /// it.
    fn add<'m>(
        &mut self,
        mut txn: Txn,
        f: Option<&Datum>,
        mops: impl ExactSizeIterator<Item = MopRef<'m>>,
        line: u32,
        col: u32,
    ) -> Result<(), ReadError> {
        let h = &mut self.h;
        if h.mops.len() + mops.len() > u32::MAX as usize || h.txns.len() >= u32::MAX as usize {
            return Err(self.err(
                line,
                col,
                "history too large: more than 2^32 micro-ops or transactions",
            ));
        }
        txn.mops_start = h.mops.len() as u32;
        txn.mops_len = mops.len() as u32;
        let (keys_cache, vals_cache) = (&mut self.key_cache, &mut self.val_cache);
        for m in mops {
            let key = keys_cache.intern(&mut h.keys, m.key);
            let value = match m.value {
                ValueRef::Nil => Observed::Nil,
                ValueRef::Scalar(d) => Observed::Scalar(vals_cache.intern(&mut h.values, d)),
                ValueRef::List(xs) if m.kind == MopKind::Read => {
                    if h.elems.len() + xs.len() > u32::MAX as usize {
                        return Err(ReadError::invalid(
                            &self.file,
                            line,
                            col,
                            "history too large: more than 2^32 read elements",
                        ));
                    }
                    let start = h.elems.len() as u32;
                    for x in xs {
                        let v = vals_cache.intern(&mut h.values, x);
                        h.elems.push(v);
                    }
                    Observed::List {
                        start,
                        len: h.elems.len() as u32 - start,
                    }
                }
                ValueRef::Ints(xs) if m.kind == MopKind::Read => {
                    if h.elems.len() + xs.len() > u32::MAX as usize {
                        return Err(ReadError::invalid(
                            &self.file,
                            line,
                            col,
                            "history too large: more than 2^32 read elements",
                        ));
                    }
                    let start = h.elems.len() as u32;
                    h.elems.reserve(xs.len());
                    for &x in xs {
                        let v = vals_cache.intern_int(&mut h.values, x);
                        h.elems.push(v);
                    }
                    Observed::List {
                        start,
                        len: h.elems.len() as u32 - start,
                    }
                }
                // An appended or written vector is one opaque value.
                ValueRef::List(xs) => Observed::Scalar(h.values.intern(Datum::Vector(xs.to_vec()))),
                ValueRef::Ints(xs) => Observed::Scalar(
                    h.values
                        .intern(Datum::Vector(xs.iter().copied().map(Datum::Int).collect())),
                ),
            };
            h.mops.push(Mop {
                kind: m.kind,
                key,
                value,
            });
        }
        txn.f = f.map(|f| h.values.intern_ref(f));
        if txn.invoke_seq.is_some() && txn.complete_seq.is_some() {
            h.has_invocations = true;
        }
        h.txns.push(txn);
        Ok(())
    }

    /// Ends the history: invocations never completed become `Info` txns,
    /// and, for OneLite, the event order is derived from the times.
    ///
    /// OneLite event order sorts all `t0` and `t1` by time; at equal times
    /// invocations come before completions (then by line), so that a txn
    /// ending at the instant another begins is *not* before it in real time:
    /// real-time order requires `a.t1 < b.t0` strictly.
    pub fn finish(mut self) -> Result<History, ReadError> {
        if !self.times.is_empty() {
            self.order_by_time();
            return Ok(self.h);
        }
        let mut lone: Vec<(i64, Pending)> = self
            .pending
            .drain()
            .flat_map(|(p, q)| q.into_iter().map(move |i| (p, i)))
            .collect();
        if lone.is_empty() {
            return Ok(self.h);
        }
        lone.sort_by_key(|(_, p)| p.seq);
        for (process, p) in lone {
            let txn = Txn {
                outcome: Outcome::Info,
                process,
                index: p.index,
                invoke_index: Some(p.index),
                invoke_time: p.time,
                complete_time: None,
                invoke_seq: Some(p.seq),
                complete_seq: None,
                mops_start: 0,
                mops_len: 0,
                line: p.line,
                f: None,
            };
            let mops = p.mops.as_deref().unwrap_or(&[]);
            self.add(txn, p.f.as_ref(), mops.iter().map(RawMop::view), p.line, 0)?;
        }
        // Completed txns are already in order; merge in the lone invocations.
        self.h
            .txns
            .sort_by_key(|t| t.complete_seq.or(t.invoke_seq).unwrap_or(u64::MAX));
        Ok(self.h)
    }

    fn order_by_time(&mut self) {
        // (time, 0 = invocation / 1 = completion, txn position)
        let mut events: Vec<(i64, u8, u32)> = Vec::with_capacity(self.times.len() * 2);
        for (i, &(t0, t1)) in self.times.iter().enumerate() {
            events.push((t0, 0, i as u32));
            if let Some(t1) = t1 {
                events.push((t1, 1, i as u32));
            }
        }
        events.sort_unstable();
        for (seq, &(_, kind, i)) in events.iter().enumerate() {
            let t = &mut self.h.txns[i as usize];
            if kind == 0 {
                t.invoke_seq = Some(seq as u64);
            } else {
                t.complete_seq = Some(seq as u64);
            }
        }
        self.h.has_invocations = self
            .h
            .txns
            .iter()
            .any(|t| t.invoke_seq.is_some() && t.complete_seq.is_some());
        self.h
            .txns
            .sort_by_key(|t| t.complete_seq.or(t.invoke_seq).unwrap_or(u64::MAX));
    }
}

/// `f` unless it is `:txn`.
fn not_txn(f: &Datum) -> Option<&Datum> {
    match f {
        Datum::Keyword(k) if k == "txn" => None,
        f => Some(f),
    }
}

/// Removes the invocation a completion with micro-ops `done` belongs to:
/// the only one, else the first with the same micro-ops, else the oldest.
fn take_matching<'m, I>(q: &mut VecDeque<Pending>, done: Option<I>) -> Option<Pending>
where
    I: ExactSizeIterator<Item = MopRef<'m>> + Clone,
{
    if q.len() > 1 {
        if let Some(i) = q
            .iter()
            .position(|p| same_txn(p.mops.as_deref(), done.clone()))
        {
            return q.remove(i);
        }
    }
    q.pop_front()
}

/// Could `inv` be the invocation of `done`? Same functions, keys and
/// written values in the same order; reads are unknown when invoked.
fn same_txn<'m, I>(inv: Option<&[RawMop]>, done: Option<I>) -> bool
where
    I: ExactSizeIterator<Item = MopRef<'m>>,
{
    match (inv, done) {
        (Some(a), Some(b)) => {
            a.len() == b.len()
                && a.iter().zip(b).all(|(x, y)| {
                    x.kind == y.kind
                        && x.key == *y.key
                        && (x.kind == MopKind::Read || x.view().value == y.value)
                })
        }
        (None, None) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::edn::EdnReader;
    use crate::history::raw::RawValue;

    fn build(text: &str) -> Result<History, ReadError> {
        let mut b = HistoryBuilder::new("t.edn");
        for op in EdnReader::new(text.as_bytes(), "t.edn") {
            b.push(op?)?;
        }
        b.finish()
    }

    fn kw(s: &str) -> Datum {
        Datum::Keyword(s.into())
    }

    /// The micro-ops of txn `t` as (kind, key datum, observed as data).
    fn mops(h: &History, t: u32) -> Vec<(MopKind, Datum, Datum)> {
        h.mops(t)
            .iter()
            .map(|m| {
                let v = match m.value {
                    Observed::Nil => Datum::Nil,
                    Observed::Scalar(v) => h.values.datum(v).clone(),
                    o @ Observed::List { .. } => Datum::Vector(
                        h.list(o)
                            .unwrap()
                            .iter()
                            .map(|&v| h.values.datum(v).clone())
                            .collect(),
                    ),
                };
                (m.kind, h.keys.datum(m.key).clone(), v)
            })
            .collect()
    }

    #[test]
    fn invocations_pair_with_the_next_completion_of_their_process() {
        let h = build(
            "{:index 0 :type :invoke :process 0 :time 10 :f :txn :value [[:append :x 1] [:r :y nil]]}
             {:index 1 :type :invoke :process 1 :time 11 :f :txn :value [[:r :x nil]]}
             {:index 2 :type :ok :process 1 :time 12 :f :txn :value [[:r :x [1]]]}
             {:index 3 :type :ok :process 0 :time 13 :f :txn :value [[:append :x 1] [:r :y []]]}",
        )
        .unwrap();
        assert_eq!(h.txns.len(), 2);
        let t = &h.txns[0];
        assert_eq!(
            (t.index, t.invoke_index, t.process, t.outcome),
            (2, Some(1), 1, Outcome::Ok)
        );
        assert_eq!((t.invoke_seq, t.complete_seq), (Some(1), Some(2)));
        assert_eq!((t.invoke_time, t.complete_time), (Some(11), Some(12)));
        assert_eq!(t.line, 3);
        assert_eq!(t.f, None);
        assert_eq!(h.txns[1].index, 3);
        assert_eq!(h.txns[1].invoke_seq, Some(0));
        assert!(h.has_invocations);
        assert_eq!(
            mops(&h, 1),
            vec![
                (MopKind::Append, kw("x"), Datum::Int(1)),
                (MopKind::Read, kw("y"), Datum::Vector(vec![])),
            ]
        );
    }

    #[test]
    fn only_integer_processes_are_clients() {
        let h = build(
            "{:index 0 :type :info :process :nemesis :f :kill :value \"n1\"}
             {:index 1 :type :invoke :value [[:r :x nil]]}
             {:index 2 :type :invoke :process 0 :value [[:r :x nil]]}
             {:index 3 :type :ok :process 0 :value [[:r :x nil]]}",
        )
        .unwrap();
        assert_eq!(h.txns.len(), 1);
        assert_eq!(
            (h.txns[0].invoke_seq, h.txns[0].complete_seq),
            (Some(2), Some(3))
        );
    }

    #[test]
    fn a_completion_without_invocation_has_no_invoke_seq() {
        let h = build("{:index 5 :type :ok :process 0 :value [[:w :x 1]]}").unwrap();
        let t = &h.txns[0];
        assert_eq!(
            (t.index, t.invoke_index, t.invoke_seq, t.complete_seq),
            (5, None, None, Some(0))
        );
        assert!(!h.has_invocations);
    }

    #[test]
    fn an_invocation_never_completed_is_info_in_its_own_position() {
        let h = build(
            "{:index 0 :type :invoke :process 0 :time 5 :value [[:append :x 1]]}
             {:index 1 :type :invoke :process 1 :value [[:r :x nil]]}
             {:index 2 :type :ok :process 1 :value [[:r :x [1]]]}",
        )
        .unwrap();
        let t = &h.txns[0];
        assert_eq!((t.index, t.outcome, t.process), (0, Outcome::Info, 0));
        assert_eq!(
            (t.invoke_seq, t.complete_seq, t.complete_time),
            (Some(0), None, None)
        );
        assert_eq!(t.invoke_time, Some(5));
        assert_eq!(mops(&h, 0), vec![(MopKind::Append, kw("x"), Datum::Int(1))]);
        assert_eq!(h.txns[1].index, 2);
    }

    #[test]
    fn a_completion_without_value_takes_the_invocation_s() {
        let h = build(
            "{:index 0 :type :invoke :process 0 :value [[:append :x 1]]}
             {:index 1 :type :info :process 0 :value nil}
             {:index 2 :type :invoke :process 0 :value [[:w :y 2]]}
             {:index 3 :type :fail :process 0}",
        )
        .unwrap();
        assert_eq!(h.txns[0].outcome, Outcome::Info);
        assert_eq!(mops(&h, 0), vec![(MopKind::Append, kw("x"), Datum::Int(1))]);
        assert_eq!(h.txns[1].outcome, Outcome::Fail);
        assert_eq!(mops(&h, 1), vec![(MopKind::Write, kw("y"), Datum::Int(2))]);
    }

    #[test]
    fn ops_without_index_are_numbered_by_position() {
        let h = build(
            "{:type :info :process :nemesis}
             {:type :invoke :process 0 :value [[:r :x nil]]}
             {:type :ok :process 0 :value [[:r :x nil]] :index 99}",
        )
        .unwrap();
        assert_eq!((h.txns[0].index, h.txns[0].invoke_index), (2, Some(1)));
    }

    #[test]
    fn given_indices_are_kept_even_when_sparse() {
        let h = build(
            "{:index 7 :type :invoke :process 0 :value []}
             {:index 10 :type :ok :process 0 :value []}",
        )
        .unwrap();
        assert_eq!((h.txns[0].index, h.txns[0].invoke_index), (10, Some(7)));
        assert_eq!(h.txns[0].mops_len, 0);
    }

    #[test]
    fn a_missing_index_after_a_given_one_is_an_error() {
        let e = build("{:index 0 :type :invoke :process 0}\n{:type :ok :process 0}").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.edn:2:1: op has no :index, but the first op has one"
        );
    }

    #[test]
    fn time_minus_one_is_unknown() {
        let h = build(
            "{:index 0 :time -1 :type :invoke :process 0 :value []}
             {:index 1 :time 3 :type :ok :process 0 :value []}",
        )
        .unwrap();
        assert_eq!(
            (h.txns[0].invoke_time, h.txns[0].complete_time),
            (None, Some(3))
        );
    }

    #[test]
    fn f_is_kept_unless_it_is_txn() {
        let h = build(
            "{:index 0 :type :ok :process 0 :f :txn :value []}
             {:index 1 :type :ok :process 0 :value []}
             {:index 2 :type :ok :process 0 :f :read :value []}",
        )
        .unwrap();
        assert_eq!(h.txns[0].f, None);
        assert_eq!(h.values.datum(h.txns[1].f.unwrap()), &Datum::Nil);
        assert_eq!(h.values.datum(h.txns[2].f.unwrap()), &kw("read"));
    }

    #[test]
    fn keys_and_values_are_opaque_and_interned() {
        let h = build(
            "{:index 0 :type :ok :process 0 :value [[:append :x 1] [:append \"x\" 1] [:append [:x 1] 1] [:r :x [1 1]] [:r 1 [2 1]]]}",
        )
        .unwrap();
        let keys: Vec<u32> = h.mops(0).iter().map(|m| m.key).collect();
        assert_eq!(keys[0], keys[3]);
        assert_ne!(keys[0], keys[1]);
        assert_ne!(keys[0], keys[2]);
        assert_ne!(keys[4], keys[0]);
        assert_eq!(h.keys.len(), 4);
        assert_eq!(h.values.len(), 3, "1, 2 and the nil :f");
        assert_eq!(h.elems.len(), 4);
        assert_eq!(
            h.list(h.mops(0)[4].value).unwrap(),
            &[
                h.values.get(&Datum::Int(2)).unwrap(),
                h.values.get(&Datum::Int(1)).unwrap()
            ]
        );
    }

    #[test]
    fn list_reads_of_any_data_and_written_vectors() {
        let h = build(
            "{:index 0 :type :ok :process 0 :value [[:r :k [:a \"b\" 1]] [:append :k [1 2]]]}",
        )
        .unwrap();
        assert_eq!(
            mops(&h, 0),
            vec![
                (
                    MopKind::Read,
                    kw("k"),
                    Datum::Vector(vec![kw("a"), Datum::Str("b".into()), Datum::Int(1)])
                ),
                (
                    MopKind::Append,
                    kw("k"),
                    Datum::Vector(vec![Datum::Int(1), Datum::Int(2)])
                ),
            ]
        );
        // A compact integer list handed to a write is one vector value too.
        let mut b = HistoryBuilder::new("t");
        b.push(RawOp {
            index: None,
            time: None,
            kind: OpType::Ok,
            process: Datum::Int(0),
            f: Datum::Nil,
            value: Some(vec![RawMop {
                kind: MopKind::Write,
                key: Datum::Int(1),
                value: RawValue::Ints(vec![1, 2]),
            }]),
            line: 1,
            col: 1,
        })
        .unwrap();
        let h = b.finish().unwrap();
        assert_eq!(
            mops(&h, 0),
            vec![(
                MopKind::Write,
                Datum::Int(1),
                Datum::Vector(vec![Datum::Int(1), Datum::Int(2)])
            )]
        );
    }

    #[test]
    fn overlapping_invocations_of_one_process_pair_by_micro_ops() {
        // Elle's unobserved-write-test: five invocations, then five completions.
        let h = build(
            "{:index 0 :type :invoke :process 0 :value [[:append :x 1]]}
             {:index 1 :type :invoke :process 0 :value [[:append :x 2]]}
             {:index 2 :type :invoke :process 0 :value [[:r :x nil]]}
             {:index 3 :type :ok :process 0 :value [[:append :x 1]]}
             {:index 4 :type :ok :process 0 :value [[:append :x 2]]}
             {:index 5 :type :ok :process 0 :value [[:r :x [1 2]]]}",
        )
        .unwrap();
        let pairs: Vec<_> = h.txns.iter().map(|t| (t.invoke_index, t.index)).collect();
        assert_eq!(pairs, vec![(Some(0), 3), (Some(1), 4), (Some(2), 5)]);
        // rw-register initial-state: t1 t2 t2' t1'.
        let h = build(
            "{:index 0 :type :invoke :process 0 :value [[:r :x nil] [:r :y nil]]}
             {:index 1 :type :invoke :process 0 :value [[:w :y 1] [:w :x 2]]}
             {:index 2 :type :ok :process 0 :value [[:w :y 1] [:w :x 2]]}
             {:index 3 :type :ok :process 0 :value [[:r :x nil] [:r :y 1]]}",
        )
        .unwrap();
        let pairs: Vec<_> = h.txns.iter().map(|t| (t.invoke_index, t.index)).collect();
        assert_eq!(pairs, vec![(Some(1), 2), (Some(0), 3)]);
    }

    #[test]
    fn a_process_beyond_64_bits_is_an_error() {
        let e = build("{:index 0 :type :ok :process 99999999999999999999 :value []}").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.edn:1:1: process 99999999999999999999 does not fit in 64 bits"
        );
    }

    fn txn(id: i64, t0: i64, t1: Option<i64>, outcome: Outcome) -> RawTxn {
        RawTxn {
            id,
            process: id % 2,
            t0,
            t1,
            outcome,
            mops: vec![RawMop {
                kind: MopKind::Append,
                key: Datum::Int(1),
                value: RawValue::Scalar(Datum::Int(id)),
            }],
            line: id as u32,
            col: 1,
        }
    }

    #[test]
    fn onelite_event_order_comes_from_times_with_invocations_first_on_ties() {
        let mut b = HistoryBuilder::new("t.jsonl");
        b.push_txn(txn(1, 0, Some(10), Outcome::Ok)).unwrap();
        b.push_txn(txn(2, 10, Some(20), Outcome::Ok)).unwrap();
        b.push_txn(txn(3, 5, None, Outcome::Info)).unwrap();
        b.push_txn(txn(4, 21, Some(22), Outcome::Fail)).unwrap();
        let h = b.finish().unwrap();
        // events: 0:inv1 1:inv3 2:inv2 (t=10 invocation before) 3:done1 4:done2 5:inv4 6:done4
        let seqs: Vec<_> = h
            .txns
            .iter()
            .map(|t| (t.index, t.invoke_seq, t.complete_seq))
            .collect();
        assert_eq!(
            seqs,
            vec![
                (3, Some(1), None),
                (1, Some(0), Some(3)),
                (2, Some(2), Some(4)),
                (4, Some(5), Some(6)),
            ]
        );
        // txn 1 ends exactly when 2 begins: not before it in real time.
        assert!(h.txns[1].complete_seq > h.txns[2].invoke_seq);
        assert!(h.has_invocations);
        assert_eq!(
            (h.txns[1].invoke_time, h.txns[1].complete_time),
            (Some(0), Some(10))
        );
        assert_eq!(h.mops(1).len(), 1);
    }

    #[test]
    fn onelite_errors() {
        let mut b = HistoryBuilder::new("t.jsonl");
        b.push_txn(txn(1, 0, Some(10), Outcome::Ok)).unwrap();
        assert_eq!(
            b.push_txn(txn(1, 0, Some(10), Outcome::Ok))
                .unwrap_err()
                .to_string(),
            "t.jsonl:1:1: duplicate transaction id 1"
        );
        assert_eq!(
            b.push_txn(txn(2, 10, Some(9), Outcome::Ok))
                .unwrap_err()
                .to_string(),
            "t.jsonl:2:1: t1 (9) is before t0 (10)"
        );
        let op = EdnReader::new("{:type :ok :process 0}".as_bytes(), "t")
            .next_op()
            .unwrap()
            .unwrap();
        assert_eq!(
            b.push(op.clone()).unwrap_err().what(),
            "cannot mix Jepsen ops with OneLite transactions"
        );
        let mut b = HistoryBuilder::new("t.jsonl");
        b.push(op).unwrap();
        assert_eq!(
            b.push_txn(txn(1, 0, Some(1), Outcome::Ok))
                .unwrap_err()
                .what(),
            "cannot mix OneLite transactions with Jepsen ops"
        );
    }
}
