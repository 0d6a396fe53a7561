//! The dependency graph: compact (u32 transaction ids, relation bits per
//! edge), built once, then searched. Knows nothing about lists or registers.
//!
//! OWNER: graph helper. Public API the rest of the crate relies on:
//! - [`Rels`]: relation bit set (WW, WR, RW, PROCESS, REALTIME).
//! - [`GraphBuilder`]: `add(a, b, rels)`, then `build()` → [`DepGraph`]
//!   (parallel edges merged by OR-ing their bits; self-loops kept out).
//! - `DepGraph::out(v)` → iterator of `(to, Rels)`.

/// A set of dependency relations, one bit each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rels(pub u8);

impl Rels {
    pub const NONE: Rels = Rels(0);
    /// Write-write: b overwrote (appended after) a.
    pub const WW: Rels = Rels(1);
    /// Write-read: b read what a wrote.
    pub const WR: Rels = Rels(2);
    /// Read-write (anti-dependency): a read a version that b overwrote.
    pub const RW: Rels = Rels(4);
    /// Same process, a completed before b was invoked.
    pub const PROCESS: Rels = Rels(8);
    /// a completed before b was invoked (any processes).
    pub const REALTIME: Rels = Rels(16);

    pub fn contains(self, o: Rels) -> bool {
        self.0 & o.0 == o.0
    }
    pub fn intersects(self, o: Rels) -> bool {
        self.0 & o.0 != 0
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn union(self, o: Rels) -> Rels {
        Rels(self.0 | o.0)
    }
    pub fn intersect(self, o: Rels) -> Rels {
        Rels(self.0 & o.0)
    }
    /// The name Elle gives a single relation.
    pub fn name(self) -> &'static str {
        match self {
            Rels::WW => "ww",
            Rels::WR => "wr",
            Rels::RW => "rw",
            Rels::PROCESS => "process",
            Rels::REALTIME => "realtime",
            _ => "mixed",
        }
    }
}

impl std::ops::BitOr for Rels {
    type Output = Rels;
    fn bitor(self, o: Rels) -> Rels {
        self.union(o)
    }
}
