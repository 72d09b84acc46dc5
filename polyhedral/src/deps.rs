//! Statement-level dependences by ISL's exact dataflow analysis
//! (`isl_union_access_info_compute_flow`), in the original execution order.
//!
//! - flow (read after write): sinks = reads, must-sources = writes. Each read instance depends on
//!   the last write of the element before it (exact: earlier writes are hidden).
//! - output (write after write): sinks = writes, must-sources = writes. Each write depends on the
//!   previous write of the element.
//! - anti (write after read): sinks = writes, may-sources = reads, kills = writes. Each write
//!   depends on the reads of the element since the previous write (reads before that one are
//!   killed by it: they reach this write through the previous write's output dependence).
//!
//! Together these order every pair of conflicting accesses transitively: writes form a chain of
//! output dependences, a read follows the write it reads (flow) and precedes the next write
//! (anti). Every relation is restricted to the statement domains.
//!
//! Neither the accesses nor the dependences are coalesced: coalescing merges, for example, the
//! seven uniform pieces of a 3-D 7-point stencil into one polytope with the same integer points but
//! fractional vertices and many more constraints, on which the ISL scheduler's Farkas steps take
//! minutes instead of a second (PolyBench heat-3d). One piece per access pattern also prints more
//! readably.

use crate::isl::{AccessInfo, Ctx, Map, UnionMap};
use crate::scop::ScopSets;
use crate::{Dependences, Error, Result};
use frontend::ir::Scop;
use std::fmt;

/// Computes the flow, anti and output dependences of `scop` under its original schedule.
pub fn dependences(scop: &Scop) -> Result<Dependences> {
    let ctx = Ctx::new()?;
    let sets = ScopSets::parse(&ctx, scop)?;
    let deps = compute(&sets)?;
    Ok(Dependences { flow: deps.flow.to_str()?, anti: deps.anti.to_str()?, output: deps.output.to_str()? })
}

/// The three kinds of dependences as ISL objects.
pub(crate) struct IslDeps<'c> {
    pub flow: UnionMap<'c>,
    pub anti: UnionMap<'c>,
    pub output: UnionMap<'c>,
}

impl<'c> IslDeps<'c> {
    /// Parses [`Dependences`] (as printed by [`dependences`] or written by hand).
    pub fn parse(ctx: &'c Ctx, deps: &Dependences) -> Result<Self> {
        let parse = |kind: &str, text: &str| {
            UnionMap::read(ctx, text).map_err(|e| match e {
                Error::Isl(msg) => Error::InvalidInput(format!("cannot parse the {kind} dependences `{text}`: {msg}")),
                other => other,
            })
        };
        Ok(IslDeps { flow: parse("flow", &deps.flow)?, anti: parse("anti", &deps.anti)?, output: parse("output", &deps.output)? })
    }

    /// The kinds with their names, for reports.
    pub fn kinds(&self) -> [(&'static str, &UnionMap<'c>); 3] {
        [("flow", &self.flow), ("anti", &self.anti), ("output", &self.output)]
    }

    /// Flow ∪ anti ∪ output, without the pieces that repeat pairs of earlier ones (see
    /// [`drop_subsumed`]).
    pub fn all(&self) -> Result<UnionMap<'c>> {
        drop_subsumed(&self.flow.clone().union(self.anti.clone())?.union(self.output.clone())?)
    }
}

/// `umap` without each disjunct (basic map) whose pairs are all in the disjuncts kept before it.
///
/// The same pairs often come back as several kinds (`A[i] += ..` gives a flow and an output
/// dependence between the same instances; a stencil's anti dependences repeat its flow ones), and
/// ISL's union keeps every copy. Each copy costs the scheduler a Farkas dual of its own. Unlike
/// coalescing, this never replaces pieces by a merged polytope, so the pieces keep their simple
/// shapes (see the module documentation).
pub(crate) fn drop_subsumed<'c>(umap: &UnionMap<'c>) -> Result<UnionMap<'c>> {
    let mut out = UnionMap::empty(umap.ctx())?;
    for map in umap.maps()? {
        let mut kept: Option<Map<'c>> = None;
        for piece in map.basic_maps()? {
            kept = Some(match kept {
                None => piece,
                Some(k) if piece.is_subset(&k)? => k,
                Some(k) => k.union(piece)?,
            });
        }
        if let Some(k) = kept {
            out = out.union(UnionMap::from_map(k)?)?;
        }
    }
    Ok(out)
}

fn compute<'c>(sets: &ScopSets<'c>) -> Result<IslDeps<'c>> {
    let restrict = |deps: UnionMap<'c>| -> Result<UnionMap<'c>> {
        deps.intersect_domain(sets.domains.clone())?.intersect_range(sets.domains.clone())
    };
    let flow = AccessInfo::from_sink(sets.reads.clone())?
        .set_must_source(sets.writes.clone())?
        .set_schedule_map(sets.original.clone())?
        .compute_flow()?
        .may_dependence()?;
    let output = AccessInfo::from_sink(sets.writes.clone())?
        .set_must_source(sets.writes.clone())?
        .set_schedule_map(sets.original.clone())?
        .compute_flow()?
        .may_dependence()?;
    let anti = AccessInfo::from_sink(sets.writes.clone())?
        .set_may_source(sets.reads.clone())?
        .set_kill(sets.writes.clone())?
        .set_schedule_map(sets.original.clone())?
        .compute_flow()?
        .may_dependence()?;
    Ok(IslDeps { flow: restrict(flow)?, anti: restrict(anti)?, output: restrict(output)? })
}

impl fmt::Display for Dependences {
    /// One line per kind: `flow: <union map>`, `anti: ...`, `output: ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "flow: {}", self.flow)?;
        writeln!(f, "anti: {}", self.anti)?;
        writeln!(f, "output: {}", self.output)
    }
}
