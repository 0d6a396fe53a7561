//! The report page of elle-cli's non-transactional models (`-d` with
//! `--model bank|counter|set|set-full|long-fork|comments|sequential`):
//! the same page shell as the transactional report, the model's text
//! account, then what the model itself contributes ([`ModelSection`]):
//! plots (inline SVG) and tables of its bad reads. `result.json` beside it
//! holds Jepsen's result map.
//!
//! A model joins the page by implementing [`ModelSection`] for its result
//! and adding one arm to [`pieces`].

use super::html::{head, verdict};
use super::svg::{esc, num, Svg};
use crate::model::Validity;
use crate::models::{self, Checked, Ops};
use std::fmt::Write as _;
use std::io;
use std::path::Path;

/// Rows a table shows; the rest are counted.
const TABLE_MAX: usize = 500;
/// Points a plot draws per series; longer series are thinned evenly
/// (marked points are always drawn).
const PLOT_POINTS: usize = 2000;
/// Elements the set-full timeline draws, worst first.
const TIMELINE_LANES: usize = 60;

/// One piece of a model's section of the page.
pub(crate) enum Piece {
    /// A figure: `svg` is a whole `<svg>` document.
    Plot {
        id: &'static str,
        caption: String,
        svg: String,
    },
    /// A table of (escaped on output) text cells; `rows` may be longer than
    /// the page shows.
    Table {
        id: &'static str,
        caption: String,
        head: Vec<&'static str>,
        rows: Vec<Vec<String>>,
    },
}

/// What a model contributes to its report page.
pub(crate) trait ModelSection {
    /// The model's plots and tables, in page order.
    fn pieces(&self, ops: &Ops) -> Vec<Piece>;
}

/// The pieces of any model's result: one arm per model.
fn pieces(c: &Checked, ops: &Ops) -> Vec<Piece> {
    match c {
        Checked::Bank(r) => r.pieces(ops),
        Checked::Counter(r) => r.pieces(ops),
        Checked::Set(r) => r.pieces(ops),
        Checked::SetFull(r) => r.pieces(ops),
        Checked::LongFork(r) => r.pieces(ops),
        Checked::Comments(r) => r.pieces(ops),
        Checked::Sequential(r) => r.pieces(ops),
        Checked::Linearizable(r) => r.pieces(ops),
        Checked::LinearizableKeys(r) => r.pieces(ops),
    }
}

impl ModelSection for models::linearizable::keys::KeyedResult {
    /// The timeline of the first key that is not valid (of the first key
    /// when all are); `-x` and `-v` cover the others.
    fn pieces(&self, _ops: &Ops) -> Vec<Piece> {
        self.failing()
            .next()
            .or(self.keys.first())
            .map(|k| Piece::Plot {
                id: "timeline",
                caption: format!(
                    "Key {}: calls per process over time; the call no linearization reaches is red",
                    models::key_string(&k.key)
                ),
                svg: models::linearizable::svg::timeline_svg(&k.result, &k.ops),
            })
            .into_iter()
            .collect()
    }
}

impl ModelSection for models::linearizable::LinResult {
    fn pieces(&self, ops: &Ops) -> Vec<Piece> {
        vec![Piece::Plot {
            id: "timeline",
            caption: "Calls per process over time; the call no linearization reaches is red".into(),
            svg: models::linearizable::svg::timeline_svg(self, ops),
        }]
    }
}

/// Writes `index.html` and `result.json` for one checked history into
/// `dir` (created if missing); returns the files written, relative to `dir`.
pub fn write_model_report(
    ops: &Ops,
    checked: &Checked,
    model: &str,
    dir: &Path,
    title: &str,
) -> io::Result<Vec<String>> {
    std::fs::create_dir_all(dir)?;
    let mut json = serde_json::to_string_pretty(&checked.to_json(ops)).map_err(io::Error::other)?;
    json.push('\n');
    std::fs::write(dir.join("result.json"), json)?;
    std::fs::write(dir.join("index.html"), page(ops, checked, model, title))?;
    Ok(vec!["result.json".into(), "index.html".into()])
}

/// The whole page.
fn page(ops: &Ops, checked: &Checked, model: &str, title: &str) -> String {
    let mut o = head(title);
    let _ = writeln!(o, "<h1>{}</h1>", esc(title));
    let v = checked.valid();
    let (word, class, _) = verdict(v);
    let sentence = match v {
        Validity::True => "no read breaks the model's rules",
        Validity::False => "some reads break the model's rules",
        Validity::Unknown => "the history cannot be judged by this model",
    };
    let _ = writeln!(
        o,
        "<p id=\"verdict\"><span class=\"verdict {class}\">valid? {word}</span> model {}: {sentence}</p>",
        esc(model)
    );
    let _ = writeln!(
        o,
        "<h2 id=\"summary\">Summary</h2>\n<pre>{}</pre>",
        esc(&checked.explain(ops))
    );
    for p in pieces(checked, ops) {
        match p {
            Piece::Plot { id, caption, svg } => {
                let _ = writeln!(
                    o,
                    "<h2>{}</h2>\n<figure id=\"{id}\">{svg}</figure>",
                    esc(&caption)
                );
            }
            Piece::Table {
                id,
                caption,
                head,
                rows,
            } => table(&mut o, id, &caption, &head, &rows),
        }
    }
    let _ = writeln!(
        o,
        "<p>Jepsen's result map: <a href=\"result.json\">result.json</a>.</p>\n\
         <p><small>Written by isolde {}.</small></p>\n</body></html>",
        env!("CARGO_PKG_VERSION")
    );
    o
}

fn table(o: &mut String, id: &str, caption: &str, head: &[&str], rows: &[Vec<String>]) {
    let _ = writeln!(o, "<h2>{} ({})</h2>", esc(caption), rows.len());
    if rows.is_empty() {
        let _ = writeln!(o, "<p id=\"{id}\">None.</p>");
        return;
    }
    let _ = write!(o, "<table id=\"{id}\">\n<tr>");
    for h in head {
        let _ = write!(o, "<th>{}</th>", esc(h));
    }
    o.push_str("</tr>\n");
    for row in rows.iter().take(TABLE_MAX) {
        o.push_str("<tr>");
        for c in row {
            let _ = write!(o, "<td>{}</td>", esc(c));
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</table>\n");
    if rows.len() > TABLE_MAX {
        let _ = writeln!(
            o,
            "<p>{} more not shown; result.json has them all.</p>",
            rows.len() - TABLE_MAX
        );
    }
}

/// One line of a plot.
struct Series {
    name: &'static str,
    color: &'static str,
    points: Vec<(f64, f64)>,
}

/// A line plot: series, an optional horizontal reference line, and marked
/// points (bad reads) with a hover text each.
struct Plot {
    label: &'static str,
    x_label: &'static str,
    y_label: &'static str,
    series: Vec<Series>,
    reference: Option<(f64, &'static str)>,
    marks: Vec<(f64, f64, String)>,
}

const PLOT_W: f64 = 760.0;
const PLOT_H: f64 = 300.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 40.0;
const FONT: f64 = 11.0;
const BAD: &str = "#d32f2f";

impl Plot {
    fn svg(&self) -> String {
        let all = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .chain(self.marks.iter().map(|m| (m.0, m.1)))
            .chain(self.reference.iter().map(|r| (f64::NAN, r.0)));
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for (x, y) in all {
            if x.is_finite() {
                x0 = x0.min(x);
                x1 = x1.max(x);
            }
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        if x0 > x1 {
            (x0, x1) = (0.0, 1.0);
        }
        if y0 > y1 {
            (y0, y1) = (0.0, 1.0);
        }
        if x1 - x0 < 1e-9 {
            x1 = x0 + 1.0;
        }
        if y1 - y0 < 1e-9 {
            (y0, y1) = (y0 - 1.0, y1 + 1.0);
        }
        let (w, h) = (PLOT_W - LEFT - RIGHT, PLOT_H - TOP - BOTTOM);
        let sx = |x: f64| LEFT + (x - x0) / (x1 - x0) * w;
        let sy = |y: f64| TOP + h - (y - y0) / (y1 - y0) * h;
        let mut s = Svg::new();
        s.rect(LEFT, TOP, w, h, "fill=\"none\" stroke=\"#999\"");
        let axis = "fill=\"#555\"";
        s.text(
            LEFT - 6.0,
            TOP + FONT,
            FONT,
            &label(y1),
            &format!("{axis} text-anchor=\"end\""),
        );
        s.text(
            LEFT - 6.0,
            TOP + h,
            FONT,
            &label(y0),
            &format!("{axis} text-anchor=\"end\""),
        );
        s.text(LEFT, TOP + h + 16.0, FONT, &label(x0), axis);
        s.text(
            LEFT + w,
            TOP + h + 16.0,
            FONT,
            &label(x1),
            &format!("{axis} text-anchor=\"end\""),
        );
        s.text(
            LEFT + w / 2.0,
            PLOT_H - 6.0,
            FONT,
            self.x_label,
            &format!("{axis} text-anchor=\"middle\""),
        );
        s.text(
            12.0,
            TOP + h / 2.0,
            FONT,
            self.y_label,
            &format!(
                "{axis} text-anchor=\"middle\" transform=\"rotate(-90 12 {})\"",
                num(TOP + h / 2.0)
            ),
        );
        if let Some((y, name)) = self.reference {
            s.line(
                LEFT,
                sy(y),
                LEFT + w,
                sy(y),
                "stroke=\"#555\" stroke-dasharray=\"6 4\"",
            );
            s.text(
                LEFT + w - 4.0,
                sy(y) - 4.0,
                FONT,
                name,
                &format!("{axis} text-anchor=\"end\""),
            );
        }
        let mut legend_x = LEFT;
        for series in &self.series {
            let stride = series.points.len().div_ceil(PLOT_POINTS).max(1);
            let mut pts = String::new();
            for (i, &(x, y)) in series.points.iter().enumerate() {
                if i % stride == 0 || i + 1 == series.points.len() {
                    let _ = write!(pts, "{},{} ", num(sx(x)), num(sy(y)));
                }
            }
            s.raw(&format!(
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.2\"/>\n",
                pts.trim_end(),
                series.color
            ));
            s.text(
                legend_x,
                TOP - 10.0,
                FONT,
                series.name,
                &format!("fill=\"{}\"", series.color),
            );
            legend_x += super::svg::text_width(series.name, FONT) + 20.0;
        }
        if !self.marks.is_empty() {
            s.text(
                legend_x,
                TOP - 10.0,
                FONT,
                "● bad read",
                &format!("fill=\"{BAD}\""),
            );
        }
        for (x, y, what) in &self.marks {
            s.raw(&format!(
                "<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{BAD}\"><title>{}</title></circle>\n",
                num(sx(*x)),
                num(sy(*y)),
                esc(what)
            ));
        }
        s.finish(PLOT_W, PLOT_H, self.label)
    }
}

/// An axis label: integers without a fraction.
fn label(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.2}")
    }
}

/// An op's `:index` as a cell.
fn index(ops: &Ops, at: usize) -> String {
    ops.ops[at].index.to_string()
}

impl ModelSection for models::bank::BankResult {
    fn pieces(&self, ops: &Ops) -> Vec<Piece> {
        let x = |at: usize| ops.ops[at].index as f64;
        let total_of: rustc_hash::FxHashMap<usize, i128> = self.totals.iter().copied().collect();
        let plot = Plot {
            label: "total of every read",
            x_label: "op index",
            y_label: "total",
            series: vec![Series {
                name: "total read",
                color: "#1565c0",
                points: self
                    .totals
                    .iter()
                    .map(|&(at, t)| (x(at), t as f64))
                    .collect(),
            }],
            reference: Some((self.total as f64, "expected total")),
            marks: self
                .errors
                .iter()
                .map(|(at, bad)| {
                    let t = total_of.get(at).copied().unwrap_or(self.total);
                    (
                        x(*at),
                        t as f64,
                        format!("{}: {}", bad.kind(), models::op_text(&ops.ops[*at])),
                    )
                })
                .collect(),
        };
        let rows = self
            .errors
            .iter()
            .map(|(at, bad)| {
                let what = match bad {
                    models::bank::BadRead::UnexpectedKey(ks)
                    | models::bank::BadRead::NilBalance(ks) => ks
                        .iter()
                        .map(|k| k.to_string())
                        .collect::<Vec<_>>()
                        .join(" "),
                    models::bank::BadRead::WrongTotal(t) => {
                        format!("total {t}, expected {}", self.total)
                    }
                    models::bank::BadRead::NegativeValue(ns) => ns
                        .iter()
                        .map(|n| n.to_string())
                        .collect::<Vec<_>>()
                        .join(" "),
                };
                vec![
                    index(ops, *at),
                    bad.kind().into(),
                    what,
                    models::short(&ops.ops[*at].value),
                ]
            })
            .collect();
        vec![
            Piece::Plot {
                id: "bank-totals",
                caption: "Total over time".into(),
                svg: plot.svg(),
            },
            Piece::Table {
                id: "bad-reads",
                caption: "Bad reads".into(),
                head: vec!["op index", "error", "what", "balances read"],
                rows,
            },
        ]
    }
}

impl ModelSection for models::counter::CounterResult {
    fn pieces(&self, ops: &Ops) -> Vec<Piece> {
        let series = |name, color, f: fn(&models::counter::Bounded) -> i128| Series {
            name,
            color,
            points: self
                .reads
                .iter()
                .map(|b| (ops.ops[b.op].index as f64, f(b) as f64))
                .collect(),
        };
        let plot = Plot {
            label: "counter reads and their bounds",
            x_label: "op index",
            y_label: "counter",
            series: vec![
                series("lower bound", "#2e7d32", |b| b.lower),
                series("upper bound", "#ef6c00", |b| b.upper),
                series("value read", "#1565c0", |b| b.value),
            ],
            reference: None,
            marks: self
                .errors
                .iter()
                .map(|&i| {
                    let b = &self.reads[i];
                    let at = ops.ops[b.op].index as f64;
                    (
                        at,
                        b.value as f64,
                        format!("read {} outside [{}, {}]", b.value, b.lower, b.upper),
                    )
                })
                .collect(),
        };
        let rows = self
            .errors
            .iter()
            .map(|&i| {
                let b = &self.reads[i];
                vec![
                    index(ops, b.op),
                    b.lower.to_string(),
                    b.value.to_string(),
                    b.upper.to_string(),
                ]
            })
            .collect();
        vec![
            Piece::Plot {
                id: "counter-bounds",
                caption: "Reads against their bounds".into(),
                svg: plot.svg(),
            },
            Piece::Table {
                id: "bad-reads",
                caption: "Reads outside their bounds".into(),
                head: vec!["op index", "lower", "read", "upper"],
                rows,
            },
        ]
    }
}

impl ModelSection for models::set::SetResult {
    fn pieces(&self, _: &Ops) -> Vec<Piece> {
        let row = |what: &str, xs: &[crate::history::Datum]| {
            vec![
                what.to_string(),
                xs.len().to_string(),
                models::interval_set_str(&xs.iter().collect::<Vec<_>>()),
            ]
        };
        let mut rows = Vec::new();
        for (what, xs) in [
            ("lost (acknowledged, not read)", &self.lost),
            ("unexpected (read, never attempted)", &self.unexpected),
            ("recovered (read, add not acknowledged)", &self.recovered),
        ] {
            if !xs.is_empty() {
                rows.push(row(what, xs));
            }
        }
        vec![Piece::Table {
            id: "bad-elements",
            caption: "Elements not as acknowledged".into(),
            head: vec!["what", "count", "elements"],
            rows,
        }]
    }
}

impl ModelSection for models::set_full::SetFullResult {
    fn pieces(&self, ops: &Ops) -> Vec<Piece> {
        use models::set_full::Outcome;
        let pos = |p: Option<usize>| p.map_or("-".to_string(), |at| index(ops, at));
        let ms = |m: Option<i64>| m.map_or("-".to_string(), |m| m.to_string());
        let mut bad: Vec<&models::set_full::Element> = self
            .elements
            .iter()
            .filter(|e| e.outcome == Outcome::Lost || e.stable_latency.unwrap_or(0) > 0)
            .collect();
        // Lost first, then the stalest.
        bad.sort_by_key(|e| {
            (
                e.outcome != Outcome::Lost,
                std::cmp::Reverse(e.stable_latency),
            )
        });
        let rows = bad
            .iter()
            .map(|e| {
                vec![
                    e.element.to_string(),
                    e.outcome.name().into(),
                    pos(e.known),
                    pos(e.last_present),
                    pos(e.last_absent),
                    ms(e.stable_latency.or(e.lost_latency)),
                ]
            })
            .collect();
        let duplicated = self
            .duplicated
            .iter()
            .map(|(d, n)| vec![d.to_string(), n.to_string()])
            .collect();
        vec![
            Piece::Plot {
                id: "set-full-timeline",
                caption: "Element stability".into(),
                svg: self.timeline(ops, &bad),
            },
            Piece::Table {
                id: "bad-elements",
                caption: "Lost and stale elements".into(),
                head: vec![
                    "element",
                    "outcome",
                    "known at op",
                    "last seen at op",
                    "last missed at op",
                    "latency (ms)",
                ],
                rows,
            },
            Piece::Table {
                id: "duplicated",
                caption: "Elements read more than once in one read".into(),
                head: vec!["element", "copies"],
                rows: duplicated,
            },
        ]
    }
}

impl models::set_full::SetFullResult {
    /// One lane per element (the bad ones, else the first few): a bar from
    /// when it was known to the last read that saw it, a tick at the last
    /// read that missed it. x is the op position.
    fn timeline(&self, ops: &Ops, bad: &[&models::set_full::Element]) -> String {
        use models::set_full::Outcome;
        let lanes: Vec<&models::set_full::Element> = if bad.is_empty() {
            self.elements.iter().take(TIMELINE_LANES).collect()
        } else {
            bad.iter().take(TIMELINE_LANES).copied().collect()
        };
        const LANE: f64 = 14.0;
        let (left, w) = (110.0, PLOT_W - 110.0 - RIGHT);
        let n = ops.ops.len().max(2) as f64 - 1.0;
        let sx = |at: usize| left + at as f64 / n * w;
        let height = TOP + LANE * lanes.len() as f64 + BOTTOM;
        let mut s = Svg::new();
        s.text(
            left,
            TOP - 10.0,
            FONT,
            "known → last seen",
            "fill=\"#2e7d32\"",
        );
        s.text(
            left + 150.0,
            TOP - 10.0,
            FONT,
            "lost",
            &format!("fill=\"{BAD}\""),
        );
        s.text(
            left + 200.0,
            TOP - 10.0,
            FONT,
            "| last missed",
            "fill=\"#555\"",
        );
        for (i, e) in lanes.iter().enumerate() {
            let y = TOP + LANE * i as f64;
            s.text(
                left - 6.0,
                y + 10.0,
                FONT,
                &super::svg::clip(&e.element.to_string(), 14),
                "text-anchor=\"end\" fill=\"#555\"",
            );
            let color = match e.outcome {
                Outcome::Stable => "#2e7d32",
                Outcome::Lost => BAD,
                Outcome::NeverRead => "#9e9e9e",
            };
            if let Some(k) = e.known {
                let end = e.last_present.unwrap_or(k).max(k);
                s.raw(&format!(
                    "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"8\" fill=\"{color}\"><title>{} {}: known at op {}, last seen at op {}</title></rect>\n",
                    num(sx(k)),
                    num(y + 3.0),
                    num((sx(end) - sx(k)).max(2.0)),
                    esc(&e.element.to_string()),
                    e.outcome.name(),
                    index(ops, k),
                    e.last_present.map_or("-".into(), |p| index(ops, p)),
                ));
            }
            if let Some(a) = e.last_absent {
                s.line(
                    sx(a),
                    y + 1.0,
                    sx(a),
                    y + 13.0,
                    "stroke=\"#555\" stroke-width=\"1.5\"",
                );
            }
        }
        let axis_y = TOP + LANE * lanes.len() as f64 + 14.0;
        s.text(left, axis_y, FONT, "first op", "fill=\"#555\"");
        s.text(
            left + w,
            axis_y,
            FONT,
            "last op",
            "fill=\"#555\" text-anchor=\"end\"",
        );
        s.finish(PLOT_W, height, "element stability timeline")
    }
}

impl ModelSection for models::long_fork::LongForkResult {
    fn pieces(&self, ops: &Ops) -> Vec<Piece> {
        let rows = self
            .forks
            .iter()
            .map(|&(a, b)| {
                vec![
                    index(ops, a),
                    models::short(&ops.ops[a].value),
                    index(ops, b),
                    models::short(&ops.ops[b].value),
                ]
            })
            .collect();
        vec![Piece::Table {
            id: "forks",
            caption: "Forks: reads that each saw a write the other missed".into(),
            head: vec!["op index", "read", "op index", "read"],
            rows,
        }]
    }
}

impl ModelSection for models::comments::CommentsResult {
    fn pieces(&self, ops: &Ops) -> Vec<Piece> {
        let rows = self
            .keys
            .iter()
            .flat_map(|k| k.errors.iter().map(move |e| (k, e)))
            .map(|(k, e)| {
                let missing: Vec<String> =
                    e.missing.iter().take(20).map(|d| d.to_string()).collect();
                vec![
                    index(ops, e.op),
                    k.key.as_ref().map_or("-".into(), |d| d.to_string()),
                    format!("{} of {}", e.missing.len(), e.expected_count),
                    missing.join(" ") + if e.missing.len() > 20 { " …" } else { "" },
                ]
            })
            .collect();
        vec![Piece::Table {
            id: "bad-reads",
            caption: "Bad reads: saw a write, missed one that completed before it began".into(),
            head: vec!["op index", "key", "missed", "missing ids"],
            rows,
        }]
    }
}

impl ModelSection for models::sequential::SequentialResult {
    fn pieces(&self, ops: &Ops) -> Vec<Piece> {
        let rows = self
            .bad
            .iter()
            .map(|&at| vec![index(ops, at), models::short(&ops.ops[at].value)])
            .collect();
        vec![Piece::Table {
            id: "bad-reads",
            caption: "Bad reads: a later subkey seen, an earlier one missed".into(),
            head: vec!["op index", "read (latest subkey first)"],
            rows,
        }]
    }
}
