//! Tile sizes for the tile graph's parallelism: a nest whose tiles are few and large, and whose
//! tile graph leaves the threads waiting, gets smaller tiles along one member.
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
//! sizes, when the tile graph's average parallelism is below [`TASKS_PER_THREAD`] times the
//! threads, the outermost member of each tiled nest is halved in turn (not below
//! [`MIN_SPREAD_SIZE`]) and the SCoP tiled again; the halving that lowers Brent's
//! bound the most is kept if it lowers it by [`MIN_GAIN`] at least and every tile of that nest
//! still holds [`MIN_SPLIT_WORK`] instances (the loops below the band counted), and the search
//! goes on from there (at most [`MAX_HALVINGS`] times). The outermost member only: the inner
//! ones give the point loops their lengths, the vector loop's among them, which the bound does
//! not see. gramschmidt's `j` runs innermost in its tiles: `64, 32` ran slower than `64, 64` on
//! one thread, and `32, 32` (which the bound ranks above `32, 64`: average parallelism 8.4)
//! 1.6x slower on two. The floor on the work keeps the per-task
//! cost and the lost locality of smaller tiles out of the question, which the bound does not see:
//! of the 30 PolyBench kernels on 2 threads only gramschmidt's tiles pass it with too little
//! parallelism (jacobi-1d's, trisolv's and bicg's, with average parallelism 7 to 8, hold 16 to
//! 33 thousand instances, a few microseconds). More threads ask for more parallelism: the
//! threads are the machine's ([`crate::Machine::detect`]: `TILEDFLOW_NUM_THREADS` or the cores).
//!
//! The sizes found are handed to the scheduler as [`crate::ScheduleConfig::nest_sizes`], by the
//! statements of the nest, so scheduling again gives the same tiles.

use crate::cost::{schedule_cost, Machine};
use crate::{Dependences, Result, ScheduleConfig, TiledSchedule, WHOLE_LOOP};
use scop_ir::Scop;

/// Ready tasks wanted per thread, on average (work / span): below it, smaller tiles are tried.
pub const TASKS_PER_THREAD: f64 = 4.0;

/// The least relative drop of Brent's bound `W/p + S` for which a halving is kept.
pub const MIN_GAIN: f64 = 0.05;

/// The fewest instances a tile of a halved nest may hold (a few hundred microseconds of work):
/// a smaller tile costs per task and in locality more than the bound sees.
pub const MIN_SPLIT_WORK: f64 = (1 << 20) as f64;

/// At most this many halvings per SCoP.
pub const MAX_HALVINGS: usize = 3;

/// The smallest size a halving may give: a member of 8 would reuse what its tile loads only 8
/// times. A guard, not a measured optimum: on 8 threads gramschmidt would otherwise go on to
/// `8, 64` (its tiles still above [`MIN_SPLIT_WORK`]), which no machine here could time.
pub const MIN_SPREAD_SIZE: i64 = 16;

/// One halving [`spread_tiles`] kept: the nest's statements, its sizes before and after, and the
/// average parallelism before and after.
#[derive(Clone, Debug, PartialEq)]
pub struct Spread {
    pub nest: usize,
    pub from: Vec<i64>,
    pub to: Vec<i64>,
    pub parallelism: (f64, f64),
}

impl std::fmt::Display for Spread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "N{} {} -> {} (average parallelism {:.1} -> {:.1})",
            self.nest,
            crate::tile_sizes_text(&self.from),
            crate::tile_sizes_text(&self.to),
            self.parallelism.0,
            self.parallelism.1
        )
    }
}

/// What one tiling offers: its schedule, Brent's bound on `threads`, and the average parallelism.
struct Offer {
    sched: TiledSchedule,
    bound: f64,
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
    if !default_sizes || cfg.original || cfg.parallel_point_loops_outer || machine.threads < 2 {
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
    // Each nest's instances per tile, by the cost model's walk; `None` when a nest has no
    // estimate (one without instances).
    let per_tile = |sched: &TiledSchedule| -> Result<Option<Vec<f64>>> {
        let cost = schedule_cost(scop, deps, sched, machine)?;
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
        Ok(Some(Offer {
            sched,
            bound: ws.work / threads + ws.span,
            parallelism: ws.parallelism(),
        }))
    };
    // First what the cost model's walk says (cheaper than the tile graph, which a SCoP of many
    // small tiles would spend a second on): a nest whose tiles, halved, would hold too little
    // work is no candidate, and a SCoP without candidates keeps its tiles.
    let sched = tiled(cfg)?;
    let Some(work) = per_tile(&sched)? else {
        return Ok(None);
    };
    let eligible = sched.nests.iter().zip(&work).any(|(n, &w)| {
        n.tile_sizes
            .first()
            .is_some_and(|&t| t != WHOLE_LOOP && t >= 2 * MIN_SPREAD_SIZE)
            && w >= 2.0 * MIN_SPLIT_WORK
    });
    if !eligible {
        return Ok(None);
    }
    let Some(mut best) = offer(sched)? else {
        return Ok(None);
    };
    let mut cfg = cfg.clone();
    let mut kept = Vec::new();
    while kept.len() < MAX_HALVINGS && best.parallelism < TASKS_PER_THREAD * threads {
        let mut found: Option<(ScheduleConfig, Offer, usize, Vec<i64>)> = None;
        for (k, nest) in best.sched.nests.iter().enumerate() {
            // The outermost member only (see the module doc).
            let sizes = &nest.tile_sizes;
            if sizes.is_empty() || sizes.contains(&WHOLE_LOOP) || sizes[0] < 2 * MIN_SPREAD_SIZE {
                continue;
            }
            let mut smaller = sizes.clone();
            smaller[0] /= 2;
            let mut tried = cfg.clone();
            tried.nest_sizes.retain(|(s, _)| *s != nest.statements);
            tried
                .nest_sizes
                .push((nest.statements.clone(), smaller.clone()));
            let sched = tiled(&tried)?;
            // The nest must be there, tiled as asked, with tiles that keep their work (checked
            // before the tile graph, which costs more).
            let Some(at) = sched
                .nests
                .iter()
                .position(|n| n.statements == nest.statements && n.tile_sizes == smaller)
            else {
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
            parallelism: (best.parallelism, o.parallelism),
        });
        cfg = tried;
        best = o;
    }
    Ok((!kept.is_empty()).then_some((cfg, kept)))
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
}
