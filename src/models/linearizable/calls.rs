//! Knossos's preprocessing of a single-object history: invocations paired
//! with their completions by process, `:fail`ed calls dropped (they never
//! happened), `:ok` calls taking the completion's value (a read invoked with
//! `nil` learns its value there), and crashed calls (`:info`, or never
//! completed) kept with the invocation's value and no return: they may take
//! effect at any point after their invocation, or never.

use super::spec::{Action, Object, Values};
use crate::history::error::ReadError;
use crate::history::raw::OpType;
use crate::history::Datum;
use crate::models::{short, Op, Ops};

/// One call of the object.
#[derive(Clone, Debug)]
pub struct Call {
    /// What it does.
    pub action: Action,
    /// Position of its invocation in [`Ops::ops`].
    pub invoke: usize,
    /// Position of its `:ok` completion; `None` when it crashed.
    pub complete: Option<usize>,
}

/// A point of the history: a call begins or (`:ok`) returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The call's invocation.
    Call(u32),
    /// The call's `:ok` completion.
    Return(u32),
}

/// The calls of a history and their events in history order.
#[derive(Debug)]
pub struct Calls {
    /// The object the history is of.
    pub object: Object,
    /// Register values by id.
    pub values: Values,
    /// Calls, numbered in invocation order.
    pub calls: Vec<Call>,
    /// Invocations and `:ok` returns, in history order (crashed calls have
    /// no return here).
    pub events: Vec<Event>,
}

impl Calls {
    /// The search's input for the history cut after `events[..len]`: those
    /// events, then a return "at infinity" for every call invoked there that
    /// has not returned by then, which the search may leave unlinearized.
    /// Such calls that are reads are left out: optional and without effect,
    /// they can never matter. Returns the events and how many are finite.
    pub fn timeline(&self, len: usize) -> (Vec<Event>, usize) {
        let mut returned = vec![false; self.calls.len()];
        for e in &self.events[..len] {
            if let Event::Return(c) = e {
                returned[*c as usize] = true;
            }
        }
        let open_read = |c: u32| {
            !returned[c as usize] && matches!(self.calls[c as usize].action, Action::Read(_))
        };
        let mut out: Vec<Event> = self.events[..len]
            .iter()
            .copied()
            .filter(|e| !matches!(e, Event::Call(c) if open_read(*c)))
            .collect();
        let finite = out.len();
        let pending: Vec<Event> = out
            .iter()
            .filter_map(|e| match e {
                Event::Call(c) if !returned[*c as usize] => Some(Event::Return(*c)),
                _ => None,
            })
            .collect();
        out.extend(pending);
        (out, finite)
    }
}

/// Pairs and normalizes the ops of `ops` for `object`; input errors for
/// what Knossos refuses (a process invoking while its call is open, a
/// completion without an invocation, an `:f` the object has no meaning for,
/// a CAS value that is not `[old new]`).
pub fn calls(ops: &Ops, object: Object) -> Result<Calls, ReadError> {
    let mut values = Values::new();
    // Per process: the open invocation's position.
    let mut open: rustc_hash::FxHashMap<Option<i64>, usize> = Default::default();
    // Per op position: its call once kept (invocations only).
    let mut call_of: rustc_hash::FxHashMap<usize, u32> = Default::default();
    let mut calls: Vec<Call> = Vec::new();
    let mut events = Vec::new();
    let process = |op: &Op| op.process.map_or("nil".to_string(), |p| p.to_string());
    // Calls are created at invocation with the invocation's value; an :ok
    // completion replaces it, a :fail removes the call (marked here).
    let mut failed: Vec<bool> = Vec::new();
    let mut errors: Vec<Option<ReadError>> = Vec::new();
    for (i, op) in ops.ops.iter().enumerate() {
        match op.kind {
            OpType::Invoke => {
                if let Some(&j) = open.get(&op.process) {
                    return Err(ops.error(
                        op,
                        format!(
                            "process {} invoked again while its call at line {} is still open",
                            process(op),
                            ops.ops[j].line
                        ),
                    ));
                }
                open.insert(op.process, i);
                let c = calls.len() as u32;
                // An :f or value the object has no meaning for is an error
                // only if the call did not fail (a failed call never ran).
                let (a, e) = match action(ops, op, op, object, &mut values) {
                    Ok(a) => (a, None),
                    Err(e) => (Action::Read(None), Some(e)),
                };
                calls.push(Call {
                    action: a,
                    invoke: i,
                    complete: None,
                });
                errors.push(e);
                failed.push(false);
                call_of.insert(i, c);
                events.push(Event::Call(c));
            }
            OpType::Ok | OpType::Fail => {
                let j = open.remove(&op.process).ok_or_else(|| {
                    ops.error(
                        op,
                        format!("process {} completed a call it never invoked", process(op)),
                    )
                })?;
                let c = call_of[&j];
                if op.kind == OpType::Fail {
                    failed[c as usize] = true;
                } else {
                    let invoke = &ops.ops[j];
                    errors[c as usize].take();
                    calls[c as usize].action = action(ops, invoke, op, object, &mut values)?;
                    calls[c as usize].complete = Some(i);
                    events.push(Event::Return(c));
                }
            }
            OpType::Info => {
                // Crashed: the call stays open forever. An :info with no
                // invocation (a client's own note) has nothing to check.
                open.remove(&op.process);
            }
        }
    }
    if let Some(e) = (0..calls.len()).find_map(|c| (!failed[c]).then(|| errors[c].take()).flatten())
    {
        return Err(e);
    }
    // Drop failed calls and renumber the rest in invocation order.
    let mut new_id = vec![u32::MAX; calls.len()];
    let mut kept = Vec::with_capacity(calls.len());
    for (c, call) in calls.into_iter().enumerate() {
        if !failed[c] {
            new_id[c] = kept.len() as u32;
            kept.push(call);
        }
    }
    let events = events
        .into_iter()
        .filter_map(|e| match e {
            Event::Call(c) if !failed[c as usize] => Some(Event::Call(new_id[c as usize])),
            Event::Return(c) if !failed[c as usize] => Some(Event::Return(new_id[c as usize])),
            _ => None,
        })
        .collect();
    Ok(Calls {
        object,
        values,
        calls: kept,
        events,
    })
}

/// The action of the call invoked by `invoke` with its value taken from
/// `valued` (the invocation itself, or its `:ok` completion).
fn action(
    ops: &Ops,
    invoke: &Op,
    valued: &Op,
    object: Object,
    values: &mut Values,
) -> Result<Action, ReadError> {
    let f = invoke.f.name();
    Ok(match (object, f) {
        (Object::CasRegister, "read") => Action::Read(match &valued.value {
            Datum::Nil => None,
            v => Some(values.id(v)),
        }),
        (Object::CasRegister, "write") => Action::Write(values.id(&valued.value)),
        (Object::CasRegister, "cas") => match &valued.value {
            Datum::Vector(xs) | Datum::List(xs) if xs.len() == 2 => {
                Action::Cas(values.id(&xs[0]), values.id(&xs[1]))
            }
            other => {
                return Err(ops.error(
                    valued,
                    format!("expected a cas value [old new], got {}", short(other)),
                ))
            }
        },
        (Object::Mutex, "acquire") => Action::Acquire,
        (Object::Mutex, "release") => Action::Release,
        (Object::CasRegister, _) => {
            return Err(ops.error(
                invoke,
                format!("expected :f to be read, write or cas (cas-register), got {f}"),
            ))
        }
        (Object::Mutex, _) => {
            return Err(ops.error(
                invoke,
                format!("expected :f to be acquire or release (mutex), got {f}"),
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::tests::ops;

    #[test]
    fn pairs_fills_values_and_drops_failures() {
        let o = ops("
{:type :invoke, :f :read, :value nil, :process 0}
{:type :invoke, :f :cas, :value [1 2], :process 1}
{:type :fail, :f :cas, :value [1 2], :process 1}
{:type :ok, :f :read, :value 3, :process 0}
{:type :invoke, :f :write, :value 4, :process 1}
{:type :info, :f :write, :value 4, :process 1}");
        let c = calls(&o, Object::CasRegister).unwrap();
        assert_eq!(c.calls.len(), 2);
        let three = c
            .values
            .data
            .iter()
            .position(|d| *d == Datum::Int(3))
            .unwrap() as u32;
        assert_eq!(c.calls[0].action, Action::Read(Some(three)));
        assert_eq!(c.calls[0].complete, Some(3));
        assert_eq!(c.calls[1].complete, None, "info: crashed");
        assert_eq!(
            c.events,
            vec![Event::Call(0), Event::Return(0), Event::Call(1)]
        );
        let (t, finite) = c.timeline(3);
        assert_eq!(finite, 3);
        assert_eq!(t[3], Event::Return(1), "crashed call returns at infinity");
        // Cut before the read returned: the read is left out.
        let (t, finite) = c.timeline(1);
        assert_eq!((t, finite), (vec![], 0));
    }

    #[test]
    fn refuses_what_knossos_refuses() {
        let err = |text: &str, object| calls(&ops(text), object).unwrap_err().to_string();
        assert!(err(
            "{:type :invoke, :f :read, :process 0}\n{:type :invoke, :f :read, :process 0}",
            Object::CasRegister
        )
        .contains("invoked again while its call at line 1 is still open"));
        assert!(
            err("{:type :ok, :f :read, :process 0}", Object::CasRegister).contains("never invoked")
        );
        assert!(err(
            "{:type :invoke, :f :add, :value 1, :process 0}",
            Object::CasRegister
        )
        .contains("expected :f to be read, write or cas"));
        assert!(err("{:type :invoke, :f :read, :process 0}", Object::Mutex)
            .contains("acquire or release"));
        let e = err(
            "{:type :invoke, :f :cas, :value 3, :process 0}",
            Object::CasRegister,
        );
        assert!(
            e.starts_with("t.edn:1:33: expected a cas value [old new], got 3"),
            "{e}"
        );
    }
}
