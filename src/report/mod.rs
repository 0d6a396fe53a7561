//! The offline report: `isolde check -d DIR` writes, for a checked history,
//! one text file of explanations per anomaly type (like Elle's
//! `G2-item.txt`), a diagram per drawn anomaly (`<type>/<n>.svg` or `.png`)
//! and an `index.html` that needs no network: verdict, the model lattice
//! with the ruled-out models marked, counts, each anomaly's explanation next
//! to its diagram and a timeline of its transactions, history statistics.
//!
//! Everything is laid out and drawn here (no Graphviz); PNG goes through
//! resvg, a pure-Rust rasterizer, when the `png` feature is on.

mod diagram;
pub mod dir;
mod html;
mod lattice;
mod models;
#[cfg(feature = "png")]
mod png;
/// Without `png`: no rasterizer can exist, so a PNG report fails before
/// writing anything and the SVG path compiles unchanged.
#[cfg(not(feature = "png"))]
mod png {
    pub(crate) enum Rasterizer {}
    impl Rasterizer {
        pub(crate) fn has_fonts(&self) -> bool {
            match *self {}
        }
        pub(crate) fn render(&self, _: &str) -> std::io::Result<Vec<u8>> {
            match *self {}
        }
    }
}
mod svg;
mod timeline;

pub use models::write_model_report;

use crate::check::{Finding, Report};
use crate::history::{History, TxnId};
use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::str::FromStr;

/// How many anomalies of each type are drawn by default.
pub const DEFAULT_MAX_CYCLES: usize = 20;

/// Format of the diagram files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PlotFormat {
    #[default]
    /// Vector diagrams: no rasterizer needed.
    Svg,
    /// Raster diagrams (the `png` feature).
    Png,
}

impl PlotFormat {
    /// File extension, also the name on the command line.
    pub fn extension(self) -> &'static str {
        match self {
            PlotFormat::Svg => "svg",
            PlotFormat::Png => "png",
        }
    }
}

/// A plot format name other than `svg` or `png`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown plot format {0:?}; expected svg or png")]
pub struct UnknownPlotFormat(pub String);

impl FromStr for PlotFormat {
    type Err = UnknownPlotFormat;
    fn from_str(s: &str) -> Result<PlotFormat, UnknownPlotFormat> {
        match s.to_ascii_lowercase().as_str() {
            "svg" => Ok(PlotFormat::Svg),
            "png" => Ok(PlotFormat::Png),
            _ => Err(UnknownPlotFormat(s.to_string())),
        }
    }
}

/// What [`write_report`] draws.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// SVG or PNG diagrams.
    pub plot_format: PlotFormat,
    /// At most this many anomalies of each type are drawn and shown on the
    /// page (the page says when it caps); the text files hold them all.
    pub max_cycles: usize,
    /// Shown as the page's title, e.g. the history's file name.
    pub title: Option<String>,
    /// elle-cli's `--plot-timeout`: time spent drawing the diagrams of one
    /// anomaly type; past it the rest of that type is listed undrawn.
    pub plot_timeout: Option<std::time::Duration>,
    /// elle-cli's `--max-plot-bytes`: a diagram whose SVG is larger is not
    /// drawn (Elle bounds its DOT text the same way, so a huge cycle does
    /// not stall the report).
    pub max_plot_bytes: Option<usize>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            plot_format: PlotFormat::Svg,
            max_cycles: DEFAULT_MAX_CYCLES,
            title: None,
            plot_timeout: None,
            max_plot_bytes: None,
        }
    }
}

/// A file name made of `[A-Za-z0-9._-]` only, never empty, never hidden.
pub fn file_stem(anomaly_type: &str) -> String {
    let s: String = anomaly_type
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    match s.trim_start_matches('.') {
        "" => "anomaly".to_string(),
        t => t.to_string(),
    }
}

/// One finding as its text-file entry: the explanation (Elle's text for a
/// cycle), and for non-cycle anomalies the detail as JSON.
fn finding_text(h: &History, f: &Finding) -> String {
    let mut s = f.explanation(h);
    if f.cycle.is_none() {
        let detail = f.detail(h);
        if !detail.is_null() {
            if !s.is_empty() {
                s.push('\n');
            }
            s.push_str(&serde_json::to_string_pretty(&detail).unwrap_or_default());
        }
    }
    s
}

/// One anomaly as the page shows it.
pub(crate) struct Shown {
    pub(crate) explanation: String,
    /// Relative path of its diagram, and its width in CSS pixels.
    pub(crate) diagram: Option<(String, f64)>,
    pub(crate) timeline: Option<String>,
    pub(crate) detail: String,
}

/// All anomalies of one type as the page shows them.
pub(crate) struct Section {
    pub(crate) kind: String,
    pub(crate) stem: String,
    pub(crate) total: usize,
    pub(crate) shown: Vec<Shown>,
}

/// Writes the report into `dir` (created if missing): `<type>.txt` for
/// every anomaly type, `<type>/<n>.<svg|png>` for each drawn anomaly, and
/// `index.html`. Returns the files written, relative to `dir` (what
/// [`dir::write_manifest`] records). Files of an earlier report are left
/// alone: [`dir::prepare`] removes them first.
pub fn write_report(
    h: &History,
    r: &Report,
    dir: &Path,
    opts: &ReportOptions,
) -> io::Result<Vec<String>> {
    let raster: Option<png::Rasterizer> = match opts.plot_format {
        #[cfg(feature = "png")]
        PlotFormat::Png => Some(png::Rasterizer::with_system_fonts()),
        #[cfg(not(feature = "png"))]
        PlotFormat::Png => {
            let msg = "isolde was built without png; use svg, or rebuild with `cargo build --release --features png`";
            return Err(io::Error::new(io::ErrorKind::Unsupported, msg));
        }
        PlotFormat::Svg => None,
    };
    fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    // Diagrams left out by the plot bounds, said on the page.
    let mut skipped: Vec<String> = Vec::new();
    let mut kinds: Vec<&String> = r.anomalies.keys().collect();
    kinds.sort_by(|a, b| crate::model::anomaly_severity_cmp(a, b));
    let mut sections = Vec::with_capacity(kinds.len());
    for kind in kinds {
        let findings = &r.anomalies[kind];
        let stem = file_stem(kind);
        let txt_name = format!("{stem}.txt");
        let mut txt = BufWriter::new(fs::File::create(dir.join(&txt_name))?);
        written.push(txt_name);
        // Elle's layout: "<type> #<n>" above each explanation, three
        // newlines between them.
        for (i, f) in findings.iter().enumerate() {
            if i > 0 {
                txt.write_all(b"\n\n\n")?;
            }
            // Numbered from 1, as on the page and by `check -x` (Elle's
            // files start at #0).
            writeln!(txt, "{kind} #{}", i + 1)?;
            txt.write_all(finding_text(h, f).as_bytes())?;
        }
        txt.write_all(b"\n")?;
        txt.flush()?;
        let mut shown = Vec::new();
        let started = std::time::Instant::now();
        let mut out_of_time = false;
        for (i, f) in findings.iter().enumerate().take(opts.max_cycles) {
            let (picture, involved) = match &f.cycle {
                Some(c) => {
                    let n = c.txns.len().saturating_sub(1);
                    let involved: Vec<(String, TxnId)> = c.txns[..n]
                        .iter()
                        .enumerate()
                        .map(|(j, &t)| (format!("T{}", j + 1), t))
                        .collect();
                    (Some(diagram::cycle_svg(h, c)), involved)
                }
                None => {
                    let named = match &f.anomaly {
                        Some(a) => a.involved(),
                        None => Vec::new(),
                    };
                    let picture = diagram::anomaly_svg(h, kind, &named);
                    let involved = named
                        .iter()
                        .take(diagram::ANOMALY_MAX_TXNS)
                        .enumerate()
                        .map(|(j, inv)| (format!("T{}", j + 1), inv.txn))
                        .collect();
                    (picture, involved)
                }
            };
            out_of_time = out_of_time || opts.plot_timeout.is_some_and(|t| started.elapsed() > t);
            let picture = match picture {
                _ if out_of_time => {
                    skipped.push(format!(
                        "{kind} #{}: not drawn, --plot-timeout reached",
                        i + 1
                    ));
                    None
                }
                Some(svg) if opts.max_plot_bytes.is_some_and(|m| svg.len() > m) => {
                    skipped.push(format!(
                        "{kind} #{}: not drawn, its diagram ({} bytes) is over --max-plot-bytes",
                        i + 1,
                        svg.len()
                    ));
                    None
                }
                p => p,
            };
            let diagram = match picture {
                Some(svg) => {
                    let sub = dir.join(&stem);
                    fs::create_dir_all(&sub)?;
                    let ext = opts.plot_format.extension();
                    let name = format!("{}.{ext}", i + 1);
                    match &raster {
                        Some(rz) => fs::write(sub.join(&name), rz.render(&svg)?)?,
                        None => fs::write(sub.join(&name), &svg)?,
                    }
                    written.push(format!("{stem}/{name}"));
                    Some((format!("{stem}/{name}"), svg_width(&svg)))
                }
                None => None,
            };
            let detail = serde_json::to_string_pretty(&f.detail(h)).unwrap_or_default();
            shown.push(Shown {
                explanation: finding_text(h, f),
                diagram,
                timeline: timeline::timeline_svg(h, &involved),
                detail,
            });
        }
        sections.push(Section {
            kind: kind.clone(),
            stem,
            total: findings.len(),
            shown,
        });
    }
    let mut notes = r.notes.clone();
    notes.extend(skipped);
    if raster.as_ref().is_some_and(|rz| !rz.has_fonts()) {
        notes.push(
            "No system font was found, so the PNG diagrams carry no text; use --plot-format svg."
                .into(),
        );
    }
    let page = html::page(h, r, &sections, &notes, opts);
    fs::write(dir.join("index.html"), page)?;
    written.push("index.html".into());
    Ok(written)
}

/// The `width` attribute of an SVG document written by [`svg::Svg`].
fn svg_width(svg: &str) -> f64 {
    svg.split_once("width=\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .and_then(|(w, _)| w.parse().ok())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plot_formats_parse_case_insensitively() {
        assert_eq!("svg".parse::<PlotFormat>(), Ok(PlotFormat::Svg));
        assert_eq!("PNG".parse::<PlotFormat>(), Ok(PlotFormat::Png));
        assert_eq!(
            "gif".parse::<PlotFormat>(),
            Err(UnknownPlotFormat("gif".into()))
        );
    }

    #[test]
    fn file_stems_cannot_escape_the_directory() {
        assert_eq!(file_stem("G2-item"), "G2-item");
        assert_eq!(file_stem("../etc/passwd"), "_etc_passwd");
        assert_eq!(file_stem("..."), "anomaly");
        assert_eq!(file_stem("a b/c"), "a_b_c");
    }

    #[test]
    fn svg_width_reads_the_root_attribute() {
        assert_eq!(
            svg_width(r#"<svg xmlns="x" width="120.5" height="3">"#),
            120.5
        );
    }
}
