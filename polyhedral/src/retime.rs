//! Retiming a reduction into the step before it, so that its chain of additions runs beside
//! the work that follows it instead of after it.
//!
//! A sequential loop whose every step first sums a row (`sum += r[k - i - 1] * y[i]`, an
//! in-order chain: each addition waits for the last) and then updates a vector from that sum
//! (`z[i] = y[i] + alpha * y[k - i - 1]`, independent iterations) runs the chain and the update
//! one after the other; the core's adders sit idle during the update. When the next step's sum
//! reads what this step's update writes element by element, the two can run in one loop: the
//! next step's sum moved (retimed) into this step, after the update, where the scheduler fuses
//! it with the update's loop and the chain hides the update. PolyBench's durbin is the case:
//! 5.63 -> 4.64 ms at EXTRALARGE by hand, bitwise the same results.
//!
//! Two rewrites of the SCoP, each checked by ISL, make it:
//!
//! 1. **Copy forwarding.** A *copy* `X[f] = Y[f];` (two arrays of one element type, the same
//!    subscript text on both sides) leaves `X[f]` equal to `Y[f]` until either changes. A
//!    statement `R` that reads `X` once (and does not write it) reads `Y` instead at the
//!    instances whose value of `X` comes from the copy (ISL's exact dataflow: the last write
//!    before the read) and where no write of that element of `Y` comes between the copy and the
//!    read. `R` is split into the instances that read `Y` and the others (its domain cut in two,
//!    the same text and place in the original order). Durbin's sum reads `y[i]`, which the copy
//!    `y[i] = z[i]` of the step before wrote: forwarded, it reads `z[i]`, which the update of the
//!    step before wrote, except at `i = k - 1` (`y[k - 1] = alpha`, no copy).
//! 2. **Advancing by one step.** In a statement `T` inside an inner loop that updates a scalar
//!    in place (`t += ..`: the chain), whose reads come, at distance one step of the outermost
//!    loop and element for element, from a statement `A` of the same depth in another inner
//!    loop of that loop (what the fusion needs), the group `M` of `T` and of the statements
//!    before it in the step that it depends on within the step (`sum = 0`) is re-indexed to
//!    run one step earlier: an instance `m(k, ..)` becomes
//!    `m'(k - 1, ..)` (its text reads `k + 1` for `k`, its domain, accesses and original schedule
//!    shifted), placed after every other statement of the step (in its own order). The rewrite
//!    is kept only when that order respects every flow, anti and output dependence of the SCoP
//!    (the scheduler's own criterion), so it computes the same values with the same operations,
//!    in the same order for every pair of accesses that conflict. The scheduler, which sees
//!    `A(k, i) -> T'(k, i)` at distance zero, may then fuse the two loops.
//!
//! Copy forwarding alone gains nothing measurable (durbin: the same time), so the SCoP is
//! rewritten only when a group is advanced; the rewritten SCoP replaces the original for every
//! later stage and for the output. The cost model then prefers the fused schedule for what it
//! is (`crate::cost`: a chain's latency, and the work fused beside it). Measured on durbin at
//! EXTRALARGE (medians of 15 runs in rounds): 6.15 -> 4.92 ms on two threads, 6.07 -> 4.89 on
//! one, gcc's original 5.88.

use crate::deps::compute;
use crate::fold::{numbered, one_write_one_read, shape};
#[cfg(test)]
use crate::isl::Map;
use crate::isl::{AccessInfo, Ctx, UnionMap, UnionSet};
use crate::maps::{names, projection};
use crate::scop::ScopSets;
use crate::Result;
use scop_ir::{Access, AccessKind, ArrayId, BodyPiece, Scop};

/// A SCoP with a reduction advanced by one step, and what was done, one line per rewrite.
#[derive(Clone, Debug)]
pub struct Retimed {
    pub scop: Scop,
    pub notes: Vec<String>,
}

/// `scop` with its copies forwarded and a reduction group advanced (see the module doc); `None`
/// when no group can be.
///
/// The analysis runs on a thread of its own, in an ISL context that ends with it: ISL simplifies
/// objects in place as it works on them, so a SCoP parsed again later in the caller's context
/// (whose objects the context keeps) could print differently, and the scheduler's memo, keyed
/// by text, would miss (ludcmp was scheduled twice: 0.3 s more compilation).
pub fn retime_reductions(scop: &Scop) -> Result<Option<Retimed>> {
    // A cheap look first: a scalar updated in place inside an inner loop.
    if !(0..scop.statements.len()).any(|t| chain_scalar(scop, t).is_some()) {
        return Ok(None);
    }
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("retime".into())
            .spawn_scoped(s, || retime_here(scop))
            .map_err(|e| crate::Error::Isl(format!("cannot start a thread: {e}")))?
            .join()
            .unwrap_or_else(|_| Err(crate::Error::Isl("the retiming analysis panicked".into())))
    })
}

fn retime_here(scop: &Scop) -> Result<Option<Retimed>> {
    let ctx = Ctx::shared()?;
    let mut notes = Vec::new();
    let mut current = scop.clone();
    // Each forwarding moves one statement's read from one array to another: bounded by the reads.
    let reads: usize = scop.statements.iter().map(|s| s.accesses.len()).sum();
    for _ in 0..reads {
        match forward_one(ctx, &current)? {
            Some((next, note)) => {
                current = next;
                notes.push(note);
            }
            None => break,
        }
    }
    let Some((advanced, note)) = advance(ctx, &current)? else {
        return Ok(None);
    };
    notes.push(note);
    Ok(Some(Retimed {
        scop: advanced,
        notes,
    }))
}

/// The rank-0 array that statement `t` updates in place (reads and writes), when `t` is inside
/// two loops at least.
pub(crate) fn chain_scalar(scop: &Scop, t: usize) -> Option<ArrayId> {
    let stmt = &scop.statements[t];
    if stmt.iterators.len() < 2 {
        return None;
    }
    stmt.accesses
        .iter()
        .filter(|a| a.kind == AccessKind::Write && scop.array(a.array).rank == 0)
        .map(|a| a.array)
        .find(|&x| {
            stmt.accesses
                .iter()
                .any(|a| a.kind == AccessKind::Read && a.array == x)
        })
}

/// `(X, Y)` when statement `c` is a copy `X[f] = Y[f];`: two arrays of one element type and
/// rank, the same subscript text on both sides, nothing else.
fn copy_of(scop: &Scop, c: usize) -> Option<(ArrayId, ArrayId)> {
    let stmt = &scop.statements[c];
    let (write, read) = one_write_one_read(stmt)?;
    let (x, y) = (scop.array(write.array), scop.array(read.array));
    if x.id == y.id || x.rank == 0 || x.rank != y.rank || x.elem_type != y.elem_type {
        return None;
    }
    let text = shape(&stmt.body);
    let rest = text.strip_prefix(&format!("@{}", x.id.0))?;
    let (sub, tail) = rest.split_once(&format!("=@{}", y.id.0))?;
    (sub.starts_with('[') && !sub.contains('=') && tail == format!("{sub};"))
        .then_some((x.id, y.id))
}

/// The first read that a copy forwards (see the module doc), forwarded, with its note.
fn forward_one<'c>(ctx: &'c Ctx, scop: &Scop) -> Result<Option<(Scop, String)>> {
    let copies: Vec<(usize, ArrayId, ArrayId)> = (0..scop.statements.len())
        .filter_map(|c| copy_of(scop, c).map(|(x, y)| (c, x, y)))
        .collect();
    if copies.is_empty() {
        return Ok(None);
    }
    let sets = ScopSets::parse(ctx, scop)?;
    let domain = |s: usize| -> Result<UnionSet<'c>> {
        UnionSet::read(ctx, &scop.statements[s].domain)?.intersect(sets.domains.clone())
    };
    let accesses = |s: Option<usize>, kind: AccessKind, array: ArrayId| -> Result<UnionMap<'c>> {
        let mut m = UnionMap::empty(ctx)?;
        for (k, stmt) in scop.statements.iter().enumerate() {
            if s.is_some_and(|s| s != k) {
                continue;
            }
            for a in stmt
                .accesses
                .iter()
                .filter(|a| a.kind == kind && a.array == array)
            {
                m = m.union(UnionMap::read(ctx, &a.relation)?)?;
            }
        }
        m.intersect_domain(sets.domains.clone())
    };
    let schedule = |s: usize| sets.original.clone().intersect_domain(domain(s)?);
    for &(c, x, y) in &copies {
        for (r, stmt) in scop.statements.iter().enumerate() {
            let reads_x = stmt
                .accesses
                .iter()
                .filter(|a| a.array == x && a.kind == AccessKind::Read)
                .count();
            let writes_x = stmt
                .accesses
                .iter()
                .any(|a| a.array == x && a.kind == AccessKind::Write);
            let occurrences = stmt
                .body
                .iter()
                .filter(|p| **p == BodyPiece::Var(x))
                .count();
            if r == c || reads_x != 1 || occurrences != 1 || writes_x {
                continue;
            }
            // The copy's instance that each instance of R reads its element of X from.
            let read = accesses(Some(r), AccessKind::Read, x)?;
            let flow = AccessInfo::from_sink(read.clone())?
                .set_must_source(accesses(None, AccessKind::Write, x)?)?
                .set_schedule_map(sets.original.clone())?
                .compute_flow()?
                .may_dependence()?;
            let from_copy = flow.intersect_domain(domain(c)?)?.reverse()?;
            if from_copy.is_empty()? || !from_copy.is_single_valued()? {
                continue;
            }
            // Without a write of the copied element of Y between the copy and the read.
            let element = from_copy
                .clone()
                .apply_range(accesses(Some(c), AccessKind::Read, y)?)?;
            let y_writes = accesses(None, AccessKind::Write, y)?;
            let y_writers = sets
                .original
                .clone()
                .intersect_domain(y_writes.clone().domain()?)?;
            let clobbered = element
                .apply_range(y_writes.reverse()?)?
                .intersect(
                    from_copy
                        .clone()
                        .apply_range(schedule(c)?.lex_lt_union_map(y_writers.clone())?)?,
                )?
                .intersect(y_writers.lex_lt_union_map(schedule(r)?)?.reverse()?)?;
            let forwarded = from_copy.domain()?.subtract(clobbered.domain()?)?;
            if forwarded.is_empty()? {
                continue;
            }
            let rest = domain(r)?.subtract(forwarded.clone())?;
            let mut reading_y = stmt.clone();
            reading_y.domain = forwarded.to_str()?;
            reading_y.body = stmt
                .body
                .iter()
                .map(|p| match p {
                    BodyPiece::Var(a) if *a == x => BodyPiece::Var(y),
                    other => other.clone(),
                })
                .collect();
            let as_y = UnionMap::read(
                ctx,
                &format!(
                    "{{ {}[{v}] -> {}[{v}] }}",
                    scop.array(x).isl_name,
                    scop.array(y).isl_name,
                    v = names("e", scop.array(x).rank).join(", ")
                ),
            )?;
            for a in reading_y
                .accesses
                .iter_mut()
                .filter(|a| a.array == x && a.kind == AccessKind::Read)
            {
                *a = Access {
                    kind: AccessKind::Read,
                    array: y,
                    relation: read
                        .clone()
                        .intersect_domain(forwarded.clone())?
                        .apply_range(as_y.clone())?
                        .to_str()?,
                };
            }
            let mut statements = scop.statements.clone();
            statements[r] = reading_y;
            if !rest.is_empty()? {
                let mut others = stmt.clone();
                others.domain = rest.to_str()?;
                statements.insert(r + 1, others);
            }
            let note = format!(
                "{} forwarded to {} in the statement at line {}",
                scop.array(x).name,
                scop.array(y).name,
                stmt.loc.line
            );
            return Ok(Some((numbered(scop, statements), note)));
        }
    }
    Ok(None)
}

/// The SCoP with one reduction group advanced by one step of its outermost loop (see the module
/// doc), and its note; `None` when no group qualifies or none keeps every dependence.
fn advance<'c>(ctx: &'c Ctx, scop: &Scop) -> Result<Option<(Scop, String)>> {
    let sets = ScopSets::parse(ctx, scop)?;
    let deps = compute(&sets)?;
    let all = deps.all()?;
    let n = scop.statements.len();
    let domain = |s: usize| -> Result<UnionSet<'c>> {
        UnionSet::read(ctx, &scop.statements[s].domain)?.intersect(sets.domains.clone())
    };
    let mut schedules = Vec::with_capacity(n);
    for s in 0..n {
        schedules.push(sets.original.clone().intersect_domain(domain(s)?)?);
    }
    let dims = match sets.original.maps()?.first() {
        Some(m) => m.n_dims(crate::isl::Side::Out)?,
        None => return Ok(None),
    };
    if dims < 3 {
        return Ok(None);
    }
    // The constant dimensions 0 (which top-level loop) and 2 (the place in its step).
    let fixed = |s: usize, pos: usize| -> Result<Option<i64>> {
        match schedules[s].maps()?.first() {
            Some(m) => m.plain_fixed_out(pos),
            None => Ok(None),
        }
    };
    let outer = UnionMap::read(ctx, &projection(dims, "", &[0, 1]))?;
    // The distances along the first two schedule dimensions of the dependences in `d` from u to v.
    let distances = |d: &UnionMap<'c>, u: usize, v: usize| -> Result<UnionSet<'c>> {
        d.clone()
            .intersect_domain(domain(u)?)?
            .intersect_range(domain(v)?)?
            .apply_domain(schedules[u].clone().apply_range(outer.clone())?)?
            .apply_range(schedules[v].clone().apply_range(outer.clone())?)?
            .deltas()
    };
    let at = |steps: i64| UnionSet::read(ctx, &format!("{{ [0, {steps}] }}"));
    let has = |set: UnionSet<'c>, steps: i64| -> Result<bool> {
        Ok(!set.intersect(at(steps)?)?.is_empty()?)
    };
    for t in (0..n).filter(|&t| chain_scalar(scop, t).is_some()) {
        let Some(top) = fixed(t, 0)? else { continue };
        // The statements of the same outermost loop, with their places in its step.
        let mut step = Vec::new();
        for s in 0..n {
            if scop.statements[s].iterators.is_empty() || fixed(s, 0)? != Some(top) {
                continue;
            }
            let Some(place) = fixed(s, 2)? else {
                step.clear();
                break;
            };
            step.push((s, place));
        }
        let Some(&(_, t_place)) = step.iter().find(|(s, _)| *s == t) else {
            continue;
        };
        // T and what it depends on earlier in the same step, transitively.
        let mut group = vec![t];
        loop {
            let mut grown = false;
            for &(u, place) in &step {
                if group.contains(&u) || place > t_place {
                    continue;
                }
                let mut feeds = false;
                for &v in &group {
                    feeds = feeds || has(distances(&all, u, v)?, 0)?;
                }
                if feeds {
                    group.push(u);
                    grown = true;
                }
            }
            if !grown {
                break;
            }
        }
        // What the move is for: a statement of another inner loop that T reads from one step
        // back, element for element (as deep as T, each of its instances read by one of T's at
        // most, not a chain itself: durbin's sum after the move feeds the last term, `i = k - 1`,
        // through `sum` alone), which T then meets in the same step. A feeder deeper than the chain would fuse
        // a whole matrix update with one column's sum (gramschmidt's norm beside the update of
        // the columns after it: 0.23 -> 9.4 s, the band no longer tiled).
        let mut feeder = None;
        for &(a, _) in &step {
            let depth = scop.statements[a].iterators.len();
            if group.contains(&a)
                || depth < 2
                || depth != scop.statements[t].iterators.len()
                || chain_scalar(scop, a).is_some()
            {
                continue;
            }
            let flow = deps
                .flow
                .clone()
                .intersect_domain(domain(a)?)?
                .intersect_range(domain(t)?)?;
            if has(distances(&deps.flow, a, t)?, 1)?
                && flow.is_single_valued()?
                && flow.reverse()?.is_single_valued()?
            {
                feeder = Some(a);
                break;
            }
        }
        let Some(feeder) = feeder else { continue };
        let last = step.iter().map(|&(_, p)| p).max().unwrap_or(0);
        let Some(advanced) = advanced_if_legal(ctx, scop, &all, &group, last + 1)? else {
            continue;
        };
        let mut lines: Vec<u32> = group.iter().map(|&g| scop.statements[g].loc.line).collect();
        lines.sort_unstable();
        lines.dedup();
        let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        let note = format!(
            "the statements at lines {} advanced by one step of `{}` (fused with line {})",
            lines.join(", "),
            scop.statements[t].iterators[0],
            scop.statements[feeder].loc.line
        );
        return Ok(Some((advanced, note)));
    }
    Ok(None)
}

/// `scop` with `group` advanced by one step and placed at `place` in the step before (see
/// [`advanced_scop`]), when that order keeps every dependence of `all` (flow, anti and output,
/// in the original order), the instances renamed; `None` otherwise.
fn advanced_if_legal<'c>(
    ctx: &'c Ctx,
    scop: &Scop,
    all: &UnionMap<'c>,
    group: &[usize],
    place: i64,
) -> Result<Option<Scop>> {
    let advanced = advanced_scop(ctx, scop, group, place)?;
    let renamed = renaming(ctx, scop, group)?;
    let kept = all
        .clone()
        .apply_domain(renamed.clone())?
        .apply_range(renamed)?;
    let sets = ScopSets::parse(ctx, &advanced)?;
    let order = sets
        .original
        .clone()
        .lex_lt_union_map(sets.original.clone())?;
    Ok(kept.is_subset(&order)?.then_some(advanced))
}

/// Each instance of `scop` to its name once `group` is advanced by one step: `m[k, ..] ->
/// m[k - 1, ..]` for the group, the identity for the others.
fn renaming<'c>(ctx: &'c Ctx, scop: &Scop, group: &[usize]) -> Result<UnionMap<'c>> {
    let mut map = UnionMap::empty(ctx)?;
    for (s, stmt) in scop.statements.iter().enumerate() {
        let vars = names("i", stmt.iterators.len());
        let mut to = vars.clone();
        if group.contains(&s) {
            to[0] = format!("{} - 1", vars[0]);
        }
        map = map.union(UnionMap::read(
            ctx,
            &format!(
                "{{ {}[{}] -> {}[{}] }}",
                stmt.id,
                vars.join(", "),
                stmt.id,
                to.join(", ")
            ),
        )?)?;
    }
    Ok(map)
}

/// `scop` with the statements of `group` advanced by one step of their outermost loop and
/// placed at `place + ` their place in the step (after every other statement of it).
fn advanced_scop(ctx: &Ctx, scop: &Scop, group: &[usize], place: i64) -> Result<Scop> {
    let mut out = scop.clone();
    for &g in group {
        let stmt = &mut out.statements[g];
        let name = stmt.id.to_string();
        let vars = names("i", stmt.iterators.len());
        let mut next = vars.clone();
        next[0] = format!("{} + 1", vars[0]);
        // New instances to the old ones they are.
        let to_old = UnionMap::read(
            ctx,
            &format!(
                "{{ {name}[{}] -> {name}[{}] }}",
                vars.join(", "),
                next.join(", ")
            ),
        )?;
        stmt.domain = to_old
            .clone()
            .intersect_range(UnionSet::read(ctx, &stmt.domain)?)?
            .domain()?
            .to_str()?;
        for a in &mut stmt.accesses {
            a.relation = to_old
                .clone()
                .apply_range(UnionMap::read(ctx, &a.relation)?)?
                .to_str()?;
        }
        let schedule = UnionMap::read(ctx, &stmt.schedule)?;
        let dims = match schedule.maps()?.first() {
            Some(m) => m.n_dims(crate::isl::Side::Out)?,
            None => continue,
        };
        let o = names("o", dims);
        let mut moved = o.clone();
        moved[1] = format!("{} - 1", o[1]);
        moved[2] = format!("{} + {place}", o[2]);
        let shift = UnionMap::read(
            ctx,
            &format!("{{ [{}] -> [{}] }}", o.join(", "), moved.join(", ")),
        )?;
        stmt.schedule = to_old.apply_range(schedule)?.apply_range(shift)?.to_str()?;
        stmt.body = std::mem::take(&mut stmt.body)
            .into_iter()
            .flat_map(|p| match p {
                BodyPiece::Iter(0) => vec![
                    BodyPiece::Text("(".into()),
                    BodyPiece::Iter(0),
                    BodyPiece::Text(" + 1)".into()),
                ],
                other => vec![other],
            })
            .collect();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::statement_text as text;

    #[test]
    fn durbins_sum_reads_the_update_and_moves_into_the_step_before() {
        // durbin at MINI (N = 40): the sum's read of `y[i]` comes from the copy `y[i] = z[i]`
        // of the step before except at `i = k - 1`: split in two, the first reads `z[i]`. Then
        // `sum = 0` and that part of the sum move into the step before, after its statements.
        let scop = crate::polybench_scop("durbin");
        let retimed = retime_reductions(&scop)
            .unwrap()
            .expect("durbin is retimed");
        assert_eq!(
            retimed.notes,
            vec![
                "y forwarded to z in the statement at line 57".to_string(),
                "the statements at lines 55, 57 advanced by one step of `k` (fused with line 60)"
                    .to_string()
            ]
        );
        let s = &retimed.scop;
        assert_eq!(s.statements.len(), scop.statements.len() + 1);
        let texts: Vec<String> = s.statements.iter().map(|t| text(s, t)).collect();
        assert_eq!(texts[4], "sum = SCALAR_VAL(0.0);", "{texts:?}");
        assert_eq!(texts[5], "sum += r[(k + 1) - i - 1] * z[i];", "{texts:?}");
        assert_eq!(texts[6], "sum += r[k - i - 1] * y[i];", "{texts:?}");
        let ctx = Ctx::shared().unwrap();
        let same = |a: &str, b: &str| {
            UnionSet::read(ctx, a)
                .unwrap()
                .is_equal(&UnionSet::read(ctx, b).unwrap())
                .unwrap()
        };
        // The advanced part runs for the steps before: k + 1 from 2 to 39, i < k.
        assert!(same(
            &s.statements[5].domain,
            "{ S5[k, i] : 1 <= k <= 38 and 0 <= i < k }"
        ));
        assert!(same(
            &s.statements[6].domain,
            "{ S6[k, i] : 1 <= k <= 39 and i = k - 1 }"
        ));
        assert!(same(&s.statements[4].domain, "{ S4[k] : 0 <= k <= 38 }"));
        // After every other statement of the step, in their order.
        let place = |k: usize| {
            Map::read(ctx, &s.statements[k].schedule)
                .unwrap()
                .plain_fixed_out(2)
                .unwrap()
        };
        assert_eq!(place(4), Some(1 + 7));
        assert_eq!(place(5), Some(2 + 7));
        assert_eq!(place(6), Some(2));
        let reads_z = &s.statements[5].accesses;
        assert!(
            reads_z.iter().any(|a| UnionMap::read(ctx, &a.relation)
                .unwrap()
                .is_equal(
                    &UnionMap::read(ctx, "{ S5[k, i] -> z[i] : 1 <= k <= 38 and 0 <= i < k }")
                        .unwrap()
                )
                .unwrap()),
            "{reads_z:?}"
        );
        // Nothing more to do on the result.
        let again = retime_reductions(s).unwrap().map(|r| r.notes);
        assert!(again.is_none(), "{again:?}");
    }

    #[test]
    fn the_sum_without_its_initialization_may_not_move() {
        // `sum = 0` of step k + 1 would then run after the sum it starts.
        let scop = crate::polybench_scop("durbin");
        let ctx = Ctx::shared().unwrap();
        let (forwarded, _) = forward_one(ctx, &scop).unwrap().expect("forwarded");
        let all = compute(&ScopSets::parse(ctx, &forwarded).unwrap())
            .unwrap()
            .all()
            .unwrap();
        assert!(advanced_if_legal(ctx, &forwarded, &all, &[5], 7)
            .unwrap()
            .is_none());
        assert!(advanced_if_legal(ctx, &forwarded, &all, &[4, 5], 7)
            .unwrap()
            .is_some());
    }

    #[test]
    fn a_chain_fed_by_a_deeper_loop_stays() {
        // gramschmidt's norm of column k + 1 reads what the update of the columns after k wrote
        // (one column of a matrix update): fused, the update would lose its tiled band.
        for kernel in [
            "gramschmidt",
            "gemm",
            "trisolv",
            "ludcmp",
            "symm",
            "cholesky",
        ] {
            let scop = crate::polybench_scop(kernel);
            assert!(retime_reductions(&scop).unwrap().is_none(), "{kernel}");
        }
    }

    #[test]
    fn copies_are_plain_copies_of_one_type() {
        let scop = crate::polybench_scop("durbin");
        let copies: Vec<usize> = (0..scop.statements.len())
            .filter(|&c| copy_of(&scop, c).is_some())
            .collect();
        // `y[i] = z[i];` only: not `y[k] = alpha;` (a scalar), not `y[0] = -r[0];`.
        assert_eq!(copies, vec![8]);
    }
}
