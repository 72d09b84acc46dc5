//! Tile boundaries on the cache lines of the arrays a nest writes, wherever they are in memory.
//!
//! A tile cut along the contiguous subscript of an array that starts mid-line (`calloc` and
//! `malloc` return large blocks 16 bytes into a page) shares a cache line with its neighbour at
//! each end. Where neighbouring tiles run at once on two threads and write those lines, every
//! write takes the line from the other core: gramschmidt's tasks rewrite their block of `A` once
//! per `k`, and the tasks beside a task of the next column block ran 2.6 to 3.1 times longer than
//! on one thread. The arrays' addresses are only known at run time, so the tile grid is shifted
//! at run time: the member along that subscript is cut at `floor((p + s) / T)` instead of
//! `floor(p / T)`, where `s`, a parameter of the nest's schedule (`tf_line<k>`, `0 <= s < L` for
//! `L` elements per line), is computed from the array's address where the SCoP starts
//! ([`RowLine::init`]). A constant shift of one member of a permutable band is a legal tiling
//! for every `s` (the schedule is verified with `s` free like any parameter); the tiles that
//! are full keep their constant trip counts, and one more partial tile may appear at each end.
//!
//! The anchor is a write of the nest's deepest statement: its array's rows must be whole lines
//! (the row length in bytes a multiple of 64, so that every row starts at the same place in a
//! line; a vector has no rows to share), its last subscript must differ from the point loop's
//! value by a constant, the member's tile size must be a multiple of `L`, at least two lines,
//! the write must be an update in place (an element written again, once per `k`), and some
//! dependence of the nest must go across the member ([`carried_across`]): only then do
//! neighbouring tiles wait for each other and run as a wavefront, each rewriting its rows
//! while the other does (deriche's recursive filters write each element of their rows once:
//! shifted, they ran no faster and took 8% longer to compile). Shifting every nest that writes whole lines (a partial tile more at
//! each row of tiles, a triangle's diagonal across more of them) measured at LARGE on two
//! threads: gramschmidt 1.25x and cholesky 1.15x faster, but syrk and syr2k 0.84x, gesummv
//! 0.79x, atax 0.63x (vectors), correlation, covariance, symm and 2mm 0.94 to 0.98x; the kernels
//! whose dependences stay along the member are those that lost.

use crate::isl::{UnionMap, UnionSet};
use crate::maps::{names, tuple};
use crate::scop::stmt_of_name;
use crate::tile_size::element_bytes;
use crate::{Result, WHOLE_LOOP};
use scop_ir::{AccessKind, Scop};

/// Bytes of a cache line the tile grid is aligned to.
pub const LINE_BYTES: u64 = 64;

/// The parameter that shifts one nest's tile grid onto cache lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowLine {
    /// The nest's number `k` (its tiles are `N<k>`).
    pub nest: usize,
    /// The parameter's name, `tf_line<k>` for nest `k`.
    pub param: String,
    /// The C expression of its value where the SCoP starts (of type `long`, in `0..lanes`).
    pub init: String,
    /// The member of the nest's band whose tiles it shifts (along the array's rows).
    pub member: usize,
    /// The dimension of the nest's flat schedule that holds that member's values.
    pub point_dim: usize,
    /// The array whose lines the tiles follow (its C name).
    pub array: String,
    /// Elements per cache line of that array: the parameter's values are `0 .. lanes`.
    pub lanes: i64,
}

impl std::fmt::Display for RowLine {
    /// `N0 on the lines of R`, as `-v` says it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "N{} on the lines of {}", self.nest, self.array)
    }
}

impl RowLine {
    /// The parameter's values as an ISL parameter set.
    pub fn context(&self) -> String {
        format!(
            "[{p}] -> {{ : 0 <= {p} < {l} }}",
            p = self.param,
            l = self.lanes
        )
    }
}

/// For each of `nests` (a schedule of `scop`, with dependences `deps`), the dimension of its flat
/// schedule along which its tile grid would be shifted onto an array's lines if
/// [`crate::ScheduleConfig::align_nests`] named it (its tile code's iterator `tf_i<d>`), or
/// `None`.
pub fn follows_lines(
    scop: &Scop,
    deps: &crate::Dependences,
    nests: &[crate::Nest],
) -> Result<Vec<Option<usize>>> {
    let ctx = crate::isl::Ctx::shared()?;
    let deps = crate::deps::all_of(ctx, deps)?;
    nests
        .iter()
        .enumerate()
        .map(|(k, nest)| {
            if nest.tile_sizes.is_empty() {
                return Ok(None);
            }
            let flat = UnionMap::read(ctx, &nest.schedule)?;
            let (flat, depth) = crate::maps::pad_to_common_depth(flat)?;
            Ok(align_tiles(scop, &flat, &deps, depth, &nest.tile_sizes, k)?
                .map(|(_, line)| line.point_dim))
        })
        .collect()
}

/// The parameter set `params` (ISL text, as `polyhedral::estimate_params` gives) with every shift
/// of `lines` at 0, the tiles an estimate counts (one value: a shift moves a partial tile from one
/// end of a row of tiles to the other, not the work or the span).
pub fn with_row_lines(params: &str, lines: &[RowLine]) -> Result<String> {
    let ctx = crate::isl::Ctx::shared()?;
    let mut set = crate::isl::Set::read(ctx, params)?;
    for line in lines {
        let zero = format!("[{p}] -> {{ : {p} = 0 }}", p = line.param);
        set = set.intersect(crate::isl::Set::read(ctx, &zero)?)?;
    }
    set.to_str()
}

/// `flat` (a nest's padded flat schedule: `n = sizes.len()` tile coordinates, then the point
/// loops, `depth` dimensions in all) with one member's tiles shifted onto the cache lines of an
/// array its deepest statement writes, and the parameter that does it; `None` where no write
/// qualifies (see the module documentation).
pub(crate) fn align_tiles<'c>(
    scop: &Scop,
    flat: &UnionMap<'c>,
    deps: &UnionMap<'c>,
    depth: usize,
    sizes: &[i64],
    nest: usize,
) -> Result<Option<(UnionMap<'c>, RowLine)>> {
    let ctx = flat.ctx();
    let n = sizes.len();
    if n == 0 || depth < 2 * n {
        return Ok(None);
    }
    let mut stmts: Vec<_> = flat
        .maps()?
        .iter()
        .filter_map(|m| {
            m.tuple_name(crate::isl::Side::In)
                .as_deref()
                .and_then(stmt_of_name)
        })
        .collect();
    stmts.sort_by_key(|&s| (std::cmp::Reverse(scop.statement(s).iterators.len()), s));
    stmts.dedup();
    let Some(&anchor) = stmts.first() else {
        return Ok(None);
    };
    let o = names("o", depth);
    // The point dimension that holds member `m`'s values: every statement's tile coordinate
    // along `m` is that value over the size (the shift below rewrites exactly that). It is
    // dimension `n + m` until the point loops are reordered (`reorder_points`).
    let point_dim = |m: usize| -> Result<Option<usize>> {
        let t = sizes[m];
        let range = flat.clone().range()?;
        for d in std::iter::once(n + m).chain((n..depth).filter(|&d| d != n + m)) {
            let cut = UnionSet::read(
                ctx,
                &format!(
                    "{{ {} : {t} * {tm} <= {pd} <= {t} * {tm} + {} }}",
                    tuple("", &o),
                    t - 1,
                    tm = o[m],
                    pd = o[d]
                ),
            )?;
            if range.is_subset(&cut)? {
                return Ok(Some(d));
            }
        }
        Ok(None)
    };
    for access in &scop.statement(anchor).accesses {
        if access.kind != AccessKind::Write {
            continue;
        }
        let array = scop.array(access.array);
        let elem = element_bytes(&array.elem_type);
        // A scalar expanded for the scheduler (`expand_scalars`) has more subscripts than
        // extents, and no address in the program.
        if array.rank < 2
            || array.extents.len() != array.rank
            || elem == 0
            || !LINE_BYTES.is_multiple_of(elem)
        {
            continue;
        }
        let lanes = (LINE_BYTES / elem) as i64;
        // Every row starts at the same place in a line.
        let row: Option<u64> = array.extents[1..]
            .iter()
            .try_fold(1u64, |r, e| r.checked_mul((*e)?));
        match row {
            Some(r) if r.checked_mul(elem).is_some_and(|b| b % LINE_BYTES == 0) => {}
            _ => continue,
        }
        let subs = names("a", array.rank);
        let last = UnionMap::read(
            ctx,
            &format!(
                "{{ {} -> [{}] }}",
                tuple(&array.isl_name, &subs),
                subs[array.rank - 1]
            ),
        )?;
        let acc = UnionMap::read(ctx, &access.relation)?;
        // An element written once costs its line's move to the other core once: only one
        // that is rewritten (once per `k`, gramschmidt's and cholesky's updates in place) moves
        // it back and forth while the neighbouring tile does the same.
        if acc.clone().reverse()?.is_single_valued()? {
            continue;
        }
        let sub = acc.clone().apply_range(last)?;
        // The cheap tests first: compilation time goes to the ISL ones, most to the
        // dependences'.
        for m in 0..n {
            let t = sizes[m];
            if t == WHOLE_LOOP || t % lanes != 0 || t < 2 * lanes {
                continue;
            }
            let Some(pd) = point_dim(m)? else {
                continue;
            };
            let pick = UnionMap::read(ctx, &format!("{{ {} -> [{}] }}", tuple("", &o), o[pd]))?;
            let point = flat
                .clone()
                .intersect_domain(acc.clone().domain()?)?
                .apply_range(pick.clone())?;
            let diff = point
                .flat_range_product(sub.clone())?
                .apply_range(UnionMap::read(ctx, "{ [p, q] -> [p - q] }")?)?
                .range()?
                .sets()?;
            let [diff] = diff.as_slice() else {
                continue;
            };
            let Some((lo, hi)) = diff.dim_range(0)? else {
                continue;
            };
            if lo != hi || !carried_across(flat, deps, &pick)? {
                continue;
            }
            // The point loop's value is the subscript plus `lo`: a tile starts on a line when
            // the element's index from the line before the array, `addr / elem + p - lo`, is a
            // multiple of `lanes`, so `s = (addr / elem - lo) mod lanes`.
            let param = format!("tf_line{nest}");
            let shifted: Vec<String> = (0..depth)
                .map(|d| {
                    if d == m {
                        format!("floor(({} + {param}) / {})", o[pd], sizes[d])
                    } else {
                        o[d].clone()
                    }
                })
                .collect();
            let shift = UnionMap::read(
                ctx,
                &format!(
                    "[{param}] -> {{ {} -> {} }}",
                    tuple("", &o),
                    tuple("", &shifted)
                ),
            )?;
            let init = format!(
                "(long)((((unsigned long)(const void *)({name})) / {elem}u + {back}u) % {lanes}u)",
                name = array.name,
                back = (-lo).rem_euclid(lanes),
            );
            return Ok(Some((
                flat.clone().apply_range(shift)?,
                RowLine {
                    nest,
                    param,
                    init,
                    member: m,
                    point_dim: pd,
                    array: array.name.clone(),
                    lanes,
                },
            )));
        }
    }
    Ok(None)
}

/// Whether some dependence between two instances of the nest (`flat`'s statements) goes from one
/// value of the point dimension `pick` selects to another: only then do tiles that neighbour
/// along it wait for each other, run as a wavefront, and write the same rows at once on two
/// threads (gramschmidt's columns, cholesky's). A nest whose dependences keep that value (a
/// product accumulating along `k` into `C[i][j]`) runs its neighbouring tiles independently, and
/// its register kernels write each line of the tile once: a shift gains nothing there and costs
/// a partial tile more along the member (and, in a triangle, tiles across its diagonal).
fn carried_across<'c>(
    flat: &UnionMap<'c>,
    deps: &UnionMap<'c>,
    pick: &UnionMap<'c>,
) -> Result<bool> {
    let ctx = flat.ctx();
    let instances = flat.clone().domain()?;
    let at = flat.clone().apply_range(pick.clone())?;
    let distances = deps
        .clone()
        .intersect_domain(instances.clone())?
        .intersect_range(instances)?
        .apply_domain(at.clone())?
        .apply_range(at)?
        .deltas()?;
    Ok(!distances.is_subset(&UnionSet::read(ctx, "{ [0] }")?)?)
}

#[cfg(test)]
mod tests {
    use crate::isl::{Ctx, UnionMap};
    use crate::ScheduleConfig;

    /// The one nest of all of `scop`'s statements (these kernels' only nest).
    fn every_nest(scop: &scop_ir::Scop) -> Vec<Vec<scop_ir::StmtId>> {
        vec![scop.statements.iter().map(|s| s.id).collect()]
    }

    /// gramschmidt's nest at LARGE, scheduled with the tile grids on cache lines.
    fn gramschmidt(align: bool) -> (scop_ir::Scop, crate::Dependences, crate::TiledSchedule) {
        let scop = crate::polybench_scops_at("gramschmidt", "LARGE")
            .into_iter()
            .next()
            .expect("a SCoP");
        let deps = crate::dependences(&scop).unwrap();
        let cfg = ScheduleConfig {
            tile_sizes: Some(vec![32, 64]),
            align_nests: if align { every_nest(&scop) } else { Vec::new() },
            ..ScheduleConfig::default()
        };
        let (sched, _) = crate::schedule(&scop, &deps, &cfg).unwrap();
        (scop, deps, sched)
    }

    /// The second coordinate of the tile of `instance` in `tile_map` with the parameter `param`
    /// at `value`.
    fn block_of(tile_map: &str, param: &str, value: i64, instance: &str) -> i64 {
        let ctx = Ctx::shared().unwrap();
        let fixed = format!("[{param}] -> {{ {instance} : {param} = {value} }}");
        let at = crate::isl::UnionSet::read(ctx, &fixed).unwrap();
        let tiles = UnionMap::read(ctx, tile_map)
            .unwrap()
            .intersect_domain(at)
            .unwrap()
            .range()
            .unwrap()
            .sets()
            .unwrap();
        assert_eq!(tiles.len(), 1, "{instance} at {param} = {value}");
        match tiles[0].dim_range(1).unwrap() {
            Some((lo, hi)) if lo == hi => lo,
            other => panic!("{instance} at {param} = {value}: blocks {other:?}"),
        }
    }

    #[test]
    fn gramschmidts_column_blocks_start_on_the_lines_of_r() {
        let (scop, deps, sched) = gramschmidt(true);
        let line = sched.nests[0].row_line.clone().expect("a row line");
        // The deepest statements write `R[k][j]` and `A[i][j]` along `j`, the band's second
        // member; rows of 1000 doubles are whole lines.
        assert_eq!((line.member, line.lanes), (1, 8), "{line:?}");
        assert_eq!(line.param, "tf_line0");
        assert_eq!(
            line.init,
            format!(
                "(long)((((unsigned long)(const void *)({})) / 8u + 0u) % 8u)",
                line.array
            )
        );
        // Column blocks of 64 start where `j + s` is a multiple of 64.
        let map = &sched.nests[0].tile_map;
        for (s, j, block) in [
            (0, 63, 0),
            (0, 64, 1),
            (3, 60, 0),
            (3, 61, 1),
            (7, 56, 0),
            (7, 57, 1),
        ] {
            let got = block_of(map, "tf_line0", s, &format!("S6[0, {j}, 5]"));
            assert_eq!(got, block, "s = {s}, j = {j}");
        }
        // Legal for every shift.
        crate::verify(&scop, &deps, &sched).unwrap();
        // Without the option, the same tiles as the shift 0.
        let (_, _, plain) = gramschmidt(false);
        assert_eq!(plain.nests[0].row_line, None);
        // Asked of the schedule without the shift (its point loops reordered): it would, along
        // the point loop of `j`.
        let along = crate::follows_lines(&scop, &deps, &plain.nests).unwrap();
        assert_eq!(along, vec![Some(line.point_dim)]);
        assert_eq!(
            block_of(&plain.nests[0].tile_map, "tf_unused", 0, "S6[0, 64, 5]"),
            1
        );
    }

    #[test]
    fn rows_that_are_not_whole_lines_or_not_waited_for_keep_their_tiles() {
        // gemm at LARGE writes `C[i][j]` in rows of 1100 doubles (8800 bytes): a row starts at
        // another place in its line than the one before, and no shift suits them all.
        let scop = crate::polybench_scops_at("gemm", "LARGE")
            .into_iter()
            .next()
            .expect("a SCoP");
        let deps = crate::dependences(&scop).unwrap();
        let cfg = ScheduleConfig {
            align_nests: every_nest(&scop),
            ..ScheduleConfig::default()
        };
        let (sched, _) = crate::schedule(&scop, &deps, &cfg).unwrap();
        assert!(sched.nests.iter().all(|n| n.row_line.is_none()));
        // syrk at LARGE writes rows of 1200 doubles, whole lines, but accumulates along `k`
        // into each `C[i][j]`: its neighbouring tiles along `j` do not wait for each other.
        let scop = crate::polybench_scops_at("syrk", "LARGE")
            .into_iter()
            .next()
            .expect("a SCoP");
        let deps = crate::dependences(&scop).unwrap();
        let (sched, _) = crate::schedule(&scop, &deps, &cfg).unwrap();
        assert!(sched.nests.iter().all(|n| n.row_line.is_none()));
        assert_eq!(
            crate::follows_lines(&scop, &deps, &sched.nests).unwrap(),
            vec![None]
        );
        // Tiles narrower than two lines are not shifted either.
        let (scop, deps, _) = gramschmidt(false);
        let cfg = ScheduleConfig {
            tile_sizes: Some(vec![32, 8]),
            align_nests: every_nest(&scop),
            ..ScheduleConfig::default()
        };
        let (sched, _) = crate::schedule(&scop, &deps, &cfg).unwrap();
        assert_eq!(sched.nests[0].row_line, None);
    }
}
