//! The lattice as data: every table here copies a fact from Elle's
//! `elle.consistency-model` and `elle.txn` (commit ccdee6f), with the same
//! names. Code in the sibling modules only walks these tables.
//!
//! Graph tables are `(vertex, successors)` rows; an edge `a → b` means
//! "a implies b" (for anomalies: seeing `a` means `b` happened too; for
//! models: a history satisfying `a` also satisfies `b`).

/// A table of implication rows: `(vertex, vertices it implies)`.
pub type Implications = &'static [(&'static str, &'static [&'static str])];

/// Anomaly → anomalies it implies (Elle's `implied-anomalies`).
pub const IMPLIED_ANOMALIES: Implications = &[
    // G0 is G1c with no wr edge (Adya); every cycle is trivially a process one.
    ("G0", &["G1c", "G0-process"]),
    // Processes are single-threaded, so process order is real-time order.
    ("G0-process", &["G1c-process", "G0-realtime"]),
    ("G0-realtime", &["G1c-realtime"]),
    // G1 is the union of G1a, G1b and G1c (Adya).
    ("G1a", &["G1"]),
    ("G1b", &["G1"]),
    ("G1c", &["G1", "G1c-process"]),
    ("G1c-process", &["G1c-realtime", "G1-process"]),
    ("G1c-realtime", &["G1-realtime"]),
    ("G1", &["G1-process"]),
    ("G1-process", &["G1-realtime"]),
    // G-single-item is G-single (and G-nonadjacent-item) restricted to items.
    (
        "G-single-item",
        &["G-single", "G-single-item-process", "G-nonadjacent-item"],
    ),
    (
        "G-single-item-process",
        &[
            "G-single-process",
            "G-single-item-realtime",
            "G-nonadjacent-item-process",
        ],
    ),
    (
        "G-single-item-realtime",
        &["G-single-realtime", "G-nonadjacent-item-realtime"],
    ),
    // G-single is G-nonadjacent with one rw edge; Adya: it is also GSIb.
    ("G-single", &["G-nonadjacent", "GSIb", "G-single-process"]),
    (
        "G-single-process",
        &["G-nonadjacent-process", "G-single-realtime"],
    ),
    ("G-single-realtime", &["G-nonadjacent-realtime"]),
    // G-nonadjacent-item only uses item rw edges, so it is G2-item too.
    (
        "G-nonadjacent-item",
        &["G-nonadjacent", "G2-item", "G-nonadjacent-item-process"],
    ),
    (
        "G-nonadjacent-item-process",
        &[
            "G-nonadjacent-process",
            "G2-item-process",
            "G-nonadjacent-item-realtime",
        ],
    ),
    (
        "G-nonadjacent-item-realtime",
        &["G2-item-realtime", "G-nonadjacent-realtime"],
    ),
    // G-nonadjacent is G2 whose rw edges never touch (Adya).
    ("G-nonadjacent", &["G2", "G-nonadjacent-process"]),
    (
        "G-nonadjacent-process",
        &["G2-process", "G-nonadjacent-realtime"],
    ),
    ("G-nonadjacent-realtime", &["G2-realtime"]),
    ("G2", &["G2-process"]),
    ("G2-item", &["G2", "G2-item-process"]),
    ("G2-item-process", &["G2-process", "G2-item-realtime"]),
    ("G2-item-realtime", &["G2-realtime"]),
    ("G2-process", &["G2-realtime"]),
    // SI phenomena (Adya).
    ("GSIa", &["GSI"]),
    ("GSIb", &["GSI"]),
    // Two committed reads that no single version order explains: a dirty read.
    ("incompatible-order", &["G1a"]),
    // Reading a write from later in the same transaction is a trivial G1c.
    ("future-read", &["G1c"]),
    // A write building on an aborted write is treated like an aborted read.
    ("dirty-update", &["G1a"]),
    // Lost update is a single-key write skew (Bailis), hence G2-item.
    ("lost-update", &["write-skew", "G2-item"]),
    // Not Elle's (OneLite's): a committed read of a value no transaction in
    // the history wrote. Its writer, if any, is outside the committed
    // history, just as an aborted one is: a dirty read at the least.
    ("garbage-read", &["G1a"]),
    ("write-skew", &["G2"]),
];

/// Anomalies isolde reports that Elle does not (their rows above say why);
/// everything else in these tables is Elle's.
pub const NOT_ELLE_ANOMALIES: &[&str] = &["garbage-read"];

/// Extra "is usually worse than" edges, used only to order anomalies by
/// severity (Elle's `anomaly-severity-graph`), never for implication.
pub const ANOMALY_SEVERITY: Implications = &[
    ("G0", &["G1c"]),
    ("G0-process", &["G1c-process"]),
    ("G0-realtime", &["G1c-realtime"]),
    ("G1c", &["G-single", "G2-item"]),
    ("G1c-process", &["G-single-process", "G2-item-process"]),
    ("G1c-realtime", &["G-single-realtime", "G2-item-realtime"]),
    // Process anomalies are milder than pure data ones; real-time milder still.
    ("G2", &["G0-process"]),
    ("G2-process", &["G0-realtime"]),
];

/// Alias → canonical model name (Elle's `canonical-model-names`).
pub const CANONICAL_MODEL_NAMES: &[(&str, &str)] = &[
    ("consistent-view", "PL-2+"),
    ("conflict-serializable", "PL-3"),
    ("cursor-stability", "PL-CS"),
    ("forward-consistent-view", "PL-FCV"),
    ("monotonic-snapshot-read", "PL-MSR"),
    ("monotonic-view", "PL-2L"),
    ("read-committed", "PL-2"),
    ("read-uncommitted", "PL-1"),
    ("repeatable-read", "PL-2.99"),
    // "serializable" means conflict serializable.
    ("serializable", "PL-3"),
    ("snapshot-isolation", "PL-SI"),
    ("strict-serializable", "PL-SS"),
    // Elle treats strong and strict serializable as the same model.
    ("strong-serializable", "PL-SS"),
    ("update-serializable", "PL-3U"),
    ("strong-session-read-uncommitted", "strong-session-PL-1"),
    ("strong-session-read-committed", "strong-session-PL-2"),
    ("strong-read-uncommitted", "strong-PL-1"),
    ("strong-read-committed", "strong-PL-2"),
];

/// Canonical → friendly model name (Elle's `friendly-model-names`). Elle
/// inverts the alias map; where two aliases share a canonical name, the
/// winner is `serializable` for PL-3 (explicit in Elle) and
/// `strong-serializable` for PL-SS (Elle's hash-map order, as its README
/// output shows).
pub const FRIENDLY_MODEL_NAMES: &[(&str, &str)] = &[
    ("PL-2+", "consistent-view"),
    ("PL-3", "serializable"),
    ("PL-CS", "cursor-stability"),
    ("PL-FCV", "forward-consistent-view"),
    ("PL-MSR", "monotonic-snapshot-read"),
    ("PL-2L", "monotonic-view"),
    ("PL-2", "read-committed"),
    ("PL-1", "read-uncommitted"),
    ("PL-2.99", "repeatable-read"),
    ("PL-SI", "snapshot-isolation"),
    ("PL-SS", "strong-serializable"),
    ("PL-3U", "update-serializable"),
    ("strong-session-PL-1", "strong-session-read-uncommitted"),
    ("strong-session-PL-2", "strong-session-read-committed"),
    ("strong-PL-1", "strong-read-uncommitted"),
    ("strong-PL-2", "strong-read-committed"),
];

/// Model → weaker models it implies (Elle's `models`), written with the
/// names Elle uses; vertices are canonicalized when the index is built.
pub const MODEL_IMPLICATIONS: Implications = &[
    ("causal-cerone", &["read-atomic"]),
    ("consistent-view", &["cursor-stability", "monotonic-view"]),
    ("conflict-serializable", &["view-serializable"]),
    ("cursor-stability", &["read-committed", "PL-2"]),
    ("forward-consistent-view", &["consistent-view"]),
    ("PL-2", &["PL-1"]),
    ("PL-3", &["repeatable-read", "update-serializable"]),
    ("update-serializable", &["forward-consistent-view"]),
    ("monotonic-atomic-view", &["read-committed"]),
    ("monotonic-view", &["PL-2"]),
    ("monotonic-snapshot-read", &["PL-2"]),
    (
        "parallel-snapshot-isolation",
        &["causal-cerone", "update-atomic"],
    ),
    ("prefix", &["causal-cerone"]),
    ("read-atomic", &["monotonic-atomic-view"]),
    ("read-committed", &["read-uncommitted"]),
    (
        "repeatable-read",
        &["cursor-stability", "monotonic-atomic-view"],
    ),
    ("update-atomic", &["read-atomic"]),
    (
        "serializable",
        &["repeatable-read", "snapshot-isolation", "view-serializable"],
    ),
    ("session-serializable", &["1SR"]),
    (
        "snapshot-isolation",
        &[
            "forward-consistent-view",
            "monotonic-atomic-view",
            "monotonic-snapshot-read",
            "parallel-snapshot-isolation",
            "prefix",
        ],
    ),
    (
        "strict-serializable",
        &[
            "PL-3",
            "serializable",
            "linearizable",
            "snapshot-isolation",
            "strong-snapshot-isolation",
            "strong-session-serializable",
        ],
    ),
    // Not in the literature: process / real-time strengthenings of PL-1, PL-2.
    ("strong-session-PL-1", &["PL-1"]),
    ("strong-session-PL-2", &["PL-2", "strong-session-PL-1"]),
    ("strong-PL-1", &["strong-session-PL-1"]),
    ("strong-PL-2", &["strong-session-PL-2", "strong-PL-1"]),
    (
        "strong-session-serializable",
        &["serializable", "strong-session-snapshot-isolation"],
    ),
    (
        "strong-session-snapshot-isolation",
        &["snapshot-isolation", "strong-session-PL-2"],
    ),
    ("strong-serializable", &["session-serializable"]),
    (
        "strong-snapshot-isolation",
        &["strong-session-snapshot-isolation", "strong-PL-2"],
    ),
    // Single-object models.
    ("linearizable", &["sequential"]),
    ("sequential", &["causal"]),
    ("causal", &["writes-follow-reads", "PRAM"]),
    (
        "PRAM",
        &["monotonic-reads", "monotonic-writes", "read-your-writes"],
    ),
];

/// Model → anomalies it prohibits beyond those of the models it implies
/// (Elle's `direct-proscribed-anomalies`); models are canonicalized when the
/// index is built, so `serializable` and `PL-3` rows merge.
pub const DIRECT_PROHIBITIONS: Implications = &[
    ("causal-cerone", &["internal", "G1a"]),
    ("cursor-stability", &["G1", "G-cursor", "lost-update"]),
    ("monotonic-view", &["G1", "G-monotonic"]),
    ("monotonic-snapshot-read", &["G1", "G-MSR"]),
    ("consistent-view", &["G1", "G-single"]),
    ("forward-consistent-view", &["G1", "G-SIb"]),
    ("parallel-snapshot-isolation", &["internal", "G1a"]),
    (
        "PL-3",
        &["G1", "G2", "predicate-read-miss", "PL-3-cycle-exists"],
    ),
    ("PL-2", &["G1", "PL-2-cycle-exists"]),
    (
        "PL-1",
        &[
            "G0",
            "duplicate-elements",
            "cyclic-versions",
            "PL-1-cycle-exists",
            // Not Elle's: even read uncommitted reads only values some
            // transaction wrote, so a value nobody wrote rules out every
            // level from PL-1 up (and, through G1a, the models that
            // prohibit dirty reads without implying PL-1).
            "garbage-read",
        ],
    ),
    ("prefix", &["internal", "G1a"]),
    ("serializable", &["internal"]),
    // Generalized SI forbids any cycle whose rw edges are all nonadjacent.
    (
        "snapshot-isolation",
        &[
            "internal",
            "G1",
            "G-SI",
            "G-nonadjacent",
            "PL-SI-cycle-exists",
        ],
    ),
    ("read-atomic", &["internal", "G1a", "future-read"]),
    (
        "repeatable-read",
        &["G1", "G2-item", "PL-2.99-cycle-exists", "lost-update"],
    ),
    ("update-atomic", &["lost-update"]),
    (
        "strict-serializable",
        &["G1", "G1c-realtime", "G2-realtime", "PL-SS-cycle-exists"],
    ),
    (
        "strong-session-PL-1",
        &["strong-session-PL-1-cycle-exists", "G0-process"],
    ),
    (
        "strong-session-PL-2",
        &["strong-session-PL-2-cycle-exists", "G1c-process"],
    ),
    ("strong-PL-1", &["strong-PL-1-cycle-exists", "G0-realtime"]),
    ("strong-PL-2", &["strong-PL-2-cycle-exists", "G1c-realtime"]),
    (
        "strong-session-snapshot-isolation",
        &[
            "internal",
            "G1-process",
            "G-nonadjacent-process",
            "strong-session-snapshot-isolation-cycle-exists",
        ],
    ),
    (
        "strong-snapshot-isolation",
        &[
            "internal",
            "G1-realtime",
            "G-nonadjacent-realtime",
            "strong-snapshot-isolation-cycle-exists",
        ],
    ),
    (
        "strong-session-serializable",
        &[
            "G1-process",
            "G2-process",
            "strong-session-serializable-cycle-exists",
        ],
    ),
    ("update-serializable", &["G1", "G-update"]),
];

/// Anomalies that make a verdict `unknown` rather than `false`
/// (Elle's `unknown-anomaly-types`): they mean the search was incomplete.
pub const UNKNOWN_ANOMALY_TYPES: &[&str] = &["cycle-search-timeout", "empty-transaction-graph"];

/// The cycle classes searched for (Elle's `base-cycle-anomaly-specs`); each
/// also has a `-process` and a `-realtime` variant.
pub const BASE_CYCLE_TYPES: &[&str] = &[
    "G0",
    "G1c",
    "G-single-item",
    "G-single",
    "G-nonadjacent-item",
    "G-nonadjacent",
    "G2-item",
    "G2",
];

/// One relation as Elle names it in a subgraph spec. The `p` variants are
/// predicate dependencies, which list-append and rw-register never produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rel {
    /// Write-write (b overwrote a).
    Ww,
    /// Predicate write-write.
    Wwp,
    /// Write-read (b read a's write).
    Wr,
    /// Predicate write-read.
    Wrp,
    /// Read-write anti-dependency (b overwrote what a read).
    Rw,
    /// Predicate anti-dependency.
    Rwp,
    /// Same process, a before b.
    Process,
    /// a completed before b began.
    Realtime,
}

/// A subgraph that must be acyclic for a model to hold (Elle's `:subgraph`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subgraph {
    /// Edges carrying any of these relations.
    Union(&'static [Rel]),
    /// `A ∪ (A ; B)`: A's edges plus every A-step followed by one B-step.
    Extension(&'static [Rel], &'static [Rel]),
}

/// A model and the subgraph whose cycles refute it (Elle's
/// `cycle-exists-specs`), in Elle's order, weakest first. The anomaly type
/// is `<model>-cycle-exists`.
pub const CYCLE_EXISTS_SPECS: &[(&str, Subgraph)] = {
    use Rel::*;
    use Subgraph::*;
    &[
        // No write cycles, predicates included (Adya p. 47).
        ("PL-1", Union(&[Ww, Wwp])),
        // No circular information flow.
        ("PL-2", Union(&[Ww, Wwp, Wr, Wrp])),
        // SI: cycles may hop over single rw edges.
        ("PL-SI", Extension(&[Ww, Wwp, Wr, Wrp], &[Rw, Rwp])),
        // Repeatable read: only predicate rw edges may close a cycle.
        ("PL-2.99", Union(&[Ww, Wwp, Wr, Wrp, Rw])),
        ("PL-3", Union(&[Ww, Wwp, Wr, Wrp, Rw, Rwp])),
        ("strong-session-PL-1", Union(&[Ww, Wwp, Process])),
        ("strong-session-PL-2", Union(&[Ww, Wwp, Wr, Wrp, Process])),
        (
            "strong-session-snapshot-isolation",
            Extension(&[Ww, Wwp, Wr, Wrp, Process], &[Rw, Rwp]),
        ),
        (
            "strong-session-serializable",
            Union(&[Ww, Wwp, Wr, Wrp, Rw, Rwp, Process]),
        ),
        ("strong-PL-1", Union(&[Ww, Wwp, Realtime])),
        ("strong-PL-2", Union(&[Ww, Wwp, Wr, Wrp, Realtime])),
        (
            "strong-snapshot-isolation",
            Extension(&[Ww, Wwp, Wr, Wrp, Realtime], &[Rw, Rwp]),
        ),
        ("PL-SS", Union(&[Ww, Wwp, Wr, Wrp, Rw, Rwp, Realtime])),
    ]
};
