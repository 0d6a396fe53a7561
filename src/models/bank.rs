//! The `bank` model: `:transfer` ops move money between accounts and
//! `:read` ops return every balance, as a map from account to balance.
//!
//! Every ok read must show the same accounts and the same total as the
//! first ok read (or `--total-amount`); a read with an unknown account, a
//! nil balance, a wrong total or (unless allowed) a negative balance is a
//! bad read. These are elle-cli's bank rules; transfers themselves are not
//! checked.

use super::{op_json, op_text, valid_json, Op, Ops, F};
use crate::history::error::ReadError;
use crate::history::raw::OpType;
use crate::history::Datum;
use crate::model::Validity;
use serde_json::{json, Map, Value};

/// Options, as elle-cli's flags give them.
#[derive(Clone, Debug, Default)]
pub struct BankOptions {
    /// `--allow-negative-balances`.
    pub negative_balances: bool,
    /// `--total-amount`: the total every read must show; the first read's
    /// total when not given.
    pub total_amount: Option<i64>,
}

/// What is wrong with one read: the first rule it breaks, in elle-cli's order.
#[derive(Clone, Debug, PartialEq)]
pub enum BadRead {
    /// Accounts the first read did not have.
    UnexpectedKey(Vec<Datum>),
    /// Accounts whose balance is nil.
    NilBalance(Vec<Datum>),
    /// The balances' total.
    WrongTotal(i128),
    /// The negative balances.
    NegativeValue(Vec<i128>),
}

impl BadRead {
    /// Jepsen's error `:type`.
    pub fn kind(&self) -> &'static str {
        match self {
            BadRead::UnexpectedKey(_) => "unexpected-key",
            BadRead::NilBalance(_) => "nil-balance",
            BadRead::WrongTotal(_) => "wrong-total",
            BadRead::NegativeValue(_) => "negative-value",
        }
    }

    /// How bad, to pick the worst of a kind (elle-cli's measure).
    fn badness(&self, total: i128) -> f64 {
        match self {
            BadRead::UnexpectedKey(ks) | BadRead::NilBalance(ks) => ks.len() as f64,
            BadRead::WrongTotal(t) if total > 0 => ((t - total) as f64 / total as f64).abs(),
            BadRead::WrongTotal(_) => 0.0,
            BadRead::NegativeValue(ns) => -(ns.iter().sum::<i128>() as f64),
        }
    }
}

/// The bank verdict.
#[derive(Debug)]
pub struct BankResult {
    /// Ok reads seen.
    pub read_count: usize,
    /// The total every read must show.
    pub total: i128,
    /// Bad reads, in history order: (op position, what is wrong).
    pub errors: Vec<(usize, BadRead)>,
    /// Every ok read's total (nil balances count 0), in history order:
    /// (op position, total); what the report plots.
    pub totals: Vec<(usize, i128)>,
}

impl BankResult {
    /// Valid iff no read is bad.
    pub fn valid(&self) -> Validity {
        if self.errors.is_empty() {
            Validity::True
        } else {
            Validity::False
        }
    }

    fn error_json(&self, ops: &Ops, (at, bad): &(usize, BadRead)) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), json!(bad.kind()));
        let list = |ks: &[Datum]| Value::Array(ks.iter().map(super::datum_json).collect());
        match bad {
            BadRead::UnexpectedKey(ks) => m.insert("unexpected".into(), list(ks)),
            BadRead::NilBalance(ks) => m.insert(
                "nils".into(),
                Value::Object(
                    ks.iter()
                        .map(|k| (super::key_string(k), Value::Null))
                        .collect(),
                ),
            ),
            BadRead::WrongTotal(t) => m.insert("total".into(), json!(t)),
            BadRead::NegativeValue(ns) => m.insert("negative".into(), json!(ns)),
        };
        m.insert("op".into(), op_json(&ops.ops[*at]));
        Value::Object(m)
    }

    /// Jepsen's result map: `:valid?`, `:read-count`, `:error-count`,
    /// `:first-error`, and per error type its `:count`, `:first`, `:worst`,
    /// `:last` (and for wrong totals `:lowest` and `:highest`).
    pub fn to_json(&self, ops: &Ops) -> Value {
        let mut by_kind = Map::new();
        for kind in [
            "unexpected-key",
            "nil-balance",
            "wrong-total",
            "negative-value",
        ] {
            let errs: Vec<&(usize, BadRead)> =
                self.errors.iter().filter(|e| e.1.kind() == kind).collect();
            let (Some(first), Some(last)) = (errs.first(), errs.last()) else {
                continue;
            };
            let worst = errs
                .iter()
                .copied()
                .reduce(|a, b| {
                    if b.1.badness(self.total) > a.1.badness(self.total) {
                        b
                    } else {
                        a
                    }
                })
                .unwrap_or(first);
            let mut m = Map::new();
            m.insert("count".into(), json!(errs.len()));
            m.insert("first".into(), self.error_json(ops, first));
            m.insert("worst".into(), self.error_json(ops, worst));
            m.insert("last".into(), self.error_json(ops, last));
            if kind == "wrong-total" {
                let total = |e: &&(usize, BadRead)| match e.1 {
                    BadRead::WrongTotal(t) => t,
                    _ => 0,
                };
                let lowest = errs.iter().copied().min_by_key(total).unwrap_or(first);
                let highest = errs.iter().copied().max_by_key(total).unwrap_or(first);
                m.insert("lowest".into(), self.error_json(ops, lowest));
                m.insert("highest".into(), self.error_json(ops, highest));
            }
            by_kind.insert(kind.into(), Value::Object(m));
        }
        json!({
            "valid?": valid_json(self.valid()),
            "read-count": self.read_count,
            "error-count": self.errors.len(),
            "first-error": self.errors.first().map(|e| self.error_json(ops, e)),
            "errors": by_kind,
        })
    }

    /// A readable account: counts, then the first bad reads.
    pub fn explain(&self, ops: &Ops) -> String {
        let mut s = format!(
            "bank: {} ok reads, total {}, {} bad\n",
            self.read_count,
            self.total,
            self.errors.len()
        );
        for (at, bad) in self.errors.iter().take(10) {
            let why = match bad {
                BadRead::UnexpectedKey(ks) => format!("unknown accounts {}", show(ks)),
                BadRead::NilBalance(ks) => format!("nil balances for {}", show(ks)),
                BadRead::WrongTotal(t) => format!("total {t}, expected {}", self.total),
                BadRead::NegativeValue(ns) => format!("negative balances {ns:?}"),
            };
            s += &format!("  {}: {why}; {}\n", bad.kind(), op_text(&ops.ops[*at]));
        }
        if self.errors.len() > 10 {
            s += &format!("  ... and {} more\n", self.errors.len() - 10);
        }
        s
    }
}

fn show(ks: &[Datum]) -> String {
    ks.iter()
        .map(|k| k.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The balances of an ok read, or an input error.
fn balances<'a>(ops: &Ops, op: &'a Op) -> Result<&'a [(Datum, Datum)], ReadError> {
    let Datum::Map(kvs) = &op.value else {
        return Err(ops.error(
            op,
            format!(
                "expected a read's value to be a map of accounts to balances, got {}",
                super::short(&op.value)
            ),
        ));
    };
    for (_, b) in kvs {
        if !matches!(b, Datum::Int(_) | Datum::Nil) {
            return Err(ops.error(
                op,
                format!(
                    "expected balances to be integers or nil, got {}",
                    super::short(b)
                ),
            ));
        }
    }
    Ok(kvs)
}

/// Checks a bank history. `Err` for input that is no bank history; an
/// `Ok` result whose first read has a nil balance and no total was given
/// cannot fix the total: that is an input error too.
pub fn check(ops: &Ops, options: &BankOptions) -> Result<BankResult, ReadError> {
    let reads: Vec<usize> = (0..ops.ops.len())
        .filter(|&i| ops.ops[i].kind == OpType::Ok && ops.ops[i].f == F::Read)
        .collect();
    let mut accounts: rustc_hash::FxHashSet<&Datum> = Default::default();
    let mut total = options.total_amount.map(i128::from);
    if let Some(&first) = reads.first() {
        let kvs = balances(ops, &ops.ops[first])?;
        accounts = kvs.iter().map(|(k, _)| k).collect();
        if total.is_none() {
            let mut sum = 0i128;
            for (k, b) in kvs {
                let Datum::Int(b) = b else {
                    return Err(ops.error(
                        &ops.ops[first],
                        format!("the first read, which fixes the total, has a nil balance for account {k}; give --total-amount"),
                    ));
                };
                sum += *b as i128;
            }
            total = Some(sum);
        }
    }
    let total = total.unwrap_or(0);
    let mut errors = Vec::new();
    let mut totals = Vec::with_capacity(reads.len());
    for &at in &reads {
        let kvs = balances(ops, &ops.ops[at])?;
        let unexpected: Vec<Datum> = kvs
            .iter()
            .filter(|(k, _)| !accounts.contains(k))
            .map(|(k, _)| k.clone())
            .collect();
        let nils: Vec<Datum> = kvs
            .iter()
            .filter(|(_, b)| *b == Datum::Nil)
            .map(|(k, _)| k.clone())
            .collect();
        let values = kvs.iter().filter_map(|(_, b)| match b {
            Datum::Int(b) => Some(*b as i128),
            _ => None,
        });
        let sum: i128 = values.clone().sum();
        totals.push((at, sum));
        let negative: Vec<i128> = values.filter(|b| *b < 0).collect();
        let bad = if !unexpected.is_empty() {
            Some(BadRead::UnexpectedKey(unexpected))
        } else if !nils.is_empty() {
            Some(BadRead::NilBalance(nils))
        } else if sum != total {
            Some(BadRead::WrongTotal(sum))
        } else if !options.negative_balances && !negative.is_empty() {
            Some(BadRead::NegativeValue(negative))
        } else {
            None
        };
        errors.extend(bad.map(|b| (at, b)));
    }
    Ok(BankResult {
        read_count: reads.len(),
        total,
        errors,
        totals,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::tests::ops;

    fn history(reads: &[&str]) -> Ops {
        let text: String = reads
            .iter()
            .map(|r| format!("{{:type :invoke, :f :read, :process 0}}\n{{:type :ok, :f :read, :process 0, :value {r}}}\n"))
            .collect();
        ops(&text)
    }

    fn run(reads: &[&str], options: &BankOptions) -> BankResult {
        check(&history(reads), options).expect("checkable")
    }

    #[test]
    fn reads_with_the_first_total_are_valid() {
        let r = run(&["{0 10, 1 90}", "{0 50, 1 50}"], &BankOptions::default());
        assert_eq!((r.valid(), r.read_count, r.total), (Validity::True, 2, 100));
    }

    #[test]
    fn a_bad_total_is_reported_with_jepsens_keys() {
        let h = history(&["{0 10, 1 90}", "{0 50, 1 51}"]);
        let r = check(&h, &BankOptions::default()).unwrap();
        assert_eq!(r.valid(), Validity::False);
        assert_eq!(r.errors, vec![(3, BadRead::WrongTotal(101))]);
        let j = r.to_json(&h);
        assert_eq!(j["error-count"], 1);
        assert_eq!(j["errors"]["wrong-total"]["count"], 1);
        assert_eq!(j["errors"]["wrong-total"]["highest"]["total"], 101);
        assert_eq!(j["first-error"]["type"], "wrong-total");
    }

    #[test]
    fn the_given_total_overrides_the_first_read() {
        let o = BankOptions {
            total_amount: Some(100),
            ..Default::default()
        };
        let r = run(&["{0 10, 1 80}"], &o);
        assert_eq!(r.errors, vec![(1, BadRead::WrongTotal(90))]);
    }

    #[test]
    fn negative_balances_are_refused_unless_allowed() {
        let reads = ["{0 100, 1 0}", "{0 101, 1 -1}"];
        let r = run(&reads, &BankOptions::default());
        assert_eq!(r.errors, vec![(3, BadRead::NegativeValue(vec![-1]))]);
        let allowed = BankOptions {
            negative_balances: true,
            ..Default::default()
        };
        assert_eq!(run(&reads, &allowed).valid(), Validity::True);
    }

    #[test]
    fn unknown_accounts_and_nil_balances_are_errors() {
        let r = run(
            &["{0 100, 1 0}", "{0 100, 2 0}", "{0 100, 1 nil}"],
            &BankOptions::default(),
        );
        assert_eq!(
            r.errors,
            vec![
                (3, BadRead::UnexpectedKey(vec![Datum::Int(2)])),
                (5, BadRead::NilBalance(vec![Datum::Int(1)]))
            ]
        );
    }

    #[test]
    fn reads_that_are_no_balance_maps_are_input_errors() {
        let text = "{:type :ok, :f :read, :process 0, :value [1 2]}";
        let e = check(&ops(text), &BankOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("t.edn:1:42: expected a read's value to be a map"),
            "{e}"
        );
    }
}
