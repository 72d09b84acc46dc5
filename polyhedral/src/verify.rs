//! The check that a [`TiledSchedule`] may be executed: run after scheduling and tiling, before any
//! code is generated. Checks, each reported with the nest or statements involved:
//!
//! 1. every nest's schedule and tile map parse, and the schedule maps each instance to one time;
//! 2. the tile map is the projection of the schedule onto its first `tile_sizes.len()` dimensions;
//! 3. every statement instance is scheduled by exactly one nest, and only domain instances are;
//! 4. every dependence (flow, anti, output) goes strictly forward in the global order "nest index,
//!    then the nest's schedule" (the order of the sequential tiled program). Tiles are then
//!    ordered too: a tile's coordinates are a prefix of its instances' times.
//!
//! All violations are collected into one [`Error::IllegalSchedule`] report.

use crate::deps::IslDeps;
use crate::isl::{Ctx, Map, Set, Side, UnionMap, UnionSet};
use crate::maps::{names, pad_to_common_depth, projection, tuple};
use crate::scop::parse_domains;
use crate::{Dependences, Error, Result, TiledSchedule};
use scop_ir::Scop;
use std::collections::HashMap;

/// Checks `sched` against the domains of `scop` and the dependences `deps` (of `scop`, as
/// [`crate::dependences`] computes them, which also checks the rest of `scop`).
pub fn verify(scop: &Scop, deps: &Dependences, sched: &TiledSchedule) -> Result<()> {
    let ctx = Ctx::shared()?;
    let domains = parse_domains(ctx, scop)?;
    let all = crate::deps::all_of(ctx, deps)?;
    let deps = IslDeps::parse(ctx, deps)?;
    let mut problems = Vec::new();

    // Nest schedules, padded; the global depth.
    let mut flat = Vec::new();
    for (k, nest) in sched.nests.iter().enumerate() {
        match UnionMap::read(ctx, &nest.schedule).and_then(pad_to_common_depth) {
            Ok((map, depth)) => flat.push(Some((map, depth))),
            Err(err) => {
                problems.push(format!(
                    "nest N{k}: the schedule `{}` does not parse: {err}",
                    nest.schedule
                ));
                flat.push(None);
            }
        }
    }
    let global_depth = flat.iter().flatten().map(|(_, d)| *d).max().unwrap_or(0);

    let mut global = UnionMap::empty(ctx)?;
    let mut covered = UnionSet::empty(ctx)?;
    for (k, (nest, entry)) in sched.nests.iter().zip(&flat).enumerate() {
        let Some((map, depth)) = entry else { continue };
        let (map, depth) = (map.clone(), *depth);
        if !map.is_single_valued()? {
            problems.push(format!(
                "nest N{k}: the schedule maps some instance to several times"
            ));
        }
        let n_tile = nest.tile_sizes.len();
        if n_tile > depth {
            problems.push(format!(
                "nest N{k}: {n_tile} tile sizes for a {depth}-dimensional schedule"
            ));
        } else {
            let keep: Vec<usize> = (0..n_tile).collect();
            let expected = map.clone().apply_range(UnionMap::read(
                ctx,
                &projection(depth, &format!("N{k}"), &keep),
            )?)?;
            match UnionMap::read(ctx, &nest.tile_map) {
                Ok(tile_map) if tile_map.is_equal(&expected)? => {}
                Ok(_) => problems.push(format!(
                    "nest N{k}: the tile map `{}` is not the first {n_tile} dimensions of the schedule",
                    nest.tile_map
                )),
                Err(err) => problems.push(format!("nest N{k}: the tile map `{}` does not parse: {err}", nest.tile_map)),
            }
        }
        let domain = map.clone().domain()?;
        let twice = covered.clone().intersect(domain.clone())?;
        if !twice.is_empty()? {
            problems.push(format!(
                "nest N{k} schedules instances that an earlier nest schedules too: {}",
                twice.to_str()?
            ));
        }
        covered = covered.union(domain)?;
        // [o0, ..] -> [k, o0, .., 0, ..]
        let outer = names("o", depth);
        let mut inner = vec![k.to_string()];
        inner.extend(outer.iter().cloned());
        inner.extend(vec!["0".to_string(); global_depth - depth]);
        let embed = format!("{{ {} -> {} }}", tuple("", &outer), tuple("", &inner));
        global = global.union(map.apply_range(UnionMap::read(ctx, &embed)?)?)?;
    }

    let missing = domains.clone().subtract(covered.clone())?;
    if !missing.is_empty()? {
        problems.push(format!(
            "instances scheduled by no nest: {}",
            missing.coalesce()?.to_str()?
        ));
    }
    let outside = covered.clone().subtract(domains.clone())?;
    if !outside.is_empty()? {
        problems.push(format!(
            "scheduled instances outside the statement domains: {}",
            outside.coalesce()?.to_str()?
        ));
    }

    // A dependence is respected when the difference of its target's and its source's global
    // times is lexicographically positive; checked on the differences, one statement pair at a
    // time (comparing instance times with `lex_lt_union_map` of the whole SCoP costs seconds).
    let positive = Set::read(ctx, &lex_positive(global_depth + 1))?;
    let mut times = HashMap::new();
    for map in global.maps()? {
        times.insert(map.tuple_name(Side::In).unwrap_or_default(), map);
    }
    // With one statement's map on each side, ISL composes without the emptiness test that a
    // union map's composition makes per result.
    let respected = |pair: &Map<'_>| -> Result<bool> {
        let src = pair.tuple_name(Side::In).unwrap_or_default();
        let dst = pair.tuple_name(Side::Out).unwrap_or_default();
        let (Some(src), Some(dst)) = (times.get(&src), times.get(&dst)) else {
            // Not reached: the pairs are restricted to scheduled instances. Were a time missing,
            // the pair counts as not shown respected, and the check per kind below decides.
            return Ok(false);
        };
        let pair_times = pair
            .clone()
            .apply_domain(src.clone())?
            .apply_range(dst.clone())?;
        pair_times.deltas()?.is_subset(&positive)
    };
    // Most pairs of instances are dependences of several kinds (a stencil's anti dependences
    // repeat its flow ones), so each pair is checked once, in the union of the kinds without
    // repeated pieces; only when some pair goes backward is each kind checked, for the report.
    let mut all_respected = true;
    for pair in statement_pairs(&all, &covered)? {
        if !respected(&pair)? {
            all_respected = false;
            break;
        }
    }
    if !all_respected {
        for (kind, dep) in deps.kinds() {
            for pair in statement_pairs(dep, &covered)? {
                if respected(&pair)? {
                    continue;
                }
                let pair = UnionMap::from_map(pair)?;
                let src_times = global.clone().intersect_domain(pair.clone().domain()?)?;
                let dst_times = global.clone().intersect_domain(pair.clone().range()?)?;
                let before = src_times.lex_lt_union_map(dst_times)?;
                for map in pair.subtract(before)?.coalesce()?.maps()? {
                    let src = map.tuple_name(Side::In).unwrap_or_default();
                    let dst = map.tuple_name(Side::Out).unwrap_or_default();
                    let relation = map.to_str()?;
                    let sample = map.sample_str()?;
                    problems.push(format!("{kind} dependence {src} -> {dst} is not respected: {relation}; for example {sample}"));
                }
            }
        }
    }

    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::IllegalSchedule(problems.join("\n")))
    }
}

/// The pairs of `dep` between instances in `covered`, one map per statement pair.
fn statement_pairs<'c>(dep: &UnionMap<'c>, covered: &UnionSet<'c>) -> Result<Vec<Map<'c>>> {
    dep.clone()
        .intersect_domain(covered.clone())?
        .intersect_range(covered.clone())?
        .maps()
}

/// `{ [d0, .., d{n-1}] : (d0, ..) >lex 0 }`.
fn lex_positive(n: usize) -> String {
    let d = names("d", n);
    let disjuncts: Vec<String> = (0..n)
        .map(|k| {
            let mut parts: Vec<String> = (0..k).map(|j| format!("{} = 0", d[j])).collect();
            parts.push(format!("{} > 0", d[k]));
            format!("({})", parts.join(" and "))
        })
        .collect();
    let cond = if disjuncts.is_empty() {
        "false".to_string()
    } else {
        disjuncts.join(" or ")
    };
    format!("{{ {} : {cond} }}", tuple("", &d))
}
