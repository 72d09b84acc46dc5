//! The choice of a SCoP's fusion by cost: each heuristic's schedule (ISL's clustering,
//! distribution, fusion, fusion for shared reads) and each plan of blocks ([`block_plans`]:
//! consecutive strongly connected components fused as a whole, in a dependence order), tiled as
//! the task program will be, is estimated by the cost model ([`crate::cost`]) and the cheapest
//! kept, ties going to the default. The candidates are scheduled and estimated on threads of
//! their own.
//!
//! Plans of blocks exist because the heuristics fuse or separate alike over the whole SCoP, and
//! the best fusion is often a mix: gemver's update of `A` belongs with the product that reads `A`
//! transposed (one pass over the matrix instead of two), and its product with `A` after `x` is
//! complete cannot join them; `min` separates all four statements, `smart` and `max` fuse all
//! four into one band of one tiled dimension. At EXTRALARGE on 2 threads (the 2-core Xeon,
//! medians of 11 in rounds): `min` 26.7 ms, the plan `S0+S1,S2,S3` 18.4 ms.
//!
//! This module sits above both the scheduler and the cost model (the scheduler asks the model
//! for band shapes when it sizes tiles; the choice asks both), so neither imports the other in
//! a circle.

use crate::cost::{schedule_cost, Machine, ScheduleCost};
use crate::privatize::ScalarExpansion;
use crate::threads::on_cores;
use crate::{Dependences, Result, TiledSchedule};
use scop_ir::{Scop, StmtId};

/// The CPU time ISL may spend scheduling a candidate other than the default (`smart`) for
/// [`choose_fusion`]; one that needs more is not chosen (3mm under `max` needs 27 s at LARGE).
pub const CANDIDATE_TIME_LIMIT: std::time::Duration = std::time::Duration::from_millis(200);

/// One schedule [`choose_fusion`] considered: its plan and its estimate (or why there is none).
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub plan: Plan,
    pub cost: std::result::Result<ScheduleCost, String>,
}

/// What a candidate schedule fuses: one of ISL's heuristics over the whole SCoP, or blocks of
/// statements that ISL fuses each as a whole, one after the other
/// ([`crate::ScheduleConfig::blocks`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Plan {
    Heuristic(crate::Fuse),
    Blocks(Vec<Vec<StmtId>>),
}

impl Plan {
    /// The configuration [`choose_fusion`] schedules this candidate with: `cfg` with its
    /// heuristic (or its blocks) and, for all but `smart`, at most [`CANDIDATE_TIME_LIMIT`] of
    /// ISL's time. Scheduling with it again gives the candidate's schedule.
    pub fn config(&self, cfg: &crate::ScheduleConfig) -> crate::ScheduleConfig {
        let (fuse, blocks) = match self {
            Plan::Heuristic(fuse) => (*fuse, None),
            Plan::Blocks(blocks) => (crate::Fuse::Max, Some(blocks.clone())),
        };
        let time_limit = match self {
            Plan::Heuristic(crate::Fuse::Smart) => cfg.time_limit,
            _ => Some(
                cfg.time_limit
                    .map_or(CANDIDATE_TIME_LIMIT, |t| t.min(CANDIDATE_TIME_LIMIT)),
            ),
        };
        crate::ScheduleConfig {
            fuse,
            blocks,
            time_limit,
            widen_products: false,
            ..cfg.clone()
        }
    }

    /// The plan a name of [`Plan`]'s `Display` stands for: `min`, `smart`, `max`, `reuse`, or
    /// blocks as `S0+S1,S2,S3`.
    pub fn parse(name: &str) -> Option<Plan> {
        use crate::Fuse;
        Some(match name {
            "min" => Plan::Heuristic(Fuse::Min),
            "smart" => Plan::Heuristic(Fuse::Smart),
            "max" => Plan::Heuristic(Fuse::Max),
            "reuse" => Plan::Heuristic(Fuse::Reuse),
            _ => {
                let blocks: Option<Vec<Vec<StmtId>>> = name
                    .split(',')
                    .map(|block| {
                        block
                            .split('+')
                            .map(|s| s.strip_prefix('S')?.parse().ok().map(StmtId))
                            .collect()
                    })
                    .collect();
                Plan::Blocks(blocks?)
            }
        })
    }
}

impl std::fmt::Display for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Plan::Heuristic(fuse) => f.write_str(fuse.name()),
            Plan::Blocks(blocks) => f.write_str(&crate::schedule::blocks_text(blocks)),
        }
    }
}

/// Estimates within this factor of the cheapest are a tie, decided by [`PREFERENCE`]: another
/// heuristic replaces ISL's default only where the model is confident that it is cheaper. The
/// estimates closest to it on the 30 PolyBench kernels (LARGE, EXTRALARGE for the short ones;
/// 2 threads): symm's `min` at 0.75 of `smart` (measured 1.6x faster), atax's at 0.856 (two
/// parallel nests reading `A` twice against one thread's chain reading it once: on 2 threads
/// 4-32% faster between runs of the runner, on one 1.5x slower and below gcc, so `smart`
/// stays: a margin of 0.87 was tried and reverted), deriche's at 0.91 (3.4x slower) and
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

/// Schedules `scop` (whose dependences are `deps`) under each fusion heuristic, and under each
/// plan of blocks that [`block_plans`] proposes, with `cfg`'s other settings, tiles one task per
/// `coarsen` tile dimensions as the task program will, estimates each on `machine`, and returns
/// the configuration to schedule with (the chosen plan, and the time limit its candidate was
/// scheduled under, so that scheduling again gives the same schedule) with every candidate's
/// estimate. The cheapest candidate wins; among those within [`MARGIN`] of it, the first
/// heuristic in [`PREFERENCE`], then the cheapest plan of blocks. A candidate that cannot be
/// scheduled or estimated is not chosen, nor one that tiles less of the work than `smart`; when
/// none can be, `cfg` is returned as it is.
///
/// `scop` has its expandable scalars expanded; `private` names those of them that must live in
/// one variable per task (the unexpanded SCoP and their expansions: the scalars that no array of
/// copies can hold, [`crate::materialization`]). A candidate whose tasks cannot each keep one
/// of them ([`crate::task_private`]) is not chosen either: the driver would schedule it again
/// with that scalar's dependences, which is not the schedule estimated. `rowsum.c`'s
/// `kernel_square` (`t = A[i][j] * 3.0 + A[j][i]; B[i][j] = t * t;` with `N` a parameter):
/// `min` puts the two statements in nests of their own, `t` then crosses tasks, and its kept
/// dependences made the estimated two parallel nests one chain of row tiles.
pub fn choose_fusion(
    scop: &Scop,
    deps: &Dependences,
    cfg: &crate::ScheduleConfig,
    coarsen: Option<usize>,
    machine: &Machine,
    private: (&Scop, &[ScalarExpansion]),
) -> Result<(crate::ScheduleConfig, Vec<Candidate>)> {
    use crate::Fuse;
    let mut tried: Vec<Plan> = Vec::new();
    let mut skipped = Vec::new();
    let split = scop.statements.len() > cfg.max_whole_statements;
    for fuse in PREFERENCE {
        if fuse == Fuse::Reuse && !crate::schedule::has_read_reuse(scop)? {
            continue; // it would be `max` without coincidence, for nothing
        }
        if matches!(fuse, Fuse::Max | Fuse::Reuse) && split {
            // A SCoP scheduled inside its outer loops fuses only within them: `max` costs its
            // scheduling time there (deriche 0.16 s, ludcmp 0.25 s) and was never chosen.
            skipped.push(Plan::Heuristic(fuse));
            continue;
        }
        tried.push(Plan::Heuristic(fuse));
    }
    if !split {
        tried.extend(block_plans(scop, deps)?.into_iter().map(Plan::Blocks));
    }
    let configs: Vec<crate::ScheduleConfig> = tried.iter().map(|p| p.config(cfg)).collect();
    // The candidates are scheduled, and then estimated, on one thread per core (ISL contexts are
    // one per thread), taken in `PREFERENCE`'s order (`crate::threads::on_cores`: `smart` on the
    // whole SCoP, usually the longest, first). The scheduler's outcomes are shared by every
    // thread (`schedule`'s memo): the problems that candidates have in common run once (a block
    // that several plans share), and scheduling the chosen one again costs no second run. The estimates wait until every
    // schedule is known: heuristics often agree (one strongly connected component), and a
    // schedule seen before has the same estimate.
    let schedules = on_cores(&configs, |cfg| {
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
    let estimates = on_cores(&fresh, |(_, sched)| {
        let (unexpanded, needed) = private;
        if !needed.is_empty() {
            let kept = crate::task_private(unexpanded, needed, sched)?;
            let lost: Vec<&str> = needed
                .iter()
                .filter(|e| !kept.iter().any(|p| p.array == e.array))
                .map(|e| unexpanded.array(e.array).name.as_str())
                .collect();
            if !lost.is_empty() {
                return Ok(Err(format!(
                    "its tasks cannot each keep their own {} (its dependences would come back)",
                    lost.join(", ")
                )));
            }
        }
        schedule_cost(scop, deps, sched, machine).map(Ok)
    });
    let estimate = |k: usize| -> std::result::Result<ScheduleCost, String> {
        let k = first_seen[k].unwrap_or(k);
        match (&schedules[k], fresh.iter().position(|&(f, _)| f == k)) {
            (Err(e), _) => Err(e.to_string()),
            (Ok(_), Some(at)) => match &estimates[at] {
                Ok(Ok(cost)) => Ok(cost.clone()),
                Ok(Err(why)) => Err(why.clone()),
                Err(e) => Err(e.to_string()),
            },
            (Ok(_), None) => Err("no estimate".into()),
        }
    };
    // A plan of blocks that gives a schedule seen before adds nothing to choose from: not listed.
    let mut candidates: Vec<(crate::ScheduleConfig, Candidate)> = configs
        .iter()
        .enumerate()
        .filter(|&(k, _)| !(first_seen[k].is_some() && matches!(tried[k], Plan::Blocks(_))))
        .map(|(k, config)| {
            (
                config.clone(),
                Candidate {
                    plan: tried[k].clone(),
                    cost: estimate(k),
                },
            )
        })
        .collect();
    for plan in skipped {
        candidates.push((
            cfg.clone(),
            Candidate {
                plan,
                cost: Err("not tried: the SCoP is scheduled inside its outermost loops".into()),
            },
        ));
    }
    // In the order of the heuristics, as `pick` breaks ties; plans of blocks after them.
    candidates.sort_by_key(|(_, c)| match &c.plan {
        Plan::Heuristic(fuse) => PREFERENCE.iter().position(|f| f == fuse),
        Plan::Blocks(_) => Some(PREFERENCE.len()),
    });
    let weighed: Vec<Candidate> = candidates.iter().map(|(_, c)| c.clone()).collect();
    let chosen = pick(&weighed).map(|k| candidates[k].0.clone());
    Ok((chosen.unwrap_or_else(|| cfg.clone()), weighed))
}

/// A SCoP whose dependence graph has more strongly connected components than this gets no plans
/// of blocks: their number doubles with each component.
pub const MAX_BLOCK_COMPONENTS: usize = 7;

/// At most this many plans of blocks are estimated for a SCoP (those that fuse least first).
pub const MAX_BLOCK_PLANS: usize = 24;

/// The fusions that none of ISL's global heuristics gives, as plans of blocks: the strongly
/// connected components of the statement dependence graph (`deps`), in a topological order
/// (ties: the component of the earliest statement first), cut into runs of consecutive
/// components; each run is a block that ISL fuses as a whole. Cutting at every component is
/// `min`, not cutting at all is `max`: neither is proposed again. A block whose components share
/// no array, directly or through another of them, saves no traffic and rules its plan out; so
/// does a block of statements at different loop depths. Those blocks (an initialization fused
/// with the product it starts, 2mm's and 3mm's, ludcmp's rows) were estimated within 1% of
/// `min` and measured no faster (2mm 59.7 and 58.8 ms, 3mm 93.9 and 95.2, LARGE, 2 threads,
/// medians of 7), and they cost the most scheduling time (ludcmp's three plans: 0.74 to 1.64 s
/// of compilation).
/// Since the order is topological, every dependence between two blocks goes forward, so each plan
/// is legal. Plans with fewer merged components come first.
pub fn block_plans(scop: &Scop, deps: &Dependences) -> Result<Vec<Vec<Vec<StmtId>>>> {
    let n = scop.statements.len();
    let edges = crate::schedule::statement_edges(deps)?;
    let components = topological_components(n, &edges);
    let c = components.len();
    if !(3..=MAX_BLOCK_COMPONENTS).contains(&c) {
        return Ok(Vec::new());
    }
    let arrays_of = |stmts: &[StmtId]| -> std::collections::BTreeSet<scop_ir::ArrayId> {
        stmts
            .iter()
            .flat_map(|&s| scop.statement(s).accesses.iter().map(|a| a.array))
            .collect()
    };
    let arrays: Vec<_> = components.iter().map(|comp| arrays_of(comp)).collect();
    let depths: Vec<std::collections::BTreeSet<usize>> = components
        .iter()
        .map(|comp| {
            comp.iter()
                .map(|&s| scop.statement(s).iterators.len())
                .collect()
        })
        .collect();
    // Whether components `lo..hi` may be one block: of one loop depth, and connected by the
    // arrays they share.
    let connected = |lo: usize, hi: usize| -> bool {
        if hi - lo > 1
            && depths[lo..hi]
                .iter()
                .flatten()
                .collect::<std::collections::BTreeSet<_>>()
                .len()
                > 1
        {
            return false;
        }
        let mut reached = vec![lo];
        let mut frontier = vec![lo];
        while let Some(at) = frontier.pop() {
            for other in lo..hi {
                if !reached.contains(&other) && !arrays[at].is_disjoint(&arrays[other]) {
                    reached.push(other);
                    frontier.push(other);
                }
            }
        }
        reached.len() == hi - lo
    };
    // Bit `k` of a mask set: a cut between components `k` and `k + 1`.
    let all_cuts = (1u32 << (c - 1)) - 1;
    let mut masks: Vec<u32> = (1..all_cuts).collect();
    masks.sort_by_key(|m| (std::cmp::Reverse(m.count_ones()), *m));
    let mut plans = Vec::new();
    for mask in masks {
        let mut runs = Vec::new();
        let mut start = 0;
        for k in 0..c {
            if k == c - 1 || mask & (1 << k) != 0 {
                runs.push((start, k + 1));
                start = k + 1;
            }
        }
        if runs.iter().all(|&(lo, hi)| connected(lo, hi)) {
            plans.push(
                runs.iter()
                    .map(|&(lo, hi)| {
                        let mut block: Vec<StmtId> = components[lo..hi].concat();
                        block.sort();
                        block
                    })
                    .collect(),
            );
        }
        if plans.len() == MAX_BLOCK_PLANS {
            break;
        }
    }
    Ok(plans)
}

/// The strongly connected components of the graph on statements `0..n` with `edges`, each sorted,
/// in a topological order of the graph of components, the component of the earliest statement
/// first among those ready.
fn topological_components(n: usize, edges: &[(StmtId, StmtId)]) -> Vec<Vec<StmtId>> {
    use petgraph::graph::{DiGraph, NodeIndex};
    let mut graph = DiGraph::<(), ()>::new();
    let nodes: Vec<NodeIndex> = (0..n).map(|_| graph.add_node(())).collect();
    for &(a, b) in edges {
        if a != b && (a.0 as usize) < n && (b.0 as usize) < n {
            graph.add_edge(nodes[a.0 as usize], nodes[b.0 as usize], ());
        }
    }
    let mut components: Vec<Vec<StmtId>> = petgraph::algo::tarjan_scc(&graph)
        .into_iter()
        .map(|comp| {
            let mut stmts: Vec<StmtId> = comp.iter().map(|v| StmtId(v.index() as u32)).collect();
            stmts.sort();
            stmts
        })
        .collect();
    components.sort();
    let component_of: Vec<usize> = {
        let mut of = vec![0; n];
        for (k, comp) in components.iter().enumerate() {
            for s in comp {
                of[s.0 as usize] = k;
            }
        }
        of
    };
    let c = components.len();
    let mut preds = vec![std::collections::BTreeSet::new(); c];
    for &(a, b) in edges {
        let (ca, cb) = (component_of[a.0 as usize], component_of[b.0 as usize]);
        if ca != cb {
            preds[cb].insert(ca);
        }
    }
    // Components are sorted by their first statement: the first ready one is the earliest.
    let mut order = Vec::with_capacity(c);
    let mut placed = vec![false; c];
    while order.len() < c {
        let Some(next) = (0..c).find(|&k| !placed[k] && preds[k].iter().all(|&p| placed[p])) else {
            break; // a cycle between components cannot happen; keep what is ordered
        };
        placed[next] = true;
        order.push(next);
    }
    order.into_iter().map(|k| components[k].clone()).collect()
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
    let cost = |k: usize| candidates[k].cost.as_ref().ok();
    let known: Vec<usize> = (0..candidates.len())
        .filter(|&k| cost(k).is_some())
        .collect();
    let smart = known
        .iter()
        .copied()
        .find(|&k| candidates[k].plan == Plan::Heuristic(crate::Fuse::Smart));
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
    let mut blocks: Vec<usize> = eligible
        .iter()
        .copied()
        .filter(|&k| matches!(candidates[k].plan, Plan::Blocks(_)))
        .collect();
    blocks.sort_by(|&a, &b| seconds(a).total_cmp(&seconds(b)));
    PREFERENCE
        .iter()
        .filter_map(|&fuse| {
            eligible
                .iter()
                .copied()
                .find(|&k| candidates[k].plan == Plan::Heuristic(fuse))
        })
        .chain(blocks)
        .find(|&k| seconds(k) * MARGIN <= best)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Statements 1 and 2 are a cycle; 3 feeds 0, which feeds the cycle. The components, each
    /// sorted: [0], [1, 2], [3]; only [3] is ready at first (0 waits for it), then [0], then
    /// [1, 2]: the textual order is not a topological one here.
    #[test]
    fn components_come_in_dependence_order() {
        let e = |a: u32, b: u32| (StmtId(a), StmtId(b));
        let order = topological_components(4, &[e(3, 0), e(1, 2), e(2, 1), e(0, 1), e(1, 1)]);
        let s = |k: u32| StmtId(k);
        assert_eq!(order, vec![vec![s(3)], vec![s(0)], vec![s(1), s(2)]]);
        // Without edges: the statements in their order.
        assert_eq!(
            topological_components(3, &[]),
            vec![vec![s(0)], vec![s(1)], vec![s(2)]]
        );
    }

    #[test]
    fn plans_print_and_parse_back() {
        let s = |k: u32| StmtId(k);
        let plan = Plan::Blocks(vec![vec![s(0), s(1)], vec![s(2)], vec![s(3)]]);
        assert_eq!(plan.to_string(), "S0+S1,S2,S3");
        assert_eq!(Plan::parse("S0+S1,S2,S3"), Some(plan));
        assert_eq!(Plan::parse("min"), Some(Plan::Heuristic(crate::Fuse::Min)));
        for bad in ["", "S0,,S1", "S0+", "T0", "S-1", "mini", "S0 S1"] {
            assert_eq!(Plan::parse(bad), None, "{bad:?}");
        }
    }
}
