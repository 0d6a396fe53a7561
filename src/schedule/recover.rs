//! Reads-from with aborts, the recoverability classes (recoverable ⊃ ACA ⊃
//! strict; BHG ch. 2) and the shapes that depend on commits and aborts
//! (dirty read, dirty write). One pass over the whole schedule.

use super::precedence::Ctx;
use super::report::{ClassViolation, Shape};
use super::{ItemId, OpKind};
use rustc_hash::{FxHashMap, FxHashSet};

pub(crate) struct Recovery {
    pub recoverable: bool,
    pub aca: bool,
    pub strict: bool,
    /// First violation of each class that fails.
    pub violations: Vec<ClassViolation>,
    pub shapes: Vec<Shape>,
}

/// How transaction `u` ended, for explanations.
fn outcome_text(ctx: &Ctx, u: u32) -> String {
    match ctx.end[u as usize] {
        Some((OpKind::Commit, i)) => format!("committed later ({})", ctx.op_ref(i)),
        Some((_, i)) => format!("aborted later ({})", ctx.op_ref(i)),
        None => "never committed or aborted".to_string(),
    }
}

pub(crate) fn recovery(ctx: &Ctx) -> Recovery {
    let s = ctx.s;
    let n_items = s.items().len();
    let n = ctx.numbers.len();
    let mut committed_at: Vec<Option<usize>> = vec![None; n];
    let mut aborted_now = vec![false; n];
    // Writes per item, newest last; aborted writers are popped lazily.
    let mut stack: Vec<Vec<usize>> = vec![Vec::new(); n_items];
    // Writers of each item that have not yet committed or aborted.
    let mut open = OpenWriters::new(n_items);
    let mut last_write: FxHashMap<(u32, ItemId), usize> = FxHashMap::default();
    let mut written: Vec<Vec<ItemId>> = vec![Vec::new(); n];
    let mut rc: Option<ClassViolation> = None;
    let mut aca: Option<ClassViolation> = None;
    let mut st: Option<ClassViolation> = None;
    let mut shapes = ShapeSet::default();

    for (i, op) in s.ops().iter().enumerate() {
        let t = ctx.txn[i];
        let tn = op.txn;
        match (op.kind, op.item) {
            (OpKind::Read | OpKind::Write, Some(x)) => {
                let xs = s.item_name(x);
                // Strict: no read or overwrite of x while another writer of x is open.
                // Prefer the writer of the current value, else any open one.
                let top = stack[x as usize]
                    .last()
                    .map(|&w| ctx.txn[w])
                    .filter(|&u| u != t && open.contains(u, x));
                let other_open = top.or_else(|| open.other_than(x, t));
                if let Some(u) = other_open {
                    let w = last_write[&(u, x)];
                    let un = ctx.numbers[u as usize];
                    if st.is_none() {
                        let verb = if op.kind == OpKind::Read {
                            "reads"
                        } else {
                            "overwrites"
                        };
                        st = Some(ClassViolation {
                            class: "strict",
                            ops: vec![ctx.op_ref(w), ctx.op_ref(i)],
                            explanation: format!(
                                "T{tn} {verb} {xs} ({}) written by T{un} ({}) before T{un} committed or aborted",
                                ctx.op_ref(i),
                                ctx.op_ref(w)
                            ),
                        });
                    }
                    if op.kind == OpKind::Write {
                        shapes.push(Shape {
                            name: "dirty-write",
                            txns: vec![un, tn],
                            items: vec![xs.to_string()],
                            ops: vec![ctx.op_ref(w), ctx.op_ref(i)],
                            explanation: format!(
                                "T{tn} overwrote {xs} ({}) written by T{un} ({}) before T{un} committed or aborted",
                                ctx.op_ref(i),
                                ctx.op_ref(w)
                            ),
                        });
                    }
                }
                if op.kind == OpKind::Read {
                    let st_x = &mut stack[x as usize];
                    while st_x
                        .last()
                        .is_some_and(|&w| aborted_now[ctx.txn[w] as usize])
                    {
                        st_x.pop();
                    }
                    if let Some(&w) = st_x.last() {
                        let u = ctx.txn[w];
                        if u != t {
                            read_from(ctx, &committed_at, (w, i), &mut rc, &mut aca, &mut shapes);
                        }
                    }
                } else {
                    stack[x as usize].push(i);
                    if open.insert(t, x) {
                        written[t as usize].push(x);
                    }
                    last_write.insert((t, x), i);
                }
            }
            (OpKind::Commit, _) | (OpKind::Abort, _) => {
                if op.kind == OpKind::Commit {
                    committed_at[t as usize] = Some(i);
                } else {
                    aborted_now[t as usize] = true;
                }
                for x in written[t as usize].drain(..) {
                    open.remove(t, x);
                }
            }
            // parse_schedules never yields a read or write without an item.
            _ => {}
        }
    }
    let violations: Vec<ClassViolation> = [rc, aca, st].into_iter().flatten().collect();
    Recovery {
        recoverable: !violations.iter().any(|v| v.class == "recoverable"),
        aca: !violations
            .iter()
            .any(|v| v.class == "avoids-cascading-aborts"),
        strict: !violations.iter().any(|v| v.class == "strict"),
        violations,
        shapes: shapes.list,
    }
}

/// Reader `r` reads from write `w` of another transaction.
fn read_from(
    ctx: &Ctx,
    committed_at: &[Option<usize>],
    (w, r): (usize, usize),
    rc: &mut Option<ClassViolation>,
    aca: &mut Option<ClassViolation>,
    shapes: &mut ShapeSet,
) {
    let (u, t) = (ctx.txn[w], ctx.txn[r]);
    let (un, tn) = (ctx.numbers[u as usize], ctx.numbers[t as usize]);
    let xs = ctx
        .s
        .item_name(ctx.s.ops()[r].item.unwrap_or_default())
        .to_string();
    let (wr, rr) = (ctx.op_ref(w), ctx.op_ref(r));
    if committed_at[u as usize].is_none() {
        // ACA: read only committed data.
        if aca.is_none() {
            *aca = Some(ClassViolation {
                class: "avoids-cascading-aborts",
                ops: vec![wr.clone(), rr.clone()],
                explanation: format!(
                    "T{tn} read {xs} ({rr}) from T{un} ({wr}) before T{un} committed"
                ),
            });
        }
        let mut ops = vec![wr.clone(), rr.clone()];
        if let Some((_, e)) = ctx.end[u as usize] {
            ops.push(ctx.op_ref(e));
        }
        shapes.push(Shape {
            name: "dirty-read",
            txns: vec![un, tn],
            items: vec![xs.clone()],
            ops,
            explanation: format!(
                "T{tn} read {xs} ({rr}) written by T{un} ({wr}) before T{un} committed; T{un} {}",
                outcome_text(ctx, u)
            ),
        });
    }
    // Recoverable: a reader commits only after the writers it read from.
    if let (None, Some((OpKind::Commit, ct))) = (rc.as_ref(), ctx.end[t as usize]) {
        let why = match ctx.end[u as usize] {
            Some((OpKind::Commit, cu)) if cu < ct => return,
            Some((OpKind::Commit, cu)) => (format!("T{un} committed only afterwards"), Some(cu)),
            Some((_, au)) => (format!("T{un} aborted"), Some(au)),
            None => (format!("T{un} never committed"), None),
        };
        let mut ops = vec![wr.clone(), rr.clone(), ctx.op_ref(ct)];
        if let Some(e) = why.1 {
            ops.push(ctx.op_ref(e));
        }
        ops.sort_by_key(|o| o.step);
        *rc = Some(ClassViolation {
            class: "recoverable",
            explanation: format!(
                "T{tn} read {xs} ({rr}) from T{un} ({wr}) and committed ({}), but {}{}",
                ctx.op_ref(ct),
                why.0,
                why.1
                    .map(|e| format!(" ({})", ctx.op_ref(e)))
                    .unwrap_or_default()
            ),
            ops,
        });
    }
}

/// Shapes, each kept once per (name, transactions, items).
#[derive(Default)]
pub(crate) struct ShapeSet {
    pub list: Vec<Shape>,
    seen: FxHashSet<(&'static str, Vec<u32>, Vec<String>)>,
}

impl ShapeSet {
    pub fn push(&mut self, s: Shape) {
        if self.seen.insert((s.name, s.txns.clone(), s.items.clone())) {
            self.list.push(s);
        }
    }
}

/// Per item, the transactions that wrote it and have not ended: O(1)
/// insert, remove (swap-remove with an index) and "one other than t".
struct OpenWriters {
    list: Vec<Vec<u32>>,
    at: FxHashMap<(u32, ItemId), usize>,
}

impl OpenWriters {
    fn new(n_items: usize) -> Self {
        OpenWriters {
            list: vec![Vec::new(); n_items],
            at: FxHashMap::default(),
        }
    }

    fn contains(&self, t: u32, x: ItemId) -> bool {
        self.at.contains_key(&(t, x))
    }

    /// Adds `t` as an open writer of `x`; false if it already was one.
    fn insert(&mut self, t: u32, x: ItemId) -> bool {
        if self.contains(t, x) {
            return false;
        }
        let l = &mut self.list[x as usize];
        self.at.insert((t, x), l.len());
        l.push(t);
        true
    }

    fn remove(&mut self, t: u32, x: ItemId) {
        if let Some(i) = self.at.remove(&(t, x)) {
            let l = &mut self.list[x as usize];
            l.swap_remove(i);
            if let Some(&moved) = l.get(i) {
                self.at.insert((moved, x), i);
            }
        }
    }

    /// Some open writer of `x` other than `t`.
    fn other_than(&self, x: ItemId, t: u32) -> Option<u32> {
        self.list[x as usize]
            .iter()
            .take(2)
            .copied()
            .find(|&u| u != t)
    }
}
