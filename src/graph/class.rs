//! Elle's names for cycles (`elle.txn/cycle-explainer`), and the small state
//! machine the search runs to find a cycle of exactly one name.
//!
//! Elle explains each step of a cycle with ONE relation: the first that its
//! chain of pair explainers can justify. The cycle's name then follows from
//! the step relations alone: the rw count and whether two rw steps are
//! adjacent (the last step counts as adjacent to the first) give the data
//! class; any real-time step appends `-realtime`, else any process step
//! appends `-process`.

use super::Rels;

/// The data-dependency part of a cycle's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BaseClass {
    /// Only ww steps.
    G0,
    /// No rw step, at least one wr step.
    G1c,
    /// Exactly one rw step.
    GSingleItem,
    /// Two or more rw steps, no two adjacent.
    GNonadjacentItem,
    /// Two or more rw steps, some two adjacent.
    G2Item,
    /// Predicate variants (need predicate rw edges, which no workload here
    /// produces yet): searched for, never found.
    GSingle,
    GNonadjacent,
    G2,
}

/// The order-relation suffix of a cycle's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// No process or real-time step.
    Plain,
    /// Some process step, no real-time step.
    Process,
    /// Some real-time step.
    Realtime,
}

/// A cycle anomaly class, e.g. `G-single-item-realtime`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CycleClass {
    pub base: BaseClass,
    pub variant: Variant,
}

const BASES: [(BaseClass, &str); 8] = [
    (BaseClass::G0, "G0"),
    (BaseClass::G1c, "G1c"),
    (BaseClass::GSingleItem, "G-single-item"),
    (BaseClass::GNonadjacentItem, "G-nonadjacent-item"),
    (BaseClass::G2Item, "G2-item"),
    (BaseClass::GSingle, "G-single"),
    (BaseClass::GNonadjacent, "G-nonadjacent"),
    (BaseClass::G2, "G2"),
];

const VARIANTS: [Variant; 3] = [Variant::Plain, Variant::Process, Variant::Realtime];

/// All 24 names, index = base * 3 + variant.
const NAMES: [&str; 24] = [
    "G0",
    "G0-process",
    "G0-realtime",
    "G1c",
    "G1c-process",
    "G1c-realtime",
    "G-single-item",
    "G-single-item-process",
    "G-single-item-realtime",
    "G-nonadjacent-item",
    "G-nonadjacent-item-process",
    "G-nonadjacent-item-realtime",
    "G2-item",
    "G2-item-process",
    "G2-item-realtime",
    "G-single",
    "G-single-process",
    "G-single-realtime",
    "G-nonadjacent",
    "G-nonadjacent-process",
    "G-nonadjacent-realtime",
    "G2",
    "G2-process",
    "G2-realtime",
];

impl CycleClass {
    pub const fn new(base: BaseClass, variant: Variant) -> Self {
        CycleClass { base, variant }
    }

    /// Elle's anomaly name.
    pub fn name(self) -> &'static str {
        NAMES[self.base as usize * 3 + self.variant as usize]
    }

    /// The class with Elle's name `name`, if it is a cycle class.
    pub fn from_name(name: &str) -> Option<Self> {
        let i = NAMES.iter().position(|n| *n == name)?;
        Some(CycleClass::new(BASES[i / 3].0, VARIANTS[i % 3]))
    }

    /// Every class, in name-table order.
    pub fn all() -> impl Iterator<Item = CycleClass> {
        BASES
            .iter()
            .flat_map(|&(b, _)| VARIANTS.iter().map(move |&v| CycleClass::new(b, v)))
    }

    /// Whether only predicate relations (absent from our graphs) can make a
    /// cycle of this class.
    pub fn needs_predicates(self) -> bool {
        matches!(
            self.base,
            BaseClass::GSingle | BaseClass::GNonadjacent | BaseClass::G2
        )
    }

    /// The step relations a cycle of this class may use.
    pub(crate) fn allowed(self) -> Rels {
        let data = match self.base {
            BaseClass::G0 => Rels::WW,
            BaseClass::G1c => Rels::WW | Rels::WR,
            _ => Rels::WW | Rels::WR | Rels::RW,
        };
        match self.variant {
            Variant::Plain => data,
            Variant::Process => data | Rels::PROCESS,
            Variant::Realtime => data | Rels::PROCESS | Rels::REALTIME,
        }
    }

    /// The step relations every cycle of this class contains.
    pub(crate) fn required(self) -> Vec<Rels> {
        let mut r = vec![match self.base {
            BaseClass::G0 => Rels::WW,
            BaseClass::G1c => Rels::WR,
            _ => Rels::RW,
        }];
        match self.variant {
            Variant::Plain => {}
            Variant::Process => r.push(Rels::PROCESS),
            Variant::Realtime => r.push(Rels::REALTIME),
        }
        r
    }

    /// No cycle of this class has fewer steps.
    pub(crate) fn min_len(self) -> usize {
        match (self.base, self.variant) {
            (BaseClass::GNonadjacentItem, _) => 4,
            (BaseClass::G2Item, Variant::Plain) => 2,
            (BaseClass::G2Item, _) => 3,
            _ => 2,
        }
    }
}

impl std::fmt::Display for CycleClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The priority in which a workload's explainers justify an edge, which
/// decides the one relation each cycle step is given.
///
/// Elle combines explainers in a fixed order and takes the first that
/// explains a pair: list-append tries ww, wr, rw; rw-register tries wr, then
/// ww, then rw; the process or real-time explainer comes after the data
/// ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExplainOrder {
    /// For each 5-bit relation set, its explained relation's bit index
    /// (0 = ww .. 4 = realtime), or 255 for the empty set.
    table: [u8; 32],
    order: [Rels; 5],
}

impl ExplainOrder {
    /// `elle.list-append`: ww, wr, rw, then process, realtime.
    pub const LIST_APPEND: ExplainOrder =
        ExplainOrder::build([Rels::WW, Rels::WR, Rels::RW, Rels::PROCESS, Rels::REALTIME]);
    /// `elle.rw-register`: wr, ww, rw, then process, realtime.
    pub const RW_REGISTER: ExplainOrder =
        ExplainOrder::build([Rels::WR, Rels::WW, Rels::RW, Rels::PROCESS, Rels::REALTIME]);

    /// An order from a permutation of the five relations; `None` if `order`
    /// is not one.
    pub fn new(order: [Rels; 5]) -> Option<Self> {
        let mut seen = 0u8;
        for r in order {
            if r.0.count_ones() != 1 || r.0 & !Rels::ANY.0 != 0 || seen & r.0 != 0 {
                return None;
            }
            seen |= r.0;
        }
        Some(Self::build(order))
    }

    const fn build(order: [Rels; 5]) -> Self {
        let mut table = [255u8; 32];
        let mut set: usize = 1;
        while set < 32 {
            let mut k = 0;
            while k < 5 {
                if set as u8 & order[k].0 != 0 {
                    table[set] = order[k].0.trailing_zeros() as u8;
                    break;
                }
                k += 1;
            }
            set += 1;
        }
        ExplainOrder { table, order }
    }

    /// The relations in priority order.
    pub fn order(&self) -> [Rels; 5] {
        self.order
    }

    /// The one relation an edge carrying `r` is explained by (NONE if `r`
    /// is empty).
    pub fn explain(&self, r: Rels) -> Rels {
        match self.table[(r.0 & 31) as usize] {
            255 => Rels::NONE,
            b => Rels(1 << b),
        }
    }

    /// Bit index (0..5) of [`ExplainOrder::explain`], 255 for none.
    pub(crate) fn explain_index(&self, r: Rels) -> u8 {
        self.table[(r.0 & 31) as usize]
    }
}

impl Default for ExplainOrder {
    fn default() -> Self {
        ExplainOrder::LIST_APPEND
    }
}

/// Elle's name for a cycle whose steps carry `steps` (one relation each, in
/// order; the last step closes the cycle). A step carrying several bits
/// counts as its list-append explanation. `None` for a cycle Elle cannot
/// name (no data step at all).
pub fn classify(steps: &[Rels]) -> Option<CycleClass> {
    let one = |r: Rels| ExplainOrder::LIST_APPEND.explain(r);
    let count = |x: Rels| steps.iter().filter(|&&s| one(s) == x).count();
    let rw = count(Rels::RW);
    let n = steps.len();
    let adjacent = (0..n).any(|i| one(steps[i]) == Rels::RW && one(steps[(i + 1) % n]) == Rels::RW);
    let base = if rw == 1 {
        BaseClass::GSingleItem
    } else if rw > 1 {
        if adjacent {
            BaseClass::G2Item
        } else {
            BaseClass::GNonadjacentItem
        }
    } else if count(Rels::WR) > 0 {
        BaseClass::G1c
    } else if count(Rels::WW) > 0 {
        BaseClass::G0
    } else {
        return None;
    };
    let variant = if count(Rels::REALTIME) > 0 {
        Variant::Realtime
    } else if count(Rels::PROCESS) > 0 {
        Variant::Process
    } else {
        Variant::Plain
    };
    Some(CycleClass::new(base, variant))
}

// ---------------------------------------------------------------------------
// The search automaton.
//
// A path's state records what the class test needs about the steps so far.
// The search always starts a cycle with an "anchor" step (a relation every
// cycle of the class contains), so the first step is known and the
// wrap-around adjacency (last step next to first) can be decided at the end.

const RWC: u16 = 0b11; // rw steps so far, capped at 2
const FIRST_RW: u16 = 1 << 2;
const LAST_RW: u16 = 1 << 3;
const ADJ: u16 = 1 << 4; // two consecutive rw steps seen
const HAS_WR: u16 = 1 << 5;
const HAS_WW: u16 = 1 << 6;
const HAS_PROC: u16 = 1 << 7;
const HAS_RT: u16 = 1 << 8;

fn raw_step(st: u16, rel: u8, first: bool) -> u16 {
    let rw = rel == 2;
    let mut s = st;
    if rw {
        if first {
            s |= FIRST_RW;
        }
        if st & LAST_RW != 0 {
            s |= ADJ;
        }
        s = (s & !RWC) | ((st & RWC) + 1).min(2);
        s |= LAST_RW;
    } else {
        s &= !LAST_RW;
    }
    s | match rel {
        0 => HAS_WW,
        1 => HAS_WR,
        3 => HAS_PROC,
        4 => HAS_RT,
        _ => 0,
    }
}

fn accepts(class: CycleClass, s: u16) -> bool {
    let rwc = s & RWC;
    let adj = s & ADJ != 0 || (rwc >= 2 && s & FIRST_RW != 0 && s & LAST_RW != 0);
    let base = match class.base {
        BaseClass::G0 => rwc == 0 && s & HAS_WR == 0 && s & HAS_WW != 0,
        BaseClass::G1c => rwc == 0 && s & HAS_WR != 0,
        BaseClass::GSingleItem => rwc == 1,
        BaseClass::GNonadjacentItem => rwc >= 2 && !adj,
        BaseClass::G2Item => rwc >= 2 && adj,
        _ => false,
    };
    base && match class.variant {
        Variant::Plain => s & (HAS_PROC | HAS_RT) == 0,
        Variant::Process => s & HAS_PROC != 0 && s & HAS_RT == 0,
        Variant::Realtime => s & HAS_RT != 0,
    }
}

/// Drops what cannot matter for `class`, so equivalent paths share a state.
fn canon(class: CycleClass, s: u16) -> u16 {
    let mut keep = match class.base {
        BaseClass::G0 => HAS_WW,
        BaseClass::G1c => HAS_WR,
        BaseClass::GSingleItem => RWC,
        _ => RWC | FIRST_RW | LAST_RW | ADJ,
    };
    keep |= match class.variant {
        Variant::Plain => 0,
        Variant::Process => HAS_PROC,
        Variant::Realtime => HAS_RT,
    };
    let s = s & keep;
    if class.base == BaseClass::G2Item && s & ADJ != 0 {
        // Once two rw steps touch, nothing else about rw matters.
        return (s & !(RWC | FIRST_RW | LAST_RW)) | ADJ | 2;
    }
    s
}

pub(crate) const DEAD: u8 = u8::MAX;

/// The product automaton for one class and one anchor relation: dense
/// states, transitions on the five relations, accepting states. States
/// from which no accepting state is reachable are pruned (DEAD).
#[derive(Clone, Debug)]
pub(crate) struct Automaton {
    pub init: u8,
    /// `trans[s][rel]`, rel = bit index 0..5.
    pub trans: Vec<[u8; 5]>,
    pub accept: Vec<bool>,
}

impl Automaton {
    pub fn new(class: CycleClass, anchor: Rels) -> Automaton {
        let allowed = class.allowed();
        let a = anchor.0.trailing_zeros() as u8;
        let init = canon(class, raw_step(0, a, true));
        // Explore reachable canonical states.
        let mut states = vec![init];
        let mut edges: Vec<[u16; 5]> = Vec::new();
        let mut i = 0;
        while i < states.len() {
            let s = states[i];
            let mut row = [u16::MAX; 5];
            for (r, slot) in row.iter_mut().enumerate() {
                if allowed.intersects(Rels(1 << r)) {
                    let t = canon(class, raw_step(s, r as u8, false));
                    if !states.contains(&t) {
                        states.push(t);
                    }
                    *slot = t;
                }
            }
            edges.push(row);
            i += 1;
        }
        // Keep states that can still reach acceptance.
        let mut live: Vec<bool> = states.iter().map(|&s| accepts(class, s)).collect();
        loop {
            let mut changed = false;
            for k in 0..states.len() {
                if !live[k] {
                    let reaches = edges[k].iter().any(|&t| {
                        t != u16::MAX && live[states.iter().position(|&x| x == t).unwrap_or(0)]
                    });
                    if reaches {
                        live[k] = true;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let mut dense = vec![DEAD; states.len()];
        let mut next = 0u8;
        for k in 0..states.len() {
            if live[k] {
                dense[k] = next;
                next += 1;
            }
        }
        let idx = |t: u16| -> u8 {
            if t == u16::MAX {
                DEAD
            } else {
                dense[states.iter().position(|&x| x == t).unwrap_or(0)]
            }
        };
        let mut trans = vec![[DEAD; 5]; next as usize];
        let mut accept = vec![false; next as usize];
        for k in 0..states.len() {
            if dense[k] != DEAD {
                let d = dense[k] as usize;
                for r in 0..5 {
                    trans[d][r] = idx(edges[k][r]);
                }
                accept[d] = accepts(class, states[k]);
            }
        }
        Automaton {
            init: dense[0],
            trans,
            accept,
        }
    }

    pub fn states(&self) -> usize {
        self.trans.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WW: Rels = Rels::WW;
    const WR: Rels = Rels::WR;
    const RW: Rels = Rels::RW;
    const P: Rels = Rels::PROCESS;
    const RT: Rels = Rels::REALTIME;

    fn name(steps: &[Rels]) -> &'static str {
        classify(steps).map(|c| c.name()).unwrap_or("none")
    }

    #[test]
    fn names_round_trip() {
        assert_eq!(CycleClass::all().count(), 24);
        for c in CycleClass::all() {
            assert_eq!(CycleClass::from_name(c.name()), Some(c));
        }
        assert_eq!(CycleClass::from_name("G1a"), None);
    }

    #[test]
    fn classify_follows_elles_cycle_explainer() {
        assert_eq!(name(&[WW, WW]), "G0");
        assert_eq!(name(&[WW, WR]), "G1c");
        assert_eq!(name(&[RW, WW]), "G-single-item");
        assert_eq!(name(&[RW, WR, RW, WR]), "G-nonadjacent-item");
        // Adjacent rw steps make G2-item, not G-nonadjacent.
        assert_eq!(name(&[RW, RW, WR]), "G2-item");
        // The last step is adjacent to the first.
        assert_eq!(name(&[RW, WR, WW, RW]), "G2-item");
        assert_eq!(name(&[RW, RW]), "G2-item");
        assert_eq!(name(&[WW, P]), "G0-process");
        assert_eq!(name(&[WR, P, RT]), "G1c-realtime");
        assert_eq!(name(&[RW, WR, RW, P]), "G-nonadjacent-item-process");
        assert_eq!(name(&[P, RT]), "none");
        // A step carrying ww|rw is explained as ww.
        assert_eq!(name(&[WW | RW, WW]), "G0");
    }

    #[test]
    fn explain_orders_differ_between_workloads() {
        assert_eq!(ExplainOrder::LIST_APPEND.explain(WW | WR), WW);
        assert_eq!(ExplainOrder::RW_REGISTER.explain(WW | WR), WR);
        assert_eq!(ExplainOrder::LIST_APPEND.explain(P | RT), P);
        assert_eq!(ExplainOrder::LIST_APPEND.explain(Rels::NONE), Rels::NONE);
        assert!(ExplainOrder::new([WW, WW, RW, P, RT]).is_none());
        let o = ExplainOrder::new([RT, P, RW, WR, WW]).unwrap();
        assert_eq!(o.explain(Rels::ANY), RT);
    }

    /// Runs the automaton over `steps` (first = anchor); true if accepted.
    fn run(class: CycleClass, steps: &[Rels]) -> bool {
        let a = Automaton::new(class, steps[0]);
        let mut s = a.init;
        for r in &steps[1..] {
            if s == DEAD {
                return false;
            }
            s = a.trans[s as usize][r.0.trailing_zeros() as usize];
        }
        s != DEAD && a.accept[s as usize]
    }

    #[test]
    fn automaton_agrees_with_classify_on_all_short_step_sequences() {
        let rels = Rels::ALL;
        for len in 1..=6u32 {
            for code in 0..5usize.pow(len) {
                let mut c = code;
                let steps: Vec<Rels> = (0..len)
                    .map(|_| {
                        let r = rels[c % 5];
                        c /= 5;
                        r
                    })
                    .collect();
                let named = classify(&steps);
                for class in CycleClass::all().filter(|c| !c.needs_predicates()) {
                    // Only anchors the class requires are ever used.
                    if !class.required().contains(&steps[0]) {
                        continue;
                    }
                    let ok = steps.iter().all(|s| class.allowed().contains(*s));
                    assert_eq!(
                        run(class, &steps),
                        ok && named == Some(class),
                        "{class} {steps:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn automata_stay_small() {
        for class in CycleClass::all().filter(|c| !c.needs_predicates()) {
            for anchor in class.required() {
                let a = Automaton::new(class, anchor);
                assert!(a.states() <= 16, "{class}: {}", a.states());
                assert_ne!(a.init, DEAD);
            }
        }
    }
}
