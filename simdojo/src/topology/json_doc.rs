//! Reading JSON (with comments and trailing commas) into the spanned document tree,
//! with `jsonc-parser`'s AST, whose nodes carry byte ranges.

use jsonc_parser::ast::{ObjectPropName, Value as JValue};
use jsonc_parser::{CollectOptions, ParseOptions};

use crate::topology::document::{Entry, Node, Value};
use crate::topology::error::{DiagnosticKind, Problem};
use crate::topology::source::{FileIdx, Span};

/// Parses `text` (file `file`) into a node, or returns the first error with its byte
/// offset.
pub(crate) fn parse(text: &str, file: FileIdx) -> Result<Node, (usize, Problem)> {
    // A UTF-8 byte-order mark (editors on Windows write one) is not JSON: read it as three
    // spaces, so that byte offsets (and so lines and columns) stay those of the file.
    let unmarked;
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => {
            unmarked = format!("   {rest}");
            unmarked.as_str()
        }
        None => text,
    };
    let result =
        jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &ParseOptions::default()).map_err(|e| {
            (
                e.range().start,
                Problem::new(DiagnosticKind::Syntax, format!("JSON syntax error: {}", e.kind()), "valid JSON"),
            )
        })?;
    let Some(root) = result.value else {
        return Err((0, Problem::new(DiagnosticKind::Syntax, "the file holds no JSON value", "a JSON object")));
    };
    let mut errors = Vec::new();
    let node = convert(&root, file, &mut errors);
    match errors.into_iter().next() {
        Some(first) => Err(first),
        None => Ok(node),
    }
}

fn span(r: jsonc_parser::common::Range, file: FileIdx) -> Span {
    Span { file, start: r.start, end: r.end }
}

fn convert(v: &JValue<'_>, file: FileIdx, errors: &mut Vec<(usize, Problem)>) -> Node {
    match v {
        JValue::StringLit(s) => Node { span: span(s.range, file), value: Value::Str(s.value.to_string()) },
        JValue::BooleanLit(b) => Node { span: span(b.range, file), value: Value::Bool(b.value) },
        JValue::NullKeyword(n) => Node { span: span(n.range, file), value: Value::Other("null") },
        JValue::NumberLit(n) => {
            let sp = span(n.range, file);
            let value = number(n.value).unwrap_or_else(|| {
                errors.push((
                    sp.start,
                    Problem::new(
                        DiagnosticKind::Syntax,
                        format!("number {} cannot be represented", n.value),
                        "a 64-bit integer or a finite number",
                    ),
                ));
                Value::Other("a malformed number")
            });
            Node { span: sp, value }
        }
        JValue::Array(a) => Node {
            span: span(a.range, file),
            value: Value::Array(a.elements.iter().map(|e| convert(e, file, errors)).collect()),
        },
        JValue::Object(o) => {
            let mut entries: Vec<Entry> = Vec::with_capacity(o.properties.len());
            for p in &o.properties {
                let (key, key_range) = match &p.name {
                    ObjectPropName::String(s) => (s.value.to_string(), s.range),
                    ObjectPropName::Word(w) => (w.value.to_string(), w.range),
                };
                if entries.iter().any(|e| e.key == key) {
                    errors.push((
                        key_range.start,
                        Problem::new(
                            DiagnosticKind::Syntax,
                            format!("duplicate key `{key}`"),
                            "each key once per object",
                        ),
                    ));
                }
                entries.push(Entry { key, key_span: span(key_range, file), node: convert(&p.value, file, errors) });
            }
            Node { span: span(o.range, file), value: Value::Table(entries) }
        }
    }
}

/// A JSON number literal as an integer when it is written as one, else a float.
fn number(text: &str) -> Option<Value> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        let magnitude = i128::from_str_radix(hex, 16).ok()?;
        let n = if negative { -magnitude } else { magnitude };
        return i64::try_from(n).ok().map(Value::Int);
    }
    if body.bytes().all(|b| b.is_ascii_digit()) && !body.is_empty() {
        return text.trim_start_matches('+').parse::<i64>().ok().map(Value::Int);
    }
    let x: f64 = text.trim_start_matches('+').parse().ok()?;
    x.is_finite().then_some(Value::Float(x))
}
