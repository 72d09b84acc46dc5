//! Operands gathered in the tiles that are not full: where a statement of the general code (the
//! code of the tiles that the full-tile code and its kernels do not take) reads, along its
//! innermost loop, an array the SCoP never writes across its rows (syrk's `A[j][k]` along `j`
//! in `C[i][j] += alpha * A[i][k] * A[j][k]`), the tile first copies the box of that array it
//! reads into a buffer on its stack with the innermost loop's direction contiguous
//! (`tf_gpack0[k - k0][j - j0] = A[j][k]`), and the statement reads the buffer. The C compiler
//! then vectorizes the innermost loop with plain loads, where it had a load a row apart per
//! element.
//!
//! The full tiles of such nests already run vector kernels with packed operands
//! (`crate::kernel`); the tiles left are those the problem's edges or its triangular domains
//! cut: syrk's diagonal tiles, where `j <= i`, ran a fifth of its time on one thread for a
//! thirtieth of its work. Measured at LARGE (Xeon, medians of 9 runs in rounds): syrk 54.3 ->
//! 50.4 ms on one thread, 29.7 -> 27.3 ms on two. syr2k's tiles keep `k` innermost (its four
//! products are contiguous along it) and gain nothing from this; no other PolyBench kernel has
//! such an operand in its other tiles.
//!
//! Legality: the array is never written in the SCoP, so every copy holds the value every read
//! would see, at any time, and copying an element the tile does not read reads nothing that
//! another task writes. The box is the hull of the elements the occurrence reads in the tile
//! (ISL's bounds of that set in the tile's coordinates), copied only in tiles where the
//! occurrence runs at all, so it stays inside the array. Only occurrences some loop of the tile
//! reuses qualify (their subscripts miss one of the statement's iterators: syrk's `A[j][k]`
//! misses `i`), and a buffer must fit in [`MAX_GATHER_BYTES`].

use crate::ast::{kernel_user, Ast, Expr, KernelPart};
use crate::astgen::{convert_expr, rename_users, PointSchedule};
use crate::isl::{AstBuild, UnionMap};
use crate::tile_size::element_bytes;
use crate::Result;
use scop_ir::{ArrayId, Scop};

/// The largest buffer of one gathered operand, in bytes (it lives on the task's stack).
pub const MAX_GATHER_BYTES: u64 = 64 * 1024;

/// `general` with the operands of its statements gathered (see the module doc), and what was
/// done for `-v`; `None` when nothing qualifies. `tile_coords` are the names of the tile's
/// coordinates, the only names the boxes' bounds may use.
pub(crate) fn gather_operands(
    scop: &Scop,
    points: &PointSchedule<'_>,
    general: &Ast,
    tile_coords: &[String],
) -> Result<Option<(Ast, Vec<String>)>> {
    // Each statement's iterator that its innermost loops move (one for all its instances).
    let mut moved: Vec<(String, Option<usize>)> = Vec::new();
    collect(general, &mut Vec::new(), &mut moved);
    let ctx = points.context.ctx();
    let build = AstBuild::from_context(points.context.clone())?;
    let instances = points.schedule.clone().domain()?;
    // The same arrays as the printer's (`taskgen::emit_c`): private scalars have no rows.
    let packable = |id: ArrayId| scop_ir::lanes::never_written(scop, id);
    let names_ok = |e: &Expr| ids_within(e, tile_coords);
    let mut prologue = Vec::new();
    let mut renamed: Vec<(String, String)> = Vec::new();
    let mut done = Vec::new();
    let mut base = 0usize;
    for (name, q) in &moved {
        let Some(q) = *q else { continue };
        let Some(stmt) =
            crate::scop::stmt_of_name(name).and_then(|s| scop.statements.get(s.index()))
        else {
            continue;
        };
        let reads = scop_ir::lanes::strided_relations(scop, stmt, q, &packable);
        let mut packs = Vec::new();
        for (n, (relation, array)) in reads.iter().enumerate() {
            let read = UnionMap::read(ctx, relation)?
                .intersect_domain(instances.clone())?
                .range()?;
            let [elements] = &read.sets()?[..] else {
                packs.clear();
                break;
            };
            // The largest box of one tile: the largest distance between two elements it reads.
            let arr = scop.array(*array);
            let pairs = UnionMap::read(
                ctx,
                &format!(
                    "{{ {name}[a0, a1] -> {name}[b0, b1] }}",
                    name = arr.isl_name
                ),
            )?
            .intersect_domain(read.clone())?
            .intersect_range(read.clone())?
            .deltas()?;
            let [spread] = &pairs.sets()?[..] else {
                packs.clear();
                break;
            };
            let (Some((_, d0)), Some((_, d1))) = (spread.dim_range(0)?, spread.dim_range(1)?)
            else {
                packs.clear();
                break;
            };
            let (cols, rows) = (d0 + 1, d1 + 1);
            if (rows * cols) as u64 * element_bytes(&arr.elem_type) > MAX_GATHER_BYTES {
                packs.clear();
                break;
            }
            let bound = |pos: usize, max: bool| -> Result<Expr> {
                convert_expr(&build.expr_from_dim_bound(elements.clone(), pos, max)?)
            };
            let (lo0, hi0, lo1, hi1) = (
                bound(0, false)?,
                bound(0, true)?,
                bound(1, false)?,
                bound(1, true)?,
            );
            let runs = convert_expr(&build.expr_from_set(read.clone().params()?)?)?;
            if ![&lo0, &hi0, &lo1, &hi1, &runs].iter().all(|e| names_ok(e)) {
                packs.clear();
                break;
            }
            packs.push((n, rows, cols, [lo0, hi0, lo1, hi1], runs, arr.name.clone()));
        }
        if packs.is_empty() || packs.len() != reads.len() {
            continue;
        }
        for (n, rows, cols, [lo0, hi0, lo1, hi1], runs, array) in packs {
            let m = base + n;
            let user = |part: KernelPart, args: Vec<Expr>| Ast::User {
                name: kernel_user(name, part),
                args,
            };
            prologue.push(user(
                KernelPart::GatherDecl(q, n, base, rows as usize, cols as usize),
                vec![lo0.clone(), lo1.clone()],
            ));
            let (a, b) = (format!("tf_ga{m}"), format!("tf_gb{m}"));
            let fill = user(
                KernelPart::GatherFill(q, n, base),
                vec![Expr::Id(a.clone()), Expr::Id(b.clone())],
            );
            let inner = unit_for(&a, lo0, hi0, fill);
            prologue.push(Ast::If {
                cond: runs,
                then: Box::new(unit_for(&b, lo1, hi1, inner)),
                els: None,
            });
            let what = format!("{name} reads {array} from a copy in the other tiles");
            if !done.contains(&what) {
                done.push(what);
            }
        }
        renamed.push((
            name.clone(),
            kernel_user(name, KernelPart::Gathered(q, base)),
        ));
        base += reads.len();
    }
    if renamed.is_empty() {
        return Ok(None);
    }
    let mut code = general.clone();
    // The general code holds no kernels yet (they are added around it after).
    rename_users(&mut code, &|name| {
        renamed
            .iter()
            .find(|(from, _)| from == name)
            .map(|(_, to)| to.clone())
    });
    prologue.push(code);
    Ok(Some((Ast::Block(prologue), done)))
}

/// `for (iter = lo; iter <= hi; iter += 1) body`.
fn unit_for(iter: &str, lo: Expr, hi: Expr, body: Ast) -> Ast {
    Ast::For {
        iter: iter.to_string(),
        init: lo,
        cond: Expr::Op(crate::ast::OpKind::Le, vec![Expr::Id(iter.to_string()), hi]),
        inc: Expr::Int("1".into()),
        body: Box::new(body),
    }
}

/// Whether every name `e` mentions is one of `names`.
fn ids_within(e: &Expr, names: &[String]) -> bool {
    match e {
        Expr::Id(x) => names.contains(x),
        Expr::Int(_) => true,
        Expr::Op(_, args) => args.iter().all(|a| ids_within(a, names)),
    }
}

/// For each statement of `ast` (in order of first appearance), the one statement iterator that
/// its innermost enclosing loop moves at each of its instances; `None` where instances differ,
/// none or several move, one is outside any loop, or a name is not a plain statement.
fn collect(ast: &Ast, loops: &mut Vec<String>, out: &mut Vec<(String, Option<usize>)>) {
    match ast {
        Ast::Block(items) => items.iter().for_each(|i| collect(i, loops, out)),
        Ast::For { iter, body, .. } => {
            loops.push(iter.clone());
            collect(body, loops, out);
            loops.pop();
        }
        Ast::If { then, els, .. } => {
            collect(then, loops, out);
            if let Some(e) = els {
                collect(e, loops, out);
            }
        }
        Ast::User { name, args } => {
            let q = loops.last().and_then(|l| {
                let mut q = args.iter().enumerate().filter(|(_, a)| a.mentions(l));
                match (q.next(), q.next()) {
                    (Some((k, _)), None) => Some(k),
                    _ => None,
                }
            });
            let q = q.filter(|_| !name.contains('@'));
            match out.iter_mut().find(|(n, _)| n == name) {
                Some((_, seen)) => {
                    if *seen != q {
                        *seen = None;
                    }
                }
                None => out.push((name.clone(), q)),
            }
        }
        Ast::Kernel(_) => {}
    }
}
