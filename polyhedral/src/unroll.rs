//! Complete unrolling of a loop of constant range, done on the plain [`Ast`] after ISL built the
//! code (the chains of [`crate::chains`]: one copy of the body per value of `o_m mod C`).
//!
//! ISL's own `unroll` option gives the same code, but it works out each copy's domain by
//! projection, for every value, in every piece that the `separate` option splits the outer
//! loops into: on adi at LARGE its two builds took 0.46 s each, against 0.23 s for the same
//! schedule built as a loop (adi compiles in 1.7 s instead of 2.0, best of 5; its C is
//! byte-identical, and so is every other kernel's). Here the loop is built as a loop and its copies are
//! taken from its bounds: the copy for value `u` runs where `init <= u` and `cond` holds at `u`
//! (the loop steps by one), which is exactly where the loop ran iteration `u`, and the copies
//! keep the loop's order. A bound that is a `min`/`max` is split into its terms; terms that
//! compare constants are decided here, and the others are asked of the caller with what the code
//! around the loop says of its iterators (the enclosing loops' bounds and strides, the `if`s'
//! conditions: [`Fact`]; `astgen`'s build has ISL simplify the guard under them, as its own
//! unrolling does), so that a copy keeps the guard ISL's unrolling would give it (adi: the
//! copies of its first and last rows, `tf_i6 >= 4` and `tf_i6 <= 992` in strips of four).

use crate::ast::{Ast, Expr, OpKind};

/// What the code around a loop says of the enclosing loops' iterators: a condition that holds
/// there (a loop's bounds, an `if`'s condition), or a loop's stride (`iter = init + step * a`
/// for some `a >= 0`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Fact {
    Holds(Expr),
    Stride { iter: String, init: Expr, step: i64 },
}

/// The guard `terms` (a conjunction) simplified where `facts`, the conditions of the code
/// around it, hold (for every parameter value of the context): `Some(None)` when they imply
/// it, `Some(Some(e))` for a simpler equivalent `e` there, `None` when it cannot tell (the
/// terms then stay as they are).
pub(crate) type Simplify<'a> = dyn FnMut(&[Expr], &[Fact]) -> Option<Option<Expr>> + 'a;

/// Replaces every loop over `iter` in `ast` by one copy of its body per value `lo ..= hi` (the
/// values the loop's dimension takes), in order, `iter` replaced by the value, each guarded by
/// what the loop's bounds say of that value: the terms that are not constant, as `simplify`
/// puts them given the code around the loop. Returns `false`, and leaves `ast` as it was, when
/// a loop over `iter` steps by anything but one or `hi - lo` is large.
pub(crate) fn unroll_completely(
    ast: &mut Ast,
    iter: &str,
    lo: i64,
    hi: i64,
    simplify: &mut Simplify<'_>,
) -> bool {
    const MAX_COPIES: i64 = 64;
    if hi < lo || hi - lo >= MAX_COPIES || !steps_by_one(ast, iter) {
        return false;
    }
    expand(ast, iter, lo, hi, &mut Vec::new(), simplify);
    true
}

/// Whether every loop over `iter` in `ast` steps by one.
fn steps_by_one(ast: &Ast, iter: &str) -> bool {
    let mut ok = true;
    ast.walk(&mut |node| {
        if let Ast::For { iter: i, inc, .. } = node {
            if i == iter && constant(inc) != Some(1) {
                ok = false;
            }
        }
    });
    ok
}

/// [`unroll_completely`] below the code whose conditions are `facts`.
fn expand(
    ast: &mut Ast,
    iter: &str,
    lo: i64,
    hi: i64,
    facts: &mut Vec<Fact>,
    simplify: &mut Simplify<'_>,
) {
    match ast {
        Ast::Block(items) => items
            .iter_mut()
            .for_each(|a| expand(a, iter, lo, hi, facts, simplify)),
        Ast::For {
            iter: i,
            init,
            cond,
            body,
            ..
        } if i == iter => {
            let mut copies = Vec::new();
            for u in lo..=hi {
                let value = Expr::Int(u.to_string());
                let starts = Expr::Op(OpKind::Le, vec![init.clone(), value.clone()]);
                let mut guard = Vec::new();
                match (
                    decide(&starts, &mut guard),
                    decide(&with(cond, iter, u), &mut guard),
                ) {
                    (Some(false), _) | (_, Some(false)) => continue,
                    _ => {}
                }
                let cond = match guard.is_empty() {
                    true => None,
                    false => simplify(&guard, facts).unwrap_or_else(|| Some(all_of(guard))),
                };
                let mut copy = (**body).clone();
                replace(&mut copy, iter, u);
                copies.push(match cond {
                    None => copy,
                    Some(cond) => Ast::If {
                        cond,
                        then: Box::new(copy),
                        els: None,
                    },
                });
            }
            *ast = Ast::Block(copies);
        }
        Ast::For {
            iter: i,
            init,
            cond,
            inc,
            body,
        } => {
            let before = facts.len();
            facts.push(Fact::Holds(Expr::Op(
                OpKind::Le,
                vec![init.clone(), Expr::Id(i.clone())],
            )));
            facts.push(Fact::Holds(cond.clone()));
            if let Some(step) = constant(inc).filter(|&s| s > 1) {
                facts.push(Fact::Stride {
                    iter: i.clone(),
                    init: init.clone(),
                    step,
                });
            }
            expand(body, iter, lo, hi, facts, simplify);
            facts.truncate(before);
        }
        Ast::If { cond, then, els } => {
            facts.push(Fact::Holds(cond.clone()));
            expand(then, iter, lo, hi, facts, simplify);
            facts.pop();
            // Below `else` nothing more is known (the negation of `cond` is not kept).
            if let Some(els) = els {
                expand(els, iter, lo, hi, facts, simplify);
            }
        }
        Ast::User { .. } => {}
        Ast::Kernel(k) => {
            expand(&mut k.fallback, iter, lo, hi, facts, simplify);
            expand(&mut k.tail, iter, lo, hi, facts, simplify);
        }
    }
}

/// `e` with `iter` replaced by `u`.
fn with(e: &Expr, iter: &str, u: i64) -> Expr {
    let mut e = e.clone();
    replace_expr(&mut e, iter, u);
    e
}

/// Replaces `iter` by `u` in `e`; `x + 0` and `x - 0` that this makes become `x`.
fn replace_expr(e: &mut Expr, iter: &str, u: i64) {
    match e {
        Expr::Id(name) if name == iter => *e = Expr::Int(u.to_string()),
        Expr::Op(op, args) => {
            args.iter_mut().for_each(|a| replace_expr(a, iter, u));
            let zero = |a: &Expr| constant(a) == Some(0);
            match (op, args.as_slice()) {
                (OpKind::Add | OpKind::Sub, [x, z]) if zero(z) => *e = x.clone(),
                (OpKind::Add, [z, x]) if zero(z) => *e = x.clone(),
                _ => {}
            }
        }
        _ => {}
    }
}

/// `ast` with every use of `iter` replaced by `u` (loops over other iterators are kept;
/// [`Ast::exprs_mut`]).
fn replace(ast: &mut Ast, iter: &str, u: i64) {
    ast.exprs_mut(&mut |e| replace_expr(e, iter, u));
}

/// Splits the condition `e` into terms: `Some(b)` when it is decided (`b`), otherwise `None`
/// with the undecided terms pushed on `guard`.
fn decide(e: &Expr, guard: &mut Vec<Expr>) -> Option<bool> {
    let mut terms = Vec::new();
    conjuncts(e, &mut terms);
    let mut open = Vec::new();
    for t in terms {
        match comparison(&t) {
            Some(false) => return Some(false),
            Some(true) => {}
            None => open.push(t),
        }
    }
    if open.is_empty() {
        return Some(true);
    }
    guard.extend(open);
    None
}

/// The terms of `e` as a conjunction: `a && b`, `x <= min(a, b)` (`x <= a && x <= b`),
/// `max(a, b) <= x`, and the same with `<`, `>=`, `>`.
pub(crate) fn conjuncts(e: &Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Op(OpKind::And | OpKind::AndThen, args) => {
            args.iter().for_each(|a| conjuncts(a, out));
        }
        Expr::Op(op @ (OpKind::Le | OpKind::Lt | OpKind::Ge | OpKind::Gt), args)
            if args.len() == 2 =>
        {
            // Normalized to `small < large` or `small <= large`.
            let (small, large, op) = match op {
                OpKind::Ge => (&args[1], &args[0], OpKind::Le),
                OpKind::Gt => (&args[1], &args[0], OpKind::Lt),
                _ => (&args[0], &args[1], *op),
            };
            match (small, large) {
                (Expr::Op(OpKind::Max, terms), _) => terms.iter().for_each(|t| {
                    conjuncts(&Expr::Op(op, vec![t.clone(), large.clone()]), out);
                }),
                (_, Expr::Op(OpKind::Min, terms)) => terms.iter().for_each(|t| {
                    conjuncts(&Expr::Op(op, vec![small.clone(), t.clone()]), out);
                }),
                _ => out.push(Expr::Op(op, vec![small.clone(), large.clone()])),
            }
        }
        _ => out.push(e.clone()),
    }
}

/// The value of a comparison between two constants; `None` for anything else.
fn comparison(e: &Expr) -> Option<bool> {
    let Expr::Op(op, args) = e else { return None };
    let [a, b] = args.as_slice() else { return None };
    let (a, b) = (constant(a)?, constant(b)?);
    match op {
        OpKind::Le => Some(a <= b),
        OpKind::Lt => Some(a < b),
        OpKind::Ge => Some(a >= b),
        OpKind::Gt => Some(a > b),
        OpKind::Eq => Some(a == b),
        _ => None,
    }
}

/// The value of an expression made of integer literals, additions, subtractions and negations.
pub(crate) fn constant(e: &Expr) -> Option<i64> {
    match e {
        Expr::Int(text) => text.parse().ok(),
        Expr::Op(OpKind::Minus, args) if args.len() == 1 => constant(&args[0])?.checked_neg(),
        Expr::Op(OpKind::Add, args) if args.len() == 2 => {
            constant(&args[0])?.checked_add(constant(&args[1])?)
        }
        Expr::Op(OpKind::Sub, args) if args.len() == 2 => {
            constant(&args[0])?.checked_sub(constant(&args[1])?)
        }
        _ => None,
    }
}

fn all_of(mut terms: Vec<Expr>) -> Expr {
    if terms.len() == 1 {
        return terms.remove(0);
    }
    Expr::Op(OpKind::And, terms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::testing::{id, instances, int, op, user};

    fn for_loop(iter: &str, init: Expr, cond: Expr, body: Ast) -> Ast {
        Ast::For {
            iter: iter.into(),
            init,
            cond,
            inc: int(1),
            body: Box::new(body),
        }
    }

    /// A strip of rows `r .. r + 3` cut by the rows `1 ..= 998` (adi's first and last rows),
    /// inside a loop over `j`: `for c (max(0, 1 - r) .. min(3, 998 - r)) S(r + c, j)`.
    fn strip() -> Ast {
        let inner = for_loop(
            "c",
            op(
                OpKind::Max,
                vec![int(0), op(OpKind::Sub, vec![int(1), id("r")])],
            ),
            op(
                OpKind::Le,
                vec![
                    id("c"),
                    op(
                        OpKind::Min,
                        vec![int(3), op(OpKind::Sub, vec![int(998), id("r")])],
                    ),
                ],
            ),
            user("S", vec![op(OpKind::Add, vec![id("r"), id("c")]), id("j")]),
        );
        for_loop("j", int(1), op(OpKind::Le, vec![id("j"), int(3)]), inner)
    }

    #[test]
    fn the_copies_run_what_the_loop_ran_in_its_order() {
        let before = strip();
        let mut after = before.clone();
        assert!(unroll_completely(&mut after, "c", 0, 3, &mut |_, _| None));
        let mut loops = 0;
        after.walk(&mut |n| loops += matches!(n, Ast::For { iter, .. } if iter == "c") as usize);
        assert_eq!(loops, 0, "{after:?}");
        for r in [0, 4, 992, 996, 997] {
            let (mut want, mut got) = (Vec::new(), Vec::new());
            instances(&before, &mut vec![("r".into(), r)], &mut want);
            instances(&after, &mut vec![("r".into(), r)], &mut got);
            assert_eq!(got, want, "r = {r}");
        }
    }

    #[test]
    fn decided_bounds_leave_no_guard() {
        // Each copy keeps the terms of its bounds that depend on `r`, and only those.
        let mut ast = strip();
        assert!(unroll_completely(&mut ast, "c", 0, 3, &mut |_, _| None));
        let Ast::For { body, .. } = &ast else {
            panic!()
        };
        let Ast::Block(copies) = &**body else {
            panic!()
        };
        let guarded: Vec<bool> = copies.iter().map(|c| matches!(c, Ast::If { .. })).collect();
        assert_eq!(guarded, vec![true, true, true, true]);
        let Ast::If { cond, .. } = &copies[0] else {
            panic!()
        };
        let mut terms = Vec::new();
        conjuncts(cond, &mut terms);
        assert_eq!(terms.len(), 2, "{cond:?}");
        // With constant bounds every copy is unguarded, and those outside are dropped.
        let mut whole = for_loop(
            "c",
            int(1),
            op(OpKind::Lt, vec![id("c"), int(3)]),
            user("S", vec![id("c")]),
        );
        assert!(unroll_completely(&mut whole, "c", 0, 3, &mut |_, _| None));
        assert_eq!(
            whole,
            Ast::Block(vec![user("S", vec![int(1)]), user("S", vec![int(2)])])
        );
    }

    #[test]
    fn guards_are_what_the_caller_makes_of_them() {
        // The caller knows `r >= 0` and `r <= 996` (whole strips of a tile, from code around
        // this one): it drops the guards that hold, and puts the others its own way.
        let mut asked = Vec::new();
        let mut ast = strip();
        let mut simplify = |terms: &[Expr], facts: &[Fact]| {
            asked.push(facts.to_vec());
            let holds = |t: &Expr| {
                (0..4).any(|u| {
                    *t == op(
                        OpKind::Le,
                        vec![op(OpKind::Sub, vec![int(1), id("r")]), int(u)],
                    ) && u >= 1
                        || *t
                            == op(
                                OpKind::Le,
                                vec![int(u), op(OpKind::Sub, vec![int(998), id("r")])],
                            )
                            && u <= 2
                })
            };
            let open: Vec<&Expr> = terms.iter().filter(|t| !holds(t)).collect();
            match open.len() {
                0 => Some(None),
                _ => Some(Some(id("mine"))),
            }
        };
        assert!(unroll_completely(&mut ast, "c", 0, 3, &mut simplify));
        // What the loop over `j` says: `1 <= j`, `j <= 3`.
        let around = vec![
            Fact::Holds(op(OpKind::Le, vec![int(1), id("j")])),
            Fact::Holds(op(OpKind::Le, vec![id("j"), int(3)])),
        ];
        assert!(asked.iter().all(|f| f == &around), "{asked:?}");
        let Ast::For { body, .. } = &ast else {
            panic!()
        };
        let Ast::Block(copies) = &**body else {
            panic!()
        };
        let guards: Vec<Option<&Expr>> = copies
            .iter()
            .map(|c| match c {
                Ast::If { cond, .. } => Some(cond),
                _ => None,
            })
            .collect();
        let mine = id("mine");
        assert_eq!(
            guards,
            vec![Some(&mine), None, None, Some(&mine)],
            "{copies:?}"
        );
    }

    #[test]
    fn other_steps_are_left_to_isl() {
        let mut ast = Ast::For {
            iter: "c".into(),
            init: int(0),
            cond: op(OpKind::Le, vec![id("c"), int(3)]),
            inc: int(2),
            body: Box::new(user("S", vec![id("c")])),
        };
        let before = ast.clone();
        assert!(!unroll_completely(&mut ast, "c", 0, 3, &mut |_, _| None));
        assert_eq!(ast, before);
    }
}
