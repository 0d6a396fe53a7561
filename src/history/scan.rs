//! The tokenizer every history format shares: EDN, and JSON as a dialect
//! of it (`Dialect::Json`); `edn.rs`, `json.rs` and `onelite.rs` only add
//! their own field conventions.
//!
//! The input is read in chunks from any [`Read`]; each top-level form is
//! scanned into a flat, reusable *tape* of nodes and handed out as soon as
//! its closing bracket is seen, so memory stays bounded by the largest op,
//! not the file. Ops may be one per line, several per line, span lines, or
//! sit inside one top-level vector or list. The common one-op-per-line shape
//! skips the tape altogether (`fast.rs`).
//!
//! Nesting is tracked on an explicit stack (never by recursion), and limited
//! to [`MAX_DEPTH`] levels so that every later recursive walk of a [`Datum`]
//! (drop, hash, print) is safe too.

use super::error::ReadError;
use super::raw::{OpBatch, RawValue};
use super::Datum;
use std::io::{self, Read};

mod fast;
pub(crate) mod lines;

/// Deepest nesting of collections accepted. Jepsen ops nest 4 or 5 deep.
pub const MAX_DEPTH: usize = 1000;

/// Bytes asked of the input per read.
const CHUNK: usize = 256 * 1024;

/// Which syntax the scanner accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    Edn,
    /// JSON: `"key": value` objects, arrays, `null`; no keywords, comments,
    /// `#` dispatch or character literals. Commas are treated as whitespace.
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Coll {
    Map,
    Vector,
    List,
    Set,
}

impl Coll {
    fn name(self) -> &'static str {
        match self {
            Coll::Map => "map",
            Coll::Vector => "vector",
            Coll::List => "list",
            Coll::Set => "set",
        }
    }

    fn closer(self) -> u8 {
        match self {
            Coll::Map | Coll::Set => b'}',
            Coll::Vector => b']',
            Coll::List => b')',
        }
    }
}

/// One node of the tape. Text payloads are `(start, len)` ranges of
/// [`Tape::text`]; a collection's children follow it, up to `end`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Atom {
    Nil,
    Bool(bool),
    Int(i64),
    Char(char),
    BigInt(u32, u32),
    Float(u32, u32),
    Str(u32, u32),
    Keyword(u32, u32),
    Symbol(u32, u32),
    Open { coll: Coll, end: u32, count: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Node {
    pub atom: Atom,
    pub line: u32,
    pub col: u32,
}

/// One top-level form, flattened. Reused from form to form.
#[derive(Default, Debug)]
pub(crate) struct Tape {
    pub nodes: Vec<Node>,
    pub text: Vec<u8>,
}

impl Tape {
    fn clear(&mut self) {
        self.nodes.clear();
        self.text.clear();
    }

    /// The text of a node's payload (validated as UTF-8 when scanned).
    pub fn text(&self, start: u32, len: u32) -> &str {
        let bytes = &self.text[start as usize..(start + len) as usize];
        std::str::from_utf8(bytes).unwrap_or("")
    }

    /// Index just past the subtree rooted at `i`.
    pub fn skip(&self, i: usize) -> usize {
        match self.nodes[i].atom {
            Atom::Open { end, .. } => end as usize,
            _ => i + 1,
        }
    }

    /// The children of the collection at `i` (empty for atoms).
    pub fn children(&self, i: usize) -> Children<'_> {
        let end = self.skip(i);
        Children {
            tape: self,
            next: i + 1,
            end,
        }
    }

    /// The keyword (EDN) or string (JSON) name at `i`, for matching field
    /// names and function names.
    pub fn name(&self, i: usize, dialect: Dialect) -> Option<&str> {
        match (self.nodes[i].atom, dialect) {
            (Atom::Keyword(s, l), Dialect::Edn) | (Atom::Str(s, l), Dialect::Json) => {
                Some(self.text(s, l))
            }
            _ => None,
        }
    }

    /// [`Tape::name`] as bytes: the hot paths match field names without
    /// re-checking UTF-8.
    #[inline]
    pub fn name_bytes(&self, i: usize, dialect: Dialect) -> Option<&[u8]> {
        match (self.nodes[i].atom, dialect) {
            (Atom::Keyword(s, l), Dialect::Edn) | (Atom::Str(s, l), Dialect::Json) => {
                Some(&self.text[s as usize..(s + l) as usize])
            }
            _ => None,
        }
    }

    fn atom_datum(&self, a: Atom) -> Datum {
        match a {
            Atom::Nil => Datum::Nil,
            Atom::Bool(b) => Datum::Bool(b),
            Atom::Int(i) => Datum::Int(i),
            Atom::Char(c) => Datum::Char(c),
            Atom::BigInt(s, l) => Datum::BigInt(self.text(s, l).to_string()),
            Atom::Float(s, l) => Datum::Float(self.text(s, l).to_string()),
            Atom::Str(s, l) => Datum::Str(self.text(s, l).to_string()),
            Atom::Keyword(s, l) => Datum::Keyword(self.text(s, l).to_string()),
            Atom::Symbol(s, l) => Datum::Symbol(self.text(s, l).to_string()),
            Atom::Open { coll, .. } => wrap(coll, Vec::new()),
        }
    }

    /// The subtree at `i` as a [`Datum`], built without recursion.
    pub fn datum(&self, i: usize) -> Datum {
        let Atom::Open { end, count, coll } = self.nodes[i].atom else {
            return self.atom_datum(self.nodes[i].atom);
        };
        let mut stack: Vec<(Coll, usize, Vec<Datum>)> =
            vec![(coll, end as usize, Vec::with_capacity(count as usize))];
        let mut j = i + 1;
        loop {
            while let Some(&(_, end, _)) = stack.last() {
                if j < end {
                    break;
                }
                let (coll, _, items) = stack.pop().expect("stack is not empty");
                let d = wrap(coll, items);
                match stack.last_mut() {
                    Some(parent) => parent.2.push(d),
                    None => return d,
                }
            }
            let top = stack.last_mut().expect("an open collection");
            match self.nodes[j].atom {
                Atom::Open { coll, end, count } => {
                    stack.push((coll, end as usize, Vec::with_capacity(count as usize)))
                }
                a => top.2.push(self.atom_datum(a)),
            }
            j += 1;
        }
    }

    /// The collection at `i` (with `count` children) as a list read.
    pub fn list(&self, i: usize, count: u32) -> RawValue {
        let items = &self.nodes[i + 1..self.skip(i)];
        if items.len() == count as usize {
            // No nested collections: maybe all integers.
            let ints: Option<Vec<i64>> = items
                .iter()
                .map(|n| match n.atom {
                    Atom::Int(x) => Some(x),
                    _ => None,
                })
                .collect();
            if let Some(xs) = ints {
                return RawValue::Ints(xs);
            }
        }
        RawValue::List(self.children(i).map(|e| self.datum(e)).collect())
    }

    /// A short EDN rendering of the subtree at `i`, for error messages.
    pub fn show(&self, i: usize) -> String {
        let s = self.datum(i).to_string();
        if s.chars().count() > 80 {
            let cut: String = s.chars().take(77).collect();
            format!("{cut}...")
        } else {
            s
        }
    }
}

fn wrap(coll: Coll, items: Vec<Datum>) -> Datum {
    match coll {
        Coll::Vector => Datum::Vector(items),
        Coll::List => Datum::List(items),
        Coll::Set => Datum::Set(items),
        Coll::Map => {
            let mut kvs = Vec::with_capacity(items.len() / 2);
            let mut it = items.into_iter();
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                kvs.push((k, v));
            }
            Datum::Map(kvs)
        }
    }
}

/// Iterator over the child subtrees of a collection node.
pub(crate) struct Children<'a> {
    tape: &'a Tape,
    next: usize,
    end: usize,
}

impl Iterator for Children<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        if self.next >= self.end {
            return None;
        }
        let i = self.next;
        self.next = self.tape.skip(i);
        Some(i)
    }
}

// Byte classes.
const WS: u8 = 1; // whitespace (and, in EDN, the comma)
const NL: u8 = 2; // newline
const TERM: u8 = 4; // ends a token

const fn classes(json: bool) -> [u8; 256] {
    let mut t = [0u8; 256];
    t[b' ' as usize] = WS | TERM;
    t[b'\t' as usize] = WS | TERM;
    t[b'\r' as usize] = WS | TERM;
    t[0x0b] = WS | TERM;
    t[0x0c] = WS | TERM;
    t[b',' as usize] = WS | TERM;
    t[b'\n' as usize] = NL | TERM;
    let delims = b"(){}[]\";\\";
    let mut i = 0;
    while i < delims.len() {
        t[delims[i] as usize] = TERM;
        i += 1;
    }
    if json {
        t[b':' as usize] = TERM;
    }
    t
}

/// Can `c` appear in an EDN symbol or keyword name? EDN's constituents are
/// letters, digits and `.*+!-_?$%&=<>:#'/`; the other printable ASCII bytes
/// (`@ ^ ~ \` |`) are Clojure reader macros or nothing, so a token holding
/// one is not EDN and must be refused rather than read as an opaque value.
/// Bytes past ASCII are left to the UTF-8 check.
pub(crate) fn is_name_byte(c: u8) -> bool {
    !matches!(c, b'@' | b'^' | b'~' | b'`' | b'|') && (c >= 0x80 || c > b' ')
}

static EDN_CLASS: [u8; 256] = classes(false);
static JSON_CLASS: [u8; 256] = classes(true);

enum FrameKind {
    Coll(Coll),
    /// `#_`: the next form is read and dropped; the tape is cut back here.
    Discard {
        nodes: usize,
        text: usize,
    },
}

struct Frame {
    kind: FrameKind,
    /// Tape index of the collection's `Open` node.
    node: usize,
    count: u32,
    /// JSON: the `:` after the current key was seen.
    colon: bool,
    line: u32,
    col: u32,
}

/// The top-level vector or list that holds the whole history, if any.
struct Seq {
    coll: Coll,
    line: u32,
    col: u32,
}

/// The chunked tokenizer. [`Scanner::next_form`] fills [`Scanner::tape`]
/// with the next top-level op map.
pub(crate) struct Scanner<R> {
    input: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
    /// Absolute offset of `buf[0]` in the input.
    base: u64,
    line: u32,
    /// Absolute offset of the first byte of the current line.
    line_start: u64,
    dialect: Dialect,
    class: &'static [u8; 256],
    pub file: String,
    pub tape: Tape,
    stack: Vec<Frame>,
    seq: Option<Seq>,
    started: bool,
}

type Res<T> = Result<T, ReadError>;

impl<R> Scanner<R> {
    /// Between top-level forms (no collection open): where the fast path
    /// may take over.
    pub(crate) fn between_forms(&self) -> bool {
        self.stack.is_empty()
    }
}

impl<R: Read> Scanner<R> {
    pub fn new(input: R, file: &str, dialect: Dialect) -> Self {
        Self::with_buffer(input, file, dialect, CHUNK)
    }

    /// [`Scanner::new`] with a first buffer of `cap` bytes (it grows for a
    /// longer token): a scanner over one short line need not allocate a
    /// whole chunk.
    pub(crate) fn with_buffer(input: R, file: &str, dialect: Dialect, cap: usize) -> Self {
        Scanner {
            input,
            buf: vec![0; cap.max(16)],
            pos: 0,
            end: 0,
            eof: false,
            base: 0,
            line: 1,
            line_start: 0,
            dialect,
            class: match dialect {
                Dialect::Edn => &EDN_CLASS,
                Dialect::Json => &JSON_CLASS,
            },
            file: file.to_string(),
            tape: Tape::default(),
            stack: Vec::new(),
            seq: None,
            started: false,
        }
    }

    /// The scanner for input that starts at the start of line `line` of a
    /// history, between top-level forms and past its first bytes (so no
    /// byte-order mark is looked for).
    pub(crate) fn resumed(mut self, line: u32) -> Self {
        self.line = line;
        self.started = true;
        self
    }

    fn err(&self, line: u32, col: u32, what: impl Into<String>) -> ReadError {
        ReadError::invalid(&self.file, line, col, what)
    }

    /// Current (line, column), 1-based.
    fn here(&self) -> (u32, u32) {
        (self.line, self.col_at(self.pos))
    }

    fn col_at(&self, i: usize) -> u32 {
        (self.base + i as u64 - self.line_start + 1) as u32
    }

    /// Moves the unconsumed bytes (from `pos`) to the front and reads more.
    /// Returns false at end of input.
    fn refill(&mut self) -> Res<bool> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.base += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.end == self.buf.len() {
            // One token is longer than the buffer: grow it.
            let n = self.buf.len() * 2;
            self.buf.resize(n, 0);
        }
        loop {
            match self.input.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(ReadError::io(&self.file, e)),
            }
        }
    }

    /// Makes at least `n` bytes available from `pos`, unless input ends.
    fn want(&mut self, n: usize) -> Res<()> {
        while self.end - self.pos < n && self.refill()? {}
        Ok(())
    }

    /// Skips whitespace, commas and (EDN) comments; stops at a byte or at
    /// the end of input. The common case (a few blanks, no comment, no
    /// chunk boundary) stays inline.
    #[inline(always)]
    fn skip_ws(&mut self) -> Res<()> {
        while self.pos < self.end {
            let c = self.buf[self.pos];
            let k = self.class[c as usize];
            if k & WS != 0 {
                self.pos += 1;
            } else if k & NL != 0 {
                self.pos += 1;
                self.line += 1;
                self.line_start = self.base + self.pos as u64;
            } else if c == b';' || c == b'#' || !self.started {
                break;
            } else {
                return Ok(());
            }
        }
        self.skip_ws_slow()
    }

    fn skip_ws_slow(&mut self) -> Res<()> {
        if !self.started {
            self.started = true;
            self.want(3)?;
            if self.buf[self.pos..self.end].starts_with(b"\xEF\xBB\xBF") {
                self.pos += 3;
                self.line_start = 3;
            }
        }
        loop {
            while self.pos < self.end {
                let c = self.buf[self.pos];
                let k = self.class[c as usize];
                if k & WS != 0 {
                    self.pos += 1;
                } else if k & NL != 0 {
                    self.pos += 1;
                    self.line += 1;
                    self.line_start = self.base + self.pos as u64;
                } else if c == b';' && self.dialect == Dialect::Edn {
                    self.skip_line()?;
                } else if c == b'#' && self.dialect == Dialect::Edn {
                    self.want(2)?;
                    if self.buf.get(self.pos + 1) == Some(&b'!') && self.pos + 1 < self.end {
                        self.skip_line()?;
                    } else {
                        return Ok(());
                    }
                } else {
                    return Ok(());
                }
            }
            if !self.refill()? {
                return Ok(());
            }
        }
    }

    /// Skips to the end of the line (the newline itself is left).
    fn skip_line(&mut self) -> Res<()> {
        loop {
            while self.pos < self.end {
                if self.buf[self.pos] == b'\n' {
                    return Ok(());
                }
                self.pos += 1;
            }
            if !self.refill()? {
                return Ok(());
            }
        }
    }

    /// Index just past the token that starts at `pos` (its first `skip`
    /// bytes are part of it whatever they are). May refill, so indices into
    /// `buf` taken before are stale; the token starts at `pos` afterwards.
    fn token_end(&mut self, skip: usize) -> Res<usize> {
        self.want(skip)?;
        let mut i = (self.pos + skip).min(self.end);
        loop {
            while i < self.end && self.class[self.buf[i] as usize] & TERM == 0 {
                i += 1;
            }
            if i < self.end || self.eof {
                return Ok(i);
            }
            let rel = i - self.pos;
            self.refill()?;
            i = self.pos + rel;
        }
    }

    fn push(&mut self, atom: Atom, line: u32, col: u32) {
        self.tape.nodes.push(Node { atom, line, col });
    }

    fn push_text(&mut self, bytes_from: usize, bytes_to: usize) -> (u32, u32) {
        let start = self.tape.text.len();
        self.tape
            .text
            .extend_from_slice(&self.buf[bytes_from..bytes_to]);
        (start as u32, (bytes_to - bytes_from) as u32)
    }

    /// Reads the next top-level op map into the tape. Returns its position,
    /// or `None` at the end of input.
    pub fn next_form(&mut self) -> Res<Option<(u32, u32)>> {
        self.tape.clear();
        self.stack.clear();
        let json = self.dialect == Dialect::Json;
        let mut start = (0, 0);
        loop {
            self.skip_ws()?;
            if self.pos == self.end {
                return self.at_eof();
            }
            let b = self.buf[self.pos];
            let (line, col) = self.here();
            if self.stack.is_empty() {
                match b {
                    b'{' => start = (line, col),
                    b'#' if !json => start = (line, col),
                    b'[' | b'(' if self.seq.is_none() && !(json && b == b'(') => {
                        let coll = if b == b'[' { Coll::Vector } else { Coll::List };
                        self.seq = Some(Seq { coll, line, col });
                        self.pos += 1;
                        continue;
                    }
                    b']' | b')' if self.seq.as_ref().map(|s| s.coll.closer()) == Some(b) => {
                        self.seq = None;
                        self.pos += 1;
                        continue;
                    }
                    _ => {
                        let got = self.describe_here()?;
                        return Err(self.err(
                            line,
                            col,
                            format!("expected an op map {{...}}, got {got}"),
                        ));
                    }
                }
            }
            match b {
                b'{' => self.open(Coll::Map, 1, line, col)?,
                b'[' => self.open(Coll::Vector, 1, line, col)?,
                b'(' if !json => self.open(Coll::List, 1, line, col)?,
                b'}' | b']' | b')' => {
                    self.close(b, line, col)?;
                    if self.form_done() {
                        return Ok(Some(start));
                    }
                }
                b'0'..=b'9' if self.int_fast(line, col) => {
                    if self.form_done() {
                        return Ok(Some(start));
                    }
                }
                b'"' => {
                    self.before_form(true, line, col)?;
                    self.string(line, col)?;
                    if self.form_done() {
                        return Ok(Some(start));
                    }
                }
                b':' if json => {
                    match self.stack.last_mut() {
                        Some(f)
                            if matches!(f.kind, FrameKind::Coll(Coll::Map))
                                && f.count % 2 == 1
                                && !f.colon =>
                        {
                            f.colon = true
                        }
                        _ => return Err(self.err(line, col, "unexpected `:`")),
                    }
                    self.pos += 1;
                }
                b'#' if !json => {
                    if self.dispatch(line, col)? && self.form_done() {
                        return Ok(Some(start));
                    }
                }
                _ => {
                    self.before_form(false, line, col)?;
                    self.atom(b, line, col)?;
                    if self.form_done() {
                        return Ok(Some(start));
                    }
                }
            }
        }
    }

    /// Reads the next op into `batch` through the fast path (see `fast.rs`)
    /// when it has the common shape and lies wholly in the buffer;
    /// otherwise consumes nothing and returns false.
    pub(crate) fn simple_op(&mut self, batch: &mut OpBatch) -> Res<bool> {
        /// Bytes wanted in the buffer before trying: more than any common op.
        const WINDOW: usize = 64 * 1024;
        self.skip_ws()?;
        if self.end - self.pos < WINDOW && !self.eof {
            self.refill()?;
            self.skip_ws()?;
        }
        if self.pos >= self.end || self.buf[self.pos] != b'{' {
            return Ok(false);
        }
        let here = self.here();
        let b = &self.buf[self.pos..self.end];
        let Some(used) = fast::op(b, self.dialect, self.class, batch, here) else {
            return Ok(false);
        };
        self.pos += used;
        Ok(true)
    }

    fn at_eof(&mut self) -> Res<Option<(u32, u32)>> {
        if let Some(f) = self.stack.last() {
            let what = match f.kind {
                FrameKind::Coll(c) => format!(
                    "unterminated {}: no `{}` before the end of input",
                    c.name(),
                    c.closer() as char
                ),
                FrameKind::Discard { .. } => {
                    "expected a form after `#_`, got the end of input".into()
                }
            };
            return Err(self.err(f.line, f.col, what));
        }
        if let Some(s) = &self.seq {
            return Err(self.err(
                s.line,
                s.col,
                format!(
                    "unterminated {} of ops: no `{}` before the end of input",
                    s.coll.name(),
                    s.coll.closer() as char
                ),
            ));
        }
        Ok(None)
    }

    /// A short description of the token at `pos`, for "expected X, got Y".
    fn describe_here(&mut self) -> Res<String> {
        let b = self.buf[self.pos];
        if self.class[b as usize] & TERM != 0 || b == b'#' || b == b':' {
            return Ok(format!("`{}`", b as char));
        }
        let e = self.token_end(1)?;
        let n = (e - self.pos).min(40);
        Ok(format!(
            "`{}`",
            String::from_utf8_lossy(&self.buf[self.pos..self.pos + n])
        ))
    }

    /// JSON: a map key must be a string, and a value must follow a `:`.
    fn before_form(&self, is_string: bool, line: u32, col: u32) -> Res<()> {
        if self.dialect != Dialect::Json {
            return Ok(());
        }
        if let Some(f) = self.stack.last() {
            if let FrameKind::Coll(Coll::Map) = f.kind {
                if f.count % 2 == 0 && !is_string {
                    return Err(self.err(line, col, "expected a map key (a string)"));
                }
                if f.count % 2 == 1 && !f.colon {
                    return Err(self.err(line, col, "expected `:` after the map key"));
                }
            }
        }
        Ok(())
    }

    fn open(&mut self, coll: Coll, width: usize, line: u32, col: u32) -> Res<()> {
        self.before_form(false, line, col)?;
        if self.stack.len() >= MAX_DEPTH {
            return Err(self.err(line, col, format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        let node = self.tape.nodes.len();
        self.push(
            Atom::Open {
                coll,
                end: 0,
                count: 0,
            },
            line,
            col,
        );
        self.stack.push(Frame {
            kind: FrameKind::Coll(coll),
            node,
            count: 0,
            colon: false,
            line,
            col,
        });
        self.pos += width;
        Ok(())
    }

    fn close(&mut self, b: u8, line: u32, col: u32) -> Res<()> {
        let Some(f) = self.stack.last() else {
            return Err(self.err(line, col, format!("unexpected `{}`", b as char)));
        };
        let coll = match f.kind {
            FrameKind::Discard { .. } => {
                return Err(self.err(
                    line,
                    col,
                    format!("expected a form after `#_`, got `{}`", b as char),
                ))
            }
            FrameKind::Coll(c) => c,
        };
        if coll.closer() != b {
            let what = if coll == Coll::Map && f.count % 2 == 0 {
                format!("expected a map key or `}}`, got `{}`", b as char)
            } else {
                format!(
                    "expected `{}` to close the {} opened at line {}, column {}, got `{}`",
                    coll.closer() as char,
                    coll.name(),
                    f.line,
                    f.col,
                    b as char
                )
            };
            return Err(self.err(line, col, what));
        }
        if coll == Coll::Map && f.count % 2 == 1 {
            return Err(self.err(line, col, "expected a map value before `}`"));
        }
        let end = self.tape.nodes.len() as u32;
        let (node, count) = (f.node, f.count);
        self.tape.nodes[node].atom = Atom::Open { coll, end, count };
        self.stack.pop();
        self.pos += 1;
        Ok(())
    }

    /// A form just ended. Returns true when it was a whole top-level form.
    fn form_done(&mut self) -> bool {
        match self.stack.last_mut() {
            None => true,
            Some(f) => match f.kind {
                FrameKind::Coll(_) => {
                    f.count += 1;
                    f.colon = false;
                    false
                }
                FrameKind::Discard { nodes, text } => {
                    self.tape.nodes.truncate(nodes);
                    self.tape.text.truncate(text);
                    self.stack.pop();
                    false
                }
            },
        }
    }

    /// `#`: set, discard, tag or symbolic value. Returns true when a whole
    /// form was read (a symbolic value); false when more must follow.
    fn dispatch(&mut self, line: u32, col: u32) -> Res<bool> {
        self.want(2)?;
        let next = if self.pos + 1 < self.end {
            self.buf[self.pos + 1]
        } else {
            return Err(self.err(line, col, "expected a form after `#`, got the end of input"));
        };
        match next {
            b'{' => {
                if self.stack.is_empty() {
                    return Err(self.err(line, col, "expected an op map {...}, got a set `#{`"));
                }
                self.open(Coll::Set, 2, line, col)?;
                Ok(false)
            }
            b'_' => {
                if self.stack.len() >= MAX_DEPTH {
                    return Err(self.err(
                        line,
                        col,
                        format!("nesting deeper than {MAX_DEPTH} levels"),
                    ));
                }
                self.stack.push(Frame {
                    kind: FrameKind::Discard {
                        nodes: self.tape.nodes.len(),
                        text: self.tape.text.len(),
                    },
                    node: 0,
                    count: 0,
                    colon: false,
                    line,
                    col,
                });
                self.pos += 2;
                Ok(false)
            }
            b'#' => {
                if self.stack.is_empty() {
                    return Err(self.err(line, col, "expected an op map {...}, got `##`"));
                }
                let e = self.token_end(2)?;
                let name = &self.buf[self.pos + 2..e];
                let text: &[u8] = match name {
                    b"Inf" => b"##Inf",
                    b"-Inf" => b"##-Inf",
                    b"NaN" => b"##NaN",
                    _ => {
                        let got = String::from_utf8_lossy(name).into_owned();
                        return Err(self.err(
                            line,
                            col,
                            format!("expected ##Inf, ##-Inf or ##NaN, got ##{got}"),
                        ));
                    }
                };
                let start = self.tape.text.len() as u32;
                self.tape.text.extend_from_slice(text);
                self.pos = e;
                self.push(Atom::Float(start, text.len() as u32), line, col);
                Ok(true)
            }
            c if c.is_ascii_alphabetic() => {
                // A tagged literal such as `#jepsen.history.Op{...}` or
                // `#inst "..."`: the tag is dropped, the form is kept.
                let e = self.token_end(1)?;
                self.pos = e;
                self.skip_ws()?;
                if self.pos == self.end || matches!(self.buf[self.pos], b'}' | b']' | b')') {
                    let (l, c) = self.here();
                    return Err(self.err(l, c, "expected a form after the tag"));
                }
                Ok(false)
            }
            c => Err(self.err(line, col, format!("unsupported dispatch `#{}`", c as char))),
        }
    }

    /// A string literal, decoded into the tape's text.
    fn string(&mut self, line: u32, col: u32) -> Res<()> {
        let start = self.tape.text.len();
        let mut i = self.pos + 1;
        loop {
            let seg = i;
            while i < self.end {
                let c = self.buf[i];
                if c == b'"' || c == b'\\' || c == b'\n' {
                    break;
                }
                i += 1;
            }
            self.tape.text.extend_from_slice(&self.buf[seg..i]);
            if i == self.end {
                self.pos = i;
                if !self.refill()? {
                    return Err(self.err(line, col, "unterminated string"));
                }
                i = self.pos;
                continue;
            }
            match self.buf[i] {
                b'"' => {
                    self.pos = i + 1;
                    break;
                }
                b'\n' => {
                    self.tape.text.push(b'\n');
                    i += 1;
                    self.line += 1;
                    self.line_start = self.base + i as u64;
                }
                _ => {
                    self.pos = i;
                    self.want(12)?;
                    if self.pos + 1 >= self.end {
                        return Err(self.err(line, col, "unterminated string"));
                    }
                    i = self.escape()?;
                }
            }
        }
        if std::str::from_utf8(&self.tape.text[start..]).is_err() {
            return Err(self.err(line, col, "invalid UTF-8 in string"));
        }
        let len = self.tape.text.len() - start;
        self.push(Atom::Str(start as u32, len as u32), line, col);
        Ok(())
    }

    /// Decodes the escape at `pos` (a backslash) into the text; returns the
    /// index after it.
    fn escape(&mut self) -> Res<usize> {
        let (line, col) = self.here();
        let i = self.pos;
        let avail = &self.buf[i..self.end];
        let Some(&e) = avail.get(1) else {
            return Err(self.err(line, col, "unterminated string"));
        };
        let simple = match e {
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            b'/' => Some(b'/'),
            b'n' => Some(b'\n'),
            b't' => Some(b'\t'),
            b'r' => Some(b'\r'),
            b'b' => Some(8),
            b'f' => Some(12),
            _ => None,
        };
        if let Some(c) = simple {
            self.tape.text.push(c);
            return Ok(i + 2);
        }
        let bad = |s: &Self, what: &str| Err(s.err(line, col, what.to_string()));
        if e == b'u' {
            let Some(hi) = hex4(avail.get(2..6)) else {
                return bad(self, "expected 4 hex digits after \\u in string");
            };
            let (cp, used) = if (0xD800..0xDC00).contains(&hi) {
                match (avail.get(6..8), hex4(avail.get(8..12))) {
                    (Some(b"\\u"), Some(lo)) if (0xDC00..0xE000).contains(&lo) => {
                        (0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00), 12)
                    }
                    _ => return bad(self, "unpaired surrogate in \\u escape"),
                }
            } else {
                (hi, 6)
            };
            let Some(c) = char::from_u32(cp) else {
                return bad(self, "invalid \\u escape in string");
            };
            let mut b = [0u8; 4];
            self.tape
                .text
                .extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            return Ok(i + used);
        }
        if self.dialect == Dialect::Edn && (b'0'..=b'7').contains(&e) {
            // Clojure's octal escape: up to 3 digits, at most \377.
            let mut v: u32 = 0;
            let mut n = 1;
            while n <= 3 {
                match avail.get(n) {
                    Some(&d) if (b'0'..=b'7').contains(&d) => {
                        v = v * 8 + (d - b'0') as u32;
                        n += 1;
                    }
                    _ => break,
                }
            }
            if v > 0o377 {
                return bad(self, "octal escape beyond \\377 in string");
            }
            let c = char::from_u32(v).unwrap_or('\0');
            let mut b = [0u8; 4];
            self.tape
                .text
                .extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            return Ok(i + n);
        }
        Err(self.err(
            line,
            col,
            format!(
                "unsupported escape `\\{}` in string",
                String::from_utf8_lossy(&avail[1..2])
            ),
        ))
    }

    /// A number, keyword, symbol, char or literal starting with `b`.
    fn atom(&mut self, b: u8, line: u32, col: u32) -> Res<()> {
        let json = self.dialect == Dialect::Json;
        match b {
            b':' => {
                let e = self.token_end(1)?;
                if e == self.pos + 1 {
                    return Err(self.err(line, col, "expected a keyword name after `:`"));
                }
                if !json {
                    self.check_name(self.pos, e, line, col)?;
                }
                let (s, l) = self.push_text(self.pos + 1, e);
                self.check_utf8(s, l, line, col)?;
                self.pos = e;
                self.push(Atom::Keyword(s, l), line, col);
            }
            b'\\' if !json => self.char_literal(line, col)?,
            b'0'..=b'9' => self.number(line, col)?,
            b'-' | b'+' => {
                self.want(2)?;
                let digit = self.pos + 1 < self.end && self.buf[self.pos + 1].is_ascii_digit();
                if digit && !(json && b == b'+') {
                    self.number(line, col)?;
                } else {
                    self.symbol(line, col)?;
                }
            }
            _ => self.symbol(line, col)?,
        }
        Ok(())
    }

    fn check_utf8(&self, s: u32, l: u32, line: u32, col: u32) -> Res<()> {
        let b = &self.tape.text[s as usize..(s + l) as usize];
        if b.is_ascii() || std::str::from_utf8(b).is_ok() {
            Ok(())
        } else {
            Err(self.err(line, col, "invalid UTF-8"))
        }
    }

    fn symbol(&mut self, line: u32, col: u32) -> Res<()> {
        let e = self.token_end(1)?;
        let tok = &self.buf[self.pos..e];
        let atom = match tok {
            b"nil" if self.dialect == Dialect::Edn => Some(Atom::Nil),
            b"null" if self.dialect == Dialect::Json => Some(Atom::Nil),
            b"true" => Some(Atom::Bool(true)),
            b"false" => Some(Atom::Bool(false)),
            _ => None,
        };
        if let Some(a) = atom {
            self.pos = e;
            self.push(a, line, col);
            return Ok(());
        }
        if self.dialect == Dialect::Json || tok[0].is_ascii_digit() {
            let got = String::from_utf8_lossy(&tok[..tok.len().min(40)]).into_owned();
            return Err(self.err(line, col, format!("expected a value, got `{got}`")));
        }
        self.check_name(self.pos, e, line, col)?;
        let (s, l) = self.push_text(self.pos, e);
        self.check_utf8(s, l, line, col)?;
        self.pos = e;
        self.push(Atom::Symbol(s, l), line, col);
        Ok(())
    }

    /// Refuses an EDN symbol or keyword token (`buf[from..to]`) that is not
    /// EDN: a byte no name may hold, or a symbol starting with `'` (quote).
    fn check_name(&self, from: usize, to: usize, line: u32, col: u32) -> Res<()> {
        let tok = &self.buf[from..to];
        if tok.iter().all(|&c| is_name_byte(c)) && tok[0] != b'\'' {
            return Ok(());
        }
        let got = String::from_utf8_lossy(&tok[..tok.len().min(40)]).into_owned();
        Err(self.err(
            line,
            col,
            format!(
                "expected a value (number, keyword, string, symbol, nil, true, false or a collection), got `{got}`, which is not EDN"
            ),
        ))
    }

    fn char_literal(&mut self, line: u32, col: u32) -> Res<()> {
        self.want(5)?;
        let avail = &self.buf[self.pos + 1..self.end];
        let Some(&first) = avail.first() else {
            return Err(self.err(line, col, "expected a character after `\\`"));
        };
        let width = utf8_width(first);
        let Some(c) = avail
            .get(..width)
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(|s| s.chars().next())
        else {
            return Err(self.err(line, col, "invalid UTF-8 in character literal"));
        };
        if self.class[first as usize] & TERM != 0 {
            // `\(`, `\"`, `\ `: the character itself.
            if c == '\n' {
                self.line += 1;
                self.line_start = self.base + (self.pos + 2) as u64;
            }
            self.pos += 1 + width;
            self.push(Atom::Char(c), line, col);
            return Ok(());
        }
        let e = self.token_end(1 + width)?;
        let name = std::str::from_utf8(&self.buf[self.pos + 1..e]).unwrap_or("\u{fffd}");
        let ch = if name.chars().count() == 1 {
            Some(c)
        } else {
            match name {
                "newline" => Some('\n'),
                "space" => Some(' '),
                "tab" => Some('\t'),
                "return" => Some('\r'),
                "backspace" => Some('\u{8}'),
                "formfeed" => Some('\u{c}'),
                _ if name.len() == 5 && name.starts_with('u') => {
                    hex4(Some(&name.as_bytes()[1..])).and_then(char::from_u32)
                }
                _ if name.len() >= 2 && name.len() <= 4 && name.starts_with('o') => {
                    u32::from_str_radix(&name[1..], 8)
                        .ok()
                        .filter(|&v| v <= 0o377)
                        .and_then(char::from_u32)
                }
                _ => None,
            }
        };
        let Some(ch) = ch else {
            return Err(self.err(
                line,
                col,
                format!("unsupported character literal `\\{name}`"),
            ));
        };
        self.pos = e;
        self.push(Atom::Char(ch), line, col);
        Ok(())
    }

    /// A small non-negative decimal integer ending inside the buffer, read
    /// in one pass. Returns false (consuming nothing) for anything else.
    #[inline(always)]
    fn int_fast(&mut self, line: u32, col: u32) -> bool {
        if self.dialect == Dialect::Json
            && self.stack.last().is_some_and(|f| {
                matches!(f.kind, FrameKind::Coll(Coll::Map)) && (f.count % 2 == 0 || !f.colon)
            })
        {
            return false;
        }
        let mut i = self.pos;
        let mut v: i64 = 0;
        while i < self.end && i - self.pos < 18 {
            let c = self.buf[i];
            if !c.is_ascii_digit() {
                break;
            }
            v = v * 10 + (c - b'0') as i64;
            i += 1;
        }
        let n = i - self.pos;
        if i >= self.end
            || self.class[self.buf[i] as usize] & TERM == 0
            || (n > 1 && self.buf[self.pos] == b'0')
        {
            return false;
        }
        self.pos = i;
        self.push(Atom::Int(v), line, col);
        true
    }

    fn number(&mut self, line: u32, col: u32) -> Res<()> {
        let e = self.token_end(1)?;
        let tok = &self.buf[self.pos..e];
        // Fast path: a plain decimal that surely fits in an i64.
        let (neg, digits) = match tok[0] {
            b'-' => (true, &tok[1..]),
            b'+' => (false, &tok[1..]),
            _ => (false, tok),
        };
        if !digits.is_empty()
            && digits.len() <= 18
            && (digits[0] != b'0' || digits.len() == 1)
            && digits.iter().all(u8::is_ascii_digit)
        {
            let mut v: i64 = 0;
            for &d in digits {
                v = v * 10 + (d - b'0') as i64;
            }
            self.pos = e;
            self.push(Atom::Int(if neg { -v } else { v }), line, col);
            return Ok(());
        }
        let tok = String::from_utf8_lossy(tok).into_owned();
        let atom = match parse_number(&tok, self.dialect) {
            Ok(Num::Int(v)) => Atom::Int(v),
            Ok(Num::Big(s)) => {
                let start = self.tape.text.len() as u32;
                self.tape.text.extend_from_slice(s.as_bytes());
                Atom::BigInt(start, s.len() as u32)
            }
            Ok(Num::Float(s)) => {
                let start = self.tape.text.len() as u32;
                self.tape.text.extend_from_slice(s.as_bytes());
                Atom::Float(start, s.len() as u32)
            }
            Err(why) => return Err(self.err(line, col, format!("{why}: `{tok}`"))),
        };
        self.pos = e;
        self.push(atom, line, col);
        Ok(())
    }
}

fn utf8_width(b: u8) -> usize {
    match b {
        0xF0..=0xF7 => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

fn hex4(b: Option<&[u8]>) -> Option<u32> {
    let b = b?;
    if b.len() != 4 || !b.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u32::from_str_radix(std::str::from_utf8(b).ok()?, 16).ok()
}

#[derive(Debug, PartialEq)]
enum Num {
    Int(i64),
    /// Canonical decimal text: no `+`, no leading zeros.
    Big(String),
    /// Normalised float text (`1.50` and `1.5` are the same double), or a
    /// BigDecimal kept as written with its `M`.
    Float(String),
}

/// Parses a number token. Integers beyond i64 become [`Num::Big`]; `N`
/// marks a BigInt (equal to the same long in Clojure); `M` a BigDecimal
/// (never equal to a double, so its text is kept apart).
fn parse_number(tok: &str, dialect: Dialect) -> Result<Num, &'static str> {
    let edn = dialect == Dialect::Edn;
    let (body, suffix) = match tok.as_bytes().last() {
        Some(b'N') if edn => (&tok[..tok.len() - 1], Some('N')),
        Some(b'M') if edn => (&tok[..tok.len() - 1], Some('M')),
        _ => (tok, None),
    };
    let (neg, unsigned) = match body.as_bytes().first() {
        Some(b'-') => (true, &body[1..]),
        Some(b'+') if edn => (false, &body[1..]),
        _ => (false, body),
    };
    let b = unsigned.as_bytes();
    let int_len = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if int_len == 0 {
        return Err("invalid number");
    }
    if int_len > 1 && b[0] == b'0' {
        return Err("invalid number (leading zero; octal and hex literals are not supported)");
    }
    if int_len == b.len() {
        if suffix == Some('M') {
            return Ok(Num::Float(tok.trim_start_matches('+').to_string()));
        }
        return Ok(match body.parse::<i64>() {
            Ok(v) => Num::Int(v),
            Err(_) => Num::Big(format!("{}{}", if neg { "-" } else { "" }, unsigned)),
        });
    }
    // A float: digits [. digits*] [(e|E) [+-] digits]
    let mut i = int_len;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let frac = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if frac == 0 && dialect == Dialect::Json {
            return Err("invalid number");
        }
        i += frac;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let exp = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if exp == 0 {
            return Err("invalid number");
        }
        i += exp;
    }
    if i != b.len() || i == int_len || suffix == Some('N') {
        return Err("invalid number");
    }
    if suffix == Some('M') {
        return Ok(Num::Float(tok.trim_start_matches('+').to_string()));
    }
    let v: f64 = body.parse().map_err(|_| "invalid number")?;
    Ok(Num::Float(float_text(v)))
}

/// The canonical text of a double: Rust's shortest round-trip form, with
/// EDN's names for the infinities.
pub(crate) fn float_text(v: f64) -> String {
    if v.is_infinite() {
        if v > 0.0 { "##Inf" } else { "##-Inf" }.to_string()
    } else if v.is_nan() {
        "##NaN".to_string()
    } else {
        format!("{v:?}")
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Hands out its input one byte per read, so every token straddles a
    /// chunk boundary somewhere.
    pub(crate) struct OneByte<'a>(pub &'a [u8]);

    impl Read for OneByte<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() || buf.is_empty() {
                return Ok(0);
            }
            buf[0] = self.0[0];
            self.0 = &self.0[1..];
            Ok(1)
        }
    }

    fn forms_from<R: Read>(r: R) -> Result<Vec<Datum>, ReadError> {
        let mut s = Scanner::new(r, "t.edn", Dialect::Edn);
        let mut out = Vec::new();
        while s.next_form()?.is_some() {
            out.push(s.tape.datum(0));
        }
        Ok(out)
    }

    /// Reads `text` whole and byte by byte; both must agree.
    fn forms(text: &str) -> Result<Vec<Datum>, ReadError> {
        let whole = forms_from(text.as_bytes());
        let bytewise = forms_from(OneByte(text.as_bytes()));
        match (&whole, &bytewise) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            _ => panic!("chunking changed the result: {whole:?} vs {bytewise:?}"),
        }
        whole
    }

    /// The value of `:v` in the single map `{:v <text>}`.
    fn value(text: &str) -> Datum {
        let ms = forms(&format!("{{:v {text}}}")).unwrap();
        match &ms[..] {
            [Datum::Map(kvs)] => kvs[0].1.clone(),
            other => panic!("not one map: {other:?}"),
        }
    }

    fn error(text: &str) -> (u32, u32, String) {
        let e = forms(text).expect_err("should fail");
        let (l, c) = e.position().expect("a position");
        (l, c, e.what())
    }

    pub(crate) fn kw(s: &str) -> Datum {
        Datum::Keyword(s.into())
    }
    pub(crate) fn int(i: i64) -> Datum {
        Datum::Int(i)
    }
    fn map(kvs: Vec<(Datum, Datum)>) -> Datum {
        Datum::Map(kvs)
    }

    #[test]
    fn ops_one_per_line_several_per_line_and_spanning_lines() {
        let one = map(vec![(kw("a"), int(1))]);
        let two = map(vec![(kw("b"), int(2))]);
        assert_eq!(
            forms("{:a 1}\n{:b 2}\n").unwrap(),
            vec![one.clone(), two.clone()]
        );
        assert_eq!(
            forms("{:a 1} {:b 2}").unwrap(),
            vec![one.clone(), two.clone()]
        );
        assert_eq!(
            forms("{:a\n 1}{:b\n\n2\n}").unwrap(),
            vec![one.clone(), two.clone()]
        );
        assert_eq!(forms("").unwrap(), vec![]);
        assert_eq!(forms("  \n\n ").unwrap(), vec![]);
    }

    #[test]
    fn whole_history_as_one_vector_or_list() {
        let one = map(vec![(kw("a"), int(1))]);
        assert_eq!(
            forms("[{:a 1}\n {:a 1}]").unwrap(),
            vec![one.clone(), one.clone()]
        );
        assert_eq!(
            forms("({:a 1}, {:a 1})").unwrap(),
            vec![one.clone(), one.clone()]
        );
        assert_eq!(forms("[]").unwrap(), vec![]);
        assert_eq!(forms("[{:a 1}] {:a 1}").unwrap(), vec![one.clone(), one]);
    }

    #[test]
    fn commas_are_whitespace() {
        assert_eq!(
            value("[1,2 ,, 3]"),
            Datum::Vector(vec![int(1), int(2), int(3)])
        );
    }

    #[test]
    fn keywords_and_symbols() {
        assert_eq!(value(":x"), kw("x"));
        assert_eq!(value(":elle.list-append/init"), kw("elle.list-append/init"));
        for s in ["foo", "foo/bar", "...", "+", "-", "->x", "a'", "x#"] {
            assert_eq!(value(s), Datum::Symbol(s.into()), "{s}");
        }
        assert_eq!(value("nil"), Datum::Nil);
        assert_eq!(value("true"), Datum::Bool(true));
        assert_eq!(value("false"), Datum::Bool(false));
        assert_eq!(value("nilly"), Datum::Symbol("nilly".into()));
    }

    #[test]
    fn strings_with_escapes() {
        assert_eq!(value(r#""""#), Datum::Str(String::new()));
        assert_eq!(
            value(r#""a\"b\\c\nd\te\rf""#),
            Datum::Str("a\"b\\c\nd\te\rf".into())
        );
        assert_eq!(value(r#""\u00e9\uD83D\uDE00""#), Datum::Str("é😀".into()));
        assert_eq!(value(r#""\101\0""#), Datum::Str("A\0".into()));
        assert_eq!(value("\"two\nlines\""), Datum::Str("two\nlines".into()));
        assert_eq!(value("\"héllo\""), Datum::Str("héllo".into()));
    }

    #[test]
    fn integers_including_big_ones_and_suffixes() {
        assert_eq!(value("0"), int(0));
        assert_eq!(value("-5"), int(-5));
        assert_eq!(value("+7"), int(7));
        assert_eq!(value("9223372036854775807"), int(i64::MAX));
        assert_eq!(value("-9223372036854775808"), int(i64::MIN));
        assert_eq!(
            value("9223372036854775808"),
            Datum::BigInt("9223372036854775808".into())
        );
        assert_eq!(
            value("-99999999999999999999"),
            Datum::BigInt("-99999999999999999999".into())
        );
        assert_eq!(
            value("12N"),
            int(12),
            "a BigInt equal to a long is that long"
        );
        assert_eq!(
            value("99999999999999999999N"),
            Datum::BigInt("99999999999999999999".into())
        );
        assert_eq!(value("3M"), Datum::Float("3M".into()), "a BigDecimal");
    }

    #[test]
    fn floats_are_normalised_doubles() {
        assert_eq!(value("1.5"), Datum::Float("1.5".into()));
        assert_eq!(value("1.50"), value("1.5"));
        assert_eq!(value("-0.25"), Datum::Float("-0.25".into()));
        assert_eq!(value("1e3"), Datum::Float("1000.0".into()));
        assert_eq!(value("2.5E-1"), Datum::Float("0.25".into()));
        assert_eq!(value("1."), Datum::Float("1.0".into()));
        assert_eq!(value("1.5M"), Datum::Float("1.5M".into()));
        assert_eq!(value("##Inf"), Datum::Float("##Inf".into()));
        assert_eq!(value("##-Inf"), Datum::Float("##-Inf".into()));
        assert_eq!(value("##NaN"), Datum::Float("##NaN".into()));
        assert_eq!(value("1e999"), Datum::Float("##Inf".into()));
    }

    #[test]
    fn characters() {
        assert_eq!(value(r"\a"), Datum::Char('a'));
        assert_eq!(value(r"\newline"), Datum::Char('\n'));
        assert_eq!(value(r"\space"), Datum::Char(' '));
        assert_eq!(value(r"\tab"), Datum::Char('\t'));
        assert_eq!(value(r"\return"), Datum::Char('\r'));
        assert_eq!(value(r"\u0041"), Datum::Char('A'));
        assert_eq!(value(r"\o101"), Datum::Char('A'));
        assert_eq!(value(r"\é"), Datum::Char('é'));
        assert_eq!(
            value(r#"[\( \) \"]"#),
            Datum::Vector(vec![Datum::Char('('), Datum::Char(')'), Datum::Char('"')])
        );
    }

    #[test]
    fn collections_nest() {
        assert_eq!(
            value("[1 (2 #{3 :x}) {:k [4]}]"),
            Datum::Vector(vec![
                int(1),
                Datum::List(vec![int(2), Datum::Set(vec![int(3), kw("x")])]),
                map(vec![(kw("k"), Datum::Vector(vec![int(4)]))]),
            ])
        );
        assert_eq!(value("{}"), map(vec![]));
        assert_eq!(value("#{}"), Datum::Set(vec![]));
    }

    #[test]
    fn discard_drops_the_next_form() {
        assert_eq!(value("[1 #_ 2 3]"), Datum::Vector(vec![int(1), int(3)]));
        assert_eq!(value("[#_ #_ 1 2 3]"), Datum::Vector(vec![int(3)]));
        assert_eq!(
            value("[1 #_[2 [3]] 4]"),
            Datum::Vector(vec![int(1), int(4)])
        );
        assert_eq!(
            forms("#_{:a 1} {:b 2} #_ [1 2]").unwrap(),
            vec![map(vec![(kw("b"), int(2))])]
        );
        assert_eq!(
            forms("[#_{:a 1} {:b 2}]").unwrap(),
            vec![map(vec![(kw("b"), int(2))])]
        );
        assert_eq!(
            forms("{:a #_ :b 1}").unwrap(),
            vec![map(vec![(kw("a"), int(1))])]
        );
    }

    #[test]
    fn tagged_literals_keep_the_form() {
        assert_eq!(
            forms("#jepsen.history.Op{:index 1}").unwrap(),
            vec![map(vec![(kw("index"), int(1))])]
        );
        assert_eq!(
            forms("[#jepsen.history.Op {:index 1}]").unwrap(),
            vec![map(vec![(kw("index"), int(1))])]
        );
        assert_eq!(
            value("#inst \"2020-01-01\""),
            Datum::Str("2020-01-01".into())
        );
        assert_eq!(value("#uuid\"abc\""), Datum::Str("abc".into()));
    }

    #[test]
    fn comments_and_byte_order_mark() {
        let one = map(vec![(kw("a"), int(1))]);
        assert_eq!(
            forms("; header\n{:a ; inline\n 1} ; trailing").unwrap(),
            vec![one.clone()]
        );
        assert_eq!(
            forms("#!/usr/bin/env bb\n{:a 1}").unwrap(),
            vec![one.clone()]
        );
        assert_eq!(forms("\u{feff}{:a 1}").unwrap(), vec![one]);
    }

    #[test]
    fn tokens_longer_than_the_buffer() {
        let long = "x".repeat(CHUNK * 2 + 17);
        assert_eq!(value(&format!("\"{long}\"")), Datum::Str(long.clone()));
        assert_eq!(value(&format!(":{long}")), kw(&long));
    }

    #[test]
    fn error_unterminated_string() {
        assert_eq!(error("{:a \"abc"), (1, 5, "unterminated string".into()));
        assert_eq!(error("{:a \"abc\\"), (1, 5, "unterminated string".into()));
    }

    #[test]
    fn error_unterminated_collections() {
        assert_eq!(
            error("{:a [1 2"),
            (
                1,
                5,
                "unterminated vector: no `]` before the end of input".into()
            )
        );
        assert_eq!(
            error("\n\n  {:a 1"),
            (
                3,
                3,
                "unterminated map: no `}` before the end of input".into()
            )
        );
        assert_eq!(
            error("[{:a 1}"),
            (
                1,
                1,
                "unterminated vector of ops: no `]` before the end of input".into()
            )
        );
    }

    #[test]
    fn error_map_shape() {
        assert_eq!(
            error("{:a}"),
            (1, 4, "expected a map value before `}`".into())
        );
        assert_eq!(
            error("{:a 1 ]"),
            (1, 7, "expected a map key or `}`, got `]`".into())
        );
        assert_eq!(
            error("{:a [1 2}"),
            (
                1,
                9,
                "expected `]` to close the vector opened at line 1, column 5, got `}`".into()
            )
        );
    }

    #[test]
    fn error_top_level_must_be_op_maps() {
        assert_eq!(
            error("1"),
            (1, 1, "expected an op map {...}, got `1`".into())
        );
        assert_eq!(
            error(":x"),
            (1, 1, "expected an op map {...}, got `:`".into())
        );
        assert_eq!(
            error("{:a 1}\n}"),
            (2, 1, "expected an op map {...}, got `}`".into())
        );
        assert_eq!(
            error("[[{:a 1}]]"),
            (1, 2, "expected an op map {...}, got `[`".into())
        );
        assert_eq!(
            error("#{1}"),
            (1, 1, "expected an op map {...}, got a set `#{`".into())
        );
    }

    #[test]
    fn error_discard_without_form() {
        assert_eq!(
            error("{:a #_}"),
            (1, 7, "expected a form after `#_`, got `}`".into())
        );
        assert_eq!(
            error("#_"),
            (
                1,
                1,
                "expected a form after `#_`, got the end of input".into()
            )
        );
    }

    #[test]
    fn error_bad_tokens() {
        assert_eq!(
            error(r#"{:a "\q"}"#),
            (1, 6, "unsupported escape `\\q` in string".into())
        );
        assert_eq!(
            error(r#"{:a "\u12"}"#),
            (1, 6, "expected 4 hex digits after \\u in string".into())
        );
        assert_eq!(error("{:a 1.2.3}").2, "invalid number: `1.2.3`");
        assert_eq!(
            error("{:a 08}").2,
            "invalid number (leading zero; octal and hex literals are not supported): `08`"
        );
        assert_eq!(error("{:a 1x}").2, "invalid number: `1x`");
        assert_eq!(error("{:a 1.5N}").2, "invalid number: `1.5N`");
        assert_eq!(
            error(r"{:a \foo}").2,
            "unsupported character literal `\\foo`"
        );
        assert_eq!(error("{: 1}").2, "expected a keyword name after `:`");
        assert_eq!(error("{:a #\"re\"}").2, "unsupported dispatch `#\"`");
        assert_eq!(
            error("{:a ##Foo}").2,
            "expected ##Inf, ##-Inf or ##NaN, got ##Foo"
        );
        assert_eq!(error("{:a #tag}").2, "expected a form after the tag");
        for bad in ["@@", "@x", "x@y", "^m", "~x", "`x", "|x|", "'x"] {
            let (l, c, what) = error(&format!("{{:a\n [:append :x {bad}]}}"));
            assert_eq!((l, c), (2, 14), "{bad}");
            assert!(
                what.contains(&format!("got `{bad}`, which is not EDN")),
                "{bad}: {what}"
            );
        }
        assert!(error("{:a :x@}").2.contains("got `:x@`"));
    }

    #[test]
    fn error_positions_count_lines_inside_strings() {
        let (l, c, _) = error("{:a \"x\ny\"\n :b \"\\q\"}");
        assert_eq!((l, c), (3, 6), "at the backslash");
    }

    #[test]
    fn invalid_utf8_is_an_error_not_a_panic() {
        let bytes = b"{:a \"\xff\xfe\"}";
        let e = forms_from(&bytes[..]).unwrap_err();
        assert_eq!(e.what(), "invalid UTF-8 in string");
        let e = forms_from(&b"{:a :\xff}"[..]).unwrap_err();
        assert_eq!(e.what(), "invalid UTF-8");
    }

    #[test]
    fn nesting_is_limited_without_recursion() {
        let ok = format!(
            "{{:v {}{}}}",
            "[".repeat(MAX_DEPTH - 1),
            "]".repeat(MAX_DEPTH - 1)
        );
        assert!(forms(&ok).is_ok());
        let deep = format!("{{:v {}{}}}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(
            error(&deep).2,
            format!("nesting deeper than {MAX_DEPTH} levels")
        );
        let discards = format!("{{:v {} 1}}", "#_ ".repeat(MAX_DEPTH + 1));
        assert!(forms_from(discards.as_bytes()).is_err());
    }

    #[test]
    fn number_parsing_rules() {
        assert_eq!(parse_number("-0", Dialect::Edn), Ok(Num::Int(0)));
        assert_eq!(parse_number("+12", Dialect::Json), Err("invalid number"));
        assert_eq!(parse_number("1.", Dialect::Json), Err("invalid number"));
        assert_eq!(parse_number("1N", Dialect::Json), Err("invalid number"));
        assert_eq!(parse_number("1e", Dialect::Edn), Err("invalid number"));
        assert_eq!(float_text(0.1), "0.1");
    }
}
