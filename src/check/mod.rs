//! The checker's front door: history in, verdict out. It runs the stages in
//! order: infer (workload) → build (graph) → search (cycles per SCC) →
//! judge (model lattice) → render (JSON, text).

mod duplicates;
mod exact_append;
mod lattice;
mod registers;
mod search;
pub mod timing;

use crate::evidence::{Explain, ExplainedCycle};
use crate::explain::{self, cycle as cyc};
use crate::graph::{DepGraph, ExplainOrder, GraphBuilder, Rels};
use crate::history::{History, MopKind, Observed, TxnId};
use crate::model::{self, judge, ModelOptions, OrderGraph};
use crate::proof::Proof;
use crate::solver;
use crate::workload::{list_append, Anomaly, Inference};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

pub use crate::model::Validity;

pub use crate::workload::Workload;

/// What to check for: Elle's options.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Which inference to run, when `workload_given`.
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
    /// Time limit of the duplicate-value solver per history, in milliseconds.
    pub solver_timeout_ms: u64,
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
    /// Elle-style inference only, without the exact solver on rw-register
    /// histories and on list-append appends no read shows (for comparing
    /// with Elle; it may miss violations the version order hides, and says
    /// "valid" without a witness).
    pub inference_only: bool,
    /// Threads the check may use (at least 1; the default is the machine's
    /// available parallelism). Verdicts and findings never depend on it.
    pub threads: usize,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            workload: Workload::ListAppend,
            workload_given: false,
            models: None,
            anomalies: vec![],
            cycle_search_timeout_ms: 1000,
            solver_timeout_ms: solver::Limits::default().time_ms,
            witness: false,
            sequential_keys: false,
            linearizable_keys: false,
            wfr_keys: false,
            realtime_versions: false,
            transaction_order: None,
            inference_only: false,
            threads: crate::history::read::default_threads(),
        }
    }
}

impl CheckOptions {
    /// The duplicate-value and register solver's limits these options set.
    pub(crate) fn solver_limits(&self) -> solver::Limits {
        solver::Limits {
            time_ms: self.solver_timeout_ms,
            threads: self.threads.max(1),
            ..solver::Limits::default()
        }
    }

    /// The workload `-m` gave, if it was given.
    pub fn given_workload(&self) -> Option<Workload> {
        self.workload_given.then_some(self.workload)
    }

    /// The register-inference options these ask for.
    pub fn register_options(&self) -> crate::workload::rw_register::RegisterOptions<'_> {
        crate::workload::rw_register::RegisterOptions {
            wfr_keys: self.wfr_keys,
            sequential_keys: self.sequential_keys,
            linearizable_keys: self.linearizable_keys,
            realtime_versions: self.realtime_versions,
            transaction_order: self.transaction_order.as_ref(),
        }
    }

    fn model_options(&self) -> Result<ModelOptions, model::ModelError> {
        let models: Option<Vec<&str>> = self
            .models
            .as_ref()
            .map(|m| m.iter().map(String::as_str).collect());
        let anomalies: Vec<&str> = self.anomalies.iter().map(String::as_str).collect();
        ModelOptions::new(models.as_deref(), &anomalies)
    }
}

impl CheckOptions {
    /// Checks every model and anomaly name against those Elle knows (exact
    /// spelling, a leading `:` ignored), so that a typo is refused rather
    /// than read as "nothing to check" and answered `true`.
    pub fn validate(&self) -> Result<(), OptionsError> {
        for name in self.models.iter().flatten() {
            if model::parse_model(name).is_err() {
                return Err(OptionsError::UnknownModel {
                    name: name.clone(),
                    suggestion: suggest(name, &model::all_models()),
                });
            }
        }
        for name in &self.anomalies {
            let bare = name.strip_prefix(':').unwrap_or(name);
            if model::anomaly_depth(bare).is_none() {
                return Err(OptionsError::UnknownAnomaly {
                    name: name.clone(),
                    suggestion: suggest(bare, &model::all_anomalies()),
                });
            }
        }
        Ok(())
    }
}

/// A model or anomaly name that Elle does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    /// A `-c` name that is no model of the lattice.
    #[error("unknown consistency model {name:?}{}", did_you_mean(suggestion))]
    UnknownModel {
        /// The name as given.
        name: String,
        /// The known name it most likely meant.
        suggestion: Option<&'static str>,
    },
    /// An `-a` name that is no anomaly Elle reports.
    #[error("unknown anomaly {name:?}{}", did_you_mean(suggestion))]
    UnknownAnomaly {
        /// The name as given.
        name: String,
        /// The known name it most likely meant.
        suggestion: Option<&'static str>,
    },
}

fn did_you_mean(s: &Option<&'static str>) -> String {
    s.map(|s| format!("; did you mean {s:?}?"))
        .unwrap_or_default()
}

/// The known name closest to `name`: one differing only in case, else the
/// nearest by edit distance if it is close enough to be a typo.
fn suggest(name: &str, known: &[&'static str]) -> Option<&'static str> {
    if let Some(k) = known.iter().find(|k| k.eq_ignore_ascii_case(name)) {
        return Some(k);
    }
    let lower = name.to_ascii_lowercase();
    known
        .iter()
        .map(|k| (edit_distance(&lower, &k.to_ascii_lowercase()), *k))
        .filter(|&(d, k)| d <= 2.max(k.len() / 4))
        .min()
        .map(|(_, k)| k)
}

/// Levenshtein distance, over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// Rejects unknown model and anomaly names before any work is done.
pub fn validate_options(o: &CheckOptions) -> Result<(), OptionsError> {
    o.validate()
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

/// One reported anomaly. It keeps ids, not text: its Elle-shaped detail and
/// its explanation are rendered from the history when printed, so a
/// history with hundreds of thousands of anomalies costs little unless they
/// are all asked for.
#[derive(Clone)]
pub struct Finding {
    /// For cycle anomalies, the cycle itself (for pictures); the detail and
    /// explanation render from it.
    pub cycle: Option<ExplainedCycle>,
    /// For non-cycle anomalies of decision procedures that name their
    /// transactions directly (the duplicate-value solver): the transactions
    /// involved, in the order they are drawn. Empty otherwise.
    pub txns: Vec<TxnId>,
    /// For non-cycle anomalies: what was found, as ids.
    pub anomaly: Option<Arc<Anomaly>>,
    /// Front-door notes built here (a cycle the search bound left
    /// unexplained, the search timeout): detail and text.
    note: Option<Arc<(Value, String)>>,
}

impl Finding {
    /// A cycle anomaly.
    pub fn of_cycle(c: ExplainedCycle) -> Self {
        Finding {
            cycle: Some(c),
            txns: Vec::new(),
            anomaly: None,
            note: None,
        }
    }

    /// A non-cycle anomaly.
    pub fn of_anomaly(a: Anomaly) -> Self {
        Finding {
            cycle: None,
            txns: Vec::new(),
            anomaly: Some(Arc::new(a)),
            note: None,
        }
    }

    /// A non-cycle anomaly that names its transactions: the report draws
    /// them without reading the rendered detail.
    pub fn of_txns(txns: Vec<TxnId>, a: Anomaly) -> Self {
        Finding {
            txns,
            ..Finding::of_anomaly(a)
        }
    }

    /// A front-door note whose detail and explanation are already built.
    pub fn eager(detail: Value, explanation: String) -> Self {
        Finding {
            cycle: None,
            txns: Vec::new(),
            anomaly: None,
            note: Some(Arc::new((detail, explanation))),
        }
    }

    /// Detail and explanation at once.
    fn render(&self, h: &History) -> (Value, String) {
        match (&self.anomaly, &self.note, &self.cycle) {
            (Some(a), _, _) => crate::explain::anomaly::render(h, a),
            (None, Some(n), _) => (n.0.clone(), n.1.clone()),
            (None, None, Some(c)) => (cyc::to_json(h, c), cyc::render_text(h, c)),
            (None, None, None) => (Value::Null, String::new()),
        }
    }

    /// Elle-shaped detail: `{"cycle", "steps", "type"}` for a cycle, the
    /// anomaly's own map otherwise.
    pub fn detail(&self, h: &History) -> Value {
        match (&self.anomaly, &self.note, &self.cycle) {
            (None, None, Some(c)) => cyc::to_json(h, c),
            _ => self.render(h).0,
        }
    }

    /// The text explanation, in Elle's words for cycles.
    pub fn explanation(&self, h: &History) -> String {
        match (&self.anomaly, &self.note, &self.cycle) {
            (None, None, Some(c)) => cyc::render_text(h, c),
            _ => self.render(h).1,
        }
    }

    /// The detail with the explanation added under `"explanation"` (the
    /// `-v` output: Elle's keys plus the text).
    pub fn detail_explained(&self, h: &History) -> Value {
        let (mut detail, text) = self.render(h);
        if let Value::Object(m) = &mut detail {
            if !text.is_empty() && !m.contains_key("explanation") {
                m.insert("explanation".into(), Value::String(text));
            }
        }
        detail
    }
}

impl std::fmt::Debug for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Finding")
            .field("cycle", &self.cycle)
            .finish_non_exhaustive()
    }
}

/// The result of checking one history.
#[derive(Clone, Debug)]
pub struct Report {
    /// Elle's `valid?`: whether the models and anomalies asked for hold.
    pub valid: Validity,
    /// Sorted anomaly type names.
    pub anomaly_types: Vec<String>,
    /// Weakest models ruled out, and all models ruled out that are stronger.
    pub not: Vec<String>,
    /// Every other model ruled out (Elle's `also-not`).
    pub also_not: Vec<String>,
    /// Reported anomalies by type.
    pub anomalies: BTreeMap<String, Vec<Finding>>,
    /// Notes on the limits of this verdict (unknown real-time order, bounds hit).
    pub notes: Vec<String>,
    /// With `--witness`: for each requested model that holds, the order
    /// that explains every read (`None` when no witness was asked for).
    pub witness: Option<Vec<Witness>>,
}

/// Proof that a history satisfies a model: an order of its transactions
/// under which every read sees what it saw. Replay it to check the verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    /// The model it proves, by Elle's name.
    pub model: &'static str,
    /// Committed transactions (`info` ones included when they must have
    /// committed) in serial order; under snapshot isolation, commit order.
    pub order: Vec<TxnId>,
    /// Snapshot isolation only: for each entry of `order`, how many of the
    /// transactions before it had committed when its snapshot was taken.
    pub snapshots: Option<Vec<u32>>,
}

impl Witness {
    /// `{"order": [op index, ...], "snapshots": [n, ...]}`, ops named by
    /// their `:index` so the witness can be replayed on the file.
    pub fn to_json(&self, h: &History) -> Value {
        let order: Vec<i64> = self
            .order
            .iter()
            .map(|&t| h.txns[t as usize].index)
            .collect();
        let mut m = Map::new();
        m.insert("order".into(), json!(order));
        if let Some(sp) = &self.snapshots {
            m.insert("snapshots".into(), json!(sp));
        }
        Value::Object(m)
    }
}

/// `{"<model>": {"order": [...], ...}, ...}`.
fn witness_json(h: &History, ws: &[Witness]) -> Value {
    Value::Object(
        ws.iter()
            .map(|w| (w.model.to_string(), w.to_json(h)))
            .collect(),
    )
}

impl Report {
    /// The report for options naming an unknown model or anomaly: nothing
    /// was checked, so the verdict is unknown, and the note says why.
    fn refused(e: &OptionsError) -> Report {
        Report {
            valid: Validity::Unknown,
            anomaly_types: vec![],
            not: vec![],
            also_not: vec![],
            anomalies: BTreeMap::new(),
            notes: vec![format!("nothing was checked: {e}")],
            witness: None,
        }
    }

    /// The full Elle-shaped result, as printed by `-v`: `valid?`, and when
    /// anything was found `anomaly-types`, `anomalies` (each with its
    /// explanation), `not`, `also-not`; `notes` when the verdict has limits.
    pub fn to_json(&self, h: &History) -> Value {
        let mut out = Map::new();
        out.insert(
            "valid?".into(),
            serde_json::to_value(self.valid).expect("validity serializes"),
        );
        if self.valid != Validity::True || !self.anomaly_types.is_empty() {
            let mut anomalies = Map::new();
            for t in &self.anomaly_types {
                if t == model::anomaly::EMPTY_TRANSACTION_GRAPH {
                    anomalies.insert(t.clone(), json!(true));
                } else if let Some(fs) = self.anomalies.get(t) {
                    let xs = fs.iter().map(|f| f.detail_explained(h)).collect();
                    anomalies.insert(t.clone(), Value::Array(xs));
                }
            }
            out.insert("anomaly-types".into(), json!(self.anomaly_types));
            out.insert("anomalies".into(), Value::Object(anomalies));
            out.insert("not".into(), json!(self.not));
            out.insert("also-not".into(), json!(self.also_not));
        }
        if let Some(ws) = &self.witness {
            out.insert("witness".into(), witness_json(h, ws));
        }
        if !self.notes.is_empty() {
            out.insert("notes".into(), json!(self.notes));
        }
        Value::Object(out)
    }

    /// Writes [`Report::to_json`] (plus `"file": label`) as pretty JSON,
    /// rendering one anomaly at a time: printing a million findings never
    /// holds them all as JSON at once. Same bytes as pretty-printing the map.
    pub fn write_json(
        &self,
        h: &History,
        label: &str,
        out: &mut impl std::io::Write,
    ) -> serde_json::Result<()> {
        serde_json::to_writer_pretty(out, &Streamed { r: self, h, label })
    }
}

/// [`Report::to_json`] with a `"file"` key, serialized lazily.
struct Streamed<'a> {
    r: &'a Report,
    h: &'a History,
    label: &'a str,
}

/// The `"anomalies"` map, each finding rendered as it is written.
struct StreamedAnomalies<'a>(&'a Report, &'a History);

/// One type's findings.
struct StreamedFindings<'a>(&'a [Finding], &'a History);

impl serde::Serialize for StreamedFindings<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for f in self.0 {
            seq.serialize_element(&f.detail_explained(self.1))?;
        }
        seq.end()
    }
}

impl serde::Serialize for StreamedAnomalies<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        // In `anomaly_types` order, as `to_json` inserts them.
        let types = &self.0.anomaly_types;
        let mut m = s.serialize_map(None)?;
        for t in types {
            if t == model::anomaly::EMPTY_TRANSACTION_GRAPH {
                m.serialize_entry(t, &true)?;
            } else if let Some(fs) = self.0.anomalies.get(t) {
                m.serialize_entry(t, &StreamedFindings(fs, self.1))?;
            }
        }
        m.end()
    }
}

impl serde::Serialize for Streamed<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let r = self.r;
        let found = r.valid != Validity::True || !r.anomaly_types.is_empty();
        // Keys in `to_json`'s order (serde_json keeps insertion order here),
        // then "file", as the CLI always printed it.
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("valid?", &r.valid)?;
        if found {
            m.serialize_entry("anomaly-types", &r.anomaly_types)?;
            m.serialize_entry("anomalies", &StreamedAnomalies(r, self.h))?;
            m.serialize_entry("not", &r.not)?;
            m.serialize_entry("also-not", &r.also_not)?;
        }
        if let Some(ws) = &r.witness {
            m.serialize_entry("witness", &witness_json(self.h, ws))?;
        }
        if !r.notes.is_empty() {
            m.serialize_entry("notes", &r.notes)?;
        }
        m.serialize_entry("file", self.label)?;
        m.end()
    }
}

/// The workload a history shows (see [`crate::workload::fit::infer`]).
pub fn detect_workload(h: &History) -> Workload {
    crate::workload::fit::infer(h)
}

/// Does checking with `options` use real-time order (which pairs each
/// invocation with its completion)?
pub fn needs_realtime(options: &CheckOptions) -> bool {
    let mopts = options.model_options().unwrap_or_default();
    mopts.order_graph() == OrderGraph::Realtime
        || options.linearizable_keys
        || options.realtime_versions
}

/// Checks a history. Options that fail [`CheckOptions::validate`] get an
/// `unknown` verdict that names the bad name: never a verdict for a check
/// other than the one asked for. A history that does not fit the workload
/// should have been refused with [`crate::workload::fit::refusal`] first.
pub fn check_history(h: &History, options: &CheckOptions) -> Report {
    if let Err(e) = options.validate() {
        return Report::refused(&e);
    }
    let mut r = check_inner(h, options);
    let mut first = Vec::new();
    if !options.workload_given {
        let w = crate::workload::fit::name(detect_workload(h));
        first.push(format!(
            "no model given (-m): checked as {w}, inferred from the micro-ops"
        ));
    }
    first.extend(crate::workload::fit::double_invoke_note(h));
    if !first.is_empty() {
        first.append(&mut r.notes);
        r.notes = first;
    }
    r
}

fn check_inner(h: &History, options: &CheckOptions) -> Report {
    let mopts = options.model_options().expect("validated names parse");
    let workload = if options.workload_given {
        options.workload
    } else {
        detect_workload(h)
    };
    match workload {
        Workload::ListAppend if solver::has_duplicate_appends(h) => {
            if let Some(trusted) = without_untrusted_reads(h) {
                return check_inner(&trusted, options);
            }
            duplicates::check(h, options)
        }
        Workload::ListAppend => {
            if let Some(trusted) = without_untrusted_reads(h) {
                return check_inner(&trusted, options);
            }
            let mut clock = timing::Stopwatch::start();
            let (inference, la) = list_append::infer(h, options.threads);
            clock.lap("infer");
            let (report, g) = finish(h, options, workload, &mopts, inference, &la);
            exact_append::decide(h, options, report, &g, mopts.order_graph())
        }
        Workload::RwRegister => {
            let mut clock = timing::Stopwatch::start();
            let (inference, rr) =
                crate::workload::rw_register::infer_with(h, &options.register_options());
            clock.lap("infer");
            let (report, _) = finish(h, options, workload, &mopts, inference, &rr);
            if options.inference_only {
                return report;
            }
            registers::decide(h, options, report)
        }
    }
}

/// The levels of the exact solvers among the requested models (Elle's
/// names; `strong-serializable` is strict serializable), and the notes for
/// the others.
pub(super) fn exact_levels(options: &CheckOptions) -> (Vec<solver::Level>, Vec<String>) {
    let requested: Vec<String> = options
        .models
        .clone()
        .unwrap_or_else(|| vec!["strict-serializable".to_string()]);
    let mut levels = Vec::new();
    let mut others = Vec::new();
    for m in &requested {
        let friendly = model::friendly_name(m);
        let name = if friendly == "strong-serializable" {
            "strict-serializable"
        } else {
            friendly
        };
        // The register solver decides serializable, strict serializable and
        // snapshot isolation (`Level::ALL`); read committed is the
        // list-append duplicate-value solver's only.
        match solver::Level::from_name(name).filter(|l| solver::Level::ALL.contains(l)) {
            Some(l) if !levels.contains(&l) => levels.push(l),
            Some(_) => {}
            None => others.push(m.clone()),
        }
    }
    (levels, others)
}

/// Folds the exact solvers' `verdicts` into inference's `report`: their
/// findings (kinds inference did not report), the models they rule out,
/// their unknowns' reasons, their witnesses, and the verdict. With
/// `decided_all` (every requested model has a verdict here) the exact
/// verdict replaces inference's `unknown` (an empty graph, a bound);
/// otherwise a `true` needs both.
pub(super) fn merge_exact(
    h: &History,
    mut report: Report,
    options: &CheckOptions,
    verdicts: &[solver::DupVerdict],
    decided_all: bool,
) -> Report {
    let mut said: Vec<&Proof> = Vec::new();
    // Kinds inference already reported (with Elle's detail) are not
    // repeated in the solver's shape: its order-free contradictions
    // (internal, G1a, ...) are the same facts.
    let inferred: Vec<String> = report.anomalies.keys().cloned().collect();
    for v in verdicts {
        let Some(a) = &v.anomaly else { continue };
        if said.contains(&&a.proof) || inferred.iter().any(|k| k == a.kind.name()) {
            continue;
        }
        said.push(&a.proof);
        report
            .anomalies
            .entry(a.kind.name().to_string())
            .or_default()
            .push(lattice::finding(v.level, a));
    }
    report.notes.extend(
        verdicts
            .iter()
            .filter(|v| v.valid == Validity::Unknown)
            .map(|v| {
                format!(
                    "{}: {}",
                    v.level.name(),
                    explain::proof::reason(h, &v.reason, v.proof())
                )
            }),
    );
    let (not, also) = solver::ruled_out(verdicts);
    let known: Vec<String> = report.not.iter().chain(&report.also_not).cloned().collect();
    for n in not.into_iter().chain(also) {
        if known.iter().any(|k| k.as_str() == n) {
            continue;
        }
        if report.not.is_empty() {
            report.not.push(n.to_string());
        } else {
            report.also_not.push(n.to_string());
        }
    }
    let exact = solver::overall(verdicts);
    report.valid = if report.valid == Validity::False || exact == Validity::False {
        Validity::False
    } else if decided_all {
        // Every requested model was decided here: inference's "unknown"
        // (an empty graph, a bound) no longer applies.
        report
            .anomaly_types
            .retain(|t| t.as_str() != model::anomaly::EMPTY_TRANSACTION_GRAPH);
        report.notes.retain(|n| !n.starts_with("unknown:"));
        exact
    } else if report.valid == Validity::True && exact == Validity::True {
        Validity::True
    } else {
        Validity::Unknown
    };
    for k in report.anomalies.keys() {
        if !report.anomaly_types.contains(k) {
            report.anomaly_types.push(k.clone());
        }
    }
    report.anomaly_types.sort();
    if options.witness {
        report.witness = Some(
            verdicts
                .iter()
                .filter_map(|v| {
                    Some(Witness {
                        model: v.level.name(),
                        order: v.witness.clone()?,
                        snapshots: v.snapshots.clone(),
                    })
                })
                .collect(),
        );
    }
    report
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

/// The shared back half: graph, search, judge, render. The graph is
/// returned too: its topological order is a serial witness.
fn finish(
    h: &History,
    options: &CheckOptions,
    workload: Workload,
    mopts: &ModelOptions,
    inference: Inference,
    explainer: &dyn Explain,
) -> (Report, DepGraph) {
    let mut clock = timing::Stopwatch::start();
    let Inference { edges, anomalies } = inference;
    let mut found: BTreeMap<String, Vec<Finding>> = BTreeMap::new();
    for a in anomalies {
        let kind = a.kind;
        found
            .entry(kind.to_string())
            .or_default()
            .push(Finding::of_anomaly(a));
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
    clock.lap("graph");
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
        crate::graph::SearchLimits {
            scc_timeout: Some(std::time::Duration::from_millis(
                options.cycle_search_timeout_ms,
            )),
            threads: options.threads.max(1),
            ..crate::graph::SearchLimits::default()
        },
        &mopts.prohibited(),
        &mut notes,
    ) {
        found.entry(kind).or_default().push(f);
    }
    clock.lap("search");

    let mut types: Vec<&str> = found.keys().map(String::as_str).collect();
    if empty {
        types.push(model::anomaly::EMPTY_TRANSACTION_GRAPH);
    }
    let verdict = judge(&types, mopts);
    clock.lap("judge");
    if verdict.valid == Validity::Unknown {
        notes.extend(unknown_reasons(&verdict.anomaly_types, mopts));
    }
    let mut reported: BTreeMap<String, Vec<Finding>> = BTreeMap::new();
    for t in &verdict.anomaly_types {
        if let Some(fs) = found.remove(t) {
            reported.insert(t.clone(), fs);
        }
    }
    let report = Report {
        valid: verdict.valid,
        anomaly_types: verdict.anomaly_types,
        not: verdict.not,
        also_not: verdict.also_not,
        anomalies: reported,
        notes,
        witness: None,
    };
    (report, g)
}

/// Why a verdict is `unknown`, in words: every anomaly reported is one the
/// requested models do not prohibit, and each kind has its own reason.
fn unknown_reasons(reported: &[String], mopts: &ModelOptions) -> Vec<String> {
    use model::anomaly::{CYCLE_SEARCH_TIMEOUT, EMPTY_TRANSACTION_GRAPH};
    let prohibited = mopts.prohibited();
    let mut why = Vec::new();
    if reported.iter().any(|t| t == EMPTY_TRANSACTION_GRAPH) {
        why.push(
            "unknown: the transaction graph is empty (no committed transaction read or overwrote another's write, and no order links them), so there is nothing to find a cycle in".to_string(),
        );
    }
    if reported.iter().any(|t| t == CYCLE_SEARCH_TIMEOUT) {
        why.push(
            "unknown: the cycle search hit its bound (-s) before it found an anomaly the models prohibit".to_string(),
        );
    }
    let others: Vec<&str> = reported
        .iter()
        .map(String::as_str)
        .filter(|t| {
            *t != EMPTY_TRANSACTION_GRAPH && *t != CYCLE_SEARCH_TIMEOUT && !prohibited.contains(*t)
        })
        .collect();
    if !others.is_empty() {
        why.push(format!(
            "unknown: found {}, which the requested models do not prohibit, so the history neither satisfies nor violates them",
            others.join(", ")
        ));
    }
    why
}

/// A human-readable report: verdict, models ruled out, every explanation.
pub fn render_report(h: &History, r: &Report, name: &str) -> String {
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
    for w in r.witness.iter().flatten() {
        let j = w.to_json(h);
        match &w.snapshots {
            None => s.push_str(&format!(
                "Witness for {}: op indices in order {}\n",
                w.model, j["order"]
            )),
            Some(_) => s.push_str(&format!(
                "Witness for {}: op indices in commit order {}; each one's snapshot holds this many of the commits before it: {}\n",
                w.model, j["order"], j["snapshots"]
            )),
        }
    }
    for (kind, fs) in &r.anomalies {
        s.push_str(&format!("\n== {kind} ({} found)\n", fs.len()));
        for (i, f) in fs.iter().enumerate() {
            s.push_str(&render_finding(h, kind, i + 1, f));
            s.push('\n');
        }
    }
    s
}

/// One finding as [`render_report`] prints it: `<type> #<n>` (numbered from
/// 1, as in the `-d` report's text files and page) above its explanation.
pub fn render_finding(h: &History, kind: &str, n: usize, f: &Finding) -> String {
    format!("{kind} #{n}\n{}\n", f.explanation(h))
}

/// Explains a cycle found by the search, or `None` when some step cannot be
/// justified (which would be a bug in inference).
pub(crate) fn explain_cycle(
    h: &History,
    g: &crate::graph::DepGraph,
    ex: &dyn Explain,
    txns: Vec<u32>,
) -> Option<ExplainedCycle> {
    let steps = crate::evidence::explain_steps(h, ex, &txns, |a, b| g.edge(a, b))?;
    let rels: Vec<Rels> = steps.iter().map(|s| s.rel()).collect();
    // No data step at all: not a dependency cycle (real time and process
    // order cannot close one), so inference went wrong; report nothing.
    let kind = crate::graph::classify(&rels)?;
    Some(ExplainedCycle { kind, txns, steps })
}

#[cfg(test)]
mod options_tests {
    use super::*;

    #[test]
    fn validation_names_the_unknown_name_and_the_nearest_known_one() {
        let o = CheckOptions {
            anomalies: vec!["G-singel".into()],
            ..CheckOptions::default()
        };
        assert_eq!(
            o.validate(),
            Err(OptionsError::UnknownAnomaly {
                name: "G-singel".into(),
                suggestion: Some("G-single"),
            })
        );
        let o = CheckOptions {
            models: Some(vec!["Serializable".into()]),
            ..CheckOptions::default()
        };
        assert_eq!(
            o.validate(),
            Err(OptionsError::UnknownModel {
                name: "Serializable".into(),
                suggestion: Some("serializable"),
            })
        );
        let o = CheckOptions {
            models: Some(vec!["PL-3".into(), ":snapshot-isolation".into()]),
            anomalies: vec![
                ":G1".into(),
                "G2".into(),
                "internal".into(),
                "lost-update".into(),
            ],
            ..CheckOptions::default()
        };
        assert_eq!(o.validate(), Ok(()));
    }

    #[test]
    fn check_history_never_reads_an_unknown_name_as_none() {
        let h = crate::history::read::read_history(
            "{:type :ok, :process 0, :value [[:append :x 1]]}".as_bytes(),
            "test",
            None,
        )
        .expect("reads");
        let o = CheckOptions {
            models: Some(vec![]),
            anomalies: vec!["G3".into()],
            ..CheckOptions::default()
        };
        let r = check_history(&h, &o);
        assert_eq!(r.valid, Validity::Unknown);
        assert!(
            r.notes[0].contains("unknown anomaly \"G3\""),
            "{:?}",
            r.notes
        );
    }
}

#[cfg(test)]
mod garbage_tests {
    use super::*;

    fn check(edn: &str) -> (History, Report) {
        let h = crate::history::read::read_history(edn.as_bytes(), "test", None).expect("reads");
        let r = check_history(&h, &CheckOptions::default());
        (h, r)
    }

    #[test]
    fn a_register_read_of_a_value_never_written_is_false_not_unknown() {
        let (h, r) = check(
            "{:index 0, :type :ok, :process 0, :value [[:w :x 5]]}\n\
             {:index 1, :type :ok, :process 1, :value [[:r :x 7]]}",
        );
        assert_eq!(r.valid, Validity::False, "{:?}", r.anomaly_types);
        assert!(r.anomaly_types.contains(&"garbage-read".to_string()));
        assert!(
            r.not.contains(&"read-uncommitted".to_string()),
            "{:?}",
            r.not
        );
        // Every format carries the explanation. (An op without `:f` prints
        // without one.)
        let text = render_report(&h, &r, "t");
        assert!(text.contains("== garbage-read (1 found)"), "{text}");
        assert!(
            text.contains("{:index 1, :time -1, :type :ok, :process 1, :value [[:r :x 7]]} read [:r :x 7], but no transaction in the history wrote that value"),
            "{text}"
        );
        let json = r.to_json(&h);
        let g = &json["anomalies"]["garbage-read"][0];
        assert!(g["explanation"].as_str().unwrap().contains("[:r :x 7]"));
        assert_eq!(g["op"]["index"], 1, "{g}");
    }

    #[test]
    fn a_list_read_of_an_element_never_appended_is_false() {
        let (h, r) = check(
            "{:index 0, :type :ok, :process 0, :f :txn, :value [[:append :x 1]]}\n\
             {:index 1, :type :ok, :process 1, :f :txn, :value [[:r :x [1 9]]]}",
        );
        assert_eq!(r.valid, Validity::False, "{:?}", r.anomaly_types);
        assert_eq!(r.anomaly_types, ["empty-transaction-graph", "garbage-read"]);
        let text = render_report(&h, &r, "t");
        assert!(text.contains("and saw 9, which no transaction in the history appended"));
    }

    #[test]
    fn initial_reads_and_reads_of_failed_writes_are_not_garbage() {
        let (_, r) = check(
            "{:index 0, :type :ok, :process 0, :f :txn, :value [[:append :x 1]]}\n\
             {:index 1, :type :ok, :process 1, :f :txn, :value [[:r :x []] [:r :y nil]]}\n\
             {:index 2, :type :ok, :process 1, :f :txn, :value [[:r :x [1]]]}",
        );
        assert!(!r.anomaly_types.contains(&"garbage-read".to_string()));
        assert_ne!(r.valid, Validity::False, "{:?}", r.anomaly_types);
        let (_, r) = check(
            "{:index 0, :type :fail, :process 0, :value [[:w :x 5]]}\n\
             {:index 1, :type :ok, :process 1, :value [[:r :x 5] [:r :y nil]]}",
        );
        assert_eq!(r.anomaly_types, ["G1a", "empty-transaction-graph"]);
    }
}
