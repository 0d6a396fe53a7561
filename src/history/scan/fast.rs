//! A fast path for the op shape nearly every history uses: one op map on
//! one line, with only the fields `:index :time :type :process :f :value`,
//! integer or keyword (JSON: string) keys, integer values and lists of
//! integers, e.g.
//! `{:type :ok, :f :txn, :value [[:append 3 7] [:r 4 [1 2]]], :time 5, :process 0, :index 9}`.
//!
//! It decodes such an op straight from the input buffer, without the tape,
//! and gives up (consuming nothing) on anything else: another field, a
//! newline, a comment, a string escape, a float, a big integer, a non-client
//! process, a malformed op. The general scanner then reads that op, so
//! results and error messages are those of the general path.

use super::{Dialect, TERM, WS};
use crate::history::raw::{OpBatch, OpType};
use crate::history::{Datum, MopKind};

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
    json: bool,
    class: &'static [u8; 256],
}

/// Decodes the op map at the start of `b` into `batch`, at `(line, col)`;
/// returns the bytes it took, or `None` (leaving `batch` as it was) when the
/// general path must read it.
pub(super) fn op(
    b: &[u8],
    dialect: Dialect,
    class: &'static [u8; 256],
    batch: &mut OpBatch,
    (line, col): (u32, u32),
) -> Option<usize> {
    let mut c = Cursor {
        b,
        i: 0,
        json: dialect == Dialect::Json,
        class,
    };
    let mark = batch.mark();
    let f = batch.f_nil();
    batch.begin_op(None, None, OpType::Invoke, Datum::Nil, f, false, line, col);
    if c.op(batch).is_some() {
        Some(c.i)
    } else {
        batch.truncate(mark);
        None
    }
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// Skips blanks and commas on this line; `None` at a newline, a comment
    /// or a dispatch (`#_`), or at the end of the buffer.
    fn ws(&mut self) -> Option<u8> {
        while let Some(&c) = self.b.get(self.i) {
            if self.class[c as usize] & WS != 0 {
                self.i += 1;
            } else if c == b'\n' || c == b';' || c == b'#' {
                return None;
            } else {
                return Some(c);
            }
        }
        None
    }

    /// The current token ends here (a delimiter follows, inside the buffer).
    fn at_term(&self) -> bool {
        self.peek()
            .is_some_and(|c| self.class[c as usize] & TERM != 0)
    }

    /// A decimal integer of at most 18 digits (the general scanner's fast
    /// case), no leading zero, no suffix.
    fn int(&mut self) -> Option<i64> {
        let neg = self.peek() == Some(b'-');
        let start = self.i + neg as usize;
        let mut j = start;
        let mut v: i64 = 0;
        while let Some(&d) = self.b.get(j) {
            if !d.is_ascii_digit() {
                break;
            }
            // Checked before the digit is added: a 19th would overflow.
            if j - start == 18 {
                return None;
            }
            v = v * 10 + (d - b'0') as i64;
            j += 1;
        }
        let n = j - start;
        if n == 0 || (n > 1 && self.b[start] == b'0') {
            return None;
        }
        self.i = j;
        self.at_term().then_some(if neg { -v } else { v })
    }

    /// `nil` (JSON: `null`), if that is what comes next.
    fn nil(&mut self) -> bool {
        let word: &[u8] = if self.json { b"null" } else { b"nil" };
        let rest = &self.b[self.i..];
        if rest.len() >= word.len() && rest.iter().zip(word).all(|(a, b)| a == b) {
            let save = self.i;
            self.i += word.len();
            if self.at_term() {
                return true;
            }
            self.i = save;
        }
        false
    }

    /// A name: a keyword's (EDN, after the colon) or a plain ASCII string's
    /// (JSON, without escapes).
    fn name(&mut self) -> Option<&'a [u8]> {
        let b = self.b;
        if self.json {
            if self.peek() != Some(b'"') {
                return None;
            }
            let start = self.i + 1;
            let mut j = start;
            loop {
                match *b.get(j)? {
                    b'"' => break,
                    b'\\' => return None,
                    c if !(0x20..0x80).contains(&c) => return None,
                    _ => j += 1,
                }
            }
            self.i = j + 1;
            Some(&b[start..j])
        } else {
            if self.peek() != Some(b':') {
                return None;
            }
            let start = self.i + 1;
            let mut j = start;
            while let Some(&c) = b.get(j) {
                if self.class[c as usize] & TERM != 0 {
                    break;
                }
                if c >= 0x80 || !super::is_name_byte(c) {
                    return None;
                }
                j += 1;
            }
            if j == start || j == b.len() {
                return None;
            }
            self.i = j;
            Some(&b[start..j])
        }
    }

    /// Which of `words` the name that comes next is (as [`Cursor::name`]
    /// would read it), without scanning it byte by byte: the names of
    /// fields, op types and micro-op functions are few and short.
    fn one_of(&mut self, words: &[&[u8]]) -> Option<usize> {
        let open = if self.json { b'"' } else { b':' };
        if self.peek() != Some(open) {
            return None;
        }
        let rest = &self.b[self.i + 1..];
        for (n, w) in words.iter().enumerate() {
            if rest.first() != w.first() || !rest.starts_with(w) {
                continue;
            }
            let next = *rest.get(w.len())?;
            let closed = if self.json {
                next == b'"'
            } else {
                self.class[next as usize] & TERM != 0
            };
            if closed {
                self.i += 1 + w.len() + self.json as usize;
                return Some(n);
            }
        }
        None
    }

    fn text(name: &[u8]) -> String {
        // Names are ASCII (checked while scanning them).
        String::from_utf8_lossy(name).into_owned()
    }

    /// Fills in the op `batch` holds last.
    fn op(&mut self, batch: &mut OpBatch) -> Option<()> {
        if self.peek() != Some(b'{') {
            return None;
        }
        self.i += 1;
        let mut seen = [false; 6];
        let (mut index, mut time, mut kind, mut process, mut f) = (None, None, None, None, None);
        loop {
            if self.ws()? == b'}' {
                self.i += 1;
                break;
            }
            let field = self.one_of(&[b"index", b"time", b"type", b"process", b"f", b"value"])?;
            if std::mem::replace(&mut seen[field], true) {
                return None;
            }
            if self.json {
                if self.ws()? != b':' {
                    return None;
                }
                self.i += 1;
            }
            self.ws()?;
            match field {
                0 | 1 => {
                    let v = if self.nil() { None } else { Some(self.int()?) };
                    if field == 0 {
                        index = v;
                    } else {
                        time = v;
                    }
                }
                2 => {
                    const KINDS: [OpType; 4] =
                        [OpType::Invoke, OpType::Ok, OpType::Fail, OpType::Info];
                    kind = Some(KINDS[self.one_of(&[b"invoke", b"ok", b"fail", b"info"])?]);
                }
                3 => process = Some(self.int()?),
                4 => {
                    if !self.nil() {
                        f = Some(batch.f_keyword(self.name()?));
                    }
                }
                _ => {
                    if !self.nil() {
                        batch.set_has_mops(true);
                        self.mops(batch)?;
                    }
                }
            }
        }
        let op = batch.ops.last_mut()?;
        op.index = index;
        op.time = time;
        op.kind = kind?;
        op.process = Datum::Int(process?);
        if let Some(f) = f {
            op.f = f;
        }
        Some(())
    }

    /// `[[:append k v] [:r k [..]] ...]`, into the last op of `batch`.
    fn mops(&mut self, batch: &mut OpBatch) -> Option<()> {
        if self.peek() != Some(b'[') {
            return None;
        }
        self.i += 1;
        loop {
            match self.ws()? {
                b']' => {
                    self.i += 1;
                    return Some(());
                }
                b'[' => self.i += 1,
                _ => return None,
            }
            self.ws()?;
            const KINDS: [MopKind; 3] = [MopKind::Append, MopKind::Read, MopKind::Write];
            let kind = KINDS[self.one_of(&[b"append", b"r", b"w"])?];
            let key = match self.ws()? {
                b':' | b'"' => {
                    let n = Self::text(self.name()?);
                    if self.json {
                        Datum::Str(n)
                    } else {
                        Datum::Keyword(n)
                    }
                }
                _ => Datum::Int(self.int()?),
            };
            match self.ws()? {
                b']' if kind == MopKind::Read => batch.add_mop(kind, key, None),
                b'[' if kind == MopKind::Read => {
                    self.i += 1;
                    batch.add_ints_read(key);
                    while self.ws()? != b']' {
                        batch.add_int(self.int()?);
                    }
                    self.i += 1;
                }
                _ if self.nil() => batch.add_mop(kind, key, None),
                _ => batch.add_mop(kind, key, Some(Datum::Int(self.int()?))),
            }
            if self.ws()? != b']' {
                return None;
            }
            self.i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{tests::OneByte, EDN_CLASS, JSON_CLASS};
    use super::*;
    use crate::history::edn::EdnReader;
    use crate::history::raw::{RawOp, RawValue};
    use proptest::prelude::*;
    use std::io::Read;

    fn read<R: Read>(input: R, dialect: Dialect, fast: bool) -> Result<Vec<RawOp>, String> {
        let mut r = EdnReader::with_dialect(input, "t", dialect);
        r.fast = fast;
        let mut ops = Vec::new();
        loop {
            match r.next_op() {
                Ok(Some(op)) => ops.push(op),
                Ok(None) => return Ok(ops),
                Err(e) => return Err(e.to_string()),
            }
        }
    }

    /// Both paths, whole and byte by byte, give the same ops or the same
    /// error.
    fn agree(text: &str, dialect: Dialect) {
        let general = read(text.as_bytes(), dialect, false);
        assert_eq!(read(text.as_bytes(), dialect, true), general, "{text}");
        assert_eq!(
            read(OneByte(text.as_bytes()), dialect, true),
            general,
            "{text}"
        );
    }

    /// The fast path's op at the start of `b`, and the bytes it took.
    fn fast(b: &[u8], dialect: Dialect) -> Option<(RawOp, usize)> {
        let class = if dialect == Dialect::Json {
            &JSON_CLASS
        } else {
            &EDN_CLASS
        };
        let mut batch = OpBatch::default();
        let used = op(b, dialect, class, &mut batch, (1, 1))?;
        assert_eq!(batch.len(), 1);
        Some((batch.raw(0), used))
    }

    #[test]
    fn the_common_shapes_take_the_fast_path() {
        let edn = b"{:type :ok, :f :txn, :value [[:append 3 7] [:r :x [1 -2]] [:r 4 nil] [:r 5]], :time -1, :process 0, :index 9}\n";
        let (op, used) = fast(edn, Dialect::Edn).expect("fast");
        assert_eq!(used, edn.len() - 1);
        assert_eq!(
            (op.index, op.time, &op.process),
            (Some(9), Some(-1), &Datum::Int(0))
        );
        let m = op.value.expect("mops");
        assert_eq!(m[1].key, Datum::Keyword("x".into()));
        assert_eq!(m[1].value, RawValue::Ints(vec![1, -2]));
        assert_eq!((&m[2].value, &m[3].value), (&RawValue::Nil, &RawValue::Nil));
        let json = br#"{"index":0,"type":"invoke","process":3,"f":"txn","value":[["append","x",1],["r","x",null]]}"#;
        let (op, _) = fast(json, Dialect::Json).expect("fast");
        assert_eq!(op.f, Datum::Keyword("txn".into()));
        assert_eq!(op.value.expect("mops")[0].key, Datum::Str("x".into()));
        // A failed attempt leaves the batch as it was.
        let mut batch = OpBatch::default();
        let mut op_at = |b: &[u8]| super::op(b, Dialect::Edn, &EDN_CLASS, &mut batch, (1, 1));
        assert!(op_at(edn).is_some());
        assert!(op_at(b"{:type :ok, :process 0, :value [[:append 1 2] [:r 1 [1 x]]]}").is_none());
        assert!(op_at(edn).is_some());
        assert_eq!(batch.len(), 2);
        assert_eq!(batch.raw(0), batch.raw(1));
        // Anything unusual is left to the general path.
        for odd in [
            &b"{:type :ok, :process 0, :error :x}"[..],
            b"{:type :ok, :process :nemesis}",
            b"{:type :ok, :process 0, :value [[:append 1 1.5]]}",
            b"{:type :ok, :process 0, :index 99999999999999999999}",
            b"{:type :ok, :process 0,\n :index 1}",
            b"{:type :ok, :process 0, :value [[:append 1 2]",
            b"{:type :ok, :type :ok, :process 0}",
            b"{:process 0}",
        ] {
            assert!(
                fast(odd, Dialect::Edn).is_none(),
                "{}",
                String::from_utf8_lossy(odd)
            );
        }
    }

    #[test]
    fn fast_and_general_paths_agree_on_the_conformance_histories() {
        for p in crate::corpus::histories(&crate::corpus::FOLDERS) {
            let dialect = if p.to_string_lossy().ends_with(".edn") {
                Dialect::Edn
            } else {
                Dialect::Json
            };
            let text = std::fs::read_to_string(&p).expect("readable");
            let general = read(text.as_bytes(), dialect, false);
            assert_eq!(
                read(text.as_bytes(), dialect, true),
                general,
                "{}",
                p.display()
            );
        }
    }

    /// Op maps built from pieces that are mostly in the fast path's shape
    /// and sometimes just outside it (or malformed).
    fn arb_ops(json: bool) -> impl Strategy<Value = String> {
        let (kw, nil): (fn(&str) -> String, &str) = if json {
            (|s| format!("\"{s}\""), "null")
        } else {
            (|s| format!(":{s}"), "nil")
        };
        let int = prop_oneof![
            (-3i64..200).prop_map(|i| i.to_string()),
            Just("007".to_string()),
            Just("12345678901234567890".to_string()),
            Just("1.5".to_string()),
            Just("+4".to_string()),
            Just("-".to_string()),
        ];
        let key = prop_oneof![
            int.clone(),
            Just(kw("x")),
            Just("\"y\"".to_string()),
            Just(":z".to_string())
        ];
        let elems = proptest::collection::vec(int.clone(), 0..4).prop_map(|v| v.join(" "));
        let f = prop_oneof![
            Just(kw("append")),
            Just(kw("r")),
            Just(kw("w")),
            Just(kw("cas"))
        ];
        let mop = (
            f,
            key,
            prop_oneof![
                int.clone(),
                Just(nil.to_string()),
                elems.prop_map(|e| format!("[{e}]")),
                Just(String::new()),
                Just(kw("k")),
            ],
        )
            .prop_map(|(f, k, v)| format!("[{f} {k} {v}]"));
        let mops = proptest::collection::vec(mop, 0..4).prop_map(|m| format!("[{}]", m.join(" ")));
        let ty = prop_oneof![
            Just(kw("invoke")),
            Just(kw("ok")),
            Just(kw("fail")),
            Just(kw("info")),
            Just(kw("bad"))
        ];
        let field = prop_oneof![
            int.clone()
                .prop_map(move |i| format!("{} {i}", kw("index"))),
            int.clone().prop_map(move |i| format!("{} {i}", kw("time"))),
            ty.prop_map(move |t| format!("{} {t}", kw("type"))),
            prop_oneof![int.clone(), Just(kw("nemesis"))]
                .prop_map(move |p| format!("{} {p}", kw("process"))),
            prop_oneof![Just(kw("txn")), Just(nil.to_string())]
                .prop_map(move |f| format!("{} {f}", kw("f"))),
            prop_oneof![mops, Just(nil.to_string())]
                .prop_map(move |m| format!("{} {m}", kw("value"))),
            Just(format!("{} {nil}", kw("error"))),
        ];
        let sep = if json { ":" } else { " " };
        let regular = Just(
            [
                "index 1",
                "time 5",
                "type ok",
                "process 2",
                "f txn",
                "value [[append 1 2] [r 1 [2 3]] [r :k nil]]",
            ]
            .map(|f| {
                let (k, v) = f.split_once(' ').expect("a field");
                let v = v
                    .replace("ok", &kw("ok"))
                    .replace("txn", &kw("txn"))
                    .replace("append", &kw("append"));
                let v = v
                    .replace("[r ", &format!("[{} ", kw("r")))
                    .replace("nil", nil)
                    .replace(":k", &kw("k"));
                format!("{} {v}", kw(k))
            })
            .to_vec(),
        );
        let fields = prop_oneof![
            proptest::collection::vec(field.clone(), 0..8),
            (
                regular,
                proptest::collection::vec(field, 0..2),
                0usize..6,
                0usize..6
            )
                .prop_map(|(mut r, extra, i, j)| {
                    r.swap(i, j);
                    if extra.len() == 1 {
                        r[i] = extra[0].clone();
                    }
                    r
                }),
        ];
        let op = fields.prop_map(move |fs: Vec<String>| {
            let fs: Vec<String> = fs.into_iter().map(|f| f.replacen(' ', sep, 1)).collect();
            format!("{{{}}}", fs.join(", "))
        });
        proptest::collection::vec((op, prop_oneof![Just("\n"), Just(" "), Just("\n\n")]), 1..4)
            .prop_map(|ops| ops.into_iter().map(|(o, s)| o + s).collect::<String>())
    }

    /// Runs `n` samples of `arb_ops(json)` through [`agree`]; returns how
    /// many ops the fast path took.
    fn agree_on_samples(json: bool, n: usize) -> usize {
        use proptest::strategy::ValueTree;
        use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
        let dialect = if json { Dialect::Json } else { Dialect::Edn };
        let mut runner = TestRunner::new_with_rng(
            Config::default(),
            TestRng::deterministic_rng(RngAlgorithm::ChaCha),
        );
        let strategy = arb_ops(json);
        let mut took = 0;
        for _ in 0..n {
            let text = strategy.new_tree(&mut runner).expect("a sample").current();
            agree(&text, dialect);
            took += text
                .split('\n')
                .filter(|l| l.starts_with('{') && fast(l.as_bytes(), dialect).is_some())
                .count();
        }
        took
    }

    #[test]
    fn fast_and_general_paths_agree_on_random_ops() {
        for json in [false, true] {
            let fast = agree_on_samples(json, 3000);
            // The samples do exercise the fast path, not only the fallback.
            assert!(
                fast > 1000,
                "json {json}: only {fast} ops took the fast path"
            );
        }
    }
}
