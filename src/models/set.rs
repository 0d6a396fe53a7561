//! The `set` model: `:add` ops add one element each, and the last ok
//! `:read` returns the whole set.
//!
//! Against that final read (Jepsen's set checker): an element whose add was
//! acknowledged but is missing is *lost*; an element read that no add ever
//! attempted is *unexpected*; an element read whose add was indeterminate
//! (or failed) is *recovered*, which is fine. Lost or unexpected elements
//! make the history invalid; a history never read is unknown.

use super::{elements, interval_set_str, op_text, valid_json, Ops, F};
use crate::history::error::ReadError;
use crate::history::raw::OpType;
use crate::history::Datum;
use crate::model::Validity;
use rustc_hash::FxHashSet;
use serde_json::{json, Value};

/// The set verdict; every element list is sorted.
#[derive(Debug, Default)]
pub struct SetResult {
    /// Position of the final read; `None` when the set was never read.
    pub final_read: Option<usize>,
    /// Distinct elements some add attempted.
    pub attempt_count: usize,
    /// Distinct elements some add acknowledged.
    pub acknowledged_count: usize,
    /// Read and attempted.
    pub ok: Vec<Datum>,
    /// Acknowledged, not read.
    pub lost: Vec<Datum>,
    /// Read, never attempted.
    pub unexpected: Vec<Datum>,
    /// Read, attempted but not acknowledged.
    pub recovered: Vec<Datum>,
}

impl SetResult {
    /// Invalid with lost or unexpected elements; unknown without a read.
    pub fn valid(&self) -> Validity {
        if self.final_read.is_none() {
            Validity::Unknown
        } else if self.lost.is_empty() && self.unexpected.is_empty() {
            Validity::True
        } else {
            Validity::False
        }
    }

    /// Jepsen's result map: counts, and each element set as an interval
    /// string (`#{1..3 7}`).
    pub fn to_json(&self) -> Value {
        if self.final_read.is_none() {
            return json!({"valid?": valid_json(self.valid()), "error": "Set was never read"});
        }
        let s = |xs: &[Datum]| interval_set_str(&xs.iter().collect::<Vec<_>>());
        json!({
            "valid?": valid_json(self.valid()),
            "attempt-count": self.attempt_count,
            "acknowledged-count": self.acknowledged_count,
            "ok-count": self.ok.len(),
            "lost-count": self.lost.len(),
            "recovered-count": self.recovered.len(),
            "unexpected-count": self.unexpected.len(),
            "ok": s(&self.ok),
            "lost": s(&self.lost),
            "unexpected": s(&self.unexpected),
            "recovered": s(&self.recovered),
        })
    }

    /// A readable account.
    pub fn explain(&self, ops: &Ops) -> String {
        let Some(at) = self.final_read else {
            return "set: the set was never read\n".into();
        };
        let s = |xs: &[Datum]| interval_set_str(&xs.iter().collect::<Vec<_>>());
        format!(
            "set: {} attempted, {} acknowledged; final read {}\n  lost (acknowledged, not read): {} {}\n  unexpected (read, never attempted): {} {}\n  recovered (read, add not acknowledged): {} {}\n",
            self.attempt_count,
            self.acknowledged_count,
            op_text(&ops.ops[at]),
            self.lost.len(),
            s(&self.lost),
            self.unexpected.len(),
            s(&self.unexpected),
            self.recovered.len(),
            s(&self.recovered),
        )
    }
}

/// Checks a set history.
pub fn check(ops: &Ops) -> Result<SetResult, ReadError> {
    let mut attempts: FxHashSet<&Datum> = Default::default();
    let mut acknowledged: FxHashSet<&Datum> = Default::default();
    let mut final_read = None;
    for (i, op) in ops.ops.iter().enumerate() {
        match (op.kind, &op.f) {
            (OpType::Invoke, F::Add) => {
                attempts.insert(&op.value);
            }
            (OpType::Ok, F::Add) => {
                acknowledged.insert(&op.value);
            }
            (OpType::Ok, F::Read) => final_read = Some(i),
            _ => {}
        }
    }
    let Some(at) = final_read else {
        return Ok(SetResult {
            attempt_count: attempts.len(),
            acknowledged_count: acknowledged.len(),
            ..Default::default()
        });
    };
    let read: FxHashSet<&Datum> = elements(ops, &ops.ops[at], "the final read")?
        .iter()
        .collect();
    let sorted = |it: &mut dyn Iterator<Item = &&Datum>| {
        let mut v: Vec<Datum> = it.map(|d| (*d).clone()).collect();
        v.sort();
        v
    };
    Ok(SetResult {
        final_read,
        attempt_count: attempts.len(),
        acknowledged_count: acknowledged.len(),
        ok: sorted(&mut read.iter().filter(|d| attempts.contains(*d))),
        lost: sorted(&mut acknowledged.iter().filter(|d| !read.contains(*d))),
        unexpected: sorted(&mut read.iter().filter(|d| !attempts.contains(*d))),
        recovered: sorted(
            &mut read
                .iter()
                .filter(|d| attempts.contains(*d) && !acknowledged.contains(*d)),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::tests::ops;

    fn add(v: i64, t: &str) -> String {
        format!("{{:type :invoke, :f :add, :value {v}, :process 0}}\n{{:type :{t}, :f :add, :value {v}, :process 0}}\n")
    }

    fn read(v: &str) -> String {
        format!("{{:type :invoke, :f :read, :process 1}}\n{{:type :ok, :f :read, :value {v}, :process 1}}\n")
    }

    #[test]
    fn every_acknowledged_element_read_is_valid() {
        let r = check(&ops(&(add(1, "ok") + &add(2, "ok") + &read("#{1 2}")))).unwrap();
        assert_eq!(r.valid(), Validity::True);
        assert_eq!(r.to_json()["ok"], "#{1..2}");
    }

    #[test]
    fn a_lost_element_is_invalid() {
        let r = check(&ops(&(add(1, "ok") + &add(2, "ok") + &read("[1]")))).unwrap();
        assert_eq!(r.valid(), Validity::False);
        assert_eq!(r.lost, vec![Datum::Int(2)]);
        assert_eq!(r.to_json()["lost-count"], 1);
    }

    #[test]
    fn an_unexpected_element_is_invalid() {
        let r = check(&ops(&(add(1, "ok") + &read("[1 9]")))).unwrap();
        assert_eq!(r.valid(), Validity::False);
        assert_eq!(r.unexpected, vec![Datum::Int(9)]);
    }

    #[test]
    fn a_recovered_element_is_fine_and_only_the_last_read_counts() {
        let text = add(1, "info") + &add(2, "fail") + &read("[]") + &read("[1 2]");
        let r = check(&ops(&text)).unwrap();
        assert_eq!(r.valid(), Validity::True);
        assert_eq!(r.recovered, vec![Datum::Int(1), Datum::Int(2)]);
    }

    #[test]
    fn a_set_never_read_is_unknown() {
        let r = check(&ops(&add(1, "ok"))).unwrap();
        assert_eq!(r.valid(), Validity::Unknown);
        assert_eq!(r.to_json()["error"], "Set was never read");
    }
}
