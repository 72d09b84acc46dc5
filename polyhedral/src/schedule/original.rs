//! The original order and the scheduler inside it: the statements grouped by their outermost
//! source loop (or top-level statement), each group's outer loop kept as a sequential band, or
//! joined with ISL's band when every dependence allows, for SCoPs too large to schedule whole
//! (see the parent module's doc), and the original order itself as a schedule tree.

use super::*;

/// A group of [`split_tree`] with at most this many statements is first scheduled as a whole (its
/// outer loop may then be distributed, or fused with its inner loops into a deeper band), and
/// inside its outer loop only when that fails. Correlation's groups (at most 5 statements) take
/// about 10 ms each and its last one gets a 2-D band instead of a 1-D one; ludcmp's first group
/// (6 statements, non-uniform dependences) takes over a second of ISL's time for the same nests
/// that its outer loop gives in 0.1 s.
pub(super) const MAX_WHOLE_GROUP: usize = 5;

/// Whether one of `stmts` writes a scalar, or an expanded one (an array whose rank is not that of
/// its declaration): a temporary whose values stay in one iteration of the group's outer loop.
/// Such a group keeps that loop outermost, so that the temporary stays private to each task
/// (`privatize`): scheduled whole, ludcmp's forward substitution separates `w = b[i]`, the sum and
/// `y[i] = w` into three nests, and `w` crosses them.
pub(super) fn writes_scalar(scop: &Scop, stmts: &[StmtId]) -> bool {
    stmts
        .iter()
        .filter_map(|&s| scop.statements.get(s.index()))
        .any(|stmt| {
            stmt.accesses.iter().any(|a| {
                a.kind == scop_ir::AccessKind::Write
                    && scop
                        .arrays
                        .get(a.array.0 as usize)
                        .is_some_and(|array| array.rank == 0 || array.rank != array.extents.len())
            })
        })
}

/// The CPU time [`split_tree`] gives ISL for a group scheduled as a whole; past it, the group is
/// scheduled inside its outer loop. A bound on the rare slow group, far above the usual 10 ms.
pub(super) const GROUP_TIME_LIMIT: std::time::Duration = std::time::Duration::from_millis(150);

/// ISL's scheduler inside each outermost loop of the original order: the statements grouped as in
/// [`original_tree`], each group's outermost original loop kept as a sequential band, and the ISL
/// scheduler run on the group with only the dependences inside one iteration of that loop (the
/// others are carried by it).
pub(super) fn split_tree<'c>(
    scop: &Scop,
    sets: &ScopSets<'c>,
    groups: &[(Vec<StmtId>, UnionSet<'c>)],
    deps: &UnionMap<'c>,
    loops: Option<&crate::reversal::Loops>,
    cfg: &ScheduleConfig,
) -> Result<std::result::Result<Schedule<'c>, String>> {
    let ctx = sets.domains.ctx();
    let (original, depth) = pad_to_common_depth(sets.original.clone())?;
    let mut parts = Vec::with_capacity(groups.len());
    for (stmts, domain) in groups {
        let domain = domain.clone();
        let shallowest = stmts
            .iter()
            .map(|&s| scop.statement(s).iterators.len())
            .min()
            .unwrap_or(0);
        let group_deps = deps
            .clone()
            .intersect_domain(domain.clone())?
            .intersect_range(domain.clone())?;
        let whole =
            match stmts.len() <= MAX_WHOLE_GROUP && shallowest > 0 && !writes_scalar(scop, stmts) {
                true => {
                    let time_limit = Some(
                        cfg.time_limit
                            .map_or(GROUP_TIME_LIMIT, |t| t.min(GROUP_TIME_LIMIT)),
                    );
                    scheduled_tree(
                        &domain,
                        &sets.context,
                        &group_deps,
                        None,
                        loops,
                        &ScheduleConfig {
                            time_limit,
                            ..cfg.clone()
                        },
                    )?
                    .ok()
                }
                false => None,
            };
        let group = if let Some(whole) = whole {
            whole
        } else if shallowest == 0 || depth < 2 {
            Schedule::from_domain(domain)?
        } else {
            let outer = original
                .clone()
                .intersect_domain(domain.clone())?
                .apply_range(UnionMap::read(ctx, &projection(depth, "", &[1]))?)?;
            let same = outer.clone().apply_range(outer.clone().reverse()?)?;
            match scheduled_tree(
                &domain,
                &sets.context,
                &group_deps.clone().intersect(same)?,
                None,
                loops,
                cfg,
            )? {
                Ok(inner) => under_outer_loop(inner, outer, domain.clone(), &group_deps)?,
                Err(why) => return Ok(Err(why)),
            }
        };
        parts.push(group);
    }
    Ok(Ok(in_sequence(parts, &sets.domains)?))
}

/// `parts` one after the other (a sequence node), or the schedule of `all` without a band when
/// there are none.
pub(super) fn in_sequence<'c>(
    parts: Vec<Schedule<'c>>,
    all: &UnionSet<'c>,
) -> Result<Schedule<'c>> {
    let mut tree: Option<Schedule<'c>> = None;
    for part in parts {
        tree = Some(match tree {
            None => part,
            Some(before) => before.sequence(part)?,
        });
    }
    match tree {
        Some(tree) => Ok(tree),
        None => Schedule::from_domain(all.clone()),
    }
}

/// `inner` (a group's schedule inside one iteration of its outer loop) below `outer` (that loop).
/// When `inner` starts with a band and every dependence of the group (`deps`, carried ones too)
/// has a non-negative distance on `outer` and on each member of that band, both become one
/// permutable band, so that tiling covers the outer loop too; otherwise `outer` is a band of its
/// own above `inner`. Either way the order is `outer`, then `inner`'s.
pub(super) fn under_outer_loop<'c>(
    inner: Schedule<'c>,
    outer: UnionMap<'c>,
    domain: UnionSet<'c>,
    deps: &UnionMap<'c>,
) -> Result<Schedule<'c>> {
    let ctx = inner.ctx();
    let root = inner.root()?;
    let top = if root.n_children()? > 0 {
        Some(root.child(0)?)
    } else {
        None
    };
    let members = match &top {
        Some(node) if node.kind()? == NodeKind::Band => node.band_n_member()?,
        _ => 0,
    };
    let (flat, depth) = pad_to_common_depth(
        root.subtree_schedule_union_map()?
            .intersect_domain(domain.clone())?,
    )?;
    drop(top);
    drop(root);
    let non_negative = |dim: &UnionMap<'c>| -> Result<bool> {
        let distances = deps
            .clone()
            .apply_domain(dim.clone())?
            .apply_range(dim.clone())?
            .deltas()?;
        distances.is_subset(&UnionSet::read(ctx, "{ [d] : d >= 0 }")?)
    };
    let member = |k: usize| -> Result<UnionMap<'c>> {
        flat.clone()
            .apply_range(UnionMap::read(ctx, &projection(depth, "", &[k]))?)
    };
    let mut permutable = members > 0 && non_negative(&outer)?;
    let mut k = 0;
    while permutable && k < members {
        permutable = non_negative(&member(k)?)?;
        k += 1;
    }
    if !permutable {
        return inner.insert_partial_schedule(outer);
    }
    // ISL, free to order the iterations of the outer loop (nothing inside one iteration orders
    // them), may give the band a member that is the outer loop again (deriche's column passes:
    // `[j, j, i]` once joined): constant inside one iteration, it adds nothing to the order, and
    // kept, it would be a second tile dimension on the diagonal of the first and a point loop
    // that the intra-tile order may move innermost in vain. Such members are left out.
    let same = outer.clone().apply_range(outer.clone().reverse()?)?;
    let zero = UnionSet::read(ctx, "{ [0] }")?;
    let mut band = Vec::new();
    for k in 0..members {
        let m = member(k)?;
        let moves = same
            .clone()
            .apply_domain(m.clone())?
            .apply_range(m)?
            .deltas()?;
        if !moves.is_subset(&zero)? {
            band.push(k);
        }
    }
    let rest: Vec<usize> = (members..depth).collect();
    let mut group = Schedule::from_domain(domain)?;
    if !rest.is_empty() {
        group = group.insert_partial_schedule(
            flat.clone()
                .apply_range(UnionMap::read(ctx, &projection(depth, "", &rest))?)?,
        )?;
    }
    let combined = outer.flat_range_product(
        flat.apply_range(UnionMap::read(ctx, &projection(depth, "", &band))?)?,
    )?;
    group = group.insert_partial_schedule(combined)?;
    group
        .root()?
        .child(0)?
        .band_set_permutable(true)?
        .schedule()
}

/// The statements of `scop` grouped by the first value of their original schedules, in that
/// order, with the group's instances.
pub(super) fn original_groups<'c>(
    scop: &Scop,
    sets: &ScopSets<'c>,
) -> Result<Vec<(Vec<StmtId>, UnionSet<'c>)>> {
    let ctx = sets.domains.ctx();
    let (original, depth) = pad_to_common_depth(sets.original.clone())?;
    let mut domain_of = BTreeMap::new();
    for set in sets.domains.sets()? {
        if let Some(stmt) = set.tuple_name().as_deref().and_then(stmt_of_name) {
            domain_of.insert(stmt, set);
        }
    }
    let mut groups: BTreeMap<i64, Vec<StmtId>> = BTreeMap::new();
    for map in original.maps()? {
        let Some(stmt) = map
            .tuple_name(crate::isl::Side::In)
            .as_deref()
            .and_then(stmt_of_name)
        else {
            continue;
        };
        let first = if depth == 0 {
            Some(0)
        } else {
            map.plain_fixed_out(0)?
        };
        let Some(first) = first else {
            return Err(Error::Unsupported(format!(
                "{stmt}: the original schedule `{}` does not start with a constant",
                scop.statement(stmt).schedule
            )));
        };
        groups.entry(first).or_default().push(stmt);
    }
    let mut out = Vec::new();
    for stmts in groups.into_values() {
        let mut domain = UnionSet::empty(ctx)?;
        for stmt in &stmts {
            if let Some(set) = domain_of.get(stmt) {
                domain = domain.union(UnionSet::from_set(set.clone())?)?;
            }
        }
        out.push((stmts, domain));
    }
    Ok(out)
}

/// The original order as a schedule tree (see the module documentation).
pub(super) fn original_tree<'c>(
    scop: &Scop,
    sets: &ScopSets<'c>,
    deps: &UnionMap<'c>,
) -> Result<Schedule<'c>> {
    let ctx = sets.domains.ctx();
    let (original, depth) = pad_to_common_depth(sets.original.clone())?;
    let mut parts = Vec::new();
    for (stmts, domain) in original_groups(scop, sets)? {
        let group_sched = original.clone().intersect_domain(domain.clone())?;
        let group_deps = deps
            .clone()
            .intersect_domain(domain.clone())?
            .intersect_range(domain.clone())?;
        let shallowest = stmts
            .iter()
            .map(|&s| scop.statement(s).iterators.len())
            .min()
            .unwrap_or(0);
        let max_band = shallowest.min(depth.saturating_sub(1) / 2);
        let mut band = 0;
        while band < max_band {
            let dim = group_sched.clone().apply_range(UnionMap::read(
                ctx,
                &projection(depth, "", &[2 * band + 1]),
            )?)?;
            let distances = group_deps
                .clone()
                .apply_domain(dim.clone())?
                .apply_range(dim)?
                .deltas()?;
            if !distances.is_subset(&UnionSet::read(ctx, "{ [d] : d >= 0 }")?)? {
                break;
            }
            band += 1;
        }
        let mut group = Schedule::from_domain(domain)?;
        if depth > 1 {
            let rest: Vec<usize> = (1..depth).collect();
            group = group.insert_partial_schedule(
                group_sched
                    .clone()
                    .apply_range(UnionMap::read(ctx, &projection(depth, "", &rest))?)?,
            )?;
        }
        if band > 0 {
            let loops: Vec<usize> = (0..band).map(|k| 2 * k + 1).collect();
            group = group.insert_partial_schedule(
                group_sched.apply_range(UnionMap::read(ctx, &projection(depth, "", &loops))?)?,
            )?;
            group = group
                .root()?
                .child(0)?
                .band_set_permutable(true)?
                .schedule()?;
        }
        parts.push(group);
    }
    in_sequence(parts, &sets.domains)
}
