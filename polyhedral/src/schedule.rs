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
//! - a problem (domains, context and dependences as text, options and limits) that was already
//!   solved on this thread within its time limit is not solved again (`scheduled_tree`):
//!   deriche's second privatization pass repeats 5 of its 6 per-loop problems;
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

use crate::cost::{band_rows, BandRows, BandTiles};
use crate::deps::IslDeps;
use crate::isl::{
    this_thread_cpu_time, Ctx, NodeKind, Schedule, ScheduleConstraints, ScheduleNode,
    ScheduleOption, Set, ThreadCpuClock, UnionMap, UnionSet,
};
use crate::maps::{names, pad_to_common_depth, projection, tuple};
use crate::parametric::{concrete_tree, parametric_copy, ParametricProblem};
use crate::point_order::point_order;
use crate::scop::{stmt_of_name, ScopSets};
use crate::tile_size::{
    coarsen_carried, default_tile_size_within, lengthen_inner_within, lengthen_runs,
    lengthen_time_tiled, tile_work, time_tiled, MIN_INNER, MIN_RUN_BYTES, MIN_TASK_WORK,
    MIN_TILE_WORK, SHORT_INNER,
};
use crate::{Dependences, Error, Fuse, Nest, Result, ScheduleConfig, TiledSchedule, Warning};
use scop_ir::{Scop, StmtId};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::mpsc;

/// Schedules and tiles `scop` so that `deps` (its dependences) are respected.
pub fn schedule(
    scop: &Scop,
    deps: &Dependences,
    cfg: &ScheduleConfig,
) -> Result<(TiledSchedule, Vec<Warning>)> {
    schedule_with(scop, deps, cfg, cfg.max_operations)
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
    let deps = IslDeps::parse(ctx, deps)?.all()?;
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
        let whole = if too_many {
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
                    if !too_many {
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
        time_limit: cfg.time_limit,
    };
    let slot = solved_slot(&key);
    let outcome = match slot.get() {
        Some(outcome) => Ok(outcome.clone()),
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
            // A problem that did not finish within its limit is kept as failed: under the same
            // limit (part of the key) it would be late again. Another thread that asks for the
            // same problem meanwhile waits for this run's outcome.
            Ok(slot
                .get_or_init(|| {
                    RUNS.with(|runs| runs.set(runs.get() + 1));
                    run_scheduler(problem, cfg.time_limit).unwrap_or_else(Outcome::Late)
                })
                .clone())
        }
    };
    Ok(match outcome {
        Ok(Outcome::Done(text)) => Ok(Schedule::read(ctx, &text)?),
        Ok(Outcome::OverBudget) => Err(format!(
            "ran past its budget of {} operations",
            cfg.max_operations
        )),
        Ok(Outcome::Failed(msg)) => Err(format!("failed ({msg})")),
        Ok(Outcome::Late(why)) => Err(why),
        Err(why) => Err(why),
    })
}

/// Whether two statements of `scop` read the same elements of an array it never writes (what
/// [`Fuse::Reuse`] schedules for; without such reads it is `Max` without coincidence).
pub(crate) fn has_read_reuse(scop: &Scop) -> Result<bool> {
    let ctx = Ctx::shared()?;
    let sets = ScopSets::parse(ctx, scop)?;
    Ok(!read_reuse(scop, &sets)?.is_empty()?)
}

/// For [`Fuse::Reuse`]: the pairs of instances of two different statements that read the same
/// element of an array the SCoP never writes, the first one before the second in the source
/// order. As proximity constraints they ask the scheduler to bring the two reads close.
fn read_reuse<'c>(scop: &Scop, sets: &ScopSets<'c>) -> Result<UnionMap<'c>> {
    let ctx = sets.domains.ctx();
    let written: Vec<&str> = scop
        .arrays
        .iter()
        .filter(|a| a.written)
        .map(|a| a.isl_name.as_str())
        .collect();
    let mut reads = UnionMap::empty(ctx)?;
    for map in sets.reads.maps()? {
        let read_only = map
            .tuple_name(crate::isl::Side::Out)
            .is_some_and(|name| !written.contains(&name.as_str()));
        if read_only {
            reads = reads.union(UnionMap::from_map(map)?)?;
        }
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

/// Everything the outcome of one scheduler run depends on: the problem as text, the options, and
/// the limits (an outcome that came in time under one limit says nothing of a shorter one).
#[derive(Clone, PartialEq, Eq, Hash)]
struct ProblemKey {
    domains: String,
    context: String,
    deps: String,
    /// Pairs of reads that are proximity constraints too (`Fuse::Reuse`); empty when none.
    reuse: String,
    fuse: Fuse,
    max_operations: u64,
    max_coefficient: i32,
    max_constant_term: i32,
    /// `schedule_outer_coincidence` (the GPU; see the module documentation).
    outer_coincidence: bool,
    time_limit: Option<std::time::Duration>,
}

/// How many outcomes [`SOLVED`] keeps at most (it starts over when full).
const MAX_SOLVED: usize = 64;

/// The outcome of one problem: set once, by the thread that runs it.
type Slot = std::sync::Arc<std::sync::OnceLock<Outcome>>;

/// The outcomes of the scheduler runs of every thread, by problem (see [`scheduled_tree`]), and
/// how many times the store started over.
static SOLVED: std::sync::LazyLock<
    std::sync::Mutex<(std::collections::HashMap<ProblemKey, Slot>, u64)>,
> = std::sync::LazyLock::new(Default::default);

thread_local! {
    /// Scheduler runs this thread started (tests read it).
    static RUNS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The slot of `key` in [`SOLVED`]: the outcome when some thread has it, else an empty slot
/// that the first thread to run the problem fills.
fn solved_slot(key: &ProblemKey) -> Slot {
    // A thread that panicked while holding the lock left the map whole (inserts are atomic).
    let mut solved = SOLVED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(slot) = solved.0.get(key) {
        return slot.clone();
    }
    if solved.0.len() >= MAX_SOLVED {
        solved.0.clear();
        solved.1 += 1;
    }
    solved.0.entry(key.clone()).or_default().clone()
}

/// Runs `problem` on a scheduler thread of its own (see [`scheduled_tree`]); `Err(why)` when no
/// outcome came within `time_limit`.
fn run_scheduler(
    problem: SchedulingProblem,
    time_limit: Option<std::time::Duration>,
) -> std::result::Result<Outcome, String> {
    run_bounded("isl-scheduler", time_limit, move || problem.solve())
}

/// Runs `work` on a thread of its own named `name`, and returns its result if it comes within
/// `limit` of that thread's CPU time (`None`: no limit); where the system has no thread clock,
/// within `limit` of wall-clock time. A result that took more is late too, so that the outcome
/// does not depend on how often the caller looked, nor on the machine's load. A late thread is
/// left to finish on its own (ISL cannot be interrupted); its result is dropped.
pub fn run_bounded<T: Send + 'static>(
    name: &str,
    limit: Option<std::time::Duration>,
    work: impl FnOnce() -> T + Send + 'static,
) -> std::result::Result<T, String> {
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let outcome = work();
            // The receiver may be gone (time limit passed): nothing to do then.
            let _ = tx.send((outcome, this_thread_cpu_time()));
        });
    let thread = match spawned {
        Ok(thread) => thread,
        Err(err) => return Err(format!("could not start ({err})")),
    };
    match limit {
        Some(limit) => wait_within(&thread, &rx, limit),
        None => rx
            .recv()
            .map(|(outcome, _)| outcome)
            .map_err(|_| "stopped without a result".to_string()),
    }
}

/// The thread's outcome, if it comes within `limit` (see [`run_bounded`]).
fn wait_within<T>(
    thread: &std::thread::JoinHandle<()>,
    rx: &mpsc::Receiver<(T, Option<std::time::Duration>)>,
    limit: std::time::Duration,
) -> std::result::Result<T, String> {
    const POLL: std::time::Duration = std::time::Duration::from_millis(5);
    let start = std::time::Instant::now();
    let clock = ThreadCpuClock::of(thread);
    let late = || format!("did not finish within {limit:?} of CPU time");
    loop {
        match rx.recv_timeout(POLL) {
            Ok((outcome, used)) => {
                return match used.or_else(|| clock.is_none().then(|| start.elapsed())) {
                    Some(used) if used > limit => Err(late()),
                    _ => Ok(outcome),
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let used = match &clock {
                    Some(clock) => clock.used(),
                    None => Some(start.elapsed()),
                };
                if used.is_some_and(|used| used > limit) {
                    return Err(late());
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err("stopped without a result".to_string())
            }
        }
    }
}

/// A scheduling problem as text, so that it can move to the scheduler's thread.
struct SchedulingProblem {
    /// The problem, its options and its limits.
    key: ProblemKey,
    /// The problem with its sizes as parameters, scheduled first (see `parametric`).
    parametric: Option<ParametricProblem>,
}

/// What the scheduler's thread reports.
#[derive(Clone)]
enum Outcome {
    /// The schedule tree, printed.
    Done(String),
    OverBudget,
    Failed(String),
    /// No outcome within the time limit (or the thread stopped): why.
    Late(String),
}

impl SchedulingProblem {
    /// Runs the ISL scheduler (validity = proximity = coincidence = all dependences) in a fresh
    /// context with the options of the module documentation: on the parametric copy first, and on
    /// the problem itself when there is no copy or the copy's schedule depends on its sizes.
    fn solve(&self) -> Outcome {
        if let Some(copy) = &self.parametric {
            if let Outcome::Done(tree) =
                self.solve_one(&copy.domains, &copy.context, &copy.deps, copy.own_params)
            {
                if let Some(tree) = concrete_tree(&tree, &copy.names, &self.key.domains) {
                    return Outcome::Done(tree);
                }
            }
        }
        self.solve_one(&self.key.domains, &self.key.context, &self.key.deps, true)
    }

    /// [`SchedulingProblem::solve`] on the given domains, context and dependences (ISL text), with
    /// or without parameter coefficients in the schedule (`parametric`).
    fn solve_one(&self, domains: &str, context: &str, deps: &str, parametric: bool) -> Outcome {
        let ctx = match Ctx::new() {
            Ok(ctx) => ctx,
            Err(err) => return Outcome::Failed(err.to_string()),
        };
        let run = || -> Result<String> {
            ctx.set_schedule_outer_coincidence(self.key.outer_coincidence)?;
            if !parametric {
                ctx.set_schedule_parametric(false)?;
            }
            ctx.set_schedule_serialize_sccs(self.key.fuse == Fuse::Min)?;
            ctx.set_schedule_whole_component(matches!(self.key.fuse, Fuse::Max | Fuse::Reuse))?;
            ctx.set_schedule_option(ScheduleOption::MaxCoefficient, self.key.max_coefficient)?;
            ctx.set_schedule_option(ScheduleOption::MaxConstantTerm, self.key.max_constant_term)?;
            let deps = UnionMap::read(&ctx, deps)?;
            let proximity = match self.key.reuse.is_empty() {
                true => deps.clone(),
                false => deps.clone().union(UnionMap::read(&ctx, &self.key.reuse)?)?,
            };
            let constraints = ScheduleConstraints::on_domain(UnionSet::read(&ctx, domains)?)?
                .set_context(Set::read(&ctx, context)?)?
                .set_validity(deps.clone())?
                .set_proximity(proximity)?
                .set_coincidence(match self.key.fuse {
                    // Coincidence would keep each statement's parallel loop outermost, and the
                    // reads apart (bicg's `s` along `j`, `q` along `i`); the fused band's tiles
                    // run as wavefronts instead.
                    Fuse::Reuse => UnionMap::empty(&ctx)?,
                    _ => deps,
                })?;
            ctx.set_max_operations(self.key.max_operations);
            let tree = constraints.compute_schedule();
            ctx.set_max_operations(0);
            tree?.to_str()
        };
        match run() {
            Ok(text) => Outcome::Done(text),
            Err(_) if ctx.quota_hit() => Outcome::OverBudget,
            Err(err) => Outcome::Failed(err.to_string()),
        }
    }
}

/// A group of [`split_tree`] with at most this many statements is first scheduled as a whole (its
/// outer loop may then be distributed, or fused with its inner loops into a deeper band), and
/// inside its outer loop only when that fails. Correlation's groups (at most 5 statements) take
/// about 10 ms each and its last one gets a 2-D band instead of a 1-D one; ludcmp's first group
/// (6 statements, non-uniform dependences) takes over a second of ISL's time for the same nests
/// that its outer loop gives in 0.1 s.
const MAX_WHOLE_GROUP: usize = 5;

/// Whether one of `stmts` writes a scalar, or an expanded one (an array whose rank is not that of
/// its declaration): a temporary whose values stay in one iteration of the group's outer loop.
/// Such a group keeps that loop outermost, so that the temporary stays private to each task
/// (`privatize`): scheduled whole, ludcmp's forward substitution separates `w = b[i]`, the sum and
/// `y[i] = w` into three nests, and `w` crosses them.
fn writes_scalar(scop: &Scop, stmts: &[StmtId]) -> bool {
    stmts
        .iter()
        .filter_map(|&s| scop.statements.get(s.index()))
        .any(|stmt| {
            stmt.accesses.iter().any(|a| {
                a.kind == scop_ir::AccessKind::Write
                    && scop
                        .arrays
                        .get(a.array.0 as usize)
                        .is_some_and(|array| array.rank == 0 || array.rank != array.extents.len())
            })
        })
}

/// The CPU time [`split_tree`] gives ISL for a group scheduled as a whole; past it, the group is
/// scheduled inside its outer loop. A bound on the rare slow group, far above the usual 10 ms.
const GROUP_TIME_LIMIT: std::time::Duration = std::time::Duration::from_millis(150);

/// ISL's scheduler inside each outermost loop of the original order: the statements grouped as in
/// [`original_tree`], each group's outermost original loop kept as a sequential band, and the ISL
/// scheduler run on the group with only the dependences inside one iteration of that loop (the
/// others are carried by it).
fn split_tree<'c>(
    scop: &Scop,
    sets: &ScopSets<'c>,
    groups: &[(Vec<StmtId>, UnionSet<'c>)],
    deps: &UnionMap<'c>,
    loops: Option<&crate::reversal::Loops>,
    cfg: &ScheduleConfig,
) -> Result<std::result::Result<Schedule<'c>, String>> {
    let ctx = sets.domains.ctx();
    let (original, depth) = pad_to_common_depth(sets.original.clone())?;
    let mut tree: Option<Schedule<'c>> = None;
    for (stmts, domain) in groups {
        let domain = domain.clone();
        let shallowest = stmts
            .iter()
            .map(|&s| scop.statement(s).iterators.len())
            .min()
            .unwrap_or(0);
        let group_deps = deps
            .clone()
            .intersect_domain(domain.clone())?
            .intersect_range(domain.clone())?;
        let whole =
            match stmts.len() <= MAX_WHOLE_GROUP && shallowest > 0 && !writes_scalar(scop, stmts) {
                true => {
                    let time_limit = Some(
                        cfg.time_limit
                            .map_or(GROUP_TIME_LIMIT, |t| t.min(GROUP_TIME_LIMIT)),
                    );
                    scheduled_tree(
                        &domain,
                        &sets.context,
                        &group_deps,
                        None,
                        loops,
                        &ScheduleConfig {
                            time_limit,
                            ..cfg.clone()
                        },
                    )?
                    .ok()
                }
                false => None,
            };
        let group = if let Some(whole) = whole {
            whole
        } else if shallowest == 0 || depth < 2 {
            Schedule::from_domain(domain)?
        } else {
            let outer = original
                .clone()
                .intersect_domain(domain.clone())?
                .apply_range(UnionMap::read(ctx, &projection(depth, "", &[1]))?)?;
            let same = outer.clone().apply_range(outer.clone().reverse()?)?;
            match scheduled_tree(
                &domain,
                &sets.context,
                &group_deps.clone().intersect(same)?,
                None,
                loops,
                cfg,
            )? {
                Ok(inner) => under_outer_loop(inner, outer, domain.clone(), &group_deps)?,
                Err(why) => return Ok(Err(why)),
            }
        };
        tree = Some(match tree {
            None => group,
            Some(before) => before.sequence(group)?,
        });
    }
    Ok(Ok(match tree {
        Some(tree) => tree,
        None => Schedule::from_domain(sets.domains.clone())?,
    }))
}

/// `inner` (a group's schedule inside one iteration of its outer loop) below `outer` (that loop).
/// When `inner` starts with a band and every dependence of the group (`deps`, carried ones too)
/// has a non-negative distance on `outer` and on each member of that band, both become one
/// permutable band, so that tiling covers the outer loop too; otherwise `outer` is a band of its
/// own above `inner`. Either way the order is `outer`, then `inner`'s.
fn under_outer_loop<'c>(
    inner: Schedule<'c>,
    outer: UnionMap<'c>,
    domain: UnionSet<'c>,
    deps: &UnionMap<'c>,
) -> Result<Schedule<'c>> {
    let ctx = inner.ctx();
    let root = inner.root()?;
    let top = if root.n_children()? > 0 {
        Some(root.child(0)?)
    } else {
        None
    };
    let members = match &top {
        Some(node) if node.kind()? == NodeKind::Band => node.band_n_member()?,
        _ => 0,
    };
    let (flat, depth) = pad_to_common_depth(
        root.subtree_schedule_union_map()?
            .intersect_domain(domain.clone())?,
    )?;
    drop(top);
    drop(root);
    let non_negative = |dim: &UnionMap<'c>| -> Result<bool> {
        let distances = deps
            .clone()
            .apply_domain(dim.clone())?
            .apply_range(dim.clone())?
            .deltas()?;
        distances.is_subset(&UnionSet::read(ctx, "{ [d] : d >= 0 }")?)
    };
    let member = |k: usize| -> Result<UnionMap<'c>> {
        flat.clone()
            .apply_range(UnionMap::read(ctx, &projection(depth, "", &[k]))?)
    };
    let mut permutable = members > 0 && non_negative(&outer)?;
    let mut k = 0;
    while permutable && k < members {
        permutable = non_negative(&member(k)?)?;
        k += 1;
    }
    if !permutable {
        return inner.insert_partial_schedule(outer);
    }
    // ISL, free to order the iterations of the outer loop (nothing inside one iteration orders
    // them), may give the band a member that is the outer loop again (deriche's column passes:
    // `[j, j, i]` once joined): constant inside one iteration, it adds nothing to the order, and
    // kept, it would be a second tile dimension on the diagonal of the first and a point loop
    // that the intra-tile order may move innermost in vain. Such members are left out.
    let same = outer.clone().apply_range(outer.clone().reverse()?)?;
    let zero = UnionSet::read(ctx, "{ [0] }")?;
    let mut band = Vec::new();
    for k in 0..members {
        let m = member(k)?;
        let moves = same
            .clone()
            .apply_domain(m.clone())?
            .apply_range(m)?
            .deltas()?;
        if !moves.is_subset(&zero)? {
            band.push(k);
        }
    }
    let rest: Vec<usize> = (members..depth).collect();
    let mut group = Schedule::from_domain(domain)?;
    if !rest.is_empty() {
        group = group.insert_partial_schedule(
            flat.clone()
                .apply_range(UnionMap::read(ctx, &projection(depth, "", &rest))?)?,
        )?;
    }
    let combined = outer.flat_range_product(
        flat.apply_range(UnionMap::read(ctx, &projection(depth, "", &band))?)?,
    )?;
    group = group.insert_partial_schedule(combined)?;
    group
        .root()?
        .child(0)?
        .band_set_permutable(true)?
        .schedule()
}

/// The statements of `scop` grouped by the first value of their original schedules, in that
/// order, with the group's instances.
fn original_groups<'c>(
    scop: &Scop,
    sets: &ScopSets<'c>,
) -> Result<Vec<(Vec<StmtId>, UnionSet<'c>)>> {
    let ctx = sets.domains.ctx();
    let (original, depth) = pad_to_common_depth(sets.original.clone())?;
    let mut domain_of = BTreeMap::new();
    for set in sets.domains.sets()? {
        if let Some(stmt) = set.tuple_name().as_deref().and_then(stmt_of_name) {
            domain_of.insert(stmt, set);
        }
    }
    let mut groups: BTreeMap<i64, Vec<StmtId>> = BTreeMap::new();
    for map in original.maps()? {
        let Some(stmt) = map
            .tuple_name(crate::isl::Side::In)
            .as_deref()
            .and_then(stmt_of_name)
        else {
            continue;
        };
        let first = if depth == 0 {
            Some(0)
        } else {
            map.plain_fixed_out(0)?
        };
        let Some(first) = first else {
            return Err(Error::Unsupported(format!(
                "{stmt}: the original schedule `{}` does not start with a constant",
                scop.statement(stmt).schedule
            )));
        };
        groups.entry(first).or_default().push(stmt);
    }
    let mut out = Vec::new();
    for stmts in groups.into_values() {
        let mut domain = UnionSet::empty(ctx)?;
        for stmt in &stmts {
            if let Some(set) = domain_of.get(stmt) {
                domain = domain.union(UnionSet::from_set(set.clone())?)?;
            }
        }
        out.push((stmts, domain));
    }
    Ok(out)
}

/// The original order as a schedule tree (see the module documentation).
fn original_tree<'c>(
    scop: &Scop,
    sets: &ScopSets<'c>,
    deps: &UnionMap<'c>,
) -> Result<Schedule<'c>> {
    let ctx = sets.domains.ctx();
    let (original, depth) = pad_to_common_depth(sets.original.clone())?;
    let mut tree: Option<Schedule<'c>> = None;
    for (stmts, domain) in original_groups(scop, sets)? {
        let group_sched = original.clone().intersect_domain(domain.clone())?;
        let group_deps = deps
            .clone()
            .intersect_domain(domain.clone())?
            .intersect_range(domain.clone())?;
        let shallowest = stmts
            .iter()
            .map(|&s| scop.statement(s).iterators.len())
            .min()
            .unwrap_or(0);
        let max_band = shallowest.min(depth.saturating_sub(1) / 2);
        let mut band = 0;
        while band < max_band {
            let dim = group_sched.clone().apply_range(UnionMap::read(
                ctx,
                &projection(depth, "", &[2 * band + 1]),
            )?)?;
            let distances = group_deps
                .clone()
                .apply_domain(dim.clone())?
                .apply_range(dim)?
                .deltas()?;
            if !distances.is_subset(&UnionSet::read(ctx, "{ [d] : d >= 0 }")?)? {
                break;
            }
            band += 1;
        }
        let mut group = Schedule::from_domain(domain)?;
        if depth > 1 {
            let rest: Vec<usize> = (1..depth).collect();
            group = group.insert_partial_schedule(
                group_sched
                    .clone()
                    .apply_range(UnionMap::read(ctx, &projection(depth, "", &rest))?)?,
            )?;
        }
        if band > 0 {
            let loops: Vec<usize> = (0..band).map(|k| 2 * k + 1).collect();
            group = group.insert_partial_schedule(
                group_sched.apply_range(UnionMap::read(ctx, &projection(depth, "", &loops))?)?,
            )?;
            group = group
                .root()?
                .child(0)?
                .band_set_permutable(true)?
                .schedule()?;
        }
        tree = Some(match tree {
            None => group,
            Some(before) => before.sequence(group)?,
        });
    }
    match tree {
        Some(tree) => Ok(tree),
        None => Schedule::from_domain(sets.domains.clone()),
    }
}

/// Finds the nests of `tree`, tiles their outermost bands, and flattens each into a [`Nest`].
/// With `order_once` false the point order is asked of each tiled schedule, as on the GPU, instead
/// of once per band ([`one_tile_order`]; tests compare both ways).
fn tile_nests<'c>(
    scop: &Scop,
    tree: Schedule<'c>,
    cfg: &ScheduleConfig,
    from_scheduler: bool,
    deps: &UnionMap<'c>,
    order_once: bool,
) -> Result<(Schedule<'c>, Vec<Nest>)> {
    let tile_sizes = cfg.tile_sizes.as_deref();
    let parallel_outer = cfg.parallel_point_loops_outer;
    let root = tree.root()?;
    let mut paths = Vec::new();
    if root.n_children()? > 0 {
        collect_nests(&root.child(0)?, vec![0], &mut paths)?;
    }
    drop(root);
    let mut tree = tree;
    let mut nests = Vec::new();
    for path in &paths {
        let mut node = tree.root()?;
        for &pos in path {
            node = node.child(pos)?;
        }
        let domain = node.domain()?;
        if domain.is_empty()? {
            continue;
        }
        let mut statements: Vec<StmtId> = domain
            .sets()?
            .iter()
            .filter_map(|s| s.tuple_name().as_deref().and_then(stmt_of_name))
            .collect();
        statements.sort();
        statements.dedup();
        let mut sizes = Vec::new();
        let mut whole: Vec<usize> = Vec::new();
        let mut order: Option<Vec<usize>> = None;
        let mut inner = None;
        if let (Some(ts), false) = (tile_sizes, parallel_outer) {
            let size = (!ts.is_empty()).then(|| ts[ts.len().min(3) - 1]);
            inner = inner_tiles(scop, &node, &domain, deps, size, cfg.tile_footprint)?;
        }
        if let Some((_, inner_sizes)) = &inner {
            sizes = inner_sizes.clone();
        } else if let (NodeKind::Band, Some(ts)) = (node.kind()?, tile_sizes) {
            let n = node.band_n_member()?;
            let permutable = node.band_permutable()?;
            let members = if permutable {
                n
            } else if from_scheduler {
                1
            } else {
                0
            };
            if members > 0 {
                if members < n {
                    node = node.band_split(members)?;
                }
                // Off the GPU the order of the point loops does not depend on the tile sizes
                // (see `one_tile_order`): it is asked once, of the band as one tile.
                if order_once && !parallel_outer && members >= 2 {
                    order = Some(one_tile_order(scop, &node, &domain, members, deps, false)?);
                }
                sizes = if ts.is_empty() {
                    default_sizes(
                        scop,
                        &node,
                        &domain,
                        &statements,
                        members,
                        deps,
                        parallel_outer,
                        order.as_deref(),
                        cfg.tile_footprint,
                    )?
                } else {
                    (0..members).map(|i| ts[i.min(ts.len() - 1)]).collect()
                };
                if ts.is_empty() && !parallel_outer && !cfg.whole_carrying_members {
                    sizes = coarsen_band(
                        scop,
                        &node,
                        &domain,
                        &statements,
                        sizes,
                        deps,
                        cfg.tile_footprint,
                    )?;
                }
                if cfg.whole_carrying_members {
                    let band = node
                        .subtree_schedule_union_map()?
                        .intersect_domain(domain.clone())?;
                    let free = free_members(band, members, deps)?;
                    if free.contains(&true) {
                        whole = (0..members).filter(|&m| !free[m]).collect();
                    }
                }
                // A member not cut is tiled by 1 here and its tile coordinate set to 0 below.
                let isl_sizes: Vec<i64> = sizes
                    .iter()
                    .enumerate()
                    .map(|(m, &s)| if whole.contains(&m) { 1 } else { s })
                    .collect();
                for &m in &whole {
                    sizes[m] = crate::WHOLE_LOOP;
                }
                node = node.band_tile(&isl_sizes)?;
            }
        }
        let nest_id = nests.len();
        let flat = match inner.take() {
            Some((flat, _)) => flat,
            None => node
                .subtree_schedule_union_map()?
                .intersect_domain(domain.clone())?,
        };
        let (mut flat, depth) = pad_to_common_depth(flat)?;
        if !whole.is_empty() {
            // One tile along the members not cut, whatever the parameters.
            let o = names("o", depth);
            let zeroed: Vec<String> = o
                .iter()
                .enumerate()
                .map(|(d, v)| {
                    if whole.contains(&d) {
                        "0".to_string()
                    } else {
                        v.clone()
                    }
                })
                .collect();
            let map = format!("{{ {} -> {} }}", tuple("", &o), tuple("", &zeroed));
            flat = flat.apply_range(UnionMap::read(tree.ctx(), &map)?)?;
        }
        let flat = reorder_points(scop, flat, depth, sizes.len(), deps, parallel_outer, order)?;
        let keep: Vec<usize> = (0..sizes.len()).collect();
        let name = format!("N{nest_id}");
        let tile_map = flat
            .clone()
            .apply_range(UnionMap::read(
                tree.ctx(),
                &projection(depth, &name, &keep),
            )?)?
            .coalesce()?;
        let tile_domain = tile_map.clone().range()?.coalesce()?;
        nests.push(Nest {
            statements,
            tile_sizes: sizes,
            schedule: flat.coalesce()?.to_str()?,
            tile_map: tile_map.to_str()?,
            tile_domain: tile_domain.to_str()?,
        });
        tree = node.schedule()?;
    }
    Ok((tree, nests))
}

/// Instances of the loops below a sequential outer loop per outer iteration, at least, for
/// [`inner_tiles`] to cut them into tasks (a few tens of microseconds of work per phase and
/// tile count).
const MIN_INNER_INSTANCES: f64 = 65536.0;

/// Tiles under a sequential loop: when the nest at `node` is a one-member band whose member
/// carries a dependence (its tiles would be a chain: adi's time loop, floyd-warshall's `k`) over
/// a sequence (or set) of children or over one band, and a child is a band whose first member
/// of its own blocks well within one iteration of the outer loop (adi's sweeps, parallel over
/// `i`; floyd-warshall's rows, which depend on each other only through row `k`), the nest's tiles
/// are the phases `(t, s, ⌊i / T⌋)`: one outer iteration, one child (`s` is 0 under a band), a
/// block of `T` of that member (children that are not such bands are one tile each). The flat
/// schedule is `[t, s, ⌊i/T⌋, t, s, i, ..]` with tile sizes `[1, 1, T]`.
///
/// A member blocks well when no dependence within one outer iteration and one child goes back
/// along it (so that the blocks' order, then the untiled schedule inside a block, is legal) and
/// the dependences between its blocks make paths of at most two steps (so that a phase's blocks
/// run as at most three waves: floyd-warshall's rows above `k`, the block of row `k`, the rows
/// below it; a recurrence along the member would be a chain of blocks and is not cut). Only
/// where a phase holds at least [`MIN_INNER_INSTANCES`] instances with the parameters known (a
/// phase of durbin's inner loops is a few thousand instances: cutting those would only add
/// tasks). `size` is the user's tile size for the member; the default is the band's for one
/// member.
fn inner_tiles<'c>(
    scop: &Scop,
    node: &ScheduleNode<'c>,
    domain: &UnionSet<'c>,
    deps: &UnionMap<'c>,
    size: Option<i64>,
    budget: u64,
) -> Result<Option<(UnionMap<'c>, Vec<i64>)>> {
    if node.kind()? != NodeKind::Band || node.band_n_member()? != 1 || node.n_children()? != 1 {
        return Ok(None);
    }
    let below = node.child(0)?;
    let band = node
        .subtree_schedule_union_map()?
        .intersect_domain(domain.clone())?;
    if free_members(band.clone(), 1, deps)?[0] {
        return Ok(None); // the outer loop is parallel: its own tiles are
    }
    let (flat, depth) = pad_to_common_depth(band)?;
    let ctx = flat.ctx();
    let o = names("o", depth);
    // Each child: its part of the flat schedule and its subtree, with the flat schedule's
    // second dimension the child's position.
    let (depth, children) = match below.kind()? {
        NodeKind::Sequence | NodeKind::Set => {
            let mut children = Vec::new();
            for pos in 0..below.n_children()? {
                let filter = below.child(pos)?;
                if filter.n_children()? != 1 {
                    return Ok(None);
                }
                let part = flat.clone().intersect_domain(filter.domain()?)?;
                children.push((part, filter.child(0)?));
            }
            (depth, children)
        }
        NodeKind::Band => {
            let mut to = vec![o[0].clone(), "0".to_string()];
            to.extend(o[1..].iter().cloned());
            let map = format!("{{ {} -> {} }}", tuple("", &o), tuple("", &to));
            let flat = flat.apply_range(UnionMap::read(ctx, &map)?)?;
            (depth + 1, vec![(flat, below)])
        }
        _ => return Ok(None),
    };
    if depth < 3 {
        return Ok(None);
    }
    let o = names("o", depth);
    let o2: Vec<String> = o.iter().map(|v| format!("{v}_")).collect();
    let same_outer = UnionMap::read(
        ctx,
        &format!(
            "{{ {} -> {} : {} = {} and {} = {} }}",
            tuple("", &o),
            tuple("", &o2),
            o2[0],
            o[0],
            o2[1],
            o[1]
        ),
    )?;
    let mut out = UnionMap::empty(ctx)?;
    let mut any = false;
    // The block size reported for the third tile dimension: the largest one used (children's
    // defaults may differ).
    let mut used = 1;
    for (part, child) in children {
        // The child band's first member that is a loop of its own (ISL's band under a kept
        // outer loop repeats it first: adi's sweeps are `(t, i)` bands under `t`).
        let member = match child.kind()? {
            NodeKind::Band => own_member(&part, 2, (2 + child.band_n_member()?).min(depth))?,
            _ => None,
        };
        let mut tiled = None;
        if let Some(d) = member {
            let within = deps
                .clone()
                .apply_domain(part.clone())?
                .apply_range(part.clone())?
                .intersect(same_outer.clone())?;
            let back = UnionSet::read(ctx, &format!("{{ {} : {} < 0 }}", tuple("", &o), o[d]))?;
            if within.clone().deltas()?.intersect(back)?.is_empty()?
                && inner_instances(&part, depth)? >= MIN_INNER_INSTANCES
            {
                let stmts: Vec<StmtId> = part
                    .clone()
                    .domain()?
                    .sets()?
                    .iter()
                    .filter_map(|s| s.tuple_name().as_deref().and_then(stmt_of_name))
                    .collect();
                let t = size.unwrap_or_else(|| {
                    crate::tile_size::default_tile_size_within(scop, &stmts, 1, budget)
                });
                if blocks_in_three_waves(&within, &o, d, t)? {
                    tiled = Some(t);
                }
            }
        }
        let tile = match (tiled, member) {
            (Some(t), Some(d)) => {
                any = true;
                used = used.max(t);
                format!("floor({} / {t})", o[d])
            }
            _ => "0".to_string(),
        };
        let mut to: Vec<String> = vec![o[0].clone(), o[1].clone(), tile];
        to.extend(o.iter().cloned());
        let map = format!("{{ {} -> {} }}", tuple("", &o), tuple("", &to));
        out = out.union(part.apply_range(UnionMap::read(ctx, &map)?)?)?;
    }
    if !any {
        return Ok(None);
    }
    let sizes = vec![1, 1, used];
    Ok(Some((out, sizes)))
}

/// Whether the dependences `within` one phase (between points of a flat schedule over `o`)
/// relate its blocks `⌊o[d] / t⌋` by paths of at most two steps: the blocks then run as at most
/// three waves, however many there are.
fn blocks_in_three_waves(within: &UnionMap<'_>, o: &[String], d: usize, t: i64) -> Result<bool> {
    let ctx = within.ctx();
    let blocks = format!(
        "{{ {} -> [{}, {}, floor({} / {t})] }}",
        tuple("", o),
        o[0],
        o[1],
        o[d]
    );
    let blocks = UnionMap::read(ctx, &blocks)?;
    let between = within
        .clone()
        .apply_domain(blocks.clone())?
        .apply_range(blocks)?
        .subtract(UnionMap::read(ctx, "{ [b0, b1, b2] -> [b0, b1, b2] }")?)?
        .coalesce()?;
    let three = between
        .clone()
        .apply_range(between.clone())?
        .apply_range(between)?;
    three.is_empty()
}

/// The first dimension in `from .. to` of `part` (a flat schedule) that is a loop of its own:
/// the dimensions before it each take one value in an iteration of the first two dimensions (a
/// copy of dimension 0, a function of it such as nussinov's `1 + i` under `-i`, or a constant),
/// so that ordering by a block of the loop first keeps the order of the instances within one
/// iteration of the first two dimensions. `None` when there is no such dimension.
fn own_member(part: &UnionMap<'_>, from: usize, to: usize) -> Result<Option<usize>> {
    let range = part.clone().range()?;
    let ctx = range.ctx();
    let depth = match range.sets()?.first() {
        Some(set) => set.n_dims()?,
        None => return Ok(None),
    };
    let o = names("o", depth);
    let phase = UnionMap::read(
        ctx,
        &format!("{{ {} -> [{}, {}] }}", tuple("", &o), o[0], o[1]),
    )?
    .intersect_domain(range)?
    .reverse()?;
    for d in from..to {
        let value = UnionMap::read(ctx, &format!("{{ {} -> [{}] }}", tuple("", &o), o[d]))?;
        if phase.clone().apply_range(value)?.is_single_valued()? {
            continue;
        }
        return Ok(Some(d));
    }
    Ok(None)
}

/// The number of instances of `part` (a flat schedule of `depth` dimensions) in one iteration
/// of its first two dimensions, estimated as the product of the extents of the others (`0` when
/// an extent is not known).
fn inner_instances(part: &UnionMap<'_>, depth: usize) -> Result<f64> {
    let mut most = 0.0f64;
    for set in part.clone().range()?.coalesce()?.sets()? {
        let mut n = 1.0f64;
        for d in 2..depth {
            match set.dim_range(d)? {
                Some((lo, hi)) => n *= (hi - lo + 1) as f64,
                None => return Ok(0.0),
            }
        }
        most = most.max(n);
    }
    Ok(most)
}

/// The default tile sizes of the `p`-member band at `node` (not yet tiled) over `statements`:
/// [`default_tile_size`] for every member, with the member that [`point_order`] puts innermost
/// lengthened by [`lengthen_inner`] when that size is short, or, in a short band with a time
/// loop ([`time_loops`]) off the GPU, one tile over its whole range (see `tile_size`'s module
/// doc: whole rows under a time loop). `order` is the band's point order
/// when the caller has it; otherwise it is asked of the band as one tile, and only for such
/// short sizes.
#[allow(clippy::too_many_arguments)]
fn default_sizes<'c>(
    scop: &Scop,
    node: &ScheduleNode<'c>,
    domain: &UnionSet<'c>,
    statements: &[StmtId],
    p: usize,
    deps: &UnionMap<'c>,
    parallel_outer: bool,
    order: Option<&[usize]>,
    budget: u64,
) -> Result<Vec<i64>> {
    let size = default_tile_size_within(scop, statements, p, budget);
    let small = size.saturating_pow(p as u32) < MIN_TILE_WORK && time_tiled(scop, statements, p);
    if size >= SHORT_INNER && !small {
        return Ok(vec![size; p]);
    }
    let order = match order {
        Some(order) => order.to_vec(),
        None => one_tile_order(scop, node, domain, p, deps, parallel_outer)?,
    };
    let inner = order.last().copied().unwrap_or(p - 1);
    // Off the GPU only: there the members' sizes shape the thread blocks.
    if size < SHORT_INNER
        && p >= 3
        && !parallel_outer
        && time_loops(node.ctx(), scop, statements, p)?
    {
        let band = node
            .subtree_schedule_union_map()?
            .intersect_domain(domain.clone())?;
        let shape = band_rows(scop, &band, p)?;
        let whole = shape.as_ref().and_then(|b| b.ranges.get(inner).copied());
        if let (Some(whole), Some(BandRows { rows, .. })) = (whole.and_then(one_tile_over), shape) {
            // One tile's rows, with `outer` values along each other member.
            let footprint = |outer: u64| -> u64 {
                rows.iter()
                    .map(|&(rank, bytes, length)| {
                        let others = rank.min(p).saturating_sub(1) as u32;
                        bytes
                            .saturating_mul(outer.saturating_pow(others))
                            .saturating_mul(length.max(1) as u64)
                    })
                    .fold(0u64, u64::saturating_add)
            };
            let mut outer = size;
            while outer > MIN_WHOLE_ROW_OUTER && footprint(outer as u64) > ROWS_BUDGET * budget {
                outer /= 2;
            }
            if footprint(outer as u64) <= ROWS_BUDGET * budget {
                let mut sizes = vec![outer; p];
                sizes[inner] = whole;
                return Ok(sizes);
            }
        }
    }
    let sizes = lengthen_inner_within(scop, statements, size, p, inner, budget);
    Ok(lengthen_time_tiled(scop, statements, sizes, inner, budget))
}

/// Whether each of `statements` has `depth` iterators, one of which no subscript of its accesses
/// depends on (a time loop: stepping it alone reaches the same elements).
fn time_loops(ctx: &Ctx, scop: &Scop, statements: &[StmtId], depth: usize) -> Result<bool> {
    for id in statements {
        let Some(stmt) = scop.statements.get(id.index()) else {
            return Ok(false);
        };
        let n = stmt.iterators.len();
        if n != depth {
            return Ok(false);
        }
        let name = format!("S{}", id.index());
        let x = names("x", n);
        let mut timeless = vec![true; n];
        for access in &stmt.accesses {
            let reached = UnionMap::read(ctx, &access.relation)?;
            for (k, timeless) in timeless.iter_mut().enumerate().filter(|(_, t)| **t) {
                // Instances that differ in iterator `k` alone, mapped to the elements they reach.
                let y: Vec<String> = (0..n)
                    .map(|d| {
                        if d == k {
                            "y".to_string()
                        } else {
                            x[d].clone()
                        }
                    })
                    .collect();
                let step = UnionMap::read(
                    ctx,
                    &format!("{{ {} -> {} }}", tuple(&name, &x), tuple(&name, &y)),
                )?;
                let deltas = step
                    .apply_domain(reached.clone())?
                    .apply_range(reached.clone())?
                    .deltas()?;
                for set in deltas.sets()? {
                    for d in 0..set.n_dims()? {
                        if set.dim_range(d)? != Some((0, 0)) {
                            *timeless = false;
                        }
                    }
                }
            }
        }
        if !timeless.contains(&true) {
            return Ok(false);
        }
    }
    Ok(!statements.is_empty())
}

/// The largest tile [`one_tile_over`] gives a member: 2^16 values.
const MAX_WHOLE_ROW_TILE: i64 = 1 << 16;
/// The smallest size the other members of a band with whole rows take.
const MIN_WHOLE_ROW_OUTER: i64 = 4;
/// How many times the tile budget one tile's whole rows may take: the budget is a quarter of L2
/// (`cost::Machine::tile_footprint`), and whole rows are laid out in runs the prefetcher follows.
const ROWS_BUDGET: u64 = 4;

/// The smallest power of two, at least [`MIN_INNER`], whose tiles put every value of
/// `(lo, hi)` in one tile (`floor(lo / t) = floor(hi / t)`); `None` above
/// [`MAX_WHOLE_ROW_TILE`].
fn one_tile_over((lo, hi): (i64, i64)) -> Option<i64> {
    let mut t = MIN_INNER;
    while t <= MAX_WHOLE_ROW_TILE {
        if lo.div_euclid(t) == hi.div_euclid(t) {
            return Some(t);
        }
        t *= 2;
    }
    None
}

/// The default `sizes` of the band at `node` (not yet tiled) over `statements`, changed where
/// its tiles are small or read streamed arrays in short runs (see `tile_size`'s module doc):
/// only when the band holds every loop of its statements (so that the product of the sizes
/// bounds a tile's instances). Small tiles get longer along the members that carry a dependence
/// ([`coarsen_carried`]) when the band also has members that carry nothing (whose tiles stay as
/// many, so the parallelism stays); short runs get the member along them lengthened and another
/// shortened ([`lengthen_runs`]). Every change must keep one tile's reused data
/// ([`BandTiles::boxes`]) within `budget` bytes, or within what the default sizes already take if
/// that is more.
#[allow(clippy::too_many_arguments)]
fn coarsen_band<'c>(
    scop: &Scop,
    node: &ScheduleNode<'c>,
    domain: &UnionSet<'c>,
    statements: &[StmtId],
    sizes: Vec<i64>,
    deps: &UnionMap<'c>,
    budget: u64,
) -> Result<Vec<i64>> {
    let members = sizes.len();
    let whole_band = statements.iter().all(|s| {
        scop.statements
            .get(s.index())
            .is_some_and(|st| st.iterators.len() <= members)
    });
    if members < 2 || !whole_band {
        return Ok(sizes);
    }
    let band = node
        .subtree_schedule_union_map()?
        .intersect_domain(domain.clone())?;
    let Some(tiles) = BandTiles::new(scop, &band, members)? else {
        return Ok(sizes);
    };
    let start = tiles.boxes(&sizes)?;
    let work = tile_work(&sizes);
    let short_run = start.shortest_run.is_some_and(|r| r < MIN_RUN_BYTES);
    if work >= MIN_TASK_WORK && !short_run {
        return Ok(sizes);
    }
    let free = free_members(band, members, deps)?;
    let limit = start.reused_bytes.max(budget as f64);
    let carried: Vec<usize> = (0..members).filter(|&m| !free[m]).collect();
    let mut sizes = sizes;
    if work < MIN_TASK_WORK && !carried.is_empty() && carried.len() < members {
        sizes = coarsen_carried(sizes, &carried, |longer| {
            Ok(tiles.boxes(longer)?.reused_bytes <= limit)
        })?;
    }
    lengthen_runs(sizes, &free, tiles.extents(), |other| {
        let boxes = tiles.boxes(other)?;
        Ok((boxes.reused_bytes <= limit)
            .then_some(boxes.shortest_run)
            .flatten())
    })
}

/// The order [`point_order`] gives the point loops of the `p`-member band at `node` (not yet
/// tiled), asked of the band as one tile (tile dimensions 0).
///
/// Off the GPU (`parallel_outer` false) this is also the order of the tiled band, whatever its
/// sizes: `point_order` looks at one step of a point dimension with the tile dimensions left
/// free (they follow from the point dimensions) and at dependence distances on the point
/// dimensions only, and tiling (with `tile_shift_point_loops = 0`) keeps the band's members as
/// the point dimensions and the schedule below them as it is. So `tile_nests` asks once, here,
/// where the schedule has no integer divisions and ISL answers faster than on the tiled one.
/// On the GPU the order depends on which dependences stay inside one tile (`point_order`'s
/// `parallel_first`), so it is asked of the tiled schedule as well.
fn one_tile_order<'c>(
    scop: &Scop,
    node: &ScheduleNode<'c>,
    domain: &UnionSet<'c>,
    p: usize,
    deps: &UnionMap<'c>,
    parallel_outer: bool,
) -> Result<Vec<usize>> {
    let flat = node
        .subtree_schedule_union_map()?
        .intersect_domain(domain.clone())?;
    let (flat, depth) = pad_to_common_depth(flat)?;
    let x = names("o", depth);
    let zeros = vec!["0".to_string(); p];
    let one_tile = format!(
        "{{ {} -> {} }}",
        tuple("", &x),
        tuple("", &[zeros, x.clone()].concat())
    );
    let one_tile = UnionMap::read(flat.ctx(), &one_tile)?;
    let flat = flat.apply_range(one_tile)?;
    point_order(flat.ctx(), scop, &flat, depth + p, p, deps, parallel_outer)
}

/// `flat` (a nest's flat schedule of `depth` dimensions, `p` tile then `p` point dimensions
/// first) with its point dimensions in `order`, or when that is `None` in the order
/// [`point_order`] chooses on `flat`. The schedule tree keeps ISL's order; the nest's schedule,
/// from which tile bodies are generated, has this one.
fn reorder_points<'c>(
    scop: &Scop,
    flat: UnionMap<'c>,
    depth: usize,
    p: usize,
    deps: &UnionMap<'c>,
    parallel_outer: bool,
    order: Option<Vec<usize>>,
) -> Result<UnionMap<'c>> {
    let order = match order {
        Some(order) => order,
        None => point_order(flat.ctx(), scop, &flat, depth, p, deps, parallel_outer)?,
    };
    if order.iter().enumerate().all(|(k, &m)| k == m) {
        return Ok(flat);
    }
    let keep: Vec<usize> = (0..p)
        .chain(order.iter().map(|&m| p + m))
        .chain(2 * p..depth)
        .collect();
    let permutation = UnionMap::read(flat.ctx(), &projection(depth, "", &keep))?;
    flat.apply_range(permutation)
}

/// For the first `members` dimensions of `band` (a nest's schedule below its outermost band,
/// whose members come first): whether every dependence of `deps` inside the nest has distance 0
/// on it (it carries none).
fn free_members<'c>(band: UnionMap<'c>, members: usize, deps: &UnionMap<'c>) -> Result<Vec<bool>> {
    let (band, depth) = pad_to_common_depth(band)?;
    let deltas = deps
        .clone()
        .apply_domain(band.clone())?
        .apply_range(band)?
        .deltas()?;
    let o = names("o", depth);
    (0..members.min(depth))
        .map(|m| {
            let moved = UnionSet::read(
                deltas.ctx(),
                &format!("{{ {} : {m} < 0 or {m} > 0 }}", tuple("", &o), m = o[m]),
            )?;
            deltas.clone().intersect(moved)?.is_empty()
        })
        .collect()
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
mod solved_tests {
    use super::*;

    /// Scheduler runs started by this thread, and how many times the store of outcomes started
    /// over (tests running beside this one fill it too).
    fn runs() -> (u64, u64) {
        let generation = SOLVED.lock().map(|s| s.1).unwrap_or_default();
        (RUNS.with(|r| r.get()), generation)
    }

    /// A scheduling problem solved a second time gets the first outcome back; the same problem
    /// under another option or a shorter time limit is not served from it.
    #[test]
    fn outcomes_are_reused_only_for_the_same_problem_and_limits() {
        let ctx = Ctx::new().unwrap();
        // A producer loop and its consumer: fused under `Max`, separate nests under `Min`.
        let domains =
            UnionSet::read(&ctx, "{ S0[i] : 0 <= i <= 98; S1[i] : 0 <= i <= 98 }").unwrap();
        let context = Set::read(&ctx, "{ : }").unwrap();
        let deps = UnionMap::read(&ctx, "{ S0[i] -> S1[i] : 0 <= i <= 98 }").unwrap();
        let tree = |cfg: &ScheduleConfig| -> std::result::Result<String, String> {
            scheduled_tree(&domains, &context, &deps, None, None, cfg)
                .unwrap()
                .map(|t| t.to_str().unwrap())
        };
        let max = ScheduleConfig {
            fuse: Fuse::Max,
            ..ScheduleConfig::default()
        };
        let (before, _) = runs();
        let first = tree(&max).unwrap();
        let (after_first, generation) = runs();
        assert_eq!(after_first, before + 1);
        assert_eq!(tree(&max).unwrap(), first);
        let (after_second, generation_now) = runs();
        assert!(
            after_second == after_first || generation_now != generation,
            "the second run was served from the first"
        );
        let min = tree(&ScheduleConfig {
            fuse: Fuse::Min,
            ..max.clone()
        })
        .unwrap();
        assert_ne!(min, first, "Min keeps the loops apart");
        assert!(min.contains("sequence"), "{min}");
        assert_eq!(runs().0, after_second + 1);
        // Under a time limit too short for any run the outcome in store is not used.
        let late = tree(&ScheduleConfig {
            time_limit: Some(std::time::Duration::from_nanos(1)),
            ..max.clone()
        });
        assert!(late.unwrap_err().contains("did not finish"));
    }

    /// Threads that ask for one problem at once share one run: the others wait for its outcome.
    #[test]
    fn threads_asking_for_one_problem_share_one_run() {
        let ask = || {
            let ctx = Ctx::shared().unwrap();
            let domains =
                UnionSet::read(ctx, "{ S0[i, j] : 0 <= i, j <= 57; S1[i] : 0 <= i <= 57 }")
                    .unwrap();
            let context = Set::read(ctx, "{ : }").unwrap();
            let deps = UnionMap::read(ctx, "{ S0[i, j] -> S1[i] : 0 <= i, j <= 57 }").unwrap();
            let (before, generation) = runs();
            let tree = scheduled_tree(
                &domains,
                &context,
                &deps,
                None,
                None,
                &ScheduleConfig::default(),
            )
            .unwrap()
            .map(|t| t.to_str().unwrap())
            .unwrap();
            let (after, generation_now) = runs();
            (tree, after - before, generation_now != generation)
        };
        let barrier = std::sync::Barrier::new(3);
        let asked: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..3)
                .map(|_| {
                    scope.spawn(|| {
                        barrier.wait();
                        ask()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(asked.iter().all(|(tree, _, _)| *tree == asked[0].0));
        let started: u64 = asked.iter().map(|(_, runs, _)| runs).sum();
        let started_over = asked.iter().any(|(_, _, over)| *over);
        assert!(
            started == 1 || started_over,
            "{started} runs for one problem"
        );
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
                let all = IslDeps::parse(&ctx, &deps).unwrap().all().unwrap();
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

#[cfg(test)]
mod parametric_tests {
    use super::*;

    /// jacobi-1d at PolyBench's LARGE sizes (T = 500, N = 2000), its dependences as the
    /// `dependences` stage prints them.
    const DOMAINS: &str = "{ S0[t, i] : 0 <= t <= 499 and 0 < i <= 1998; S1[t, i] : 0 <= t <= 499 and 0 < i <= 1998 }";
    const DEPS: &str =
        "{ S1[t, i] -> S0[t' = 1 + t, i' = 1 + i] : 0 <= t <= 498 and 0 < i <= 1997; \
        S1[t, i] -> S0[t' = 1 + t, i' = i] : 0 <= t <= 498 and 0 < i <= 1998; \
        S1[t, i] -> S0[t' = 1 + t, i' = -1 + i] : 0 <= t <= 498 and 2 <= i <= 1998; \
        S0[t, i] -> S1[t' = t, i' = 1 + i] : 0 <= t <= 499 and 0 < i <= 1997; \
        S0[t, i] -> S1[t' = t, i' = i] : 0 <= t <= 499 and 0 < i <= 1998; \
        S0[t, i] -> S1[t' = t, i' = -1 + i] : 0 <= t <= 499 and 2 <= i <= 1998; \
        S0[t, i] -> S0[t' = 1 + t, i' = i] : 0 <= t <= 498 and 0 < i <= 1998; \
        S1[t, i] -> S1[t' = 1 + t, i' = i] : 0 <= t <= 498 and 0 < i <= 1998 }";

    fn problem(ctx: &Ctx, domains: &str, deps: &str, fuse: Fuse) -> SchedulingProblem {
        let d = UnionSet::read(ctx, domains).unwrap();
        let c = Set::read(ctx, "{ : }").unwrap();
        let m = UnionMap::read(ctx, deps).unwrap();
        let key = ProblemKey {
            domains: d.to_str().unwrap(),
            context: c.to_str().unwrap(),
            deps: m.to_str().unwrap(),
            reuse: String::new(),
            fuse,
            max_operations: 2_000_000,
            max_coefficient: 4,
            max_constant_term: 8,
            outer_coincidence: false,
            time_limit: None,
        };
        SchedulingProblem {
            key,
            parametric: parametric_copy(&d, &c, &m).unwrap(),
        }
    }

    fn tree(outcome: Outcome) -> String {
        match outcome {
            Outcome::Done(tree) => tree,
            Outcome::OverBudget => panic!("over budget"),
            Outcome::Failed(m) => panic!("failed: {m}"),
            Outcome::Late(why) => panic!("late: {why}"),
        }
    }

    /// A stencil's copy (sizes as parameters) gets the same schedule tree, on the original
    /// domains, as the original problem, under every fusion heuristic.
    #[test]
    fn stencil_copy_gets_the_original_schedule() {
        let ctx = Ctx::new().unwrap();
        for fuse in [Fuse::Min, Fuse::Smart, Fuse::Max] {
            let p = problem(&ctx, DOMAINS, DEPS, fuse);
            let copy = p.parametric.as_ref().expect("jacobi-1d at LARGE has sizes");
            assert_eq!(copy.names, ["tf_size0", "tf_size1"]);
            let original = tree(p.solve_one(&p.key.domains, &p.key.context, &p.key.deps, true));
            assert_eq!(tree(p.solve()), original, "{fuse:?}");
            // The copy's own tree mentions its sizes, so the test above went through
            // `concrete_tree`.
            let copied = tree(p.solve_one(&copy.domains, &copy.context, &copy.deps, false));
            assert!(copied.contains("tf_size"), "{copied}");
        }
    }

    /// A dependence that is not a translation (S0[i] feeds every S1[i, j]) leaves the problem
    /// without a copy: it is scheduled as it is.
    #[test]
    fn problems_with_other_dependences_are_not_copied() {
        let ctx = Ctx::new().unwrap();
        let p = problem(
            &ctx,
            "{ S0[i] : 0 <= i <= 999; S1[i, j] : 0 <= i <= 999 and 0 <= j <= 999 }",
            "{ S0[i] -> S1[i, j] : 0 <= i <= 999 and 0 <= j <= 999 }",
            Fuse::Smart,
        );
        assert_eq!(p.parametric, None);
    }

    /// Without parameter coefficients the copy of a reversed loop after its initialization (as in
    /// deriche) is scheduled as the original (`-j`), so it is used; with them ISL picks
    /// `tf_size0 - j`, which would send `solve` back to the original problem.
    #[test]
    fn copy_is_scheduled_without_parameter_coefficients() {
        let ctx = Ctx::new().unwrap();
        let domains = "{ S0[i] : 0 <= i <= 999; S1[i, j] : 0 <= i <= 999 and 0 <= j <= 499 }";
        let deps = "{ S0[i] -> S1[i, j = 499] : 0 <= i <= 999; S1[i, j] -> S1[i, j' = j - 1] : 0 <= i <= 999 and 1 <= j <= 499 }";
        let mut p = problem(&ctx, domains, deps, Fuse::Smart);
        let copy = ParametricProblem {
            domains: "[tf_size0, tf_size1] -> { S0[i] : 0 <= i <= tf_size1; S1[i, j] : 0 <= i <= tf_size1 and 0 <= j <= tf_size0 }".into(),
            context: "[tf_size0, tf_size1] -> { : tf_size0 >= 499 and tf_size1 >= 999 }".into(),
            deps: "[tf_size0, tf_size1] -> { S0[i] -> S1[i, j = tf_size0] : 0 <= i <= tf_size1; S1[i, j] -> S1[i, j' = j - 1] : 0 <= i <= tf_size1 and 1 <= j <= tf_size0 }".into(),
            names: vec!["tf_size0".into(), "tf_size1".into()],
            own_params: false,
        };
        let with = tree(p.solve_one(&copy.domains, &copy.context, &copy.deps, true));
        assert_eq!(
            concrete_tree(&with, &copy.names, &p.key.domains),
            None,
            "{with}"
        );
        let without = tree(p.solve_one(&copy.domains, &copy.context, &copy.deps, false));
        let original = tree(p.solve_one(&p.key.domains, &p.key.context, &p.key.deps, true));
        assert_eq!(
            concrete_tree(&without, &copy.names, &p.key.domains).as_deref(),
            Some(original.as_str()),
            "{without}"
        );
        p.parametric = Some(copy);
        assert_eq!(tree(p.solve()), original);
    }
}
