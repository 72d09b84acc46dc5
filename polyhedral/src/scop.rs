//! The [`Scop`]'s ISL strings parsed into ISL objects of one context, with errors that name the
//! statement and the field that does not parse.

use crate::isl::{Ctx, Map, Set, Side, UnionMap, UnionSet};
use crate::{Error, Result};
use scop_ir::{AccessKind, Scop, Statement, StmtId};

/// The polyhedral description of a SCoP, every relation restricted to the statement domains and
/// to the context.
pub(crate) struct ScopSets<'c> {
    /// The parameter constraints ([`Scop::context`]).
    pub context: Set<'c>,
    /// All statement instances.
    pub domains: UnionSet<'c>,
    /// Statement instances to the elements they read.
    pub reads: UnionMap<'c>,
    /// Statement instances to the elements they write.
    pub writes: UnionMap<'c>,
    /// The original (2d+1) schedule, padded with zeros to the same number of dimensions.
    pub original: UnionMap<'c>,
}

impl<'c> ScopSets<'c> {
    pub fn parse(ctx: &'c Ctx, scop: &Scop) -> Result<Self> {
        let context = parse_context(ctx, scop)?;
        let mut domains = UnionSet::empty(ctx)?;
        let mut reads = UnionMap::empty(ctx)?;
        let mut writes = UnionMap::empty(ctx)?;
        let mut schedules = Vec::new();
        for (idx, stmt) in scop.statements.iter().enumerate() {
            let name = stmt.id.to_string();
            domains = domains.union(UnionSet::from_set(read_domain(ctx, idx, stmt)?)?)?;
            let schedule = Map::read(ctx, &stmt.schedule)
                .map_err(|e| field_error(&name, "schedule", &stmt.schedule, e))?;
            check_domain_name(&schedule, &name, "schedule", &stmt.schedule)?;
            schedules.push(schedule);
            for access in &stmt.accesses {
                let rel = Map::read(ctx, &access.relation)
                    .map_err(|e| field_error(&name, "access", &access.relation, e))?;
                check_domain_name(&rel, &name, "access", &access.relation)?;
                let rel = UnionMap::from_map(rel)?;
                match access.kind {
                    AccessKind::Read => reads = reads.union(rel)?,
                    AccessKind::Write => writes = writes.union(rel)?,
                }
            }
        }
        let depth = schedules
            .iter()
            .map(|s| s.n_dims(Side::Out))
            .collect::<Result<Vec<_>>>()?;
        let max_depth = depth.iter().copied().max().unwrap_or(0);
        let mut original = UnionMap::empty(ctx)?;
        for (schedule, depth) in schedules.into_iter().zip(depth) {
            original = original.union(UnionMap::from_map(
                schedule.pad_out_with_zeros(max_depth - depth)?,
            )?)?;
        }
        let domains = domains.intersect_params(context.clone())?.coalesce()?;
        let reads = reads.intersect_domain(domains.clone())?;
        let writes = writes.intersect_domain(domains.clone())?;
        let original = original.intersect_domain(domains.clone())?;
        Ok(ScopSets {
            context,
            domains,
            reads,
            writes,
            original,
        })
    }
}

/// The SCoP's parameter context as a parameter set.
pub(crate) fn parse_context<'c>(ctx: &'c Ctx, scop: &Scop) -> Result<Set<'c>> {
    let context = Set::read(ctx, &scop.context)
        .map_err(|e| field_error("the SCoP", "context", &scop.context, e))?;
    if context.n_dims()? != 0 {
        return Err(Error::InvalidInput(format!(
            "the SCoP context `{}` is not a parameter set",
            scop.context
        )));
    }
    Ok(context)
}

/// The statement a tuple name `S<k>` denotes.
pub(crate) fn stmt_of_name(name: &str) -> Option<StmtId> {
    name.strip_prefix('S')?.parse().ok().map(StmtId)
}

fn check_domain_name(map: &Map<'_>, name: &str, what: &str, text: &str) -> Result<()> {
    if map.tuple_name(Side::In).as_deref() == Some(name) {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "{name}: the {what} `{text}` does not start from the space {name}"
        )))
    }
}

fn field_error(owner: &str, what: &str, text: &str, err: Error) -> Error {
    match err {
        Error::Isl(msg) => {
            Error::InvalidInput(format!("{owner}: cannot parse the {what} `{text}`: {msg}"))
        }
        other => other,
    }
}

// The statement domains alone (`tile::tile_dependences`, `verify`).

/// [`ScopSets::domains`] without the rest of [`ScopSets::parse`]: the same sets, built by the same
/// operations in the same order, for a stage that needs no access or schedule (parsing those
/// was a fifth of `tile_dependences`' own time on adi and deriche; `verify` never used them).
pub(crate) fn parse_domains<'c>(ctx: &'c Ctx, scop: &Scop) -> Result<UnionSet<'c>> {
    let context = parse_context(ctx, scop)?;
    let mut domains = UnionSet::empty(ctx)?;
    for (idx, stmt) in scop.statements.iter().enumerate() {
        domains = domains.union(UnionSet::from_set(read_domain(ctx, idx, stmt)?)?)?;
    }
    domains.intersect_params(context)?.coalesce()
}

/// The domain of statement `idx`, which must be named `S<idx>`.
fn read_domain<'c>(ctx: &'c Ctx, idx: usize, stmt: &Statement) -> Result<Set<'c>> {
    let name = stmt.id.to_string();
    if stmt.id.index() != idx {
        return Err(Error::InvalidInput(format!(
            "statement {idx} has id {name}"
        )));
    }
    let domain =
        Set::read(ctx, &stmt.domain).map_err(|e| field_error(&name, "domain", &stmt.domain, e))?;
    if domain.tuple_name().as_deref() != Some(name.as_str()) {
        return Err(Error::InvalidInput(format!(
            "{name}: the domain `{}` is not in the space {name}",
            stmt.domain
        )));
    }
    Ok(domain)
}

#[cfg(test)]
mod parse_domains_tests {
    use super::*;
    use scop_ir::{Access, Array, ArrayId, Loc, Param, Span, Statement, Storage};

    /// A SCoP with parameters `[N, M]`, context `context` and one statement per domain (each
    /// reading and writing one array, scheduled in text order).
    fn scop(context: &str, domains: &[(&str, &str)]) -> Scop {
        let statements = domains
            .iter()
            .enumerate()
            .map(|(k, (iters, cond))| {
                let s = format!("S{k}");
                let access = |kind, index: &str| Access {
                    kind,
                    array: ArrayId(0),
                    relation: format!("[N, M] -> {{ {s}[{iters}] -> A[{index}] }}"),
                };
                let first = iters.split(',').next().unwrap_or("0").trim();
                Statement {
                    id: StmtId(k as u32),
                    iterators: iters.split(',').map(|i| i.trim().to_string()).collect(),
                    domain: format!("[N, M] -> {{ {s}[{iters}] : {cond} }}"),
                    schedule: format!("[N, M] -> {{ {s}[{iters}] -> [{k}, {iters}] }}"),
                    accesses: vec![
                        access(AccessKind::Read, first),
                        access(AccessKind::Write, first),
                    ],
                    body: Vec::new(),
                    span: Span { start: 0, end: 0 },
                    loc: Loc::default(),
                }
            })
            .collect();
        let param = |name: &str| Param {
            name: name.into(),
            c_type: "int".into(),
            storage: Storage::Local,
        };
        Scop {
            function: "kernel".into(),
            region: Span { start: 0, end: 0 },
            insert_at: 0,
            loc: Loc::default(),
            params: vec![param("N"), param("M")],
            context: context.into(),
            arrays: vec![Array {
                id: ArrayId(0),
                name: "A".into(),
                isl_name: "A".into(),
                elem_type: "double".into(),
                rank: 1,
                extents: vec![None],
                storage: Storage::Local,
                written: true,
            }],
            statements,
            macros: Vec::new(),
            undefined_macros: Vec::new(),
        }
    }

    /// The domains alone are the domains of the whole parse, to the text: a triangle and a
    /// rectangle under a context that cuts them, a union of two pieces that coalesce into one, a
    /// statement with an existentially quantified stride, and a statement empty under the context.
    #[test]
    fn the_domains_alone_are_those_of_the_whole_parse() {
        let ctx = Ctx::new().unwrap();
        let cases = [
            scop(
                "[N, M] -> { : N >= 10 and M >= N }",
                &[("i, j", "0 <= i < N and 0 <= j <= i"), ("i", "0 <= i < M")],
            ),
            scop(
                "[N, M] -> { : N >= 0 and M >= 0 }",
                &[("i", "0 <= i < 5 or 4 <= i < N"), ("i, j", "0 <= i, j < N")],
            ),
            scop(
                "[N, M] -> { : M > N >= 3 }",
                &[
                    ("i", "exists (k : i = 3k and 0 <= i < N)"),
                    ("t, i", "0 <= t < M and 1 <= i < N - 1"),
                    ("i", "N <= i < 2 and M > 0"),
                ],
            ),
        ];
        for scop in &cases {
            let whole = ScopSets::parse(&ctx, scop).unwrap().domains;
            let alone = parse_domains(&ctx, scop).unwrap();
            assert_eq!(alone.to_str().unwrap(), whole.to_str().unwrap());
            assert!(alone.is_equal(&whole).unwrap());
        }
    }
}
