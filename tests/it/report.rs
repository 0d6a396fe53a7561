//! The offline report: files exist and parse, diagrams name the right
//! transactions and edges for known conformance cases, large results are
//! capped, PNG output decodes and is not blank.
//!
//! Reports come from `check_history`; the diagrams are compared with the
//! cycles Elle reports for these cases and, over the whole conformance
//! corpus, with the findings the check returned.

use isolde::check::{check_history, CheckOptions, Finding, Report};
use isolde::history::read::read_history;
use isolde::history::History;
use isolde::report::{write_report, ReportOptions};
use std::path::{Path, PathBuf};

fn conformance_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance")
}

fn conformance(case: &str) -> History {
    let path = conformance_dir()
        .join("list-append")
        .join(format!("{case}.edn"));
    let text = std::fs::read_to_string(&path).expect("conformance case present");
    read_history(text.as_bytes(), case, None).expect("a valid history")
}

fn history(edn: &str) -> History {
    read_history(edn.as_bytes(), "test.edn", None).expect("a valid history")
}

/// A fresh, empty directory for one test, removed when the test passes
/// (kept for a look when it fails).
struct OutDir(PathBuf);

impl std::ops::Deref for OutDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for OutDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn out_dir(name: &str) -> OutDir {
    let d = std::env::temp_dir().join(format!("isolde-report-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    OutDir(d)
}

/// Checks `h` expecting `models` (`None`: Elle's default) and `anomalies`.
fn check(h: &History, models: Option<&[&str]>, anomalies: &[&str]) -> Report {
    let opts = CheckOptions {
        models: models.map(|m| m.iter().map(|s| s.to_string()).collect()),
        anomalies: anomalies.iter().map(|s| s.to_string()).collect(),
        ..CheckOptions::default()
    };
    check_history(h, &opts)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Texts of every `<text>` element of an SVG document, which must parse.
fn svg_texts(path: &Path) -> Vec<String> {
    let s = read(path);
    let doc = roxmltree::Document::parse(&s).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(str::to_string))
        .collect()
}

/// The page, which must parse as XML (it is written as polyglot HTML).
fn page(dir: &Path) -> String {
    let s = read(&dir.join("index.html"));
    roxmltree::Document::parse_with_options(
        &s,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("index.html is not well-formed: {e}"));
    s
}

#[test]
fn g1c_cycle_diagram_names_its_transactions_and_edges() {
    // Elle reports T1 = op 1, T2 = op 0: T1 -wr y 1-> T2 -ww x 1→2-> T1.
    let h = conformance("checker-test--G1c-2");
    let r = check(&h, Some(&[]), &["G1"]);
    assert_eq!(r.anomaly_types, vec!["G1c".to_string()]);
    let dir = out_dir("g1c");
    write_report(&h, &r, &dir, &ReportOptions::default()).unwrap();

    let texts = svg_texts(&dir.join("G1c/1.svg"));
    assert!(
        texts.iter().any(|t| t.starts_with("T1  op 1 ")),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t.starts_with("T2  op 0 ")),
        "{texts:?}"
    );
    assert!(texts.contains(&"wr :y 1".to_string()), "{texts:?}");
    assert!(texts.contains(&"ww :x 1→2".to_string()), "{texts:?}");
    assert!(texts.contains(&"[:append :y 1]".to_string()), "{texts:?}");

    let txt = read(&dir.join("G1c.txt"));
    assert!(txt.starts_with("G1c #1\nLet:\n  T1 = {:index 1"), "{txt}");
    assert!(txt.contains("a contradiction!"), "{txt}");

    let html = page(&dir);
    assert!(html.contains("id=\"a-G1c\""));
    assert!(html.contains("<img src=\"G1c/1.svg\""));
    assert!(html.contains("<a href=\"G1c.txt\">"));
    assert!(html.contains("valid? false"));
    // G1c rules out read-committed: the lattice marks it.
    assert_eq!(r.not, vec!["read-committed".to_string()]);
    assert!(
        html.contains("<g class=\"model not\"><title>read-committed (PL-2)</title>"),
        "lattice mark missing"
    );
    // Offline: nothing is fetched.
    for bad in [
        "src=\"http",
        "href=\"http",
        "<script",
        "@import",
        "url(http",
    ] {
        assert!(!html.contains(bad), "page refers to the network: {bad}");
    }
}

#[test]
fn process_cycle_has_a_process_edge_and_a_timeline_by_position() {
    // Elle: G1c-process through ops 5, 1, 3: wr x 1, wr y 1, process 2.
    let h = conformance("wr-process-test");
    let r = check(&h, Some(&["strong-session-snapshot-isolation"]), &[]);
    assert_eq!(r.anomaly_types, vec!["G1c-process".to_string()]);
    let dir = out_dir("process");
    write_report(&h, &r, &dir, &ReportOptions::default()).unwrap();
    let texts = svg_texts(&dir.join("G1c-process/1.svg"));
    for want in ["wr :x 1", "wr :y 1", "process 2"] {
        assert!(
            texts.contains(&want.to_string()),
            "{want} missing: {texts:?}"
        );
    }
    for op in [1, 3, 5] {
        assert!(
            texts.iter().any(|t| t.contains(&format!("  op {op} · "))),
            "op {op}: {texts:?}"
        );
    }
    let html = page(&dir);
    // Times are all -1 (unknown), so the timeline uses history positions.
    assert!(html.contains("timeline: position in the history"));
    assert!(html.contains(">process 1</text>") && html.contains(">process 2</text>"));
}

#[test]
fn realtime_cycle_labels_its_realtime_edge_and_uses_times() {
    // T1 appends 1 to x and completes; T2 starts later and reads x empty:
    // T2 -rw-> T1 (it missed the append) and T1 -realtime-> T2.
    let h = history(
        "{:index 0, :time 1000, :type :invoke, :process 0, :f :txn, :value [[:append :x 1]]}\n\
         {:index 1, :time 2000, :type :ok, :process 0, :f :txn, :value [[:append :x 1]]}\n\
         {:index 2, :time 3000, :type :invoke, :process 1, :f :txn, :value [[:r :x nil]]}\n\
         {:index 3, :time 4000, :type :ok, :process 1, :f :txn, :value [[:r :x []]]}\n\
         {:index 4, :time 5000, :type :invoke, :process 2, :f :txn, :value [[:r :x nil]]}\n\
         {:index 5, :time 6000, :type :ok, :process 2, :f :txn, :value [[:r :x [1]]]}\n",
    );
    let r = check(&h, None, &[]);
    assert_eq!(r.anomaly_types, vec!["G-single-item-realtime".to_string()]);
    let dir = out_dir("realtime");
    write_report(&h, &r, &dir, &ReportOptions::default()).unwrap();
    let texts = svg_texts(&dir.join("G-single-item-realtime/1.svg"));
    assert!(texts.contains(&"realtime".to_string()), "{texts:?}");
    assert!(texts.contains(&"rw :x init→1".to_string()), "{texts:?}");
    let html = page(&dir);
    assert!(html.contains("timeline: time since the first event shown"));
}

#[test]
fn g1a_is_drawn_writer_to_reader_with_its_detail() {
    let h = conformance("checker-test--G1a-2");
    let r = check(&h, None, &[]);
    assert!(r.anomalies.contains_key("G1a"), "{:?}", r.anomaly_types);
    let dir = out_dir("g1a");
    write_report(&h, &r, &dir, &ReportOptions::default()).unwrap();
    let texts = svg_texts(&dir.join("G1a/1.svg"));
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("T1 (writer)") && t.contains("fail")),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t.starts_with("T2 (reader)")),
        "{texts:?}"
    );
    assert!(
        texts.contains(&"G1a".to_string()),
        "edge label missing: {texts:?}"
    );
    let txt = read(&dir.join("G1a.txt"));
    assert!(
        txt.contains("\"writer\""),
        "detail JSON in the text file: {txt}"
    );
    let html = page(&dir);
    assert!(html.contains("<summary>detail (JSON)</summary>"));
}

#[test]
fn anomalies_without_transactions_get_no_diagram() {
    let h = conformance("checker-test--contradictory-read-orders");
    let r = check(&h, None, &[]);
    assert!(
        r.anomalies.contains_key("incompatible-order"),
        "{:?}",
        r.anomaly_types
    );
    let dir = out_dir("incompatible");
    write_report(&h, &r, &dir, &ReportOptions::default()).unwrap();
    assert!(!dir.join("incompatible-order/1.svg").exists());
    assert!(dir.join("incompatible-order.txt").exists());
    let html = page(&dir);
    assert!(html.contains("id=\"a-incompatible-order\""));
}

#[test]
fn drawing_is_capped_per_type_and_the_page_says_so() {
    let h = conformance("checker-test--G1c-2");
    let mut r = check(&h, Some(&[]), &["G1"]);
    let one: Finding = r.anomalies["G1c"][0].clone();
    r.anomalies.insert("G1c".into(), vec![one; 25]);
    let dir = out_dir("cap");
    let opts = ReportOptions {
        max_cycles: 20,
        ..ReportOptions::default()
    };
    write_report(&h, &r, &dir, &opts).unwrap();
    assert!(dir.join("G1c/20.svg").exists());
    assert!(!dir.join("G1c/21.svg").exists());
    let txt = read(&dir.join("G1c.txt"));
    assert_eq!(
        txt.matches("a contradiction!").count(),
        25,
        "the text file holds every explanation"
    );
    let html = page(&dir);
    assert!(html.contains("Showing the first 20 (at most 20 per type are drawn)"));
    assert_eq!(html.matches("class=\"finding\"").count(), 20);
}

#[cfg(feature = "png")]
#[test]
fn png_diagrams_decode_and_are_not_blank() {
    let h = conformance("checker-test--G1c-2");
    let r = check(&h, Some(&[]), &["G1"]);
    let dir = out_dir("png");
    let opts = ReportOptions {
        plot_format: isolde::report::PlotFormat::Png,
        ..ReportOptions::default()
    };
    write_report(&h, &r, &dir, &opts).unwrap();
    let bytes = std::fs::read(dir.join("G1c/1.png")).unwrap();
    let png = resvg::tiny_skia::Pixmap::decode_png(&bytes).expect("a PNG");
    let px = png.pixels();
    let non_white = px
        .iter()
        .filter(|c| c.red() < 200 || c.green() < 200 || c.blue() < 200)
        .count();
    assert!(
        non_white > px.len() / 100,
        "PNG looks blank: {non_white} of {}",
        px.len()
    );
    assert!(!dir.join("G1c/1.svg").exists());
    assert!(page(&dir).contains("<img src=\"G1c/1.png\""));
}

#[test]
fn a_valid_history_gets_a_page_without_anomalies() {
    let h = history(
        "{:index 0, :time 0, :type :ok, :process 0, :f :txn, :value [[:append :x 1]]}\n\
         {:index 1, :time 1, :type :ok, :process 1, :f :txn, :value [[:r :x [1]]]}\n\
         {:index 2, :time 2, :type :fail, :process 1, :f :txn, :value [[:append :x 2]]}\n",
    );
    let r = check(&h, Some(&["serializable"]), &[]);
    assert!(r.anomalies.is_empty(), "{:?}", r.anomaly_types);
    let dir = out_dir("valid");
    write_report(&h, &r, &dir, &ReportOptions::default()).unwrap();
    let html = page(&dir);
    assert!(html.contains("valid? true"));
    assert!(html.contains("None found."));
    assert!(html.contains("No model was ruled out."));
    assert!(
        html.contains("3 (2 ok, 0 info, 1 fail)"),
        "history statistics"
    );
}

/// Every `.edn` case of the conformance corpus, samples included.
fn corpus() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![conformance_dir()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d)
            .expect("conformance corpus present")
            .flatten()
        {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "edn") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The check's options from a case's expected.json: models and anomalies.
fn case_report(path: &Path, h: &History) -> Report {
    let expected = path.with_extension("expected.json");
    let opts: serde_json::Value = std::fs::read_to_string(expected)
        .ok()
        .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
        .and_then(|v| v.get("options").cloned())
        .unwrap_or_default();
    let names = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let models = opts.get("consistency-models").map(names);
    let anomalies = opts.get("anomalies").map(names).unwrap_or_default();
    check_history(
        h,
        &CheckOptions {
            models,
            anomalies,
            ..CheckOptions::default()
        },
    )
}

#[test]
fn every_conformance_report_is_well_formed_and_draws_its_findings() {
    let mut drawn = 0;
    for path in corpus() {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let Ok(h) = isolde::history::read::read_history_file(&path, None) else {
            continue;
        };
        let r = case_report(&path, &h);
        let dir = out_dir(&format!("corpus-{name}"));
        let opts = ReportOptions {
            max_cycles: 5,
            ..ReportOptions::default()
        };
        write_report(&h, &r, &dir, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
        let html = page(&dir);
        assert!(
            html.len() < 1_000_000,
            "{name}: page is {} bytes",
            html.len()
        );
        for (kind, findings) in &r.anomalies {
            let stem = isolde::report::file_stem(kind);
            assert!(
                dir.join(format!("{stem}.txt")).exists(),
                "{name}: {stem}.txt"
            );
            assert!(
                html.contains(&format!("id=\"a-{stem}\"")),
                "{name}: no section for {kind}"
            );
            for (i, f) in findings.iter().enumerate().take(opts.max_cycles) {
                let Some(c) = &f.cycle else { continue };
                let texts = svg_texts(&dir.join(format!("{stem}/{}.svg", i + 1)));
                let n = c.txns.len() - 1;
                for (j, &t) in c.txns[..n].iter().enumerate() {
                    let want = format!("T{}  op {} · ", j + 1, h.txns[t as usize].index);
                    assert!(
                        texts.iter().any(|x| x.starts_with(&want)),
                        "{name} {kind} #{i}: {want:?} not in {texts:?}"
                    );
                }
                for s in &c.steps {
                    let mut want = s.rel().name().to_string();
                    if let Some(k) = s.key() {
                        want = format!("{want} {}", h.keys.datum(k));
                    }
                    assert!(
                        texts.iter().any(|x| x.starts_with(&want)),
                        "{name} {kind} #{i}: edge {want:?} not in {texts:?}"
                    );
                }
                drawn += 1;
            }
        }
    }
    assert!(drawn >= 20, "only {drawn} cycles drawn over the corpus");
}

/// A finding of the duplicate-value solver (issue: such reports drew no
/// diagram and no timeline, since the report looked for `writer`/`op`/`txns`
/// in JSON the solver did not write) is drawn from its typed transactions.
#[test]
fn duplicate_value_findings_get_a_diagram_and_a_timeline() {
    // Write skew with a repeated value: both read the other's key empty,
    // both append 1. Snapshot isolation allows it; serializability does not.
    let h = history(
        "{:type :invoke, :f :txn, :process 0, :time 10, :index 0, :value [[:r :x nil] [:append :y 1]]}
         {:type :invoke, :f :txn, :process 1, :time 20, :index 1, :value [[:r :y nil] [:append :x 1]]}
         {:type :ok, :f :txn, :process 0, :time 30, :index 2, :value [[:r :x []] [:append :y 1]]}
         {:type :ok, :f :txn, :process 1, :time 40, :index 3, :value [[:r :y []] [:append :x 1]]}
         {:type :invoke, :f :txn, :process 0, :time 50, :index 4, :value [[:append :x 1] [:r :x nil] [:r :y nil]]}
         {:type :ok, :f :txn, :process 0, :time 60, :index 5, :value [[:append :x 1] [:r :x [1 1]] [:r :y [1]]]}",
    );
    let r = check(&h, Some(&["serializable"]), &[]);
    assert_eq!(r.anomaly_types, vec!["G2-item".to_string()], "{r:?}");
    let dir = out_dir("duplicates");
    write_report(&h, &r, &dir, &ReportOptions::default()).unwrap();
    let texts = svg_texts(&dir.join("G2-item/1.svg"));
    for t in ["T1", "T2"] {
        assert!(texts.iter().any(|x| x.starts_with(t)), "{t}: {texts:?}");
    }
    let html = page(&dir);
    assert!(
        html.contains("src=\"G2-item/1.svg\""),
        "no diagram on the page"
    );
    assert!(
        html.contains("<figure class=\"timeline\"><svg"),
        "no timeline on the page"
    );
}

#[test]
fn a_garbage_read_is_listed_with_its_explanation() {
    let h = history(
        "{:index 0, :type :ok, :process 0, :value [[:append :x 1]]}\n\
         {:index 1, :type :ok, :process 1, :value [[:r :x [1 9]]]}",
    );
    let r = check(&h, None, &[]);
    assert!(
        r.anomalies.contains_key("garbage-read"),
        "{:?}",
        r.anomaly_types
    );
    let dir = out_dir("garbage");
    write_report(&h, &r, &dir, &ReportOptions::default()).unwrap();
    let html = page(&dir);
    assert!(html.contains("id=\"a-garbage-read\""));
    assert!(html.contains("and saw 9, which no transaction in the history appended"));
    let txt = read(&dir.join("garbage-read.txt"));
    assert!(txt.contains("and saw 9"), "{txt}");
}
