//! Scalar expansion: which scalars written in a SCoP (temporaries such as a running sum or a
//! norm) hold values that never cross an iteration of their outer loops, so that giving each
//! iteration its own copy removes the anti and output dependences those loops would otherwise
//! carry, and the SCoP with those scalars expanded into arrays.
//!
//! Live-range analysis, for each rank-0 array `s` written in the SCoP, on the original order:
//! with `F_s` the exact flow dependences through `s` alone (last write to each read),
//! 1. every read of `s` has a source in `F_s` (no value of `s` enters the SCoP, or the loop, from
//!    before it: a read of the initial value would see another iteration's copy), and
//! 2. every pair of `F_s` lies in one iteration of the outermost `ℓ` loops, i.e. their original
//!    2d+1 schedules agree on the first `2ℓ` dimensions (the loops and the statement positions
//!    around them).
//!
//! The largest such `ℓ ≥ 1` is the expansion depth: `s` becomes `s[o1, o3, .., o(2ℓ-1)]`, indexed
//! by the values of those loops (read from the original schedule, so decreasing loops work
//! too). The expanded SCoP computes the same values in its original order, and its dependences
//! no longer order different iterations of those loops through `s`. Scalars whose values flow
//! from one iteration to the next (durbin's `alpha` and `beta`) are not expanded.
//!
//! Arrays written in the SCoP are expanded the same way when they are temporaries of the loops:
//! with the conditions above on their exact (per element) flow, and every iteration of those
//! loops accessing all the elements any iteration accesses (doitgen's `sum[p]`, filled and read
//! by each `(r, q)`: `sum[r, q, p]`; atax's `tmp[i]`, one element per iteration, is not one).
//! Their copies can only be kept in an array of copies ([`crate::materialize`]), so an array
//! whose copies would take more than [`MAX_COPIES_BYTES`] (bounded before its
//! dataflow is computed) is not a candidate.
//!
//! What code generation does with an expansion ([`task_private`]): the SCoP is scheduled and tiled
//! with the expanded dependences, and each task then keeps the scalar in a variable of its own
//! instead of an array of copies, which is enough when, for the final tiled schedule and some
//! level `x >= 0` (a *group* being the instances of one task with equal first `x` point
//! coordinates; level 0 is the whole task),
//! 1. every flow dependence through the scalar lies inside one group (a value never crosses
//!    groups, so never tasks: no task reads another task's copy), and
//! 2. inside one group, every pair of accesses to the scalar, at least one a write, runs in its
//!    original order (a task runs a group's instances one after another, so the one variable
//!    then holds, at each read, the value the original program reads there: a write run
//!    between a read and its source would be in their group and, in the original order, a
//!    later source).
//!
//! Level 0 is tried first; a deeper level accepts a task that reorders iterations of its outer
//! point loops around the scalar's values, as the GPU's point order does for symm (`j` outside
//! `i`, `temp2` living inside one `(i, j)`).
//!
//! The order a task runs its instances in is read off the point coordinates of the nest's
//! schedule alone: the instances of one task share its tile coordinates (the schedule's first
//! dimensions, of which the tile map is the projection), so for them the two orders agree, and
//! the tile coordinates' integer divisions made comparing whole times most of this analysis'
//! cost. A scalar whose values cross tasks (1 at level 0) is refused before the schedules are
//! even read.
//!
//! The user's variable then holds the value of the last write after the SCoP: the task of the
//! tile that runs the lexicographically last write (in the original order) copies its variable
//! back at its end, which needs
//! 3. no write of that task runs after the last write (implied by 2 at level 0).
//!
//! Liveness after the SCoP is not analysed, so that copy is always made. A scalar failing 1, 2
//! or 3 at every level is not privatized: the SCoP is scheduled again with its dependences kept
//! (the original order through it). [`TaskPrivate::last_writes`] names the last write's
//! instance for the GPU, where the copy is made by the thread that runs it.

use crate::isl::{AccessInfo, Ctx, UnionMap, UnionSet};
use crate::maps::{input_error, nest_of_name, pad_to_common_depth, projection};
use crate::scop::ScopSets;
use crate::{NestId, Result, TiledSchedule};
use scop_ir::{Array, ArrayId, Scop};

/// The largest array of copies a scalar may get ([`crate::materialize`]).
pub const MAX_COPIES_BYTES: u64 = 256 << 20;

/// A scalar that may be expanded: each iteration of the outermost `loops` loops around its
/// statements gets its own copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalarExpansion {
    pub array: ArrayId,
    /// How many outer loops index the copies (at least 1).
    pub loops: usize,
}

/// The scalars of `scop` that may be expanded, in array order (see the module documentation).
pub fn scalar_expansions(scop: &Scop) -> Result<Vec<ScalarExpansion>> {
    if !scop.arrays.iter().any(expandable) {
        return Ok(Vec::new());
    }
    let ctx = Ctx::shared()?;
    let sets = ScopSets::parse(ctx, scop)?;
    let (original, depth) = pad_to_common_depth(sets.original.clone())?;
    let mut out = Vec::new();
    for array in scop.arrays.iter().filter(|a| expandable(a)) {
        if array.rank > 0 && !copies_may_fit(ctx, scop, &sets, &original, array)? {
            continue;
        }
        let Some((reads, writes, flow)) = scalar_flow(ctx, scop, &sets, array)? else {
            continue;
        };
        // Loops common to every statement that accesses the scalar.
        let accessing = reads.clone().union(writes.clone())?.domain()?;
        let max_loops = scop
            .statements
            .iter()
            .filter(|s| s.accesses.iter().any(|a| a.array == array.id))
            .map(|s| s.iterators.len())
            .min()
            .unwrap_or(0)
            .min(depth / 2);
        let mut loops = 0;
        for l in 1..=max_loops {
            let prefix: Vec<usize> = (0..2 * l).collect();
            let p = original
                .clone()
                .intersect_domain(accessing.clone())?
                .apply_range(UnionMap::read(ctx, &projection(depth, "", &prefix))?)?;
            let same = p.clone().apply_range(p.reverse()?)?;
            if flow.is_subset(&same)? {
                loops = l;
            } else {
                break;
            }
        }
        // An array is a temporary of those loops only when every iteration of them accesses
        // all of its elements that any does (doitgen's `sum[p]` in each `(r, q)`); `tmp[i]` in
        // the iteration `i` is one element per iteration, which expansion would only spread.
        if array.rank > 0
            && loops > 0
            && !reused_whole(ctx, &original, depth, loops, &reads, &writes)?
        {
            loops = 0;
        }
        if loops > 0 {
            out.push(ScalarExpansion {
                array: array.id,
                loops,
            });
        }
    }
    Ok(out)
}

/// Whether an array's copies, one per iteration of its outermost loop, may fit the bound of an
/// array of copies ([`MAX_COPIES_BYTES`], where an expanded array can only go):
/// the bounding box of the elements accessed times the loop's extent, with the parameters'
/// values known. Checked before the array's dataflow, which is most of the time of this
/// analysis for arrays (heat-3d's `B` is a temporary of each time step, whose 500 copies would
/// take 6.9 GB).
fn copies_may_fit<'c>(
    ctx: &'c Ctx,
    scop: &Scop,
    sets: &ScopSets<'c>,
    original: &UnionMap<'c>,
    array: &Array,
) -> Result<bool> {
    let space = elements_of(ctx, scop, array)?;
    let accesses = sets
        .reads
        .clone()
        .intersect_range(space.clone())?
        .union(sets.writes.clone().intersect_range(space)?)?;
    let Ok([elements]) = <[_; 1]>::try_from(accesses.clone().range()?.coalesce()?.sets()?) else {
        return Ok(false);
    };
    let outer = original
        .clone()
        .intersect_domain(accesses.domain()?)?
        .range()?
        .coalesce()?
        .sets()?;
    let Ok([outer]) = <[_; 1]>::try_from(outer) else {
        return Ok(false);
    };
    let Some((lo, hi)) = outer.dim_range(1)? else {
        return Ok(false);
    };
    let mut bytes = crate::tile_size::element_bytes(&array.elem_type) as f64 * (hi - lo + 1) as f64;
    for d in 0..array.rank {
        let Some((lo, hi)) = elements.dim_range(d)? else {
            return Ok(false);
        };
        bytes *= (hi - lo + 1) as f64;
    }
    Ok(bytes <= MAX_COPIES_BYTES as f64)
}

/// Whether every iteration of the outermost `loops` loops of `original` (padded, `depth`
/// dimensions) accesses, through `reads` and `writes`, every element of the array that some
/// iteration does.
fn reused_whole<'c>(
    ctx: &'c Ctx,
    original: &UnionMap<'c>,
    depth: usize,
    loops: usize,
    reads: &UnionMap<'c>,
    writes: &UnionMap<'c>,
) -> Result<bool> {
    let accesses = reads.clone().union(writes.clone())?;
    let loop_dims: Vec<usize> = (0..loops).map(|k| 2 * k + 1).collect();
    let iteration = original
        .clone()
        .intersect_domain(accesses.clone().domain()?)?
        .apply_range(UnionMap::read(ctx, &projection(depth, "", &loop_dims))?)?;
    let touched = iteration.reverse()?.apply_range(accesses)?;
    let (Ok([iterations]), Ok([elements])) = (
        <[_; 1]>::try_from(touched.clone().domain()?.sets()?),
        <[_; 1]>::try_from(touched.clone().range()?.sets()?),
    ) else {
        return Ok(false);
    };
    let all = UnionMap::from_map(crate::isl::Map::from_domain_and_range(
        iterations, elements,
    )?)?;
    all.is_subset(&touched)
}

/// Whether `array` is a candidate for expansion: a scalar or an array written in the SCoP (a
/// temporary row, doitgen's `sum[p]`, which can only be kept in an array of copies,
/// [`crate::materialize`]).
fn expandable(array: &Array) -> bool {
    array.written
}

/// `scop` with each scalar of `expansions` turned into an array of rank `loops`, every access
/// `S[..] -> s[]` becoming `S[..] -> s[o1, o3, ..]` (the values of the outer loops in the original
/// schedule); an array's subscripts follow them, `S[..] -> a[o1, o3, .., x]` for `S[..] -> a[x]`
/// (its declared `extents` stay those of its own dimensions). Statements and their text are
/// unchanged.
pub fn expand_scalars(scop: &Scop, expansions: &[ScalarExpansion]) -> Result<Scop> {
    let ctx = Ctx::shared()?;
    let mut out = scop.clone();
    for e in expansions {
        let array = scop.array(e.array);
        for (stmt, new_stmt) in scop.statements.iter().zip(out.statements.iter_mut()) {
            // Parsing every statement's schedule for every scalar is a visible share of the
            // compile time of SCoPs with many scalars (deriche): only those that access it.
            if !stmt.accesses.iter().any(|a| a.array == e.array) {
                continue;
            }
            let schedule = UnionMap::read(ctx, &stmt.schedule)
                .map_err(|err| input_error("schedule", &stmt.schedule, err))?;
            let depth = schedule
                .maps()?
                .first()
                .map(|m| m.n_dims(crate::isl::Side::Out))
                .transpose()?
                .unwrap_or(0);
            for access in new_stmt.accesses.iter_mut().filter(|a| a.array == e.array) {
                let loop_dims: Vec<usize> = (0..e.loops).map(|k| 2 * k + 1).collect();
                if loop_dims.iter().any(|&d| d >= depth) {
                    return Err(crate::Error::InvalidInput(format!(
                        "{}: {} is not inside {} loops",
                        stmt.id, array.name, e.loops
                    )));
                }
                let expanded = if array.rank == 0 {
                    schedule.clone().apply_range(UnionMap::read(
                        ctx,
                        &projection(depth, &array.isl_name, &loop_dims),
                    )?)?
                } else {
                    let prefix = schedule
                        .clone()
                        .apply_range(UnionMap::read(ctx, &projection(depth, "", &loop_dims))?)?;
                    let own = UnionMap::read(ctx, &access.relation)
                        .map_err(|err| input_error("access", &access.relation, err))?;
                    let all = crate::maps::names("x", e.loops + array.rank);
                    let name = UnionMap::read(
                        ctx,
                        &format!(
                            "{{ {} -> {} }}",
                            crate::maps::tuple("", &all),
                            crate::maps::tuple(&array.isl_name, &all)
                        ),
                    )?;
                    prefix.flat_range_product(own)?.apply_range(name)?
                };
                access.relation = expanded.to_str()?;
            }
        }
        out.arrays[e.array.index()].rank = e.loops + array.rank;
    }
    Ok(out)
}

/// Every element of `array` (`[params] -> { A[x0, ..] }`, `{ s[] }` for a scalar).
fn elements_of<'c>(ctx: &'c Ctx, scop: &Scop, array: &Array) -> Result<UnionSet<'c>> {
    UnionSet::read(
        ctx,
        &format!(
            "{} -> {{ {} }}",
            scop.isl_params(),
            crate::maps::tuple(&array.isl_name, &crate::maps::names("x", array.rank))
        ),
    )
}

/// The accesses to the scalar `array` (reads, writes) and its exact flow dependences in the
/// original order; `None` when a read has no source (it reads a value from before the SCoP).
pub(crate) fn scalar_flow<'c>(
    ctx: &'c Ctx,
    scop: &Scop,
    sets: &ScopSets<'c>,
    array: &Array,
) -> Result<Option<(UnionMap<'c>, UnionMap<'c>, UnionMap<'c>)>> {
    let element = elements_of(ctx, scop, array)?;
    let reads = sets.reads.clone().intersect_range(element.clone())?;
    let writes = sets.writes.clone().intersect_range(element)?;
    // The schedule of the statements that access the scalar only: the same flow, computed
    // without the rest of the SCoP.
    let accessing = reads.clone().domain()?.union(writes.clone().domain()?)?;
    let flow = AccessInfo::from_sink(reads.clone())?
        .set_must_source(writes.clone())?
        .set_schedule_map(sets.original.clone().intersect_domain(accessing)?)?
        .compute_flow()?
        .may_dependence()?;
    if !reads.clone().domain()?.is_subset(&flow.clone().range()?)? {
        return Ok(None);
    }
    Ok(Some((reads, writes, flow)))
}

/// A scalar that every task keeps in a variable of its own (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskPrivate {
    pub array: ArrayId,
    /// For each nest of the schedule: the tile whose task copies its variable back to the
    /// user's, `[params] -> { N<k>[..] : .. }` (at most one point for any parameter values), or
    /// `None` when the last write is never in that nest.
    pub copy_out: Vec<Option<String>>,
    /// The last write in the original order, per statement that may run it: the statement's
    /// name and the set `[params] -> { S3[..] : .. }` (one instance in all for any parameter
    /// values). The GPU keeps the value that instance writes (`taskgen::emit_cuda`).
    pub last_writes: Vec<(String, String)>,
}

/// The scalars of `expansions` (of the unexpanded `scop`) that may live in one variable per task
/// of `sched`, a schedule of the SCoP with those scalars expanded, in the order of `expansions`.
pub fn task_private(
    scop: &Scop,
    expansions: &[ScalarExpansion],
    sched: &TiledSchedule,
) -> Result<Vec<TaskPrivate>> {
    task_private_reusing(scop, expansions, sched, &mut KnownPrivate::default())
}

/// The answers of [`task_private`] for single scalars, kept between its calls on schedules of one
/// SCoP (the driver's privatization passes), keyed by everything an answer depends on.
///
/// Whether one variable per task serves a scalar, and where its value is copied back, depend only
/// on the statements that access it (their domains, original schedules and accesses to it, and
/// the parameters' context) and on the nests of the schedule that hold those statements (their
/// positions, schedules, tile maps and tile dimensions) with the number of nests. The other nests
/// add no pair of instances: the groups of a level are formed over the accessing statements, and
/// a level past their nests' depth groups them as the deepest one does (see [`Groups::level`]),
/// so it repeats that level's answer. When a pass schedules again with some scalars' dependences
/// kept, the nests of the scalars it keeps are often unchanged (deriche's anti-causal passes):
/// their answers are not computed again.
#[derive(Debug, Default)]
pub struct KnownPrivate(std::collections::HashMap<String, Option<TaskPrivate>>);

impl KnownPrivate {
    /// The key of `array` under `sched`: the text of everything its answer depends on.
    fn key(scop: &Scop, array: ArrayId, sched: &TiledSchedule) -> String {
        use std::fmt::Write;
        let mut key = format!(
            "{}\n{}\n{}\n{}\n",
            scop.array(array).isl_name,
            scop.isl_params(),
            scop.context,
            sched.nests.len()
        );
        for stmt in scop
            .statements
            .iter()
            .filter(|s| s.accesses.iter().any(|a| a.array == array))
        {
            let _ = writeln!(key, "{} {} {}", stmt.id, stmt.domain, stmt.schedule);
            for access in stmt.accesses.iter().filter(|a| a.array == array) {
                let _ = writeln!(key, "{:?} {}", access.kind, access.relation);
            }
        }
        for (k, nest) in sched.nests.iter().enumerate() {
            if nest.statements.iter().any(|s| {
                scop.statements
                    .get(s.index())
                    .is_some_and(|s| s.accesses.iter().any(|a| a.array == array))
            }) {
                let _ = writeln!(
                    key,
                    "N{k} {} {} {}",
                    nest.tile_sizes.len(),
                    nest.schedule,
                    nest.tile_map
                );
            }
        }
        key
    }
}

/// [`task_private`], reusing and adding to the answers in `known`, which must come from calls on
/// the same `scop`'s schedules.
pub fn task_private_reusing(
    scop: &Scop,
    expansions: &[ScalarExpansion],
    sched: &TiledSchedule,
    known: &mut KnownPrivate,
) -> Result<Vec<TaskPrivate>> {
    let keys: Vec<String> = expansions
        .iter()
        .map(|e| KnownPrivate::key(scop, e.array, sched))
        .collect();
    if keys.iter().all(|k| known.0.contains_key(k)) {
        return Ok(keys.iter().filter_map(|k| known.0[k].clone()).collect());
    }
    let ctx = Ctx::shared()?;
    let sets = ScopSets::parse(ctx, scop)?;
    let mut tile_maps = UnionMap::empty(ctx)?;
    for (k, nest) in sched.nests.iter().enumerate() {
        let map = UnionMap::read(ctx, &nest.tile_map)
            .map_err(|e| input_error(&format!("tile map of nest N{k}"), &nest.tile_map, e))?;
        tile_maps = tile_maps.union(map)?;
    }
    // Parsed when a scalar's values stay inside tasks: most refused scalars never need them.
    let mut times = None;
    let mut out = Vec::new();
    for (e, key) in expansions.iter().zip(keys) {
        let answer = match known.0.get(&key) {
            Some(answer) => answer.clone(),
            None => {
                let answer = one_task_private(ctx, &sets, scop, e, &tile_maps, sched, &mut times)?;
                known.0.insert(key, answer.clone());
                answer
            }
        };
        out.extend(answer);
    }
    Ok(out)
}

/// The nests' schedules, for ordering the instances of one task.
struct NestTimes<'c> {
    /// Each nest's padded schedule, its dimensions and its tile dimensions (as in [`Groups`]).
    nests: Vec<(UnionMap<'c>, usize, usize)>,
    /// The order of the instances inside each task: a nest's time without its tile
    /// coordinates, which are one task's own (`Nest::schedule`). Comparing only these point
    /// coordinates is exact for two instances of one task, the only pairs compared, and much
    /// cheaper than comparing whole times, whose tile coordinates are integer divisions.
    points: UnionMap<'c>,
}

impl<'c> NestTimes<'c> {
    fn parse(ctx: &'c Ctx, sched: &TiledSchedule) -> Result<Self> {
        let mut points = UnionMap::empty(ctx)?;
        let mut nests = Vec::with_capacity(sched.nests.len());
        for (k, nest) in sched.nests.iter().enumerate() {
            let time = UnionMap::read(ctx, &nest.schedule)
                .map_err(|e| input_error(&format!("schedule of nest N{k}"), &nest.schedule, e))?;
            let (time, depth) = pad_to_common_depth(time)?;
            let tiles = nest.tile_sizes.len();
            let point_dims: Vec<usize> = (tiles.min(depth)..depth).collect();
            points = points.union(
                time.clone()
                    .apply_range(UnionMap::read(ctx, &projection(depth, "", &point_dims))?)?,
            )?;
            nests.push((time, depth, tiles));
        }
        Ok(NestTimes { nests, points })
    }
}

/// The groups of instances one variable may serve, finest last: level 0 pairs the instances
/// of one task, level `x` those of one task with equal first `x` point coordinates (each nest's
/// padded schedule, `(time, depth, tile dimensions)`); computed when first asked for.
struct Groups<'c> {
    nest_times: Vec<(UnionMap<'c>, usize, usize)>,
    levels: Vec<UnionMap<'c>>,
}

impl<'c> Groups<'c> {
    /// Level `x`, or `None` past the deepest nest's last point dimension. A nest with no
    /// instance here (no access to the scalar) adds no pair; for `x` past a nest's last point
    /// dimension, its pairs are those of that dimension.
    fn level(&mut self, ctx: &'c Ctx, x: usize) -> Result<Option<UnionMap<'c>>> {
        while self.levels.len() <= x {
            let x = self.levels.len();
            if !self
                .nest_times
                .iter()
                .any(|&(_, depth, tiles)| tiles + x <= depth)
            {
                return Ok(None);
            }
            let mut same = UnionMap::empty(ctx)?;
            for (k, (time, depth, tiles)) in self.nest_times.iter().enumerate() {
                let prefix: Vec<usize> = (0..(tiles + x).min(*depth)).collect();
                let p = time.clone().apply_range(UnionMap::read(
                    ctx,
                    &projection(*depth, &format!("N{k}"), &prefix),
                )?)?;
                same = same.union(p.clone().apply_range(p.reverse()?)?)?;
            }
            let same = same.intersect(self.levels[0].clone())?;
            self.levels.push(same);
        }
        Ok(Some(self.levels[x].clone()))
    }
}

/// [`task_private`] for one scalar, with the tile maps of `sched` and its nests' schedules
/// (`times`, parsed when first needed).
fn one_task_private<'c>(
    ctx: &'c Ctx,
    sets: &ScopSets<'c>,
    scop: &Scop,
    expansion: &ScalarExpansion,
    tile_maps: &UnionMap<'c>,
    sched: &TiledSchedule,
    times: &mut Option<NestTimes<'c>>,
) -> Result<Option<TaskPrivate>> {
    let n_nests = sched.nests.len();
    let array = scop.array(expansion.array);
    // One variable per task is for scalars; an array's copies are kept in an array of copies.
    if array.rank > 0 {
        return Ok(None);
    }
    let Some((reads, writes, flow)) = scalar_flow(ctx, scop, sets, array)? else {
        return Ok(None);
    };
    // The groups are formed over the statements that access the scalar only, not over the whole
    // SCoP's pairs of instances (most of this function's time in SCoPs of many statements).
    let accessing = reads.clone().domain()?.union(writes.clone().domain()?)?;
    let tiles = tile_maps.clone().intersect_domain(accessing.clone())?;
    let same_task = tiles.clone().apply_range(tiles.clone().reverse()?)?;
    // 1 at level 0 (a value that crosses tasks crosses the groups of every level), before the
    // schedules are needed.
    if !flow.is_subset(&same_task)? {
        return Ok(None);
    }
    let times = match times {
        Some(t) => t,
        None => times.insert(NestTimes::parse(ctx, sched)?),
    };
    let (nest_times, times) = (&times.nests, &times.points);
    let nest_times = nest_times
        .iter()
        .map(|(time, depth, tiles)| {
            Ok((
                time.clone().intersect_domain(accessing.clone())?,
                *depth,
                *tiles,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut groups = Groups {
        nest_times,
        levels: vec![same_task],
    };
    // The conflicting pairs and the order a task runs them in, the same at every level.
    let mut order = None;
    // 1. Values never cross a group; 2. inside a group, conflicting accesses keep their order.
    let mut x = 0;
    loop {
        let Some(same) = groups.level(ctx, x)? else {
            return Ok(None);
        };
        // Each level is a subset of the one before: a value that crosses groups at this level
        // crosses them at every finer one.
        if !flow.is_subset(&same)? {
            return Ok(None);
        }
        let (conflicts, in_order) = match order.take() {
            Some(order) => order,
            None => conflicts_and_order_per_nest(sets, &reads, &writes, times, &tiles)?,
        };
        if conflicts.clone().intersect(same)?.is_subset(&in_order)? {
            break;
        }
        order = Some((conflicts, in_order));
        x += 1;
    }
    let written = writes.domain()?;
    // The last write: a write with no write after it in the original order.
    let original_writes = sets.original.clone().intersect_domain(written.clone())?;
    let later = original_writes.clone().lex_lt_union_map(original_writes)?;
    let last = written.clone().subtract(later.domain()?)?;
    // 3. No write of its task runs after the last write (implied by 2 for whole tasks).
    if x > 0 {
        let time = times.clone().intersect_domain(written.clone())?;
        let after = time.clone().lex_lt_union_map(time)?.reverse()?;
        let same_task = groups.level(ctx, 0)?.unwrap_or(UnionMap::empty(ctx)?);
        let pairs = same_task
            .intersect_domain(written.clone())?
            .intersect_range(last.clone())?;
        if !pairs.intersect(after)?.is_empty()? {
            return Ok(None);
        }
    }
    let last_tiles = tile_maps
        .clone()
        .intersect_domain(last.clone())?
        .range()?
        .coalesce()?;
    let mut copy_out = vec![None; n_nests];
    for set in last_tiles.sets()? {
        let Some(k) = set
            .tuple_name()
            .as_deref()
            .and_then(nest_of_name)
            .map(NestId::index)
        else {
            return Err(crate::Error::Isl(format!(
                "a tile outside the nests: {}",
                set.to_str()?
            )));
        };
        if k >= copy_out.len() || copy_out[k].is_some() {
            return Err(crate::Error::Isl(format!(
                "unexpected tile set of N{k}: {}",
                last_tiles.to_str()?
            )));
        }
        copy_out[k] = Some(set.to_str()?);
    }
    let last_writes = last
        .coalesce()?
        .sets()?
        .iter()
        .map(|set| Ok((set.tuple_name().unwrap_or_default(), set.to_str()?)))
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(TaskPrivate {
        array: expansion.array,
        copy_out,
        last_writes,
    }))
}

/// Whether one variable per group of instances serves a scalar with accesses `reads` and
/// `writes` and exact flow `flow` (original order): every flow pair lies in one group (`same`,
/// pairs of instances in one group), and inside a group every pair of conflicting accesses (at
/// least one a write) runs in its original order under `time` (instances to a flat time, the
/// order a group's instances run in). Then each read finds in the group's variable the value of
/// its source: a write run between the two would be in their group (a group runs contiguously)
/// and, keeping the original order, would be a later source.
pub(crate) fn one_variable_serves<'c>(
    sets: &ScopSets<'c>,
    reads: &UnionMap<'c>,
    writes: &UnionMap<'c>,
    flow: &UnionMap<'c>,
    same: &UnionMap<'c>,
    time: &UnionMap<'c>,
) -> Result<bool> {
    if !flow.is_subset(same)? {
        return Ok(false);
    }
    let (conflicts, in_order) = conflicts_and_order(sets, reads, writes, time)?;
    conflicts.intersect(same.clone())?.is_subset(&in_order)
}

/// [`conflicts_and_order`] for the pairs of instances in one nest only (`tiles` maps the
/// instances to the tiles `N<k>[..]` of their nest), the only pairs that one task may hold:
/// comparing the instances of different nests, a scalar's accesses in several nests (deriche's
/// `yp1` is accessed in two) would cost as much again, for pairs that are never in one group.
fn conflicts_and_order_per_nest<'c>(
    sets: &ScopSets<'c>,
    reads: &UnionMap<'c>,
    writes: &UnionMap<'c>,
    time: &UnionMap<'c>,
    tiles: &UnionMap<'c>,
) -> Result<(UnionMap<'c>, UnionMap<'c>)> {
    let mut nests: std::collections::BTreeMap<String, UnionSet<'c>> =
        std::collections::BTreeMap::new();
    for map in tiles.maps()? {
        let domain = UnionMap::from_map(map.clone())?.domain()?;
        let nest = map.tuple_name(crate::isl::Side::Out).unwrap_or_default();
        let all = match nests.remove(&nest) {
            Some(all) => all.union(domain)?,
            None => domain,
        };
        nests.insert(nest, all);
    }
    let mut conflicts = UnionMap::empty(reads.ctx())?;
    let mut in_order = UnionMap::empty(reads.ctx())?;
    for domain in nests.into_values() {
        let reads = reads.clone().intersect_domain(domain.clone())?;
        let writes = writes.clone().intersect_domain(domain)?;
        let (c, o) = conflicts_and_order(sets, &reads, &writes, time)?;
        conflicts = conflicts.union(c)?;
        in_order = in_order.union(o)?;
    }
    Ok((conflicts, in_order))
}

/// The pairs of conflicting accesses (at least one a write) of a scalar with accesses `reads`
/// and `writes`, first before second in the original order, and the pairs of its accesses that
/// `time` runs in that order (see [`one_variable_serves`]).
fn conflicts_and_order<'c>(
    sets: &ScopSets<'c>,
    reads: &UnionMap<'c>,
    writes: &UnionMap<'c>,
    time: &UnionMap<'c>,
) -> Result<(UnionMap<'c>, UnionMap<'c>)> {
    let written = writes.clone().domain()?;
    let accessing = reads.clone().domain()?.union(written.clone())?;
    let original = sets.original.clone().intersect_domain(accessing.clone())?;
    let before = original.clone().lex_lt_union_map(original)?;
    let conflicts = before
        .clone()
        .intersect_domain(written.clone())?
        .union(before.intersect_range(written)?)?;
    let time = time.clone().intersect_domain(accessing)?;
    Ok((conflicts, time.clone().lex_lt_union_map(time)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{coarsen, dependences, schedule, ScheduleConfig};

    /// [`conflicts_and_order_per_nest`] keeps every pair of one task that [`conflicts_and_order`]
    /// gives, and no other: on the kernels with scalars, for each scalar, both intersected with
    /// the pairs of one task are equal (and not all empty, or nothing was compared).
    #[test]
    fn conflicts_per_nest_are_those_of_one_task() {
        let mut compared = 0;
        for kernel in ["deriche", "ludcmp", "symm", "gramschmidt", "durbin"] {
            let scop = crate::polybench_scop(kernel);
            let candidates = scalar_expansions(&scop).unwrap();
            let expanded = expand_scalars(&scop, &candidates).unwrap();
            let config = ScheduleConfig {
                tile_sizes: Some(vec![4]),
                ..ScheduleConfig::default()
            };
            let (sched, _) =
                schedule(&expanded, &dependences(&expanded).unwrap(), &config).unwrap();
            let ctx = Ctx::new().unwrap();
            let sets = ScopSets::parse(&ctx, &scop).unwrap();
            let times = NestTimes::parse(&ctx, &sched).unwrap();
            let mut tile_maps = UnionMap::empty(&ctx).unwrap();
            for nest in &sched.nests {
                tile_maps = tile_maps
                    .union(UnionMap::read(&ctx, &nest.tile_map).unwrap())
                    .unwrap();
            }
            for c in &candidates {
                let (reads, writes, _) = scalar_flow(&ctx, &scop, &sets, scop.array(c.array))
                    .unwrap()
                    .unwrap();
                let accessing = reads
                    .clone()
                    .domain()
                    .unwrap()
                    .union(writes.clone().domain().unwrap())
                    .unwrap();
                let tiles = tile_maps.clone().intersect_domain(accessing).unwrap();
                let same_task = tiles
                    .clone()
                    .apply_range(tiles.clone().reverse().unwrap())
                    .unwrap();
                let all = conflicts_and_order(&sets, &reads, &writes, &times.points).unwrap();
                let per_nest =
                    conflicts_and_order_per_nest(&sets, &reads, &writes, &times.points, &tiles)
                        .unwrap();
                for (what, a, b) in [
                    ("conflicts", all.0, per_nest.0),
                    ("order", all.1, per_nest.1),
                ] {
                    let a = a.intersect(same_task.clone()).unwrap();
                    let b = b.intersect(same_task.clone()).unwrap();
                    assert!(
                        a.is_equal(&b).unwrap(),
                        "{kernel} {}: {what}",
                        scop.array(c.array).name
                    );
                    compared += usize::from(!a.is_empty().unwrap());
                }
            }
        }
        assert!(compared > 0);
    }

    /// [`KnownPrivate`] gives the answers a new analysis gives: the driver's passes (schedule with
    /// the candidates expanded, drop those not private, again) on the kernels with scalars, under
    /// several tile sizes with one `KnownPrivate` per kernel (so an answer for one schedule is
    /// also offered to the others), each pass' answers compared with [`task_private`]'s. Some
    /// answers must be reused, or the comparison would test nothing: deriche's second pass under
    /// tiles of 4 x 64 (one of its ten states stays private, in a nest the second pass keeps),
    /// and the answers one tiling offers the next.
    #[test]
    fn known_answers_are_those_of_a_new_analysis() {
        let mut reused = 0;
        for kernel in ["deriche", "ludcmp", "symm", "gramschmidt"] {
            let scop = crate::polybench_scop(kernel);
            let mut known = KnownPrivate::default();
            for tile in [vec![4], vec![64], vec![4, 64], vec![64, 64, 4]] {
                let config = ScheduleConfig {
                    tile_sizes: Some(tile.clone()),
                    ..ScheduleConfig::default()
                };
                let mut candidates = scalar_expansions(&scop).unwrap();
                loop {
                    let expanded = expand_scalars(&scop, &candidates).unwrap();
                    let (sched, _) =
                        schedule(&expanded, &dependences(&expanded).unwrap(), &config).unwrap();
                    let before = known.0.len();
                    let got = task_private_reusing(&scop, &candidates, &sched, &mut known).unwrap();
                    reused += candidates.len() - (known.0.len() - before);
                    assert_eq!(
                        got,
                        task_private(&scop, &candidates, &sched).unwrap(),
                        "{kernel}, tiles of {tile:?}"
                    );
                    if got.len() == candidates.len() {
                        break;
                    }
                    candidates.retain(|c| got.iter().any(|p| p.array == c.array));
                }
            }
        }
        assert!(reused > 0, "no answer was reused");
    }

    /// [`task_private`] orders the instances of one task by their point coordinates alone, which
    /// is exact only because the instances of one tile (`Nest::tile_map`) have equal tile
    /// coordinates (the first `tile_sizes.len()` dimensions of `Nest::schedule`). Checked on the
    /// kernels that write scalars, with the schedules the driver makes (CPU, GPU, and coarsened
    /// to one tile dimension), scalars expanded: this fails if the tile maps stop being the
    /// schedules' prefixes.
    #[test]
    fn the_instances_of_one_task_have_equal_tile_coordinates() {
        let gpu = ScheduleConfig {
            tile_sizes: Some(vec![256]),
            parallel_point_loops_outer: true,
            ..ScheduleConfig::default()
        };
        let small = ScheduleConfig {
            tile_sizes: Some(vec![4]),
            ..ScheduleConfig::default()
        };
        for kernel in ["deriche", "ludcmp", "symm", "gramschmidt", "durbin"] {
            let scop = crate::polybench_scop(kernel);
            let expanded = expand_scalars(&scop, &scalar_expansions(&scop).unwrap()).unwrap();
            let deps = dependences(&expanded).unwrap();
            for config in [ScheduleConfig::default(), gpu.clone(), small.clone()] {
                let (sched, _) = schedule(&expanded, &deps, &config).unwrap();
                for sched in [coarsen(&sched, 1).unwrap(), sched] {
                    let ctx = Ctx::new().unwrap();
                    for (k, nest) in sched.nests.iter().enumerate() {
                        let tiles = UnionMap::read(&ctx, &nest.tile_map).unwrap();
                        let same_tile =
                            tiles.clone().apply_range(tiles.reverse().unwrap()).unwrap();
                        let (time, depth) =
                            pad_to_common_depth(UnionMap::read(&ctx, &nest.schedule).unwrap())
                                .unwrap();
                        let prefix: Vec<usize> = (0..nest.tile_sizes.len()).collect();
                        let p = time
                            .apply_range(
                                UnionMap::read(&ctx, &projection(depth, &format!("N{k}"), &prefix))
                                    .unwrap(),
                            )
                            .unwrap();
                        let same_prefix = p.clone().apply_range(p.reverse().unwrap()).unwrap();
                        assert!(!same_tile.is_empty().unwrap(), "{kernel} N{k}");
                        assert!(
                            same_tile.is_subset(&same_prefix).unwrap(),
                            "{kernel} N{k}: {} / {}",
                            nest.tile_map,
                            nest.schedule
                        );
                    }
                }
            }
        }
    }
}
