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
//! (anti). Every relation is restricted to the statement domains. Reads of arrays the SCoP
//! never writes are left out of the analysis: they can add no dependence.
//!
//! The original order is handed to ISL as a schedule tree ([`original_tree`]) rather than as the
//! flat (2d+1) schedule map: the flat schedules' constant dimensions become sequence nodes, the
//! others bands. The order is the same, and so are the dependences (a unit test
//! compares both analyses), but ISL then orders accesses in different children of a sequence
//! node by position, and its lexicographic optimizations range over the loop dimensions only
//! instead of every dimension of the flat schedule: over the 30 PolyBench kernels at LARGE the
//! analysis takes about 0.6 of the time it took with the flat map (up to 3 times faster).
//!
//! Neither the accesses nor the dependences are coalesced: coalescing merges, for example, the
//! seven uniform pieces of a 3-D 7-point stencil into one polytope with the same integer points but
//! fractional vertices and many more constraints, on which the ISL scheduler's Farkas steps take
//! minutes instead of a second (PolyBench heat-3d). One piece per access pattern also prints more
//! readably.

use crate::isl::{AccessInfo, Ctx, Map, Schedule, Side, UnionMap, UnionSet};
use crate::maps::projection;
use crate::memo::Memo;
use crate::scop::ScopSets;
use crate::{Dependences, Error, Result};
use scop_ir::Scop;
use std::collections::BTreeMap;
use std::fmt;

/// Computes the flow, anti and output dependences of `scop` under its original schedule.
pub fn dependences(scop: &Scop) -> Result<Dependences> {
    let ctx = Ctx::shared()?;
    let sets = ScopSets::parse(ctx, scop)?;
    let deps = compute(&sets)?;
    Ok(Dependences {
        flow: deps.flow.to_str()?,
        anti: deps.anti.to_str()?,
        output: deps.output.to_str()?,
    })
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
                Error::Isl(msg) => Error::InvalidInput(format!(
                    "cannot parse the {kind} dependences `{text}`: {msg}"
                )),
                other => other,
            })
        };
        Ok(IslDeps {
            flow: parse("flow", &deps.flow)?,
            anti: parse("anti", &deps.anti)?,
            output: parse("output", &deps.output)?,
        })
    }

    /// The kinds with their names, for reports.
    pub fn kinds(&self) -> [(&'static str, &UnionMap<'c>); 3] {
        [
            ("flow", &self.flow),
            ("anti", &self.anti),
            ("output", &self.output),
        ]
    }

    /// Flow ∪ anti ∪ output, without the pieces that repeat pairs of earlier ones (see
    /// [`drop_subsumed`]).
    pub fn all(&self) -> Result<UnionMap<'c>> {
        drop_subsumed(
            &self
                .flow
                .clone()
                .union(self.anti.clone())?
                .union(self.output.clone())?,
        )
    }
}

/// [`IslDeps::all`] of `deps`, in `ctx`. The scheduler, the tile dependences, the parallel loops,
/// the verifier and others each ask for the union of the same dependences; it is computed once
/// (kept as text by [`Memo`], the latest [`ALL_KEPT`]) and read back by every caller, the first
/// included, so that each gets the same relation whichever asked first. A random SCoP whose
/// dependences have `% 3` guards spent 9 s of CPU in seven such unions of 80 pieces each.
pub(crate) fn all_of<'c>(ctx: &'c Ctx, deps: &Dependences) -> Result<UnionMap<'c>> {
    static ALL: Memo<Dependences, String> = Memo::new(ALL_KEPT);
    let text = match ALL.find(|kept, _| kept == deps) {
        Some(text) => text,
        None => {
            let text = IslDeps::parse(ctx, deps)?.all()?.to_str()?;
            ALL.insert(deps.clone(), text.clone());
            text
        }
    };
    UnionMap::read(ctx, &text)
}

/// How many unions [`all_of`] keeps: the dependences of a SCoP's passes (scalars expanded or
/// not) and of the few SCoPs compiled side by side.
const ALL_KEPT: usize = 8;

/// `umap` without each disjunct (basic map) whose pairs are all in the disjuncts kept before it.
///
/// The same pairs often come back as several kinds (`A[i] += ..` gives a flow and an output
/// dependence between the same instances; a stencil's anti dependences repeat its flow ones), and
/// ISL's union keeps every copy. Each copy costs the scheduler a Farkas dual of its own. Unlike
/// coalescing, this never replaces pieces by a merged polytope, so the pieces keep their simple
/// shapes (see the module documentation).
///
/// A piece is first tested against each kept piece alone (one small subset test each); against
/// the union of the kept pieces, which can also cover it, only while a map has at most
/// [`UNION_TEST_PIECES`] pieces: ISL's test against a union subtracts the pieces one after the
/// other, and with pieces that have existentially quantified variables (a `% 3` in a condition)
/// the differences grow exponentially.
pub(crate) fn drop_subsumed<'c>(umap: &UnionMap<'c>) -> Result<UnionMap<'c>> {
    let mut out = UnionMap::empty(umap.ctx())?;
    for map in umap.maps()? {
        let pieces = map.basic_maps()?;
        let union_test = pieces.len() <= UNION_TEST_PIECES;
        let mut kept: Vec<Map<'c>> = Vec::new();
        let mut union: Option<Map<'c>> = None;
        for piece in pieces {
            if in_one_of(&piece, &kept)?
                || (union_test && union.as_ref().map_or(Ok(false), |u| piece.is_subset(u))?)
            {
                continue;
            }
            union = Some(match union {
                None => piece.clone(),
                Some(u) => u.union(piece.clone())?,
            });
            kept.push(piece);
        }
        if let Some(u) = union {
            out = out.union(UnionMap::from_map(u)?)?;
        }
    }
    Ok(out)
}

/// Whether `piece` lies in one of `maps`.
fn in_one_of<'c>(piece: &Map<'c>, maps: &[Map<'c>]) -> Result<bool> {
    for m in maps {
        if piece.is_subset(m)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The most pieces a map of dependences may have for [`drop_subsumed`] to test a piece against
/// the union of the pieces kept before it. PolyBench's largest have 42 (floyd-warshall) and 26
/// (seidel-2d); their schedules are the same with single-piece tests alone. A random program
/// whose maps have more (conditions `% 3` on two loops) spent over 5 minutes in the union tests.
const UNION_TEST_PIECES: usize = 64;

pub(crate) fn compute<'c>(sets: &ScopSets<'c>) -> Result<IslDeps<'c>> {
    let order = match original_tree(sets)? {
        Some(tree) => Order::Tree(tree),
        None => Order::Map(sets.original.clone()),
    };
    compute_in(sets, &order)
}

/// The original execution order, in one of the two forms ISL's dataflow analysis accepts.
enum Order<'c> {
    Tree(Schedule<'c>),
    Map(UnionMap<'c>),
}

impl<'c> Order<'c> {
    fn set_on(&self, info: AccessInfo<'c>) -> Result<AccessInfo<'c>> {
        match self {
            Order::Tree(tree) => info.set_schedule(tree.clone()),
            Order::Map(map) => info.set_schedule_map(map.clone()),
        }
    }
}

fn compute_in<'c>(sets: &ScopSets<'c>, order: &Order<'c>) -> Result<IslDeps<'c>> {
    dataflow(sets, reads_of_written(sets)?, order)
}

/// The dependences of `sets` with `reads` as its reads (all of them or [`reads_of_written`]).
fn dataflow<'c>(
    sets: &ScopSets<'c>,
    reads: UnionMap<'c>,
    order: &Order<'c>,
) -> Result<IslDeps<'c>> {
    let restrict = |deps: UnionMap<'c>| -> Result<UnionMap<'c>> {
        deps.intersect_domain(sets.domains.clone())?
            .intersect_range(sets.domains.clone())
    };
    let flow = AccessInfo::from_sink(reads.clone())?.set_must_source(sets.writes.clone())?;
    let flow = order.set_on(flow)?.compute_flow()?.may_dependence()?;
    let output =
        AccessInfo::from_sink(sets.writes.clone())?.set_must_source(sets.writes.clone())?;
    let output = order.set_on(output)?.compute_flow()?.may_dependence()?;
    let anti = AccessInfo::from_sink(sets.writes.clone())?
        .set_may_source(reads)?
        .set_kill(sets.writes.clone())?;
    let anti = order.set_on(anti)?.compute_flow()?.may_dependence()?;
    Ok(IslDeps {
        flow: restrict(flow)?,
        anti: restrict(anti)?,
        output: restrict(output)?,
    })
}

/// The reads of arrays that the SCoP writes: a read of an array it never writes (a coefficient,
/// an input) has no source and precedes no write, so it adds no dependence, but ISL would still
/// look for each one's sources (4% of this stage over the PolyBench kernels at LARGE; the
/// results print the same).
fn reads_of_written<'c>(sets: &ScopSets<'c>) -> Result<UnionMap<'c>> {
    let written: std::collections::BTreeSet<Option<String>> = sets
        .writes
        .maps()?
        .iter()
        .map(|m| m.tuple_name(Side::Out))
        .collect();
    let mut reads = UnionMap::empty(sets.reads.ctx())?;
    for map in sets.reads.maps()? {
        if written.contains(&map.tuple_name(Side::Out)) {
            reads = reads.union(UnionMap::from_map(map)?)?;
        }
    }
    Ok(reads)
}

/// The order of `sets.original` as a schedule tree, or `None` when some statement's schedule is
/// not a function (a tree's bands are functions; the flat map then serves as it is).
///
/// Level by level over the padded flat schedules of a group of statements (at first all of
/// them): when every statement of the group has a constant at this level, the statements are
/// split by that constant into the ordered children of a sequence node (or just continue below
/// when all constants are equal); otherwise the level is a member of a band over the group, with
/// the following levels up to the next split (levels constant and equal for the group are left
/// out). Either way two instances are ordered as the flat schedules order them
/// lexicographically. Fewer, wider bands make ISL's prefix schedules cheaper to build.
fn original_tree<'c>(sets: &ScopSets<'c>) -> Result<Option<Schedule<'c>>> {
    if !sets.original.is_single_valued()? {
        return Ok(None);
    }
    let maps = sets.original.maps()?;
    let depth = maps
        .first()
        .map(|m| m.n_dims(Side::Out))
        .transpose()?
        .unwrap_or(0);
    tree_of(&maps, 0, depth, sets.domains.ctx()).map(Some)
}

/// The tree ordering the instances of `schedules` (one map per statement, `depth` output
/// dimensions each) by their dimensions `level..depth`.
fn tree_of<'c>(
    schedules: &[Map<'c>],
    level: usize,
    depth: usize,
    ctx: &'c Ctx,
) -> Result<Schedule<'c>> {
    let union = || -> Result<UnionMap<'c>> {
        schedules.iter().try_fold(UnionMap::empty(ctx)?, |all, m| {
            all.union(UnionMap::from_map(m.clone())?)
        })
    };
    if level == depth {
        return Schedule::from_domain(union()?.domain()?);
    }
    let constants = schedules
        .iter()
        .map(|m| m.plain_fixed_out(level))
        .collect::<Result<Option<Vec<i64>>>>()?;
    if let Some(constants) = constants {
        let mut groups: BTreeMap<i64, Vec<Map<'c>>> = BTreeMap::new();
        for (m, c) in schedules.iter().zip(constants) {
            groups.entry(c).or_default().push(m.clone());
        }
        let mut children = groups
            .values()
            .map(|group| tree_of(group, level + 1, depth, ctx));
        let first = match children.next() {
            Some(first) => first?,
            None => return Schedule::from_domain(UnionSet::empty(ctx)?),
        };
        return children.try_fold(first, |seq, child| seq.sequence(child?));
    }
    let mut members = vec![level];
    let mut next = level + 1;
    while next < depth {
        match schedules
            .iter()
            .map(|m| m.plain_fixed_out(next))
            .collect::<Result<Option<Vec<i64>>>>()?
        {
            Some(c) if c.windows(2).all(|w| w[0] == w[1]) => {}
            Some(_) => break,
            None => members.push(next),
        }
        next += 1;
    }
    let band = union()?.apply_range(UnionMap::read(ctx, &projection(depth, "", &members))?)?;
    tree_of(schedules, next, depth, ctx)?.insert_partial_schedule(band)
}

impl fmt::Display for Dependences {
    /// One line per kind: `flow: <union map>`, `anti: ...`, `output: ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "flow: {}", self.flow)?;
        writeln!(f, "anti: {}", self.anti)?;
        writeln!(f, "output: {}", self.output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isl::Set;

    /// The dependences of `sets` under the schedule tree equal those under the flat schedule map,
    /// kind by kind, as relations.
    fn assert_tree_matches_map(what: &str, sets: &ScopSets<'_>) {
        let tree = original_tree(sets)
            .unwrap()
            .unwrap_or_else(|| panic!("{what}: no schedule tree"));
        let by_tree = compute_in(sets, &Order::Tree(tree)).unwrap();
        let by_map = compute_in(sets, &Order::Map(sets.original.clone())).unwrap();
        for ((kind, t), (_, m)) in by_tree.kinds().into_iter().zip(by_map.kinds()) {
            assert!(
                t.is_equal(m).unwrap(),
                "{what}: {kind} dependences differ\n tree: {}\n map:  {}",
                t.to_str().unwrap(),
                m.to_str().unwrap()
            );
        }
        assert!(
            !by_map.all().unwrap().is_empty().unwrap(),
            "{what}: no dependences, so nothing was compared"
        );
    }

    /// Leaving out the reads of arrays that are never written changes no dependence, kind by
    /// kind, on kernels with read-only arrays and scalars (coefficients, inputs).
    #[test]
    fn reads_of_unwritten_arrays_add_no_dependence() {
        for name in ["2mm", "adi", "deriche", "gemver", "mvt", "nussinov", "symm"] {
            for scop in &crate::polybench_scops(name) {
                let ctx = Ctx::new().unwrap();
                let sets = ScopSets::parse(&ctx, scop).unwrap();
                let order = Order::Tree(original_tree(&sets).unwrap().unwrap());
                let fewer = reads_of_written(&sets).unwrap();
                assert!(
                    !fewer.is_equal(&sets.reads).unwrap(),
                    "{name}: no read left out, nothing compared"
                );
                let all = dataflow(&sets, sets.reads.clone(), &order).unwrap();
                let some = dataflow(&sets, fewer, &order).unwrap();
                for ((kind, a), (_, b)) in all.kinds().into_iter().zip(some.kinds()) {
                    assert!(a.is_equal(b).unwrap(), "{name}: {kind} dependences differ");
                }
            }
        }
    }

    /// [`all_of`] gives the union [`IslDeps::all`] computes, in any context, from its first call
    /// on (which reads back what it keeps) and from the kept text after it.
    #[test]
    fn the_kept_union_of_dependences_is_the_union() {
        for name in ["seidel-2d", "durbin"] {
            let deps = dependences(&crate::polybench_scop(name)).unwrap();
            for _ in 0..2 {
                let ctx = Ctx::new().unwrap();
                let want = IslDeps::parse(&ctx, &deps).unwrap().all().unwrap();
                let got = all_of(&ctx, &deps).unwrap();
                assert!(!want.is_empty().unwrap(), "{name}: no dependences");
                assert!(got.is_equal(&want).unwrap(), "{name}");
            }
        }
    }

    /// A SCoP given directly as ISL text (the schedules already padded to one depth).
    fn sets<'c>(
        ctx: &'c Ctx,
        domains: &str,
        reads: &str,
        writes: &str,
        schedule: &str,
    ) -> ScopSets<'c> {
        let domains = UnionSet::read(ctx, domains).unwrap();
        ScopSets {
            context: Set::read(ctx, "[N] -> { : N >= 3 }").unwrap(),
            reads: UnionMap::read(ctx, reads)
                .unwrap()
                .intersect_domain(domains.clone())
                .unwrap(),
            writes: UnionMap::read(ctx, writes)
                .unwrap()
                .intersect_domain(domains.clone())
                .unwrap(),
            original: UnionMap::read(ctx, schedule)
                .unwrap()
                .intersect_domain(domains.clone())
                .unwrap(),
            domains,
        }
    }

    #[test]
    fn tree_and_flat_map_give_the_same_dependences_on_polybench_kernels() {
        for name in [
            "adi",
            "cholesky",
            "deriche",
            "durbin",
            "fdtd-2d",
            "floyd-warshall",
            "gramschmidt",
            "ludcmp",
            "nussinov",
            "symm",
        ] {
            for scop in &crate::polybench_scops(name) {
                let ctx = Ctx::new().unwrap();
                assert_tree_matches_map(name, &ScopSets::parse(&ctx, scop).unwrap());
            }
        }
    }

    /// Orders the tree must reproduce beyond the frontend's (2d+1) schedules: statements at
    /// different depths, a level constant for some statements only, reversed and skewed loops,
    /// a statement without loops, and two statements at the same times.
    #[test]
    fn tree_and_flat_map_give_the_same_dependences_on_unusual_orders() {
        let ctx = Ctx::new().unwrap();
        // for i { S0: A[i] = 0; for j { S1: A[i] += B[i][j] } S2: C[i] = A[i] } for k { S3: A[k] = C[N-1-k] }
        assert_tree_matches_map(
            "imperfect nest",
            &sets(
                &ctx,
                "[N] -> { S0[i] : 0 <= i < N; S1[i, j] : 0 <= i, j < N; S2[i] : 0 <= i < N; S3[k] : 0 <= k < N }",
                "[N] -> { S1[i, j] -> A[i]; S1[i, j] -> B[i, j]; S2[i] -> A[i]; S3[k] -> C[N - 1 - k] }",
                "[N] -> { S0[i] -> A[i]; S1[i, j] -> A[i]; S2[i] -> C[i]; S3[k] -> A[k] }",
                "{ S0[i] -> [0, i, 0, 0, 0]; S1[i, j] -> [0, i, 1, j, 0]; S2[i] -> [0, i, 2, 0, 0]; S3[k] -> [1, k, 0, 0, 0] }",
            ),
        );
        // Two statements in one (i, j) band, split below it.
        assert_tree_matches_map(
            "band of two levels",
            &sets(
                &ctx,
                "[N] -> { S0[i, j] : 0 < i, j < N; S1[i, j] : 0 < i, j < N }",
                "[N] -> { S0[i, j] -> B[i, j - 1]; S1[i, j] -> A[i - 1, j]; S1[i, j] -> B[i, j] }",
                "[N] -> { S0[i, j] -> A[i, j]; S1[i, j] -> B[i, j] }",
                "{ S0[i, j] -> [0, i, 0, j, 0]; S1[i, j] -> [0, i, 0, j, 1] }",
            ),
        );
        // S0 in a skewed, interchanged order; S1 constant where S0 is not, then reversed.
        assert_tree_matches_map(
            "skewed and reversed",
            &sets(
                &ctx,
                "[N] -> { S0[i, j] : 0 < i, j < N; S1[i] : 0 < i < N }",
                "[N] -> { S0[i, j] -> A[i - 1, j]; S0[i, j] -> A[i, j - 1]; S1[i] -> A[i, N - i] }",
                "[N] -> { S0[i, j] -> A[i, j]; S1[i] -> A[i - 1, i] }",
                "[N] -> { S0[i, j] -> [i + j, j, 0]; S1[i] -> [N + 1, 2, -i] }",
            ),
        );
        // A running sum into a scalar, read by a statement without loops, then reset.
        assert_tree_matches_map(
            "scalar",
            &sets(
                &ctx,
                "[N] -> { S0[i] : 0 <= i < N; S1[]; S2[i] : 0 <= i < N }",
                "[N] -> { S0[i] -> s[]; S0[i] -> A[i]; S1[] -> s[]; S2[i] -> B[] }",
                "[N] -> { S0[i] -> s[]; S1[] -> B[]; S2[i] -> s[] }",
                "{ S0[i] -> [0, i]; S1[] -> [1, 0]; S2[i] -> [2, i] }",
            ),
        );
        // S0 and S1 at the same times: neither is before the other.
        assert_tree_matches_map(
            "same times",
            &sets(
                &ctx,
                "[N] -> { S0[i] : 0 <= i < N; S1[i] : 0 <= i < N }",
                "[N] -> { S0[i] -> A[i - 1]; S1[i] -> A[i] }",
                "[N] -> { S0[i] -> A[i]; S1[i] -> B[i] }",
                "{ S0[i] -> [0, i, 0]; S1[i] -> [0, i, 0] }",
            ),
        );
    }
}
