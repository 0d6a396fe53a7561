//! elle-cli's JSON histories: one array of op objects, or one object per
//! line (JSON lines), e.g.
//! `{"index":0,"type":"ok","process":0,"f":"txn","value":[["append","x",1]]}`.
//!
//! Normalised as elle-cli's `read-json-history` does: the field names, the
//! `type`, the `f` and each micro-op's function become keywords; every
//! other string stays a string (the key `"x"` is `Datum::Str("x")`, not
//! `:x`). `time` (nanoseconds) is optional, as in EDN.
//!
//! Both shapes stream: the shared tokenizer (see `scan.rs`) hands out one op
//! object at a time, whether it sits on its own line or inside the array.

use super::edn::EdnReader;
use super::error::ReadError;
use super::raw::RawOp;
use super::scan::Dialect;
use std::io::Read;

/// Streams the ops of a JSON or JSON-lines history.
pub struct JsonReader<R>(EdnReader<R>);

impl<R: Read> JsonReader<R> {
    /// `file` names the input in error messages.
    pub fn new(input: R, file: &str) -> Self {
        JsonReader(EdnReader::with_dialect(input, file, Dialect::Json))
    }

    /// The next op, or `None` at the end of the history.
    pub fn next_op(&mut self) -> Result<Option<RawOp>, ReadError> {
        self.0.next_op()
    }
}

impl<R: Read> Iterator for JsonReader<R> {
    type Item = Result<RawOp, ReadError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_op().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::raw::{OpType, RawMop, RawValue};
    use crate::history::{Datum, MopKind};

    fn ops(text: &str) -> Result<Vec<RawOp>, ReadError> {
        let whole: Result<Vec<RawOp>, ReadError> =
            JsonReader::new(text.as_bytes(), "t.json").collect();
        // Byte by byte too: elements and lines must stream across chunks.
        let bytewise: Result<Vec<RawOp>, ReadError> = JsonReader::new(
            crate::history::scan::tests::OneByte(text.as_bytes()),
            "t.json",
        )
        .collect();
        assert_eq!(
            whole.as_ref().map_err(|e| e.to_string()),
            bytewise.as_ref().map_err(|e| e.to_string())
        );
        whole
    }

    fn err(text: &str) -> String {
        ops(text).expect_err("should fail").to_string()
    }

    const OP: &str = r#"{"index":0,"type":"ok","process":0,"f":"txn","time":12,"value":[["append","x",1],["r","x",[1]],["r","y",null],["w",3,-2.5]]}"#;

    #[test]
    fn elle_cli_normalisation_keywords_only_type_f_and_functions() {
        let o = &ops(OP).unwrap()[0];
        assert_eq!(o.index, Some(0));
        assert_eq!(o.time, Some(12));
        assert_eq!(o.kind, OpType::Ok);
        assert_eq!(o.process, Datum::Int(0));
        assert_eq!(o.f, Datum::Keyword("txn".into()));
        let m = o.value.as_ref().unwrap();
        assert_eq!(
            m[0],
            RawMop {
                kind: MopKind::Append,
                key: Datum::Str("x".into()),
                value: RawValue::Scalar(Datum::Int(1))
            }
        );
        assert_eq!(m[1].value, RawValue::Ints(vec![1]));
        assert_eq!(m[2].value, RawValue::Nil);
        assert_eq!(m[3].key, Datum::Int(3));
        assert_eq!(m[3].value, RawValue::Scalar(Datum::Float("-2.5".into())));
    }

    #[test]
    fn json_lines_and_one_array_give_the_same_ops() {
        let lines = format!("{OP}\n{OP}\n");
        let array = format!("[\n  {OP},\n  {OP}\n]\n");
        let a = ops(&lines).unwrap();
        let b = ops(&array).unwrap();
        assert_eq!(a.len(), 2);
        assert_eq!(
            a.iter().map(|o| &o.value).collect::<Vec<_>>(),
            b.iter().map(|o| &o.value).collect::<Vec<_>>()
        );
        assert_eq!((b[1].line, b[1].col), (3, 3));
        assert!(ops("[]").unwrap().is_empty());
    }

    #[test]
    fn strings_escapes_and_other_values() {
        let o = &ops(r#"{"type":"info","process":"nemesis","f":"kill","value":{"n1":"a\"b\u00e9","n2":[true,false,null,1e2]}}"#)
            .unwrap()[0];
        assert_eq!(o.process, Datum::Str("nemesis".into()));
        assert!(!o.is_client());
        assert_eq!(o.f, Datum::Keyword("kill".into()));
    }

    #[test]
    fn big_integers() {
        let o = &ops(r#"{"type":"ok","process":0,"value":[["w",1,123456789012345678901234]]}"#)
            .unwrap()[0];
        assert_eq!(
            o.value.as_ref().unwrap()[0].value,
            RawValue::Scalar(Datum::BigInt("123456789012345678901234".into()))
        );
    }

    #[test]
    fn syntax_errors() {
        assert_eq!(
            err(r#"{"type" "ok"}"#),
            "t.json:1:9: expected `:` after the map key"
        );
        assert_eq!(
            err(r#"{1: 2}"#),
            "t.json:1:2: expected a map key (a string)"
        );
        assert_eq!(err(r#"{"a":: 2}"#), "t.json:1:6: unexpected `:`");
        assert_eq!(err(r#"{"a": :b}"#), "t.json:1:7: unexpected `:`");
        assert_eq!(
            err(r#"{"a": nil}"#),
            "t.json:1:7: expected a value, got `nil`"
        );
        assert_eq!(
            err(r#"{"a": +1}"#),
            "t.json:1:7: expected a value, got `+1`"
        );
        assert!(err(r#"{"a": 01}"#).contains("leading zero"));
        assert_eq!(
            err("[{\"type\": \"ok\"}"),
            "t.json:1:1: unterminated vector of ops: no `]` before the end of input"
        );
        assert_eq!(
            err("{\"a\": (1)}"),
            "t.json:1:7: expected a value, got `(1`"
        );
        assert_eq!(
            err("; no comments\n{}"),
            "t.json:1:1: expected an op map {...}, got `;`"
        );
        assert_eq!(err("{\"a\": \"x"), "t.json:1:7: unterminated string");
    }

    #[test]
    fn op_errors_quote_json_names() {
        assert_eq!(
            err(r#"{"type":"foo","process":1}"#),
            r#"t.json:1:9: expected "type" to be one of "invoke" "ok" "fail" "info", got "foo""#
        );
        assert_eq!(
            err(r#"{"type":"ok","process":1,"value":[["cas","x",1]]}"#),
            "t.json:1:36: unknown micro-op function :cas (expected :append, :r or :w)"
        );
        assert_eq!(err(r#"{"process":1}"#), "t.json:1:1: op has no \"type\"");
    }
}
