//! Does a history fit the workload it is checked as? A history that does not
//! is refused before inference: judging `[:r :x 5]` as a list read, or a
//! list-append history as registers, gives a verdict about a history nobody
//! ran (`unknown` for no stated reason, or a confident `true`).

use super::Workload;
use crate::history::print::{mop_edn, op_edn};
use crate::history::{History, MopKind, Observed};

/// Why a history cannot be checked as asked: the line to point at and what
/// is wrong there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub line: u32,
    pub what: String,
}

/// The workload a history shows: list-append if any micro-op appends,
/// registers if any writes; a history of reads only is read by the shape of
/// its reads (a single value is a register, a list is a list).
pub fn infer(h: &History) -> Workload {
    let has = |k: MopKind| h.mops.iter().any(|m| m.kind == k);
    if has(MopKind::Append) {
        return Workload::ListAppend;
    }
    if has(MopKind::Write) {
        return Workload::RwRegister;
    }
    let scalar_read = h
        .mops
        .iter()
        .any(|m| matches!(m.value, Observed::Scalar(_)));
    if scalar_read {
        Workload::RwRegister
    } else {
        Workload::ListAppend
    }
}

/// The workload's name as `-m` spells it.
pub fn name(w: Workload) -> &'static str {
    match w {
        Workload::ListAppend => "list-append",
        Workload::RwRegister => "rw-register",
    }
}

/// The workload given (`-m`), or the one inferred from `h`.
pub fn workload(h: &History, given: Option<Workload>) -> Workload {
    given.unwrap_or_else(|| infer(h))
}

/// The first reason `h` cannot be checked as the `given` workload (else the
/// inferred one), if any: a
/// micro-op or read that the workload has no meaning for, or a process that
/// invoked twice without completing when the models need real-time order
/// (which pairs invocations with completions, as Elle's history library
/// refuses to do there).
pub fn refusal(h: &History, given: Option<Workload>, needs_realtime: bool) -> Option<Refusal> {
    let w = workload(h, given);
    let how = if given.is_some() {
        "given with -m"
    } else {
        "inferred from the history's micro-ops"
    };
    for (t, txn) in h.txns.iter().enumerate() {
        for (i, m) in h.mops(t as u32).iter().enumerate() {
            let wrong = match (w, m.kind, m.value) {
                (Workload::ListAppend, MopKind::Write, _) => {
                    "is a register write; list-append transactions append ([:append k v]) and read lists"
                }
                (Workload::ListAppend, MopKind::Read, Observed::Scalar(_)) => {
                    "reads a single value; a list-append read returns a list ([:r k [v ...]]) or nil"
                }
                (Workload::RwRegister, MopKind::Append, _) => {
                    "appends; rw-register transactions write ([:w k v]) and read single values"
                }
                _ => continue,
            };
            return Some(Refusal {
                line: txn.line,
                what: format!(
                    "micro-op {} (number {} of {}) {wrong}: the history does not fit the {} model ({how})",
                    mop_edn(h, m),
                    i + 1,
                    op_edn(h, t as u32),
                    name(w),
                ),
            });
        }
    }
    let d = h.double_invoke?;
    if !needs_realtime {
        return None;
    }
    Some(Refusal {
        line: d.line,
        what: format!(
            "process {} invokes op {} while its op {} (line {}) has not completed: invocations cannot be paired with completions, which real-time order needs (Elle refuses such a history too); give each process one op at a time, or check models without real-time order",
            d.process, d.index, d.running_index, d.running_line
        ),
    })
}

/// The note for a history whose processes invoked twice without completing
/// but which could be checked anyway (no real-time order needed).
pub fn double_invoke_note(h: &History) -> Option<String> {
    let d = h.double_invoke?;
    Some(format!(
        "process {} invokes op {} (line {}) while its op {} has not completed; each completion was paired with the running invocation of the same micro-ops (real-time order was not needed)",
        d.process, d.index, d.line, d.running_index
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::builder::HistoryBuilder;
    use crate::history::edn::EdnReader;

    fn history(edn: &str) -> History {
        let mut b = HistoryBuilder::new("h.edn");
        for op in EdnReader::new(edn.as_bytes(), "h.edn") {
            b.push(op.unwrap()).unwrap();
        }
        b.finish().unwrap()
    }

    fn given(w: Workload) -> Option<Workload> {
        Some(w)
    }

    #[test]
    fn inference_reads_the_shape_of_reads_when_nothing_is_written() {
        assert_eq!(
            infer(&history("{:type :ok, :process 0, :value [[:r :x 5]]}")),
            Workload::RwRegister
        );
        assert_eq!(
            infer(&history("{:type :ok, :process 0, :value [[:r :x [5]]]}")),
            Workload::ListAppend
        );
        assert_eq!(
            infer(&history("{:type :ok, :process 0, :value [[:r :x nil]]}")),
            Workload::ListAppend
        );
        assert_eq!(
            infer(&history(
                "{:type :ok, :process 0, :value [[:w :x 1] [:r :y [1]]]}"
            )),
            Workload::RwRegister
        );
    }

    #[test]
    fn micro_ops_that_do_not_fit_are_refused_with_their_line() {
        let h = history(
            "{:type :ok, :process 0, :value [[:append :x 1]]}\n{:type :ok, :process 1, :value [[:r :x 5]]}",
        );
        let r = refusal(&h, given(Workload::ListAppend), false).expect("refused");
        assert_eq!(r.line, 2);
        assert!(
            r.what.starts_with("micro-op [:r :x 5] (number 1 of {"),
            "{}",
            r.what
        );
        assert!(
            r.what.contains("list-append model (given with -m)"),
            "{}",
            r.what
        );
        let r = refusal(&h, given(Workload::RwRegister), false).expect("refused");
        assert_eq!(r.line, 1);
        assert!(r.what.contains("[:append :x 1]"), "{}", r.what);
        let inferred = None;
        assert!(refusal(&h, inferred, false)
            .expect("refused")
            .what
            .contains("inferred"));
        let fits = history("{:type :ok, :process 0, :value [[:w :x [1 2]] [:r :x [1 2]]]}");
        assert_eq!(refusal(&fits, given(Workload::RwRegister), false), None);
    }

    #[test]
    fn two_running_invocations_are_refused_only_when_real_time_order_is_needed() {
        let h = history(
            "{:type :invoke, :process 0, :value [[:append :x 1]]}\n\
             {:type :invoke, :process 0, :value [[:append :x 2]]}\n\
             {:type :ok, :process 0, :value [[:append :x 2]]}",
        );
        let r = refusal(&h, None, true).expect("refused");
        assert_eq!(r.line, 2);
        assert!(
            r.what
                .starts_with("process 0 invokes op 1 while its op 0 (line 1)"),
            "{}",
            r.what
        );
        assert_eq!(refusal(&h, None, false), None);
        assert!(double_invoke_note(&h)
            .unwrap()
            .contains("process 0 invokes op 1 (line 2)"));
    }
}
