//! `--scop auto`: finds the maximal affine loop nests of every function of the main file, for
//! files written without `#pragma scop`.
//!
//! In each sequence of sibling statements (a compound statement, or the single body of a loop,
//! `if`, label or `case`) the search is greedy, left to right: a run starts at a statement that
//! contains a `for` loop and that is a static control part by itself, and grows by the
//! following siblings as long as the whole run still is one; a run ends with its last statement
//! that contains a loop (statements without loops only join a run between two nests). A
//! statement that contains a loop but is not a SCoP is left as written, and the search goes on
//! inside it (its loop bodies and branches), so that the affine nests inside a `while` loop or
//! a non-affine outer loop are still found.
//!
//! Differences from pragma regions, by design:
//! - arrays are not assumed to be distinct: a nest that writes through a pointer that may point
//!   into another array of the nest is refused ([`scop::Aliasing::Checked`]);
//! - a statement directly after a `#pragma` (such as `#pragma omp parallel for`) is neither
//!   replaced nor searched, since the pragma applies to it as written;
//! - a nest that is not a SCoP is expected code, not a problem: its refusal is returned for a
//!   note (shown under `-v`), not a warning.
//!
//! The replaced span of a run is its statements' extent, the `;` of a last expression statement
//! included, widened to whole lines when nothing else shares them.

use crate::clang::{Function, Kind, Node, ParsedFile};
use crate::ir::{Scop, Span};
use crate::pragma::{Directive, Region};
use crate::scop::{self, Aliasing, Refusal};
use crate::text::LineIndex;

/// The SCoPs of every function, in source order, and the reasons why the nests that were not
/// taken are not SCoPs.
pub(crate) fn find(
    text: &str,
    parsed: &ParsedFile,
    directives: &[Directive],
    lines: &LineIndex,
) -> (Vec<Scop>, Vec<Refusal>) {
    let mut finder = Finder {
        text,
        parsed,
        directives,
        lines,
        scops: Vec::new(),
        refusals: Vec::new(),
    };
    for function in &parsed.functions {
        if function.body.in_main_file {
            finder.children_of(function, &function.body);
        }
    }
    finder.scops.sort_by_key(|s| s.region.start);
    finder.refusals.sort_by_key(|r| r.offset);
    (finder.scops, finder.refusals)
}

struct Finder<'a> {
    text: &'a str,
    parsed: &'a ParsedFile,
    directives: &'a [Directive],
    lines: &'a LineIndex,
    scops: Vec<Scop>,
    refusals: Vec<Refusal>,
}

/// The subtree holds a `for` loop.
fn has_loop(n: &Node) -> bool {
    n.kind == Kind::For || n.children.iter().any(has_loop)
}

/// Kinds of nodes that are statements holding other statements (their expression children are
/// never searched).
fn holds_statements(n: &Node) -> bool {
    matches!(
        n.kind,
        Kind::Compound
            | Kind::For
            | Kind::If
            | Kind::While
            | Kind::Do
            | Kind::Switch
            | Kind::Label
            | Kind::Other(_)
    )
}

impl Finder<'_> {
    /// Searches the statements held by `n`, which is not (part of) a SCoP.
    fn children_of(&mut self, function: &Function, n: &Node) {
        if n.kind == Kind::Compound {
            let seq: Vec<&Node> = n.children.iter().collect();
            self.sequence(function, &seq);
            return;
        }
        for c in &n.children {
            if c.kind == Kind::Compound {
                self.children_of(function, c);
            } else if holds_statements(c) {
                self.sequence(function, &[c]);
            }
        }
    }

    fn sequence(&mut self, function: &Function, seq: &[&Node]) {
        let mut k = 0;
        while k < seq.len() {
            let n = seq[k];
            if !n.in_main_file || !has_loop(n) {
                k += 1;
                continue;
            }
            if self.after_pragma(n.span.start) {
                k += 1; // the pragma applies to the statement as written
                continue;
            }
            let mut best = match self.try_build(function, &seq[k..=k]) {
                Ok(scop) => (k, scop),
                Err(r) => {
                    self.refusals.push(r);
                    if holds_statements(n) {
                        self.children_of(function, n);
                    }
                    k += 1;
                    continue;
                }
            };
            let mut end = k + 1;
            while end < seq.len() && seq[end].in_main_file {
                match self.try_build(function, &seq[k..=end]) {
                    Ok(scop) => {
                        if has_loop(seq[end]) {
                            best = (end, scop);
                        }
                        end += 1;
                    }
                    Err(_) => break,
                }
            }
            self.scops.push(best.1);
            k = best.0 + 1;
        }
    }

    /// The last token before `offset` lies on a `#pragma` line other than `scop`/`endscop`.
    fn after_pragma(&self, offset: usize) -> bool {
        let tokens = &self.parsed.tokens;
        let k = tokens.partition_point(|t| t.span.start < offset);
        let Some(prev) = k.checked_sub(1).map(|k| &tokens[k]) else {
            return false;
        };
        let line = self.lines.line_start(prev.span.start);
        self.directives.iter().any(|d| {
            d.name == "pragma"
                && !matches!(d.pragma.as_deref(), Some("scop" | "endscop"))
                && self.lines.line_start(d.offset) == line
        })
    }

    fn try_build(&self, function: &Function, run: &[&Node]) -> Result<Scop, Refusal> {
        let (Some(first), Some(last)) = (run.first(), run.last()) else {
            return Err(Refusal {
                offset: function.body.span.start,
                what: format!("`{}`", function.name),
                why: "no statement".to_string(),
            });
        };
        let span = Span {
            start: first.span.start,
            end: last.span.end,
        };
        let region = Region {
            loc: self.lines.loc(span.start),
            offset: span.start,
            outer: span,
            inner: span,
        };
        scop::check_region_text(self.text, self.parsed, self.directives, &region)?;
        let mut scop = scop::build_statements(
            self.text,
            self.parsed,
            function,
            &region,
            run,
            self.lines,
            Aliasing::Checked,
        )?;
        // The last statement's `;` lies outside its expression's extent.
        let end = scop
            .statements
            .iter()
            .map(|s| s.span.end)
            .fold(span.end, usize::max);
        scop.region = self.whole_lines(Span {
            start: span.start,
            end,
        });
        Ok(scop)
    }

    /// `span` widened to whole lines when only blanks share its first and last lines.
    fn whole_lines(&self, span: Span) -> Span {
        let start = self.lines.line_start(span.start);
        let end = self.lines.line_end(span.end.max(span.start + 1) - 1);
        let blank = |s: usize, e: usize| {
            self.text
                .get(s..e)
                .is_some_and(|t| t.chars().all(char::is_whitespace))
        };
        if blank(start, span.start) && blank(span.end, end) {
            Span { start, end }
        } else {
            span
        }
    }
}
