//! Finds the `#pragma scop` ... `#pragma endscop` regions of the main file.
//!
//! libclang exposes no cursor for these pragmas, so they are found in the raw tokens: a `#`
//! that is the first token of its line, followed on the same line by `pragma` and `scop` (or
//! `endscop`) and nothing else. Comments and string literals are never tokens of that shape,
//! and directives inside code skipped by the preprocessor (`#if 0`) are ignored. Also lists the
//! other preprocessor directives, which must not appear inside a region (replacing the region
//! would delete them).

use crate::clang::{Token, TokenKind};
use crate::ir::{Loc, Span};
use crate::text::LineIndex;

/// One `#pragma scop` ... `#pragma endscop` pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Region {
    /// Location of the `#` of `#pragma scop`.
    pub loc: Loc,
    /// Offset of that `#`.
    pub offset: usize,
    /// From the start of the `#pragma scop` line to the end of the `#pragma endscop` line,
    /// newline included.
    pub outer: Span,
    /// From the end of the `#pragma scop` line to the start of the `#pragma endscop` line: the
    /// statements of the SCoP.
    pub inner: Span,
}

/// A preprocessor directive: the `#` token's offset and the directive's name (`pragma`,
/// `define`, `if`, ...; empty for a null directive).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Directive {
    pub offset: usize,
    pub name: String,
    /// For `#pragma`, its first word (`scop`, `endscop`, `omp`, ...).
    pub pragma: Option<String>,
    /// The directive has no other token on its line (besides the ones above).
    pub alone: bool,
}

/// A problem with the pragmas themselves: the offset of the `#` and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PragmaProblem {
    pub offset: usize,
    pub what: String,
    pub why: String,
}

/// All directives of the main file outside skipped code, in order.
pub(crate) fn directives(tokens: &[Token], skipped: &[Span], lines: &LineIndex) -> Vec<Directive> {
    let line_of = |t: &Token| lines.loc(t.span.start).line;
    let mut out = Vec::new();
    for (k, t) in tokens.iter().enumerate() {
        if t.kind != TokenKind::Punctuation || t.spelling != "#" {
            continue;
        }
        let line = line_of(t);
        if k > 0 && line_of(&tokens[k - 1]) == line {
            continue; // not the first token of its line: `#` inside a macro body
        }
        if skipped
            .iter()
            .any(|s| s.start <= t.span.start && t.span.start < s.end)
        {
            continue;
        }
        let same_line: Vec<&Token> = tokens[k + 1..]
            .iter()
            .take_while(|u| line_of(u) == line)
            .collect();
        let name = same_line
            .first()
            .map(|u| u.spelling.clone())
            .unwrap_or_default();
        let pragma = (name == "pragma").then(|| {
            same_line
                .get(1)
                .map(|u| u.spelling.clone())
                .unwrap_or_default()
        });
        let alone = same_line.len() <= if pragma.is_some() { 2 } else { 1 };
        out.push(Directive {
            offset: t.span.start,
            name,
            pragma,
            alone,
        });
    }
    out
}

/// Pairs `#pragma scop` with the following `#pragma endscop`.
pub(crate) fn regions(
    directives: &[Directive],
    lines: &LineIndex,
) -> (Vec<Region>, Vec<PragmaProblem>) {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let mut open: Option<&Directive> = None;
    for d in directives {
        let word = d.pragma.as_deref();
        if word != Some("scop") && word != Some("endscop") {
            continue;
        }
        if !d.alone {
            problems.push(PragmaProblem {
                offset: d.offset,
                what: format!("`#pragma {}`", word.unwrap_or_default()),
                why: "unexpected tokens after the pragma".to_string(),
            });
            continue;
        }
        match (word, open) {
            (Some("scop"), None) => open = Some(d),
            (Some("scop"), Some(_)) => problems.push(PragmaProblem {
                offset: d.offset,
                what: "`#pragma scop`".to_string(),
                why: "nested inside another `#pragma scop` region; ignored".to_string(),
            }),
            (_, Some(start)) => {
                let inner = Span {
                    start: lines.line_end(start.offset),
                    end: lines.line_start(d.offset),
                };
                out.push(Region {
                    loc: lines.loc(start.offset),
                    offset: start.offset,
                    outer: Span {
                        start: lines.line_start(start.offset),
                        end: lines.line_end(d.offset),
                    },
                    inner,
                });
                open = None;
            }
            (_, None) => problems.push(PragmaProblem {
                offset: d.offset,
                what: "`#pragma endscop`".to_string(),
                why: "no `#pragma scop` before it".to_string(),
            }),
        }
    }
    if let Some(start) = open {
        problems.push(PragmaProblem {
            offset: start.offset,
            what: "`#pragma scop`".to_string(),
            why: "no `#pragma endscop` after it".to_string(),
        });
    }
    (out, problems)
}
