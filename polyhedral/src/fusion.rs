//! The choice of a SCoP's fusion heuristic by cost: each heuristic's schedule (ISL's clustering,
//! distribution, fusion, fusion for shared reads), tiled as the task program will be, is
//! estimated by the cost model ([`crate::cost`]) and the cheapest kept, ties going to the
//! default. The candidates are scheduled and estimated on threads of their own.
//!
//! This module sits above both the scheduler and the cost model (the scheduler asks the model
//! for band shapes when it sizes tiles; the choice asks both), so neither imports the other in
//! a circle.

use crate::cost::{schedule_cost, Machine, ScheduleCost};
use crate::isl::CpuGroup;
use crate::{Dependences, Result, TiledSchedule};
use scop_ir::Scop;

/// The CPU time ISL may spend scheduling a candidate other than the default (`smart`) for
/// [`choose_fusion`]; one that needs more is not chosen (3mm under `max` needs 27 s at LARGE).
pub const CANDIDATE_TIME_LIMIT: std::time::Duration = std::time::Duration::from_millis(200);

/// One schedule [`choose_fusion`] considered: its fusion heuristic and its estimate (or why there
/// is none).
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub fuse: crate::Fuse,
    pub cost: std::result::Result<ScheduleCost, String>,
}

/// Estimates within this factor of the cheapest are a tie, decided by [`PREFERENCE`]: another
/// heuristic replaces ISL's default only where the model is confident that it is cheaper. The
/// estimates closest to it on the 30 PolyBench kernels (LARGE, EXTRALARGE for the short ones;
/// 2 threads): symm's `min` at 0.75 of `smart` (measured 1.6x faster), atax's at 0.82 (one
/// thread's chain against two parallel nests: 13% faster, median of 21 runs in rounds) and
/// nussinov's at 0.88 (no faster; not eligible, see [`pick`]).
pub const MARGIN: f64 = 0.85;

/// The order in which ties are decided: ISL's clustering (`smart`, the default before the model)
/// first, then distribution, since the dataflow runtime overlaps consecutive nests by itself;
/// `reuse` last (tried only where statements share read-only data: bicg's and mvt's estimates
/// are 0.78 and 0.79 of `smart`'s, measured 1.4x and 1.8x faster on one thread at EXTRALARGE).
/// The model's estimates are coarse; where they do not separate the candidates clearly, the
/// default stays. Measured at LARGE on 2 threads (a 2-core Intel Xeon VM with AVX-512, README's
/// table): the model picks `min` for 2mm, 3mm, symm, gemver, correlation, covariance and atax,
/// which run 4x, 2.6-2.8x, 1.6x, 2.3x, 26-40x, 31-40x and 1.15x faster than under `smart`, and
/// keeps `smart` for gesummv, 1.25x slower under `min` (on the AMD EPYC since its rows are
/// charged by the line: see the module doc). A tie it leaves to `smart` where `min` is
/// faster: bicg (12%, not explained). (gemm was another, 12%, until the tiles that its fused
/// initialization makes partial got the register kernel too: `crate::tile_code`.)
pub const PREFERENCE: [crate::Fuse; 4] = [
    crate::Fuse::Smart,
    crate::Fuse::Min,
    crate::Fuse::Max,
    crate::Fuse::Reuse,
];

/// Schedules `scop` (whose dependences are `deps`) under each fusion heuristic with `cfg`'s other
/// settings, tiles one task per `coarsen` tile dimensions as the task program will, estimates
/// each on `machine`, and returns the configuration to schedule with (the chosen heuristic, and
/// the time limit its candidate was scheduled under, so that scheduling again gives the same
/// schedule) with every candidate's estimate. The cheapest candidate wins; among those within
/// [`MARGIN`] of it, the first in [`PREFERENCE`]. A candidate that cannot be scheduled or
/// estimated is not chosen, nor one that tiles less of the work than `smart`; when none can be,
/// `cfg` is returned as it is.
pub fn choose_fusion(
    scop: &Scop,
    deps: &Dependences,
    cfg: &crate::ScheduleConfig,
    coarsen: Option<usize>,
    machine: &Machine,
) -> Result<(crate::ScheduleConfig, Vec<Candidate>)> {
    use crate::Fuse;
    let mut tried = Vec::new();
    let mut skipped = Vec::new();
    for fuse in PREFERENCE {
        if fuse == Fuse::Reuse && !crate::schedule::has_read_reuse(scop)? {
            continue; // it would be `max` without coincidence, for nothing
        }
        if matches!(fuse, Fuse::Max | Fuse::Reuse)
            && scop.statements.len() > cfg.max_whole_statements
        {
            // A SCoP scheduled inside its outer loops fuses only within them: `max` costs its
            // scheduling time there (deriche 0.16 s, ludcmp 0.25 s) and was never chosen.
            skipped.push(fuse);
            continue;
        }
        tried.push(candidate_config(cfg, fuse));
    }
    // Each candidate is scheduled, and then estimated, on a thread of its own (ISL contexts are
    // one per thread). The scheduler's outcomes are shared by every thread (`schedule`'s memo):
    // the problems that candidates have in common run once, and scheduling the chosen one again
    // costs no second run. The estimates wait until every schedule is known: heuristics often
    // agree (one strongly connected component), and a schedule seen before has the same estimate.
    let schedules = on_threads(&tried, |cfg| {
        crate::schedule(scop, deps, cfg).and_then(|(sched, _)| match coarsen {
            Some(n) => crate::coarsen(&sched, n),
            None => Ok(sched),
        })
    });
    let first_seen: Vec<Option<usize>> = (0..schedules.len())
        .map(|k| match &schedules[k] {
            Ok(sched) => (0..k).find(|&j| schedules[j].as_ref().ok() == Some(sched)),
            Err(_) => None,
        })
        .collect();
    let fresh: Vec<(usize, &TiledSchedule)> = (0..schedules.len())
        .filter(|&k| first_seen[k].is_none())
        .filter_map(|k| schedules[k].as_ref().ok().map(|sched| (k, sched)))
        .collect();
    let estimates = on_threads(&fresh, |(_, sched)| {
        schedule_cost(scop, deps, sched, machine)
    });
    let estimate = |k: usize| -> std::result::Result<ScheduleCost, String> {
        let k = first_seen[k].unwrap_or(k);
        match (&schedules[k], fresh.iter().position(|&(f, _)| f == k)) {
            (Err(e), _) => Err(e.to_string()),
            (Ok(_), Some(at)) => match &estimates[at] {
                Ok(cost) => Ok(cost.clone()),
                Err(e) => Err(e.to_string()),
            },
            (Ok(_), None) => Err("no estimate".into()),
        }
    };
    let mut candidates: Vec<(crate::ScheduleConfig, Candidate)> = tried
        .iter()
        .enumerate()
        .map(|(k, cfg)| {
            let cost = estimate(k);
            (
                cfg.clone(),
                Candidate {
                    fuse: cfg.fuse,
                    cost,
                },
            )
        })
        .collect();
    for fuse in skipped {
        candidates.push((
            cfg.clone(),
            Candidate {
                fuse,
                cost: Err("not tried: the SCoP is scheduled inside its outermost loops".into()),
            },
        ));
    }
    // In the order of the heuristics, as `pick` breaks ties.
    candidates.sort_by_key(|(_, c)| PREFERENCE.iter().position(|&f| f == c.fuse));
    let weighed: Vec<Candidate> = candidates.iter().map(|(_, c)| c.clone()).collect();
    let chosen = pick(&weighed).map(|k| candidates[k].0.clone());
    Ok((chosen.unwrap_or_else(|| cfg.clone()), weighed))
}

/// `work` on each item, each on a thread of its own (one alone runs on this thread), in order.
/// Where no thread can be started, the item runs here.
fn on_threads<I: Sync, T: Send>(
    items: &[I],
    work: impl Fn(&I) -> Result<T> + Sync,
) -> Vec<Result<T>> {
    if items.len() <= 1 || std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return items.iter().map(&work).collect();
    }
    let work = &work;
    // The candidates' CPU time counts toward the bound of the SCoP's compilation.
    let group = CpuGroup::current();
    let group = &group;
    std::thread::scope(|scope| {
        let spawned: Vec<_> = items
            .iter()
            .map(|item| {
                std::thread::Builder::new()
                    .name("fusion-candidate".into())
                    .spawn_scoped(scope, move || {
                        let _member = group.as_ref().map(CpuGroup::enter);
                        work(item)
                    })
            })
            .collect();
        spawned
            .into_iter()
            .zip(items)
            .map(|(handle, item)| match handle {
                Ok(handle) => handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                Err(_) => work(item),
            })
            .collect()
    })
}

/// The configuration [`choose_fusion`] schedules `fuse`'s candidate with: `cfg` with that
/// heuristic and, for the heuristics other than `smart`, at most [`CANDIDATE_TIME_LIMIT`] of
/// ISL's time. Scheduling with it again gives the candidate's schedule.
pub fn candidate_config(cfg: &crate::ScheduleConfig, fuse: crate::Fuse) -> crate::ScheduleConfig {
    let time_limit = match fuse {
        crate::Fuse::Smart => cfg.time_limit,
        _ => Some(
            cfg.time_limit
                .map_or(CANDIDATE_TIME_LIMIT, |t| t.min(CANDIDATE_TIME_LIMIT)),
        ),
    };
    crate::ScheduleConfig {
        fuse,
        time_limit,
        ..cfg.clone()
    }
}

/// Tiled depths closer than this are the same depth (a small nest of two tiled dimensions beside
/// large ones of three does not make a schedule shallower).
const DEPTH_TOLERANCE: f64 = 0.05;

/// Which candidate [`choose_fusion`] schedules with, by index: `None` when none has an estimate.
///
/// 1. A candidate that tiles less of the work than `smart` (a lower [`ScheduleCost::tiled_depth`])
///    is never chosen over it: the model does not see what that costs inside a tile (trmm's `max`
///    schedule, two tiled dimensions where `smart` has three, runs 10x slower).
/// 2. The cheapest; among those within [`MARGIN`] of it, the first in [`PREFERENCE`].
fn pick(candidates: &[Candidate]) -> Option<usize> {
    use crate::Fuse;
    let cost = |k: usize| candidates[k].cost.as_ref().ok();
    let known: Vec<usize> = (0..candidates.len())
        .filter(|&k| cost(k).is_some())
        .collect();
    let smart = known
        .iter()
        .copied()
        .find(|&k| candidates[k].fuse == Fuse::Smart);
    let depth = |k: usize| cost(k).map_or(0.0, |c| c.tiled_depth());
    let seconds = |k: usize| cost(k).map_or(f64::INFINITY, |c| c.seconds);
    let eligible: Vec<usize> = match smart {
        Some(d) => known
            .iter()
            .copied()
            .filter(|&k| depth(k) >= depth(d) - DEPTH_TOLERANCE)
            .collect(),
        None => known,
    };
    let best = eligible
        .iter()
        .map(|&k| seconds(k))
        .fold(f64::INFINITY, f64::min);
    PREFERENCE
        .iter()
        .filter_map(|&fuse| {
            eligible
                .iter()
                .copied()
                .find(|&k| candidates[k].fuse == fuse)
        })
        .find(|&k| seconds(k) * MARGIN <= best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isl::this_thread_cpu_time;
    use std::time::Duration;

    #[test]
    fn candidate_threads_count_toward_the_group_of_their_starter() {
        let group = std::sync::Arc::new(CpuGroup::default());
        let _member = CpuGroup::enter(&group);
        let before = group.used().unwrap();
        let spin = |_: &u32| -> Result<()> {
            let start = this_thread_cpu_time().unwrap();
            let mut x = 0u64;
            while this_thread_cpu_time().unwrap() - start < Duration::from_millis(60) {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
            Ok(())
        };
        let done = on_threads(&[1, 2, 3], spin);
        assert!(done.iter().all(Result::is_ok));
        let used = group.used().unwrap() - before;
        assert!(used >= Duration::from_millis(180), "{used:?}");
    }
}
