//! Named shapes over the committed projection (Berenson et al. 1995):
//! lost update, non-repeatable read, write skew. Dirty reads and dirty
//! writes depend on commits and aborts and come from [`super::recover`].

use super::precedence::{Ctx, Precedence};
use super::recover::ShapeSet;
use super::report::Shape;
use super::{ItemId, OpKind};
use rustc_hash::{FxHashMap, FxHashSet};

/// Per item: the last write, and the last write by a different transaction
/// than that one, so that "some other transaction wrote x after step r" is
/// answered in O(1).
#[derive(Clone, Copy, Default)]
struct Writes {
    last: Option<usize>,
    other: Option<usize>,
}

pub(crate) fn projection_shapes(ctx: &Ctx, prec: &Precedence) -> Vec<Shape> {
    let s = ctx.s;
    let mut out = ShapeSet::default();
    let mut writes: Vec<Writes> = vec![Writes::default(); s.items().len()];
    // (txn, item) → the last read and the write it read from (None: initial).
    let mut last_read: FxHashMap<(u32, ItemId), (usize, Option<usize>)> = FxHashMap::default();
    let mut write_sets: Vec<FxHashSet<ItemId>> = vec![FxHashSet::default(); ctx.numbers.len()];
    let num = |i: usize| ctx.numbers[ctx.txn[i] as usize];
    for i in ctx.projection() {
        let op = &s.ops()[i];
        let t = ctx.txn[i];
        let x = op.item.unwrap_or_default();
        let xs = s.item_name(x).to_string();
        let w = writes[x as usize];
        // The latest write of x by a transaction other than t.
        let foreign = match w.last {
            Some(l) if ctx.txn[l] != t => Some(l),
            _ => w.other,
        };
        if op.kind == OpKind::Write {
            // Lost update: t read x, another transaction wrote x, then t
            // wrote x from its stale read (ANSI P4).
            if let (Some(&(r, _)), Some(j)) = (last_read.get(&(t, x)), foreign) {
                if j > r {
                    let (tn, jn) = (num(i), num(j));
                    out.push(Shape {
                        name: "lost-update",
                        txns: vec![tn, jn],
                        items: vec![xs.clone()],
                        ops: vec![ctx.op_ref(r), ctx.op_ref(j), ctx.op_ref(i)],
                        explanation: format!(
                            "T{tn} read {xs} ({}), T{jn} wrote {xs} ({}), then T{tn} wrote {xs} ({}) from its earlier read: T{jn}'s update is lost",
                            ctx.op_ref(r),
                            ctx.op_ref(j),
                            ctx.op_ref(i)
                        ),
                    });
                }
            }
            write_sets[t as usize].insert(x);
            let slot = &mut writes[x as usize];
            if slot.last.is_some_and(|l| ctx.txn[l] != t) {
                slot.other = slot.last;
            }
            slot.last = Some(i);
            continue;
        }
        let src = w.last;
        if let Some(&(r0, src0)) = last_read.get(&(t, x)) {
            // Non-repeatable read: a second read of x sees another
            // transaction's newer write (ANSI A2).
            if let Some(j) = src.filter(|&j| ctx.txn[j] != t && src0 != Some(j)) {
                let (tn, jn) = (num(i), num(j));
                out.push(Shape {
                    name: "non-repeatable-read",
                    txns: vec![tn, jn],
                    items: vec![xs.clone()],
                    ops: vec![ctx.op_ref(r0), ctx.op_ref(j), ctx.op_ref(i)],
                    explanation: format!(
                        "T{tn} read {xs} twice ({} and {}) and saw different values: T{jn} wrote {xs} in between ({})",
                        ctx.op_ref(r0),
                        ctx.op_ref(i),
                        ctx.op_ref(j)
                    ),
                });
            }
        }
        last_read.insert((t, x), (i, src));
    }

    // Write skew: T1 read x that T2 then wrote, T2 read y that T1 then wrote,
    // x ≠ y, and the two write no common item (ANSI A5B).
    let mut pairs: Vec<(u32, u32)> = prec
        .edges
        .iter()
        .filter(|(&(a, b), w)| a < b && w.rw.is_some())
        .map(|(&k, _)| k)
        .collect();
    pairs.sort_unstable();
    for (a, b) in pairs {
        let (Some(ab), Some(ba)) = (
            prec.edges[&(a, b)].rw,
            prec.edges.get(&(b, a)).and_then(|w| w.rw),
        ) else {
            continue;
        };
        let item = |i: usize| s.ops()[i].item.unwrap_or_default();
        let (x, y) = (item(ab.0), item(ba.0));
        let (wa, wb) = (&write_sets[a as usize], &write_sets[b as usize]);
        let (small, big) = if wa.len() <= wb.len() {
            (wa, wb)
        } else {
            (wb, wa)
        };
        if x == y || small.iter().any(|i| big.contains(i)) {
            continue;
        }
        let (an, bn) = (ctx.numbers[a as usize], ctx.numbers[b as usize]);
        let (xs, ys) = (s.item_name(x), s.item_name(y));
        let mut ops = vec![
            ctx.op_ref(ab.0),
            ctx.op_ref(ab.1),
            ctx.op_ref(ba.0),
            ctx.op_ref(ba.1),
        ];
        ops.sort_by_key(|o| o.step);
        out.push(Shape {
            name: "write-skew",
            txns: vec![an, bn],
            items: vec![xs.to_string(), ys.to_string()],
            ops,
            explanation: format!(
                "T{an} read {xs} ({}) which T{bn} then wrote ({}), and T{bn} read {ys} ({}) which T{an} then wrote ({}); they write no common item",
                ctx.op_ref(ab.0),
                ctx.op_ref(ab.1),
                ctx.op_ref(ba.0),
                ctx.op_ref(ba.1)
            ),
        });
    }
    out.list
}
