//! The facts every analysis of a schedule reads: dense transaction ids with
//! each one's commit or abort ([`Ctx`]), and the precedence graph with a
//! witness per edge. Below `analyze`, `recover`, `shapes` and `view`, which
//! all read it; `analyze` assembles their answers.

use super::report::OpRef;
use super::{OpKind, Schedule};
use crate::graph::Rels;
use rustc_hash::{FxHashMap, FxHashSet};

/// A schedule with dense transaction ids (order of first appearance) and
/// each transaction's commit or abort, shared by the analyses.
pub(crate) struct Ctx<'a> {
    pub s: &'a Schedule,
    /// Dense transaction id of each operation.
    pub txn: Vec<u32>,
    /// Dense id → transaction number as written.
    pub numbers: Vec<u32>,
    /// Dense id → its commit or abort (kind, op index), if any.
    pub end: Vec<Option<(OpKind, usize)>>,
}

impl<'a> Ctx<'a> {
    pub fn new(s: &'a Schedule) -> Self {
        let mut dense: FxHashMap<u32, u32> = FxHashMap::default();
        let mut numbers = Vec::new();
        let mut end = Vec::new();
        let mut txn = Vec::with_capacity(s.ops().len());
        for (i, op) in s.ops().iter().enumerate() {
            let t = *dense.entry(op.txn).or_insert_with(|| {
                numbers.push(op.txn);
                end.push(None);
                (numbers.len() - 1) as u32
            });
            txn.push(t);
            if matches!(op.kind, OpKind::Commit | OpKind::Abort) {
                end[t as usize] = Some((op.kind, i));
            }
        }
        Ctx {
            s,
            txn,
            numbers,
            end,
        }
    }

    pub fn op_ref(&self, i: usize) -> OpRef {
        let op = &self.s.ops()[i];
        OpRef {
            step: (i + 1) as u32,
            line: op.line,
            column: op.column,
            op: self.s.op_text(i),
        }
    }

    pub fn aborted(&self, t: u32) -> bool {
        matches!(self.end[t as usize], Some((OpKind::Abort, _)))
    }

    /// Indices of the reads and writes of transactions that did not abort:
    /// the projection the serializability notions judge.
    pub fn projection(&self) -> impl Iterator<Item = usize> + '_ {
        self.s.ops().iter().enumerate().filter_map(move |(i, op)| {
            (op.item.is_some() && !self.aborted(self.txn[i])).then_some(i)
        })
    }

    pub fn numbers_of(&self, ts: &[u32]) -> Vec<u32> {
        ts.iter().map(|&t| self.numbers[t as usize]).collect()
    }
}

/// The first conflict of each kind behind one edge: (earlier op, later op).
#[derive(Clone, Copy, Default)]
pub(crate) struct Witness {
    pub ww: Option<(usize, usize)>,
    pub wr: Option<(usize, usize)>,
    pub rw: Option<(usize, usize)>,
}

impl Witness {
    /// Keeps `pair` as the witness of `rel`, unless it has one already.
    fn note(&mut self, rel: Rels, pair: (usize, usize)) {
        let slot = match rel {
            Rels::WW => &mut self.ww,
            Rels::WR => &mut self.wr,
            _ => &mut self.rw,
        };
        slot.get_or_insert(pair);
    }

    pub fn rels(&self) -> Rels {
        let bit = |p: Option<(usize, usize)>, r: Rels| if p.is_some() { r } else { Rels::NONE };
        bit(self.ww, Rels::WW) | bit(self.wr, Rels::WR) | bit(self.rw, Rels::RW)
    }
}

/// Precedence graph over the projection, with the witnesses of each edge.
pub(crate) struct Precedence {
    /// `(from, to)` → witnesses, dense ids.
    pub edges: FxHashMap<(u32, u32), Witness>,
}

/// Builds the precedence graph keeping, per item, only conflicts between
/// adjacent accesses: last writer → each reader, readers since the last
/// write → the next writer, last writer → next writer. Any other conflict
/// (a before b on x) is implied through the accesses of x between them, so
/// reachability — hence cycles and serial orders — equals the full graph's.
/// Each read lands in one reader list, so the work is O(ops + edges).
pub(crate) fn precedence(ctx: &Ctx) -> Precedence {
    let s = ctx.s;
    let n_items = s.items().len();
    let mut last_writer: Vec<Option<usize>> = vec![None; n_items];
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); n_items];
    let mut edges: FxHashMap<(u32, u32), Witness> = FxHashMap::default();
    let mut add = |a: usize, b: usize, rel: Rels| {
        let (ta, tb) = (ctx.txn[a], ctx.txn[b]);
        if ta == tb {
            return;
        }
        edges.entry((ta, tb)).or_default().note(rel, (a, b));
    };
    for i in ctx.projection() {
        let op = &s.ops()[i];
        let x = op.item.unwrap_or_default() as usize;
        if op.kind == OpKind::Read {
            if let Some(w) = last_writer[x] {
                add(w, i, Rels::WR);
            }
            readers[x].push(i);
        } else {
            for r in readers[x].drain(..) {
                add(r, i, Rels::RW);
            }
            if let Some(w) = last_writer[x] {
                add(w, i, Rels::WW);
            }
            last_writer[x] = Some(i);
        }
    }
    Precedence { edges }
}

/// Most conflict edges the report lists. Past it (or past
/// `MAX_EDGE_WORK` steps) the report lists the edges between adjacent
/// accesses instead, and says so: the full graph of 20,000 writers of one
/// item has 200 million edges.
pub const MAX_LISTED_EDGES: usize = 10_000;
/// Steps [`all_conflicts`] may take before it gives up.
const MAX_EDGE_WORK: usize = 64 * MAX_LISTED_EDGES;

/// Every conflict edge of the textbook precedence graph (T1 → T3 in
/// `w1(x) w2(x) w3(x)` too), with the first witness of each kind: what the
/// report lists; `None` past [`MAX_LISTED_EDGES`]. Per item it keeps each
/// transaction's first read and first write: a read meets the earlier
/// writers, a write the earlier writers and readers.
pub(crate) fn all_conflicts(ctx: &Ctx) -> Option<FxHashMap<(u32, u32), Witness>> {
    let s = ctx.s;
    let n_items = s.items().len();
    // Per item, in order: (txn, its first read) and (txn, its first write).
    let mut readers: Vec<Vec<(u32, usize)>> = vec![Vec::new(); n_items];
    let mut writers: Vec<Vec<(u32, usize)>> = vec![Vec::new(); n_items];
    let mut listed: FxHashSet<(usize, u32, bool)> = FxHashSet::default();
    let mut edges: FxHashMap<(u32, u32), Witness> = FxHashMap::default();
    let mut work = 0usize;
    for b in ctx.projection() {
        let op = &s.ops()[b];
        let x = op.item.unwrap_or_default() as usize;
        let tb = ctx.txn[b];
        let write = op.kind != OpKind::Read;
        let earlier: &[(Rels, &Vec<(u32, usize)>)] = if write {
            &[(Rels::WW, &writers[x]), (Rels::RW, &readers[x])]
        } else {
            &[(Rels::WR, &writers[x])]
        };
        for &(rel, list) in earlier {
            work += list.len();
            for &(ta, a) in list.iter().filter(|e| e.0 != tb) {
                edges.entry((ta, tb)).or_default().note(rel, (a, b));
            }
        }
        if edges.len() > MAX_LISTED_EDGES || work > MAX_EDGE_WORK {
            return None;
        }
        if listed.insert((x, tb, write)) {
            let list = if write {
                &mut writers[x]
            } else {
                &mut readers[x]
            };
            list.push((tb, b));
        }
    }
    Some(edges)
}
