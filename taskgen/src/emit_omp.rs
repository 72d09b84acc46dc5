//! The barrier-based OpenMP control program (`--target omp`): the way PLuTo parallelizes tiled
//! code, kept as the baseline our dataflow tasks are compared with in one tool.
//!
//! Each nest's tiles run in their tiled order, as in the sequential target (in the tasks' spawn
//! order inside the parallel loop over tile dimension 0), calling the same tile functions; the
//! nests follow one another. Which tile loops may be parallel is polyhedral's
//! answer ([`polyhedral::parallel_tiles`]): the loop over the outermost parallel tile dimension
//! becomes `#pragma omp parallel for` (its end is the barrier); a nest with no parallel tile
//! dimension but at least two is enumerated along wavefronts (the outer tile loop runs over
//! `t0 + t1`, the loop over `t1` inside it is parallel), and one with a single dimension runs in
//! order on the calling thread.
//!
//! Where the parallel loops sit inside sequential ones (the wavefronts of a skewed nest, the
//! steps of an outer sequential tile loop), one `#pragma omp parallel` region encloses the whole
//! nest and each parallel loop is `#pragma omp for` (its end the barrier): every thread runs the
//! sequential loops' control alike, as PLuTo's generated code does, and the threads are woken once
//! per nest, not once per wavefront. Measured on a 2-core Zen 3 VM, jacobi-1d at EXTRALARGE (39
//! wavefronts): a `parallel for` per wavefront ran 12.6 ms on 2 threads (median of 21; 1.4 ms at
//! best, 1.5 ms on one thread), each region waking the other thread from its sleep. The region is
//! hoisted only where every tile of the nest is inside a parallel loop (a tile outside one would
//! run on every thread).
//!
//! A loop becomes `parallel for` only in OpenMP's canonical form (`iter <= ub` or `iter < ub`,
//! step 1, which is what ISL generates); any other loop stays sequential, which is always correct.
//! This module prints only the control program; `emit_c` writes the tile functions and the
//! environment they share (read only, or written by one tile at a time).

use crate::c_ast;
use crate::program::TaskProgram;
use crate::program::TILE_ITER;
use polyhedral::{Ast, Dependences, Expr, OpKind, TiledSchedule};
use scop_ir::Scop;
use std::fmt::Write;

/// The OpenMP control program's plan for one SCoP: one entry per nest, in execution order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OmpPlan {
    pub nests: Vec<OmpNest>,
}

/// The tile loops of one nest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OmpNest {
    /// Enumerates the nest's tiles (or their wavefront skew); user nodes carry the coordinates.
    pub tiles: Ast,
    /// Whether `tiles` enumerates the skew `(t0 + t1, t1, ..)`: tile coordinate 0 is `w - t1`.
    pub wavefront: bool,
    /// The dimension whose loops are `parallel for`, if any.
    pub parallel_dim: Option<usize>,
}

/// Asks polyhedral which tile loops of each nest of `sched` are parallel and builds their loops.
pub fn plan(scop: &Scop, deps: &Dependences, sched: &TiledSchedule) -> crate::Result<OmpPlan> {
    let nests = polyhedral::parallel_tiles(scop, deps, sched)?
        .into_iter()
        .zip(&sched.nests)
        .map(|(p, nest)| {
            let parallel_dim = p.parallel.iter().position(|&x| x);
            // Inside the parallel loop over dimension 0, the tiles of one iteration in the order
            // the tasks are spawned in (`polyhedral::Nest::spawn_order`), as the sequential
            // target runs them: the same schedule as the tasks'.
            let tiles = if !p.wavefront && parallel_dim == Some(0) && !nest.spawn_order.is_empty() {
                polyhedral::classes_ast(
                    scop,
                    &[vec![p.tiles.clone()]],
                    TILE_ITER,
                    &nest.spawn_order,
                )?
            } else {
                polyhedral::points_ast(scop, &p.tiles, TILE_ITER)?
            };
            Ok(OmpNest {
                tiles,
                wavefront: p.wavefront,
                parallel_dim,
            })
        })
        .collect::<polyhedral::Result<Vec<_>>>()?;
    Ok(OmpPlan { nests })
}

/// The tile loops of SCoP `n`'s control program (after its environment `tf_env`); `task_fn(k)`
/// names the tile function of nest `k`.
pub(crate) fn tile_loops(
    plan: &OmpPlan,
    prog: &TaskProgram,
    task_fn: &dyn Fn(usize) -> String,
) -> String {
    let mut s = String::new();
    if plan.nests.len() != prog.classes.len() {
        // Both come from the same tiled schedule; a mismatch is a compiler bug, stopped here.
        let _ = writeln!(
            s,
            "#error \"tiledflow internal error: {} OpenMP nests for {} task classes\"",
            plan.nests.len(),
            prog.classes.len()
        );
        return s;
    }
    for (k, (nest, class)) in plan.nests.iter().zip(&prog.classes).enumerate() {
        let d = class.n_dims.max(1);
        let call = task_fn(k);
        let mut user = |out: &mut String, _name: &str, args: &[Expr], depth: usize| {
            let pad = "  ".repeat(depth);
            let mut key: Vec<String> = args.iter().map(c_ast::expr).collect();
            if nest.wavefront && key.len() >= 2 {
                key[0] = format!("({} - {})", key[0], key[1]);
            }
            if key.is_empty() {
                key.push("0".into());
            }
            let _ = writeln!(
                out,
                "{pad}{{ const long tf_key[{d}] = {{ {} }};",
                key.join(", ")
            );
            let _ = writeln!(out, "{pad}  {call}(&tf_env, tf_key); }}");
        };
        let parallel_iter = nest.parallel_dim.map(|j| format!("{TILE_ITER}{j}"));
        loops(&mut s, &nest.tiles, 2, parallel_iter.as_deref(), &mut user);
    }
    s
}

/// Prints `ast` like [`c_ast::stmt`], with `#pragma omp parallel for` before every canonical loop
/// over `parallel_iter`, or, where such loops are inside others and every user node is inside
/// one of them ([`hoistable`]), one `#pragma omp parallel` around `ast` and `#pragma omp for`
/// before each of them.
fn loops(
    out: &mut String,
    ast: &Ast,
    depth: usize,
    parallel_iter: Option<&str>,
    user: &mut c_ast::UserPrinter<'_>,
) {
    let Some(piter) = parallel_iter else {
        c_ast::stmt(out, ast, depth, user);
        return;
    };
    let hoist = hoistable(ast, piter);
    let (depth, pragma) = if hoist {
        let pad = "  ".repeat(depth);
        let _ = writeln!(out, "{pad}#pragma omp parallel");
        let _ = writeln!(out, "{pad}{{");
        (depth + 1, "#pragma omp for schedule(static)")
    } else {
        (depth, "#pragma omp parallel for schedule(static)")
    };
    let mut parallel_for =
        |out: &mut String, l: &c_ast::Loop<'_>, depth: usize, user: &mut c_ast::UserPrinter<'_>| {
            let Some((op, ub)) = canonical_bound(l.iter, l.cond, l.inc) else {
                return false;
            };
            let (pad, iter) = ("  ".repeat(depth), l.iter);
            let _ = writeln!(out, "{pad}{pragma}");
            let _ = writeln!(
                out,
                "{pad}for (long {iter} = {}; {iter} {op} {}; {iter}++) {{",
                c_ast::expr(l.init),
                c_ast::expr(ub)
            );
            c_ast::stmt(out, l.body, depth + 1, user);
            let _ = writeln!(out, "{pad}}}");
            true
        };
    c_ast::stmt_at_loops(out, ast, depth, piter, &mut parallel_for, user);
    if hoist {
        let _ = writeln!(out, "{}}}", "  ".repeat(depth - 1));
    }
}

/// Whether one parallel region may enclose `ast`: its canonical loops over `piter` are inside
/// other loops, and every user node (a tile) and kernel is inside one of them, so that the code
/// every thread runs outside them is loop control only.
fn hoistable(ast: &Ast, piter: &str) -> bool {
    /// Whether every tile of `ast` is inside a canonical loop over `piter`, and whether there
    /// is such a loop.
    fn covered(ast: &Ast, piter: &str) -> Option<bool> {
        match ast {
            Ast::For {
                iter,
                cond,
                inc,
                body,
                ..
            } => {
                if iter == piter && canonical_bound(iter, cond, inc).is_some() {
                    Some(true)
                } else {
                    covered(body, piter)
                }
            }
            Ast::Block(items) => items.iter().try_fold(false, |any, item| {
                covered(item, piter).map(|found| any || found)
            }),
            Ast::If { then, els, .. } => {
                let found = covered(then, piter)?;
                match els {
                    Some(e) => covered(e, piter).map(|f| found || f),
                    None => Some(found),
                }
            }
            Ast::User { .. } | Ast::Kernel(_) => None,
        }
    }
    match ast {
        // The parallel loop outermost: `parallel for` is one region already.
        Ast::For { iter, .. } if iter == piter => false,
        _ => covered(ast, piter) == Some(true),
    }
}

/// `(op, ub)` when the loop is `iter op ub` with step 1 and `ub` does not mention `iter`.
pub(crate) fn canonical_bound<'a>(
    iter: &str,
    cond: &'a Expr,
    inc: &Expr,
) -> Option<(&'static str, &'a Expr)> {
    if *inc != Expr::Int("1".into()) {
        return None;
    }
    let Expr::Op(op, args) = cond else {
        return None;
    };
    let op = match op {
        OpKind::Le => "<=",
        OpKind::Lt => "<",
        _ => return None,
    };
    match args.as_slice() {
        [Expr::Id(lhs), ub] if lhs == iter && !mentions_id(ub, iter) => Some((op, ub)),
        _ => None,
    }
}

pub(crate) fn mentions_id(e: &Expr, id: &str) -> bool {
    match e {
        Expr::Int(_) => false,
        Expr::Id(x) => x == id,
        Expr::Op(_, args) => args.iter().any(|a| mentions_id(a, id)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn for_loop(iter: &str, ub: Expr, body: Ast) -> Ast {
        Ast::For {
            iter: iter.into(),
            init: Expr::Int("0".into()),
            cond: Expr::Op(OpKind::Le, vec![Expr::Id(iter.into()), ub]),
            inc: Expr::Int("1".into()),
            body: Box::new(body),
        }
    }

    fn user(name: &str, args: &[&str]) -> Ast {
        Ast::User {
            name: name.into(),
            args: args.iter().map(|a| Expr::Id((*a).into())).collect(),
        }
    }

    fn print(tiles: &Ast, piter: &str) -> String {
        let mut out = String::new();
        loops(
            &mut out,
            tiles,
            0,
            Some(piter),
            &mut |out, _n, args, depth| {
                let _ = writeln!(
                    out,
                    "{}T({});",
                    "  ".repeat(depth),
                    args.iter().map(c_ast::expr).collect::<Vec<_>>().join(", ")
                );
            },
        );
        out
    }

    #[test]
    fn wavefronts_share_one_parallel_region() {
        let c = |name: &str| Expr::Id(name.into());
        let tiles = for_loop(
            "tf_c0",
            c("n"),
            for_loop("tf_c1", c("tf_c0"), user("N0", &["tf_c0", "tf_c1"])),
        );
        assert_eq!(
            print(&tiles, "tf_c1"),
            "#pragma omp parallel\n{\n  for (long tf_c0 = 0; (tf_c0 <= n); tf_c0 += 1) {\n    \
             #pragma omp for schedule(static)\n    for (long tf_c1 = 0; tf_c1 <= tf_c0; tf_c1++) {\n      \
             T(tf_c0, tf_c1);\n    }\n  }\n}\n"
        );
    }

    #[test]
    fn a_tile_outside_the_parallel_loops_keeps_a_region_per_loop() {
        // Every thread of a region would run the tile `N0(tf_c0)`.
        let c = |name: &str| Expr::Id(name.into());
        let tiles = for_loop(
            "tf_c0",
            c("n"),
            Ast::Block(vec![
                user("N0", &["tf_c0"]),
                for_loop("tf_c1", c("tf_c0"), user("N0", &["tf_c0", "tf_c1"])),
            ]),
        );
        let out = print(&tiles, "tf_c1");
        assert!(!out.contains("omp parallel\n"), "{out}");
        assert!(out.contains("#pragma omp parallel for"), "{out}");
        // The parallel loop outermost: `parallel for`, one region already.
        let outer = for_loop("tf_c1", c("n"), user("N0", &["tf_c1"]));
        assert!(print(&outer, "tf_c1").starts_with("#pragma omp parallel for"));
    }

    #[test]
    fn a_loop_not_in_canonical_form_stays_sequential() {
        let mut odd = for_loop(
            "tf_c0",
            Expr::Id("n".into()),
            Ast::User {
                name: "N0".into(),
                args: vec![Expr::Id("tf_c0".into())],
            },
        );
        if let Ast::For { inc, .. } = &mut odd {
            *inc = Expr::Int("2".into());
        }
        let mut out = String::new();
        loops(&mut out, &odd, 0, Some("tf_c0"), &mut |out, _n, _a, _d| {
            out.push_str("T;\n")
        });
        assert!(!out.contains("pragma"), "{out}");
    }
}
