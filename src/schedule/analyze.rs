//! [`analyze`]: the assembly of a [`ScheduleReport`] from the precedence
//! graph (`precedence.rs`) and the other analyses.

use super::precedence::{all_conflicts, precedence, Ctx, Witness};
use super::report::{Conflict, Edge, ScheduleReport};
use super::{recover, shapes, view, OpKind, Schedule};
use crate::graph::{topological_order, GraphBuilder, Rels};

fn conflict(ctx: &Ctx, kind: Rels, (a, b): (usize, usize)) -> Conflict {
    Conflict {
        kind: kind.name(),
        item: ctx
            .s
            .item_name(ctx.s.ops()[a].item.unwrap_or_default())
            .to_string(),
        first: ctx.op_ref(a),
        second: ctx.op_ref(b),
    }
}

fn edge(ctx: &Ctx, (a, b): (u32, u32), w: &Witness) -> Edge {
    let conflicts = [(Rels::WW, w.ww), (Rels::WR, w.wr), (Rels::RW, w.rw)]
        .into_iter()
        .filter_map(|(k, p)| p.map(|p| conflict(ctx, k, p)))
        .collect();
    Edge {
        from: ctx.numbers[a as usize],
        to: ctx.numbers[b as usize],
        conflicts,
    }
}

/// Judges one schedule. Never fails: every schedule that
/// [`super::parse_schedules`] accepts has an answer (view serializability
/// may be `None` past [`super::MAX_VIEW_TXNS`] transactions).
pub fn analyze(s: &Schedule) -> ScheduleReport {
    analyze_with_limit(s, view::MAX_VIEW_TXNS)
}

/// [`analyze`] with a chosen bound on the exact view-serializability search.
pub(crate) fn analyze_with_limit(s: &Schedule, view_limit: usize) -> ScheduleReport {
    let ctx = Ctx::new(s);
    let n = ctx.numbers.len();
    let prec = precedence(&ctx);
    let all = all_conflicts(&ctx);
    let all_conflict_edges = all.is_some();
    let conflicts = all.unwrap_or_else(|| prec.edges.clone());
    let mut keys: Vec<(u32, u32)> = conflicts.keys().copied().collect();
    keys.sort_unstable();
    let edges: Vec<Edge> = keys.iter().map(|k| edge(&ctx, *k, &conflicts[k])).collect();

    let mut gb = GraphBuilder::with_nodes(n);
    gb.reserve(prec.edges.len());
    for (&(a, b), w) in &prec.edges {
        gb.add(a, b, w.rels());
    }
    let (serial, cycle) = match topological_order(&gb.build()) {
        // Aborted transactions are isolated vertices: leave them out.
        Ok(order) => (
            Some(
                order
                    .into_iter()
                    .filter(|&t| !ctx.aborted(t))
                    .collect::<Vec<_>>(),
            ),
            None,
        ),
        Err(cyc) => {
            // `cyc` is closed (first == last); one witness per step, the
            // first in ww, wr, rw order.
            let steps = cyc
                .windows(2)
                .filter_map(|p| {
                    let k = (p[0], p[1]);
                    let mut e = edge(&ctx, k, prec.edges.get(&k)?);
                    e.conflicts.truncate(1);
                    Some(e)
                })
                .collect();
            (None, Some(steps))
        }
    };

    let rec = recover::recovery(&ctx);
    let v = view::view_serializability(&ctx, serial.as_deref(), view_limit);
    let mut shapes = rec.shapes;
    shapes.extend(shapes::projection_shapes(&ctx, &prec));

    let all: Vec<u32> = (0..n as u32).collect();
    let pick = |f: &dyn Fn(Option<(OpKind, usize)>) -> bool| -> Vec<u32> {
        ctx.numbers_of(
            &all.iter()
                .copied()
                .filter(|&t| f(ctx.end[t as usize]))
                .collect::<Vec<_>>(),
        )
    };
    ScheduleReport {
        line: s.line(),
        schedule: s.to_string(),
        transactions: ctx.numbers.clone(),
        committed: pick(&|e| matches!(e, Some((OpKind::Commit, _)))),
        aborted: pick(&|e| matches!(e, Some((OpKind::Abort, _)))),
        unterminated: pick(&|e| e.is_none()),
        conflict_serializable: serial.is_some(),
        edges,
        all_conflict_edges,
        serial_order: serial.as_deref().map(|o| ctx.numbers_of(o)),
        cycle,
        recoverable: rec.recoverable,
        avoids_cascading_aborts: rec.aca,
        strict: rec.strict,
        class_violations: rec.violations,
        view_serializable: v.answer,
        view_serial_order: v.order.as_deref().map(|o| ctx.numbers_of(o)),
        view_reason: v.reason,
        shapes,
    }
}
