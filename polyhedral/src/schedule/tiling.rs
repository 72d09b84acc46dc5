//! Tiling the nests of a schedule tree: each nest's outermost band cut into tiles (sizes given,
//! or chosen from the band's depth, footprint and work, `crate::tile_size`), tiles by phases
//! under a sequential loop (`inner_tiles`), bands coarsened to one tile where their members are
//! short, and the point loops put in the order `crate::point_order` chooses.

use super::*;

/// Finds the nests of `tree`, tiles their outermost bands, and flattens each into a [`Nest`].
/// With `order_once` false the point order is asked of each tiled schedule, as on the GPU, instead
/// of once per band ([`one_tile_order`]; tests compare both ways).
pub(super) fn tile_nests<'c>(
    scop: &Scop,
    tree: Schedule<'c>,
    cfg: &ScheduleConfig,
    from_scheduler: bool,
    deps: &UnionMap<'c>,
    order_once: bool,
) -> Result<(Schedule<'c>, Vec<Nest>)> {
    let tile_sizes = cfg.tile_sizes.as_deref();
    let parallel_outer = cfg.parallel_point_loops_outer;
    let root = tree.root()?;
    let mut paths = Vec::new();
    if root.n_children()? > 0 {
        collect_nests(&root.child(0)?, vec![0], &mut paths)?;
    }
    drop(root);
    let mut tree = tree;
    let mut nests = Vec::new();
    for path in &paths {
        let mut node = tree.root()?;
        for &pos in path {
            node = node.child(pos)?;
        }
        let domain = node.domain()?;
        if domain.is_empty()? {
            continue;
        }
        let mut statements: Vec<StmtId> = domain
            .sets()?
            .iter()
            .filter_map(|s| s.tuple_name().as_deref().and_then(stmt_of_name))
            .collect();
        statements.sort();
        statements.dedup();
        let mut sizes = Vec::new();
        let mut whole: Vec<usize> = Vec::new();
        let mut order: Option<Vec<usize>> = None;
        let mut inner = None;
        if let (Some(ts), false) = (tile_sizes, parallel_outer) {
            let size = (!ts.is_empty()).then(|| ts[ts.len().min(3) - 1]);
            inner = inner_tiles(scop, &node, &domain, deps, size, cfg.tile_footprint)?;
        }
        if let Some((_, inner_sizes)) = &inner {
            sizes = inner_sizes.clone();
        } else if let (NodeKind::Band, Some(ts)) = (node.kind()?, tile_sizes) {
            let n = node.band_n_member()?;
            let permutable = node.band_permutable()?;
            let members = if permutable {
                n
            } else if from_scheduler {
                1
            } else {
                0
            };
            if members > 0 {
                if members < n {
                    node = node.band_split(members)?;
                }
                // Off the GPU the order of the point loops does not depend on the tile sizes
                // (see `one_tile_order`): it is asked once, of the band as one tile.
                if order_once && !parallel_outer && members >= 2 {
                    order = Some(one_tile_order(scop, &node, &domain, members, deps, false)?);
                }
                sizes = if ts.is_empty() {
                    default_sizes(
                        scop,
                        &node,
                        &domain,
                        &statements,
                        members,
                        deps,
                        parallel_outer,
                        order.as_deref(),
                        cfg.tile_footprint,
                    )?
                } else {
                    (0..members).map(|i| ts[i.min(ts.len() - 1)]).collect()
                };
                if ts.is_empty() && !parallel_outer && !cfg.whole_carrying_members {
                    sizes = coarsen_band(
                        scop,
                        &node,
                        &domain,
                        &statements,
                        sizes,
                        deps,
                        cfg.tile_footprint,
                        cfg.fit_extents,
                        cfg.widen_products,
                        order.as_deref(),
                    )?;
                }
                if let Some((_, given)) = cfg
                    .nest_sizes
                    .iter()
                    .find(|(stmts, given)| *stmts == statements && given.len() == sizes.len())
                {
                    if ts.is_empty() && !parallel_outer && !cfg.whole_carrying_members {
                        sizes = given.clone();
                    }
                }
                if cfg.whole_carrying_members {
                    let band = node
                        .subtree_schedule_union_map()?
                        .intersect_domain(domain.clone())?;
                    let free = free_members(band, members, deps)?;
                    if free.contains(&true) {
                        whole = (0..members).filter(|&m| !free[m]).collect();
                    }
                }
                // A member not cut is tiled by 1 here and its tile coordinate set to 0 below.
                let isl_sizes: Vec<i64> = sizes
                    .iter()
                    .enumerate()
                    .map(|(m, &s)| if whole.contains(&m) { 1 } else { s })
                    .collect();
                for &m in &whole {
                    sizes[m] = crate::WHOLE_LOOP;
                }
                node = node.band_tile(&isl_sizes)?;
            }
        }
        let nest_id = nests.len();
        let phases = inner.is_some();
        let flat = match inner.take() {
            Some((flat, _)) => flat,
            None => node
                .subtree_schedule_union_map()?
                .intersect_domain(domain.clone())?,
        };
        let (mut flat, depth) = pad_to_common_depth(flat)?;
        if !whole.is_empty() {
            // One tile along the members not cut, whatever the parameters.
            let o = names("o", depth);
            let zeroed: Vec<String> = o
                .iter()
                .enumerate()
                .map(|(d, v)| {
                    if whole.contains(&d) {
                        "0".to_string()
                    } else {
                        v.clone()
                    }
                })
                .collect();
            let map = format!("{{ {} -> {} }}", tuple("", &o), tuple("", &zeroed));
            flat = flat.apply_range(UnionMap::read(tree.ctx(), &map)?)?;
        }
        let mut row_line = None;
        if !phases && cfg.align_nests.contains(&statements) {
            if let Some((shifted, line)) =
                crate::align::align_tiles(scop, &flat, deps, depth, &sizes, nest_id)?
            {
                flat = shifted;
                row_line = Some(line);
            }
        }
        let row_moves = crate::point_order::row_moves(tree.ctx(), scop, &flat, depth, sizes.len())?;
        let mut spawn_order = if phases || parallel_outer {
            Vec::new()
        } else {
            crate::point_order::spawn_order(&row_moves)
        };
        if let Some(&inner) = spawn_order.last() {
            if !sweep_fits(scop, &flat, depth, &sizes, inner, cfg.l2_bytes)? {
                spawn_order.clear();
            }
        }
        let flat = reorder_points(scop, flat, depth, sizes.len(), deps, parallel_outer, order)?;
        let keep: Vec<usize> = (0..sizes.len()).collect();
        let name = format!("N{nest_id}");
        let tile_map = flat
            .clone()
            .apply_range(UnionMap::read(
                tree.ctx(),
                &projection(depth, &name, &keep),
            )?)?
            .coalesce()?;
        let tile_domain = tile_map.clone().range()?.coalesce()?;
        nests.push(Nest {
            statements,
            tile_sizes: sizes,
            schedule: flat.coalesce()?.to_str()?,
            tile_map: tile_map.to_str()?,
            tile_domain: tile_domain.to_str()?,
            row_line,
            spawn_order,
            row_moves,
        });
        tree = node.schedule()?;
    }
    Ok((tree, nests))
}

/// The share of the L2 that one sweep of tiles along the innermost tile loop of a spawn order
/// may touch ([`sweep_fits`]).
pub(super) const SWEEP_L2_SHARE: f64 = 0.75;

/// Whether the tiles of a sweep along member `inner` (every tile along it, the other tile
/// coordinates fixed) touch at most [`SWEEP_L2_SHARE`] of `l2_bytes`, as
/// [`crate::cost::BandTiles::boxes`] counts a tile's reused data, at the cost model's parameter
/// values; `flat` is a tiled nest's flat schedule (`sizes.len()` tile dimensions, then the band's
/// members). A spawn order that runs such sweeps one after the other reuses what a sweep keeps
/// (gemm's `(i, k, j)`: the row of `C`'s tiles, across the steps of `k`) only if it stays in the
/// core's cache: lu at LARGE (rows of 2 000 doubles: two rows of tiles, 2 MB, against 2 MiB of
/// L2) ran 0.95x on one thread and 0.97x on two spawned `(i, k, j)`, where gemm (1.2 MB) ran
/// 1.05x. False where the sweep cannot be estimated.
fn sweep_fits(
    scop: &Scop,
    flat: &UnionMap<'_>,
    depth: usize,
    sizes: &[i64],
    inner: usize,
    l2_bytes: u64,
) -> Result<bool> {
    let p = sizes.len();
    let members: Vec<usize> = (p..depth).collect();
    let band = flat.clone().apply_range(UnionMap::read(
        flat.ctx(),
        &projection(depth, "", &members),
    )?)?;
    let Some(tiles) = crate::cost::BandTiles::new(scop, &band, p)? else {
        return Ok(false);
    };
    let extents = tiles.extents().to_vec();
    if extents.len() < p {
        return Ok(false);
    }
    let sweep: Vec<i64> = (0..p)
        .map(|m| {
            if m == inner {
                extents[m]
            } else {
                sizes[m].min(extents[m])
            }
        })
        .collect();
    Ok(tiles.boxes(&sweep)?.reused_bytes <= SWEEP_L2_SHARE * l2_bytes as f64)
}

/// Instances of the loops below a sequential outer loop per outer iteration, at least, for
/// [`inner_tiles`] to cut them into tasks (a few tens of microseconds of work per phase and
/// tile count).
pub(super) const MIN_INNER_INSTANCES: f64 = 65536.0;

/// Tiles under a sequential loop: when the nest at `node` is a one-member band whose member
/// carries a dependence (its tiles would be a chain: adi's time loop, floyd-warshall's `k`) over
/// a sequence (or set) of children or over one band, and a child is a band whose first member
/// of its own blocks well within one iteration of the outer loop (adi's sweeps, parallel over
/// `i`; floyd-warshall's rows, which depend on each other only through row `k`), the nest's tiles
/// are the phases `(t, s, ⌊i / T⌋)`: one outer iteration, one child (`s` is 0 under a band), a
/// block of `T` of that member (children that are not such bands are one tile each). The flat
/// schedule is `[t, s, ⌊i/T⌋, t, s, i, ..]` with tile sizes `[1, 1, T]`.
///
/// A member blocks well when no dependence within one outer iteration and one child goes back
/// along it (so that the blocks' order, then the untiled schedule inside a block, is legal) and
/// the dependences between its blocks make paths of at most two steps (so that a phase's blocks
/// run as at most three waves: floyd-warshall's rows above `k`, the block of row `k`, the rows
/// below it; a recurrence along the member would be a chain of blocks and is not cut). Only
/// where a phase holds at least [`MIN_INNER_INSTANCES`] instances with the parameters known (a
/// phase of durbin's inner loops is a few thousand instances: cutting those would only add
/// tasks). `size` is the user's tile size for the member; the default is the band's for one
/// member.
pub(super) fn inner_tiles<'c>(
    scop: &Scop,
    node: &ScheduleNode<'c>,
    domain: &UnionSet<'c>,
    deps: &UnionMap<'c>,
    size: Option<i64>,
    budget: u64,
) -> Result<Option<(UnionMap<'c>, Vec<i64>)>> {
    if node.kind()? != NodeKind::Band || node.band_n_member()? != 1 || node.n_children()? != 1 {
        return Ok(None);
    }
    let below = node.child(0)?;
    let band = node
        .subtree_schedule_union_map()?
        .intersect_domain(domain.clone())?;
    if free_members(band.clone(), 1, deps)?[0] {
        return Ok(None); // the outer loop is parallel: its own tiles are
    }
    let (flat, depth) = pad_to_common_depth(band)?;
    let ctx = flat.ctx();
    let o = names("o", depth);
    // Each child: its part of the flat schedule and its subtree, with the flat schedule's
    // second dimension the child's position.
    let (depth, children) = match below.kind()? {
        NodeKind::Sequence | NodeKind::Set => {
            let mut children = Vec::new();
            for pos in 0..below.n_children()? {
                let filter = below.child(pos)?;
                if filter.n_children()? != 1 {
                    return Ok(None);
                }
                let part = flat.clone().intersect_domain(filter.domain()?)?;
                children.push((part, filter.child(0)?));
            }
            (depth, children)
        }
        NodeKind::Band => {
            let mut to = vec![o[0].clone(), "0".to_string()];
            to.extend(o[1..].iter().cloned());
            let map = format!("{{ {} -> {} }}", tuple("", &o), tuple("", &to));
            let flat = flat.apply_range(UnionMap::read(ctx, &map)?)?;
            (depth + 1, vec![(flat, below)])
        }
        _ => return Ok(None),
    };
    if depth < 3 {
        return Ok(None);
    }
    let o = names("o", depth);
    let o2: Vec<String> = o.iter().map(|v| format!("{v}_")).collect();
    let same_outer = UnionMap::read(
        ctx,
        &format!(
            "{{ {} -> {} : {} = {} and {} = {} }}",
            tuple("", &o),
            tuple("", &o2),
            o2[0],
            o[0],
            o2[1],
            o[1]
        ),
    )?;
    let mut out = UnionMap::empty(ctx)?;
    let mut any = false;
    // The block size reported for the third tile dimension: the largest one used (children's
    // defaults may differ).
    let mut used = 1;
    for (part, child) in children {
        // The child band's first member that is a loop of its own (ISL's band under a kept
        // outer loop repeats it first: adi's sweeps are `(t, i)` bands under `t`).
        let member = match child.kind()? {
            NodeKind::Band => own_member(&part, 2, (2 + child.band_n_member()?).min(depth))?,
            _ => None,
        };
        let mut tiled = None;
        if let Some(d) = member {
            let within = deps
                .clone()
                .apply_domain(part.clone())?
                .apply_range(part.clone())?
                .intersect(same_outer.clone())?;
            let back = UnionSet::read(ctx, &format!("{{ {} : {} < 0 }}", tuple("", &o), o[d]))?;
            if within.clone().deltas()?.intersect(back)?.is_empty()?
                && inner_instances(&part, depth)? >= MIN_INNER_INSTANCES
            {
                let stmts: Vec<StmtId> = part
                    .clone()
                    .domain()?
                    .sets()?
                    .iter()
                    .filter_map(|s| s.tuple_name().as_deref().and_then(stmt_of_name))
                    .collect();
                let t = size.unwrap_or_else(|| {
                    crate::tile_size::default_tile_size_within(scop, &stmts, 1, budget)
                });
                if blocks_in_three_waves(&within, &o, d, t)? {
                    tiled = Some(t);
                }
            }
        }
        let tile = match (tiled, member) {
            (Some(t), Some(d)) => {
                any = true;
                used = used.max(t);
                format!("floor({} / {t})", o[d])
            }
            _ => "0".to_string(),
        };
        let mut to: Vec<String> = vec![o[0].clone(), o[1].clone(), tile];
        to.extend(o.iter().cloned());
        let map = format!("{{ {} -> {} }}", tuple("", &o), tuple("", &to));
        out = out.union(part.apply_range(UnionMap::read(ctx, &map)?)?)?;
    }
    if !any {
        return Ok(None);
    }
    let sizes = vec![1, 1, used];
    Ok(Some((out, sizes)))
}

/// Whether the dependences `within` one phase (between points of a flat schedule over `o`)
/// relate its blocks `⌊o[d] / t⌋` by paths of at most two steps: the blocks then run as at most
/// three waves, however many there are.
pub(super) fn blocks_in_three_waves(
    within: &UnionMap<'_>,
    o: &[String],
    d: usize,
    t: i64,
) -> Result<bool> {
    let ctx = within.ctx();
    let blocks = format!(
        "{{ {} -> [{}, {}, floor({} / {t})] }}",
        tuple("", o),
        o[0],
        o[1],
        o[d]
    );
    let blocks = UnionMap::read(ctx, &blocks)?;
    let between = within
        .clone()
        .apply_domain(blocks.clone())?
        .apply_range(blocks)?
        .subtract(UnionMap::read(ctx, "{ [b0, b1, b2] -> [b0, b1, b2] }")?)?
        .coalesce()?;
    let three = between
        .clone()
        .apply_range(between.clone())?
        .apply_range(between)?;
    three.is_empty()
}

/// The first dimension in `from .. to` of `part` (a flat schedule) that is a loop of its own:
/// the dimensions before it each take one value in an iteration of the first two dimensions (a
/// copy of dimension 0, a function of it such as nussinov's `1 + i` under `-i`, or a constant),
/// so that ordering by a block of the loop first keeps the order of the instances within one
/// iteration of the first two dimensions. `None` when there is no such dimension.
pub(super) fn own_member(part: &UnionMap<'_>, from: usize, to: usize) -> Result<Option<usize>> {
    let range = part.clone().range()?;
    let ctx = range.ctx();
    let depth = match range.sets()?.first() {
        Some(set) => set.n_dims()?,
        None => return Ok(None),
    };
    let o = names("o", depth);
    let phase = UnionMap::read(
        ctx,
        &format!("{{ {} -> [{}, {}] }}", tuple("", &o), o[0], o[1]),
    )?
    .intersect_domain(range)?
    .reverse()?;
    for d in from..to {
        let value = UnionMap::read(ctx, &format!("{{ {} -> [{}] }}", tuple("", &o), o[d]))?;
        if phase.clone().apply_range(value)?.is_single_valued()? {
            continue;
        }
        return Ok(Some(d));
    }
    Ok(None)
}

/// The number of instances of `part` (a flat schedule of `depth` dimensions) in one iteration
/// of its first two dimensions, estimated as the product of the extents of the others (`0` when
/// an extent is not known).
pub(super) fn inner_instances(part: &UnionMap<'_>, depth: usize) -> Result<f64> {
    let mut most = 0.0f64;
    for set in part.clone().range()?.coalesce()?.sets()? {
        let mut n = 1.0f64;
        for d in 2..depth {
            match set.dim_range(d)? {
                Some((lo, hi)) => n *= (hi - lo + 1) as f64,
                None => return Ok(0.0),
            }
        }
        most = most.max(n);
    }
    Ok(most)
}

/// The default tile sizes of the `p`-member band at `node` (not yet tiled) over `statements`:
/// [`default_tile_size`] for every member, with the member that [`point_order`] puts innermost
/// lengthened by [`lengthen_inner`] when that size is short, or, in a short band with a time
/// loop ([`time_loops`]) off the GPU, one tile over its whole range (see `tile_size`'s module
/// doc: whole rows under a time loop). `order` is the band's point order
/// when the caller has it; otherwise it is asked of the band as one tile, and only for such
/// short sizes.
#[allow(clippy::too_many_arguments)]
pub(super) fn default_sizes<'c>(
    scop: &Scop,
    node: &ScheduleNode<'c>,
    domain: &UnionSet<'c>,
    statements: &[StmtId],
    p: usize,
    deps: &UnionMap<'c>,
    parallel_outer: bool,
    order: Option<&[usize]>,
    budget: u64,
) -> Result<Vec<i64>> {
    let size = default_tile_size_within(scop, statements, p, budget);
    let small = size.saturating_pow(p as u32) < MIN_TILE_WORK && time_tiled(scop, statements, p);
    // The member run innermost in a tile, and the band's instances (asked for only by the rules
    // below that need them).
    let inner_member = || -> Result<usize> {
        let order = match order {
            Some(order) => order.to_vec(),
            None => one_tile_order(scop, node, domain, p, deps, parallel_outer)?,
        };
        Ok(order.last().copied().unwrap_or(p - 1))
    };
    let band_of = || -> Result<UnionMap<'c>> {
        node.subtree_schedule_union_map()?
            .intersect_domain(domain.clone())
    };
    if size >= SHORT_INNER && !small {
        // A stencil under a time loop: the band holds every loop of its statements, and those
        // with all of them (fdtd-2d's boundary row `ey[0][j] = _fict_[t]` has fewer) have a loop
        // that no subscript follows.
        let deepest: Vec<StmtId> = statements
            .iter()
            .copied()
            .filter(|s| {
                scop.statements
                    .get(s.index())
                    .is_some_and(|st| st.iterators.len() == p)
            })
            .collect();
        let in_band = statements.iter().all(|s| {
            scop.statements
                .get(s.index())
                .is_some_and(|st| st.iterators.len() <= p)
        });
        if p >= 3 && !parallel_outer && in_band && time_loops(node.ctx(), scop, &deepest, p)? {
            let inner = inner_member()?;
            let band = band_of()?;
            let along = band_rows(scop, &band, p)?.and_then(|b| b.ranges.get(inner).copied());
            let mut sizes = vec![size; p];
            let longer = TIME_ROWS * size;
            if along
                .is_some_and(|(lo, hi)| (hi - lo + 1) / longer >= crate::tile_size::MIN_TILES_ALONG)
                && !recurrence_along(band, p, inner, deps)?
            {
                sizes[inner] = longer;
            }
            return Ok(sizes);
        }
        return Ok(vec![size; p]);
    }
    let inner = inner_member()?;
    // Off the GPU only: there the members' sizes shape the thread blocks.
    if size < SHORT_INNER
        && p >= 3
        && !parallel_outer
        && time_loops(node.ctx(), scop, statements, p)?
    {
        let shape = band_rows(scop, &band_of()?, p)?;
        let whole = shape.as_ref().and_then(|b| b.ranges.get(inner).copied());
        if let (Some(whole), Some(BandRows { rows, .. })) = (whole.and_then(one_tile_over), shape) {
            // One tile's rows, with `outer` values along each other member.
            let footprint = |outer: u64| -> u64 {
                rows.iter()
                    .map(|&(rank, bytes, length)| {
                        let others = rank.min(p).saturating_sub(1) as u32;
                        bytes
                            .saturating_mul(outer.saturating_pow(others))
                            .saturating_mul(length.max(1) as u64)
                    })
                    .fold(0u64, u64::saturating_add)
            };
            let mut outer = size;
            while outer > MIN_WHOLE_ROW_OUTER && footprint(outer as u64) > ROWS_BUDGET * budget {
                outer /= 2;
            }
            if footprint(outer as u64) <= ROWS_BUDGET * budget {
                let mut sizes = vec![outer; p];
                sizes[inner] = whole;
                return Ok(sizes);
            }
        }
    }
    let sizes = lengthen_inner_within(scop, statements, size, p, inner, budget);
    Ok(lengthen_time_tiled(scop, statements, sizes, inner, budget))
}

/// Whether each of `statements` has `depth` iterators, one of which no subscript of its accesses
/// depends on (a time loop: stepping it alone reaches the same elements).
pub(super) fn time_loops(
    ctx: &Ctx,
    scop: &Scop,
    statements: &[StmtId],
    depth: usize,
) -> Result<bool> {
    for id in statements {
        let Some(stmt) = scop.statements.get(id.index()) else {
            return Ok(false);
        };
        let n = stmt.iterators.len();
        if n != depth {
            return Ok(false);
        }
        let name = format!("S{}", id.index());
        let x = names("x", n);
        let mut timeless = vec![true; n];
        for access in &stmt.accesses {
            let reached = UnionMap::read(ctx, &access.relation)?;
            for (k, timeless) in timeless.iter_mut().enumerate().filter(|(_, t)| **t) {
                // Instances that differ in iterator `k` alone, mapped to the elements they reach.
                let y: Vec<String> = (0..n)
                    .map(|d| {
                        if d == k {
                            "y".to_string()
                        } else {
                            x[d].clone()
                        }
                    })
                    .collect();
                let step = UnionMap::read(
                    ctx,
                    &format!("{{ {} -> {} }}", tuple(&name, &x), tuple(&name, &y)),
                )?;
                let deltas = step
                    .apply_domain(reached.clone())?
                    .apply_range(reached.clone())?
                    .deltas()?;
                for set in deltas.sets()? {
                    for d in 0..set.n_dims()? {
                        if set.dim_range(d)? != Some((0, 0)) {
                            *timeless = false;
                        }
                    }
                }
            }
        }
        if !timeless.contains(&true) {
            return Ok(false);
        }
    }
    Ok(!statements.is_empty())
}

/// How many times the cube size a time-tiled stencil's innermost member takes, where that leaves
/// [`crate::tile_size::MIN_TILES_ALONG`] tiles along it (`default_sizes`, a band of three or more members whose
/// cube size is not short). Skewed by the time loop, each row of a tile starts at another offset
/// against the vectors and cache lines, and the vector loop over it enters and leaves once per
/// row: jacobi-2d's and fdtd-2d's rows of 64 (`64, 64, 64`) ran slower than rows of 128.
/// Measured at LARGE on the AMD EPYC (Zen 5), medians of 3 to 5 in rounds, one thread / two:
/// jacobi-2d 0.390 -> 0.353 s / 0.205 -> 0.184, fdtd-2d 0.328 -> 0.296 / 0.169 -> 0.149,
/// seidel-2d level (2.10 -> 2.12 s on two; its rows carry its dependences); `32, 64, 128` within
/// 2% of `64, 64, 128`, `32, 64, 256` 0.388 s and `128, 64, 64` 0.430 (jacobi-2d, one thread).
pub(super) const TIME_ROWS: i64 = 2;

/// The largest tile [`one_tile_over`] gives a member: 2^16 values.
pub(super) const MAX_WHOLE_ROW_TILE: i64 = 1 << 16;
/// The smallest size the other members of a band with whole rows take.
pub(super) const MIN_WHOLE_ROW_OUTER: i64 = 4;
/// How many times the tile budget one tile's whole rows may take: the budget is a quarter of L2
/// (`cost::Machine::tile_footprint`), and whole rows are laid out in runs the prefetcher follows.
pub(super) const ROWS_BUDGET: u64 = 4;

/// The smallest power of two, at least [`MIN_INNER`], whose tiles put every value of
/// `(lo, hi)` in one tile (`floor(lo / t) = floor(hi / t)`); `None` above
/// [`MAX_WHOLE_ROW_TILE`].
pub(super) fn one_tile_over((lo, hi): (i64, i64)) -> Option<i64> {
    let mut t = MIN_INNER;
    while t <= MAX_WHOLE_ROW_TILE {
        if lo.div_euclid(t) == hi.div_euclid(t) {
            return Some(t);
        }
        t *= 2;
    }
    None
}

/// The default `sizes` of the band at `node` (not yet tiled) over `statements`, changed where
/// its tiles are small or read streamed arrays in short runs (see `tile_size`'s module doc):
/// only when the band holds every loop of its statements (so that the product of the sizes
/// bounds a tile's instances). Small tiles get longer along the members that carry a dependence
/// ([`coarsen_carried`]) when the band also has members that carry nothing (whose tiles stay as
/// many, so the parallelism stays); short runs get the member along them lengthened and another
/// shortened ([`lengthen_runs`]). Every change must keep one tile's reused data
/// ([`BandTiles::boxes`]) within `budget` bytes, or within what the default sizes already take if
/// that is more.
#[allow(clippy::too_many_arguments)]
pub(super) fn coarsen_band<'c>(
    scop: &Scop,
    node: &ScheduleNode<'c>,
    domain: &UnionSet<'c>,
    statements: &[StmtId],
    sizes: Vec<i64>,
    deps: &UnionMap<'c>,
    budget: u64,
    fit: bool,
    widen: bool,
    order: Option<&[usize]>,
) -> Result<Vec<i64>> {
    let members = sizes.len();
    let whole_band = statements.iter().all(|s| {
        scop.statements
            .get(s.index())
            .is_some_and(|st| st.iterators.len() <= members)
    });
    if members < 2 || !whole_band {
        return Ok(sizes);
    }
    let band = node
        .subtree_schedule_union_map()?
        .intersect_domain(domain.clone())?;
    let Some(tiles) = BandTiles::new(scop, &band, members)? else {
        return Ok(sizes);
    };
    let band_of = || band.clone();
    let start = tiles.boxes(&sizes)?;
    let work = tile_work(&sizes);
    let short_run = start.shortest_run.is_some_and(|r| r < MIN_RUN_BYTES);
    let mut sizes = sizes;
    if work < MIN_TASK_WORK || short_run {
        let free = free_members(band_of(), members, deps)?;
        let limit = start.reused_bytes.max(budget as f64);
        let carried: Vec<usize> = (0..members).filter(|&m| !free[m]).collect();
        if work < MIN_TASK_WORK && !carried.is_empty() && carried.len() < members {
            sizes = coarsen_carried(sizes, &carried, |longer| {
                Ok(tiles.boxes(longer)?.reused_bytes <= limit)
            })?;
        }
        sizes = lengthen_runs(sizes, &free, tiles.extents(), |other| {
            let boxes = tiles.boxes(other)?;
            Ok((boxes.reused_bytes <= limit)
                .then_some(boxes.shortest_run)
                .flatten())
        })?;
        if carried.is_empty() && widen && members >= 3 && tiles.rectangular() {
            // A pass over a batch of matrices (doitgen's zeroing and copying of `sum[r][q][p]`)
            // tiles them one at a time, as a batch of products does.
            let batch = members - 2;
            sizes = crate::tile_size::batch_products(sizes, batch);
            let along = crate::tile_size::tiles_along(&sizes[..batch], &tiles.extents()[..batch]);
            sizes =
                crate::tile_size::coarsen_batch(sizes, batch, tiles.extents(), along, |longer| {
                    Ok(tiles.boxes(longer)?.reused_bytes <= limit)
                })?;
        } else if carried.is_empty() {
            sizes = coarsen_free(sizes, tiles.extents(), |longer| {
                Ok(tiles.boxes(longer)?.reused_bytes <= limit)
            })?;
        }
    }
    if widen && members >= 3 && tiles.rectangular() {
        let mut free = free_members(band_of(), members, deps)?;
        // A deeper band is a batch of products (doitgen's `r` around its `q`, `p` and `s`):
        // the members outside the last three, all free, take one value per tile and the
        // product's three the work (`tile_size::batch_products`).
        let batch = members - 3;
        let product = free.iter().filter(|&&f| !f).count() == 1 && free[..batch].iter().all(|&f| f);
        if product && batch > 0 {
            sizes = crate::tile_size::batch_products(sizes, batch);
            free[..batch].fill(false);
        }
        if product {
            let along = crate::tile_size::tiles_along(&sizes[..batch], &tiles.extents()[..batch]);
            sizes =
                crate::tile_size::widen_products(sizes, &free, tiles.extents(), along, |wider| {
                    Ok(tiles.boxes(wider)?.reused_bytes
                        <= (crate::tile_size::PRODUCT_BUDGETS * budget) as f64)
                })?;
            // The lanes run innermost in each tile; the rows are the other free member.
            let order = match order {
                Some(order) => order.to_vec(),
                None => one_tile_order(scop, node, domain, members, deps, false)?,
            };
            let lanes = order.last().copied().filter(|&m| free[m]);
            let rows = (batch..members).find(|&m| free[m] && Some(m) != lanes);
            let reduction = (batch..members).find(|&m| !free[m]);
            if let (Some(_), Some(rows), Some(reduction)) = (lanes, rows, reduction) {
                let pack = (crate::kernel::MAX_PACK_BYTES as f64).min(budget as f64);
                sizes = crate::tile_size::deepen_products(
                    sizes,
                    rows,
                    reduction,
                    tiles.extents(),
                    along,
                    pack,
                    |deeper| tiles.panel_bytes(deeper, rows),
                )?;
            }
        }
    }
    if !fit {
        return Ok(sizes);
    }
    fit_extents(sizes, &tiles, (ROWS_BUDGET * budget) as f64, || {
        free_members(band_of(), members, deps)
    })
}

/// A member whose values make at most this many tiles, the last one partial, may become one
/// tile ([`fit_extents`]).
pub(crate) const MAX_FIT_TILES: i64 = 3;

/// The values of a block of the widest vector kernel's lanes (`kernel::widest_block`) of
/// elements of `elem` bytes, which also holds whole blocks of any kernel's rows: what a member
/// [`fit_extents`] makes one tile must be made of.
pub(crate) fn fit_block(elem: u64) -> i64 {
    crate::kernel::widest_block(elem as i64).max(1)
}

/// Whether a member of `e` values in tiles of `t` may become one tile ([`fit_extents`], and
/// `spread::may_fit` before it): 2 to [`MAX_FIT_TILES`] tiles, the last one partial, and the
/// values whole blocks of `block` lanes ([`fit_block`]).
pub(crate) fn fits_in_one_tile(e: i64, t: i64, block: i64) -> bool {
    t > 0
        && t != crate::WHOLE_LOOP
        && t < e
        && e <= MAX_FIT_TILES * t
        && e % block == 0
        && e % t != 0
}

/// The least share of a member's values in its partial tile for [`fit_extents`] to make the
/// member one tile.
pub(super) const MIN_PARTIAL_SHARE: f64 = 0.125;

/// `sizes` with each member that carries no dependence (`free`, asked only when some member
/// qualifies otherwise) and whose values make at most [`MAX_FIT_TILES`] tiles, the last one
/// partial and holding [`MIN_PARTIAL_SHARE`] of them at least, made one tile over all its
/// values, where those are whole blocks of the widest vector kernel's lanes (a tile of 190
/// lanes would end inside one, and its kernel would be lost: 2mm at MEDIUM) and one tile's
/// reused data stays within `limit` bytes (or what `sizes` already take); members whose partial
/// tile holds the larger share of their values first. Only where the extents are those of every
/// run (a SCoP without parameters). Members that carry a dependence keep their tiles: those
/// make the wavefronts (jacobi-1d's time and skewed space, seidel-2d's time) and the chains
/// whose tiles overlap. Whether the tile graph keeps enough parallelism is `spread_tiles`'
/// question, which turns this on (`ScheduleConfig::fit_extents`).
///
/// Why: a partial tile runs the general code (bounds on every loop, no register kernel where
/// it is cut along the vectors' lanes or along two members), and where a member has few tiles
/// that is a large share of the work. doitgen at LARGE (`p` and `s` over 160 values, tiles of
/// 64): a fifth of its product ran in tiles partial along `p`, and 1/25 in corners partial
/// along `p` and `s`; with `8, 8, 160, 160` its product ran 43 -> 31 ms on one thread, the
/// program 37 -> 19-20 ms on two (medians of 7, 2-core Xeon), with `8, 8, 160, 64` 21.5 ms.
fn fit_extents(
    sizes: Vec<i64>,
    tiles: &BandTiles<'_>,
    limit: f64,
    free: impl FnOnce() -> Result<Vec<bool>>,
) -> Result<Vec<i64>> {
    if !tiles.constant_extents() {
        return Ok(sizes);
    }
    let extents = tiles.extents().to_vec();
    let block = fit_block(tiles.smallest_element());
    let partial_share =
        |m: usize, sizes: &[i64]| -> f64 { (extents[m] % sizes[m]) as f64 / extents[m] as f64 };
    let mut members: Vec<usize> = (0..sizes.len().min(extents.len()))
        .filter(|&m| {
            fits_in_one_tile(extents[m], sizes[m], block)
                && partial_share(m, &sizes) >= MIN_PARTIAL_SHARE
        })
        .collect();
    if members.is_empty() {
        return Ok(sizes);
    }
    let free = free()?;
    members.retain(|&m| free.get(m) == Some(&true));
    members.sort_by(|&a, &b| partial_share(b, &sizes).total_cmp(&partial_share(a, &sizes)));
    let limit = limit.max(tiles.boxes(&sizes)?.reused_bytes);
    let mut sizes = sizes;
    for m in members {
        let mut fitted = sizes.clone();
        fitted[m] = extents[m];
        if tiles.boxes(&fitted)?.reused_bytes <= limit {
            sizes = fitted;
        }
    }
    Ok(sizes)
}

/// The order [`point_order`] gives the point loops of the `p`-member band at `node` (not yet
/// tiled), asked of the band as one tile (tile dimensions 0).
///
/// Off the GPU (`parallel_outer` false) this is also the order of the tiled band, whatever its
/// sizes: `point_order` looks at one step of a point dimension with the tile dimensions left
/// free (they follow from the point dimensions) and at dependence distances on the point
/// dimensions only, and tiling (with `tile_shift_point_loops = 0`) keeps the band's members as
/// the point dimensions and the schedule below them as it is. So `tile_nests` asks once, here,
/// where the schedule has no integer divisions and ISL answers faster than on the tiled one.
/// On the GPU the order depends on which dependences stay inside one tile (`point_order`'s
/// `parallel_first`), so it is asked of the tiled schedule as well.
pub(super) fn one_tile_order<'c>(
    scop: &Scop,
    node: &ScheduleNode<'c>,
    domain: &UnionSet<'c>,
    p: usize,
    deps: &UnionMap<'c>,
    parallel_outer: bool,
) -> Result<Vec<usize>> {
    let flat = node
        .subtree_schedule_union_map()?
        .intersect_domain(domain.clone())?;
    let (flat, depth) = pad_to_common_depth(flat)?;
    let x = names("o", depth);
    let zeros = vec!["0".to_string(); p];
    let one_tile = format!(
        "{{ {} -> {} }}",
        tuple("", &x),
        tuple("", &[zeros, x.clone()].concat())
    );
    let one_tile = UnionMap::read(flat.ctx(), &one_tile)?;
    let flat = flat.apply_range(one_tile)?;
    point_order(flat.ctx(), scop, &flat, depth + p, p, deps, parallel_outer)
}

/// `flat` (a nest's flat schedule of `depth` dimensions, `p` tile then `p` point dimensions
/// first) with its point dimensions in `order`, or when that is `None` in the order
/// [`point_order`] chooses on `flat`. The schedule tree keeps ISL's order; the nest's schedule,
/// from which tile bodies are generated, has this one.
pub(super) fn reorder_points<'c>(
    scop: &Scop,
    flat: UnionMap<'c>,
    depth: usize,
    p: usize,
    deps: &UnionMap<'c>,
    parallel_outer: bool,
    order: Option<Vec<usize>>,
) -> Result<UnionMap<'c>> {
    let order = match order {
        Some(order) => order,
        None => point_order(flat.ctx(), scop, &flat, depth, p, deps, parallel_outer)?,
    };
    if order.iter().enumerate().all(|(k, &m)| k == m) {
        return Ok(flat);
    }
    let keep: Vec<usize> = (0..p)
        .chain(order.iter().map(|&m| p + m))
        .chain(2 * p..depth)
        .collect();
    let permutation = UnionMap::read(flat.ctx(), &projection(depth, "", &keep))?;
    flat.apply_range(permutation)
}

/// Whether some statement of `band` (a band's subtree schedule) depends on itself along member
/// `inner` alone (the other members of the first `members` equal): a recurrence along the rows,
/// which keeps their loop scalar (seidel-2d's `A[i][j]` from `A[i][j - 1]`).
pub(super) fn recurrence_along<'c>(
    band: UnionMap<'c>,
    members: usize,
    inner: usize,
    deps: &UnionMap<'c>,
) -> Result<bool> {
    let mut own = UnionMap::empty(band.ctx())?;
    for dep in deps.maps()? {
        if dep.tuple_name(crate::isl::Side::In) == dep.tuple_name(crate::isl::Side::Out) {
            own = own.union(UnionMap::from_map(dep)?)?;
        }
    }
    let (band, depth) = pad_to_common_depth(band)?;
    let deltas = own
        .apply_domain(band.clone())?
        .apply_range(band)?
        .deltas()?;
    let o = names("o", depth);
    let mut cond: Vec<String> = (0..members.min(depth))
        .filter(|&m| m != inner)
        .map(|m| format!("{} = 0", o[m]))
        .collect();
    cond.push(format!("{} > 0", o[inner.min(depth - 1)]));
    let along = UnionSet::read(
        deltas.ctx(),
        &format!("{{ {} : {} }}", tuple("", &o), cond.join(" and ")),
    )?;
    Ok(!deltas.intersect(along)?.is_empty()?)
}

/// For the first `members` dimensions of `band` (a nest's schedule below its outermost band,
/// whose members come first): whether every dependence of `deps` inside the nest has distance 0
/// on it (it carries none).
pub(super) fn free_members<'c>(
    band: UnionMap<'c>,
    members: usize,
    deps: &UnionMap<'c>,
) -> Result<Vec<bool>> {
    let (band, depth) = pad_to_common_depth(band)?;
    let deltas = deps
        .clone()
        .apply_domain(band.clone())?
        .apply_range(band)?
        .deltas()?;
    let o = names("o", depth);
    (0..members.min(depth))
        .map(|m| {
            let moved = UnionSet::read(
                deltas.ctx(),
                &format!("{{ {} : {m} < 0 or {m} > 0 }}", tuple("", &o), m = o[m]),
            )?;
            deltas.clone().intersect(moved)?.is_empty()
        })
        .collect()
}
