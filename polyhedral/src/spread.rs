//! Tile sizes for the tile graph's parallelism: a nest whose tiles are few and large, and whose
//! tile graph leaves the threads waiting, gets smaller tiles along one member or all; a member
//! whose last tile is partial becomes one tile where the parallelism allows it.
//!
//! The default sizes ([`crate::tile_size`]) come from the caches and the work of one task; they
//! do not look at how many tiles can run at once. gramschmidt's band (`k`, `j`) at LARGE gets
//! `64, 64`: 136 tiles of about 2 ms, in a wavefront 31 tiles long, so the average parallelism
//! (work / span, [`crate::work_span`]) is 4.4, and Brent's bound `W/p + S` puts two threads at
//! 0.73 of the work where 0.5 is the ideal. With `32, 64` the wavefront is 47 tiles of half the
//! work (average parallelism 5.8, 0.67 of the work): measured on the 2-core Xeon at LARGE
//! (medians of 9 to 11 runs in rounds), 0.226 -> 0.208 s on two threads (omp, whose tiles are the
//! same, 0.205), the same on one thread (0.300 and 0.298 s); `32, 32` ran 0.327 s.
//!
//! The rule ([`spread_tiles`]): with the parameters at the cost model's values and the default
//! sizes, when the tile graph's average parallelism `P = W/S` is below [`TASKS_PER_THREAD`]
//! times the threads `p` (then Brent's bound, `W/p + S`, promises an efficiency
//! `(W/p) / (W/p + S) = 1 / (1 + p/P)` below 0.9), each tiled nest's outermost member is halved
//! in turn (not below [`MIN_SPREAD_SIZE`]), or every member at once where no member's point
//! loop is the one the tile code runs innermost (none below [`MIN_ALL_HALVED`]: the tile keeps
//! its shape), and the SCoP tiled again; the halving that lowers Brent's
//! bound the most is kept if it lowers it by [`MIN_GAIN`] at least and every tile of that nest
//! still holds [`MIN_SPLIT_WORK`] instances (the loops below the band counted), and the search
//! goes on from there (at most [`MAX_HALVINGS`] times). The member run innermost is the vector
//! loop, whose length the bound does not see: gramschmidt's `j`, sunk below its `i` loops by the
//! tile code, ran `64, 32` slower than `64, 64` on one thread, and `32, 32` (which the bound ranks
//! above `32, 64`: average parallelism 8.4 against 5.8) 1.56x slower on two (0.237 s against
//! 0.152, LARGE, medians of 5). nussinov's deepest statement keeps its reduction over `k`
//! innermost, under the band: its triangle of `64, 64` tiles (average parallelism 10.4, which
//! an earlier threshold of 4 tasks per thread let pass while its threads idled 15% of the time)
//! gets `32, 32` (20.1), at LARGE on the 2-core Xeon (medians of 9 runs in rounds) 0.283 ->
//! 0.248 s on two threads and 0.460 -> 0.432 on one (`32, 64` ran 0.33 s on two); at `N` of
//! 1 200 to 1 800, where tiles of `32, 32` would hold too little work, it keeps `64, 64`
//! instead of the `32, 64` it got when only the outermost member was halved (`N = 1500`: 47.1
//! -> 44.2 ms on two threads, 79.8 -> 77.2 on one; medians of 11 in rounds). The floor on
//! the work keeps the per-task
//! cost and the lost locality of smaller tiles out of the question, which the bound does not see:
//! of the 30 PolyBench kernels on 2 threads only gramschmidt's and nussinov's tiles pass it with
//! too little parallelism at LARGE (jacobi-1d's, trisolv's and bicg's, with average parallelism
//! 7 to 8, hold 16 to 33 thousand instances, a few microseconds; mvt's, gemver's and adi's,
//! with 14 to 16, as few); no other kernel's tiles changed with the threshold, at MEDIUM,
//! LARGE or EXTRALARGE. More threads ask for more parallelism: the threads are the machine's
//! ([`crate::Machine::detect`]: `TILEDFLOW_NUM_THREADS` or the cores).
//!
//! The sizes found are handed to the scheduler as [`crate::ScheduleConfig::nest_sizes`], by the
//! statements of the nest, so scheduling again gives the same tiles.
//!
//! Tiny tiles, the other way ([`TASK_COST`], [`SpreadKind::Doubled`]): a band that holds every
//! loop of its statements and whose tiles hold fewer than [`crate::MIN_TILE_WORK`] instances
//! (the default sizes of a wavefront, which `tile_size::coarsen_carried` leaves since no member
//! is free: bicg's and mvt's products fused for their shared reads, trisolv's substitution, all
//! `16, 256`) spends as much in the runtime as in its tiles: mvt's tasks at EXTRALARGE ran 2 us
//! each, 0.3 to 0.5 us apart on a thread, and its control thread spawned for 0.6 ms before it ran
//! one. Brent's bound with each task charged [`TASK_COST`] instances, on the work and on the span
//! (`(W + n c) / p + S + n_S c`), decides: the outermost member is doubled (the nest that gains
//! most first, at most [`MAX_DOUBLINGS`] times) while that bound drops by [`MIN_GAIN`]. A nest
//! whose tasks could not make that gain (their count times the cost against the SCoP's work, by
//! the cost model's walk) is not tried: ludcmp's substitutions beside its product kept its
//! compile time. mvt, bicg and trisolv go to `64, 256`; on the 2-core AMD EPYC at EXTRALARGE
//! (medians of 21 in rounds, two threads): mvt 4.77 -> 4.49 ms, bicg 1.24 -> 1.07, trisolv 2.68
//! -> 2.69 (one thread: 8.16 -> 7.93, 1.99 -> 1.94, 4.90 -> 4.72). Charged 1 024 instances a
//! task, they stopped at `32, 256` (mvt 4.52 ms); the run doubled instead (`16, 1024`) ran mvt
//! 5.6 ms, so the outermost member is the one doubled.
//!
//! Before halving, the other way: a member that carries no dependence and whose values make a
//! few tiles, the last one partial (doitgen's `p` at LARGE: 160 values in tiles of 64), becomes
//! one tile over its values ([`crate::ScheduleConfig::fit_extents`]; the rule and its
//! measurements: `schedule::tiling::fit_extents`). Partial tiles run the general code, and
//! one tile instead of three takes parallelism away, so the fit is kept only where the tile
//! graph's average parallelism stays at [`FIT_TASKS_PER_THREAD`] tasks per thread, or where it
//! was below that does not drop (always on one thread). doitgen at LARGE: 36.8 -> 21-23 ms on two
//! threads, 55 -> 37 ms on one; 2mm at MEDIUM, whose fit (of 180 and 190 values) would leave
//! its product one tile, is not fitted.

use crate::cost::{schedule_cost, Machine, ScheduleCost};
use crate::isl::{Ctx, Set, UnionMap};
use crate::{Dependences, Result, ScheduleConfig, TiledSchedule, WHOLE_LOOP};
use scop_ir::Scop;

/// Ready tasks wanted per thread, on average (work / span): below it, smaller tiles are tried.
/// Nine, so that Brent's bound promises an efficiency of 0.9 (see the module doc); it was 4
/// (0.8) until nussinov's idle threads showed the difference.
pub const TASKS_PER_THREAD: f64 = 9.0;

/// Ready tasks per thread, on average, that a fit must leave (or not lower where there were
/// fewer): the threshold the fits were measured with (doitgen's), kept when the halvings'
/// went from 4 to 9, since a fit trades parallelism for whole tiles instead of buying it.
pub const FIT_TASKS_PER_THREAD: f64 = 4.0;

/// The least relative drop of Brent's bound `W/p + S` for which a halving is kept.
pub const MIN_GAIN: f64 = 0.05;

/// The fewest instances a tile of a halved nest may hold (a few hundred microseconds of work):
/// a smaller tile costs per task and in locality more than the bound sees.
pub const MIN_SPLIT_WORK: f64 = (1 << 20) as f64;

/// At most this many halvings per SCoP.
pub const MAX_HALVINGS: usize = 3;

/// What the runtime costs per task, in instances of a tile's statements, for the doublings of
/// tiny tiles: about a microsecond of spawning, queueing and waking, where an instance of a
/// matrix-vector product's fused statements takes half a nanosecond (mvt at EXTRALARGE: tasks
/// of 4 096 instances ran 2 us each, 0.3 to 0.5 us apart on a thread).
pub const TASK_COST: u64 = 2048;

/// At most this many doublings per SCoP.
pub const MAX_DOUBLINGS: usize = 4;

/// The smallest size a halving may give: a member of 8 would reuse what its tile loads only 8
/// times. A guard, not a measured optimum: on 8 threads gramschmidt would otherwise go on to
/// `8, 64` (its tiles still above [`MIN_SPLIT_WORK`]), which no machine here could time.
pub const MIN_SPREAD_SIZE: i64 = 16;

/// The smallest size a halving of every member at once may give: the point loops stay long
/// enough to keep their accesses in whole cache lines.
pub const MIN_ALL_HALVED: i64 = 32;

/// What one change of [`spread_tiles`] did to a nest's sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpreadKind {
    /// Members that ended in a partial tile made one tile over their values.
    Fit,
    /// Smaller tiles for the threads (a member halved, or every member).
    Halved,
    /// Larger tiles for the runtime's cost per task (the outermost member doubled).
    Doubled,
}

/// One change of a nest's sizes that [`spread_tiles`] kept: the nest, its sizes before and
/// after, the average parallelism before and after (`None` on one thread, where it is not
/// asked), and what it did.
#[derive(Clone, Debug, PartialEq)]
pub struct Spread {
    pub nest: usize,
    pub from: Vec<i64>,
    pub to: Vec<i64>,
    pub parallelism: Option<(f64, f64)>,
    pub kind: SpreadKind,
}

impl std::fmt::Display for Spread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "N{} {} -> {}",
            self.nest,
            crate::tile_sizes_text(&self.from),
            crate::tile_sizes_text(&self.to),
        )?;
        match self.parallelism {
            Some((a, b)) => write!(f, " (average parallelism {a:.1} -> {b:.1})"),
            None => Ok(()),
        }
    }
}

/// What one tiling offers: its schedule, Brent's bound on `threads`, that bound with every task
/// charged [`TASK_COST`] instances (`charged`), and the average parallelism.
struct Offer {
    sched: TiledSchedule,
    bound: f64,
    charged: f64,
    parallelism: f64,
}

/// `cfg` with smaller tiles where the tile graph of `scop` (dependences `deps`; one task per
/// `coarsen` tile dimensions when given) at the cost model's parameter values leaves `machine`'s
/// threads without enough work, with the halvings kept (see the module doc); `None` when the
/// default sizes stay (explicit sizes, parameters the estimate cannot take, enough parallelism,
/// or no halving that pays).
pub fn spread_tiles(
    scop: &Scop,
    deps: &Dependences,
    cfg: &ScheduleConfig,
    coarsen: Option<usize>,
    machine: &Machine,
) -> Result<Option<(ScheduleConfig, Vec<Spread>)>> {
    let default_sizes = cfg.tile_sizes.as_ref().is_some_and(|t| t.is_empty());
    if !default_sizes || cfg.original || cfg.parallel_point_loops_outer {
        return Ok(None);
    }
    let Some(params) = crate::estimate_params(scop)? else {
        return Ok(None);
    };
    let threads = machine.threads as f64;
    // The tiles under a configuration, as the task program will have them.
    let tiled = |cfg: &ScheduleConfig| -> Result<TiledSchedule> {
        let (fine, _) = crate::schedule(scop, deps, cfg)?;
        match coarsen {
            Some(n) => crate::coarsen(&fine, n),
            None => Ok(fine),
        }
    };
    // `cfg` with the nest of `statements` tiled by `sizes`, its tiles, and the nest's position
    // there; `None` when scheduling with it does not give that nest those sizes.
    let retiled = |cfg: &ScheduleConfig,
                   statements: &[scop_ir::StmtId],
                   sizes: &[i64]|
     -> Result<Option<(ScheduleConfig, TiledSchedule, usize)>> {
        let mut tried = cfg.clone();
        tried.nest_sizes.retain(|(s, _)| s != statements);
        tried.nest_sizes.push((statements.to_vec(), sizes.to_vec()));
        let sched = tiled(&tried)?;
        let at = sched
            .nests
            .iter()
            .position(|n| n.statements == *statements && n.tile_sizes == sizes);
        Ok(at.map(|at| (tried, sched, at)))
    };
    // The cost model's estimate of a schedule (kept by `schedule_cost`: the fusion stage made it
    // for the schedule chosen, and the doubling of tiny tiles and the halving below ask for the
    // same one when the first changed nothing).
    let cost_of = |sched: &TiledSchedule| -> Result<ScheduleCost> {
        schedule_cost(scop, deps, sched, machine)
    };
    // Each nest's instances per tile, by the cost model's walk; `None` when a nest has no
    // estimate (one without instances).
    let per_tile = |sched: &TiledSchedule| -> Result<Option<Vec<f64>>> {
        let cost = cost_of(sched)?;
        Ok((cost.nests.len() == sched.nests.len()).then(|| {
            cost.nests
                .iter()
                .map(|n| n.instances / n.tiles.max(1.0))
                .collect()
        }))
    };
    // Brent's bound and the average parallelism of the tile graph of `sched`.
    let offer = |sched: TiledSchedule| -> Result<Option<Offer>> {
        let tile_deps = crate::tile_dependences(scop, deps, &sched)?;
        let graph = crate::tile_graph(scop, &sched, &tile_deps)?;
        let domains: Vec<String> = sched.nests.iter().map(|n| n.tile_domain.clone()).collect();
        let sizes: Vec<Vec<i64>> = sched.nests.iter().map(|n| n.tile_sizes.clone()).collect();
        let Some(ws) = crate::work_span(&graph, &domains, &sizes, &params)? else {
            return Ok(None);
        };
        let per_task = TASK_COST as f64;
        Ok(Some(Offer {
            sched,
            bound: ws.work / threads + ws.span,
            charged: (ws.work + ws.tasks as f64 * per_task) / threads
                + ws.span
                + ws.span_tasks as f64 * per_task,
            parallelism: ws.parallelism(),
        }))
    };
    let mut cfg = cfg.clone();
    let mut kept = Vec::new();
    let mut sched = tiled(&cfg)?;
    // Members one tile over their values where the last tile was partial
    // (`ScheduleConfig::fit_extents`), where the tile graph keeps its parallelism: the average
    // parallelism must stay at `FIT_TASKS_PER_THREAD` tasks per thread, or where it was below that,
    // not drop (2mm at MEDIUM would go from 3 to 1).
    let fitting = ScheduleConfig {
        fit_extents: true,
        ..cfg.clone()
    };
    let fitted = match may_fit(scop, &sched, &params)? {
        true => tiled(&fitting)?,
        false => sched.clone(),
    };
    let fits: Vec<Spread> = sched
        .nests
        .iter()
        .zip(&fitted.nests)
        .enumerate()
        .filter(|(_, (a, b))| a.statements == b.statements && a.tile_sizes != b.tile_sizes)
        .map(|(nest, (a, b))| Spread {
            nest,
            from: a.tile_sizes.clone(),
            to: b.tile_sizes.clone(),
            parallelism: None,
            kind: SpreadKind::Fit,
        })
        .collect();
    let mut first: Option<Offer> = None;
    if !fits.is_empty() && fitted.nests.len() == sched.nests.len() {
        if machine.threads < 2 {
            (cfg, sched) = (fitting, fitted);
            kept = fits;
        } else if let (Some(before), Some(after)) = (offer(sched.clone())?, offer(fitted)?) {
            let floor = before.parallelism.min(FIT_TASKS_PER_THREAD * threads);
            if after.parallelism >= floor {
                let parallelism = Some((before.parallelism, after.parallelism));
                kept = fits
                    .into_iter()
                    .map(|f| Spread { parallelism, ..f })
                    .collect();
                cfg = fitting;
                sched = after.sched.clone();
                first = Some(after);
            }
        }
    }
    let done = |cfg: ScheduleConfig, kept: Vec<Spread>| (!kept.is_empty()).then_some((cfg, kept));
    if machine.threads < 2 {
        return Ok(done(cfg, kept));
    }
    // Tiny tiles doubled while the runtime's cost per task outweighs the parallelism lost
    // (see the module doc). A nest is tried when its tiles are tiny and their tasks' cost could
    // make the gain asked for (by the cost model's walk, cheaper than the tile graph: ludcmp's
    // substitution has tiny tiles, 2 thousand tasks beside a product of 2.7 billion instances).
    let tiny = |sched: &TiledSchedule| -> Result<Vec<usize>> {
        let cost = cost_of(sched)?;
        if cost.nests.len() != sched.nests.len() {
            return Ok(Vec::new());
        }
        let work: f64 = cost.nests.iter().map(|n| n.instances).sum();
        Ok((0..sched.nests.len())
            .filter(|&k| {
                let nest = &sched.nests[k];
                let sizes = &nest.tile_sizes;
                let whole_band = nest.statements.iter().all(|s| {
                    scop.statements
                        .get(s.index())
                        .is_some_and(|st| st.iterators.len() <= sizes.len())
                });
                sizes.len() >= 2
                    && !sizes.contains(&WHOLE_LOOP)
                    && whole_band
                    && crate::tile_size::tile_work(sizes) < crate::MIN_TILE_WORK
                    && cost.nests[k].tiles * TASK_COST as f64 >= MIN_GAIN * work / threads
            })
            .collect())
    };
    let mut candidates = tiny(&sched)?;
    if !candidates.is_empty() {
        let start = match first.take() {
            Some(offer) => Some(offer),
            None => offer(sched.clone())?,
        };
        if let Some(mut best) = start {
            for _ in 0..MAX_DOUBLINGS {
                let mut found: Option<(ScheduleConfig, Offer, usize, Vec<i64>)> = None;
                for &k in &candidates {
                    let nest = &best.sched.nests[k];
                    let mut larger = nest.tile_sizes.clone();
                    larger[0] *= 2;
                    let Some((tried, sched, _)) = retiled(&cfg, &nest.statements, &larger)? else {
                        continue;
                    };
                    let Some(o) = offer(sched)? else {
                        continue;
                    };
                    if found.as_ref().is_none_or(|f| o.charged < f.1.charged) {
                        found = Some((tried, o, k, larger));
                    }
                }
                let Some((tried, o, k, larger)) = found else {
                    break;
                };
                if o.charged > (1.0 - MIN_GAIN) * best.charged {
                    break;
                }
                kept.push(Spread {
                    nest: k,
                    from: best.sched.nests[k].tile_sizes.clone(),
                    to: larger,
                    parallelism: Some((best.parallelism, o.parallelism)),
                    kind: SpreadKind::Doubled,
                });
                cfg = tried;
                best = o;
                candidates = tiny(&best.sched)?;
            }
            sched = best.sched.clone();
            first = Some(best);
        }
    }
    // First what the cost model's walk says (cheaper than the tile graph, which a SCoP of many
    // small tiles would spend a second on): a nest whose tiles, halved, would hold too little
    // work is no candidate, and a SCoP without candidates keeps its tiles.
    let Some(work) = per_tile(&sched)? else {
        return Ok(done(cfg, kept));
    };
    let eligible = sched.nests.iter().zip(&work).any(|(n, &w)| {
        n.tile_sizes
            .first()
            .is_some_and(|&t| t != WHOLE_LOOP && t >= 2 * MIN_SPREAD_SIZE)
            && w >= 2.0 * MIN_SPLIT_WORK
    });
    if !eligible {
        return Ok(done(cfg, kept));
    }
    let best = match first {
        Some(offer) => Some(offer),
        None => offer(sched)?,
    };
    let Some(mut best) = best else {
        return Ok(done(cfg, kept));
    };
    let mut halvings = 0;
    while halvings < MAX_HALVINGS && best.parallelism < TASKS_PER_THREAD * threads {
        let mut found: Option<(ScheduleConfig, Offer, usize, Vec<i64>)> = None;
        for (k, nest) in best.sched.nests.iter().enumerate() {
            // Every member at once, keeping the tile's shape, where none is the tile's innermost
            // loop; the outermost member otherwise (see the module doc).
            let sizes = &nest.tile_sizes;
            if sizes.is_empty() || sizes.contains(&WHOLE_LOOP) || sizes[0] < 2 * MIN_SPREAD_SIZE {
                continue;
            }
            let smaller: Vec<i64> = if sizes.len() > 1
                && sizes.iter().all(|&t| t >= 2 * MIN_ALL_HALVED)
                && !band_member_innermost(scop, &best.sched, k)?
            {
                sizes.iter().map(|t| t / 2).collect()
            } else {
                let mut outer = sizes.clone();
                outer[0] /= 2;
                outer
            };
            // The nest must be there, tiled as asked, with tiles that keep their work (checked
            // before the tile graph, which costs more).
            let Some((tried, sched, at)) = retiled(&cfg, &nest.statements, &smaller)? else {
                continue;
            };
            let Some(work) = per_tile(&sched)? else {
                continue;
            };
            if work.get(at).is_none_or(|&w| w < MIN_SPLIT_WORK) {
                continue;
            }
            let Some(o) = offer(sched)? else {
                continue;
            };
            if found.as_ref().is_none_or(|f| o.bound < f.1.bound) {
                found = Some((tried, o, k, smaller));
            }
        }
        let Some((tried, o, k, smaller)) = found else {
            break;
        };
        if o.bound > (1.0 - MIN_GAIN) * best.bound {
            break;
        }
        kept.push(Spread {
            nest: k,
            from: best.sched.nests[k].tile_sizes.clone(),
            to: smaller,
            parallelism: Some((best.parallelism, o.parallelism)),
            kind: SpreadKind::Halved,
        });
        halvings += 1;
        cfg = tried;
        best = o;
    }
    Ok(done(cfg, kept))
}

/// Whether the code of a tile of nest `k` of `sched` runs a member of the band innermost for the
/// nest's deepest statements (those with the most loops): their loops all in the band (gemm's
/// `i, k, j`), or a member sunk below their own loops (`sink::sink_band_member`: gramschmidt's
/// `j` below its `i` loops). That member's point loop is then the vector loop, whose length
/// Brent's bound does not see, so it is not halved with the others. nussinov's deepest
/// statement keeps its reduction over `k` innermost, under the band.
fn band_member_innermost(scop: &Scop, sched: &TiledSchedule, k: usize) -> Result<bool> {
    let nest = &sched.nests[k];
    let p = nest.tile_sizes.len();
    let deepest = nest
        .statements
        .iter()
        .filter_map(|s| scop.statements.get(s.index()))
        .map(|s| s.iterators.len())
        .max()
        .unwrap_or(0);
    if deepest <= p {
        return Ok(true);
    }
    let coords = crate::maps::names("tf_k", p);
    let points =
        crate::astgen::PointSchedule::of(scop, sched, crate::NestId::new(k), &coords, "tf_i")?;
    Ok(crate::sink::sink_band_member(scop, &points, &[])?.is_some())
}

/// Whether some nest of `sched` may get a fit at the parameter values `params` (cheaper to ask
/// than scheduling again): a point loop whose values are whole blocks of the widest vector
/// kernel's lanes (`schedule::fit_block`), more than one of the nest's tile sizes and at most
/// `MAX_FIT_TILES` times it, not a multiple of it. A necessary condition, not the fit's own
/// (which also asks which member the loop is, whether it carries a dependence, the share of its
/// partial tile and the footprint): deriche's rows of 2160 in tiles of 1024 fail it, and its
/// six nests are not tiled again.
fn may_fit(scop: &Scop, sched: &TiledSchedule, params: &str) -> Result<bool> {
    let ctx = Ctx::shared()?;
    let params = Set::read(ctx, params)?;
    let smallest = scop
        .arrays
        .iter()
        .map(|a| crate::tile_size::element_bytes(&a.elem_type))
        .min()
        .unwrap_or(8);
    let block = crate::schedule::fit_block(smallest);
    for nest in &sched.nests {
        let p = nest.tile_sizes.len();
        let points = UnionMap::read(ctx, &nest.schedule)?
            .range()?
            .intersect_params(params.clone())?;
        let mut ranges = vec![(i64::MAX, i64::MIN); p];
        for set in points.sets()? {
            let n = set.n_dims()?;
            for (d, range) in ranges.iter_mut().enumerate().filter(|(d, _)| p + d < n) {
                if let Some((lo, hi)) = set.dim_range(p + d)? {
                    *range = (range.0.min(lo), range.1.max(hi));
                }
            }
        }
        let fits = |&(lo, hi): &(i64, i64)| {
            hi >= lo
                && nest
                    .tile_sizes
                    .iter()
                    .any(|&t| crate::schedule::fits_in_one_tile(hi - lo + 1, t, block))
        };
        if ranges.iter().any(fits) {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(threads: usize) -> Machine {
        Machine {
            threads,
            l1_bytes: 48 << 10,
            l2_bytes: 2 << 20,
            llc_bytes: 4 << 20,
        }
    }

    /// The kernel's SCoP at LARGE, its dependences, and the configuration of the tables'
    /// machine (128 KiB tiles).
    fn large(name: &str) -> (Scop, Dependences, ScheduleConfig) {
        let scop = crate::polybench_scops_at(name, "LARGE")
            .into_iter()
            .next()
            .expect("a SCoP");
        let deps = crate::dependences(&scop).unwrap();
        let cfg = ScheduleConfig {
            tile_footprint: 128 << 10,
            ..ScheduleConfig::default()
        };
        (scop, deps, cfg)
    }

    #[test]
    fn gramschmidts_wavefront_gets_half_as_deep_tiles_on_two_threads() {
        let (scop, deps, cfg) = large("gramschmidt");
        let (before, _) = crate::schedule(&scop, &deps, &cfg).unwrap();
        assert_eq!(before.nests[0].tile_sizes, vec![64, 64]);
        let (spread, kept) = spread_tiles(&scop, &deps, &cfg, None, &machine(2))
            .unwrap()
            .expect("gramschmidt's tiles are spread");
        assert_eq!(kept.len(), 1, "{kept:?}");
        // Not both members: its `j` runs innermost in the tile code (sunk below the `i` loops),
        // though Brent's bound ranks `32, 32` (average parallelism 8.4) above `32, 64` (5.8).
        assert_eq!(
            kept[0].to_string(),
            "N0 [64, 64] -> [32, 64] (average parallelism 4.4 -> 5.8)"
        );
        // Scheduling with the configuration gives those tiles.
        let (after, _) = crate::schedule(&scop, &deps, &spread).unwrap();
        assert_eq!(after.nests[0].tile_sizes, vec![32, 64]);
        assert_eq!(after.nests[0].statements, before.nests[0].statements);
        // More threads ask for more parallelism: a second halving, not a third (below
        // `MIN_SPREAD_SIZE`).
        let (_, kept) = spread_tiles(&scop, &deps, &cfg, None, &machine(8))
            .unwrap()
            .expect("spread on 8 threads");
        let sizes: Vec<Vec<i64>> = kept.iter().map(|s| s.to.clone()).collect();
        assert_eq!(sizes, vec![vec![32, 64], vec![16, 64]]);
    }

    #[test]
    fn nussinovs_triangle_gets_smaller_tiles_below_nine_tasks_per_thread() {
        // Its 820 tiles have average parallelism 10.4: more than 4 tasks per thread, so two
        // threads kept `64, 64` while Brent's bound allowed them an efficiency of 0.84 only.
        let (scop, deps, cfg) = large("nussinov");
        let (_, kept) = spread_tiles(&scop, &deps, &cfg, None, &machine(2))
            .unwrap()
            .expect("nussinov's tiles are spread");
        let kept: Vec<String> = kept.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            kept,
            ["N0 [64, 64] -> [32, 32] (average parallelism 10.4 -> 20.1)"]
        );
        // At 1 500, `32, 32` would hold too little work, and the outermost member alone is not
        // tried (the tile keeps its shape): `64, 64` stays.
        let scop = crate::polybench_scops_with("nussinov", &["N=1500"])
            .into_iter()
            .next()
            .expect("a SCoP");
        let deps = crate::dependences(&scop).unwrap();
        assert_eq!(
            spread_tiles(&scop, &deps, &cfg, None, &machine(2)).unwrap(),
            None
        );
    }

    #[test]
    fn enough_parallelism_or_one_thread_keeps_the_default_sizes() {
        let (scop, deps, cfg) = large("gramschmidt");
        assert_eq!(
            spread_tiles(&scop, &deps, &cfg, None, &machine(1)).unwrap(),
            None
        );
        // Sizes the user gave stay.
        let given = ScheduleConfig {
            tile_sizes: Some(vec![64]),
            ..cfg.clone()
        };
        assert_eq!(
            spread_tiles(&scop, &deps, &given, None, &machine(2)).unwrap(),
            None
        );
        // gemm's 5 472 tiles have average parallelism 288.
        let (scop, deps, cfg) = large("gemm");
        assert_eq!(
            spread_tiles(&scop, &deps, &cfg, None, &machine(2)).unwrap(),
            None
        );
    }

    /// The doublings kept for the kernel's SCoP at `size` under `fuse`, as `-v` prints them.
    fn doublings(name: &str, size: &str, fuse: crate::Fuse, threads: usize) -> Vec<String> {
        let scop = crate::polybench_scops_at(name, size)
            .into_iter()
            .next()
            .expect("a SCoP");
        let deps = crate::dependences(&scop).unwrap();
        let cfg = ScheduleConfig {
            fuse,
            tile_footprint: 128 << 10,
            ..ScheduleConfig::default()
        };
        let Some((doubled, kept)) =
            spread_tiles(&scop, &deps, &cfg, None, &machine(threads)).unwrap()
        else {
            return Vec::new();
        };
        // Each nest's last change is what scheduling with the configuration gives.
        let (after, _) = crate::schedule(&scop, &deps, &doubled).unwrap();
        for (i, s) in kept.iter().enumerate() {
            if kept[i + 1..].iter().all(|later| later.nest != s.nest) {
                assert_eq!(after.nests[s.nest].tile_sizes, s.to, "{s}");
            }
        }
        kept.iter()
            .filter(|s| s.kind == SpreadKind::Doubled)
            .map(|s| s.to_string())
            .collect()
    }

    #[test]
    fn tiny_wavefront_tiles_are_doubled_while_the_tasks_cost_more_than_the_parallelism_lost() {
        // mvt's products fused for their shared reads of `A`: tiles of `16, 256` (4 096
        // instances, 2 us) in a wavefront. Measured at EXTRALARGE on two threads (medians of
        // 21): 4.77 ms, `32, 256` 4.52, `64, 256` 4.49, `128, 256` slower than that by the bound
        // (span), `16, 1024` (the run lengthened instead) 5.6.
        assert_eq!(
            doublings("mvt", "EXTRALARGE", crate::Fuse::Reuse, 2),
            [
                "N0 [16, 256] -> [32, 256] (average parallelism 15.1 -> 14.3)",
                "N0 [32, 256] -> [64, 256] (average parallelism 14.3 -> 12.9)",
            ]
        );
        // On one thread nothing is asked of the tile graph.
        assert_eq!(
            doublings("mvt", "EXTRALARGE", crate::Fuse::Reuse, 1),
            Vec::<String>::new()
        );
        // Tiles that hold enough work stay: gemm's, and mvt's products apart (`64, 512`).
        assert_eq!(
            doublings("gemm", "LARGE", crate::Fuse::Smart, 2),
            Vec::<String>::new()
        );
        assert_eq!(
            doublings("mvt", "EXTRALARGE", crate::Fuse::Min, 2),
            Vec::<String>::new()
        );
    }

    /// The fits kept, as `-v` prints them, and the sizes scheduling with the configuration gives.
    fn fits(scop: &Scop, deps: &Dependences, cfg: &ScheduleConfig, threads: usize) -> Vec<String> {
        let Some((fitted, kept)) = spread_tiles(scop, deps, cfg, None, &machine(threads)).unwrap()
        else {
            return Vec::new();
        };
        let (after, _) = crate::schedule(scop, deps, &fitted).unwrap();
        for s in &kept {
            assert_eq!(after.nests[s.nest].tile_sizes, s.to, "{s}");
        }
        kept.iter()
            .filter(|s| s.kind == SpreadKind::Fit)
            .map(|s| format!("N{} {:?} -> {:?}", s.nest, s.from, s.to))
            .collect()
    }

    /// doitgen's SCoP with these definitions as the compiler schedules it: `sum` expanded (one
    /// copy per `r, q`), the statements apart (`min`, the cost model's choice at LARGE).
    fn doitgen(defines: &[&str]) -> (Scop, Dependences, ScheduleConfig) {
        let scop = crate::polybench_scops_with("doitgen", defines)
            .into_iter()
            .next()
            .expect("a SCoP");
        let expanded =
            crate::expand_scalars(&scop, &crate::scalar_expansions(&scop).unwrap()).unwrap();
        let deps = crate::dependences(&expanded).unwrap();
        let cfg = ScheduleConfig {
            fuse: crate::Fuse::Min,
            tile_footprint: 128 << 10,
            ..ScheduleConfig::default()
        };
        (expanded, deps, cfg)
    }

    #[test]
    fn doitgens_product_is_one_tile_along_its_lanes() {
        // `p` runs over 160 values: tiles of 64 left a third partial one of 32 (a fifth of the
        // values), which made one tile of 160 (5 blocks of 32 lanes). `s` carries the sum and
        // keeps its tiles; `r` and `q` have tiles of 8 that divide 150 and 140 but for a few
        // values (less than an eighth).
        let (scop, deps, cfg) = doitgen(&["LARGE_DATASET"]);
        let (before, _) = crate::schedule(&scop, &deps, &cfg).unwrap();
        let product = before
            .nests
            .iter()
            .position(|n| n.tile_sizes.len() == 4)
            .expect("the product's nest");
        assert_eq!(before.nests[product].tile_sizes, vec![8, 8, 64, 64]);
        let want = format!("N{product} [8, 8, 64, 64] -> [8, 8, 160, 64]");
        for threads in [1, 2, 8] {
            let fits = fits(&scop, &deps, &cfg, threads);
            assert!(fits.contains(&want), "{threads} threads: {fits:?}");
        }
    }

    #[test]
    fn a_fit_that_leaves_the_threads_waiting_is_not_kept() {
        // With 8 by 8 values of `r` and `q` the product has one tile along them: its three
        // tiles along `p` are all the parallelism there is, which one tile would take away.
        let (scop, deps, cfg) = doitgen(&["NR=8", "NQ=8", "NP=160"]);
        assert_eq!(fits(&scop, &deps, &cfg, 2), Vec::<String>::new());
        // One thread has nothing to wait for.
        let one = fits(&scop, &deps, &cfg, 1);
        assert!(
            one.iter()
                .any(|f| f.ends_with("[8, 8, 64, 64] -> [8, 8, 160, 64]")),
            "{one:?}"
        );
    }
}
