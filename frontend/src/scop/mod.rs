//! SCoP extraction: turns each `#pragma scop` region of the lowered AST into an [`ir::Scop`](crate::ir::Scop),
//! or into one diagnostic saying why the region is not a static control part. The same rules
//! ([`build_statements`]) decide for the runs of statements that `crate::auto` proposes.
//!
//! A region is accepted only if everything in it is understood exactly:
//! - control: `for` loops whose counter starts at an affine value, moves by a constant step and
//!   is bounded by an affine condition monotone in the counter; `if`/`else` with affine
//!   conditions (`&&`, `||`, `!`, comparisons, ternaries);
//! - statements: expression statements that assign (`=`, `op=`, `++`, `--`) an array element or
//!   a scalar, reading array elements with affine subscripts, scalars, literals and pure math
//!   functions;
//! - affine expressions: `+`, `-`, multiplication by constants, `/` and `%` by constants with
//!   C's truncation (see [`crate::affine`]), casts to `int`/`long`, ternaries, enumeration
//!   constants and parameters (signed integer scalars never assigned in the region);
//! - text: every iterator and variable reference of a statement is visible in the statement's
//!   own tokens, so that it can be re-emitted with substitutions;
//! - memory (nests found without pragmas only, [`Aliasing::Checked`]): no array written through
//!   a pointer that may point into another array of the region, or the other way round.
//!
//! The first construct that breaks a rule ends the region with a [`Refusal`] pointing at it;
//! the region then stays as written.
//!
//! The builder ([`Builder`]) walks a region once; its methods are grouped by what they read:
//! `control` (statements, `if`s, `for` loops and their bounds), `conditions` (affine
//! expressions and conditions), `bodies` (expression statements, chained assignments,
//! declarations, where a statement's text ends), `accesses` (the elements read and written),
//! `result` (the region's checks and the [`ir::Scop`](crate::ir::Scop) with its ISL text).

use std::collections::{HashMap, HashSet};

use crate::affine::{AffineError, Cmp, Formula, LinExpr, Names, Pw, Term};
use crate::clang::{
    BinOp, CType, Decl, DeclKind, Function, Kind, Node, ParsedFile, ScalarClass, Token, TokenKind,
    UnOp,
};
use crate::diagnostic::{Diagnostic, Severity};
use crate::ir::{
    Access, AccessKind, Array, ArrayId, BodyPiece, Param, Scop, Span, Statement, StmtId, Storage,
};
use crate::pragma::{self, Region};
use crate::text::{snippet, LineIndex};

mod accesses;
mod bodies;
mod conditions;
mod control;
mod result;

/// Identifiers ISL's parser reads as keywords (case-insensitively).
const ISL_KEYWORDS: &[&str] = &[
    "exists", "and", "or", "implies", "not", "infty", "infinity", "nan", "min", "max", "rat",
    "true", "false", "ceild", "floord", "mod", "ceil", "floor",
];

/// Prefix reserved for identifiers of generated code.
const RESERVED_PREFIX: &str = "tf_";

/// Math functions without side effects that statements may call (also with an `f` or `l`
/// suffix).
const PURE_FUNCTIONS: &[&str] = &[
    "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "fabs", "abs",
    "labs", "llabs", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "floor", "ceil", "round", "trunc", "fmin", "fmax", "fmod", "hypot",
    "copysign", "erf", "erfc", "tgamma", "lgamma",
];

/// Why a region is not a static control part: the offending construct and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub offset: usize,
    pub what: String,
    pub why: String,
}

impl Refusal {
    fn new(offset: usize, what: impl Into<String>, why: impl Into<String>) -> Refusal {
        Refusal {
            offset,
            what: what.into(),
            why: why.into(),
        }
    }

    pub(crate) fn diagnostic(&self, path: &str, lines: &LineIndex) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            file: path.to_string(),
            loc: lines.loc(self.offset),
            kind: crate::diagnostic::Kind::NotScop {
                what: self.what.clone(),
                why: self.why.clone(),
            },
        }
    }
}

type Result<T> = std::result::Result<T, Refusal>;

/// Whether the arrays of a SCoP may be assumed not to overlap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Aliasing {
    /// `#pragma scop` is the user's promise that distinct arrays do not overlap (as for PLuTo
    /// and PPCG).
    Assumed,
    /// Without pragmas nothing is promised: a nest that writes through a pointer (an array
    /// parameter is one) which may point into another array of the nest is refused, unless one
    /// of the two is `restrict`.
    Checked,
}

/// The SCoPs of the file's `#pragma scop` regions (`directives`), and a warning for each region
/// that is not one.
pub(crate) fn pragma_regions(
    path: &str,
    text: &str,
    parsed: &ParsedFile,
    directives: &[pragma::Directive],
    lines: &LineIndex,
) -> (Vec<Scop>, Vec<Diagnostic>) {
    let (regions, problems) = pragma::regions(directives, lines);
    let mut refusals: Vec<Refusal> = problems
        .into_iter()
        .map(|p| Refusal::new(p.offset, p.what, p.why))
        .collect();
    let mut scops = Vec::new();
    for region in &regions {
        match build(text, parsed, directives, region, lines) {
            Ok(scop) => scops.push(scop),
            Err(r) => refusals.push(r),
        }
    }
    refusals.sort_by_key(|r| r.offset);
    (
        scops,
        refusals.iter().map(|r| r.diagnostic(path, lines)).collect(),
    )
}

fn build(
    text: &str,
    parsed: &ParsedFile,
    directives: &[pragma::Directive],
    region: &Region,
    lines: &LineIndex,
) -> Result<Scop> {
    let inner = region.inner;
    let function = parsed
        .functions
        .iter()
        .find(|f| f.body.span.start < region.outer.start && region.outer.end <= f.body.span.end)
        .ok_or_else(|| {
            Refusal::new(
                region.offset,
                "`#pragma scop`",
                "the region is not inside a function body",
            )
        })?;
    check_region_text(text, parsed, directives, region)?;
    let selected = select(&function.body, inner, text)?;
    if selected.is_empty() {
        return Err(Refusal::new(
            region.offset,
            "`#pragma scop`",
            "the region contains no statement",
        ));
    }
    build_statements(
        text,
        parsed,
        function,
        region,
        &selected,
        lines,
        Aliasing::Assumed,
    )
}

/// Builds the SCoP of the consecutive statements `selected` of `function`, which make up
/// `region` (whose text the caller has checked with [`check_region_text`]).
pub(crate) fn build_statements(
    text: &str,
    parsed: &ParsedFile,
    function: &Function,
    region: &Region,
    selected: &[&Node],
    lines: &LineIndex,
    aliasing: Aliasing,
) -> Result<Scop> {
    let mut b = Builder::new(text, &parsed.tokens);
    for n in selected {
        collect_writes(n, &mut b.written, &mut b.counters);
    }
    b.positions.push(0);
    for n in selected {
        b.stmt(n)?;
    }
    if aliasing == Aliasing::Checked {
        let mut address_taken = HashSet::new();
        collect_address_taken(&function.body, &mut address_taken);
        b.check_aliasing(&address_taken)?;
    }
    check_counters_not_live_out(&function.body, region, &b.counters, &mut Vec::new(), false)?;
    let mut scop = b.finish(function, region, lines)?;
    let spans: Vec<Span> = scop.statements.iter().map(|s| s.span).collect();
    (scop.macros, scop.undefined_macros) = crate::macros::used_by(parsed, &spans, lines);
    Ok(scop)
}

/// The generated code does not leave the loop counters with their final values, so a counter
/// must not be read after the region (or before it, inside a loop around it) unless a `for`
/// loop assigns it first. Walks the function body around the region; `reinit` holds the
/// counters assigned by the inits of the enclosing `for` loops.
fn check_counters_not_live_out(
    n: &Node,
    region: &Region,
    counters: &HashSet<String>,
    reinit: &mut Vec<String>,
    in_loop_around: bool,
) -> Result<()> {
    if !n.in_main_file || (region.inner.start <= n.span.start && n.span.end <= region.inner.end) {
        return Ok(());
    }
    let around = matches!(n.kind, Kind::For | Kind::While | Kind::Do)
        && n.span.start <= region.outer.start
        && region.outer.end <= n.span.end;
    let in_loop = in_loop_around || around;
    if n.kind == Kind::DeclRef {
        if let Some(d) = &n.decl {
            let relevant = n.offset >= region.outer.end || in_loop;
            if relevant && counters.contains(&d.key) && !reinit.contains(&d.key) {
                return Err(Refusal::new(
                    n.offset,
                    format!("`{}`", d.name),
                    "a loop counter of the region is used after it, but its final value is not kept",
                ));
            }
        }
    }
    let pushed = match (&n.kind, n.children.first()) {
        (Kind::For, Some(init))
            if n.children.len() == 4 && init.kind == Kind::Binary(BinOp::Assign) =>
        {
            init.children
                .first()
                .and_then(base_decl)
                .map(|d| d.key.clone())
        }
        _ => None,
    };
    if let Some(k) = &pushed {
        reinit.push(k.clone());
    }
    let r = n
        .children
        .iter()
        .try_for_each(|c| check_counters_not_live_out(c, region, counters, reinit, in_loop));
    if pushed.is_some() {
        reinit.pop();
    }
    r
}

/// Identifiers with the reserved prefix, preprocessor directives and skipped code inside the
/// region cannot be handled: replacing the region would lose or clash with them.
pub(crate) fn check_region_text(
    text: &str,
    parsed: &ParsedFile,
    directives: &[pragma::Directive],
    region: &Region,
) -> Result<()> {
    let inner = region.inner;
    let within = |o: usize| inner.start <= o && o < inner.end;
    if let Some(t) = parsed.tokens.iter().find(|t| {
        within(t.span.start)
            && t.kind == TokenKind::Identifier
            && t.spelling.starts_with(RESERVED_PREFIX)
    }) {
        return Err(Refusal::new(
            t.span.start,
            format!("identifier `{}`", t.spelling),
            format!("the prefix `{RESERVED_PREFIX}` is reserved for generated code"),
        ));
    }
    if let Some(d) = directives
        .iter()
        .find(|d| within(d.offset) && d.name != "pragma")
    {
        return Err(Refusal::new(
            d.offset,
            format!("`#{}` directive", d.name),
            "preprocessor directives inside the region would be lost when it is replaced",
        ));
    }
    if let Some(s) = parsed
        .skipped
        .iter()
        .find(|s| s.start < inner.end && inner.start < s.end)
    {
        return Err(Refusal::new(
            s.start.max(inner.start),
            format!(
                "`{}`",
                snippet(
                    text,
                    Span {
                        start: s.start.max(inner.start),
                        end: s.end.min(inner.end)
                    }
                )
            ),
            "code excluded by the preprocessor inside the region would be lost when it is replaced",
        ));
    }
    Ok(())
}

/// The statements whose extents lie inside `inner`: the children of the innermost compound
/// statement holding the region.
fn select<'n>(node: &'n Node, inner: Span, text: &str) -> Result<Vec<&'n Node>> {
    let mut inside = Vec::new();
    for child in &node.children {
        if !child.in_main_file {
            continue;
        }
        let s = child.span;
        if s.end <= inner.start || s.start >= inner.end {
            continue;
        }
        if inner.start <= s.start && s.end <= inner.end {
            inside.push(child);
            continue;
        }
        if s.start <= inner.start && inner.end <= s.end && inside.is_empty() {
            return select(child, inner, text);
        }
        let first_line = text
            .get(s.start..s.end)
            .and_then(|t| t.lines().next())
            .map_or(0, str::len);
        return Err(Refusal::new(
            s.start,
            format!(
                "`{}`",
                snippet(
                    text,
                    Span {
                        start: s.start,
                        end: s.start + first_line
                    }
                )
            ),
            "the pragmas cut through this statement",
        ));
    }
    if !inside.is_empty() && node.kind != Kind::Compound {
        return Err(Refusal::new(
            node.span.start,
            format!("`{}`", snippet(text, node.span)),
            "the pragmas cut through this statement",
        ));
    }
    Ok(inside)
}

/// A comma expression, or an assignment whose value is assigned again (`x = y = e`): the
/// statements it sequences are split apart ([`Builder::split_expression`]).
fn splits(e: &Node) -> bool {
    match (&e.kind, e.children.as_slice()) {
        (Kind::Binary(BinOp::Comma), _) => true,
        (Kind::Binary(BinOp::Assign) | Kind::CompoundAssign(_), [_, rhs]) => assigns(strip(rhs)),
        _ => false,
    }
}

/// An assignment or compound assignment (or a comma expression, refused when assigned).
fn assigns(e: &Node) -> bool {
    matches!(
        e.kind,
        Kind::Binary(BinOp::Assign | BinOp::Comma) | Kind::CompoundAssign(_)
    )
}

/// Kinds of nodes that are expressions.
fn is_expression(kind: &Kind) -> bool {
    matches!(
        kind,
        Kind::Binary(_)
            | Kind::CompoundAssign(_)
            | Kind::Unary(_)
            | Kind::Subscript
            | Kind::DeclRef
            | Kind::IntLit
            | Kind::FloatLit
            | Kind::CharLit
            | Kind::StringLit
            | Kind::Paren
            | Kind::Cast
            | Kind::Unexposed
            | Kind::Call
            | Kind::Conditional
            | Kind::Member
            | Kind::SizeOf
    )
}

/// Skips parentheses and implicit conversions.
fn strip(mut n: &Node) -> &Node {
    loop {
        match n.kind {
            Kind::Paren | Kind::Unexposed if n.children.len() == 1 => n = &n.children[0],
            _ => return n,
        }
    }
}

/// The variable at the root of an lvalue (`A` in `A[i][j]`, `x` in `(x)`).
fn base_decl(n: &Node) -> Option<&Decl> {
    let n = strip(n);
    match n.kind {
        Kind::DeclRef => n.decl.as_ref(),
        Kind::Subscript => n.children.first().and_then(base_decl),
        _ => None,
    }
}

/// C's aliasing rule (C11 6.5p7): an object is accessed only through its own type (qualifiers
/// and signedness aside) or a character type.
fn may_alias_types(a: &str, b: &str) -> bool {
    let core = |t: &str| -> String {
        t.split_whitespace()
            .filter(|w| {
                !matches!(
                    *w,
                    "const" | "volatile" | "restrict" | "signed" | "unsigned"
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let (a, b) = (core(a), core(b));
    a == b || a == "char" || b == "char"
}

/// Records every variable whose address is taken (`&x`, also `&x[0]`).
fn collect_address_taken(n: &Node, out: &mut HashSet<String>) {
    if n.kind == Kind::Unary(UnOp::AddrOf) {
        if let Some(d) = n.children.first().and_then(base_decl) {
            out.insert(d.key.clone());
        }
    }
    for c in &n.children {
        collect_address_taken(c, out);
    }
}

/// Records every variable assigned in the region (by statements or as loop counters).
fn collect_writes(n: &Node, written: &mut HashSet<String>, counters: &mut HashSet<String>) {
    match &n.kind {
        Kind::Binary(BinOp::Assign) | Kind::CompoundAssign(_) => {
            if let Some(d) = n.children.first().and_then(base_decl) {
                written.insert(d.key.clone());
            }
        }
        Kind::Unary(UnOp::PreInc | UnOp::PostInc | UnOp::PreDec | UnOp::PostDec) => {
            if let Some(d) = n.children.first().and_then(base_decl) {
                written.insert(d.key.clone());
            }
        }
        Kind::VarDecl => {
            if let Some(d) = &n.decl {
                written.insert(d.key.clone());
            }
        }
        Kind::For if n.children.len() == 4 => {
            let init = &n.children[0];
            match init.kind {
                Kind::Binary(BinOp::Assign) => {
                    if let Some(d) = init.children.first().and_then(base_decl) {
                        counters.insert(d.key.clone());
                    }
                }
                Kind::DeclStmt => {
                    for v in &init.children {
                        if let Some(d) = &v.decl {
                            counters.insert(d.key.clone());
                        }
                    }
                }
                _ => {}
            }
        }
        _ => {}
    }
    for c in &n.children {
        collect_writes(c, written, counters);
    }
}

fn is_isl_keyword(name: &str) -> bool {
    ISL_KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(name))
}

/// A name ISL reads as an identifier: C identifier characters and not a keyword.
fn is_isl_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && !is_isl_keyword(name)
}

/// Names later stages use for their own tuples.
fn is_reserved_tuple_name(name: &str) -> bool {
    let digits_after = |p: char| {
        name.strip_prefix(p)
            .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit()))
    };
    digits_after('S') || digits_after('N')
}

fn is_pure_function(name: &str) -> bool {
    PURE_FUNCTIONS.iter().any(|f| {
        name == *f || name.strip_suffix('f') == Some(f) || name.strip_suffix('l') == Some(f)
    })
}

/// The rank and element type of a variable's type: pointer (at most one, outermost), then
/// arrays, then an arithmetic element.
/// Rank, element type and the constant extent of each dimension (outermost first; `None` for a
/// pointer's first dimension and for variable-length or incomplete ones).
type Shape = (usize, String, Vec<Option<u64>>);

fn array_shape(ty: &CType) -> std::result::Result<Shape, String> {
    let mut extents = Vec::new();
    let mut t = ty;
    loop {
        match t {
            CType::Pointer(inner) if extents.is_empty() => {
                t = inner;
                extents.push(None);
            }
            CType::Pointer(_) => {
                return Err("arrays of pointers and pointers to pointers may alias".to_string())
            }
            CType::Array(inner, size) => {
                t = inner;
                extents.push(*size);
            }
            CType::Scalar { spelling, .. } => {
                return Ok((extents.len(), spelling.clone(), extents))
            }
            CType::Other(s) => return Err(format!("its element type `{s}` is not arithmetic")),
        }
    }
}

fn affine_refusal(n: &Node, text: &str, e: AffineError) -> Refusal {
    match e {
        AffineError::Overflow => Refusal::new(
            n.span.start,
            code(text, n),
            "integer overflow in constant arithmetic",
        ),
        AffineError::TooManyPieces => Refusal::new(
            n.span.start,
            code(text, n),
            "too many cases (nested conditionals)",
        ),
    }
}

fn code(text: &str, n: &Node) -> String {
    format!("`{}`", snippet(text, n.span))
}

/// A dimension of the original schedule.
#[derive(Clone, Copy, Debug)]
enum SchedDim {
    /// Position among the siblings of a sequence.
    Pos(usize),
    /// The iterator at this depth; negated for a decreasing loop.
    Iter(usize, bool),
}

struct LoopCtx {
    key: String,
    name: String,
    formula: Formula,
    /// Proven bounds on the counter, for the non-negativity of dividends.
    lower: Option<i128>,
    upper: Option<i128>,
}

struct ParamInfo {
    key: String,
    name: String,
    c_type: String,
    storage: Storage,
}

struct ArrayInfo {
    key: String,
    name: String,
    elem_type: String,
    rank: usize,
    /// Constant extent of each dimension (see [`Array::extents`]).
    extents: Vec<Option<u64>>,
    storage: Storage,
    written: bool,
    /// The variable is a pointer (an array parameter is one): it may point into other arrays.
    pointer: bool,
    /// The pointer is `restrict`-qualified: no other pointer reaches what it accesses.
    restrict: bool,
    /// Offset of the first access, for diagnostics.
    offset: usize,
}

struct RawAccess {
    kind: AccessKind,
    array: usize,
    subscripts: Vec<Pw>,
}

/// A reference to a declaration inside a statement's tree.
struct RawRef {
    offset: usize,
    in_main_file: bool,
    key: String,
    name: String,
}

struct RawStmt {
    iter_keys: Vec<String>,
    iter_names: Vec<String>,
    domain: Formula,
    schedule: Vec<SchedDim>,
    accesses: Vec<RawAccess>,
    refs: Vec<RawRef>,
    span: Span,
    /// The statement's text, piece by piece: the source text of `span` itself for a statement
    /// as written, or parts of it for one split off a larger one (`a = b = c;`, `a, b;`) or
    /// made from a declaration.
    text: Vec<Segment>,
}

/// A piece of a statement's text.
enum Segment {
    /// Source text, re-emitted with its iterator and variable references replaced.
    Source(Span),
    /// Text of its own: an operator, a `;`.
    Text(&'static str),
    /// The variable of this key.
    Var(String),
}

struct Builder<'a> {
    text: &'a str,
    tokens: &'a [Token],
    /// Keys of the variables assigned anywhere in the region, loop counters included.
    written: HashSet<String>,
    /// Keys of the loop counters of the region.
    counters: HashSet<String>,
    loops: Vec<LoopCtx>,
    conds: Vec<Formula>,
    /// Next schedule position at each nesting level (last = current level).
    positions: Vec<usize>,
    sched: Vec<SchedDim>,
    params: Vec<ParamInfo>,
    arrays: Vec<ArrayInfo>,
    stmts: Vec<RawStmt>,
    /// Every loop counter name with the offset of its loop.
    counter_names: Vec<(String, usize)>,
    /// The scalars declared inside the region (`Storage::Block`): key and declarator offset.
    block_decls: Vec<(String, usize)>,
}

impl<'a> Builder<'a> {
    fn new(text: &'a str, tokens: &'a [Token]) -> Builder<'a> {
        Builder {
            text,
            tokens,
            written: HashSet::new(),
            counters: HashSet::new(),
            loops: Vec::new(),
            conds: Vec::new(),
            positions: Vec::new(),
            sched: Vec::new(),
            params: Vec::new(),
            arrays: Vec::new(),
            stmts: Vec::new(),
            counter_names: Vec::new(),
            block_decls: Vec::new(),
        }
    }

    fn code(&self, n: &Node) -> String {
        code(self.text, n)
    }

    fn next_position(&mut self) -> usize {
        match self.positions.last_mut() {
            Some(p) => {
                *p += 1;
                *p - 1
            }
            None => 0,
        }
    }
}

fn affine_refusal_at(offset: usize, text: &str, span: Span, e: AffineError) -> Refusal {
    let why = match e {
        AffineError::Overflow => "integer overflow in constant arithmetic",
        AffineError::TooManyPieces => "too many cases (nested conditionals)",
    };
    Refusal::new(offset, format!("`{}`", snippet(text, span)), why)
}

fn strip_parens(mut n: &Node) -> &Node {
    while n.kind == Kind::Paren && n.children.len() == 1 {
        n = &n.children[0];
    }
    n
}

/// Every declaration reference in a statement's tree.
fn collect_refs(n: &Node, out: &mut Vec<RawRef>) {
    if n.kind == Kind::DeclRef {
        if let Some(d) = &n.decl {
            out.push(RawRef {
                offset: n.offset,
                in_main_file: n.in_main_file,
                key: d.key.clone(),
                name: d.name.clone(),
            });
        }
    }
    for c in &n.children {
        collect_refs(c, out);
    }
}

/// Whether every way of satisfying `f` bounds `it` (an atom mentioning it, in a conjunction).
fn bounds_counter(f: &Formula, it: &Term) -> bool {
    match f {
        Formula::Ge(e) | Formula::Eq(e) => e.coefficient(it) != 0,
        Formula::And(parts) => parts.iter().any(|p| bounds_counter(p, it)),
        Formula::Or(parts) => parts.iter().all(|p| bounds_counter(p, it)),
        Formula::False => true,
        Formula::True | Formula::Stride(..) => false,
    }
}

/// The array's C name, or a variant of it when that would clash in ISL strings.
fn unique_isl_name(name: &str, taken: &HashSet<String>) -> String {
    let ok = |n: &str| is_isl_identifier(n) && !is_reserved_tuple_name(n) && !taken.contains(n);
    if ok(name) {
        return name.to_string();
    }
    let base: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let first = format!("{base}_");
    if ok(&first) {
        return first;
    }
    (1..)
        .map(|k| format!("{base}_{k}"))
        .find(|n| ok(n))
        .unwrap_or(first)
}

/// `[n] -> { S0[i, j] -> A[i, j + 1] }`, or with output dimensions constrained piecewise when a
/// subscript has several pieces.
fn access_relation(
    prefix: &str,
    tuple: &str,
    array: &str,
    subscripts: &[Pw],
    iters: &[String],
    params: &[String],
) -> std::result::Result<String, AffineError> {
    if let Some(simple) = subscripts
        .iter()
        .map(|s| s.as_affine())
        .collect::<Option<Vec<&LinExpr>>>()
    {
        let names = Names {
            iters,
            params,
            outs: &[],
        };
        let dims: Vec<String> = simple.iter().map(|e| names.expr(e)).collect();
        return Ok(format!(
            "{prefix}{{ {tuple} -> {array}[{}] }}",
            dims.join(", ")
        ));
    }
    let outs: Vec<String> = (0..subscripts.len())
        .map(|k| format!("{RESERVED_PREFIX}o{k}"))
        .collect();
    let names = Names {
        iters,
        params,
        outs: &outs,
    };
    let mut conjuncts = Vec::new();
    for (k, s) in subscripts.iter().enumerate() {
        let out = LinExpr::term(Term::Out(k));
        let mut cases = Vec::new();
        for (g, v) in &s.pieces {
            cases.push(Formula::and(vec![g.clone(), Formula::eq(out.sub(v)?)]));
        }
        conjuncts.push(Formula::or(cases));
    }
    let f = Formula::and(conjuncts);
    Ok(format!(
        "{prefix}{{ {tuple} -> {array}[{}] : {} }}",
        outs.join(", "),
        names.formula(&f)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isl_names_avoid_keywords_and_statement_names() {
        let taken: HashSet<String> = ["n".to_string(), "and_".to_string()].into_iter().collect();
        assert_eq!(unique_isl_name("A", &taken), "A");
        assert_eq!(unique_isl_name("S0", &taken), "S0_");
        assert_eq!(unique_isl_name("N12", &taken), "N12_");
        assert_eq!(unique_isl_name("Floor", &taken), "Floor_");
        assert_eq!(unique_isl_name("and", &taken), "and_1");
        assert_eq!(unique_isl_name("n", &taken), "n_");
        assert_eq!(unique_isl_name("S", &taken), "S");
        assert_eq!(unique_isl_name("S0x", &taken), "S0x");
    }

    #[test]
    fn pure_functions_accept_float_and_long_double_variants() {
        assert!(is_pure_function("sqrt"));
        assert!(is_pure_function("sqrtf"));
        assert!(is_pure_function("powl"));
        assert!(!is_pure_function("printf"));
        assert!(!is_pure_function("sqrtx"));
    }
}
