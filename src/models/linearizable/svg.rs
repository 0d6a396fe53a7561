//! A timeline of the object's calls, one lane per process, as SVG: each call
//! a bar from its invocation to its completion (crashed calls run dashed to
//! the right edge), the call that cannot be linearized in red. Positions
//! are ops' places in the history, not their `:time`, so that histories
//! without times draw too. A long history is cut to a window of ops around
//! the red call (or to its start when it is linearizable).

use super::{LinResult, Verdict};
use crate::models::{short, Ops};
use std::fmt::Write as _;

/// Ops shown around the unplaceable call, and at most when none is.
const WINDOW: usize = 200;
const LANE: f64 = 26.0;
const STEP: f64 = 8.0;
const LEFT: f64 = 90.0;

/// Escapes text for SVG.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The timeline of `result`'s calls in `ops` (the ops it was checked on).
pub fn timeline_svg(result: &LinResult, ops: &Ops) -> String {
    let n = ops.ops.len();
    let bad = match &result.verdict {
        Verdict::Not(Some(f)) => Some(f.call),
        _ => None,
    };
    let (from, to) = match bad {
        Some(c) => {
            let call = &result.calls.calls[c as usize];
            let end = call.complete.unwrap_or(call.invoke);
            (
                call.invoke.saturating_sub(WINDOW / 2),
                (end + WINDOW / 2).min(n),
            )
        }
        None => (0, n.min(WINDOW)),
    };
    // The calls that overlap the window, and their lanes.
    let shown: Vec<u32> = (0..result.calls.calls.len() as u32)
        .filter(|&c| {
            let call = &result.calls.calls[c as usize];
            call.invoke < to && call.complete.is_none_or(|e| e >= from)
        })
        .collect();
    let mut processes: Vec<Option<i64>> = shown
        .iter()
        .map(|&c| ops.ops[result.calls.calls[c as usize].invoke].process)
        .collect();
    processes.sort();
    processes.dedup();
    let lane = |p: Option<i64>| processes.binary_search(&p).unwrap_or(0);
    let width = LEFT + (to - from) as f64 * STEP + 20.0;
    let height = 30.0 + processes.len() as f64 * LANE + 10.0;
    let x = |pos: usize| LEFT + (pos.clamp(from, to) - from) as f64 * STEP;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" font-family="sans-serif" font-size="10">"#
    );
    let title = match bad {
        Some(c) => format!(
            "ops {from}..{to} of {n}; red: op {}, which cannot be linearized",
            ops.ops[result.op_of(c)].index
        ),
        None => format!("ops {from}..{to} of {n}"),
    };
    let _ = write!(s, r#"<text x="4" y="14">{}</text>"#, esc(&title));
    for (i, p) in processes.iter().enumerate() {
        let y = 30.0 + i as f64 * LANE;
        let name = p.map_or("nil".to_string(), |p| p.to_string());
        let _ = write!(
            s,
            r#"<text x="4" y="{:.1}">process {}</text>"#,
            y + 14.0,
            esc(&name)
        );
    }
    for &c in &shown {
        let call = &result.calls.calls[c as usize];
        let inv = &ops.ops[call.invoke];
        let y = 30.0 + lane(inv.process) as f64 * LANE;
        let x0 = x(call.invoke);
        let x1 = call
            .complete
            .map_or(width - 10.0, |e| x(e) + STEP / 2.0)
            .max(x0 + 3.0);
        let red = Some(c) == bad;
        let fill = if red {
            "#e33"
        } else if call.complete.is_none() {
            "#ddd"
        } else {
            "#9bd"
        };
        let dash = if call.complete.is_none() {
            r#" stroke-dasharray="3,2""#
        } else {
            ""
        };
        let valued = &ops.ops[result.op_of(c)];
        let label = format!("{} {}", inv.f.name(), short(&valued.value));
        let _ = write!(
            s,
            r##"<g class="{}"><title>{}</title><rect x="{x0:.1}" y="{y:.1}" width="{:.1}" height="18" fill="{fill}" stroke="#333"{dash}/><text x="{:.1}" y="{:.1}">{}</text></g>"##,
            if red { "call unplaceable" } else { "call" },
            esc(&format!(
                "op {} (line {}): {label}{}",
                valued.index,
                valued.line,
                if call.complete.is_none() {
                    ", crashed"
                } else {
                    ""
                }
            )),
            x1 - x0,
            x0 + 2.0,
            y + 13.0,
            esc(&label)
        );
    }
    s += "</svg>\n";
    s
}
