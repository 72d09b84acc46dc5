//! Register kernels for a piece of a tile's code (the full tiles, or the tiles that fill the
//! box along all members but one), and statements run apart where they get no kernel together:
//! [`register_kernel`] (vectors, then accumulators, their rows as vector lanes where they
//! qualify: `crate::rows`' "Accumulators as lanes"), [`statement_by_statement`] and
//! [`part_by_part`]. `crate::tile_code` decides which pieces a tile's code has and asks here for
//! each piece's kernels.
//!
//! Statements apart: a full tile whose statements together get no register kernel runs them
//! one after the other, each with its own kernel where one applies
//! ([`statement_by_statement`], where that order keeps every conflicting pair's), instead of
//! the jammed loop that holds them all. bicg's and mvt's tiles (under `reuse`) update a vector
//! along the rows' loop (`s[j] += r[i] * A[i][j]`) and sum each row (`q[i] += A[i][j] * p[j]`)
//! in one loop: the sums' in-order additions keep the C compiler from vectorizing any of it.
//! Apart, the update runs vectorized, the sums in accumulators of four rows, and the tile's
//! block of `A` (16 x 256 doubles, 32 KiB) is read again from L1. Paired at EXTRALARGE (medians
//! of 15 in rounds, the AMD EPYC Zen 5, one thread / two): bicg 2.32 -> 2.18 ms / 1.51 -> 1.44,
//! mvt 9.63 -> 8.41 ms / 5.40 -> 4.90; no other kernel's code changes but atax's at LARGE.
//! Where the statements conflict with each other nowhere in the tile, they run apart a block of
//! eight rows at a time (`rows_in_blocks`), the sums first: the sums read the block's rows from
//! memory with eight streams at once, the update then from L1 (the whole tile's sums read its
//! 128 KiB again from L2). EXTRALARGE, tiles `64, 256`, medians of 15 to 21 in rounds, one
//! thread / two: mvt 7.59 -> 6.89 ms / 4.42 -> 4.19, bicg 1.97 -> 1.83 / 1.02 -> 0.90; the
//! update first ran mvt 10% slower than the whole tile's parts (8.39 ms on one thread).
//!
//! One pass: where the block's sums run their rows as vector lanes (`crate::rows`'
//! "Accumulators as lanes") and the other part is one update along the same loop over the same
//! rows that runs as vectors along it, the update runs in the sums' loop ([`fused_update`],
//! `crate::ast::FusedUpdate`): at each step of the lanes, its copies at the block's eight rows
//! in order, each a vector of the step's columns, from the rows' vectors before they are
//! transposed, so that `A` is read once. Each element of the updated vector still sees its
//! updates in row order, and the update's conflicting instances must share their column (ISL,
//! on the tile), so the copies that one vector runs at once conflict with none of each other.
//! EXTRALARGE, medians of 15 in rounds, one thread / two: mvt 6.13 -> 5.15 ms / 3.94 -> 3.43,
//! bicg 1.52 -> 1.25 / 0.86 -> 0.75.

use crate::ast::{flatten, Ast, Expr, OpKind};
use crate::astgen::PointSchedule;
use crate::isl::{Set, Side, UnionMap, UnionSet};
use crate::kernel::{accumulator_kernel, vector_kernel};
use crate::maps::{names, projection, tuple};
use crate::sink::order_kept;
use crate::{Error, Result};
use scop_ir::{ArrayId, Scop};

/// The most kinds of full tiles (by the statements they hold) that get code of their own; a nest
/// with more keeps one code for all tiles.
pub const MAX_PIECES: usize = 4;

/// `plain` (the code of `points` in the tiles of `piece`) with its innermost loops a register
/// kernel, vectors first, when one applies; with `lanes_may_end` (tiles partial along the
/// lanes), a vector kernel whose lanes end inside a block ([`vector_kernel`]).
pub(crate) fn register_kernel(
    scop: &Scop,
    points: &PointSchedule<'_>,
    plain: &Ast,
    piece: &Set<'_>,
    private: &[ArrayId],
    lanes_order: Option<&[usize]>,
    lanes_may_end: bool,
) -> Result<Option<Ast>> {
    if let Some(kernel) = vector_kernel(scop, points, plain, piece, private, plain, lanes_may_end)?
    {
        return Ok(Some(kernel));
    }
    if let Some(order) = lanes_order {
        let reordered = points.with_point_order(order)?;
        let code = reordered.build(Some(piece.clone()), &points.band)?;
        if let Some(kernel) = vector_kernel(
            scop,
            &reordered,
            &code,
            piece,
            private,
            plain,
            lanes_may_end,
        )? {
            return Ok(Some(kernel));
        }
    }
    if lanes_may_end {
        // Tiles cut along the lanes get vectors or stay general.
        return Ok(None);
    }
    accumulators(scop, points, plain, piece, private)
}

/// [`accumulator_kernel`], with its rows as vector lanes where they qualify
/// ([`crate::rows::accumulator_lanes`]).
pub(crate) fn accumulators(
    scop: &Scop,
    points: &PointSchedule<'_>,
    plain: &Ast,
    piece: &Set<'_>,
    private: &[ArrayId],
) -> Result<Option<Ast>> {
    let Some(mut ast) = accumulator_kernel(scop, points, plain, piece, private)? else {
        return Ok(None);
    };
    let mut kernels = Vec::new();
    collect_kernels(&mut ast, &mut kernels);
    for k in kernels {
        let plain = k.loops.len() == 2 && k.tail == Ast::Block(Vec::new()) && !k.ragged;
        if k.vector.is_none() && plain {
            k.row_lanes = crate::rows::accumulator_lanes(scop, k, private)?;
        }
    }
    Ok(Some(ast))
}

/// The kernels of `ast`, outermost first.
fn collect_kernels<'a>(ast: &'a mut Ast, out: &mut Vec<&'a mut crate::ast::Kernel>) {
    match ast {
        Ast::Block(items) => items.iter_mut().for_each(|i| collect_kernels(i, out)),
        Ast::For { body, .. } => collect_kernels(body, out),
        Ast::If { then, els, .. } => {
            collect_kernels(then, out);
            if let Some(els) = els {
                collect_kernels(els, out);
            }
        }
        Ast::Kernel(k) => out.push(k),
        Ast::User { .. } => {}
    }
}

/// The tiles of `piece` run one statement after the other (each statement's instances in the
/// tile, in the order the statements first appear in `plain`), so that a statement alone gets
/// its register kernel: gemm's first `k` tile under `smart`, where `C[i][j] *= beta` runs at
/// `k = 0` before the products, scales the tile's rows of `C` and then runs the kernel over all
/// of its `k`. Only where that order keeps every conflicting pair's (checked on the piece) and
/// some statement gets a kernel.
pub(crate) fn statement_by_statement(
    scop: &Scop,
    points: &PointSchedule<'_>,
    plain: &Ast,
    piece: &Set<'_>,
    private: &[ArrayId],
    lanes_order: Option<&[usize]>,
    lanes_may_end: bool,
) -> Result<Option<Ast>> {
    let mut order: Vec<String> = Vec::new();
    plain.walk(&mut |node| {
        if let Ast::User { name, .. } = node {
            if !order.contains(name) {
                order.push(name.clone());
            }
        }
    });
    if order.len() < 2 || order.len() > MAX_PIECES {
        return Ok(None);
    }
    let mut parts = Vec::with_capacity(order.len());
    for name in &order {
        parts.push(UnionMap::from_map(
            points
                .schedule
                .maps()?
                .into_iter()
                .find(|m| m.tuple_name(Side::In).as_deref() == Some(name.as_str()))
                .ok_or_else(|| Error::Isl(format!("no schedule for {name} in the tile")))?,
        )?);
    }
    part_by_part(
        scop,
        points,
        parts,
        piece,
        private,
        lanes_order,
        lanes_may_end,
    )
}

/// The tiles of `piece` run `parts` (pieces of `points`' schedule, each in its own order) one
/// after the other, each part with its register kernel where one applies (see
/// [`statement_by_statement`]); `None` unless that order keeps every conflicting pair's order
/// (checked on the piece) and some part gets a kernel.
pub(crate) fn part_by_part(
    scop: &Scop,
    points: &PointSchedule<'_>,
    parts: Vec<UnionMap<'_>>,
    piece: &Set<'_>,
    private: &[ArrayId],
    lanes_order: Option<&[usize]>,
    lanes_may_end: bool,
) -> Result<Option<Ast>> {
    let ctx = points.context.ctx();
    let instances = points
        .schedule
        .clone()
        .domain()?
        .intersect_params(piece.clone())?;
    let old = points.schedule.clone().intersect_domain(instances)?;
    let depth = points.iterators.len();
    let o = names("o", depth);
    let mut new = UnionMap::empty(ctx)?;
    for (q, part) in parts.iter().enumerate() {
        let first = UnionMap::read(
            ctx,
            &format!("{{ {} -> [{q}, {}] }}", tuple("", &o), o.join(", ")),
        )?;
        new = new.union(
            old.clone()
                .intersect_domain(part.clone().domain()?)?
                .apply_range(first)?,
        )?;
    }
    if !order_kept(ctx, scop, private, &old, &new)? {
        return Ok(None);
    }
    let band = points.band.clone();
    if let Some(blocked) = rows_in_blocks(
        scop,
        points,
        &parts,
        &old,
        piece,
        private,
        lanes_order,
        lanes_may_end,
    )? {
        return Ok(Some(blocked));
    }
    let mut code = Vec::with_capacity(parts.len());
    let mut any = false;
    for part in parts {
        let alone = points.with_schedule(part);
        let plain = alone.build(Some(piece.clone()), &band)?;
        match register_kernel(
            scop,
            &alone,
            &plain,
            piece,
            private,
            lanes_order,
            lanes_may_end,
        )? {
            Some(kernel) => {
                any = true;
                code.push(kernel);
            }
            None => code.push(plain),
        }
    }
    Ok(any.then(|| Ast::Block(flatten(code))))
}

/// Rows a block of [`rows_in_blocks`] holds: an accumulator kernel's.
pub(crate) const BLOCK_ROWS: i64 = crate::kernel::CHAIN_ROWS;

/// The parts of [`part_by_part`] a block of [`BLOCK_ROWS`] rows at a time: `for` each block of
/// the tile's rows (its outermost point loop, the band's first member), each part over those
/// rows, with its register kernel where one applies; `None` unless some part gets an accumulator
/// kernel there, no instance of one part conflicts with one of another (any interleaving of
/// the parts keeps every conflicting pair's order then), every part's code is one loop over the
/// rows, and the tile's rows are whole blocks. The parts with accumulator kernels run first in
/// each block: bicg's and mvt's sums of rows (`q[i] += A[i][j] * p[j]`) then read the block's
/// rows of `A` from memory, and their updates along the rows (`s[j] += r[i] * A[i][j]`,
/// vectorized) read them again from L1, where the whole tile's sums read them again from L2
/// after all its updates (see the module doc).
#[allow(clippy::too_many_arguments)]
fn rows_in_blocks<'c>(
    scop: &Scop,
    points: &PointSchedule<'c>,
    parts: &[UnionMap<'c>],
    old: &UnionMap<'c>,
    piece: &Set<'c>,
    private: &[ArrayId],
    lanes_order: Option<&[usize]>,
    lanes_may_end: bool,
) -> Result<Option<Ast>> {
    let ctx = points.context.ctx();
    let Some(&row) = points.band.first() else {
        return Ok(None);
    };
    if parts.len() < 2 || points.n_tile < 2 || points.unroll.is_some() {
        return Ok(None);
    }
    let depth = points.iterators.len();
    let row_iter = &points.iterators[row];
    // No conflict between two parts (`conflicts` holds each pair both ways).
    let conflicts = crate::sink::conflicts(ctx, scop, private, old)?;
    for (a, first) in parts.iter().enumerate() {
        for second in parts.iter().skip(a + 1) {
            let across = conflicts
                .clone()
                .intersect_domain(first.clone().domain()?)?
                .intersect_range(second.clone().domain()?)?;
            if !across.is_empty()? {
                return Ok(None);
            }
        }
    }
    // Every part's code in the whole tile: one loop over the rows, of whole blocks, the same
    // for all parts.
    let band = points.band.clone();
    let mut rows_loop: Option<(Expr, Expr)> = None;
    for part in parts {
        let plain = points
            .with_schedule(part.clone())
            .build(Some(piece.clone()), &band)?;
        let Some(Ast::For {
            iter,
            init,
            cond,
            inc,
            ..
        }) = plain.sole()
        else {
            return Ok(None);
        };
        if iter != row_iter || *inc != Expr::Int("1".to_string()) {
            return Ok(None);
        }
        let Expr::Op(OpKind::Le, operands) = cond else {
            return Ok(None);
        };
        let [Expr::Id(x), hi] = operands.as_slice() else {
            return Ok(None);
        };
        if x != row_iter {
            return Ok(None);
        }
        match &rows_loop {
            None => rows_loop = Some((init.clone(), hi.clone())),
            Some((i, h)) if i == init && h == hi => {}
            Some(_) => return Ok(None),
        }
    }
    let Some((lo, hi)) = rows_loop else {
        return Ok(None);
    };
    let rows = crate::kernel::span(&lo, OpKind::Le, &hi);
    if rows.is_none_or(|n| n < 2 * BLOCK_ROWS || n % BLOCK_ROWS != 0) {
        return Ok(None);
    }
    // The block's first row, a parameter of each part's code: the tile's rows in blocks.
    let Some(block) = points.fresh_iterator()? else {
        return Ok(None);
    };
    let o = names("o", depth);
    let tile_rows = old
        .clone()
        .apply_range(UnionMap::read(ctx, &projection(depth, "", &[row]))?)?
        .range()?;
    let row_of = |offset: i64| -> Result<Set<'c>> {
        let at = UnionSet::read(
            ctx,
            &format!("[{block}] -> {{ [r] : r = {block} + {offset} }}"),
        )?;
        tile_rows.clone().intersect(at)?.params()
    };
    let blocks = piece
        .clone()
        .intersect(row_of(0)?)?
        .intersect(row_of(BLOCK_ROWS - 1)?)?;
    let in_block = UnionSet::read(
        ctx,
        &format!(
            "[{block}] -> {{ {} : {block} <= {r} <= {block} + {} }}",
            tuple("", &o),
            BLOCK_ROWS - 1,
            r = o[row]
        ),
    )?;
    // The sums first: they read the block's rows from memory, the other parts then from L1.
    let mut sums = Vec::new();
    let mut rest = Vec::new();
    let mut plain_parts = Vec::new();
    for part in parts {
        let alone = points.with_schedule(part.clone().intersect_range(in_block.clone())?);
        let plain = alone.build(Some(blocks.clone()), &band)?;
        match register_kernel(
            scop,
            &alone,
            &plain,
            &blocks,
            private,
            lanes_order,
            lanes_may_end,
        )? {
            Some(kernel) => {
                let mut accumulating = false;
                kernel.walk(&mut |node| {
                    if let Ast::Kernel(k) = node {
                        accumulating |= k.vector.is_none();
                    }
                });
                match accumulating {
                    true => sums.push(kernel),
                    false => rest.push(kernel),
                }
            }
            None => {
                plain_parts.push(part);
                rest.push(plain);
            }
        }
    }
    if sums.is_empty() {
        return Ok(None);
    }
    // One sum whose rows run as lanes and one update along its loop: the update in the same
    // loop.
    if let ([sum], [update], [part]) = (sums.as_mut_slice(), rest.as_slice(), &plain_parts[..]) {
        let instances = (*part).clone().domain()?;
        let own = conflicts
            .clone()
            .intersect_domain(instances.clone())?
            .intersect_range(instances)?;
        if let Some(Ast::Kernel(k)) = sum.sole_mut() {
            if let Some(fused) = fused_update(scop, points, old, &own, k, update, private)? {
                k.fused = Some(Box::new(fused));
                rest.clear();
            }
        }
    }
    sums.extend(rest);
    Ok(Some(Ast::For {
        iter: block.clone(),
        init: lo,
        cond: Expr::Op(OpKind::Le, vec![Expr::Id(block), hi]),
        inc: Expr::Int(BLOCK_ROWS.to_string()),
        body: Box::new(Ast::Block(flatten(sums))),
    }))
}

/// The update that accumulator kernel `k` (a block of rows of [`rows_in_blocks`]) can run in
/// its lanes loop ([`crate::ast::FusedUpdate`], "One pass" in the module doc), from `update`,
/// the code of the other part over the same rows, when it qualifies: one statement over the
/// kernel's own row and reduction loops
/// (the same bounds), whose iterator along the reduction is one whole coordinate, that runs as
/// vectors along it (`scop_ir::lanes::refusal`: the loop's iterator only as the whole last
/// subscript, plus or minus a constant, of its occurrences), and whose conflicting instances
/// (`own`, from the tile's conflicts) all share their reduction coordinate. The lanes loop runs
/// the update's instances by blocks of columns, a column's rows in order: each element still
/// sees its updates in their order, and the copies that one vector runs at once conflict with
/// none of each other. `None` otherwise.
fn fused_update(
    scop: &Scop,
    points: &PointSchedule<'_>,
    old: &UnionMap<'_>,
    own: &UnionMap<'_>,
    k: &crate::ast::Kernel,
    update: &Ast,
    private: &[ArrayId],
) -> Result<Option<crate::ast::FusedUpdate>> {
    if k.vector.is_some() || k.row_lanes.is_none() || k.fused.is_some() {
        return Ok(None);
    }
    let [row, red] = k.loops.as_slice() else {
        return Ok(None);
    };
    let Some(inner) = loop_body(update, row) else {
        return Ok(None);
    };
    let Some(Ast::User { name, args }) = loop_body(inner, red).and_then(Ast::sole) else {
        return Ok(None);
    };
    let Some((stmt, write)) = crate::kernel::sole_writer(scop, name, private) else {
        return Ok(None);
    };
    let along: Vec<usize> = (0..args.len())
        .filter(|&a| args[a].mentions(&red.iter))
        .collect();
    let [lane] = along.as_slice() else {
        return Ok(None);
    };
    if args[*lane] != Expr::Id(red.iter.clone()) {
        return Ok(None);
    }
    let elem = scop.array(write.array).elem_type.as_str();
    if scop_ir::lanes::refusal(scop, stmt, *lane, elem).is_some() {
        return Ok(None);
    }
    // One vector of the update a step of the lanes: its elements as wide as the sums' (its
    // arrays are all of its element type, `refusal` checks). A float update beside double sums
    // would update eight columns a step of four; no schedule has fused such a pair yet (they
    // share no array: bicg's pair with its update in floats stays two bands under every
    // fusion), so this is a guard, not a tested path.
    let lanes = crate::rows::ROW_LANE_BYTES / (crate::tile_size::element_bytes(elem) as i64).max(1);
    if k.row_lanes != Some(lanes) {
        return Ok(None);
    }
    // Every conflicting pair of the update's instances shares its reduction coordinate.
    let Some(d) = points.iterators.iter().position(|x| *x == red.iter) else {
        return Ok(None);
    };
    let depth = points.iterators.len();
    let (o, p) = (names("o", depth), names("p", depth));
    let same = UnionMap::read(
        points.context.ctx(),
        &format!(
            "{{ {} -> {} : {} = {} }}",
            tuple("", &o),
            tuple("", &p),
            o[d],
            p[d]
        ),
    )?;
    let pairs = own
        .clone()
        .apply_domain(old.clone())?
        .apply_range(old.clone())?;
    if !pairs.is_subset(&same)? {
        return Ok(None);
    }
    Ok(Some(crate::ast::FusedUpdate {
        stmt: name.clone(),
        args: args.clone(),
        lane: *lane,
        plain: update.clone(),
    }))
}

/// The body of `ast` when it is one loop over `l`'s iterator with `l`'s bounds, stepping by
/// one (in blocks of one item).
fn loop_body<'a>(ast: &'a Ast, l: &crate::ast::KernelLoop) -> Option<&'a Ast> {
    let u = ast.unit_loop()?;
    (*u.iter == l.iter && *u.init == l.init && *u.cond == l.cond).then_some(u.body)
}
