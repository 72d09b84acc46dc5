//! A member of the tiled band sunk below the loops under the band, inside each tile, when that
//! gives the statements a better innermost loop.
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

use crate::astgen::PointSchedule;
use crate::isl::{Ctx, Side, UnionMap};
use crate::maps::{names, projection, tuple};
use crate::point_order::{classify, Shapes};
use crate::scop::stmt_of_name;
use crate::Result;
use frontend::ir::{AccessKind, ArrayId, Scop};

/// A statement with `l` loops counts `WEIGHT^l` in the gain of a sinking.
const WEIGHT: f64 = 100.0;

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
    if p == 0 || depth <= p || points.band != (0..p).collect::<Vec<_>>() {
        return Ok(None);
    }
    let ctx = points.context.ctx();
    let o = names("o", depth);
    let steps: Vec<UnionMap<'_>> = (0..depth)
        .map(|q| UnionMap::read(ctx, &step(&o, q)))
        .collect::<Result<_>>()?;
    let mut shapes = Shapes::default();
    let mut gains = vec![0.0f64; p];
    let mut below = false;
    for stmt_map in points.schedule.maps()? {
        let Some(stmt) = stmt_map
            .tuple_name(Side::In)
            .as_deref()
            .and_then(stmt_of_name)
            .and_then(|s| scop.statements.get(s.index()))
        else {
            continue;
        };
        let sched = UnionMap::from_map(stmt_map)?;
        // The instance one step of each dimension leads to (empty when it does not move it).
        let mut next = Vec::with_capacity(depth);
        for step in &steps {
            let n = sched
                .clone()
                .apply_range(step.clone())?
                .apply_range(sched.clone().reverse()?)?;
            next.push((!n.is_empty()?).then_some(n));
        }
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
            cut: points.cut.iter().filter_map(|&d| position(d)).collect(),
        };
        return Ok(Some((sunk, m)));
    }
    Ok(None)
}

/// Whether `new` runs, in the same order as `old` (two schedules of the same instances), every
/// two instances that access one element, at least one of them writing it (see the module doc
/// for scalars).
fn order_kept<'c>(
    ctx: &'c Ctx,
    scop: &Scop,
    private: &[ArrayId],
    old: &UnionMap<'c>,
    new: &UnionMap<'c>,
) -> Result<bool> {
    let instances = old.clone().domain()?;
    let mut all = UnionMap::empty(ctx)?;
    let mut writes = UnionMap::empty(ctx)?;
    for stmt_map in old.maps()? {
        let Some(stmt) = stmt_map
            .tuple_name(Side::In)
            .as_deref()
            .and_then(stmt_of_name)
            .and_then(|s| scop.statements.get(s.index()))
        else {
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
                writes = writes.union(map.clone())?;
            }
            all = all.union(map)?;
        }
    }
    let conflicts = writes
        .clone()
        .apply_range(all.clone().reverse()?)?
        .union(all.apply_range(writes.reverse()?)?)?;
    let before = conflicts.intersect(old.clone().lex_lt_union_map(old.clone())?)?;
    before.is_subset(&new.clone().lex_lt_union_map(new.clone())?)
}

/// `{ [o..] -> [o'..] }`: one step of dimension `q`, the others unchanged.
fn step(o: &[String], q: usize) -> String {
    let out: Vec<String> = o
        .iter()
        .enumerate()
        .map(|(k, v)| {
            if k == q {
                format!("{v} + 1")
            } else {
                v.clone()
            }
        })
        .collect();
    format!("{{ {} -> {} }}", tuple("", o), tuple("", &out))
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
        let points = PointSchedule::of(&scop, &sched, 0, &names("t", 2), "c").unwrap();
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
        let points = PointSchedule::of(&scop, &sched, 0, &names("t", 2), "c").unwrap();
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
            let points = PointSchedule::of(&scop, &sched, k, &names("t", p), "c").unwrap();
            assert!(sink_band_member(&scop, &points, &[]).unwrap().is_none());
        }
    }
}
