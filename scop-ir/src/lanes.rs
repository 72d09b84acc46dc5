//! A statement's text read as vector code: which occurrences of its variables are vectors of
//! consecutive elements along one of its iterators (the lanes), and whether the rest of the text
//! means the same when those occurrences are vectors of the C compiler's vector extension.
//!
//! The register-tiled vector kernels of the tile code (`polyhedral::kernel`) print a statement
//! with the occurrences whose last subscript is the lane iterator (`B[k][j]`, `C[i][j + 1]`)
//! wrapped in a macro that reads them as a vector (`TF_VD(B[k][j])`), and every other
//! occurrence as it is (a scalar, which GCC and clang broadcast in an operation with a vector).
//! Each lane then computes exactly the statement's operations, in the statement's order, on its
//! own element: the result is bitwise the scalar code's.
//!
//! That holds only for text whose operators have the same meaning on vectors: `+ - * /`,
//! assignments (`=`, `+=`, ...), parentheses, subscripts and numbers. [`refusal`] refuses
//! anything else (calls, macros, casts, comparisons, `?:`, `%`, increments), the lane iterator
//! outside the last subscript or with a coefficient other than one, variables of another type
//! than the vector's elements, and floating literals in `float` statements (a `double`
//! constant does not convert to a `float` vector).

use crate::{ArrayId, BodyPiece, Scop, Statement};

/// One token of a statement's text: a character of a text piece, an iterator or a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok {
    Char(char),
    Iter(usize),
    Var(ArrayId),
}

/// A variable's occurrence with its subscripts: the token of the variable, the tokens of each
/// subscript (without the brackets) and the end of the occurrence (exclusive).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Occurrence {
    start: usize,
    subscripts: Vec<(usize, usize)>,
    end: usize,
}

fn tokens(body: &[BodyPiece]) -> Vec<Tok> {
    let mut toks = Vec::new();
    for piece in body {
        match piece {
            BodyPiece::Text(t) => toks.extend(t.chars().map(Tok::Char)),
            BodyPiece::Iter(k) => toks.push(Tok::Iter(*k)),
            BodyPiece::Var(id) => toks.push(Tok::Var(*id)),
        }
    }
    toks
}

/// Every variable's occurrence, in text order (an occurrence inside another's subscript comes
/// after it). `None` when the brackets do not balance.
fn occurrences(toks: &[Tok]) -> Option<Vec<Occurrence>> {
    let mut out = Vec::new();
    for (start, tok) in toks.iter().enumerate() {
        if !matches!(tok, Tok::Var(_)) {
            continue;
        }
        let mut subscripts = Vec::new();
        let mut at = start + 1;
        loop {
            let mut next = at;
            while matches!(toks.get(next), Some(Tok::Char(c)) if c.is_whitespace()) {
                next += 1;
            }
            if toks.get(next) != Some(&Tok::Char('[')) {
                break;
            }
            let mut depth = 0usize;
            let mut close = None;
            for (k, t) in toks.iter().enumerate().skip(next) {
                match t {
                    Tok::Char('[') => depth += 1,
                    Tok::Char(']') => {
                        depth -= 1;
                        if depth == 0 {
                            close = Some(k);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let close = close?;
            subscripts.push((next + 1, close));
            at = close + 1;
        }
        out.push(Occurrence {
            start,
            subscripts,
            end: at,
        });
    }
    Some(out)
}

/// Whether the occurrence's last subscript mentions iterator `q` (it is a vector).
fn is_vector(toks: &[Tok], occ: &Occurrence, q: usize) -> bool {
    occ.subscripts
        .last()
        .is_some_and(|&(a, b)| toks[a..b].contains(&Tok::Iter(q)))
}

/// The statement's text with iterator `k` printed as `iter(k)`, variable `v` as `var(v)`, and
/// each occurrence whose last subscript mentions iterator `q` wrapped in `wrap(v)` (prefix and
/// suffix). Meant for statements that [`refusal`] accepts.
pub fn render(
    body: &[BodyPiece],
    q: usize,
    iter: &dyn Fn(usize) -> String,
    var: &dyn Fn(ArrayId) -> String,
    wrap: &dyn Fn(ArrayId) -> (String, String),
) -> String {
    render_tokens(&tokens(body), q, iter, var, wrap)
}

/// [`render`] of tokens.
fn render_tokens(
    toks: &[Tok],
    q: usize,
    iter: &dyn Fn(usize) -> String,
    var: &dyn Fn(ArrayId) -> String,
    wrap: &dyn Fn(ArrayId) -> (String, String),
) -> String {
    let occs = occurrences(toks).unwrap_or_default();
    let mut closes = vec![Vec::new(); toks.len() + 1];
    let mut opens = vec![String::new(); toks.len()];
    for occ in &occs {
        if let (true, Tok::Var(id)) = (is_vector(toks, occ, q), toks[occ.start]) {
            let (pre, post) = wrap(id);
            opens[occ.start] = pre;
            closes[occ.end].push(post);
        }
    }
    let mut out = String::new();
    for (k, tok) in toks.iter().enumerate() {
        for post in closes[k].iter().rev() {
            out.push_str(post);
        }
        out.push_str(&opens[k]);
        match tok {
            Tok::Char(c) => out.push(*c),
            Tok::Iter(i) => out.push_str(&iter(*i)),
            Tok::Var(v) => out.push_str(&var(*v)),
        }
    }
    for post in closes[toks.len()].iter().rev() {
        out.push_str(post);
    }
    out
}

/// Why `stmt` cannot run as vectors along its iterator `q` of elements of type `elem` (see the
/// module doc); `None` when it can.
pub fn refusal(scop: &Scop, stmt: &Statement, q: usize, elem: &str) -> Option<String> {
    check(scop, stmt, q, None, elem, false).err()
}

/// Like [`refusal`], with the occurrences that [`packable`] accepts (read-only operands along
/// the lanes and the reduction) packed: the number of such occurrences when the statement can
/// run so along `q`, with `r` its reduction iterator; why not otherwise (also when nothing can
/// be packed). With `frozen`, the array the statement writes counts as read-only: the caller
/// proved that where the code runs, no element the statement reads of it, other than the one it
/// writes, is written (cholesky's `A[j][k]` in `A[i][j] -= A[i][k] * A[j][k]`, in tiles whose
/// `k` lie below their `j`).
pub fn packed_refusal(
    scop: &Scop,
    stmt: &Statement,
    q: usize,
    r: usize,
    elem: &str,
    frozen: bool,
) -> Result<usize, String> {
    match check(scop, stmt, q, Some((r, frozen)), elem, false)? {
        0 => Err("no occurrence to pack".into()),
        n => Ok(n),
    }
}

/// Whether an occurrence in `stmt` can be packed for lanes along `q` and the reduction along
/// `r`: an element of an array of rank 2 or more that `stmt` does not write (unless `frozen`:
/// see [`packed_refusal`]), whose subscripts
/// mention no variable and no iterator but `q` and `r`, `q` once, as a whole subscript
/// (`A[j][k]` or `B[k][j]` for lanes `j`): a copy of the elements the kernel reads, laid out
/// with the lanes contiguous, then gives the same values as vectors. An occurrence already contiguous along
/// the lanes (`B[k][j]`) is packed too: its rows start wherever the array's allocation put
/// them (`malloc` aligns to 16 bytes), so half of its 32-byte loads straddle two cache lines,
/// where the buffer's are aligned and its rows adjacent (see `polyhedral::kernel`).
fn packable(
    stmt: &Statement,
    toks: &[Tok],
    occ: &Occurrence,
    q: usize,
    r: usize,
    frozen: bool,
) -> bool {
    let Tok::Var(id) = toks[occ.start] else {
        return false;
    };
    let written = !frozen
        && stmt
            .accesses
            .iter()
            .any(|a| a.array == id && a.kind == crate::AccessKind::Write);
    if written || occ.subscripts.len() < 2 {
        return false;
    }
    let mut lane_at = None;
    for (k, &(a, b)) in occ.subscripts.iter().enumerate() {
        let inner = &toks[a..b];
        if inner
            .iter()
            .any(|t| matches!(t, Tok::Var(_)) || matches!(t, Tok::Iter(i) if *i != q && *i != r))
        {
            return false;
        }
        if inner.contains(&Tok::Iter(q)) {
            if lane_at.is_some() || !unit_subscript(inner, q) {
                return false;
            }
            lane_at = Some(k);
        }
    }
    lane_at.is_some()
}

/// The occurrences of `body` that are packed for lanes along `q` and the reduction along `r`
/// ([`packable`]), in text order, as (start, end) token positions.
fn packed_occurrences(
    stmt: &Statement,
    toks: &[Tok],
    q: usize,
    r: usize,
    frozen: bool,
) -> Vec<(usize, usize)> {
    occurrences(toks)
        .unwrap_or_default()
        .iter()
        .filter(|o| packable(stmt, toks, o, q, r, frozen))
        .map(|o| (o.start, o.end))
        .collect()
}

/// [`refusal`]'s checks; with `pack = Some(r)`, the occurrences [`packable`] along `q` and `r`
/// are allowed (they count as vectors) and their number is returned. With `identities`, calls
/// of macros that expand to their argument ([`identity_macro`]: PolyBench's `SCALAR_VAL(x)` on
/// `double`) are allowed too.
fn check(
    scop: &Scop,
    stmt: &Statement,
    q: usize,
    pack: Option<(usize, bool)>,
    elem: &str,
    identities: bool,
) -> Result<usize, String> {
    let fail = |why: String| Err(why);
    if !matches!(elem, "double" | "float") {
        return fail(format!("elements of type `{elem}`"));
    }
    let toks = tokens(&stmt.body);
    let Some(occs) = occurrences(&toks) else {
        return fail("unbalanced brackets".into());
    };
    let packs: Vec<&Occurrence> = match pack {
        Some((r, frozen)) => occs
            .iter()
            .filter(|o| packable(stmt, &toks, o, q, r, frozen))
            .collect(),
        None => Vec::new(),
    };
    let is_packed = |o: &Occurrence| packs.iter().any(|p| p.start == o.start);
    // A packed occurrence is printed apart from the rest: not inside another's subscript.
    if packs
        .iter()
        .any(|p| occs.iter().any(|o| o.start < p.start && p.end <= o.end))
    {
        return fail("a packed occurrence inside a subscript".into());
    }
    // Every variable of the element type, with as many subscripts as its rank (a scalar that
    // the analysis expanded into an array is printed otherwise: not as written). With
    // `identities`, a scalar inside a subscript (`A[i][n - 1]`) is an index of any type.
    let nested = |o: &Occurrence| occs.iter().any(|x| x.start < o.start && o.end <= x.end);
    for occ in &occs {
        if let Tok::Var(id) = toks[occ.start] {
            if identities && nested(occ) && scop.array(id).rank == 0 && occ.subscripts.is_empty() {
                continue;
            }
            let a = scop.array(id);
            if a.elem_type != elem {
                return fail(format!("`{}` is of type `{}`", a.name, a.elem_type));
            }
            if occ.subscripts.len() != a.rank {
                return fail(format!(
                    "`{}` has {} subscripts and rank {}",
                    a.name,
                    occ.subscripts.len(),
                    a.rank
                ));
            }
        }
    }
    // The lane iterator only as the whole last subscript (plus or minus a constant) of
    // occurrences whose other subscripts do not mention it, or in a packed occurrence.
    let mut lane_uses = 0usize;
    for occ in &occs {
        if is_packed(occ) {
            lane_uses += 1;
            continue;
        }
        for (k, &(a, b)) in occ.subscripts.iter().enumerate() {
            let inner = &toks[a..b];
            if !inner.contains(&Tok::Iter(q)) {
                continue;
            }
            if k + 1 != occ.subscripts.len() || !unit_subscript(inner, q) {
                return fail("the lane iterator in a subscript other than `[j]`, `[j ± c]`".into());
            }
            lane_uses += 1;
        }
    }
    let total = toks.iter().filter(|t| **t == Tok::Iter(q)).count();
    if total != lane_uses {
        return fail("the lane iterator outside a subscript".into());
    }
    // The characters: operators with the same meaning on vectors, and numbers; with
    // `identities`, any name inside a subscript (an index: `A[i][_PB_N - 1]`).
    let mut k = 0;
    let mut depth = 0usize;
    while k < toks.len() {
        let Tok::Char(c) = toks[k] else {
            k += 1;
            continue;
        };
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if identities && depth > 0 && (c.is_ascii_alphabetic() || c == '_') {
            k += toks[k..]
                .iter()
                .take_while(|t| matches!(t, Tok::Char(c) if c.is_ascii_alphanumeric() || *c == '_'))
                .count();
            continue;
        }
        let starts_number = c.is_ascii_digit()
            || (c == '.' && matches!(toks.get(k + 1), Some(Tok::Char(d)) if d.is_ascii_digit()));
        if starts_number {
            let (len, float) = number(&toks[k..]);
            if float && elem == "float" {
                return fail("a floating literal in a `float` statement".into());
            }
            k += len;
            continue;
        }
        if identities && (c.is_ascii_alphabetic() || c == '_') {
            let name: String = toks[k..]
                .iter()
                .map_while(|t| match t {
                    Tok::Char(c) if c.is_ascii_alphanumeric() || *c == '_' => Some(*c),
                    _ => None,
                })
                .collect();
            let called = toks[k + name.len()..]
                .iter()
                .find(|t| !matches!(t, Tok::Char(c) if c.is_whitespace()))
                == Some(&Tok::Char('('));
            if called && identity_macro(scop, &name) {
                k += name.len();
                continue;
            }
        }
        if !(c.is_whitespace() || "+-*/=()[];".contains(c)) {
            return fail(format!("`{c}` in the statement"));
        }
        if (c == '+' || c == '-') && toks.get(k + 1) == Some(&Tok::Char(c)) {
            return fail("an increment".into());
        }
        k += 1;
    }
    Ok(packs.len())
}

/// Whether the SCoP's macro `name` is defined as `#define name(x) x`: a call means its argument.
fn identity_macro(scop: &Scop, name: &str) -> bool {
    scop.macros.iter().any(|m| {
        let Some(rest) = m.define.trim().strip_prefix("#define") else {
            return false;
        };
        let Some(rest) = rest.trim_start().strip_prefix(name) else {
            return false;
        };
        let Some((param, body)) = rest.strip_prefix('(').and_then(|r| r.split_once(')')) else {
            return false;
        };
        let param = param.trim();
        m.name == name && !param.is_empty() && body.trim() == param
    })
}

/// [`render`] for a statement that [`packed_refusal`] accepts along `q` and `r` (with the same
/// `frozen`): the packed
/// occurrences (number `n` in text order) printed as `packed(n)` instead, the others as
/// [`render`] prints them; with `scaled`, the product [`scaled_text`] prints (when there is
/// one) replaced by that text.
#[allow(clippy::too_many_arguments)]
pub fn render_packed(
    stmt: &Statement,
    q: usize,
    r: usize,
    iter: &dyn Fn(usize) -> String,
    var: &dyn Fn(ArrayId) -> String,
    wrap: &dyn Fn(ArrayId) -> (String, String),
    packed: &dyn Fn(usize) -> String,
    scaled: Option<&str>,
    frozen: bool,
) -> String {
    let toks = tokens(&stmt.body);
    let packs = packed_ranges(stmt, &toks, q, r, frozen);
    let prefix = scaled.and_then(|text| Some((scaled_prefix(stmt, &toks, q, r, frozen)?, text)));
    let mut out = String::new();
    let mut k = 0;
    let mut piece = Vec::new();
    while k < toks.len() {
        if let Some(((a, b), text)) = prefix {
            if a == k {
                out.push_str(&render_tokens(&piece, q, iter, var, wrap));
                piece.clear();
                out.push_str(text);
                k = b;
                continue;
            }
        }
        match packs.iter().position(|&(a, _)| a == k) {
            Some(n) => {
                out.push_str(&render_tokens(&piece, q, iter, var, wrap));
                piece.clear();
                out.push_str(&packed(n));
                k = packs[n].1;
            }
            None => {
                piece.push(toks[k]);
                k += 1;
            }
        }
    }
    out.push_str(&render_tokens(&piece, q, iter, var, wrap));
    out
}

/// The text of packed occurrence `n` (see [`render_packed`]) of `body`, iterators and variables
/// printed by `iter` and `var`; empty when there is none.
pub fn packed_text(
    stmt: &Statement,
    q: usize,
    r: usize,
    n: usize,
    iter: &dyn Fn(usize) -> String,
    var: &dyn Fn(ArrayId) -> String,
    frozen: bool,
) -> String {
    let toks = tokens(&stmt.body);
    let Some(&(a, b)) = packed_ranges(stmt, &toks, q, r, frozen).get(n) else {
        return String::new();
    };
    text_of(&toks[a..b], iter, var)
}

/// For each packed occurrence of `stmt` in [`packed_text`]'s numbering (see [`packed_refusal`]),
/// whether the lanes `q` are not its last subscript (`A[j][k]` for lanes `j`): its elements
/// along the lanes lie a row apart, and its buffer's fill reads columns of the array.
pub fn packed_across_rows(stmt: &Statement, q: usize, r: usize, frozen: bool) -> Vec<bool> {
    let toks = tokens(&stmt.body);
    occurrences(&toks)
        .unwrap_or_default()
        .iter()
        .filter(|o| packable(stmt, &toks, o, q, r, frozen))
        .map(|o| {
            o.subscripts
                .iter()
                .position(|&(a, b)| toks[a..b].contains(&Tok::Iter(q)))
                .is_some_and(|k| k + 1 < o.subscripts.len())
        })
        .collect()
}

/// Tokens as C text: iterator `k` printed as `iter(k)`, variable `v` as `var(v)`.
fn text_of(
    toks: &[Tok],
    iter: &dyn Fn(usize) -> String,
    var: &dyn Fn(ArrayId) -> String,
) -> String {
    toks.iter()
        .map(|t| match t {
            Tok::Char(c) => c.to_string(),
            Tok::Iter(i) => iter(*i),
            Tok::Var(v) => var(*v),
        })
        .collect()
}

/// The product that `stmt`'s right-hand side computes first when it is a chain of
/// multiplications whose first factors do not vary along the lanes `q` (`alpha * A[i][k]` in
/// `C[i][j] += alpha * A[i][k] * B[k][j]`), as (start, end) token positions: at least two such
/// factors (one multiplication to save), reading some variable that the statement does not
/// write and varying along the reduction `r` (otherwise the C compiler hoists it itself). The
/// right-hand side must be nothing but that chain (a `+`, `-` or `/` between terms, a unary
/// sign aside, refuses it): C multiplies left to right, so the product of the first factors is
/// a value of its own, computed by the same operations wherever it is computed.
///
/// With `frozen` (see [`packed_refusal`]), factors that read the array the statement writes
/// qualify as well, one alone included (lu's `A[i][k]` in `A[i][j] -= A[i][k] * A[k][j]`): read
/// from the written array inside the reduction loop, such a factor keeps the C compiler from
/// holding the accumulators in registers (a store to them might change it), while read from a
/// buffer of its own it does not.
fn scaled_prefix(
    stmt: &Statement,
    toks: &[Tok],
    q: usize,
    r: usize,
    frozen: bool,
) -> Option<(usize, usize)> {
    let terms = rhs_terms(stmt, toks)?;
    let [term] = &terms[..] else {
        return None; // a sum or a difference
    };
    if term.divided {
        return None;
    }
    let factors = &term.factors;
    let along = factors
        .iter()
        .position(|&(a, b)| toks[a..b].contains(&Tok::Iter(q)))?;
    if along < 1 {
        return None;
    }
    let (a, b) = (factors[0].0, factors[along - 1].1);
    let inner = &toks[a..b];
    let reads = inner.iter().any(|t| matches!(t, Tok::Var(_)));
    let written = inner
        .iter()
        .any(|t| matches!(t, Tok::Var(id) if writes(stmt, *id)));
    let enough = match written {
        false => along >= 2,
        true => frozen,
    };
    (reads && enough && inner.contains(&Tok::Iter(r))).then_some((a, b))
}

/// Whether `stmt` writes variable `id`.
fn writes(stmt: &Statement, id: ArrayId) -> bool {
    stmt.accesses
        .iter()
        .any(|a| a.array == id && a.kind == crate::AccessKind::Write)
}

/// One term of a right-hand side ([`rhs_terms`]): its factors, as (start, end) token positions
/// without surrounding spaces (a sign that starts the term belongs to its first factor), and
/// whether a division splits it too (then its factors are not its operands).
struct Term {
    factors: Vec<(usize, usize)>,
    divided: bool,
}

/// The right-hand side of `stmt`'s assignment split into terms at the additions and
/// subtractions outside brackets, and each term into factors at the multiplications outside
/// brackets (numbers, exponents included, read whole); `None` when the text is not an
/// assignment. C evaluates a term's factors left to right, so the product of its first factors
/// is a value of its own.
fn rhs_terms(stmt: &Statement, toks: &[Tok]) -> Option<Vec<Term>> {
    let (_, lhs) = assigned(&stmt.body)?;
    let eq = lhs.end + toks[lhs.end..].iter().position(|t| *t == Tok::Char('='))?;
    let start = eq + 1;
    let end = toks.iter().rposition(|t| *t == Tok::Char(';'))?;
    if end < start {
        return None;
    }
    let space = |t: &Tok| matches!(t, Tok::Char(c) if c.is_whitespace());
    let trim = |(mut a, mut b): (usize, usize)| {
        while a < b && space(&toks[a]) {
            a += 1;
        }
        while b > a && space(&toks[b - 1]) {
            b -= 1;
        }
        (a, b)
    };
    let mut terms = Vec::new();
    let mut term = Term {
        factors: Vec::new(),
        divided: false,
    };
    // `operand`: the last token seen ends an operand (a sign after it is a binary operator).
    let (mut depth, mut from, mut k, mut operand) = (0i32, start, start, false);
    while k < end {
        let Tok::Char(c) = toks[k] else {
            operand = true;
            k += 1;
            continue;
        };
        let starts_number = c.is_ascii_digit()
            || (c == '.' && matches!(toks.get(k + 1), Some(Tok::Char(d)) if d.is_ascii_digit()));
        if starts_number {
            k += number(&toks[k..]).0;
            operand = true;
            continue;
        }
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            _ if c.is_whitespace() || depth > 0 => {}
            '*' | '/' => {
                term.divided |= c == '/';
                term.factors.push(trim((from, k)));
                from = k + 1;
            }
            '+' | '-' if operand => {
                term.factors.push(trim((from, k)));
                terms.push(std::mem::replace(
                    &mut term,
                    Term {
                        factors: Vec::new(),
                        divided: false,
                    },
                ));
                from = k + 1;
            }
            _ => {}
        }
        if !c.is_whitespace() {
            operand = matches!(c, ')' | ']');
        }
        k += 1;
    }
    term.factors.push(trim((from, end)));
    terms.push(term);
    Some(terms)
}

/// The token ranges that [`render_packed`] replaces and [`packed_text`] fills a buffer with, one
/// per packed occurrence (see [`packable`]), in text order: the occurrence itself, or, where it
/// is a factor of a term whose first factors and the occurrence, or the occurrence and the
/// factors that follow it, are otherwise scalars that the statement does not write and numbers
/// (`alpha * B[i][j]` in symm's `C[k][j] += alpha * B[i][j] * A[i][k]`, `A[j][k] * alpha` in
/// syr2k's), that product: the buffer then holds it, computed by the same operations on the
/// same operands once per element rather than once per row, and the kernel multiplies on from
/// there.
fn packed_ranges(
    stmt: &Statement,
    toks: &[Tok],
    q: usize,
    r: usize,
    frozen: bool,
) -> Vec<(usize, usize)> {
    let occs = packed_occurrences(stmt, toks, q, r, frozen);
    let Some(terms) = rhs_terms(stmt, toks) else {
        return occs;
    };
    let scalar = |(a, b): (usize, usize)| match &toks[a..b] {
        [Tok::Var(id)] => !writes(stmt, *id),
        [Tok::Char(c), ..] if c.is_ascii_digit() || *c == '.' => number(&toks[a..b]).0 == b - a,
        _ => false,
    };
    occs.into_iter()
        .map(|occ| {
            for term in terms.iter().filter(|t| !t.divided) {
                let Some(m) = term.factors.iter().position(|&f| f == occ) else {
                    continue;
                };
                if !term.factors[..m].iter().all(|&f| scalar(f)) {
                    break;
                }
                let last = m + term.factors[m + 1..]
                    .iter()
                    .take_while(|&&f| scalar(f))
                    .count();
                if last > 0 {
                    return (term.factors[0].0, term.factors[last].1);
                }
            }
            occ
        })
        .collect()
}

/// Whether a statement that [`packed_refusal`] accepts along `q` and `r` (with the same
/// `frozen`) starts its right-hand side with a product of factors that do not vary along the
/// lanes (see [`scaled_text`]).
pub fn has_scaled_prefix(stmt: &Statement, q: usize, r: usize, frozen: bool) -> bool {
    scaled_prefix(stmt, &tokens(&stmt.body), q, r, frozen).is_some()
}

/// The text of the product that `stmt`'s right-hand side computes before any factor along the
/// lanes `q` (`alpha * A[i][k]` in `C[i][j] += alpha * A[i][k] * B[k][j]`; see
/// [`has_scaled_prefix`]), iterators and variables printed by `iter` and `var`; empty when there
/// is none. A register kernel computes it once per row and reduction step, before the lanes
/// (`polyhedral::kernel`), and [`render_packed`] reads it back.
pub fn scaled_text(
    stmt: &Statement,
    q: usize,
    r: usize,
    iter: &dyn Fn(usize) -> String,
    var: &dyn Fn(ArrayId) -> String,
    frozen: bool,
) -> String {
    let toks = tokens(&stmt.body);
    let Some((a, b)) = scaled_prefix(stmt, &toks, q, r, frozen) else {
        return String::new();
    };
    text_of(&toks[a..b], iter, var)
}

/// Whether a subscript's tokens are `q`, `q + c`, `q - c` or `c + q` (spaces aside, `c` an
/// integer).
fn unit_subscript(inner: &[Tok], q: usize) -> bool {
    let toks: Vec<Tok> = inner
        .iter()
        .copied()
        .filter(|t| !matches!(t, Tok::Char(c) if c.is_whitespace()))
        .collect();
    let int = |ts: &[Tok]| {
        !ts.is_empty()
            && ts
                .iter()
                .all(|t| matches!(t, Tok::Char(c) if c.is_ascii_digit()))
    };
    match toks.as_slice() {
        [Tok::Iter(i)] => *i == q,
        [Tok::Iter(i), Tok::Char('+' | '-'), rest @ ..] => *i == q && int(rest),
        [.., Tok::Char('+'), Tok::Iter(i)] => *i == q && int(&toks[..toks.len() - 2]),
        _ => false,
    }
}

/// The length of the decimal number that starts `toks` (digits, a point, an exponent with its
/// sign), and whether it is a floating literal. A suffix or a hexadecimal prefix is left for the
/// caller, which refuses its letters.
fn number(toks: &[Tok]) -> (usize, bool) {
    let mut len = 0;
    let mut float = false;
    while let Some(Tok::Char(c)) = toks.get(len) {
        match c {
            '0'..='9' => len += 1,
            '.' => {
                float = true;
                len += 1;
            }
            'e' | 'E' if len > 0 => {
                float = true;
                len += 1;
                if matches!(toks.get(len), Some(Tok::Char('+' | '-'))) {
                    len += 1;
                }
            }
            _ => break,
        }
    }
    (len, float)
}

/// The occurrence that a statement's text assigns (the first token of the text, followed by
/// `=` or a compound assignment), with the tokens.
fn assigned(body: &[BodyPiece]) -> Option<(Vec<Tok>, Occurrence)> {
    let toks = tokens(body);
    let occs = occurrences(&toks)?;
    let first = toks
        .iter()
        .position(|t| !matches!(t, Tok::Char(c) if c.is_whitespace()))?;
    let lhs = occs.into_iter().find(|o| o.start == first)?;
    let rest: String = toks[lhs.end..]
        .iter()
        .map_while(|t| match t {
            Tok::Char(c) => Some(*c),
            _ => None,
        })
        .filter(|c| !c.is_whitespace())
        .take(2)
        .collect();
    let assigns = rest.starts_with('=') && !rest.starts_with("==")
        || matches!(rest.as_str(), "+=" | "-=" | "*=" | "/=");
    assigns.then_some((toks, lhs))
}

/// Why the element that `stmt` assigns cannot be kept in a local accumulator by replacing its
/// occurrences in the text (see `polyhedral::kernel`); `None` when it can. `forms` is the number
/// of distinct access relations of the statement to the assigned array: the text must have as
/// many distinct forms of the array's occurrences, so that every occurrence spelled like the
/// assigned one is that element and every other one is another access.
pub fn accumulator_refusal(scop: &Scop, stmt: &Statement, forms: usize) -> Option<String> {
    let Some((toks, lhs)) = assigned(&stmt.body) else {
        return Some("the statement does not start with an assigned element".into());
    };
    let Tok::Var(array) = toks[lhs.start] else {
        return Some("the statement does not start with an assigned element".into());
    };
    if lhs.subscripts.len() != scop.array(array).rank || lhs.subscripts.is_empty() {
        return Some("the assigned element is not an array element as declared".into());
    }
    let occs = occurrences(&toks)?;
    let mut spelled: Vec<&[Tok]> = occs
        .iter()
        .filter(|o| toks[o.start] == Tok::Var(array))
        .map(|o| &toks[o.start..o.end])
        .collect();
    spelled.sort_by_key(|t| format!("{t:?}"));
    spelled.dedup();
    (spelled.len() != forms).then(|| {
        format!(
            "{} spellings of `{}` for {forms} accesses",
            spelled.len(),
            scop.array(array).name
        )
    })
}

/// The statement's text with the assigned element and every occurrence spelled like it replaced
/// by `acc` (iterators and variables printed as in [`render`]); with `element_only`, the text of
/// the assigned element alone. Meant for statements that [`accumulator_refusal`] accepts.
pub fn render_accumulated(
    body: &[BodyPiece],
    iter: &dyn Fn(usize) -> String,
    var: &dyn Fn(ArrayId) -> String,
    acc: &str,
    element_only: bool,
) -> String {
    let print = |ts: &[Tok]| text_of(ts, iter, var);
    let Some((toks, lhs)) = assigned(body) else {
        return String::from("#error tiledflow internal error: no assigned element\n");
    };
    let spelled = &toks[lhs.start..lhs.end];
    if element_only {
        return print(spelled);
    }
    let mut out = String::new();
    let mut k = 0;
    while k < toks.len() {
        if toks[k..].starts_with(spelled) {
            out.push_str(acc);
            k += spelled.len();
        } else {
            out.push_str(&print(&toks[k..k + 1]));
            k += 1;
        }
    }
    out
}

/// An occurrence of `stmt`'s text that reads a column of an array along iterator `red`: its
/// first subscript mentions `red` and no other subscript does, it is the only spelling of its
/// array that does so, and its subscripts hold nothing but iterators, numbers, `+`, `-`, `*`,
/// parentheses and spaces (so that they are affine text ISL reads). Used by
/// `polyhedral::column`, which keeps such a column in a buffer of its own.
fn column_read(stmt: &Statement, red: usize) -> Option<(Vec<Tok>, Occurrence, ArrayId)> {
    let toks = tokens(&stmt.body);
    let occs = occurrences(&toks)?;
    let plain = |(a, b): (usize, usize)| affine_text(&toks[a..b]);
    let along = |o: &Occurrence| {
        let mentions = |&(a, b): &(usize, usize)| toks[a..b].contains(&Tok::Iter(red));
        o.subscripts.len() >= 2
            && mentions(&o.subscripts[0])
            && !o.subscripts[1..].iter().any(mentions)
    };
    let mut found: Option<&Occurrence> = None;
    for o in occs.iter().filter(|o| along(o)) {
        match found {
            Some(f) if toks[f.start..f.end] != toks[o.start..o.end] => return None,
            _ => found = Some(o),
        }
    }
    let occ = found?.clone();
    let Tok::Var(array) = toks[occ.start] else {
        return None;
    };
    if !occ.subscripts.iter().all(|&s| plain(s)) {
        return None;
    }
    // The column may not be what the statement assigns.
    if let Some((_, lhs)) = assigned(&stmt.body) {
        if toks[lhs.start..lhs.end] == toks[occ.start..occ.end] {
            return None;
        }
    }
    Some((toks, occ, array))
}

/// The ISL relation of an occurrence whose subscripts are affine text (`{ S3[i0, i1, i2] ->
/// table[i2 + 1, i1] }`), and its variable.
fn occurrence_relation(
    scop: &Scop,
    stmt: &Statement,
    toks: &[Tok],
    occ: &Occurrence,
) -> Option<(String, ArrayId)> {
    let Tok::Var(id) = toks[occ.start] else {
        return None;
    };
    let iter = |k: usize| format!("i{k}");
    let var = |_: ArrayId| String::new();
    let subs: Vec<String> = occ
        .subscripts
        .iter()
        .map(|&(a, b)| text_of(&toks[a..b], &iter, &var))
        .collect();
    let iters: Vec<String> = (0..stmt.iterators.len()).map(iter).collect();
    Some((
        format!(
            "{{ {}[{}] -> {}[{}] }}",
            stmt.id,
            iters.join(", "),
            scop.array(id).isl_name,
            subs.join(", ")
        ),
        id,
    ))
}

/// Whether a subscript's tokens hold nothing but iterators, numbers, `+`, `-`, `*`,
/// parentheses and spaces: affine text that ISL reads once the iterators are named.
fn affine_text(toks: &[Tok]) -> bool {
    toks.iter().all(|t| match t {
        Tok::Iter(_) => true,
        Tok::Char(c) => c.is_ascii_digit() || " +-*()".contains(*c),
        Tok::Var(_) => false,
    })
}

/// The ISL relation of the column that [`column_read`] finds in `stmt` along iterator `red`
/// (`{ S3[i0, i1, i2] -> table[i2 + 1, i1] }`), the iterators its text mentions, and its array;
/// `None` when there is none.
pub fn column_relation(
    scop: &Scop,
    stmt: &Statement,
    red: usize,
) -> Option<(String, Vec<usize>, ArrayId)> {
    let (toks, occ, array) = column_read(stmt, red)?;
    let relation = occurrence_relation(scop, stmt, &toks, &occ)?.0;
    let mut mentioned: Vec<usize> = toks[occ.start..occ.end]
        .iter()
        .filter_map(|t| match t {
            Tok::Iter(k) => Some(*k),
            _ => None,
        })
        .collect();
    mentioned.sort_unstable();
    mentioned.dedup();
    Some((relation, mentioned, array))
}

/// `col[<row>] = <column element>;` for the column that [`column_read`] finds in `stmt` along
/// `red`, iterators printed as `iter(k)` and variables as `var(v)`.
pub fn column_fill(
    stmt: &Statement,
    red: usize,
    iter: &dyn Fn(usize) -> String,
    var: &dyn Fn(ArrayId) -> String,
    col: &str,
) -> String {
    let Some((toks, occ, _)) = column_read(stmt, red) else {
        return String::from("#error tiledflow internal error: no column\n");
    };
    let (a, b) = occ.subscripts[0];
    format!(
        "{col}[{}] = {};",
        text_of(&toks[a..b], iter, var),
        text_of(&toks[occ.start..occ.end], iter, var)
    )
}

/// The statement's text with its assigned element and every occurrence spelled like it replaced
/// by `acc`, and the column that [`column_read`] finds along `red` read from `col[<row>]`.
pub fn render_columned(
    stmt: &Statement,
    red: usize,
    iter: &dyn Fn(usize) -> String,
    var: &dyn Fn(ArrayId) -> String,
    acc: &str,
    col: &str,
) -> String {
    let (Some((toks, occ, _)), Some((_, lhs))) = (column_read(stmt, red), assigned(&stmt.body))
    else {
        return String::from("#error tiledflow internal error: no column\n");
    };
    let spelled = &toks[lhs.start..lhs.end];
    let column = &toks[occ.start..occ.end];
    let (a, b) = occ.subscripts[0];
    let row = &toks[a..b];
    let mut out = String::new();
    let mut k = 0;
    while k < toks.len() {
        if toks[k..].starts_with(spelled) {
            out.push_str(acc);
            k += spelled.len();
        } else if toks[k..].starts_with(column) {
            out.push_str(&format!("{col}[{}]", text_of(row, iter, var)));
            k += column.len();
        } else {
            out.push_str(&text_of(&toks[k..k + 1], iter, var));
            k += 1;
        }
    }
    out
}

/// The first subscript of the element that `stmt` assigns, as text; `None` when it assigns no
/// array element.
pub fn assigned_row(
    body: &[BodyPiece],
    iter: &dyn Fn(usize) -> String,
    var: &dyn Fn(ArrayId) -> String,
) -> Option<String> {
    let (toks, lhs) = assigned(body)?;
    let &(a, b) = lhs.subscripts.first()?;
    Some(text_of(&toks[a..b], iter, var))
}

/// The occurrences of `stmt`'s text that walk memory across its iterator `q` and that a buffer
/// may hold (`polyhedral::gather`): of arrays that `packable` accepts, of rank 2, whose first
/// subscript mentions `q` and whose second does not, whose subscripts hold nothing but
/// iterators, numbers, `+`, `-`, `*`, parentheses and spaces, and that do not mention every
/// iterator of the statement (some loop reuses them); one per distinct spelling, in text
/// order.
fn strided_reads(
    stmt: &Statement,
    q: usize,
    packable: &dyn Fn(ArrayId) -> bool,
) -> Option<(Vec<Tok>, Vec<Occurrence>)> {
    let toks = tokens(&stmt.body);
    let occs = occurrences(&toks)?;
    let mentions = |&(a, b): &(usize, usize), k: usize| toks[a..b].contains(&Tok::Iter(k));
    let plain = |&(a, b): &(usize, usize)| affine_text(&toks[a..b]);
    let mut found: Vec<Occurrence> = Vec::new();
    for o in occs {
        let Tok::Var(id) = toks[o.start] else {
            continue;
        };
        let [first, second] = o.subscripts[..] else {
            continue;
        };
        let reused =
            (0..stmt.iterators.len()).any(|k| !mentions(&first, k) && !mentions(&second, k));
        if !packable(id)
            || !mentions(&first, q)
            || mentions(&second, q)
            || !plain(&first)
            || !plain(&second)
            || !reused
            || found
                .iter()
                .any(|f| toks[f.start..f.end] == toks[o.start..o.end])
        {
            continue;
        }
        found.push(o);
    }
    Some((toks, found))
}

/// The ISL relations (`{ S1[i0, i1, i2] -> A[i1, i2] }`) and arrays of the occurrences that
/// [`strided_reads`] finds in `stmt` across `q`, in its order.
pub fn strided_relations(
    scop: &Scop,
    stmt: &Statement,
    q: usize,
    packable: &dyn Fn(ArrayId) -> bool,
) -> Vec<(String, ArrayId)> {
    let Some((toks, occs)) = strided_reads(stmt, q, packable) else {
        return Vec::new();
    };
    occs.iter()
        .filter_map(|o| occurrence_relation(scop, stmt, &toks, o))
        .collect()
}

/// The statement's text with the `n`-th occurrence that [`strided_reads`] finds across `q`
/// (and every one spelled like it) printed as `buffer(n, first subscript, second subscript)`.
pub fn render_strided(
    stmt: &Statement,
    q: usize,
    packable: &dyn Fn(ArrayId) -> bool,
    iter: &dyn Fn(usize) -> String,
    var: &dyn Fn(ArrayId) -> String,
    buffer: &dyn Fn(usize, &str, &str) -> String,
) -> String {
    let Some((toks, occs)) = strided_reads(stmt, q, packable) else {
        return String::from("#error tiledflow internal error: no strided reads\n");
    };
    let mut out = String::new();
    let mut k = 0;
    'text: while k < toks.len() {
        for (n, o) in occs.iter().enumerate() {
            let spelled = &toks[o.start..o.end];
            if toks[k..].starts_with(spelled) {
                let sub = |(a, b): (usize, usize)| text_of(&toks[a..b], iter, var);
                out.push_str(&buffer(n, &sub(o.subscripts[0]), &sub(o.subscripts[1])));
                k += spelled.len();
                continue 'text;
            }
        }
        out.push_str(&text_of(&toks[k..k + 1], iter, var));
        k += 1;
    }
    out
}

/// Whether no statement of `scop` writes variable `id`.
pub fn never_written(scop: &Scop, id: ArrayId) -> bool {
    scop.statements.iter().all(|s| !writes(s, id))
}

/// The occurrences of a statement that runs with its rows as the lanes of vectors
/// (`polyhedral::rows`), from [`row_lanes`]: the tokens, the assigned element and the
/// operands that move with the rows (read as one vector per row, then transposed), in text
/// order.
struct RowLanes {
    toks: Vec<Tok>,
    lhs: Occurrence,
    operands: Vec<Occurrence>,
}

/// Classifies the occurrences of `stmt` for running its copies at rows that differ in the
/// iterators `rows` as the lanes of vectors, along the loop of its iterator `red`, with
/// elements of type `elem`: the assigned element (and its spellings) is an accumulator that
/// the loop does not move and the rows do; every other occurrence that mentions a row iterator
/// is an operand contiguous along `red` (`A[i][j]` for rows `i` and loop `j`), read per row as a
/// vector of consecutive steps; every other occurrence is the same for all the rows (`x[j]`), a
/// scalar that the C compiler broadcasts. The text must mean the same on vectors ([`refusal`]
/// along `red`), hold no occurrence inside another's subscript, and mention the row iterators
/// only in subscripts.
fn row_lanes(
    scop: &Scop,
    stmt: &Statement,
    red: usize,
    rows: &[usize],
    elem: &str,
) -> Result<RowLanes, String> {
    check(scop, stmt, red, None, elem, false)?;
    let Some((toks, lhs)) = assigned(&stmt.body) else {
        return Err("the statement does not start with an assigned element".into());
    };
    let occs = occurrences(&toks).ok_or("unbalanced brackets")?;
    let mentions = |o: &Occurrence, i: usize| toks[o.start..o.end].contains(&Tok::Iter(i));
    let moves = |o: &Occurrence| rows.iter().any(|&p| mentions(o, p));
    if mentions(&lhs, red) {
        return Err("the assigned element moves along the loop".into());
    }
    if !moves(&lhs) {
        return Err("the assigned element is the same for all the rows".into());
    }
    let spelled = &toks[lhs.start..lhs.end];
    let mut operands = Vec::new();
    let mut inside = 0usize;
    for occ in &occs {
        if occs.iter().any(|o| o.start < occ.start && occ.end <= o.end) {
            return Err("an occurrence inside a subscript".into());
        }
        inside += toks[occ.start..occ.end]
            .iter()
            .filter(|t| matches!(t, Tok::Iter(i) if rows.contains(i)))
            .count();
        if &toks[occ.start..occ.end] == spelled || !moves(occ) {
            continue;
        }
        // `check` keeps `red` to the whole last subscript, plus or minus a constant.
        if !mentions(occ, red) {
            return Err("an operand that moves with the rows but not along the loop".into());
        }
        operands.push(occ.clone());
    }
    let total = toks
        .iter()
        .filter(|t| matches!(t, Tok::Iter(i) if rows.contains(i)))
        .count();
    if total != inside {
        return Err("a row iterator outside a subscript".into());
    }
    Ok(RowLanes {
        toks,
        lhs,
        operands,
    })
}

/// A statement read for running its copies at rows that differ in the iterators `rows` as the
/// lanes of vectors of `elem`, along the loop of its iterator `red` (see [`row_lanes`]).
pub struct RowStatement<'a> {
    pub scop: &'a Scop,
    pub stmt: &'a Statement,
    pub red: usize,
    pub rows: &'a [usize],
    pub elem: &'a str,
}

impl RowStatement<'_> {
    fn lanes(&self) -> Result<RowLanes, String> {
        row_lanes(self.scop, self.stmt, self.red, self.rows, self.elem)
    }

    /// Why the statement cannot run so; `None` when it can. The caller checks that every
    /// spelling of the assigned element is that element ([`accumulator_refusal`]).
    pub fn refusal(&self) -> Option<String> {
        self.lanes().err()
    }

    /// The operands that move with the rows, printed, in text order (none when
    /// [`RowStatement::refusal`] refuses).
    pub fn operands(
        &self,
        iter: &dyn Fn(usize) -> String,
        var: &dyn Fn(ArrayId) -> String,
    ) -> Vec<String> {
        match self.lanes() {
            Ok(lanes) => lanes
                .operands
                .iter()
                .map(|o| text_of(&lanes.toks[o.start..o.end], iter, var))
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The text with the assigned element's spellings replaced by `acc` and the `n`-th operand
    /// that moves with the rows by `operand(n)`; the rest printed as [`render`] prints it.
    pub fn render(
        &self,
        iter: &dyn Fn(usize) -> String,
        var: &dyn Fn(ArrayId) -> String,
        acc: &str,
        operand: &dyn Fn(usize) -> String,
    ) -> String {
        let Ok(lanes) = self.lanes() else {
            return String::from("#error tiledflow internal error: no rows as lanes\n");
        };
        let toks = &lanes.toks;
        let spelled = &toks[lanes.lhs.start..lanes.lhs.end];
        let mut out = String::new();
        let mut k = 0;
        while k < toks.len() {
            if let Some(n) = lanes.operands.iter().position(|o| o.start == k) {
                out.push_str(&operand(n));
                k = lanes.operands[n].end;
            } else if toks[k..].starts_with(spelled) {
                out.push_str(acc);
                k += spelled.len();
            } else {
                out.push_str(&text_of(&toks[k..k + 1], iter, var));
                k += 1;
            }
        }
        out
    }
}

/// The occurrences of a statement whose copies at consecutive rows run as the lanes of one
/// vector step by step (`polyhedral::rows`, "Steps as lanes"), from [`step_lanes`]: the
/// tokens, the assigned element, whether the assignment is compound (`+=`, ...), and the
/// operands that move with the rows, in text order, each with whether it is contiguous along
/// the rows.
struct StepLanes {
    toks: Vec<Tok>,
    lhs: Occurrence,
    compound: bool,
    operands: Vec<Occurrence>,
}

/// Classifies the occurrences of `stmt` for running its copies at consecutive values of the
/// row iterator `row` as the lanes of vectors of `elem`, one step of its loop at a time: the
/// assigned element moves with the row; every other occurrence that mentions the row is an
/// operand, read per lane (or as one vector where it is contiguous along the row); every
/// occurrence that does not is the same for all the lanes (a scalar that the C compiler
/// broadcasts). The text must mean the same on vectors (what [`refusal`] checks, with no lane
/// iterator), assign once, hold no occurrence inside another's subscript, and mention the row
/// only in subscripts.
fn step_lanes(scop: &Scop, stmt: &Statement, row: usize, elem: &str) -> Result<StepLanes, String> {
    check(scop, stmt, usize::MAX, None, elem, true)?;
    let Some((toks, lhs)) = assigned(&stmt.body) else {
        return Err("the statement does not start with an assigned element".into());
    };
    let occs = occurrences(&toks).ok_or("unbalanced brackets")?;
    if toks.iter().filter(|t| **t == Tok::Char('=')).count() != 1 {
        return Err("more than one assignment".into());
    }
    let mentions = |o: &Occurrence| toks[o.start..o.end].contains(&Tok::Iter(row));
    if !mentions(&lhs) {
        return Err("the assigned element is the same for all the rows".into());
    }
    let mut operands = Vec::new();
    let mut inside = 0usize;
    for occ in &occs {
        if occs.iter().any(|o| o.start < occ.start && occ.end <= o.end) {
            // An index scalar (`A[i][n - 1]`), which the statement does not write.
            let index = matches!(toks[occ.start], Tok::Var(id)
                if scop.array(id).rank == 0 && occ.subscripts.is_empty() && !writes(stmt, id));
            if !index {
                return Err("an occurrence inside a subscript".into());
            }
            continue;
        }
        inside += toks[occ.start..occ.end]
            .iter()
            .filter(|t| **t == Tok::Iter(row))
            .count();
        if occ.start != lhs.start && mentions(occ) {
            operands.push(occ.clone());
        }
    }
    let total = toks.iter().filter(|t| **t == Tok::Iter(row)).count();
    if total != inside {
        return Err("the row iterator outside a subscript".into());
    }
    let after: String = toks[lhs.end..]
        .iter()
        .map_while(|t| match t {
            Tok::Char(c) => Some(*c),
            _ => None,
        })
        .filter(|c| !c.is_whitespace())
        .take(1)
        .collect();
    Ok(StepLanes {
        compound: after != "=",
        toks,
        lhs,
        operands,
    })
}

/// Whether occurrence `occ` walks memory contiguously along iterator `row`: its last subscript
/// is `row` plus or minus a constant and no other subscript mentions it.
fn contiguous_along(toks: &[Tok], occ: &Occurrence, row: usize) -> bool {
    let Some((&(a, b), others)) = occ.subscripts.split_last() else {
        return false;
    };
    unit_subscript(&toks[a..b], row)
        && !others
            .iter()
            .any(|&(x, y)| toks[x..y].contains(&Tok::Iter(row)))
}

/// A statement read for running its copies at consecutive values of its row iterator `row` as
/// the lanes of vectors of `elem`, one step of its loop at a time (see [`step_lanes`]). The
/// caller proves the rest with ISL: that copies of one step touch no element that another
/// copy of that step writes, and which operands hold the value the statement wrote one step
/// before.
pub struct StepStatement<'a> {
    pub scop: &'a Scop,
    pub stmt: &'a Statement,
    pub row: usize,
    pub elem: &'a str,
}

impl StepStatement<'_> {
    fn lanes(&self) -> Result<StepLanes, String> {
        step_lanes(self.scop, self.stmt, self.row, self.elem)
    }

    /// Why the statement cannot run so; `None` when it can.
    pub fn refusal(&self) -> Option<String> {
        self.lanes().err()
    }

    /// Whether the assignment is compound (`+=`, `-=`, `*=`, `/=`): the vector of the written
    /// elements starts from their values.
    pub fn compound(&self) -> bool {
        self.lanes().is_ok_and(|l| l.compound)
    }

    /// The assigned element, printed, and whether it is contiguous along the row.
    pub fn written(
        &self,
        iter: &dyn Fn(usize) -> String,
        var: &dyn Fn(ArrayId) -> String,
    ) -> (String, bool) {
        match self.lanes() {
            Ok(l) => (
                text_of(&l.toks[l.lhs.start..l.lhs.end], iter, var),
                contiguous_along(&l.toks, &l.lhs, self.row),
            ),
            Err(_) => (
                String::from("#error tiledflow internal error: no steps as lanes"),
                false,
            ),
        }
    }

    /// The operands that move with the row, printed, in text order, each with whether it is
    /// contiguous along the row (none when [`StepStatement::refusal`] refuses).
    pub fn operands(
        &self,
        iter: &dyn Fn(usize) -> String,
        var: &dyn Fn(ArrayId) -> String,
    ) -> Vec<(String, bool)> {
        match self.lanes() {
            Ok(l) => l
                .operands
                .iter()
                .map(|o| {
                    (
                        text_of(&l.toks[o.start..o.end], iter, var),
                        contiguous_along(&l.toks, o, self.row),
                    )
                })
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The ISL relation of each operand that moves with the row (`{ S1[i0, i1, i2] ->
    /// p[i1, i2 - 1] }`) and its variable, in text order; `None` for an operand whose subscripts
    /// are not affine text.
    pub fn operand_relations(&self) -> Vec<Option<(String, ArrayId)>> {
        match self.lanes() {
            Ok(l) => l
                .operands
                .iter()
                .map(|o| {
                    let plain = o
                        .subscripts
                        .iter()
                        .all(|&(a, b)| affine_text(&l.toks[a..b]));
                    plain
                        .then(|| occurrence_relation(self.scop, self.stmt, &l.toks, o))
                        .flatten()
                })
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The text with the assigned element (the first occurrence only) printed as `written` and
    /// the `n`-th operand that moves with the row as `operand(n)`; the rest as it is.
    pub fn render(
        &self,
        iter: &dyn Fn(usize) -> String,
        var: &dyn Fn(ArrayId) -> String,
        written: &str,
        operand: &dyn Fn(usize) -> String,
    ) -> String {
        let Ok(l) = self.lanes() else {
            return String::from("#error tiledflow internal error: no steps as lanes\n");
        };
        let mut out = String::new();
        let mut k = 0;
        while k < l.toks.len() {
            if k == l.lhs.start {
                out.push_str(written);
                k = l.lhs.end;
            } else if let Some(n) = l.operands.iter().position(|o| o.start == k) {
                out.push_str(&operand(n));
                k = l.operands[n].end;
            } else {
                out.push_str(&text_of(&l.toks[k..k + 1], iter, var));
                k += 1;
            }
        }
        out
    }
}
