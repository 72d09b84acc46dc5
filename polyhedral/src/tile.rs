//! Tile dependences: statement dependences lifted to the tiles of the nests,
//! `tile_map_dst ∘ dep ∘ tile_map_src⁻¹`, without the pairs inside one tile (a tile runs its
//! instances in schedule order, so they need no synchronization).

use crate::deps::IslDeps;
use crate::isl::{Ctx, Side, UnionMap};
use crate::maps::{identity, input_error, lex_lt, nest_of_name};
use crate::scop::ScopSets;
use crate::{Dependences, Error, Result, TileDep, TiledSchedule};
use frontend::ir::Scop;

/// The dependences between the tiles of `sched`, one [`TileDep`] per (source nest, target nest)
/// pair that has any, ordered by that pair. Each relation goes forward: to a later nest, or to a
/// lexicographically later tile of the same nest; anything else is [`Error::IllegalSchedule`].
pub fn tile_dependences(scop: &Scop, deps: &Dependences, sched: &TiledSchedule) -> Result<Vec<TileDep>> {
    let ctx = Ctx::new()?;
    let sets = ScopSets::parse(&ctx, scop)?;
    let all = IslDeps::parse(&ctx, deps)?.all()?;
    let all = all.intersect_domain(sets.domains.clone())?.intersect_range(sets.domains.clone())?;
    let mut tile_maps = UnionMap::empty(&ctx)?;
    let mut n_dims = Vec::new();
    for (k, nest) in sched.nests.iter().enumerate() {
        let map = UnionMap::read(&ctx, &nest.tile_map).map_err(|e| input_error(&format!("tile map of nest N{k}"), &nest.tile_map, e))?;
        for m in map.maps()? {
            if m.tuple_name(Side::Out).as_deref().and_then(nest_of_name) != Some(k) {
                return Err(Error::InvalidInput(format!("the tile map of nest N{k} does not map to N{k}: {}", nest.tile_map)));
            }
        }
        n_dims.push(nest.tile_sizes.len());
        tile_maps = tile_maps.union(map)?;
    }
    let lifted = all.apply_domain(tile_maps.clone())?.apply_range(tile_maps)?;
    let mut result = Vec::new();
    let mut problems = Vec::new();
    for map in lifted.maps()? {
        let src = map.tuple_name(Side::In).as_deref().and_then(nest_of_name);
        let dst = map.tuple_name(Side::Out).as_deref().and_then(nest_of_name);
        let (Some(src), Some(dst)) = (src, dst) else {
            return Err(Error::Isl(format!("a tile dependence between unknown spaces: {}", map.to_str()?)));
        };
        let mut rel = UnionMap::from_map(map)?;
        if src == dst {
            let name = format!("N{src}");
            rel = rel.subtract(UnionMap::read(&ctx, &identity(&name, n_dims[src]))?)?;
        }
        let rel = rel.coalesce()?;
        if rel.is_empty()? {
            continue;
        }
        let forward = if src == dst {
            rel.is_subset(&UnionMap::read(&ctx, &lex_lt(&format!("N{src}"), n_dims[src]))?)?
        } else {
            src < dst
        };
        let relation = rel.to_str()?;
        if !forward {
            problems.push(format!("tiles of N{src} -> tiles of N{dst} go backwards: {relation}"));
        }
        result.push(TileDep { src, dst, relation });
    }
    if !problems.is_empty() {
        return Err(Error::IllegalSchedule(problems.join("\n")));
    }
    result.sort_by_key(|d| (d.src, d.dst));
    Ok(result)
}
