//! History pieces printed as EDN text, the way Elle prints them: an op, a
//! micro-op, what a read observed. The history's own printing (as
//! [`Datum`]'s `Display` is), so that any layer may quote an op — the
//! render layer in explanations, inference in its refusals — without
//! importing the render layer.

use crate::history::{Datum, History, Mop, MopKind, Observed, TxnId};

/// An op printed the way Elle's explanations print it, as EDN text, except
/// that an op written without `:f` is printed without one: Elle's ops are
/// records, so it prints `:f nil` for an op that never had a function, which
/// reads as if the history said so.
pub fn op_edn(h: &History, t: TxnId) -> String {
    let txn = &h.txns[t as usize];
    let mops: Vec<String> = h.mops(t).iter().map(|m| mop_edn(h, m)).collect();
    let f = match txn.f.map(|f| h.values.datum(f)) {
        Some(Datum::Nil) => String::new(),
        Some(f) => format!(", :f {f}"),
        None => ", :f :txn".into(),
    };
    let time = txn.complete_time.or(txn.invoke_time).unwrap_or(-1);
    format!(
        "{{:index {}, :time {}, :type :{}, :process {}{f}, :value [{}]}}",
        txn.index,
        time,
        txn.outcome.name(),
        txn.process,
        mops.join(" ")
    )
}

/// A micro-op as EDN text, e.g. `[:append :x 1]`.
pub fn mop_edn(h: &History, m: &Mop) -> String {
    let f = match m.kind {
        MopKind::Append => ":append",
        MopKind::Write => ":w",
        MopKind::Read => ":r",
    };
    format!(
        "[{} {} {}]",
        f,
        h.keys.datum(m.key),
        observed_edn(h, m.value)
    )
}

/// What a read observed, as EDN text.
pub fn observed_edn(h: &History, o: Observed) -> String {
    match o {
        Observed::Nil => "nil".into(),
        Observed::Scalar(v) => h.values.datum(v).to_string(),
        Observed::List { .. } => {
            let xs: Vec<String> = h
                .list(o)
                .unwrap_or(&[])
                .iter()
                .map(|&v| h.values.datum(v).to_string())
                .collect();
            format!("[{}]", xs.join(" "))
        }
    }
}
