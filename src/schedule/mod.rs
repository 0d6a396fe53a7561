//! `isolde schedule`: textbook schedules (`r1(x) w2(x) w1(x) c1 c2`) judged
//! by the classic definitions: conflict serializability (precedence graph),
//! the recoverability classes, view serializability, and the named anomaly
//! shapes.
//!
//! Conventions, stated once:
//! - **Aborted transactions** are left out of the precedence graph, of view
//!   serializability and of the lost-update / non-repeatable-read / write-skew
//!   shapes: those judge the committed projection (Bernstein, Hadzilacos &
//!   Goodman 1987, ch. 2). Transactions that never commit or abort are kept, as if
//!   they committed at the end, because textbook exercises often omit commits.
//! - **Recoverability classes** (recoverable, ACA, strict) and the dirty read /
//!   dirty write shapes are judged on the whole schedule, commits and aborts
//!   as written. An abort undoes its writes: a later read reads from the last
//!   earlier write whose transaction has not aborted yet (BHG ch. 2).
//! - The precedence graph listed is the textbook one: an edge for every
//!   conflicting pair of transactions (`w1(x) w2(x) w3(x)` has T1 → T3 as
//!   well as T1 → T2 and T2 → T3), up to 10,000 edges; past that, the
//!   adjacent ones below, and the report says so. Cycles and serial orders are found on the
//!   conflicts between *adjacent* accesses only (last writer → reader, reader
//!   → next writer, writer → next writer): every other conflict follows from
//!   these by transitivity, so the answers are the same, in time linear in
//!   operations plus edges.
//!
//! Library use: [`parse_schedules`] then [`analyze`]; the report serializes to
//! JSON with kebab-case field names and prints as text with `Display`.
//! [`parse_schedule_lines`] reads each line on its own, and [`render_error`]
//! points at what could not be read.

mod analyze;
mod parse;
mod precedence;
mod recover;
mod report;
mod shapes;
mod view;

pub use analyze::analyze;
pub use parse::{parse_schedule_lines, parse_schedules, render_error, ScheduleError};
pub use precedence::MAX_LISTED_EDGES;
pub use report::{ClassViolation, Conflict, Edge, OpRef, ScheduleReport, Shape};
pub use view::MAX_VIEW_TXNS;

use std::fmt;

/// Interned item name, an index into [`Schedule::items`].
pub type ItemId = u32;

/// What one operation of a schedule does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    Read,
    Write,
    Commit,
    Abort,
}

impl OpKind {
    /// The textbook letter: `r`, `w`, `c` or `a`.
    pub fn letter(self) -> char {
        match self {
            OpKind::Read => 'r',
            OpKind::Write => 'w',
            OpKind::Commit => 'c',
            OpKind::Abort => 'a',
        }
    }
}

/// One operation, with the place it was written (1-based line and column,
/// columns counted in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    /// The transaction number as written (`r12(x)` → 12).
    pub txn: u32,
    pub kind: OpKind,
    /// The item, for reads and writes; `None` for commits and aborts.
    pub item: Option<ItemId>,
    pub line: u32,
    pub column: u32,
}

/// A schedule: operations in order. Built by [`parse_schedules`], which
/// guarantees that no transaction acts after its commit or abort and that a
/// transaction ends at most once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    ops: Vec<Op>,
    items: Vec<String>,
    line: u32,
}

impl Schedule {
    /// The operations, in schedule order.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// Item names, indexed by [`ItemId`].
    pub fn items(&self) -> &[String] {
        &self.items
    }

    /// The source line the schedule starts on.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The name of an item.
    pub fn item_name(&self, id: ItemId) -> &str {
        &self.items[id as usize]
    }

    /// Operation `i` in normalized textbook form, e.g. `w2(x)` or `c1`.
    pub fn op_text(&self, i: usize) -> String {
        let op = &self.ops[i];
        op_notation(op.kind, op.txn, op.item.map(|it| self.item_name(it)))
    }
}

/// `w2(x)`, `c1`; `w2[x)]` when the item's name holds a `)`, so that
/// [`parse_schedules`] reads the text back as the same operation.
pub(crate) fn op_notation(kind: OpKind, txn: u32, item: Option<&str>) -> String {
    match item {
        Some(name) if name.contains(')') => format!("{}{txn}[{name}]", kind.letter()),
        Some(name) => format!("{}{txn}({name})", kind.letter()),
        None => format!("{}{txn}", kind.letter()),
    }
}

/// Normalized textbook form: `r1(x) w2(x) c1`.
impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for i in 0..self.ops.len() {
            if i > 0 {
                f.write_str(" ")?;
            }
            f.write_str(&self.op_text(i))?;
        }
        Ok(())
    }
}
