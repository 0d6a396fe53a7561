//! The words of the exact solvers' proofs and verdict reasons
//! ([`crate::proof`]), made from the history and the typed records: the
//! only place a solver finding's explanation, or a solver verdict's
//! reason, is worded.

use crate::history::{History, KeyId, TxnId, ValId};
use crate::proof::{
    AppendStep, AppendWhy, BadSource, Internal, NotListAppend, Proof, Reason, RegisterStep,
    RegisterWhy, Replay,
};
use std::fmt::Write;

/// A transaction's name: `T` and its index.
fn txn(h: &History, t: TxnId) -> String {
    format!("T{}", h.txns[t as usize].index)
}

/// Transactions' names, joined by `", "`.
fn txns(h: &History, ts: &[TxnId]) -> String {
    ts.iter().map(|&t| txn(h, t)).collect::<Vec<_>>().join(", ")
}

fn key(h: &History, k: KeyId) -> String {
    h.keys.datum(k).to_string()
}

fn val(h: &History, v: ValId) -> String {
    h.values.datum(v).to_string()
}

/// A list of values as EDN: `[1 2 3]`.
fn list(h: &History, vs: &[ValId]) -> String {
    let xs: Vec<String> = vs.iter().map(|&v| val(h, v)).collect();
    format!("[{}]", xs.join(" "))
}

/// A register version: a value, or `nil`.
fn version(h: &History, v: Option<ValId>) -> String {
    match v {
        Some(v) => val(h, v),
        None => "nil".to_string(),
    }
}

/// Blocks of appends, each as "T1 appended [1 2]", joined by `", "`.
fn appends(h: &History, blocks: &[(TxnId, Vec<ValId>)]) -> String {
    blocks
        .iter()
        .map(|(t, b)| format!("{} appended {}", txn(h, *t), list(h, b)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The explanation of a solver finding.
pub fn render(h: &History, p: &Proof) -> String {
    match p {
        Proof::OwnAppendsUnread {
            txn: t,
            key: k,
            appended,
            read,
        } => format!(
            "{} appended {} to key {} and then read {}, which does not end with its own appends",
            txn(h, *t),
            list(h, appended),
            key(h, *k),
            list(h, read)
        ),
        Proof::TwoStates {
            txn: t,
            key: k,
            first,
            second,
        } => format!(
            "{} read key {} twice and saw two different states from other transactions: {} and {}",
            txn(h, *t),
            key(h, *k),
            list(h, first),
            list(h, second)
        ),
        Proof::IncompatibleReads {
            key: k,
            txn: t,
            read,
            other,
            other_read,
        } => format!(
            "{} read key {} as {} and {} read it as {}: neither is a prefix of the other, so no single order of appends explains both",
            txn(h, *t),
            key(h, *k),
            list(h, read),
            txn(h, *other),
            list(h, other_read)
        ),
        Proof::PinnedAppend {
            key: k,
            txn: t,
            prefix,
            block,
            reader,
            read,
        } => format!(
            "{} read key {} as {} and then appended {}, so its appends come right after that prefix; but {} read {}, which continues differently",
            txn(h, *t),
            key(h, *k),
            list(h, prefix),
            list(h, block),
            txn(h, *reader),
            list(h, read)
        ),
        Proof::FailedValue {
            key: k,
            reader,
            read,
            value,
            failed,
        } => format!(
            "{} read key {} as {}, but {} was only appended by failed {}",
            txn(h, *reader),
            key(h, *k),
            list(h, read),
            val(h, *value),
            txns(h, failed)
        ),
        Proof::UnappendedValue {
            key: k,
            reader,
            read,
            value,
        } => format!(
            "{} read key {} as {}, but no transaction that may have committed appended {} to it",
            txn(h, *reader),
            key(h, *k),
            list(h, read),
            val(h, *value)
        ),
        Proof::ReadMoreThanAppended {
            key: k,
            reader,
            read,
            value,
            read_times,
            appended_times,
        } => format!(
            "{} read key {} as {}, with {} {} time(s), but the history appends it to that key only {} time(s), failed transactions included",
            txn(h, *reader),
            key(h, *k),
            list(h, read),
            val(h, *value),
            read_times,
            appended_times
        ),
        Proof::TooFewAppends {
            key: k,
            reader,
            read,
            value,
            read_times,
            appended_times,
            failed,
        } => {
            let tail = if failed.is_empty() {
                String::new()
            } else {
                format!(
                    "; failed {} appended it too, but a failed append is never visible",
                    txns(h, failed)
                )
            };
            format!(
                "{} read key {} as {}, with {} {} time(s), but transactions that may have committed appended it only {} time(s){}",
                txn(h, *reader),
                key(h, *k),
                list(h, read),
                val(h, *value),
                read_times,
                appended_times,
                tail
            )
        }
        Proof::Unspellable {
            key: k,
            prior,
            reader,
            read,
            from,
            appends: blocks,
        } => {
            let word = &read[*from as usize..];
            let whole = match prior {
                None => format!(
                    "{} read key {} as {}",
                    txn(h, *reader),
                    key(h, *k),
                    list(h, read)
                ),
                Some(prior) => format!(
                    "{} read key {} as {} and {} read it as {}, so {} was appended in between",
                    txn(h, *prior),
                    key(h, *k),
                    list(h, &read[..*from as usize]),
                    txn(h, *reader),
                    list(h, read),
                    list(h, word)
                ),
            };
            format!(
                "{whole}; but each transaction's appends land together, and no sequence of whole appends spells {}: {}",
                list(h, word),
                appends(h, blocks)
            )
        }
        Proof::Unfillable {
            key: k,
            reader,
            read,
            start,
            end,
            candidates,
        } => format!(
            "{} read key {} as {}: positions {}..{} ({}) must be whole appends, but the only candidates ({}) cannot fill them exactly once the other reads are accounted for",
            reader.map(|t| txn(h, t)).unwrap_or_else(|| "a transaction".into()),
            key(h, *k),
            list(h, read),
            start,
            end,
            list(h, &read[*start as usize..*end as usize]),
            if candidates.is_empty() {
                "none".to_string()
            } else {
                appends(h, candidates)
            }
        ),
        Proof::Homeless {
            key: k,
            txn: t,
            block,
            list: l,
            reader,
        } => format!(
            "{}'s append of {} to key {} fits nowhere: every place in {} (read by {}) where it could go is taken or would contradict a read",
            txn(h, *t),
            list(h, block),
            key(h, *k),
            list(h, l),
            reader.map(|t| txn(h, t)).unwrap_or_default()
        ),
        Proof::NoSpelling { key: k, list: l } => format!(
            "no way to spell {} of key {} from whole appends",
            list(h, l),
            key(h, *k)
        ),
        Proof::UnproducibleReads { key: k, list: l } => format!(
            "the reads of key {} ({}) cannot be produced by whole appends",
            key(h, *k),
            list(h, l)
        ),
        Proof::BarrierCycle => "a cycle among barriers (internal)".into(),
        Proof::AppendCycle { steps } => append_cycle(h, steps),
        Proof::EveryChoiceCycles {
            repeats,
            keys,
            txns: ts,
            example,
        } => {
            let mut text = format!(
                "every choice of {} closes a cycle",
                if *repeats {
                    "which appends produced the repeated values"
                } else {
                    "order of the appends no read shows"
                }
            );
            if !keys.is_empty() {
                let ks: Vec<String> = keys.iter().map(|&k| key(h, k)).collect();
                let _ = write!(text, " (keys {}; transactions {})", ks.join(", "), txns(h, ts));
            }
            if let Some(e) = example {
                let _ = write!(text, ". For instance, one choice gives: {}", render(h, e));
            }
            text
        }
        Proof::UnwrittenValue { txn: t, key: k } => format!(
            "{} read a value of {} that no transaction wrote",
            txn(h, *t),
            key(h, *k)
        ),
        Proof::RegisterInternal {
            txn: t,
            key: k,
            read,
            before,
            own,
        } => format!(
            "{} read {} = {} after {} {}: a transaction sees its own writes and a fixed state",
            txn(h, *t),
            key(h, *k),
            version(h, *read),
            if *own {
                "its own write of"
            } else {
                "its earlier read of"
            },
            version(h, *before)
        ),
        Proof::RegisterBadRead {
            txn: t,
            key: k,
            value,
            sources,
            dirty_update,
        } => {
            let alone = sources.len() == 1;
            let dirty = if *dirty_update {
                format!(" (and the reader then writes {} itself: a dirty update)", key(h, *k))
            } else {
                String::new()
            };
            let why: Vec<String> = sources
                .iter()
                .map(|s| match *s {
                    BadSource::Failed(w) => format!("{} wrote it and failed{dirty}", txn(h, w)),
                    BadSource::FailedOverwritten(w) => {
                        format!("{} wrote it, overwrote it and failed{dirty}", txn(h, w))
                    }
                    BadSource::Overwritten(w) => {
                        format!("{} wrote it and then overwrote it", txn(h, w))
                    }
                    BadSource::Later if alone => "only it writes that value, later".to_string(),
                    BadSource::Later => "it writes that value itself, later".to_string(),
                    BadSource::Nobody => "no transaction wrote it".to_string(),
                })
                .collect();
            format!(
                "{} read {} = {}, but {}",
                txn(h, *t),
                key(h, *k),
                version(h, *value),
                why.join(", and ")
            )
        }
        Proof::RegisterCycle { steps } => register_cycle(
            h,
            "a cycle that no choice of version order avoids".to_string(),
            steps,
        ),
        Proof::RegisterReadCycles {
            dirty,
            keys,
            txns: ts,
            example,
        } => {
            let ks: Vec<String> = keys.iter().map(|&k| key(h, k)).collect();
            let head = format!(
                "every choice of which committed write each read saw closes a cycle of reads \
                 among {} (reads of {}){}; for instance",
                txns(h, ts),
                ks.join(", "),
                if *dirty {
                    ", unless a read saw a failed or overwritten write instead (G1a, G1b)"
                } else {
                    ""
                }
            );
            register_cycle(h, head, example)
        }
        Proof::RegisterChoices { level, steps } => register_cycle(
            h,
            format!(
                "no version order, choice of written values and set of committed info transactions admits a {} execution; every choice closes a cycle, such as",
                level.name()
            ),
            steps,
        ),
    }
}

/// A list-append cycle: "Let: T1, T2\nThen:\n  - step.\n  - step, a cycle.\n".
fn append_cycle(h: &History, steps: &[AppendStep]) -> String {
    let names: Vec<String> = steps.iter().map(|s| txn(h, s.from)).collect();
    let mut text = format!("Let: {}\nThen:\n", names.join(", "));
    for (i, s) in steps.iter().enumerate() {
        let end = if i + 1 == steps.len() {
            ", a cycle."
        } else {
            "."
        };
        let _ = writeln!(text, "  - {}{end}", append_step(h, s));
    }
    text
}

/// One step of a list-append cycle, as a clause.
fn append_step(h: &History, s: &AppendStep) -> String {
    let (from, to) = (txn(h, s.from), txn(h, s.to));
    match &s.why {
        AppendWhy::Realtime => format!("{from} completed before {to} began"),
        AppendWhy::FirstCommitter { key: k } => format!(
            "{from} and {to} both appended to key {}, so one committed before the other started; here {from} went first",
            key(h, *k)
        ),
        AppendWhy::Precedes => format!("{from} precedes {to}"),
        AppendWhy::AppendedBefore {
            key: k,
            block,
            at,
            next,
            next_at,
        } => format!(
            "{from} appended {} to key {} at position {at}, before {to}'s {} at position {next_at}",
            list(h, block),
            key(h, *k),
            list(h, next)
        ),
        AppendWhy::AppendedBeforeUnseen {
            key: k,
            block,
            at,
            next,
        } => format!(
            "{from} appended {} to key {} at position {at}, before {to}'s {}, which no read saw",
            list(h, block),
            key(h, *k),
            list(h, next)
        ),
        AppendWhy::ReadIncludes {
            key: k,
            read,
            block,
            at,
        } => format!(
            "{to} read key {} as {}, which includes {from}'s append of {} at position {at}",
            key(h, *k),
            list(h, read),
            list(h, block)
        ),
        AppendWhy::ReadMisses {
            key: k,
            read,
            block,
            at,
        } => format!(
            "{from} read key {} as {}, which misses {to}'s append of {} at position {at}",
            key(h, *k),
            list(h, read),
            list(h, block)
        ),
        AppendWhy::ReadMissesUnseen {
            key: k,
            read,
            block,
        } => format!(
            "{from} read key {} as {}, which misses {to}'s append of {}",
            key(h, *k),
            list(h, read),
            list(h, block)
        ),
        AppendWhy::ReadBeforeLonger {
            key: k,
            read,
            longer,
        } => format!(
            "{from} read key {} as {}, before {to} read the longer {}",
            key(h, *k),
            list(h, read),
            list(h, longer)
        ),
        AppendWhy::AppendedAt { key: k, block, at } => format!(
            "{from} appended {} to key {} at position {at}, before {to}",
            list(h, block),
            key(h, *k)
        ),
        AppendWhy::ReadLength { key: k, len } => {
            format!("{from} read key {} at length {len}, before {to}", key(h, *k))
        }
        AppendWhy::AppendedUnseen { key: k, block } => format!(
            "{from} appended {} to key {} after every read of it, before {to}",
            list(h, block),
            key(h, *k)
        ),
    }
}

/// A register cycle after `head`: "HEAD: step, then step, then back to T1".
fn register_cycle(h: &History, head: String, steps: &[RegisterStep]) -> String {
    let Some(first) = steps.first() else {
        return format!("{head} (the constraints conflict directly)");
    };
    let clauses: Vec<String> = steps.iter().map(|s| register_step(h, s)).collect();
    format!(
        "{head}: {}, then back to {}",
        clauses.join(", then "),
        txn(h, first.from)
    )
}

/// One step of a register cycle, as a clause.
fn register_step(h: &History, s: &RegisterStep) -> String {
    let (a, b) = (txn(h, s.from), txn(h, s.to));
    match s.why {
        RegisterWhy::Wr { key: k } => format!("{b} read {a}'s write of {}", key(h, k)),
        RegisterWhy::Ww { key: k } => format!("{a}'s write of {} comes before {b}'s", key(h, k)),
        RegisterWhy::Rw { key: k } => {
            format!("{a} read a version of {} that {b} overwrote", key(h, k))
        }
        RegisterWhy::Realtime => format!("{a} completed before {b} was invoked"),
        RegisterWhy::Span => format!("{a} started before it committed"),
    }
}

/// The one-line reason of a solver verdict; `proof` is its finding's, for
/// the reasons that quote it.
pub fn reason(h: &History, r: &Reason, proof: Option<&Proof>) -> String {
    let quoted = || proof.map(|p| render(h, p)).unwrap_or_default();
    match r {
        Reason::SerialOrder { txns: n, rounds } => {
            let mut s = format!("an order of {n} committed transactions explains every read");
            if let Some(r) = rounds {
                let _ = write!(s, " ({r} round{})", if *r == 1 { "" } else { "s" });
            }
            s
        }
        Reason::CommitOrder { txns: n } => {
            format!("a commit order of {n} transactions explains every read")
        }
        Reason::TopologicalOrder => {
            "a topological order of the dependency graph replays as a serial execution".into()
        }
        Reason::FromSerializable(r) => format!(
            "serializable, hence snapshot-isolated: {}",
            reason(h, r, proof)
        ),
        Reason::Proof => quoted(),
        Reason::ProofHeadline => quoted().lines().next().unwrap_or("").to_string(),
        Reason::Unmodelled => format!(
            "not decided: {} (an internal anomaly, which read-committed allows and the solver does not model)",
            quoted()
        ),
        Reason::NotListAppend { txn: t, what } => match what {
            NotListAppend::RegisterWrite => format!(
                "{} writes a register ([:w ...]): not a list-append history",
                txn(h, *t)
            ),
            NotListAppend::CompoundAppend => {
                format!("{} appends a value that is not a single value", txn(h, *t))
            }
            NotListAppend::ScalarRead => {
                format!("{} reads a single value, not a list", txn(h, *t))
            }
        },
        Reason::TooManyPlacements {
            key: k,
            start,
            end,
            max,
        } => format!(
            "key {} positions {start}..{end}: more than {max} ways to place its mixed appends",
            key(h, *k)
        ),
        Reason::TooManyChoices { vars, max } => {
            format!("{vars} choice variables exceed the limit of {max}")
        }
        Reason::TooManyPairs { max } => {
            format!("snapshot isolation: more than {max} pairs of unseen appends to order")
        }
        Reason::TimeBeforeSearch { ms } => {
            format!("the time limit ({ms} ms) was reached before any search")
        }
        Reason::TimeWhileBuilding => "time limit reached while building constraints".into(),
        Reason::OrdersDisagree { key } => format!(
            "not decided: under every choice the reads of {} disagree on the order of its committed appends (incompatible-order), which does not rule out read-uncommitted",
            h.keys.datum(*key)
        ),
        Reason::TimeInSearch {
            ms,
            rounds,
            conflicts,
        } => {
            let after = match (rounds, conflicts) {
                (Some(r), Some(c)) => format!("{r} rounds and {c} conflicts"),
                (Some(r), None) => format!("{r} rounds"),
                (None, Some(c)) => format!("{c} conflicts"),
                (None, None) => "no search".into(),
            };
            format!("search stopped at the time limit ({ms} ms) after {after}, without an answer")
        }
        Reason::NoReplay(e) => format!(
            "internal: the solver's witness does not replay ({})",
            replay(h, e)
        ),
        Reason::Internal(i) => match i {
            Internal::ForcedGraphCyclic => "internal: forced graph not acyclic",
            Internal::ForcedGraphAcyclic => "internal: forced graph reported cyclic",
            Internal::ChoiceLeftCycle => "internal: the solver's choice left a cycle",
            Internal::ReplayNamedNothing => "internal: a replay failed without naming a constraint",
        }
        .into(),
    }
}

/// Why a witness did not replay.
pub fn replay(h: &History, e: &Replay) -> String {
    match e {
        Replay::UnknownTxn(t) => format!("unknown transaction id {t}"),
        Replay::Twice(t) => format!("{} appears twice", txn(h, *t)),
        Replay::Failed(t) => format!("{} failed but is in the order", txn(h, *t)),
        Replay::Missing(t) => format!("{} committed but is missing from the order", txn(h, *t)),
        Replay::SnapshotCount => "one snapshot point per committed transaction is needed".into(),
        Replay::StartsAfterCommit(t) => format!("{} starts after it commits", txn(h, *t)),
        Replay::NotListAppend(t) => {
            format!("{} has a micro-op that is not list-append", txn(h, *t))
        }
        Replay::BeforeEarlier { txn: t, earlier } => format!(
            "{} is placed before {}, which completed before it began",
            txn(h, *t),
            txn(h, *earlier)
        ),
        Replay::WouldRead {
            txn: t,
            key: k,
            got,
        } => {
            format!(
                "{} would read {} as {}",
                txn(h, *t),
                key(h, *k),
                list(h, got)
            )
        }
        Replay::ConcurrentAppend { txn: t, key: k } => format!(
            "{} appends to {} concurrently with an earlier committer",
            txn(h, *t),
            key(h, *k)
        ),
        Replay::ScalarRead(t) => format!("{} reads a single value", txn(h, *t)),
        Replay::WithoutOwnAppends { txn: t, key: k } => {
            format!("{} read {} without its own appends", txn(h, *t), key(h, *k))
        }
        Replay::NotPrefix {
            txn: t,
            key: k,
            read,
            versions,
        } => format!(
            "{} read {} as {}, not a prefix of its versions {}",
            txn(h, *t),
            key(h, *k),
            list(h, read),
            list(h, versions)
        ),
        Replay::ReadsLaterBlock {
            txn: t,
            key: k,
            writer,
        } => format!(
            "{} read {} up to {}'s block, which commits later",
            txn(h, *t),
            key(h, *k),
            txn(h, *writer)
        ),
        Replay::MidBlock { txn: t, key: k } => {
            format!(
                "{} read {} up to the middle of a block",
                txn(h, *t),
                key(h, *k)
            )
        }
        Replay::SingleAntiDependency {
            txn: t,
            key: k,
            writer,
        } => format!(
            "{} read {} before {}'s block, yet {} reaches it by write and read dependencies (G-single)",
            txn(h, *t),
            key(h, *k),
            txn(h, *writer),
            txn(h, *writer)
        ),
        Replay::ReadsDifferently { txn: t, key: k } => format!(
            "{} reads {} differently in the witness",
            txn(h, *t),
            key(h, *k)
        ),
        Replay::OverlappingWriter { txn: t, key: k } => format!(
            "{} overlaps a committed writer of {}",
            txn(h, *t),
            key(h, *k)
        ),
        Replay::UnexplainedRead {
            txn: t,
            key: k,
            g1c,
        } => format!(
            "{}'s read of {} is not explained: the committed appends it can show in version order{} leave values that no failed, uncommitted or own append supplies",
            txn(h, *t),
            key(h, *k),
            if *g1c { " (from transactions committed before it)" } else { "" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::read::read_history;
    use crate::history::Datum;
    use crate::proof::Level;

    const WRITE_SKEW: &str = "\
{:type :ok, :f :txn, :process 0, :index 0, :value [[:r :x []] [:append :y 1]]}
{:type :ok, :f :txn, :process 1, :index 1, :value [[:r :y []] [:append :x 1]]}
{:type :ok, :f :txn, :process 2, :index 2, :value [[:r :x [1]] [:r :y [1]]]}
";

    fn history() -> History {
        read_history(WRITE_SKEW.as_bytes(), "test", None).unwrap()
    }

    fn key_id(h: &History, k: &str) -> KeyId {
        h.keys
            .get(&Datum::Keyword(k.into()))
            .expect("a key of the history")
    }

    #[test]
    fn an_append_cycle_is_told_step_by_step() {
        let h = history();
        let one = h.values.get(&Datum::Int(1)).unwrap();
        let missed = |key, from, to| AppendStep {
            from,
            to,
            why: AppendWhy::ReadMisses {
                key,
                read: vec![],
                block: vec![one],
                at: 0,
            },
        };
        let p = Proof::AppendCycle {
            steps: vec![missed(key_id(&h, "x"), 0, 1), missed(key_id(&h, "y"), 1, 0)],
        };
        assert_eq!(
            render(&h, &p),
            "Let: T0, T1\nThen:\n  \
             - T0 read key :x as [], which misses T1's append of [1] at position 0.\n  \
             - T1 read key :y as [], which misses T0's append of [1] at position 0, a cycle.\n"
        );
        // An invalid verdict's reason is the proof's first line.
        assert_eq!(reason(&h, &Reason::ProofHeadline, Some(&p)), "Let: T0, T1");
        let every = Proof::EveryChoiceCycles {
            repeats: true,
            keys: vec![key_id(&h, "x")],
            txns: vec![0, 1],
            example: Some(Box::new(p)),
        };
        assert!(render(&h, &every).starts_with(
            "every choice of which appends produced the repeated values closes a cycle \
             (keys :x; transactions T0, T1). For instance, one choice gives: Let: T0, T1\n"
        ));
    }

    #[test]
    fn a_register_cycle_is_one_sentence_back_to_its_start() {
        let h = history();
        let x = key_id(&h, "x");
        let steps = vec![
            RegisterStep {
                from: 0,
                to: 1,
                why: RegisterWhy::Rw { key: x },
            },
            RegisterStep {
                from: 1,
                to: 0,
                why: RegisterWhy::Realtime,
            },
        ];
        assert_eq!(
            render(
                &h,
                &Proof::RegisterCycle {
                    steps: steps.clone()
                }
            ),
            "a cycle that no choice of version order avoids: T0 read a version of :x that T1 \
             overwrote, then T1 completed before T0 was invoked, then back to T0"
        );
        assert_eq!(
            render(
                &h,
                &Proof::RegisterChoices {
                    level: Level::Serializable,
                    steps: vec![]
                }
            ),
            "no version order, choice of written values and set of committed info transactions \
             admits a serializable execution; every choice closes a cycle, such as (the \
             constraints conflict directly)"
        );
    }

    #[test]
    fn reasons_nest_and_count() {
        let h = history();
        let serial = Reason::SerialOrder {
            txns: 3,
            rounds: Some(1),
        };
        assert_eq!(
            reason(&h, &Reason::FromSerializable(Box::new(serial)), None),
            "serializable, hence snapshot-isolated: an order of 3 committed transactions \
             explains every read (1 round)"
        );
        assert_eq!(
            reason(
                &h,
                &Reason::TimeInSearch {
                    ms: 5,
                    rounds: Some(2),
                    conflicts: Some(7)
                },
                None
            ),
            "search stopped at the time limit (5 ms) after 2 rounds and 7 conflicts, without an answer"
        );
        assert_eq!(
            reason(&h, &Reason::NoReplay(Replay::Twice(2)), None),
            "internal: the solver's witness does not replay (T2 appears twice)"
        );
    }
}
