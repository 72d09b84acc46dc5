//! The tile graph of section 4 of Kong et al. (TACO 2014): tile dependences simplified and
//! uniformized, numbered, reduced transitively where that is exact, and a partition of every tile
//! domain by dependence signature.
//!
//! Input: the [`TileDep`]s of [`tile_dependences`](crate::tile_dependences) (already lifted to
//! tiles with the same-tile pairs removed). Output: a [`TileGraph`], plain data (ISL text and Rust
//! values) from which `taskgen` builds task classes without ISL.
//!
//! The steps, each a function below:
//! 1. [`simplify`]: per pair of nests, the relation's basic maps are coalesced (a subsumed basic
//!    map is dropped, a superset replaces the ones it covers, partial overlaps whose union is convex
//!    are fused), equalities made explicit, redundant constraints removed, and the basic maps made
//!    pairwise disjoint unless that multiplies them. All statement dependences between two nests
//!    were already united into one relation per pair, so "several dependences between the same
//!    two nodes" become one.
//! 2. [`uniformize`]: a relation between spaces of one dimension whose distances `t - s` take at
//!    most [`MAX_UNIFORM`] values, whatever the parameters, is split into one uniform dependence
//!    per distance (`s = t - d`): a task then names its input as "my key minus `d`". Other
//!    relations stay whole (non-uniform); their sources are enumerated per task. A nest's
//!    non-uniform dependence on itself first loses the pairs that are paths of two of its own
//!    pairs ([`reduce_self`], the partial reduction of step 4 within one dependence), where what
//!    stays is a wavefront's few uniform pieces: nussinov's tiles waited for every tile left of
//!    them and below them (325 559 pairs at LARGE, enumerated per task while spawning), now
//!    for their two neighbours (6 162), 1.12x on two threads (0.122 -> 0.109 s, medians of 9
//!    runs in rounds, Zen 5) and 1.03x on one; ludcmp's back substitution becomes a chain.
//! 3. Numbering: the resulting dependences `d0, d1, ...` ([`NumberedDep`]), with their source
//!    (OUT) and target (IN) tile sets and the shape facts idiom selection needs.
//! 4. [`reduce`]: a dependence whose every pair `s -> t` is also a path `s -> m -> t` through
//!    two dependences (of any nests, dropped ones included) is implied and dropped. The test is
//!    on tiles (`R_j ⊆ R ∘ R`), not on classes, so it is exact. Dropping all of them at once is
//!    safe, whatever the order: for each parameter value the tiles and their dependences form a
//!    finite acyclic graph (every dependence goes forward in the sequential order of the tiles),
//!    and in such a graph an edge `s -> t` that lies on a longer path also lies on a *longest*
//!    path from `s` to `t`, none of whose edges lies on a longer path itself (that would make it
//!    longer): the edges that are kept connect every pair that the dropped ones did. (This is
//!    why transitive reduction of an acyclic graph is unique.) Composing only the dependences
//!    still kept, greedily, was weaker: on jacobi-2d's border tiles (1, 1, 1) is
//!    (1, 1, 0) + (0, 0, 1) and not (1, 0, 0) + (0, 1, 1), and (1, 1, 0) had been dropped before.
//!
//!    Partial reduction — dropping a dependence only on the tiles where it is implied, the
//!    others keeping it in their signature — is safe by the same argument, but is not done
//!    between uniform dependences (see step 2 for a non-uniform one), because it does not
//!    change the count: on jacobi-2d (4 x 4 x 4 tiles of the skewed
//!    space, `polyhedral/tests/tile_graph.rs`) ISL finds (0, 1, 1) implied everywhere except on
//!    one corner tile per time tile when N mod 4 = 3 (and on the last time tile when
//!    2T + N mod 4 = 3), a tile whose only predecessor is its (0, 1, 1) source, so the exact
//!    transitive reduction there has those four distances too: the paper's 4 is reached by
//!    whole dependences. Partial reduction would only take (0, 1, 1) out of the inner tiles'
//!    inputs (3 instead of 4) at the price of more partition classes (a split by its residue)
//!    and of a second relation per dependence (the pairs still enumerated versus those waited
//!    for); with PolyBench's fixed sizes the residue is usually empty anyway (jacobi-2d keeps 3
//!    at MEDIUM and LARGE).
//! 5. [`partition`]: each nest's tile domain — the union of its statements' tile domains, which
//!    is the leading domain under the union rule; the deepest statements are reported as
//!    `leading`, the others as followers — is split into disjoint classes of tiles with the same
//!    signature: the set of kept dependences the tile is a target of (IN) and a source of (OUT).
//!    Every class lists the statements that have tiles in it (the partition propagated to the
//!    followers). Past [`MAX_CLASSES`] classes the nest keeps no partition (`None`), and code
//!    generation guards each input instead.
//!
//! Every function parses into a fresh ISL context; nothing here knows about C or the runtime.

use crate::astgen::few_offsets;
use crate::isl::{Ctx, Map, Set, Side, UnionMap, UnionSet};
use crate::maps::{input_error, names, nest_of_name, tuple};
use crate::scop::parse_context;
use crate::{DepId, Error, Nest, NestId, Result, TileDep, TiledSchedule};
use scop_ir::{Scop, StmtId};

/// The most distances a tile dependence is split into by uniformization.
pub const MAX_UNIFORM: usize = 16;
/// The most classes of one nest's partition.
pub const MAX_CLASSES: usize = 128;
/// The most dependences transitive reduction looks at (it composes pairs of them).
pub const MAX_REDUCED: usize = 64;

/// A tile dependence after simplification: one per (source nest, target nest) pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimplifiedDep {
    pub src: NestId,
    pub dst: NestId,
    /// The simplified relation, ISL text.
    pub relation: String,
    /// Basic maps before and after simplification.
    pub n_basic_maps: (usize, usize),
}

/// Facts about a dependence's shape that idiom selection uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Every source tile is related to every target tile (`relation = sources × targets`).
    pub product: bool,
    /// At most one source tile, for every parameter value.
    pub one_source: bool,
    /// At most one target tile, for every parameter value.
    pub one_target: bool,
}

/// A numbered tile dependence `d<id>` (its index in [`TileGraph::deps`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumberedDep {
    pub src: NestId,
    pub dst: NestId,
    /// Index of the [`SimplifiedDep`] it comes from.
    pub origin: usize,
    /// `{ N<src>[..] -> N<dst>[..] }`, ISL text.
    pub relation: String,
    /// `Some(d)` for a uniform dependence: the source of target `t` is `t - d`.
    pub distance: Option<Vec<i64>>,
    /// The source tiles (the OUT side), ISL text.
    pub sources: String,
    /// The target tiles (the IN side), ISL text.
    pub targets: String,
    pub shape: Shape,
    /// `Some((a, b))` when transitive reduction dropped it: every pair is a path through two
    /// dependences, for example `d<a>` then `d<b>` (which may be dropped too: the kept ones
    /// connect every such pair, see the module doc). Dropped dependences are in no signature.
    pub implied_by: Option<(DepId, DepId)>,
}

/// The IN and OUT dependences of a tile, by number, ascending.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Signature {
    pub ins: Vec<DepId>,
    pub outs: Vec<DepId>,
}

/// Tiles of one nest with one signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionClass {
    /// The tiles, ISL text in the nest's tile space.
    pub domain: String,
    pub signature: Signature,
    /// The statements with instances in these tiles.
    pub statements: Vec<StmtId>,
}

/// One statement's tiles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatementTiles {
    pub stmt: StmtId,
    /// The number of loops around the statement.
    pub depth: usize,
    /// The tiles holding its instances, ISL text.
    pub domain: String,
}

/// The tiles of one nest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NestTiles {
    pub n_dims: usize,
    /// All its tiles, ISL text.
    pub domain: String,
    pub statements: Vec<StatementTiles>,
    /// The deepest statements: their tile domains lead; the others follow.
    pub leading: Vec<StmtId>,
    /// Disjoint classes covering `domain`, by signature; `None` past [`MAX_CLASSES`].
    pub partition: Option<Vec<PartitionClass>>,
}

/// The tile graph of one SCoP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileGraph {
    pub nests: Vec<NestTiles>,
    pub simplified: Vec<SimplifiedDep>,
    pub deps: Vec<NumberedDep>,
}

impl TileGraph {
    /// The dependences that tasks synchronize on (not dropped by reduction).
    pub fn kept(&self) -> impl Iterator<Item = (DepId, &NumberedDep)> + Clone {
        self.deps
            .iter()
            .enumerate()
            .filter(|(_, d)| d.implied_by.is_none())
            .map(|(j, d)| (DepId::new(j), d))
    }

    /// Numbered dependence `j`.
    ///
    /// # Panics
    /// If `j` is not a dependence of this graph.
    pub fn dep(&self, j: DepId) -> &NumberedDep {
        &self.deps[j.index()]
    }
}

/// Builds the tile graph of a scheduled SCoP from its tile dependences.
pub fn tile_graph(scop: &Scop, sched: &TiledSchedule, tile_deps: &[TileDep]) -> Result<TileGraph> {
    let ctx = Ctx::shared()?;
    let context = parse_context(ctx, scop)?;
    let mut domains = Vec::with_capacity(sched.nests.len());
    for nest in &sched.nests {
        let domain = UnionSet::read(ctx, &nest.tile_domain)
            .map_err(|e| input_error("tile domain", &nest.tile_domain, e))?;
        domains.push(domain.intersect_params(context.clone())?);
    }
    let mut simplified = Vec::new();
    let mut pieces: Vec<(usize, Map<'_>, Option<Vec<i64>>)> = Vec::new();
    for dep in tile_deps {
        if dep.src.index() >= sched.nests.len() || dep.dst.index() >= sched.nests.len() {
            return Err(Error::InvalidInput(format!(
                "a tile dependence {} -> {} between unknown nests",
                dep.src, dep.dst
            )));
        }
        let rel = UnionMap::read(ctx, &dep.relation)
            .map_err(|e| input_error("tile dependence", &dep.relation, e))?;
        // Only the tiles that exist under the context (which also bounds the parameters).
        let rel = rel
            .intersect_domain(domains[dep.src.index()].clone())?
            .intersect_range(domains[dep.dst.index()].clone())?;
        let mut maps = rel.maps()?;
        let map = match maps.len() {
            0 => continue,
            1 => maps.remove(0),
            n => {
                return Err(Error::InvalidInput(format!(
                    "the tile dependence `{}` spans {n} pairs of spaces",
                    dep.relation
                )));
            }
        };
        check_spaces(&map, dep)?;
        let before = map.n_basic_maps()?;
        let map = simplify(map)?;
        let origin = simplified.len();
        simplified.push(SimplifiedDep {
            src: dep.src,
            dst: dep.dst,
            relation: map.to_str()?,
            n_basic_maps: (before, map.n_basic_maps()?),
        });
        let mut uniform = uniformize(map.clone())?;
        if dep.src == dep.dst && uniform.iter().any(|(_, d)| d.is_none()) {
            ctx.set_max_operations(REDUCTION_BUDGET);
            let reduced = reduce_self(&map);
            ctx.set_max_operations(0);
            match reduced {
                Ok(Some(pieces)) => uniform = pieces,
                Ok(None) => {}
                Err(_) if ctx.quota_hit() => {}
                Err(e) => return Err(e),
            }
        }
        for (piece, distance) in uniform {
            pieces.push((origin, piece, distance));
        }
    }
    let mut deps = Vec::with_capacity(pieces.len());
    for (origin, piece, distance) in &pieces {
        let sources = piece.clone().domain()?.coalesce()?;
        let targets = piece.clone().range()?.coalesce()?;
        let one_source = at_most_one_point(&sources)?;
        // Comparing a non-uniform piece with the product of its ends computes the divisions
        // of both, which ran past ten minutes on a random SCoP with `%` guards: past a budget
        // the piece is taken as no product (then its sources are enumerated, exactly).
        ctx.set_max_operations(REDUCTION_BUDGET);
        let product = is_product(piece, distance.is_some(), &sources, &targets, one_source);
        ctx.set_max_operations(0);
        let product = match product {
            Ok(p) => p,
            Err(_) if ctx.quota_hit() => false,
            Err(e) => return Err(e),
        };
        let shape = Shape {
            product,
            one_source,
            one_target: at_most_one_point(&targets)?,
        };
        deps.push(NumberedDep {
            src: simplified[*origin].src,
            dst: simplified[*origin].dst,
            origin: *origin,
            relation: piece.to_str()?,
            distance: distance.clone(),
            sources: sources.to_str()?,
            targets: targets.to_str()?,
            shape,
            implied_by: None,
        });
    }
    let maps: Vec<Map<'_>> = pieces.into_iter().map(|(_, m, _)| m).collect();
    for (j, by) in reduce(ctx, &maps, &deps)? {
        deps[j].implied_by = Some((DepId::new(by.0), DepId::new(by.1)));
    }
    let mut nests = Vec::with_capacity(sched.nests.len());
    for k in 0..sched.nests.len() {
        nests.push(nest_tiles(ctx, scop, sched, k, &context, &deps)?);
    }
    Ok(TileGraph {
        nests,
        simplified,
        deps,
    })
}

/// The same schedule with coarser tasks: every nest with more than `n_dims` tile dimensions keeps
/// only its first `n_dims` as tile coordinates (the paper's interband granularity is `n_dims = 1`,
/// its intraband granularity `n_dims = 2`). The other tile loops become loops inside the task,
/// so the order of the instances, and hence the legality of the schedule, is unchanged.
pub fn coarsen(sched: &TiledSchedule, n_dims: usize) -> Result<TiledSchedule> {
    if n_dims == 0 {
        return Err(Error::InvalidInput(
            "a task needs at least one tile dimension".into(),
        ));
    }
    let ctx = Ctx::shared()?;
    let mut nests = Vec::with_capacity(sched.nests.len());
    for (k, nest) in sched.nests.iter().enumerate() {
        let d = nest.tile_sizes.len();
        if d <= n_dims {
            nests.push(nest.clone());
            continue;
        }
        let name = format!("N{k}");
        let t = names("t", d);
        let projection = UnionMap::read(
            ctx,
            &format!(
                "{{ {} -> {} }}",
                tuple(&name, &t),
                tuple(&name, &t[..n_dims])
            ),
        )?;
        let tile_map = UnionMap::read(ctx, &nest.tile_map)
            .map_err(|e| input_error(&format!("tile map of nest N{k}"), &nest.tile_map, e))?
            .apply_range(projection.clone())?
            .coalesce()?;
        let domain = UnionSet::read(ctx, &nest.tile_domain)
            .map_err(|e| input_error("tile domain", &nest.tile_domain, e))?;
        let tile_domain = projection.intersect_domain(domain)?.range()?.coalesce()?;
        nests.push(Nest {
            statements: nest.statements.clone(),
            tile_sizes: nest.tile_sizes[..n_dims].to_vec(),
            schedule: nest.schedule.clone(),
            tile_map: tile_map.to_str()?,
            tile_domain: tile_domain.to_str()?,
            row_line: nest.row_line.clone(),
            // The kept dimensions in the same order (the first always stays first).
            spawn_order: Some(&nest.spawn_order)
                .filter(|o| !o.is_empty())
                .map(|o| {
                    o.iter()
                        .copied()
                        .filter(|&d| d < n_dims)
                        .collect::<Vec<_>>()
                })
                .filter(|o| o.iter().enumerate().any(|(k, &d)| k != d))
                .unwrap_or_default(),
            row_moves: nest.row_moves.iter().take(n_dims).copied().collect(),
        });
    }
    Ok(TiledSchedule {
        tree: sched.tree.clone(),
        nests,
    })
}

fn check_spaces(map: &Map<'_>, dep: &TileDep) -> Result<()> {
    let src = map.tuple_name(Side::In).as_deref().and_then(nest_of_name);
    let dst = map.tuple_name(Side::Out).as_deref().and_then(nest_of_name);
    if (src, dst) != (Some(dep.src), Some(dep.dst)) {
        return Err(Error::InvalidInput(format!(
            "the tile dependence `{}` does not go from {} to {}",
            dep.relation, dep.src, dep.dst
        )));
    }
    Ok(())
}

/// Same pairs, simpler: coalesced, equalities explicit, no redundant constraints; and made of
/// pairwise disjoint basic maps when that does not take more of them (ISL's disjoint form of
/// overlapping skewed pieces can triple their number; the uniform pieces that code generation
/// uses are disjoint anyway, one distance each).
pub(crate) fn simplify(map: Map<'_>) -> Result<Map<'_>> {
    let simple = map.coalesce()?.detect_equalities()?.remove_redundancies()?;
    // Coalescing after the split only fuses whole basic maps, so they stay disjoint.
    let disjoint = simple.clone().make_disjoint()?.coalesce()?;
    Ok(if disjoint.n_basic_maps()? <= simple.n_basic_maps()? {
        disjoint
    } else {
        simple
    })
}

/// A relation's pieces, each with its distance where it is uniform ([`uniformize`]).
pub(crate) type Pieces<'c> = Vec<(Map<'c>, Option<Vec<i64>>)>;

/// Splits a relation into uniform pieces (one per distance, in increasing lexicographic order of
/// the distance) when it has at most [`MAX_UNIFORM`] distances; otherwise the relation itself,
/// non-uniform.
pub(crate) fn uniformize(map: Map<'_>) -> Result<Pieces<'_>> {
    let offsets = match few_offsets(&map)? {
        Some(offsets) if offsets.len() <= MAX_UNIFORM => offsets,
        _ => return Ok(vec![(map, None)]),
    };
    let ctx = map.ctx();
    let n = map.n_dims(Side::Out)?;
    let (src, dst) = (
        map.tuple_name(Side::In).unwrap_or_default(),
        map.tuple_name(Side::Out).unwrap_or_default(),
    );
    let s = names("s", n);
    let t = names("t", n);
    let mut pieces = Vec::with_capacity(offsets.len());
    for d in offsets.into_iter().rev() {
        let eqs: Vec<String> = (0..n)
            .map(|k| format!("{} = {} + ({})", t[k], s[k], d[k]))
            .collect();
        let cond = if eqs.is_empty() {
            String::new()
        } else {
            format!(" : {}", eqs.join(" and "))
        };
        let shift = Map::read(
            ctx,
            &format!("{{ {} -> {}{cond} }}", tuple(&src, &s), tuple(&dst, &t)),
        )?;
        let piece = map.clone().intersect(shift)?.coalesce()?;
        if !piece.is_empty()? {
            pieces.push((piece, Some(d)));
        }
    }
    Ok(pieces)
}

/// The pieces ([`uniformize`]) of a nest's dependence on itself without the pairs that are
/// paths of two of its own pairs, when they are no more than a wavefront's neighbours (one per
/// tile dimension and a diagonal) and at most one of them is not uniform, in no more basic maps
/// than the whole; `None` otherwise (the dependence then stays whole: trmm's product at LARGE
/// would take 16 distances, each an input of its own, for 7 125 pairs instead of 5 130).
/// trisolv's diagonal tiles each fed every tile below them in their column; now the last one
/// does and the others feed the next (one piece, not uniform: 35 021 pairs at EXTRALARGE,
/// 4 145; 1.08x on two threads, 1.16x on one, medians of 15 and 9 runs in rounds). Allowing
/// the piece as many more basic maps as neighbours reduced cholesky's, lu's and
/// floyd-warshall's too (26 288 -> 16 368 pairs for cholesky at LARGE) but ran cholesky 0.97x on
/// two threads and one (medians of 21 and 11), lu level: not kept. A pair `s -> t` that is also `s -> m -> t` is implied: `m`
/// waits for `s` and `t` for `m`. Dropping all of them at once is safe by the argument of step
/// 4 in the module doc (an edge on a longer path lies on a longest one, whose edges are kept),
/// and the result is the relation's own transitive reduction where its pairs form chains.
/// nussinov's tile `(i, j)` waits for every tile left of it in its row and below it in its
/// column: 325 559 pairs for 3 160 tiles at LARGE, each a task's input enumerated at run time;
/// its reduction waits for its two neighbours (and the diagonal one where the band is skewed).
fn reduce_self<'c>(map: &Map<'c>) -> Result<Option<Pieces<'c>>> {
    // A copy of its own: ISL may change the representation of objects it shares (the divisions
    // it computes), and the dependence's text, kept when this fails, should not depend on it.
    let whole = UnionMap::read(map.ctx(), &map.to_str()?)?;
    let paths = whole.clone().apply_range(whole.clone())?;
    let kept = whole.clone().subtract(paths)?.coalesce()?;
    if kept.is_equal(&whole)? {
        return Ok(None);
    }
    let mut kept = kept.maps()?;
    if kept.len() != 1 {
        return Ok(None);
    }
    let pieces = uniformize(simplify(kept.remove(0))?)?;
    let neighbours = map.n_dims(Side::Out)? + 1;
    let mut whole = pieces.iter().filter(|(_, d)| d.is_none());
    let simpler = match (whole.next(), whole.next()) {
        (None, _) => true,
        (Some((piece, _)), None) => piece.n_basic_maps()? <= map.n_basic_maps()?,
        (Some(_), Some(_)) => false,
    };
    Ok((pieces.len() <= neighbours && simpler).then_some(pieces))
}

/// Whether `piece` relates every one of its `sources` to every one of its `targets`, given
/// whether it is uniform and whether its sources are at most one point. A uniform piece
/// `{ s -> s + d : s in S }` holds a pair (s1, s2 + d) of that product only when s1 = s2: it is
/// the product exactly when S has at most one point. Other pieces are compared with the product,
/// which for uniform ones on skewed tiles of unequal sizes took seconds (heat-3d, tiles 7,3).
fn is_product<'c>(
    piece: &Map<'c>,
    uniform: bool,
    sources: &Set<'c>,
    targets: &Set<'c>,
    one_source: bool,
) -> Result<bool> {
    if uniform {
        return Ok(one_source);
    }
    piece.is_equal(&Map::from_domain_and_range(
        sources.clone(),
        targets.clone(),
    )?)
}

/// Whether a set has at most one point for every parameter value: no two of its points are in
/// lexicographic order. One emptiness test; comparing the set with its lexicographic minimum
/// (parametric integer programming) took 100 s on the tile sets of a random 5-statement SCoP
/// with strided and reversed subscripts.
fn at_most_one_point(set: &Set<'_>) -> Result<bool> {
    set.clone().lex_lt_set(set.clone())?.is_empty()
}

/// Dependences implied by two-step paths: `(j, (a, b))` where every pair of `d<j>` is a path
/// through two dependences of the graph, `d<a>` then `d<b>` being the first such pair (the
/// paths may use several pairs). All dependences are composed, dropped ones included, so the
/// result does not depend on the order of the tests (see the module doc for why that is safe).
/// Between uniform dependences only pairs whose distances add up to `d<j>`'s are composed; each
/// test gets an ISL operation budget ([`REDUCTION_BUDGET`]), past which the dependence is kept
/// (never wrongly dropped).
fn reduce<'c>(
    ctx: &'c Ctx,
    maps: &[Map<'c>],
    deps: &[NumberedDep],
) -> Result<Vec<(usize, (usize, usize))>> {
    if deps.len() > MAX_REDUCED {
        return Ok(Vec::new());
    }
    let mut dropped = Vec::new();
    for j in 0..deps.len() {
        let all = 0..deps.len();
        let candidates: Vec<(usize, usize)> = all
            .clone()
            .filter(|&a| deps[a].src == deps[j].src)
            .flat_map(|a| all.clone().map(move |b| (a, b)))
            .filter(|&(a, b)| {
                deps[b].src == deps[a].dst
                    && deps[b].dst == deps[j].dst
                    && may_sum_to(deps, a, b, j)
            })
            .collect();
        if candidates.is_empty() {
            continue;
        }
        ctx.set_max_operations(REDUCTION_BUDGET);
        let implied = implied_by_paths(maps, j, &candidates);
        ctx.set_max_operations(0);
        match implied {
            Ok(Some(witness)) => dropped.push((j, witness)),
            Ok(None) => {}
            Err(_) if ctx.quota_hit() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(dropped)
}

/// The ISL operations one reduction test may take.
pub const REDUCTION_BUDGET: u64 = 200_000;

/// Whether a path `d<a>` then `d<b>` can have the pairs of `d<j>`: always, unless all three are
/// uniform and the distances do not add up.
fn may_sum_to(deps: &[NumberedDep], a: usize, b: usize, j: usize) -> bool {
    match (&deps[a].distance, &deps[b].distance, &deps[j].distance) {
        (Some(da), Some(db), Some(dj)) => {
            da.len() == dj.len()
                && db.len() == dj.len()
                && (0..dj.len()).all(|n| da[n] + db[n] == dj[n])
        }
        _ => true,
    }
}

/// `Some((a, b))` (the first useful pair) when every pair of `maps[j]` is in the union of the
/// compositions `maps[a]` then `maps[b]` over `candidates`.
fn implied_by_paths(
    maps: &[Map<'_>],
    j: usize,
    candidates: &[(usize, usize)],
) -> Result<Option<(usize, usize)>> {
    let target = UnionMap::from_map(maps[j].clone())?;
    let mut paths = None::<UnionMap<'_>>;
    let mut witness = None;
    for &(a, b) in candidates {
        let path = UnionMap::from_map(maps[a].clone())?
            .apply_range(UnionMap::from_map(maps[b].clone())?)?;
        if path.clone().intersect(target.clone())?.is_empty()? {
            continue;
        }
        witness.get_or_insert((a, b));
        paths = Some(match paths {
            Some(p) => p.union(path)?,
            None => path,
        });
    }
    match (paths, witness) {
        (Some(paths), Some(witness)) if target.is_subset(&paths)? => Ok(Some(witness)),
        _ => Ok(None),
    }
}

fn nest_tiles<'c>(
    ctx: &'c Ctx,
    scop: &Scop,
    sched: &TiledSchedule,
    k: usize,
    context: &Set<'c>,
    deps: &[NumberedDep],
) -> Result<NestTiles> {
    let nest = &sched.nests[k];
    let tile_map = UnionMap::read(ctx, &nest.tile_map)
        .map_err(|e| input_error(&format!("tile map of nest N{k}"), &nest.tile_map, e))?;
    let domain = restrict(
        UnionSet::read(ctx, &nest.tile_domain)
            .map_err(|e| input_error("tile domain", &nest.tile_domain, e))?,
        context,
    )?;
    let Some(domain) = domain else {
        return Ok(NestTiles {
            n_dims: nest.tile_sizes.len(),
            domain: nest.tile_domain.clone(),
            statements: Vec::new(),
            leading: Vec::new(),
            partition: Some(Vec::new()),
        });
    };
    let mut statements = Vec::new();
    let mut stmt_sets = Vec::new();
    for &id in &nest.statements {
        let stmt = scop.statements.get(id.index()).ok_or_else(|| {
            Error::InvalidInput(format!("nest N{k} names the unknown statement {id}"))
        })?;
        let instances = UnionSet::read(ctx, &stmt.domain)
            .map_err(|e| input_error("statement domain", &stmt.domain, e))?;
        let tiles = tile_map
            .clone()
            .intersect_domain(instances)?
            .range()?
            .coalesce()?;
        let tiles = restrict(tiles, context)?;
        let text = match &tiles {
            Some(t) => t.to_str()?,
            None => format!(
                "{{ N{k}[{}] : false }}",
                names("t", nest.tile_sizes.len()).join(", ")
            ),
        };
        statements.push(StatementTiles {
            stmt: id,
            depth: stmt.iterators.len(),
            domain: text,
        });
        stmt_sets.push((id, tiles));
    }
    let deepest = statements.iter().map(|s| s.depth).max().unwrap_or(0);
    let leading = statements
        .iter()
        .filter(|s| s.depth == deepest)
        .map(|s| s.stmt)
        .collect();
    let partition = partition(&domain, k, deps, &stmt_sets)?;
    Ok(NestTiles {
        n_dims: nest.tile_sizes.len(),
        domain: domain.to_str()?,
        statements,
        leading,
        partition,
    })
}

/// The one set of `set` under the context, `None` when it is empty.
fn restrict<'c>(set: UnionSet<'c>, context: &Set<'c>) -> Result<Option<Set<'c>>> {
    let mut sets = set.intersect_params(context.clone())?.coalesce()?.sets()?;
    match sets.len() {
        0 => Ok(None),
        1 => Ok(Some(sets.remove(0))),
        n => Err(Error::InvalidInput(format!(
            "a tile domain spans {n} spaces"
        ))),
    }
}

/// The classes of `domain` (nest `k`) by signature over the kept dependences, `None` past
/// [`MAX_CLASSES`]. Refinement: every class is split by each target set (IN), then by each source
/// set (OUT); empty parts are dropped, so the classes are disjoint, non-empty for some parameter
/// value, and cover the domain.
fn partition<'c>(
    domain: &Set<'c>,
    k: usize,
    deps: &[NumberedDep],
    stmts: &[(StmtId, Option<Set<'c>>)],
) -> Result<Option<Vec<PartitionClass>>> {
    let ctx = domain.ctx();
    let mut classes: Vec<(Set<'c>, Signature)> = vec![(domain.clone(), Signature::default())];
    let kept = deps
        .iter()
        .enumerate()
        .filter(|(_, d)| d.implied_by.is_none());
    let sides: Vec<(usize, bool, &str)> = kept
        .clone()
        .filter(|(_, d)| d.dst == NestId::new(k))
        .map(|(j, d)| (j, true, d.targets.as_str()))
        .chain(
            kept.filter(|(_, d)| d.src == NestId::new(k))
                .map(|(j, d)| (j, false, d.sources.as_str())),
        )
        .collect();
    for (j, is_in, text) in sides {
        let side = Set::read(ctx, text)?;
        // Subtracting makes the existentially quantified variables of `side` explicit; done once
        // here instead of for every class (seconds on heat-3d with tiles 7,3), the same set.
        let side_divs = side.clone().compute_divs()?;
        let mut next = Vec::with_capacity(classes.len() * 2);
        for (set, sig) in classes {
            let inside = set.clone().intersect(side.clone())?.coalesce()?;
            let outside = set.subtract(side_divs.clone())?.coalesce()?;
            if !inside.is_empty()? {
                let mut sig = sig.clone();
                if is_in {
                    sig.ins.push(DepId::new(j))
                } else {
                    sig.outs.push(DepId::new(j))
                }
                next.push((inside, sig));
            }
            if !outside.is_empty()? {
                next.push((outside, sig));
            }
        }
        if next.len() > MAX_CLASSES {
            return Ok(None);
        }
        classes = next;
    }
    let mut result = Vec::with_capacity(classes.len());
    for (set, signature) in classes {
        let mut statements = Vec::new();
        for (id, tiles) in stmts {
            if let Some(tiles) = tiles {
                if !set.clone().intersect(tiles.clone())?.is_empty()? {
                    statements.push(*id);
                }
            }
        }
        result.push(PartitionClass {
            domain: set.to_str()?,
            signature,
            statements,
        });
    }
    result.sort_by(|a, b| a.signature.cmp(&b.signature));
    Ok(Some(result))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map<'c>(ctx: &'c Ctx, text: &str) -> Map<'c> {
        Map::read(ctx, text).unwrap()
    }

    /// A nussinov-like dependence on a triangle of tiles (`0 <= i <= j <= 6`): each tile waits
    /// for every tile left of it in its row and below it in its column. Checked against pairs
    /// enumerated here: the reduction keeps exactly the pairs that are no two-step path, their
    /// distances are the pieces', and the kept pairs still order every pair of the original.
    #[test]
    fn a_nests_own_dependence_keeps_the_pairs_that_are_no_paths() {
        let ctx = Ctx::new().unwrap();
        let n = 6i64;
        let whole = map(
            &ctx,
            &format!(
                "{{ N0[i, k] -> N0[i, j] : 0 <= i <= k < j <= {n}; \
                   N0[k, j] -> N0[i, j] : 0 <= i < k <= j <= {n} }}"
            ),
        );
        let pieces = reduce_self(&whole).unwrap().expect("uniform neighbours");
        let mut distances: Vec<Vec<i64>> = pieces.iter().map(|(_, d)| d.clone().unwrap()).collect();
        distances.sort();
        // The same pairs, enumerated.
        let tiles: Vec<(i64, i64)> = (0..=n).flat_map(|i| (i..=n).map(move |j| (i, j))).collect();
        let before =
            |s: (i64, i64), t: (i64, i64)| (s.0 == t.0 && s.1 < t.1) || (s.1 == t.1 && s.0 > t.0);
        let kept: Vec<((i64, i64), (i64, i64))> = tiles
            .iter()
            .flat_map(|&s| tiles.iter().map(move |&t| (s, t)))
            .filter(|&(s, t)| before(s, t) && !tiles.iter().any(|&m| before(s, m) && before(m, t)))
            .collect();
        let mut expected: Vec<Vec<i64>> = kept
            .iter()
            .map(|(s, t)| vec![t.0 - s.0, t.1 - s.1])
            .collect();
        expected.sort();
        expected.dedup();
        assert_eq!(distances, expected);
        assert_eq!(distances, vec![vec![-1, 0], vec![0, 1]]);
        // The pieces hold those pairs and no others.
        let pairs: usize = pieces
            .iter()
            .map(|(piece, d)| {
                let d = d.as_ref().unwrap();
                tiles
                    .iter()
                    .filter(|&&s| {
                        let pair = format!(
                            "{{ N0[{}, {}] -> N0[{}, {}] }}",
                            s.0,
                            s.1,
                            s.0 + d[0],
                            s.1 + d[1]
                        );
                        map(&ctx, &pair).is_subset(piece).unwrap()
                    })
                    .count()
            })
            .sum();
        assert_eq!(pairs, kept.len());
        // The kept pairs order what the original ones do (the same transitive closure).
        type Pair = ((i64, i64), (i64, i64));
        let closure = |pairs: Vec<Pair>| {
            let mut reach: std::collections::BTreeSet<Pair> = pairs.iter().copied().collect();
            loop {
                let longer: Vec<Pair> = reach
                    .iter()
                    .flat_map(|&(s, m)| {
                        pairs
                            .iter()
                            .filter(move |&&(m2, _)| m2 == m)
                            .map(move |&(_, t)| (s, t))
                    })
                    .filter(|p| !reach.contains(p))
                    .collect();
                if longer.is_empty() {
                    return reach;
                }
                reach.extend(longer);
            }
        };
        let original: Vec<Pair> = tiles
            .iter()
            .flat_map(|&s| tiles.iter().map(move |&t| (s, t)))
            .filter(|&(s, t)| before(s, t))
            .collect();
        assert!(
            2 * kept.len() < original.len(),
            "{} of {}",
            kept.len(),
            original.len()
        );
        assert_eq!(closure(kept), closure(original));
        // trisolv's: a diagonal tile (`16 j <= i <= 16 j + 16`) feeds every tile below it in
        // its column, and a tile the next along its row. The last diagonal tile of a column
        // now feeds the tiles below it, the others the next one (worked out by hand: a pair
        // `i -> i'` in a column is a path through a diagonal tile between them unless `i' = i +
        // 1` or `i` is the last one; a row's pairs are no paths). One piece, not uniform.
        let trisolv = map(
            &ctx,
            "{ N1[i, j] -> N1[i', j] : j >= 0 and -16 + i <= 16j <= i and i < i' <= 249; \
               N1[i, j] -> N1[i, j + 1] : i <= 249 and j >= 0 and 16j <= -16 + i; \
               N1[249, 15] -> N1[250, 15] }",
        );
        let pieces = reduce_self(&trisolv)
            .unwrap()
            .expect("fewer pairs in one piece");
        assert_eq!(pieces.len(), 1);
        assert_eq!(pieces[0].1, None);
        let expected = map(
            &ctx,
            "{ N1[i, j] -> N1[i', j] : j >= 0 and i = 16j + 16 and i < i' <= 249; \
               N1[i, j] -> N1[i + 1, j] : j >= 0 and 16j <= i <= 16j + 15 and i <= 248; \
               N1[i, j] -> N1[i, j + 1] : i <= 249 and j >= 0 and 16j <= -16 + i; \
               N1[249, 15] -> N1[250, 15] }",
        );
        assert!(
            pieces[0].0.is_equal(&expected).unwrap(),
            "{}",
            pieces[0].0.to_str().unwrap()
        );
        // A dependence whose kept pairs take more distances than a wavefront's neighbours stays
        // whole; so does one with no chains to shorten (every pair kept).
        let many = map(
            &ctx,
            "{ N0[i] -> N0[j] : 0 <= i and j <= 40 and 3 <= j - i <= 5 }",
        );
        assert!(reduce_self(&many).unwrap().is_none());
        let product = map(
            &ctx,
            "{ N0[i, j] -> N0[i', j'] : 0 <= i, j < 5 and 5 <= i', j' < 10 }",
        );
        assert!(reduce_self(&product).unwrap().is_none());
    }

    #[test]
    fn simplification_drops_subsumed_pieces_and_fuses_overlapping_ones() {
        let ctx = Ctx::new().unwrap();
        // The second piece lies inside the first: dropped.
        let subsumed = map(&ctx, "{ N0[i] -> N0[i + 1] : 0 <= i < 10 or (2 <= i < 5) }");
        let simple = simplify(subsumed.clone()).unwrap();
        assert_eq!(
            simple.n_basic_maps().unwrap(),
            1,
            "{}",
            simple.to_str().unwrap()
        );
        assert!(simple.is_equal(&subsumed).unwrap());
        // Two overlapping intervals: their union is convex, one piece.
        let overlapping = map(&ctx, "{ N0[i] -> N0[i + 1] : 0 <= i < 6 or 4 <= i < 10 }");
        let simple = simplify(overlapping.clone()).unwrap();
        assert_eq!(
            simple.n_basic_maps().unwrap(),
            1,
            "{}",
            simple.to_str().unwrap()
        );
        assert!(simple.is_equal(&overlapping).unwrap());
        // Two overlapping squares: not convex, kept as pieces with the same pairs.
        let squares =
            map(&ctx, "{ N0[i, j] -> N0[i + 1, j] : (0 <= i < 10 and 0 <= j < 10) or (5 <= i < 15 and 5 <= j < 15) }");
        let simple = simplify(squares.clone()).unwrap();
        assert!(simple.n_basic_maps().unwrap() >= 2);
        assert!(simple.is_equal(&squares).unwrap());
    }

    /// The shortcut for uniform pieces gives what the comparison with the product gives: a
    /// single source tile (for some parameter values none), several, and a parametric count.
    #[test]
    fn a_uniform_piece_is_a_product_exactly_when_it_has_at_most_one_source() {
        let ctx = Ctx::new().unwrap();
        let cases = [
            (
                "[n] -> { N0[i, j] -> N1[i + 1, j] : i = 2 and j = 3 and n > 4 }",
                true,
            ),
            ("{ N0[i] -> N0[i + 2] : 0 <= i < 10 }", false),
            (
                "[n] -> { N0[i, j] -> N0[i, j + 1] : 0 <= i < n and j = i }",
                false,
            ),
            (
                "[n] -> { N0[i, j] -> N0[i + 1, j + 1] : 0 <= i < n and j = 0 and n <= 1 }",
                true,
            ),
        ];
        for (text, want) in cases {
            let piece = map(&ctx, text);
            let sources = piece.clone().domain().unwrap().coalesce().unwrap();
            let targets = piece.clone().range().unwrap().coalesce().unwrap();
            let one = at_most_one_point(&sources).unwrap();
            let compared = is_product(&piece, false, &sources, &targets, one).unwrap();
            assert_eq!(compared, want, "{text}");
            assert_eq!(
                is_product(&piece, true, &sources, &targets, one).unwrap(),
                want,
                "{text}"
            );
        }
    }

    #[test]
    fn uniformization_splits_by_distance_up_to_the_limit() {
        let ctx = Ctx::new().unwrap();
        let two = map(&ctx, "{ N0[i] -> N0[j] : 0 <= i < 10 and i < j <= i + 2 }");
        let pieces = uniformize(two.clone()).unwrap();
        let distances: Vec<Option<Vec<i64>>> = pieces.iter().map(|(_, d)| d.clone()).collect();
        assert_eq!(distances, vec![Some(vec![1]), Some(vec![2])]);
        assert!(pieces[0]
            .0
            .is_equal(&map(&ctx, "{ N0[i] -> N0[i + 1] : 0 <= i < 10 }"))
            .unwrap());
        // Every j > i: unboundedly many distances, the relation stays whole.
        let many = map(&ctx, "[n] -> { N0[i] -> N0[j] : 0 <= i < j < n }");
        let pieces = uniformize(many).unwrap();
        assert_eq!(pieces.len(), 1);
        assert_eq!(pieces[0].1, None);
        // Between two nests of one dimension the distance is between their coordinates.
        let interband = map(
            &ctx,
            "{ N0[i] -> N1[i] : 0 <= i < 4; N0[i] -> N1[i - 1] : 1 <= i < 4 }",
        );
        let distances: Vec<Option<Vec<i64>>> = uniformize(interband)
            .unwrap()
            .into_iter()
            .map(|(_, d)| d)
            .collect();
        assert_eq!(distances, vec![Some(vec![-1]), Some(vec![0])]);
    }

    fn numbered(src: usize, dst: usize, distance: Vec<i64>) -> NumberedDep {
        NumberedDep {
            src: NestId::new(src),
            dst: NestId::new(dst),
            origin: 0,
            relation: String::new(),
            distance: Some(distance),
            sources: String::new(),
            targets: String::new(),
            shape: Shape {
                product: false,
                one_source: false,
                one_target: false,
            },
            implied_by: None,
        }
    }

    /// Tiles 0..9 of one nest. `i -> i + 2` for 0 <= i < 8 is `i -> i + 1 -> i + 2` wherever
    /// `i -> i + 1` exists for 0 <= i < 9: implied on every tile and dropped. With `i -> i + 1`
    /// only for i < 5, the pair 6 -> 8 has no such path: kept.
    #[test]
    fn reduction_drops_a_dependence_only_when_every_pair_is_a_path() {
        let ctx = Ctx::new().unwrap();
        let deps = vec![numbered(0, 0, vec![1]), numbered(0, 0, vec![2])];
        let full = vec![
            map(&ctx, "{ N0[i] -> N0[i + 1] : 0 <= i < 9 }"),
            map(&ctx, "{ N0[i] -> N0[i + 2] : 0 <= i < 8 }"),
        ];
        assert_eq!(reduce(&ctx, &full, &deps).unwrap(), vec![(1, (0, 0))]);
        let partial = vec![
            map(&ctx, "{ N0[i] -> N0[i + 1] : 0 <= i < 5 }"),
            map(&ctx, "{ N0[i] -> N0[i + 2] : 0 <= i < 8 }"),
        ];
        assert_eq!(reduce(&ctx, &partial, &deps).unwrap(), vec![]);
        // Non-uniform, across nests: N0[i] -> N2[j >= i] is N0[i] -> N1[i] -> N2[j >= i].
        let mut chain = vec![
            numbered(0, 1, vec![0]),
            numbered(1, 2, vec![0]),
            numbered(0, 2, vec![0]),
        ];
        chain[1].distance = None;
        chain[2].distance = None;
        let maps = vec![
            map(&ctx, "{ N0[i] -> N1[i] : 0 <= i < 8 }"),
            map(&ctx, "{ N1[i] -> N2[j] : 0 <= i <= j < 8 }"),
            map(&ctx, "{ N0[i] -> N2[j] : 0 <= i <= j < 8 }"),
        ];
        assert_eq!(reduce(&ctx, &maps, &chain).unwrap(), vec![(2, (0, 1))]);
        // A dependence never implies itself: alone, d0 stays.
        assert_eq!(reduce(&ctx, &full[..1], &deps[..1]).unwrap(), vec![]);
    }

    /// Tiles [i, j] of the box 0..9 x 0..9 and, on every pair inside it, the distances
    /// d0 = (0, 1), d1 = (1, 0), d2 = (1, 1), d3 = (1, 2). By hand: (i, j) -> (i + 1, j + 1) of
    /// d2 passes through (i + 1, j), inside the box (d1 then d0): d2 is implied. (i, j) ->
    /// (i + 1, j + 2) of d3 passes through (i + 1, j + 1) (d2 then d0) or (i, j + 1) (d0 then
    /// d2); through d0 and d1 alone it needs two steps more, and no dependence is (0, 2). So d3
    /// is implied only through d2, itself dropped: composing the kept dependences only would
    /// keep d3. The kept d0 and d1 still connect both: (i, j) -> (i + 1, j) -> (i + 1, j + 1)
    /// -> (i + 1, j + 2).
    #[test]
    fn reduction_composes_dependences_that_it_drops() {
        let ctx = Ctx::new().unwrap();
        let distances = [vec![0, 1], vec![1, 0], vec![1, 1], vec![1, 2]];
        let deps: Vec<NumberedDep> = distances
            .iter()
            .map(|d| numbered(0, 0, d.clone()))
            .collect();
        let maps: Vec<Map<'_>> = distances
            .iter()
            .map(|d| {
                map(
                    &ctx,
                    &format!(
                        "{{ N0[i, j] -> N0[i + {}, j + {}] : 0 <= i, j and i + {} < 10 and j + {} < 10 }}",
                        d[0], d[1], d[0], d[1]
                    ),
                )
            })
            .collect();
        assert_eq!(
            reduce(&ctx, &maps, &deps).unwrap(),
            vec![(2, (0, 1)), (3, (0, 2))]
        );
    }
}
