//! Scalar expansion: which scalars written in a SCoP (temporaries such as a running sum or a
//! norm) hold values that never cross an iteration of their outer loops, so that giving each
//! iteration its own copy removes the anti and output dependences those loops would otherwise
//! carry, and the SCoP with those scalars expanded into arrays.
//!
//! Live-range analysis, for each rank-0 array `s` written in the SCoP, on the original order:
//! with `F_s` the exact flow dependences through `s` alone (last write to each read),
//! 1. every read of `s` has a source in `F_s` (no value of `s` enters the SCoP, or the loop, from
//!    before it: a read of the initial value would see another iteration's copy), and
//! 2. every pair of `F_s` lies in one iteration of the outermost `ℓ` loops, i.e. their original
//!    2d+1 schedules agree on the first `2ℓ` dimensions (the loops and the statement positions
//!    around them).
//!
//! The largest such `ℓ ≥ 1` is the expansion depth: `s` becomes `s[o1, o3, .., o(2ℓ-1)]`, indexed
//! by the values of those loops (read from the original schedule, so decreasing loops work
//! too). The expanded SCoP computes the same values in its original order, and its dependences
//! no longer order different iterations of those loops through `s`. Scalars whose values flow
//! from one iteration to the next (durbin's `alpha` and `beta`) are not expanded.
//!
//! What code generation must do with an expansion (not done yet: the pipeline compiles the
//! unexpanded SCoP): declare the expanded array, substitute `s[..]` for `s` in the statements,
//! and, since `s` may be read after the SCoP, copy the value of the last iteration back to `s`.

use crate::isl::{AccessInfo, Ctx, UnionMap, UnionSet};
use crate::maps::{input_error, pad_to_common_depth, projection};
use crate::scop::ScopSets;
use crate::Result;
use frontend::ir::{ArrayId, Scop};

/// A scalar that may be expanded: each iteration of the outermost `loops` loops around its
/// statements gets its own copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalarExpansion {
    pub array: ArrayId,
    /// How many outer loops index the copies (at least 1).
    pub loops: usize,
}

/// The scalars of `scop` that may be expanded, in array order (see the module documentation).
pub fn scalar_expansions(scop: &Scop) -> Result<Vec<ScalarExpansion>> {
    let ctx = Ctx::new()?;
    let sets = ScopSets::parse(&ctx, scop)?;
    let (original, depth) = pad_to_common_depth(sets.original.clone())?;
    let mut out = Vec::new();
    for array in scop.arrays.iter().filter(|a| a.rank == 0 && a.written) {
        let element = UnionSet::read(&ctx, &format!("{} -> {{ {}[] }}", scop.isl_params(), array.isl_name))?;
        let reads = sets.reads.clone().intersect_range(element.clone())?;
        let writes = sets.writes.clone().intersect_range(element)?;
        let flow = AccessInfo::from_sink(reads.clone())?
            .set_must_source(writes.clone())?
            .set_schedule_map(sets.original.clone())?
            .compute_flow()?
            .may_dependence()?;
        if !reads.clone().domain()?.is_subset(&flow.clone().range()?)? {
            continue;
        }
        // Loops common to every statement that accesses the scalar.
        let accessing = reads.union(writes)?.domain()?;
        let max_loops = scop
            .statements
            .iter()
            .filter(|s| s.accesses.iter().any(|a| a.array == array.id))
            .map(|s| s.iterators.len())
            .min()
            .unwrap_or(0)
            .min(depth / 2);
        let mut loops = 0;
        for l in 1..=max_loops {
            let prefix: Vec<usize> = (0..2 * l).collect();
            let p = original.clone().intersect_domain(accessing.clone())?.apply_range(UnionMap::read(&ctx, &projection(depth, "", &prefix))?)?;
            let same = p.clone().apply_range(p.reverse()?)?;
            if flow.is_subset(&same)? {
                loops = l;
            } else {
                break;
            }
        }
        if loops > 0 {
            out.push(ScalarExpansion { array: array.id, loops });
        }
    }
    Ok(out)
}

/// `scop` with each scalar of `expansions` turned into an array of rank `loops`, every access
/// `S[..] -> s[]` becoming `S[..] -> s[o1, o3, ..]` (the values of the outer loops in the original
/// schedule). Statements and their text are unchanged.
pub fn expand_scalars(scop: &Scop, expansions: &[ScalarExpansion]) -> Result<Scop> {
    let ctx = Ctx::new()?;
    let mut out = scop.clone();
    for e in expansions {
        let array = scop.array(e.array);
        for (stmt, new_stmt) in scop.statements.iter().zip(out.statements.iter_mut()) {
            let schedule = UnionMap::read(&ctx, &stmt.schedule).map_err(|err| input_error("schedule", &stmt.schedule, err))?;
            let depth = schedule.maps()?.first().map(|m| m.n_dims(crate::isl::Side::Out)).transpose()?.unwrap_or(0);
            for access in new_stmt.accesses.iter_mut().filter(|a| a.array == e.array) {
                let loop_dims: Vec<usize> = (0..e.loops).map(|k| 2 * k + 1).collect();
                if loop_dims.iter().any(|&d| d >= depth) {
                    return Err(crate::Error::InvalidInput(format!(
                        "{}: {} is not inside {} loops",
                        stmt.id, array.name, e.loops
                    )));
                }
                let expanded = schedule.clone().apply_range(UnionMap::read(&ctx, &projection(depth, &array.isl_name, &loop_dims))?)?;
                access.relation = expanded.to_str()?;
            }
        }
        out.arrays[e.array.index()].rank = e.loops;
    }
    Ok(out)
}
