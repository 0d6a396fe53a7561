//! The sequential objects Knossos's `cas-register` and `mutex` models
//! describe, as step functions over a small integer state: what a history
//! must be a linearization of.

use crate::history::Datum;

/// Which object the history is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Object {
    /// A register that starts `nil`: `:read`, `:write`, `:cas [old new]`.
    CasRegister,
    /// A lock that starts free: `:acquire`, `:release`.
    Mutex,
}

/// One call's effect, values interned ([`Values`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// A read; `None` when its value is `nil`, which Knossos accepts in any
    /// state (the value was never learned).
    Read(Option<u32>),
    /// A write of a value.
    Write(u32),
    /// Compare-and-set: from the first value to the second.
    Cas(u32, u32),
    /// Take the lock.
    Acquire,
    /// Give it back.
    Release,
}

/// Interned register values: id 0 is `nil`, the register's initial value.
#[derive(Debug, Default)]
pub struct Values {
    ids: rustc_hash::FxHashMap<Datum, u32>,
    /// Each id's value.
    pub data: Vec<Datum>,
}

impl Values {
    /// An empty table holding only `nil` (id 0).
    pub fn new() -> Values {
        let mut v = Values::default();
        v.id(&Datum::Nil);
        v
    }

    /// The id of `d`. Lists and vectors are the same value, as Clojure's
    /// `=` has them.
    pub fn id(&mut self, d: &Datum) -> u32 {
        let d = normal(d);
        if let Some(&i) = self.ids.get(&d) {
            return i;
        }
        let i = self.data.len() as u32;
        self.data.push(d.clone());
        self.ids.insert(d, i);
        i
    }
}

/// `d` with every list turned into a vector.
fn normal(d: &Datum) -> Datum {
    match d {
        Datum::List(xs) | Datum::Vector(xs) => Datum::Vector(xs.iter().map(normal).collect()),
        Datum::Set(xs) => Datum::Set(xs.iter().map(normal).collect()),
        Datum::Map(kvs) => Datum::Map(kvs.iter().map(|(k, v)| (normal(k), normal(v))).collect()),
        other => other.clone(),
    }
}

/// The initial state: `nil` (value id 0) or a free lock (0).
pub const INITIAL: u32 = 0;

/// The state after `action` in `state`, or `None` when the object could not
/// have done it there.
#[inline]
pub fn step(state: u32, action: Action) -> Option<u32> {
    match action {
        Action::Read(None) => Some(state),
        Action::Read(Some(v)) => (v == state).then_some(state),
        Action::Write(v) => Some(v),
        Action::Cas(from, to) => (from == state).then_some(to),
        Action::Acquire => (state == 0).then_some(1),
        Action::Release => (state == 1).then_some(0),
    }
}

/// Why `action` cannot happen in `state`, in Knossos's words.
pub fn refusal(object: Object, values: &Values, state: u32, action: Action) -> String {
    let v = |i: u32| values.data[i as usize].to_string();
    match (object, action) {
        (_, Action::Read(Some(r))) => format!("can't read {} from register {}", v(r), v(state)),
        (_, Action::Cas(from, to)) => {
            format!("can't CAS {} from {} to {}", v(state), v(from), v(to))
        }
        (_, Action::Acquire) => "already held".into(),
        (_, Action::Release) => "not held".into(),
        _ => "no refusal".into(),
    }
}

/// A state as Knossos prints its model: the register's value or the lock's.
pub fn state_text(object: Object, values: &Values, state: u32) -> String {
    match object {
        Object::CasRegister => values.data[state as usize].to_string(),
        Object::Mutex => if state == 1 { "locked" } else { "free" }.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_steps_follow_knossos() {
        let mut vals = Values::new();
        let (one, two) = (vals.id(&Datum::Int(1)), vals.id(&Datum::Int(2)));
        assert_eq!(step(INITIAL, Action::Read(None)), Some(INITIAL));
        assert_eq!(step(INITIAL, Action::Read(Some(one))), None);
        assert_eq!(step(INITIAL, Action::Write(one)), Some(one));
        assert_eq!(step(one, Action::Cas(one, two)), Some(two));
        assert_eq!(step(two, Action::Cas(one, two)), None);
        assert_eq!(step(one, Action::Read(Some(one))), Some(one));
        assert_eq!(
            refusal(Object::CasRegister, &vals, two, Action::Cas(one, two)),
            "can't CAS 2 from 1 to 2"
        );
        assert_eq!(
            refusal(Object::CasRegister, &vals, INITIAL, Action::Read(Some(one))),
            "can't read 1 from register nil"
        );
    }

    #[test]
    fn mutex_steps_follow_knossos() {
        assert_eq!(step(0, Action::Acquire), Some(1));
        assert_eq!(step(1, Action::Acquire), None);
        assert_eq!(step(1, Action::Release), Some(0));
        assert_eq!(step(0, Action::Release), None);
    }

    #[test]
    fn lists_and_vectors_are_one_value() {
        let mut vals = Values::new();
        let a = vals.id(&Datum::Vector(vec![Datum::Int(1)]));
        let b = vals.id(&Datum::List(vec![Datum::Int(1)]));
        assert_eq!(a, b);
        assert_eq!(vals.id(&Datum::Nil), 0);
    }
}
