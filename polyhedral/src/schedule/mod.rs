//! Scheduling and tiling: the ISL scheduler (or the original order) gives a schedule tree, whose
//! outermost nests are found, tiled and flattened into [`Nest`]s.
//!
//! Fusion heuristics ([`Fuse`]) map to ISL scheduler options (the default algorithm, with
//! validity = proximity = coincidence = flow ∪ anti ∪ output, the SCoP context and the bounds
//! below):
//! - `Min`: `schedule_serialize_sccs` — every strongly connected component of the dependence
//!   graph gets its own loop nest (maximal distribution).
//! - `Smart`: ISL's defaults — clustering of strongly connected components, fusing those that
//!   share a band without losing band depth or coincidence.
//! - `Max`: `schedule_whole_component` — each weakly connected component is scheduled as a whole
//!   (maximal fusion; components without dependences between them stay separate).
//!
//! `schedule_outer_coincidence` stays off: a time-iterated stencil has no coincident outer
//! dimension, and with the option on ISL gives it one-member bands, i.e. a chain of
//! one-dimensional time tiles with no parallelism between them. With it off, ISL finds skewed
//! multi-dimensional permutable bands, whose tiles run as wavefronts under the dataflow runtime.
//! Coincidence constraints are still given, so ISL prefers parallel band members when it can.
//! The GPU is the exception ([`ScheduleConfig::parallel_point_loops_outer`], the cuda target):
//! there the option is on, as in PPCG. Time then stays a sequential loop on the host and the
//! space dimensions form a coincident inner band whose points become threads: jacobi-2d at
//! SMALL makes 2 launches per time step (80) instead of one launch per point (612K) in skewed
//! time tiles, and cholesky, floyd-warshall, jacobi-1d, nussinov and seidel-2d get a parallel
//! loop, which their time tiles lacked.
//!
//! Bounded work. ISL's scheduler spends its time in the integer linear programs of each band
//! (`isl_tab_basic_set_non_trivial_lexmin`, measured with perf on PolyBench), whose cost grows
//! with the statements scheduled together and with the size of the numbers involved. So:
//! - schedule coefficients are bounded by [`ScheduleConfig::max_coefficient`] (4) and constant
//!   terms by [`ScheduleConfig::max_constant_term`] (8), as PLuTo bounds them. Unbounded constant
//!   terms made ISL search shifts up to the problem sizes (PolyBench's sizes are constants):
//!   trisolv took 2 s of CPU instead of 0.07 s. Where no schedule row fits the bounds, ISL falls
//!   back to carrying dependences one by one, so the bounds never make a schedule illegal;
//! - the validity, proximity and coincidence constraints are the flow ∪ anti ∪ output
//!   dependences without repeated pieces (see `deps::drop_subsumed`);
//! - a SCoP of more than [`ScheduleConfig::max_whole_statements`] (9) statements is scheduled
//!   *inside* its outermost source loops: the statements are grouped as in the original order
//!   (below), each group's outermost loop is kept, and ISL schedules the group with only the
//!   dependences within one iteration of that loop (the others are carried by it). When every
//!   dependence of the group has non-negative distances on the loop and on the members of the
//!   top band ISL found, the loop joins that band (one permutable band, tiled together);
//!   otherwise it is a sequential band of its own above ISL's schedule (a member of ISL's band
//!   that only repeats the loop, constant inside one iteration, is left out of the joined band:
//!   deriche's column passes came out as `[j, j, i]`). The same is tried when
//!   the scheduler fails on the whole SCoP. Measured (release, CPU time of the whole compile):
//!   adi (14 statements in its time loop) a minute as a whole (the 10 s limit, then the
//!   original order) and 0.8 s this way; deriche 1.9 s and 1.1 s, with more of its nests tiled
//!   in two dimensions; ludcmp 1.5 s and 0.5 s. A stencil would lose its time tiling this way
//!   (its time loop carries dependences of negative spatial distance), which is why small SCoPs
//!   (all PolyBench stencils have at most 4 statements) are scheduled whole. The fusion
//!   heuristic then applies inside each group only: separate outermost loops stay separate.
//!   A group of at most `MAX_WHOLE_GROUP` (5) statements that writes no scalar is first
//!   scheduled as a whole, like a small SCoP, so that its outer loop may be distributed or joined with its inner loops into a
//!   deeper band: correlation's last group (`corr`'s diagonal, initialization, product and
//!   mirror) then tiles its product in two dimensions instead of one.
//! - loops that count down are seen by the scheduler mirrored (`reversal`), where its bound on
//!   constant terms kept them out of the band;
//! - a problem whose dependences are all translations (stencils) is first scheduled as a copy
//!   with its constant sizes turned back into parameters (the `parametric` module): its
//!   integer programs then stay in small numbers (heat-3d at LARGE: 0.67 s to 0.06 s, same
//!   schedule);
//! - a problem (domains, context and dependences as text, options and operation budget) is
//!   solved once per process (`solve`): deriche's second privatization pass repeats 5 of its 6
//!   per-loop problems, and the fusion candidates of split SCoPs ask for the same groups on
//!   threads of their own. The outcome records the CPU time its run took, and each asker holds
//!   it against its own time limit, so that `min` and `max`, which ask for nussinov's problem
//!   under 200 ms, wait for the run `smart` makes under 10 s instead of starting two more that
//!   go on after they give up (nussinov at LARGE: 1.45 to 0.90 s of CPU, best of 5);
//! - [`ScheduleConfig::max_operations`] and [`ScheduleConfig::time_limit`] bound each ISL run;
//!   past either (or on any scheduler failure) of both attempts, the original order is used and
//!   a [`Warning`] says so; a whole-SCoP attempt that gave up before a successful per-loop one is
//!   a warning too. The time limit is the CPU time of the thread that runs ISL, not wall-clock
//!   time, so that the same input gives the same output on a loaded machine (`make -j`): with a
//!   wall-clock limit of 60 s, 3mm under `--fuse max` at LARGE (27 s of CPU time in ISL's
//!   whole-component LP) was scheduled in one run and fell back in another. The default
//!   (10 s) is a guard against work that does not end, far above the scheduling time of any
//!   PolyBench kernel (under 0.5 s); ISL's operation budget does not bound that work, since one
//!   pivot of that LP on numbers of hundreds of digits takes milliseconds.
//!
//! What is left is ISL's own work on problems whose dependences are not translations (nussinov
//! at LARGE spends about half of its compile time in `isl_tab_basic_set_non_trivial_lexmin`,
//! mostly big-number gcds on its sizes). The parametric copy does not apply to them (see
//! `parametric`), and no ISL option was found that bounds that work and keeps their trees:
//! `schedule_treat_coalescing`, `schedule_split_scaled`, `schedule_carry_self_first` and
//! `schedule_separate_components` off gave the same trees for nussinov, lu, cholesky and
//! gramschmidt at LARGE and no measurable saving, so ISL's defaults stay.
//!
//! The original order (`ScheduleConfig::original`, or the fallback) groups statements by the first
//! value of their 2d+1 schedules (one group per outermost loop or top-level statement), in that
//! order. In a group, the outermost `p` loop dimensions (positions 1, 3, ... of the 2d+1 schedule,
//! `p` at most the depth of the group's shallowest statement) form a permutable band when every
//! dependence inside the group has a non-negative distance on each of them; the band is
//! `[x1, .., xp]` followed by the group's full original schedule, which is legal and tileable
//! because tile and point coordinates then never decrease along a dependence and equal ones leave
//! the original order.
//!
//! Nests: below the root, a band or leaf is one nest with every statement; a sequence or set node
//! makes each of its filter children a nest, in order (recursively when a child is itself a
//! sequence or set). The outermost band of a nest is tiled (by [`ScheduleConfig::tile_sizes`], or
//! by the size `crate::tile_size` chooses for the band) with `isl_schedule_node_band_tile`
//! (`tile_scale_tile_loops = 0`, `tile_shift_point_loops = 0`, so tile coordinates are
//! `floor(i / size)` and point coordinates are `i`) when it is permutable. A band of the ISL
//! scheduler that is not permutable has only its first member tiled (split off first): the first
//! schedule dimension of a nest never decreases along a dependence inside the nest, so its tiles
//! are ordered. An untiled nest has zero tile dimensions. A statement whose domain is empty is in
//! no nest.
//!
//! Tiles under a sequential loop (`inner_tiles`): a nest whose outermost band is one member that
//! carries a dependence (adi's time loop, floyd-warshall's `k`: its tiles would be a chain) over
//! a sequence of children or over one band, where a child band has a member whose blocks depend
//! on each other within one outer iteration in at most three waves (adi's sweeps, each parallel
//! over `i`; floyd-warshall's rows, which meet only at row `k`), is tiled by phases instead:
//! tiles `(t, child, ⌊i / T⌋)`, sizes `[1, 1, T]`, in the order of the untiled schedule (so
//! legal as it is), when a phase has enough instances to be worth cutting. adi at LARGE, tasks
//! on 2 threads: 1.00x -> 2.03x over gcc -O3 (the same on omp). floyd-warshall at LARGE, tasks,
//! paired medians of 3 on the AMD machine: 11.4 s -> 6.55 s on 2 threads (44 chained `k` tiles
//! before; now 123 200 tasks, average parallelism 21.8 by `--emit tasks`), the same on one
//! (10.0 s, 10.2 s); blocks of 16 to 256 rows all within 3% (each `k` streams the whole
//! matrix, 31 MB, through L3 whatever the block). The omp target cannot use the waves (its
//! block loop is not parallel: row `k`'s block sits between the others) and stays at 11 s.
//!
//! With [`ScheduleConfig::whole_carrying_members`] (the cuda target with its default tiles), a
//! member of a tiled band that carries a dependence inside the nest is not cut when another
//! member carries none: its tile coordinate is 0 and its size reported as [`crate::WHOLE_LOOP`],
//! so a running value along it (a scalar's reduction) stays in one tile whatever the
//! parameters. A coarser rectangular tiling of a permutable band is as legal as the finer one.
//!
//! The order of a tiled band's point loops (`crate::point_order`) is asked once per band, of the
//! band as one tile, before it is tiled: off the GPU it does not depend on the tile sizes, and on
//! the untiled schedule (no integer divisions) ISL answers faster (heat-3d at LARGE, `--emit
//! schedule`: 0.22 s to 0.18 s of CPU). It serves both the default sizes ([`lengthen_inner`])
//! and the reordering of the points. On the GPU it is asked of the tiled schedule as well.
//!
//! Files: this one schedules (the scheduler's options, the whole SCoP or its groups, the nests of
//! the tree); `solve` runs one problem in ISL, bounded, and keeps its outcome; `original` builds
//! the original order and the groups scheduled inside their outer loops; `blocks` schedules the
//! blocks of statements that the fusion choice fuses ([`ScheduleConfig::blocks`]); `tiling`
//! tiles the nests.

mod blocks;
mod original;
mod solve;
mod tiling;

use crate::cost::{band_rows, BandRows, BandTiles};
use crate::isl::{
    this_thread_cpu_time, CpuGroup, Ctx, NodeKind, Schedule, ScheduleConstraints, ScheduleNode,
    ScheduleOption, Set, ThreadCpuClock, UnionMap, UnionSet,
};
use crate::maps::{names, pad_to_common_depth, projection, tuple};
use crate::memo::Memo;
use crate::parametric::{concrete_tree, parametric_copy, ParametricProblem};
use crate::point_order::point_order;
use crate::scop::{stmt_of_name, ScopSets};
use crate::tile_size::{
    coarsen_carried, coarsen_free, default_tile_size_within, lengthen_inner_within, lengthen_runs,
    lengthen_time_tiled, tile_work, time_tiled, MIN_INNER, MIN_RUN_BYTES, MIN_TASK_WORK,
    MIN_TILE_WORK, SHORT_INNER,
};
use crate::{Dependences, Error, Fuse, Nest, Result, ScheduleConfig, TiledSchedule, Warning};
use scop_ir::{Scop, StmtId};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::mpsc;

use blocks::blocks_tree;
pub(crate) use blocks::{blocks_text, statement_edges};
use original::*;
pub use solve::run_bounded;
use solve::*;
use tiling::*;
pub(crate) use tiling::{fit_block, fits_in_one_tile};

/// Schedules and tiles `scop` so that `deps` (its dependences) are respected.
///
/// The result is kept for the rest of the process ([`SCHEDULED`], a [`Memo`]): asked again
/// with equal inputs, it is given back without a second run. The driver asks for each schedule several
/// times: the spread search tiles the chosen configuration before it halves anything, and the
/// schedule stage then asks for the same one (deriche at LARGE: 0.15 s each time). The
/// scheduler's own runs are shared too ([`scheduled_tree`]); this keeps the tiling after them.
pub fn schedule(
    scop: &Scop,
    deps: &Dependences,
    cfg: &ScheduleConfig,
) -> Result<(TiledSchedule, Vec<Warning>)> {
    if let Some(out) = kept_schedule(&SCHEDULED, scop, deps, cfg) {
        return Ok(out);
    }
    let out = schedule_with(scop, deps, cfg, cfg.max_operations)?;
    SCHEDULED.insert((scop.clone(), deps.clone(), cfg.clone()), out.clone());
    Ok(out)
}

/// A schedule and the warnings that came with it.
type Tiled = (TiledSchedule, Vec<Warning>);

/// Schedules by their inputs.
type Schedules = Memo<(Scop, Dependences, ScheduleConfig), Tiled>;

/// How many schedules [`SCHEDULED`] keeps.
const MAX_SCHEDULED: usize = 16;

/// The schedules [`schedule`] computed in this process, by their inputs.
static SCHEDULED: Schedules = Memo::new(MAX_SCHEDULED);

/// The schedule `kept` holds for these inputs. Asked with [`ScheduleConfig::widen_products`],
/// the one kept without it serves where no band could be widened: widening acts only on bands
/// of three members or more (`tiling::coarsen_band`), and a nest's tile sizes are its band's
/// members, so a schedule whose nests all have fewer is what the same inputs give with it. The
/// driver asks for the chosen fusion candidate with it after the candidates were scheduled
/// without it; deriche, adi and ludcmp at LARGE have no such band and were tiled a second time
/// for nothing (deriche 0.15-0.24 s).
fn kept_schedule(
    kept: &Schedules,
    scop: &Scop,
    deps: &Dependences,
    cfg: &ScheduleConfig,
) -> Option<Tiled> {
    kept.find(|(s, d, c), out| {
        (c == cfg
            || (cfg.widen_products
                && *c
                    == ScheduleConfig {
                        widen_products: false,
                        ..cfg.clone()
                    }
                && out.0.nests.iter().all(|n| n.tile_sizes.len() < 3)))
            && d == deps
            && s == scop
    })
}

/// [`schedule`], with `whole_budget` as the operation budget of the attempt on the whole SCoP
/// (`cfg.max_operations` bounds the rest): tests make that attempt give up on its own.
fn schedule_with(
    scop: &Scop,
    deps: &Dependences,
    cfg: &ScheduleConfig,
    whole_budget: u64,
) -> Result<(TiledSchedule, Vec<Warning>)> {
    if let Some(sizes) = &cfg.tile_sizes {
        if sizes.iter().any(|&s| s <= 0) {
            return Err(Error::InvalidInput(format!(
                "tile sizes must be positive integers, got {sizes:?}"
            )));
        }
    }
    let ctx = Ctx::shared()?;
    ctx.set_tile_scale_tile_loops(false)?;
    ctx.set_tile_shift_point_loops(false)?;
    let sets = ScopSets::parse(ctx, scop)?;
    if sets.domains.is_empty()? {
        return Ok((
            TiledSchedule {
                tree: String::new(),
                nests: Vec::new(),
            },
            Vec::new(),
        ));
    }
    let deps = crate::deps::all_of(ctx, deps)?;
    let deps = deps
        .intersect_domain(sets.domains.clone())?
        .intersect_range(sets.domains.clone())?;
    let mut warnings = Vec::new();
    let (tree, from_scheduler) = if cfg.original {
        (original_tree(scop, &sets, &deps)?, false)
    } else {
        let groups = original_groups(scop, &sets)?;
        let loops = crate::reversal::Loops::of(ctx, &sets)?;
        let n_statements: usize = groups.iter().map(|(stmts, _)| stmts.len()).sum();
        let too_many = n_statements > cfg.max_whole_statements;
        let whole = if let Some(blocks) = &cfg.blocks {
            blocks_tree(scop, &sets, blocks, &deps, Some(&loops), cfg)?
        } else if too_many {
            Err(format!(
                "was not run on the whole SCoP ({n_statements} statements)"
            ))
        } else {
            let reuse = match cfg.fuse {
                Fuse::Reuse => Some(read_reuse(scop, &sets)?),
                _ => None,
            };
            scheduled_tree(
                &sets.domains,
                &sets.context,
                &deps,
                reuse.as_ref(),
                Some(&loops),
                &ScheduleConfig {
                    max_operations: whole_budget,
                    ..cfg.clone()
                },
            )?
        };
        match whole {
            Ok(tree) => (tree, true),
            Err(why_whole) => match split_tree(scop, &sets, &groups, &deps, Some(&loops), cfg)? {
                Ok(tree) => {
                    // Scheduling the whole SCoP was tried and gave up (a budget, or a failure):
                    // the result is a different schedule than usual, which the user is told.
                    if !too_many || cfg.blocks.is_some() {
                        warnings.push(Warning(format!(
                            "the ISL scheduler {why_whole}; scheduling inside the outermost loops instead"
                        )));
                    }
                    (tree, true)
                }
                Err(why) => {
                    warnings.push(Warning(format!(
                        "the ISL scheduler {why_whole}, and inside the outermost loops it {why}; keeping the original statement order"
                    )));
                    (original_tree(scop, &sets, &deps)?, false)
                }
            },
        }
    };
    let (tree, nests) = tile_nests(scop, tree, cfg, from_scheduler, &deps, true)?;
    Ok((
        TiledSchedule {
            tree: tree.to_block_str()?,
            nests,
        },
        warnings,
    ))
}

/// The ISL scheduler's tree for the fusion heuristic of `cfg`, within its budgets; `Ok(Err(why))`
/// when the scheduler gave up (the caller falls back to the original order).
///
/// The scheduler runs on a thread of its own, with its own ISL context, on the printed domains,
/// context and dependences, and sends back the printed tree. When the time limit passes first, that
/// thread is left to finish on its own, using a core until ISL completes or its operation budget
/// runs out (its result is dropped): ISL cannot be interrupted from another thread without a data
/// race on the context.
///
/// An outcome is kept for the rest of the process, whichever thread asks next ([`SOLVED`]): the
/// same problem, as text, under the same options and limits, gets it again without a second run
/// (deriche's second privatization pass schedules 5 of its 6 groups as the first did; the fusion
/// candidates, scheduled on threads of their own, share the groups of a SCoP scheduled inside
/// its outer loops, and the chosen one is scheduled again by the driver). A thread that asks for
/// a problem another one is running waits for that run. ISL's scheduler is deterministic on a
/// fresh context, so the outcome is the one a second run would give.
fn scheduled_tree<'c>(
    domains: &UnionSet<'c>,
    context: &Set<'c>,
    deps: &UnionMap<'c>,
    reuse: Option<&UnionMap<'c>>,
    loops: Option<&crate::reversal::Loops>,
    cfg: &ScheduleConfig,
) -> Result<std::result::Result<Schedule<'c>, String>> {
    let mirror = match loops {
        Some(loops) => loops.mirror(domains.ctx(), domains)?,
        None => None,
    };
    let Some(mirror) = mirror else {
        return scheduled_tree_as_given(domains, context, deps, reuse, cfg);
    };
    // Loops counting down run upward for the scheduler; its tree is pulled back (`reversal`).
    let mirror = mirror.intersect_domain(domains.clone())?;
    let through = |m: &UnionMap<'c>| -> Result<UnionMap<'c>> {
        m.clone()
            .apply_domain(mirror.clone())?
            .apply_range(mirror.clone())
    };
    let reuse = reuse.map(through).transpose()?;
    let tree = scheduled_tree_as_given(
        &mirror.clone().range()?,
        context,
        &through(deps)?,
        reuse.as_ref(),
        cfg,
    )?;
    Ok(match tree {
        Ok(tree) => Ok(tree.pullback(mirror)?),
        Err(why) => Err(why),
    })
}

/// [`scheduled_tree`] on the domains and dependences as they are.
fn scheduled_tree_as_given<'c>(
    domains: &UnionSet<'c>,
    context: &Set<'c>,
    deps: &UnionMap<'c>,
    reuse: Option<&UnionMap<'c>>,
    cfg: &ScheduleConfig,
) -> Result<std::result::Result<Schedule<'c>, String>> {
    let ctx = domains.ctx();
    let reuse = match reuse {
        Some(r) if !r.is_empty()? => r.to_str()?,
        _ => String::new(),
    };
    // Fusion heuristics choose how strongly connected components share loops: with one
    // component they all give the same tree, which is then solved (and kept) once; so does
    // `Reuse` without pairs of reads.
    let fuse = match (cfg.fuse != Fuse::Smart && one_component(domains, deps)?)
        || (cfg.fuse == Fuse::Reuse && reuse.is_empty())
    {
        true => Fuse::Smart,
        false => cfg.fuse,
    };
    let key = ProblemKey {
        domains: domains.to_str()?,
        context: context.to_str()?,
        deps: deps.to_str()?,
        reuse,
        fuse,
        max_operations: cfg.max_operations,
        max_coefficient: cfg.max_coefficient,
        max_constant_term: cfg.max_constant_term,
        outer_coincidence: cfg.parallel_point_loops_outer,
    };
    let slot = solved_slot(&key);
    // One run per problem: another thread that asks for it meanwhile, or later under another
    // time limit, waits for this run's outcome and holds it against its own limit ([`Run`]).
    let run = match slot.get() {
        Some(run) => run,
        None => {
            // The copy has no reads to pair (see `parametric`): it is for dependences alone.
            let parametric = match key.reuse.is_empty() {
                true => parametric_copy(domains, context, deps)?,
                false => None,
            };
            let problem = SchedulingProblem {
                key: key.clone(),
                parametric,
            };
            slot.get_or_init(|| {
                RUNS.with(|runs| runs.set(runs.get() + 1));
                Run::start(move || problem.solve())
            })
        }
    };
    Ok(match run.wait(cfg.time_limit) {
        Outcome::Done(text) => Ok(Schedule::read(ctx, &text)?),
        Outcome::OverBudget => Err(format!(
            "ran past its budget of {} operations",
            cfg.max_operations
        )),
        Outcome::Failed(msg) => Err(format!("failed ({msg})")),
        Outcome::Late(why) => Err(why),
    })
}

/// Whether two statements of `scop` read the same elements of an array it never writes (what
/// [`Fuse::Reuse`] schedules for; without such reads it is `Max` without coincidence): whether
/// [`read_reuse`] has a pair, asked of the elements each statement reads, pair by pair, up to
/// the first that meets (of two instances that read one element, one comes first). Building the
/// pairs themselves took 60 ms of deriche's compile time at LARGE, before its candidates.
pub(crate) fn has_read_reuse(scop: &Scop) -> Result<bool> {
    let ctx = Ctx::shared()?;
    let sets = ScopSets::parse(ctx, scop)?;
    let mut read = Vec::new();
    for map in read_only(scop, &sets)? {
        if let (Some(stmt), Some(array)) = (
            map.tuple_name(crate::isl::Side::In),
            map.tuple_name(crate::isl::Side::Out),
        ) {
            read.push((stmt, array, map.range()?));
        }
    }
    for (k, (stmt, array, elements)) in read.iter().enumerate() {
        for (other, other_array, other_elements) in &read[k + 1..] {
            if other != stmt
                && other_array == array
                && !elements
                    .clone()
                    .intersect(other_elements.clone())?
                    .is_empty()?
            {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// The reads of `scop` (`sets`, its sets) from arrays it never writes, one map per statement
/// and array.
fn read_only<'c>(scop: &Scop, sets: &ScopSets<'c>) -> Result<Vec<crate::isl::Map<'c>>> {
    let written: Vec<&str> = scop
        .arrays
        .iter()
        .filter(|a| a.written)
        .map(|a| a.isl_name.as_str())
        .collect();
    let mut read = Vec::new();
    for map in sets.reads.maps()? {
        let read_only = map
            .tuple_name(crate::isl::Side::Out)
            .is_some_and(|name| !written.contains(&name.as_str()));
        if read_only {
            read.push(map);
        }
    }
    Ok(read)
}

/// For [`Fuse::Reuse`]: the pairs of instances of two different statements that read the same
/// element of an array the SCoP never writes, the first one before the second in the source
/// order. As proximity constraints they ask the scheduler to bring the two reads close.
fn read_reuse<'c>(scop: &Scop, sets: &ScopSets<'c>) -> Result<UnionMap<'c>> {
    let ctx = sets.domains.ctx();
    let mut reads = UnionMap::empty(ctx)?;
    for map in read_only(scop, sets)? {
        reads = reads.union(UnionMap::from_map(map)?)?;
    }
    let same = reads.clone().apply_range(reads.reverse()?)?;
    let mut across = UnionMap::empty(ctx)?;
    for map in same.maps()? {
        if map.tuple_name(crate::isl::Side::In) != map.tuple_name(crate::isl::Side::Out) {
            across = across.union(UnionMap::from_map(map)?)?;
        }
    }
    let before = sets
        .original
        .clone()
        .lex_lt_union_map(sets.original.clone())?;
    across.intersect(before)
}

/// Whether the statements of `domains` form one strongly connected component of the dependence
/// graph `deps` (a single statement does).
fn one_component<'c>(domains: &UnionSet<'c>, deps: &UnionMap<'c>) -> Result<bool> {
    let mut graph = petgraph::graphmap::DiGraphMap::<&str, ()>::new();
    let names: Vec<String> = domains
        .sets()?
        .iter()
        .filter_map(|s| s.tuple_name())
        .collect();
    let mut edges = Vec::new();
    for map in deps.maps()? {
        if let (Some(src), Some(dst)) = (
            map.tuple_name(crate::isl::Side::In),
            map.tuple_name(crate::isl::Side::Out),
        ) {
            edges.push((src, dst));
        }
    }
    for name in &names {
        graph.add_node(name);
    }
    for (src, dst) in &edges {
        graph.add_edge(src, dst, ());
    }
    Ok(petgraph::algo::kosaraju_scc(&graph).len() <= 1)
}

/// Appends to `out` the path (child positions from the root) of every nest at or below `node`,
/// the child of a domain or filter node at `path`.
fn collect_nests(
    node: &ScheduleNode<'_>,
    path: Vec<usize>,
    out: &mut Vec<Vec<usize>>,
) -> Result<()> {
    match node.kind()? {
        NodeKind::Band | NodeKind::Leaf => out.push(path),
        NodeKind::Sequence | NodeKind::Set => {
            for pos in 0..node.n_children()? {
                let filter = node.child(pos)?;
                if filter.kind()? != NodeKind::Filter || filter.n_children()? != 1 {
                    return Err(Error::Unsupported(format!(
                        "a schedule tree child of kind {:?} under a sequence",
                        filter.kind()?
                    )));
                }
                let mut child_path = path.clone();
                child_path.extend([pos, 0]);
                collect_nests(&filter.child(0)?, child_path, out)?;
            }
        }
        other => {
            return Err(Error::Unsupported(format!(
                "a schedule tree node of kind {other:?} above the outermost band"
            )));
        }
    }
    Ok(())
}

impl fmt::Display for TiledSchedule {
    /// The schedule tree, then each nest: statements, tile sizes, schedule, tile map, tile domain.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "tree:")?;
        for line in self.tree.lines() {
            writeln!(f, "  {line}")?;
        }
        for (k, nest) in self.nests.iter().enumerate() {
            let stmts: Vec<String> = nest.statements.iter().map(|s| s.to_string()).collect();
            let sizes: Vec<String> = nest.tile_sizes.iter().map(|s| s.to_string()).collect();
            writeln!(f, "nest N{k}: {}", stmts.join(" "))?;
            if sizes.is_empty() {
                writeln!(f, "  tile sizes: none (one tile)")?;
            } else {
                writeln!(f, "  tile sizes: {}", sizes.join(" "))?;
            }
            writeln!(f, "  schedule: {}", nest.schedule)?;
            writeln!(f, "  tile map: {}", nest.tile_map)?;
            writeln!(f, "  tile domain: {}", nest.tile_domain)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A schedule asked for with `widen_products` after the same inputs were scheduled without
    /// it is what scheduling with it gives: the one kept where no band has three members
    /// (deriche's nests), gemm's product tiled again for its wider tiles.
    #[test]
    fn a_schedule_kept_without_widening_serves_only_where_no_band_could_widen() {
        for kernel in ["gemm", "deriche"] {
            let scop = crate::polybench_scops_at(kernel, "LARGE")
                .into_iter()
                .next()
                .expect("a SCoP");
            let deps = crate::dependences(&scop).unwrap();
            let plain = ScheduleConfig::default();
            let wide = ScheduleConfig {
                widen_products: true,
                ..plain.clone()
            };
            let (kept, _) = schedule(&scop, &deps, &plain).unwrap();
            let (asked, _) = schedule(&scop, &deps, &wide).unwrap();
            let (fresh, _) = schedule_with(&scop, &deps, &wide, wide.max_operations).unwrap();
            assert_eq!(asked, fresh, "{kernel}");
            let wider = kept.nests.iter().zip(&fresh.nests).any(|(a, b)| a != b);
            assert_eq!(wider, kernel == "gemm", "{kernel}: {kept:?}\n{fresh:?}");
        }
    }

    /// A time loop is an iterator that no subscript of the statement depends on: heat-3d's and
    /// jacobi-2d's `t`; doitgen's product (`r, q, p, s` each in some subscript) and gemm's update
    /// have none; a band of another depth than the statements' loops has none either.
    #[test]
    fn time_loops_are_loops_that_no_subscript_follows() {
        let ctx = Ctx::new().unwrap();
        // The statements of `kernel` with `loops` iterators.
        let with_loops = |scop: &Scop, loops: usize| -> Vec<StmtId> {
            scop.statements
                .iter()
                .filter(|s| s.iterators.len() == loops)
                .map(|s| s.id)
                .collect()
        };
        for (kernel, loops, depth, expected) in [
            ("heat-3d", 4, 4, true),
            ("heat-3d", 4, 3, false),
            ("jacobi-2d", 3, 3, true),
            ("gemm", 3, 3, false),
            ("doitgen", 4, 4, false),
        ] {
            let scop = crate::polybench_scop(kernel);
            let stmts = with_loops(&scop, loops);
            assert!(!stmts.is_empty(), "{kernel}");
            assert_eq!(
                time_loops(&ctx, &scop, &stmts, depth).unwrap(),
                expected,
                "{kernel} at depth {depth}"
            );
        }
    }

    /// A time-tiled stencil's innermost member gets twice the cube size where eight such tiles
    /// fit along it (`tiling::TIME_ROWS`): jacobi-2d's and fdtd-2d's at LARGE; seidel-2d's rows
    /// are a recurrence and keep the cube; at MEDIUM the rows are too short for eight.
    #[test]
    fn time_tiled_stencils_get_rows_of_twice_the_cube() {
        let cfg = ScheduleConfig {
            tile_footprint: 128 << 10,
            ..ScheduleConfig::default()
        };
        for (kernel, size, want) in [
            ("jacobi-2d", "LARGE", vec![64, 64, 128]),
            ("fdtd-2d", "LARGE", vec![64, 64, 128]),
            ("seidel-2d", "LARGE", vec![64, 64, 64]),
            ("jacobi-2d", "MEDIUM", vec![64, 64, 64]),
        ] {
            let scop = crate::polybench_scops_at(kernel, size)
                .into_iter()
                .next()
                .expect("a SCoP");
            let deps = crate::dependences(&scop).unwrap();
            let (sched, _) = crate::schedule(&scop, &deps, &cfg).unwrap();
            assert_eq!(sched.nests[0].tile_sizes, want, "{kernel} at {size}");
        }
    }

    #[test]
    fn reuse_fuses_statements_that_read_the_same_matrix() {
        // bicg: `s[j] += r[i] * A[i][j]` and `q[i] += A[i][j] * p[j]` share only A. Under `smart`
        // each keeps its parallel loop outermost, in nests of their own; under `Reuse` both are in
        // one tiled band of the two loops, at the same point for the same element of A.
        let scop = crate::polybench_scop("bicg");
        let deps = crate::dependences(&scop).unwrap();
        assert!(has_read_reuse(&scop).unwrap());
        let nests_of = |fuse| {
            let cfg = ScheduleConfig {
                fuse,
                ..ScheduleConfig::default()
            };
            let (sched, _) = crate::schedule(&scop, &deps, &cfg).unwrap();
            sched.nests
        };
        let with_both = |nests: &[crate::Nest]| {
            nests
                .iter()
                .filter(|n| n.statements.contains(&StmtId(2)) && n.statements.contains(&StmtId(3)))
                .map(|n| n.tile_sizes.len())
                .collect::<Vec<_>>()
        };
        assert_eq!(with_both(&nests_of(Fuse::Smart)), Vec::<usize>::new());
        assert_eq!(with_both(&nests_of(Fuse::Reuse)), vec![2]);
        // gemm's one statement reads A and B alone: nothing to pair.
        assert!(!has_read_reuse(&crate::polybench_scop("gemm")).unwrap());
    }

    /// `has_read_reuse`, which looks for one pair of statements that read one element, says
    /// what the pairs themselves (`read_reuse`) say, on every PolyBench kernel: 10 have such
    /// pairs and 20 do not (the ten named, so that neither answer is always right).
    #[test]
    fn read_reuse_is_found_where_its_pairs_are() {
        let kernels = std::fs::read_dir(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../polybench/kernels"),
        )
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|k| !k.contains('.'))
        .collect::<Vec<_>>();
        assert_eq!(kernels.len(), 30);
        let mut with = Vec::new();
        for kernel in &kernels {
            for scop in crate::polybench_scops(kernel) {
                let ctx = Ctx::shared().unwrap();
                let sets = ScopSets::parse(ctx, &scop).unwrap();
                let pairs = !read_reuse(&scop, &sets).unwrap().is_empty().unwrap();
                assert_eq!(has_read_reuse(&scop).unwrap(), pairs, "{kernel}");
                if pairs {
                    with.push(kernel.as_str());
                }
            }
        }
        with.sort_unstable();
        assert_eq!(
            with,
            [
                "adi",
                "atax",
                "bicg",
                "correlation",
                "covariance",
                "deriche",
                "durbin",
                "gesummv",
                "mvt",
                "symm"
            ]
        );
    }
    use scop_ir::{Access, AccessKind, Array, ArrayId, Loc, Param, Span, Statement, Storage};

    /// jacobi-1d, two statements in a time loop (`polyhedral/tests/common` has the same SCoP):
    /// `B[i] = (A[i-1] + A[i] + A[i+1]) / 3` (S0) and `A[i] = (B[i-1] + B[i] + B[i+1]) / 3` (S1).
    fn jacobi_1d() -> Scop {
        let access = |write: bool, array: u32, relation: String| Access {
            kind: if write {
                AccessKind::Write
            } else {
                AccessKind::Read
            },
            array: ArrayId(array),
            relation,
        };
        let stmt = |id: u32, from: u32, to: u32| {
            let s = format!("S{id}");
            let mut accesses: Vec<Access> = ["i - 1", "i", "i + 1"]
                .iter()
                .map(|x| {
                    access(
                        false,
                        from,
                        format!("[T, N] -> {{ {s}[t, i] -> A{from}[{x}] }}"),
                    )
                })
                .collect();
            accesses.push(access(
                true,
                to,
                format!("[T, N] -> {{ {s}[t, i] -> A{to}[i] }}"),
            ));
            Statement {
                id: StmtId(id),
                iterators: vec!["t".into(), "i".into()],
                domain: format!("[T, N] -> {{ {s}[t, i] : 0 <= t < T and 1 <= i <= N - 2 }}"),
                schedule: format!("[T, N] -> {{ {s}[t, i] -> [0, t, {id}, i, 0] }}"),
                accesses,
                body: Vec::new(),
                span: Span { start: 0, end: 0 },
                loc: Loc::default(),
            }
        };
        let array = |id: u32| Array {
            id: ArrayId(id),
            name: format!("A{id}"),
            isl_name: format!("A{id}"),
            elem_type: "double".into(),
            rank: 1,
            extents: vec![None],
            storage: Storage::Local,
            written: true,
        };
        let param = |name: &str| Param {
            name: name.into(),
            c_type: "int".into(),
            storage: Storage::Local,
        };
        Scop {
            function: "kernel".into(),
            region: Span { start: 0, end: 0 },
            insert_at: 0,
            loc: Loc::default(),
            params: vec![param("T"), param("N")],
            context: "[T, N] -> { : T >= 0 and N >= 0 }".into(),
            arrays: vec![array(0), array(1)],
            statements: vec![stmt(0, 0, 1), stmt(1, 1, 0)],
            macros: Vec::new(),
            undefined_macros: Vec::new(),
        }
    }

    /// When scheduling the whole SCoP gives up (here: a budget of one operation for that attempt
    /// only) and scheduling inside the outermost loops succeeds, the result is the per-loop
    /// schedule, and the user is told why with a warning.
    #[test]
    fn kept_schedules_are_found_by_all_their_inputs_and_the_oldest_leaves_first() {
        let scop = jacobi_1d();
        let deps = crate::dependences(&scop).unwrap();
        let cfg = ScheduleConfig::default();
        let out = schedule_with(&scop, &deps, &cfg, cfg.max_operations).unwrap();
        let kept: Schedules = Memo::new(MAX_SCHEDULED);
        kept.insert((scop.clone(), deps.clone(), cfg.clone()), out.clone());
        assert_eq!(kept_schedule(&kept, &scop, &deps, &cfg), Some(out.clone()));
        // Any input that differs is another schedule.
        let other_cfg = ScheduleConfig {
            tile_sizes: Some(vec![8]),
            ..cfg.clone()
        };
        assert_eq!(kept_schedule(&kept, &scop, &deps, &other_cfg), None);
        let mut other_scop = scop.clone();
        other_scop.statements.pop();
        assert_eq!(kept_schedule(&kept, &other_scop, &deps, &cfg), None);
        let other_deps = crate::dependences(&other_scop).unwrap();
        assert_ne!(other_deps, deps);
        assert_eq!(kept_schedule(&kept, &scop, &other_deps, &cfg), None);
        // Full, it lets the first one go.
        for k in 1..MAX_SCHEDULED {
            let cfg = ScheduleConfig {
                tile_sizes: Some(vec![k as i64]),
                ..cfg.clone()
            };
            kept.insert((scop.clone(), deps.clone(), cfg.clone()), out.clone());
        }
        assert_eq!(kept_schedule(&kept, &scop, &deps, &cfg), Some(out.clone()));
        kept.insert((scop.clone(), deps.clone(), other_cfg.clone()), out.clone());
        assert_eq!(kept_schedule(&kept, &scop, &deps, &cfg), None);
        assert_eq!(kept_schedule(&kept, &scop, &deps, &other_cfg), Some(out));
    }

    #[test]
    fn whole_scop_attempt_that_gives_up_is_a_warning() {
        let scop = jacobi_1d();
        let deps = crate::dependences(&scop).unwrap();
        let cfg = ScheduleConfig::default();
        let (sched, warnings) = schedule_with(&scop, &deps, &cfg, 1).unwrap();
        let texts: Vec<&str> = warnings.iter().map(|w| w.0.as_str()).collect();
        assert_eq!(
            texts,
            ["the ISL scheduler ran past its budget of 1 operations; scheduling inside the outermost loops instead"]
        );
        // The same schedule as when the SCoP counts as too large to be scheduled whole (which
        // goes straight to the per-loop scheduler, without a warning).
        let (per_loop, per_loop_warnings) = schedule(
            &scop,
            &deps,
            &ScheduleConfig {
                max_whole_statements: 1,
                ..cfg.clone()
            },
        )
        .unwrap();
        assert!(per_loop_warnings.is_empty(), "{per_loop_warnings:?}");
        assert_eq!(sched, per_loop);
        // With its full budget the whole SCoP is scheduled, without a warning.
        let (_, warnings) = schedule_with(&scop, &deps, &cfg, cfg.max_operations).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        crate::verify(&scop, &deps, &sched).unwrap();
    }
}

#[cfg(test)]
mod point_order_tests {
    use super::*;

    /// The point order asked once of each band as one tile (`one_tile_order`) gives the same
    /// nests as asking it of every tiled schedule, for default and explicit tile sizes, on
    /// kernels whose point loops are reordered (gemm, syr2k), lengthened (heat-3d) or skewed
    /// (jacobi-2d, seidel-2d), with several statements per nest (lu, cholesky).
    #[test]
    fn point_order_asked_once_gives_the_same_nests() {
        for name in [
            "gemm",
            "syr2k",
            "heat-3d",
            "jacobi-2d",
            "seidel-2d",
            "lu",
            "cholesky",
        ] {
            let scop = crate::polybench_scop(name);
            let deps = crate::dependences(&scop).unwrap();
            for tile_sizes in [Some(vec![]), Some(vec![4]), Some(vec![7, 3, 5])] {
                let cfg = ScheduleConfig {
                    tile_sizes: tile_sizes.clone(),
                    ..ScheduleConfig::default()
                };
                let ctx = Ctx::new().unwrap();
                ctx.set_tile_scale_tile_loops(false).unwrap();
                ctx.set_tile_shift_point_loops(false).unwrap();
                let sets = ScopSets::parse(&ctx, &scop).unwrap();
                let all = crate::deps::IslDeps::parse(&ctx, &deps)
                    .unwrap()
                    .all()
                    .unwrap();
                let tree = scheduled_tree(&sets.domains, &sets.context, &all, None, None, &cfg)
                    .unwrap()
                    .unwrap();
                let (once_tree, once) =
                    tile_nests(&scop, tree.clone(), &cfg, true, &all, true).unwrap();
                let (each_tree, each) = tile_nests(&scop, tree, &cfg, true, &all, false).unwrap();
                assert_eq!(once, each, "{name} {tile_sizes:?}");
                assert_eq!(
                    once_tree.to_block_str().unwrap(),
                    each_tree.to_block_str().unwrap(),
                    "{name} {tile_sizes:?}"
                );
            }
        }
    }
}
