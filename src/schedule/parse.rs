//! Readers for schedules: textbook notation (one schedule per line) and JSON
//! lines (one operation per line, the whole input one schedule).

use super::{ItemId, Op, OpKind, Schedule};
use rustc_hash::FxHashMap;

/// Bad input, with the 1-based line and column (in characters) of the
/// offending token.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// A token of the textbook notation that could not be read.
    #[error("line {line}, column {column}: {message}")]
    Syntax {
        line: u32,
        column: u32,
        message: String,
    },
    /// A transaction acts after it committed or aborted (or ends twice).
    #[error(
        "line {line}, column {column}: `{op}` comes after T{txn} {ended} \
         (line {end_line}, column {end_column})"
    )]
    AfterEnd {
        line: u32,
        column: u32,
        op: String,
        txn: u32,
        /// `"committed"` or `"aborted"`.
        ended: &'static str,
        end_line: u32,
        end_column: u32,
    },
    /// A JSON line that is not valid JSON or not a valid operation.
    #[error("line {line}, column {column}: {message}")]
    Json {
        line: u32,
        column: u32,
        message: String,
    },
}

impl ScheduleError {
    /// `(line, column)` of the bad token, both 1-based.
    pub fn position(&self) -> (u32, u32) {
        match *self {
            ScheduleError::Syntax { line, column, .. }
            | ScheduleError::AfterEnd { line, column, .. }
            | ScheduleError::Json { line, column, .. } => (line, column),
        }
    }
}

/// The error, the offending line of `text`, and a caret under the bad
/// column: what `isolde schedule` shows for a line it cannot read.
pub fn render_error(text: &str, e: &ScheduleError) -> String {
    let (line, column) = e.position();
    let mut s = format!("error: {e}\n");
    if let Some(src) = text.lines().nth(line.saturating_sub(1) as usize) {
        let pad: String = src
            .chars()
            .take(column.saturating_sub(1) as usize)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        s.push_str(&format!("  {src}\n  {pad}^\n"));
    }
    s
}

/// Reads every schedule in `text`.
///
/// If the first line that is neither blank nor a `#` comment starts with `{`,
/// the input is JSON lines: one operation per line
/// (`{"txn":1,"op":"r","item":"x"}`; `op` is `r`, `w`, `c` or `a`, or
/// `read`/`write`/`commit`/`abort`; `item` only for reads and writes; other
/// fields ignored), and the whole input is one schedule.
///
/// Otherwise each non-blank line is one schedule in textbook notation:
/// operations `r1(x)`, `w2[y]`, `c1`, `a2` (letters in either case, or the
/// words `read`, `write`, `commit`, `abort`), separated by spaces, commas or
/// semicolons; `#` starts a comment. Item names are any characters but
/// spaces and brackets, case-sensitive, surrounding spaces ignored.
///
/// Input with no operations gives an empty list.
pub fn parse_schedules(text: &str) -> Result<Vec<Schedule>, ScheduleError> {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    match first {
        None => Ok(Vec::new()),
        Some(l) if l.starts_with('{') => Ok(vec![parse_json_lines(text)?]),
        Some(_) => parse_schedule_lines(text).into_iter().collect(),
    }
}

/// Reads each schedule of `text` on its own, so that one bad line does not
/// hide the others: one result per line that holds operations, in order.
/// JSON-lines input is one schedule, read as [`parse_schedules`] does.
pub fn parse_schedule_lines(text: &str) -> Vec<Result<Schedule, ScheduleError>> {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    if first.is_some_and(|l| l.starts_with('{')) {
        return vec![parse_json_lines(text)];
    }
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = (i + 1) as u32;
        let mut b = Builder::new(line_no);
        match parse_textbook_line(line_no, line, &mut b) {
            Err(e) => out.push(Err(e)),
            Ok(()) if !b.ops.is_empty() => out.push(b.finish()),
            Ok(()) => {}
        }
    }
    out
}

/// Collects ops and interns item names for one schedule.
struct Builder {
    ops: Vec<Op>,
    items: Vec<String>,
    ids: FxHashMap<String, ItemId>,
    line: u32,
}

impl Builder {
    fn new(line: u32) -> Self {
        Builder {
            ops: Vec::new(),
            items: Vec::new(),
            ids: FxHashMap::default(),
            line,
        }
    }

    fn item(&mut self, name: &str) -> ItemId {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.items.len() as ItemId;
        self.items.push(name.to_string());
        self.ids.insert(name.to_string(), id);
        id
    }

    /// Checks that no transaction acts after its end, then builds.
    fn finish(self) -> Result<Schedule, ScheduleError> {
        let mut ends: FxHashMap<u32, &Op> = FxHashMap::default();
        for op in &self.ops {
            if let Some(end) = ends.get(&op.txn) {
                let op_text = super::op_notation(
                    op.kind,
                    op.txn,
                    op.item.map(|it| self.items[it as usize].as_str()),
                );
                return Err(ScheduleError::AfterEnd {
                    line: op.line,
                    column: op.column,
                    op: op_text,
                    txn: op.txn,
                    ended: if end.kind == OpKind::Commit {
                        "committed"
                    } else {
                        "aborted"
                    },
                    end_line: end.line,
                    end_column: end.column,
                });
            }
            if matches!(op.kind, OpKind::Commit | OpKind::Abort) {
                ends.insert(op.txn, op);
            }
        }
        Ok(Schedule {
            ops: self.ops,
            items: self.items,
            line: self.line,
        })
    }
}

fn syntax(line: u32, column: usize, message: String) -> ScheduleError {
    ScheduleError::Syntax {
        line,
        column: column as u32,
        message,
    }
}

fn kind_of_word(word: &str) -> Option<OpKind> {
    match word.to_ascii_lowercase().as_str() {
        "r" | "read" => Some(OpKind::Read),
        "w" | "write" => Some(OpKind::Write),
        "c" | "commit" => Some(OpKind::Commit),
        "a" | "abort" => Some(OpKind::Abort),
        _ => None,
    }
}

/// One line of textbook notation. Columns are 1-based character indices.
fn parse_textbook_line(line_no: u32, line: &str, b: &mut Builder) -> Result<(), ScheduleError> {
    let cs: Vec<char> = line.chars().collect();
    let mut i = 0;
    loop {
        while i < cs.len() && (cs[i].is_whitespace() || cs[i] == ',' || cs[i] == ';') {
            i += 1;
        }
        if i >= cs.len() || cs[i] == '#' {
            return Ok(());
        }
        let start = i;
        while i < cs.len() && cs[i].is_ascii_alphabetic() {
            i += 1;
        }
        if i == start {
            return Err(syntax(
                line_no,
                start + 1,
                format!(
                    "unexpected `{}`: expected an operation such as r1(x), w2(y), c1 or a2",
                    cs[start]
                ),
            ));
        }
        let word: String = cs[start..i].iter().collect();
        let kind = kind_of_word(&word).ok_or_else(|| {
            syntax(
                line_no,
                start + 1,
                format!("unknown operation `{word}`: expected r, w, c or a (read, write, commit, abort)"),
            )
        })?;
        let digits_at = i;
        while i < cs.len() && cs[i].is_ascii_digit() {
            i += 1;
        }
        if i == digits_at {
            return Err(syntax(
                line_no,
                digits_at + 1,
                format!("expected a transaction number after `{word}`, as in {word}1"),
            ));
        }
        let digits: String = cs[digits_at..i].iter().collect();
        let txn: u32 = digits.parse().map_err(|_| {
            syntax(
                line_no,
                digits_at + 1,
                format!("transaction number {digits} is too large"),
            )
        })?;
        let mut item = None;
        let opens = i < cs.len() && (cs[i] == '(' || cs[i] == '[');
        match kind {
            OpKind::Read | OpKind::Write => {
                if !opens {
                    return Err(syntax(
                        line_no,
                        i + 1,
                        format!("expected `(` or `[` and an item after `{word}{digits}`, as in {word}{digits}(x)"),
                    ));
                }
                let close = if cs[i] == '(' { ')' } else { ']' };
                let open_at = i;
                let skip_spaces = |mut k: usize| {
                    while k < cs.len() && cs[k].is_whitespace() {
                        k += 1;
                    }
                    k
                };
                let name_at = skip_spaces(i + 1);
                // An item name holds no space or bracket, so an unclosed
                // `r1(x w2(x)` is an error here, not an item `x w2(x`.
                let mut name_end = name_at;
                while name_end < cs.len() && !is_item_end(cs[name_end]) {
                    name_end += 1;
                }
                let j = skip_spaces(name_end);
                if j >= cs.len() || cs[j] != close {
                    return Err(syntax(
                        line_no,
                        open_at + 1,
                        format!(
                            "`{}` is not closed by `{close}` (item names hold no spaces or brackets)",
                            cs[open_at]
                        ),
                    ));
                }
                let name: String = cs[name_at..name_end].iter().collect();
                let name = name.as_str();
                if name.is_empty() {
                    return Err(syntax(line_no, open_at + 2, "empty item name".to_string()));
                }
                item = Some(b.item(name));
                i = j + 1;
            }
            OpKind::Commit | OpKind::Abort => {
                if opens {
                    return Err(syntax(
                        line_no,
                        i + 1,
                        format!("`{word}{digits}` takes no item"),
                    ));
                }
            }
        }
        b.ops.push(Op {
            txn,
            kind,
            item,
            line: line_no,
            column: (start + 1) as u32,
        });
    }
}

/// Whether `c` ends an item name: a space or any bracket.
fn is_item_end(c: char) -> bool {
    c.is_whitespace() || matches!(c, '(' | ')' | '[' | ']')
}

/// 1-based character column of byte offset `byte` in `line`.
fn char_column(line: &str, byte: usize) -> u32 {
    line.char_indices().take_while(|&(b, _)| b < byte).count() as u32 + 1
}

/// Column of the first non-blank character of `line`.
fn start_column(line: &str) -> u32 {
    char_column(line, line.len() - line.trim_start().len())
}

/// Column of `"key"` used as a key in a one-line JSON object, or of the
/// object's first character when it cannot be found.
fn key_column(line: &str, key: &str) -> u32 {
    let pat = format!("\"{key}\"");
    let mut from = 0;
    while let Some(off) = line[from..].find(&pat) {
        let at = from + off;
        if line[at + pat.len()..].trim_start().starts_with(':') {
            return char_column(line, at);
        }
        from = at + pat.len();
    }
    start_column(line)
}

fn parse_json_lines(text: &str) -> Result<Schedule, ScheduleError> {
    let mut b = Builder::new(1);
    let mut first = true;
    for (i, line) in text.lines().enumerate() {
        let line_no = (i + 1) as u32;
        if line.trim().is_empty() {
            continue;
        }
        if first {
            b.line = line_no;
            first = false;
        }
        let jerr = |column: u32, message: String| ScheduleError::Json {
            line: line_no,
            column,
            message,
        };
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| {
            // serde_json counts columns in bytes; report characters. At the
            // end of the line, point just past it.
            let byte = if e.is_eof() {
                line.trim_end().len()
            } else {
                e.column().saturating_sub(1)
            };
            jerr(char_column(line, byte), format!("invalid JSON: {e}"))
        })?;
        let obj = v.as_object().ok_or_else(|| {
            jerr(
                start_column(line),
                "expected an object such as {\"txn\":1,\"op\":\"r\",\"item\":\"x\"}".to_string(),
            )
        })?;
        let txn = match obj.get("txn") {
            None => return Err(jerr(start_column(line), "missing field \"txn\"".into())),
            Some(t) => t
                .as_u64()
                .and_then(|t| u32::try_from(t).ok())
                .ok_or_else(|| {
                    jerr(
                        key_column(line, "txn"),
                        format!(
                            "\"txn\" must be a transaction number (0 to {}), not {t}",
                            u32::MAX
                        ),
                    )
                })?,
        };
        let kind = match obj.get("op") {
            None => return Err(jerr(start_column(line), "missing field \"op\"".into())),
            Some(o) => o.as_str().and_then(kind_of_word).ok_or_else(|| {
                jerr(
                    key_column(line, "op"),
                    format!("\"op\" must be \"r\", \"w\", \"c\" or \"a\", not {o}"),
                )
            })?,
        };
        let item = match (kind, obj.get("item")) {
            (OpKind::Read | OpKind::Write, None | Some(serde_json::Value::Null)) => {
                return Err(jerr(
                    start_column(line),
                    "missing field \"item\" for a read or write".into(),
                ))
            }
            (OpKind::Read | OpKind::Write, Some(it)) => {
                let name = match it {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Number(n) => n.to_string(),
                    other => {
                        return Err(jerr(
                            key_column(line, "item"),
                            format!("\"item\" must be a string or a number, not {other}"),
                        ))
                    }
                };
                if name.is_empty() {
                    return Err(jerr(key_column(line, "item"), "empty item name".into()));
                }
                Some(b.item(&name))
            }
            (_, None | Some(serde_json::Value::Null)) => None,
            (_, Some(_)) => {
                return Err(jerr(
                    key_column(line, "item"),
                    "a commit or abort takes no \"item\"".into(),
                ))
            }
        };
        b.ops.push(Op {
            txn,
            kind,
            item,
            line: line_no,
            column: start_column(line),
        });
    }
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Schedule {
        let mut v = parse_schedules(text).unwrap();
        assert_eq!(v.len(), 1);
        v.pop().unwrap()
    }

    fn err_at(text: &str) -> (u32, u32) {
        parse_schedules(text).unwrap_err().position()
    }

    #[test]
    fn notations_agree() {
        let a = one("r1(x) w2(x) w1(x) c1 c2");
        for text in [
            "r1[x], w2[x], w1[x], c1, c2",
            "R1(x) W2(x) W1(x) C1 C2",
            "r1(x)w2(x)w1(x) c1;c2",
            "read1(x) write2( x ) write1[x] commit1 commit2",
        ] {
            let b = one(text);
            assert_eq!(b.to_string(), a.to_string(), "{text}");
        }
        assert_eq!(a.to_string(), "r1(x) w2(x) w1(x) c1 c2");
    }

    #[test]
    fn item_names_are_case_sensitive_and_free_form() {
        let s = one("R1(X) w1(x) r2(account_A) w2[a.b-c]");
        assert_eq!(s.items(), ["X", "x", "account_A", "a.b-c"]);
    }

    #[test]
    fn item_names_hold_no_spaces_or_brackets() {
        // Read as one item `x w2(x` this was conflict serializable.
        assert_eq!(err_at("r1(x w2(x) w1(x) c1 c2"), (1, 3));
        assert_eq!(err_at("w1[f(x)] c1"), (1, 3));
        assert_eq!(err_at("c1 w1[x)]"), (1, 6));
        assert_eq!(one("r1( y ) w1(x)").items(), ["y", "x"]);
        assert!(parse_schedules("r1(x w2(x)")
            .unwrap_err()
            .to_string()
            .contains("`(` is not closed by `)`"));
    }

    #[test]
    fn each_line_is_read_on_its_own() {
        let v = parse_schedule_lines("r1(x) c1\nr1(x w2(x)\n\nw2(y) c2");
        assert_eq!(v.len(), 3);
        assert!(v[0].is_ok() && v[2].is_ok());
        assert_eq!(v[1].as_ref().unwrap_err().position(), (2, 3));
    }

    #[test]
    fn one_schedule_per_line_with_comments() {
        let v = parse_schedules("# lost update\nr1(x) r2(x) w1(x) w2(x)\n\n  w1(y) c1 # tail\n")
            .unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].line(), 2);
        assert_eq!(v[1].line(), 4);
        assert_eq!(v[1].ops()[0].column, 3);
        assert!(parse_schedules("  \n# only a comment\n")
            .unwrap()
            .is_empty());
    }

    #[test]
    fn bad_token_positions() {
        assert_eq!(err_at("r1(x) x2(y)"), (1, 7));
        assert_eq!(err_at("r1(x)\nr1(x) w(y)"), (2, 8));
        assert_eq!(err_at("r1 x"), (1, 3));
        assert_eq!(err_at("r1(x) w2(y"), (1, 9));
        assert_eq!(err_at("r1() "), (1, 4));
        assert_eq!(err_at("c1(x)"), (1, 3));
        assert_eq!(err_at("r1(x) 7"), (1, 7));
        assert_eq!(err_at("r99999999999(x)"), (1, 2));
        // columns count characters, not bytes
        assert_eq!(err_at("r1(ä) ?"), (1, 7));
    }

    #[test]
    fn ops_after_the_end_are_rejected() {
        let e = parse_schedules("w1(x) c1 r1(y)").unwrap_err();
        assert_eq!(e.position(), (1, 10));
        assert!(e.to_string().contains("after T1 committed"), "{e}");
        assert_eq!(err_at("a1 c1"), (1, 4));
        // another line is another schedule: T1 starts over
        assert_eq!(parse_schedules("w1(x) c1\nw1(x) c1").unwrap().len(), 2);
    }

    #[test]
    fn json_lines() {
        let text = "{\"txn\":1,\"op\":\"r\",\"item\":\"x\"}\n\n{\"txn\":2,\"op\":\"write\",\"item\":\"x\"}\n{\"txn\":1,\"op\":\"c\"}\n{\"txn\":2,\"op\":\"a\",\"item\":null}";
        let s = one(text);
        assert_eq!(s.to_string(), "r1(x) w2(x) c1 a2");
        assert_eq!(s.ops()[2].line, 4);
        let numeric = one("{\"txn\":3,\"op\":\"W\",\"item\":7,\"value\":1}");
        assert_eq!(numeric.to_string(), "w3(7)");
    }

    #[test]
    fn json_error_positions() {
        assert_eq!(
            err_at("{\"txn\":1,\"op\":\"r\",\"item\":\"x\"}\n{\"txn\":1,"),
            (2, 10)
        );
        assert_eq!(err_at("{\"txn\":1, \"op\":\"q\",\"item\":\"x\"}"), (1, 11));
        assert_eq!(err_at("{\"txn\":-1,\"op\":\"r\",\"item\":\"x\"}"), (1, 2));
        assert_eq!(err_at("  {\"op\":\"r\",\"item\":\"x\"}"), (1, 3));
        assert_eq!(err_at("{\"txn\":1,\"op\":\"c\",\"item\":\"x\"}"), (1, 19));
        assert_eq!(err_at("{\"txn\":1,\"op\":\"r\"}"), (1, 1));
        let e =
            parse_schedules("{\"txn\":1,\"op\":\"c\"}\n{\"txn\":1,\"op\":\"w\",\"item\":\"x\"}")
                .unwrap_err();
        assert!(
            matches!(
                e,
                ScheduleError::AfterEnd {
                    line: 2,
                    txn: 1,
                    ..
                }
            ),
            "{e}"
        );
    }
}
