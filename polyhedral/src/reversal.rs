//! Loops that count down, turned around for the ISL scheduler.
//!
//! A loop written `for (i = n - 1; i >= 0; i--)` has `-i` in its statements' original schedules.
//! ISL can give a band member a negative coefficient, but its constant terms are bounded
//! ([`crate::ScheduleConfig::max_constant_term`], 8, which keeps its integer programs small): a
//! statement before the loop (deriche's `yp1 = 0` ahead of each column's backward sweep) would
//! need the constant `-(n - 1)` to come before every `-i`, so ISL leaves the sweep out of the band
//! and each tile runs whole columns, one scalar recurrence walking down a column at a time.
//! Measured at LARGE on the AMD EPYC: that pass took 28% of deriche's time on one thread, where
//! the same sweep counting up (its mirror, the causal pass) tiles in two dimensions and runs its
//! columns side by side in vector lanes.
//!
//! So the scheduler sees each such iterator mirrored, `i' = hi - i` with `hi` the largest value
//! `i` takes in the statement's domain, in the domains and the dependences it is given; the tree
//! it returns is pulled back through the same map (`isl_schedule_pullback_union_pw_multi_aff`),
//! so everything after it sees the statements' own iterators, and members such as `hi - i`.
//! The map is one-to-one on every statement, so the schedule is legal for the dependences as
//! they are exactly when it is legal for the mirrored ones: nothing but the scheduler's search
//! space changes. An iterator is mirrored when its loop's dimension of the original schedule is
//! exactly `-i`, `hi` is a constant (a parametric bound keeps the loop as it is), the loop is its
//! statement's innermost (nussinov's `i`, counting down around a `j` that starts at `i + 1`,
//! mirrored, needed the constant `-(n - 1)` in its band and lost its second tiled dimension: 1.9x
//! slower at LARGE), and no statement scheduled with it has a loop counting up at that depth
//! (see [`Loops::mirror`]).

use crate::isl::{Ctx, Side, UnionMap, UnionSet};
use crate::maps::names;
use crate::scop::ScopSets;
use crate::Result;
use std::collections::BTreeMap;

/// The loops of a SCoP's statements, as the mirror needs them: for each statement (by name), its
/// number of iterators, the innermost loop when it counts down from a constant (`hi`), and the
/// depths of its loops that count up.
pub(crate) struct Loops {
    statements: BTreeMap<String, StatementLoops>,
}

struct StatementLoops {
    iterators: usize,
    /// The innermost loop's largest value, when that loop counts down and it is a constant.
    down_from: Option<i64>,
    /// Depths (0 outermost) of the loops that count up.
    up: Vec<usize>,
}

impl Loops {
    /// Reads the loops off the original schedule (`sets.original`) and the domains.
    pub(crate) fn of(ctx: &Ctx, sets: &ScopSets<'_>) -> Result<Loops> {
        let domains = sets.domains.sets()?;
        let mut statements = BTreeMap::new();
        for map in sets.original.maps()? {
            let Some(name) = map.tuple_name(Side::In) else {
                continue;
            };
            let n_in = map.n_dims(Side::In)?;
            let n_out = map.n_dims(Side::Out)?;
            let it = names("i", n_in);
            let o = names("o", n_out);
            let is = |p: usize, sign: &str| -> Result<bool> {
                let d = 2 * p + 1;
                if d >= n_out {
                    return Ok(false);
                }
                let text = format!(
                    "{{ {name}[{}] -> [{}] : {} = {sign}{} }}",
                    it.join(", "),
                    o.join(", "),
                    o[d],
                    it[p]
                );
                UnionMap::from_map(map.clone())?.is_subset(&UnionMap::read(ctx, &text)?)
            };
            let mut up = Vec::new();
            for p in 0..n_in {
                if is(p, "")? {
                    up.push(p);
                }
            }
            let mut down_from = None;
            if n_in > 0 && is(n_in - 1, "-")? {
                let domain = domains
                    .iter()
                    .find(|d| d.tuple_name().as_deref() == Some(name.as_str()));
                if let Some(domain) = domain {
                    down_from = domain.dim_range(n_in - 1)?.map(|(_, hi)| hi);
                }
            }
            statements.insert(
                name,
                StatementLoops {
                    iterators: n_in,
                    down_from,
                    up,
                },
            );
        }
        Ok(Loops { statements })
    }

    /// The map `S[.., i] -> S[.., hi - i]` that mirrors the innermost loops counting down of the
    /// statements of `domains` (the identity on the others), or `None` when there is none, or
    /// when a statement there has a loop counting up at the depth of one of them (adi's sweeps,
    /// forward and backward in one body: mirrored, ISL fused its two sweeps and lost their
    /// parallel loop, 1.8x slower at LARGE).
    pub(crate) fn mirror<'c>(
        &self,
        ctx: &'c Ctx,
        domains: &UnionSet<'c>,
    ) -> Result<Option<UnionMap<'c>>> {
        let mut inside = Vec::new();
        for set in domains.sets()? {
            if let Some(loops) = set
                .tuple_name()
                .and_then(|n| self.statements.get_key_value(&n))
            {
                inside.push(loops);
            }
        }
        let down: Vec<usize> = inside
            .iter()
            .filter(|(_, l)| l.down_from.is_some())
            .map(|(_, l)| l.iterators - 1)
            .collect();
        if down.is_empty()
            || inside
                .iter()
                .any(|(_, l)| l.up.iter().any(|p| down.contains(p)))
        {
            return Ok(None);
        }
        let pieces: Vec<String> = inside
            .iter()
            .map(|(name, l)| {
                let it = names("i", l.iterators);
                let mut image = it.clone();
                if let (Some(hi), Some(last)) = (l.down_from, image.last_mut()) {
                    *last = format!("{hi} - {last}");
                }
                format!("{name}[{}] -> {name}[{}]", it.join(", "), image.join(", "))
            })
            .collect();
        Ok(Some(UnionMap::read(
            ctx,
            &format!("{{ {} }}", pieces.join("; ")),
        )?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets<'c>(ctx: &'c Ctx, domains: &str, original: &str) -> ScopSets<'c> {
        ScopSets {
            context: crate::isl::Set::read(ctx, "{ : }").unwrap(),
            domains: UnionSet::read(ctx, domains).unwrap(),
            reads: UnionMap::empty(ctx).unwrap(),
            writes: UnionMap::empty(ctx).unwrap(),
            original: UnionMap::read(ctx, original).unwrap(),
        }
    }

    fn mirror<'c>(ctx: &'c Ctx, s: &ScopSets<'c>) -> Option<UnionMap<'c>> {
        Loops::of(ctx, s).unwrap().mirror(ctx, &s.domains).unwrap()
    }

    #[test]
    fn an_innermost_loop_counting_down_is_mirrored_and_nothing_else() {
        let ctx = Ctx::shared().unwrap();
        // deriche's anti-causal column pass: `j` counts up, `i` down from 4095, inside it.
        let s = sets(
            ctx,
            "{ S0[j] : 0 <= j <= 9; S1[j, i] : 0 <= j <= 9 and 0 <= i <= 4095 }",
            "{ S0[j] -> [0, j, 0, 0, 0]; S1[j, i] -> [0, j, 1, -i, 0] }",
        );
        let map = mirror(ctx, &s).unwrap();
        let expected =
            UnionMap::read(ctx, "{ S0[j] -> S0[j]; S1[j, i] -> S1[j, 4095 - i] }").unwrap();
        assert!(
            map.is_equal(&expected).unwrap(),
            "{}",
            map.to_str().unwrap()
        );
    }

    #[test]
    fn other_loops_are_kept() {
        let ctx = Ctx::shared().unwrap();
        let up = sets(
            ctx,
            "{ S0[i, j] : 0 <= i <= 9 and 0 <= j <= 9 }",
            "{ S0[i, j] -> [0, i, 0, j, 0] }",
        );
        assert!(mirror(ctx, &up).is_none());
        let parametric = sets(
            ctx,
            "[n] -> { S0[i] : 0 <= i < n }",
            "[n] -> { S0[i] -> [0, -i, 0] }",
        );
        assert!(mirror(ctx, &parametric).is_none());
        // A shifted downward loop (`3 - i`) is not `-i`: the scheduler sees it as written.
        let shifted = sets(ctx, "{ S0[i] : 0 <= i <= 9 }", "{ S0[i] -> [0, 3 - i, 0] }");
        assert!(mirror(ctx, &shifted).is_none());
        // nussinov: the loop counting down is not the innermost (`j` starts at `i + 1`).
        let outer = sets(
            ctx,
            "{ S0[i, j] : 0 <= i <= 9 and i < j <= 9 }",
            "{ S0[i, j] -> [0, -i, 0, j, 0] }",
        );
        assert!(mirror(ctx, &outer).is_none());
        // adi: a forward and a backward sweep at the same depth of one body.
        let sweeps = sets(
            ctx,
            "{ S0[i, j] : 0 <= i <= 9 and 0 <= j <= 9; S1[i, j] : 0 <= i <= 9 and 0 <= j <= 9 }",
            "{ S0[i, j] -> [0, i, 0, j, 0]; S1[i, j] -> [0, i, 1, -j, 0] }",
        );
        assert!(mirror(ctx, &sweeps).is_none());
        // Each sweep alone (a group of its own) is mirrored or not by itself.
        let backward = UnionSet::read(ctx, "{ S1[i, j] : 0 <= i <= 9 and 0 <= j <= 9 }").unwrap();
        let loops = Loops::of(ctx, &sweeps).unwrap();
        assert!(loops.mirror(ctx, &backward).unwrap().is_some());
    }
}
