//! Fuzz entry points, one per cargo-fuzz target, shared with
//! `tests/it/fuzz_corpus.rs` (which replays every file of `fuzz/corpus` and
//! `fuzz/artifacts` through them) so that CI runs the same code
//! deterministically.
//!
//! Every entry point must return normally on any input: a typed error is a
//! fine answer, a panic (index out of bounds, overflow, `unwrap`, a failed
//! assertion below) is a bug. Besides "no panic", each asserts properties
//! that hold for every input:
//! - readers: reading the bytes in small chunks gives the same history (or
//!   the same error) as reading them at once, and every id in the history
//!   points inside its arena;
//! - check: the same history checked twice gives the same result, and the
//!   result renders;
//! - schedule: a parsed schedule printed in normalized form parses back to
//!   the same schedule, and a conflict-serializable schedule is view
//!   serializable.

use isolde::check::{check_history, render_report, CheckOptions, Workload};
use isolde::history::error::ReadError;
use isolde::history::read::{read_history, Format};
use isolde::history::{History, Observed};
use std::collections::BTreeMap;
use std::io::{self, Read};

/// Largest input the check targets look at. They fuzz inference and search
/// on small histories; how the search copes with size is what
/// tests/it/adversarial.rs is for.
pub const MAX_CHECK_INPUT: usize = 4096;

/// `fuzz_targets/read_edn.rs`: Jepsen's EDN reader.
pub fn read_edn(data: &[u8]) {
    read(data, Some(Format::Edn), chunk_size(data));
}

/// `fuzz_targets/read_json.rs`: elle-cli's JSON reader (one array of ops).
pub fn read_json(data: &[u8]) {
    read(data, Some(Format::Json), chunk_size(data));
}

/// `fuzz_targets/read_jsonl.rs`: the same reader on JSON lines, fed one
/// line per `read` call, as from a pipe of a running test.
pub fn read_jsonl(data: &[u8]) {
    read(data, Some(Format::Json), Chunking::Lines);
}

/// `fuzz_targets/read_onelite.rs`: OneLite's JSON lines.
pub fn read_onelite(data: &[u8]) {
    read(data, Some(Format::OneLite), chunk_size(data));
}

/// `fuzz_targets/read_any.rs`: format detection and gzip/zstd decoding in
/// front of every reader.
pub fn read_any(data: &[u8]) {
    read(data, None, chunk_size(data));
}

/// `fuzz_targets/check_list_append.rs`: read (any format) + check as
/// list-append, under option sets picked by the first byte.
pub fn check_list_append(data: &[u8]) {
    check(data, Workload::ListAppend);
}

/// `fuzz_targets/check_rw_register.rs`: read (any format) + check as
/// rw-register, under option sets and key flags picked by the first byte.
pub fn check_rw_register(data: &[u8]) {
    check(data, Workload::RwRegister);
}

/// `fuzz_targets/schedule.rs`: `parse_schedules` + `analyze` on UTF-8 text.
pub fn schedule(data: &[u8]) {
    use isolde::schedule::{analyze, parse_schedules, render_error};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let schedules = match parse_schedules(text) {
        Ok(s) => s,
        Err(e) => {
            let _ = render_error(text, &e);
            return;
        }
    };
    for s in &schedules {
        let r = analyze(s);
        serde_json::to_string(&r).expect("a schedule report serializes");
        let _ = r.to_string();
        if r.conflict_serializable {
            assert_eq!(
                r.view_serializable,
                Some(true),
                "conflict serializable but not view serializable: {s}"
            );
        }
        // The normalized form is itself a schedule, the same one, whenever
        // textbook notation can spell every item name (JSON lines can name
        // items it cannot: with a newline, both closing brackets, or
        // surrounding blanks).
        if !s.items().iter().all(|n| spellable(n)) {
            continue;
        }
        let again = parse_schedules(&s.to_string())
            .unwrap_or_else(|e| panic!("normalized schedule `{s}` does not parse: {e}"));
        assert_eq!(again.len(), 1, "normalized schedule `{s}` is not one line");
        assert_eq!(again[0].to_string(), s.to_string());
    }
}

/// Can `name` stand between the brackets of `r1(..)` or `r1[..]`?
fn spellable(name: &str) -> bool {
    let both_closers = name.contains(')') && name.contains(']');
    !name.is_empty() && name.trim() == name && !name.contains('\n') && !both_closers
}

/// How a reader target splits its input for the streaming comparison.
#[derive(Clone, Copy)]
enum Chunking {
    Bytes(usize),
    Lines,
}

/// A chunk size from 1 to 7 that varies with the input, so that chunk
/// boundaries land everywhere across the corpus.
fn chunk_size(data: &[u8]) -> Chunking {
    Chunking::Bytes(1 + data.len() % 7)
}

/// Hands out `data` a chunk per `read` call.
struct Chunked<'a> {
    data: &'a [u8],
    how: Chunking,
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = match self.how {
            Chunking::Bytes(n) => n,
            Chunking::Lines => self
                .data
                .iter()
                .position(|&b| b == b'\n')
                .map_or(self.data.len(), |i| i + 1),
        };
        let n = want.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn read(data: &[u8], format: Option<Format>, how: Chunking) {
    let whole = read_history(data, "fuzz", format);
    if let Ok(h) = &whole {
        assert_history_is_well_formed(h);
    }
    let chunked = read_history(Chunked { data, how }, "fuzz", format);
    match (&whole, &chunked) {
        // A corrupt gzip or zstd stream is an I/O error where decoding
        // notices it (at the checksum, at the end), a syntax error where
        // parsing the garbage fails first: which comes first depends on
        // how much was decoded ahead. Either way, no history.
        (Err(a), Err(b)) if is_io(a) || is_io(b) => {}
        _ => assert_eq!(
            summary(&whole),
            summary(&chunked),
            "reading in chunks changed the result"
        ),
    }
}

fn is_io(e: &ReadError) -> bool {
    matches!(e, ReadError::Io { .. })
}

/// Everything a reader decided, comparable across two reads.
fn summary(r: &Result<History, ReadError>) -> String {
    match r {
        Err(e) => format!("error: {e}"),
        Ok(h) => {
            let keys: Vec<_> = (0..h.keys.len() as u32).map(|i| h.keys.datum(i)).collect();
            let values: Vec<_> = (0..h.values.len() as u32)
                .map(|i| h.values.datum(i))
                .collect();
            format!(
                "{:?}\n{:?}\n{:?}\n{keys:?}\n{values:?}\n{}",
                h.txns, h.mops, h.elems, h.has_invocations
            )
        }
    }
}

/// Every range and id of the history points inside its arena, and the
/// interners give each datum one id.
fn assert_history_is_well_formed(h: &History) {
    let (nkeys, nvalues) = (h.keys.len(), h.values.len());
    for (i, t) in h.txns.iter().enumerate() {
        let end = t.mops_start as usize + t.mops_len as usize;
        assert!(end <= h.mops.len(), "txn {i}: mops out of range");
        if let Some(f) = t.f {
            assert!((f as usize) < nvalues, "txn {i}: :f id out of range");
        }
        if let (Some(a), Some(b)) = (t.invoke_seq, t.complete_seq) {
            assert!(a < b, "txn {i}: completed before it was invoked");
        }
    }
    for m in &h.mops {
        assert!((m.key as usize) < nkeys, "key id out of range");
        match m.value {
            Observed::Nil => {}
            Observed::Scalar(v) => assert!((v as usize) < nvalues, "value id out of range"),
            Observed::List { start, len } => {
                assert!(
                    start as usize + len as usize <= h.elems.len(),
                    "list out of range"
                );
            }
        }
    }
    assert!(h.elems.iter().all(|&v| (v as usize) < nvalues));
    for (name, interner) in [("key", &h.keys), ("value", &h.values)] {
        for id in 0..interner.len() as u32 {
            assert_eq!(
                interner.get(interner.datum(id)),
                Some(id),
                "{name} {id} is interned twice"
            );
        }
    }
}

/// The option sets the check targets choose from.
fn options(selector: u8, workload: Workload) -> CheckOptions {
    let names = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let (models, anomalies): (Option<Vec<String>>, Vec<String>) = match selector % 8 {
        0 => (None, vec![]),
        1 => (Some(names(&["serializable"])), vec![]),
        2 => (Some(vec![]), names(&["G1", "G2", "internal"])),
        3 => (Some(names(&["strong-session-snapshot-isolation"])), vec![]),
        4 => (Some(names(&["read-committed"])), names(&["dirty-update"])),
        5 => (Some(names(&["snapshot-isolation"])), vec![]),
        6 => (
            Some(names(&["strong-snapshot-isolation", "update-atomic"])),
            names(&["lost-update"]),
        ),
        _ => (Some(names(&["read-uncommitted"])), names(&["G-single"])),
    };
    CheckOptions {
        workload,
        // Half the time the workload is inferred from the micro-ops.
        workload_given: selector & 0x80 == 0,
        models,
        anomalies,
        sequential_keys: selector & 0x08 != 0,
        linearizable_keys: selector & 0x10 != 0,
        wfr_keys: selector & 0x20 != 0,
        ..CheckOptions::default()
    }
}

fn check(data: &[u8], workload: Workload) {
    let Some((&selector, text)) = data.split_first() else {
        return;
    };
    if data.len() > MAX_CHECK_INPUT {
        return;
    }
    let Ok(h) = read_history(text, "fuzz", None) else {
        return;
    };
    let mut opts = options(selector, workload);
    if workload == Workload::RwRegister && selector & 0x40 != 0 {
        // A commit order, sometimes contradicting everything else: the
        // reverse of the completion order.
        let order: BTreeMap<i64, i64> = h
            .txns
            .iter()
            .enumerate()
            .map(|(i, t)| (t.index, -(i as i64)))
            .collect();
        opts.transaction_order = Some(order);
    }
    let first = check_history(&h, &opts);
    let again = check_history(&h, &opts);
    let json = first.to_json(&h);
    assert_eq!(json, again.to_json(&h), "checking twice gave two answers");
    assert!(json.get("valid?").is_some());
    let _ = render_report(&h, &first, "fuzz");
}
