//! Interning: each distinct datum gets a dense `u32` id, so that the hot
//! paths compare integers. Small integers, by far the commonest keys and
//! values, skip hashing a whole `Datum`.

use super::Datum;
use rustc_hash::FxHashMap;

#[derive(Clone, Debug, Default)]
/// Dense ids for keys or values: the checker compares `u32`s, and turns them back into data only to print.
pub struct Interner {
    data: Vec<Datum>,
    ints: FxHashMap<i64, u32>,
    others: FxHashMap<Datum, u32>,
}

impl Interner {
    /// An empty interner.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `d`, adding it if new.
    pub fn intern(&mut self, d: Datum) -> u32 {
        self.intern_ref(&d)
    }

    /// The id of `d`, adding a copy if new.
    pub fn intern_ref(&mut self, d: &Datum) -> u32 {
        if let Datum::Int(i) = d {
            return self.intern_int(*i);
        }
        if let Some(&id) = self.others.get(d) {
            return id;
        }
        let id = self.data.len() as u32;
        self.data.push(d.clone());
        self.others.insert(d.clone(), id);
        id
    }

    /// The id of the integer `i`, adding it if new.
    pub fn intern_int(&mut self, i: i64) -> u32 {
        let data = &mut self.data;
        *self.ints.entry(i).or_insert_with(|| {
            data.push(Datum::Int(i));
            (data.len() - 1) as u32
        })
    }

    /// The id of `d` if it was interned.
    pub fn get(&self, d: &Datum) -> Option<u32> {
        match d {
            Datum::Int(i) => self.ints.get(i).copied(),
            _ => self.others.get(d).copied(),
        }
    }

    /// The datum with id `id` (panics on an id this interner did not give).
    pub fn datum(&self, id: u32) -> &Datum {
        &self.data[id as usize]
    }

    /// How many distinct data were interned.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// No datum interned yet.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_data_share_an_id_and_distinct_data_do_not() {
        let mut i = Interner::new();
        let a = i.intern(Datum::Keyword("x".into()));
        let b = i.intern_int(1);
        assert_eq!(i.intern(Datum::Keyword("x".into())), a);
        assert_eq!(i.intern(Datum::Int(1)), b);
        assert_ne!(i.intern(Datum::Str("x".into())), a);
        assert_eq!(i.datum(b), &Datum::Int(1));
        assert_eq!(i.len(), 3);
    }
}
