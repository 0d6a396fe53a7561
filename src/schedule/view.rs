//! View serializability of the committed projection: is there a serial order
//! with the same reads-from relation and the same final write of each item?
//! NP-complete (Papadimitriou 1979), so decided by an exact backtracking
//! search up to [`MAX_VIEW_TXNS`] transactions.

use super::precedence::Ctx;
use super::{ItemId, OpKind};
use rustc_hash::{FxHashMap, FxHashSet};

/// Largest number of (non-aborted) transactions for the exact search. Past
/// it the answer is still exact when the schedule is conflict serializable
/// or has no blind writes; otherwise it is `None`.
pub const MAX_VIEW_TXNS: usize = 12;

/// Search nodes visited before giving up (a guard on time, far above what
/// the pruned search needs for 12 transactions in practice).
const NODE_BUDGET: u64 = 5_000_000;

/// "Reads from the initial state", in place of a transaction id.
const INIT: u32 = u32::MAX;

pub(crate) struct ViewResult {
    pub answer: Option<bool>,
    /// Dense ids of a view-equivalent serial order.
    pub order: Option<Vec<u32>>,
    pub reason: String,
}

fn no(reason: String) -> ViewResult {
    ViewResult {
        answer: Some(false),
        order: None,
        reason,
    }
}

/// What a serial order must reproduce, per transaction (compact ids).
struct Constraints {
    /// Dense id of each compact id.
    dense: Vec<u32>,
    /// Reads of another transaction's write (or of the initial state), at
    /// most one source per item: (item, compact source or INIT).
    ext_reads: Vec<Vec<(ItemId, u32)>>,
    /// Items written, each once.
    writes: Vec<Vec<ItemId>>,
    /// Final writer of each item (compact id or INIT).
    final_writer: Vec<u32>,
    blind_write: bool,
}

/// Derives the constraints, or explains why no serial order can meet them.
fn constraints(ctx: &Ctx) -> Result<Constraints, String> {
    let s = ctx.s;
    let n_items = s.items().len();
    let mut compact: FxHashMap<u32, u32> = FxHashMap::default();
    let mut dense = Vec::new();
    let proj: Vec<usize> = ctx.projection().collect();
    for &i in &proj {
        compact.entry(ctx.txn[i]).or_insert_with(|| {
            dense.push(ctx.txn[i]);
            (dense.len() - 1) as u32
        });
    }
    let m = dense.len();
    // Each transaction's last write of each item, over the whole projection.
    let mut final_own: FxHashMap<(u32, ItemId), usize> = FxHashMap::default();
    for &i in &proj {
        let op = &s.ops()[i];
        if op.kind == OpKind::Write {
            final_own.insert((compact[&ctx.txn[i]], op.item.unwrap_or_default()), i);
        }
    }
    let mut last_write: Vec<Option<usize>> = vec![None; n_items];
    let mut own_write: FxHashMap<(u32, ItemId), usize> = FxHashMap::default();
    let mut has_read: FxHashSet<(u32, ItemId)> = FxHashSet::default();
    let mut ext: FxHashMap<(u32, ItemId), (u32, usize)> = FxHashMap::default();
    let mut ext_reads = vec![Vec::new(); m];
    let mut writes = vec![Vec::new(); m];
    let mut blind_write = false;
    for &i in &proj {
        let op = &s.ops()[i];
        let t = compact[&ctx.txn[i]];
        let x = op.item.unwrap_or_default();
        let xs = s.item_name(x);
        if op.kind == OpKind::Write {
            blind_write |= !has_read.contains(&(t, x));
            if own_write.insert((t, x), i).is_none() {
                writes[t as usize].push(x);
            }
            last_write[x as usize] = Some(i);
            continue;
        }
        has_read.insert((t, x));
        let src = last_write[x as usize];
        if let Some(&own) = own_write.get(&(t, x)) {
            if src != Some(own) {
                let w = src.unwrap_or(own);
                return Err(format!(
                    "{} reads {xs} from {}, but in every serial order it reads its own earlier write {}",
                    ctx.op_ref(i),
                    ctx.op_ref(w),
                    ctx.op_ref(own)
                ));
            }
            continue;
        }
        let source = match src {
            None => INIT,
            Some(w) => {
                let u = compact[&ctx.txn[w]];
                let last = final_own[&(u, x)];
                if last != w {
                    return Err(format!(
                        "{} reads {xs} from {}, which its own transaction overwrites later ({}), so no serial order shows it",
                        ctx.op_ref(i),
                        ctx.op_ref(w),
                        ctx.op_ref(last)
                    ));
                }
                u
            }
        };
        match ext.get(&(t, x)) {
            Some(&(prev, at)) if prev != source => {
                return Err(format!(
                    "{} and {} read {xs} from different writes, but in a serial order both see the same one",
                    ctx.op_ref(at),
                    ctx.op_ref(i)
                ));
            }
            Some(_) => {}
            None => {
                ext.insert((t, x), (source, i));
                ext_reads[t as usize].push((x, source));
            }
        }
    }
    let final_writer = last_write
        .iter()
        .map(|w| w.map_or(INIT, |w| compact[&ctx.txn[w]]))
        .collect();
    Ok(Constraints {
        dense,
        ext_reads,
        writes,
        final_writer,
        blind_write,
    })
}

pub(crate) fn view_serializability(
    ctx: &Ctx,
    conflict_order: Option<&[u32]>,
    limit: usize,
) -> ViewResult {
    if let Some(order) = conflict_order {
        return ViewResult {
            answer: Some(true),
            order: Some(order.to_vec()),
            reason: "conflict-serializable, hence view-serializable".into(),
        };
    }
    let c = match constraints(ctx) {
        Ok(c) => c,
        Err(why) => return no(why),
    };
    if !c.blind_write {
        // Every view-serializable schedule that is not conflict serializable
        // has a blind write (Silberschatz, Korth & Sudarshan, on view
        // serializability); tests/it/schedule_props.rs checks it by brute force.
        return no(
            "not conflict-serializable and no blind writes, hence not view-serializable".into(),
        );
    }
    let m = c.dense.len();
    // The search keeps placed transactions in a u64 mask.
    let limit = limit.min(63);
    if m > limit {
        return ViewResult {
            answer: None,
            order: None,
            reason: format!(
                "{m} transactions with blind writes: the exact search stops at {limit}"
            ),
        };
    }
    let mut search = Search::new(&c);
    match search.run() {
        Some(true) => ViewResult {
            answer: Some(true),
            order: Some(search.order.iter().map(|&k| c.dense[k as usize]).collect()),
            reason: "a serial order with the same reads-from and final writes exists (blind writes make it not conflict-serializable)".into(),
        },
        Some(false) => no("no serial order has the same reads-from relation and final writes".into()),
        None => ViewResult {
            answer: None,
            order: None,
            reason: format!("search stopped after {NODE_BUDGET} steps"),
        },
    }
}

/// Depth-first search over serial orders, placing one transaction at a
/// time; a placement must give each of its reads the required writer and
/// must not cut off a pending read or precede a final write's writer.
struct Search<'a> {
    c: &'a Constraints,
    placed: u64,
    last_writer: Vec<u32>,
    /// (item, source) → number of unplaced transactions reading it.
    pending: FxHashMap<(ItemId, u32), u32>,
    /// Items someone reads from another transaction (the state that matters).
    read_items: Vec<ItemId>,
    failed: FxHashSet<(u64, Vec<u32>)>,
    order: Vec<u32>,
    nodes: u64,
}

impl<'a> Search<'a> {
    fn new(c: &'a Constraints) -> Self {
        let mut pending: FxHashMap<(ItemId, u32), u32> = FxHashMap::default();
        let mut read_items = Vec::new();
        for reads in &c.ext_reads {
            for &(x, src) in reads {
                *pending.entry((x, src)).or_default() += 1;
                read_items.push(x);
            }
        }
        read_items.sort_unstable();
        read_items.dedup();
        Search {
            c,
            placed: 0,
            last_writer: vec![INIT; c.final_writer.len()],
            pending,
            read_items,
            failed: FxHashSet::default(),
            order: Vec::new(),
            nodes: 0,
        }
    }

    fn can_place(&self, k: u32) -> bool {
        let c = self.c;
        for &(x, src) in &c.ext_reads[k as usize] {
            if self.last_writer[x as usize] != src {
                return false;
            }
        }
        for &x in &c.writes[k as usize] {
            let f = c.final_writer[x as usize];
            if f != k && f != INIT && self.placed & (1 << f) != 0 {
                return false;
            }
            let cur = self.last_writer[x as usize];
            let mut waiting = self.pending.get(&(x, cur)).copied().unwrap_or(0);
            if c.ext_reads[k as usize].contains(&(x, cur)) {
                waiting -= 1;
            }
            if waiting > 0 {
                return false;
            }
        }
        true
    }

    /// `Some(true)` with `self.order` complete, `Some(false)`, or `None`
    /// when the node budget ran out.
    fn run(&mut self) -> Option<bool> {
        let m = self.c.dense.len() as u32;
        if self.order.len() == m as usize {
            return Some(true);
        }
        let key = (
            self.placed,
            self.read_items
                .iter()
                .map(|&x| self.last_writer[x as usize])
                .collect::<Vec<_>>(),
        );
        if self.failed.contains(&key) {
            return Some(false);
        }
        for k in 0..m {
            if self.placed & (1 << k) != 0 || !self.can_place(k) {
                continue;
            }
            self.nodes += 1;
            if self.nodes > NODE_BUDGET {
                return None;
            }
            let c = self.c;
            let saved: Vec<u32> = c.writes[k as usize]
                .iter()
                .map(|&x| self.last_writer[x as usize])
                .collect();
            for &(x, src) in &c.ext_reads[k as usize] {
                *self.pending.entry((x, src)).or_default() -= 1;
            }
            for &x in &c.writes[k as usize] {
                self.last_writer[x as usize] = k;
            }
            self.placed |= 1 << k;
            self.order.push(k);
            match self.run() {
                Some(false) => {}
                other => return other,
            }
            self.order.pop();
            self.placed &= !(1 << k);
            for (&x, &w) in c.writes[k as usize].iter().zip(&saved) {
                self.last_writer[x as usize] = w;
            }
            for &(x, src) in &c.ext_reads[k as usize] {
                *self.pending.entry((x, src)).or_default() += 1;
            }
        }
        self.failed.insert(key);
        Some(false)
    }
}
