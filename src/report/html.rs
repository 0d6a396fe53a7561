//! `index.html`: one self-contained page (inline CSS, no script, no network),
//! written as well-formed XML so that tests and tools can parse it.

use super::lattice::{lattice_svg, Mark};
use super::svg::{esc, num};
use super::{file_stem, ReportOptions, Section};
use crate::check::Report;
use crate::history::{History, MopKind, Outcome};
use crate::model::{canonical_name, Validity};
use rustc_hash::FxHashSet;
use std::fmt::Write as _;

/// Longest detail JSON shown on the page, in bytes; the text file has it all.
const DETAIL_MAX: usize = 4000;

const CSS: &str = "\
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#212121}\
h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}\
.verdict{font-size:1.2em;font-weight:bold;padding:.4em .8em;border-radius:4px;display:inline-block}\
.v-true{background:#e8f5e9;color:#1b5e20}.v-false{background:#ffebee;color:#b71c1c}.v-unknown{background:#fff8e1;color:#7a5c00}\
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2em .6em;text-align:left}td.n{text-align:right}\
.pair{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}.pair pre{flex:1 1 380px}\
pre{background:#f7f7f7;padding:.6em;margin:0;font-size:12px;white-space:pre-wrap;word-break:break-word}\
img,svg{max-width:100%;height:auto}figure{margin:0}\
.finding{border:1px solid #e0e0e0;border-radius:6px;padding:.2em 1em 1em;margin:1em 0}\
.cap{color:#7a5c00;font-weight:bold}\
.key span{display:inline-block;padding:0 .5em;margin-right:.5em;border-radius:3px;border:1px solid #999}\
.m-not{background:#d32f2f;color:#fff}.m-also{background:#ffcdd2}.m-open{background:#f1f8e9}\
.rel-ww{color:#1565c0}.rel-wr{color:#2e7d32}.rel-rw{color:#c62828}.rel-process{color:#6a1b9a}.rel-realtime{color:#ef6c00}";

/// Counts over the whole history, in one pass.
pub(crate) struct Stats {
    pub(crate) txns: usize,
    pub(crate) ok: usize,
    pub(crate) info: usize,
    pub(crate) fail: usize,
    pub(crate) processes: usize,
    pub(crate) keys: usize,
    pub(crate) appends: usize,
    pub(crate) writes: usize,
    pub(crate) reads: usize,
    /// Nanoseconds from the first to the last known `:time`.
    pub(crate) span_ns: Option<i64>,
    /// Mean and longest invoke-to-complete time, nanoseconds.
    pub(crate) mean_ns: Option<f64>,
    pub(crate) max_ns: Option<i64>,
}

impl Stats {
    pub(crate) fn of(h: &History) -> Stats {
        let (mut ok, mut info, mut fail) = (0, 0, 0);
        let mut procs = FxHashSet::default();
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        let (mut sum, mut count, mut max) = (0f64, 0usize, None::<i64>);
        for t in &h.txns {
            match t.outcome {
                Outcome::Ok => ok += 1,
                Outcome::Info => info += 1,
                Outcome::Fail => fail += 1,
            }
            procs.insert(t.process);
            for v in [t.invoke_time, t.complete_time].into_iter().flatten() {
                lo = lo.min(v);
                hi = hi.max(v);
            }
            if let (Some(a), Some(b)) = (t.invoke_time, t.complete_time) {
                let d = b.saturating_sub(a).max(0);
                sum += d as f64;
                count += 1;
                max = Some(max.map_or(d, |m: i64| m.max(d)));
            }
        }
        let (mut appends, mut writes, mut reads) = (0, 0, 0);
        for m in &h.mops {
            match m.kind {
                MopKind::Append => appends += 1,
                MopKind::Write => writes += 1,
                MopKind::Read => reads += 1,
            }
        }
        Stats {
            txns: h.txns.len(),
            ok,
            info,
            fail,
            processes: procs.len(),
            keys: h.keys.len(),
            appends,
            writes,
            reads,
            span_ns: (lo <= hi).then(|| hi.saturating_sub(lo)),
            mean_ns: (count > 0).then(|| sum / count as f64),
            max_ns: max,
        }
    }
}

fn seconds(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else {
        format!("{:.3} ms", ns / 1e6)
    }
}

/// The page's start, up to and including `<body>`: every report page has
/// the same shell and style.
pub(crate) fn head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\
         <title>{} — isolde report</title><style>{CSS}</style></head>\n<body>\n",
        esc(title)
    )
}

/// The verdict's word, CSS class and sentence.
pub(crate) fn verdict(v: Validity) -> (&'static str, &'static str, &'static str) {
    match v {
        Validity::True => (
            "true",
            "v-true",
            "no anomaly the requested models prohibit was found",
        ),
        Validity::False => (
            "false",
            "v-false",
            "the history contains anomalies the requested models prohibit",
        ),
        Validity::Unknown => (
            "unknown",
            "v-unknown",
            "nothing prohibited was found, but the check was incomplete",
        ),
    }
}

/// The whole page.
pub(crate) fn page(
    h: &History,
    r: &Report,
    sections: &[Section],
    notes: &[String],
    opts: &ReportOptions,
) -> String {
    let title = opts
        .title
        .clone()
        .unwrap_or_else(|| "isolde check".to_string());
    let mut o = String::with_capacity(64 * 1024);
    o.push_str(&head(&title));
    let _ = writeln!(o, "<h1>{}</h1>", esc(&title));
    let (word, class, sentence) = verdict(r.valid);
    let _ = writeln!(
        o,
        "<p id=\"verdict\"><span class=\"verdict {class}\">valid? {word}</span> {}</p>",
        esc(sentence)
    );
    summary(&mut o, r, sections);
    models(&mut o, r);
    if !notes.is_empty() {
        o.push_str("<h2 id=\"notes\">Notes</h2>\n<ul>\n");
        for n in notes {
            let _ = writeln!(o, "<li>{}</li>", esc(n));
        }
        o.push_str("</ul>\n");
    }
    for s in sections {
        anomaly_section(&mut o, s, opts);
    }
    statistics(&mut o, h);
    let _ = writeln!(
        o,
        "<p><small>Written by isolde {}. Edge colours: <span class=\"rel-ww\">ww</span>, \
         <span class=\"rel-wr\">wr</span>, <span class=\"rel-rw\">rw (dashed)</span>, \
         <span class=\"rel-process\">process</span>, <span class=\"rel-realtime\">realtime (dotted)</span>; \
         hover a box or an edge for the full operation or reason.</small></p>",
        env!("CARGO_PKG_VERSION")
    );
    o.push_str("</body></html>\n");
    o
}

fn summary(o: &mut String, r: &Report, sections: &[Section]) {
    let mut kinds: Vec<&str> = sections.iter().map(|s| s.kind.as_str()).collect();
    for k in &r.anomaly_types {
        if !kinds.contains(&k.as_str()) {
            kinds.push(k);
        }
    }
    o.push_str("<h2 id=\"anomalies\">Anomalies</h2>\n");
    if kinds.is_empty() {
        o.push_str("<p>None found.</p>\n");
        return;
    }
    o.push_str(
        "<table><tr><th>type</th><th>found</th><th>shown</th><th>all explanations</th></tr>\n",
    );
    for k in kinds {
        match sections.iter().find(|s| s.kind == k) {
            Some(s) => {
                let _ = writeln!(
                    o,
                    "<tr><td><a href=\"#a-{0}\">{1}</a></td><td class=\"n\">{2}</td><td class=\"n\">{3}</td><td><a href=\"{0}.txt\">{0}.txt</a></td></tr>",
                    s.stem,
                    esc(&s.kind),
                    s.total,
                    s.shown.len()
                );
            }
            None => {
                let _ = writeln!(
                    o,
                    "<tr><td>{}</td><td class=\"n\">—</td><td class=\"n\">0</td><td></td></tr>",
                    esc(k)
                );
            }
        }
    }
    o.push_str("</table>\n");
}

fn models(o: &mut String, r: &Report) {
    o.push_str("<h2 id=\"models\">Consistency models</h2>\n");
    if r.not.is_empty() && r.also_not.is_empty() {
        o.push_str("<p>No model was ruled out.</p>\n");
    } else {
        let list = |xs: &[String]| xs.iter().map(|x| esc(x)).collect::<Vec<_>>().join(", ");
        let _ = writeln!(
            o,
            "<p>Ruled out (the weakest): <b>{}</b>.</p>",
            list(&r.not)
        );
        if !r.also_not.is_empty() {
            let _ = writeln!(
                o,
                "<p>Also ruled out (stronger): {}.</p>",
                list(&r.also_not)
            );
        }
    }
    let canon = |xs: &[String]| -> FxHashSet<String> {
        xs.iter().map(|x| canonical_name(x).to_string()).collect()
    };
    let (not, also) = (canon(&r.not), canon(&r.also_not));
    let mark = |m: &str| {
        if not.contains(m) {
            Mark::Not
        } else if also.contains(m) {
            Mark::AlsoNot
        } else {
            Mark::Open
        }
    };
    let open = if not.is_empty() && also.is_empty() {
        ""
    } else {
        " open=\"open\""
    };
    let _ = writeln!(
        o,
        "<details{open}><summary>The model lattice (stronger models above the weaker ones they imply)</summary>\n\
         <p class=\"key\"><span class=\"m-not\">ruled out</span><span class=\"m-also\">ruled out: implies a ruled-out model</span><span class=\"m-open\">not ruled out by this check</span></p>\n\
         <figure id=\"lattice\">{}</figure></details>",
        lattice_svg(&mark)
    );
}

fn anomaly_section(o: &mut String, s: &Section, opts: &ReportOptions) {
    let _ = writeln!(o, "<h2 id=\"a-{}\">{}</h2>", s.stem, esc(&s.kind));
    let _ = write!(o, "<p>{} found. ", s.total);
    if s.shown.len() < s.total {
        let _ = write!(
            o,
            "<span class=\"cap\">Showing the first {} (at most {} per type are drawn);</span> ",
            s.shown.len(),
            opts.max_cycles
        );
    }
    let _ = writeln!(
        o,
        "<a href=\"{0}.txt\">{0}.txt</a> has every explanation.</p>",
        s.stem
    );
    for (i, f) in s.shown.iter().enumerate() {
        let _ = writeln!(
            o,
            "<div class=\"finding\" id=\"{}-{}\"><h3>{} #{}</h3>\n<div class=\"pair\"><pre class=\"explanation\">{}</pre>",
            s.stem,
            i + 1,
            esc(&s.kind),
            i + 1,
            esc(&f.explanation)
        );
        if let Some((src, w)) = &f.diagram {
            let _ = write!(
                o,
                "<figure><img src=\"{}\" width=\"{}\" alt=\"{} #{} diagram\"/></figure>",
                esc(src),
                num(*w),
                esc(&s.kind),
                i + 1
            );
        }
        o.push_str("</div>\n");
        if let Some(t) = &f.timeline {
            let _ = writeln!(o, "<figure class=\"timeline\">{t}</figure>");
        }
        if !f.detail.is_empty() && f.detail != "null" {
            let detail = if f.detail.len() > DETAIL_MAX {
                let mut cut = DETAIL_MAX;
                while !f.detail.is_char_boundary(cut) {
                    cut -= 1;
                }
                format!(
                    "{}\n… (cut; see {}.txt)",
                    &f.detail[..cut],
                    file_stem(&s.kind)
                )
            } else {
                f.detail.clone()
            };
            let _ = writeln!(
                o,
                "<details><summary>detail (JSON)</summary><pre>{}</pre></details>",
                esc(&detail)
            );
        }
        o.push_str("</div>\n");
    }
}

fn statistics(o: &mut String, h: &History) {
    let st = Stats::of(h);
    o.push_str("<h2 id=\"history\">History</h2>\n<table>\n");
    let mut row = |k: &str, v: String| {
        let _ = writeln!(o, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v));
    };
    row(
        "transactions",
        format!(
            "{} ({} ok, {} info, {} fail)",
            st.txns, st.ok, st.info, st.fail
        ),
    );
    row("processes", st.processes.to_string());
    row("keys", st.keys.to_string());
    row(
        "micro-ops",
        format!(
            "{} appends, {} writes, {} reads",
            st.appends, st.writes, st.reads
        ),
    );
    // Test histories often give every op the same :time; then times say nothing.
    if let Some(span) = st.span_ns.filter(|&s| s > 0) {
        row("duration (first to last :time)", seconds(span as f64));
        if let (Some(mean), Some(max)) = (st.mean_ns, st.max_ns) {
            row(
                "transaction latency",
                format!("mean {}, max {}", seconds(mean), seconds(max as f64)),
            );
        }
    }
    row(
        "real-time order",
        if h.has_invocations {
            "known (invocations recorded)"
        } else {
            "unknown (no invocations)"
        }
        .to_string(),
    );
    o.push_str("</table>\n");
}

/// The top-level page of a report over several histories: one row each,
/// its verdict and what was found, linked to its own report.
pub(crate) fn index_page(entries: &[super::dir::Entry]) -> String {
    let mut o = String::with_capacity(4096);
    let title = format!("{} histories", entries.len());
    o.push_str(&head(&title));
    let _ = write!(
        o,
        "<h1>{}</h1>\n<table id=\"histories\">\n<tr><th>history</th><th>valid?</th><th>found</th></tr>\n",
        esc(&title)
    );
    for e in entries {
        let label = match &e.link {
            Some(href) => format!("<a href=\"{}\">{}</a>", esc(href), esc(&e.label)),
            None => esc(&e.label),
        };
        let cell = match e.valid {
            Some(v) => {
                let (word, class, _) = verdict(v);
                format!("<span class=\"verdict {class}\">{word}</span>")
            }
            None => "<span class=\"verdict v-unknown\">not checked</span>".to_string(),
        };
        let _ = writeln!(
            o,
            "<tr><td>{label}</td><td>{cell}</td><td>{}</td></tr>",
            esc(&e.what)
        );
    }
    let _ = writeln!(
        o,
        "</table>\n<p><small>Written by isolde {}.</small></p>\n</body></html>",
        env!("CARGO_PKG_VERSION")
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::read::read_history;

    #[test]
    fn statistics_count_outcomes_mops_and_latency() {
        let h = read_history(
            "{:index 0, :time 1000000, :type :invoke, :process 0, :f :txn, :value [[:append :x 1] [:r :y nil]]}\n\
             {:index 1, :time 3000000, :type :ok, :process 0, :f :txn, :value [[:append :x 1] [:r :y []]]}\n\
             {:index 2, :time 4000000, :type :fail, :process 1, :f :txn, :value [[:w :z 2]]}\n"
                .as_bytes(),
            "s.edn",
            None,
        )
        .unwrap();
        let st = Stats::of(&h);
        assert_eq!((st.txns, st.ok, st.info, st.fail), (2, 1, 0, 1));
        assert_eq!((st.appends, st.writes, st.reads), (1, 1, 1));
        assert_eq!(st.processes, 2);
        assert_eq!(st.span_ns, Some(3_000_000));
        assert_eq!(st.max_ns, Some(2_000_000));
        assert_eq!(seconds(2_000_000.0), "2.000 ms");
    }
}
