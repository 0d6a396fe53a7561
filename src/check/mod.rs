//! The checker's front door: history in, verdict out. It runs the stages in
//! order: infer (workload) → build (graph) → search (cycles per SCC) →
//! judge (model lattice) → render (JSON, text).

mod search;

use crate::explain::cycle::{self as cyc, ExplainedCycle};
use crate::graph::{ExplainOrder, GraphBuilder, Rels};
use crate::history::{History, MopKind, Observed};
use crate::model::{self, judge, ModelOptions, OrderGraph};
use crate::workload::{duplicates, list_append, Explain, Inference};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

pub use crate::model::Validity;

/// Which workload inference to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Workload {
    #[default]
    ListAppend,
    RwRegister,
}

/// What to check for: Elle's options.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    pub workload: Workload,
    /// False: infer the workload from the history's micro-ops.
    pub workload_given: bool,
    /// Consistency models expected to hold. `None` = Elle's default
    /// (`strict-serializable`); `Some(vec![])` = no models, only `anomalies`.
    pub models: Option<Vec<String>>,
    /// Additional anomalies that must not occur.
    pub anomalies: Vec<String>,
    /// Bound on cycle search per SCC, in milliseconds.
    pub cycle_search_timeout_ms: u64,
    /// Histories with repeated values: print the serial order (or SI commit
    /// order) that explains every read, for each level that holds.
    pub witness: bool,
    /// rw-register: each process's operations on a key follow process order.
    pub sequential_keys: bool,
    /// rw-register: operations on each key follow real-time order.
    pub linearizable_keys: bool,
    /// rw-register: writes follow reads within a transaction (off by
    /// default, as in Elle's checker and elle-cli).
    pub wfr_keys: bool,
    /// rw-register: order the writers of each key by real time (OneLite's
    /// option; for systems that claim strict serializability).
    pub realtime_versions: bool,
    /// rw-register: the database's own commit order, op `:index` → position.
    pub transaction_order: Option<BTreeMap<i64, i64>>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            workload: Workload::ListAppend,
            workload_given: false,
            models: None,
            anomalies: vec![],
            cycle_search_timeout_ms: 1000,
            witness: false,
            sequential_keys: false,
            linearizable_keys: false,
            wfr_keys: false,
            realtime_versions: false,
            transaction_order: None,
        }
    }
}

impl CheckOptions {
    fn model_options(&self) -> Result<ModelOptions, model::ModelError> {
        let models: Option<Vec<&str>> = self
            .models
            .as_ref()
            .map(|m| m.iter().map(String::as_str).collect());
        let anomalies: Vec<&str> = self.anomalies.iter().map(String::as_str).collect();
        ModelOptions::new(models.as_deref(), &anomalies)
    }
}

/// Rejects unknown model names before any work is done.
pub fn validate_options(o: &CheckOptions) -> anyhow::Result<()> {
    o.model_options()?;
    Ok(())
}

impl Validity {
    /// `true`, `false` or `unknown`, as elle-cli prints it.
    pub fn name(self) -> &'static str {
        match self {
            Validity::True => "true",
            Validity::False => "false",
            Validity::Unknown => "unknown",
        }
    }
}

/// One reported anomaly: Elle-shaped detail plus a text explanation.
#[derive(Clone, Debug)]
pub struct Finding {
    pub detail: Value,
    pub explanation: String,
    /// For cycle anomalies, the cycle itself (for pictures).
    pub cycle: Option<ExplainedCycle>,
}

/// The result of checking one history.
#[derive(Clone, Debug)]
pub struct Report {
    pub valid: Validity,
    /// Sorted anomaly type names.
    pub anomaly_types: Vec<String>,
    /// Weakest models ruled out, and all models ruled out that are stronger.
    pub not: Vec<String>,
    pub also_not: Vec<String>,
    /// Reported anomalies by type.
    pub anomalies: BTreeMap<String, Vec<Finding>>,
    /// Notes on the limits of this verdict (unknown real-time order, bounds hit).
    pub notes: Vec<String>,
    /// The full Elle-shaped result, as printed by `-v`.
    pub json: Value,
}

/// The workload a history shows: registers if any micro-op is a write and
/// none an append; list-append otherwise.
pub fn detect_workload(h: &History) -> Workload {
    let writes = h.mops.iter().any(|m| m.kind == MopKind::Write);
    let appends = h.mops.iter().any(|m| m.kind == MopKind::Append);
    if writes && !appends {
        Workload::RwRegister
    } else {
        Workload::ListAppend
    }
}

/// Checks a history. Unknown model names must have been rejected with
/// [`validate_options`]; here they count as no model.
pub fn check_history(h: &History, options: &CheckOptions) -> Report {
    let mopts = options.model_options().unwrap_or_default();
    let workload = if options.workload_given {
        options.workload
    } else {
        detect_workload(h)
    };
    match workload {
        Workload::ListAppend if duplicates::has_duplicate_appends(h) => {
            if let Some(trusted) = without_untrusted_reads(h) {
                return check_history(&trusted, options);
            }
            check_duplicates(h, options)
        }
        Workload::ListAppend => {
            if let Some(trusted) = without_untrusted_reads(h) {
                return check_history(&trusted, options);
            }
            let (inference, la) = list_append::infer(h);
            finish(h, options, workload, &mopts, inference, &la)
        }
        Workload::RwRegister => {
            let (inference, rr) = crate::workload::rw_register::infer(h, options);
            finish(h, options, workload, &mopts, inference, &rr)
        }
    }
}

/// A list-append history whose appended values repeat: Elle's inference
/// does not apply (a value no longer names one append), so the exact
/// solver decides the levels it supports (serializable, strict
/// serializable, snapshot isolation); other requested models are reported
/// as not checked.
fn check_duplicates(h: &History, options: &CheckOptions) -> Report {
    let requested: Vec<String> = options
        .models
        .clone()
        .unwrap_or_else(|| vec!["strict-serializable".to_string()]);
    let mut levels = Vec::new();
    let mut notes = vec![
        "appended values repeat, so the history was decided by the duplicate-value solver (exact for serializable, strict-serializable and snapshot-isolation)".to_string(),
    ];
    for m in &requested {
        let friendly = model::friendly_name(m);
        let name = if friendly == "strong-serializable" {
            "strict-serializable"
        } else {
            friendly
        };
        match duplicates::Level::from_name(name) {
            Some(l) if !levels.contains(&l) => levels.push(l),
            Some(_) => {}
            None => notes.push(format!(
                "{m} is not checked on histories with repeated values"
            )),
        }
    }
    if !options.anomalies.is_empty() {
        notes.push(format!(
            "anomalies ({}) are not searched on histories with repeated values",
            options.anomalies.join(", ")
        ));
    }
    let verdicts = duplicates::check_levels(h, &levels, &duplicates::Limits::default());
    let mut json = duplicates::render_json(h, &verdicts, options.witness);
    let valid = if levels.is_empty() {
        Validity::Unknown
    } else {
        verdicts
            .iter()
            .fold(Validity::True, |acc, v| match (acc, v.valid) {
                (Validity::False, _) | (_, Validity::False) => Validity::False,
                (Validity::Unknown, _) | (_, Validity::Unknown) => Validity::Unknown,
                _ => Validity::True,
            })
    };
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let text = duplicates::render_text(h, &verdicts, options.witness);
    let mut anomalies = BTreeMap::new();
    if let Some(Value::Object(m)) = json.get("anomalies") {
        for (kind, xs) in m {
            let fs = xs
                .as_array()
                .into_iter()
                .flatten()
                .map(|x| Finding {
                    detail: x.clone(),
                    explanation: x["explanation"].as_str().unwrap_or(&text).to_string(),
                    cycle: None,
                })
                .collect();
            anomalies.insert(kind.clone(), fs);
        }
    }
    if let Value::Object(m) = &mut json {
        m.insert(
            "valid?".into(),
            serde_json::to_value(valid).expect("validity serializes"),
        );
        let mut all = strings(m.get("notes").unwrap_or(&Value::Null));
        notes.append(&mut all);
        m.insert("notes".into(), json!(notes));
    }
    Report {
        valid,
        anomaly_types: strings(&json["anomaly-types"]),
        not: strings(&json["not"]),
        also_not: strings(&json["also-not"]),
        anomalies,
        notes,
        json,
    }
}

/// A copy of `h` in which the reads of `info` and `fail` transactions are
/// `nil` (unknown), or `None` when there is nothing to blank. Such a
/// transaction may never have committed, so what it read constrains
/// nothing (Adya's definitions are over committed transactions); Elle
/// still uses these reads for version orders and dependencies, which can
/// raise false alarms. Jepsen records `info`/`fail` completions with the
/// invocation's nil reads, so on its histories nothing changes.
fn without_untrusted_reads(h: &History) -> Option<History> {
    let untrusted = |t: &crate::history::Txn| t.outcome != crate::history::Outcome::Ok;
    let needed = h.txns.iter().enumerate().any(|(i, t)| {
        untrusted(t)
            && h.mops(i as u32)
                .iter()
                .any(|m| m.kind == MopKind::Read && m.value != Observed::Nil)
    });
    if !needed {
        return None;
    }
    let mut out = h.clone();
    for t in h.txns.iter().filter(|t| untrusted(t)) {
        for m in &mut out.mops[t.mops_start as usize..(t.mops_start + t.mops_len) as usize] {
            if m.kind == MopKind::Read {
                m.value = Observed::Nil;
            }
        }
    }
    Some(out)
}

/// The shared back half: graph, search, judge, render.
fn finish(
    h: &History,
    options: &CheckOptions,
    workload: Workload,
    mopts: &ModelOptions,
    inference: Inference,
    explainer: &dyn Explain,
) -> Report {
    let Inference { edges, anomalies } = inference;
    let mut found: BTreeMap<String, Vec<Finding>> = BTreeMap::new();
    for a in anomalies {
        found.entry(a.kind.to_string()).or_default().push(Finding {
            detail: a.detail,
            explanation: a.explanation,
            cycle: None,
        });
    }
    let mut notes = Vec::new();
    let order = mopts.order_graph();
    let mut b = GraphBuilder::with_nodes(h.txns.len());
    b.reserve(edges.len());
    for (x, y, r) in edges {
        b.add(x, y, r);
    }
    match order {
        OrderGraph::Realtime => {
            if !h.has_invocations {
                notes.push(
                    "the history has no invocations, so real-time order is unknown: real-time anomalies cannot be seen"
                        .to_string(),
                );
            }
            b.add_all(&crate::graph::realtime_edges(h), Rels::REALTIME);
        }
        OrderGraph::Process => b.add_all(&crate::graph::process_edges(h), Rels::PROCESS),
        OrderGraph::None => {}
    }
    let g = b.build();
    let empty = g.edge_count() == 0;
    let order = match workload {
        Workload::ListAppend => ExplainOrder::LIST_APPEND,
        Workload::RwRegister => ExplainOrder::RW_REGISTER,
    };
    for (kind, f) in search::cycles(
        h,
        &g,
        explainer,
        order,
        options.cycle_search_timeout_ms,
        &mut notes,
    ) {
        found.entry(kind).or_default().push(f);
    }

    let mut types: Vec<&str> = found.keys().map(String::as_str).collect();
    if empty {
        types.push(model::anomaly::EMPTY_TRANSACTION_GRAPH);
    }
    let verdict = judge(&types, mopts);
    let mut reported: BTreeMap<String, Vec<Finding>> = BTreeMap::new();
    let mut anomalies_json = Map::new();
    for t in &verdict.anomaly_types {
        if t == model::anomaly::EMPTY_TRANSACTION_GRAPH {
            anomalies_json.insert(t.clone(), json!(true));
            continue;
        }
        if let Some(fs) = found.remove(t) {
            anomalies_json.insert(
                t.clone(),
                Value::Array(fs.iter().map(|f| f.detail.clone()).collect()),
            );
            reported.insert(t.clone(), fs);
        }
    }
    let mut out = Map::new();
    out.insert(
        "valid?".into(),
        serde_json::to_value(verdict.valid).expect("validity serializes"),
    );
    if verdict.valid != Validity::True || !verdict.anomaly_types.is_empty() {
        out.insert("anomaly-types".into(), json!(verdict.anomaly_types));
        out.insert("anomalies".into(), Value::Object(anomalies_json));
        out.insert("not".into(), json!(verdict.not));
        out.insert("also-not".into(), json!(verdict.also_not));
    }
    if !notes.is_empty() {
        out.insert("notes".into(), json!(notes));
    }
    Report {
        valid: verdict.valid,
        anomaly_types: verdict.anomaly_types,
        not: verdict.not,
        also_not: verdict.also_not,
        anomalies: reported,
        notes,
        json: Value::Object(out),
    }
}

/// A human-readable report: verdict, models ruled out, every explanation.
pub fn render_report(_h: &History, r: &Report, name: &str) -> String {
    let mut s = format!("{name}: valid? {}\n", r.valid.name());
    if !r.not.is_empty() {
        s.push_str(&format!("Not {}", r.not.join(", ")));
        if !r.also_not.is_empty() {
            s.push_str(&format!(" (nor {})", r.also_not.join(", ")));
        }
        s.push('\n');
    }
    for note in &r.notes {
        s.push_str(&format!("Note: {note}\n"));
    }
    if let Some(Value::Object(w)) = r.json.get("witness") {
        for (level, v) in w {
            s.push_str(&format!(
                "Witness for {level}: op indices in order {}\n",
                v["order"]
            ));
        }
    }
    for (kind, fs) in &r.anomalies {
        s.push_str(&format!("\n== {kind} ({} found)\n", fs.len()));
        for f in fs {
            s.push_str(&f.explanation);
            s.push_str("\n\n");
        }
    }
    s
}

/// Explains a cycle found by the search, or `None` when some step cannot be
/// justified (which would be a bug in inference).
pub(crate) fn explain_cycle(
    h: &History,
    g: &crate::graph::DepGraph,
    ex: &dyn Explain,
    txns: Vec<u32>,
) -> Option<ExplainedCycle> {
    let steps = cyc::explain_steps(h, ex, &txns, |a, b| g.edge(a, b))?;
    let kind = cyc::classify(&steps);
    Some(ExplainedCycle { kind, txns, steps })
}
