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
//! that each member keeps its order (a product's sweeps along the rows it keeps). A member whose
//! placements rise along no prefix with its own order is spawned in another order of its tile
//! loops where one rises ([`spawn_orders`]: atax's `y` product, whose tiles go along `j` first,
//! follows the rows of `tmp`'s product, each of which completes a row of its tiles, when they go
//! along `i` first); any order of the spawns is correct for the runtime, which orders every
//! dependent pair by its tokens. A member that rises in no order, or whose tiles would all
//! follow one host tile (nothing to gain), closes the group.
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
/// [`crate::classes_ast`]), its spawn order (empty: the identity) and its
/// [`crate::Nest::row_moves`].
#[derive(Clone, Copy, Debug)]
pub struct SpawnMember<'a> {
    pub nest: NestId,
    pub n_dims: usize,
    pub tile_domain: &'a str,
    pub partitions: &'a [Vec<String>],
    pub order: &'a [usize],
    pub row_moves: &'a [Option<usize>],
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
    /// The order each member's tiles are spawned in, as [`SpawnMember::order`] (empty: the
    /// identity): the member's own, unless it joins the group in another.
    pub orders: Vec<Vec<usize>>,
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
                    orders: placed.into_iter().map(|p| p.order).collect(),
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
/// `depth` of them, in `order` (empty: the identity) among themselves.
struct Placement<'c> {
    placed: UnionMap<'c>,
    depth: usize,
    order: Vec<usize>,
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
        order: host.order.to_vec(),
    })
}

/// The placement of `member` in a group whose earlier members are `earlier` (the host first),
/// placed by `placements`. `None` when it cannot join: no tile of it depends on an earlier
/// member, some tile cannot be placed, its placements rise in none of its [`spawn_orders`], or
/// all its tiles land after one host tile.
///
/// The granularity is the longest prefix of the host's coordinates along which a member's
/// placements rise with its own spawn order (and no longer than those of the members it waits
/// for): each member keeps its order, which the spawn order chose for the locality within it.
/// gemm-like products keep their sweeps that way: 2mm's `tmp` product, placed tile by tile after
/// its zeroing, ran 0.95x with its sweep along `k` cut into pieces; placed by rows, 1.00x. Only
/// where they rise along no prefix in its own order is another order tried.
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
    let cuts = (1..=limit)
        .map(|p| truncated(ctx, &placed, host_dims, p))
        .collect::<Result<Vec<_>>>()?;
    let mut found = None;
    'orders: for order in spawn_orders(member.order, member.n_dims, member.row_moves) {
        for p in (1..=limit).rev() {
            if rises_with_order(ctx, member, &order, &domain, &cuts[p - 1], p)? {
                found = Some((p, order));
                break 'orders;
            }
        }
    }
    let Some((depth, order)) = found else {
        return Ok(None);
    };
    let range = cuts[depth - 1].clone().range()?;
    if one_point(range.intersect_params(parse_context(ctx, scop)?)?)? {
        return Ok(None);
    }
    Ok(Some(Placement {
        placed,
        depth,
        order,
    }))
}

/// The orders in which [`place`] tries to spawn a member's tiles: its own (`own`, empty: the
/// identity) first, then, for up to [`REORDERED_DIMS`] tile loops, the other orders whose
/// innermost loop moves no more accesses to other rows than its own does (`row_moves`, as
/// [`crate::Nest::row_moves`]; none where it is not known), the fewest pairs of loops swapped
/// first (ties in lexicographic order), each written out. Consecutive tiles of a member share
/// what the step between them leaves in place: atax's `y` product, `(j, i)`, moves `A` to other
/// rows along `i` and none along `j`, and spawned `(i, j)` it follows the rows of `tmp`'s
/// product, which read the same rows of `A` just before (one thread at EXTRALARGE: 1.45x);
/// gemver's `w` product, `(i, j)`, would move `A` to other rows along `i`, and spawned `(j, i)`
/// after `x`'s blocks ran 0.89x on one thread.
fn spawn_orders(given: &[usize], n: usize, row_moves: &[Option<usize>]) -> Vec<Vec<usize>> {
    let mut orders = vec![given.to_vec()];
    if n > REORDERED_DIMS || row_moves.len() != n {
        return orders;
    }
    let own: Vec<usize> = if given.is_empty() {
        (0..n).collect()
    } else {
        given.to_vec()
    };
    let moves = |m: usize| row_moves[m].unwrap_or(0);
    let Some(&own_last) = own.last() else {
        return orders;
    };
    let mut others = permutations(n);
    others.retain(|o| *o != own && o.last().is_some_and(|&m| moves(m) <= moves(own_last)));
    // Inversions relative to `own`: pairs of loops whose relative order the candidate swaps.
    let rank: Vec<usize> = (0..n)
        .map(|d| own.iter().position(|&o| o == d).unwrap_or(d))
        .collect();
    let swaps = |o: &Vec<usize>| {
        let mut count = 0;
        for a in 0..o.len() {
            for b in a + 1..o.len() {
                count += usize::from(rank[o[a]] > rank[o[b]]);
            }
        }
        count
    };
    others.sort_by_key(|o| (swaps(o), o.clone()));
    orders.extend(others);
    orders
}

/// The members whose other orders [`spawn_orders`] tries have at most this many tile loops (6
/// orders of three; each costs ISL a comparison per depth).
const REORDERED_DIMS: usize = 3;

/// Every permutation of `0..n`, in lexicographic order.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut all = Vec::new();
    for first in 0..n {
        for rest in permutations(n - 1) {
            let mut order = vec![first];
            order.extend(rest.into_iter().map(|d| if d >= first { d + 1 } else { d }));
            all.push(order);
        }
    }
    all
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

/// Whether `placed` (into `H` of `p` dimensions) never goes down along `order` (of the member's
/// tile loops) over `domain`: placed by it, the member's tiles keep that order. Placements that only keep
/// each sweep along the innermost spawn loop whole were tried: they let covariance's product go
/// along `k` first (placed after the rows of `data` each step reads), over the whole triangle of
/// `cov` at each step: 0.89x on two threads.
fn rises_with_order<'c>(
    ctx: &'c Ctx,
    member: &SpawnMember<'_>,
    order: &[usize],
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
            in_order(&x, order).join(", ")
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
            after.extend(in_order(&x, &placement.order));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// atax's `y` product, tile loops `(j, i)`: `A` moves to other rows along `i` (dimension 1),
    /// along `j` not; its own order first, then `(i, j)`. gemver's `w` product, `(i, j)`, the other way round: `(j,
    /// i)` would put the strided loop innermost, and only its own order is tried.
    #[test]
    fn other_orders_keep_the_innermost_loop_on_its_rows() {
        assert_eq!(
            spawn_orders(&[], 2, &[Some(0), Some(1)]),
            vec![vec![], vec![1, 0]]
        );
        assert_eq!(
            spawn_orders(&[], 2, &[Some(1), Some(0)]),
            vec![Vec::<usize>::new()]
        );
        // Unknown moves: no other order.
        assert_eq!(spawn_orders(&[], 2, &[]), vec![Vec::<usize>::new()]);
    }

    /// A band of three spawned `(0, 2, 1)`: the orders ending in a loop that moves no more rows
    /// than `1` does, the fewest swaps first; `2` moves more and never goes innermost.
    #[test]
    fn other_orders_come_fewest_swaps_first() {
        let orders = spawn_orders(&[0, 2, 1], 3, &[Some(0), Some(0), Some(2)]);
        assert_eq!(
            orders,
            vec![vec![0, 2, 1], vec![2, 0, 1], vec![2, 1, 0], vec![1, 2, 0]]
        );
        // Four loops: only the own order.
        assert_eq!(spawn_orders(&[], 4, &[Some(0); 4]).len(), 1);
    }

    #[test]
    fn permutations_are_all_there_in_order() {
        assert_eq!(
            permutations(3),
            vec![
                vec![0, 1, 2],
                vec![0, 2, 1],
                vec![1, 0, 2],
                vec![1, 2, 0],
                vec![2, 0, 1],
                vec![2, 1, 0]
            ]
        );
        assert_eq!(permutations(0), vec![Vec::<usize>::new()]);
    }
}
