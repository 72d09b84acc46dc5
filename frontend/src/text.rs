//! Byte offsets in the main file: line and column numbers, line boundaries, short snippets
//! of source text for messages.

use crate::ir::{Loc, Span};

/// Maps byte offsets of one text to 1-based lines and (byte) columns, like libclang does.
pub(crate) struct LineIndex {
    /// Offset of the first byte of every line.
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    pub(crate) fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex {
            starts,
            len: text.len(),
        }
    }

    pub(crate) fn loc(&self, offset: usize) -> Loc {
        let offset = offset.min(self.len);
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let col = offset - self.starts[line - 1] + 1;
        Loc {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            col: u32::try_from(col).unwrap_or(u32::MAX),
        }
    }

    /// Offset of the start of the line holding `offset`.
    pub(crate) fn line_start(&self, offset: usize) -> usize {
        let line = self
            .starts
            .partition_point(|&s| s <= offset.min(self.len))
            .max(1);
        self.starts[line - 1]
    }

    /// Offset just past the end of the line holding `offset`, its newline included (or the end
    /// of the text for the last line).
    pub(crate) fn line_end(&self, offset: usize) -> usize {
        let line = self
            .starts
            .partition_point(|&s| s <= offset.min(self.len))
            .max(1);
        self.starts.get(line).copied().unwrap_or(self.len)
    }
}

/// The source text of `span`, whitespace runs collapsed, cut to a readable length.
pub(crate) fn snippet(text: &str, span: Span) -> String {
    let raw = text.get(span.start..span.end).unwrap_or("");
    let collapsed: Vec<&str> = raw.split_whitespace().collect();
    let one_line = collapsed.join(" ");
    const MAX: usize = 48;
    if one_line.chars().count() > MAX {
        let cut: String = one_line.chars().take(MAX - 3).collect();
        format!("{cut}...")
    } else {
        one_line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns() {
        let idx = LineIndex::new("ab\ncd\n\nx");
        assert_eq!(idx.loc(0), Loc { line: 1, col: 1 });
        assert_eq!(idx.loc(2), Loc { line: 1, col: 3 });
        assert_eq!(idx.loc(3), Loc { line: 2, col: 1 });
        assert_eq!(idx.loc(7), Loc { line: 4, col: 1 });
        assert_eq!(idx.line_start(4), 3);
        assert_eq!(idx.line_end(4), 6);
        assert_eq!(idx.line_end(7), 8);
    }

    #[test]
    fn snippets_are_short_and_flat() {
        let t = "a  =\n   b;";
        assert_eq!(
            snippet(
                t,
                Span {
                    start: 0,
                    end: t.len()
                }
            ),
            "a = b;"
        );
        let long = "x".repeat(100);
        assert_eq!(snippet(&long, Span { start: 0, end: 100 }).len(), 48);
    }
}
