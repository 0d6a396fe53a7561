//! A small SVG writer: escaping, number formatting, text metrics, and the
//! transaction box shared by every diagram.
//!
//! Text is always monospace so that widths can be computed without a font:
//! a DejaVu/Liberation-style monospace advance is 0.6 em.

use crate::explain::json as js;
use crate::history::{History, Outcome, TxnId};
use std::fmt::Write as _;

/// Font family of all diagram text (the rasterizer maps `monospace` to a
/// system font).
pub(crate) const FONT: &str = "monospace";
/// Advance of one character, as a fraction of the font size.
const ADVANCE: f64 = 0.6;

/// Escapes text for XML/HTML content and double-quoted attributes.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters are not allowed in XML 1.0.
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// A coordinate with at most one decimal, so files stay small.
pub(crate) fn num(x: f64) -> String {
    let r = (x * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// Width of `s` in the monospace font at `size`.
pub(crate) fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * ADVANCE
}

/// Shortens `s` to at most `max` characters, keeping its head and tail
/// (the tail of a long list read is usually the interesting part).
pub(crate) fn clip(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max || max < 5 {
        return s.to_string();
    }
    let head = (max - 1) * 2 / 3;
    let tail = max - 1 - head;
    let mut out: String = s.chars().take(head).collect();
    out.push('…');
    out.extend(s.chars().skip(n - tail));
    out
}

/// Stroke colour of an outcome.
pub(crate) fn outcome_color(o: Outcome) -> &'static str {
    match o {
        Outcome::Ok => "#2e7d32",
        Outcome::Info => "#b26a00",
        Outcome::Fail => "#c62828",
    }
}

/// An SVG document being written; coordinates are user units (pixels).
pub(crate) struct Svg {
    body: String,
    defs: String,
}

impl Svg {
    pub(crate) fn new() -> Self {
        Svg {
            body: String::new(),
            defs: String::new(),
        }
    }

    /// Appends raw markup to `<defs>`.
    pub(crate) fn def(&mut self, s: &str) {
        self.defs.push_str(s);
    }

    /// Appends raw markup (already escaped) to the body.
    pub(crate) fn raw(&mut self, s: &str) {
        self.body.push_str(s);
    }

    pub(crate) fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, attrs: &str) {
        let _ = writeln!(
            self.body,
            r#"<rect x="{}" y="{}" width="{}" height="{}" {attrs}/>"#,
            num(x),
            num(y),
            num(w),
            num(h)
        );
    }

    pub(crate) fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, attrs: &str) {
        let _ = writeln!(
            self.body,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" {attrs}/>"#,
            num(x1),
            num(y1),
            num(x2),
            num(y2)
        );
    }

    /// Text at (x, y) (baseline); `attrs` may set `text-anchor`, `fill`, ...
    pub(crate) fn text(&mut self, x: f64, y: f64, size: f64, s: &str, attrs: &str) {
        let _ = writeln!(
            self.body,
            r#"<text x="{}" y="{}" font-size="{}" {attrs}>{}</text>"#,
            num(x),
            num(y),
            num(size),
            esc(s)
        );
    }

    /// The finished document, `width` × `height` user units, with a white
    /// background (PNG output would otherwise be transparent).
    pub(crate) fn finish(self, width: f64, height: f64, label: &str) -> String {
        let (w, h) = (num(width.max(1.0)), num(height.max(1.0)));
        let mut out = String::with_capacity(self.body.len() + self.defs.len() + 400);
        let _ = write!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="{FONT}" role="img" aria-label="{}">"#,
            esc(label)
        );
        out.push('\n');
        if !self.defs.is_empty() {
            out.push_str("<defs>");
            out.push_str(&self.defs);
            out.push_str("</defs>\n");
        }
        let _ = writeln!(out, r##"<rect width="{w}" height="{h}" fill="#ffffff"/>"##);
        out.push_str(&self.body);
        out.push_str("</svg>\n");
        out
    }
}

/// Font size of the text in transaction boxes.
pub(crate) const BOX_FONT: f64 = 12.0;
const BOX_LINE: f64 = 16.0;
const BOX_PAD: f64 = 8.0;
/// At most this many micro-ops are listed in a box (highlighted ones always).
const BOX_MAX_MOPS: usize = 10;
/// Longest micro-op line, in characters.
const BOX_MAX_CHARS: usize = 48;

/// A transaction drawn as a box: a title line and one line per micro-op.
pub(crate) struct TxnBox {
    pub(crate) title: String,
    /// Lines and whether each is highlighted (named by an edge).
    pub(crate) lines: Vec<(String, bool)>,
    pub(crate) outcome: Outcome,
    pub(crate) tooltip: String,
    pub(crate) w: f64,
    pub(crate) h: f64,
}

impl TxnBox {
    /// The box for transaction `t`, called `name`; micro-ops whose positions
    /// are in `highlight` are drawn bold and always listed.
    pub(crate) fn new(h: &History, t: TxnId, name: &str, highlight: &[usize]) -> TxnBox {
        let txn = &h.txns[t as usize];
        let title = format!(
            "{name}  op {} · p{} · {}",
            txn.index,
            txn.process,
            txn.outcome.name()
        );
        let mops = h.mops(t);
        let mut shown: Vec<bool> = vec![false; mops.len()];
        let mut budget = BOX_MAX_MOPS;
        for &i in highlight {
            if i < mops.len() && !shown[i] {
                shown[i] = true;
                budget = budget.saturating_sub(1);
            }
        }
        for s in shown.iter_mut() {
            if budget == 0 {
                break;
            }
            if !*s {
                *s = true;
                budget -= 1;
            }
        }
        let mut lines = Vec::new();
        let mut skipped = 0usize;
        for (i, m) in mops.iter().enumerate() {
            if !shown[i] {
                skipped += 1;
                continue;
            }
            if skipped > 0 {
                lines.push((format!("… {skipped} more"), false));
                skipped = 0;
            }
            lines.push((
                clip(&js::mop_edn(h, m), BOX_MAX_CHARS),
                highlight.contains(&i),
            ));
        }
        if skipped > 0 {
            lines.push((format!("… {skipped} more"), false));
        }
        if mops.is_empty() {
            lines.push(("(no micro-ops)".to_string(), false));
        }
        let widest = lines
            .iter()
            .map(|(l, _)| l.chars().count())
            .chain([title.chars().count()])
            .max()
            .unwrap_or(0);
        let w = widest as f64 * BOX_FONT * ADVANCE + 2.0 * BOX_PAD;
        let h_ = (lines.len() + 1) as f64 * BOX_LINE + 1.5 * BOX_PAD;
        TxnBox {
            title,
            lines,
            outcome: txn.outcome,
            tooltip: clip(&js::op_edn(h, t), 2000),
            w,
            h: h_,
        }
    }

    /// Draws the box centred at (cx, cy).
    pub(crate) fn draw(&self, svg: &mut Svg, cx: f64, cy: f64) {
        let (x, y) = (cx - self.w / 2.0, cy - self.h / 2.0);
        let color = outcome_color(self.outcome);
        svg.raw(&format!("<g><title>{}</title>\n", esc(&self.tooltip)));
        svg.rect(
            x,
            y,
            self.w,
            self.h,
            &format!(r##"rx="4" fill="#fafafa" stroke="{color}" stroke-width="1.5""##),
        );
        svg.rect(
            x,
            y,
            self.w,
            BOX_LINE + BOX_PAD * 0.75,
            &format!(r#"rx="4" fill="{color}" fill-opacity="0.12""#),
        );
        let tx = x + BOX_PAD;
        let mut ty = y + BOX_PAD * 0.5 + BOX_FONT;
        svg.text(
            tx,
            ty,
            BOX_FONT,
            &self.title,
            r##"font-weight="bold" fill="#212121""##,
        );
        ty += BOX_PAD * 0.5;
        for (line, hi) in &self.lines {
            ty += BOX_LINE;
            let attrs = if *hi {
                r##"font-weight="bold" fill="#000000""##
            } else {
                r##"fill="#555555""##
            };
            svg.text(tx, ty, BOX_FONT, line, attrs);
        }
        svg.raw("</g>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_control_characters() {
        assert_eq!(esc(r#"<a b="c">&'"#), "&lt;a b=&quot;c&quot;&gt;&amp;&#39;");
        assert_eq!(esc("a\u{1}b"), "a\u{fffd}b");
    }

    #[test]
    fn numbers_have_at_most_one_decimal() {
        assert_eq!(num(3.0), "3");
        assert_eq!(num(2.04), "2");
        assert_eq!(num(2.25), "2.3");
        assert_eq!(num(-0.04), "0");
    }

    #[test]
    fn clip_keeps_head_and_tail() {
        assert_eq!(clip("abc", 10), "abc");
        let c = clip("[:r :x [1 2 3 4 5 6 7 8 9 10 11 12]]", 20);
        assert_eq!(c.chars().count(), 20);
        assert!(c.starts_with("[:r :x [1 2"));
        assert!(c.ends_with("11 12]]"));
    }
}
