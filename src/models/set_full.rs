//! The `set-full` model: `:add` ops add one element each, and every ok
//! `:read` returns the whole set at that time. Each element gets a
//! timeline, with Jepsen's set-full definitions:
//!
//! - it is *known* from the first of its add's ok completion and the
//!   completion of the first read that saw it;
//! - it is *stable* when some read saw it and every read that began later
//!   saw it too (its last present read began after its last absent one);
//! - it is *lost* when it was known, and a read that began after both the
//!   last read that saw it and the moment it was known did not see it;
//! - otherwise it was *never read* (e.g. only reads concurrent with its add).
//!
//! A stable element that some read missed after it was known is *stale*
//! (stable latency above 0 ms). Lost elements make the history invalid; a
//! history without a stable element is unknown. An element read twice in
//! one read is *duplicated* and invalid as well (the Jepsen version
//! elle-cli uses never reports duplicates; a set cannot hold one twice).
//!
//! Only reads that complete after an element's (last) add invocation
//! count for it. Finding each element's last absent read without visiting
//! every read: reads sorted by invocation, newest first, are walked only
//! past the reads that contain the element, and reads still open at the
//! add's invocation (at most one per process) are looked at directly, so
//! the whole check is O(total read size + elements × concurrency).

use super::{datum_json, op_json, op_text, valid_json, Ops, F};
use crate::history::error::ReadError;
use crate::history::raw::OpType;
use crate::history::Datum;
use crate::model::Validity;
use rustc_hash::FxHashMap;
use serde_json::{json, Map, Value};

/// What became of an element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Always read after some point.
    Stable,
    /// Never read after some point, though known.
    Lost,
    /// Neither.
    NeverRead,
}

impl Outcome {
    /// Jepsen's name.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Stable => "stable",
            Outcome::Lost => "lost",
            Outcome::NeverRead => "never-read",
        }
    }
}

/// One element's timeline.
#[derive(Clone, Debug)]
pub struct Element {
    /// The element.
    pub element: Datum,
    /// What became of it.
    pub outcome: Outcome,
    /// Position of the op from which it was known (add ok or read ok).
    pub known: Option<usize>,
    /// Position of the invocation of the last read that missed it.
    pub last_absent: Option<usize>,
    /// Position of the invocation of the last read that saw it.
    pub last_present: Option<usize>,
    /// Milliseconds from known to stable (stable elements).
    pub stable_latency: Option<i64>,
    /// Milliseconds from known to lost (lost elements).
    pub lost_latency: Option<i64>,
}

/// The set-full verdict.
#[derive(Debug)]
pub struct SetFullResult {
    /// Every element attempted, sorted.
    pub elements: Vec<Element>,
    /// Elements some read held more than once, with the largest multiplicity.
    pub duplicated: Vec<(Datum, usize)>,
}

/// Jepsen's quantiles of latencies.
const POINTS: [(f64, &str); 5] = [
    (0.0, "0"),
    (0.5, "0.5"),
    (0.95, "0.95"),
    (0.99, "0.99"),
    (1.0, "1"),
];

fn distribution(mut xs: Vec<i64>) -> Value {
    xs.sort_unstable();
    let n = xs.len();
    Value::Object(
        POINTS
            .iter()
            .map(|&(p, name)| {
                let i = ((n as f64 * p).floor() as usize).min(n - 1);
                (name.to_string(), json!(xs[i]))
            })
            .collect(),
    )
}

impl SetFullResult {
    fn with(&self, outcome: Outcome) -> impl Iterator<Item = &Element> {
        self.elements.iter().filter(move |e| e.outcome == outcome)
    }

    /// Stable elements seen late (stable latency above 0).
    pub fn stale(&self) -> impl Iterator<Item = &Element> {
        self.with(Outcome::Stable)
            .filter(|e| e.stable_latency.unwrap_or(0) > 0)
    }

    /// Invalid with lost or duplicated elements; unknown with no stable one.
    pub fn valid(&self) -> Validity {
        if !self.duplicated.is_empty() || self.with(Outcome::Lost).next().is_some() {
            Validity::False
        } else if self.with(Outcome::Stable).next().is_none() {
            Validity::Unknown
        } else {
            Validity::True
        }
    }

    fn element_json(&self, ops: &Ops, e: &Element) -> Value {
        json!({
            "element": datum_json(&e.element),
            "outcome": e.outcome.name(),
            "stable-latency": e.stable_latency,
            "lost-latency": e.lost_latency,
            "known": e.known.map(|k| op_json(&ops.ops[k])),
            "last-absent": e.last_absent.map(|k| op_json(&ops.ops[k])),
        })
    }

    /// Jepsen's result map: counts, element lists, the worst stale
    /// elements, latency quantiles, duplicates.
    pub fn to_json(&self, ops: &Ops) -> Value {
        let list = |it: &mut dyn Iterator<Item = &Element>| {
            Value::Array(it.map(|e| datum_json(&e.element)).collect())
        };
        let mut worst: Vec<&Element> = self.stale().collect();
        // Largest latency first; among equals the later element first, as
        // Jepsen's reversed stable sort has it.
        worst.reverse();
        worst.sort_by_key(|e| std::cmp::Reverse(e.stable_latency));
        let mut m = Map::new();
        m.insert("valid?".into(), valid_json(self.valid()));
        m.insert("attempt-count".into(), json!(self.elements.len()));
        m.insert(
            "stable-count".into(),
            json!(self.with(Outcome::Stable).count()),
        );
        m.insert("lost-count".into(), json!(self.with(Outcome::Lost).count()));
        m.insert("lost".into(), list(&mut self.with(Outcome::Lost)));
        m.insert(
            "never-read-count".into(),
            json!(self.with(Outcome::NeverRead).count()),
        );
        m.insert(
            "never-read".into(),
            list(&mut self.with(Outcome::NeverRead)),
        );
        m.insert("stale-count".into(), json!(self.stale().count()));
        m.insert("stale".into(), list(&mut self.stale()));
        m.insert(
            "worst-stale".into(),
            Value::Array(
                worst
                    .iter()
                    .take(8)
                    .map(|e| self.element_json(ops, e))
                    .collect(),
            ),
        );
        let stable: Vec<i64> = self
            .elements
            .iter()
            .filter_map(|e| e.stable_latency)
            .collect();
        if !stable.is_empty() {
            m.insert("stable-latencies".into(), distribution(stable));
        }
        let lost: Vec<i64> = self
            .elements
            .iter()
            .filter_map(|e| e.lost_latency)
            .collect();
        if !lost.is_empty() {
            m.insert("lost-latencies".into(), distribution(lost));
        }
        m.insert("duplicated-count".into(), json!(self.duplicated.len()));
        m.insert(
            "duplicated".into(),
            Value::Object(
                self.duplicated
                    .iter()
                    .map(|(d, n)| (super::key_string(d), json!(n)))
                    .collect(),
            ),
        );
        Value::Object(m)
    }

    /// A readable account: counts, then the first lost and stale elements.
    pub fn explain(&self, ops: &Ops) -> String {
        let mut s = format!(
            "set-full: {} elements: {} stable ({} stale), {} lost, {} never read, {} duplicated\n",
            self.elements.len(),
            self.with(Outcome::Stable).count(),
            self.stale().count(),
            self.with(Outcome::Lost).count(),
            self.with(Outcome::NeverRead).count(),
            self.duplicated.len()
        );
        let at = |p: Option<usize>| p.map_or("-".to_string(), |p| op_text(&ops.ops[p]));
        for e in self.with(Outcome::Lost).take(10) {
            s += &format!(
                "  lost {}: known from {}, missing from the read invoked at {} (after {} ms)\n",
                e.element,
                at(e.known),
                at(e.last_absent),
                e.lost_latency.unwrap_or(0)
            );
        }
        for e in self.stale().take(10) {
            s += &format!(
                "  stale {}: known from {}, still missing from the read invoked at {}; stable after {} ms\n",
                e.element,
                at(e.known),
                at(e.last_absent),
                e.stable_latency.unwrap_or(0)
            );
        }
        for (d, n) in self.duplicated.iter().take(10) {
            s += &format!("  duplicated {d}: {n} times in one read\n");
        }
        s
    }
}

/// Element ids: integers (the common case) in a map of their own, which
/// hashes and compares them without going through `Datum`.
#[derive(Default)]
struct Ids<'a> {
    ints: FxHashMap<i64, u32>,
    others: FxHashMap<&'a Datum, u32>,
}

impl<'a> Ids<'a> {
    /// The id of `d`, given `next` when it has none yet.
    fn intern(&mut self, d: &'a Datum, next: u32) -> u32 {
        match d {
            Datum::Int(i) => *self.ints.entry(*i).or_insert(next),
            _ => *self.others.entry(d).or_insert(next),
        }
    }

    fn get(&self, d: &Datum) -> Option<u32> {
        match d {
            Datum::Int(i) => self.ints.get(i).copied(),
            _ => self.others.get(d).copied(),
        }
    }
}

/// An ok read: its invocation and completion positions.
struct Read {
    invoked: usize,
    done: usize,
}

/// Checks a set-full history.
pub fn check(ops: &Ops) -> Result<SetFullResult, ReadError> {
    let partners = ops.partners();
    // Elements by first add, and each one's last add invocation.
    let mut ids = Ids::default();
    let mut values: Vec<&Datum> = Vec::new();
    let mut last_add: Vec<usize> = Vec::new();
    let mut reads: Vec<Read> = Vec::new();
    // Read id by the position of its invocation.
    let mut read_at: FxHashMap<usize, usize> = Default::default();
    for (i, op) in ops.ops.iter().enumerate() {
        match (op.kind, &op.f) {
            (OpType::Invoke, F::Add) => {
                let next = values.len() as u32;
                let id = ids.intern(&op.value, next);
                if id == next {
                    values.push(&op.value);
                    last_add.push(i);
                }
                last_add[id as usize] = i;
            }
            (OpType::Ok, F::Read) => {
                let invoked = partners[i]
                    .ok_or_else(|| ops.error(op, "an ok read without an invocation before it"))?;
                read_at.insert(invoked, reads.len());
                reads.push(Read { invoked, done: i });
            }
            _ => {}
        }
    }
    let n = values.len();
    // Known from an ok add after the last add invocation.
    let mut known: Vec<Option<usize>> = vec![None; n];
    // Reads open at each element's last add invocation.
    let mut open_at: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut open: Vec<usize> = Vec::new();
    for (i, op) in ops.ops.iter().enumerate() {
        match (op.kind, &op.f) {
            (OpType::Invoke, F::Add) => {
                let e = ids.get(&op.value).expect("interned above") as usize;
                if last_add[e] == i {
                    open_at[e] = open.clone();
                }
            }
            (OpType::Ok, F::Add) => {
                if let Some(e) = ids.get(&op.value) {
                    let e = e as usize;
                    if i > last_add[e] && known[e].is_none() {
                        known[e] = Some(i);
                    }
                }
            }
            (OpType::Invoke, F::Read) => {
                if let Some(&r) = read_at.get(&i) {
                    open.push(r);
                }
            }
            (OpType::Ok, F::Read) => {
                let r = read_at[&partners[i].expect("paired above")];
                open.retain(|&o| o != r);
            }
            _ => {}
        }
    }
    // Reads by invocation, newest first; each element's reads as ranks.
    let mut order: Vec<usize> = (0..reads.len()).collect();
    order.sort_unstable_by_key(|&r| std::cmp::Reverse(reads[r].invoked));
    let mut rank = vec![0u32; reads.len()];
    for (k, &r) in order.iter().enumerate() {
        rank[r] = k as u32;
    }
    let mut present: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut mark: Vec<u32> = vec![u32::MAX; n];
    let mut dups: FxHashMap<usize, usize> = Default::default();
    for (r, read) in reads.iter().enumerate() {
        let op = &ops.ops[read.done];
        let mut count: FxHashMap<usize, usize> = Default::default();
        for x in super::elements(ops, op, "a read's value")? {
            let Some(e) = ids.get(x) else { continue };
            let e = e as usize;
            if mark[e] == r as u32 {
                *count.entry(e).or_insert(1) += 1;
                continue;
            }
            mark[e] = r as u32;
            if read.done > last_add[e] {
                present[e].push(rank[r]);
                if known[e].is_none_or(|k| read.done < k) {
                    known[e] = Some(read.done);
                }
            }
        }
        for (e, c) in count {
            let d = dups.entry(e).or_insert(0);
            *d = (*d).max(c);
        }
    }
    let mut elements = Vec::with_capacity(n);
    for e in 0..n {
        let ranks = &mut present[e];
        ranks.sort_unstable();
        let a = last_add[e];
        // The newest read invocation that saw it: the lowest rank.
        let last_present = ranks.first().map(|&k| reads[order[k as usize]].invoked);
        let mut last_absent = None;
        let mut seen = ranks.iter().peekable();
        for (k, &r) in order.iter().enumerate() {
            if reads[r].invoked < a {
                break;
            }
            if seen.peek() == Some(&&(k as u32)) {
                seen.next();
                continue;
            }
            last_absent = Some(reads[r].invoked);
            break;
        }
        if last_absent.is_none() {
            last_absent = open_at[e]
                .iter()
                .filter(|&&r| ranks.binary_search(&rank[r]).is_err())
                .map(|&r| reads[r].invoked)
                .max();
        }
        let before = |x: Option<usize>, y: Option<usize>| {
            x.map_or(-1, |p| p as i64) < y.map_or(-1, |p| p as i64)
        };
        let stable = last_present.is_some() && before(last_absent, last_present);
        let lost = known[e].is_some()
            && last_absent.is_some()
            && before(last_present, last_absent)
            && before(known[e], last_absent);
        // Ops without a :time count as time 0.
        let time = |p: usize| ops.ops[p].time.unwrap_or(0);
        let known_time = known[e].map_or(0, time);
        let ms = |t: i64| (t.saturating_sub(known_time)).max(0) / 1_000_000;
        let after = |p: Option<usize>| p.map_or(0, |p| time(p).saturating_add(1));
        elements.push(Element {
            element: values[e].clone(),
            outcome: if stable {
                Outcome::Stable
            } else if lost {
                Outcome::Lost
            } else {
                Outcome::NeverRead
            },
            known: known[e],
            last_absent,
            last_present,
            stable_latency: stable.then(|| ms(after(last_absent))),
            lost_latency: lost.then(|| ms(after(last_present))),
        });
    }
    let mut duplicated: Vec<(Datum, usize)> = dups
        .into_iter()
        .map(|(e, c)| (values[e].clone(), c))
        .collect();
    duplicated.sort();
    elements.sort_by(|x, y| x.element.cmp(&y.element));
    Ok(SetFullResult {
        elements,
        duplicated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::tests::ops;

    fn op(t: &str, f: &str, v: &str, p: u32, time: u64) -> String {
        format!("{{:type :{t}, :f :{f}, :value {v}, :process {p}, :time {time}}}\n")
    }

    fn outcome(r: &SetFullResult, x: i64) -> Outcome {
        r.elements
            .iter()
            .find(|e| e.element == Datum::Int(x))
            .unwrap()
            .outcome
    }

    #[test]
    fn a_read_after_the_add_makes_it_stable() {
        let h = op("invoke", "add", "1", 0, 0)
            + &op("ok", "add", "1", 0, 1_000_000)
            + &op("invoke", "read", "nil", 1, 2_000_000)
            + &op("ok", "read", "[1]", 1, 3_000_000);
        let r = check(&ops(&h)).unwrap();
        assert_eq!(r.valid(), Validity::True);
        assert_eq!(outcome(&r, 1), Outcome::Stable);
        assert_eq!(r.elements[0].stable_latency, Some(0));
        assert_eq!(r.stale().count(), 0);
    }

    #[test]
    fn missing_from_the_last_reads_is_lost() {
        let h = op("invoke", "add", "1", 0, 0)
            + &op("ok", "add", "1", 0, 1)
            + &op("invoke", "read", "nil", 1, 2)
            + &op("ok", "read", "[1]", 1, 3)
            + &op("invoke", "read", "nil", 1, 4_000_000)
            + &op("ok", "read", "[]", 1, 5_000_000);
        let r = check(&ops(&h)).unwrap();
        assert_eq!(r.valid(), Validity::False);
        assert_eq!(outcome(&r, 1), Outcome::Lost);
        // Lost time: just after the last present read began (time 2).
        assert_eq!(r.elements[0].lost_latency, Some(0));
        let j = r.to_json(&ops(&h));
        assert_eq!(j["lost"], json!([1]));
        assert_eq!(j["lost-count"], 1);
    }

    #[test]
    fn a_late_appearance_is_stale_but_valid() {
        let h = op("invoke", "add", "1", 0, 0)
            + &op("ok", "add", "1", 0, 1_000_000)
            + &op("invoke", "read", "nil", 1, 5_000_000)
            + &op("ok", "read", "[]", 1, 6_000_000)
            + &op("invoke", "read", "nil", 1, 9_000_000)
            + &op("ok", "read", "[1]", 1, 10_000_000);
        let r = check(&ops(&h)).unwrap();
        assert_eq!(r.valid(), Validity::True);
        assert_eq!(outcome(&r, 1), Outcome::Stable);
        // Stable from just after the absent read began: (5ms + 1ns) - 1ms.
        assert_eq!(r.elements[0].stable_latency, Some(4));
        let j = r.to_json(&ops(&h));
        assert_eq!(j["stale"], json!([1]));
        assert_eq!(j["worst-stale"][0]["stable-latency"], 4);
        assert_eq!(j["stable-latencies"]["1"], 4);
    }

    #[test]
    fn a_miss_by_a_concurrent_read_is_never_read_not_lost() {
        // The read begins before the add completes and misses it: it may
        // have come first. Nothing later reads.
        let h = op("invoke", "add", "1", 0, 0)
            + &op("invoke", "read", "nil", 1, 1)
            + &op("ok", "add", "1", 0, 2)
            + &op("ok", "read", "[]", 1, 3);
        let r = check(&ops(&h)).unwrap();
        assert_eq!(outcome(&r, 1), Outcome::NeverRead);
        assert_eq!(r.valid(), Validity::Unknown, "no stable element");
    }

    #[test]
    fn duplicates_in_a_read_are_invalid() {
        let h = op("invoke", "add", "1", 0, 0)
            + &op("ok", "add", "1", 0, 1)
            + &op("invoke", "read", "nil", 1, 2)
            + &op("ok", "read", "[1 1]", 1, 3);
        let r = check(&ops(&h)).unwrap();
        assert_eq!(r.duplicated, vec![(Datum::Int(1), 2)]);
        assert_eq!(r.valid(), Validity::False);
    }

    /// Each element's (known, last present, last absent) as the definitions
    /// say, the slow way: every ok read updates every element added so far
    /// (an add invocation starts the element afresh).
    #[allow(clippy::type_complexity)]
    fn timelines_one_read_at_a_time(
        o: &Ops,
    ) -> FxHashMap<Datum, (Option<usize>, Option<usize>, Option<usize>)> {
        let partners = o.partners();
        let mut state: FxHashMap<Datum, (Option<usize>, Option<usize>, Option<usize>)> =
            Default::default();
        for (i, op) in o.ops.iter().enumerate() {
            match (op.kind, &op.f) {
                (OpType::Invoke, F::Add) => {
                    state.insert(op.value.clone(), (None, None, None));
                }
                (OpType::Ok, F::Add) => {
                    if let Some(s) = state.get_mut(&op.value) {
                        s.0.get_or_insert(i);
                    }
                }
                (OpType::Ok, F::Read) => {
                    let inv = partners[i].unwrap();
                    let Datum::Vector(xs) = &op.value else {
                        panic!()
                    };
                    for (x, s) in state.iter_mut() {
                        if xs.contains(x) {
                            s.0.get_or_insert(i);
                            s.1 = s.1.max(Some(inv));
                        } else {
                            s.2 = s.2.max(Some(inv));
                        }
                    }
                }
                _ => {}
            }
        }
        state
    }

    /// The fast timelines agree with updating every element at every read,
    /// on random concurrent histories.
    #[test]
    fn timelines_match_updating_every_element_at_every_read() {
        let mut rng = crate::rng::Rng::new(11);
        for _ in 0..300 {
            let mut h = String::new();
            let mut pending: Vec<Option<(bool, i64)>> = vec![None; 4];
            let mut added: Vec<i64> = Vec::new();
            for step in 0..30u64 {
                let p = rng.below(4) as usize;
                match pending[p].take() {
                    None if rng.below(2) == 0 => {
                        let x = rng.below(6) as i64;
                        h += &op("invoke", "add", &x.to_string(), p as u32, step);
                        pending[p] = Some((true, x));
                    }
                    None => {
                        h += &op("invoke", "read", "nil", p as u32, step);
                        pending[p] = Some((false, 0));
                    }
                    Some((true, x)) => {
                        let t = ["ok", "info", "fail"][rng.below(3) as usize];
                        h += &op(t, "add", &x.to_string(), p as u32, step);
                        added.push(x);
                    }
                    Some((false, _)) => {
                        let seen: Vec<String> = added
                            .iter()
                            .filter(|_| rng.below(3) != 0)
                            .map(|x| x.to_string())
                            .collect();
                        h += &op(
                            "ok",
                            "read",
                            &format!("[{}]", seen.join(" ")),
                            p as u32,
                            step,
                        );
                    }
                }
            }
            let o = ops(&h);
            let r = check(&o).unwrap();
            let slow = timelines_one_read_at_a_time(&o);
            for e in &r.elements {
                assert_eq!(
                    (e.known, e.last_present, e.last_absent),
                    slow[&e.element],
                    "{} in {h}",
                    e.element
                );
            }
        }
    }
}
