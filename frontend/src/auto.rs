//! `--scop auto`: finds the maximal affine loop nests of every function of the main file, for
//! files written without `#pragma scop`.
//!
//! In each sequence of sibling statements (a compound statement, or the single body of a loop,
//! `if`, label or `case`) the search is greedy, left to right: a run starts at a statement that
//! contains a `for` loop and that is a static control part by itself, and takes the following
//! siblings as far as the whole run still is one (found by doubling and bisection, so a long
//! function costs O(log n) attempts per run); a run ends with its last statement that contains
//! a loop (statements without loops only join a run between two nests). A
//! statement that contains a loop but is not a SCoP is left as written, and the search goes on
//! inside it (its loop bodies and branches), so that the affine nests inside a `while` loop or
//! a non-affine outer loop are still found.
//!
//! Differences from pragma regions, by design:
//! - arrays are not assumed to be distinct: a nest that writes through a pointer that may point
//!   into another array of the nest is refused ([`scop::Aliasing::Checked`]);
//! - a statement directly after a `#pragma` or `_Pragma(...)` (such as `#pragma omp parallel
//!   for`) is neither replaced nor searched, nor joined to the run of the nests before it,
//!   since the pragma applies to it as written;
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
    replace_pragmas: bool,
) -> (Vec<Scop>, Vec<Refusal>) {
    let mut finder = Finder {
        text,
        parsed,
        directives,
        lines,
        replace_pragmas,
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
    // A nest and the nests inside it are often refused for the same construct: say it once.
    finder.refusals.dedup();
    (finder.scops, finder.refusals)
}

struct Finder<'a> {
    text: &'a str,
    parsed: &'a ParsedFile,
    directives: &'a [Directive],
    lines: &'a LineIndex,
    /// Nests under the user's pragmas are candidates too, their pragmas replaced with them.
    replace_pragmas: bool,
    scops: Vec<Scop>,
    refusals: Vec<Refusal>,
}

/// Whether a directive line's words (after the `#`) are a pragma of the user's: any but
/// `#pragma scop` and `#pragma endscop`, which auto mode ignores.
fn is_user_pragma(words: &[&str]) -> bool {
    words.first() == Some(&"pragma") && !matches!(words.get(1), Some(&("scop" | "endscop")))
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
            let at = &self.text[n.span.start..];
            if at.starts_with('#') || at.starts_with("_Pragma") {
                // libclang's statement for a loop hint (`#pragma GCC unroll 4`, `#pragma unroll`)
                // starts at its pragma: its loop is searched, and meets the pragma there.
                self.children_of(function, n);
                k += 1;
                continue;
            }
            if let Some(pragma) = self.pragma_before(n.span.start) {
                // The pragma applies to the statement as written: neither replaced nor searched,
                // unless the user asked for their pragmas to be replaced.
                let what = format!("the loop nest under `{pragma}`");
                let annotated = match self.replace_pragmas {
                    true => self.annotated(function, n, &what),
                    false => Err(Refusal {
                        offset: n.span.start,
                        what,
                        why: "the pragma applies to it as written".to_string(),
                    }),
                };
                match annotated {
                    Ok(scop) => self.scops.push(scop),
                    Err(r) => self.refusals.push(r),
                }
                k += 1;
                continue;
            }
            let alone = match self.try_build(function, &seq[k..=k]) {
                Ok(scop) => scop,
                Err(r) => {
                    self.refusals.push(r);
                    if holds_statements(n) {
                        self.children_of(function, n);
                    }
                    k += 1;
                    continue;
                }
            };
            let (end, scop) = self.longest_run(function, seq, k, alone);
            self.scops.push(scop);
            k = end + 1;
        }
    }

    /// The longest run `seq[k..=end]` that is a SCoP and ends with a statement holding a loop,
    /// given that `seq[k]` alone is one (`alone`). Whether a run is a SCoP is monotone in its
    /// length in practice (a longer run only adds writes and statements), so the end is found
    /// by doubling, then bisection: O(log n) builds instead of one per statement.
    fn longest_run(
        &self,
        function: &Function,
        seq: &[&Node],
        k: usize,
        alone: Scop,
    ) -> (usize, Scop) {
        // The window ends before a statement of another file, and before one that a pragma
        // applies to: replaced with the run, the pragma would be dropped with its code.
        let limit = k
            + 1
            + seq[k + 1..]
                .iter()
                .take_while(|n| n.in_main_file && self.pragma_before(n.span.start).is_none())
                .count()
            - 1;
        let (mut good, mut good_scop) = (k, alone);
        let mut bad = limit + 1;
        let mut step = 1;
        // The whole window first: the common case of a function body made of nests.
        if limit > k {
            match self.try_build(function, &seq[k..=limit]) {
                Ok(scop) => (good, good_scop, bad) = (limit, scop, limit + 1),
                Err(_) => bad = limit,
            }
        }
        while good + 1 < bad {
            let probe = (good + step).min(bad - 1);
            match self.try_build(function, &seq[k..=probe]) {
                Ok(scop) => {
                    (good, good_scop) = (probe, scop);
                    step *= 2;
                }
                Err(_) => {
                    bad = probe;
                    step = ((bad - good) / 2).max(1);
                }
            }
        }
        let last_loop = (k..=good).rev().find(|&e| has_loop(seq[e])).unwrap_or(k);
        if last_loop == good {
            return (good, good_scop);
        }
        match self.try_build(function, &seq[k..=last_loop]) {
            Ok(scop) => (last_loop, scop),
            // Not monotone after all: fall back to the first statement alone.
            Err(_) => match self.try_build(function, &seq[k..=k]) {
                Ok(scop) => (k, scop),
                Err(_) => (good, good_scop),
            },
        }
    }

    /// The pragma that applies to the statement at `offset`, if any: a `#pragma` line other than
    /// `scop`/`endscop` among the directive lines right before it, or a `_Pragma(...)` right
    /// before it. Directive lines are read from the raw tokens, so that a pragma under a
    /// conditional counts whether or not the parser takes its branch: the C compiler may define
    /// what the parser does not (`_OPENMP` under `-fopenmp`, `__OPTIMIZE__`, ...), and
    /// `#ifdef _OPENMP` / `#pragma omp parallel for` / `#endif` must not end up in front of code
    /// that is no longer the loop it was written for.
    fn pragma_before(&self, offset: usize) -> Option<String> {
        // `_Pragma("...")`, the operator form, applies to what follows it just the same.
        if let Some((_, text)) = self.operator_pragma_before(offset) {
            return Some(format!("_Pragma({text})"));
        }
        self.directives_before(offset)
            .into_iter()
            .find(|(_, words)| is_user_pragma(words))
            .map(|(_, words)| format!("#{}", words.join(" ")))
    }

    /// The `_Pragma("...")` right before `offset`: where it starts, and its string literal.
    fn operator_pragma_before(&self, offset: usize) -> Option<(usize, &str)> {
        let tokens = &self.parsed.tokens;
        let k = tokens.partition_point(|t| t.span.start < offset);
        (k >= 4 && tokens[k - 1].spelling == ")" && tokens[k - 4].spelling == "_Pragma")
            .then(|| (tokens[k - 4].span.start, tokens[k - 2].spelling.as_str()))
    }

    /// The whole directive lines right before `offset`, last first: where each starts (its `#`)
    /// and its words after the `#`.
    fn directives_before(&self, offset: usize) -> Vec<(usize, Vec<&str>)> {
        let tokens = &self.parsed.tokens;
        let mut k = tokens.partition_point(|t| t.span.start < offset);
        let mut lines = Vec::new();
        while let Some(prev) = k.checked_sub(1) {
            let line = self.lines.line_start(tokens[prev].span.start);
            let first = tokens.partition_point(|t| t.span.start < line);
            if tokens[first].spelling != "#" {
                break;
            }
            let words = tokens[first + 1..k]
                .iter()
                .take_while(|t| self.lines.line_start(t.span.start) == line)
                .map(|t| t.spelling.as_str())
                .collect();
            lines.push((tokens[first].span.start, words));
            k = first;
        }
        lines
    }

    /// The nest `n` under a pragma (`what` names both) as a SCoP whose region also covers the
    /// pragma and the conditional lines around it ([`Finder::annotation_start`]), so that the
    /// code replacing the nest replaces them too.
    fn annotated(&self, function: &Function, n: &Node, what: &str) -> Result<Scop, Refusal> {
        let start = self.annotation_start(n.span.start).map_err(|why| Refusal {
            offset: n.span.start,
            what: what.to_string(),
            why,
        })?;
        let mut scop = self.try_build(function, &[n])?;
        scop.region = self.whole_lines(Span {
            start,
            end: scop.region.end,
        });
        Ok(scop)
    }

    /// Where the annotation of the statement at `offset` starts: the `_Pragma(...)` right before
    /// it, or, among the `#pragma` and conditional lines (`#if`, `#ifdef`, `#ifndef`, `#elif`,
    /// `#else`, `#endif`) right before it, the latest one from which every conditional opens and
    /// closes before the nest and no pragma is left out. `Err`: why the annotation cannot go with
    /// the nest (another directive between it and the nest, or a conditional around the pragma
    /// that holds other code and ends before the nest).
    fn annotation_start(&self, offset: usize) -> Result<usize, String> {
        if let Some((start, _)) = self.operator_pragma_before(offset) {
            return Ok(start);
        }
        // The pragma and conditional lines right before the statement, last first.
        let mut lines: Vec<(usize, &str)> = Vec::new();
        for (start, words) in self.directives_before(offset) {
            let word = match words.first().copied() {
                Some("pragma") if is_user_pragma(&words) => "pragma",
                Some(w @ ("if" | "ifdef" | "ifndef" | "elif" | "else" | "endif")) => w,
                _ if lines.iter().any(|&(_, w)| w == "pragma") => break,
                other => {
                    return Err(format!(
                        "`#{}` lies between its pragma and the nest",
                        other.unwrap_or_default()
                    ))
                }
            };
            lines.push((start, word));
        }
        // Forward, from the latest line that leaves every conditional of the rest balanced and
        // no pragma before it: the least that goes with the nest.
        lines.reverse();
        let Some(first_pragma) = lines.iter().position(|&(_, w)| w == "pragma") else {
            return Err("no pragma found before it".to_string());
        };
        let balanced = |from: usize| {
            let mut depth = 0usize;
            for &(_, word) in &lines[from..] {
                match word {
                    "if" | "ifdef" | "ifndef" => depth += 1,
                    "elif" | "else" if depth == 0 => return false,
                    "endif" => match depth.checked_sub(1) {
                        Some(d) => depth = d,
                        None => return false,
                    },
                    _ => {}
                }
            }
            depth == 0
        };
        (0..=first_pragma)
            .rev()
            .find(|&from| balanced(from))
            .map(|from| lines[from].0)
            .ok_or_else(|| "its pragma is in a conditional that holds other code".to_string())
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
