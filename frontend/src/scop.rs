//! SCoP extraction: turns each `#pragma scop` region of the lowered AST into an [`ir::Scop`](crate::ir::Scop),
//! or into one diagnostic saying why the region is not a static control part. The same rules
//! ([`build_statements`]) decide for the runs of statements that [`crate::auto`] proposes.
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

/// Extracts the SCoPs of the file: the pragma regions, or, when `auto` is set, the maximal
/// affine loop nests of every function (see [`crate::auto`]).
pub(crate) fn extract(
    path: &str,
    text: &str,
    parsed: &ParsedFile,
    mode: crate::ScopMode,
) -> (Vec<Scop>, Vec<Diagnostic>) {
    let lines = LineIndex::new(text);
    let directives = pragma::directives(&parsed.tokens, &parsed.skipped, &lines);
    let auto = match mode {
        crate::ScopMode::Auto => true,
        crate::ScopMode::Pragma => false,
        crate::ScopMode::PragmaIfPresent => !directives
            .iter()
            .any(|d| d.pragma.as_deref() == Some("scop")),
    };
    if auto {
        let (scops, refusals) = crate::auto::find(text, parsed, &directives, &lines);
        let notes = refusals
            .iter()
            .map(|r| Diagnostic {
                severity: Severity::Note,
                ..r.diagnostic(path, &lines)
            })
            .collect();
        return (scops, notes);
    }
    let (regions, problems) = pragma::regions(&directives, &lines);
    let mut refusals: Vec<Refusal> = problems
        .into_iter()
        .map(|p| Refusal::new(p.offset, p.what, p.why))
        .collect();
    let mut scops = Vec::new();
    for region in &regions {
        match build(text, parsed, &directives, region, &lines) {
            Ok(scop) => scops.push(scop),
            Err(r) => refusals.push(r),
        }
    }
    refusals.sort_by_key(|r| r.offset);
    (
        scops,
        refusals
            .iter()
            .map(|r| r.diagnostic(path, &lines))
            .collect(),
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

    // ----- statements ------------------------------------------------------------------------

    fn stmt(&mut self, n: &Node) -> Result<()> {
        let text = self.text;
        let refuse = |why: &str| Err(Refusal::new(n.span.start, code(text, n), why.to_string()));
        match &n.kind {
            Kind::Compound => {
                for c in &n.children {
                    self.stmt(c)?;
                }
                Ok(())
            }
            Kind::Null => Ok(()),
            Kind::For => self.for_loop(n),
            Kind::If => self.if_stmt(n),
            Kind::While | Kind::Do => refuse("only `for` loops with affine bounds are supported"),
            Kind::Switch => refuse("`switch` is not supported"),
            Kind::Return | Kind::Break | Kind::Continue | Kind::Goto | Kind::Label => {
                refuse("jumps out of the control flow are not supported")
            }
            Kind::DeclStmt => self.decl_stmt(n),
            Kind::TooDeep => refuse("nested too deeply"),
            kind if is_expression(kind) => self.expr_stmt(n),
            Kind::Other(kind) => refuse(&format!("unsupported statement ({kind})")),
            _ => refuse("unsupported statement"),
        }
    }

    fn if_stmt(&mut self, n: &Node) -> Result<()> {
        if n.children.len() < 2 || n.children.len() > 3 {
            return Err(Refusal::new(
                n.span.start,
                self.code(n),
                "unsupported form of `if`",
            ));
        }
        let cond = self.condition(&n.children[0])?;
        let not_cond = cond
            .not()
            .map_err(|e| affine_refusal(&n.children[0], self.text, e))?;
        self.conds.push(cond);
        let then = self.stmt(&n.children[1]);
        self.conds.pop();
        then?;
        if let Some(else_branch) = n.children.get(2) {
            self.conds.push(not_cond);
            let r = self.stmt(else_branch);
            self.conds.pop();
            r?;
        }
        Ok(())
    }

    fn for_loop(&mut self, n: &Node) -> Result<()> {
        let [init, cond, inc, body] = n.children.as_slice() else {
            return Err(Refusal::new(
                n.span.start,
                self.code(n),
                "a `for` loop needs an initialization, a condition and an increment",
            ));
        };
        let (decl, lb_node) = self.loop_init(init)?;
        let name = decl.name.clone();
        if !is_isl_identifier(&name) {
            return Err(Refusal::new(
                init.span.start,
                format!("loop counter `{name}`"),
                "its name is an ISL keyword",
            ));
        }
        if let Some(outer) = self.loops.iter().find(|l| l.name == name) {
            let why = if outer.key == decl.key {
                "it is already the counter of an enclosing loop"
            } else {
                "it shadows the counter of an enclosing loop"
            };
            return Err(Refusal::new(
                init.span.start,
                format!("loop counter `{name}`"),
                why,
            ));
        }
        let lb = self.affine(lb_node)?;
        let depth = self.loops.len();
        self.loops.push(LoopCtx {
            key: decl.key.clone(),
            name: name.clone(),
            formula: Formula::True,
            lower: None,
            upper: None,
        });
        self.counter_names.push((name, init.span.start));
        let r = self.for_loop_in_scope(n, depth, &lb, cond, inc, body);
        self.loops.pop();
        r
    }

    fn for_loop_in_scope(
        &mut self,
        n: &Node,
        depth: usize,
        lb: &Pw,
        cond: &Node,
        inc: &Node,
        body: &Node,
    ) -> Result<()> {
        let step = self.loop_step(inc, depth)?;
        let it = LinExpr::term(Term::Iter(depth));
        let text = self.text;
        let ar = |e: AffineError| affine_refusal(n, text, e);
        // Start: i >= lb (increasing) or i <= lb (decreasing), and i - lb a multiple of the step.
        let mut starts = Vec::new();
        for (g, v) in &lb.pieces {
            let dist = if step > 0 { it.sub(v) } else { v.sub(&it) }.map_err(ar)?;
            starts.push(Formula::and(vec![
                g.clone(),
                Formula::ge(dist.clone()),
                Formula::stride(dist, step),
            ]));
        }
        let start = Formula::or(starts);
        // Bounds known before the condition is read (used to prove dividends non-negative).
        let (lower, upper) = self.bounds_from(&start, depth);
        if let Some(l) = self.loops.last_mut() {
            l.lower = lower;
            l.upper = upper;
        }
        let cond_f = self.condition(cond)?;
        self.check_loop_condition(cond, &cond_f, depth, step > 0)?;
        let formula = Formula::and(vec![start, cond_f]);
        let (lower, upper) = self.bounds_from(&formula, depth);
        if let Some(l) = self.loops.last_mut() {
            l.formula = formula;
            l.lower = lower;
            l.upper = upper;
        }
        let pos = self.next_position();
        self.sched.push(SchedDim::Pos(pos));
        self.sched.push(SchedDim::Iter(depth, step > 0));
        self.positions.push(0);
        let r = self.stmt(body);
        self.positions.pop();
        self.sched.truncate(self.sched.len() - 2);
        r
    }

    /// The counter's declaration and its initial value from `i = lb` or `int i = lb`.
    fn loop_init<'n>(&self, init: &'n Node) -> Result<(&'n Decl, &'n Node)> {
        let text = self.text;
        let refuse = |why: &str| Refusal::new(init.span.start, code(text, init), why.to_string());
        let (decl, value) = match &init.kind {
            Kind::Binary(BinOp::Assign) if init.children.len() == 2 => {
                let lhs = strip(&init.children[0]);
                match (&lhs.kind, &lhs.decl) {
                    (Kind::DeclRef, Some(d)) => (d, &init.children[1]),
                    _ => return Err(refuse("the initialization must assign the loop counter")),
                }
            }
            Kind::DeclStmt => match init.children.as_slice() {
                [v] if v.kind == Kind::VarDecl => {
                    let d = v
                        .decl
                        .as_ref()
                        .ok_or_else(|| refuse("unknown declaration"))?;
                    let value = v
                        .children
                        .iter()
                        .rev()
                        .find(|c| c.kind != Kind::TypeRef)
                        .ok_or_else(|| refuse("the loop counter has no initial value"))?;
                    (d, value)
                }
                _ => {
                    return Err(refuse(
                        "the initialization must declare exactly one loop counter",
                    ))
                }
            },
            _ => return Err(refuse("the initialization must assign the loop counter")),
        };
        if !matches!(decl.kind, DeclKind::Var | DeclKind::Parm) || decl.file_scope {
            return Err(refuse("the loop counter must be a local variable"));
        }
        if decl.is_static {
            // Its final value would be seen by the next call.
            return Err(refuse("the loop counter must not be `static`"));
        }
        if !matches!(
            decl.ty,
            CType::Scalar {
                class: ScalarClass::SignedInt,
                ..
            }
        ) {
            return Err(refuse("the loop counter must have a signed integer type"));
        }
        Ok((decl, value))
    }

    /// The constant step of `i++`, `i--`, `i += c`, `i -= c`, `i = i + c`, ...
    fn loop_step(&mut self, inc: &Node, depth: usize) -> Result<i128> {
        let key = self.loops[depth].key.clone();
        let is_counter = |n: &Node| {
            let n = strip(n);
            n.kind == Kind::DeclRef && n.decl.as_ref().is_some_and(|d| d.key == key)
        };
        let text = self.text;
        let refuse = |why: &str| Refusal::new(inc.span.start, code(text, inc), why.to_string());
        let step = match &inc.kind {
            Kind::Unary(op @ (UnOp::PreInc | UnOp::PostInc | UnOp::PreDec | UnOp::PostDec))
                if inc.children.len() == 1 && is_counter(&inc.children[0]) =>
            {
                if matches!(op, UnOp::PreInc | UnOp::PostInc) {
                    1
                } else {
                    -1
                }
            }
            Kind::CompoundAssign(op @ (BinOp::AddAssign | BinOp::SubAssign))
                if inc.children.len() == 2 && is_counter(&inc.children[0]) =>
            {
                let c = self
                    .affine(&inc.children[1])?
                    .as_constant()
                    .ok_or_else(|| refuse("the loop step must be a constant"))?;
                if *op == BinOp::AddAssign {
                    c
                } else {
                    -c
                }
            }
            Kind::Binary(BinOp::Assign)
                if inc.children.len() == 2 && is_counter(&inc.children[0]) =>
            {
                let rhs = self.affine(&inc.children[1])?;
                let v = rhs
                    .as_affine()
                    .ok_or_else(|| refuse("the loop step must be a constant"))?;
                let mut rest = v.clone();
                let a = rest.terms.remove(&Term::Iter(depth)).unwrap_or(0);
                match (a, rest.as_constant()) {
                    (1, Some(c)) => c,
                    _ => {
                        return Err(refuse(
                            "the increment must add a constant to the loop counter",
                        ))
                    }
                }
            }
            _ => {
                return Err(refuse(
                    "the increment must add a constant to the loop counter",
                ))
            }
        };
        if step == 0 {
            return Err(refuse("the loop step is zero"));
        }
        Ok(step)
    }

    /// The loop condition must bound the counter on the side it moves to, so that the set of
    /// values satisfying it is exactly the set of iterations executed.
    fn check_loop_condition(
        &self,
        cond: &Node,
        f: &Formula,
        depth: usize,
        increasing: bool,
    ) -> Result<()> {
        let it = Term::Iter(depth);
        let name = &self.loops[depth].name;
        let mut bad: Option<&str> = None;
        f.for_each_atom(&mut |atom| {
            let (e, is_eq) = match atom {
                Formula::Ge(e) => (e, false),
                Formula::Eq(e) | Formula::Stride(e, _) => (e, true),
                _ => return,
            };
            let a = e.coefficient(&it);
            if e.mentions_nested(&it) {
                bad = Some("the loop counter appears inside a division or modulo in the condition");
            } else if a != 0 && (is_eq || (increasing && a > 0) || (!increasing && a < 0)) {
                bad = Some(
                    "the condition is not a bound on the loop counter in the direction it moves",
                );
            }
        });
        if let Some(why) = bad {
            return Err(Refusal::new(cond.span.start, self.code(cond), why));
        }
        if !bounds_counter(f, &it) {
            return Err(Refusal::new(
                cond.span.start,
                self.code(cond),
                format!("the condition does not bound the loop counter `{name}`"),
            ));
        }
        Ok(())
    }

    /// Constant bounds on the counter at `depth` implied by the top-level conjuncts of `f`.
    fn bounds_from(&self, f: &Formula, depth: usize) -> (Option<i128>, Option<i128>) {
        let it = Term::Iter(depth);
        let atoms: Vec<&Formula> = match f {
            Formula::And(parts) => parts.iter().collect(),
            other => vec![other],
        };
        let (mut lower, mut upper): (Option<i128>, Option<i128>) = (None, None);
        for atom in atoms {
            let Formula::Ge(e) = atom else { continue };
            let a = e.coefficient(&it);
            if e.mentions_nested(&it) || a.abs() != 1 {
                continue;
            }
            let mut rest = e.clone();
            rest.terms.remove(&it);
            if a == 1 {
                // i >= -rest
                if let Some(v) = self.max_value(&rest).and_then(|m| m.checked_neg()) {
                    lower = Some(lower.map_or(v, |l| l.max(v)));
                }
            } else if let Some(v) = self.max_value(&rest) {
                // i <= rest
                upper = Some(upper.map_or(v, |u| u.min(v)));
            }
        }
        (lower, upper)
    }

    fn term_range(&self, t: &Term) -> (Option<i128>, Option<i128>) {
        match t {
            Term::Iter(d) => self
                .loops
                .get(*d)
                .map_or((None, None), |l| (l.lower, l.upper)),
            Term::Param(_) | Term::Out(_) => (None, None),
            Term::Floor(e, c) => (
                self.min_value(e).map(|v| v.div_euclid(*c)),
                self.max_value(e).map(|v| v.div_euclid(*c)),
            ),
            Term::Mod(_, c) => (Some(0), Some(c - 1)),
        }
    }

    fn min_value(&self, e: &LinExpr) -> Option<i128> {
        let mut total = e.constant;
        for (t, &a) in &e.terms {
            let (lo, hi) = self.term_range(t);
            let v = if a > 0 { lo? } else { hi? };
            total = total.checked_add(a.checked_mul(v)?)?;
        }
        Some(total)
    }

    fn max_value(&self, e: &LinExpr) -> Option<i128> {
        let mut total = e.constant;
        for (t, &a) in &e.terms {
            let (lo, hi) = self.term_range(t);
            let v = if a > 0 { hi? } else { lo? };
            total = total.checked_add(a.checked_mul(v)?)?;
        }
        Some(total)
    }

    // ----- affine expressions and conditions ------------------------------------------------

    /// An affine condition (`&&`, `||`, `!`, comparisons, ternaries, integer values).
    fn condition(&mut self, n: &Node) -> Result<Formula> {
        let n = strip(n);
        let text = self.text;
        let ar = |e| affine_refusal(n, text, e);
        match &n.kind {
            Kind::Binary(op @ (BinOp::LAnd | BinOp::LOr)) if n.children.len() == 2 => {
                let a = self.condition(&n.children[0])?;
                let b = self.condition(&n.children[1])?;
                Ok(if *op == BinOp::LAnd {
                    Formula::and(vec![a, b])
                } else {
                    Formula::or(vec![a, b])
                })
            }
            Kind::Unary(UnOp::LNot) if n.children.len() == 1 => {
                self.condition(&n.children[0])?.not().map_err(ar)
            }
            Kind::Binary(
                op @ (BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne),
            ) if n.children.len() == 2 => {
                let cmp = match op {
                    BinOp::Lt => Cmp::Lt,
                    BinOp::Le => Cmp::Le,
                    BinOp::Gt => Cmp::Gt,
                    BinOp::Ge => Cmp::Ge,
                    BinOp::Eq => Cmp::Eq,
                    _ => Cmp::Ne,
                };
                // Blame the operand that is not an integer, not the implicit conversion of the
                // other one to its type.
                for c in &n.children {
                    let core = strip(c);
                    if !matches!(
                        core.ty,
                        CType::Scalar {
                            class: ScalarClass::SignedInt,
                            ..
                        }
                    ) {
                        self.affine(core)?;
                    }
                }
                let a = self.affine(&n.children[0])?;
                let b = self.affine(&n.children[1])?;
                a.compare(cmp, &b).map_err(ar)
            }
            Kind::Conditional if n.children.len() == 3 => {
                let c = self.condition(&n.children[0])?;
                let a = self.condition(&n.children[1])?;
                let b = self.condition(&n.children[2])?;
                let not_c = c.not().map_err(ar)?;
                Ok(Formula::or(vec![
                    Formula::and(vec![c, a]),
                    Formula::and(vec![not_c, b]),
                ]))
            }
            _ => {
                let v = self.affine(n)?;
                v.compare(Cmp::Ne, &Pw::single(LinExpr::constant(0)))
                    .map_err(ar)
            }
        }
    }

    /// A quasi-affine integer expression with C's semantics.
    fn affine(&mut self, n: &Node) -> Result<Pw> {
        let text = self.text;
        let refuse = |why: &str| Err(Refusal::new(n.span.start, code(text, n), why.to_string()));
        let ar = |e| affine_refusal(n, text, e);
        match strip(n).kind {
            Kind::Subscript => {
                return refuse("array elements are data-dependent values, not affine expressions")
            }
            Kind::Call => return refuse("function calls are not affine expressions"),
            _ => {}
        }
        match &n.ty {
            CType::Scalar {
                class: ScalarClass::SignedInt,
                ..
            } => {}
            CType::Scalar {
                class: ScalarClass::UnsignedInt,
                ..
            } => {
                return refuse(
                    "unsigned arithmetic wraps around, so it is not affine over the integers",
                )
            }
            CType::Scalar {
                class: ScalarClass::Float,
                ..
            } => {
                return refuse(
                    "floating-point value where an affine integer expression is required",
                )
            }
            _ => return refuse("not an integer expression"),
        }
        match &n.kind {
            Kind::IntLit | Kind::SizeOf => match n.int_value {
                Some(v) => Ok(Pw::single(LinExpr::constant(i128::from(v)))),
                None => refuse("not an integer constant that fits 64 bits"),
            },
            Kind::Paren | Kind::Unexposed if n.children.len() == 1 => self.affine(&n.children[0]),
            Kind::Cast if n.int_value.is_some() => Ok(Pw::single(LinExpr::constant(i128::from(
                n.int_value.unwrap_or(0),
            )))),
            Kind::Cast => {
                let Some(operand) = n.children.last().filter(|c| c.kind != Kind::TypeRef) else {
                    return refuse("unsupported cast");
                };
                match &n.ty {
                    CType::Scalar { unqualified, .. }
                        if matches!(
                            unqualified.as_str(),
                            "int" | "long" | "long long" | "__int128"
                        ) => {}
                    _ => return refuse("casts to types narrower than `int` may change the value"),
                }
                self.affine(operand)
            }
            Kind::DeclRef => self.symbol(n),
            Kind::Unary(UnOp::Minus) if n.children.len() == 1 => {
                self.affine(&n.children[0])?.map(|v| v.neg()).map_err(ar)
            }
            Kind::Unary(UnOp::Plus) if n.children.len() == 1 => self.affine(&n.children[0]),
            Kind::Binary(op @ (BinOp::Add | BinOp::Sub)) if n.children.len() == 2 => {
                let a = self.affine(&n.children[0])?;
                let b = self.affine(&n.children[1])?;
                if *op == BinOp::Add {
                    a.zip(&b, |x, y| x.add(y))
                } else {
                    a.zip(&b, |x, y| x.sub(y))
                }
                .map_err(ar)
            }
            Kind::Binary(BinOp::Mul) if n.children.len() == 2 => {
                let a = self.affine(&n.children[0])?;
                let b = self.affine(&n.children[1])?;
                if let Some(k) = b.as_constant() {
                    a.map(|v| v.scale(k)).map_err(ar)
                } else if let Some(k) = a.as_constant() {
                    b.map(|v| v.scale(k)).map_err(ar)
                } else {
                    refuse("product of two non-constant expressions is not affine")
                }
            }
            Kind::Binary(op @ (BinOp::Div | BinOp::Rem)) if n.children.len() == 2 => {
                let a = self.affine(&n.children[0])?;
                let b = self.affine(&n.children[1])?;
                let Some(c) = b.as_constant() else {
                    return refuse("division by a non-constant expression is not affine");
                };
                if c == 0 {
                    return refuse("division by zero");
                }
                let nonneg = |e: &LinExpr| self.min_value(e).is_some_and(|v| v >= 0);
                if *op == BinOp::Div {
                    a.c_div(c, &nonneg)
                } else {
                    a.c_rem(c, &nonneg)
                }
                .map_err(ar)
            }
            Kind::Conditional if n.children.len() == 3 => {
                let c = self.condition(&n.children[0])?;
                let a = self.affine(&n.children[1])?;
                let b = self.affine(&n.children[2])?;
                Pw::select(&c, &a, &b).map_err(ar)
            }
            Kind::TooDeep => refuse("nested too deeply"),
            _ => refuse("not an affine expression"),
        }
    }

    /// A variable inside an affine expression: an enclosing iterator, an enumeration constant
    /// or a parameter.
    fn symbol(&mut self, n: &Node) -> Result<Pw> {
        let Some(d) = &n.decl else {
            return Err(Refusal::new(
                n.span.start,
                self.code(n),
                "unknown declaration",
            ));
        };
        let refuse = |why: String| Err(Refusal::new(n.span.start, format!("`{}`", d.name), why));
        match d.kind {
            DeclKind::EnumConstant => {
                return Ok(Pw::single(LinExpr::constant(i128::from(
                    d.enum_value.unwrap_or(0),
                ))));
            }
            DeclKind::Var | DeclKind::Parm => {}
            _ => return refuse("not a variable".to_string()),
        }
        if let Some(depth) = self.loops.iter().position(|l| l.key == d.key) {
            return Ok(Pw::single(LinExpr::term(Term::Iter(depth))));
        }
        if self.counters.contains(&d.key) {
            return refuse("loop counter used outside its loop".to_string());
        }
        if self.written.contains(&d.key) {
            return refuse("assigned inside the region, so it cannot be a parameter".to_string());
        }
        if !matches!(
            d.ty,
            CType::Scalar {
                class: ScalarClass::SignedInt,
                ..
            }
        ) {
            return refuse("parameters must be signed integer variables".to_string());
        }
        if let Some(k) = self.params.iter().position(|p| p.key == d.key) {
            return Ok(Pw::single(LinExpr::term(Term::Param(k))));
        }
        if !is_isl_identifier(&d.name) {
            return refuse("its name is an ISL keyword, so it cannot be a parameter".to_string());
        }
        if self.params.iter().any(|p| p.name == d.name) {
            return refuse("two different variables with this name are parameters".to_string());
        }
        let c_type = match &d.ty {
            CType::Scalar { unqualified, .. } => unqualified.clone(),
            _ => String::new(),
        };
        self.params.push(ParamInfo {
            key: d.key.clone(),
            name: d.name.clone(),
            c_type,
            storage: if d.file_scope {
                Storage::File
            } else {
                Storage::Local
            },
        });
        Ok(Pw::single(LinExpr::term(Term::Param(
            self.params.len() - 1,
        ))))
    }

    // ----- statement bodies ------------------------------------------------------------------

    fn expr_stmt(&mut self, n: &Node) -> Result<()> {
        if !n.in_main_file {
            return Err(Refusal::new(
                n.span.start,
                self.code(n),
                "the statement is not written in this file",
            ));
        }
        // A statement that is a function-like macro's whole expansion (`UPD(C, i);`) starts,
        // as written, at the macro's name: libclang's extent starts at the first argument the
        // expansion spells.
        let call = self.macro_call_start(n.span.start);
        let start = call.as_ref().map_or(n.span.start, |(start, _)| *start);
        let end = self.statement_end(start, n.span.end).ok_or_else(|| {
            let why = match &call {
                Some((_, name)) => format!(
                    "the call of macro `{name}` is not followed by its own `;` (the `;` comes from the macro's definition): write `{name}(...);`"
                ),
                None => "the statement's text is not delimited by its own `;` (macro?)".to_string(),
            };
            Refusal::new(n.span.start, self.code(n), why)
        })?;
        let span = Span { start, end };
        let top = strip_parens(n);
        if splits(top) {
            if let Some((at, name)) = &call {
                return Err(Refusal::new(
                    *at,
                    format!("`{name}(...)`"),
                    format!("the comma expression or chained assignment that macro `{name}` expands to cannot be split into its statements from the written text"),
                ));
            }
            return self.split_expression(top);
        }
        let accesses = self.effect(n, top)?;
        let mut refs = Vec::new();
        collect_refs(n, &mut refs);
        self.push_stmt(accesses, refs, span, vec![Segment::Source(span)]);
        Ok(())
    }

    /// The accesses of an assignment, compound assignment or increment `top` (the statement
    /// `n`, parentheses stripped).
    fn effect(&mut self, n: &Node, top: &Node) -> Result<Vec<RawAccess>> {
        let mut accesses = Vec::new();
        match &top.kind {
            Kind::Binary(BinOp::Assign) if top.children.len() == 2 => {
                self.access(&top.children[0], &[AccessKind::Write], &mut accesses)?;
                self.reads(&top.children[1], &mut accesses)?;
            }
            Kind::CompoundAssign(_) if top.children.len() == 2 => {
                self.access(
                    &top.children[0],
                    &[AccessKind::Read, AccessKind::Write],
                    &mut accesses,
                )?;
                self.reads(&top.children[1], &mut accesses)?;
            }
            Kind::Unary(UnOp::PreInc | UnOp::PostInc | UnOp::PreDec | UnOp::PostDec)
                if top.children.len() == 1 =>
            {
                self.access(
                    &top.children[0],
                    &[AccessKind::Read, AccessKind::Write],
                    &mut accesses,
                )?;
            }
            _ => return Err(Refusal::new(
                n.span.start,
                self.code(n),
                "only assignments, compound assignments and increments are supported as statements",
            )),
        }
        Ok(accesses)
    }

    /// A comma expression or a chained assignment, as the statements it sequences: `a, b;` is
    /// `a; b;`, and `x = y = e;` is `y = e; x = y;` (C gives the inner assignment's value as
    /// `y` holds it afterwards; `x` and `y` being one element is undefined behaviour, so reading
    /// `y` back is exact). Each part's text is cut from the source, so each must be whole tokens
    /// of this file, the operator between them included.
    fn split_expression(&mut self, e: &Node) -> Result<()> {
        let e = strip_parens(e);
        let refuse = |why: &str| {
            Err(Refusal::new(
                e.span.start,
                code(self.text, e),
                why.to_string(),
            ))
        };
        if !self.whole_tokens(e.span) {
            return refuse("the statement's parts are not written in this file's text (macro?)");
        }
        if let (Kind::Binary(BinOp::Comma), [a, b]) = (&e.kind, e.children.as_slice()) {
            self.split_expression(a)?;
            return self.split_expression(b);
        }
        let inner = match (&e.kind, e.children.as_slice()) {
            (Kind::Binary(BinOp::Assign) | Kind::CompoundAssign(_), [_, rhs]) => {
                Some(strip(rhs)).filter(|r| assigns(r))
            }
            _ => None,
        };
        let Some(inner) = inner else {
            let accesses = self.effect(e, e)?;
            let mut refs = Vec::new();
            collect_refs(e, &mut refs);
            self.push_stmt(
                accesses,
                refs,
                e.span,
                vec![Segment::Source(e.span), Segment::Text(";")],
            );
            return Ok(());
        };
        let (lhs, rhs) = (&e.children[0], &e.children[1]);
        let Some(inner_lhs) = inner
            .children
            .first()
            .filter(|_| inner.kind != Kind::Binary(BinOp::Comma))
        else {
            return refuse("a comma expression assigned is not supported");
        };
        self.split_expression(inner)?;
        // `lhs op inner_lhs;`, with the operator as written.
        let op = self
            .tokens
            .get(self.tokens.partition_point(|t| t.span.start < lhs.span.end));
        let op = match op.map(|t| t.spelling.as_str()) {
            Some("=") => " = ",
            Some("+=") => " += ",
            Some("-=") => " -= ",
            Some("*=") => " *= ",
            Some("/=") => " /= ",
            Some("%=") => " %= ",
            Some("<<=") => " <<= ",
            Some(">>=") => " >>= ",
            Some("&=") => " &= ",
            Some("^=") => " ^= ",
            Some("|=") => " |= ",
            _ => {
                return refuse(
                    "the assignment's operator is not written in this file's text (macro?)",
                )
            }
        };
        if !self.whole_tokens(lhs.span)
            || !self.whole_tokens(inner_lhs.span)
            || !self.whole_tokens(rhs.span)
        {
            return refuse("the statement's parts are not written in this file's text (macro?)");
        }
        let mut accesses = Vec::new();
        let kinds: &[AccessKind] = match e.kind {
            Kind::Binary(BinOp::Assign) => &[AccessKind::Write],
            _ => &[AccessKind::Read, AccessKind::Write],
        };
        self.access(lhs, kinds, &mut accesses)?;
        self.reads(inner_lhs, &mut accesses)?;
        let mut refs = Vec::new();
        collect_refs(lhs, &mut refs);
        collect_refs(inner_lhs, &mut refs);
        self.push_stmt(
            accesses,
            refs,
            e.span,
            vec![
                Segment::Source(lhs.span),
                Segment::Text(op),
                Segment::Source(inner_lhs.span),
                Segment::Text(";"),
            ],
        );
        Ok(())
    }

    /// `span` is whole tokens of this file: a token starts where it starts and one ends where
    /// it ends.
    fn whole_tokens(&self, span: Span) -> bool {
        let first = self.tokens.partition_point(|t| t.span.start < span.start);
        let starts = self
            .tokens
            .get(first)
            .is_some_and(|t| t.span.start == span.start);
        let ends = self.tokens[first..]
            .iter()
            .take_while(|t| t.span.start < span.end)
            .last()
            .is_some_and(|t| t.span.end == span.end);
        span.start < span.end && starts && ends
    }

    /// A statement of `accesses` at the current position: `span` for its location, `refs` the
    /// references in its `text`.
    fn push_stmt(
        &mut self,
        accesses: Vec<RawAccess>,
        refs: Vec<RawRef>,
        span: Span,
        text: Vec<Segment>,
    ) {
        let mut schedule = self.sched.clone();
        schedule.push(SchedDim::Pos(self.next_position()));
        let mut parts: Vec<Formula> = self.loops.iter().map(|l| l.formula.clone()).collect();
        parts.extend(self.conds.iter().cloned());
        self.stmts.push(RawStmt {
            iter_keys: self.loops.iter().map(|l| l.key.clone()).collect(),
            iter_names: self.loops.iter().map(|l| l.name.clone()).collect(),
            domain: Formula::and(parts),
            schedule,
            accesses,
            refs,
            span,
            text,
        });
    }

    /// `T x = e, y;` inside a loop or branch of the region. Each declared scalar is a variable of
    /// the SCoP that the generated code declares once, at the head of its block
    /// (`Storage::Block`), and each initializer a statement `x = e;`. One variable for all
    /// iterations computes what a fresh one per iteration does: an iteration reads it only after
    /// writing it (reading an uninitialized variable is undefined), and the dependences between
    /// iterations that sharing it adds are the ones scalar privatization removes.
    fn decl_stmt(&mut self, n: &Node) -> Result<()> {
        let text = self.text;
        let refuse = |at: &Node, why: &str| {
            Err(Refusal::new(at.span.start, code(text, at), why.to_string()))
        };
        if self.loops.is_empty() && self.conds.is_empty() {
            return refuse(
                n,
                "declarations outside the region's loops and branches are not supported (the variable is visible after the region)",
            );
        }
        for v in &n.children {
            let Some(d) = v.decl.as_ref().filter(|_| v.kind == Kind::VarDecl) else {
                return refuse(v, "unsupported declaration");
            };
            if d.is_static {
                return refuse(
                    v,
                    "`static` variables declared inside the region are not supported",
                );
            }
            let CType::Scalar { spelling, .. } = &d.ty else {
                return refuse(v, "only scalar variables may be declared inside the region");
            };
            if spelling.split_whitespace().any(|w| w == "volatile") {
                return refuse(
                    v,
                    "`volatile` variables declared inside the region are not supported",
                );
            }
            self.block_decls.push((d.key.clone(), v.offset));
            let init = v.children.iter().rev().find(|c| c.kind != Kind::TypeRef);
            match init {
                Some(init) if is_expression(&init.kind) => self.initializer(v, d, init)?,
                Some(other) => return refuse(other, "unsupported declaration"),
                None => {}
            }
        }
        Ok(())
    }

    /// The statement `x = e;` of the declaration `v` of `x` with the initializer `init`.
    fn initializer(&mut self, v: &Node, d: &Decl, init: &Node) -> Result<()> {
        let text = self.text;
        let refuse = |why: &str| Err(Refusal::new(v.span.start, code(text, v), why.to_string()));
        // The initializer's text is re-emitted: it must be exactly the tokens between `=` and
        // the `,` or `;` that end the declarator.
        let first = self
            .tokens
            .partition_point(|t| t.span.start < init.span.start);
        let after = self
            .tokens
            .partition_point(|t| t.span.start < init.span.end);
        let delimited = v.in_main_file
            && init.in_main_file
            && first > 0
            && self.tokens[first - 1].spelling == "="
            && self
                .tokens
                .get(first)
                .is_some_and(|t| t.span.start == init.span.start)
            && self
                .tokens
                .get(after)
                .is_some_and(|t| matches!(t.spelling.as_str(), "," | ";"));
        if !delimited {
            return refuse("the initializer's text is not delimited by `=` and `;` (macro?)");
        }
        let shape = array_shape(&d.ty)
            .map_err(|why| Refusal::new(v.span.start, format!("`{}`", d.name), why))?;
        let array = self.array_index(d, shape, v.offset);
        self.arrays[array].written = true;
        let mut accesses = vec![RawAccess {
            kind: AccessKind::Write,
            array,
            subscripts: Vec::new(),
        }];
        self.reads(init, &mut accesses)?;
        let mut refs = Vec::new();
        collect_refs(init, &mut refs);
        let text = vec![
            Segment::Var(d.key.clone()),
            Segment::Text(" = "),
            Segment::Source(init.span),
            Segment::Text(";"),
        ];
        self.push_stmt(accesses, refs, init.span, text);
        Ok(())
    }

    /// End (after the `;`) of the expression statement starting at `start`: the first `;` at
    /// bracket depth 0, which must not come before the expression's end.
    /// Where the function-like macro call whose arguments hold offset `start` begins (its name),
    /// and the name, when `start` (the start of an expression statement's extent) lies inside
    /// such a call: a written statement never starts inside parentheses, so an unmatched `(`
    /// before it, within the statement (no `;`, `{` or `}` in between), right after an
    /// identifier, is a macro's call. For nested calls (`OUTER(INNER(x, i))`), the outermost.
    fn macro_call_start(&self, start: usize) -> Option<(usize, String)> {
        let mut found = None;
        let mut at = self.tokens.partition_point(|t| t.span.start < start);
        'outer: loop {
            let mut depth = 0i32;
            for j in (0..at).rev() {
                let t = &self.tokens[j];
                if t.kind != TokenKind::Punctuation {
                    continue;
                }
                match t.spelling.as_str() {
                    ";" | "{" | "}" => break 'outer,
                    ")" | "]" => depth += 1,
                    "[" => depth -= 1,
                    "(" if depth > 0 => depth -= 1,
                    "(" => {
                        let name = j.checked_sub(1).map(|k| &self.tokens[k])?;
                        if name.kind != TokenKind::Identifier {
                            return None;
                        }
                        found = Some((name.span.start, name.spelling.clone()));
                        at = j - 1;
                        continue 'outer;
                    }
                    _ => {}
                }
            }
            break;
        }
        found
    }

    fn statement_end(&self, start: usize, min_end: usize) -> Option<usize> {
        let first = self.tokens.partition_point(|t| t.span.start < start);
        let mut depth = 0i32;
        for t in &self.tokens[first..] {
            if t.kind != TokenKind::Punctuation {
                continue;
            }
            match t.spelling.as_str() {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => {
                    depth -= 1;
                    if depth < 0 {
                        return None;
                    }
                }
                ";" if depth == 0 => {
                    // Between the expression and its `;` only the closing parentheses of a
                    // macro call may lie (`x = SCALAR_VAL(0.5);` ends inside the call).
                    let tail =
                        &self.tokens[self.tokens.partition_point(|u| u.span.start < min_end)..];
                    let closing_only = tail
                        .iter()
                        .take_while(|u| u.span.start < t.span.start)
                        .all(|u| u.spelling == ")");
                    return (t.span.end >= min_end && closing_only).then_some(t.span.end);
                }
                _ => {}
            }
        }
        None
    }

    /// An lvalue accessed as `kinds` (a write, or a read then a write).
    fn access(&mut self, n: &Node, kinds: &[AccessKind], out: &mut Vec<RawAccess>) -> Result<()> {
        let target = strip(n);
        let mut subscripts_nodes = Vec::new();
        let mut base = target;
        while base.kind == Kind::Subscript && base.children.len() == 2 {
            subscripts_nodes.push(&base.children[1]);
            base = strip(&base.children[0]);
        }
        subscripts_nodes.reverse();
        let writes = kinds.contains(&AccessKind::Write);
        if matches!(base.kind, Kind::Unary(UnOp::Deref | UnOp::AddrOf)) {
            return Err(Refusal::new(
                target.span.start,
                self.code(target),
                "pointer operations are not supported",
            ));
        }
        if base.kind == Kind::Member {
            return Err(Refusal::new(
                target.span.start,
                self.code(target),
                "struct and union members are not supported",
            ));
        }
        let (Kind::DeclRef, Some(d)) = (&base.kind, &base.decl) else {
            let why = if writes {
                "only array elements and scalar variables may be assigned"
            } else {
                "only array elements and scalar variables may be read"
            };
            return Err(Refusal::new(target.span.start, self.code(target), why));
        };
        if !matches!(d.kind, DeclKind::Var | DeclKind::Parm) {
            return Err(Refusal::new(
                target.span.start,
                self.code(target),
                "not a variable",
            ));
        }
        if self.loops.iter().any(|l| l.key == d.key) {
            if writes {
                return Err(Refusal::new(
                    target.span.start,
                    self.code(target),
                    "assignment to a loop counter",
                ));
            }
            return Ok(()); // an iterator value: no memory access
        }
        if subscripts_nodes.is_empty() && self.counters.contains(&d.key) {
            return Err(Refusal::new(
                target.span.start,
                format!("`{}`", d.name),
                "loop counter used outside its loop",
            ));
        }
        let (rank, elem_type, extents) = array_shape(&d.ty)
            .map_err(|why| Refusal::new(target.span.start, format!("`{}`", d.name), why))?;
        if rank != subscripts_nodes.len() {
            let why = if subscripts_nodes.is_empty() {
                format!(
                    "the array `{}` is used as a pointer; it must be accessed element by element",
                    d.name
                )
            } else {
                format!(
                    "`{}` has {rank} dimension(s) but is accessed with {} subscript(s)",
                    d.name,
                    subscripts_nodes.len()
                )
            };
            return Err(Refusal::new(target.span.start, self.code(target), why));
        }
        let mut subscripts = Vec::new();
        for s in subscripts_nodes {
            subscripts.push(self.affine(s).map_err(|r| Refusal {
                why: format!("subscript is not affine: {}", r.why),
                ..r
            })?);
        }
        let array = self.array_index(d, (rank, elem_type, extents), target.span.start);
        for &kind in kinds {
            if kind == AccessKind::Write {
                self.arrays[array].written = true;
            }
            out.push(RawAccess {
                kind,
                array,
                subscripts: subscripts.clone(),
            });
        }
        Ok(())
    }

    fn array_index(&mut self, d: &Decl, (rank, elem_type, extents): Shape, offset: usize) -> usize {
        if let Some(k) = self.arrays.iter().position(|a| a.key == d.key) {
            return k;
        }
        // An array parameter is a pointer (libclang gives it its type as written).
        let pointer = matches!(d.ty, CType::Pointer(_))
            || (d.kind == DeclKind::Parm && matches!(d.ty, CType::Array(..)));
        let mut extents = extents;
        if let (true, Some(first)) = (pointer, extents.first_mut()) {
            *first = None;
        }
        let block = self.block_decls.iter().any(|(k, _)| *k == d.key);
        // A scalar declared in the region is declared again by the generated code, and assigned.
        let elem_type = match &d.ty {
            CType::Scalar { unqualified, .. } if block => unqualified.clone(),
            _ => elem_type,
        };
        self.arrays.push(ArrayInfo {
            key: d.key.clone(),
            name: d.name.clone(),
            elem_type,
            rank,
            extents,
            pointer,
            restrict: d.restrict,
            offset,
            storage: if d.file_scope {
                Storage::File
            } else if block {
                Storage::Block
            } else {
                Storage::Local
            },
            written: false,
        });
        self.arrays.len() - 1
    }

    /// The reads of a right-hand side.
    fn reads(&mut self, n: &Node, out: &mut Vec<RawAccess>) -> Result<()> {
        let text = self.text;
        let refuse = |why: &str| Err(Refusal::new(n.span.start, code(text, n), why.to_string()));
        match &n.kind {
            Kind::IntLit | Kind::FloatLit | Kind::CharLit => Ok(()),
            Kind::SizeOf if n.int_value.is_some() => Ok(()),
            Kind::Subscript => self.access(n, &[AccessKind::Read], out),
            Kind::DeclRef => match n.decl.as_ref().map(|d| d.kind) {
                Some(DeclKind::EnumConstant) => Ok(()),
                Some(DeclKind::Var | DeclKind::Parm) => self.access(n, &[AccessKind::Read], out),
                _ => refuse("unsupported reference"),
            },
            Kind::Paren | Kind::Unexposed if n.children.len() == 1 => {
                self.reads(&n.children[0], out)
            }
            Kind::Cast => match n.children.last() {
                Some(c) if c.kind != Kind::TypeRef => self.reads(c, out),
                _ => refuse("unsupported cast"),
            },
            Kind::Unary(UnOp::Plus | UnOp::Minus | UnOp::Not | UnOp::LNot)
                if n.children.len() == 1 =>
            {
                self.reads(&n.children[0], out)
            }
            Kind::Unary(UnOp::AddrOf | UnOp::Deref) => {
                refuse("pointer operations are not supported")
            }
            Kind::Unary(UnOp::PreInc | UnOp::PostInc | UnOp::PreDec | UnOp::PostDec)
            | Kind::Binary(BinOp::Assign)
            | Kind::CompoundAssign(_) => {
                refuse("side effects nested inside an expression are not supported")
            }
            Kind::Binary(_) | Kind::Conditional => {
                for c in &n.children {
                    self.reads(c, out)?;
                }
                Ok(())
            }
            Kind::Call => {
                let callee = n.children.first().map(strip);
                let name = match callee {
                    Some(c)
                        if c.kind == Kind::DeclRef
                            && c.decl
                                .as_ref()
                                .is_some_and(|d| d.kind == DeclKind::Function) =>
                    {
                        c.decl.as_ref().map(|d| d.name.clone()).unwrap_or_default()
                    }
                    _ => return refuse("indirect calls may have side effects"),
                };
                if !is_pure_function(&name) {
                    return Err(Refusal::new(
                        n.span.start,
                        format!("call to `{name}`"),
                        "only pure math functions may be called inside a SCoP",
                    ));
                }
                for c in &n.children[1..] {
                    self.reads(c, out)?;
                }
                Ok(())
            }
            Kind::Member => refuse("struct and union members are not supported"),
            Kind::TooDeep => refuse("nested too deeply"),
            _ => refuse("unsupported expression"),
        }
    }

    // ----- result ----------------------------------------------------------------------------

    /// Refuses two variables of which one is written, one is a pointer that may point into the
    /// other, and neither is `restrict`. Distinct array variables never overlap; a scalar can be
    /// reached through a pointer only if it is declared at file scope or its address is taken
    /// in the function (`address_taken`).
    fn check_aliasing(&self, address_taken: &HashSet<String>) -> Result<()> {
        let arrays: Vec<&ArrayInfo> = self
            .arrays
            .iter()
            .filter(|a| a.rank > 0 || a.storage == Storage::File || address_taken.contains(&a.key))
            .collect();
        for (k, x) in arrays.iter().enumerate() {
            for y in &arrays[k + 1..] {
                let pair_may_overlap = (x.pointer || y.pointer)
                    && !x.restrict
                    && !y.restrict
                    && may_alias_types(&x.elem_type, &y.elem_type);
                if pair_may_overlap && (x.written || y.written) {
                    let (w, other) = if x.written { (x, y) } else { (y, x) };
                    let how = if x.pointer && y.pointer {
                        "both are pointers".to_string()
                    } else {
                        let (p, o) = if x.pointer { (x, y) } else { (y, x) };
                        format!("`{}` is a pointer that may point into `{}`", p.name, o.name)
                    };
                    return Err(Refusal::new(
                        x.offset.max(y.offset),
                        format!("`{}` and `{}`", w.name, other.name),
                        format!(
                            "array parameters that may alias: `{}` is written and {how}; declare \
                             one of them `restrict`, or mark the nest with `#pragma scop` to \
                             promise that they do not overlap",
                            w.name
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    fn finish(self, function: &Function, region: &Region, lines: &LineIndex) -> Result<Scop> {
        let param_names: Vec<String> = self.params.iter().map(|p| p.name.clone()).collect();
        if let Some((name, offset)) = self
            .counter_names
            .iter()
            .find(|(n, _)| param_names.contains(n))
        {
            return Err(Refusal::new(
                *offset,
                format!("loop counter `{name}`"),
                "a parameter has the same name",
            ));
        }
        // Scalars that turned out to be parameters are values, not memory.
        let param_keys: HashSet<&str> = self.params.iter().map(|p| p.key.as_str()).collect();
        let mut new_id: Vec<Option<ArrayId>> = Vec::new();
        let mut arrays: Vec<Array> = Vec::new();
        let mut taken: HashSet<String> = param_names.iter().cloned().collect();
        taken.extend(self.counter_names.iter().map(|(n, _)| n.clone()));
        let mut block_names: HashSet<String> = HashSet::new();
        for a in &self.arrays {
            if param_keys.contains(a.key.as_str()) {
                new_id.push(None);
                continue;
            }
            let id = ArrayId(u32::try_from(arrays.len()).unwrap_or(u32::MAX));
            let name = match a.storage {
                Storage::Block => {
                    let name = self.block_scalar_name(a, &block_names);
                    block_names.insert(name.clone());
                    name
                }
                _ => a.name.clone(),
            };
            let isl_name = unique_isl_name(&name, &taken);
            taken.insert(isl_name.clone());
            arrays.push(Array {
                id,
                name,
                isl_name,
                elem_type: a.elem_type.clone(),
                rank: a.rank,
                extents: a.extents.clone(),
                storage: a.storage,
                written: a.written,
            });
            new_id.push(Some(id));
        }
        let array_keys: HashMap<&str, ArrayId> = self
            .arrays
            .iter()
            .zip(&new_id)
            .filter_map(|(a, id)| id.map(|id| (a.key.as_str(), id)))
            .collect();
        let prefix = if param_names.is_empty() {
            String::new()
        } else {
            format!("[{}] -> ", param_names.join(", "))
        };
        let sched_len = self
            .stmts
            .iter()
            .map(|s| s.schedule.len())
            .max()
            .unwrap_or(1);
        let mut statements = Vec::new();
        for (k, s) in self.stmts.iter().enumerate() {
            let id = StmtId(u32::try_from(k).unwrap_or(u32::MAX));
            let names = Names {
                iters: &s.iter_names,
                params: &param_names,
                outs: &[],
            };
            let tuple = format!("{id}[{}]", s.iter_names.join(", "));
            let domain = match &s.domain {
                Formula::True => format!("{prefix}{{ {tuple} }}"),
                f => format!("{prefix}{{ {tuple} : {} }}", names.formula(f)),
            };
            let mut dims: Vec<String> = s
                .schedule
                .iter()
                .map(|d| match d {
                    SchedDim::Pos(p) => p.to_string(),
                    SchedDim::Iter(depth, true) => s.iter_names[*depth].clone(),
                    SchedDim::Iter(depth, false) => format!("-{}", s.iter_names[*depth]),
                })
                .collect();
            dims.resize(sched_len, "0".to_string());
            let schedule = format!("{prefix}{{ {tuple} -> [{}] }}", dims.join(", "));
            let mut accesses: Vec<Access> = Vec::new();
            for a in &s.accesses {
                let Some(array) = new_id[a.array] else {
                    continue;
                };
                let relation = access_relation(
                    &prefix,
                    &tuple,
                    &arrays[array.index()].isl_name,
                    &a.subscripts,
                    &s.iter_names,
                    &param_names,
                )
                .map_err(|e| affine_refusal_at(s.span.start, self.text, s.span, e))?;
                let access = Access {
                    kind: a.kind,
                    array,
                    relation,
                };
                if !accesses.contains(&access) {
                    accesses.push(access);
                }
            }
            let body = self.body_pieces(s, &array_keys, &arrays)?;
            statements.push(Statement {
                id,
                iterators: s.iter_names.clone(),
                domain,
                schedule,
                accesses,
                body,
                span: s.span,
                loc: lines.loc(s.span.start),
            });
        }
        let params = self
            .params
            .iter()
            .map(|p| Param {
                name: p.name.clone(),
                c_type: p.c_type.clone(),
                storage: p.storage,
            })
            .collect();
        Ok(Scop {
            function: function.name.clone(),
            region: region.outer,
            insert_at: lines.line_start(function.span.start),
            loc: region.loc,
            params,
            context: format!("{prefix}{{ : }}"),
            arrays,
            statements,
            macros: Vec::new(),
            undefined_macros: Vec::new(),
        })
    }

    /// The C name of a scalar declared in the region, which the generated code declares at the
    /// head of the whole SCoP: its own name unless that name means anything else anywhere in
    /// the file (another variable, a function, a macro's text, which the declaration would
    /// shadow in the rest of the SCoP) or is one of `chosen` (the names of the others), else a
    /// fresh one.
    fn block_scalar_name(&self, a: &ArrayInfo, chosen: &HashSet<String>) -> String {
        let mine: HashSet<usize> = self
            .block_decls
            .iter()
            .filter(|(k, _)| *k == a.key)
            .map(|&(_, offset)| offset)
            .chain(
                self.stmts
                    .iter()
                    .flat_map(|s| &s.refs)
                    .filter(|r| r.key == a.key)
                    .map(|r| r.offset),
            )
            .collect();
        let used = |name: &str| {
            chosen.contains(name)
                || self.tokens.iter().any(|t| {
                    t.kind == TokenKind::Identifier
                        && t.spelling == name
                        && !(name == a.name && mine.contains(&t.span.start))
                })
        };
        if !used(&a.name) {
            return a.name.clone();
        }
        (1..)
            .map(|k| format!("{}_{k}", a.name))
            .find(|n| !used(n))
            .unwrap_or_else(|| a.name.clone())
    }

    /// Splits the statement's text at its iterator and variable references, after checking that
    /// every such reference is visible in the text (and every such name in the text is one).
    fn body_pieces(
        &self,
        s: &RawStmt,
        array_keys: &HashMap<&str, ArrayId>,
        arrays: &[Array],
    ) -> Result<Vec<BodyPiece>> {
        #[derive(Clone, Copy, PartialEq)]
        enum Target {
            Iter(usize),
            Var(ArrayId),
        }
        let target_of = |key: &str| -> Option<Target> {
            if let Some(k) = s.iter_keys.iter().position(|i| i == key) {
                return Some(Target::Iter(k));
            }
            array_keys.get(key).map(|&id| Target::Var(id))
        };
        let sources: Vec<Span> = s
            .text
            .iter()
            .filter_map(|x| match x {
                Segment::Source(span) => Some(*span),
                _ => None,
            })
            .collect();
        let mut at: HashMap<usize, (Target, &str)> = HashMap::new();
        for r in &s.refs {
            let Some(target) = target_of(&r.key) else {
                continue;
            };
            let token = self
                .tokens
                .get(self.tokens.partition_point(|t| t.span.start < r.offset))
                .filter(|t| t.span.start == r.offset);
            let in_text = sources
                .iter()
                .any(|x| x.start <= r.offset && r.offset < x.end);
            let visible = r.in_main_file
                && in_text
                && token.is_some_and(|t| t.kind == TokenKind::Identifier && t.spelling == r.name);
            if !visible {
                return Err(Refusal::new(
                    s.span.start,
                    format!("`{}`", snippet(self.text, s.span)),
                    format!(
                        "the statement comes from a macro expansion that hides its use of `{}`",
                        r.name
                    ),
                ));
            }
            at.insert(r.offset, (target, r.name.as_str()));
        }
        let mut sensitive: HashSet<&str> = s.iter_names.iter().map(|n| n.as_str()).collect();
        sensitive.extend(arrays.iter().map(|a| a.name.as_str()));
        let mut pieces = Vec::new();
        for segment in &s.text {
            let span = match segment {
                Segment::Source(span) => *span,
                Segment::Text(text) => {
                    pieces.push(BodyPiece::Text(text.to_string()));
                    continue;
                }
                Segment::Var(key) => {
                    if let Some(&id) = array_keys.get(key.as_str()) {
                        pieces.push(BodyPiece::Var(id));
                    }
                    continue;
                }
            };
            let mut pos = span.start;
            let first = self.tokens.partition_point(|t| t.span.start < span.start);
            for t in self.tokens[first..]
                .iter()
                .take_while(|t| t.span.end <= span.end)
            {
                if t.kind != TokenKind::Identifier {
                    continue;
                }
                let target = match at.get(&t.span.start) {
                    Some((target, name)) if *name == t.spelling => *target,
                    _ if sensitive.contains(t.spelling.as_str()) => {
                        return Err(Refusal::new(
                            t.span.start,
                            format!("`{}`", t.spelling),
                            "this occurrence is not a plain reference to the variable (macro argument or token pasting), so the statement cannot be re-emitted",
                        ));
                    }
                    _ => continue,
                };
                if pos < t.span.start {
                    pieces.push(BodyPiece::Text(self.text[pos..t.span.start].to_string()));
                }
                pieces.push(match target {
                    Target::Iter(k) => BodyPiece::Iter(k),
                    Target::Var(id) => BodyPiece::Var(id),
                });
                pos = t.span.end;
            }
            if pos < span.end {
                pieces.push(BodyPiece::Text(self.text[pos..span.end].to_string()));
            }
        }
        Ok(pieces)
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
