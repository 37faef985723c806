//! The spanned document tree that both TOML and JSON topology files are read into.
//!
//! **Architecture Invariant:** everything after parsing works on [`Node`]s only, so
//! TOML and JSON files are checked by the same code and give the same errors.

use crate::topology::error::{DiagnosticKind, Problem};
use crate::topology::source::Span;

/// A value with the span it was written at.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub(crate) span: Span,
    pub(crate) value: Value,
}

/// A key of a table with the span of the key and its value.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) key: String,
    pub(crate) key_span: Span,
    pub(crate) node: Node,
}

/// A document value.
#[derive(Clone, Debug)]
pub(crate) enum Value {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Array(Vec<Node>),
    /// Entries in source order.
    Table(Vec<Entry>),
    /// A value the topology format has no use for (a TOML datetime, a JSON null).
    Other(&'static str),
}

impl Node {
    /// What kind of value this is, for "found ..." in messages.
    pub(crate) fn describe(&self) -> String {
        match &self.value {
            Value::Str(s) => format!("string {s:?}"),
            Value::Int(i) => format!("integer {i}"),
            Value::Float(x) => format!("number {x}"),
            Value::Bool(b) => format!("boolean {b}"),
            Value::Array(_) => "an array".to_string(),
            Value::Table(_) => "a table".to_string(),
            Value::Other(what) => (*what).to_string(),
        }
    }

    /// The entries of a table.
    pub(crate) fn as_table(&self) -> Option<&[Entry]> {
        match &self.value {
            Value::Table(entries) => Some(entries),
            _ => None,
        }
    }

    /// The entry `key` of a table.
    pub(crate) fn entry(&self, key: &str) -> Option<&Entry> {
        self.as_table()?.iter().find(|e| e.key == key)
    }

    /// The value of `key` of a table.
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.node)
    }

    /// The string value.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The problem "`what` is X; expected `expected`".
    pub(crate) fn wrong(&self, what: &str, expected: impl Into<String>) -> Problem {
        Problem::new(DiagnosticKind::WrongValue, format!("{what} is {}", self.describe()), expected)
    }
}
