//! The code of one tile on the CPU: full tiles apart from the others, and in them the loop that
//! accumulates into one element unrolled and jammed around the innermost (vector) loop.
//!
//! [`crate::nest_body_ast`] gives one piece of code for every tile of a nest: its loop bounds are
//! `min`/`max` expressions of the tile coordinates and the problem size, which the C compiler can
//! neither count nor unroll. Most tiles are full: for each statement with instances in the tile,
//! every point of the tile's box (the band's tile sizes) is one of them. For those, ISL generates
//! the body again knowing that the tile is full, which leaves loops of constant trip count
//! (`for (k = 32 * t2; k <= 32 * t2 + 31; k += 1)`); the body becomes `if (full) { that code }
//! else { the general code }`.
//!
//! Tiles partial only along the reduction (`partial_reductions`): the register kernels need
//! whole rows and vectors but not a constant reduction length, so the tiles that fill the box
//! along every member but the innermost one that accumulates (gemm's last `k` tile, where `k`
//! ends inside it) get a kernel of their own too, before the general code.
//!
//! Tiles that one statement fills (`alone_full`): cholesky's update `A[i][j] -= A[i][k] *
//! A[j][k]` fills the tiles whose block of `j` follows `k`'s, but the division of the block's
//! last column and the diagonal's update sit inside them (the schedule puts them at `1 + j` and
//! `1 + k`), so those tiles were full for no statement set and ran the general code: 8% of the
//! update's work at LARGE, and a third of its time. Where running the other statements'
//! instances first (or last) keeps every conflicting pair's order, they run so, and the update
//! runs its kernel over the whole box. Measured at LARGE (AMD EPYC Zen 4, medians of 11 in
//! rounds, one thread / two): cholesky 0.236 -> 0.170 s / 0.131 -> 0.095 s (its grid no longer
//! shifted onto `A`'s lines: shifted, these tiles are cut for every shift but 0), lu 0.286 ->
//! 0.256 / 0.153 -> 0.143, ludcmp 0.299 -> 0.266 / 0.159 -> 0.136; bicg and trisolv, whose
//! boundary tiles also qualify, level. The bounds of such a piece's loops may come as
//! `64 * t - 64 .. 64 * t` (ISL writes the start from a coordinate equal to `t - 1`), whose trip
//! count the kernels now read too (`kernel::span`).
//!
//! Register tiling ([`unroll_and_jam`]): in that code, when the loop just outside the innermost
//! point loop belongs to the band and along it some statement writes the same element again
//! (gemm's `k` around `j` in `C[i][j] += alpha * A[i][k] * B[k][j]`), the loop steps by [`JAM`]
//! and its body holds [`JAM`] copies of the innermost loop's statements, for `k`, `k + 1`, ...
//! (unroll-and-jam). The element then stays in a register for [`JAM`] updates instead of being
//! loaded and stored at each: measured on gemm at LARGE (tasks, 32³ tiles, gcc 12
//! `-O3 -march=native`), 0.30 s on one thread with the general code, 0.19 s with constant bounds,
//! 0.13 s with `k` jammed by 4 (2 threads: 0.16, 0.11, 0.074). Jamming `i` as well (more
//! accumulators) was no faster with gcc (2 by 4: 0.085 s; 4 by 4 and 2 by 8: slower, spills).
//!
//! Statements apart and one pass: see [`crate::apart`].
//!
//! ## Parts on threads
//!
//! The general code and each piece of full tiles are independent, and ISL's code generation for
//! them is most of a tile's compile time, so each is built on a thread of its own
//! (`on_threads_from_text`, [`crate::threads`]). ISL's objects belong to the thread that made
//! them: the parts are rebuilt from the text of the point schedule, the pieces and the jammed
//! schedule, always, so the code does not depend on which thread ran what. (Read back from
//! text, a piece's union of tiles lost disjuncts that repeated others: floyd-warshall's and
//! jacobi-2d's conditions of full tiles are shorter, the same sets; no other of the 270 outputs
//! of the 30 kernels at MINI, LARGE and EXTRALARGE changed.) adi at LARGE, one nest whose general
//! code and two pieces (its fused sweeps jammed by 16) took 0.61 s of its 1.4 s compile: 1.51 ->
//! 1.28 s (`make compile-times`, best of 3, side by side on a 2-core Zen 3). Nests of SCoPs with
//! several already run on two threads (`taskgen`), where these threads add little.
//!
//! Cut loops ([`split_aliased`]): a loop that loads an element it does not move along and stores
//! it at one iteration (floyd-warshall's `j` loop loads `path[i][k]` and stores `path[i][j]`) is
//! cut at that iteration, so that on the pieces around it the C compiler's run-time alias check
//! between the load and the stores passes and the loop runs vectorized: floyd-warshall at LARGE,
//! 19.1 s -> 4.1 s (gcc -O3 of the original: 15.3 s, whose same check always fails).
//!
//! Innermost loops ([`crate::sink`]): before all that, a band member may move below the loops
//! under the band (gramschmidt's `j`), or the innermost loop be distributed over its statements
//! (time-skewed stencils), where the C compiler then gets a contiguous or vectorizable innermost
//! loop; such a tile gets no jam and no cut loops (both assume the band's own order).
//!
//! Legality: a tiled band is permutable, so every dependence between two instances of one tile
//! has a non-negative distance on every member of the band; unroll-and-jam of a band member
//! around an inner one only runs an instance `(k + u, j)` before `(k, j')` for `j' > j`, which no
//! such dependence orders the other way. Each element still sees its updates in the original
//! order (`k`, `k + 1`, ... for one `j`), so the results are bitwise the same. Nests that access a
//! scalar kept in one variable per task (`private`) are left alone: the band is permutable for
//! the scalar expanded, but one variable serves only the order the privatization analysis
//! checked (jamming `k` would interleave the values of `k` and `k + 1` in it).

use crate::apart::{
    accumulators, part_by_part, register_kernel, statement_by_statement, BLOCK_ROWS, MAX_PIECES,
};
use crate::ast::{flatten, shift, Ast, Expr, OpKind, SCALAR_LOOP_USER};
use crate::astgen::{convert_expr, guarded_inner_loop, rename_users, PointSchedule, PointsText};
use crate::chains::interleave_chains;
use crate::column::column_buffers;
use crate::gather::gather_operands;
use crate::isl::{AstBuild, Ctx, Set, Side, UnionMap, UnionSet};
use crate::kernel::{accumulator_kernel_over, vector_kernel};
use crate::maps::{names, pad_to_common_depth, params_prefix, projection, tuple};
use crate::point_order::{accumulates, aliased_invariant_reads};
use crate::rows::mark_row_lanes;
use crate::siblings::fuse_siblings;
use crate::sink::{distribute_innermost, sink_band_member};
use crate::{NestId, Result, TiledSchedule};
use scop_ir::{AccessKind, ArrayId, Scop};

/// How many consecutive iterations of the accumulating loop one iteration of the jammed loop
/// runs.
pub const JAM: i64 = 4;

/// What [`tile_body_ast`] did to a nest's tile code, for `-v`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TileCode {
    /// Full tiles have code of their own.
    pub full_tiles: bool,
    /// The iterator of the loop unrolled and jammed in full tiles, and by how much.
    pub jammed: Option<(String, i64)>,
    /// The innermost loop is cut where an invariant load reads a stored element.
    pub split: bool,
    /// The iterator of the band member moved below the loops under the band ([`crate::sink`]).
    pub sunk: Option<String>,
    /// The statements of the innermost loop, in the order of the loops it was distributed into
    /// ([`crate::sink`]); empty when it was not.
    pub distributed: Vec<String>,
    /// The groups of statements whose loops under the band were fused
    /// ([`crate::siblings`]); empty when none were.
    pub fused: Vec<Vec<String>>,
    /// What register-tiled kernels run in full tiles ([`crate::kernel`]): `S1 in 4x4 vectors`,
    /// `S2 in 8 accumulators`.
    pub kernels: Vec<String>,
    /// The iterators of the reduction loops kept scalar (`mark_reduction_loops`).
    pub scalar_loops: Vec<String>,
    /// The iterators of the loops whose jammed rows run as the lanes of vectors
    /// ([`crate::rows`]).
    pub row_lanes: Vec<String>,
    /// The iterators of the loops whose jammed statements run as the lanes of vectors step by
    /// step ([`crate::rows`], "Steps as lanes").
    pub step_lanes: Vec<String>,
    /// The iterators along which tiles partial there (and full along the others) also run a
    /// register kernel (`partial_reductions`).
    pub relaxed: Vec<String>,
    /// The statements that run a register kernel on their own in tiles that they alone fill,
    /// the others' instances there run before or after them (`alone_full`).
    pub alone: Vec<String>,
    /// Full tiles run their statements apart a block of rows at a time, the sums first
    /// (`crate::apart`'s `rows_in_blocks`).
    pub row_blocks: bool,
}

/// The CPU code of one tile of nest `nest` (arguments as for [`crate::nest_body_ast`]): full tiles
/// apart, with the accumulating loop unrolled and jammed (see the module doc).
pub fn tile_body_ast(
    scop: &Scop,
    sched: &TiledSchedule,
    nest: NestId,
    tile_coords: &[String],
    iter_prefix: &str,
    private: &[ArrayId],
) -> Result<(Ast, TileCode)> {
    let mut points = PointSchedule::of(scop, sched, nest, tile_coords, iter_prefix)?;
    points.cut.extend(guarded_inner_loop(&points)?);
    let p = points.n_tile;
    let the_nest = &sched.nests[nest.index()];
    if p == 0 || points.separate.is_none() {
        let mut general = points.build(None, points.separate.as_slice())?;
        let scalar_loops = mark_reduction_loops(scop, &mut general)?;
        let lanes = mark_row_lanes(scop, &mut general, private)?;
        return Ok((
            general,
            TileCode {
                scalar_loops,
                row_lanes: lanes.rows,
                step_lanes: lanes.steps,
                ..TileCode::default()
            },
        ));
    }
    let sunk = match sink_band_member(scop, &points, private)? {
        Some((sunk, _member)) => {
            points = sunk;
            Some(points.iterators[points.iterators.len() - 1].clone())
        }
        None => None,
    };
    let mut distributed = Vec::new();
    if sunk.is_none() {
        if let Some((dist, order)) = distribute_innermost(scop, &points, private)? {
            points = dist;
            distributed = order;
        }
    }
    let mut fused = Vec::new();
    if sunk.is_none() && distributed.is_empty() {
        if let Some((siblings, groups)) = fuse_siblings(scop, &points, private)? {
            points = siblings;
            fused = groups;
        }
    }
    // The cut positions come from the nest's own order, which these change.
    let split = sunk.is_none()
        && distributed.is_empty()
        && fused.is_empty()
        && split_aliased(scop, &the_nest.schedule, p, &mut points)?;
    let (mut ast, mut code) = tile_code(
        scop,
        &points,
        &the_nest.schedule,
        &the_nest.tile_sizes,
        tile_coords,
        private,
    )?;
    if split {
        rename_users(&mut ast, &|name| {
            name.strip_suffix(ALIASED).map(str::to_string)
        });
        code.split = true;
    }
    code.sunk = sunk;
    code.distributed = distributed;
    code.fused = fused;
    code.scalar_loops = mark_reduction_loops(scop, &mut ast)?;
    let lanes = mark_row_lanes(scop, &mut ast, private)?;
    code.row_lanes = lanes.rows;
    code.step_lanes = lanes.steps;
    Ok((ast, code))
}

/// Puts [`SCALAR_LOOP_USER`] first in the body of every innermost loop whose statements all
/// accumulate, in floating point, into an element the loop does not move, when the C compiler
/// would otherwise run it slower: GCC 12 vectorizes such a loop, without `-ffast-math`, as
/// in-order reductions (a shuffle and a dependent scalar addition per element), and the empty
/// `asm` of `TF_SCALAR_LOOP` keeps it scalar. Kept scalar when a load of the loop walks memory
/// other than forwards and contiguously (its vector loads need permutations or gathers:
/// durbin's `sum += r[k - i - 1] * y[i]`, ludcmp's `w -= A[i][k] * A[k][j]`), or when the loop
/// holds several chains (rows jammed) of one product each (bicg's, mvt's and gemver's
/// matrix-vector rows). Statements with more products per addition (syr2k's) and single
/// contiguous chains (cholesky's) ran faster vectorized. Measured at 2 threads, medians of 11
/// runs: durbin (EXTRALARGE) 11.5 ms -> 7.8 (gcc's original, vectorized so: 11.0), ludcmp
/// (LARGE) 2.03 s -> 1.70, bicg 3.38 ms -> 2.77, mvt 11.1 -> 10.6, gemver 18.2 -> 17.5; marking
/// every such loop made syr2k 22% and cholesky 5% slower. Returns the iterators of the loops
/// marked.
fn mark_reduction_loops(scop: &Scop, ast: &mut Ast) -> Result<Vec<String>> {
    let ctx = Ctx::shared()?;
    let mut marked = Vec::new();
    mark_in(ctx, scop, ast, &mut marked)?;
    Ok(marked)
}

fn mark_in(ctx: &Ctx, scop: &Scop, ast: &mut Ast, marked: &mut Vec<String>) -> Result<()> {
    match ast {
        Ast::Block(items) => {
            for item in items {
                mark_in(ctx, scop, item, marked)?;
            }
        }
        Ast::If { then, els, .. } => {
            mark_in(ctx, scop, then, marked)?;
            if let Some(els) = els {
                mark_in(ctx, scop, els, marked)?;
            }
        }
        Ast::For { iter, body, .. } => {
            // The loop's statements, through blocks in blocks (fused sibling loops' bodies).
            fn users_of<'a>(ast: &'a Ast, out: &mut Vec<&'a Ast>) -> bool {
                match ast {
                    Ast::User { .. } => {
                        out.push(ast);
                        true
                    }
                    Ast::Block(items) => items.iter().all(|a| users_of(a, out)),
                    _ => false,
                }
            }
            let mut users = Vec::new();
            if !users_of(body, &mut users) {
                return mark_in(ctx, scop, body, marked);
            }
            let mut shapes = Vec::with_capacity(users.len());
            for user in &users {
                if let Ast::User { name, args } = user {
                    match reduction_along(ctx, scop, name, args, iter)? {
                        Some(shape) => shapes.push(shape),
                        None => return Ok(()),
                    }
                }
            }
            let scattered = shapes.iter().any(|s| s.scattered);
            let rows = shapes.len() >= 2 && shapes.iter().all(|s| s.products <= 1);
            if shapes.is_empty() || !(scattered || rows) {
                return Ok(());
            }
            let first = Ast::User {
                name: SCALAR_LOOP_USER.to_string(),
                args: Vec::new(),
            };
            let old = std::mem::replace(body.as_mut(), Ast::Block(Vec::new()));
            **body = match old {
                Ast::Block(mut items) => {
                    items.insert(0, first);
                    Ast::Block(items)
                }
                other => Ast::Block(vec![first, other]),
            };
            marked.push(iter.clone());
        }
        Ast::User { .. } | Ast::Kernel(_) => {}
    }
    Ok(())
}

/// A reduction statement's instance in a loop ([`reduction_along`]).
struct ReductionShape {
    /// A read walks memory other than forwards and contiguously along the loop.
    scattered: bool,
    /// Multiplications at the top level of the statement's text.
    products: usize,
}

/// The shape of the instance `name(args)` of a statement in the loop of iterator `iter`, when it
/// accumulates into a `float` or `double` element that the loop does not move (it reads and
/// writes that element through one access relation) and `args` move along the loop by `iter`
/// or `-iter` plus terms without it; `None` otherwise.
fn reduction_along(
    ctx: &Ctx,
    scop: &Scop,
    name: &str,
    args: &[Expr],
    iter: &str,
) -> Result<Option<ReductionShape>> {
    let Some(stmt) = crate::scop::stmt_of_name(name).and_then(|s| scop.statements.get(s.index()))
    else {
        return Ok(None);
    };
    let writes: Vec<_> = stmt
        .accesses
        .iter()
        .filter(|a| a.kind == AccessKind::Write)
        .collect();
    let [write] = writes.as_slice() else {
        return Ok(None);
    };
    let elem = &scop.array(write.array).elem_type;
    let read_back = stmt
        .accesses
        .iter()
        .any(|a| a.kind == AccessKind::Read && a.relation == write.relation);
    if !matches!(elem.as_str(), "double" | "float") || !read_back {
        return Ok(None);
    }
    // One step of the loop moves each statement iterator by its coefficient of `iter`.
    let mut coefficients = Vec::with_capacity(stmt.iterators.len());
    for x in 0..stmt.iterators.len() {
        match args.get(x).map(|e| coefficient(e, iter)) {
            Some(Some(c)) if (-1..=1).contains(&c) => coefficients.push(c),
            _ => return Ok(None),
        }
    }
    if coefficients.iter().all(|&c| c == 0) {
        return Ok(None);
    }
    let x: Vec<String> = (0..coefficients.len()).map(|k| format!("x{k}")).collect();
    let y: Vec<String> = x
        .iter()
        .zip(&coefficients)
        .map(|(v, c)| format!("{v} + {c}"))
        .collect();
    let step = UnionMap::read(
        ctx,
        &format!("{{ {name}[{}] -> {name}[{}] }}", x.join(", "), y.join(", ")),
    )?;
    // The distance between the elements one access reaches at two consecutive iterations: all
    // zero (invariant), or zero but one in the last subscript (forwards, contiguous).
    let distance = |relation: &str| -> Result<(bool, bool)> {
        let access = UnionMap::read(ctx, relation)?;
        let deltas = step
            .clone()
            .apply_domain(access.clone())?
            .apply_range(access)?
            .deltas()?;
        let (mut invariant, mut forward) = (true, true);
        for set in deltas.sets()? {
            let n = set.n_dims()?;
            for d in 0..n {
                let range = set.dim_range(d)?;
                invariant &= range == Some((0, 0));
                forward &= range == Some(if d + 1 == n { (1, 1) } else { (0, 0) });
            }
        }
        Ok((invariant, forward))
    };
    if !distance(&write.relation)?.0 {
        return Ok(None);
    }
    let mut scattered = false;
    for read in stmt.accesses.iter().filter(|a| a.kind == AccessKind::Read) {
        let (invariant, forward) = distance(&read.relation)?;
        scattered |= !invariant && !forward;
    }
    Ok(Some(ReductionShape {
        scattered,
        products: top_level_products(&stmt.body),
    }))
}

/// The coefficient of `iter` in the affine expression `e`, or `None` when `e` is not affine in it.
fn coefficient(e: &Expr, iter: &str) -> Option<i64> {
    match e {
        Expr::Int(_) => Some(0),
        Expr::Id(name) => Some(i64::from(name == iter)),
        Expr::Op(OpKind::Add, a) if a.len() == 2 => {
            Some(coefficient(&a[0], iter)? + coefficient(&a[1], iter)?)
        }
        Expr::Op(OpKind::Sub, a) if a.len() == 2 => {
            Some(coefficient(&a[0], iter)? - coefficient(&a[1], iter)?)
        }
        Expr::Op(OpKind::Minus, a) if a.len() == 1 => Some(-coefficient(&a[0], iter)?),
        Expr::Op(OpKind::Mul, a) if a.len() == 2 => match (&a[0], &a[1]) {
            (Expr::Int(k), other) | (other, Expr::Int(k)) => {
                Some(k.parse::<i64>().ok()? * coefficient(other, iter)?)
            }
            _ => (!e.mentions(iter)).then_some(0),
        },
        other => (!other.mentions(iter)).then_some(0),
    }
}

/// The `*` operators of a statement's text outside brackets (multiplications, not subscripts).
fn top_level_products(body: &[scop_ir::BodyPiece]) -> usize {
    let mut depth = 0usize;
    let mut products = 0;
    for piece in body {
        if let scop_ir::BodyPiece::Text(text) = piece {
            for c in text.chars() {
                match c {
                    '[' => depth += 1,
                    ']' => depth = depth.saturating_sub(1),
                    '*' if depth == 0 => products += 1,
                    _ => {}
                }
            }
        }
    }
    products
}

/// The suffix of the statement copies [`split_aliased`] makes.
const ALIASED: &str = "_aliased";

/// Splits off, as a statement of its own (`S3_aliased`), the instances of each statement of
/// `points` where a load that the innermost point loop does not move reads the element the
/// statement writes (`crate::point_order::aliased_invariant_reads`). ISL then cuts the innermost
/// loop there (it is generated "separate"), and on the pieces around the cut the C compiler's
/// run-time alias check between that load and the loop's stores passes, so they run vectorized:
/// floyd-warshall's `j` loop, which reads `path[i][k]` and writes `path[i][j]`, is cut at
/// `j = k`. The order of the instances is unchanged. Returns whether some statement was split.
/// The cut loops are generated "separate" (`PointSchedule::cut`).
fn split_aliased(
    scop: &Scop,
    nest_schedule: &str,
    p: usize,
    points: &mut PointSchedule<'_>,
) -> Result<bool> {
    let ctx = Ctx::shared()?;
    let flat = UnionMap::read(ctx, nest_schedule)?;
    let (flat, depth) = pad_to_common_depth(flat)?;
    let aliased = aliased_invariant_reads(ctx, scop, &flat, depth, p)?;
    if aliased.is_empty() {
        return Ok(false);
    }
    let mut schedule = points.schedule.clone();
    for (stmt, set, dim) in aliased {
        // The loop's dimension once the tile dimensions are projected out.
        points.cut.push(dim - p);
        let Some(statement) = scop.statements.get(stmt.index()) else {
            continue;
        };
        let instances = UnionSet::read(ctx, &set)?;
        let x: Vec<String> = (0..statement.iterators.len())
            .map(|k| format!("x{k}"))
            .collect();
        let rename = UnionMap::read(
            ctx,
            &format!(
                "{{ {}{ALIASED}[{x}] -> {}[{x}] }}",
                stmt,
                stmt,
                x = x.join(", ")
            ),
        )?
        .intersect_range(instances.clone())?;
        let copy = rename.apply_range(schedule.clone().intersect_domain(instances.clone())?)?;
        let rest = schedule.clone().domain()?.subtract(instances)?;
        schedule = schedule.intersect_domain(rest)?.union(copy)?;
    }
    points.schedule = schedule;
    Ok(true)
}

/// The general code (the tiles that are not full) gets the rows jammed around reduction chains
/// only in nests of at most this many statements: its copies' guards are simplified one by one,
/// which costs compile time with the statements. adi's one nest of 14 statements took 0.36 s
/// more (its tile code 0.63 -> 0.99 s of its 1.5 s) for 2-4% of run time; deriche's nests (7 and
/// 9 statements: 0.31 -> 0.37 s, 3-7% faster) and seidel-2d's (1 statement: 0.12 -> 0.18 s,
/// 19% faster) keep it.
pub const GENERAL_JAM_STATEMENTS: usize = 9;

/// [`tile_body_ast`] once the schedule is final: full tiles apart, the jam.
fn tile_code(
    scop: &Scop,
    points: &PointSchedule<'_>,
    nest_schedule: &str,
    tile_sizes: &[i64],
    tile_coords: &[String],
    private: &[ArrayId],
) -> Result<(Ast, TileCode)> {
    let p = points.n_tile;
    let in_order = points.band_in_order();
    // Which band members some statement accumulates along (the jam, the kernels' reduction).
    let accumulating = match p >= 2 && in_order {
        true => accumulating_members(scop, nest_schedule, p)?,
        false => vec![false; p],
    };
    let pieces = full_tiles(points, tile_sizes, tile_coords, &[])?;
    let parts = Parts {
        accumulating: &accumulating,
        tile_sizes,
        tile_coords,
        private,
    };
    if pieces.is_empty() {
        let mut general = general_code(scop, points, &parts, &pieces, None)?;
        general.kernels.append(&mut general.gathered);
        let code = TileCode {
            relaxed: general.relaxed,
            alone: general.alone,
            kernels: general.kernels,
            ..TileCode::default()
        };
        return Ok((general.code, code));
    }
    // The member to jam: the one just outside the innermost if it accumulates, else the
    // innermost other one that does, moved there (any order of a tile's point loops is legal).
    let mut jam = None;
    if p >= 2 && in_order && !keeps_order(scop, &statements_of(points)?, private) {
        if let Some(m) = (0..p - 1).rev().find(|&m| accumulating[m]) {
            let mut order: Vec<usize> = (0..p - 1).filter(|&k| k != m).collect();
            order.extend([m, p - 1]);
            let iters = &points.iterators;
            jam = Some((order, iters[p - 2].clone(), iters[p - 1].clone()));
        }
    }
    // The order a vector kernel may need: the accumulating member just outside the innermost
    // one (the jam's order, or the innermost two swapped when the innermost accumulates).
    let mut lanes_order = jam.as_ref().map(|(order, _, _)| order.clone());
    if lanes_order.is_none() && accumulating.last() == Some(&true) {
        lanes_order = reduction_outside_lanes(p, p - 1);
    }
    // Every point loop of the band separate, so that the loop around the innermost one has a
    // single loop as its body wherever the statements allow (gemm's `k = 0`, where `C` is also
    // scaled, becomes a piece of its own).
    // Otherwise, a band loop jammed around a reduction loop (independent chains).
    let mut chains = None;
    if jam.is_none() && in_order {
        chains = interleave_chains(scop, points, tile_sizes, private)?;
    }
    let plan = PiecePlan {
        jam: jam.as_ref(),
        chains: chains.as_ref(),
        lanes_order: lanes_order.as_deref(),
    };
    let (general, built) = on_threads_from_text(scop, points, &parts, &pieces, &plan)?;
    let mut code = TileCode {
        full_tiles: true,
        relaxed: general.relaxed,
        alone: general.alone,
        kernels: general.kernels,
        ..TileCode::default()
    };
    for what in general.gathered {
        if !code.kernels.contains(&what) {
            code.kernels.push(what);
        }
    }
    let mut out = general.code;
    for piece in built.into_iter().rev() {
        code.row_blocks |= piece.row_blocks;
        if piece.jammed_as.is_some() {
            code.jammed = piece.jammed_as;
        }
        for what in piece.what {
            if !code.kernels.contains(&what) {
                code.kernels.push(what);
            }
        }
        out = Ast::If {
            cond: piece.cond,
            then: Box::new(piece.code),
            els: Some(Box::new(out)),
        };
    }
    Ok((out, code))
}

/// What [`tile_code`]'s parts share: the members some statement accumulates along, the tile
/// sizes, the tile coordinates' names and the scalars kept in one variable per task.
struct Parts<'a> {
    accumulating: &'a [bool],
    tile_sizes: &'a [i64],
    tile_coords: &'a [String],
    private: &'a [ArrayId],
}

/// The code of the tiles that are not full ([`general_code`]): the code, the members along
/// which partial tiles run kernels, those kernels (`-v`), the statements that run a kernel alone,
/// and the operands gathered.
struct GeneralCode {
    code: Ast,
    relaxed: Vec<String>,
    kernels: Vec<String>,
    alone: Vec<String>,
    gathered: Vec<String>,
}

/// The code of the tiles that no piece of `pieces` holds: the general code, with its operands
/// gathered, kernels in the tiles partial along some members (`partial_reductions`), and, when
/// `chains` is given (the text of the jammed schedule, read only where it is used) and the
/// general code holds no kernels of its own, the jammed rows instead, each strip's copies
/// guarded where the tile cuts it (`crate::chains`), unless the nest has more than
/// `GENERAL_JAM_STATEMENTS` statements.
fn general_code<'c>(
    scop: &Scop,
    points: &PointSchedule<'c>,
    parts: &Parts<'_>,
    pieces: &[Set<'c>],
    chains: Option<&(PointsText, usize, i64)>,
) -> Result<GeneralCode> {
    let Relaxed {
        branches,
        relaxed,
        kernels,
        alone,
    } = partial_reductions(
        scop,
        points,
        parts.accumulating,
        parts.tile_sizes,
        parts.tile_coords,
        parts.private,
        pieces,
    )?;
    // The jammed schedule where the chains ask for it and nothing was relaxed, the plain one
    // with the relaxed pieces otherwise: only the one used is read from its text and built
    // (deriche's first two nests built a plain code that their jammed rows replaced, 55-120 ms
    // each; adi's general code, of too many statements to jam, read its 3.5 kB jammed schedule
    // with `mod` constraints, 48 ms).
    let few = statements_of(points)?.len() <= GENERAL_JAM_STATEMENTS;
    let jammed = match chains {
        Some((jammed, _, _)) if few && relaxed.is_empty() && alone.is_empty() => {
            Some(jammed.read()?)
        }
        _ => None,
    };
    let built = jammed.as_ref().unwrap_or(points);
    let general = built.build(None, built.separate.as_slice())?;
    // Operands read across the innermost loop, gathered in the tiles that are not full.
    let (general, gathered) = match gather_operands(scop, built, &general, parts.tile_coords)? {
        Some((code, done)) => (code, done),
        None => (general, Vec::new()),
    };
    let code = match jammed {
        Some(_) => general,
        None => graft(points, general, branches)?,
    };
    Ok(GeneralCode {
        code,
        relaxed,
        kernels,
        alone,
        gathered,
    })
}

/// How [`tile_code`] builds each piece of full tiles: the member to jam (the point order, the
/// outer and inner iterators), the band loop jammed around the reductions ([`crate::chains`]),
/// and the order a vector kernel may need.
struct PiecePlan<'p, 'c> {
    jam: Option<&'p (Vec<usize>, String, String)>,
    chains: Option<&'p (PointSchedule<'c>, usize, i64)>,
    lanes_order: Option<&'p [usize]>,
}

/// The code of one piece of full tiles: its condition, its code, what kernels it runs (`-v`),
/// the loop jammed and by how much, and whether its statements run apart in blocks of rows.
struct PieceCode {
    cond: Expr,
    code: Ast,
    what: Vec<String>,
    jammed_as: Option<(String, i64)>,
    row_blocks: bool,
}

/// One of [`tile_code`]'s independent parts, built on a thread of its own.
enum Part {
    General(GeneralCode),
    Piece(PieceCode),
}

/// The general code ([`general_code`]) and each piece's ([`piece_code`]), each built on a thread
/// of its own ([`crate::threads`]) from the text of `points`, of the plan's jammed schedule and of
/// the pieces, all of them so, so that the code is the same whichever threads ran. The parts are
/// independent, and ISL's code generation for them is most of a tile's compile time: adi's
/// general code and two pieces (its fused sweeps, jammed by 16) took 0.61 s of its 1.4 s compile
/// at LARGE on one thread.
fn on_threads_from_text(
    scop: &Scop,
    points: &PointSchedule<'_>,
    parts: &Parts<'_>,
    pieces: &[Set<'_>],
    plan: &PiecePlan<'_, '_>,
) -> Result<(GeneralCode, Vec<PieceCode>)> {
    let points = points.to_text()?;
    let chains = match plan.chains {
        Some((jammed, m, factor)) => Some((jammed.to_text()?, *m, *factor)),
        None => None,
    };
    let jam = plan.jam.cloned();
    let lanes_order = plan.lanes_order.map(<[usize]>::to_vec);
    let texts = pieces
        .iter()
        .map(|piece| piece.to_str())
        .collect::<Result<Vec<String>>>()?;
    // The general code first: it is the longest where the pieces are few.
    let jobs: Vec<Option<usize>> = std::iter::once(None)
        .chain((0..texts.len()).map(Some))
        .collect();
    let built = crate::threads::on_threads(&jobs, |job| -> Result<Part> {
        let ctx = Ctx::shared()?;
        let points = points.read()?;
        match job {
            None => {
                let pieces = texts
                    .iter()
                    .map(|text| Set::read(ctx, text))
                    .collect::<Result<Vec<_>>>()?;
                let general = general_code(scop, &points, parts, &pieces, chains.as_ref())?;
                Ok(Part::General(general))
            }
            Some(k) => {
                let chains = match &chains {
                    Some((jammed, m, factor)) => Some((jammed.read()?, *m, *factor)),
                    None => None,
                };
                let plan = PiecePlan {
                    jam: jam.as_ref(),
                    chains: chains.as_ref(),
                    lanes_order: lanes_order.as_deref(),
                };
                let piece = Set::read(ctx, &texts[*k])?;
                let code = piece_code(scop, &points, piece, &plan, parts.private)?;
                Ok(Part::Piece(code))
            }
        }
    });
    let mut general = None;
    let mut codes = Vec::with_capacity(texts.len());
    for part in built {
        match part? {
            Part::General(g) => general = Some(g),
            Part::Piece(p) => codes.push(p),
        }
    }
    let general = general
        .ok_or_else(|| crate::Error::Isl("the general code of a tile was not built".into()))?;
    Ok((general, codes))
}

/// The code of the full tiles `piece` (a set of tile coordinates): the jammed code, or a register
/// kernel where one qualifies (see [`tile_code`]).
fn piece_code(
    scop: &Scop,
    points: &PointSchedule<'_>,
    piece: Set<'_>,
    plan: &PiecePlan<'_, '_>,
    private: &[ArrayId],
) -> Result<PieceCode> {
    let band = points.band.clone();
    let (jam, chains, lanes_order) = (plan.jam, plan.chains, plan.lanes_order);
    let mut row_blocks = false;
    let cond = convert_expr(
        &AstBuild::from_context(points.context.clone())?.expr_from_set(piece.clone())?,
    )?;
    let mut piece_code = None;
    let mut jammed_as = None;
    if let Some((order, outer, inner)) = jam {
        let mut jammed = points
            .with_point_order(order)?
            .build(Some(piece.clone()), &band)?;
        if unroll_and_jam(&mut jammed, outer, inner, JAM) {
            jammed_as = Some((outer.clone(), JAM));
            piece_code = Some(jammed);
        }
    }
    if let (None, Some((jammed, m, factor))) = (&piece_code, chains) {
        piece_code = Some(jammed.build(Some(piece.clone()), &band)?);
        jammed_as = Some((points.iterators[*m].clone(), *factor));
    }
    let plain = points.build(Some(piece.clone()), &band)?;
    let reordered = piece_code.is_some();
    let piece_code = piece_code.unwrap_or_else(|| plain.clone());
    let mut kernel = vector_kernel(scop, points, &plain, &piece, private, &piece_code, false)?;
    // With the reduction just outside the innermost loop, where the tile's own order keeps
    // it innermost (syr2k's `k`, contiguous in all four products, until the products across
    // the lanes are packed) or elsewhere.
    if let (None, Some(order)) = (&kernel, lanes_order) {
        let reordered = points.with_point_order(order)?;
        let plain = reordered.build(Some(piece.clone()), &band)?;
        kernel = vector_kernel(
            scop,
            &reordered,
            &plain,
            &piece,
            private,
            &piece_code,
            false,
        )?;
    }
    if kernel.is_none() && !reordered {
        kernel = accumulators(scop, points, &plain, &piece, private)?;
    }
    let mut what = kernel.as_ref().map(|k| vec![kernel_summary(k)]);
    // Several statements and no kernel for them together: one after the other, each with
    // its own kernel where one applies (see `crate::apart`).
    if kernel.is_none() {
        if let Some(parts) =
            statement_by_statement(scop, points, &plain, &piece, private, lanes_order, false)?
        {
            what = Some(kernel_summaries(&parts));
            row_blocks |=
                matches!(&parts, Ast::For { iter, .. } if !points.iterators.contains(iter));
            kernel = Some(parts);
            jammed_as = None;
        }
    }
    if kernel.is_none() && !reordered {
        if let Some((columns, done)) = column_buffers(scop, points, &plain, &piece, private)? {
            kernel = Some(columns);
            what = Some(done);
        }
    }
    let piece_code = kernel.unwrap_or(piece_code);
    Ok(PieceCode {
        cond,
        code: piece_code,
        what: what.unwrap_or_default(),
        jammed_as,
        row_blocks,
    })
}

/// What a kernel found by [`find_kernel`] in `ast` runs, for `-v`: `S1 in 8x2 vectors of 64
/// bytes or 4x2 of 32` (rows by vectors per vector size, the widest first; `with scaled rows`
/// where it computes the product before the lanes once per row and step).
fn kernel_summary(ast: &Ast) -> String {
    kernel_summaries(ast).into_iter().next().unwrap_or_default()
}

/// What each kernel in `ast` runs (see [`kernel_summary`]).
fn kernel_summaries(ast: &Ast) -> Vec<String> {
    let mut out = Vec::new();
    ast.walk(&mut |node| {
        if let Ast::Kernel(k) = node {
            out.push(match &k.vector {
                Some(v) => {
                    let shapes: Vec<String> = v
                        .widths
                        .iter()
                        .rev()
                        .enumerate()
                        .map(|(n, w)| {
                            let unit = if n == 0 { " vectors" } else { "" };
                            let bytes = if n == 0 { " bytes" } else { "" };
                            format!("{}x{}{unit} of {}{bytes}", w.rows, w.vectors, w.bytes)
                        })
                        .collect();
                    let scaled = if v.scaled { " with scaled rows" } else { "" };
                    format!("{} in {}{scaled}", k.stmt, shapes.join(" or "))
                }
                None => {
                    let lanes = if k.row_lanes.is_some() {
                        " as vector lanes"
                    } else {
                        ""
                    };
                    let with = match &k.fused {
                        Some(f) => format!(" with {} in the same loop", f.stmt),
                        None => String::new(),
                    };
                    // Rows with a tail (`crate::kernel`'s "Accumulators with a tail").
                    let mut after: Vec<String> = Vec::new();
                    k.tail.walk(&mut |n| {
                        if let Ast::User { name, .. } = n {
                            if !after.contains(name) {
                                after.push(name.clone());
                            }
                        }
                    });
                    let tail = match after.is_empty() {
                        true => String::new(),
                        false => format!(" then each row's {}", after.join(", ")),
                    };
                    let left = if k.ragged {
                        " and single rows left"
                    } else {
                        ""
                    };
                    format!(
                        "{} in {} accumulators{left}{lanes}{with}{tail}",
                        k.stmt, k.rows
                    )
                }
            });
        }
    });
    out
}

/// For each member of the nest's `p`-member band (its flat schedule `nest_schedule`), whether
/// some statement writes one element again along it ([`accumulates`]).
fn accumulating_members(scop: &Scop, nest_schedule: &str, p: usize) -> Result<Vec<bool>> {
    let ctx = Ctx::shared()?;
    let (flat, depth) = pad_to_common_depth(UnionMap::read(ctx, nest_schedule)?)?;
    (0..p)
        .map(|m| accumulates(ctx, scop, &flat, depth, p, m))
        .collect()
}

/// The point order that puts band member `r` (which accumulates) just outside the innermost
/// member, where a vector kernel wants the reduction (the innermost two swapped when `r` is the
/// innermost); `None` when it already is there.
fn reduction_outside_lanes(p: usize, r: usize) -> Option<Vec<usize>> {
    if p < 2 || r + 2 == p {
        return None;
    }
    let mut order: Vec<usize> = (0..p - 1).filter(|&m| m != r).collect();
    match r + 1 == p {
        true => {
            order.pop();
            order.extend([p - 1, p - 2]);
        }
        false => order.extend([r, p - 1]),
    }
    Some(order)
}

/// Tiles that are partial along one member: `general` (the code of the tiles that are not
/// full, `full` being the full ones) with the tiles that fill the box along every member but
/// one (gemm's last `k` tile, where `k` ends inside the tile; its last `i` tile, 40 rows of 64;
/// its last `j` tile, 12 lanes of 64; the first `k` tile under `smart`, where the scaling of
/// `C` sits before the products) given code of their own where a register kernel takes it
/// ([`vector_kernel`] and [`accumulator_kernel`] need a constant row count, which blocks of a
/// power of two rows must divide, not a constant reduction length; tiles cut along the lanes get vector kernels whose lanes end
/// inside a block, or none); elsewhere they keep the general code. Each member relaxed (one at
/// a time; only in nests where some member accumulates) gives its pieces, apart from those
/// before, then the tiles that one statement fills ([`alone_full`]). The corners (pairs of
/// members relaxed, then all three) follow, in three-member bands of several statements whose
/// points fill boxes ([`rectangular`]): there the general code runs the statements
/// interleaved, and gemm's first `k` tiles, which scale `C` by `beta` before the products, cut
/// along `i` or `j`, ran 50-90 us against 12-22 us with the kernel (LARGE, medians of 11 runs
/// in rounds: gemm 1.11x on one thread and on two; compile time 0.20 -> 0.24 s). Elsewhere
/// they stay general: where the product is the nest's only statement (2mm's and 3mm's under
/// `min`, trmm's) they measured level (2mm, 3mm) or slower (trmm 0.97x, its full tiles 3%
/// slower for the same code) and added 20% to 3mm's compile time; over triangles (syrk,
/// syr2k: 1.01x; cholesky, lu, ludcmp: no corner got a kernel) they doubled cholesky's
/// compile time (0.5 -> 1.2 s); there the tiles full along one member only get the kernel of
/// `rows_around_triangles` instead. Returns the pieces with their code ([`graft`] puts them
/// before the general code), the iterators of the members relaxed in tiles that got
/// a kernel, and what those kernels run. Measured at LARGE on 2 threads against the full tiles
/// alone, medians of 9 to 15 runs in rounds: gemm 60.3 -> 50.2 ms (as fast as under `min`
/// now), 2mm 4%, 3mm 2.6%, symm 2-11%, syr2k 2%, trmm 1.5% faster, cholesky, lu and trisolv
/// unchanged; compile time +13% on 3mm (0.77 -> 0.87 s). The lanes relaxed as well (see
/// `kernel`'s "Lanes that end inside a block"): 3mm 0.49 -> 0.52 s, ludcmp 0.72 -> 0.76 s.
#[allow(clippy::too_many_arguments)]
fn partial_reductions<'c>(
    scop: &Scop,
    points: &PointSchedule<'c>,
    accumulating: &[bool],
    tile_sizes: &[i64],
    tile_coords: &[String],
    private: &[ArrayId],
    full: &[Set<'c>],
) -> Result<Relaxed<'c>> {
    let p = points.n_tile;
    if p < 2 || !points.band_in_order() {
        return Ok(Relaxed::default());
    }
    let Some(r) = (0..p).rev().find(|&m| accumulating.get(m) == Some(&true)) else {
        return Ok(Relaxed::default());
    };
    let lanes_order = reduction_outside_lanes(p, r);
    // The members that may be relaxed: the rows of a two-member band (matrix-vector products'
    // accumulator kernels); all three of a three-member band (the vectors' lanes too: a
    // kernel whose lanes end inside a block runs the rest as single vectors and elements,
    // `KernelWidth::tail`); in deeper bands the last three where the reduction and the lanes
    // are among them (a batch of products, `tile_size::batch_products`: doitgen's 220 rows in
    // tiles of 128 and 270 lanes in tiles of 128 left 5/11 of its product in partial tiles;
    // with their kernels it ran 0.18 -> 0.16 s on one thread at EXTRALARGE with its old tiles,
    // 0.150 -> 0.103 with `1, 64, 128, 128`), else only the accumulating one.
    let lanes = lanes_order
        .as_ref()
        .and_then(|o| o.last().copied())
        .unwrap_or(p - 1);
    let members: Vec<usize> = match p {
        2 => vec![0],
        3 => (0..p).collect(),
        _ if r + 3 >= p && lanes + 3 >= p => (p - 3..p).collect(),
        _ => vec![r],
    };
    // Tiles cut along the vectors' lanes get vector kernels that end inside a block, or none.
    let cuts_lanes = |subset: &[usize]| p >= 3 && subset.contains(&lanes);
    let band = points.band.clone();
    let mut taken: Vec<Set<'c>> = full.to_vec();
    let mut branches = Vec::new();
    let mut kernels = Vec::new();
    let mut relaxed = Vec::new();
    // Each piece of the tiles relaxed along `subset` that no piece before took, with its kernel
    // where one qualifies.
    let mut relax = |subset: &[usize],
                     taken: &mut Vec<Set<'c>>,
                     kernels: &mut Vec<String>|
     -> Result<Vec<(Set<'c>, Ast)>> {
        let mut found = Vec::new();
        for piece in full_tiles(points, tile_sizes, tile_coords, subset)? {
            let mut piece = piece;
            for t in taken.iter() {
                piece = piece.subtract(t.clone())?;
            }
            if piece.is_empty()? {
                continue;
            }
            taken.push(piece.clone());
            let plain = points.build(Some(piece.clone()), &band)?;
            let mut kernel = register_kernel(
                scop,
                points,
                &plain,
                &piece,
                private,
                lanes_order.as_deref(),
                cuts_lanes(subset),
            )?;
            if kernel.is_none() {
                kernel = statement_by_statement(
                    scop,
                    points,
                    &plain,
                    &piece,
                    private,
                    lanes_order.as_deref(),
                    cuts_lanes(subset),
                )?;
            }
            let Some(kernel) = kernel else {
                continue;
            };
            for what in kernel_summaries(&kernel) {
                if !kernels.contains(&what) {
                    kernels.push(what);
                }
            }
            for &m in subset {
                if !relaxed.contains(&points.iterators[m]) {
                    relaxed.push(points.iterators[m].clone());
                }
            }
            found.push((piece, kernel));
        }
        Ok(found)
    };
    for &m in &members {
        branches.extend(relax(&[m], &mut taken, &mut kernels)?);
    }
    let mut alone = Vec::new();
    for (piece, kernel, stmt) in alone_full(
        scop,
        points,
        tile_sizes,
        tile_coords,
        private,
        lanes_order.as_deref(),
        &mut taken,
    )? {
        for what in kernel_summaries(&kernel) {
            if !kernels.contains(&what) {
                kernels.push(what);
            }
        }
        if !alone.contains(&stmt) {
            alone.push(stmt);
        }
        branches.push((piece, kernel));
    }
    // The corners (partial along two members or three), after the tiles that one statement
    // fills, in nests of several statements over boxes (see the doc above).
    let boxes = members.len() == 3 && rectangular(points)?;
    if boxes && statements_of(points)?.len() > 1 {
        for subset in [&[0, 1][..], &[0, 2], &[1, 2], &[0, 1, 2]] {
            branches.extend(relax(subset, &mut taken, &mut kernels)?);
        }
    }
    // Over triangles, the tiles full along one member only, that member's rows jammed around
    // the reduction (see `rows_around_triangles`).
    if members.len() == 3 && !boxes {
        let found = rows_around_triangles(
            scop,
            points,
            r,
            tile_sizes,
            tile_coords,
            private,
            &mut taken,
        )?;
        for (piece, kernel) in found {
            for what in kernel_summaries(&kernel) {
                if !kernels.contains(&what) {
                    kernels.push(what);
                }
            }
            branches.push((piece, kernel));
        }
    }
    Ok(Relaxed {
        branches,
        relaxed,
        kernels,
        alone,
    })
}

/// What [`partial_reductions`] found: the pieces of tiles with code of their own, in order, the
/// iterators of the members relaxed in tiles that got a kernel, what those kernels run, and the
/// statements that fill tiles alone ([`alone_full`]).
#[derive(Default)]
struct Relaxed<'c> {
    branches: Vec<(Set<'c>, Ast)>,
    relaxed: Vec<String>,
    kernels: Vec<String>,
    alone: Vec<String>,
}

/// `general` with each of `branches` (a piece of tiles and its code) tested before it, the
/// first first.
fn graft<'c>(
    points: &PointSchedule<'c>,
    general: Ast,
    branches: Vec<(Set<'c>, Ast)>,
) -> Result<Ast> {
    let mut out = general;
    for (piece, kernel) in branches.into_iter().rev() {
        let cond =
            convert_expr(&AstBuild::from_context(points.context.clone())?.expr_from_set(piece)?)?;
        out = Ast::If {
            cond,
            then: Box::new(kernel),
            els: Some(Box::new(out)),
        };
    }
    Ok(out)
}

/// The tiles of a three-member band over triangles that are full along one member only, with
/// accumulator kernels where one qualifies: the pieces that no piece in `taken` holds, added to
/// it. Full along a member `m` other than the reduction `r` (cholesky's tiles below the diagonal
/// of `i` and on the diagonal of `j` and `k`), the rows are `m`'s, with the loops between them
/// and the reduction inside each block and the rows' other statements as its tail
/// (`crate::kernel`'s "Accumulators with a tail"); full along the reduction (cholesky's tiles
/// on the diagonal of `i` and `j`, where `j` ends at `i - 1`), the rows are the loop around the
/// reduction, in blocks while a whole one fits (`crate::kernel`'s "Rows that end anywhere").
/// Compile time at LARGE (`make compile-times`, best of 3): cholesky 0.46 -> 0.52 s, lu 0.46 ->
/// 0.50 s (where no piece qualifies), syrk and syr2k +0.03 s; the 30 kernels 14.96 -> 15.19 s.
fn rows_around_triangles<'c>(
    scop: &Scop,
    points: &PointSchedule<'c>,
    r: usize,
    tile_sizes: &[i64],
    tile_coords: &[String],
    private: &[ArrayId],
    taken: &mut Vec<Set<'c>>,
) -> Result<Vec<(Set<'c>, Ast)>> {
    let p = points.n_tile;
    let mut found = Vec::new();
    for m in 0..p {
        let subset: Vec<usize> = (0..p).filter(|&x| x != m).collect();
        let row = (m != r).then(|| points.iterators[m].as_str());
        for piece in full_tiles(points, tile_sizes, tile_coords, &subset)? {
            let mut piece = piece;
            for t in taken.iter() {
                piece = piece.subtract(t.clone())?;
            }
            if piece.is_empty()? {
                continue;
            }
            let plain = points.build(Some(piece.clone()), &points.band)?;
            if let Some(kernel) =
                accumulator_kernel_over(scop, points, &plain, &piece, private, row, m == r)?
            {
                taken.push(piece.clone());
                found.push((piece, kernel));
            }
        }
    }
    Ok(found)
}

/// Whether each statement of the nest runs over a box of the band's points: its points equal
/// the product of their projections on the members (gemm's and its scaling's do; the
/// triangles of syrk, cholesky or lu do not).
fn rectangular(points: &PointSchedule<'_>) -> Result<bool> {
    let ctx = points.context.ctx();
    let (schedule, depth) = pad_to_common_depth(points.schedule.clone())?;
    let proj = UnionMap::read(ctx, &projection(depth, "", &points.band))?;
    let o = names("o", points.band.len());
    // Each band point to its value along one member.
    let alongs = o
        .iter()
        .map(|member| UnionMap::read(ctx, &format!("{{ {} -> [{member}] }}", tuple("", &o))))
        .collect::<Result<Vec<_>>>()?;
    for stmt in schedule.maps()? {
        let set = UnionMap::from_map(stmt)?
            .apply_range(proj.clone())?
            .range()?;
        let mut product: Option<UnionSet<'_>> = None;
        for along in &alongs {
            let along = along.clone();
            let values = along.clone().intersect_domain(set.clone())?.range()?;
            let slab = along.intersect_range(values)?.domain()?;
            product = Some(match product {
                Some(p) => p.intersect(slab)?,
                None => slab,
            });
        }
        if let Some(product) = product {
            if !product.is_subset(&set)? {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// Whether `piece` (a set of tile coordinates) holds tiles at every value of the nest's shift
/// (`PointSchedule::shift`; true when it has none). cholesky's tiles that the update alone fills
/// are there on a shifted grid only when the shift is 0 (with any other, the block of `j`
/// starts inside `k`'s): their kernel would name tiles that never run it, and the shift would
/// look as if it kept every kernel (`same_kernels` in the driver).
fn for_every_shift(points: &PointSchedule<'_>, piece: &Set<'_>) -> Result<bool> {
    let Some((_, param)) = &points.shift else {
        return Ok(true);
    };
    let ctx = points.context.ctx();
    // The values the context allows: a cache line's elements, at most 64.
    for v in 0..64 {
        let value = Set::read(ctx, &format!("[{param}] -> {{ : {param} = {v} }}"))?;
        if points
            .context
            .clone()
            .intersect(value.clone())?
            .is_empty()?
        {
            break;
        }
        if piece.clone().intersect(value)?.is_empty()? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Tiles that one statement fills while the others have a few instances there: cholesky's tiles
/// just right of the diagonal blocks (`j` in the block after `k`'s), where the update
/// `A[i][j] -= A[i][k] * A[j][k]` fills the box and the division of the block's last column and
/// its diagonal update (`1 + j` and `1 + k` in the schedule) sit inside it. Such a tile is full
/// for no relaxed member, so it ran the general code; now, where running the others' instances
/// first (or last) and the statement's after (or before) keeps every conflicting pair's order
/// (`part_by_part`), the statement runs its register kernel. Only in nests of at most
/// [`MAX_PIECES`] statements, in tiles that no piece before took (`taken`, which the pieces
/// found here join). Returns each piece, its code and the statement.
fn alone_full<'c>(
    scop: &Scop,
    points: &PointSchedule<'c>,
    tile_sizes: &[i64],
    tile_coords: &[String],
    private: &[ArrayId],
    lanes_order: Option<&[usize]>,
    taken: &mut Vec<Set<'c>>,
) -> Result<Vec<(Set<'c>, Ast, String)>> {
    let ctx = points.context.ctx();
    let maps: Vec<(Option<String>, _)> = points
        .schedule
        .maps()?
        .into_iter()
        .map(|m| (m.tuple_name(Side::In), m))
        .collect();
    let mut stmts: Vec<String> = maps.iter().filter_map(|(name, _)| name.clone()).collect();
    stmts.sort();
    stmts.dedup();
    if stmts.len() < 2 || stmts.len() > MAX_PIECES {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for stmt in &stmts {
        let mut mine = UnionMap::empty(ctx)?;
        let mut others = UnionMap::empty(ctx)?;
        for (name, m) in &maps {
            let m = UnionMap::from_map(m.clone())?;
            match name.as_deref() == Some(stmt.as_str()) {
                true => mine = mine.union(m)?,
                false => others = others.union(m)?,
            }
        }
        let alone = points.with_schedule(mine.clone());
        for piece in full_tiles(&alone, tile_sizes, tile_coords, &[])? {
            let mut piece = piece;
            for t in taken.iter() {
                piece = piece.subtract(t.clone())?;
            }
            if piece.is_empty()? || !for_every_shift(points, &piece)? {
                continue;
            }
            for parts in [
                vec![others.clone(), mine.clone()],
                vec![mine.clone(), others.clone()],
            ] {
                let code = part_by_part(scop, points, parts, &piece, private, lanes_order, false)?;
                // The statement's own part must hold the kernel.
                let own_kernel = |c: &Ast| {
                    let mut found = false;
                    c.walk(&mut |node| {
                        found |= matches!(node, Ast::Kernel(k) if k.stmt == *stmt);
                    });
                    found
                };
                let Some(code) = code.filter(own_kernel) else {
                    continue;
                };
                taken.push(piece.clone());
                out.push((piece.clone(), code, stmt.clone()));
                break;
            }
        }
    }
    Ok(out)
}

/// The tiles of `points` (coordinates named `tile_coords`, a parameter set) that are full: the
/// band's `p` point dimensions of their instances fill the box `[s·t, s·t + s - 1]` of each
/// member (`sizes`). `None` when no tile is full, or when the box does not hold every tile's
/// instances (a schedule this module does not know how to read).
fn full_tiles<'c>(
    points: &PointSchedule<'c>,
    sizes: &[i64],
    tile_coords: &[String],
    relax: &[usize],
) -> Result<Vec<Set<'c>>> {
    let p = points.n_tile;
    let ctx = points.context.ctx();
    let schedule = points.schedule.clone();
    let (schedule, depth) = pad_to_common_depth(schedule)?;
    if sizes.len() != p || depth < p {
        return Ok(Vec::new());
    }
    let band = points.band.clone();
    let instances = schedule
        .clone()
        .apply_range(UnionMap::read(ctx, &projection(depth, "", &band))?)?
        .range()?;
    // The point dimensions may be in another order than the tile dimensions (`point_order`):
    // point dimension `m` is in tile dimension `d` when every instance lies in its range.
    let o = names("o", p);
    // A member whose tiles are shifted onto cache lines starts at `size * t - param`.
    let start = |d: usize| -> String {
        match &points.shift {
            Some((m, param)) if *m == d => format!("{} * {} - {param}", sizes[d], tile_coords[d]),
            _ => format!("{} * {}", sizes[d], tile_coords[d]),
        }
    };
    let range_of = |x: &str, d: usize| -> String {
        format!("{b} <= {x} <= {b} + {e}", b = start(d), e = sizes[d] - 1)
    };
    let mut coord_params: Vec<String> = tile_coords.to_vec();
    if let Some((_, param)) = &points.shift {
        coord_params.push(param.clone());
    }
    let tile_coords = coord_params.as_slice();
    let range = |m: usize, d: usize| range_of(&o[m], d);
    let in_ranges = |conds: &[String]| -> Result<UnionSet<'c>> {
        UnionSet::read(
            ctx,
            &format!(
                "{}{{ {} : {} }}",
                params_prefix(tile_coords),
                tuple("", &o),
                conds.join(" and ")
            ),
        )
    };
    let mut bounds = Vec::with_capacity(p);
    let mut tile_dim = Vec::with_capacity(p);
    for m in 0..p {
        let mut found = None;
        for d in 0..p {
            if instances.is_subset(&in_ranges(&[range(m, d)])?)? {
                found = Some(d);
                break;
            }
        }
        match found {
            Some(d) => {
                bounds.push(range(m, d));
                tile_dim.push(d);
            }
            None => return Ok(Vec::new()),
        }
    }
    let boxed = in_ranges(&bounds)?;
    // Relaxed along the members `relax`: a statement's points in the tile need only be the box
    // along the other members times whatever they take along those (`spread` maps a point to
    // such points).
    if relax.iter().any(|&r| r >= p) {
        return Ok(Vec::new());
    }
    let spread = match relax.is_empty() {
        false => {
            let q = names("q", p);
            let conds: Vec<String> = (0..p)
                .map(|m| match relax.contains(&m) {
                    true => format!("{} = {}", q[m], o[m]),
                    false => range_of(&q[m], tile_dim[m]),
                })
                .collect();
            Some(UnionMap::read(
                ctx,
                &format!(
                    "{}{{ {} -> {} : {} }}",
                    params_prefix(tile_coords),
                    tuple("", &o),
                    tuple("", &q),
                    conds.join(" and ")
                ),
            )?)
        }
        true => None,
    };
    // Full for each statement that has instances in the tile, not only for their union: a tile
    // where two statements split the box between them (lu's diagonal tiles, `j < i` and
    // `j >= i`) gets loops cut at the statements' border, slower than the general code for the
    // tiles of one statement (measured 4% on lu at LARGE).
    let proj = UnionMap::read(ctx, &projection(depth, "", &band))?;
    let mut full = instances.params()?;
    let mut occupied_by = Vec::new();
    for stmt in schedule.maps()? {
        let stmt_points = UnionMap::from_map(stmt)?.apply_range(proj.clone())?;
        let filled = match &spread {
            Some(spread) => stmt_points.clone().apply_range(spread.clone())?.range()?,
            None => boxed.clone(),
        };
        let stmt_points = stmt_points.range()?;
        let occupied = stmt_points.clone().params()?;
        let partial = filled
            .subtract(stmt_points)?
            .params()?
            .intersect(occupied.clone())?;
        full = full.subtract(partial)?;
        occupied_by.push(occupied);
    }
    // Split by the statements present, so that each piece's code has no loop cut where one
    // statement's tiles end and another's begin.
    let mut pieces = vec![full];
    for occupied in occupied_by {
        let mut split = Vec::new();
        for piece in pieces {
            for part in [
                piece.clone().intersect(occupied.clone())?,
                piece.subtract(occupied.clone())?,
            ] {
                if !part.is_empty()? {
                    split.push(part);
                }
            }
        }
        pieces = split;
        if pieces.len() > MAX_PIECES {
            return Ok(Vec::new());
        }
    }
    Ok(pieces)
}

/// Whether a statement of `stmts` accesses a scalar whose accesses must keep their order inside
/// a task: one of `private` (kept in one variable per task; the SCoP given here has it
/// expanded) or a scalar written in the SCoP.
fn keeps_order(scop: &Scop, stmts: &[scop_ir::StmtId], private: &[ArrayId]) -> bool {
    stmts
        .iter()
        .filter_map(|s| scop.statements.get(s.index()))
        .any(|s| {
            s.accesses.iter().any(|a| {
                private.contains(&a.array)
                    || (a.kind == AccessKind::Write
                        && scop
                            .arrays
                            .get(a.array.0 as usize)
                            .is_some_and(|arr| arr.rank == 0))
            })
        })
}

/// Unrolls every loop over `outer` whose body is one loop over `inner` holding only statements,
/// by `factor`, and jams the copies into the `inner` loop: `for (k = a; k <= a + c; k += 1) for
/// (j ..) S(k, j)` becomes `for (k = a; k <= a + c; k += factor) for (j ..) { S(k, j); S(k + 1,
/// j); ... }`. Only loops whose trip count is a constant multiple of `factor` (`c + 1`, the same
/// `a` in the bound) and whose inner loop's bounds do not use `outer` are changed, so no
/// remainder is needed. Returns whether some loop was changed.
///
/// Legal inside a tile of a permutable band whose members are `outer` and `inner` (see the
/// module doc); the caller vouches for that.
pub fn unroll_and_jam(ast: &mut Ast, outer: &str, inner: &str, factor: i64) -> bool {
    match ast {
        Ast::Block(items) => items.iter_mut().fold(false, |changed, item| {
            unroll_and_jam(item, outer, inner, factor) | changed
        }),
        Ast::If { then, els, .. } => {
            let a = unroll_and_jam(then, outer, inner, factor);
            let b = els
                .as_mut()
                .is_some_and(|e| unroll_and_jam(e, outer, inner, factor));
            a | b
        }
        Ast::User { .. } | Ast::Kernel(_) => false,
        Ast::For {
            iter,
            init,
            cond,
            inc,
            body,
        } => {
            if iter == outer && jammable(iter, init, cond, inc, body, inner, factor) {
                let Some(Ast::For {
                    body: inner_body, ..
                }) = body.sole_mut()
                else {
                    return false;
                };
                let copies: Vec<Ast> = (0..factor)
                    .map(|u| {
                        let mut copy = (**inner_body).clone();
                        if u > 0 {
                            shift(&mut copy, outer, u);
                        }
                        copy
                    })
                    .collect();
                **inner_body = Ast::Block(flatten(copies));
                *inc = Expr::Int(factor.to_string());
                true
            } else {
                unroll_and_jam(body, outer, inner, factor)
            }
        }
    }
}

/// Whether the loop `for (iter = init; cond; iter += inc) body` can be jammed by `factor` around
/// its inner loop over `inner` (see [`unroll_and_jam`]).
fn jammable(
    iter: &str,
    init: &Expr,
    cond: &Expr,
    inc: &Expr,
    body: &mut Ast,
    inner: &str,
    factor: i64,
) -> bool {
    if *inc != Expr::Int("1".into()) {
        return false;
    }
    let Some(trips) = trip_count(iter, init, cond) else {
        return false;
    };
    if trips < factor || trips % factor != 0 {
        return false;
    }
    match body.sole_mut() {
        Some(Ast::For {
            iter: j,
            init,
            cond,
            inc,
            body,
        }) => {
            j == inner
                && !init.mentions(iter)
                && !cond.mentions(iter)
                && !inc.mentions(iter)
                && only_statements(body)
        }
        _ => false,
    }
}

/// The constant number of iterations of `for (iter = init; cond; iter += 1)`, when `cond` is
/// `iter <= init + c` or `iter < init + c`.
fn trip_count(iter: &str, init: &Expr, cond: &Expr) -> Option<i64> {
    let Expr::Op(op, args) = cond else {
        return None;
    };
    if args.len() != 2 || args[0] != Expr::Id(iter.to_string()) {
        return None;
    }
    let (base, offset) = split_constant(&args[1]);
    let (init_base, init_offset) = split_constant(init);
    if base != init_base {
        return None;
    }
    let last = offset.checked_sub(init_offset)?;
    match op {
        OpKind::Le => last.checked_add(1),
        OpKind::Lt => Some(last),
        _ => None,
    }
}

/// `e` as `base + constant` (`None` base: `e` is a constant).
fn split_constant(e: &Expr) -> (Option<&Expr>, i64) {
    match e {
        Expr::Int(v) => match v.parse::<i64>() {
            Ok(v) => (None, v),
            Err(_) => (Some(e), 0),
        },
        Expr::Op(OpKind::Add, args) if args.len() == 2 => match &args[1] {
            Expr::Int(v) => match v.parse::<i64>() {
                Ok(v) => (Some(&args[0]), v),
                Err(_) => (Some(e), 0),
            },
            _ => (Some(e), 0),
        },
        Expr::Op(OpKind::Sub, args) if args.len() == 2 => match &args[1] {
            Expr::Int(v) => match v.parse::<i64>() {
                Ok(v) => (Some(&args[0]), -v),
                Err(_) => (Some(e), 0),
            },
            _ => (Some(e), 0),
        },
        _ => (Some(e), 0),
    }
}

/// Whether `ast` is statements only (no loop, no condition).
fn only_statements(ast: &Ast) -> bool {
    match ast {
        Ast::User { .. } => true,
        Ast::Block(items) => items.iter().all(only_statements),
        _ => false,
    }
}

/// The statements scheduled by `points`.
fn statements_of(points: &PointSchedule<'_>) -> Result<Vec<scop_ir::StmtId>> {
    let mut out: Vec<scop_ir::StmtId> = points
        .schedule
        .maps()?
        .iter()
        .filter_map(|m| {
            m.tuple_name(crate::isl::Side::In)
                .as_deref()
                .and_then(|n| crate::scop::stmt_of_name(n.strip_suffix(ALIASED).unwrap_or(n)))
        })
        .collect();
    out.sort();
    out.dedup();
    Ok(out)
}

impl std::fmt::Display for TileCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.jammed, self.full_tiles) {
            (Some((iter, by)), _) => write!(f, "full tiles apart, {iter} jammed by {by}")?,
            (None, true) => write!(f, "full tiles apart")?,
            (None, false) => write!(f, "one code for all tiles")?,
        }
        if self.split {
            write!(f, ", innermost loop cut at aliased loads")?;
        }
        if let Some(iter) = &self.sunk {
            write!(f, ", band loop {iter} innermost")?;
        }
        if !self.distributed.is_empty() {
            write!(
                f,
                ", innermost loop distributed ({})",
                self.distributed.join(", ")
            )?;
        }
        if !self.fused.is_empty() {
            let groups: Vec<String> = self.fused.iter().map(|g| g.join("+")).collect();
            write!(f, ", sibling loops fused ({})", groups.join(" with "))?;
        }
        if !self.kernels.is_empty() {
            write!(f, ", register kernels ({})", self.kernels.join(", "))?;
        }
        if self.row_blocks {
            write!(
                f,
                ", statements apart in blocks of {BLOCK_ROWS} rows, sums first"
            )?;
        }
        if !self.relaxed.is_empty() {
            write!(
                f,
                ", kernels also in tiles partial along {}",
                self.relaxed.join(", ")
            )?;
        }
        if !self.alone.is_empty() {
            write!(
                f,
                ", kernels also in tiles that {} alone fill",
                self.alone.join(", ")
            )?;
        }
        if !self.scalar_loops.is_empty() {
            let mut loops = self.scalar_loops.clone();
            loops.sort();
            loops.dedup();
            write!(f, ", scalar reductions ({})", loops.join(", "))?;
        }
        if !self.row_lanes.is_empty() {
            let mut loops = self.row_lanes.clone();
            loops.sort();
            loops.dedup();
            write!(f, ", rows as vector lanes ({})", loops.join(", "))?;
        }
        if !self.step_lanes.is_empty() {
            let mut loops = self.step_lanes.clone();
            loops.sort();
            loops.dedup();
            write!(f, ", steps as vector lanes ({})", loops.join(", "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::testing::{id, instances, int, op, user};
    use crate::{dependences, schedule, ScheduleConfig};

    /// `for (iter = lo; iter <= hi; iter += 1) body`
    fn for_le(iter: &str, lo: Expr, hi: Expr, body: Ast) -> Ast {
        Ast::For {
            iter: iter.to_string(),
            init: lo,
            cond: op(OpKind::Le, vec![id(iter), hi]),
            inc: int(1),
            body: Box::new(body),
        }
    }
    /// `32 * t + c`
    fn tile_at(t: &str, c: i64) -> Expr {
        let base = op(OpKind::Mul, vec![int(32), id(t)]);
        if c == 0 {
            base
        } else {
            op(OpKind::Add, vec![base, int(c)])
        }
    }

    /// A tile of gemm's update: `for k (32 values) for j (32 values) S1(i, k, j)`.
    fn gemm_tile(k_last: i64) -> Ast {
        for_le(
            "k",
            tile_at("t2", 0),
            tile_at("t2", k_last),
            for_le(
                "j",
                tile_at("t1", 0),
                tile_at("t1", 31),
                user("S1", vec![id("i"), id("k"), id("j")]),
            ),
        )
    }

    #[test]
    fn a_loop_of_constant_trip_count_is_jammed_around_the_inner_loop() {
        let mut ast = Ast::Block(vec![gemm_tile(31)]);
        assert!(unroll_and_jam(&mut ast, "k", "j", 4));
        let k_plus = |u: i64| op(OpKind::Add, vec![id("k"), int(u)]);
        let want = Ast::Block(vec![Ast::For {
            iter: "k".into(),
            init: tile_at("t2", 0),
            cond: op(OpKind::Le, vec![id("k"), tile_at("t2", 31)]),
            inc: int(4),
            body: Box::new(for_le(
                "j",
                tile_at("t1", 0),
                tile_at("t1", 31),
                Ast::Block(vec![
                    user("S1", vec![id("i"), id("k"), id("j")]),
                    user("S1", vec![id("i"), k_plus(1), id("j")]),
                    user("S1", vec![id("i"), k_plus(2), id("j")]),
                    user("S1", vec![id("i"), k_plus(3), id("j")]),
                ]),
            )),
        }]);
        assert_eq!(ast, want);
    }

    #[test]
    fn loops_that_would_need_a_remainder_or_are_not_perfect_stay() {
        let stays = |tree: Ast| {
            let mut ast = tree.clone();
            assert!(!unroll_and_jam(&mut ast, "k", "j", 4), "{tree:?}");
            assert_eq!(ast, tree);
        };
        // 30 iterations: not a multiple of 4.
        stays(gemm_tile(29));
        // A bound that is not the start plus a constant (a partial tile's `min`).
        let partial = for_le(
            "k",
            tile_at("t2", 0),
            op(OpKind::Min, vec![int(99), tile_at("t2", 31)]),
            for_le("j", int(0), int(31), user("S1", vec![id("k"), id("j")])),
        );
        stays(partial);
        // The inner loop's bounds use the outer iterator (a triangle).
        let triangle = for_le(
            "k",
            int(0),
            int(31),
            for_le("j", int(0), id("k"), user("S1", vec![id("k"), id("j")])),
        );
        stays(triangle);
        // Something other than statements inside the inner loop.
        let guarded = for_le(
            "k",
            int(0),
            int(31),
            for_le(
                "j",
                int(0),
                int(31),
                Ast::If {
                    cond: op(OpKind::Ge, vec![id("j"), int(1)]),
                    then: Box::new(user("S1", vec![id("k"), id("j")])),
                    els: None,
                },
            ),
        );
        stays(guarded);
        // Two loops inside the outer one.
        let two = for_le(
            "k",
            int(0),
            int(31),
            Ast::Block(vec![
                for_le("j", int(0), int(31), user("S1", vec![id("k"), id("j")])),
                for_le("j", int(0), int(31), user("S2", vec![id("k"), id("j")])),
            ]),
        );
        stays(two);
    }

    #[test]
    fn jamming_keeps_each_elements_updates_in_order() {
        // S1(i, k, j) updates C[i][j]: for every (i, j), the k values it sees must come in the
        // same order, and every instance must run exactly once.
        let tile = for_le("i", int(0), int(3), gemm_tile(31));
        let mut jammed = tile.clone();
        assert!(unroll_and_jam(&mut jammed, "k", "j", 4));
        let env = &mut vec![("t1".to_string(), 1), ("t2".to_string(), 2)];
        let (mut before, mut after) = (Vec::new(), Vec::new());
        instances(&tile, env, &mut before);
        instances(&jammed, env, &mut after);
        assert_eq!(before.len(), 4 * 32 * 32);
        let per_element = |list: &[(String, Vec<i64>)]| {
            let mut by: std::collections::BTreeMap<(i64, i64), Vec<i64>> = Default::default();
            for (_, a) in list {
                by.entry((a[0], a[2])).or_default().push(a[1]);
            }
            by
        };
        assert_eq!(per_element(&before), per_element(&after));
        let mut sorted_before = before.clone();
        let mut sorted_after = after.clone();
        sorted_before.sort();
        sorted_after.sort();
        assert_eq!(sorted_before, sorted_after);
        assert_ne!(before, after, "the order changed: the jam did something");
    }

    /// A PolyBench kernel's first SCoP at MINI, scheduled with tiles of `tiles`.
    fn scheduled(kernel: &str, tiles: i64) -> (Scop, crate::TiledSchedule) {
        let scop = crate::polybench_scop(kernel);
        let deps = dependences(&scop).unwrap();
        let cfg = ScheduleConfig {
            tile_sizes: Some(vec![tiles]),
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&scop, &deps, &cfg).unwrap();
        (scop, sched)
    }

    /// The code that tile `tile` (its coordinates, named `t0`, `t1`, ...) runs in `ast`: the
    /// branch of each condition it meets.
    fn code_of_tile<'a>(ast: &'a Ast, tile: &[i64]) -> &'a Ast {
        let env: Vec<(String, i64)> = tile
            .iter()
            .enumerate()
            .map(|(d, &v)| (format!("t{d}"), v))
            .collect();
        let mut at = ast;
        loop {
            match at {
                Ast::If { cond, then, els } => {
                    at = match (crate::ast::testing::eval(cond, &env) != 0, els) {
                        (true, _) => then,
                        (false, Some(els)) => els,
                        (false, None) => return at,
                    }
                }
                Ast::Block(items) if items.len() == 1 => at = &items[0],
                _ => return at,
            }
        }
    }

    /// A point schedule read back from its text (`PointsText`, from which the parts of a tile's
    /// code are built on threads) builds the same code as the schedule itself: the general code
    /// and the code of each piece of full tiles, for nests with kernels (gemm), triangles (lu)
    /// and time-skewed tiles (jacobi-2d).
    #[test]
    fn a_point_schedule_read_back_from_its_text_builds_the_same_code() {
        for kernel in ["gemm", "lu", "jacobi-2d"] {
            let (scop, sched) = scheduled(kernel, 4);
            let p = sched.nests[0].tile_sizes.len();
            let points = PointSchedule::of(&scop, &sched, NestId(0), &names("t", p), "c").unwrap();
            let again = points.to_text().unwrap().read().unwrap();
            let general = |s: &PointSchedule<'_>| s.build(None, s.separate.as_slice()).unwrap();
            assert_eq!(general(&points), general(&again), "{kernel}");
            let pieces =
                full_tiles(&points, &sched.nests[0].tile_sizes, &names("t", p), &[]).unwrap();
            assert!(!pieces.is_empty(), "{kernel}");
            for piece in pieces {
                let text = piece.to_str().unwrap();
                let read = Set::read(Ctx::shared().unwrap(), &text).unwrap();
                assert_eq!(
                    points.build(Some(piece), &points.band).unwrap(),
                    again.build(Some(read), &again.band).unwrap(),
                    "{kernel}: {text}"
                );
            }
        }
    }

    #[test]
    fn corners_of_nests_over_boxes_get_kernels() {
        // gemm at MINI (C is 20 x 25, k runs to 30) with 16-wide tiles: the tile of rows 16-19,
        // columns 0-15 and the first 16 steps of `k` is cut along `i` and holds the scaling
        // `C[i][j] *= beta` (S0) before the products: a corner of a nest of two statements over
        // boxes. It runs S0's loops, then S1's kernel; so does the tile cut along `i` and `j`.
        let (scop, sched) = scheduled("gemm", 16);
        let points = PointSchedule::of(&scop, &sched, NestId(0), &names("t", 3), "c").unwrap();
        assert!(rectangular(&points).unwrap());
        let coords = names("t", sched.nests[0].tile_sizes.len());
        let (ast, _) = tile_body_ast(&scop, &sched, NestId(0), &coords, "c", &[]).unwrap();
        let has_kernel = |ast: &Ast| {
            let mut found = false;
            ast.walk(&mut |node| found |= matches!(node, Ast::Kernel(_)));
            found
        };
        let is_s0 = |node: &Ast| matches!(node, Ast::User { name, .. } if name == "S0");
        let is_kernel = |node: &Ast| matches!(node, Ast::Kernel(_));
        for tile in [[1, 0, 0], [1, 1, 0], [1, 1, 1]] {
            let code = code_of_tile(&ast, &tile);
            assert!(has_kernel(code), "{tile:?}: {code:?}");
            if tile[2] == 0 {
                assert!(runs_before(code, &is_s0, &is_kernel), "{tile:?}: {code:?}");
            }
        }
        // syrk's nest runs over triangles (`j <= i`): its corners keep the general code.
        let (scop, sched) = scheduled("syrk", 16);
        let points = PointSchedule::of(&scop, &sched, NestId(0), &names("t", 3), "c").unwrap();
        assert!(!rectangular(&points).unwrap());
    }

    #[test]
    fn gemm_gets_full_tiles_apart_and_its_reduction_loop_jammed() {
        // gemm at MINI (C is 20 x 25, k runs to 30) with 4-wide tiles: most tiles are full, and
        // no vector kernel's block of lanes divides them (the partial tiles keep the general
        // code).
        let (scop, sched) = scheduled("gemm", 4);
        let coords = names("t", sched.nests[0].tile_sizes.len());
        let (ast, code) = tile_body_ast(&scop, &sched, NestId(0), &coords, "c", &[]).unwrap();
        assert!(code.full_tiles, "{code}");
        let (iter, by) = code.jammed.clone().expect("the k loop is jammed");
        assert_eq!(by, JAM);
        // The general code is kept for the partial tiles.
        let Ast::If {
            els: Some(general), ..
        } = &ast
        else {
            panic!("{ast:?}")
        };
        assert_eq!(
            **general,
            crate::nest_body_ast(&scop, &sched, NestId(0), &coords, "c").unwrap()
        );
        // A loop over the jammed iterator steps by JAM.
        let mut incs = Vec::new();
        ast.walk(&mut |node| {
            if let Ast::For { iter: it, inc, .. } = node {
                if *it == iter {
                    incs.push(inc.clone());
                }
            }
        });
        assert!(incs.contains(&Expr::Int(JAM.to_string())), "{incs:?}");
    }

    /// Whether some block of `ast` holds a node that `first` accepts in an item before one
    /// holding a node that `then` accepts.
    fn runs_before(ast: &Ast, first: &dyn Fn(&Ast) -> bool, then: &dyn Fn(&Ast) -> bool) -> bool {
        let contains = |ast: &Ast, want: &dyn Fn(&Ast) -> bool| {
            let mut found = false;
            ast.walk(&mut |node| found |= want(node));
            found
        };
        let mut before = false;
        ast.walk(&mut |node| {
            if let Ast::Block(items) = node {
                let a = items.iter().position(|i| contains(i, first));
                let b = items.iter().position(|i| contains(i, then));
                before |= matches!((a, b), (Some(a), Some(b)) if a < b);
            }
        });
        before
    }

    #[test]
    fn tiles_partial_only_along_the_reduction_get_a_kernel_too() {
        // gemm at MINI (C is 20 x 25, k runs to 30) with 16-wide tiles: the tile of rows 0-15
        // and columns 0-15 at k = 16..29 fills its rows and vectors, and its reduction is 14
        // long; the tiles cut along i or j are left to the general code.
        let (scop, sched) = scheduled("gemm", 16);
        let coords = names("t", sched.nests[0].tile_sizes.len());
        let (ast, code) = tile_body_ast(&scop, &sched, NestId(0), &coords, "c", &[]).unwrap();
        assert!(!code.relaxed.is_empty(), "{code}");
        assert!(code.kernels.iter().any(|k| k.contains("vectors")), "{code}");
        // Some kernel's reduction loop is not 16 long.
        let mut kernel_loops = Vec::new();
        ast.walk(&mut |node| {
            if let Ast::Kernel(k) = node {
                kernel_loops.push(k.loops[2].clone());
            }
        });
        assert!(
            kernel_loops
                .iter()
                .any(|l| !format!("{:?}", l.cond).contains("15")),
            "{kernel_loops:?}"
        );
        // The first `k` tile holds `C[i][j] *= beta` (S0, at k = 0) before the products: it runs
        // as S0's loops, then S1's kernel.
        let is_s0 = |node: &Ast| matches!(node, Ast::User { name, .. } if name == "S0");
        let is_kernel = |node: &Ast| matches!(node, Ast::Kernel(_));
        assert!(runs_before(&ast, &is_s0, &is_kernel), "{ast:?}");
        // Without a vector kernel's block of lanes dividing the tile (4-wide tiles), nothing
        // changes.
        let (scop, sched) = scheduled("gemm", 4);
        let coords = names("t", sched.nests[0].tile_sizes.len());
        let (_, code) = tile_body_ast(&scop, &sched, NestId(0), &coords, "c", &[]).unwrap();
        assert!(code.relaxed.is_empty(), "{code}");
    }

    #[test]
    fn tiles_that_one_statement_fills_run_the_others_first_and_its_kernel() {
        // cholesky at MINI (N = 40) with 8-wide tiles: in the tiles whose `j` block follows
        // `k`'s, the update (S0) fills the box while the division of the block's last column
        // (S1, at `1 + j` in the schedule) and the diagonal's update (S2) sit inside it; those
        // run first, then S0's kernel.
        let (scop, sched) = scheduled("cholesky", 8);
        let coords = names("t", sched.nests[0].tile_sizes.len());
        let (ast, code) = tile_body_ast(&scop, &sched, NestId(0), &coords, "c", &[]).unwrap();
        assert_eq!(code.alone, vec!["S0".to_string()], "{code}");
        let is_s1 = |node: &Ast| matches!(node, Ast::User { name, .. } if name == "S1");
        let is_kernel = |node: &Ast| matches!(node, Ast::Kernel(k) if k.stmt == "S0");
        assert!(runs_before(&ast, &is_s1, &is_kernel), "{ast:?}");
    }

    #[test]
    fn floyd_warshalls_row_loop_is_cut_where_it_stores_the_element_it_loads() {
        // `path[i][j] = min(path[i][j], path[i][k] + path[k][j])`: the `j` loop loads
        // `path[i][k]`, which it stores at `j = k` only: the statement instances at `j = k` are a
        // statement of their own, between two `j` loops.
        let (scop, sched) = scheduled("floyd-warshall", 4);
        let coords = names("t", sched.nests[0].tile_sizes.len());
        let (ast, code) = tile_body_ast(&scop, &sched, NestId(0), &coords, "c", &[]).unwrap();
        assert!(code.split, "{code}");
        // Every statement keeps its name (the split copies are renamed back).
        fn users(ast: &Ast, out: &mut Vec<String>) {
            ast.walk(&mut |node| {
                if let Ast::User { name, .. } = node {
                    out.push(name.clone());
                }
            });
        }
        let mut names_used = Vec::new();
        users(&ast, &mut names_used);
        assert!(names_used.iter().all(|n| n == "S0"), "{names_used:?}");
        // The general code (the else branch) has the statement three times: before, at and
        // after `j = k`.
        let Ast::If {
            els: Some(general), ..
        } = &ast
        else {
            panic!("{ast:?}")
        };
        let mut in_general = Vec::new();
        users(general, &mut in_general);
        assert_eq!(in_general.len(), 3, "{general:?}");
    }

    /// The iterators of the loops that [`mark_reduction_loops`] marked in every nest of the
    /// kernel, and whether some innermost loop still has a condition inside.
    fn scalar_loops_and_guards(kernel: &str, tiles: i64) -> (Vec<String>, bool) {
        let (scop, sched) = scheduled(kernel, tiles);
        let mut loops = Vec::new();
        let mut guarded = false;
        for k in 0..sched.nests.len() {
            let coords = names("t", sched.nests[k].tile_sizes.len());
            let (ast, code) =
                tile_body_ast(&scop, &sched, crate::NestId::new(k), &coords, "c", &[]).unwrap();
            loops.extend(code.scalar_loops);
            ast.walk(&mut |node| {
                if let Ast::For { body, .. } = node {
                    let mut inner_loop = false;
                    let mut condition = false;
                    body.walk(&mut |n| match n {
                        Ast::For { .. } => inner_loop = true,
                        Ast::If { .. } => condition = true,
                        _ => {}
                    });
                    guarded |= condition && !inner_loop;
                }
            });
        }
        (loops, guarded)
    }

    #[test]
    fn durbins_reduction_stays_scalar_and_its_single_iterations_are_peeled() {
        // `sum += r[k - i - 1] * y[i]` reads r backwards: the loop is marked. `y[k] = alpha`
        // runs at one iteration of the loop of `z[i] = y[i] + alpha * y[k - i - 1]`, and beta's
        // update at one of the sum's: generated "separate", no loop keeps a guard.
        let (loops, guarded) = scalar_loops_and_guards("durbin", 8);
        assert!(!loops.is_empty());
        assert!(!guarded);
    }

    #[test]
    fn contiguous_chains_and_heavy_statements_stay_vectorizable() {
        // cholesky's `A[i][j] -= A[i][k] * A[j][k]` (one contiguous chain) and syr2k's four
        // products per addition run faster as GCC vectorizes them.
        for kernel in ["cholesky", "syr2k"] {
            assert_eq!(
                scalar_loops_and_guards(kernel, 8).0,
                Vec::<String>::new(),
                "{kernel}"
            );
        }
        // bicg's rows, jammed, one product each: marked.
        assert!(!scalar_loops_and_guards("bicg", 8).0.is_empty());
    }

    #[test]
    fn a_stencil_has_nothing_to_jam() {
        // jacobi-1d's statements write a new element at every step of every loop.
        let (scop, sched) = scheduled("jacobi-1d", 4);
        for k in 0..sched.nests.len() {
            let coords = names("t", sched.nests[k].tile_sizes.len());
            let (_, code) =
                tile_body_ast(&scop, &sched, crate::NestId::new(k), &coords, "c", &[]).unwrap();
            assert_eq!(code.jammed, None, "nest {k}");
        }
    }
}
