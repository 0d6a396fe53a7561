//! An EDN-like value: what keys, values and op fields are before interning.

use std::fmt;

/// Keys and values are opaque: two data are the same iff they are equal here.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Datum {
    /// `nil`.
    Nil,
    /// `true` / `false`.
    Bool(bool),
    /// An integer that fits 64 bits.
    Int(i64),
    /// An integer beyond 64 bits, kept as its decimal text (sign included).
    BigInt(String),
    /// A float, kept as its text so that equality is exact and hashing works.
    Float(String),
    /// A string.
    Str(String),
    /// A keyword, without the leading colon (`:x` is `Keyword("x")`).
    Keyword(String),
    /// A symbol, e.g. `txn`.
    Symbol(String),
    /// A character, e.g. `\a`.
    Char(char),
    /// `[...]`.
    Vector(Vec<Datum>),
    /// `(...)`.
    List(Vec<Datum>),
    /// `#{...}`, in written order.
    Set(Vec<Datum>),
    /// `{...}`, in written order.
    Map(Vec<(Datum, Datum)>),
}

impl fmt::Display for Datum {
    /// Prints the datum as EDN.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn seq(f: &mut fmt::Formatter<'_>, open: &str, xs: &[Datum], close: &str) -> fmt::Result {
            f.write_str(open)?;
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    f.write_str(" ")?;
                }
                write!(f, "{x}")?;
            }
            f.write_str(close)
        }
        match self {
            Datum::Nil => f.write_str("nil"),
            Datum::Bool(b) => write!(f, "{b}"),
            Datum::Int(i) => write!(f, "{i}"),
            Datum::BigInt(s) | Datum::Float(s) | Datum::Symbol(s) => f.write_str(s),
            Datum::Str(s) => write!(f, "{s:?}"),
            Datum::Keyword(k) => write!(f, ":{k}"),
            Datum::Char(c) => write!(f, "\\{c}"),
            Datum::Vector(xs) => seq(f, "[", xs, "]"),
            Datum::List(xs) => seq(f, "(", xs, ")"),
            Datum::Set(xs) => seq(f, "#{", xs, "}"),
            Datum::Map(kvs) => {
                f.write_str("{")?;
                for (i, (k, v)) in kvs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k} {v}")?;
                }
                f.write_str("}")
            }
        }
    }
}
