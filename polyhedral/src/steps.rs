//! One step of a loop: the maps that move a statement instance by one iteration of one schedule
//! dimension, and what an access does along such a step (its element stays, moves to the next
//! one in memory, or jumps). The intra-tile reorderings share them: the innermost member's
//! choice (`point_order`), sinking and distribution (`sink`), interleaved chains (`chains`) and
//! the register kernels (`kernel`).

use crate::isl::{Ctx, Set, Side, UnionMap};
use crate::maps::{names, tuple};
use crate::scop::stmt_of_name;
use crate::Result;
use scop_ir::Scop;

/// The score of an access whose element moves by one in its last subscript along a step.
pub(crate) const CONTIGUOUS: i64 = 2;
/// The score of an access whose element stays the same along a step.
pub(crate) const INVARIANT: i64 = 1;
/// The score of any other access.
pub(crate) const STRIDED: i64 = -4;

/// The statement a map of a nest's flat schedule schedules.
pub(crate) fn statement_of<'s>(
    scop: &'s Scop,
    stmt_map: &crate::isl::Map<'_>,
) -> Option<&'s scop_ir::Statement> {
    stmt_map
        .tuple_name(Side::In)
        .as_deref()
        .and_then(stmt_of_name)
        .and_then(|s| scop.statements.get(s.index()))
}

/// The sets [`classify`] compares differences with, by rank, read once per `point_order` (or
/// `crate::sink`) call.
#[derive(Default)]
pub(crate) struct Shapes<'c> {
    by_rank: std::collections::HashMap<usize, (Set<'c>, Option<Set<'c>>)>,
}

impl<'c> Shapes<'c> {
    /// For differences of rank `rank` (as the set `A[x..]`): no difference, and when `rank > 0`
    /// a difference of `±1` in the last subscript only.
    fn of_rank(&mut self, ctx: &'c Ctx, rank: usize) -> Result<&(Set<'c>, Option<Set<'c>>)> {
        if let std::collections::hash_map::Entry::Vacant(entry) = self.by_rank.entry(rank) {
            let x = names("x", rank);
            let zero: Vec<String> = (0..rank).map(|k| format!("{} = 0", x[k])).collect();
            let read = |cond: String| -> Result<Set<'c>> {
                let cond = if cond.is_empty() {
                    String::new()
                } else {
                    format!(" : {cond}")
                };
                Set::read(ctx, &format!("{{ {}{cond} }}", tuple("A", &x)))
            };
            let invariant = read(zero.join(" and "))?;
            let contiguous = if rank > 0 {
                let mut unit = zero[..rank - 1].to_vec();
                unit.push(format!("({v} = 1 or {v} = -1)", v = x[rank - 1]));
                Some(read(unit.join(" and "))?)
            } else {
                None
            };
            entry.insert((invariant, contiguous));
        }
        Ok(&self.by_rank[&rank])
    }
}

/// The score of one access whose element differences along one step are `diff`.
pub(crate) fn classify<'c>(ctx: &'c Ctx, diff: Set<'c>, shapes: &mut Shapes<'c>) -> Result<i64> {
    let rank = diff.n_dims()?;
    let diff = diff.set_tuple_name("A")?;
    let (invariant, contiguous) = shapes.of_rank(ctx, rank)?;
    if diff.clone().subtract(invariant.clone())?.is_empty()? {
        return Ok(INVARIANT);
    }
    if let Some(contiguous) = contiguous {
        if diff.subtract(contiguous.clone())?.is_empty()? {
            return Ok(CONTIGUOUS);
        }
    }
    Ok(STRIDED)
}

/// One step of each dimension of the space `[o..]` (see [`step`]), in order.
pub(crate) fn unit_steps<'c>(ctx: &'c Ctx, o: &[String]) -> Result<Vec<UnionMap<'c>>> {
    (0..o.len())
        .map(|q| UnionMap::read(ctx, &step(o, q)))
        .collect()
}

/// For each step of `steps` (one per dimension of `sched`, a statement's schedule), the map from
/// an instance to the instance that step leads to; `None` where the step does not move the
/// statement (no loop of it on that dimension).
pub(crate) fn next_instances<'c>(
    sched: &UnionMap<'c>,
    steps: &[UnionMap<'c>],
) -> Result<Vec<Option<UnionMap<'c>>>> {
    let mut next = Vec::with_capacity(steps.len());
    for step in steps {
        let n = sched
            .clone()
            .apply_range(step.clone())?
            .apply_range(sched.clone().reverse()?)?;
        next.push((!n.is_empty()?).then_some(n));
    }
    Ok(next)
}

/// `{ [o..] -> [o'..] }`: one step of dimension `q`, the others unchanged.
pub(crate) fn step(o: &[String], q: usize) -> String {
    let out: Vec<String> = o
        .iter()
        .enumerate()
        .map(|(k, v)| {
            if k == q {
                format!("{v} + 1")
            } else {
                v.clone()
            }
        })
        .collect();
    format!("{{ {} -> {} }}", tuple("", o), tuple("", &out))
}
