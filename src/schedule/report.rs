//! The result of [`super::analyze`]: serializable to JSON (kebab-case field
//! names) and printable as text.

use serde::Serialize;
use std::fmt;

/// A pointer at one operation of the schedule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct OpRef {
    /// 1-based position of the operation in the schedule.
    pub step: u32,
    /// Where it was written (1-based).
    pub line: u32,
    pub column: u32,
    /// The operation in normalized notation, e.g. `w2(x)`.
    pub op: String,
}

impl fmt::Display for OpRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.op, self.step)
    }
}

/// Two conflicting operations: `first` comes before `second` in the schedule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Conflict {
    /// `ww`, `wr` or `rw` (the kinds of `first` and `second`).
    pub kind: &'static str,
    pub item: String,
    pub first: OpRef,
    pub second: OpRef,
}

/// A precedence-graph edge `from → to`, with the conflicts behind it (the
/// first one of each kind, in the order ww, wr, rw).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Edge {
    pub from: u32,
    pub to: u32,
    pub conflicts: Vec<Conflict>,
}

/// A recoverability class that does not hold, with the operations that
/// break it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct ClassViolation {
    /// `recoverable`, `avoids-cascading-aborts` or `strict`.
    pub class: &'static str,
    pub ops: Vec<OpRef>,
    pub explanation: String,
}

/// A named anomaly shape and the operations that form it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct Shape {
    /// `dirty-read`, `dirty-write`, `lost-update`, `non-repeatable-read` or
    /// `write-skew`.
    pub name: &'static str,
    pub txns: Vec<u32>,
    pub items: Vec<String>,
    pub ops: Vec<OpRef>,
    pub explanation: String,
}

/// Everything `isolde schedule` says about one schedule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct ScheduleReport {
    /// The source line the schedule starts on.
    pub line: u32,
    /// The schedule in normalized notation.
    pub schedule: String,
    /// Transaction numbers in order of first appearance.
    pub transactions: Vec<u32>,
    pub committed: Vec<u32>,
    /// Left out of the precedence graph, view serializability and the
    /// lost-update / non-repeatable-read / write-skew shapes.
    pub aborted: Vec<u32>,
    /// Neither committed nor aborted: judged as if they committed at the end.
    pub unterminated: Vec<u32>,
    pub conflict_serializable: bool,
    /// Precedence graph over the transactions that did not abort: every
    /// conflict an edge, or when that is over [`super::MAX_LISTED_EDGES`] edges,
    /// the conflicts between adjacent accesses (the rest follow by
    /// transitivity).
    pub edges: Vec<Edge>,
    /// Whether `edges` is every conflict edge (false: adjacent ones only).
    pub all_conflict_edges: bool,
    /// An equivalent serial order, when the graph is acyclic.
    pub serial_order: Option<Vec<u32>>,
    /// A cycle, when there is one: its edges in order, each with one conflict.
    pub cycle: Option<Vec<Edge>>,
    pub recoverable: bool,
    pub avoids_cascading_aborts: bool,
    pub strict: bool,
    /// The first operation breaking each class that does not hold.
    pub class_violations: Vec<ClassViolation>,
    /// `null` when the schedule is too large for the exact search.
    pub view_serializable: Option<bool>,
    /// A view-equivalent serial order, when there is one.
    pub view_serial_order: Option<Vec<u32>>,
    /// How the view-serializability answer was reached, or why it is missing.
    pub view_reason: String,
    pub shapes: Vec<Shape>,
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn txn_list(ts: &[u32]) -> String {
    if ts.is_empty() {
        return "-".to_string();
    }
    ts.iter()
        .map(|t| format!("T{t}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn conflict_text(c: &Conflict) -> String {
    format!("{} {} < {}", c.kind, c.first, c.second)
}

impl fmt::Display for ScheduleReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "schedule (line {}): {}", self.line, self.schedule)?;
        writeln!(
            f,
            "transactions: {}   committed: {}   aborted: {}   unterminated: {}",
            txn_list(&self.transactions),
            txn_list(&self.committed),
            txn_list(&self.aborted),
            txn_list(&self.unterminated)
        )?;
        writeln!(
            f,
            "conflict-serializable: {}",
            yes(self.conflict_serializable)
        )?;
        if self.edges.is_empty() {
            writeln!(f, "precedence graph: no edges")?;
        } else {
            if self.all_conflict_edges {
                writeln!(f, "precedence graph:")?;
            } else {
                writeln!(
                    f,
                    "precedence graph (over {} edges: only conflicts between adjacent accesses listed, the others follow by transitivity):",
                    super::MAX_LISTED_EDGES
                )?;
            }
            for e in &self.edges {
                let cs: Vec<String> = e.conflicts.iter().map(conflict_text).collect();
                writeln!(f, "  T{} -> T{}   {}", e.from, e.to, cs.join("; "))?;
            }
        }
        if let Some(order) = &self.serial_order {
            writeln!(f, "serial order: {}", txn_list(order))?;
        }
        if let Some(cycle) = &self.cycle {
            let mut s = String::new();
            for (i, e) in cycle.iter().enumerate() {
                if i == 0 {
                    s.push_str(&format!("T{}", e.from));
                }
                let c = &e.conflicts[0];
                s.push_str(&format!(
                    " -{}({} < {})-> T{}",
                    c.kind, c.first, c.second, e.to
                ));
            }
            writeln!(f, "cycle: {s}")?;
        }
        writeln!(f, "recoverable: {}", yes(self.recoverable))?;
        writeln!(
            f,
            "avoids-cascading-aborts: {}",
            yes(self.avoids_cascading_aborts)
        )?;
        writeln!(f, "strict: {}", yes(self.strict))?;
        for v in &self.class_violations {
            writeln!(f, "  {} fails: {}", v.class, v.explanation)?;
        }
        let vsr = match self.view_serializable {
            Some(b) => yes(b),
            None => "unknown",
        };
        write!(f, "view-serializable: {vsr}")?;
        if let Some(order) = &self.view_serial_order {
            write!(f, " (serial order {})", txn_list(order))?;
        }
        writeln!(f, " - {}", self.view_reason)?;
        if self.shapes.is_empty() {
            writeln!(f, "shapes: none")?;
        } else {
            writeln!(f, "shapes:")?;
            for s in &self.shapes {
                writeln!(f, "  {}: {}", s.name, s.explanation)?;
            }
        }
        Ok(())
    }
}
