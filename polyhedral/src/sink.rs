//! The innermost loops of a tile's code, reordered where the C compiler gets a better one: a
//! member of the tiled band sunk below the loops under the band ([`sink_band_member`]), or the
//! innermost point loop distributed over its statements ([`distribute_innermost`]).
//!
//! ## Sinking a band member
//!
//! [`crate::point_order`] chooses which band member runs innermost among the point loops, which
//! serves the statements whose innermost loop is in the band. A statement with loops of its own
//! under the band keeps them innermost, whatever their accesses: gramschmidt's band is `(k, j)`
//! and under it `R[k][j] += Q[i][k] * A[i][j]` and `A[i][j] -= Q[i][k] * R[k][j]` each have an
//! `i` loop that walks two columns (a cache line per element, gathers at best). Moving the `j`
//! point loop below them (`for i { for j { ... } }`, each `i` loop with its own `j` loop inside:
//! the band member is distributed over the statements and interchanged with their loops) makes
//! every access contiguous or invariant along the innermost loop, which vectorizes.
//!
//! The choice, per nest, on the schedule of one tile (tile coordinates as parameters): for each
//! band member `m`, every statement's innermost loop is `m` once `m` is last, when `m` moves the
//! statement at all, and stays what it was otherwise; each access along one step of that loop is
//! scored as in [`crate::point_order`] (contiguous, invariant, strided), and the gain of `m` is
//! the sum of the statements' score changes, a statement weighted by [`WEIGHT`] to the power of
//! its number of loops (the deepest statements hold nearly all the instances). The member with the
//! largest positive gain is sunk, if that is legal.
//!
//! Legality is not implied by the band (the loops below it are not in it), so it is checked: the
//! permuted schedule must keep, for every pair of instances of one tile that access one element
//! with at least one write, the order the tile's schedule gives them (a memory-based check, which
//! needs no dataflow analysis and is exact for the question asked). A scalar kept in one variable
//! per task (`private`, expanded in the SCoP given here) or written in the SCoP counts as that one
//! element for every instance, which is what the task's code accesses. Instances of different
//! tiles keep their order through the tile dimensions, which the permutation does not touch.
//!
//! ## Distributing the innermost loop
//!
//! A time-skewed stencil's statements share the innermost point loop, shifted against each other:
//! in jacobi-2d's tiles `A[i-1][j-1] = f(B)` runs beside `B[i][j] = f(A)`, and the first stores at
//! `j + 1` the element of `A` the second loads at `j`. Vectorized, the stores of a vector's lanes
//! would come before the loads of the earlier lanes, so the C compiler keeps the loop scalar.
//! One loop per statement, in an order that keeps every dependence, has none: measured on
//! jacobi-2d at LARGE (tasks, 2 threads), 0.61 s -> 0.31 s, and fdtd-2d 0.48 s -> 0.25 s.
//!
//! It is done when every statement of the nest is at one point of the band with nothing below it
//! (constants order them, or nothing does: ISL then picks an order in the loop's body), the
//! innermost loop carries a dependence that goes back in its body (to the same statement or an
//! earlier one; statements that no constant orders count as both) or a flow at a fixed distance
//! (below), the statements' dependence graph within one iteration of the outer loops has no
//! cycle, and in the distributed loops no dependence is carried. A loop whose carried
//! dependences all go forward in its body vectorizes as it is (lu's), and distributing it only
//! costs loop overhead (measured 5% on lu), except where a statement loads, a fixed number of
//! iterations later, what another stored (jacobi-1d: `B[i] = f(A[i-1..i+1])` then
//! `A[i-1] = f(B[i-2..i])`): each vector load then overlaps, shifted, vector stores that have not
//! reached the cache, which the processor cannot forward to it, and waits for them. jacobi-1d's
//! vectorized tiles ran 3x slower than its untiled loops on one thread; distributed, 1.6x faster
//! (EXTRALARGE, tiles `64 × 256`). A flow is at a fixed distance when a step of both instances
//! along the loop keeps it a flow; lu's, from the one instance of a row that divides to the
//! row's later elements, is not. The loops follow the graph's topological order, ties in their
//! original order, and the result passes the same memory-based check as a sinking.

use crate::astgen::{uncopied_dims, PointSchedule};
use crate::isl::{Ctx, Set, Side, UnionMap, UnionSet};
use crate::maps::{names, projection, tuple};
use crate::steps::{classify, next_instances, statement_of, step, unit_steps, Shapes};
use crate::Result;
use scop_ir::{AccessKind, ArrayId, Scop};

/// A statement with `l` loops counts `WEIGHT^l` in the gain of a sinking.
pub(crate) const WEIGHT: f64 = 100.0;

/// `points` with one band member moved innermost (below every dimension), and that member, when
/// that is legal and gives the statements better innermost loops (see the module doc); `None`
/// otherwise.
pub(crate) fn sink_band_member<'c>(
    scop: &Scop,
    points: &PointSchedule<'c>,
    private: &[ArrayId],
) -> Result<Option<(PointSchedule<'c>, usize)>> {
    let p = points.n_tile;
    let depth = points.iterators.len();
    if p == 0 || depth <= p || !points.band_in_order() {
        return Ok(None);
    }
    let ctx = points.context.ctx();
    let o = names("o", depth);
    let steps = unit_steps(ctx, &o)?;
    let mut shapes = Shapes::default();
    let mut gains = vec![0.0f64; p];
    let mut below = false;
    for stmt_map in points.schedule.maps()? {
        let Some(stmt) = statement_of(scop, &stmt_map) else {
            continue;
        };
        let next = next_instances(&UnionMap::from_map(stmt_map)?, &steps)?;
        let loops: Vec<usize> = (0..depth).filter(|&q| next[q].is_some()).collect();
        let Some(&innermost) = loops.last() else {
            continue;
        };
        below |= innermost >= p;
        let accesses: Vec<UnionMap<'_>> = stmt
            .accesses
            .iter()
            .map(|a| UnionMap::read(ctx, &a.relation))
            .collect::<Result<_>>()?;
        let mut score = |q: usize| -> Result<i64> {
            let Some(n) = &next[q] else { return Ok(0) };
            let mut s = 0;
            for access in &accesses {
                let moved = n
                    .clone()
                    .apply_domain(access.clone())?
                    .apply_range(access.clone())?;
                for diff in moved.maps()? {
                    s += classify(ctx, diff.deltas()?, &mut shapes)?;
                }
            }
            Ok(s)
        };
        let old = score(innermost)?;
        let weight = WEIGHT.powi(loops.len() as i32);
        for (m, gain) in gains.iter_mut().enumerate() {
            let new_innermost = if next[m].is_some() {
                m
            } else {
                match loops.iter().rev().find(|&&q| q != m) {
                    Some(&q) => q,
                    None => continue,
                }
            };
            if new_innermost != innermost {
                *gain += weight * (score(new_innermost)? - old) as f64;
            }
        }
    }
    if !below {
        return Ok(None);
    }
    let mut candidates: Vec<usize> = (0..p).filter(|&m| gains[m] > 0.0).collect();
    candidates.sort_by(|&a, &b| gains[b].total_cmp(&gains[a]));
    for m in candidates {
        let keep: Vec<usize> = (0..depth).filter(|&q| q != m).chain([m]).collect();
        let schedule = points
            .schedule
            .clone()
            .apply_range(UnionMap::read(ctx, &projection(depth, "", &keep))?)?;
        if !order_kept(ctx, scop, private, &points.schedule, &schedule)? {
            continue;
        }
        let position = |d: usize| keep.iter().position(|&k| k == d);
        let sunk = PointSchedule {
            context: points.context.clone(),
            schedule,
            iterators: points.iterators.clone(),
            separate: Some(depth - 1),
            n_tile: p,
            band: (0..p).filter_map(position).collect(),
            unroll: None,
            cut: points.cut.iter().filter_map(|&d| position(d)).collect(),
            shift: points.shift.clone(),
        };
        return Ok(Some((sunk, m)));
    }
    Ok(None)
}

/// `points` with the innermost point loop of the band distributed over the statements in it,
/// in an order of theirs that keeps every dependence (see the module doc), and that order; when
/// the loop carries a dependence between its statements and none of the distributed loops does.
/// Only for nests whose statements have no loops under the band.
pub(crate) fn distribute_innermost<'c>(
    scop: &Scop,
    points: &PointSchedule<'c>,
    private: &[ArrayId],
) -> Result<Option<(PointSchedule<'c>, Vec<String>)>> {
    let p = points.n_tile;
    if p == 0 || !points.band_in_order() || !points.cut.is_empty() {
        return Ok(None);
    }
    let ctx = points.context.ctx();
    // Without the dimensions that copy others (the original schedule's `[i, j, i, 0, j, 0]`),
    // as the code is built anyway.
    let kept = uncopied_dims(&points.schedule, points.iterators.len())?;
    if kept.len() < p || kept[..p] != points.band[..] {
        return Ok(None);
    }
    let depth = kept.len();
    let old = &points.schedule.clone().apply_range(UnionMap::read(
        ctx,
        &projection(points.iterators.len(), "", &kept),
    )?)?;
    let q = p - 1;
    // Statements at one point of the band with nothing below it to order them (a stencil's
    // shifted statements) get a dimension for their rank, with an iterator name of its own.
    let mut iterators: Vec<String> = kept.iter().map(|&d| points.iterators[d].clone()).collect();
    if depth == p {
        let Some(name) = points.fresh_iterator()? else {
            return Ok(None);
        };
        iterators.push(name);
    }
    let new_depth = iterators.len();
    // The statements, by the constants that order them below the band.
    let mut stmts: Vec<(Vec<i64>, String)> = Vec::new();
    for stmt_map in old.maps()? {
        let Some(name) = stmt_map.tuple_name(Side::In) else {
            return Ok(None);
        };
        let mut key = Vec::with_capacity(depth - p);
        for pos in p..depth {
            match stmt_map.plain_fixed_out(pos)? {
                Some(v) => key.push(v),
                None => return Ok(None), // a loop under the band
            }
        }
        stmts.push((key, name));
    }
    if stmts.len() < 2 {
        return Ok(None);
    }
    stmts.sort();
    let before = conflicts(ctx, scop, private, old)?
        .intersect(old.clone().lex_lt_union_map(old.clone())?)?;
    let o = names("o", depth);
    let o2: Vec<String> = o.iter().map(|v| format!("{v}_")).collect();
    let same_prefix = |upto: usize| -> Result<UnionMap<'c>> {
        let eq: Vec<String> = (0..upto).map(|k| format!("{} = {}", o2[k], o[k])).collect();
        let cond = if eq.is_empty() {
            String::new()
        } else {
            format!(" : {}", eq.join(" and "))
        };
        UnionMap::read(
            ctx,
            &format!("{{ {} -> {}{cond} }}", tuple("", &o), tuple("", &o2)),
        )
    };
    // Pairs of one iteration of the loops around the innermost one.
    let same_outer = old
        .clone()
        .apply_range(same_prefix(q)?)?
        .apply_range(old.clone().reverse()?)?;
    let inner = before.clone().intersect(same_outer)?;
    if inner.is_empty()? {
        return Ok(None);
    }
    // Does the innermost loop carry one (instances at different points of it)?
    let same_point = old
        .clone()
        .apply_range(same_prefix(q + 1)?)?
        .apply_range(old.clone().reverse()?)?;
    let carried = inner.clone().subtract(same_point)?;
    // The C compiler vectorizes a loop whose carried dependences all go forward in its body (from
    // a statement to a later one); one that goes to the same statement or an earlier one (or
    // between statements whose order in the body ISL picks: no constant orders them) stops it.
    let key = |name: Option<String>| {
        name.and_then(|n| stmts.iter().find(|(_, m)| *m == n).map(|(k, _)| k.clone()))
    };
    let mut backward = false;
    for pair in carried.maps()? {
        let (Some(a), Some(b)) = (
            key(pair.tuple_name(Side::In)),
            key(pair.tuple_name(Side::Out)),
        ) else {
            return Ok(None);
        };
        backward |= b <= a;
    }
    // One whose carried dependences all go forward vectorizes, but where a statement loads, at
    // a fixed distance, what an earlier iteration stored (jacobi-1d's `A[i-1] = f(B[i-2..i])`
    // after `B[i] = f(A)`), each vector load overlaps, shifted, vector stores still on their way
    // to the cache, which the processor cannot forward: every such load waits for them (jacobi-1d
    // ran 3x slower than its untiled loops). A flow at a fixed distance is one that a step of both
    // instances along the loop keeps; lu's, from the one instance that divides to a row's later
    // elements, is not (its load is invariant along the loop).
    if !backward {
        let flow = carried.intersect(flows(ctx, scop, private, old)?)?;
        let next = old
            .clone()
            .apply_range(UnionMap::read(ctx, &step(&o, q))?)?
            .apply_range(old.clone().reverse()?)?;
        let shifted = next
            .clone()
            .apply_range(flow.clone())?
            .apply_range(next.reverse()?)?;
        if flow.intersect(shifted)?.is_empty()? {
            return Ok(None);
        }
    }
    // The order of the distributed loops: the statements' dependence graph in one iteration of
    // the outer loops, topologically, ties in their original order; a cycle forbids it.
    let index = |name: &str| stmts.iter().position(|(_, n)| n == name);
    let mut edges = vec![Vec::new(); stmts.len()];
    for pair in inner.maps()? {
        let (Some(a), Some(b)) = (
            pair.tuple_name(Side::In).as_deref().and_then(index),
            pair.tuple_name(Side::Out).as_deref().and_then(index),
        ) else {
            return Ok(None);
        };
        if a != b && !edges[a].contains(&b) {
            edges[a].push(b);
        }
    }
    let mut indegree = vec![0usize; stmts.len()];
    for targets in &edges {
        for &b in targets {
            indegree[b] += 1;
        }
    }
    let mut order = Vec::with_capacity(stmts.len());
    let mut done = vec![false; stmts.len()];
    while order.len() < stmts.len() {
        let Some(next) = (0..stmts.len()).find(|&k| !done[k] && indegree[k] == 0) else {
            return Ok(None); // a cycle: the statements cannot be distributed
        };
        done[next] = true;
        order.push(next);
        for &b in &edges[next] {
            indegree[b] -= 1;
        }
    }
    // The schedule: the outer loops, the statement's rank, the innermost loop, zeros.
    let mut schedule = UnionMap::empty(ctx)?;
    for stmt_map in old.maps()? {
        let Some(rank) = stmt_map
            .tuple_name(Side::In)
            .as_deref()
            .and_then(index)
            .and_then(|k| order.iter().position(|&r| r == k))
        else {
            return Ok(None);
        };
        let mut out: Vec<String> = o[..q].to_vec();
        out.push(rank.to_string());
        out.push(o[q].clone());
        out.resize(new_depth, "0".to_string());
        let to = UnionMap::read(
            ctx,
            &format!("{{ {} -> {} }}", tuple("", &o), tuple("", &out)),
        )?;
        schedule = schedule.union(UnionMap::from_map(stmt_map)?.apply_range(to)?)?;
    }
    if !order_kept(ctx, scop, private, old, &schedule)? {
        return Ok(None);
    }
    // Each distributed loop must be free of carried dependences, or nothing is won.
    let n = names("n", new_depth);
    let n2: Vec<String> = n.iter().map(|v| format!("{v}_")).collect();
    let eq: Vec<String> = (0..=q).map(|k| format!("{} = {}", n2[k], n[k])).collect();
    let same_rank = UnionMap::read(
        ctx,
        &format!(
            "{{ {} -> {} : {} }}",
            tuple("", &n),
            tuple("", &n2),
            eq.join(" and ")
        ),
    )?;
    let after = conflicts(ctx, scop, private, &schedule)?
        .apply_domain(schedule.clone())?
        .apply_range(schedule.clone())?
        .intersect(same_rank)?
        .deltas()?;
    let carried = UnionSet::read(
        ctx,
        &format!(
            "{{ {} : {} < 0 or {} > 0 }}",
            tuple("", &n),
            n[q + 1],
            n[q + 1]
        ),
    )?;
    if !after.intersect(carried)?.is_empty()? {
        return Ok(None);
    }
    let mut band: Vec<usize> = (0..q).collect();
    band.push(q + 1);
    let distributed = PointSchedule {
        context: points.context.clone(),
        schedule,
        iterators,
        separate: Some(q + 1),
        n_tile: p,
        band,
        unroll: None,
        cut: Vec::new(),
        shift: points.shift.clone(),
    };
    let names = order.iter().map(|&k| stmts[k].1.clone()).collect();
    Ok(Some((distributed, names)))
}

/// Whether `new` runs, in the same order as `old` (two schedules of the same instances), every
/// two instances that access one element, at least one of them writing it (see the module doc
/// for scalars).
pub(crate) fn order_kept<'c>(
    ctx: &'c Ctx,
    scop: &Scop,
    private: &[ArrayId],
    old: &UnionMap<'c>,
    new: &UnionMap<'c>,
) -> Result<bool> {
    let before = conflicts(ctx, scop, private, old)?
        .intersect(old.clone().lex_lt_union_map(old.clone())?)?;
    let lt = || new.clone().lex_lt_union_map(new.clone());
    // The pairs' distances in `new`'s order must all be lexicographically positive: checked in
    // the schedule's space (one point per distance) rather than against every pair of instances
    // `new` orders (a union over the depth, each with the strips' `mod` of `crate::chains`): the
    // check of adi's jammed rows took 0.33 s that way, 0.16 s this way.
    let distances = before
        .clone()
        .apply_domain(new.clone())?
        .apply_range(new.clone())?
        .deltas()?;
    for set in distances.sets()? {
        if set.tuple_name().is_some() {
            // Not a schedule space of this crate's (they are anonymous): the pairs themselves.
            return before.is_subset(&lt()?);
        }
        let d = names("d", set.n_dims()?);
        let mut not_after: Vec<String> = (0..d.len())
            .map(|k| {
                let mut terms: Vec<String> = d[..k].iter().map(|x| format!("{x} = 0")).collect();
                terms.push(format!("{} < 0", d[k]));
                terms.join(" and ")
            })
            .collect();
        not_after.push(match d.is_empty() {
            true => "true".into(),
            false => d
                .iter()
                .map(|x| format!("{x} = 0"))
                .collect::<Vec<_>>()
                .join(" and "),
        });
        let not_after = Set::read(
            ctx,
            &format!("{{ [{}] : {} }}", d.join(", "), not_after.join(" or ")),
        )?;
        if !set.intersect(not_after)?.is_empty()? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The pairs of instances scheduled by `schedule` that access one element, at least one of them
/// writing it, in both directions; a scalar of `private` or written in the SCoP is one element
/// for all instances (see the module doc).
pub(crate) fn conflicts<'c>(
    ctx: &'c Ctx,
    scop: &Scop,
    private: &[ArrayId],
    schedule: &UnionMap<'c>,
) -> Result<UnionMap<'c>> {
    let (writes, reads) = accesses(ctx, scop, private, schedule)?;
    let all = writes.clone().union(reads)?;
    writes
        .clone()
        .apply_range(all.clone().reverse()?)?
        .union(all.apply_range(writes.reverse()?)?)
}

/// The pairs (writer, reader) of instances scheduled by `schedule` where the reader loads an
/// element the writer stores (in either order; elements as in [`conflicts`]).
fn flows<'c>(
    ctx: &'c Ctx,
    scop: &Scop,
    private: &[ArrayId],
    schedule: &UnionMap<'c>,
) -> Result<UnionMap<'c>> {
    let (writes, reads) = accesses(ctx, scop, private, schedule)?;
    writes.apply_range(reads.reverse()?)
}

/// The write and the read accesses of the instances scheduled by `schedule`, each instance to the
/// elements it accesses (elements as in [`conflicts`]).
fn accesses<'c>(
    ctx: &'c Ctx,
    scop: &Scop,
    private: &[ArrayId],
    schedule: &UnionMap<'c>,
) -> Result<(UnionMap<'c>, UnionMap<'c>)> {
    let instances = schedule.clone().domain()?;
    let mut reads = UnionMap::empty(ctx)?;
    let mut writes = UnionMap::empty(ctx)?;
    for stmt_map in schedule.maps()? {
        let Some(stmt) = statement_of(scop, &stmt_map) else {
            continue;
        };
        for access in &stmt.accesses {
            let mut map = UnionMap::read(ctx, &access.relation)?;
            let one_cell = private.contains(&access.array)
                || scop
                    .arrays
                    .get(access.array.0 as usize)
                    .is_some_and(|a| a.rank == 0);
            if one_cell {
                for m in map.maps()? {
                    let (Some(name), n) = (m.tuple_name(Side::Out), m.n_dims(Side::Out)?) else {
                        continue;
                    };
                    let x = names("x", n);
                    let to_cell = format!("{{ {} -> {name}[] }}", tuple(&name, &x));
                    map = map.apply_range(UnionMap::read(ctx, &to_cell)?)?;
                    break;
                }
            }
            let map = map.intersect_domain(instances.clone())?;
            if access.kind == AccessKind::Write {
                writes = writes.union(map)?;
            } else {
                reads = reads.union(map)?;
            }
        }
    }
    Ok((writes, reads))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::maps::names;
    use crate::{dependences, schedule, ScheduleConfig};

    /// gramschmidt's one nest at MINI with tiles of 8, and the schedule of one of its tiles.
    fn gramschmidt() -> (Scop, crate::TiledSchedule) {
        let scop = crate::polybench_scop("gramschmidt");
        let deps = dependences(&scop).unwrap();
        let cfg = ScheduleConfig {
            tile_sizes: Some(vec![8]),
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&scop, &deps, &cfg).unwrap();
        assert_eq!(sched.nests.len(), 1, "{:?}", sched.nests);
        assert_eq!(sched.nests[0].tile_sizes.len(), 2, "band (k, j)");
        (scop, sched)
    }

    #[test]
    fn gramschmidts_column_loop_is_sunk_below_its_row_loops() {
        let (scop, sched) = gramschmidt();
        let points =
            PointSchedule::of(&scop, &sched, crate::NestId(0), &names("t", 2), "c").unwrap();
        let (sunk, member) = sink_band_member(&scop, &points, &[])
            .unwrap()
            .expect("j is sunk");
        assert_eq!(member, 1, "the band is (k, j): j goes innermost");
        let depth = points.iterators.len();
        assert_eq!(sunk.band, vec![0, depth - 1]);
        // The tile code has the updates' innermost loop over the sunk iterator, inside an `i`
        // loop: `for (c5 ..) for (c8 ..) S5(..)`.
        let ast = sunk.build(None, &[depth - 1]).unwrap();
        let inner = &sunk.iterators[depth - 1];
        let mut innermost_of_s5 = Vec::new();
        fn find(ast: &crate::Ast, loops: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
            match ast {
                crate::Ast::For { iter, body, .. } => {
                    loops.push(iter.clone());
                    find(body, loops, out);
                    loops.pop();
                }
                crate::Ast::Block(items) => items.iter().for_each(|i| find(i, loops, out)),
                crate::Ast::If { then, els, .. } => {
                    find(then, loops, out);
                    if let Some(e) = els {
                        find(e, loops, out);
                    }
                }
                crate::Ast::User { name, .. } if name == "S5" => out.push(loops.clone()),
                _ => {}
            }
        }
        find(&ast, &mut Vec::new(), &mut innermost_of_s5);
        assert!(!innermost_of_s5.is_empty(), "{ast:?}");
        for loops in &innermost_of_s5 {
            assert_eq!(loops.last(), Some(inner), "{loops:?}");
            assert_eq!(loops.len(), 3, "k, i, then j: {loops:?}");
        }
    }

    #[test]
    fn a_member_that_carries_a_dependence_past_the_inner_loops_may_not_sink() {
        // Moving k innermost would run S5 at k + 1 (which reads A[i][j]) before S6 at k (which
        // writes it) for the rows after i: the check must refuse it, and accept j.
        let (scop, sched) = gramschmidt();
        let points =
            PointSchedule::of(&scop, &sched, crate::NestId(0), &names("t", 2), "c").unwrap();
        let ctx = points.context.ctx();
        let depth = points.iterators.len();
        let moved = |m: usize| {
            let keep: Vec<usize> = (0..depth).filter(|&q| q != m).chain([m]).collect();
            points
                .schedule
                .clone()
                .apply_range(UnionMap::read(ctx, &projection(depth, "", &keep)).unwrap())
                .unwrap()
        };
        assert!(!order_kept(ctx, &scop, &[], &points.schedule, &moved(0)).unwrap());
        assert!(order_kept(ctx, &scop, &[], &points.schedule, &moved(1)).unwrap());
        // The identity keeps every order.
        assert!(order_kept(ctx, &scop, &[], &points.schedule, &points.schedule).unwrap());
    }

    #[test]
    fn nests_whose_loops_are_all_in_the_band_are_left_alone() {
        let scop = crate::polybench_scop("jacobi-2d");
        let deps = dependences(&scop).unwrap();
        let (sched, _) = schedule(&scop, &deps, &ScheduleConfig::default()).unwrap();
        for k in 0..sched.nests.len() {
            let p = sched.nests[k].tile_sizes.len();
            let points =
                PointSchedule::of(&scop, &sched, crate::NestId::new(k), &names("t", p), "c")
                    .unwrap();
            assert!(sink_band_member(&scop, &points, &[]).unwrap().is_none());
        }
    }

    /// The first SCoP of a C source, in its original order (one nest, the statements in the
    /// order written), tiled with tiles of 8.
    fn scheduled_source(text: &str) -> (Scop, crate::TiledSchedule) {
        let (file, _) =
            frontend::parse_source("test.c", text, &frontend::Options::default()).unwrap();
        let scop = file.scops.into_iter().next().expect("a SCoP");
        let deps = dependences(&scop).unwrap();
        let cfg = ScheduleConfig {
            tile_sizes: Some(vec![8]),
            original: true,
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&scop, &deps, &cfg).unwrap();
        (scop, sched)
    }

    fn distributed(scop: &Scop, sched: &crate::TiledSchedule) -> Option<Vec<String>> {
        assert_eq!(sched.nests.len(), 1);
        let p = sched.nests[0].tile_sizes.len();
        let points = PointSchedule::of(scop, sched, crate::NestId(0), &names("t", p), "c").unwrap();
        distribute_innermost(scop, &points, &[])
            .unwrap()
            .map(|(_, order)| order)
    }

    #[test]
    fn a_time_skewed_stencils_innermost_loop_is_distributed() {
        // jacobi-2d's two statements share the innermost point loop, shifted by one: S1 (`A =
        // f(B)`, one row and column behind) stores at `j + 1` an element of `A` that S0 (`B =
        // f(A)`) loads at `j`. One loop each, S0's first, keeps that order and leaves no
        // dependence in either loop.
        let scop = crate::polybench_scop("jacobi-2d");
        let deps = dependences(&scop).unwrap();
        let cfg = ScheduleConfig {
            tile_sizes: Some(vec![4]),
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&scop, &deps, &cfg).unwrap();
        assert_eq!(
            distributed(&scop, &sched),
            Some(vec!["S0".into(), "S1".into()])
        );
    }

    #[test]
    fn statements_that_feed_each_other_along_the_loop_stay_together() {
        // Each statement reads what the other wrote one step before: a cycle, no distribution.
        let (scop, sched) = scheduled_source(
            "void f(int n, double A[n][n], double B[n][n]) {
#pragma scop
  for (int i = 1; i < n; i++)
    for (int j = 1; j < n; j++) {
      A[i][j] = B[i][j - 1] + A[i - 1][j];
      B[i][j] = A[i][j - 1] * 0.5;
    }
#pragma endscop
}",
        );
        assert_eq!(distributed(&scop, &sched), None);
    }

    #[test]
    fn a_loop_that_carries_nothing_is_not_distributed() {
        // Two independent updates: the loop vectorizes as it is.
        let (scop, sched) = scheduled_source(
            "void f(int n, double A[n][n], double B[n][n]) {
#pragma scop
  for (int i = 1; i < n; i++)
    for (int j = 1; j < n; j++) {
      A[i][j] = A[i - 1][j] * 0.5;
      B[i][j] = B[i - 1][j] + 1.0;
    }
#pragma endscop
}",
        );
        assert_eq!(distributed(&scop, &sched), None);
    }

    #[test]
    fn a_backward_dependence_gets_the_statements_reordered() {
        // S0 at j loads what S1 stored at j - 1 (a flow from S1 to S0 that the loop carries):
        // S1's loop goes first.
        let (scop, sched) = scheduled_source(
            "void f(int n, double A[n][n], double B[n][n], double C[n][n]) {
#pragma scop
  for (int i = 1; i < n; i++)
    for (int j = 1; j < n; j++) {
      A[i][j] = B[i][j - 1] + C[i - 1][j];
      B[i][j] = C[i][j] * 0.5;
    }
#pragma endscop
}",
        );
        assert_eq!(
            distributed(&scop, &sched),
            Some(vec!["S1".into(), "S0".into()])
        );
    }

    #[test]
    fn a_forward_flow_at_a_fixed_distance_is_distributed() {
        // S1 at j loads B[i][j - 1], which S0 stored one step before: the loop vectorizes as it
        // is, but each vector load would overlap, shifted, the vector store before it.
        let (scop, sched) = scheduled_source(
            "void f(int n, double A[n][n], double B[n][n], double C[n][n]) {
#pragma scop
  for (int i = 1; i < n; i++)
    for (int j = 1; j < n; j++) {
      B[i][j] = C[i][j] * 0.5;
      A[i][j] = B[i][j - 1] + B[i][j];
    }
#pragma endscop
}",
        );
        assert_eq!(
            distributed(&scop, &sched),
            Some(vec!["S0".into(), "S1".into()])
        );
    }

    #[test]
    fn jacobi_1ds_skewed_statements_are_distributed() {
        let scop = crate::polybench_scop("jacobi-1d");
        let deps = dependences(&scop).unwrap();
        let cfg = ScheduleConfig {
            tile_sizes: Some(vec![4]),
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&scop, &deps, &cfg).unwrap();
        assert_eq!(
            distributed(&scop, &sched),
            Some(vec!["S0".into(), "S1".into()])
        );
    }

    #[test]
    fn a_forward_flow_from_an_invariant_load_is_not_distributed() {
        // S0 stores A[i][k] once per k (at j = k); S1 loads it at every later j of the row, where
        // it is invariant along the loop: no shifted vector load, nothing to gain (lu's rows).
        let (scop, sched) = scheduled_source(
            "void f(int n, double A[n][n], double B[n][n]) {
#pragma scop
  for (int i = 0; i < n; i++)
    for (int k = 0; k < n; k++)
      for (int j = k; j < n; j++) {
        if (j == k)
          A[i][k] = A[i][k] * 0.5;
        B[i][j] = B[i][j] - A[i][k] * B[k][j];
      }
#pragma endscop
}",
        );
        assert_eq!(distributed(&scop, &sched), None);
    }
}
