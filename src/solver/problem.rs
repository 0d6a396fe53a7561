//! From a history to the per-key facts the solver reasons about.
//!
//! In any serial order (or SI execution) a transaction's appends to a key are
//! one contiguous *block* of that key's list, and every committed read sees
//! a prefix of the key's final list made of whole blocks. So, per key:
//! - every `ok` read, minus the transaction's own earlier appends, is a
//!   prefix of the longest read `L` (else: incompatible order);
//! - the distinct read lengths cut `L` into *segments*; no block crosses a
//!   cut (a read whose length cuts through a block is a contradiction);
//! - a segment is spelled by whole blocks: blocks with one repeated value
//!   ("uniform", the common case) fill maximal runs of that value in any
//!   order, blocks mixing values sit at fixed places. When mixed blocks can
//!   be placed in more than one way, each way is an *alternative*.
//!
//! A *bin* is one run or one mixed block's place within one alternative; the
//! solver decides which transactions fill which bins.

use super::DupKind;
use crate::anomaly::AnomalyKind;
use crate::history::{History, KeyId, MopKind, Observed, Outcome, TxnId, ValId};
use crate::proof::{NotListAppend, Proof, Reason};
use rustc_hash::FxHashMap;

/// A transaction's contiguous appends to one key.
#[derive(Clone, Debug)]
pub struct Writer {
    pub txn: TxnId,
    pub outcome: Outcome,
    /// The appended values, in program order.
    pub block: Vec<ValId>,
    /// The length the transaction itself read before its first append, when
    /// it read the key (`ok` only): its block must start exactly there.
    pub pin: Option<u32>,
}

impl Writer {
    /// The single value of a block that repeats one value.
    pub fn uniform(&self) -> Option<ValId> {
        let v = *self.block.first()?;
        self.block.iter().all(|&x| x == v).then_some(v)
    }
    pub fn weight(&self) -> u32 {
        self.block.len() as u32
    }
}

/// An `ok` transaction's external view of a key (its read minus its own
/// earlier appends): the prefix of length `cut` of the key's list.
#[derive(Clone, Copy, Debug)]
pub struct Reader {
    pub txn: TxnId,
    pub cut: u32,
    /// The micro-op index of the (first) read, for proofs.
    pub mop: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BinKind {
    /// A maximal run of `v`: filled by uniform blocks of `v` in any order.
    Uniform(ValId),
    /// One mixed block's exact place.
    Exact,
}

#[derive(Clone, Debug)]
pub struct Bin {
    pub kind: BinKind,
    pub start: u32,
    pub end: u32,
    /// Candidate writers (indices into the key's `writers`).
    pub cands: Vec<u32>,
}

/// One way to spell a segment: its bins, left to right.
#[derive(Clone, Debug)]
pub struct Alt {
    pub bins: Vec<u32>,
}

#[derive(Clone, Debug)]
pub struct Segment {
    pub start: u32,
    pub end: u32,
    pub alts: Vec<Alt>,
}

/// Everything about one key.
#[derive(Clone, Debug)]
pub struct KeyFacts {
    pub key: KeyId,
    /// The longest `ok` read (external part): the observed prefix of the
    /// key's version order.
    pub list: Vec<ValId>,
    /// Who read `list` in full (for proofs).
    pub longest: Option<TxnId>,
    pub readers: Vec<Reader>,
    /// `ok` and `info` writers (the ones that may have committed).
    pub writers: Vec<Writer>,
    /// `fail` writers, kept only to explain aborted reads.
    pub failed: Vec<Writer>,
    pub segments: Vec<Segment>,
    pub bins: Vec<Bin>,
}

/// Each transaction's external reads (key, length) and appends (key,
/// writer), by key index: the per-transaction view of [`KeyFacts`] that the
/// replays walk (snapshot placement and read committed's commit order).
pub struct TxnOps {
    /// Per transaction: (key index, how much of the observed list it read).
    pub reads: Vec<Vec<(u32, u32)>>,
    /// Per transaction: (key index, its index among the key's writers).
    pub appends: Vec<Vec<(u32, u32)>>,
}

impl TxnOps {
    /// The view of `keys` for a history of `txns` transactions.
    pub fn new(txns: usize, keys: &[KeyFacts]) -> TxnOps {
        let mut reads: Vec<Vec<(u32, u32)>> = vec![Vec::new(); txns];
        let mut appends: Vec<Vec<(u32, u32)>> = vec![Vec::new(); txns];
        for (ki, kf) in keys.iter().enumerate() {
            for r in &kf.readers {
                reads[r.txn as usize].push((ki as u32, r.cut));
            }
            for (wi, w) in kf.writers.iter().enumerate() {
                appends[w.txn as usize].push((ki as u32, wi as u32));
            }
        }
        TxnOps { reads, appends }
    }
}

/// A reason the history cannot satisfy any of the levels, found while
/// reading it (no search needed).
#[derive(Clone, Debug)]
pub struct Contradiction {
    /// Which anomaly.
    pub kind: DupKind,
    pub txns: Vec<TxnId>,
    pub keys: Vec<KeyId>,
    /// Why.
    pub proof: Proof,
}

/// Why extraction gave up without deciding.
#[derive(Clone, Debug)]
pub enum Extract {
    /// The reads contradict every level (boxed: a proof is large beside
    /// the other outcomes).
    Contradiction(Box<Contradiction>),
    /// A limit was reached, or the history is not a list-append one.
    Undecided(Reason),
}

/// The per-key facts of `h`; fails on a contradiction found on the way, on
/// a limit, or on a history that is not list-append.
pub fn extract(h: &History, max_alts: usize) -> Result<Vec<KeyFacts>, Extract> {
    extract_with(h, max_alts, true).map(|(keys, _)| keys)
}

/// [`extract`]; with `serial` false, for read committed: no writer is
/// pinned to the length it read (others may commit between its read and
/// its append), and a transaction whose reads of a key see two states of
/// the others' appends is one reader per state (a non-repeatable read);
/// the first such internal anomaly is returned beside the facts.
pub fn extract_with(
    h: &History,
    max_alts: usize,
    serial: bool,
) -> Result<(Vec<KeyFacts>, Option<Contradiction>), Extract> {
    let mut internal: Option<Contradiction> = None;
    let mut extra: Vec<(KeyId, Vec<ValId>, u32)> = Vec::new();
    let mut keys: Vec<KeyFacts> = Vec::new();
    let mut index: FxHashMap<KeyId, u32> = FxHashMap::default();
    let mut slot = |k: KeyId, keys: &mut Vec<KeyFacts>| -> usize {
        *index.entry(k).or_insert_with(|| {
            keys.push(KeyFacts {
                key: k,
                list: Vec::new(),
                longest: None,
                readers: Vec::new(),
                writers: Vec::new(),
                failed: Vec::new(),
                segments: Vec::new(),
                bins: Vec::new(),
            });
            (keys.len() - 1) as u32
        }) as usize
    };
    // Per transaction: its blocks and external reads, key by key.
    let mut blocks: FxHashMap<KeyId, (Vec<ValId>, Option<u32>)> = FxHashMap::default();
    let mut views: FxHashMap<KeyId, (Vec<ValId>, u32)> = FxHashMap::default();
    for (t, txn) in h.txns.iter().enumerate() {
        let t = t as TxnId;
        blocks.clear();
        views.clear();
        extra.clear();
        let mut order: Vec<KeyId> = Vec::new();
        for (i, m) in h.mops(t).iter().enumerate() {
            match (m.kind, m.value) {
                (MopKind::Write, _) => {
                    return Err(Extract::Undecided(Reason::NotListAppend {
                        txn: t,
                        what: NotListAppend::RegisterWrite,
                    }))
                }
                (MopKind::Append, Observed::Scalar(v)) => {
                    if !blocks.contains_key(&m.key) && !views.contains_key(&m.key) {
                        order.push(m.key);
                    }
                    blocks.entry(m.key).or_default().0.push(v);
                }
                (MopKind::Append, _) => {
                    return Err(Extract::Undecided(Reason::NotListAppend {
                        txn: t,
                        what: NotListAppend::CompoundAppend,
                    }))
                }
                (MopKind::Read, o) => {
                    if txn.outcome != Outcome::Ok {
                        continue; // info reads are not trusted; fail ones never happened
                    }
                    let seen: &[ValId] = match o {
                        Observed::List { .. } => h.list(o).unwrap_or(&[]),
                        Observed::Nil => &[],
                        Observed::Scalar(_) => {
                            return Err(Extract::Undecided(Reason::NotListAppend {
                                txn: t,
                                what: NotListAppend::ScalarRead,
                            }))
                        }
                    };
                    let own: &[ValId] = blocks.get(&m.key).map(|b| b.0.as_slice()).unwrap_or(&[]);
                    if !seen.ends_with(own) {
                        return Err(Extract::Contradiction(Box::new(Contradiction {
                            kind: AnomalyKind::Internal.into(),
                            txns: vec![t],
                            keys: vec![m.key],
                            proof: Proof::OwnAppendsUnread {
                                txn: t,
                                key: m.key,
                                appended: own.to_vec(),
                                read: seen.to_vec(),
                            },
                        })));
                    }
                    let ext = &seen[..seen.len() - own.len()];
                    match views.get(&m.key) {
                        Some((prev, _)) if prev.as_slice() != ext => {
                            let c = Contradiction {
                                kind: AnomalyKind::Internal.into(),
                                txns: vec![t],
                                keys: vec![m.key],
                                proof: Proof::TwoStates {
                                    txn: t,
                                    key: m.key,
                                    first: prev.clone(),
                                    second: ext.to_vec(),
                                },
                            };
                            if serial {
                                return Err(Extract::Contradiction(Box::new(c)));
                            }
                            internal.get_or_insert(c);
                            extra.push((m.key, ext.to_vec(), i as u32));
                        }
                        Some(_) => {}
                        None => {
                            if !blocks.contains_key(&m.key) && !views.contains_key(&m.key) {
                                order.push(m.key);
                            }
                            views.insert(m.key, (ext.to_vec(), i as u32));
                        }
                    }
                }
            }
        }
        for &k in &order {
            let ks = slot(k, &mut keys);
            let view = views.get(&k);
            if let Some((ext, mop)) = view {
                keys[ks].readers.push(Reader {
                    txn: t,
                    cut: ext.len() as u32,
                    mop: *mop,
                });
                if ext.len() > keys[ks].list.len() {
                    keys[ks].list = ext.clone();
                    keys[ks].longest = Some(t);
                }
            }
            if let Some((b, _)) = blocks.get(&k) {
                let w = Writer {
                    txn: t,
                    outcome: txn.outcome,
                    block: b.clone(),
                    pin: view.filter(|_| serial).map(|(e, _)| e.len() as u32),
                };
                if txn.outcome == Outcome::Fail {
                    keys[ks].failed.push(w);
                } else {
                    keys[ks].writers.push(w);
                }
            }
        }
        for (k, ext, mop) in extra.drain(..) {
            let ks = slot(k, &mut keys);
            keys[ks].readers.push(Reader {
                txn: t,
                cut: ext.len() as u32,
                mop,
            });
            if ext.len() > keys[ks].list.len() {
                keys[ks].list = ext;
                keys[ks].longest = Some(t);
            }
        }
    }
    // Reads must be prefixes of the longest one: re-read each view.
    for kf in &mut keys {
        check_prefixes(h, kf)?;
        build_segments(kf, max_alts)?;
    }
    Ok((keys, internal))
}

/// Every read of the key is a prefix of the longest read.
fn check_prefixes(h: &History, kf: &KeyFacts) -> Result<(), Extract> {
    for r in &kf.readers {
        let ext = external(h, r.txn, kf.key, r.mop);
        if !kf.list.starts_with(&ext) {
            let other = kf.longest.unwrap_or(r.txn);
            return Err(Extract::Contradiction(Box::new(Contradiction {
                kind: AnomalyKind::IncompatibleOrder.into(),
                txns: vec![r.txn, other],
                keys: vec![kf.key],
                proof: Proof::IncompatibleReads {
                    key: kf.key,
                    txn: r.txn,
                    read: ext,
                    other,
                    other_read: kf.list.clone(),
                },
            })));
        }
    }
    Ok(())
}

/// The read of `k` at micro-op `mop` of `t`, minus `t`'s own earlier appends.
fn external(h: &History, t: TxnId, k: KeyId, mop: u32) -> Vec<ValId> {
    let mut own = 0usize;
    for (i, m) in h.mops(t).iter().enumerate() {
        if m.key != k {
            continue;
        }
        match m.kind {
            MopKind::Append => own += 1,
            MopKind::Read if i as u32 == mop => {
                let seen = h.list(m.value).unwrap_or(&[]);
                return seen[..seen.len().saturating_sub(own)].to_vec();
            }
            MopKind::Read | MopKind::Write => {}
        }
    }
    Vec::new()
}

/// Cuts the longest read at every read length, then spells each segment.
fn build_segments(kf: &mut KeyFacts, max_alts: usize) -> Result<(), Extract> {
    let n = kf.list.len() as u32;
    let mut cuts: Vec<u32> = kf.readers.iter().map(|r| r.cut).collect();
    cuts.push(0);
    cuts.push(n);
    cuts.sort_unstable();
    cuts.dedup();
    // Distinct words among committed-possible blocks.
    let mut uniform_weights: FxHashMap<ValId, Vec<u32>> = FxHashMap::default();
    let mut by_uniform: FxHashMap<ValId, Vec<u32>> = FxHashMap::default();
    let mut mixed: Vec<Vec<ValId>> = Vec::new();
    let mut by_mixed: Vec<Vec<u32>> = Vec::new();
    for (wi, w) in kf.writers.iter().enumerate() {
        match w.uniform() {
            Some(v) => {
                uniform_weights.entry(v).or_default().push(w.weight());
                by_uniform.entry(v).or_default().push(wi as u32);
            }
            None => match mixed.iter().position(|m| *m == w.block) {
                Some(mi) => by_mixed[mi].push(wi as u32),
                None => {
                    mixed.push(w.block.clone());
                    by_mixed.push(vec![wi as u32]);
                }
            },
        }
    }
    // Which run lengths each value's uniform blocks can fill exactly.
    let mut fillable: FxHashMap<ValId, Vec<bool>> = FxHashMap::default();
    for (&v, ws) in &uniform_weights {
        let mut can = vec![false; n as usize + 1];
        can[0] = true;
        for &w in ws {
            for s in (w as usize..=n as usize).rev() {
                if can[s - w as usize] {
                    can[s] = true;
                }
            }
        }
        fillable.insert(v, can);
    }
    for c in cuts.windows(2) {
        let (a, b) = (c[0], c[1]);
        let word = &kf.list[a as usize..b as usize];
        // Mixed placements starting at each offset.
        let mut at: Vec<Vec<u32>> = vec![Vec::new(); word.len()];
        for (mi, m) in mixed.iter().enumerate() {
            for p in 0..word.len() {
                if word[p..].starts_with(m) {
                    at[p].push(mi as u32);
                }
            }
        }
        let mut alts: Vec<Vec<(u32, u32, Option<u32>)>> = Vec::new();
        let mut cur: Vec<(u32, u32, Option<u32>)> = Vec::new();
        let ok_run = |v: ValId, len: u32| fillable.get(&v).is_some_and(|c| c[len as usize]);
        let mut overflow = false;
        spell(
            word,
            &at,
            &mixed,
            0,
            &mut cur,
            &mut alts,
            &ok_run,
            max_alts,
            &mut overflow,
        );
        if overflow {
            return Err(Extract::Undecided(Reason::TooManyPlacements {
                key: kf.key,
                start: a,
                end: b,
                max: max_alts,
            }));
        }
        if alts.is_empty() {
            return Err(Extract::Contradiction(Box::new(unspellable(kf, a, b))));
        }
        let mut seg = Segment {
            start: a,
            end: b,
            alts: Vec::new(),
        };
        for alt in alts {
            let mut bins = Vec::new();
            for (s, e, m) in alt {
                let (s, e) = (a + s, a + e);
                // A writer that read the key first can only start where it read.
                let fits = |w: u32| kf.writers[w as usize].pin.is_none_or(|c| c == s);
                let (kind, cands) = match m {
                    Some(mi) => (
                        BinKind::Exact,
                        by_mixed[mi as usize]
                            .iter()
                            .copied()
                            .filter(|&w| fits(w))
                            .collect(),
                    ),
                    None => {
                        let v = word[(s - a) as usize];
                        let len = e - s;
                        let ws = by_uniform.get(&v).map(Vec::as_slice).unwrap_or(&[]);
                        let cands = ws
                            .iter()
                            .copied()
                            .filter(|&w| kf.writers[w as usize].weight() <= len && fits(w))
                            .collect();
                        (BinKind::Uniform(v), cands)
                    }
                };
                bins.push(kf.bins.len() as u32);
                kf.bins.push(Bin {
                    kind,
                    start: s,
                    end: e,
                    cands,
                });
            }
            seg.alts.push(Alt { bins });
        }
        kf.segments.push(seg);
    }
    // A writer that read the key before appending must start at that cut.
    for (wi, w) in kf.writers.iter().enumerate() {
        if let Some(c) = w.pin {
            let has = kf
                .bins
                .iter()
                .any(|b| b.start == c && b.cands.contains(&(wi as u32)));
            if c < n && !has {
                return Err(Extract::Contradiction(Box::new(Contradiction {
                    kind: AnomalyKind::DuplicateAppendsUnproducibleRead.into(),
                    txns: vec![w.txn, kf.longest.unwrap_or(w.txn)],
                    keys: vec![kf.key],
                    proof: Proof::PinnedAppend {
                        key: kf.key,
                        txn: w.txn,
                        prefix: kf.list[..c as usize].to_vec(),
                        block: w.block.clone(),
                        reader: kf.longest.unwrap_or(w.txn),
                        read: kf.list.clone(),
                    },
                })));
            }
        }
    }
    Ok(())
}

/// Enumerates the ways to spell `word` (offsets from 0) as runs and mixed
/// placements: `(start, end, Some(mixed index))` or `(start, end, None)` for
/// a run. Runs are maximal between placements and value changes.
#[allow(clippy::too_many_arguments)]
fn spell(
    word: &[ValId],
    at: &[Vec<u32>],
    mixed: &[Vec<ValId>],
    p: usize,
    cur: &mut Vec<(u32, u32, Option<u32>)>,
    out: &mut Vec<Vec<(u32, u32, Option<u32>)>>,
    ok_run: &dyn Fn(ValId, u32) -> bool,
    max: usize,
    overflow: &mut bool,
) {
    if *overflow {
        return;
    }
    if p == word.len() {
        if out.len() >= max {
            *overflow = true;
            return;
        }
        out.push(cur.clone());
        return;
    }
    // Option 1: a mixed block starts at p.
    for &mi in &at[p] {
        let e = p + mixed[mi as usize].len();
        cur.push((p as u32, e as u32, Some(mi)));
        spell(word, at, mixed, e, cur, out, ok_run, max, overflow);
        cur.pop();
    }
    // Option 2: a run of word[p] starts at p and ends at some q where a
    // mixed block starts, the value changes, or the segment ends.
    let v = word[p];
    let mut q = p + 1;
    loop {
        let at_end = q == word.len() || word[q] != v;
        if at_end || !at[q].is_empty() {
            if ok_run(v, (q - p) as u32) {
                cur.push((p as u32, q as u32, None));
                if at_end {
                    spell(word, at, mixed, q, cur, out, ok_run, max, overflow);
                } else {
                    // Only mixed blocks may follow a run of the same value.
                    for &mi in &at[q] {
                        let e = q + mixed[mi as usize].len();
                        cur.push((q as u32, e as u32, Some(mi)));
                        spell(word, at, mixed, e, cur, out, ok_run, max, overflow);
                        cur.pop();
                    }
                }
                cur.pop();
            }
            if at_end {
                break;
            }
        }
        q += 1;
    }
}

/// Explains why positions `a..b` of the key's list cannot be spelled.
fn unspellable(kf: &KeyFacts, a: u32, b: u32) -> Contradiction {
    let reader = kf
        .readers
        .iter()
        .find(|r| r.cut >= b)
        .map(|r| r.txn)
        .or(kf.longest)
        .unwrap_or(0);
    let seen = &kf.list[..b as usize];
    let word = &kf.list[a as usize..b as usize];
    let mut txns = vec![reader];
    // Values nobody committed-possible appended.
    for &v in word {
        if !kf.writers.iter().any(|w| w.block.contains(&v)) {
            let failed: Vec<&Writer> = kf.failed.iter().filter(|w| w.block.contains(&v)).collect();
            if !failed.is_empty() {
                txns.extend(failed.iter().map(|w| w.txn));
                return Contradiction {
                    kind: AnomalyKind::G1a.into(),
                    txns,
                    keys: vec![kf.key],
                    proof: Proof::FailedValue {
                        key: kf.key,
                        reader,
                        read: seen.to_vec(),
                        value: v,
                        failed: failed.iter().map(|w| w.txn).collect(),
                    },
                };
            }
            return Contradiction {
                kind: AnomalyKind::DuplicateAppendsUnproducibleRead.into(),
                txns,
                keys: vec![kf.key],
                proof: Proof::UnappendedValue {
                    key: kf.key,
                    reader,
                    read: seen.to_vec(),
                    value: v,
                },
            };
        }
    }
    // Values read more often than committed-possible appends supply them.
    for &v in word {
        let need = kf.list[..b as usize].iter().filter(|&&x| x == v).count();
        let have: usize = kf
            .writers
            .iter()
            .map(|w| w.block.iter().filter(|&&x| x == v).count())
            .sum();
        if have < need {
            let failed: Vec<&Writer> = kf.failed.iter().filter(|w| w.block.contains(&v)).collect();
            let kind = if failed.is_empty() {
                AnomalyKind::DuplicateAppendsUnproducibleRead
            } else {
                AnomalyKind::G1a
            };
            txns.extend(
                kf.writers
                    .iter()
                    .chain(failed.iter().copied())
                    .filter(|w| w.block.contains(&v))
                    .map(|w| w.txn),
            );
            txns.sort_unstable();
            txns.dedup();
            return Contradiction {
                kind: kind.into(),
                txns,
                keys: vec![kf.key],
                proof: Proof::TooFewAppends {
                    key: kf.key,
                    reader,
                    read: seen.to_vec(),
                    value: v,
                    read_times: need,
                    appended_times: have,
                    failed: failed.iter().map(|w| w.txn).collect(),
                },
            };
        }
    }
    let mut appends = Vec::new();
    for w in &kf.writers {
        if w.block.iter().any(|v| word.contains(v)) {
            txns.push(w.txn);
            appends.push((w.txn, w.block.clone()));
        }
    }
    // Who read the elements before the ones no sequence spells.
    let prior = (a > 0).then(|| {
        kf.readers
            .iter()
            .find(|r| r.cut == a)
            .map(|r| r.txn)
            .unwrap_or(reader)
    });
    txns.sort_unstable();
    txns.dedup();
    Contradiction {
        kind: AnomalyKind::DuplicateAppendsUnproducibleRead.into(),
        txns,
        keys: vec![kf.key],
        proof: Proof::Unspellable {
            key: kf.key,
            prior,
            reader,
            read: seen.to_vec(),
            from: a,
            appends,
        },
    }
}
