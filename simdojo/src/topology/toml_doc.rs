//! Reading TOML text into the spanned document tree, with the `toml` crate's
//! span-preserving parser.

use std::borrow::Cow;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::topology::document::{Entry, Node, Value};
use crate::topology::error::{DiagnosticKind, Problem};
use crate::topology::source::{FileIdx, Span};

/// Parses `text` (file `file`) into a table node, or returns the first syntax error
/// with its byte offset.
pub(crate) fn parse(text: &str, file: FileIdx) -> Result<Node, (usize, Problem)> {
    let root = DeTable::parse(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        let message = e.message().trim_end_matches('\n').replace('\n', " ");
        (offset, Problem::new(DiagnosticKind::Syntax, format!("TOML syntax error: {message}"), "valid TOML"))
    })?;
    let span = root.span();
    let mut errors = Vec::new();
    let entries = table(root.get_ref(), file, &mut errors);
    if let Some(first) = errors.into_iter().next() {
        return Err(first);
    }
    Ok(Node { span: Span { file, start: span.start, end: span.end }, value: Value::Table(entries) })
}

fn span_of<T>(s: &Spanned<T>, file: FileIdx) -> Span {
    let r = s.span();
    Span { file, start: r.start, end: r.end }
}

fn table(t: &DeTable<'_>, file: FileIdx, errors: &mut Vec<(usize, Problem)>) -> Vec<Entry> {
    let mut entries: Vec<Entry> = t
        .iter()
        .map(|(k, v)| Entry { key: k.get_ref().to_string(), key_span: span_of(k, file), node: node(v, file, errors) })
        .collect();
    // The parser keeps keys sorted by name; the topology format needs source order
    // (nested `for` variables), which the key spans give.
    entries.sort_by_key(|e| e.key_span.start);
    entries
}

fn node(v: &Spanned<DeValue<'_>>, file: FileIdx, errors: &mut Vec<(usize, Problem)>) -> Node {
    let span = span_of(v, file);
    let value = match v.get_ref() {
        DeValue::String(s) => Value::Str(Cow::to_string(s)),
        DeValue::Integer(i) => match i64::from_str_radix(&i.as_str().replace('_', ""), i.radix()) {
            Ok(n) => Value::Int(n),
            Err(_) => {
                errors.push((
                    span.start,
                    Problem::new(
                        DiagnosticKind::Syntax,
                        format!("integer {i} does not fit in 64 bits"),
                        "an integer between -2^63 and 2^63-1",
                    ),
                ));
                Value::Other("an integer out of range")
            }
        },
        DeValue::Float(x) => match x.as_str().replace('_', "").parse::<f64>() {
            Ok(f) => Value::Float(f),
            Err(e) => {
                errors.push((
                    span.start,
                    Problem::new(DiagnosticKind::Syntax, format!("bad float {x}: {e}"), "a number"),
                ));
                Value::Other("a malformed number")
            }
        },
        DeValue::Boolean(b) => Value::Bool(*b),
        DeValue::Datetime(_) => Value::Other("a datetime"),
        DeValue::Array(a) => Value::Array(a.iter().map(|e| node(e, file, errors)).collect()),
        DeValue::Table(t) => Value::Table(table(t, file, errors)),
    };
    Node { span, value }
}
