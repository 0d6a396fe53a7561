//! elle-cli's `cas-register` and `mutex` models: is a history of one object
//! linearizable, as Knossos decides it (elle-cli runs Knossos's competition
//! of its `linear` and `wgl` analyses on the whole history, no independent
//! keys)? [`calls`] pairs and normalizes the ops, [`search`] decides by
//! just-in-time linearization, and when the answer is no, the shortest
//! non-linearizable prefix names the op that could not be placed, with the
//! states the object could be in just before it returned.

pub mod calls;
pub mod keys;
pub mod search;
pub mod spec;
pub mod svg;
mod sweep;

use super::{datum_json, op_json, op_text, valid_json, Ops};
use crate::history::error::ReadError;
use crate::model::Validity;
use calls::{Calls, Event};
use search::{Budget, Ended};
use serde_json::{json, Value};
pub use spec::Object;
use spec::{refusal, state_text, Action, INITIAL};

/// Bounds of the search.
#[derive(Clone, Debug)]
pub struct LinOptions {
    /// Time limit in milliseconds for the whole check (none: no limit).
    pub time_limit_ms: Option<u64>,
    /// Largest memo of configurations, in bytes.
    pub max_memo_bytes: usize,
}

impl Default for LinOptions {
    fn default() -> Self {
        LinOptions {
            time_limit_ms: None,
            max_memo_bytes: 1 << 30,
        }
    }
}

/// Configurations kept for the report of a non-linearizable history.
const MAX_CONFIGS: usize = 16;

/// One way the object could be just before the unplaceable call returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The object's state.
    pub state: u32,
    /// The call linearized last.
    pub last: Option<u32>,
    /// Calls invoked by then and not linearized (they may still be).
    pub pending: Vec<u32>,
}

/// Why a history is not linearizable.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The `:ok` call that cannot be placed: the history up to its return is
    /// the shortest prefix that is not linearizable.
    pub call: u32,
    /// How many `:ok` calls returned before it (the history up to the last
    /// of them is linearizable).
    pub ok_before: usize,
    /// Position in the ops of the last `:ok` completion before its return.
    pub previous_ok: Option<usize>,
    /// Configurations of the linearizable prefix just before its return, at
    /// most `MAX_CONFIGS` (16).
    pub configs: Vec<Config>,
    /// Whether there were more configurations than those.
    pub more_configs: bool,
}

/// The verdict.
#[derive(Clone, Debug)]
pub enum Verdict {
    /// Linearizable; the object's state after one linearization.
    Linearizable {
        /// That state.
        state: u32,
    },
    /// Not linearizable; `None` when the budget ran out while narrowing
    /// down the op (the verdict itself is certain).
    Not(Option<Failure>),
    /// The search ran out of budget before deciding.
    Unknown {
        /// Which bound.
        cause: String,
    },
}

/// The result of checking one history.
#[derive(Debug)]
pub struct LinResult {
    /// The calls checked.
    pub calls: Calls,
    /// The verdict.
    pub verdict: Verdict,
}

/// Checks that the history in `ops` is a linearizable history of `object`.
pub fn check(ops: &Ops, object: Object, options: &LinOptions) -> Result<LinResult, ReadError> {
    let calls = calls::calls(ops, object)?;
    let mut budget = Budget::new(options.time_limit_ms, options.max_memo_bytes / 8);
    let verdict = decide(&calls, &mut budget);
    Ok(LinResult { calls, verdict })
}

fn decide(calls: &Calls, budget: &mut Budget) -> Verdict {
    let actions: Vec<Action> = calls.calls.iter().map(|c| c.action).collect();
    let (events, finite) = calls.timeline(calls.events.len());
    let mut end = None;
    let blocked_at = match search::search(&actions, &events, finite, budget, |f| {
        end = Some(f.state);
        true
    }) {
        Ended::OutOfBudget => {
            return Verdict::Unknown {
                cause: budget.spent.clone().unwrap_or_default(),
            }
        }
        Ended::Stopped => {
            return Verdict::Linearizable {
                state: end.unwrap_or(INITIAL),
            }
        }
        Ended::Exhausted { blocked_at } => blocked_at,
    };
    // Not linearizable. The search got no configuration past the return of
    // `call`, and some up to it: the history is linearizable up to just
    // before that return (the longest linearizable prefix), and not with it.
    let rets: Vec<usize> = (0..calls.events.len())
        .filter(|&i| matches!(calls.events[i], Event::Return(_)))
        .collect();
    let Some(call) = blocked_at else {
        return Verdict::Not(None);
    };
    let Some(hi) = rets
        .iter()
        .position(|&i| calls.events[i] == Event::Return(call))
        .map(|p| p + 1)
    else {
        return Verdict::Not(None);
    };
    let previous_ok = (hi >= 2).then(|| {
        let Event::Return(c) = calls.events[rets[hi - 2]] else {
            unreachable!("rets holds returns")
        };
        calls.calls[c as usize].complete.unwrap_or_default()
    });
    // The configurations just before that return.
    let len = rets[hi - 1];
    let (events, finite) = calls.timeline(len);
    let invoked: Vec<u32> = events[..finite]
        .iter()
        .filter_map(|e| match e {
            Event::Call(c) => Some(*c),
            _ => None,
        })
        .collect();
    let mut configs = Vec::new();
    let mut more = false;
    let ended = search::search(&actions, &events, finite, budget, |f| {
        if configs.len() == MAX_CONFIGS {
            more = true;
            return true;
        }
        let pending = invoked
            .iter()
            .copied()
            .filter(|&c| f.bits[c as usize / 64] & (1 << (c % 64)) == 0)
            .collect();
        configs.push(Config {
            state: f.state,
            last: f.last,
            pending,
        });
        false
    });
    if ended == Ended::OutOfBudget {
        more = true;
    }
    Verdict::Not(Some(Failure {
        call,
        ok_before: hi - 1,
        previous_ok,
        configs,
        more_configs: more,
    }))
}

impl LinResult {
    /// The verdict as Jepsen's `:valid?`.
    pub fn valid(&self) -> Validity {
        match self.verdict {
            Verdict::Linearizable { .. } => Validity::True,
            Verdict::Not(_) => Validity::False,
            Verdict::Unknown { .. } => Validity::Unknown,
        }
    }

    /// The op that shows a call: its `:ok` completion (which holds the value
    /// it was checked with), or the invocation of a crashed call.
    pub fn op_of(&self, call: u32) -> usize {
        let c = &self.calls.calls[call as usize];
        c.complete.unwrap_or(c.invoke)
    }

    fn model_json(&self, state: u32) -> Value {
        match self.calls.object {
            Object::CasRegister => {
                json!({"value": datum_json(&self.calls.values.data[state as usize])})
            }
            Object::Mutex => json!({"locked?": state == 1}),
        }
    }

    /// Knossos's result map: `valid?`; when invalid `op`, `previous-ok`,
    /// `last-op`, `configs` and `final-paths` (each path the configuration's
    /// last op and state, then the op that cannot follow: the shortest of
    /// Knossos's paths); when unknown `cause`.
    pub fn to_json(&self, ops: &Ops) -> Value {
        let op = |c: u32| op_json(&ops.ops[self.op_of(c)]);
        let opt = |c: Option<u32>| c.map_or(Value::Null, op);
        match &self.verdict {
            Verdict::Linearizable { state } => {
                json!({"valid?": true, "model": self.model_json(*state)})
            }
            Verdict::Unknown { cause } => {
                json!({"valid?": valid_json(self.valid()), "cause": cause})
            }
            Verdict::Not(None) => json!({
                "valid?": false,
                "cause": "the budget ran out while finding the op that cannot be linearized",
            }),
            Verdict::Not(Some(f)) => {
                let action = self.calls.calls[f.call as usize].action;
                let last = f
                    .configs
                    .iter()
                    .filter_map(|c| c.last)
                    .max_by_key(|&c| self.op_of(c));
                let configs: Vec<Value> = f
                    .configs
                    .iter()
                    .map(|c| {
                        json!({
                            "model": self.model_json(c.state),
                            "last-op": opt(c.last),
                            "pending": c.pending.iter().map(|&p| op(p)).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                let mut paths: Vec<Value> = Vec::new();
                for c in &f.configs {
                    let path = json!([
                        {"op": opt(c.last), "model": self.model_json(c.state)},
                        {"op": op(f.call), "model": {"msg": refusal(self.calls.object, &self.calls.values, c.state, action)}},
                    ]);
                    if !paths.contains(&path) {
                        paths.push(path);
                    }
                }
                json!({
                    "valid?": false,
                    "op": op(f.call),
                    "previous-ok": f.previous_ok.map_or(Value::Null, |p| op_json(&ops.ops[p])),
                    "last-op": opt(last),
                    "configs": configs,
                    "final-paths": paths,
                })
            }
        }
    }

    /// A readable account of the verdict.
    pub fn explain(&self, ops: &Ops) -> String {
        let name = match self.calls.object {
            Object::CasRegister => "cas-register",
            Object::Mutex => "mutex",
        };
        let oks = self
            .calls
            .calls
            .iter()
            .filter(|c| c.complete.is_some())
            .count();
        let crashed = self.calls.calls.len() - oks;
        let mut s =
            format!("{name}: {oks} ok calls, {crashed} crashed (:info or never completed)\n");
        let state = |st: u32| state_text(self.calls.object, &self.calls.values, st);
        match &self.verdict {
            Verdict::Linearizable { state: st } => {
                s += &format!(
                    "  linearizable; one linearization ends in state {}\n",
                    state(*st)
                );
            }
            Verdict::Unknown { cause } => {
                s += &format!("  unknown: the search hit its {cause} before deciding\n");
            }
            Verdict::Not(None) => {
                s += "  not linearizable; the budget ran out while finding the op that cannot be placed\n";
            }
            Verdict::Not(Some(f)) => {
                let call = &self.calls.calls[f.call as usize];
                match f.previous_ok {
                    Some(p) => {
                        s += &format!(
                            "  the history is linearizable up to {}: the first {} ok calls\n",
                            op_text(&ops.ops[p]),
                            f.ok_before
                        )
                    }
                    None => s += "  no prefix with an ok call is linearizable\n",
                }
                s += &format!(
                    "  cannot be placed: {}, invoked at line {}\n",
                    op_text(&ops.ops[self.op_of(f.call)]),
                    ops.ops[call.invoke].line
                );
                s += &format!(
                    "  just before it returned, {} could be in {} configuration{}{}:\n",
                    name,
                    f.configs.len(),
                    if f.configs.len() == 1 { "" } else { "s" },
                    if f.more_configs { " (and more)" } else { "" }
                );
                for c in &f.configs {
                    let pending: Vec<String> = c
                        .pending
                        .iter()
                        .take(8)
                        .map(|&p| format!("op {}", ops.ops[self.op_of(p)].index))
                        .collect();
                    s += &format!(
                        "    {}{}: {}; pending: {}{}\n",
                        state(c.state),
                        c.last
                            .map(|l| format!(" after op {}", ops.ops[self.op_of(l)].index))
                            .unwrap_or_default(),
                        refusal(self.calls.object, &self.calls.values, c.state, call.action),
                        if pending.is_empty() {
                            "none".into()
                        } else {
                            pending.join(", ")
                        },
                        if c.pending.len() > 8 { ", ..." } else { "" }
                    );
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests;
