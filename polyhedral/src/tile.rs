//! Tile dependences: statement dependences lifted to the tiles of the nests,
//! `tile_map_dst ∘ dep ∘ tile_map_src⁻¹`, without the pairs inside one tile (a tile runs its
//! instances in schedule order, so they need no synchronization).

use crate::isl::{Ctx, Side, UnionMap};
use crate::maps::{input_error, lex_lt, nest_of_name};
use crate::scop::parse_domains;
use crate::{Dependences, Error, NestId, Result, TileDep, TiledSchedule};
use scop_ir::Scop;

/// The dependences between the tiles of `sched`, one [`TileDep`] per (source nest, target nest)
/// pair that has any, ordered by that pair. Each relation goes forward: to a later nest, or to a
/// lexicographically later tile of the same nest; anything else is [`Error::IllegalSchedule`].
pub fn tile_dependences(
    scop: &Scop,
    deps: &Dependences,
    sched: &TiledSchedule,
) -> Result<Vec<TileDep>> {
    let ctx = Ctx::shared()?;
    let domains = parse_domains(ctx, scop)?;
    let all = crate::deps::all_of(ctx, deps)?;
    let all = all
        .intersect_domain(domains.clone())?
        .intersect_range(domains)?;
    let mut tile_maps = UnionMap::empty(ctx)?;
    let mut n_dims = Vec::new();
    for (k, nest) in sched.nests.iter().enumerate() {
        let map = UnionMap::read(ctx, &nest.tile_map)
            .map_err(|e| input_error(&format!("tile map of nest N{k}"), &nest.tile_map, e))?;
        for m in map.maps()? {
            if m.tuple_name(Side::Out).as_deref().and_then(nest_of_name) != Some(NestId::new(k)) {
                return Err(Error::InvalidInput(format!(
                    "the tile map of nest N{k} does not map to N{k}: {}",
                    nest.tile_map
                )));
            }
        }
        n_dims.push(nest.tile_sizes.len());
        tile_maps = tile_maps.union(map)?;
    }
    let lifted = all
        .apply_domain(tile_maps.clone())?
        .apply_range(tile_maps)?;
    let mut result = Vec::new();
    let mut problems = Vec::new();
    for map in lifted.maps()? {
        let src = map.tuple_name(Side::In).as_deref().and_then(nest_of_name);
        let dst = map.tuple_name(Side::Out).as_deref().and_then(nest_of_name);
        let (Some(src), Some(dst)) = (src, dst) else {
            return Err(Error::Isl(format!(
                "a tile dependence between unknown spaces: {}",
                map.to_str()?
            )));
        };
        let (rel, forward) = if src == dst {
            between_tiles(
                UnionMap::from_map(map)?,
                &src.to_string(),
                n_dims[src.index()],
            )?
        } else {
            (UnionMap::from_map(map)?, src < dst)
        };
        let rel = rel.coalesce()?;
        if rel.is_empty()? {
            continue;
        }
        let relation = rel.to_str()?;
        if !forward {
            problems.push(format!(
                "tiles of {src} -> tiles of {dst} go backwards: {relation}"
            ));
        }
        result.push(TileDep { src, dst, relation });
    }
    if !problems.is_empty() {
        return Err(Error::IllegalSchedule(problems.join("\n")));
    }
    result.sort_by_key(|d| (d.src, d.dst));
    Ok(result)
}

/// The pairs of `lifted` (a relation between the `n`-dimensional tiles `name` of one nest) whose
/// tiles differ, and whether all of them go forward (to a lexicographically later tile).
///
/// The pairs are those with `s <lex t` or `s >lex t`, an intersection. Subtracting the identity
/// instead gives the same relation, but ISL must first make the existentially quantified
/// variables of `lifted` (the projected statement instances) explicit, which explodes on skewed
/// tiles of unequal sizes (heat-3d with tile sizes 7,3: more than 30 s instead of a fraction of
/// one). Likewise "forward" is the emptiness of the pairs with `s >lex t`, not an inclusion test.
fn between_tiles<'c>(lifted: UnionMap<'c>, name: &str, n: usize) -> Result<(UnionMap<'c>, bool)> {
    let later = UnionMap::read(lifted.ctx(), &lex_lt(name, n))?;
    let earlier = later.clone().reverse()?;
    let forward = lifted.clone().intersect(earlier.clone())?.is_empty()?;
    Ok((lifted.intersect(later.union(earlier)?)?, forward))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `between_tiles` against its definition: the lifted relation minus the identity, forward
    /// when that lies in `s <lex t`. The relations have existentially quantified instances, as
    /// lifted ones do: skewed 2-D tiles of unequal sizes, one that also goes backwards, and a
    /// zero-dimensional (untiled) nest, whose pairs all lie in its one tile.
    #[test]
    fn pairs_between_tiles_are_the_lifted_relation_minus_the_identity() {
        let ctx = Ctx::new().unwrap();
        let cases = [
            ("[T, N] -> { N0[a, b] -> N0[c, d] : exists (t, i : 0 <= t < T and 1 <= i < N - 1 and 7a <= t <= 7a + 6 \
              and 3b <= t + i <= 3b + 2 and 7c <= t + 1 <= 7c + 6 and 3d <= t + i + 2 <= 3d + 2) }", 2, true),
            ("[N] -> { N0[a, b] -> N0[c, d] : exists (i, j : 0 <= i, j < N and 7a <= i <= 7a + 6 and 3b <= 2i + j <= 3b + 2 \
              and 7c <= j <= 7c + 6 and 3d <= i + 2j <= 3d + 2) }", 2, false),
            ("[N] -> { N0[] -> N0[] : N > 3 }", 0, true),
        ];
        for (text, n, want_forward) in cases {
            let lifted = UnionMap::read(&ctx, text).unwrap();
            let identity = UnionMap::read(&ctx, &crate::maps::identity("N0", n)).unwrap();
            let want = lifted.clone().subtract(identity).unwrap();
            let (got, forward) = between_tiles(lifted, "N0", n).unwrap();
            assert!(
                got.is_equal(&want).unwrap(),
                "{text}: got {}, want {}",
                got.to_str().unwrap(),
                want.to_str().unwrap()
            );
            let want_lt = want
                .is_subset(&UnionMap::read(&ctx, &lex_lt("N0", n)).unwrap())
                .unwrap();
            assert_eq!(forward, want_lt, "{text}");
            assert_eq!(forward, want_forward, "{text}");
        }
    }
}
