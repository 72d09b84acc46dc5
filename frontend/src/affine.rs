//! Quasi-affine expressions, piecewise expressions and Presburger formulas over a SCoP's
//! iterators and parameters, with C's integer semantics, printed in ISL syntax.
//!
//! - [`LinExpr`]: an integer linear combination of [`Term`]s (iterators, parameters, output
//!   dimensions of an access, and `floor(e/c)` / `e mod c` of nested expressions) plus a constant.
//! - [`Formula`]: conjunctions and disjunctions of `e >= 0`, `e = 0` and `e mod c = 0` atoms.
//! - [`Pw`]: a piecewise expression, a list of (guard, value) pairs whose guards partition the
//!   space. Ternaries, `min`/`max` macros and C's truncating `/` and `%` on possibly negative
//!   values produce several pieces; everything else keeps one piece with a `true` guard.
//!
//! Every operation is exact: C's `/` and `%` truncate towards zero, which equals `floor` and
//! `mod` only for a non-negative dividend, so a dividend that is not provably non-negative
//! splits into a non-negative and a negative piece. Arithmetic overflow of the coefficients is an
//! error, never a wrapped value. This module knows nothing of libclang or of ISL objects.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A coefficient or constant overflowed, or an expression grew beyond the piece limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AffineError {
    Overflow,
    TooManyPieces,
}

pub(crate) type Result<T> = std::result::Result<T, AffineError>;

/// The most pieces a piecewise expression may have (nested ternaries multiply them).
pub(crate) const MAX_PIECES: usize = 32;

/// A variable or a non-linear (but quasi-affine) sub-term.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Term {
    /// The iterator of the loop at this depth (0 = outermost).
    Iter(usize),
    /// The parameter with this index in the SCoP's parameter list.
    Param(usize),
    /// Output dimension of an access relation.
    Out(usize),
    /// `floor(e / c)`, `c >= 2`.
    Floor(Box<LinExpr>, i128),
    /// `e mod c` (in `[0, c)`), `c >= 2`.
    Mod(Box<LinExpr>, i128),
}

/// `sum(coefficient * term) + constant`; no zero coefficients are stored.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub(crate) struct LinExpr {
    pub terms: BTreeMap<Term, i128>,
    pub constant: i128,
}

fn add_i(a: i128, b: i128) -> Result<i128> {
    a.checked_add(b).ok_or(AffineError::Overflow)
}

fn mul_i(a: i128, b: i128) -> Result<i128> {
    a.checked_mul(b).ok_or(AffineError::Overflow)
}

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl LinExpr {
    pub(crate) fn constant(c: i128) -> LinExpr {
        LinExpr {
            terms: BTreeMap::new(),
            constant: c,
        }
    }

    pub(crate) fn term(t: Term) -> LinExpr {
        let mut terms = BTreeMap::new();
        terms.insert(t, 1);
        LinExpr { terms, constant: 0 }
    }

    /// The value if the expression has no terms.
    pub(crate) fn as_constant(&self) -> Option<i128> {
        self.terms.is_empty().then_some(self.constant)
    }

    pub(crate) fn coefficient(&self, t: &Term) -> i128 {
        self.terms.get(t).copied().unwrap_or(0)
    }

    pub(crate) fn add(&self, other: &LinExpr) -> Result<LinExpr> {
        let mut out = self.clone();
        for (t, &c) in &other.terms {
            let sum = add_i(out.coefficient(t), c)?;
            if sum == 0 {
                out.terms.remove(t);
            } else {
                out.terms.insert(t.clone(), sum);
            }
        }
        out.constant = add_i(out.constant, other.constant)?;
        Ok(out)
    }

    pub(crate) fn scale(&self, k: i128) -> Result<LinExpr> {
        if k == 0 {
            return Ok(LinExpr::constant(0));
        }
        let mut terms = BTreeMap::new();
        for (t, &c) in &self.terms {
            terms.insert(t.clone(), mul_i(c, k)?);
        }
        Ok(LinExpr {
            terms,
            constant: mul_i(self.constant, k)?,
        })
    }

    pub(crate) fn neg(&self) -> Result<LinExpr> {
        self.scale(-1)
    }

    pub(crate) fn sub(&self, other: &LinExpr) -> Result<LinExpr> {
        self.add(&other.neg()?)
    }

    pub(crate) fn add_constant(&self, c: i128) -> Result<LinExpr> {
        self.add(&LinExpr::constant(c))
    }

    /// `floor(self / c)` for `c > 0`, simplified when exact or constant.
    pub(crate) fn floor_div(&self, c: i128) -> Result<LinExpr> {
        debug_assert!(c > 0);
        if c == 1 {
            return Ok(self.clone());
        }
        if let Some(v) = self.as_constant() {
            return Ok(LinExpr::constant(v.div_euclid(c)));
        }
        if self.terms.values().all(|&a| a % c == 0) && self.constant % c == 0 {
            let mut out = LinExpr::constant(self.constant / c);
            for (t, &a) in &self.terms {
                out.terms.insert(t.clone(), a / c);
            }
            return Ok(out);
        }
        Ok(LinExpr::term(Term::Floor(Box::new(self.clone()), c)))
    }

    /// `self mod c` (in `[0, c)`) for `c > 0`.
    pub(crate) fn modulo(&self, c: i128) -> Result<LinExpr> {
        debug_assert!(c > 0);
        if c == 1 {
            return Ok(LinExpr::constant(0));
        }
        if let Some(v) = self.as_constant() {
            return Ok(LinExpr::constant(v.rem_euclid(c)));
        }
        if self.terms.values().all(|&a| a % c == 0) {
            return Ok(LinExpr::constant(self.constant.rem_euclid(c)));
        }
        Ok(LinExpr::term(Term::Mod(Box::new(self.clone()), c)))
    }

    /// Whether `pred` holds for a term, looking inside `floor` and `mod` terms too.
    pub(crate) fn mentions(&self, pred: &dyn Fn(&Term) -> bool) -> bool {
        self.terms.keys().any(|t| {
            pred(t)
                || match t {
                    Term::Floor(e, _) | Term::Mod(e, _) => e.mentions(pred),
                    _ => false,
                }
        })
    }

    /// Whether `t` occurs inside a `floor` or `mod` term.
    pub(crate) fn mentions_nested(&self, t: &Term) -> bool {
        self.terms.keys().any(|k| match k {
            Term::Floor(e, _) | Term::Mod(e, _) => e.mentions(&|x| x == t),
            _ => false,
        })
    }
}

/// A quantifier-free Presburger formula.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Formula {
    True,
    False,
    /// `e >= 0`
    Ge(LinExpr),
    /// `e = 0`
    Eq(LinExpr),
    /// `e mod c = 0`, `c >= 2`
    Stride(LinExpr, i128),
    And(Vec<Formula>),
    Or(Vec<Formula>),
}

impl Formula {
    /// `e >= 0`, folded when constant and divided by the gcd of the coefficients.
    pub(crate) fn ge(e: LinExpr) -> Formula {
        if let Some(v) = e.as_constant() {
            return if v >= 0 {
                Formula::True
            } else {
                Formula::False
            };
        }
        let g = e.terms.values().fold(0, |g, &a| gcd(g, a));
        if g > 1 {
            let mut out = LinExpr::constant(e.constant.div_euclid(g));
            for (t, &a) in &e.terms {
                out.terms.insert(t.clone(), a / g);
            }
            return Formula::Ge(out);
        }
        Formula::Ge(e)
    }

    /// `e = 0`, folded when constant or when the gcd of the coefficients does not divide the
    /// constant.
    pub(crate) fn eq(e: LinExpr) -> Formula {
        if let Some(v) = e.as_constant() {
            return if v == 0 {
                Formula::True
            } else {
                Formula::False
            };
        }
        let g = e.terms.values().fold(0, |g, &a| gcd(g, a));
        if g > 1 {
            if e.constant % g != 0 {
                return Formula::False;
            }
            let mut out = LinExpr::constant(e.constant / g);
            for (t, &a) in &e.terms {
                out.terms.insert(t.clone(), a / g);
            }
            return Formula::Eq(out);
        }
        Formula::Eq(e)
    }

    /// `e mod c = 0`.
    pub(crate) fn stride(e: LinExpr, c: i128) -> Formula {
        let c = c.abs();
        if c <= 1 {
            return Formula::True;
        }
        if let Some(v) = e.as_constant() {
            return if v % c == 0 {
                Formula::True
            } else {
                Formula::False
            };
        }
        // The sign of `e` does not matter; print it with a positive leading coefficient.
        if e.terms.values().next().is_some_and(|&a| a < 0) {
            if let Ok(neg) = e.neg() {
                return Formula::Stride(neg, c);
            }
        }
        Formula::Stride(e, c)
    }

    pub(crate) fn and(parts: Vec<Formula>) -> Formula {
        let mut out = Vec::new();
        for p in parts {
            match p {
                Formula::True => {}
                Formula::False => return Formula::False,
                Formula::And(inner) => out.extend(inner),
                other => out.push(other),
            }
        }
        match out.len() {
            0 => Formula::True,
            1 => out.pop().unwrap_or(Formula::True),
            _ => Formula::And(out),
        }
    }

    pub(crate) fn or(parts: Vec<Formula>) -> Formula {
        let mut out = Vec::new();
        for p in parts {
            match p {
                Formula::False => {}
                Formula::True => return Formula::True,
                Formula::Or(inner) => out.extend(inner),
                other => out.push(other),
            }
        }
        match out.len() {
            0 => Formula::False,
            1 => out.pop().unwrap_or(Formula::False),
            _ => Formula::Or(out),
        }
    }

    /// The negation, pushed down to the atoms.
    pub(crate) fn not(&self) -> Result<Formula> {
        Ok(match self {
            Formula::True => Formula::False,
            Formula::False => Formula::True,
            // not (e >= 0)  <=>  -e - 1 >= 0
            Formula::Ge(e) => Formula::ge(e.neg()?.add_constant(-1)?),
            // not (e = 0)  <=>  e >= 1 or -e >= 1
            Formula::Eq(e) => Formula::or(vec![
                Formula::ge(e.add_constant(-1)?),
                Formula::ge(e.neg()?.add_constant(-1)?),
            ]),
            // not (e mod c = 0)  <=>  (e mod c) - 1 >= 0
            Formula::Stride(e, c) => Formula::ge(e.modulo(*c)?.add_constant(-1)?),
            Formula::And(parts) => {
                Formula::or(parts.iter().map(|p| p.not()).collect::<Result<_>>()?)
            }
            Formula::Or(parts) => {
                Formula::and(parts.iter().map(|p| p.not()).collect::<Result<_>>()?)
            }
        })
    }

    /// Calls `f` on the expression of every atom.
    pub(crate) fn for_each_atom(&self, f: &mut dyn FnMut(&Formula)) {
        match self {
            Formula::And(parts) | Formula::Or(parts) => {
                parts.iter().for_each(|p| p.for_each_atom(f))
            }
            Formula::True | Formula::False => {}
            atom => f(atom),
        }
    }
}

/// A comparison operator of C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// A piecewise quasi-affine expression: `value_k` where `guard_k` holds; the guards are
/// pairwise disjoint and cover the space.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pw {
    pub pieces: Vec<(Formula, LinExpr)>,
}

impl Pw {
    pub(crate) fn single(e: LinExpr) -> Pw {
        Pw {
            pieces: vec![(Formula::True, e)],
        }
    }

    /// The value if every piece is the same constant.
    pub(crate) fn as_constant(&self) -> Option<i128> {
        let first = self.pieces.first()?.1.as_constant()?;
        self.pieces
            .iter()
            .all(|(_, v)| v.as_constant() == Some(first))
            .then_some(first)
    }

    /// The value if there is a single piece with a `true` guard.
    pub(crate) fn as_affine(&self) -> Option<&LinExpr> {
        match self.pieces.as_slice() {
            [(Formula::True, v)] => Some(v),
            _ => None,
        }
    }

    fn checked(pieces: Vec<(Formula, LinExpr)>) -> Result<Pw> {
        let pieces: Vec<_> = pieces
            .into_iter()
            .filter(|(g, _)| *g != Formula::False)
            .collect();
        if pieces.len() > MAX_PIECES {
            return Err(AffineError::TooManyPieces);
        }
        Ok(Pw { pieces })
    }

    pub(crate) fn map(&self, f: impl Fn(&LinExpr) -> Result<LinExpr>) -> Result<Pw> {
        Pw::checked(
            self.pieces
                .iter()
                .map(|(g, v)| Ok((g.clone(), f(v)?)))
                .collect::<Result<_>>()?,
        )
    }

    /// Combines every pair of pieces.
    pub(crate) fn zip(
        &self,
        other: &Pw,
        f: impl Fn(&LinExpr, &LinExpr) -> Result<LinExpr>,
    ) -> Result<Pw> {
        let mut out = Vec::new();
        for (ga, va) in &self.pieces {
            for (gb, vb) in &other.pieces {
                out.push((Formula::and(vec![ga.clone(), gb.clone()]), f(va, vb)?));
                if out.len() > MAX_PIECES * 4 {
                    return Err(AffineError::TooManyPieces);
                }
            }
        }
        Pw::checked(out)
    }

    /// `cond ? a : b`.
    pub(crate) fn select(cond: &Formula, a: &Pw, b: &Pw) -> Result<Pw> {
        let not_cond = cond.not()?;
        let mut out = Vec::new();
        for (g, v) in &a.pieces {
            out.push((Formula::and(vec![cond.clone(), g.clone()]), v.clone()));
        }
        for (g, v) in &b.pieces {
            out.push((Formula::and(vec![not_cond.clone(), g.clone()]), v.clone()));
        }
        Pw::checked(out)
    }

    /// C's `self / c` (truncating) for a constant `c != 0`. `nonneg` tells whether an
    /// expression is provably non-negative wherever it is evaluated.
    pub(crate) fn c_div(&self, c: i128, nonneg: &dyn Fn(&LinExpr) -> bool) -> Result<Pw> {
        let q = self.trunc_split(c.abs(), nonneg, |v, m| v.floor_div(m))?;
        if c < 0 {
            q.map(|v| v.neg())
        } else {
            Ok(q)
        }
    }

    /// C's `self % c` (sign of the dividend) for a constant `c != 0`.
    pub(crate) fn c_rem(&self, c: i128, nonneg: &dyn Fn(&LinExpr) -> bool) -> Result<Pw> {
        self.trunc_split(c.abs(), nonneg, |v, m| v.modulo(m))
    }

    /// Applies `op` (floor division or modulo by `m > 0`) with truncation semantics: on a
    /// non-negative dividend directly, on a negative one as `-op(-v)`.
    fn trunc_split(
        &self,
        m: i128,
        nonneg: &dyn Fn(&LinExpr) -> bool,
        op: impl Fn(&LinExpr, i128) -> Result<LinExpr>,
    ) -> Result<Pw> {
        let mut out = Vec::new();
        for (g, v) in &self.pieces {
            if nonneg(v) {
                out.push((g.clone(), op(v, m)?));
            } else {
                let pos = Formula::ge(v.clone());
                let neg = pos.not()?;
                out.push((Formula::and(vec![g.clone(), pos]), op(v, m)?));
                out.push((Formula::and(vec![g.clone(), neg]), op(&v.neg()?, m)?.neg()?));
            }
        }
        Pw::checked(out)
    }

    /// The formula `self op other`.
    pub(crate) fn compare(&self, op: Cmp, other: &Pw) -> Result<Formula> {
        let mut disjuncts = Vec::new();
        for (ga, va) in &self.pieces {
            for (gb, vb) in &other.pieces {
                let d = va.sub(vb)?; // a - b
                let atom = match op {
                    Cmp::Lt => Formula::ge(d.neg()?.add_constant(-1)?),
                    Cmp::Le => Formula::ge(d.neg()?),
                    Cmp::Gt => Formula::ge(d.add_constant(-1)?),
                    Cmp::Ge => Formula::ge(d),
                    Cmp::Eq => Formula::eq(d),
                    Cmp::Ne => Formula::eq(d).not()?,
                };
                disjuncts.push(Formula::and(vec![ga.clone(), gb.clone(), atom]));
            }
        }
        Ok(Formula::or(disjuncts))
    }
}

/// Names used when printing: iterators by depth, parameters by index, output dimensions.
pub(crate) struct Names<'a> {
    pub iters: &'a [String],
    pub params: &'a [String],
    pub outs: &'a [String],
}

impl Names<'_> {
    fn term(&self, t: &Term) -> String {
        let name = |v: &[String], i: usize, prefix: &str| {
            v.get(i).cloned().unwrap_or_else(|| format!("{prefix}{i}"))
        };
        match t {
            Term::Iter(d) => name(self.iters, *d, "i"),
            Term::Param(p) => name(self.params, *p, "p"),
            Term::Out(k) => name(self.outs, *k, "o"),
            Term::Floor(e, c) => match simple_term(e) {
                Some(s) => format!("floor({}/{c})", self.term(s)),
                None => format!("floor(({})/{c})", self.expr(e)),
            },
            Term::Mod(e, c) => match simple_term(e) {
                Some(s) => format!("({} mod {c})", self.term(s)),
                None => format!("(({}) mod {c})", self.expr(e)),
            },
        }
    }

    /// `i + 2*j - n + 1`; `0` when empty.
    pub(crate) fn expr(&self, e: &LinExpr) -> String {
        let mut out = String::new();
        for (t, &a) in &e.terms {
            let name = self.term(t);
            let mag = a.unsigned_abs();
            let body = if mag == 1 {
                name
            } else {
                format!("{mag}*{name}")
            };
            match (out.is_empty(), a < 0) {
                (true, false) => out.push_str(&body),
                (true, true) => {
                    let _ = write!(out, "-{body}");
                }
                (false, false) => {
                    let _ = write!(out, " + {body}");
                }
                (false, true) => {
                    let _ = write!(out, " - {body}");
                }
            }
        }
        let c = e.constant;
        if out.is_empty() {
            let _ = write!(out, "{c}");
        } else if c > 0 {
            let _ = write!(out, " + {c}");
        } else if c < 0 {
            let _ = write!(out, " - {}", c.unsigned_abs());
        }
        out
    }

    /// An atom `e >= 0` or `e = 0` printed as `pivot op rest`, where the pivot is an output
    /// dimension, else the innermost iterator, else the first parameter of `e`.
    fn relation(&self, e: &LinExpr, op_pos: &str, op_neg: &str) -> String {
        let pivot = e
            .terms
            .keys()
            .find(|t| matches!(t, Term::Out(_)))
            .or_else(|| e.terms.keys().filter(|t| matches!(t, Term::Iter(_))).max())
            .or_else(|| e.terms.keys().find(|t| matches!(t, Term::Param(_))));
        let Some(pivot) = pivot else {
            return format!("{} {op_pos} 0", self.expr(e));
        };
        let a = e.coefficient(pivot);
        let mut rest = e.clone();
        rest.terms.remove(pivot);
        let name = self.term(pivot);
        let lhs = if a.unsigned_abs() == 1 {
            name
        } else {
            format!("{}*{name}", a.unsigned_abs())
        };
        if a > 0 {
            // a*t + rest >= 0  <=>  a*t >= -rest
            let rhs = rest
                .neg()
                .map(|r| self.expr(&r))
                .unwrap_or_else(|_| format!("-({})", self.expr(&rest)));
            format!("{lhs} {op_pos} {rhs}")
        } else {
            // -|a|*t + rest >= 0  <=>  |a|*t <= rest
            format!("{lhs} {op_neg} {}", self.expr(&rest))
        }
    }

    /// The formula in ISL syntax (`true`/`false` for the constants).
    pub(crate) fn formula(&self, f: &Formula) -> String {
        match f {
            Formula::True => "true".to_string(),
            Formula::False => "false".to_string(),
            Formula::Ge(e) => self.relation(e, ">=", "<="),
            Formula::Eq(e) => self.relation(e, "=", "="),
            Formula::Stride(e, c) => match simple_term(e) {
                Some(s) => format!("{} mod {c} = 0", self.term(s)),
                None => format!("({}) mod {c} = 0", self.expr(e)),
            },
            Formula::And(parts) => parts
                .iter()
                .map(|p| match p {
                    Formula::Or(_) => format!("({})", self.formula(p)),
                    _ => self.formula(p),
                })
                .collect::<Vec<_>>()
                .join(" and "),
            Formula::Or(parts) => parts
                .iter()
                .map(|p| match p {
                    Formula::And(_) => format!("({})", self.formula(p)),
                    _ => self.formula(p),
                })
                .collect::<Vec<_>>()
                .join(" or "),
        }
    }
}

/// The term of `e` if `e` is exactly one plain variable with coefficient 1.
fn simple_term(e: &LinExpr) -> Option<&Term> {
    if e.constant != 0 || e.terms.len() != 1 {
        return None;
    }
    let (t, &a) = e.terms.iter().next()?;
    (a == 1 && matches!(t, Term::Iter(_) | Term::Param(_) | Term::Out(_))).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn names() -> (Vec<String>, Vec<String>) {
        (vec!["i".into(), "j".into()], vec!["n".into(), "m".into()])
    }

    fn lin(terms: &[(Term, i128)], c: i128) -> LinExpr {
        let mut e = LinExpr::constant(c);
        for (t, a) in terms {
            e = e.add(&LinExpr::term(t.clone()).scale(*a).unwrap()).unwrap();
        }
        e
    }

    fn show(f: &Formula) -> String {
        let (iters, params) = names();
        Names {
            iters: &iters,
            params: &params,
            outs: &[],
        }
        .formula(f)
    }

    #[test]
    fn expressions_print_in_term_order() {
        let (iters, params) = names();
        let n = Names {
            iters: &iters,
            params: &params,
            outs: &[],
        };
        let e = lin(
            &[(Term::Param(0), -1), (Term::Iter(1), 2), (Term::Iter(0), 1)],
            -3,
        );
        assert_eq!(n.expr(&e), "i + 2*j - n - 3");
        assert_eq!(n.expr(&LinExpr::constant(0)), "0");
        assert_eq!(n.expr(&lin(&[(Term::Iter(0), -1)], 4)), "-i + 4");
    }

    #[test]
    fn atoms_print_with_the_innermost_iterator_on_the_left() {
        // n - 1 - j >= 0  is  j <= n - 1
        assert_eq!(
            show(&Formula::ge(lin(
                &[(Term::Param(0), 1), (Term::Iter(1), -1)],
                -1
            ))),
            "j <= n - 1"
        );
        // j - i >= 0  is  j >= i
        assert_eq!(
            show(&Formula::ge(lin(
                &[(Term::Iter(1), 1), (Term::Iter(0), -1)],
                0
            ))),
            "j >= i"
        );
        // n - 1 >= 0 is n >= 1
        assert_eq!(
            show(&Formula::ge(lin(&[(Term::Param(0), 1)], -1))),
            "n >= 1"
        );
        // 2i - n = 0
        assert_eq!(
            show(&Formula::eq(lin(
                &[(Term::Iter(0), 2), (Term::Param(0), -1)],
                0
            ))),
            "2*i = n"
        );
    }

    #[test]
    fn ge_divides_by_the_gcd_rounding_the_constant_down() {
        // 2i - 3 >= 0  <=>  i >= 2 (i - 2 >= 0 after floor(-3/2) = -2)
        assert_eq!(
            Formula::ge(lin(&[(Term::Iter(0), 2)], -3)),
            Formula::Ge(lin(&[(Term::Iter(0), 1)], -2))
        );
        // 2i = 3 has no integer solution
        assert_eq!(Formula::eq(lin(&[(Term::Iter(0), 2)], -3)), Formula::False);
        assert_eq!(Formula::ge(LinExpr::constant(-1)), Formula::False);
    }

    #[test]
    fn negation_is_pushed_to_the_atoms() {
        let i_lt_n = Formula::ge(lin(&[(Term::Param(0), 1), (Term::Iter(0), -1)], -1));
        let j_eq_0 = Formula::eq(lin(&[(Term::Iter(1), 1)], 0));
        let f = Formula::and(vec![i_lt_n, j_eq_0]).not().unwrap();
        assert_eq!(show(&f), "i >= n or j >= 1 or j <= -1");
    }

    #[test]
    fn truncating_division_splits_unless_non_negative() {
        let i = Pw::single(lin(&[(Term::Iter(0), 1)], 0));
        let (iters, params) = names();
        let n = Names {
            iters: &iters,
            params: &params,
            outs: &[],
        };
        let proven = i.c_div(2, &|_| true).unwrap();
        assert_eq!(proven.pieces.len(), 1);
        assert_eq!(n.expr(&proven.pieces[0].1), "floor(i/2)");
        let split = i.c_div(2, &|_| false).unwrap();
        let shown: Vec<(String, String)> = split
            .pieces
            .iter()
            .map(|(g, v)| (n.formula(g), n.expr(v)))
            .collect();
        assert_eq!(
            shown,
            vec![
                ("i >= 0".to_string(), "floor(i/2)".to_string()),
                ("i <= -1".to_string(), "-floor((-i)/2)".to_string()),
            ]
        );
        let rem = i.c_rem(-3, &|_| false).unwrap();
        let shown: Vec<String> = rem.pieces.iter().map(|(_, v)| n.expr(v)).collect();
        assert_eq!(shown, vec!["(i mod 3)", "-((-i) mod 3)"]);
    }

    #[test]
    fn exact_and_constant_divisions_fold() {
        let e = lin(&[(Term::Iter(0), 4)], 6);
        assert_eq!(e.floor_div(2).unwrap(), lin(&[(Term::Iter(0), 2)], 3));
        assert_eq!(
            LinExpr::constant(-7).floor_div(2).unwrap(),
            LinExpr::constant(-4)
        );
        assert_eq!(
            LinExpr::constant(-7).modulo(2).unwrap(),
            LinExpr::constant(1)
        );
        assert_eq!(
            lin(&[(Term::Iter(0), 4)], 7).modulo(2).unwrap(),
            LinExpr::constant(1)
        );
    }

    #[test]
    fn select_and_compare_build_disjunctions() {
        // (n < m ? n : m) > i
        let np = Pw::single(lin(&[(Term::Param(0), 1)], 0));
        let mp = Pw::single(lin(&[(Term::Param(1), 1)], 0));
        let c = np.compare(Cmp::Lt, &mp).unwrap();
        let min = Pw::select(&c, &np, &mp).unwrap();
        let i = Pw::single(lin(&[(Term::Iter(0), 1)], 0));
        let f = min.compare(Cmp::Gt, &i).unwrap();
        assert_eq!(
            show(&f),
            "(n <= m - 1 and i <= n - 1) or (n >= m and i <= m - 1)"
        );
    }

    #[test]
    fn overflow_is_an_error() {
        let big = LinExpr::constant(i128::MAX);
        assert_eq!(big.add_constant(1), Err(AffineError::Overflow));
        assert_eq!(big.scale(2), Err(AffineError::Overflow));
    }
}
