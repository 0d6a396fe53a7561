//! Diagrams of anomalies: a cycle as transaction boxes on a circle with
//! labelled, curved edges; a non-cycle anomaly as its writer → reader, or as
//! the transactions it names.

use super::svg::{clip, esc, num, text_width, Svg, TxnBox};
use crate::anomaly::{Involved, Marked, Role};
use crate::evidence::{ExplainedCycle, Fact, Step};
use crate::explain::cycle::clause;
use crate::explain::json as js;
use crate::graph::Rels;
use crate::history::{History, MopKind, Observed, TxnId, ValId};
use serde_json::Value;

const LABEL_FONT: f64 = 11.0;
const MARGIN: f64 = 16.0;
/// Longest edge label, in characters.
const LABEL_MAX_CHARS: usize = 40;

/// Colour and dash pattern of a relation.
fn rel_style(rel: Rels) -> (&'static str, &'static str) {
    match rel {
        Rels::WW => ("#1565c0", ""),
        Rels::WR => ("#2e7d32", ""),
        Rels::RW => ("#c62828", r#" stroke-dasharray="6 3""#),
        Rels::PROCESS => ("#6a1b9a", r#" stroke-dasharray="2 3""#),
        Rels::REALTIME => ("#ef6c00", r#" stroke-dasharray="2 3""#),
        _ => ("#424242", ""),
    }
}

/// The marker id of a relation's arrow head.
fn marker_id(rel: Rels) -> String {
    format!("arrow-{}", rel.name())
}

/// `<defs>` markup for the arrow heads of these relations.
fn markers(rels: impl IntoIterator<Item = Rels>) -> String {
    let mut seen = Vec::new();
    let mut out = String::new();
    for r in rels {
        if seen.contains(&r) {
            continue;
        }
        seen.push(r);
        out.push_str(&format!(
            r#"<marker id="{}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="9" markerHeight="9" markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{}"/></marker>"#,
            marker_id(r),
            rel_style(r).0
        ));
    }
    out
}

/// A value as a person reads it: its JSON without the quotes of a string.
fn value_label(h: &History, v: ValId) -> String {
    match js::value(h, v) {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

/// The value(s) a data step names, as its label shows them: the version
/// before and, where the step names one, the version after. A list's
/// initial state is `init`; a register's initial `nil` is `null`, as its
/// JSON says.
fn fact_labels(h: &History, f: &Fact) -> (String, Option<String>) {
    let v = |x: ValId| value_label(h, x);
    match *f {
        Fact::Appended { prev, next } => (v(prev), Some(v(next))),
        Fact::ObservedAppend { value } | Fact::ReadWritten { value } => (v(value), None),
        Fact::MissedAppend { prev, next } => (prev.map_or_else(|| "init".into(), v), Some(v(next))),
        Fact::Overwrote { from, to, .. } => (v(from), Some(v(to))),
        Fact::ReadOverwritten { from, to, .. } => {
            (from.map_or_else(|| "null".into(), v), Some(v(to)))
        }
    }
}

/// The label of step `a → …`: the relation, and for data relations the key
/// and the value(s) that justify it, e.g. `ww :x 1→2`, `wr :y 1`,
/// `process 3`.
pub(crate) fn step_label(h: &History, a: TxnId, step: &Step) -> String {
    let mut s = step.rel().name().to_string();
    match step {
        Step::Process => {
            if let Some(t) = h.txns.get(a as usize) {
                s.push_str(&format!(" {}", t.process));
            }
        }
        Step::Realtime => {}
        Step::Data(d) => {
            if (d.key as usize) < h.keys.len() {
                s.push(' ');
                s.push_str(&h.keys.datum(d.key).to_string());
            }
            match fact_labels(h, &d.fact) {
                (v, Some(v2)) => s.push_str(&format!(" {v}→{v2}")),
                (v, None) => s.push_str(&format!(" {v}")),
            }
        }
    }
    clip(&s, LABEL_MAX_CHARS)
}

#[derive(Clone, Copy)]
struct Pt {
    x: f64,
    y: f64,
}

/// Where the ray from the centre of a `w` × `h` box at `c` towards `p`
/// leaves the box.
fn box_exit(c: Pt, w: f64, h: f64, p: Pt) -> Pt {
    let (dx, dy) = (p.x - c.x, p.y - c.y);
    if dx.abs() < 1e-9 && dy.abs() < 1e-9 {
        return c;
    }
    let tx = if dx.abs() > 1e-9 {
        (w / 2.0) / dx.abs()
    } else {
        f64::INFINITY
    };
    let ty = if dy.abs() > 1e-9 {
        (h / 2.0) / dy.abs()
    } else {
        f64::INFINITY
    };
    let t = tx.min(ty).min(1.0);
    Pt {
        x: c.x + dx * t,
        y: c.y + dy * t,
    }
}

/// An edge to draw between two placed boxes.
struct Edge {
    from: usize,
    to: usize,
    rel: Rels,
    label: String,
    tooltip: String,
}

/// Bounding box accumulator.
struct Bounds {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

impl Bounds {
    fn new() -> Self {
        Bounds {
            x0: f64::INFINITY,
            y0: f64::INFINITY,
            x1: f64::NEG_INFINITY,
            y1: f64::NEG_INFINITY,
        }
    }
    fn add(&mut self, x0: f64, y0: f64, x1: f64, y1: f64) {
        self.x0 = self.x0.min(x0);
        self.y0 = self.y0.min(y0);
        self.x1 = self.x1.max(x1);
        self.y1 = self.y1.max(y1);
    }
}

/// Draws boxes at `centres` and curved edges between them; every edge
/// bends to its left, so the two edges of a 2-cycle do not overlap and the
/// edges of a clockwise circle bow outwards.
fn render(boxes: &[TxnBox], centres: &[Pt], edges: &[Edge], label: &str) -> String {
    struct Drawn {
        a: Pt,
        c: Pt,
        b: Pt,
        lx: f64,
        ly: f64,
        lw: f64,
    }
    let mut bounds = Bounds::new();
    for (bx, c) in boxes.iter().zip(centres) {
        bounds.add(
            c.x - bx.w / 2.0,
            c.y - bx.h / 2.0,
            c.x + bx.w / 2.0,
            c.y + bx.h / 2.0,
        );
    }
    let mut drawn = Vec::with_capacity(edges.len());
    for e in edges {
        let (pa, pb) = (centres[e.from], centres[e.to]);
        let (dx, dy) = (pb.x - pa.x, pb.y - pa.y);
        let len = (dx * dx + dy * dy).sqrt().max(1.0);
        // Left of the direction of travel, in y-down screen coordinates.
        let (px, py) = (dy / len, -dx / len);
        let bend = if e.from == e.to {
            0.0
        } else if boxes.len() == 2 {
            0.3
        } else {
            0.15
        } * len;
        let mid = Pt {
            x: (pa.x + pb.x) / 2.0,
            y: (pa.y + pb.y) / 2.0,
        };
        let c = Pt {
            x: mid.x + px * bend,
            y: mid.y + py * bend,
        };
        let (ba, bb) = (&boxes[e.from], &boxes[e.to]);
        let a = box_exit(pa, ba.w + 4.0, ba.h + 4.0, c);
        let b = box_exit(pb, bb.w + 4.0, bb.h + 4.0, c);
        // The curve's midpoint, then the label a little further out.
        let m = Pt {
            x: 0.25 * a.x + 0.5 * c.x + 0.25 * b.x,
            y: 0.25 * a.y + 0.5 * c.y + 0.25 * b.y,
        };
        let lw = text_width(&e.label, LABEL_FONT) + 8.0;
        let off = 4.0 + lw / 2.0 * px.abs() + 0.8 * LABEL_FONT * py.abs();
        let (lx, ly) = (m.x + px * off, m.y + py * off);
        bounds.add(
            lx - lw / 2.0,
            ly - LABEL_FONT,
            lx + lw / 2.0,
            ly + LABEL_FONT,
        );
        // The curve stays within its end points and its midpoint, give or take.
        bounds.add(m.x.min(a.x), m.y.min(a.y), m.x.max(a.x), m.y.max(a.y));
        drawn.push(Drawn {
            a,
            c,
            b,
            lx,
            ly,
            lw,
        });
    }
    if !bounds.x0.is_finite() {
        bounds.add(0.0, 0.0, 1.0, 1.0);
    }
    let (ox, oy) = (MARGIN - bounds.x0, MARGIN - bounds.y0);
    let mut svg = Svg::new();
    svg.def(&markers(edges.iter().map(|e| e.rel)));
    svg.raw(&format!(
        r#"<g transform="translate({},{})">"#,
        num(ox),
        num(oy)
    ));
    svg.raw("\n");
    for (bx, c) in boxes.iter().zip(centres) {
        bx.draw(&mut svg, c.x, c.y);
    }
    for (e, d) in edges.iter().zip(&drawn) {
        let (color, dash) = rel_style(e.rel);
        svg.raw(&format!(
            "<g class=\"edge {}\"><title>{}</title>\n",
            e.rel.name(),
            esc(&e.tooltip)
        ));
        svg.raw(&format!(
            r#"<path d="M{},{} Q{},{} {},{}" fill="none" stroke="{color}" stroke-width="1.6"{dash} marker-end="url(#{})"/>"#,
            num(d.a.x),
            num(d.a.y),
            num(d.c.x),
            num(d.c.y),
            num(d.b.x),
            num(d.b.y),
            marker_id(e.rel)
        ));
        svg.raw("\n");
        svg.rect(
            d.lx - d.lw / 2.0,
            d.ly - LABEL_FONT * 0.8,
            d.lw,
            LABEL_FONT * 1.6,
            r##"rx="3" fill="#ffffff" fill-opacity="0.9""##,
        );
        svg.text(
            d.lx,
            d.ly + LABEL_FONT * 0.35,
            LABEL_FONT,
            &e.label,
            &format!(r#"text-anchor="middle" fill="{color}" font-weight="bold""#),
        );
        svg.raw("</g>\n");
    }
    svg.raw("</g>\n");
    svg.finish(
        bounds.x1 - bounds.x0 + 2.0 * MARGIN,
        bounds.y1 - bounds.y0 + 2.0 * MARGIN,
        label,
    )
}

/// Centres for `boxes` on a circle, first at the top, clockwise; two boxes
/// side by side.
fn circle_layout(boxes: &[TxnBox]) -> Vec<Pt> {
    let n = boxes.len();
    match n {
        0 => vec![],
        1 => vec![Pt { x: 0.0, y: 0.0 }],
        2 => {
            let gap = (boxes[0].w + boxes[1].w) / 2.0 + 140.0;
            vec![Pt { x: 0.0, y: 0.0 }, Pt { x: gap, y: 0.0 }]
        }
        _ => {
            // Neighbours must be their half diagonals plus room for a label
            // apart; each pair gets an arc in proportion to its need, and the
            // radius is the smallest that gives every pair its chord.
            use std::f64::consts::{FRAC_PI_2, PI, TAU};
            let half: Vec<f64> = boxes
                .iter()
                .map(|b| (b.w * b.w + b.h * b.h).sqrt() / 2.0)
                .collect();
            let need: Vec<f64> = (0..n).map(|i| half[i] + half[(i + 1) % n] + 70.0).collect();
            let total: f64 = need.iter().sum();
            let r = need
                .iter()
                .map(|d| d / (2.0 * (PI * d / total).sin()))
                .fold(0.0, f64::max);
            let mut angle = -FRAC_PI_2;
            need.iter()
                .map(|d| {
                    let p = Pt {
                        x: r * angle.cos(),
                        y: r * angle.sin(),
                    };
                    angle += TAU * d / total;
                    p
                })
                .collect()
        }
    }
}

/// The diagram of an explained cycle: `T1 … Tn` (the names of Elle's text
/// explanation) as boxes, each step an edge labelled with its relation, key
/// and values; the micro-ops a step names are drawn bold.
pub(crate) fn cycle_svg(h: &History, c: &ExplainedCycle) -> String {
    let n = c.txns.len().saturating_sub(1);
    let name = |i: usize| format!("T{}", i % n.max(1) + 1);
    let mut highlight: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, s) in c.steps.iter().enumerate().take(n) {
        let (am, bm) = s.mops();
        if let Some(m) = am {
            highlight[i].push(m);
        }
        if let Some(m) = bm {
            highlight[(i + 1) % n].push(m);
        }
    }
    let boxes: Vec<TxnBox> = c.txns[..n]
        .iter()
        .enumerate()
        .filter(|(_, &t)| (t as usize) < h.txns.len())
        .map(|(i, &t)| TxnBox::new(h, t, &name(i), &highlight[i]))
        .collect();
    if boxes.len() != n {
        return message_svg("this cycle names transactions that are not in the history");
    }
    let edges: Vec<Edge> = c
        .steps
        .iter()
        .enumerate()
        .take(n)
        .map(|(i, s)| {
            let (a, b) = (name(i), name(i + 1));
            let (ta, tb) = (c.txns[i], c.txns[i + 1]);
            Edge {
                from: i,
                to: (i + 1) % n,
                rel: s.rel(),
                label: step_label(h, ta, s),
                tooltip: format!("{a} < {b}, because {}", clause(h, ta, tb, s, &a, &b)),
            }
        })
        .collect();
    let centres = circle_layout(&boxes);
    render(
        &boxes,
        &centres,
        &edges,
        &format!("{} cycle of {n} transactions", c.kind.name()),
    )
}

/// A tiny diagram holding only a message.
fn message_svg(msg: &str) -> String {
    let mut svg = Svg::new();
    svg.text(MARGIN, MARGIN + 12.0, 12.0, msg, r##"fill="#555555""##);
    svg.finish(
        text_width(msg, 12.0) + 2.0 * MARGIN,
        12.0 + 2.0 * MARGIN,
        msg,
    )
}

/// Positions (within `t`) of the micro-ops to mark for one involved
/// transaction: the read itself, or the writer's writes of what it saw.
fn marked_mops(h: &History, inv: &Involved) -> Vec<usize> {
    let start = h.txns[inv.txn as usize].mops_start as usize;
    let mops = h.mops(inv.txn);
    let mut out = Vec::new();
    for m in &inv.mops {
        match *m {
            Marked::Mop(i) => {
                out.extend((i as usize).checked_sub(start).filter(|&j| j < mops.len()))
            }
            Marked::WriteOf { read, element } => {
                let r = &h.mops[read as usize];
                let seen = match element {
                    Some(e) => Observed::Scalar(e),
                    None => r.value,
                };
                out.extend(
                    mops.iter()
                        .enumerate()
                        .filter(|(_, w)| {
                            w.kind != MopKind::Read && w.key == r.key && w.value == seen
                        })
                        .map(|(j, _)| j),
                );
            }
        }
    }
    out
}

/// Most transactions drawn for one non-cycle anomaly.
pub(crate) const ANOMALY_MAX_TXNS: usize = 8;

/// The diagram of a non-cycle anomaly, when it names transactions:
/// writer → reader (G1a, G1b, ...) with an edge naming the anomaly, else the
/// named transactions side by side. `None` when it names none.
pub(crate) fn anomaly_svg(h: &History, kind: &str, involved: &[Involved]) -> Option<String> {
    if involved.is_empty() {
        return None;
    }
    let involved = &involved[..involved.len().min(ANOMALY_MAX_TXNS)];
    let writer_reader =
        involved.len() >= 2 && involved[0].role == Role::Writer && involved[1].role == Role::Reader;
    let boxes: Vec<TxnBox> = involved
        .iter()
        .enumerate()
        .map(|(i, inv)| {
            let label = match (writer_reader, i) {
                (true, 0) => "T1 (writer)".to_string(),
                (true, 1) => "T2 (reader)".to_string(),
                _ => format!("T{}", i + 1),
            };
            TxnBox::new(h, inv.txn, &label, &marked_mops(h, inv))
        })
        .collect();
    let mut centres = Vec::with_capacity(boxes.len());
    let mut x = 0.0;
    for (i, b) in boxes.iter().enumerate() {
        if i > 0 {
            x += boxes[i - 1].w / 2.0 + 60.0 + b.w / 2.0;
        }
        centres.push(Pt { x, y: 0.0 });
    }
    let edges = if writer_reader {
        vec![Edge {
            from: 0,
            to: 1,
            rel: Rels::WR,
            label: kind.to_string(),
            tooltip: format!("{kind}: T2 read a value T1 wrote"),
        }]
    } else {
        vec![]
    };
    Some(render(
        &boxes,
        &centres,
        &edges,
        &format!("{kind}: the transactions involved"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anomaly::{Anomaly, AnomalyKind, Record};
    use crate::history::read::read_history;

    fn history(edn: &str) -> History {
        read_history(edn.as_bytes(), "test.edn", None).expect("a valid history")
    }

    fn data(key: u32, fact: Fact) -> Step {
        Step::Data(crate::evidence::DataStep {
            key,
            a_mop: Some(0),
            b_mop: Some(0),
            fact,
        })
    }

    fn val(h: &History, v: i64) -> ValId {
        h.values.get(&crate::history::Datum::Int(v)).unwrap()
    }

    const G1C: &str = "{:index 0, :type :ok, :process 0, :f :txn, :value [[:append :x 1] [:r :y [1]]]}\n\
                       {:index 1, :type :ok, :process 1, :f :txn, :value [[:append :x 2] [:append :y 1]]}\n";

    #[test]
    fn labels_name_relation_key_and_values() {
        let h = history(G1C);
        let x = h
            .keys
            .get(&crate::history::Datum::Keyword("x".into()))
            .unwrap();
        let (one, two) = (val(&h, 1), val(&h, 2));
        let label = |f: Fact| step_label(&h, 0, &data(x, f));
        assert_eq!(
            label(Fact::Appended {
                prev: one,
                next: two
            }),
            "ww :x 1→2"
        );
        assert_eq!(label(Fact::ObservedAppend { value: one }), "wr :x 1");
        assert_eq!(
            label(Fact::MissedAppend {
                prev: None,
                next: one
            }),
            "rw :x init→1"
        );
        assert_eq!(step_label(&h, 1, &Step::Process), "process 1");
        assert_eq!(step_label(&h, 0, &Step::Realtime), "realtime");
    }

    #[test]
    fn two_cycle_edges_bend_apart_and_boxes_do_not_overlap() {
        let h = history(G1C);
        let c = ExplainedCycle {
            kind: crate::graph::CycleClass::from_name("G1c").unwrap(),
            txns: vec![1, 0, 1],
            steps: vec![
                data(1, Fact::ObservedAppend { value: val(&h, 1) }),
                data(
                    0,
                    Fact::Appended {
                        prev: val(&h, 1),
                        next: val(&h, 2),
                    },
                ),
            ],
        };
        let svg = cycle_svg(&h, &c);
        let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
        let paths: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("path") && n.attribute("marker-end").is_some())
            .map(|n| n.attribute("d").unwrap())
            .collect();
        assert_eq!(paths.len(), 2);
        assert_ne!(paths[0], paths[1]);
        let texts: Vec<String> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(str::to_string))
            .collect();
        assert!(texts.iter().any(|t| t.starts_with("T1  op 1")), "{texts:?}");
        assert!(texts.iter().any(|t| t.starts_with("T2  op 0")), "{texts:?}");
        assert!(texts.contains(&"wr :y 1".to_string()), "{texts:?}");
        assert!(texts.contains(&"ww :x 1→2".to_string()), "{texts:?}");
    }

    #[test]
    fn circle_neighbours_are_far_enough_apart() {
        let h = history(G1C);
        let boxes: Vec<TxnBox> = (0..6).map(|i| TxnBox::new(&h, i % 2, "T", &[])).collect();
        let c = circle_layout(&boxes);
        for i in 0..6 {
            let (a, b) = (c[i], c[(i + 1) % 6]);
            let d = ((a.x - b.x).powi(2) + (a.y - b.y).powi(2)).sqrt();
            assert!(
                d > boxes[0].w.max(boxes[0].h),
                "neighbours {i} too close: {d}"
            );
        }
    }

    #[test]
    fn box_exit_lands_on_the_border() {
        let p = box_exit(Pt { x: 0.0, y: 0.0 }, 100.0, 20.0, Pt { x: 200.0, y: 0.0 });
        assert!((p.x - 50.0).abs() < 1e-9 && p.y.abs() < 1e-9);
        let p = box_exit(Pt { x: 0.0, y: 0.0 }, 100.0, 20.0, Pt { x: 0.0, y: -50.0 });
        assert!((p.y + 10.0).abs() < 1e-9);
    }

    #[test]
    fn writer_to_reader_diagram_for_g1a() {
        let h = history(G1C);
        // T0 read y = [1], which T1 appended (as if T1 had failed).
        let read = h.txns[0].mops_start + 1;
        let a = Anomaly::new(
            AnomalyKind::G1a,
            Record::AbortedAppend {
                reader: 0,
                mop: read,
                writer: 1,
                element: h.list(h.mops[read as usize].value).unwrap()[0],
            },
        );
        let involved = a.involved();
        assert_eq!(
            involved.iter().map(|i| (i.role, i.txn)).collect::<Vec<_>>(),
            vec![(Role::Writer, 1), (Role::Reader, 0)]
        );
        let svg = anomaly_svg(&h, "G1a", &involved).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        assert!(doc
            .descendants()
            .any(|n| n.has_tag_name("text") && n.text() == Some("G1a")));
        assert!(anomaly_svg(&h, "incompatible-order", &[]).is_none());
        // The read in the reader and the append of the element in the writer
        // are drawn bold.
        let bold: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text") && n.attribute("font-weight") == Some("bold"))
            .filter_map(|n| n.text())
            .collect();
        assert!(bold.contains(&"[:r :y [1]]"), "{bold:?}");
        assert!(bold.contains(&"[:append :y 1]"), "{bold:?}");
        assert!(!bold.contains(&"[:append :x 2]"), "{bold:?}");
    }
}
