//! The `counter` model: a counter starts at 0, `:add` ops add their
//! (non-negative) value, `:read` ops return the current value.
//!
//! Each ok read must lie between two bounds, as Jepsen's counter checker
//! computes them: the *lower* bound is the sum of the adds that completed
//! ok before the read was invoked (they must be visible), the *upper* bound
//! the sum of the adds invoked before the read completed, failed adds
//! excluded (an indeterminate add may or may not have happened).

use super::{op_text, valid_json, Op, Ops, F};
use crate::history::error::ReadError;
use crate::history::raw::OpType;
use crate::history::Datum;
use crate::model::Validity;
use serde_json::{json, Value};

/// One ok read with its bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounded {
    /// Sum of the adds known complete when the read began.
    pub lower: i128,
    /// The value read.
    pub value: i128,
    /// Sum of the adds that may have happened by the read's end.
    pub upper: i128,
    /// The ok read's position among the ops.
    pub op: usize,
}

impl Bounded {
    /// Whether the value lies within the bounds.
    pub fn ok(&self) -> bool {
        self.lower <= self.value && self.value <= self.upper
    }
}

/// The counter verdict.
#[derive(Debug)]
pub struct CounterResult {
    /// Every ok read, in completion order.
    pub reads: Vec<Bounded>,
    /// Positions in `reads` of the reads outside their bounds.
    pub errors: Vec<usize>,
}

impl CounterResult {
    /// Valid iff no read lies outside its bounds.
    pub fn valid(&self) -> Validity {
        if self.errors.is_empty() {
            Validity::True
        } else {
            Validity::False
        }
    }

    /// Jepsen's result map: `:valid?`, `:reads` and `:errors`, each read as
    /// `[lower value upper]`.
    pub fn to_json(&self) -> Value {
        let triple = |b: &Bounded| json!([b.lower, b.value, b.upper]);
        json!({
            "valid?": valid_json(self.valid()),
            "reads": self.reads.iter().map(triple).collect::<Vec<_>>(),
            "errors": self.errors.iter().map(|&e| triple(&self.reads[e])).collect::<Vec<_>>(),
        })
    }

    /// A readable account: counts, then the first reads out of bounds.
    pub fn explain(&self, ops: &Ops) -> String {
        let mut s = format!(
            "counter: {} ok reads, {} outside their bounds\n",
            self.reads.len(),
            self.errors.len()
        );
        for &e in self.errors.iter().take(10) {
            let b = &self.reads[e];
            let side = if b.value < b.lower {
                "below the adds known complete before it began"
            } else {
                "above the adds that may have happened by its end"
            };
            s += &format!(
                "  read {} not in [{}, {}]: {side}; {}\n",
                b.value,
                b.lower,
                b.upper,
                op_text(&ops.ops[b.op])
            );
        }
        if self.errors.len() > 10 {
            s += &format!("  ... and {} more\n", self.errors.len() - 10);
        }
        s
    }
}

/// An integer value, or an input error saying what `what` should be.
fn amount(ops: &Ops, op: &Op, what: &str) -> Result<Option<i128>, ReadError> {
    match &op.value {
        Datum::Int(i) => Ok(Some(*i as i128)),
        Datum::Nil => Ok(None),
        other => Err(ops.error(
            op,
            format!(
                "expected {what} to be an integer, got {}",
                super::short(other)
            ),
        )),
    }
}

/// Checks a counter history. Adds must not be negative (the bounds assume a
/// counter that only grows): a negative add is an input error.
pub fn check(ops: &Ops) -> Result<CounterResult, ReadError> {
    let partners = ops.partners();
    let (mut lower, mut upper) = (0i128, 0i128);
    // The lower bound when each pending read began, by invocation position.
    let mut began: rustc_hash::FxHashMap<usize, i128> = Default::default();
    let mut reads = Vec::new();
    for (i, op) in ops.ops.iter().enumerate() {
        let partner = partners[i].map(|j| &ops.ops[j]);
        match (op.kind, &op.f) {
            (OpType::Invoke, F::Add) => {
                if partner.is_some_and(|p| p.kind == OpType::Fail) {
                    continue;
                }
                // The completion may carry the amount the invocation lacks.
                let n = match amount(ops, op, "an add's value")? {
                    Some(n) => n,
                    None => match partner {
                        Some(p) => amount(ops, p, "an add's value")?.unwrap_or(0),
                        None => 0,
                    },
                };
                if n < 0 {
                    return Err(
                        ops.error(op, format!("counter adds must not be negative, got {n}"))
                    );
                }
                upper += n;
            }
            (OpType::Ok, F::Add) => {
                let n = match amount(ops, op, "an add's value")? {
                    Some(n) => n,
                    None => partner
                        .map(|p| amount(ops, p, "an add's value"))
                        .transpose()?
                        .flatten()
                        .unwrap_or(0),
                };
                lower += n;
            }
            (OpType::Invoke, F::Read) => {
                began.insert(i, lower);
            }
            (OpType::Ok, F::Read) => {
                let start = partners[i]
                    .and_then(|j| began.remove(&j))
                    .ok_or_else(|| ops.error(op, "an ok read without an invocation before it"))?;
                let value = amount(ops, op, "a read's value")?.ok_or_else(|| {
                    ops.error(op, "expected an ok read's value to be an integer, got nil")
                })?;
                reads.push(Bounded {
                    lower: start,
                    value,
                    upper,
                    op: i,
                });
            }
            _ => {}
        }
    }
    let errors = (0..reads.len()).filter(|&r| !reads[r].ok()).collect();
    Ok(CounterResult { reads, errors })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::tests::ops;

    fn run(text: &str) -> CounterResult {
        check(&ops(text)).expect("checkable")
    }

    const CONCURRENT: &str = "
{:type :invoke, :f :add, :value 1, :process 0}
{:type :invoke, :f :read, :process 1}
{:type :ok, :f :add, :value 1, :process 0}
{:type :invoke, :f :add, :value 5, :process 0}
{:type :ok, :f :read, :value READ, :process 1}
{:type :info, :f :add, :value 5, :process 0}
{:type :invoke, :f :read, :process 2}
{:type :ok, :f :read, :value READ2, :process 2}";

    fn concurrent(read: i64, read2: i64) -> CounterResult {
        run(&CONCURRENT
            .replace("READ2", &read2.to_string())
            .replace("READ", &read.to_string()))
    }

    #[test]
    fn reads_within_bounds_are_valid() {
        // First read: lower 0 (nothing complete at its start), upper 6.
        // Second: lower 1, upper 6 (the crashed add may have happened).
        let r = concurrent(0, 1);
        assert_eq!(r.valid(), Validity::True);
        assert_eq!(
            (
                r.reads[0].lower,
                r.reads[0].upper,
                r.reads[1].lower,
                r.reads[1].upper
            ),
            (0, 6, 1, 6)
        );
        assert_eq!(concurrent(6, 6).valid(), Validity::True);
    }

    #[test]
    fn a_read_below_the_lower_bound_is_an_error() {
        let r = concurrent(0, 0);
        assert_eq!(r.valid(), Validity::False);
        assert_eq!(r.errors, vec![1]);
        assert_eq!(r.to_json()["errors"], json!([[1, 0, 6]]));
    }

    #[test]
    fn a_read_above_the_upper_bound_is_an_error() {
        let h = ops(&CONCURRENT.replace("READ2", "1").replace("READ", "7"));
        let r = check(&h).unwrap();
        assert_eq!(r.valid(), Validity::False);
        assert_eq!(r.errors, vec![0]);
        assert!(r.explain(&h).contains("read 7 not in [0, 6]: above"));
    }

    #[test]
    fn failed_adds_never_count() {
        let r = run("{:type :invoke, :f :add, :value 3, :process 0}
{:type :fail, :f :add, :value 3, :process 0}
{:type :invoke, :f :read, :process 0}
{:type :ok, :f :read, :value 3, :process 0}");
        assert_eq!(r.valid(), Validity::False);
        assert_eq!(r.reads[0].upper, 0);
    }

    #[test]
    fn bad_values_are_input_errors() {
        let e = check(&ops("{:type :invoke, :f :add, :value :x, :process 0}"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "t.edn:1:33: expected an add's value to be an integer, got :x"
        );
        let e = check(&ops("{:type :invoke, :f :add, :value -1, :process 0}"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("must not be negative"), "{e}");
    }

    /// The bounds are the least and greatest sums of a set of adds that a
    /// read may see: brute force over every subset of adds on small random
    /// histories (one add or read per process at a time).
    #[test]
    fn bounds_match_enumerated_subsets() {
        let mut rng = crate::rng::Rng::new(7);
        for _ in 0..300 {
            let mut text = String::new();
            // (process, pending kind, amount)
            let mut pending: Vec<Option<(bool, i64)>> = vec![None; 3];
            // Per add: invocation step, completion step, outcome.
            let mut adds: Vec<(usize, usize, &str, i64)> = Vec::new();
            let mut open_adds: Vec<Option<usize>> = vec![None; 3];
            // Per read: invocation step, completion step.
            let mut reads: Vec<(usize, usize)> = Vec::new();
            let mut open_reads: Vec<Option<usize>> = vec![None; 3];
            for step in 0..12 {
                let p = rng.below(3) as usize;
                match pending[p].take() {
                    None => {
                        let is_add = rng.below(2) == 0;
                        let n = 1 + rng.below(4) as i64;
                        let f = if is_add { "add" } else { "read" };
                        text += &format!("{{:type :invoke, :f :{f}, :value {n}, :process {p}}}\n");
                        pending[p] = Some((is_add, n));
                        if is_add {
                            open_adds[p] = Some(adds.len());
                            adds.push((step, usize::MAX, "info", n));
                        } else {
                            open_reads[p] = Some(step);
                        }
                    }
                    Some((true, n)) => {
                        let t = ["ok", "fail", "info"][rng.below(3) as usize];
                        text += &format!("{{:type :{t}, :f :add, :value {n}, :process {p}}}\n");
                        let a = open_adds[p].take().unwrap();
                        adds[a].1 = step;
                        adds[a].2 = t;
                    }
                    Some((false, _)) => {
                        text += &format!("{{:type :ok, :f :read, :value 0, :process {p}}}\n");
                        reads.push((open_reads[p].take().unwrap(), step));
                    }
                }
            }
            let r = run(&text);
            assert_eq!(r.reads.len(), reads.len());
            for (b, &(start, end)) in r.reads.iter().zip(&reads) {
                let (mut lo, mut hi) = (i128::MAX, i128::MIN);
                for mask in 0u32..(1 << adds.len()) {
                    let fits = adds.iter().enumerate().all(|(k, &(inv, done, t, _))| {
                        let inside = mask & (1 << k) != 0;
                        let must = t == "ok" && done < start;
                        let may = t != "fail" && inv < end;
                        (!must || inside) && (!inside || may)
                    });
                    if fits {
                        let sum: i128 = adds
                            .iter()
                            .enumerate()
                            .filter(|(k, _)| mask & (1 << k) != 0)
                            .map(|(_, a)| a.3 as i128)
                            .sum();
                        lo = lo.min(sum);
                        hi = hi.max(sum);
                    }
                }
                assert_eq!((b.lower, b.upper), (lo, hi), "{text}");
            }
        }
    }
}
