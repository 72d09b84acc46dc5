//! Tiles of consecutive nests spawned together: the control program's side of fusion.
//!
//! The dataflow runtime runs a tile as soon as its inputs are there, whatever nest it belongs to;
//! what the control program decides is when each tile is spawned, and so which tiles a thread runs
//! one after the other. Nest after nest, a consumer's tiles come after every tile of its producer:
//! doitgen's `sum` copies (27 MB at LARGE) are written by one nest, read and written by the next,
//! read by a third, and each pass finds them in memory again. Spawned together, a producer's tiles
//! are followed at once by the consumer tiles they complete, which run while the data is in the
//! cache: fusion of the tile loops, each tile's point loops kept as they are (the tiles stay tasks
//! of their own classes, with their own code), and the "dynamic fusion" of the dataflow paper
//! made static where the dependences allow it.
//!
//! A group is a run of consecutive nests in execution order. Its first nest, the host, is spawned
//! in its own order (spread streams cut its loop 0 into the threads' blocks). Every other member's
//! tile is placed ([`place`]) after the host tile that its last input from an earlier member
//! needs: the lexicographically largest host tile among the sources of its tile dependences from
//! the group, composed through the members in between. A tile without such an input goes where
//! the tiles that share its first coordinates go (doitgen's products along `s` after the first
//! wait for the product before, not for the zeroing nest). Placements are kept to the longest
//! prefix of the host's coordinates along which they rise with the member's own spawn order, so
//! that each member keeps its order (a product's sweeps along the rows it keeps); a member whose
//! placements rise along no prefix, or whose tiles would all follow one host tile (nothing to
//! gain), closes the group.
//!
//! The order changes no result: the runtime orders every dependent pair, whatever the order of
//! their spawns. The omp target, whose nests are separated by barriers, keeps them apart.

use crate::ast::Ast;
use crate::astgen::{build_named, rename_users};
use crate::isl::{Ctx, Set, UnionMap, UnionSet};
use crate::maps::{input_error, lex_lt, names, pad_to_common_depth, tuple};
use crate::scop::parse_context;
use crate::{NestId, Result, TileDep};
use scop_ir::Scop;

/// One nest of a group: its tile domain, the domains of its partitions (ISL text, as for
/// [`crate::classes_ast`]) and its spawn order (empty: the identity).
#[derive(Clone, Copy, Debug)]
pub struct SpawnMember<'a> {
    pub nest: NestId,
    pub n_dims: usize,
    pub tile_domain: &'a str,
    pub partitions: &'a [Vec<String>],
    pub order: &'a [usize],
}

/// A run of consecutive nests whose tiles are spawned together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpawnGroup {
    /// The members, as indices into the `members` given to [`spawn_groups`]; the first is the
    /// host.
    pub members: std::ops::Range<usize>,
    /// The spawn loops: the host's tiles in its order (the loop over its dimension 0 named
    /// `<iter_prefix>0`), each followed by the other members' tiles placed after it, member by
    /// member, each member's tiles in its spawn order. User nodes are named `N<k>P<c>`
    /// (partition `c` of nest `k`) with the tile's coordinates.
    pub tiles: Ast,
}

/// The ISL operations that placing one member, or generating one group's loops, may take; past
/// them the member does not join (the group ends before it) or the group is not made. Random
/// SCoPs with `%` guards and non-uniform tile dependences ran their lexicographic maxima past
/// the SCoP's minute of compilation without it.
pub const GROUP_BUDGET: u64 = 400_000;

/// The groups of consecutive `members` whose tiles are better spawned together, each of two
/// nests or more, with their spawn loops; `eligible[k]` says whether member `k` may join a
/// group at all (the caller's restrictions).
pub fn spawn_groups(
    scop: &Scop,
    members: &[SpawnMember<'_>],
    eligible: &[bool],
    deps: &[TileDep],
    iter_prefix: &str,
) -> Result<Vec<SpawnGroup>> {
    let ctx = Ctx::shared()?;
    let mut groups = Vec::new();
    let mut start = 0;
    while start < members.len() {
        let mut end = start + 1;
        let mut placed = Vec::new();
        if eligible.get(start).copied().unwrap_or(false) && members[start].n_dims > 0 {
            placed.push(host_placement(ctx, &members[start])?);
            while end < members.len() && eligible.get(end).copied().unwrap_or(false) {
                let (earlier, member) = (&members[start..end], &members[end]);
                match bounded(ctx, || place(ctx, scop, earlier, &placed, member, deps))? {
                    Some(Some(found)) => {
                        placed.push(found);
                        end += 1;
                    }
                    _ => break,
                }
            }
        }
        if end - start > 1 {
            let run = &members[start..end];
            if let Some(tiles) = bounded(ctx, || group_ast(ctx, scop, run, &placed, iter_prefix))? {
                groups.push(SpawnGroup {
                    members: start..end,
                    tiles,
                });
            }
        }
        start = end;
    }
    Ok(groups)
}

/// `f` under [`GROUP_BUDGET`]: `None` when it ran out.
fn bounded<T>(ctx: &Ctx, f: impl FnOnce() -> Result<T>) -> Result<Option<T>> {
    ctx.set_max_operations(GROUP_BUDGET);
    let result = f();
    ctx.set_max_operations(0);
    match result {
        Ok(value) => Ok(Some(value)),
        Err(_) if ctx.quota_hit() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Where a member's tiles are spawned: after the host tile `placed(x)` (its coordinates in the
/// host's spawn order; the host's own tiles: themselves), at the granularity of the first
/// `depth` of them.
struct Placement<'c> {
    placed: UnionMap<'c>,
    depth: usize,
}

/// The host's placement: each of its tiles after itself, by its coordinates in its order.
fn host_placement<'c>(ctx: &'c Ctx, host: &SpawnMember<'_>) -> Result<Placement<'c>> {
    let x = names("x", host.n_dims);
    Ok(Placement {
        placed: UnionMap::read(
            ctx,
            &format!(
                "{{ {} -> {} }}",
                tuple(&host.nest.to_string(), &x),
                tuple("H", &in_order(&x, host.order))
            ),
        )?
        .intersect_domain(read_set(ctx, host.tile_domain)?)?,
        depth: host.n_dims,
    })
}

/// The placement of `member` in a group whose earlier members are `earlier` (the host first),
/// placed by `placements`. `None` when it cannot join: no tile of it depends on an earlier
/// member, some tile cannot be placed, its spawn order would have to change, or all its tiles
/// land after one host tile.
///
/// The granularity is the longest prefix of the host's coordinates along which a member's
/// placements rise with its own spawn order (and no longer than those of the members it waits
/// for): each member keeps its order, which the spawn order chose for the locality within it.
/// gemm-like products keep their sweeps that way: 2mm's `tmp` product, placed tile by tile after
/// its zeroing, ran 0.95x with its sweep along `k` cut into pieces; placed by rows, 1.00x.
fn place<'c>(
    ctx: &'c Ctx,
    scop: &Scop,
    earlier: &[SpawnMember<'_>],
    placements: &[Placement<'c>],
    member: &SpawnMember<'_>,
    deps: &[TileDep],
) -> Result<Option<Placement<'c>>> {
    let host_dims = earlier[0].n_dims;
    let domain = read_set(ctx, member.tile_domain)?;
    let mut sources = UnionMap::empty(ctx)?;
    let mut limit = host_dims;
    for dep in deps.iter().filter(|d| d.dst == member.nest) {
        let Some(at) = earlier.iter().position(|e| e.nest == dep.src) else {
            continue;
        };
        let relation = UnionMap::read(ctx, &dep.relation)
            .map_err(|e| input_error("tile dependence", &dep.relation, e))?;
        sources = sources.union(
            relation
                .reverse()?
                .apply_range(placements[at].placed.clone())?,
        )?;
        limit = limit.min(placements[at].depth);
    }
    let mut placed = sources.lexmax()?.intersect_domain(domain.clone())?;
    if placed.is_empty()? {
        return Ok(None);
    }
    let missing = domain.clone().subtract(placed.clone().domain()?)?;
    if !missing.is_empty()? {
        match with_prefix(ctx, member, &placed, &missing)? {
            Some(more) => placed = placed.union(more)?.coalesce()?,
            None => return Ok(None),
        }
    }
    let mut depth = 0;
    for p in (1..=limit).rev() {
        let cut = truncated(ctx, &placed, host_dims, p)?;
        if rises_with_order(ctx, member, &domain, &cut, p)? {
            depth = p;
            break;
        }
    }
    if depth == 0 {
        return Ok(None);
    }
    let range = truncated(ctx, &placed, host_dims, depth)?.range()?;
    if one_point(range.intersect_params(parse_context(ctx, scop)?)?)? {
        return Ok(None);
    }
    Ok(Some(Placement { placed, depth }))
}

/// The placements of the tiles `missing`, which have no input from the group: those of the tiles
/// that share the longest prefix of their coordinates with them (the latest), if that prefix
/// reaches all of them.
fn with_prefix<'c>(
    ctx: &'c Ctx,
    member: &SpawnMember<'_>,
    placed: &UnionMap<'c>,
    missing: &UnionSet<'c>,
) -> Result<Option<UnionMap<'c>>> {
    let (v, y) = (names("x", member.n_dims), names("y", member.n_dims));
    let name = member.nest.to_string();
    for p in (1..member.n_dims).rev() {
        let same: Vec<String> = (0..p).map(|d| format!("{} = {}", v[d], y[d])).collect();
        let prefix = UnionMap::read(
            ctx,
            &format!(
                "{{ {} -> {} : {} }}",
                tuple(&name, &v),
                tuple(&name, &y),
                same.join(" and ")
            ),
        )?;
        let more = prefix
            .apply_range(placed.clone())?
            .lexmax()?
            .intersect_domain(missing.clone())?;
        if missing.is_subset(&more.clone().domain()?)? {
            return Ok(Some(more));
        }
    }
    Ok(None)
}

/// `placed` (into `H` of `n` dimensions) cut to its first `p` dimensions.
fn truncated<'c>(ctx: &'c Ctx, placed: &UnionMap<'c>, n: usize, p: usize) -> Result<UnionMap<'c>> {
    let h = names("h", n);
    let cut = UnionMap::read(
        ctx,
        &format!("{{ {} -> {} }}", tuple("H", &h), tuple("H", &h[..p])),
    )?;
    placed.clone().apply_range(cut)
}

/// Whether `placed` (into `H` of `p` dimensions) never goes down along the member's spawn order
/// over `domain`: placed by it, the member's tiles keep their order. Placements that only keep
/// each sweep along the innermost spawn loop whole were tried: they let covariance's product go
/// along `k` first (placed after the rows of `data` each step reads), over the whole triangle of
/// `cov` at each step: 0.89x on two threads.
fn rises_with_order<'c>(
    ctx: &'c Ctx,
    member: &SpawnMember<'_>,
    domain: &UnionSet<'c>,
    placed: &UnionMap<'c>,
    p: usize,
) -> Result<bool> {
    let n = member.n_dims;
    let x = names("x", n);
    let ordered = UnionMap::read(
        ctx,
        &format!(
            "{{ {} -> O[{}] }}",
            tuple(&member.nest.to_string(), &x),
            in_order(&x, member.order).join(", ")
        ),
    )?;
    let later = ordered
        .clone()
        .apply_range(UnionMap::read(ctx, &lex_lt("O", n))?)?
        .apply_range(ordered.reverse()?)?
        .intersect_domain(domain.clone())?
        .intersect_range(domain.clone())?;
    let falls = placed
        .clone()
        .reverse()?
        .apply_range(later)?
        .apply_range(placed.clone())?
        .intersect(UnionMap::read(ctx, &lex_lt("H", p))?.reverse()?)?;
    falls.is_empty()
}

/// `vars` in `order` (empty: as they are).
fn in_order(vars: &[String], order: &[usize]) -> Vec<String> {
    if order.is_empty() {
        vars.to_vec()
    } else {
        order.iter().map(|&d| vars[d].clone()).collect()
    }
}

/// Whether a set of one space holds one point (for every value of the parameters).
fn one_point(set: UnionSet<'_>) -> Result<bool> {
    let sets = set.sets()?;
    let [only] = sets.as_slice() else {
        return Ok(sets.is_empty());
    };
    let first = UnionSet::from_set(only.clone().lexmin()?)?;
    first.is_equal(&UnionSet::from_set(only.clone())?)
}

fn read_set<'c>(ctx: &'c Ctx, text: &str) -> Result<UnionSet<'c>> {
    UnionSet::read(ctx, text).map_err(|e| input_error("tile domain", text, e))
}

/// The spawn loops of a group ([`SpawnGroup::tiles`]) whose members are placed by `placements`.
fn group_ast<'c>(
    ctx: &'c Ctx,
    scop: &Scop,
    members: &[SpawnMember<'_>],
    placements: &[Placement<'c>],
    iter_prefix: &str,
) -> Result<Ast> {
    let context = parse_context(ctx, scop)?;
    let host_dims = members[0].n_dims;
    let mut schedule = UnionMap::empty(ctx)?;
    for (m, (member, placement)) in members.iter().zip(placements).enumerate() {
        let name = member.nest.to_string();
        let x = names("x", member.n_dims);
        // The host tile `h` at `[h0, 0, h1, 0, ..., h(n-1), 0]`; a member's tile placed after
        // `h` at depth `p` at `[h0, 0, ..., h(p-1), m, its coordinates in its order]`: after
        // every host tile that shares those `p` coordinates, and after the members before it.
        let h = names("h", placement.depth);
        let mut at: Vec<String> = Vec::new();
        for (d, v) in h.iter().enumerate() {
            at.push(v.clone());
            if d + 1 < placement.depth {
                at.push("0".to_string());
            }
        }
        let spread = UnionMap::read(
            ctx,
            &format!("{{ {} -> {} }}", tuple("H", &h), tuple("", &at)),
        )?;
        let mut after = vec![m.to_string()];
        if m > 0 {
            after.extend(in_order(&x, member.order));
        }
        let within = UnionMap::read(
            ctx,
            &format!("{{ {} -> {} }}", tuple(&name, &x), tuple("", &after)),
        )?;
        let member_schedule = truncated(ctx, &placement.placed, host_dims, placement.depth)?
            .apply_range(spread)?
            .flat_range_product(within)?;
        for (c, texts) in member.partitions.iter().enumerate() {
            for (piece, text) in texts.iter().enumerate() {
                let set = Set::read(ctx, text).map_err(|e| input_error("class", text, e))?;
                let user = format!("N{}P{c}_{piece}", member.nest.0);
                let renamed = set.set_tuple_name(&user)?;
                let to_nest = UnionMap::read(
                    ctx,
                    &format!("{{ {} -> {} }}", tuple(&user, &x), tuple(&name, &x)),
                )?;
                let statement = UnionMap::from_map(renamed.identity()?)?
                    .apply_range(to_nest)?
                    .apply_range(member_schedule.clone())?;
                schedule = schedule.union(statement)?;
            }
        }
    }
    let (schedule, depth) = pad_to_common_depth(schedule)?;
    let iterators = names(iter_prefix, depth);
    let mut ast = build_named(context, schedule, &iterators, None)?;
    rename_users(&mut ast, &|name: &str| {
        name.split_once('_').map(|(user, _)| user.to_string())
    });
    Ok(ast)
}
