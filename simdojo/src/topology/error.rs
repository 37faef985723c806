//! Topology errors: every problem found in a topology, each with where and what was
//! expected.
//!
//! Loading and validation do not stop at the first problem: they collect
//! [`Diagnostic`]s and return them together as one [`TopologyError`].

use std::collections::HashSet;
use std::fmt;

use crate::topology::SourceLoc;

/// The class of a topology problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DiagnosticKind {
    /// A file could not be read.
    Io,
    /// The TOML or JSON text is malformed.
    Syntax,
    /// A key that the section does not define.
    UnknownKey,
    /// A value of the wrong shape (a table where a string was expected, ...).
    WrongValue,
    /// A component type that is not registered.
    UnknownType,
    /// A parameter the component type does not declare.
    UnknownParam,
    /// A parameter value of the wrong kind or out of range.
    ParamValue,
    /// A required parameter without a value.
    MissingParam,
    /// Two components with the same path.
    DuplicatePath,
    /// A malformed component path, endpoint or index expression.
    BadPath,
    /// A link or fabric names a component that does not exist.
    UnknownComponent,
    /// A link or fabric names a port the component type does not declare.
    UnknownPort,
    /// An array port used without an index, or a scalar port with one.
    PortIndex,
    /// A port used by more than one link or fabric.
    PortReused,
    /// The two ports of a link cannot carry messages in the link's direction.
    Direction,
    /// The two ports of a link (or the members of a fabric) carry different messages.
    MessageType,
    /// A latency below one tick.
    Latency,
    /// The two ends of a link expand to different numbers of ports.
    ZipMismatch,
    /// An empty or reversed index range.
    Range,
    /// An expansion larger than the configured limits.
    TooLarge,
    /// A missing include file or an include cycle.
    Include,
    /// An unknown template or a template inheritance cycle.
    Template,
    /// A `[defaults."TYPE"]` block for a type no component has (a component's type was
    /// changed and its defaults would silently stop applying).
    UnusedDefaults,
    /// A negative or too large partition number.
    Partition,
    /// A weight that is not a positive finite number.
    Weight,
}

/// One problem in a topology.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Diagnostic {
    /// The class of problem.
    pub kind: DiagnosticKind,
    /// Where in a topology file, when the topology came from one.
    pub at: Option<SourceLoc>,
    /// What it is about (a component path, a link), when that helps.
    pub subject: Option<String>,
    /// What is wrong.
    pub problem: String,
    /// What was expected instead.
    pub expected: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(at) = &self.at {
            write!(f, "{at}: ")?;
        }
        if let Some(subject) = &self.subject {
            write!(f, "{subject}: ")?;
        }
        write!(f, "{}; expected {}", self.problem, self.expected)
    }
}

/// How many diagnostics a [`TopologyError`] shows in its `Display`.
const SHOWN: usize = 8;
/// How many diagnostics are kept; the rest are only counted.
const KEPT: usize = 100;

/// A topology could not be loaded or is invalid. Fatal for the run: nothing is built
/// from a topology with errors.
///
/// `Display` shows the first several problems, one per line, each as
/// `FILE:LINE:COL: what is wrong; expected WHAT`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub struct TopologyError {
    diagnostics: Vec<Diagnostic>,
    total: usize,
}

impl TopologyError {
    /// The problems found, in the order found (at most the first hundred).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }
    /// The number of problems found, including those not kept.
    pub fn total(&self) -> usize {
        self.total
    }
    /// The first problem.
    pub fn first(&self) -> &Diagnostic {
        // Invariant: a TopologyError is only made from a non-empty `Diags`.
        &self.diagnostics[0]
    }
}

impl fmt::Display for TopologyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diagnostics.iter().take(SHOWN).enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        let shown = self.diagnostics.len().min(SHOWN);
        if self.total > shown {
            write!(f, "\n({} more errors not shown)", self.total - shown)?;
        }
        Ok(())
    }
}

/// A problem before it is placed: what is wrong and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Problem {
    pub(crate) kind: DiagnosticKind,
    pub(crate) problem: String,
    pub(crate) expected: String,
}

impl Problem {
    pub(crate) fn new(kind: DiagnosticKind, problem: impl Into<String>, expected: impl Into<String>) -> Problem {
        Problem { kind, problem: problem.into(), expected: expected.into() }
    }

    /// The diagnostic for this problem at `at` about `subject`.
    pub(crate) fn place(self, at: Option<SourceLoc>, subject: Option<String>) -> Diagnostic {
        Diagnostic { kind: self.kind, at, subject, problem: self.problem, expected: self.expected }
    }
}

/// The diagnostics collected so far; identical ones are reported once.
#[derive(Default)]
pub(crate) struct Diags {
    list: Vec<Diagnostic>,
    seen: HashSet<String>,
    total: usize,
}

impl Diags {
    /// Records `d` unless an identical diagnostic was recorded before.
    pub(crate) fn push(&mut self, d: Diagnostic) {
        if self.total >= KEPT {
            self.total += 1;
            return;
        }
        if self.seen.insert(d.to_string()) {
            self.total += 1;
            self.list.push(d);
        }
    }

    /// Whether no problem was found.
    pub(crate) fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Ok when no problem was found, else the error listing them.
    pub(crate) fn into_result(self) -> Result<(), TopologyError> {
        if self.list.is_empty() {
            Ok(())
        } else {
            Err(TopologyError { diagnostics: self.list, total: self.total })
        }
    }
}

/// The registered name closest to `name`, as a suggestion for a misspelling.
pub(crate) fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(name, c), c))
        .filter(|&(d, c)| d <= (c.len().max(name.len()) / 3).max(2))
        .min()
        .map(|(_, c)| c)
}

/// `a`, `b`, `c` for a list of names.
pub(crate) fn list_names<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let all: Vec<String> = names.into_iter().map(|n| format!("`{n}`")).collect();
    if all.is_empty() {
        "nothing (none are declared)".to_string()
    } else {
        all.join(", ")
    }
}
