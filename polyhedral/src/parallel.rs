//! Which tile loops of a nest may run in parallel: the polyhedral question behind the
//! barrier-based OpenMP target (PLuTo's way of parallelizing tiled code), answered as plain data.
//!
//! For nest `k`, the tile-level dependence relation `R = T ∘ D ∘ T⁻¹` lifts every dependence `D`
//! (flow, anti, output) whose source and target are both in the nest through the nest's tile map
//! `T`; pairs inside one tile are kept (they are ordered by the tile's own sequential body).
//! Dimension `j` of the tile space is *parallel* when no pair of `R` has equal coordinates
//! `0..j` and different coordinates `j`: for fixed outer tile coordinates, the iterations of a
//! loop over dimension `j` are then independent, and a `parallel for` over them followed by the
//! loop's implicit barrier runs every dependence in order (pairs with different outer coordinates
//! are ordered by the sequential outer loops; pairs in one iteration by its sequential inner
//! loops, since the tiled order itself is legal, which `verify` checks).
//!
//! When no tile dimension is parallel and the nest has at least two, the tiles are enumerated
//! along wavefronts instead: `N[t0, t1, ..] -> N[t0 + t1, t1, ..]`. In a permutable band every
//! tile dependence has non-negative components, so two tiles on the same wavefront `t0 + t1`
//! with different `t1` never depend on each other and dimension 1 of the skewed space is
//! parallel. This is not assumed: the skew is used only when the skewed relation goes
//! lexicographically forward (the skewed sequential order is legal) and its dimension 1 passes
//! the parallelism test above; otherwise the nest keeps its plain tile order with no parallel
//! loop, which is always correct.
//!
//! Dependences between different nests need nothing here: the nests run one after the other,
//! each parallel loop ending in a barrier.

use crate::isl::{Ctx, UnionMap, UnionSet};
use crate::maps::{input_error, names, tuple};
use crate::scop::ScopSets;
use crate::{Dependences, Result, TiledSchedule};
use scop_ir::Scop;

/// How the tiles of one nest are enumerated and which of the loops may be parallel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParallelTiles {
    /// The tiles the control program enumerates (ISL text): the nest's tile domain `N<k>[t0, ..]`,
    /// or, when [`ParallelTiles::wavefront`], its skew `N<k>[t0 + t1, t1, ..]`.
    pub tiles: String,
    /// Whether `tiles` is the wavefront skew: the tile coordinate 0 of a point `(w, t1, ..)` of
    /// `tiles` is then `w - t1`, the others are the point's.
    pub wavefront: bool,
    /// Per dimension of `tiles`: a loop over it, for fixed outer coordinates, has independent
    /// iterations.
    pub parallel: Vec<bool>,
}

/// For each nest of `sched`, in order, its tile enumeration for parallel loops (see the module
/// documentation). A nest without tile dimensions has an empty `parallel`.
pub fn parallel_tiles(
    scop: &Scop,
    deps: &Dependences,
    sched: &TiledSchedule,
) -> Result<Vec<ParallelTiles>> {
    let ctx = Ctx::shared()?;
    let sets = ScopSets::parse(ctx, scop)?;
    let all = crate::deps::all_of(ctx, deps)?;
    let all = all
        .intersect_domain(sets.domains.clone())?
        .intersect_range(sets.domains.clone())?;
    let mut out = Vec::with_capacity(sched.nests.len());
    for (k, nest) in sched.nests.iter().enumerate() {
        let name = format!("N{k}");
        let n = nest.tile_sizes.len();
        let tile_map = UnionMap::read(ctx, &nest.tile_map)
            .map_err(|e| input_error(&format!("tile map of nest {name}"), &nest.tile_map, e))?;
        let rel = all
            .clone()
            .apply_domain(tile_map.clone())?
            .apply_range(tile_map)?;
        let parallel = parallel_dims(ctx, &rel, &name, n)?;
        if n >= 2 && !parallel.iter().any(|&p| p) {
            let skew = UnionMap::read(ctx, &skew_map(&name, n))?;
            let skewed = rel
                .clone()
                .apply_domain(skew.clone())?
                .apply_range(skew.clone())?;
            let forward = skewed.is_subset(&UnionMap::read(ctx, &lex_le(&name, n))?)?;
            let skewed_parallel = parallel_dims(ctx, &skewed, &name, n)?;
            if forward && skewed_parallel[1] {
                let domain = UnionSet::read(ctx, &nest.tile_domain).map_err(|e| {
                    input_error(&format!("tile domain of nest {name}"), &nest.tile_domain, e)
                })?;
                let tiles = image(ctx, &domain, &skew)?;
                out.push(ParallelTiles {
                    tiles: tiles.coalesce()?.to_str()?,
                    wavefront: true,
                    parallel: skewed_parallel,
                });
                continue;
            }
        }
        out.push(ParallelTiles {
            tiles: nest.tile_domain.clone(),
            wavefront: false,
            parallel,
        });
    }
    Ok(out)
}

/// Per dimension `j < n` of the tile space `name`: whether `rel` has no pair with equal
/// coordinates before `j` and different ones at `j`.
fn parallel_dims<'c>(ctx: &'c Ctx, rel: &UnionMap<'c>, name: &str, n: usize) -> Result<Vec<bool>> {
    (0..n).map(|j| parallel_dim(ctx, rel, name, n, j)).collect()
}

/// Whether no pair of `rel` (on tiles `name[..]` of `n` dimensions) has equal coordinates
/// `0..j` and different coordinates `j`.
fn parallel_dim<'c>(
    ctx: &'c Ctx,
    rel: &UnionMap<'c>,
    name: &str,
    n: usize,
    j: usize,
) -> Result<bool> {
    let s = names("s", n);
    let t = names("t", n);
    let mut eqs: Vec<String> = (0..j).map(|i| format!("{} = {}", s[i], t[i])).collect();
    eqs.push(format!("({} < {} or {} > {})", s[j], t[j], s[j], t[j]));
    let carried = format!(
        "{{ {} -> {} : {} }}",
        tuple(name, &s),
        tuple(name, &t),
        eqs.join(" and ")
    );
    rel.clone()
        .intersect(UnionMap::read(ctx, &carried)?)?
        .is_empty()
}

/// Per dimension `j` of the tiles `name[..]` (`n` dimensions) related by `relations` (ISL maps
/// from tiles of that space to tiles of it: the dependences between the tiles of one nest):
/// whether no pair has equal coordinates `0..j` and different coordinates `j`. For fixed outer
/// coordinates, a loop over such a dimension has independent iterations, and its blocks can go
/// to different threads, the same block to the same thread at every outer step (the task
/// target's spread streams, as OpenMP's static schedule of that loop: adi's 16 row blocks in
/// each of its 1000 sweeps).
pub fn independent_dims(relations: &[&str], name: &str, n: usize) -> Result<Vec<bool>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let ctx = Ctx::shared()?;
    let mut rel = UnionMap::read(
        ctx,
        &format!(
            "{{ {} -> {} : 1 = 0 }}",
            tuple(name, &names("s", n)),
            tuple(name, &names("t", n))
        ),
    )?;
    for r in relations {
        let r = UnionMap::read(ctx, r).map_err(|e| input_error("tile dependence", r, e))?;
        rel = rel.union(r)?;
    }
    parallel_dims(ctx, &rel, name, n)
}

/// Whether the tiles `domain` (ISL text: tiles `name[..]` of `n` dimensions) take every value
/// `lo..=hi` of coordinate `j` at every value of their coordinates `0..j` that they take at
/// all: a loop over dimension `j` then has the same blocks at every outer step, as OpenMP's
/// static schedule cuts it (adi's 16 row blocks in each sweep). A triangular nest's shrinking
/// inner range would leave the threads whose blocks it has left with nothing of their own.
pub fn full_at_every_step(
    domain: &str,
    name: &str,
    n: usize,
    j: usize,
    (lo, hi): (i64, i64),
) -> Result<bool> {
    if j == 0 {
        return Ok(true);
    }
    let ctx = Ctx::shared()?;
    let t = names("t", n);
    let domain = UnionSet::read(ctx, domain).map_err(|e| input_error("tile domain", domain, e))?;
    // The tiles' first `k` coordinates.
    let prefix = |k: usize| -> Result<UnionSet<'_>> {
        let keep = UnionMap::read(
            ctx,
            &format!("{{ {} -> {} }}", tuple(name, &t), tuple("", &t[..k])),
        )?;
        image(ctx, &domain, &keep)
    };
    let widen = UnionMap::read(
        ctx,
        &format!(
            "{{ {} -> {} : {lo} <= t{j} <= {hi} }}",
            tuple("", &t[..j]),
            tuple("", &t[..=j])
        ),
    )?;
    image(ctx, &prefix(j)?, &widen)?.is_subset(&prefix(j + 1)?)
}

/// The image of `set` under `map`, set by set.
fn image<'c>(ctx: &'c Ctx, set: &UnionSet<'c>, map: &UnionMap<'c>) -> Result<UnionSet<'c>> {
    let mut out = UnionSet::empty(ctx)?;
    for set in set.sets()? {
        out = out.union(
            UnionMap::from_map(set.identity()?)?
                .apply_range(map.clone())?
                .range()?,
        )?;
    }
    Ok(out)
}

/// `{ name[t0, t1, ..] -> name[t0 + t1, t1, ..] }` (`n >= 2`).
fn skew_map(name: &str, n: usize) -> String {
    let t = names("t", n);
    let mut skewed = t.clone();
    skewed[0] = format!("{} + {}", t[0], t[1]);
    format!("{{ {} -> {} }}", tuple(name, &t), tuple(name, &skewed))
}

/// `{ name[s..] -> name[t..] : s <=lex t }`.
fn lex_le(name: &str, n: usize) -> String {
    let s = names("s", n);
    let t = names("t", n);
    let mut disjuncts: Vec<String> = (0..n)
        .map(|k| {
            let mut parts: Vec<String> = (0..k).map(|j| format!("{} = {}", s[j], t[j])).collect();
            parts.push(format!("{} < {}", s[k], t[k]));
            format!("({})", parts.join(" and "))
        })
        .collect();
    let all_equal: Vec<String> = (0..n).map(|j| format!("{} = {}", s[j], t[j])).collect();
    disjuncts.push(format!("({})", all_equal.join(" and ")));
    format!(
        "{{ {} -> {} : {} }}",
        tuple(name, &s),
        tuple(name, &t),
        disjuncts.join(" or ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_at_every_step_only_where_the_inner_range_is_whole() {
        let full = |domain: &str, j: usize, range: (i64, i64)| {
            full_at_every_step(domain, "N0", 3, j, range).unwrap()
        };
        // adi's tiles: 16 row blocks in both phases of every sweep.
        let adi = "{ N0[i0, i1, i2] : 0 < i0 <= 500 and 0 <= i1 <= 1 and 0 <= i2 <= 15 }";
        assert!(full(adi, 2, (0, 15)));
        assert!(full(adi, 1, (0, 1)));
        // A triangle: the later steps have only the upper blocks.
        let triangle = "{ N0[i0, i1, i2] : 0 <= i0 <= 7 and i0 <= i1 <= 7 and i2 = 0 }";
        assert!(!full(triangle, 1, (0, 7)));
        assert!(full(triangle, 0, (0, 7)), "dimension 0 has one step");
        // A range wider than the tiles' is not whole either.
        assert!(!full(adi, 2, (0, 16)));
    }
}
