//! The order of the point loops inside a tile: which member of a tiled band runs innermost.
//!
//! The ISL scheduler orders a band's members for tiling, not for the code of one tile: gemm's
//! band comes out as `(i, j, k)`, so each tile's innermost loop walks `B[k][j]` down a column and
//! accumulates into `C[i][j]`, which the C compiler can neither vectorize nor stream; the original
//! loop order has `j`, contiguous and parallel, innermost (measured: the tiled code ran 5x slower
//! than the original at MEDIUM). Inside a tile of a permutable band any order of the point loops
//! is legal (every dependence not carried by the tile loops has non-negative distances on every
//! member, so it stays lexicographically non-negative under any permutation, and equal point
//! coordinates leave the order to the dimensions below the band, as before), so the member that
//! is best innermost is moved there, the others keep their order (PLuTo's intra-tile
//! reordering).
//!
//! "Best" is measured, for each member `m`, on the statements of the nest for which the band is
//! the innermost loop (no loop dimension below it): one step of the point loop `m` (the other
//! point coordinates fixed) maps an instance to the next, and for each access the difference
//! of the elements touched classifies it as invariant (no difference), contiguous (`±1` in the
//! last subscript only) or strided (anything else). Score: `+2` contiguous, `+1` invariant, `-4`
//! strided, and `+2` when the member carries no dependence of the nest innermost (a parallel
//! innermost loop vectorizes; a carried one is a reduction or recurrence that stays scalar). The
//! innermost member changes only when another scores strictly higher; skewed bands are handled
//! alike, since the step is taken in the band's own coordinates.
//!
//! For the GPU (`ScheduleConfig::parallel_point_loops_outer`, the CUDA target) the members that
//! carry no dependence inside a tile go first instead, when some but not all do (see
//! `parallel_first`): gemm's `(i, j, k)` stays `(i, j, k)`, so a kernel runs a thread per
//! `(i, j)` with the `k` loop inside, instead of a thread per `i` only.
//!
//! This module only chooses the order; `schedule` applies it to the nest's flat schedule.

use crate::isl::{Ctx, UnionMap, UnionSet};
use crate::maps::{names, tuple};
use crate::steps::{classify, statement_of, Shapes, INVARIANT, STRIDED};
use crate::Result;
use scop_ir::{AccessKind, Scop, StmtId};

const PARALLEL: i64 = 2;

/// The order of the `p` point dimensions (positions `p .. 2p` of the `depth`-dimensional flat
/// schedule `flat` of one nest, after its `p` tile dimensions): a permutation of `0..p`, the
/// identity when no member is better innermost than the last one. `deps` are the SCoP's
/// dependences (flow, anti, output).
pub(crate) fn point_order(
    ctx: &Ctx,
    scop: &Scop,
    flat: &UnionMap<'_>,
    depth: usize,
    p: usize,
    deps: &UnionMap<'_>,
    parallel_outer: bool,
) -> Result<Vec<usize>> {
    let identity: Vec<usize> = (0..p).collect();
    if p < 2 {
        return Ok(identity);
    }
    if parallel_outer {
        if let Some(order) = parallel_first(ctx, flat, depth, p, deps)? {
            return Ok(order);
        }
    }
    let o = names("o", depth);
    // In a band of two members, only the statements with both loops count (see
    // `access_steps`): rows around steps or steps around rows.
    let steps = access_steps(ctx, scop, flat, depth, p, 0..p, p == 2)?;
    if steps.iter().all(Option::is_none) {
        return Ok(identity);
    }
    let mut scores: Vec<i64> = steps
        .iter()
        .map(|classes| classes.iter().flatten().flatten().sum())
        .collect();
    // Dependences of the nest in its own coordinates, for the parallel bonus.
    let deltas = deps
        .clone()
        .apply_domain(flat.clone())?
        .apply_range(flat.clone())?
        .deltas()?;
    for (m, score) in scores.iter_mut().enumerate() {
        let carried = format!("{{ {} : {} }}", tuple("", &o), carried_by(&o, p, m));
        if deltas
            .clone()
            .intersect(crate::isl::UnionSet::read(ctx, &carried)?)?
            .is_empty()?
        {
            *score += PARALLEL;
        }
    }
    let last = p - 1;
    let best = (0..p)
        .rev()
        .max_by_key(|&m| (scores[m], m == last))
        .unwrap_or(last);
    if scores[best] <= scores[last] {
        return Ok(identity);
    }
    let mut order: Vec<usize> = (0..p).filter(|&m| m != best).collect();
    order.push(best);
    Ok(order)
}

/// The order in which the control program enumerates the tiles of the `p`-member band of `flat`
/// (a nest's flat schedule of `depth` dimensions, `p` tile then `p` point dimensions first, the
/// point dimensions in the band's order): tile dimensions outermost first, or empty for the
/// lexicographic order. See [`crate::Nest::spawn_order`].
///
/// Consecutive tasks share what the step between them leaves in place. Along a member whose
/// point step moves an access's element only in its last subscript (or not at all), the next
/// tile touches the same rows of that array, hence the same pages; along one that changes an
/// outer subscript, the next tile touches as many new rows as the tile has, each on its own
/// pages when rows are longer than a page (gemm's `B[k][j]` along `k`: 64 new rows of 8.8 KB
/// per tile at LARGE, 2 600 pages per sweep of `B`'s column of tiles against a second-level TLB
/// of 2 048 entries, and on a VM every miss is a nested page walk). So the member along which
/// the fewest accesses of the statements innermost in the band are strided becomes the
/// innermost tile loop, when it has strictly fewer than the band's last member; the first
/// member stays outermost (a spread stream's threads' blocks are cut along it, and a dependence
/// order that is not free there stays as it was). The dataflow runtime makes any order of the
/// spawns correct; this changes which tiles run one after the other on a thread. Inside a
/// permutable band every order of the tile loops is also a legal sequential order.
///
/// The order pays only where what a sweep of tiles along the new innermost loop keeps for the
/// next sweep (gemm's row of `C`'s tiles) stays in the core's L2; `schedule::tiling` checks that
/// (`sweep_fits`) and keeps the lexicographic order otherwise.
///
/// Measured at LARGE (Xeon, medians of 7 to 15, one thread / two): gemm 1.05-1.06x /
/// 1.01-1.03x (`(i, k, j)`: `B`'s row of tiles is read along its rows, and `C`'s row of tiles
/// stays in L2), correlation 1.11x / 1.03x and covariance 1.10x / 1.09x (their product's
/// `data[k][i]` and `data[k][j]` both strided along `k`); 2mm, 3mm and symm within their noise
/// (0.96-1.02x); syrk keeps its order (`A[j][k]` strided along `j`); lu and ludcmp, 0.95-0.99x
/// spawned `(i, k, j)`, keep theirs (their sweeps do not fit).
pub(crate) fn spawn_order(row_moves: &[Option<usize>]) -> Vec<usize> {
    let p = row_moves.len();
    if p < 3 {
        // With two members the first stays outermost: nothing to choose.
        return Vec::new();
    }
    let last = p - 1;
    let strided = |m: usize| row_moves[m].unwrap_or(0);
    let best = (1..p)
        .filter(|&m| row_moves[m].is_some())
        .min_by_key(|&m| (strided(m), m != last))
        .unwrap_or(last);
    if best == last || strided(best) >= strided(last) {
        return Vec::new();
    }
    (0..p)
        .filter(|&m| m != best)
        .chain(std::iter::once(best))
        .collect()
}

/// For each member of the `p`-member band of `flat` (a nest's flat schedule of `depth`
/// dimensions, `p` tile then `p` point dimensions first, the point dimensions in the band's
/// order): how many accesses of the statements whose innermost loop is in the band one step
/// along it moves to other rows of their array (some piece of the step strided), `None` where it
/// moves none of those statements. A step of the tile loop along that member moves the same
/// accesses: [`spawn_order`] puts the member with the fewest innermost, and
/// [`crate::spawn_groups`] reorders a member's tile loops only where the new innermost moves no
/// more of them than its own.
pub(crate) fn row_moves(
    ctx: &Ctx,
    scop: &Scop,
    flat: &UnionMap<'_>,
    depth: usize,
    p: usize,
) -> Result<Vec<Option<usize>>> {
    let steps = access_steps(ctx, scop, flat, depth, p, 0..p, false)?;
    Ok(steps
        .iter()
        .map(|classes| {
            classes.as_ref().map(|classes| {
                classes
                    .iter()
                    .filter(|pieces| pieces.contains(&STRIDED))
                    .count()
            })
        })
        .collect())
}

/// For each point member `m` of `members` (of the `p`-member band of `flat`, a nest's flat
/// schedule of `depth` dimensions, `p` tile then `p` point dimensions first): what one step of
/// `m` (the other point coordinates fixed) does to each access of the statements whose innermost
/// loop is in the band, as [`classify`] scores it, one score per piece of the access's
/// difference and one list per access; `None` for the members not asked and those that move
/// none of these statements. With `deepest_only`, only the statements with the most loops
/// count: deriche's backward pass zeroes four running values once per row, outside its loop
/// over the row, and those accesses (contiguous along the rows) outweighed the recurrence's
/// own, so the rows ran innermost, scalar (their elements a row apart), where its forward pass
/// runs its rows as vector lanes step by step. Only for two-member bands: syrk's product, whose
/// three-member band also holds its scaling `C[i][j] *= beta`, ran 13% slower in the order its
/// product alone would choose.
fn access_steps(
    ctx: &Ctx,
    scop: &Scop,
    flat: &UnionMap<'_>,
    depth: usize,
    p: usize,
    members: std::ops::Range<usize>,
    deepest_only: bool,
) -> Result<Vec<Option<Vec<Vec<i64>>>>> {
    let o = names("o", depth);
    let steps: Vec<(usize, UnionMap<'_>)> = members
        .map(|m| Ok((m, UnionMap::read(ctx, &step_map(&o, p, m))?)))
        .collect::<Result<_>>()?;
    let mut shapes = Shapes::default();
    let mut out: Vec<Option<Vec<Vec<i64>>>> = vec![None; p];
    let mut deepest = 0;
    if deepest_only {
        for stmt_map in flat.maps()? {
            if let Some(stmt) = innermost_in_band(scop, &stmt_map, p, depth)? {
                deepest = deepest.max(stmt.iterators.len());
            }
        }
    }
    for stmt_map in flat.maps()? {
        // Only statements whose innermost loop is in the band: every dimension below is fixed.
        let Some(stmt) = innermost_in_band(scop, &stmt_map, p, depth)? else {
            continue;
        };
        if stmt.iterators.len() < deepest {
            continue;
        }
        let sched = UnionMap::from_map(stmt_map)?;
        let accesses: Vec<UnionMap<'_>> = stmt
            .accesses
            .iter()
            .map(|a| UnionMap::read(ctx, &a.relation))
            .collect::<Result<_>>()?;
        for (m, step) in &steps {
            let next = sched
                .clone()
                .apply_range(step.clone())?
                .apply_range(sched.clone().reverse()?)?;
            if next.is_empty()? {
                continue; // the member does not move this statement
            }
            let classes = out[*m].get_or_insert_with(Vec::new);
            for access in &accesses {
                let moved = next
                    .clone()
                    .apply_domain(access.clone())?
                    .apply_range(access.clone())?;
                let mut pieces = Vec::new();
                for diff in moved.maps()? {
                    pieces.push(classify(ctx, diff.deltas()?, &mut shapes)?);
                }
                classes.push(pieces);
            }
        }
    }
    Ok(out)
}

/// Whether point member `m` of the `p`-member band of `flat` (a nest's flat schedule of `depth`
/// dimensions, `p` tile then `p` point dimensions first) accumulates: some statement whose
/// innermost loop is in the band writes, along one step of `m` (the other point coordinates
/// fixed), the same element again. Keeping that element in a register across a few steps of `m`
/// (unroll-and-jam, [`crate::tile_code`]) saves a load and a store per step.
pub(crate) fn accumulates(
    ctx: &Ctx,
    scop: &Scop,
    flat: &UnionMap<'_>,
    depth: usize,
    p: usize,
    m: usize,
) -> Result<bool> {
    if m >= p {
        return Ok(false);
    }
    let o = names("o", depth);
    let step = UnionMap::read(ctx, &step_map(&o, p, m))?;
    let mut shapes = Shapes::default();
    for stmt_map in flat.maps()? {
        let Some(stmt) = innermost_in_band(scop, &stmt_map, p, depth)? else {
            continue;
        };
        let sched = UnionMap::from_map(stmt_map)?;
        let next = sched
            .clone()
            .apply_range(step.clone())?
            .apply_range(sched.reverse()?)?;
        if next.is_empty()? {
            continue;
        }
        for access in stmt.accesses.iter().filter(|a| a.kind == AccessKind::Write) {
            let access = UnionMap::read(ctx, &access.relation)?;
            let moved = next
                .clone()
                .apply_domain(access.clone())?
                .apply_range(access)?;
            if moved.is_empty()? {
                continue;
            }
            let mut all_invariant = true;
            for diff in moved.maps()? {
                all_invariant &= classify(ctx, diff.deltas()?, &mut shapes)? == INVARIANT;
            }
            if all_invariant {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// For each statement of `flat` (a nest's flat schedule of `depth` dimensions, `p` tile then `p`
/// point dimensions first), the instances where a read that does not change along the
/// statement's innermost loop (an invariant load, `path[i][k]` in floyd-warshall's `j` loop)
/// touches the element the statement writes (`path[i][j]` at `j = k`), as a set of the
/// statement's instances (ISL text), with the schedule dimension of that loop; only when there
/// are such instances and they are not all of them. Elsewhere the loop's stores cannot change
/// that read, which is what the C compiler must know to vectorize the loop: cut there
/// ([`crate::tile_code`]), its run-time alias check passes on the pieces around the cut.
pub(crate) fn aliased_invariant_reads(
    ctx: &Ctx,
    scop: &Scop,
    flat: &UnionMap<'_>,
    depth: usize,
    p: usize,
) -> Result<Vec<(StmtId, String, usize)>> {
    let mut out = Vec::new();
    let o = names("o", depth);
    let mut shapes = Shapes::default();
    for stmt_map in flat.maps()? {
        let Some(stmt) = statement_of(scop, &stmt_map) else {
            continue;
        };
        // The innermost loop: the last dimension that is not a constant for this statement.
        let mut innermost = None;
        for pos in (p..depth).rev() {
            if stmt_map.plain_fixed_out(pos)?.is_none() {
                innermost = Some(pos);
                break;
            }
        }
        let Some(q) = innermost else {
            continue;
        };
        let step = if q < 2 * p {
            step_map(&o, p, q - p)
        } else {
            crate::steps::step(&o, q)
        };
        let step = UnionMap::read(ctx, &step)?;
        let sched = UnionMap::from_map(stmt_map)?;
        let domain = sched.clone().domain()?;
        let next = sched
            .clone()
            .apply_range(step)?
            .apply_range(sched.reverse()?)?;
        if next.is_empty()? {
            continue;
        }
        let mut aliased = UnionSet::empty(ctx)?;
        for read in stmt.accesses.iter().filter(|a| a.kind == AccessKind::Read) {
            let read_map = UnionMap::read(ctx, &read.relation)?.intersect_domain(domain.clone())?;
            let moved = next
                .clone()
                .apply_domain(read_map.clone())?
                .apply_range(read_map.clone())?;
            let mut invariant = !moved.is_empty()?;
            for diff in moved.maps()? {
                invariant &= classify(ctx, diff.deltas()?, &mut shapes)? == INVARIANT;
            }
            if !invariant {
                continue;
            }
            for write in stmt
                .accesses
                .iter()
                .filter(|a| a.kind == AccessKind::Write && a.array == read.array)
            {
                let write_map = UnionMap::read(ctx, &write.relation)?;
                aliased = aliased.union(write_map.intersect(read_map.clone())?.domain()?)?;
            }
        }
        let aliased = aliased.coalesce()?;
        if aliased.is_empty()? || domain.is_subset(&aliased)? {
            continue;
        }
        out.push((stmt.id, aliased.to_str()?, q));
    }
    Ok(out)
}

/// For the GPU ([`crate::ScheduleConfig::parallel_point_loops_outer`]): the members that carry
/// no dependence inside a tile (every dependence between two instances of one tile has distance
/// 0 on them) first, in their order, then the others; `None` when all or none are such. A loop
/// over such a member is parallel wherever it is placed, so the parallel loops come outermost and
/// nest directly in each other, and a kernel maps two of them to threads (CUDA's `y` and `x`)
/// around the sequential loops.
fn parallel_first(
    ctx: &Ctx,
    flat: &UnionMap<'_>,
    depth: usize,
    p: usize,
    deps: &UnionMap<'_>,
) -> Result<Option<Vec<usize>>> {
    let deltas = deps
        .clone()
        .apply_domain(flat.clone())?
        .apply_range(flat.clone())?
        .deltas()?;
    let o = names("o", depth);
    let same_tile: Vec<String> = (0..p).map(|j| format!("{} = 0", o[j])).collect();
    let mut parallel = Vec::with_capacity(p);
    for m in 0..p {
        let mut cond = same_tile.clone();
        cond.push(format!("({v} < 0 or {v} > 0)", v = o[p + m]));
        let carried = format!("{{ {} : {} }}", tuple("", &o), cond.join(" and "));
        parallel.push(
            deltas
                .clone()
                .intersect(crate::isl::UnionSet::read(ctx, &carried)?)?
                .is_empty()?,
        );
    }
    let count = parallel.iter().filter(|&&x| x).count();
    if count == 0 || count == p {
        return Ok(None);
    }
    Ok(Some(
        (0..p)
            .filter(|&m| parallel[m])
            .chain((0..p).filter(|&m| !parallel[m]))
            .collect(),
    ))
}

/// The statement `stmt_map` schedules when its innermost loop is in the band (every dimension
/// of the `depth`-dimensional flat schedule below the `p` tile and `p` point dimensions is a
/// constant for it).
fn innermost_in_band<'s>(
    scop: &'s Scop,
    stmt_map: &crate::isl::Map<'_>,
    p: usize,
    depth: usize,
) -> Result<Option<&'s scop_ir::Statement>> {
    let Some(stmt) = statement_of(scop, stmt_map) else {
        return Ok(None);
    };
    for pos in 2 * p..depth {
        if stmt_map.plain_fixed_out(pos)?.is_none() {
            return Ok(None);
        }
    }
    Ok(Some(stmt))
}

/// `{ [o..] -> [o'..] }`: one step of point dimension `m`, the other point dimensions and the
/// dimensions below the band unchanged (tile dimensions follow from the point ones).
fn step_map(o: &[String], p: usize, m: usize) -> String {
    let out: Vec<String> = o
        .iter()
        .enumerate()
        .map(|(k, v)| {
            if k < p {
                format!("{v}_")
            } else if k == p + m {
                format!("{v} + 1")
            } else {
                v.clone()
            }
        })
        .collect();
    format!("{{ {} -> {} }}", tuple("", o), tuple("", &out))
}

/// The condition that a difference of schedule times is carried by point dimension `m` when it is
/// innermost: zero on the other point dimensions, non-zero on `m`.
fn carried_by(o: &[String], p: usize, m: usize) -> String {
    let mut parts: Vec<String> = (0..p)
        .filter(|&j| j != m)
        .map(|j| format!("{} = 0", o[p + j]))
        .collect();
    parts.push(format!("({v} < 0 or {v} > 0)", v = o[p + m]));
    parts.join(" and ")
}
