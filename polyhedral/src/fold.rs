//! Folding scalars back into the array elements they stand for: code that loads an element into
//! a scalar, updates the scalar and stores it back (ludcmp's `w = A[i][j]; w -= A[i][k] *
//! A[k][j]; A[i][j] = w / A[j][j];`, register promotion done by hand) computes what the same
//! updates on the element compute (`A[i][j] -= ..; A[i][j] = A[i][j] / A[j][j];`, lu's form),
//! but the scalar is shared by every iteration: its dependences order all of them, and scalar
//! expansion can only give it copies (an array of them, or one variable per task). Folded, the
//! updates are array statements the scheduler tiles and the tile code vectorizes like any other.
//!
//! A *web* of a rank-0 array `t` written in the SCoP is a set of statements connected by the
//! exact flow dependences through `t` (each value of `t` is read only inside its web). A web is
//! folded into the element `X` when, with `ℓ` the depth of its loading statement `C` and an
//! *iteration* `o` being a point of the first `2ℓ` dimensions of the original 2d+1 schedule:
//! 1. `C` is `t = X;` with `X` one element of an array (its text a plain subscripted name), and
//!    runs once per iteration; exactly one other statement `S` reads `t` without writing it,
//!    runs once per iteration where `C` does, and writes `X` (the same element); every other
//!    statement of the web reads and writes `t` and runs in iterations where `C` does;
//! 2. in each iteration the web runs `C` first and `S` last, and every value of `t` flows
//!    inside one iteration;
//! 3. no instance outside the web accesses `X(o)` after `C(o)` and up to `S(o)` (`S`'s own reads
//!    included, its store excepted), nor does a statement of the web other than through `t`;
//! 4. no read of the web sees a value of `t` from before the SCoP, and the web does not hold the
//!    last write of `t` (the user's variable keeps that value after the SCoP).
//!
//! Then, in each iteration, `X(o)` holds the value of `t` from `C(o)` to `S(o)` in the original
//! program, so reading and writing `X(o)` instead of `t` computes the same values with the same
//! operations: `C` is dropped, `t`'s occurrences in the web become `X`'s text (the iterators of
//! the first `ℓ` loops, which the web's statements share), and `S` is dropped too when it then
//! reads `X = X;`. Webs are folded one at a time, each checked on the SCoP with the earlier ones
//! folded.
//!
//! Measured on ludcmp at LARGE (2 threads): 1.74 s -> 0.25 s (gcc -O3 of the original: 4.76 s),
//! its factorization now tiled and vectorized as lu's is.

use crate::isl::{AccessInfo, Ctx, Side, UnionMap, UnionSet};
use crate::maps::projection;
use crate::scop::{stmt_of_name, ScopSets};
use crate::Result;
use scop_ir::{Access, AccessKind, ArrayId, BodyPiece, Scop, StmtId};

/// A SCoP with webs folded, and one line per folded web (`w into A[i][j] (lines 65-68)`).
#[derive(Clone, Debug)]
pub struct Folded {
    pub scop: Scop,
    pub webs: Vec<String>,
}

/// `scop` with every web that qualifies folded (see the module doc); `None` when none does.
pub fn fold_element_scalars(scop: &Scop) -> Result<Option<Folded>> {
    // The scalars with a loading statement `t = X;` and a statement that reads `t` and writes
    // X's array: the only ones whose webs may fold (a cheap look before the dataflow).
    let candidates = |s: &Scop| -> Vec<ArrayId> {
        s.arrays
            .iter()
            .filter(|a| a.rank == 0 && a.written)
            .map(|a| a.id)
            .filter(|&t| {
                (0..s.statements.len()).any(|c| {
                    loaded_element(s, c, t).is_some_and(|(x, _)| {
                        s.statements.iter().any(|st| {
                            let reads_t = st
                                .accesses
                                .iter()
                                .any(|a| a.array == t && a.kind == AccessKind::Read);
                            let writes_x = st
                                .accesses
                                .iter()
                                .any(|a| a.array == x && a.kind == AccessKind::Write);
                            reads_t && writes_x
                        })
                    })
                })
            })
            .collect()
    };
    if candidates(scop).is_empty() {
        return Ok(None);
    }
    let mut current = scop.clone();
    let mut webs = Vec::new();
    // Each fold removes at least one statement.
    for _ in 0..scop.statements.len() {
        let mut folded = None;
        let ctx = Ctx::shared()?;
        let sets = ScopSets::parse(ctx, &current)?;
        for t in candidates(&current) {
            if let Some(f) = fold_one(ctx, &sets, &current, t)? {
                folded = Some(f);
                break;
            }
        }
        match folded {
            Some((next, what)) => {
                current = next;
                webs.push(what);
            }
            None => break,
        }
    }
    Ok((!webs.is_empty()).then_some(Folded {
        scop: current,
        webs,
    }))
}

/// The first web of `t` in `scop` that folds, folded, with its description.
fn fold_one<'c>(
    ctx: &'c Ctx,
    sets: &ScopSets<'c>,
    scop: &Scop,
    t: ArrayId,
) -> Result<Option<(Scop, String)>> {
    let of_t = |m: &UnionMap<'_>| -> Result<Vec<usize>> {
        let mut out: Vec<usize> = m
            .maps()?
            .iter()
            .filter_map(|m| m.tuple_name(Side::In))
            .filter_map(|n| stmt_of_name(&n).map(|s| s.index()))
            .collect();
        out.sort_unstable();
        out.dedup();
        Ok(out)
    };
    let accessing: Vec<usize> = (0..scop.statements.len())
        .filter(|&s| scop.statements[s].accesses.iter().any(|a| a.array == t))
        .collect();
    let relation = |s: usize, kind: AccessKind| -> Result<UnionMap<'_>> {
        let mut m = UnionMap::empty(ctx)?;
        for a in scop.statements[s]
            .accesses
            .iter()
            .filter(|a| a.array == t && a.kind == kind)
        {
            m = m.union(UnionMap::read(ctx, &a.relation)?)?;
        }
        m.intersect_domain(sets.domains.clone())
    };
    let mut reads = UnionMap::empty(ctx)?;
    let mut writes = UnionMap::empty(ctx)?;
    for &s in &accessing {
        reads = reads.union(relation(s, AccessKind::Read)?)?;
        writes = writes.union(relation(s, AccessKind::Write)?)?;
    }
    let instances = reads.clone().domain()?.union(writes.clone().domain()?)?;
    let schedule = sets.original.clone().intersect_domain(instances)?;
    let flow = AccessInfo::from_sink(reads.clone())?
        .set_must_source(writes.clone())?
        .set_schedule_map(schedule.clone())?
        .compute_flow()?
        .may_dependence()?;
    // Statements whose webs may not fold: a read of the value from before the SCoP, or the last
    // write (the user's variable keeps it).
    let mut pinned = Vec::new();
    let live_in = reads.clone().domain()?.subtract(flow.clone().range()?)?;
    for set in live_in.sets()? {
        pinned.extend(
            set.tuple_name()
                .and_then(|n| stmt_of_name(&n))
                .map(|s| s.index()),
        );
    }
    let write_schedule = schedule
        .clone()
        .intersect_domain(writes.clone().domain()?)?;
    let overwritten = write_schedule
        .clone()
        .lex_lt_union_map(write_schedule)?
        .domain()?;
    let last = writes.clone().domain()?.subtract(overwritten)?;
    for set in last.sets()? {
        pinned.extend(
            set.tuple_name()
                .and_then(|n| stmt_of_name(&n))
                .map(|s| s.index()),
        );
    }
    // The webs: statements joined by a flow dependence.
    let mut web: Vec<usize> = (0..scop.statements.len()).collect();
    fn root(web: &mut [usize], mut s: usize) -> usize {
        while web[s] != s {
            web[s] = web[web[s]];
            s = web[s];
        }
        s
    }
    for m in flow.maps()? {
        let (Some(a), Some(b)) = (
            m.tuple_name(Side::In).and_then(|n| stmt_of_name(&n)),
            m.tuple_name(Side::Out).and_then(|n| stmt_of_name(&n)),
        ) else {
            continue;
        };
        let (ra, rb) = (root(&mut web, a.index()), root(&mut web, b.index()));
        web[ra] = rb;
    }
    let readers = of_t(&reads)?;
    let writers = of_t(&writes)?;
    let mut roots: Vec<usize> = accessing.iter().map(|&s| root(&mut web, s)).collect();
    roots.sort_unstable();
    roots.dedup();
    for r in roots {
        let members: Vec<usize> = accessing
            .iter()
            .copied()
            .filter(|&s| root(&mut web, s) == r)
            .collect();
        if members.iter().any(|s| pinned.contains(s)) {
            continue;
        }
        let loads: Vec<usize> = members
            .iter()
            .copied()
            .filter(|s| writers.contains(s) && !readers.contains(s))
            .collect();
        let stores: Vec<usize> = members
            .iter()
            .copied()
            .filter(|s| readers.contains(s) && !writers.contains(s))
            .collect();
        let ([c], [s]) = (loads.as_slice(), stores.as_slice()) else {
            continue;
        };
        if let Some(done) = fold_web(ctx, scop, sets, t, *c, *s, &members, &flow)? {
            return Ok(Some(done));
        }
    }
    Ok(None)
}

/// The write and the read of a statement that makes exactly two accesses, one of each.
pub(crate) fn one_write_one_read(stmt: &scop_ir::Statement) -> Option<(&Access, &Access)> {
    let [a, b] = stmt.accesses.as_slice() else {
        return None;
    };
    match (a.kind, b.kind) {
        (AccessKind::Write, AccessKind::Read) => Some((a, b)),
        (AccessKind::Read, AccessKind::Write) => Some((b, a)),
        _ => None,
    }
}

/// The element a loading statement `t = X;` reads: `X`'s array and text (the statement's
/// pieces between `=` and `;`), when the statement is exactly that.
fn loaded_element(scop: &Scop, c: usize, t: ArrayId) -> Option<(ArrayId, Vec<BodyPiece>)> {
    let stmt = &scop.statements[c];
    let (write, read) = one_write_one_read(stmt)?;
    if write.array != t || read.array == t || scop.array(read.array).rank == 0 {
        return None;
    }
    let mut pieces = stmt.body.clone();
    if pieces.first() != Some(&BodyPiece::Var(t)) {
        return None;
    }
    pieces.remove(0);
    // `=` (not `==`) at the start of the next text, `;` at the end of the last.
    let Some(BodyPiece::Text(head)) = pieces.first_mut() else {
        return None;
    };
    let rest = head.trim_start().strip_prefix('=')?;
    if rest.starts_with('=') {
        return None;
    }
    *head = rest.trim_start().to_string();
    let Some(BodyPiece::Text(tail)) = pieces.last_mut() else {
        return None;
    };
    *tail = tail.trim_end().strip_suffix(';')?.trim_end().to_string();
    pieces.retain(|p| !matches!(p, BodyPiece::Text(s) if s.is_empty()));
    if pieces.first() != Some(&BodyPiece::Var(read.array)) {
        return None;
    }
    let plain = pieces[1..].iter().all(|p| match p {
        BodyPiece::Text(s) => s
            .chars()
            .all(|ch| ch.is_ascii_digit() || ch.is_whitespace() || "[]()+-*".contains(ch)),
        BodyPiece::Iter(_) => true,
        BodyPiece::Var(_) => false,
    });
    plain.then_some((read.array, pieces))
}

/// Text of `pieces` for comparisons: variables and iterators by number, no whitespace.
pub(crate) fn shape(pieces: &[BodyPiece]) -> String {
    let mut out = String::new();
    for p in pieces {
        match p {
            BodyPiece::Text(s) => out.extend(s.chars().filter(|c| !c.is_whitespace())),
            BodyPiece::Iter(k) => out.push_str(&format!("#{k}")),
            BodyPiece::Var(id) => out.push_str(&format!("@{}", id.0)),
        }
    }
    out
}

/// Folds the web `members` of `t` with loading statement `c` and store `s`, when it qualifies.
#[allow(clippy::too_many_arguments)]
fn fold_web<'c>(
    ctx: &'c Ctx,
    scop: &Scop,
    sets: &ScopSets<'c>,
    t: ArrayId,
    c: usize,
    s: usize,
    members: &[usize],
    flow: &UnionMap<'c>,
) -> Result<Option<(Scop, String)>> {
    let Some((x, x_text)) = loaded_element(scop, c, t) else {
        return Ok(None);
    };
    let depth = scop.statements[c].iterators.len();
    if depth == 0 || scop.statements[s].iterators.len() != depth {
        return Ok(None);
    }
    let read_of = |stmt: usize| -> Result<UnionSet<'c>> {
        UnionSet::read(ctx, &scop.statements[stmt].domain)?.intersect(sets.domains.clone())
    };
    let dims = sets
        .original
        .maps()?
        .first()
        .map(|m| m.n_dims(Side::Out))
        .transpose()?
        .unwrap_or(0);
    if 2 * depth > dims {
        return Ok(None);
    }
    let prefix = UnionMap::read(
        ctx,
        &projection(dims, "", &(0..2 * depth).collect::<Vec<_>>()),
    )?;
    // Each statement's instances to their iteration.
    let iteration = |stmt: usize| -> Result<UnionMap<'c>> {
        sets.original
            .clone()
            .intersect_domain(read_of(stmt)?)?
            .apply_range(prefix.clone())
    };
    let schedule_of = |stmt: usize| -> Result<UnionMap<'c>> {
        sets.original.clone().intersect_domain(read_of(stmt)?)
    };
    let to_c = iteration(c)?.reverse()?;
    let to_s = iteration(s)?.reverse()?;
    if !to_c.is_single_valued()? || !to_s.is_single_valued()? {
        return Ok(None);
    }
    if !to_c.clone().domain()?.is_equal(&to_s.clone().domain()?)? {
        return Ok(None);
    }
    // The element of each iteration, as `C` reads it and `S` writes it.
    let access = |stmt: usize, kind: AccessKind, array: ArrayId| -> Result<UnionMap<'c>> {
        let mut m = UnionMap::empty(ctx)?;
        for a in scop.statements[stmt]
            .accesses
            .iter()
            .filter(|a| a.kind == kind && a.array == array)
        {
            m = m.union(UnionMap::read(ctx, &a.relation)?)?;
        }
        m.intersect_domain(read_of(stmt)?)
    };
    let element = to_c.clone().apply_range(access(c, AccessKind::Read, x)?)?;
    let stored = to_s.clone().apply_range(access(s, AccessKind::Write, x)?)?;
    if !element.is_single_valued()? || !element.is_equal(&stored)? {
        return Ok(None);
    }
    // Order: C(o) before every other instance of the web in o, S(o) after.
    let c_sched = schedule_of(c)?;
    let s_sched = schedule_of(s)?;
    let before = |a: &UnionMap<'c>, b: &UnionMap<'c>| a.clone().lex_lt_union_map(b.clone());
    let c_then_s = to_c.clone().reverse()?.apply_range(to_s.clone())?;
    if !c_then_s.is_subset(&before(&c_sched, &s_sched)?)? {
        return Ok(None);
    }
    for &u in members.iter().filter(|&&u| u != c && u != s) {
        // Inside the first `depth` loops, whose iterators X's text names.
        if scop.statements[u].iterators.len() < depth {
            return Ok(None);
        }
        let u_sched = schedule_of(u)?;
        let in_o = iteration(u)?;
        if !in_o.clone().range()?.is_subset(&to_c.clone().domain()?)? {
            return Ok(None);
        }
        let c_then_u = in_o.clone().apply_range(to_c.clone())?.reverse()?;
        let u_then_s = in_o.apply_range(to_s.clone())?;
        if !c_then_u.is_subset(&before(&c_sched, &u_sched)?)?
            || !u_then_s.is_subset(&before(&u_sched, &s_sched)?)?
        {
            return Ok(None);
        }
    }
    // Every value of `t` in the web flows inside one iteration.
    let mut web_iteration = UnionMap::empty(ctx)?;
    for &m in members {
        web_iteration = web_iteration.union(iteration(m)?)?;
    }
    let crossing = flow
        .clone()
        .intersect_domain(web_iteration.clone().domain()?)?
        .apply_domain(web_iteration.clone())?
        .apply_range(web_iteration.clone())?
        .deltas()?;
    let zero = UnionSet::read(ctx, &format!("{{ [{}] }}", vec!["0"; 2 * depth].join(", ")))?;
    if !crossing.is_subset(&zero)? {
        return Ok(None);
    }
    // No other access to X(o) from C(o) (excluded) to S(o) (included, its store excepted).
    let mut others = UnionMap::empty(ctx)?;
    for (k, stmt) in scop.statements.iter().enumerate() {
        if k == c {
            continue;
        }
        for a in stmt.accesses.iter().filter(|a| a.array == x) {
            if k == s && a.kind == AccessKind::Write {
                continue;
            }
            others = others.union(UnionMap::read(ctx, &a.relation)?)?;
        }
    }
    let others = others.intersect_domain(sets.domains.clone())?;
    let touching = element.clone().apply_range(others.reverse()?)?;
    let after_c = to_c
        .clone()
        .apply_range(before(&c_sched, &sets.original)?)?;
    let up_to_s = to_s
        .clone()
        .apply_range(before(&sets.original, &s_sched)?.reverse()?)?
        .union(to_s.clone())?;
    if !touching
        .intersect(after_c)?
        .intersect(up_to_s)?
        .is_empty()?
    {
        return Ok(None);
    }
    // Fold: the web's occurrences of `t` become X's text and accesses; C goes, and S too when it
    // is left as `X = X;`.
    let mut out = scop.clone();
    for &m in members.iter().filter(|&&m| m != c) {
        let relation = iteration(m)?.apply_range(element.clone())?.to_str()?;
        let stmt = &mut out.statements[m];
        let mut body = Vec::with_capacity(stmt.body.len());
        for piece in std::mem::take(&mut stmt.body) {
            match piece {
                BodyPiece::Var(id) if id == t => body.extend(x_text.iter().cloned()),
                other => body.push(other),
            }
        }
        stmt.body = body;
        for a in stmt.accesses.iter_mut().filter(|a| a.array == t) {
            *a = Access {
                kind: a.kind,
                array: x,
                relation: relation.clone(),
            };
        }
    }
    let x_shape = shape(&x_text);
    let mut dropped = vec![c];
    if shape(&out.statements[s].body) == format!("{x_shape}={x_shape};") {
        dropped.push(s);
    }
    let lines: Vec<u32> = members
        .iter()
        .map(|&m| scop.statements[m].loc.line)
        .collect();
    let (first, last) = (lines.iter().min(), lines.iter().max());
    let text: String = x_text
        .iter()
        .map(|p| match p {
            BodyPiece::Text(s) => s.clone(),
            BodyPiece::Iter(k) => scop.statements[c].iterators[*k].clone(),
            BodyPiece::Var(id) => scop.array(*id).name.clone(),
        })
        .collect();
    let what = format!(
        "{} into {text} (lines {}-{})",
        scop.array(t).name,
        first.copied().unwrap_or(0),
        last.copied().unwrap_or(0)
    );
    Ok(Some((without(out, &dropped), what)))
}

/// `scop` without the statements `dropped`, the others numbered again in order (their names in
/// domains, schedules and accesses with them).
fn without(scop: Scop, dropped: &[usize]) -> Scop {
    let kept = scop
        .statements
        .iter()
        .enumerate()
        .filter(|(k, _)| !dropped.contains(k))
        .map(|(_, stmt)| stmt.clone())
        .collect();
    numbered(&scop, kept)
}

/// `scop` with `statements` instead of its own, numbered in order (their names in domains,
/// schedules and accesses with them).
pub(crate) fn numbered(scop: &Scop, statements: Vec<scop_ir::Statement>) -> Scop {
    let mut out = scop.clone();
    out.statements = statements
        .into_iter()
        .enumerate()
        .map(|(k, mut stmt)| {
            let new = StmtId(k as u32);
            let (old_name, new_name) = (format!("{}[", stmt.id), format!("{new}["));
            let rename = |s: &str| rename_tuple(s, &old_name, &new_name);
            stmt.domain = rename(&stmt.domain);
            stmt.schedule = rename(&stmt.schedule);
            for a in &mut stmt.accesses {
                a.relation = rename(&a.relation);
            }
            stmt.id = new;
            stmt
        })
        .collect();
    out
}

/// `text` with the tuple name `old` (`S3[`) replaced by `new` where it starts a name.
pub(crate) fn rename_tuple(text: &str, old: &str, new: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(old) {
        let starts_name = !rest[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        out.push_str(&rest[..at]);
        out.push_str(if starts_name { new } else { old });
        rest = &rest[at + old.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::statement_text as text;

    #[test]
    fn ludcmps_factorization_becomes_lus() {
        // ludcmp at MINI (N = 40): the two webs of `w` in the factorization fold into A[i][j]
        // (their loads go, and the upper part's store, which only copies back); the forward and
        // backward substitutions keep `w` (their loads and stores are different arrays).
        let scop = crate::polybench_scop("ludcmp");
        let folded = fold_element_scalars(&scop).unwrap().expect("w folds");
        assert_eq!(
            folded.webs,
            vec![
                "w into A[i][j] (lines 65-68)".to_string(),
                "w into A[i][j] (lines 71-74)".to_string()
            ]
        );
        let s = &folded.scop;
        assert_eq!(s.statements.len(), scop.statements.len() - 3);
        let texts: Vec<String> = s.statements.iter().map(|t| text(s, t)).collect();
        assert_eq!(texts[0], "A[i][j] -= A[i][k] * A[k][j];", "{texts:?}");
        assert_eq!(texts[1], "A[i][j] = A[i][j] / A[j][j];", "{texts:?}");
        assert_eq!(texts[2], "A[i][j] -= A[i][k] * A[k][j];", "{texts:?}");
        assert_eq!(texts[3], "w = b[i];", "{texts:?}");
        // Numbered again, names and accesses with them; the update reads and writes A[i][j].
        for (k, stmt) in s.statements.iter().enumerate() {
            assert_eq!(stmt.id, StmtId(k as u32));
            assert!(stmt.domain.contains(&format!("S{k}[")), "{}", stmt.domain);
            assert!(
                stmt.schedule.contains(&format!("S{k}[")),
                "{}",
                stmt.schedule
            );
        }
        let update = &s.statements[0];
        assert!(update.accesses.iter().all(|a| a.array != ArrayId(0)));
        assert_eq!(
            update
                .accesses
                .iter()
                .filter(|a| a.relation.contains("-> A[i, j]"))
                .count(),
            2,
            "{:?}",
            update.accesses
        );
        // Nothing left to fold.
        assert!(fold_element_scalars(s).unwrap().is_none());
    }

    #[test]
    fn a_tuple_name_is_renamed_where_it_starts_a_name() {
        assert_eq!(
            rename_tuple("{ S3[i] -> XS3[i]; S3[j] }", "S3[", "S1["),
            "{ S1[i] -> XS3[i]; S1[j] }"
        );
    }

    #[test]
    fn kernels_without_such_scalars_are_left_alone() {
        for kernel in ["gemm", "durbin", "gramschmidt", "symm", "deriche"] {
            let scop = crate::polybench_scop(kernel);
            assert!(
                fold_element_scalars(&scop).unwrap().is_none(),
                "{kernel} folded"
            );
        }
    }
}
