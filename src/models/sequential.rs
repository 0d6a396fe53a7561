//! The `sequential` model (Jepsen's CockroachDB "sequential" test): one
//! process inserts the subkeys `k_0`, `k_1`, ... of a key in order, each in
//! its own transaction; another reads them in reverse (`k_n` first), and its
//! ok `:read` has the value `[k [v_n ... v_0]]`, `nil` for a subkey not found.
//!
//! The inserts' process order must be visible to every process (sequential
//! consistency), so once a read sees a later subkey it must see every
//! earlier one: in the reversed list, a `nil` after a non-`nil` value is a
//! bad read. A plain list `[v_n ... v_0]` (no key) is read the same way.
//!
//! Jepsen's `:all-count` compares values against the subkey names, which
//! needs the test's `:key-count`; here it counts reads that found every
//! subkey (no `nil`), which needs no option and is the same on Jepsen's
//! histories.

use super::{datum_json, op_text, short, valid_json, Op, Ops, F};
use crate::history::error::ReadError;
use crate::history::raw::OpType;
use crate::history::Datum;
use crate::model::Validity;
use serde_json::{json, Value};

/// The sequential verdict.
#[derive(Debug, Default)]
pub struct SequentialResult {
    /// Ok reads.
    pub reads: usize,
    /// Reads that found every subkey.
    pub all_count: usize,
    /// Reads that missed some subkey (those that found none included, as Jepsen).
    pub some_count: usize,
    /// Reads that found no subkey.
    pub none_count: usize,
    /// Bad reads: positions in [`Ops::ops`], in history order.
    pub bad: Vec<usize>,
}

impl SequentialResult {
    /// Invalid iff some read is bad.
    pub fn valid(&self) -> Validity {
        if self.bad.is_empty() {
            Validity::True
        } else {
            Validity::False
        }
    }

    /// Jepsen's result map; `:bad` holds the bad reads' values.
    pub fn to_json(&self, ops: &Ops) -> Value {
        json!({
            "valid?": valid_json(self.valid()),
            "all-count": self.all_count,
            "some-count": self.some_count,
            "none-count": self.none_count,
            "bad-count": self.bad.len(),
            "bad": Value::Array(self.bad.iter().map(|&i| datum_json(&ops.ops[i].value)).collect()),
        })
    }

    /// A readable account.
    pub fn explain(&self, ops: &Ops) -> String {
        let mut s = format!(
            "sequential: {} reads ({} found every subkey, {} missed some, {} found none), {} bad: a later subkey seen, an earlier one missed\n",
            self.reads,
            self.all_count,
            self.some_count,
            self.none_count,
            self.bad.len()
        );
        for &i in self.bad.iter().take(10) {
            s += &format!("  {}\n", op_text(&ops.ops[i]));
        }
        s
    }
}

/// A read's values, latest subkey first: the second element of `[k [...]]`,
/// or the value itself when it is a plain list.
pub fn read_values<'a>(ops: &Ops, op: &'a Op) -> Result<&'a [Datum], ReadError> {
    let list = |d: &'a Datum| match d {
        Datum::Vector(xs) | Datum::List(xs) => Some(xs.as_slice()),
        _ => None,
    };
    if let Datum::Vector(t) = &op.value {
        if let [_, inner] = t.as_slice() {
            if let Some(xs) = list(inner) {
                return Ok(xs);
            }
        }
    }
    list(&op.value).ok_or_else(|| {
        ops.error(
            op,
            format!(
                "expected a read to be [key [value ...]] (latest subkey first), got {}",
                short(&op.value)
            ),
        )
    })
}

/// Whether `values` holds a `nil` after a non-`nil` (Jepsen's `trailing-nil?`).
pub fn trailing_nil(values: &[Datum]) -> bool {
    values
        .iter()
        .skip_while(|v| **v == Datum::Nil)
        .any(|v| *v == Datum::Nil)
}

/// Checks a sequential history.
pub fn check(ops: &Ops) -> Result<SequentialResult, ReadError> {
    let mut r = SequentialResult::default();
    for (i, op) in ops.ops.iter().enumerate() {
        if op.f != F::Read || op.kind != OpType::Ok {
            continue;
        }
        let values = read_values(ops, op)?;
        r.reads += 1;
        let nils = values.iter().filter(|v| **v == Datum::Nil).count();
        if nils == 0 {
            r.all_count += 1;
        } else {
            r.some_count += 1;
        }
        if nils == values.len() {
            r.none_count += 1;
        }
        if trailing_nil(values) {
            r.bad.push(i);
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::tests::ops;

    fn r(v: &str) -> String {
        format!("{{:type :invoke, :f :read, :value 0, :process 1}}\n{{:type :ok, :f :read, :value {v}, :process 1}}\n")
    }

    #[test]
    fn reads_of_a_suffix_are_valid() {
        let h = r("[0 [nil nil nil]]")
            + &r("[0 [nil \"0_1\" \"0_0\"]]")
            + &r("[0 [\"0_2\" \"0_1\" \"0_0\"]]");
        let res = check(&ops(&h)).unwrap();
        assert_eq!(res.valid(), Validity::True);
        assert_eq!(
            (res.reads, res.all_count, res.some_count, res.none_count),
            (3, 1, 2, 1)
        );
    }

    #[test]
    fn a_later_subkey_without_an_earlier_one_is_bad() {
        let h = r("[0 [\"0_2\" nil \"0_0\"]]") + &r("[1 [nil nil \"1_0\"]]");
        let o = ops(&h);
        let res = check(&o).unwrap();
        assert_eq!(res.valid(), Validity::False);
        assert_eq!(res.bad, vec![1]);
        let j = res.to_json(&o);
        assert_eq!(j["bad-count"], 1);
        assert_eq!(j["bad"], json!([[0, ["0_2", null, "0_0"]]]));
    }

    #[test]
    fn trailing_nil_is_a_nil_after_a_value() {
        let d = |xs: &[Option<i64>]| -> Vec<Datum> {
            xs.iter()
                .map(|x| x.map_or(Datum::Nil, Datum::Int))
                .collect()
        };
        assert!(!trailing_nil(&d(&[])));
        assert!(!trailing_nil(&d(&[None, None, Some(1)])));
        assert!(trailing_nil(&d(&[Some(2), None])));
        assert!(trailing_nil(&d(&[None, Some(2), Some(1), None])));
    }

    #[test]
    fn plain_lists_and_non_reads() {
        let h = r("[\"a\" nil]")
            + "{:type :ok, :f :write, :value 3, :process 0}\n{:type :fail, :f :read, :value [nil 1], :process 2}\n";
        let res = check(&ops(&h)).unwrap();
        assert_eq!((res.reads, res.bad.len()), (1, 1));
    }

    #[test]
    fn a_read_that_is_no_list_is_an_input_error() {
        let e = check(&ops(&r("#{1}"))).unwrap_err().to_string();
        assert!(e.contains("t.edn:2:"), "{e}");
        assert!(e.contains("expected a read to be [key [value ...]]"), "{e}");
    }
}
