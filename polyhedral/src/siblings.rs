//! Sibling loops fused inside a tile: where the scheduler leaves, under the band, independent
//! groups of statements one after the other, each with a loop over the same values (gesummv's
//! `tmp[i] += A[i][j] * x[j]` and `y[i] += B[i][j] * x[j]`, each with its own `j` loop after
//! its initialization), the groups run in one loop, each iteration running one group's
//! statements, then the next's.
//!
//! The ISL scheduler puts such groups in a `set` (no order between them), and the code ran one
//! `j` loop over `B`'s rows, then one over `A`'s: two passes over `x`, and a memory-bound tile
//! streaming one array at a time. gcc's original reads both rows in one loop. Measured by hand
//! on gesummv at EXTRALARGE (one thread, medians of 11 runs in rounds, a noisy hour): 8.9 ms in
//! two loops, 7.5 ms in one, gcc's original 8.3.
//!
//! The transformation is a schedule: the first dimension under the band where the statements'
//! constants differ, and where every statement has one, becomes the first group's constant for
//! all, and its old value a new innermost dimension, so that at each point of the loops the
//! groups' instances keep their old order. It is done when there are two groups or more, their
//! loops under that dimension have the same values ([`same_loops`]), no instance of a group
//! accesses an element that another group's instance writes inside a tile (the groups are
//! independent, so every order of theirs is legal and a loop that vectorized alone still does
//! fused), and the new order keeps every conflicting pair's ([`crate::sink::order_kept`]).

use crate::astgen::PointSchedule;
use crate::isl::{Side, UnionMap};
use crate::maps::{names, projection, tuple};
use crate::sink::{conflicts, order_kept};
use crate::Result;
use scop_ir::{ArrayId, Scop};

/// `points` with the sibling groups' loops fused (see the module doc) and the groups, each its
/// statements' names; `None` where they do not qualify.
pub(crate) fn fuse_siblings<'c>(
    scop: &Scop,
    points: &PointSchedule<'c>,
    private: &[ArrayId],
) -> Result<Option<(PointSchedule<'c>, Vec<Vec<String>>)>> {
    let p = points.n_tile;
    let depth = points.iterators.len();
    if p == 0 || !points.band_in_order() || depth <= p + 1 {
        return Ok(None);
    }
    let ctx = points.context.ctx();
    let old = &points.schedule;
    // Each statement's constants under the band (`None` at its loops).
    let mut stmts: Vec<(String, Vec<Option<i64>>)> = Vec::new();
    for map in old.maps()? {
        let Some(name) = map.tuple_name(Side::In) else {
            return Ok(None);
        };
        let fixed = (p..depth)
            .map(|pos| map.plain_fixed_out(pos))
            .collect::<Result<Vec<_>>>()?;
        stmts.push((name, fixed));
    }
    // The first dimension `d` under the band where statements that share their constants
    // before it (a cohort) have two values or more, each with a loop under it.
    let Some((d, (first, groups))) =
        (0..depth - p).find_map(|d| Some((d, siblings_at(&stmts, d)?)))
    else {
        return Ok(None);
    };
    let group_of = |name: &str| groups.iter().position(|g| g.iter().any(|n| n == name));
    let d = p + d;
    let mut parts = vec![UnionMap::empty(ctx)?; groups.len()];
    let mut rest = UnionMap::empty(ctx)?;
    for map in old.maps()? {
        let part = map.tuple_name(Side::In).as_deref().and_then(group_of);
        let map = UnionMap::from_map(map)?;
        match part {
            Some(g) => parts[g] = parts[g].clone().union(map)?,
            None => rest = rest.union(map)?,
        }
    }
    if !same_loops(points, &parts, d)? {
        return Ok(None);
    }
    // Independent: no conflict between instances of different groups (`conflicts` holds both
    // directions of each pair).
    let all = conflicts(ctx, scop, private, old)?;
    for (a, pa) in parts.iter().enumerate() {
        for pb in &parts[a + 1..] {
            if !all
                .clone()
                .intersect_domain(pa.clone().domain()?)?
                .intersect_range(pb.clone().domain()?)?
                .is_empty()?
            {
                return Ok(None);
            }
        }
    }
    let Some(fresh) = points.fresh_iterator()? else {
        return Ok(None);
    };
    // The cohort's statements at the first group's value of `d`, their own value last; the
    // others, which a constant before `d` orders against the cohort, at 0 last.
    let o = names("o", depth);
    let map_to = |out: &[String]| {
        UnionMap::read(
            ctx,
            &format!("{{ {} -> {} }}", tuple("", &o), tuple("", out)),
        )
    };
    let mut fused_dims: Vec<String> = o.clone();
    fused_dims[d] = first.to_string();
    fused_dims.push(o[d].clone());
    let mut kept_dims: Vec<String> = o.clone();
    kept_dims.push("0".to_string());
    let mut schedule = rest.apply_range(map_to(&kept_dims)?)?;
    for part in parts {
        schedule = schedule.union(part.apply_range(map_to(&fused_dims)?)?)?;
    }
    if !order_kept(ctx, scop, private, old, &schedule)? {
        return Ok(None);
    }
    let mut fused = points.with_schedule(schedule);
    fused.iterators.push(fresh);
    Ok(Some((fused, groups)))
}

/// The groups of statements (by name) that are siblings at dimension `d` under the band
/// (`d` counted from the band's end) in `stmts` (each statement's constants there, `None` at its
/// loops): the first cohort of statements with the same constants before `d` and one at `d`
/// that holds two values or more there, each value's statements with a loop under `d`. Returns
/// the smallest value and the groups, by value.
fn siblings_at(stmts: &[(String, Vec<Option<i64>>)], d: usize) -> Option<(i64, Vec<Vec<String>>)> {
    let mut cohorts: Vec<(&[Option<i64>], Vec<usize>)> = Vec::new();
    for (k, (_, c)) in stmts.iter().enumerate() {
        if c[..=d].iter().any(Option::is_none) {
            continue;
        }
        match cohorts.iter_mut().find(|(prefix, _)| *prefix == &c[..d]) {
            Some((_, members)) => members.push(k),
            None => cohorts.push((&c[..d], vec![k])),
        }
    }
    cohorts.into_iter().find_map(|(_, members)| {
        let mut values: Vec<i64> = members.iter().filter_map(|&k| stmts[k].1[d]).collect();
        values.sort_unstable();
        values.dedup();
        let groups: Vec<Vec<String>> = values
            .iter()
            .map(|v| {
                let mut group: Vec<String> = members
                    .iter()
                    .filter(|&&k| stmts[k].1[d] == Some(*v))
                    .map(|&k| stmts[k].0.clone())
                    .collect();
                group.sort();
                group
            })
            .collect();
        let has_loop = |group: &[String]| {
            stmts
                .iter()
                .filter(|(n, _)| group.contains(n))
                .any(|(_, c)| c[d + 1..].iter().any(Option::is_none))
        };
        (groups.len() >= 2 && groups.iter().all(|g| has_loop(g))).then(|| (values[0], groups))
    })
}

/// Whether the groups' instances (`parts`, pieces of `points`' schedule) take the same values
/// at the loops under dimension `d` (with the dimensions before `d`): their schedules' ranges,
/// projected on those dimensions, are equal.
fn same_loops(points: &PointSchedule<'_>, parts: &[UnionMap<'_>], d: usize) -> Result<bool> {
    let ctx = points.context.ctx();
    let depth = points.iterators.len();
    let keep: Vec<usize> = (0..depth).filter(|&k| k != d).collect();
    let proj = UnionMap::read(ctx, &projection(depth, "", &keep))?;
    let mut first = None;
    for part in parts {
        let range = part
            .clone()
            .apply_range(proj.clone())?
            .range()?
            .coalesce()?;
        match &first {
            None => first = Some(range),
            Some(f) => {
                if !range.is_equal(f)? {
                    return Ok(false);
                }
            }
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{dependences, schedule, NestId, ScheduleConfig};

    /// The groups `fuse_siblings` fuses in the one nest of `text`'s SCoP (tiles of 16), and the
    /// statements' instances in the fused schedule's order for the first tile.
    fn fused(text: &str) -> Option<Vec<Vec<String>>> {
        let (file, _) = frontend::parse_source("t.c", text, &frontend::Options::default()).unwrap();
        let scop = file.scops.into_iter().next().expect("a SCoP");
        let deps = dependences(&scop).unwrap();
        let cfg = ScheduleConfig {
            tile_sizes: Some(vec![16]),
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&scop, &deps, &cfg).unwrap();
        assert_eq!(sched.nests.len(), 1, "{sched}");
        let p = sched.nests[0].tile_sizes.len();
        let points = PointSchedule::of(&scop, &sched, NestId(0), &names("t", p), "c").unwrap();
        fuse_siblings(&scop, &points, &[])
            .unwrap()
            .map(|(_, groups)| groups)
    }

    /// A SCoP over `i` whose body is `body` (rows of 64, columns of `cols`).
    fn rows(body: &str, cols: usize) -> String {
        format!(
            "double A[64][64], B[64][64], x[64], y[64], t[64], z[64];
void f(void) {{
#pragma scop
  for (int i = 0; i < 64; i++) {{
{body}
  }}
#pragma endscop
}}"
        )
        .replace("COLS", &cols.to_string())
    }

    #[test]
    fn independent_reductions_over_the_same_loop_run_in_one() {
        // gesummv's two products: each row's `t[i]` and `y[i]` sums, independent of each other.
        let body = "    t[i] = 0.0;
    for (int j = 0; j < COLS; j++) t[i] += A[i][j] * x[j];
    y[i] = 0.0;
    for (int j = 0; j < COLS; j++) y[i] += B[i][j] * x[j];
    z[i] = t[i] + y[i];";
        let groups = fused(&rows(body, 64)).expect("fused");
        assert_eq!(groups.len(), 2, "{groups:?}");
        let mut all: Vec<String> = groups.concat();
        all.sort();
        assert_eq!(all, vec!["S0", "S1", "S2", "S3"], "{groups:?}");
        // Loops over different values stay apart.
        let uneven = body.replacen("j < COLS", "j < 32", 1);
        assert_eq!(fused(&rows(&uneven, 64)), None);
    }

    #[test]
    fn a_reduction_that_reads_another_group_stays_after_it() {
        // The second sum reads the first one's finished value: fused, its first step would read
        // a partial sum.
        let body = "    t[i] = 0.0;
    for (int j = 0; j < COLS; j++) t[i] += A[i][j] * x[j];
    y[i] = 0.0;
    for (int j = 0; j < COLS; j++) y[i] += B[i][j] * t[i];";
        assert_eq!(fused(&rows(body, 64)), None);
    }
}
