//! The macro definitions a SCoP's statements need to compile in a file of their own
//! ([`ir::Scop::macros`](crate::ir::Scop::macros)): a kernel file for another compiler (NVRTC
//! for the CUDA target) sees neither the user's includes nor the `-D` options.
//!
//! Built from libclang's detailed preprocessing record, not from the text: every expansion
//! written in a statement (libclang gives its definition exactly, whichever header, `-D` option
//! or predefine it comes from), then, transitively, the macros named in the replacement lists
//! of those definitions (libclang does not record expansions inside other expansions; a name
//! there resolves to the last definition of that name before the SCoP's first expansion,
//! which is the one in effect: a SCoP region holds no preprocessor directive). A name in a
//! replacement list that no definition has is an ordinary identifier (a function, a variable),
//! except the few macros built into the preprocessor, which have no definition to copy and are
//! reported in [`ir::Scop::undefined_macros`](crate::ir::Scop::undefined_macros), as are those
//! expanded directly in the statements.
//!
//! Limit: an `#undef` is not in the preprocessing record, so a name `#undef`ined before the
//! SCoP (and not defined again) still resolves to its last definition when another macro's
//! replacement mentions it.
//!
//! Owns nothing else: no libclang (that is `clang`), no opinion on which target needs what.

use std::collections::{HashMap, HashSet};

use crate::clang::{MacroDef as RawDef, MacroToken, ParsedFile, TokenKind};
use crate::ir::{Loc, MacroDef, Span, UndefinedMacro};
use crate::text::LineIndex;

/// Macros built into the preprocessor: they have no `#define` anywhere.
const BUILTIN: &[&str] = &[
    "__LINE__",
    "__FILE__",
    "__FILE_NAME__",
    "__BASE_FILE__",
    "__COUNTER__",
    "__DATE__",
    "__TIME__",
    "__TIMESTAMP__",
    "__INCLUDE_LEVEL__",
    "_Pragma",
];

/// The definitions (dependencies first, then in order of first use) and the undefined macros
/// that the text of the statements at `spans` expands.
pub(crate) fn used_by(
    parsed: &ParsedFile,
    spans: &[Span],
    lines: &LineIndex,
) -> (Vec<MacroDef>, Vec<UndefinedMacro>) {
    let uses: Vec<_> = parsed
        .macro_uses
        .iter()
        .filter(|u| {
            spans
                .iter()
                .any(|s| s.start <= u.offset && u.offset < s.end)
        })
        .collect();
    let Some(first) = uses.first() else {
        return (Vec::new(), Vec::new());
    };
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, d) in parsed.macro_defs.iter().enumerate() {
        if d.seq < first.seq {
            by_name.entry(d.name.as_str()).or_default().push(k);
        }
    }
    let mut c = Closure {
        defs: &parsed.macro_defs,
        by_name,
        done: HashSet::new(),
        out: Vec::new(),
        undefined: Vec::new(),
    };
    for u in &uses {
        let loc = lines.loc(u.offset);
        match u.def {
            Some(k) => c.visit(k, loc),
            None => c.undefined(&u.name, loc),
        }
    }
    (c.out, c.undefined)
}

/// A depth-first walk over definitions that emits each after the ones its replacement names.
struct Closure<'a> {
    defs: &'a [RawDef],
    /// Definitions in effect at the SCoP: for each name, its definitions before the SCoP, the
    /// last one in effect.
    by_name: HashMap<&'a str, Vec<usize>>,
    /// Names already emitted or being visited (cycles such as `#define x x` end here).
    done: HashSet<&'a str>,
    out: Vec<MacroDef>,
    undefined: Vec<UndefinedMacro>,
}

impl<'a> Closure<'a> {
    fn undefined(&mut self, name: &str, loc: Loc) {
        if !self.undefined.iter().any(|u| u.name == name) {
            self.undefined.push(UndefinedMacro {
                name: name.to_string(),
                loc,
            });
        }
    }

    fn visit(&mut self, k: usize, loc: Loc) {
        let defs = self.defs;
        let d = &defs[k];
        if !self.done.insert(d.name.as_str()) {
            return;
        }
        let params = params(d);
        let (_, body) = split(d);
        for t in body {
            if !matches!(t.kind, TokenKind::Identifier | TokenKind::Keyword)
                || params.contains(&t.spelling.as_str())
            {
                continue;
            }
            let name = t.spelling.as_str();
            match self.by_name.get(name).and_then(|v| v.last()) {
                Some(&j) => self.visit(j, loc),
                None if BUILTIN.contains(&name) => self.undefined(name, loc),
                None => {}
            }
        }
        self.out.push(MacroDef {
            name: d.name.clone(),
            define: define_line(d),
            origin: d.origin.clone(),
        });
    }
}

/// A definition's tokens after its name, split into the parameter list with its parentheses
/// (empty for an object-like macro) and the replacement list.
fn split(d: &RawDef) -> (&[MacroToken], &[MacroToken]) {
    if !d.function_like {
        return (&[], &d.tokens);
    }
    match d.tokens.iter().position(|t| t.spelling == ")") {
        Some(close) => d.tokens.split_at(close + 1),
        None => (&d.tokens, &[]),
    }
}

/// The parameter names of a definition (`__VA_ARGS__` for `...`).
fn params(d: &RawDef) -> Vec<&str> {
    let (head, _) = split(d);
    head.iter()
        .filter(|t| t.kind == TokenKind::Identifier || t.spelling == "...")
        .map(|t| match t.spelling.as_str() {
            "..." => "__VA_ARGS__",
            p => p,
        })
        .collect()
}

/// `#define NAME(params) replacement` on one line, the tokens spaced as they were written
/// (line continuations and comments become one space).
fn define_line(d: &RawDef) -> String {
    let join = |tokens: &[MacroToken]| -> String {
        let mut s = String::new();
        for (k, t) in tokens.iter().enumerate() {
            if k > 0 && t.space_before {
                s.push(' ');
            }
            s.push_str(&t.spelling);
        }
        s
    };
    let (head, body) = split(d);
    let mut s = format!("#define {}{}", d.name, join(head));
    if !body.is_empty() {
        s.push(' ');
        s.push_str(&join(body));
    }
    s
}
