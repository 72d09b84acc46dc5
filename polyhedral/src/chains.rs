//! Several reduction chains at once: in every tile, the band loop around a reduction that the
//! C compiler keeps scalar is unrolled and jammed, so that the reduction's loop carries
//! [`CHAINS`] (or, reductions only, [`REDUCTION_CHAINS`]) independent chains instead of one.
//!
//! An innermost loop that accumulates into one element (gesummv's `tmp[i] += A[i][j] * x[j]`
//! along `j`) is a chain of dependent floating-point additions: the C compiler may not reorder
//! them (the results would change), so it runs one addition per latency of the adder, whatever
//! the vector units could do. The rows `i, i + 1, ...` are independent chains: running
//! [`CHAINS`] of them in the same `j` loop (`tmp[i] += ..; tmp[i + 1] += ..; ...`) keeps the
//! adder busy. Each element still sees its additions in the original order, so the results are
//! bitwise the same. Measured on gesummv at EXTRALARGE (tasks, one thread): 0.021 s -> 0.011 s
//! (gcc -O3 of the original, whose loop interleaves the two rows' chains of `tmp` and `y`:
//! 0.013 s).
//!
//! A recurrence through memory is such a chain too (adi's `p[i][j] = -c / (a * p[i][j - 1] +
//! b)` along `j`: one division per latency of the divider, and gcc's original loop runs at that
//! speed): a statement whose innermost loop reads at the next step an element it writes gets its
//! rows jammed the same way, where the rows may also be a point loop below the band (adi's band
//! holds the time steps; a strip of rows that the tile cuts is guarded in its copies). Measured at
//! LARGE on 2 threads: adi 5.52 s -> 2.41 s, seidel-2d (whose skewed rows are such chains)
//! 7.18 s -> 3.80 s; on one thread adi 4.58 s and seidel-2d 7.58 s against gcc's 9.9 and 17.7.
//!
//! The transformation is a schedule: the band member `m` (the row) becomes `o_m - (o_m mod C)`
//! in place, and `o_m mod C` a new innermost dimension, whose loop is unrolled completely
//! ([`crate::unroll`]); in a full tile whose size along `m` is a multiple of `C` every strip is
//! whole, and in the other tiles (the general code) a copy that the tile's border cuts is
//! guarded. The general code was built unjammed until the tiles that are not full turned out
//! to be most of some nests' time: seidel-2d's skewed tiles along its borders, deriche's first
//! tile of each row (where the filter state is reset) and last, shorter one, which ran one row
//! at a time at the recurrence's latency. Jammed there too, at LARGE (medians of 5 and 3 runs,
//! 2 and 1 threads): seidel-2d 3.06 -> 2.47 s and 6.65 -> 5.41 s, deriche 65.4 -> 62.6 ms
//! (medians of 15) and 105 -> 98 ms; atax and gesummv, whose last tile changed, within the
//! noise. adi (2.10 -> 2.06 s, 4.60 -> 4.44 s) paid 0.36 s of compile time for it and keeps its
//! general code unjammed (`crate::tile_code::GENERAL_JAM_STATEMENTS`). It is checked like the other inner reorderings ([`crate::sink::order_kept`]: every two
//! instances of a tile that access one element, one of them writing, keep their order), and it
//! is done when some statement's innermost loop writes one element again along its steps (the
//! reduction) while a step of `m` moves it to another element (another chain), the member
//! chosen by the statements' weight (their number of loops, as in [`crate::sink`]).
//!
//! ## Eight rows of reductions
//!
//! Where every jammed statement is a reduction (no recurrence among them), the member is
//! jammed by [`REDUCTION_CHAINS`] (8) instead of [`CHAINS`] (4), when its tile size is a
//! multiple of it. Four rows of a matrix-vector product left a core short of the bandwidth it
//! has: on a Zen 5 core, gesummv at EXTRALARGE read its two matrices at 21 GB/s with four rows
//! per array, while a plain sum of the same arrays reads 32-38 GB/s; eight rows keep more
//! misses in flight and twice the chains of additions. Paired against four rows (the whole
//! kernels, one thread, medians of 11 in rounds; EXTRALARGE where LARGE runs under 0.05 s):
//! atax 2.61 -> 2.09 ms, gemver 16.6 -> 14.3 ms, gesummv 5.83 -> 5.43 ms, deriche 64.8 -> 62.5
//! ms, ludcmp and syr2k level; on two threads atax 2.20 -> 1.69 ms, gemver 9.48 -> 8.81 ms,
//! deriche and gesummv level. Recurrences keep four, the count they were measured with (adi,
//! seidel-2d above), unless their rows run lagged ("Lagged rows" below).
//!
//! ## Lagged rows
//!
//! Rows of recurrences that may not run as lanes because each reads the row before at the same
//! step (seidel-2d's skewed rows: row `r + 1` at column `c - 1` reads row `r` at column `c`,
//! computed in the same iteration of the jammed loop) were one chain through the jammed rows
//! in every iteration: row `r` of iteration `t` could start only when row `r - 1` of it was
//! done, so the core needed several iterations of every row in flight, more than its window
//! holds; eight such rows ran 1.8x slower than four. Where the plain jam is legal, the rows are
//! tried [`LAGGED_CHAINS`] at a time with row `r` of a strip moved `r` steps later along the
//! recurrences' innermost loop (`o_inner + (o_m mod C)`): a row then reads what the row before
//! wrote one iteration earlier, and the rows of one iteration are independent. It is kept where
//! [`crate::sink::order_kept`] says the order of every dependence stays (each element gets its
//! operations in the original order: bitwise the same results); the copies at the ends of the
//! longer loop are guarded. Where the plain jam is not legal no lagged one is tried (nussinov's
//! lagged rows were legal, took the place of its column kernel and ran 5x slower). seidel-2d at
//! LARGE (2-core AMD EPYC, Zen 3, paired): 3.80 -> 2.01 s on two threads (3 rounds), 7.70 ->
//! 4.00 s on one; by hand, eight rows one step apart ran 0.653 of four plain, two steps apart
//! 0.676, sixteen rows 0.661, four rows one step apart 0.947. No other PolyBench kernel's code
//! changes.
//!
//! ## Recurrences as lanes
//!
//! Where the statements of the nest may run as the lanes of vectors step by step once jammed
//! (`crate::rows`, "Steps as lanes", foreseen by `rows::steps_may_run` on the schedule), the
//! member is jammed by [`LANE_VECTORS`] vectors of rows (sixteen doubles) instead of
//! [`CHAINS`]: four vector chains keep the vector divider busy where one waits on its latency.
//! adi at LARGE, one thread / two (standalone, medians of 3): four rows as one vector 2.34 /
//! 1.16 s, sixteen as four 1.88 / 0.79 s (scalar, four rows: 3.13 / 1.57 s). Where they may
//! not, sixteen scalar rows cost: seidel-2d, whose rows read the row before at the same step,
//! ran 2.10 s with four and 4.13 s with sixteen on two threads.

use crate::astgen::PointSchedule;
use crate::isl::UnionMap;
use crate::maps::{names, tuple};
use crate::rows::steps_may_run;
use crate::sink::order_kept;
use crate::steps::{classify, next_instances, statement_of, unit_steps, Shapes, INVARIANT};
use crate::Result;
use scop_ir::{AccessKind, ArrayId, Scop};

/// How many chains one jammed loop runs where some of them are recurrences.
pub const CHAINS: i64 = 4;

/// How many chains one jammed loop runs where all of them are reductions (see "Eight rows of
/// reductions" in the module doc).
pub const REDUCTION_CHAINS: i64 = 8;

/// How many rows of recurrences one jammed loop runs where each row lags a step behind the one
/// before (see "Lagged rows" in the module doc).
pub const LAGGED_CHAINS: i64 = 8;

/// How many vectors of rows one jammed loop runs where its statements' rows run as vector
/// lanes step by step (see "Recurrences as lanes" in the module doc).
pub const LANE_VECTORS: i64 = 4;

/// `points` with a band member jammed around the statements' reduction loops (see the module
/// doc), that member and the number of chains ([`REDUCTION_CHAINS`] where every jammed
/// statement is a reduction and the member's tile size is a multiple of it, [`CHAINS`]
/// otherwise); `None` when no member qualifies, when its tile size is not a multiple of
/// [`CHAINS`], or when the result would not keep the order of some dependence.
pub(crate) fn interleave_chains<'c>(
    scop: &Scop,
    points: &PointSchedule<'c>,
    tile_sizes: &[i64],
    private: &[ArrayId],
) -> Result<Option<(PointSchedule<'c>, usize, i64)>> {
    let p = points.n_tile;
    let depth = points.iterators.len();
    if p == 0 || !points.band_in_order() || tile_sizes.len() != p {
        return Ok(None);
    }
    let ctx = points.context.ctx();
    let o = names("o", depth);
    let steps = unit_steps(ctx, &o)?;
    let mut shapes = Shapes::default();
    let mut weights = vec![0.0f64; depth];
    let mut recurrences = false;
    // The innermost loops of the recurrences (the dimension a lagged jam shifts).
    let mut recurrence_loops = std::collections::BTreeSet::new();
    for stmt_map in points.schedule.maps()? {
        let Some(stmt) = statement_of(scop, &stmt_map) else {
            continue;
        };
        let next = next_instances(&UnionMap::from_map(stmt_map)?, &steps)?;
        let loops: Vec<usize> = (0..depth).filter(|&q| next[q].is_some()).collect();
        let Some(&innermost) = loops.last() else {
            continue;
        };
        let writes: Vec<UnionMap<'_>> = stmt
            .accesses
            .iter()
            .filter(|a| a.kind == AccessKind::Write && !private.contains(&a.array))
            .map(|a| UnionMap::read(ctx, &a.relation))
            .collect::<Result<_>>()?;
        // Whether every write touches the same element again along a step (`None`: the step does
        // not move the statement).
        let mut same_element = |q: usize| -> Result<Option<bool>> {
            let Some(n) = &next[q] else { return Ok(None) };
            let mut all = !writes.is_empty();
            for w in &writes {
                let moved = n.clone().apply_domain(w.clone())?.apply_range(w.clone())?;
                for diff in moved.maps()? {
                    all &= classify(ctx, diff.deltas()?, &mut shapes)? == INVARIANT;
                }
            }
            Ok(Some(all))
        };
        let weight = crate::sink::WEIGHT.powi(loops.len() as i32);
        if same_element(innermost)? == Some(true) {
            // The accumulator must be a register for the chains to run side by side: the C
            // compiler keeps it in one only when no other access of the statement may touch its
            // array (cholesky's `A[i][j] -= A[i][k] * A[j][k]` is reloaded and stored at every
            // step, and four such chains ran 1.4x slower than one at LARGE).
            let written: Vec<ArrayId> = stmt
                .accesses
                .iter()
                .filter(|a| a.kind == AccessKind::Write)
                .map(|a| a.array)
                .collect();
            let aliased = stmt.accesses.iter().any(|a| {
                a.kind == AccessKind::Read
                    && written.contains(&a.array)
                    && !stmt
                        .accesses
                        .iter()
                        .any(|w| w.kind == AccessKind::Write && w.relation == a.relation)
            });
            if aliased {
                continue;
            }
        } else if recurrent(ctx, stmt, &next[innermost], private)? {
            recurrences = true;
            recurrence_loops.insert(innermost);
            // A recurrence may also be jammed with a point loop below the band (adi's rows,
            // under a band whose members are the time steps): any loop around it along which
            // the statement writes other elements; a strip that the tile cuts is guarded.
            for &q in loops.iter().filter(|&&q| q >= p && q < innermost) {
                if same_element(q)? == Some(false) {
                    weights[q] += weight;
                }
            }
        } else {
            continue;
        }
        for (m, w) in weights.iter_mut().enumerate().take(p) {
            if m != innermost && tile_sizes[m] % CHAINS == 0 && same_element(m)? == Some(false) {
                *w += weight;
            }
        }
    }
    let mut candidates: Vec<usize> = (0..depth).filter(|&m| weights[m] > 0.0).collect();
    // The heaviest first; among equals the innermost (its chains share the most data).
    candidates.sort_by(|&a, &b| weights[b].total_cmp(&weights[a]).then(b.cmp(&a)));
    let Some(name) = points.fresh_iterator()? else {
        return Ok(None);
    };
    for m in candidates {
        let lanes = match recurrences {
            true => steps_may_run(scop, &points.schedule, m, private)?,
            false => None,
        };
        let chains = match (lanes, recurrences || tile_sizes[m] % REDUCTION_CHAINS != 0) {
            (Some(lanes), _) if m >= p || tile_sizes[m] % (LANE_VECTORS * lanes) == 0 => {
                LANE_VECTORS * lanes
            }
            (_, true) => CHAINS,
            (_, false) => REDUCTION_CHAINS,
        };
        // Rows of recurrences that cannot run as lanes (each reads the row before at the same
        // step, seidel-2d's) are tried lagged first: more of them, each a step behind the one
        // before (see "Lagged rows" in the module doc).
        let one_loop = match recurrence_loops.len() {
            1 => recurrence_loops.first().copied(),
            _ => None,
        };
        let lag = one_loop
            .filter(|&inner| lanes.is_none() && inner != m && tile_sizes[m] % LAGGED_CHAINS == 0);
        // `chains` rows jammed, each row `lag` behind the one before along the dimension given.
        let jam = |chains: i64, lag: Option<usize>| -> Result<UnionMap<'c>> {
            let mut out: Vec<String> = o.clone();
            out[m] = format!("{v} - ({v} mod {chains})", v = o[m]);
            if let Some(inner) = lag {
                out[inner] = format!("{} + ({} mod {chains})", o[inner], o[m]);
            }
            out.push(format!("{} mod {chains}", o[m]));
            let to = UnionMap::read(
                ctx,
                &format!("{{ {} -> {} }}", tuple("", &o), tuple("", &out)),
            )?;
            points.schedule.clone().apply_range(to)
        };
        let schedule = jam(chains, None)?;
        if !order_kept(ctx, scop, private, &points.schedule, &schedule)? {
            continue;
        }
        // Lagged only where the plain jam is legal too: where it is not (nussinov's rows, whose
        // cells read cells of other rows at other steps), the lag could make a jam legal that
        // takes the place of the tile's other kernels.
        let (chains, schedule) = match lag {
            Some(inner) => {
                let lagged = jam(LAGGED_CHAINS, Some(inner))?;
                match order_kept(ctx, scop, private, &points.schedule, &lagged)? {
                    true => (LAGGED_CHAINS, lagged),
                    false => (chains, schedule),
                }
            }
            None => (chains, schedule),
        };
        let mut iterators = points.iterators.clone();
        iterators.push(name);
        let jammed = PointSchedule {
            context: points.context.clone(),
            schedule,
            iterators,
            separate: points.separate,
            n_tile: p,
            band: points.band.clone(),
            unroll: Some(depth),
            cut: points.cut.clone(),
            shift: points.shift.clone(),
        };
        return Ok(Some((jammed, m, chains)));
    }
    Ok(None)
}

/// Whether statement `stmt` reads, one step `next` later, an element it writes (adi's
/// `p[i][j] = -c / (a * p[i][j - 1] + b)` along `j`): a recurrence through memory, whose chain
/// of dependent operations (there a division) runs one link per latency unless other chains
/// share its loop.
fn recurrent<'c>(
    ctx: &'c crate::isl::Ctx,
    stmt: &scop_ir::Statement,
    next: &Option<UnionMap<'c>>,
    private: &[ArrayId],
) -> Result<bool> {
    let Some(next) = next else {
        return Ok(false);
    };
    let mut shapes = Shapes::default();
    for w in stmt
        .accesses
        .iter()
        .filter(|a| a.kind == AccessKind::Write && !private.contains(&a.array))
    {
        let w_map = UnionMap::read(ctx, &w.relation)?;
        for r in stmt
            .accesses
            .iter()
            .filter(|a| a.kind == AccessKind::Read && a.array == w.array)
        {
            let r_map = UnionMap::read(ctx, &r.relation)?;
            // Written element -> the element read one step later.
            let later = next
                .clone()
                .apply_domain(w_map.clone())?
                .apply_range(r_map)?;
            for diff in later.maps()? {
                if classify(ctx, diff.deltas()?, &mut shapes)? == INVARIANT {
                    return Ok(true);
                }
            }
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{dependences, schedule, ScheduleConfig};

    /// The point schedule of nest `nest` of a PolyBench kernel at MINI, tiles of 8, with the
    /// kernel's SCoP and the nest's tile sizes.
    fn points_of(kernel: &str, nest: usize) -> (Scop, PointSchedule<'static>, Vec<i64>) {
        let scop = crate::polybench_scop(kernel);
        let deps = dependences(&scop).unwrap();
        let cfg = ScheduleConfig {
            tile_sizes: Some(vec![8]),
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&scop, &deps, &cfg).unwrap();
        let sizes = sched.nests[nest].tile_sizes.clone();
        let points = PointSchedule::of(
            &scop,
            &sched,
            crate::NestId::new(nest),
            &names("t", sizes.len()),
            "c",
        )
        .unwrap();
        (scop, points, sizes)
    }

    /// The chains of nest `nest` of a PolyBench kernel at MINI, tiles of 8.
    fn chains_of(kernel: &str, nest: usize) -> Option<(PointSchedule<'static>, usize, i64)> {
        let (scop, points, sizes) = points_of(kernel, nest);
        interleave_chains(&scop, &points, &sizes, &[]).unwrap()
    }

    #[test]
    fn gesummvs_rows_are_jammed_around_their_reductions() {
        let (jammed, m, chains) = chains_of("gesummv", 0).expect("the row loop is jammed");
        assert_eq!(m, 0);
        // Reductions only: eight chains, the tile's 8 rows.
        assert_eq!(chains, REDUCTION_CHAINS);
        // The strip's rows are one loop, unrolled: in a full tile (t0 = 1, rows 8 to 15), each
        // `j` loop holds REDUCTION_CHAINS copies of each reduction.
        let ctx = jammed.context.ctx();
        let tile = crate::isl::Set::read(ctx, "[t0] -> { : t0 = 1 }").unwrap();
        let ast = jammed.build(Some(tile), &[0]).unwrap();
        let mut per_loop = Vec::new();
        ast.walk(&mut |node| {
            if let crate::Ast::For { body, .. } = node {
                if let crate::Ast::Block(items) = &**body {
                    let users = items
                        .iter()
                        .filter(|i| matches!(i, crate::Ast::User { .. }))
                        .count();
                    if users > 0 && items.len() == users {
                        per_loop.push(users);
                    }
                }
            }
        });
        assert!(
            per_loop.contains(&(REDUCTION_CHAINS as usize)),
            "{per_loop:?}\n{ast:?}"
        );
    }

    #[test]
    fn adis_rows_are_jammed_around_their_recurrences() {
        // `p[i][j] = -c / (a * p[i][j - 1] + b)` along `j`: each row is a chain of divisions.
        // The rows are a point loop below the band (whose members are the time steps and the
        // two sweeps), jammed all the same, in one more dimension that is unrolled.
        let (jammed, m, chains) = chains_of("adi", 0).expect("the row loop is jammed");
        assert!(m >= jammed.n_tile, "{m}");
        // Its rows may run as the lanes of vectors step by step: four vectors of four doubles
        // (see "Recurrences as lanes" in the module doc).
        assert_eq!(chains, LANE_VECTORS * 4);
        assert_eq!(jammed.unroll, Some(jammed.iterators.len() - 1));
    }

    #[test]
    fn rows_that_read_each_other_at_one_step_run_lagged() {
        // seidel-2d's skewed rows read the row before at the same step: no lanes; eight rows,
        // each a step behind the one before along the innermost loop.
        let (jammed, m, chains) = chains_of("seidel-2d", 0).expect("the row loop is jammed");
        assert_eq!(chains, LAGGED_CHAINS);
        let (_, points, _) = points_of("seidel-2d", 0);
        let ranges = |schedule: &UnionMap<'_>, n: usize| -> Vec<(i64, i64)> {
            let set = schedule.clone().range().unwrap().sets().unwrap().remove(0);
            (0..n)
                .map(|d| set.dim_range(d).unwrap().expect("bounded"))
                .collect()
        };
        let depth = points.iterators.len();
        let before = ranges(&points.schedule, depth);
        let after = ranges(&jammed.schedule, depth);
        // The jammed dimension takes the first row of each strip; one other, inside it, moves
        // later (a row `r` of a strip runs `r` steps late there).
        let moved: Vec<usize> = (0..depth)
            .filter(|&d| d != m && after[d] != before[d])
            .collect();
        assert_eq!(moved.len(), 1, "{before:?} -> {after:?}");
        let inner = moved[0];
        assert!(inner > m, "the lag is along a loop inside the jammed one");
        assert!(after[inner].1 > before[inner].1, "{before:?} -> {after:?}");
    }

    #[test]
    fn a_stencil_has_no_reduction_to_jam() {
        assert!(chains_of("jacobi-2d", 0).is_none());
    }

    #[test]
    fn rows_that_read_each_others_results_are_not_jammed() {
        // `x[i] -= L[i][j] * x[j]` over `j < i`, then `x[i] /= L[i][i]`: row `i + 1` reads the
        // final `x[i]`, so running rows `i .. i + 3` in one `j` loop would read it too early.
        let (file, _) = frontend::parse_source(
            "test.c",
            "void f(int n, double L[n][n], double x[n]) {
#pragma scop
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < i; j++)
      x[i] -= L[i][j] * x[j];
    x[i] = x[i] / L[i][i];
  }
#pragma endscop
}",
            &frontend::Options::default(),
        )
        .unwrap();
        let scop = file.scops.into_iter().next().unwrap();
        let deps = dependences(&scop).unwrap();
        let cfg = ScheduleConfig {
            tile_sizes: Some(vec![8]),
            original: true,
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&scop, &deps, &cfg).unwrap();
        for nest in 0..sched.nests.len() {
            let sizes = &sched.nests[nest].tile_sizes;
            let points = PointSchedule::of(
                &scop,
                &sched,
                crate::NestId::new(nest),
                &names("t", sizes.len()),
                "c",
            )
            .unwrap();
            assert!(
                interleave_chains(&scop, &points, sizes, &[])
                    .unwrap()
                    .is_none(),
                "nest {nest}: {}",
                sched.nests[nest].schedule
            );
        }
    }
}
