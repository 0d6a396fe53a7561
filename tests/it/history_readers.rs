//! The history readers against Elle's conformance corpus, JSON/EDN twins,
//! hostile nesting, and a print-then-parse property.

use isolde::history::edn::{read_maps, EdnReader};
use isolde::history::error::ReadError;
use isolde::history::read::{load_file, read_history, Format};
use isolde::history::{Datum, History};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn corpus() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipping: no conformance corpus at {}", dir.display());
        None
    }
}

fn edn_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            edn_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "edn") {
            out.push(p);
        }
    }
}

#[test]
fn every_conformance_history_reads_with_the_expected_op_count() {
    let Some(dir) = corpus() else { return };
    let mut files = Vec::new();
    edn_files(&dir, &mut files);
    assert!(files.len() >= 90, "only {} histories found", files.len());
    for f in &files {
        let loaded = load_file(f, None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(loaded.format, Format::Edn, "{}", f.display());
        let expected = f.with_file_name(format!(
            "{}.expected.json",
            f.file_stem().unwrap().to_string_lossy()
        ));
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&expected).unwrap()).unwrap();
        let ops = json["history_ops"].as_u64().expect("history_ops");
        assert_eq!(loaded.ops, ops, "{}", f.display());
    }
}

/// Structural equality of two histories, interned data compared by value.
fn assert_same_history(a: &History, b: &History) {
    assert_eq!(a.txns, b.txns);
    assert_eq!(a.mops, b.mops);
    assert_eq!(a.elems, b.elems);
    assert_eq!(a.has_invocations, b.has_invocations);
    for (x, y) in [(&a.keys, &b.keys), (&a.values, &b.values)] {
        assert_eq!(x.len(), y.len());
        for i in 0..x.len() as u32 {
            assert_eq!(x.datum(i), y.datum(i));
        }
    }
}

#[test]
fn elle_cli_json_samples_equal_their_edn_twins() {
    let Some(dir) = corpus() else { return };
    for twin in [
        "list-append/samples/elle-cli--paper-example-json",
        "rw-register/samples/elle-cli--rw-register-json",
    ] {
        let json = load_file(&dir.join(format!("{twin}.source.json")), None).unwrap();
        let edn = load_file(&dir.join(format!("{twin}.edn")), None).unwrap();
        assert_eq!(json.format, Format::Json);
        assert_eq!(json.ops, edn.ops);
        assert!(!json.history.txns.is_empty());
        assert_same_history(&json.history, &edn.history);
    }
}

#[test]
fn nemesis_ops_are_dropped_from_the_huge_scc_sample() {
    let Some(dir) = corpus() else { return };
    let l = load_file(&dir.join("list-append/samples/elle--huge-scc.edn"), None).unwrap();
    assert_eq!(l.ops, 20602);
    assert!(l.history.txns.iter().all(|t| t.process >= 0));
    assert!(l.history.txns.len() < 20602 / 2 + 1);
    assert!(l.history.has_invocations);
}

#[test]
fn a_million_open_brackets_is_an_error_not_a_stack_overflow() {
    let open = "[".repeat(1_000_000);
    for text in [
        format!("{{:value {open}"),
        open.clone(),
        format!("[{{:a {open}"),
    ] {
        let e = read_history(text.as_bytes(), "deep.edn", Some(Format::Edn)).unwrap_err();
        assert!(matches!(e, ReadError::Invalid { .. }), "{e}");
    }
    let e = read_history(
        format!("{{\"value\": {open}").as_bytes(),
        "deep.json",
        Some(Format::Json),
    )
    .unwrap_err();
    assert!(e.to_string().contains("nesting deeper than"), "{e}");
    let discards = format!("{{:value {}", "#_ ".repeat(1_000_000));
    assert!(read_history(discards.as_bytes(), "deep.edn", None).is_err());
}

// ---------------------------------------------------------------------------
// Printing a random op map as EDN and reading it back gives the same data.

fn name() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9*!?_.-]{0,6}(/[a-z][a-z0-9-]{0,4})?".prop_filter("not a literal", |s| {
        !matches!(s.as_str(), "nil" | "true" | "false")
    })
}

fn scalar() -> impl Strategy<Value = Datum> {
    prop_oneof![
        Just(Datum::Nil),
        any::<bool>().prop_map(Datum::Bool),
        any::<i64>().prop_map(Datum::Int),
        (any::<bool>(), (i64::MAX as i128 + 1)..i128::MAX).prop_map(|(neg, v)| {
            Datum::BigInt(if neg { format!("-{v}") } else { v.to_string() })
        }),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| Datum::Float(format!("{f:?}"))),
        "[a-zA-Z0-9 _.\"\\\\\n\t\ré中😀-]{0,12}".prop_map(Datum::Str),
        name().prop_map(Datum::Keyword),
        name().prop_map(Datum::Symbol),
        prop::sample::select(vec![
            'a', 'z', '0', 'é', '(', '"', ',', ';', '\\', ' ', '\n', 'u', 'o'
        ])
        .prop_map(Datum::Char),
    ]
}

fn datum() -> impl Strategy<Value = Datum> {
    scalar().prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Datum::Vector),
            prop::collection::vec(inner.clone(), 0..5).prop_map(Datum::List),
            prop::collection::vec(inner.clone(), 0..5).prop_map(Datum::Set),
            prop::collection::vec((inner.clone(), inner), 0..4).prop_map(Datum::Map),
        ]
    })
}

fn kw(s: &str) -> Datum {
    Datum::Keyword(s.into())
}

fn mop() -> impl Strategy<Value = Datum> {
    prop_oneof![
        (datum(), datum()).prop_map(|(k, v)| Datum::Vector(vec![kw("append"), k, v])),
        (datum(), datum()).prop_map(|(k, v)| Datum::Vector(vec![kw("w"), k, v])),
        (
            datum(),
            prop::collection::vec(any::<i64>().prop_map(Datum::Int), 0..6)
        )
            .prop_map(|(k, xs)| Datum::Vector(vec![kw("r"), k, Datum::Vector(xs)])),
        datum().prop_map(|k| Datum::Vector(vec![kw("r"), k, Datum::Nil])),
    ]
}

fn op_map() -> impl Strategy<Value = Datum> {
    (
        any::<u32>(),
        any::<i64>(),
        prop::sample::select(vec!["invoke", "ok", "fail", "info"]),
        0..100i64,
        prop::option::of(name()),
        prop::collection::vec(mop(), 0..5),
        prop::option::of(datum()),
    )
        .prop_map(|(index, time, ty, process, f, mops, extra)| {
            let mut kvs = vec![
                (kw("index"), Datum::Int(index as i64)),
                (kw("time"), Datum::Int(time)),
                (kw("type"), kw(ty)),
                (kw("process"), Datum::Int(process)),
                (kw("f"), f.map(Datum::Keyword).unwrap_or(Datum::Nil)),
                (kw("value"), Datum::Vector(mops)),
            ];
            if let Some(x) = extra {
                kvs.push((kw("extra"), x));
            }
            Datum::Map(kvs)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn printed_op_maps_read_back_identically(ops in prop::collection::vec(op_map(), 1..4)) {
        let text: String = ops.iter().map(|o| format!("{o}\n")).collect();
        let back = read_maps(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&back, &ops);
        // And through the op decoder: keys and values survive as data.
        let raw: Vec<_> = EdnReader::new(text.as_bytes(), "p.edn")
            .collect::<Result<_, _>>()
            .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        for (r, o) in raw.iter().zip(&ops) {
            let Datum::Map(kvs) = o else { unreachable!() };
            let Datum::Vector(mops) = &kvs[5].1 else { unreachable!() };
            let got = r.value.as_ref().unwrap();
            prop_assert_eq!(got.len(), mops.len());
            for (g, m) in got.iter().zip(mops) {
                let Datum::Vector(parts) = m else { unreachable!() };
                prop_assert_eq!(&g.key, &parts[1]);
            }
        }
    }
}
