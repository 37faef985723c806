//! Topology source files: their text, and byte spans mapped to line and column.
//!
//! Every value read from a topology file carries a [`Span`] (file and byte range);
//! [`Sources::loc`] turns it into the `file:line:col` of a [`SourceLoc`].

use std::path::PathBuf;
use std::sync::Arc;

use crate::topology::SourceLoc;

/// Index of a file in [`Sources`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct FileIdx(pub(crate) u32);

/// A byte range of one source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Span {
    pub(crate) file: FileIdx,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

impl Span {
    /// The empty span at byte `offset` of `file`.
    pub(crate) fn at(file: FileIdx, offset: usize) -> Span {
        Span { file, start: offset, end: offset }
    }
}

/// One loaded file.
pub(crate) struct SourceFile {
    pub(crate) path: Arc<PathBuf>,
    pub(crate) text: String,
    /// Byte offset of the start of every line.
    line_starts: Vec<usize>,
}

impl SourceFile {
    fn new(path: PathBuf, text: String) -> SourceFile {
        let line_starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        SourceFile { path: Arc::new(path), text, line_starts }
    }

    /// 1-based line and column (in characters) of byte `offset`.
    fn line_col(&self, offset: usize) -> (u32, u32) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_starts.partition_point(|&s| s <= offset).max(1);
        let start = self.line_starts[line - 1];
        let col = self.text[start..offset].chars().count() + 1;
        (u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(col).unwrap_or(u32::MAX))
    }
}

/// All files of one load: the root file and its includes.
#[derive(Default)]
pub(crate) struct Sources {
    files: Vec<SourceFile>,
}

impl Sources {
    /// Adds a file and returns its index.
    pub(crate) fn add(&mut self, path: PathBuf, text: String) -> FileIdx {
        let idx = FileIdx(u32::try_from(self.files.len()).unwrap_or(u32::MAX));
        self.files.push(SourceFile::new(path, text));
        idx
    }

    /// The file `idx`.
    pub(crate) fn file(&self, idx: FileIdx) -> &SourceFile {
        // Invariant: every FileIdx was returned by `add` on this `Sources`.
        &self.files[idx.0 as usize]
    }

    /// The location of the start of `span`.
    pub(crate) fn loc(&self, span: Span) -> SourceLoc {
        let file = self.file(span.file);
        let (line, col) = file.line_col(span.start);
        SourceLoc { file: file.path.clone(), line, col }
    }

    /// The source text of `span`, if it is a valid range of its file.
    pub(crate) fn text(&self, span: Span) -> Option<&str> {
        self.file(span.file).text.get(span.start..span.end)
    }

    /// The span of byte `offset` inside the string value `value` written at `span`:
    /// exact when the string is written verbatim between quotes, else the string's start.
    pub(crate) fn inside_string(&self, span: Span, value: &str, offset: usize) -> Span {
        let verbatim = self.text(span).is_some_and(|raw| {
            raw.len() == value.len() + 2
                && (raw.starts_with('"') || raw.starts_with('\''))
                && raw.get(1..raw.len() - 1) == Some(value)
        });
        if verbatim && offset <= value.len() {
            Span::at(span.file, span.start + 1 + offset)
        } else {
            span
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_to_lines_and_character_columns() {
        let mut s = Sources::default();
        let f = s.add(PathBuf::from("t.toml"), "ab\nçd = 1\n".to_string());
        let loc = s.loc(Span::at(f, 0));
        assert_eq!((loc.line, loc.col), (1, 1));
        let loc = s.loc(Span::at(f, 3 + "çd".len()));
        assert_eq!((loc.line, loc.col), (2, 3));
        let loc = s.loc(Span::at(f, 1000));
        assert_eq!(loc.line, 3);
    }
}
