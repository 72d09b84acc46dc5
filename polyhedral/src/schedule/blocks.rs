//! A SCoP scheduled as blocks of statements ([`ScheduleConfig::blocks`]): ISL fuses each block as
//! a whole (`Fuse::Max` on the block's instances and the dependences among them), and the blocks
//! run one after the other. This is how a fusion that none of ISL's global heuristics gives is
//! expressed: gemver's update of `A` fused with the product that reads `A` transposed, while the
//! other two statements keep nests of their own (`crate::fusion` chooses the blocks).
//!
//! Legal by construction when every dependence between two blocks goes from an earlier block to
//! a later one (checked here): ISL respects the dependences inside a block, and the sequence
//! those across blocks.

use super::*;

/// The statement-level dependence graph of `deps` (one edge per ordered pair of statements with a
/// dependence from the first to the second, self-dependences included), sorted.
pub(crate) fn statement_edges(deps: &Dependences) -> Result<Vec<(StmtId, StmtId)>> {
    let ctx = Ctx::shared()?;
    let all = crate::deps::all_of(ctx, deps)?;
    let mut edges = Vec::new();
    for map in all.maps()? {
        let from = map.tuple_name(crate::isl::Side::In);
        let to = map.tuple_name(crate::isl::Side::Out);
        if let (Some(from), Some(to)) = (
            from.as_deref().and_then(stmt_of_name),
            to.as_deref().and_then(stmt_of_name),
        ) {
            edges.push((from, to));
        }
    }
    edges.sort();
    edges.dedup();
    Ok(edges)
}

/// The tree of `blocks` in sequence, each scheduled by ISL as a whole with `cfg`'s bounds;
/// `Ok(Err(why))` when ISL gives up on a block. An error when the blocks do not cover the SCoP's
/// statements once each (or name one it does not have), or a dependence goes from a block to an
/// earlier one.
pub(super) fn blocks_tree<'c>(
    scop: &Scop,
    sets: &ScopSets<'c>,
    blocks: &[Vec<StmtId>],
    deps: &UnionMap<'c>,
    loops: Option<&crate::reversal::Loops>,
    cfg: &ScheduleConfig,
) -> Result<std::result::Result<Schedule<'c>, String>> {
    let ctx = sets.domains.ctx();
    if let Some(stmt) = blocks
        .iter()
        .flatten()
        .find(|s| s.index() >= scop.statements.len())
    {
        return Err(Error::Setting(format!(
            "fusion blocks {}: the SCoP has no statement {stmt} ({} statements)",
            blocks_text(blocks),
            scop.statements.len()
        )));
    }
    let block_of = |stmt: StmtId| blocks.iter().position(|b| b.contains(&stmt));
    let mut domains: Vec<UnionSet<'c>> = blocks
        .iter()
        .map(|_| UnionSet::empty(ctx))
        .collect::<Result<_>>()?;
    for set in sets.domains.sets()? {
        let Some(stmt) = set.tuple_name().as_deref().and_then(stmt_of_name) else {
            continue;
        };
        let (Some(k), 1) = (
            block_of(stmt),
            blocks.iter().filter(|b| b.contains(&stmt)).count(),
        ) else {
            return Err(Error::Setting(format!(
                "fusion blocks {}: {stmt} is not in exactly one block",
                blocks_text(blocks)
            )));
        };
        domains[k] = domains[k].clone().union(UnionSet::from_set(set)?)?;
    }
    for map in deps.maps()? {
        let ends = (
            map.tuple_name(crate::isl::Side::In)
                .as_deref()
                .and_then(stmt_of_name),
            map.tuple_name(crate::isl::Side::Out)
                .as_deref()
                .and_then(stmt_of_name),
        );
        if let (Some(from), Some(to)) = ends {
            if block_of(from) > block_of(to) {
                return Err(Error::Setting(format!(
                    "fusion blocks {}: a dependence goes from {from} back to {to}",
                    blocks_text(blocks)
                )));
            }
        }
    }
    let inside = ScheduleConfig {
        fuse: Fuse::Max,
        blocks: None,
        ..cfg.clone()
    };
    let mut parts = Vec::with_capacity(domains.len());
    for domain in domains {
        if domain.is_empty()? {
            continue;
        }
        let block_deps = deps
            .clone()
            .intersect_domain(domain.clone())?
            .intersect_range(domain.clone())?;
        let block = match scheduled_tree(&domain, &sets.context, &block_deps, None, loops, &inside)?
        {
            Ok(block) => block,
            Err(why) => return Ok(Err(why)),
        };
        parts.push(block);
    }
    Ok(Ok(in_sequence(parts, &sets.domains)?))
}

/// `S0+S1,S2`: blocks as `--emit cost` and `-v` name them.
pub(crate) fn blocks_text(blocks: &[Vec<StmtId>]) -> String {
    blocks
        .iter()
        .map(|b| {
            b.iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect::<Vec<_>>()
        .join(",")
}
