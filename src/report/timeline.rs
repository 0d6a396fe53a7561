//! Timelines: processes as lanes, each transaction a bar from invocation to
//! completion, so that real-time and process order can be seen.

use super::svg::{esc, outcome_color, text_width, Svg};
use crate::history::{History, TxnId};

const LEFT: f64 = 70.0;
const PLOT_W: f64 = 640.0;
const LANE_H: f64 = 30.0;
const TOP: f64 = 8.0;
const FONT: f64 = 11.0;

/// What the x axis measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Axis {
    /// `:time`, nanoseconds.
    Time,
    /// Position of the invocation/completion in the history's event order.
    Seq,
    /// Jepsen `:index` of the invocation/completion.
    Index,
}

/// `(start, end)` of a transaction on `axis`; `None` where it is unknown
/// (no invocation, or no completion).
fn span(h: &History, t: TxnId, axis: Axis) -> (Option<i64>, Option<i64>) {
    let x = &h.txns[t as usize];
    match axis {
        Axis::Time => (x.invoke_time, x.complete_time),
        Axis::Seq => (
            x.invoke_seq.map(|s| s as i64),
            x.complete_seq.map(|s| s as i64),
        ),
        Axis::Index => {
            // `index` is the invocation's own when nothing completed it.
            let end = if x.invoke_index == Some(x.index) {
                None
            } else {
                Some(x.index)
            };
            (x.invoke_index, end)
        }
    }
}

/// Times when every transaction has one and they are not all equal (tests
/// often write `:time 0`); else event positions when known; else indices.
pub(crate) fn choose_axis(h: &History, txns: &[TxnId]) -> Axis {
    let extent = |axis: Axis| -> Option<(i64, i64)> {
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        for &t in txns {
            let (a, b) = span(h, t, axis);
            if a.is_none() && b.is_none() {
                return None;
            }
            for v in [a, b].into_iter().flatten() {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
        Some((lo, hi))
    };
    match extent(Axis::Time) {
        Some((lo, hi)) if hi > lo => Axis::Time,
        _ if extent(Axis::Seq).is_some() => Axis::Seq,
        _ => Axis::Index,
    }
}

/// The timeline of `txns` (each with its name in the diagram), or `None`
/// when there are none.
pub(crate) fn timeline_svg(h: &History, txns: &[(String, TxnId)]) -> Option<String> {
    let txns: Vec<&(String, TxnId)> = txns
        .iter()
        .filter(|(_, t)| (*t as usize) < h.txns.len())
        .collect();
    if txns.is_empty() {
        return None;
    }
    let ids: Vec<TxnId> = txns.iter().map(|(_, t)| *t).collect();
    let axis = choose_axis(h, &ids);
    let spans: Vec<(Option<i64>, Option<i64>)> = ids.iter().map(|&t| span(h, t, axis)).collect();
    let known = spans.iter().flat_map(|&(a, b)| [a, b]).flatten();
    let (lo, hi) = known.fold((i64::MAX, i64::MIN), |(l, u), v| (l.min(v), u.max(v)));
    let (lo, hi) = if lo > hi {
        (0, 1)
    } else {
        (lo, hi.max(lo + 1))
    };
    let mut lanes: Vec<i64> = ids.iter().map(|&t| h.txns[t as usize].process).collect();
    lanes.sort_unstable();
    lanes.dedup();

    // Open-ended bars run a little past the last known event.
    let right = PLOT_W * 1.05;
    let x = |v: i64| LEFT + (v - lo) as f64 / (hi - lo) as f64 * PLOT_W;
    let height = TOP + lanes.len() as f64 * LANE_H + 34.0;
    let width = LEFT + right + 20.0;
    let mut svg = Svg::new();
    for (i, p) in lanes.iter().enumerate() {
        let y = TOP + i as f64 * LANE_H;
        if i % 2 == 0 {
            svg.rect(0.0, y, width, LANE_H, r##"fill="#f5f5f5""##);
        }
        svg.text(
            6.0,
            y + LANE_H * 0.65,
            FONT,
            &format!("process {p}"),
            r##"fill="#424242""##,
        );
    }
    for ((name, t), &(a, b)) in txns.iter().zip(&spans) {
        let txn = &h.txns[*t as usize];
        let lane = lanes.binary_search(&txn.process).unwrap_or(0);
        let y = TOP + lane as f64 * LANE_H + 12.0;
        let color = outcome_color(txn.outcome);
        let tip = format!(
            "{name}: op {}, process {}, {}; {}",
            txn.index,
            txn.process,
            txn.outcome.name(),
            describe(axis, a, b, lo)
        );
        svg.raw(&format!("<g><title>{}</title>\n", esc(&tip)));
        let (x0, x1, open) = match (a, b) {
            (Some(a), Some(b)) => (x(a), x(b), false),
            (Some(a), None) => (x(a), LEFT + right, true),
            (None, Some(b)) => (x(b) - 3.0, x(b), false),
            (None, None) => (LEFT, LEFT + right, true),
        };
        let w = (x1 - x0).max(4.0);
        let dash = if open {
            r#" stroke-dasharray="4 2""#
        } else {
            ""
        };
        svg.rect(
            x0,
            y,
            w,
            12.0,
            &format!(r#"fill="{color}" fill-opacity="0.35" stroke="{color}"{dash}"#),
        );
        let lw = text_width(name, FONT);
        let (tx, anchor) = if w >= lw + 4.0 {
            (x0 + w / 2.0, "middle")
        } else {
            (x0 + w + 2.0, "start")
        };
        svg.text(
            tx,
            y + 10.0,
            FONT,
            name,
            &format!(r##"text-anchor="{anchor}" fill="#212121""##),
        );
        svg.raw("</g>\n");
    }
    let base = TOP + lanes.len() as f64 * LANE_H + 4.0;
    svg.line(LEFT, base, LEFT + PLOT_W, base, r##"stroke="#9e9e9e""##);
    for i in 0..=4 {
        let v = lo + (hi - lo) * i / 4;
        let tx = x(v);
        svg.line(tx, base, tx, base + 4.0, r##"stroke="#9e9e9e""##);
        let label = match axis {
            Axis::Time => format!("+{}", duration_label(v - lo, hi - lo)),
            Axis::Seq => format!("event {v}"),
            Axis::Index => format!("index {v}"),
        };
        svg.text(
            tx,
            base + 16.0,
            FONT,
            &label,
            r##"text-anchor="middle" fill="#616161""##,
        );
    }
    let caption = match axis {
        Axis::Time => "timeline: time since the first event shown",
        Axis::Seq => "timeline: position in the history (no usable times)",
        Axis::Index => "timeline: op index (no usable times or positions)",
    };
    Some(svg.finish(width, height, caption))
}

/// A bar's extent in words, for its tooltip.
fn describe(axis: Axis, a: Option<i64>, b: Option<i64>, lo: i64) -> String {
    let show = |v: Option<i64>| match (v, axis) {
        (None, _) => "unknown".to_string(),
        (Some(v), Axis::Time) => format!("{:.6}s", (v - lo) as f64 / 1e9),
        (Some(v), _) => v.to_string(),
    };
    format!("invoked {}, completed {}", show(a), show(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::read::read_history;

    fn history(edn: &str) -> History {
        read_history(edn.as_bytes(), "test.edn", None).expect("a valid history")
    }

    #[test]
    fn equal_times_fall_back_to_positions() {
        let h = history(
            "{:index 0, :time 0, :type :invoke, :process 0, :f :txn, :value [[:append :x 1]]}\n\
             {:index 1, :time 0, :type :ok, :process 0, :f :txn, :value [[:append :x 1]]}\n",
        );
        assert_eq!(choose_axis(&h, &[0]), Axis::Seq);
    }

    #[test]
    fn distinct_times_are_used_and_lanes_follow_processes() {
        let h = history(
            "{:index 0, :time 10, :type :invoke, :process 0, :f :txn, :value [[:append :x 1]]}\n\
             {:index 1, :time 20, :type :invoke, :process 1, :f :txn, :value [[:r :x nil]]}\n\
             {:index 2, :time 30, :type :ok, :process 0, :f :txn, :value [[:append :x 1]]}\n\
             {:index 3, :time 40, :type :info, :process 1, :f :txn, :value [[:r :x nil]]}\n",
        );
        assert_eq!(choose_axis(&h, &[0, 1]), Axis::Time);
        let svg = timeline_svg(&h, &[("T1".into(), 0), ("T2".into(), 1)]).unwrap();
        let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
        let texts: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .collect();
        for want in ["process 0", "process 1", "T1", "T2", "+0ns"] {
            assert!(texts.contains(&want), "{want} missing from {texts:?}");
        }
        assert!(timeline_svg(&h, &[]).is_none());
    }
}

/// A time offset in nanoseconds, in the unit that suits the whole span
/// (so that a span of microseconds does not read "+0.000s" everywhere).
fn duration_label(ns: i64, span: i64) -> String {
    let (div, unit) = match span.abs() {
        s if s >= 10_000_000_000 => (1e9, "s"),
        s if s >= 10_000_000 => (1e6, "ms"),
        s if s >= 10_000 => (1e3, "µs"),
        _ => (1.0, "ns"),
    };
    let v = ns as f64 / div;
    if v.fract() == 0.0 {
        format!("{v:.0}{unit}")
    } else {
        format!("{v:.1}{unit}")
    }
}

#[cfg(test)]
mod duration_label_tests {
    use super::duration_label;

    #[test]
    fn labels_pick_a_unit_that_fits_the_span() {
        assert_eq!(duration_label(500, 1_000), "500ns");
        assert_eq!(duration_label(150_000, 200_000), "150µs");
        assert_eq!(duration_label(2_500_000_000, 3_000_000_000), "2500ms");
        assert_eq!(duration_label(20_000_000_000, 40_000_000_000), "20s");
    }
}
