//! Work and span of a SCoP's tile graph at given parameter values: how much parallelism the
//! dataflow program offers, read without a machine that has the cores.
//!
//! The tiles of every nest and the pairs of every dependence that tasks synchronize on
//! ([`TileGraph::kept`]; the dependences dropped by transitive reduction lie on longer paths and
//! change no path's length) are enumerated with the parameters fixed, and the longest path is
//! found in topological order (Kahn's algorithm: the graph is acyclic, every dependence goes
//! forward in the sequential order of the tiles). A tile weighs the instances of a full tile of
//! its nest (the product of its tile sizes; a partial tile counts as full, and the loops below a
//! band that does not hold all of them count as one), so the work is an estimate of the
//! instances and the span of those on the critical path; the task count and the tasks on that
//! path are exact.
//!
//! From them: the average parallelism `work / span`, the bound `min(p, work / span)` on the
//! speed-up on `p` threads, and the speed-up a greedy scheduler reaches at least,
//! `work / (work / p + span)` (Brent), printed by `--emit tasks` for a few core counts.

use crate::isl::{Ctx, Set, UnionMap, UnionSet};
use crate::maps::input_error;
use crate::scop::ScopSets;
use crate::{Result, TileGraph};
use scop_ir::Scop;
use std::collections::HashMap;

/// The most tiles, and the most dependence pairs, that [`work_span`] enumerates.
pub const MAX_TILES: usize = 1 << 20;

/// The work and span of a tile graph (see the module doc).
#[derive(Clone, Debug, PartialEq)]
pub struct WorkSpan {
    /// Tasks (tiles) in all.
    pub tasks: usize,
    /// Synchronized pairs of tiles (edges).
    pub edges: usize,
    /// The estimated instances of all tiles.
    pub work: f64,
    /// The estimated instances along the longest path.
    pub span: f64,
    /// Tasks on that path.
    pub span_tasks: usize,
}

impl WorkSpan {
    /// `work / span`: the speed-up no number of threads can pass.
    pub fn parallelism(&self) -> f64 {
        if self.span > 0.0 {
            self.work / self.span
        } else {
            1.0
        }
    }

    /// The speed-up a greedy scheduler reaches at least on `p` threads: `work / (work/p + span)`.
    pub fn greedy_speedup(&self, p: usize) -> f64 {
        let p = p.max(1) as f64;
        if self.work > 0.0 {
            self.work / (self.work / p + self.span)
        } else {
            1.0
        }
    }
}

/// The work and span of `graph`, whose nest `k` has the tiles `domains[k]` (ISL text, as in
/// [`crate::Nest::tile_domain`]) and the tile sizes `sizes[k]`, with every parameter set by
/// `params` (ISL text of a parameter set, such as `[n] -> { : n = 1000 }`). `None` when there are
/// more than [`MAX_TILES`] tiles or pairs, or a set is unbounded at these values.
pub fn work_span(
    graph: &TileGraph,
    domains: &[String],
    sizes: &[Vec<i64>],
    params: &str,
) -> Result<Option<WorkSpan>> {
    let ctx = Ctx::shared()?;
    let params = Set::read(ctx, params).map_err(|e| input_error("parameter set", params, e))?;
    let mut index: HashMap<(usize, Vec<i64>), usize> = HashMap::new();
    let mut weight: Vec<f64> = Vec::new();
    // The number of coordinates of each nest's tiles (0 for a nest without tiles).
    let mut dims = vec![0usize; domains.len()];
    for (k, domain) in domains.iter().enumerate() {
        let tile_work = sizes
            .get(k)
            .map(|s| {
                s.iter()
                    .map(|&t| if t == crate::WHOLE_LOOP { 1 } else { t.max(1) })
                    .fold(1.0, |w, t| w * t as f64)
            })
            .unwrap_or(1.0);
        let set = UnionSet::read(ctx, domain)
            .map_err(|e| input_error("tile domain", domain, e))?
            .intersect_params(params.clone())?;
        let Some(points) = points(&set, MAX_TILES.saturating_sub(weight.len()))? else {
            return Ok(None);
        };
        for p in points {
            dims[k] = p.len();
            index.insert((k, p), weight.len());
            weight.push(tile_work);
        }
    }
    let n = weight.len();
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut indegree = vec![0usize; n];
    let mut edges = 0;
    for (_, dep) in graph.kept() {
        let pairs = UnionMap::read(ctx, &dep.relation)
            .map_err(|e| input_error("tile dependence", &dep.relation, e))?
            .wrap()?
            .intersect_params(params.clone())?;
        let Some(pairs) = points(&pairs, MAX_TILES.saturating_sub(edges))? else {
            return Ok(None);
        };
        let src_dims = dims.get(dep.src.index()).copied().unwrap_or(0);
        for pair in pairs {
            let (s, t) = pair.split_at(src_dims.min(pair.len()));
            let (Some(&s), Some(&t)) = (
                index.get(&(dep.src.index(), s.to_vec())),
                index.get(&(dep.dst.index(), t.to_vec())),
            ) else {
                continue;
            };
            succ[s].push(t);
            indegree[t] += 1;
            edges += 1;
        }
    }
    // Longest path, in topological order: `finish[t]` is the heaviest path ending with `t`.
    let mut finish = weight.clone();
    let mut count = vec![1usize; n];
    let mut ready: Vec<usize> = (0..n).filter(|&t| indegree[t] == 0).collect();
    let mut done = 0;
    while let Some(s) = ready.pop() {
        done += 1;
        for &t in &succ[s] {
            if finish[s] + weight[t] > finish[t] {
                finish[t] = finish[s] + weight[t];
                count[t] = count[s] + 1;
            }
            indegree[t] -= 1;
            if indegree[t] == 0 {
                ready.push(t);
            }
        }
    }
    if done < n {
        return Err(crate::Error::InvalidInput(
            "the tile graph has a cycle (a compiler bug)".to_string(),
        ));
    }
    let (span, span_tasks) = (0..n)
        .map(|t| (finish[t], count[t]))
        .fold((0.0, 0), |best, x| if x.0 > best.0 { x } else { best });
    Ok(Some(WorkSpan {
        tasks: n,
        edges,
        work: weight.iter().sum(),
        span,
        span_tasks,
    }))
}

/// The parameter values of the cost model's estimates ([`crate::cost::PARAM_VALUE`] each) as
/// the parameter set [`work_span`] takes, or `None` when the SCoP's context excludes them.
pub fn estimate_params(scop: &Scop) -> Result<Option<String>> {
    let ctx = Ctx::shared()?;
    let sets = ScopSets::parse(ctx, scop)?;
    match crate::cost::fixed_params(ctx, &sets.context) {
        Ok(params) => Ok(Some(params.to_str()?)),
        Err(_) => Ok(None),
    }
}

/// The points of `set` with its parameters fixed, or `None` past `max` of them.
fn points(set: &UnionSet<'_>, max: usize) -> Result<Option<Vec<Vec<i64>>>> {
    let mut all = Vec::new();
    for piece in set.sets()? {
        let piece = piece.project_out_params()?;
        if !piece.is_bounded()? {
            return Ok(None);
        }
        let Some(points) = piece.points_upto(max.saturating_sub(all.len()))? else {
            return Ok(None);
        };
        all.extend(points);
    }
    Ok(Some(all))
}
