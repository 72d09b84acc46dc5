//! Code generation queries: ISL's AST generator over a schedule map, converted into the plain
//! [`Ast`] so that `taskgen` prints C without touching ISL.
//!
//! Every AST is built with the SCoP's context, loop iterators named `{prefix}0`, `{prefix}1`, ... by schedule
//! dimension (a dimension ISL needs no loop for still uses up its name), and ISL's default user
//! nodes: a call named by the domain tuple whose arguments are the domain coordinates.

use crate::ast::{Ast, Expr, OpKind};
use crate::isl::{
    AstBuild, AstExpr, AstExprView, AstNode, AstNodeView, AstOp, Ctx, Map, Set, Side, UnionMap,
    UnionSet,
};
use crate::maps::{fixed_prefix, input_error, names, pad_to_common_depth, projection, tuple};
use crate::scop::parse_context;
use crate::unroll::Fact;
use crate::{Error, NestId, Result, TileDep, TiledSchedule};
use scop_ir::Scop;
use std::collections::HashSet;

/// Code for the instances of one tile of nest `nest`: the nest's schedule with its first
/// `tile_sizes.len()` dimensions fixed to the parameters named `tile_coords` (fresh names, e.g.
/// `tf_k0`). Loops use iterators `{iter_prefix}<dim>`; user nodes are statements (`S3`) whose
/// arguments are the statement's original iterator values. For coordinates outside the nest's
/// tile domain the code runs nothing. The innermost point loop (dimension `2p - 1` for `p` tile
/// dimensions) is split by ISL's `separate` option so that its pieces carry no guards.
pub fn nest_body_ast(
    scop: &Scop,
    sched: &TiledSchedule,
    nest: NestId,
    tile_coords: &[String],
    iter_prefix: &str,
) -> Result<Ast> {
    let points = PointSchedule::of(scop, sched, nest, tile_coords, iter_prefix)?;
    points.build(None, points.separate.as_slice())
}

/// The schedule of one tile of a nest, with its tile dimensions fixed to parameters and
/// projected out (see [`nest_body_ast`]), ready for ISL's AST generator.
pub(crate) struct PointSchedule<'c> {
    /// The SCoP's context (a parameter set).
    pub(crate) context: Set<'c>,
    /// Statement instances to their point dimensions (the tile dimensions projected out), or the
    /// whole padded schedule when the nest is untiled or all tile dimensions.
    pub(crate) schedule: UnionMap<'c>,
    /// The loop iterator of each dimension of `schedule`.
    pub(crate) iterators: Vec<String>,
    /// The dimension of `schedule` generated with ISL's `separate` option.
    pub(crate) separate: Option<usize>,
    /// Tile dimensions projected out (0 when none are).
    pub(crate) n_tile: usize,
    /// More dimensions whose loops every code built from it generates "separate".
    pub(crate) cut: Vec<usize>,
    /// The dimension of each member of the tiled band, in band order: `0 .. n_tile` unless a
    /// member was moved below the others ([`crate::sink`]).
    pub(crate) band: Vec<usize>,
    /// A dimension whose loop is unrolled completely ([`crate::chains`]).
    pub(crate) unroll: Option<usize>,
    /// The band member whose tiles start at `size * t - param` instead of `size * t`, and the
    /// parameter ([`crate::Nest::row_line`]).
    pub(crate) shift: Option<(usize, String)>,
}

impl PointSchedule<'static> {
    pub(crate) fn of(
        scop: &Scop,
        sched: &TiledSchedule,
        nest: NestId,
        tile_coords: &[String],
        iter_prefix: &str,
    ) -> Result<Self> {
        let the_nest = sched.nests.get(nest.index()).ok_or_else(|| {
            Error::InvalidInput(format!(
                "nest {nest} does not exist (the schedule has {})",
                sched.nests.len()
            ))
        })?;
        if tile_coords.len() != the_nest.tile_sizes.len() {
            return Err(Error::InvalidInput(format!(
                "nest {nest} has {} tile dimensions, got {} tile coordinates",
                the_nest.tile_sizes.len(),
                tile_coords.len()
            )));
        }
        let ctx = Ctx::shared()?;
        let mut context = parse_context(ctx, scop)?;
        let shift = the_nest
            .row_line
            .as_ref()
            .map(|l| (l.member, l.param.clone()));
        if let Some(line) = &the_nest.row_line {
            // The generated code computes it in `0 .. lanes`.
            context = context.intersect(Set::read(ctx, &line.context())?)?;
        }
        let schedule = UnionMap::read(ctx, &the_nest.schedule)
            .map_err(|e| input_error("nest schedule", &the_nest.schedule, e))?;
        let (schedule, depth) = pad_to_common_depth(schedule)?;
        let mut taken = param_names(scop, &context)?;
        check_fresh(tile_coords, &taken)?;
        taken.extend(tile_coords.iter().cloned());
        check_prefix(iter_prefix, depth, &taken)?;

        // No loop for the tile dimensions: they equal the coordinates. (Telling ISL that the tile is in
        // the tile domain does not shorten the code and makes its generation slower.) They are then
        // projected out of the schedule, which is exact since they equal parameters, and the point
        // dimensions keep their names: ISL's generator spends most of its time at each fixed
        // dimension otherwise (the body of heat-3d, 4 tile and 4 point dimensions: 1.0 s of CPU with
        // them, 0.18 s without, the same code).
        let n_tile = tile_coords.len();
        let schedule = schedule
            .intersect_range(UnionSet::read(ctx, &fixed_prefix("", depth, tile_coords))?)?;
        if n_tile == 0 || n_tile >= depth {
            return Ok(PointSchedule {
                context,
                schedule,
                iterators: names(iter_prefix, depth),
                separate: None,
                n_tile: 0,
                cut: Vec::new(),
                band: Vec::new(),
                unroll: None,
                shift,
            });
        }
        let points: Vec<usize> = (n_tile..depth).collect();
        let schedule =
            schedule.apply_range(UnionMap::read(ctx, &projection(depth, "", &points))?)?;
        // The innermost point loop of the band (dimension 2p - 1 of the full schedule, p - 1 once the
        // p tile dimensions are projected out) is generated "separate": ISL splits its range where the
        // guards of the statements change, so the steady-state loop has no condition inside and the C
        // compiler can vectorize it (a time-skewed stencil's tile has boundary pieces where only one
        // statement runs). Measured on jacobi-2d at MEDIUM, seq target: 0.0281 s -> 0.0203 s.
        let separate = (2 * n_tile <= depth).then(|| n_tile - 1);
        Ok(PointSchedule {
            context,
            schedule,
            iterators: names(iter_prefix, depth)[n_tile..].to_vec(),
            separate,
            n_tile,
            cut: Vec::new(),
            band: (0..n_tile).collect(),
            unroll: None,
            shift,
        })
    }
}

/// A [`PointSchedule`] as text, from which another thread rebuilds it in its own ISL context
/// (ISL's objects belong to the thread that made them): the pieces of a tile's code are built on
/// threads of their own ([`crate::tile_code`]).
#[derive(Clone, Debug)]
pub(crate) struct PointsText {
    context: String,
    schedule: String,
    iterators: Vec<String>,
    separate: Option<usize>,
    n_tile: usize,
    cut: Vec<usize>,
    band: Vec<usize>,
    unroll: Option<usize>,
    shift: Option<(usize, String)>,
}

impl PointsText {
    /// The schedule in this thread's shared context.
    pub(crate) fn read(&self) -> Result<PointSchedule<'static>> {
        let ctx = Ctx::shared()?;
        Ok(PointSchedule {
            context: Set::read(ctx, &self.context)?,
            schedule: UnionMap::read(ctx, &self.schedule)?,
            iterators: self.iterators.clone(),
            separate: self.separate,
            n_tile: self.n_tile,
            cut: self.cut.clone(),
            band: self.band.clone(),
            unroll: self.unroll,
            shift: self.shift.clone(),
        })
    }
}

impl<'c> PointSchedule<'c> {
    /// This schedule as text ([`PointsText`]).
    pub(crate) fn to_text(&self) -> Result<PointsText> {
        Ok(PointsText {
            context: self.context.to_str()?,
            schedule: self.schedule.to_str()?,
            iterators: self.iterators.clone(),
            separate: self.separate,
            n_tile: self.n_tile,
            cut: self.cut.clone(),
            band: self.band.clone(),
            unroll: self.unroll,
            shift: self.shift.clone(),
        })
    }

    /// An iterator name for one more dimension: the last one's, numbered one further (`c7`
    /// after `c6`), when that is not a parameter.
    pub(crate) fn fresh_iterator(&self) -> Result<Option<String>> {
        let Some(last) = self.iterators.last() else {
            return Ok(None);
        };
        let stem = last.trim_end_matches(|c: char| c.is_ascii_digit());
        let Ok(n) = last[stem.len()..].parse::<usize>() else {
            return Ok(None);
        };
        let name = format!("{stem}{}", n + 1);
        if self.context.param_names()?.contains(&name) || self.iterators.contains(&name) {
            return Ok(None);
        }
        Ok(Some(name))
    }

    /// Whether the band's members are the first dimensions, in band order (no member was moved
    /// by [`crate::sink`]).
    pub(crate) fn band_in_order(&self) -> bool {
        self.band.iter().copied().eq(0..self.n_tile)
    }

    /// The same schedule with the first `order.len()` point dimensions in `order` (a
    /// permutation: position `k` gets dimension `order[k]`); the iterators stay by position.
    pub(crate) fn with_point_order(&self, order: &[usize]) -> Result<PointSchedule<'c>> {
        let depth = self.iterators.len();
        let keep: Vec<usize> = order.iter().copied().chain(order.len()..depth).collect();
        let ctx = self.context.ctx();
        let schedule = self
            .schedule
            .clone()
            .apply_range(UnionMap::read(ctx, &projection(depth, "", &keep))?)?;
        let mut out = self.with_schedule(schedule);
        out.cut = self
            .cut
            .iter()
            .filter_map(|d| keep.iter().position(|k| k == d))
            .collect();
        Ok(out)
    }

    /// The same, for the instances of `schedule` only (a part of this one's).
    pub(crate) fn with_schedule(&self, schedule: UnionMap<'c>) -> PointSchedule<'c> {
        PointSchedule {
            context: self.context.clone(),
            schedule,
            iterators: self.iterators.clone(),
            separate: self.separate,
            n_tile: self.n_tile,
            band: self.band.clone(),
            unroll: self.unroll,
            cut: self.cut.clone(),
            shift: self.shift.clone(),
        }
    }

    /// The code, for the tiles whose coordinates satisfy `tiles` (a parameter set) when given,
    /// with the loops of the dimensions `separate` (and [`PointSchedule::cut`]) generated
    /// "separate" (ISL's option: each piece of a loop's range where the guards of the statements
    /// inside change is a loop of its own).
    pub(crate) fn build(&self, tiles: Option<Set<'c>>, separate: &[usize]) -> Result<Ast> {
        let context = match tiles {
            Some(tiles) => self.context.clone().intersect(tiles)?,
            None => self.context.clone(),
        };
        let mut separate = separate.to_vec();
        for &d in &self.cut {
            if !separate.contains(&d) {
                separate.push(d);
            }
        }
        if let Some(d) = self.unroll {
            // Built as a loop and unrolled here (`crate::unroll`: ISL's option costs seconds).
            if let Some((lo, hi)) = self.dim_range(d)? {
                let mut ast = build_with_options(
                    context.clone(),
                    self.schedule.clone(),
                    &self.iterators,
                    &separate,
                    &[],
                )?;
                let mut simplify =
                    |terms: &[Expr], facts: &[Fact]| Self::guard_under(&context, facts, terms).ok();
                let iter = &self.iterators[d];
                if crate::unroll::unroll_completely(&mut ast, iter, lo, hi, &mut simplify) {
                    return Ok(ast);
                }
            }
        }
        build_with_options(
            context,
            self.schedule.clone(),
            &self.iterators,
            &separate,
            self.unroll.as_slice(),
        )
    }

    /// The guard `terms` (a conjunction on the enclosing loops' iterators and the parameters)
    /// as ISL's AST builder writes it where `facts`, what the code around says of those
    /// iterators, and `context` hold: `None` (no guard) when they imply it. A fact that ISL
    /// cannot read is left out, which only keeps more of the guard. `Err` when a term cannot
    /// be read.
    fn guard_under(context: &Set<'c>, facts: &[Fact], terms: &[Expr]) -> Result<Option<Expr>> {
        let ctx = context.ctx();
        let params = context.param_names()?;
        // The iterators become parameters too: the guard is a condition on them.
        let mut names = params.clone();
        let mut more = Vec::new();
        for fact in facts {
            match fact {
                Fact::Holds(e) => ids_of(e, &mut more),
                Fact::Stride { iter, init, .. } => {
                    more.push(iter.clone());
                    ids_of(init, &mut more);
                }
            }
        }
        for t in terms {
            ids_of(t, &mut more);
        }
        for id in more {
            if !names.contains(&id) {
                names.push(id);
            }
        }
        let known = |id: &str| names.iter().any(|n| n == id).then(|| id.to_string());
        let wanted: Vec<String> = terms
            .iter()
            .map(|t| isl_condition(t, &known))
            .collect::<Option<_>>()
            .ok_or_else(|| Error::Isl("a guard term that is not affine".into()))?;
        let mut given = Vec::new();
        for fact in facts {
            match fact {
                Fact::Holds(e) => {
                    let mut terms = Vec::new();
                    crate::unroll::conjuncts(e, &mut terms);
                    given.extend(terms.iter().filter_map(|t| isl_condition(t, &known)));
                }
                Fact::Stride { iter, init, step } => {
                    if let Some(init) = isl_affine(init, &known) {
                        given.push(format!(
                            "exists (a : {iter} = ({init}) + {step} * a and a >= 0)"
                        ));
                    }
                }
            }
        }
        let set = |conds: &[String]| {
            let conds = match conds.is_empty() {
                true => String::new(),
                false => format!(" : {}", conds.join(" and ")),
            };
            format!("{}{{{conds} }}", crate::maps::params_prefix(&names))
        };
        let around = Set::read(ctx, &set(&given))?.intersect(context.clone())?;
        let guard = Set::read(ctx, &set(&wanted))?;
        if around.is_subset(&guard)? {
            return Ok(None);
        }
        let expr = AstBuild::from_context(around)?.expr_from_set(guard)?;
        Ok(Some(convert_expr(&expr)?))
    }

    /// The smallest and largest values of schedule dimension `d` over every statement; `None`
    /// when some statement's are unbounded.
    fn dim_range(&self, d: usize) -> Result<Option<(i64, i64)>> {
        let mut range: Option<(i64, i64)> = None;
        for set in self.schedule.clone().range()?.sets()? {
            let Some((lo, hi)) = set.dim_range(d)? else {
                return Ok(None);
            };
            range = Some(match range {
                Some((a, b)) => (a.min(lo), b.max(hi)),
                None => (lo, hi),
            });
        }
        Ok(range)
    }
}

/// The identifiers of `e`, each once, in order of appearance.
fn ids_of(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Id(id) if !out.contains(id) => out.push(id.clone()),
        Expr::Op(_, args) => args.iter().for_each(|a| ids_of(a, out)),
        _ => {}
    }
}

/// `e`, an affine condition, in ISL's syntax, its identifiers renamed by `name` (`None` where
/// one has no name there or `e` is not a comparison of affine expressions).
fn isl_condition(e: &Expr, name: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let Expr::Op(op, args) = e else { return None };
    let sign = match op {
        OpKind::Le => "<=",
        OpKind::Lt => "<",
        OpKind::Ge => ">=",
        OpKind::Gt => ">",
        OpKind::Eq => "=",
        _ => return None,
    };
    let [a, b] = args.as_slice() else { return None };
    Some(format!(
        "{} {sign} {}",
        isl_affine(a, name)?,
        isl_affine(b, name)?
    ))
}

/// `e`, an affine expression, in ISL's syntax (see [`isl_condition`]). Operands other than a
/// name or a number are parenthesized (ISL does not read a parenthesized number before `*`).
fn isl_affine(e: &Expr, name: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    use crate::unroll::constant;
    let operand = |e: &Expr| -> Option<String> {
        let text = isl_affine(e, name)?;
        Some(match e {
            Expr::Int(_) | Expr::Id(_) => text,
            _ => format!("({text})"),
        })
    };
    Some(match e {
        Expr::Int(_) => constant(e)?.to_string(),
        Expr::Id(id) => name(id)?,
        Expr::Op(op, args) => match (op, args.as_slice()) {
            (OpKind::Minus, [a]) => format!("-{}", operand(a)?),
            (OpKind::Add, [a, b]) => format!("{} + {}", operand(a)?, operand(b)?),
            (OpKind::Sub, [a, b]) => format!("{} - {}", operand(a)?, operand(b)?),
            (OpKind::Mul, [a, b]) if constant(a).is_some() || constant(b).is_some() => {
                format!("{} * {}", operand(a)?, operand(b)?)
            }
            (OpKind::FdivQ | OpKind::PdivQ | OpKind::Div, [a, b])
                if constant(b).is_some_and(|c| c > 0) =>
            {
                format!("floor({} / {})", operand(a)?, constant(b)?)
            }
            _ => return None,
        },
    })
}

/// Enumerates, in lexicographic order, the points of the ISL set `set` (one space, e.g. a nest's
/// tile domain) with the SCoP's parameters and context; user nodes are named by the set's tuple
/// name (`N0`) with the point's coordinates. An empty set gives an empty block.
pub fn points_ast(scop: &Scop, set: &str, iter_prefix: &str) -> Result<Ast> {
    let ctx = Ctx::shared()?;
    let context = parse_context(ctx, scop)?;
    let points = UnionSet::read(ctx, set).map_err(|e| input_error("set", set, e))?;
    enumerate(scop, context, points, iter_prefix, set)
}

/// For a tile dependence, code enumerating the source tiles `s` with `(s -> t)` in `dep.relation`
/// for a target tile `t` whose coordinates are the parameters `dst_coords`; user nodes `N<src>`
/// with `s`'s coordinates, each source once, in lexicographic order.
///
/// When the distances `t - s` take few values (at most [`MAX_OFFSETS`], whatever the parameters:
/// the usual case for tiles of one band), the code is one guarded call per distance `d`:
/// `if (cond_d(t)) N<src>(t - d)`. Otherwise ISL's AST generator enumerates the source set with
/// `t` as parameters, which can take ISL minutes for skewed bands with unequal tile sizes.
pub fn tile_sources_ast(
    scop: &Scop,
    dep: &TileDep,
    dst_coords: &[String],
    iter_prefix: &str,
) -> Result<Ast> {
    let ctx = Ctx::shared()?;
    let context = parse_context(ctx, scop)?;
    let relation = UnionMap::read(ctx, &dep.relation)
        .map_err(|e| input_error("tile dependence", &dep.relation, e))?;
    let src_name = dep.src.to_string();
    let dst_name = dep.dst.to_string();
    let maps = relation.maps()?;
    for map in &maps {
        if map.tuple_name(Side::In).as_deref() != Some(src_name.as_str())
            || map.tuple_name(Side::Out).as_deref() != Some(dst_name.as_str())
            || map.n_dims(Side::Out)? != dst_coords.len()
        {
            return Err(Error::InvalidInput(format!(
                "the tile dependence `{}` does not go from {src_name} to {dst_name} with {} coordinates",
                dep.relation,
                dst_coords.len()
            )));
        }
    }
    check_fresh(dst_coords, &param_names(scop, &context)?)?;
    let target = UnionSet::read(ctx, &fixed_prefix(&dst_name, dst_coords.len(), dst_coords))?;
    if let [map] = maps.as_slice() {
        if let Some(offsets) = few_offsets(map)? {
            return guarded_sources(
                context,
                &relation,
                &offsets,
                (&src_name, &dst_name),
                &target,
                dst_coords,
            );
        }
    }
    let sources = relation.intersect_range(target)?.domain()?.coalesce()?;
    enumerate(scop, context, sources, iter_prefix, &dep.relation)
}

/// The most distances for which [`tile_sources_ast`] emits one guarded call each.
pub const MAX_OFFSETS: usize = 64;

/// The distances `t - s` of a map between two spaces of one dimension, if they are at most
/// [`MAX_OFFSETS`] points for all parameter values together; lexicographically decreasing (so
/// that the sources `t - d` come in increasing order).
pub(crate) fn few_offsets(map: &Map<'_>) -> Result<Option<Vec<Vec<i64>>>> {
    let n = map.n_dims(Side::Out)?;
    if map.n_dims(Side::In)? != n {
        return Ok(None);
    }
    let offsets = map
        .clone()
        .reset_tuple_id(Side::In)?
        .reset_tuple_id(Side::Out)?
        .deltas()?
        .project_out_params()?;
    if !offsets.is_bounded()? {
        return Ok(None);
    }
    // One scan of the points, stopped past the limit. (Taking the lexicographic minimum and
    // subtracting it, point after point, gave the same points at several times the cost: each
    // subtraction splits the set further, and a relation with more distances than the limit
    // paid for all of them, 2mm's and cholesky's inputs between nests among them.)
    let Some(mut points) = offsets.points_upto(MAX_OFFSETS)? else {
        return Ok(None);
    };
    points.sort_unstable_by(|a, b| b.cmp(a));
    Ok(Some(points))
}

/// `if (cond_d(t)) N<src>(t - d)` for each distance `d`, where `cond_d` says that `t - d -> t` is in
/// `relation`; conditions that always hold are left out.
fn guarded_sources<'c>(
    context: Set<'c>,
    relation: &UnionMap<'c>,
    offsets: &[Vec<i64>],
    (src_name, dst_name): (&str, &str),
    target: &UnionSet<'c>,
    dst_coords: &[String],
) -> Result<Ast> {
    let ctx = context.ctx();
    // The build must know the coordinate parameters that the conditions use.
    // Conditions are sets in its (zero-dimensional) schedule space, so is its context.
    let build = AstBuild::from_context(
        context
            .intersect(target.clone().params()?)?
            .params_to_set()?,
    )?;
    let s = names("s", dst_coords.len());
    let t = names("t", dst_coords.len());
    let mut calls = Vec::new();
    for d in offsets {
        let eqs: Vec<String> = (0..d.len())
            .map(|k| format!("{} = {} - ({})", s[k], t[k], d[k]))
            .collect();
        let cond = if eqs.is_empty() {
            String::new()
        } else {
            format!(" : {}", eqs.join(" and "))
        };
        let shift = format!(
            "{{ {} -> {}{cond} }}",
            tuple(src_name, &s),
            tuple(dst_name, &t)
        );
        // The targets with a source at distance d, as a condition on the coordinate parameters.
        let pairs = relation.clone().intersect(UnionMap::read(ctx, &shift)?)?;
        let when = pairs.range()?.intersect(target.clone())?.params()?;
        if when.is_empty()? {
            continue;
        }
        let args = dst_coords
            .iter()
            .zip(d)
            .map(|(c, &dk)| match dk {
                0 => Expr::Id(c.clone()),
                dk if dk > 0 => Expr::Op(
                    OpKind::Sub,
                    vec![Expr::Id(c.clone()), Expr::Int(dk.to_string())],
                ),
                dk => Expr::Op(
                    OpKind::Add,
                    vec![Expr::Id(c.clone()), Expr::Int((-dk).to_string())],
                ),
            })
            .collect();
        let call = Ast::User {
            name: src_name.to_string(),
            args,
        };
        let cond = convert_expr(&build.expr_from_set(when.params_to_set()?)?)?;
        calls.push(match cond {
            Expr::Int(one) if one == "1" => call,
            cond => Ast::If {
                cond,
                then: Box::new(call),
                els: None,
            },
        });
    }
    Ok(Ast::Block(calls))
}

/// The ISL operations [`classes_ast`] may take on classes with divisions (local variables): the
/// classes shaped by `%` guards of a random SCoP took ISL's generator over 20 s (most of it on
/// one class of 50 disjuncts), where PolyBench's take less than 200 000 operations (its classes
/// with divisions: gramschmidt's and ludcmp's at LARGE, from the shifts onto cache lines).
/// Past the budget the task program falls back to one partition with guarded inputs.
pub const CLASSES_BUDGET: u64 = 1_000_000;

/// Enumerates, in lexicographic order of their coordinates, the points of several disjoint sets
/// of one tile space (the classes of a partition: each a union of sets given as ISL text); the
/// user node of a point of `classes[c]` is named `P<c>`, with the point's coordinates. The
/// classes must not overlap (a shared point would be visited once per class). With `order` (a
/// permutation of the dimensions, outermost first; empty for the identity) the points are
/// visited in the lexicographic order of their coordinates so permuted instead; either way the
/// loop over dimension `d` is named `<iter_prefix><d>` and the user nodes' coordinates keep
/// their order.
///
/// Each class is one statement for ISL's AST generator: the union of its sets, coalesced. ISL
/// orders every pair of statements at every loop level, so fewer statements cost less and give
/// less code (heat-3d at LARGE: 84 sets in 16 classes; the tile loops take a third less time and
/// 600 fewer lines of C). ISL 0.27's generator rejects some such unions ("total dimensionality
/// changed unexpectedly": the parametric jacobi-2d with tiles of 5); then each given set is its
/// own statement (`P<c>_<m>`, renamed `P<c>` in the result). Either way the points and their
/// order are the same: the loops differ, the sequence they visit does not.
pub fn classes_ast(
    scop: &Scop,
    classes: &[Vec<String>],
    iter_prefix: &str,
    order: &[usize],
) -> Result<Ast> {
    let ctx = Ctx::shared()?;
    let context = parse_context(ctx, scop)?;
    let mut pieces = UnionMap::empty(ctx)?;
    let mut whole = UnionMap::empty(ctx)?;
    let mut depth = None;
    let mut taken = param_names(scop, &context)?;
    let mut divided = false;
    for (c, texts) in classes.iter().enumerate() {
        let mut class = UnionSet::empty(ctx)?;
        for (m, text) in texts.iter().enumerate() {
            let set = Set::read(ctx, text).map_err(|e| input_error("class", text, e))?;
            let n = set.n_dims()?;
            if depth.is_some_and(|d| d != n) {
                return Err(Error::InvalidInput(format!(
                    "the class `{text}` has {n} dimensions, the first one {depth:?}"
                )));
            }
            depth = Some(n);
            divided = divided || set.constraint_rows()?.is_none();
            taken.extend(set.param_names()?);
            class = class.union(UnionSet::from_set(set.clone())?)?;
            pieces = pieces.union(points_statement(set, &format!("P{c}_{m}"), order)?)?;
        }
        // The sets of a class are in one space (the checks above), so the union is one set.
        for set in class.coalesce()?.sets()? {
            whole = whole.union(points_statement(set, &format!("P{c}_0"), order)?)?;
        }
    }
    let Some(depth) = depth else {
        return Ok(Ast::Block(Vec::new()));
    };
    check_prefix(iter_prefix, depth, &taken)?;
    // Each loop is named after the dimension it runs over, wherever `order` puts it.
    let mut iterators = names(iter_prefix, depth);
    if !order.is_empty() {
        iterators = order.iter().map(|&d| iterators[d].clone()).collect();
    }
    // Only classes with divisions are bounded (and only then is the context's budget touched):
    // those without take what they take (the parametric jacobi-2d's 11 classes of tiles of 5
    // need more than 8 million operations).
    if divided {
        ctx.set_max_operations(CLASSES_BUDGET);
    }
    let over = || divided && ctx.quota_hit();
    let built = match build_named(context.clone(), whole, &iterators, None) {
        Err(_) if !over() => build_named(context, pieces, &iterators, None),
        other => other,
    };
    if divided {
        ctx.set_max_operations(0);
    }
    let mut ast = match built {
        Err(_) if over() => {
            return Err(Error::Isl(format!(
                "the loops over {} classes of tiles took more than {CLASSES_BUDGET} ISL operations",
                classes.len()
            )))
        }
        other => other?,
    };
    rename_users(&mut ast, &|name: &str| {
        name.split_once('_').map(|(class, _)| class.to_string())
    });
    Ok(ast)
}

/// The schedule of the points of `set`, as the statement `name`: the identity, or its
/// dimensions in `order` (outermost first) when that is not empty.
fn points_statement<'c>(set: Set<'c>, name: &str, order: &[usize]) -> Result<UnionMap<'c>> {
    let named = set.set_tuple_name(name)?;
    if order.is_empty() {
        return UnionMap::from_map(named.identity()?.reset_tuple_id(Side::Out)?);
    }
    let n = named.n_dims()?;
    if order.len() != n || (0..n).any(|d| !order.contains(&d)) {
        return Err(Error::InvalidInput(format!(
            "the order {order:?} is not a permutation of {n} dimensions"
        )));
    }
    let x = names("x", n);
    let permuted: Vec<String> = order.iter().map(|&d| x[d].clone()).collect();
    let ctx = named.ctx();
    let permutation = Map::read(
        ctx,
        &format!("{{ {} -> {} }}", tuple(name, &x), tuple("", &permuted)),
    )?;
    UnionMap::from_map(named.identity()?.apply_range(permutation)?)
}

/// Renames the user nodes for which `rename` gives a new name.
pub(crate) fn rename_users(ast: &mut Ast, rename: &dyn Fn(&str) -> Option<String>) {
    match ast {
        Ast::For { body, .. } => rename_users(body, rename),
        Ast::If { then, els, .. } => {
            rename_users(then, rename);
            if let Some(e) = els {
                rename_users(e, rename);
            }
        }
        Ast::Block(children) => children.iter_mut().for_each(|c| rename_users(c, rename)),
        Ast::User { name, .. } => {
            if let Some(new) = rename(name) {
                *name = new;
            }
        }
        Ast::Kernel(k) => {
            if let Some(new) = rename(&k.stmt) {
                k.stmt = new;
            }
            rename_users(&mut k.fallback, rename);
            rename_users(&mut k.tail, rename);
        }
    }
}

/// The lexicographic enumeration of the points of `points` (one space).
fn enumerate<'c>(
    scop: &Scop,
    context: Set<'c>,
    points: UnionSet<'c>,
    iter_prefix: &str,
    what: &str,
) -> Result<Ast> {
    let mut sets = points.sets()?;
    if sets.is_empty() {
        return Ok(Ast::Block(Vec::new()));
    }
    if sets.len() > 1 {
        return Err(Error::Unsupported(format!(
            "enumerating points of {} spaces at once: `{what}`",
            sets.len()
        )));
    }
    let set = sets.remove(0);
    if set.tuple_name().is_none() {
        return Err(Error::InvalidInput(format!(
            "the points of `{what}` have no tuple name to call"
        )));
    }
    let depth = set.n_dims()?;
    let mut taken = param_names(scop, &context)?;
    taken.extend(set.param_names()?);
    check_prefix(iter_prefix, depth, &taken)?;
    let schedule = UnionMap::from_map(set.clone().identity()?.reset_tuple_id(Side::Out)?)?;
    match build(context.clone(), schedule, iter_prefix, depth) {
        Ok(ast) => Ok(ast),
        // ISL's AST generator can fail on a union of basic sets with integer divisions: fusing
        // two of them while coalescing, its coefficient reduction meets a basic set whose
        // divisions Gaussian elimination removed ("total dimensionality changed unexpectedly",
        // seen on the sources of random SCoPs with `%` guards and a parametric size). The
        // points are then enumerated piece by piece, over disjoint basic sets: every point
        // once, pieces one after the other (the callers need the points, not their order).
        Err(first) => {
            let mut pieces = Vec::new();
            for piece in set.identity()?.make_disjoint()?.basic_maps()? {
                let schedule =
                    UnionMap::from_map(piece.domain()?.identity()?.reset_tuple_id(Side::Out)?)?;
                match build(context.clone(), schedule, iter_prefix, depth) {
                    Ok(ast) => pieces.push(ast),
                    Err(_) => return Err(first),
                }
            }
            Ok(Ast::Block(pieces))
        }
    }
}

/// Runs ISL's AST generator and converts its result.
fn build<'c>(
    context: Set<'c>,
    schedule: UnionMap<'c>,
    iter_prefix: &str,
    depth: usize,
) -> Result<Ast> {
    build_named(context, schedule, &names(iter_prefix, depth), None)
}

/// Code for `schedule` with the loop iterators named `iterators` (one per schedule dimension),
/// the loop of dimension `separate`, if any, generated with ISL's `separate` option.
///
/// Dimensions that copy an earlier one at every instance (a band's point dimension over a
/// statement that does not vary along it, e.g. deriche's `[i, i, ...]`) are projected out
/// first, and the others keep their names. The projection is exact and keeps the order: at the
/// first dimension where two instances differ, the dimension it copies differs too, so that
/// first dimension is never a copy. ISL prints no loop for such a dimension, but deciding so
/// costs it as much as a loop: adi's body takes 0.10 s with its copy of `t`, 0.06 s without,
/// the same code. A copied dimension has no loop to separate, so its `separate` is dropped.
/// The code is usually the same; where it is not, ISL has placed instances that share a
/// schedule point (independent, since the verifier has every dependence go strictly forward)
/// in another order, or cut a loop elsewhere (of the 30 PolyBench kernels, deriche, durbin and
/// ludcmp at MINI, and durbin with `--fuse max` at LARGE).
pub(crate) fn build_named<'c>(
    context: Set<'c>,
    schedule: UnionMap<'c>,
    iterators: &[String],
    separate: Option<usize>,
) -> Result<Ast> {
    build_separated(context, schedule, iterators, separate.as_slice())
}

/// [`build_named`] with the loops of every dimension of `separate` generated "separate".
pub(crate) fn build_separated<'c>(
    context: Set<'c>,
    schedule: UnionMap<'c>,
    iterators: &[String],
    separate: &[usize],
) -> Result<Ast> {
    build_with_options(context, schedule, iterators, separate, &[])
}

/// [`build_separated`], with the loops of the dimensions `unroll` unrolled completely (ISL's
/// `unroll` option: one copy of the body per value, for loops of constant trip count).
pub(crate) fn build_with_options<'c>(
    context: Set<'c>,
    schedule: UnionMap<'c>,
    iterators: &[String],
    separate: &[usize],
    unroll: &[usize],
) -> Result<Ast> {
    let ctx = context.ctx();
    let depth = iterators.len();
    let kept = uncopied_dims(&schedule, depth)?;
    let remap = |dims: &[usize]| -> Vec<usize> {
        dims.iter()
            .filter_map(|s| kept.iter().position(|d| d == s))
            .collect()
    };
    let (separate, unroll) = (remap(separate), remap(unroll));
    let schedule = if kept.len() < depth {
        schedule.apply_range(UnionMap::read(ctx, &projection(depth, "", &kept))?)?
    } else {
        schedule
    };
    let iterators: Vec<String> = kept.iter().map(|&d| iterators[d].clone()).collect();
    let mut build = AstBuild::from_context(context)?.set_iterators(&iterators)?;
    if !separate.is_empty() || !unroll.is_empty() {
        let space = tuple("", &names("o", kept.len()));
        let options: Vec<String> = separate
            .iter()
            .map(|s| format!("{space} -> separate[{s}]"))
            .chain(unroll.iter().map(|u| format!("{space} -> unroll[{u}]")))
            .collect();
        build = build.set_options(UnionMap::read(
            ctx,
            &format!("{{ {} }}", options.join("; ")),
        )?)?;
    }
    let node = build.node_from_schedule_map(schedule)?;
    convert_node(&node)
}

/// The dimensions of `schedule` (`depth` output dimensions) that are not equal to an earlier one
/// at every instance, in order. (Comparing with the kept ones is enough: a copy of a copy is a
/// copy of the kept dimension the first copies.)
/// The innermost loop below the band's point dimensions of a CPU tile's point schedule, which
/// `tile_code` generates "separate": where one statement of the loop runs at some of its
/// iterations only (durbin's `y[k] = alpha` at the first iteration of the loop of
/// `z[i] = y[i] + alpha * y[k - i - 1]`), ISL would guard it inside the loop, which keeps the C
/// compiler from vectorizing the loop; separate, the loop is split there instead (the same order,
/// so always legal; where nothing changes along the loop, ISL generates the same code). Measured
/// on durbin at EXTRALARGE, 2 threads, together with `tile_code`'s scalar reductions: 11.5 ms ->
/// 7.8 (gcc's original: 11.0). No other PolyBench kernel's code changed. The GPU's plain tile
/// code is left as it was (the question is the C compiler's vectorizer; on the GPU the pieces
/// made durbin's SCoP, a chain of 2000 steps, look parallel enough to leave the CPU).
pub(crate) fn guarded_inner_loop(points: &PointSchedule<'_>) -> Result<Option<usize>> {
    let (schedule, n_tile) = (&points.schedule, points.n_tile);
    let maps = schedule.maps()?;
    for &d in uncopied_dims(schedule, points.iterators.len())?
        .iter()
        .rev()
    {
        if d < n_tile || Some(d) == points.separate {
            break;
        }
        for map in &maps {
            if d < map.n_dims(Side::Out)? && map.plain_fixed_out(d)?.is_none() {
                return Ok(Some(d));
            }
        }
    }
    Ok(None)
}

pub(crate) fn uncopied_dims(schedule: &UnionMap<'_>, depth: usize) -> Result<Vec<usize>> {
    let mut kept: Vec<usize> = Vec::with_capacity(depth);
    if depth < 2 {
        kept.extend(0..depth);
        return Ok(kept);
    }
    let range = schedule.clone().range()?;
    if range.is_empty()? {
        kept.extend(0..depth);
        return Ok(kept);
    }
    let all = names("o", depth);
    for d in 0..depth {
        let mut copy = false;
        for &e in &kept {
            let equal = UnionSet::read(
                schedule.ctx(),
                &format!("{{ {} : {} = {} }}", tuple("", &all), all[d], all[e]),
            )?;
            if range.is_subset(&equal)? {
                copy = true;
                break;
            }
        }
        if !copy {
            kept.push(d);
        }
    }
    Ok(kept)
}

/// The parameters of the SCoP and of its context.
fn param_names(scop: &Scop, context: &Set<'_>) -> Result<HashSet<String>> {
    let mut names: HashSet<String> = scop.params.iter().map(|p| p.name.clone()).collect();
    names.extend(context.param_names()?);
    Ok(names)
}

/// New parameter names must be distinct identifiers that are not parameters already.
fn check_fresh(new: &[String], taken: &HashSet<String>) -> Result<()> {
    let mut seen = HashSet::new();
    for name in new {
        if !is_identifier(name) {
            return Err(Error::InvalidInput(format!(
                "`{name}` is not an identifier"
            )));
        }
        if taken.contains(name) || !seen.insert(name) {
            return Err(Error::InvalidInput(format!(
                "the coordinate name `{name}` is already used"
            )));
        }
    }
    Ok(())
}

/// Iterator names `{prefix}<k>` must be identifiers that no parameter uses.
fn check_prefix(prefix: &str, depth: usize, taken: &HashSet<String>) -> Result<()> {
    if !is_identifier(&format!("{prefix}0")) {
        return Err(Error::InvalidInput(format!(
            "`{prefix}` cannot start an iterator name"
        )));
    }
    for name in names(prefix, depth) {
        if taken.contains(&name) {
            return Err(Error::InvalidInput(format!(
                "the iterator name `{name}` is a parameter too"
            )));
        }
    }
    Ok(())
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

fn convert_node(node: &AstNode<'_>) -> Result<Ast> {
    Ok(match node.view()? {
        AstNodeView::For {
            iterator,
            init,
            cond,
            inc,
            body,
        } => Ast::For {
            iter: id_name(&iterator)?,
            init: convert_expr(&init)?,
            cond: convert_expr(&cond)?,
            inc: convert_expr(&inc)?,
            body: Box::new(convert_node(&body)?),
        },
        AstNodeView::If { cond, then, els } => Ast::If {
            cond: convert_expr(&cond)?,
            then: Box::new(convert_node(&then)?),
            els: els.map(|e| convert_node(&e)).transpose()?.map(Box::new),
        },
        AstNodeView::Block(children) => {
            Ast::Block(children.iter().map(convert_node).collect::<Result<_>>()?)
        }
        AstNodeView::Mark(inner) => convert_node(&inner)?,
        AstNodeView::User(call) => match call.view()? {
            AstExprView::Op(AstOp::Call, args) if !args.is_empty() => Ast::User {
                name: id_name(&args[0])?,
                args: args[1..].iter().map(convert_expr).collect::<Result<_>>()?,
            },
            _ => return Err(Error::Isl("an ISL user node that is not a call".into())),
        },
    })
}

fn id_name(expr: &AstExpr<'_>) -> Result<String> {
    match expr.view()? {
        AstExprView::Id(name) => Ok(name),
        _ => Err(Error::Isl("expected an identifier in ISL's AST".into())),
    }
}

pub(crate) fn convert_expr(expr: &AstExpr<'_>) -> Result<Expr> {
    Ok(match expr.view()? {
        AstExprView::Id(name) => Expr::Id(name),
        AstExprView::Int(value) => Expr::Int(value),
        AstExprView::Op(op, args) => {
            let kind = match op {
                AstOp::And => OpKind::And,
                AstOp::AndThen => OpKind::AndThen,
                AstOp::Or => OpKind::Or,
                AstOp::OrElse => OpKind::OrElse,
                AstOp::Max => OpKind::Max,
                AstOp::Min => OpKind::Min,
                AstOp::Minus => OpKind::Minus,
                AstOp::Add => OpKind::Add,
                AstOp::Sub => OpKind::Sub,
                AstOp::Mul => OpKind::Mul,
                AstOp::Div => OpKind::Div,
                AstOp::FdivQ => OpKind::FdivQ,
                AstOp::PdivQ => OpKind::PdivQ,
                AstOp::PdivR => OpKind::PdivR,
                AstOp::ZdivR => OpKind::ZdivR,
                AstOp::Cond => OpKind::Cond,
                AstOp::Select => OpKind::Select,
                AstOp::Eq => OpKind::Eq,
                AstOp::Le => OpKind::Le,
                AstOp::Lt => OpKind::Lt,
                AstOp::Ge => OpKind::Ge,
                AstOp::Gt => OpKind::Gt,
                AstOp::Call | AstOp::Access | AstOp::Member | AstOp::AddressOf => {
                    return Err(Error::Unsupported(format!(
                        "the ISL AST operation {op:?} inside an expression"
                    )));
                }
            };
            Expr::Op(kind, args.iter().map(convert_expr).collect::<Result<_>>()?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ISL's code for `schedule` as it is, every dimension kept (what `build_named` did before it
    /// projected out copied dimensions).
    fn code_with_every_dim<'c>(
        context: Set<'c>,
        schedule: UnionMap<'c>,
        iterators: &[String],
        separate: Option<usize>,
    ) -> Ast {
        let ctx = context.ctx();
        let mut build = AstBuild::from_context(context)
            .unwrap()
            .set_iterators(iterators)
            .unwrap();
        if let Some(s) = separate {
            let options = format!(
                "{{ {} -> separate[{s}] }}",
                tuple("", &names("o", iterators.len()))
            );
            build = build
                .set_options(UnionMap::read(ctx, &options).unwrap())
                .unwrap();
        }
        convert_node(&build.node_from_schedule_map(schedule).unwrap()).unwrap()
    }

    /// Dimensions equal to an earlier one at every instance are found (and only those: not one
    /// equal for some statements, nor one equal to a later one), and projecting them out gives
    /// the code ISL gives for the whole schedule. The schedules are shaped like nest bodies: a
    /// point dimension copied over statements that do not vary along it (deriche's `[i, i]`,
    /// adi's `t` repeated after a sequence dimension), a copy of a copy, a separated dimension
    /// that is kept or is itself a copy, parameters, and a copy with a guard on the parameters.
    #[test]
    fn copied_dimensions_are_projected_out_with_the_same_code() {
        let ctx = Ctx::new().unwrap();
        let cases: [(&str, Option<usize>, &[usize]); 7] = [
            ("[n] -> { S0[i] -> [i, i, 0, 0] : 0 <= i < n; S1[i, j] -> [i, i, 1, -j] : 0 <= i < n and 0 <= j < 5 }", Some(1), &[0, 2, 3]),
            ("[n] -> { S0[i] -> [i, i, 0, 0] : 0 <= i < n; S1[i, j] -> [i, i, 1, -j] : 0 <= i < n and 0 <= j < 5 }", Some(0), &[0, 2, 3]),
            ("{ S0[t, i] -> [t, 0, t, i, 0] : 0 < t <= 9 and 0 < i < 7; S1[t, i, j] -> [t, 1, t, i, j] : 0 < t <= 9 and 0 < i < 7 and 0 < j < 4 }", Some(0), &[0, 1, 3, 4]),
            ("{ S0[i] -> [i, i, i] : 0 <= i < 8 }", None, &[0]),
            ("{ S0[i, j] -> [i, j, 0] : 0 <= i < 8 and 0 <= j < 3; S1[i] -> [i, i, 1] : 0 <= i < 8 }", Some(1), &[0, 1, 2]),
            ("{ S0[i, j] -> [j, i] : 0 <= i < 4 and i <= j < 4 }", Some(1), &[0, 1]),
            ("[k0, k1] -> { S7[i] -> [i, i, 0] : 4k0 <= i < 4k0 + 4 and 4k1 <= i < 4k1 + 4 and 0 <= i < 10 }", Some(1), &[0, 2]),
        ];
        for (text, separate, want_kept) in cases {
            let schedule = UnionMap::read(&ctx, text).unwrap();
            let depth = schedule.maps().unwrap()[0].n_dims(Side::Out).unwrap();
            assert_eq!(
                uncopied_dims(&schedule, depth).unwrap(),
                want_kept,
                "{text}"
            );
            let iterators = names("c", depth);
            let context = Set::read(&ctx, "{ : }").unwrap();
            let got = build_named(context.clone(), schedule.clone(), &iterators, separate).unwrap();
            let want = code_with_every_dim(context, schedule, &iterators, separate);
            assert_eq!(got, want, "{text}");
        }
    }

    /// `few_offsets` as it was: the lexicographic minimum, subtracted, point after point.
    fn offsets_by_lexmin(map: &Map<'_>) -> Option<Vec<Vec<i64>>> {
        let n = map.n_dims(Side::Out).unwrap();
        if map.n_dims(Side::In).unwrap() != n {
            return None;
        }
        let mut offsets = map
            .clone()
            .reset_tuple_id(Side::In)
            .unwrap()
            .reset_tuple_id(Side::Out)
            .unwrap()
            .deltas()
            .unwrap();
        offsets = offsets.project_out_params().unwrap();
        if !offsets.is_bounded().unwrap() {
            return None;
        }
        let mut points = Vec::new();
        while !offsets.is_empty().unwrap() {
            if points.len() == MAX_OFFSETS {
                return None;
            }
            let first = offsets.clone().lexmin().unwrap();
            points.push(
                (0..n)
                    .map(|k| first.plain_fixed(k).unwrap())
                    .collect::<Option<Vec<i64>>>()?,
            );
            offsets = offsets.subtract(first).unwrap();
        }
        points.reverse();
        Some(points)
    }

    /// The scan of the points gives what the lexicographic minima gave: on uniform and skewed
    /// tile relations (with existentially quantified instances), parametric ones, one with
    /// exactly the limit of distances and ones with one more or many more (2mm's relation
    /// between nests at LARGE), an unbounded one, an empty one and one between spaces of
    /// different dimensions.
    #[test]
    fn scanned_offsets_are_the_lexicographic_minima_in_decreasing_order() {
        let ctx = Ctx::new().unwrap();
        let cases = [
            "{ N0[i] -> N0[j] : 0 <= i < 10 and i < j <= i + 2 }",
            "{ N0[o0, o1] -> N1[o0', o1' = 0] : o0 >= 0 and 0 <= o1 <= 18 and 2o0 <= o0' <= 24 and o0' <= 1 + 2o0 }",
            "[T, N] -> { N0[a, b] -> N0[c, d] : exists (t, i : 0 <= t < T and 1 <= i < N - 1 and 7a <= t <= 7a + 6 \
             and 3b <= t + i <= 3b + 2 and 7c <= t + 1 <= 7c + 6 and 3d <= t + i + 2 <= 3d + 2) }",
            "{ N0[a, b, c, d] -> N0[w, x, y, z] : 0 <= a <= 62 and 2a <= b <= 139 and a <= w <= a + 1 and b <= x <= b + 1 \
             and c <= y <= c + 1 and d <= z <= d + 1 and 8d <= 15 + b and -3 + a <= 4d and 0 <= c <= 139 }",
            "[n] -> { N0[i, j] -> N0[i + 1, k] : 0 <= i < n and 0 <= j < n and -1 <= k - j <= 1 }",
            "{ N0[i] -> N0[j] : 0 <= i < 100 and 1 <= j - i <= 64 }",
            "{ N0[i] -> N0[j] : 0 <= i < 100 and 1 <= j - i <= 65 }",
            "{ N0[i, j] -> N0[k, l] : 0 <= i < 100 and 0 <= j < 100 and exists (m : k - i = 3m and l - j = 6m and 0 <= m <= 30) }",
            "[n] -> { N0[i] -> N0[j] : 0 <= i < j < n }",
            "{ N0[i] -> N0[j] : 0 <= i < 10 and j = i + 1 and i > 20 }",
            "{ N0[i] -> N1[i, j] : 0 <= i, j < 4 }",
        ];
        for text in cases {
            let map = Map::read(&ctx, text).unwrap();
            let want = offsets_by_lexmin(&map);
            assert_eq!(few_offsets(&map).unwrap(), want, "{text}");
        }
        // The cases above cover both outcomes.
        let some = cases
            .iter()
            .filter(|t| few_offsets(&Map::read(&ctx, t).unwrap()).unwrap().is_some())
            .count();
        assert!(
            some >= 5 && some < cases.len(),
            "{some} of {} have few offsets",
            cases.len()
        );
    }
}
