//! Materialized scalar expansion: a scalar whose copies (one per iteration of its outer loops,
//! [`crate::privatize`]) cannot live in one variable per task is stored in an array of copies.
//!
//! Privatization keeps an expanded scalar in one variable per task when its values never cross
//! a task. When they do (symm's `temp2` under a schedule that tiles the `k` loop of its running
//! sum: each `(i, j)`'s sum is built by several tasks), the driver used to drop the expansion and
//! schedule again with the scalar's dependences, which serialize its loops (symm's first nest
//! became 16 tasks in a chain). Instead, the expanded scalar can be what the scheduler saw: an
//! array `tf_x_<name>[i][j]` indexed by the iterators of its outer loops. The dependences, the
//! schedule and the tiles are then exactly those computed for the expanded SCoP, so nothing new
//! needs proving; the cost is memory, bounded by [`MAX_COPIES_BYTES`].
//!
//! A temporary array (doitgen's `sum[p]`, expanded to `sum[r, q, p]`) is kept the same way, its
//! own subscripts after the copies' (`tf_x_sum[r][q][p]`: the statement's text keeps its
//! subscripts and the copies' go in front), its own extents from 0 to the largest subscript
//! used. Measured on doitgen at LARGE (tasks, 2 threads): 1.05x -> 1.62x over gcc -O3 (the
//! row loops become a batched matrix product with `p` innermost; omp 2.06x).
//!
//! The control program allocates the array (`tf_copies_alloc`, emitted by taskgen): its pages are
//! first touched by the tasks, inside the kernel, so one past 4 MiB is advised onto huge pages on
//! Linux (doitgen's 27 MB of copies at LARGE were 6 600 page faults: 12% of its time on one
//! thread).
//!
//! Under the tasks target the copies live in blocks lent by tile row instead where every task
//! that touches a copy is a tile of the row holding it ([`copy_blocks`]; streamrt's
//! `tf_blocks_*`): a row's block exists from its first task to its last, and its memory then
//! serves the next row. doitgen at EXTRALARGE kept 119 MB of copies, faulted in by the tasks and
//! on huge pages, whose compaction made its runs bimodal on two threads (0.06 or 0.3 s); in
//! blocks of one `r` (475 KB, a few lent at a time) it ran 0.063 -> 0.057 s on two threads
//! (medians of 11 in rounds; the slowest run 0.32 -> 0.065) and 0.114 -> 0.109 on one.
//!
//! Conditions (each checked, otherwise the scalar is not materialized and the driver falls back
//! to keeping its dependences):
//! - in every statement that accesses the scalar, expansion dimension `k` (the original
//!   schedule's loop dimension `2k + 1`) is the statement's `k`-th iterator or its opposite (a
//!   loop that counts down), so the subscript is that iterator, printed from the statement's own
//!   text;
//! - the iterators' ranges are constants (the SCoP's parameters are fixed), so the array has a
//!   fixed size, at most [`MAX_COPIES_BYTES`];
//! - the last write (in the original order) writes one known element, whose value is copied to
//!   the user's scalar after the SCoP, as a private scalar's last value is; for an array, the
//!   last writes of all its elements write one copy, and every element from 0 to the largest
//!   subscript is written (that copy goes back to the user's array whole, `memcpy`).

use crate::isl::{Ctx, UnionMap, UnionSet};
use crate::maps::input_error;
use crate::privatize::{ScalarExpansion, MAX_COPIES_BYTES};
use crate::scop::ScopSets;
use crate::tile_size::element_bytes;
use crate::Result;
use scop_ir::{ArrayId, BodyPiece, Scop, StmtId, Storage};

/// A scalar kept in an array of copies (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Materialized {
    pub array: ArrayId,
    /// The user's scalar.
    pub scalar: String,
    /// The array of copies in generated code: `tf_x_<scalar>`.
    pub name: String,
    pub elem_type: String,
    /// The smallest value of each subscript (the array is indexed from it).
    pub lower: Vec<i64>,
    /// The extent of each dimension.
    pub extents: Vec<u64>,
    /// The copy that holds the last values: for a scalar the element the last write writes, for
    /// an array the first subscripts of the copy every element's last write writes (as in the
    /// source, before `lower` is subtracted).
    pub last: Vec<i64>,
    /// The user's variable outlives the SCoP, so its last value goes back to it (not for a
    /// scalar declared inside the SCoP, `Storage::Block`).
    pub live_out: bool,
    /// The rank of the user's variable (0 for a scalar): its own subscripts follow the copies'
    /// (`extents` ends with its declared extents), and the whole copy `last` goes back to it.
    pub own_rank: usize,
    /// For each statement that accesses the scalar, the sign of each iterator in its subscript:
    /// `-1` for a loop that counts down (its schedule dimension is `-i`).
    pub signs: Vec<(StmtId, Vec<i64>)>,
    /// Where the copies live in blocks lent by tile row instead of one array ([`copy_blocks`];
    /// the tasks target only), set by the driver.
    pub blocks: Option<CopyBlocks>,
}

/// An array of copies stored in blocks of `rows` values of its first subscript (see
/// [`copy_blocks`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyBlocks {
    /// Values of the first subscript per block: the tile size along it.
    pub rows: i64,
    /// The tasks of each tile row (one block each) that touch the copies' block: the tiles of
    /// every nest that accesses them.
    pub tasks: Vec<i64>,
}

/// The most tile rows [`copy_blocks`] gives blocks (one count each in the generated code).
pub const MAX_BLOCKS: usize = 1 << 14;
/// The most tiles [`copy_blocks`] counts in one nest.
pub const MAX_COUNTED_TILES: usize = 1 << 20;

impl Materialized {
    /// Bytes of the array.
    pub fn bytes(&self) -> u64 {
        self.extents
            .iter()
            .fold(element_bytes(&self.elem_type), |b, &e| b.saturating_mul(e))
    }
}

/// How scalar `e` of `scop` (unexpanded) would be materialized, or `None` when a condition of the
/// module doc fails.
pub fn materialization(scop: &Scop, e: &ScalarExpansion) -> Result<Option<Materialized>> {
    let array = scop.array(e.array);
    if e.loops == 0 {
        return Ok(None);
    }

    let ctx = Ctx::shared()?;
    // Subscript k is iterator k, or its opposite, in every accessing statement.
    let mut signs = Vec::new();
    for stmt in scop
        .statements
        .iter()
        .filter(|s| s.accesses.iter().any(|a| a.array == e.array))
    {
        if stmt.iterators.len() < e.loops {
            return Ok(None);
        }
        let schedule = UnionMap::read(ctx, &stmt.schedule)
            .map_err(|err| input_error("schedule", &stmt.schedule, err))?;
        let depth = match schedule.maps()?.first() {
            Some(m) => m.n_dims(crate::isl::Side::Out)?,
            None => return Ok(None),
        };
        if depth < 2 * e.loops {
            return Ok(None);
        }
        let it: Vec<String> = (0..stmt.iterators.len()).map(|k| format!("i{k}")).collect();
        let o: Vec<String> = (0..depth).map(|k| format!("o{k}")).collect();
        let mut stmt_signs = Vec::with_capacity(e.loops);
        for k in 0..e.loops {
            let mut found = None;
            for sign in [1i64, -1] {
                let equal = UnionMap::read(
                    ctx,
                    &format!(
                        "{}{{ {}[{}] -> [{}] : o{} = {sign} * i{k} }}",
                        params_of(scop),
                        stmt.id,
                        it.join(", "),
                        o.join(", "),
                        2 * k + 1
                    ),
                )?;
                if schedule.is_subset(&equal)? {
                    found = Some(sign);
                    break;
                }
            }
            match found {
                Some(sign) => stmt_signs.push(sign),
                None => return Ok(None),
            }
        }
        signs.push((stmt.id, stmt_signs));
    }
    let expanded = crate::expand_scalars(scop, std::slice::from_ref(e))?;
    let sets = ScopSets::parse(ctx, &expanded)?;
    let space = UnionSet::read(
        ctx,
        &format!(
            "{} -> {{ {}[{}] }}",
            scop.isl_params(),
            array.isl_name,
            (0..e.loops + array.rank)
                .map(|k| format!("x{k}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )?;
    let writes = sets.writes.clone().intersect_range(space.clone())?;
    let accesses = sets
        .reads
        .clone()
        .intersect_range(space)?
        .union(writes.clone())?;
    let touched = accesses.range()?.coalesce()?.sets()?;
    let [touched] = touched.as_slice() else {
        return Ok(None);
    };
    let mut lower = Vec::with_capacity(e.loops);
    let mut extents = Vec::with_capacity(e.loops);
    for k in 0..e.loops {
        let Some((lo, hi)) = touched.dim_range(k)? else {
            return Ok(None);
        };
        lower.push(lo);
        extents.push(u64::try_from(hi - lo + 1).unwrap_or(0));
    }
    // An array's own dimensions follow the copies', from 0 to the largest subscript used (a
    // declared extent bounds it too).
    let mut own_extents = Vec::with_capacity(array.rank);
    for k in 0..array.rank {
        let Some((lo, hi)) = touched.dim_range(e.loops + k)? else {
            return Ok(None);
        };
        let declared = array.extents.get(k).copied().flatten();
        if lo < 0 || declared.is_some_and(|n| u64::try_from(hi).map_or(true, |h| h >= n)) {
            return Ok(None);
        }
        own_extents.push(u64::try_from(hi + 1).unwrap_or(0));
    }
    extents.extend(&own_extents);
    // The last write in the original order of each element (of the user's array: an element's
    // copies are its elements with any first subscripts), and the copy it writes.
    let written = writes.clone().domain()?;
    let original_writes = sets.original.clone().intersect_domain(written.clone())?;
    let mut later = original_writes.clone().lex_lt_union_map(original_writes)?;
    if array.rank > 0 {
        let own: Vec<usize> = (e.loops..e.loops + array.rank).collect();
        let user_element = writes.clone().apply_range(UnionMap::read(
            ctx,
            &copy_projection(&array.isl_name, e.loops + array.rank, "", &own),
        )?)?;
        later = later.intersect(user_element.clone().apply_range(user_element.reverse()?)?)?;
    }
    let last = written.subtract(later.domain()?)?;
    let prefix: Vec<usize> = (0..e.loops).collect();
    let last_copies = writes
        .clone()
        .intersect_domain(last)?
        .apply_range(UnionMap::read(
            ctx,
            &copy_projection(&array.isl_name, e.loops + array.rank, "", &prefix),
        )?)?
        .range()?
        .coalesce()?
        .sets()?;
    // Every element's last value in one copy, which goes back to the user's variable whole: the
    // elements written must then be all of the array (the others would be overwritten).
    let [last_copy] = last_copies.as_slice() else {
        return Ok(None);
    };
    let Some(points) = last_copy.clone().project_out_params()?.points_upto(1)? else {
        return Ok(None);
    };
    let [last] = points.as_slice() else {
        return Ok(None);
    };
    if array.rank > 0 {
        let own: Vec<usize> = (e.loops..e.loops + array.rank).collect();
        let elements = writes
            .apply_range(UnionMap::read(
                ctx,
                &copy_projection(&array.isl_name, e.loops + array.rank, &array.isl_name, &own),
            )?)?
            .range()?;
        let x = crate::maps::names("x", array.rank);
        let bounds: Vec<String> = own_extents
            .iter()
            .zip(&x)
            .map(|(n, v)| format!("0 <= {v} < {n}"))
            .collect();
        let whole = UnionSet::read(
            ctx,
            &format!(
                "{} -> {{ {} : {} }}",
                scop.isl_params(),
                crate::maps::tuple(&array.isl_name, &x),
                bounds.join(" and ")
            ),
        )?;
        if !whole.is_subset(&elements)? {
            return Ok(None);
        }
    }
    let m = Materialized {
        array: e.array,
        scalar: array.name.clone(),
        name: format!("tf_x_{}", array.name),
        elem_type: array.elem_type.clone(),
        lower,
        extents,
        last: last.clone(),
        live_out: array.storage != Storage::Block,
        own_rank: array.rank,
        signs,
        blocks: None,
    };
    if m.extents.contains(&0) || m.bytes() > MAX_COPIES_BYTES {
        return Ok(None);
    }
    Ok(Some(m))
}

/// Whether `m`'s copies can live in blocks lent by tile row (`tf_blocks_*` of streamrt) for the
/// task program of `sched`, and their size: every nest whose statements access the copies is
/// tiled with the same size `T` along its first member, and each instance that accesses them
/// lies in the tile row `t0` that holds its copy, `T t0 <= x0 < T (t0 + 1)` for `x0` the first
/// subscript (from 0, as the array of copies is indexed). Then every task that touches copy
/// `x0` is a tile of row `floor(x0 / T)` of its nest, and the block of a row lives from its
/// first task to its last: doitgen's `sum[r][q][p]` at EXTRALARGE (119 MB as one array, its
/// pages faulted in by the tasks on the first touch and through the TLB after) becomes blocks of
/// one `r`, 475 KB, a few of them lent at a time and reused while they are in the cache.
/// The tasks of each row are counted on the nests' tile domains (the tiles the task program
/// spawns): streamrt takes a block back when its count of finished tasks is reached, and a
/// count that does not match is an error at run time, never a silent reuse. `None` where a
/// nest is not tiled along it, is tiled along a shifted grid (`row_line`), the sizes differ,
/// one tile row would hold every copy, or the tiles are too many to count.
pub fn copy_blocks(
    scop: &Scop,
    sched: &crate::TiledSchedule,
    m: &Materialized,
) -> Result<Option<CopyBlocks>> {
    let ctx = Ctx::shared()?;
    let Some(&extent) = m.extents.first() else {
        return Ok(None);
    };
    let (Some(&lower), Some(&extent)) = (m.lower.first(), i64::try_from(extent).ok().as_ref())
    else {
        return Ok(None);
    };
    let mut rows = None;
    let mut tasks: Vec<i64> = Vec::new();
    for (k, nest) in sched.nests.iter().enumerate() {
        let accessing: Vec<&(StmtId, Vec<i64>)> = m
            .signs
            .iter()
            .filter(|(id, _)| nest.statements.contains(id))
            .collect();
        if accessing.is_empty() {
            continue;
        }
        let t = match nest.tile_sizes.first() {
            Some(&t) if t > 0 && t < extent && nest.row_line.is_none() => t,
            _ => return Ok(None),
        };
        if rows.is_some_and(|r| r != t) {
            return Ok(None);
        }
        rows = Some(t);
        let tile_map = UnionMap::read(ctx, &nest.tile_map)
            .map_err(|err| input_error("tile map", &nest.tile_map, err))?;
        let tiles = crate::maps::names("t", nest.tile_sizes.len());
        for (id, signs) in accessing {
            let Some(stmt) = scop.statements.get(id.index()) else {
                return Ok(None);
            };
            let Some(&sign) = signs.first() else {
                return Ok(None);
            };
            let it = crate::maps::names("i", stmt.iterators.len());
            // The copy's first subscript, as `with_materialized` prints it.
            let i0 = if sign < 0 { "-i0" } else { "i0" };
            let x0 = if lower >= 0 {
                format!("{i0} - {lower}")
            } else {
                format!("{i0} + {}", -lower)
            };
            let inside = UnionMap::read(
                ctx,
                &format!(
                    "{}{{ {} -> {} : {t} * t0 <= {x0} < {t} * t0 + {t} }}",
                    params_of(scop),
                    crate::maps::tuple(&id.to_string(), &it),
                    crate::maps::tuple(&format!("N{k}"), &tiles),
                ),
            )?;
            let of_stmt = tile_map.clone().intersect_domain(UnionSet::read(
                ctx,
                &format!(
                    "{}{{ {} }}",
                    params_of(scop),
                    crate::maps::tuple(&id.to_string(), &it)
                ),
            )?)?;
            if !of_stmt.is_subset(&inside)? {
                return Ok(None);
            }
        }
        // The nest's tiles per row: every task of the nest's class uses its row's block.
        let count = usize::try_from((extent + t - 1) / t).unwrap_or(usize::MAX);
        if count > MAX_BLOCKS {
            return Ok(None);
        }
        tasks.resize(count, 0);
        let domain = UnionSet::read(ctx, &nest.tile_domain)
            .map_err(|err| input_error("tile domain", &nest.tile_domain, err))?;
        for set in domain.sets()? {
            let Some(points) = set.points_upto(MAX_COUNTED_TILES)? else {
                return Ok(None);
            };
            for point in points {
                match point.first().and_then(|&t0| usize::try_from(t0).ok()) {
                    Some(row) if row < count => tasks[row] += 1,
                    _ => return Ok(None),
                }
            }
        }
    }
    Ok(rows.map(|rows| CopyBlocks { rows, tasks }))
}

/// `{ name[x0, .., x(d-1)] -> out[x(k) for k in keep] }`: some subscripts of the copies of an
/// expanded variable.
fn copy_projection(name: &str, d: usize, out: &str, keep: &[usize]) -> String {
    let x = crate::maps::names("x", d);
    let kept: Vec<String> = keep.iter().map(|&k| x[k].clone()).collect();
    format!(
        "{{ {} -> {} }}",
        crate::maps::tuple(name, &x),
        crate::maps::tuple(out, &kept)
    )
}

/// `[p, q] -> ` for the SCoP's parameters.
fn params_of(scop: &Scop) -> String {
    format!("{} -> ", scop.isl_params())
}

/// `scop` as generated code sees it with the scalars `materialized` stored in their arrays: each
/// is a local array of constant extents named [`Materialized::name`], and each statement that
/// uses one names its element, `tf_x_s[i - lo][j - lo']`, with the statement's own iterators.
pub fn with_materialized(scop: &Scop, materialized: &[Materialized]) -> Scop {
    let mut out = scop.clone();
    for m in materialized {
        let Some(array) = out.arrays.get_mut(m.array.index()) else {
            continue;
        };
        array.name = m.name.clone();
        array.rank = m.extents.len();
        array.extents = m.extents.iter().map(|&e| Some(e)).collect();
        array.storage = Storage::Local;
        array.written = true;
        for stmt in &mut out.statements {
            let Some((_, signs)) = m.signs.iter().find(|(id, _)| *id == stmt.id) else {
                continue;
            };
            let mut body = Vec::with_capacity(stmt.body.len());
            for piece in std::mem::take(&mut stmt.body) {
                match piece {
                    BodyPiece::Var(id) if id == m.array => {
                        // The array stays a variable of the text (named `m.name` above), so
                        // that readers of statements' text (the vector kernels' lanes) see one
                        // occurrence with all its subscripts.
                        body.push(BodyPiece::Var(id));
                        body.push(BodyPiece::Text("[".into()));
                        for (k, (lo, sign)) in m.lower.iter().zip(signs).enumerate() {
                            if k > 0 {
                                body.push(BodyPiece::Text("][".into()));
                            }
                            let minus = if *sign < 0 { "-" } else { "" };
                            if *lo == 0 && *sign > 0 {
                                body.push(BodyPiece::Iter(k));
                            } else {
                                body.push(BodyPiece::Text(format!("{minus}(")));
                                body.push(BodyPiece::Iter(k));
                                body.push(BodyPiece::Text(format!(") - ({lo})")));
                            }
                        }
                        body.push(BodyPiece::Text("]".into()));
                        // An array's own subscripts follow in the statement's text.
                    }
                    other => body.push(other),
                }
            }
            stmt.body = body;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar_expansions;

    fn text(scop: &Scop, stmt: usize) -> String {
        scop.statements[stmt]
            .body
            .iter()
            .map(|p| match p {
                BodyPiece::Text(t) => t.clone(),
                BodyPiece::Iter(k) => scop.statements[stmt].iterators[*k].clone(),
                BodyPiece::Var(id) => scop.array(*id).name.clone(),
            })
            .collect()
    }

    #[test]
    fn symms_running_sum_gets_one_copy_per_i_and_j() {
        // symm at MINI: M = 20, N = 30; temp2 is set, summed into and read once per (i, j).
        let scop = crate::polybench_scop("symm");
        let expansions = scalar_expansions(&scop).unwrap();
        let [e] = expansions.as_slice() else {
            panic!("{expansions:?}")
        };
        assert_eq!(e.loops, 2);
        let m = materialization(&scop, e)
            .unwrap()
            .expect("temp2 can be materialized");
        assert_eq!(m.name, "tf_x_temp2");
        assert_eq!(m.lower, vec![0, 0]);
        assert_eq!(m.extents, vec![20, 30]);
        // The last write is the final `temp2 += ...` of i = 19, j = 29.
        assert_eq!(m.last, vec![19, 29]);
        assert!(
            m.signs.iter().all(|(_, s)| s == &vec![1, 1]),
            "{:?}",
            m.signs
        );
        assert_eq!(m.bytes(), 20 * 30 * 8);
        let emitted = with_materialized(&scop, &[m]);
        let uses: Vec<String> = (0..scop.statements.len())
            .map(|k| text(&emitted, k))
            .filter(|t| t.contains("tf_x_temp2"))
            .collect();
        assert_eq!(uses.len(), 3, "{uses:?}");
        assert!(
            uses.iter()
                .all(|t| t.contains("tf_x_temp2[i][j]") && !t.contains("temp2 ")),
            "{uses:?}"
        );
        assert_eq!(emitted.array(e.array).rank, 2);
    }

    #[test]
    fn a_loop_that_counts_down_indexes_with_the_opposite_iterator() {
        // ludcmp at MINI (N = 40): w is used in four loops, the last of which counts down, so its
        // copies are indexed by -i there: the subscripts run from -39 to 39.
        let scop = crate::polybench_scop("ludcmp");
        let expansions = scalar_expansions(&scop).unwrap();
        let [e] = expansions.as_slice() else {
            panic!("{expansions:?}")
        };
        let m = materialization(&scop, e)
            .unwrap()
            .expect("w can be materialized");
        assert_eq!(m.lower, vec![-39]);
        assert_eq!(m.extents, vec![79]);
        assert!(m.signs.iter().any(|(_, s)| s == &vec![-1]), "{:?}", m.signs);
        assert!(m.signs.iter().any(|(_, s)| s == &vec![1]), "{:?}", m.signs);
        // The last write is in the downward loop's last iteration, i = 0.
        assert_eq!(m.last, vec![0]);
        let emitted = with_materialized(&scop, &[m]);
        let texts: Vec<String> = (0..scop.statements.len())
            .map(|k| text(&emitted, k))
            .collect();
        assert!(
            texts.iter().any(|t| t.contains("tf_x_w[-(i) - (-39)]")),
            "{texts:?}"
        );
        assert!(
            texts.iter().any(|t| t.contains("tf_x_w[(i) - (-39)]")),
            "{texts:?}"
        );
    }

    #[test]
    fn doitgens_row_gets_one_copy_per_r_and_q() {
        // doitgen at MINI (NR = 10, NQ = 8, NP = 12): each (r, q) fills sum[0..12) and reads it.
        let scop = crate::polybench_scop("doitgen");
        let expansions = scalar_expansions(&scop).unwrap();
        let [e] = expansions.as_slice() else {
            panic!("{expansions:?}")
        };
        assert_eq!(scop.array(e.array).name, "sum");
        assert_eq!(e.loops, 2);
        let m = materialization(&scop, e)
            .unwrap()
            .expect("sum can be materialized");
        assert_eq!(m.own_rank, 1);
        assert_eq!(m.lower, vec![0, 0]);
        assert_eq!(m.extents, vec![10, 8, 12]);
        // Every element's last value is in the copy of the last (r, q).
        assert_eq!(m.last, vec![9, 7]);
        let emitted = with_materialized(&scop, &[m]);
        let uses: Vec<String> = (0..scop.statements.len())
            .map(|k| text(&emitted, k))
            .filter(|t| t.contains("tf_x_sum"))
            .collect();
        assert_eq!(uses.len(), 3, "{uses:?}");
        assert!(
            uses.iter().all(|t| t.contains("tf_x_sum[r][q][p]")),
            "{uses:?}"
        );
    }

    #[test]
    fn a_row_indexed_by_the_loop_itself_is_no_temporary() {
        // atax's tmp[i] is one element per iteration of i: not expanded.
        let scop = crate::polybench_scop("atax");
        let expansions = scalar_expansions(&scop).unwrap();
        assert!(
            expansions.iter().all(|e| scop.array(e.array).name != "tmp"),
            "{expansions:?}"
        );
    }
}
