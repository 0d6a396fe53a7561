//! Properties of `isolde schedule` on small random schedules, each checked
//! against a brute-force reading of the textbook definition.

use isolde::schedule::{analyze, parse_schedules, Op, OpKind, Schedule, ScheduleReport};
use proptest::prelude::*;

/// One transaction before interleaving: reads/writes (is_write, item) and
/// how it ends (0 commit, 1 abort, 2 never).
#[derive(Clone, Debug)]
struct Txn {
    ops: Vec<(bool, u8)>,
    end: u8,
}

fn txn(items: u8, no_blind: bool) -> impl Strategy<Value = Txn> {
    (
        prop::collection::vec((any::<bool>(), 0..items), 1..=4),
        prop::sample::select(vec![0u8, 0, 0, 1, 2]),
    )
        .prop_map(move |(ops, end)| {
            let ops = if no_blind {
                // Every write preceded by a read of its item.
                ops.into_iter()
                    .flat_map(|(w, x)| {
                        if w {
                            vec![(false, x), (true, x)]
                        } else {
                            vec![(false, x)]
                        }
                    })
                    .collect()
            } else {
                ops
            };
            Txn { ops, end }
        })
}

/// Textbook tokens of transactions merged by `picks` (each pick chooses
/// which unfinished transaction moves next); `serial` concatenates instead.
fn tokens(txns: &[Txn], picks: &[u32], serial: bool) -> Vec<String> {
    let seqs: Vec<Vec<String>> = txns
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let n = i + 1;
            let mut v: Vec<String> = t
                .ops
                .iter()
                .map(|&(w, x)| format!("{}{n}(x{x})", if w { 'w' } else { 'r' }))
                .collect();
            match t.end {
                0 => v.push(format!("c{n}")),
                1 => v.push(format!("a{n}")),
                _ => {}
            }
            v
        })
        .collect();
    if serial {
        return seqs.concat();
    }
    let mut pos = vec![0usize; seqs.len()];
    let mut out = Vec::new();
    let mut k = 0;
    loop {
        let live: Vec<usize> = (0..seqs.len())
            .filter(|&i| pos[i] < seqs[i].len())
            .collect();
        if live.is_empty() {
            return out;
        }
        let i = live[picks[k % picks.len()] as usize % live.len()];
        k += 1;
        out.push(seqs[i][pos[i]].clone());
        pos[i] += 1;
    }
}

fn schedule_of(tokens: &[String]) -> Schedule {
    let mut v = parse_schedules(&tokens.join(" ")).unwrap();
    assert_eq!(v.len(), 1);
    v.pop().unwrap()
}

fn schedules(no_blind: bool) -> impl Strategy<Value = Schedule> {
    (
        prop::collection::vec(txn(3, no_blind), 1..=5),
        prop::collection::vec(any::<u32>(), 1..40),
    )
        .prop_map(|(txns, picks)| schedule_of(&tokens(&txns, &picks, false)))
}

/// Transactions that aborted.
fn aborted(s: &Schedule) -> Vec<u32> {
    s.ops()
        .iter()
        .filter(|o| o.kind == OpKind::Abort)
        .map(|o| o.txn)
        .collect()
}

/// Reads and writes of transactions that did not abort, with their index.
fn projection(s: &Schedule) -> Vec<(usize, Op)> {
    let ab = aborted(s);
    s.ops()
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, o)| o.item.is_some() && !ab.contains(&o.txn))
        .collect()
}

fn conflict(a: &Op, b: &Op) -> bool {
    a.txn != b.txn && a.item == b.item && (a.kind == OpKind::Write || b.kind == OpKind::Write)
}

fn live_txns(s: &Schedule) -> Vec<u32> {
    let mut v: Vec<u32> = projection(s).iter().map(|(_, o)| o.txn).collect();
    let mut seen = Vec::new();
    v.retain(|t| {
        let new = !seen.contains(t);
        seen.push(*t);
        new
    });
    v
}

fn permutations(v: &[u32]) -> Vec<Vec<u32>> {
    if v.len() <= 1 {
        return vec![v.to_vec()];
    }
    let mut out = Vec::new();
    for i in 0..v.len() {
        let mut rest = v.to_vec();
        let x = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, x);
            out.push(p);
        }
    }
    out
}

/// Does `order` put the two sides of every conflict the schedule's way?
fn conflict_equivalent(s: &Schedule, order: &[u32]) -> bool {
    let p = projection(s);
    let pos = |t: u32| order.iter().position(|&x| x == t);
    for (i, (_, a)) in p.iter().enumerate() {
        for (_, b) in &p[i + 1..] {
            if conflict(a, b) && pos(a.txn) >= pos(b.txn) {
                return false;
            }
        }
    }
    true
}

/// Reads-from (read index → write index or None) and final writes
/// (item → write index) of a sequence of (index, op).
type View = (Vec<(usize, Option<usize>)>, Vec<(u32, usize)>);

fn view_of(seq: &[(usize, Op)]) -> View {
    let mut reads = Vec::new();
    let mut last: Vec<(u32, usize)> = Vec::new();
    for &(i, o) in seq {
        let x = o.item.unwrap();
        let cur = last.iter().find(|(y, _)| *y == x).map(|&(_, w)| w);
        if o.kind == OpKind::Read {
            reads.push((i, cur));
        } else {
            last.retain(|(y, _)| *y != x);
            last.push((x, i));
        }
    }
    reads.sort_unstable();
    last.sort_unstable();
    (reads, last)
}

fn view_equivalent(s: &Schedule, order: &[u32]) -> bool {
    let p = projection(s);
    let serial: Vec<(usize, Op)> = order
        .iter()
        .flat_map(|&t| p.iter().copied().filter(move |(_, o)| o.txn == t))
        .collect();
    view_of(&p) == view_of(&serial)
}

/// Where transaction `t` commits / aborts, if it does.
fn end_of(s: &Schedule, t: u32, kind: OpKind) -> Option<usize> {
    s.ops().iter().position(|o| o.txn == t && o.kind == kind)
}

/// (recoverable, ACA, strict) straight from BHG ch. 2: reads-from skips
/// writes whose transaction aborted before the read.
fn classes(s: &Schedule) -> (bool, bool, bool) {
    let ops = s.ops();
    let ended_before = |t: u32, k: usize| {
        ops[..k]
            .iter()
            .any(|o| o.txn == t && matches!(o.kind, OpKind::Commit | OpKind::Abort))
    };
    let aborted_before = |t: u32, k: usize| {
        ops[..k]
            .iter()
            .any(|o| o.txn == t && o.kind == OpKind::Abort)
    };
    let (mut rc, mut aca, mut st) = (true, true, true);
    for (k, o) in ops.iter().enumerate() {
        let Some(x) = o.item else { continue };
        for w in &ops[..k] {
            if w.kind == OpKind::Write
                && w.item == Some(x)
                && w.txn != o.txn
                && !ended_before(w.txn, k)
            {
                st = false;
            }
        }
        if o.kind != OpKind::Read {
            continue;
        }
        let src = ops[..k]
            .iter()
            .rev()
            .find(|w| w.kind == OpKind::Write && w.item == Some(x) && !aborted_before(w.txn, k));
        let Some(w) = src else { continue };
        if w.txn == o.txn {
            continue;
        }
        let cu = end_of(s, w.txn, OpKind::Commit);
        if cu.is_none_or(|c| c >= k) {
            aca = false;
        }
        if let Some(ct) = end_of(s, o.txn, OpKind::Commit) {
            if cu.is_none_or(|c| c >= ct) {
                rc = false;
            }
        }
    }
    (rc, aca, st)
}

fn check_report(s: &Schedule, r: &ScheduleReport) -> Result<(), TestCaseError> {
    let live = live_txns(s);
    let perms = permutations(&live);
    // Conflict serializability = some serial order is conflict equivalent.
    let csr = perms.iter().any(|p| conflict_equivalent(s, p));
    prop_assert_eq!(r.conflict_serializable, csr);
    if let Some(order) = &r.serial_order {
        let mut sorted = order.clone();
        sorted.sort_unstable();
        let mut want = live.clone();
        want.sort_unstable();
        // Transactions with only a commit have no reads or writes to order.
        let order: Vec<u32> = order.iter().copied().filter(|t| live.contains(t)).collect();
        prop_assert!(sorted.iter().all(|t| !aborted(s).contains(t)));
        prop_assert!(want.iter().all(|t| order.contains(t)));
        prop_assert!(
            conflict_equivalent(s, &order),
            "serial order {:?} breaks a conflict",
            order
        );
    }
    // The cycle is closed and made of real conflicts.
    if let Some(cycle) = &r.cycle {
        prop_assert!(!cycle.is_empty());
        for (i, e) in cycle.iter().enumerate() {
            prop_assert_eq!(e.to, cycle[(i + 1) % cycle.len()].from);
        }
    }
    // Every conflicting pair of the projection is an edge, and nothing else.
    let p = projection(s);
    let mut want: Vec<(u32, u32)> = Vec::new();
    for (i, (_, a)) in p.iter().enumerate() {
        for (_, b) in &p[i + 1..] {
            if conflict(a, b) && !want.contains(&(a.txn, b.txn)) {
                want.push((a.txn, b.txn));
            }
        }
    }
    want.sort_unstable();
    let mut listed: Vec<(u32, u32)> = r.edges.iter().map(|e| (e.from, e.to)).collect();
    listed.sort_unstable();
    prop_assert_eq!(listed, want);
    for e in r.edges.iter().chain(r.cycle.iter().flatten()) {
        for c in &e.conflicts {
            let (a, b) = (
                &s.ops()[c.first.step as usize - 1],
                &s.ops()[c.second.step as usize - 1],
            );
            prop_assert!(c.first.step < c.second.step && conflict(a, b));
            prop_assert_eq!((a.txn, b.txn), (e.from, e.to));
        }
    }
    // View serializability = some serial order is view equivalent.
    let vsr = perms.iter().any(|p| view_equivalent(s, p));
    prop_assert_eq!(r.view_serializable, Some(vsr), "{}", r.view_reason);
    if let Some(order) = &r.view_serial_order {
        let order: Vec<u32> = order.iter().copied().filter(|t| live.contains(t)).collect();
        prop_assert!(view_equivalent(s, &order));
    }
    prop_assert!(!r.conflict_serializable || r.view_serializable == Some(true));
    // Recoverability classes, and strict ⊂ ACA ⊂ recoverable.
    prop_assert_eq!(
        (r.recoverable, r.avoids_cascading_aborts, r.strict),
        classes(s)
    );
    prop_assert!(!r.strict || r.avoids_cascading_aborts);
    prop_assert!(!r.avoids_cascading_aborts || r.recoverable);
    // Shapes agree with the verdicts they imply.
    let has = |n: &str| r.shapes.iter().any(|x| x.name == n);
    prop_assert_eq!(has("dirty-read"), !r.avoids_cascading_aborts);
    prop_assert!(!has("dirty-write") || !r.strict);
    for n in ["lost-update", "non-repeatable-read", "write-skew"] {
        prop_assert!(
            !has(n) || !r.conflict_serializable,
            "{} in a serializable schedule",
            n
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn matches_brute_force(s in schedules(false)) {
        let r = analyze(&s);
        check_report(&s, &r).map_err(|e| TestCaseError::fail(format!("{e}\n{s}\n{r}")))?;
    }

    /// Without blind writes the view answer comes from a theorem, not the
    /// search: the brute force checks the theorem too.
    #[test]
    fn matches_brute_force_without_blind_writes(s in schedules(true)) {
        let r = analyze(&s);
        check_report(&s, &r).map_err(|e| TestCaseError::fail(format!("{e}\n{s}\n{r}")))?;
    }

    #[test]
    fn serial_schedules_are_conflict_serializable(
        txns in prop::collection::vec(txn(3, false), 1..=6),
    ) {
        let s = schedule_of(&tokens(&txns, &[0], true));
        let r = analyze(&s);
        prop_assert!(r.conflict_serializable, "{}", r);
        prop_assert_eq!(r.view_serializable, Some(true));
        // Each transaction ends before the next starts: strict, unless one
        // never ends.
        prop_assert!(r.strict || txns.iter().any(|t| t.end == 2));
    }
}
