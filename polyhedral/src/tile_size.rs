//! The default tile size of a band, chosen from the band's depth, the element sizes of the
//! arrays its statements access, and the footprint of one tile.
//!
//! Rule: every member of the band gets the same size `T`, the largest power of two in
//! [`MIN_SIZE`, `MAX_SIZE`] whose estimated footprint fits the budget: [`FOOTPRINT_BUDGET`] bytes
//! (half of a 128 KiB share of L2 per core, leaving room for the rest of the tile's working set)
//! unless [`crate::ScheduleConfig::tile_footprint`] says otherwise. The driver sets it to a
//! quarter of the machine's L2, clamped to 32-128 KiB (`cost::Machine::tile_footprint`): 128 KiB
//! on both machines measured. On a Xeon with 2 MiB of L2, 128 KiB against 64 gave gemm-like 3-D
//! bands over three `double` matrices 64 instead of 32, which with their jammed tile code
//! (`tile_code`) ran gemm 18%, 2mm 23% and 3mm 21% faster at LARGE (syr2k and correlation
//! within 5% either way). On an AMD EPYC (Zen 3, 512 KiB of L2), where the earlier rule (a
//! sixteenth of L2) gave 32 KiB, 128 KiB ran (tasks, 2 threads, medians of 5 runs in rounds,
//! LARGE; EXTRALARGE for trisolv): gramschmidt 0.86 s -> 0.42, trisolv 14.2 ms -> 8.9, heat-3d
//! 2.06 s -> 1.69, covariance -17%, trmm, symm, correlation, jacobi-2d, 2mm, syr2k, syrk
//! -11 to -15%, gemm, ludcmp -9%; gesummv +8% (EXTRALARGE, 11 runs), atax, gemver and doitgen
//! within noise (their reruns went either way). 256 KiB ran heat-3d another 15% and symm 9%
//! faster but correlation, covariance and gesummv 7-18% slower. The
//! footprint of one tile is estimated as `Σ_A size_of(elem(A)) · T^min(rank(A), depth)` over the
//! distinct arrays `A` the band's statements access: an access of rank `r` touches at most `T`
//! values per subscript that follows a band member, and at most `depth` subscripts can. Scalars
//! (rank 0) count one element. When even [`MIN_SIZE`] does not fit, [`MIN_SIZE`] is used.
//!
//! For example, with `double` elements: gemm's 3-deep band over C, A and B (rank 2) gets 32
//! (`3 · 8 · 32² = 24 KiB`, while 64 would need 96 KiB); a time-tiled 2-D stencil (depth 3, two
//! rank-2 arrays) gets 64; heat-3d's 4-deep band over two rank-3 arrays gets 16
//! (`2 · 8 · 16³ = 64 KiB`); a 1-deep band gets 64, the cap, which keeps enough tiles for
//! parallelism at medium problem sizes.
//!
//! The estimate ignores the extent of subscripts that follow loops outside the band (a row of
//! `A[i][j]` when only `i` is tiled): those are not tiled, whatever the size.
//!
//! Short inner loops ([`lengthen_inner`]): when that size is below [`SHORT_INNER`], the member
//! whose point loop runs innermost (chosen by `point_order` for contiguous accesses) gets
//! [`MIN_INNER`] instead, and the other members the largest power of two (at least 2) whose
//! footprint, now counted with the last subscript of each array spanning [`MIN_INNER`] values,
//! fits the budget. A point loop of 16 iterations spends its time entering and leaving the vector
//! loop: heat-3d (time-tiled, rank-3 arrays) got `16⁴` and its tiles ran 1.4x slower than the
//! original loops on one thread (gcc 12, AVX2, LARGE); with `8, 8, 8, 64` they run as fast. Of
//! the 30 PolyBench kernels only heat-3d's band is below [`SHORT_INNER`]; the sizes of every
//! other band are unchanged by this rule.
//!
//! Whole rows under a time loop (`schedule`'s default sizes, before [`lengthen_inner`]): when
//! such a short band has a time loop (an iterator of every statement that no subscript follows)
//! and at least three members, skewing shifts each row of the innermost loop against the tile
//! boundaries by a step per time step, so a tile `W` wide cuts a row of `n` values into
//! `1 + (n - 1) / W` runs on average: heat-3d's rows of 118 ran 41 values at a time with
//! `W = 64`, each run entering and leaving the vector loop and the tile's bounds. The innermost
//! member instead gets one tile over its whole range (at the cost model's parameter values, a
//! power of two: 2048 at LARGE, where `2t + k` runs over 3..=1119) and the others keep the cube
//! size while one tile's whole rows (`Σ_A size_of(elem(A)) · T^(rank(A) - 1) · n_A`) take at most
//! four budgets (the L2 the budget is a quarter of), halving otherwise (to 4 at the least, else
//! the rule is not taken). The other three members keep plenty of tiles: heat-3d at LARGE gets
//! `16, 16, 16, 2048` (3 102 tasks, average parallelism 18), at EXTRALARGE `8, 8, 8, 4096`.
//! Paired on the AMD EPYC (medians, LARGE): 1.51 s -> 0.84 on 2 threads, 2.24 -> 1.54 on one; at
//! EXTRALARGE 15.1 s -> 9.0 on 2 threads. Longer inner tiles without whole rows gained less
//! (`8, 16, 16, 256`: 1.10 s), and 2-D stencils, whose rows are long and whose bands are not
//! short, gain nothing from it (jacobi-2d and fdtd-2d within noise with whole rows, seidel-2d
//! 1.8x slower, its wavefronts along rows lost): the rule is limited to short bands. Their rows
//! do get twice the cube size where eight such tiles fit along them and no statement is a
//! recurrence along them (`schedule::tiling::TIME_ROWS`: jacobi-2d and fdtd-2d at LARGE,
//! `64, 64, 128`, 10% faster).
//!
//! Small time tiles ([`lengthen_time_tiled`]): a band with a member that subscripts no array
//! (a time loop) holds `T^depth` instances in a footprint of about `T^rank`, so the cube rule
//! gives it tiles far below the budget and little work: jacobi-1d's `64 × 64` tiles, 4 096
//! instances of each statement (about 2 µs), ran no faster on 2 threads than on 1 (EXTRALARGE,
//! 1 039 tasks). When the band holds every loop of its statements and its tiles hold fewer than
//! [`MIN_TILE_WORK`] instances, the innermost member is lengthened (powers of two) until they
//! do, while the footprint fits: jacobi-1d gets `64 × 256`, 2.05 ms to 1.25 ms (median of 21
//! runs, 2 threads; `64 × 512` and `32 × 1024` within 2% of it). Time-tiled 2-D and 3-D stencils
//! reach [`MIN_TILE_WORK`] already and are unchanged.
//!
//! Small tasks ([`coarsen_carried`], applied by the scheduler to default sizes on the CPU): a
//! task costs the runtime about a microsecond, so a band whose tiles hold fewer than
//! [`MIN_TASK_WORK`] instances, holds every loop of its statements, and has members that carry
//! no dependence as well as members that do, gets its carried members lengthened (powers of two,
//! up to [`MAX_CARRIED_SIZE`]) while one tile's reused data stays within the budget
//! (`cost::BandTiles`, which leaves out arrays the band streams, each element reached once).
//! The tiles along the free members stay as many, so the parallelism does too; the chains along
//! the carried members get shorter. doitgen's product went from `8, 8, 64, 8` to `8, 8, 64, 64`
//! (20 520 tasks of ~5 µs to 2 565), the matrix-vector products of mvt, gemver, bicg,
//! correlation and covariance from `64, 64` to `64, 512`. Medians of 11 runs, 2 threads, before
//! and after (the omp target beside): mvt 20.9 ms to 12.6 (omp 14.8), gemver 29.5 to 21.2
//! (20.8), doitgen 52.1 to 42.1 (41.3), symm 69.5 to 62.3 (70.6; the cost model now distributes
//! its statements), bicg, correlation and covariance within noise (EXTRALARGE for mvt, gemver
//! and bicg, LARGE for the others).
//!
//! Streamed arrays ([`lengthen_runs`], in the same pass): an array whose every element one
//! instance of the band reaches (a matrix-vector product's matrix) gains nothing from the cache
//! but is read in the runs along its last subscript that a tile covers, and runs shorter than a
//! page ([`MIN_RUN_BYTES`]) defeat the hardware prefetcher: `x2[i] += A[j][i] * y2[j]` (mvt)
//! tiled `64, 512` reads A in runs of 64 doubles. The member along the run is doubled and the
//! longest other halved (the tile's work stays) while that lengthens the run and a free member
//! keeps [`MIN_TILES_ALONG`] tiles. That nest alone (EXTRALARGE, medians of 7 runs): 11.6 ms to
//! 9.2 on 1 thread, 6.6 to 4.6 on 2 (`512, 64`); whole kernels at 2 threads, medians of 9:
//! mvt 12.7 ms to 11.1, gemver 21.3 to 18.5, deriche 131 to 126; 2mm, 3mm, bicg, symm, trmm,
//! correlation and covariance, whose initializations changed, within 1%. A triangular band's runs
//! are measured at a full tile (`cost::BandTiles::boxes`), not at its corner, where trisolv's
//! `L[i][j]` (`j < i`) has 63 elements per row whatever the size along `j`: its product went
//! from `64, 64` to `8, 512`, 13.6 ms to 8.8 on one thread and 7.7 to 6.1 on two (EXTRALARGE,
//! medians of 9 and 21; gcc's original 10.9-11.1); ludcmp's substitutions and the mirror copies
//! of correlation and covariance changed sizes too, within the noise. A band with no free member
//! stops at shorter runs ([`MIN_RUN_BYTES_ORDERED`]): trisolv then gets `16, 256`, bicg and mvt
//! (their products fused for the shared reads) `16, 256` instead of `8, 512`.
//!
//! Products ([`widen_products`], for the chosen schedule only, where
//! [`crate::ScheduleConfig::widen_products`] says so: the CPU targets): a rectangular band of
//! three members, one carrying the product's reduction (gemm's `k`) and two free (its rows and
//! lanes), gets its free members doubled in turn up to [`MAX_PRODUCT_WORK`] instances, while
//! [`MIN_PRODUCT_TILES`] tiles stay along them and a tile's reused data fits [`PRODUCT_BUDGETS`]
//! budgets. Such a tile runs a register kernel ([`crate::kernel`]) that copies its operand
//! along the reduction and the lanes once per tile and scales its rows' factors once per tile,
//! and the runtime costs about a microsecond per task: a 64^3 tile shares that among 64 rows and
//! 64 lanes, a `128, 128, 64` one among twice as many of each. The fusion candidates are
//! estimated without it: the cost model charges a tile's data as plain loops would touch it,
//! and saw 3mm's products at `128, 128, 64` 1.4x slower (its L2 traffic doubled), which is not
//! what the kernels do. Measured on the 2-core AMD EPYC (Zen 4, 1 MiB of L2, 32 KiB of L1),
//! LARGE, paired medians of 11, two threads / one: gemm 1.064x / 1.121x, 2mm 1.118x / 1.153x,
//! 3mm 1.123x / 1.079x; `256, 128, 64` ran 2mm 1.18x faster on one thread than `64, 64, 64`,
//! `128, 128, 32` 1.01x, `128, 128, 128` 1.07x. Triangular products (syrk, syr2k, whose diagonal
//! tiles grow with them) are left: `--tile-sizes 128,128,64` ran them 1.01-1.05x faster.
//!
//! Panels ([`deepen_products`], after [`widen_products`] where that gave the tiles their most
//! work): the register kernel keeps one operand of the tile in its buffer for all the tile's
//! rows (the panel: gemm's `B[k][j]`, read alike by every row, `cost::BandTiles::panel_bytes`),
//! and reads the rest a block of rows at a time (the rows' factors once per tile and block, the
//! output's block loaded and stored once per tile). So the cache needs room for the panel
//! alone: the reduction is doubled while the panel stays within a tile budget (at most the
//! kernel's [`crate::kernel::MAX_PACK_BYTES`]; a deeper reduction loads and stores each block
//! of the output once for more steps), then the rows while four tiles stay along them, up to
//! [`MAX_KERNEL_WORK`] instances (longer rows share the panel's copy among more of them).
//! gemm, 2mm and 3mm at LARGE go from `128, 128, 64` to `256, 128, 128`. Where the kernel's
//! time went (gemm at LARGE, one thread, Zen 5): with the rows' factors not recomputed (a
//! timing experiment, wrong results) it ran 1.12x faster, their buffer laid out by row instead
//! (vectorized fill) 1.01x: the cost is reading `A` from L3 once per tile. Measured on the
//! 2-core AMD EPYC (Zen 5, 1 MiB of L2, 48 KiB of L1), LARGE, medians of 11 runs in rounds, one
//! thread / two: gemm 31.4 -> 28.5 ms / 16.1 -> 14.4, 2mm 40.1 -> 37.7 / 22.1 -> 20.5, 3mm
//! 67.3 -> 62.0 / 35.2 -> 32.6; with AVX2 only (`-mno-avx512f`, medians of 7) gemm 1.06x /
//! 1.07x, 3mm 1.00x / 1.06x. Tried: `512, 128, 128` (gemm 1.10x / 1.11x, 3mm 0.97x / 0.93x: two
//! tiles along its 800 rows), `256, 256, 64` (1.08x / 1.04x gemm, 3mm 1.05x / 1.04x), a panel
//! beyond the kernel's buffer (`128, 128, 256`: no copy, 0.70x). At MEDIUM the products keep
//! `64, 64, 64` (their tiles are few for the threads): deepened to `64, 64, 256`, 2mm ran
//! 0.67x and 3mm 0.77x on two threads. A band whose statement runs over a triangle (symm's
//! fused band at EXTRALARGE, 0.89x / 0.92x deepened) has no panel: the corner tiles' copies
//! serve fewer rows.
//!
//! Batches ([`batch_products`], [`coarsen_batch`]): a band of four or more members whose outer
//! ones are free around a product's three (doitgen's `sum[r][q][p] += A[r][q][s] * C4[s][p]`, a
//! product of `q` rows by `p` lanes over `s` for each `r`) takes one value of the outer members
//! per tile and gives the product the work, widened and deepened as above with the batch's tiles
//! counted for the threads (the rows are not lengthened: 256 rows ran 1.18x slower than 128); an
//! elementwise band of three or more members (doitgen's zeroing and copying of the copies) takes
//! one value of its outer members and lengthens its two inner ones, so its tasks read what the
//! product's tasks of the same `r` wrote. The register kernel also runs the tiles partial along
//! the product's rows and lanes (`tile_code`). doitgen at EXTRALARGE (medians of 9 in rounds):
//! 0.203 -> 0.107 s on one thread, 0.108 -> 0.063 on two (`8, 8, 64, 64` before); with its
//! copies in blocks lent by tile row (`materialize::copy_blocks`) 0.057 on two.
//!
//! Elementwise passes ([`coarsen_free`], in the same pass): a band whose members all carry no
//! dependence and whose tiles hold fewer than [`MIN_FREE_WORK`] instances gets its outermost
//! member doubled while [`MIN_TILES_ALONG`] tiles stay along it and the footprint fits (the
//! inner members keep the runs [`lengthen_runs`] gave them). deriche's combining passes at
//! LARGE went from `16, 256` (2 304 tasks each of 3 to 8 us) to `256, 256`; the initializations
//! and scalings of 2mm, 3mm, correlation, covariance, symm and trmm from `32, 128` (or
//! `64, 64`, `8, 128`) to `64, 128` or `128, 128`. Medians of 11 to 15 runs in rounds at LARGE
//! (Xeon), two threads / one: deriche 51.5 -> 50.0 ms / 95.9 -> 91.9, trmm 24.0 -> 23.0 /
//! 40.0 -> 39.1, covariance 43.4 -> 41.3, correlation 44.6 -> 43.0, 3mm 87.0 -> 84.3 (their one
//! thread within 1%), 2mm and symm unchanged.

use scop_ir::{Array, Scop, StmtId};
use std::collections::BTreeSet;

/// Bytes one tile's data should take.
pub const FOOTPRINT_BUDGET: u64 = 64 * 1024;
/// The smallest default size.
pub const MIN_SIZE: i64 = 8;
/// The largest default size.
pub const MAX_SIZE: i64 = 64;
/// A default size below this makes the innermost point loop too short: [`lengthen_inner`].
pub const SHORT_INNER: i64 = 32;
/// The length [`lengthen_inner`] gives the innermost point loop.
pub const MIN_INNER: i64 = 64;

/// The default size of each member of a `depth`-member band over the statements `stmts`.
pub fn default_tile_size(scop: &Scop, stmts: &[StmtId], depth: usize) -> i64 {
    default_tile_size_within(scop, stmts, depth, FOOTPRINT_BUDGET)
}

/// [`default_tile_size`] with `budget` bytes for one tile's data instead of
/// [`FOOTPRINT_BUDGET`] ([`crate::ScheduleConfig::tile_footprint`]).
pub fn default_tile_size_within(scop: &Scop, stmts: &[StmtId], depth: usize, budget: u64) -> i64 {
    let arrays = accessed(scop, stmts);
    let footprint = |t: u64| -> u64 {
        arrays
            .iter()
            .map(|a| {
                element_bytes(&a.elem_type)
                    .saturating_mul(t.saturating_pow(a.rank.min(depth) as u32))
            })
            .fold(0u64, u64::saturating_add)
    };
    let mut size = MAX_SIZE;
    while size > MIN_SIZE && footprint(size as u64) > budget {
        size /= 2;
    }
    size
}

/// The sizes of a `depth`-member band whose members would all get `size`, when member `inner`
/// runs innermost in each tile: `size` everywhere unless it is below [`SHORT_INNER`] (see the
/// module doc).
pub fn lengthen_inner(
    scop: &Scop,
    stmts: &[StmtId],
    size: i64,
    depth: usize,
    inner: usize,
) -> Vec<i64> {
    lengthen_inner_within(scop, stmts, size, depth, inner, FOOTPRINT_BUDGET)
}

/// [`lengthen_inner`] with `budget` bytes for one tile's data.
pub fn lengthen_inner_within(
    scop: &Scop,
    stmts: &[StmtId],
    size: i64,
    depth: usize,
    inner: usize,
    budget: u64,
) -> Vec<i64> {
    if size >= SHORT_INNER || inner >= depth {
        return vec![size; depth];
    }
    let arrays = accessed(scop, stmts);
    let footprint = |t: u64| -> u64 {
        arrays
            .iter()
            .map(|a| {
                let outer = t.saturating_pow(a.rank.min(depth).saturating_sub(1) as u32);
                let last = if a.rank > 0 { MIN_INNER as u64 } else { 1 };
                element_bytes(&a.elem_type)
                    .saturating_mul(outer)
                    .saturating_mul(last)
            })
            .fold(0u64, u64::saturating_add)
    };
    let mut outer = size;
    while outer > 2 && footprint(outer as u64) > budget {
        outer /= 2;
    }
    let mut sizes = vec![outer; depth];
    sizes[inner] = MIN_INNER;
    sizes
}

/// The fewest instances a time-tiled band's tile should hold: [`lengthen_time_tiled`].
pub const MIN_TILE_WORK: i64 = 16 * 1024;

/// `sizes` of a band over `stmts` whose member `inner` runs innermost, with that member
/// lengthened when the band is time-tiled and its tiles are small (see the module doc);
/// `sizes` unchanged otherwise.
pub fn lengthen_time_tiled(
    scop: &Scop,
    stmts: &[StmtId],
    mut sizes: Vec<i64>,
    inner: usize,
    budget: u64,
) -> Vec<i64> {
    let depth = sizes.len();
    if inner >= depth || !time_tiled(scop, stmts, depth) {
        return sizes;
    }
    let arrays = accessed(scop, stmts);
    // The footprint with the last subscript of each array spanning the innermost size, the
    // others the largest of the other sizes.
    let footprint = |sizes: &[i64]| -> u64 {
        let outer = sizes
            .iter()
            .enumerate()
            .filter(|&(k, _)| k != inner)
            .map(|(_, &t)| t.max(1) as u64)
            .max()
            .unwrap_or(1);
        arrays
            .iter()
            .map(|a| {
                let last = if a.rank > 0 {
                    sizes[inner].max(1) as u64
                } else {
                    1
                };
                element_bytes(&a.elem_type)
                    .saturating_mul(outer.saturating_pow(a.rank.saturating_sub(1) as u32))
                    .saturating_mul(last)
            })
            .fold(0u64, u64::saturating_add)
    };
    while tile_work(&sizes) < MIN_TILE_WORK {
        let mut longer = sizes.clone();
        longer[inner] = longer[inner].saturating_mul(2);
        if footprint(&longer) > budget {
            break;
        }
        sizes = longer;
    }
    sizes
}

/// The instances of a full tile of `sizes` (their product; sizes below 1 count as 1).
pub fn tile_work(sizes: &[i64]) -> i64 {
    sizes.iter().fold(1i64, |w, &t| w.saturating_mul(t.max(1)))
}

/// The fewest instances a tile should hold when [`coarsen_carried`] can lengthen it.
pub const MIN_TASK_WORK: i64 = 1 << 18;
/// The longest size [`coarsen_carried`] gives a member.
pub const MAX_CARRIED_SIZE: i64 = 8 * MAX_SIZE;

/// `sizes` with the members in `carried` (those that carry a dependence, in a band that also
/// has members that do not) lengthened while a tile holds fewer than [`MIN_TASK_WORK`]
/// instances (the product of the sizes) and `fits` accepts the longer sizes: each step doubles
/// the shortest carried member that can still grow (up to [`MAX_CARRIED_SIZE`]). See the module
/// doc.
pub fn coarsen_carried<E>(
    mut sizes: Vec<i64>,
    carried: &[usize],
    mut fits: impl FnMut(&[i64]) -> Result<bool, E>,
) -> Result<Vec<i64>, E> {
    let mut growing: Vec<usize> = carried
        .iter()
        .copied()
        .filter(|&m| m < sizes.len())
        .collect();
    while tile_work(&sizes) < MIN_TASK_WORK {
        let Some(&m) = growing
            .iter()
            .min_by_key(|&&m| (sizes[m], std::cmp::Reverse(m)))
        else {
            break;
        };
        let mut longer = sizes.clone();
        longer[m] = longer[m].saturating_mul(2);
        if longer[m] <= MAX_CARRIED_SIZE && fits(&longer)? {
            sizes = longer;
        } else {
            growing.retain(|&g| g != m);
        }
    }
    Ok(sizes)
}

/// The fewest instances [`coarsen_free`] gives a tile of a band whose members all carry no
/// dependence.
pub const MIN_FREE_WORK: i64 = 1 << 16;

/// `sizes` of a band whose members all carry no dependence (an elementwise pass: deriche's
/// `imgOut[i][j] = c1 * (y1[i][j] + y2[i][j])`) with the outermost member doubled while a tile
/// holds fewer than [`MIN_FREE_WORK`] instances, [`MIN_TILES_ALONG`] tiles stay along it
/// (`extents`: its values) and `fits` accepts the longer sizes. The outermost only: the inner
/// members give the point loops and the streamed runs their lengths ([`lengthen_runs`]). Such a
/// band's tiles are tasks of a few microseconds otherwise, each paying the runtime's cost per
/// task: deriche's two combining passes at LARGE were `16, 256` (2 304 tasks each of 3 to 8 us).
pub fn coarsen_free<E>(
    mut sizes: Vec<i64>,
    extents: &[i64],
    mut fits: impl FnMut(&[i64]) -> Result<bool, E>,
) -> Result<Vec<i64>, E> {
    let Some(&extent) = extents.first() else {
        return Ok(sizes);
    };
    while !sizes.is_empty() && tile_work(&sizes) < MIN_FREE_WORK {
        let doubled = sizes[0].saturating_mul(2);
        let along = (extent + doubled - 1) / doubled.max(1);
        let mut longer = sizes.clone();
        longer[0] = doubled;
        if along < MIN_TILES_ALONG || !fits(&longer)? {
            break;
        }
        sizes = longer;
    }
    Ok(sizes)
}

/// `sizes` of an elementwise band over a batch of matrices (its members outside the last two,
/// `batch` of them, at one value per tile: [`batch_products`]) with its two inner members
/// doubled in turn, the shorter first, while a tile holds fewer than [`MIN_FREE_WORK`]
/// instances, [`MIN_TILES_ALONG`] tiles stay along the member counted with the batch's
/// (`batch_tiles`) and `fits` accepts the longer sizes. doitgen's zeroing and copying of
/// `sum[r][q][p]` then take one `r` per tile, as its product does, so each of its tasks reads
/// what the tasks of the same `r` just wrote: `16, 16, 64` and `16, 8, 64` became `1, 256, 256`
/// (220 by 270 values), and doitgen at EXTRALARGE ran 0.128 -> 0.112 s on one thread.
pub fn coarsen_batch<E>(
    sizes: Vec<i64>,
    batch: usize,
    extents: &[i64],
    batch_tiles: i64,
    mut fits: impl FnMut(&[i64]) -> Result<bool, E>,
) -> Result<Vec<i64>, E> {
    let growing: Vec<usize> = (batch..sizes.len()).collect();
    let along = Along {
        extents,
        batch_tiles,
        min: MIN_TILES_ALONG,
    };
    double_in_turn(
        sizes,
        growing,
        &along,
        |sizes| tile_work(sizes) < MIN_FREE_WORK,
        // A member already over all its values gains nothing.
        |longer, m| Ok(longer[m] / 2 < extents.get(m).copied().unwrap_or(0) && fits(longer)?),
    )
}

/// The budgets of reused data a product's tile may take once [`widen_products`] widens it.
pub const PRODUCT_BUDGETS: u64 = 3;
/// The most instances [`widen_products`] gives a tile.
pub const MAX_PRODUCT_WORK: i64 = 4 * MIN_TASK_WORK;
/// The fewest tiles [`widen_products`] leaves along a member it widens.
pub const MIN_PRODUCT_TILES: i64 = 4;

/// `sizes` of a rectangular three-member band with one carried member (a product's reduction,
/// gemm's `k`) and two free ones (its rows and lanes), the free ones doubled in turn, the
/// shorter first, while a tile holds at most [`MAX_PRODUCT_WORK`] instances, at least
/// [`MIN_PRODUCT_TILES`] tiles stay along the member (`extents`: its values) and `fits` accepts
/// the wider sizes. The register kernel of such a tile ([`crate::kernel`]) copies its operand
/// along the reduction and the lanes once per tile and scales the rows' factors once per tile:
/// wider tiles share both among more rows and lanes, and pay the runtime's cost per task once
/// for more work.
///
/// `batch_tiles` is the number of tiles along the members outside the product (a batch of
/// products, [`batch_products`]; 1 for a band that is one product): those run in parallel too,
/// so a member keeps [`MIN_PRODUCT_TILES`] tiles counted with them.
pub fn widen_products<E>(
    sizes: Vec<i64>,
    free: &[bool],
    extents: &[i64],
    batch_tiles: i64,
    mut fits: impl FnMut(&[i64]) -> Result<bool, E>,
) -> Result<Vec<i64>, E> {
    let growing: Vec<usize> = (0..sizes.len())
        .filter(|&m| free.get(m) == Some(&true))
        .collect();
    let along = Along {
        extents,
        batch_tiles,
        min: MIN_PRODUCT_TILES,
    };
    double_in_turn(
        sizes,
        growing,
        &along,
        |_| true,
        |wider, _| Ok(tile_work(wider) <= MAX_PRODUCT_WORK && fits(wider)?),
    )
}

/// How many tiles a doubled member must keep along it: `min`, counted with the `batch_tiles`
/// of the members outside it (see [`batch_products`]), over `extents`.
struct Along<'e> {
    extents: &'e [i64],
    batch_tiles: i64,
    min: i64,
}

/// `sizes` with the members `growing` doubled in turn, the shorter first (the outer one of
/// equals), while `more` asks for more: a doubling is kept where [`Along`] still holds and
/// `accept(longer, m)` says so, and a member refused once grows no more.
fn double_in_turn<E>(
    mut sizes: Vec<i64>,
    mut growing: Vec<usize>,
    along: &Along<'_>,
    more: impl Fn(&[i64]) -> bool,
    mut accept: impl FnMut(&[i64], usize) -> Result<bool, E>,
) -> Result<Vec<i64>, E> {
    while more(&sizes) {
        let Some(&m) = growing.iter().min_by_key(|&&m| (sizes[m], m)) else {
            break;
        };
        let mut longer = sizes.clone();
        longer[m] = longer[m].saturating_mul(2);
        let extent = along.extents.get(m).copied().unwrap_or(0);
        let tiles = (extent + longer[m] - 1) / longer[m].max(1) * along.batch_tiles.max(1);
        if tiles >= along.min && accept(&longer, m)? {
            sizes = longer;
        } else {
            growing.retain(|&g| g != m);
        }
    }
    Ok(sizes)
}

/// `sizes` of a band of `batch` outer members around a product's three (doitgen's
/// `sum[r][q][p] += A[r][q][s] * C4[s][p]`: a product of `q` rows by `p` lanes over `s` for
/// each `r`) with one value of each outer member per tile: the product's members then take a
/// tile's work ([`widen_products`], [`deepen_products`], which count the batch's tiles among
/// those that keep the threads busy). The register kernel runs the product's rows, lanes and
/// reduction; an outer member only repeats it, and a tile of several of its values shares
/// nothing among them but the panel, which the kernel copies again for each. Measured on
/// doitgen at EXTRALARGE (2-core AMD EPYC, Zen 5, one thread, medians of 5 runs in rounds):
/// `8, 8, 64, 64` 0.161 s, `1, 64, 64, 64` 0.108, `1, 128, 128, 128` 0.111, `1, 64, 256, 128`
/// 0.101, `2, 64, 128, 128` 0.108 (gcc's original 0.36).
pub fn batch_products(mut sizes: Vec<i64>, batch: usize) -> Vec<i64> {
    for size in sizes.iter_mut().take(batch) {
        *size = 1;
    }
    sizes
}

/// The number of tiles of `sizes` over members of `extents` values each.
pub fn tiles_along(sizes: &[i64], extents: &[i64]) -> i64 {
    sizes
        .iter()
        .zip(extents)
        .map(|(&t, &e)| (e + t - 1) / t.max(1))
        .fold(1i64, |n, k| n.saturating_mul(k.max(1)))
}

/// The most instances [`deepen_products`] gives a tile.
pub const MAX_KERNEL_WORK: i64 = 16 * MIN_TASK_WORK;

/// `sizes` of a product's band after [`widen_products`] gave its tiles their most work
/// ([`MAX_PRODUCT_WORK`]; smaller bands keep their tiles for the threads), where an operand
/// that every row of a tile reads alike (the panel: gemm's `B[k][j]`, read along the reduction and the lanes) is what
/// the register kernel copies once per tile ([`crate::kernel`]): the `reduction` member doubled
/// while the panel's bytes (`panel` at the deeper sizes; `None` where there is none) stay within
/// `pack` and the member has more values than the tile takes, then the `rows` member doubled
/// while [`MIN_PRODUCT_TILES`] tiles stay along it (`extents`: its values) and a tile holds at
/// most [`MAX_KERNEL_WORK`] instances. The kernel reads the rows' data a block of rows at a time
/// and keeps only the panel for all of them, so neither step needs more of the cache than the
/// panel: longer rows share its copy among more rows, and a deeper reduction loads and stores
/// each block of the output once for more steps. See the module doc ("Panels"). Under a batch
/// of products (`batch_tiles` tiles along its outer members, [`batch_products`]; 1 for one
/// product) the rows keep their size.
pub fn deepen_products<E>(
    mut sizes: Vec<i64>,
    rows: usize,
    reduction: usize,
    extents: &[i64],
    batch_tiles: i64,
    pack: f64,
    mut panel: impl FnMut(&[i64]) -> Result<Option<f64>, E>,
) -> Result<Vec<i64>, E> {
    // A band whose tiles `widen_products` left below its most work is small for its threads:
    // its tiles stay as many.
    if rows >= sizes.len()
        || reduction >= sizes.len()
        || tile_work(&sizes) < MAX_PRODUCT_WORK
        || panel(&sizes)?.is_none()
    {
        return Ok(sizes);
    }
    let extent = |m: usize| extents.get(m).copied().unwrap_or(0);
    while sizes[reduction] < extent(reduction) {
        let mut deeper = sizes.clone();
        deeper[reduction] = deeper[reduction].saturating_mul(2);
        if !panel(&deeper)?.is_some_and(|bytes| bytes <= pack) {
            break;
        }
        sizes = deeper;
    }
    // Under a batch ([`batch_products`]) the rows stay: a tile over more of them measured
    // slower (doitgen at EXTRALARGE, one thread: `1, 256, 128, 128` 0.131 s against 0.111 with
    // 128 rows), and the batch's tiles already share out the work.
    if batch_tiles > 1 {
        return Ok(sizes);
    }
    loop {
        let mut longer = sizes.clone();
        longer[rows] = longer[rows].saturating_mul(2);
        let along = (extent(rows) + longer[rows] - 1) / longer[rows].max(1);
        if along < MIN_PRODUCT_TILES || tile_work(&longer) > MAX_KERNEL_WORK {
            return Ok(sizes);
        }
        sizes = longer;
    }
}

/// The shortest contiguous run of a streamed array in a tile that [`lengthen_runs`] accepts.
pub const MIN_RUN_BYTES: f64 = 4096.0;
/// [`MIN_RUN_BYTES`] for a band whose every member carries a dependence (its tiles run in
/// wavefronts: trisolv's substitution, bicg's and mvt's products fused for their shared reads):
/// there the rows a tile keeps matter as much as the length of its runs. At 2 KiB instead of 4
/// (EXTRALARGE, 2 threads, medians of 15): bicg 4.25 -> 3.15 ms (`16, 256` instead of `8, 512`),
/// trisolv 5.54 -> 4.68, mvt 7.70 -> 7.34; where a member is free (gemver's fused update and
/// product, deriche's row passes) 2 KiB was slower (17.1 -> 18.2 ms, 54.7 -> 58.4).
pub const MIN_RUN_BYTES_ORDERED: f64 = 2048.0;
/// The fewest tiles [`lengthen_runs`] leaves along a member that carries no dependence.
pub const MIN_TILES_ALONG: i64 = 8;

/// `sizes` changed so that the arrays the band streams are read in runs of at least
/// [`MIN_RUN_BYTES`] ([`MIN_RUN_BYTES_ORDERED`] when no member is free; see the module doc): while `run` (the shortest run, in bytes, at the given
/// sizes; `None` when those sizes are not allowed) is shorter, the member whose doubling
/// lengthens it most is doubled and the longest other member above [`MIN_SIZE`] halved, so a
/// tile's work stays. A member that carries no dependence (`free`) keeps at least
/// [`MIN_TILES_ALONG`] tiles over its `extents`; a member already as long as its extent is left.
pub fn lengthen_runs<E>(
    mut sizes: Vec<i64>,
    free: &[bool],
    extents: &[i64],
    mut run: impl FnMut(&[i64]) -> Result<Option<f64>, E>,
) -> Result<Vec<i64>, E> {
    let Some(mut current) = run(&sizes)? else {
        return Ok(sizes);
    };
    let target = if free.iter().any(|&f| f) {
        MIN_RUN_BYTES
    } else {
        MIN_RUN_BYTES_ORDERED
    };
    while current < target {
        let mut best: Option<(usize, f64)> = None;
        for m in 0..sizes.len() {
            let extent = extents.get(m).copied().unwrap_or(0);
            let doubled = sizes[m].saturating_mul(2);
            let tiles = (extent + doubled - 1) / doubled.max(1);
            if sizes[m] >= extent || (free.get(m) == Some(&true) && tiles < MIN_TILES_ALONG) {
                continue;
            }
            let mut longer = sizes.clone();
            longer[m] = doubled;
            if let Some(r) = run(&longer)? {
                if r > current && best.is_none_or(|(_, b)| r > b) {
                    best = Some((m, r));
                }
            }
        }
        let Some((m, _)) = best else {
            break;
        };
        let mut next = sizes.clone();
        next[m] = next[m].saturating_mul(2);
        if let Some(o) = (0..next.len())
            .filter(|&o| o != m && next[o] > MIN_SIZE)
            .max_by_key(|&o| (next[o], o))
        {
            next[o] /= 2;
        }
        match run(&next)? {
            Some(r) if r > current => {
                sizes = next;
                current = r;
            }
            _ => break,
        }
    }
    Ok(sizes)
}

/// Whether a `depth`-member band over `stmts` holds every loop of its statements and has a
/// member that subscripts no array (every array's rank is below `depth`): a time-tiled stencil.
pub fn time_tiled(scop: &Scop, stmts: &[StmtId], depth: usize) -> bool {
    let whole_band = stmts.iter().all(|s| {
        scop.statements
            .get(s.index())
            .is_some_and(|st| st.iterators.len() == depth)
    });
    depth >= 2 && whole_band && accessed(scop, stmts).iter().all(|a| a.rank < depth)
}

/// The distinct arrays (scalars included) that the statements `stmts` access.
fn accessed<'s>(scop: &'s Scop, stmts: &[StmtId]) -> Vec<&'s Array> {
    let ids: BTreeSet<usize> = stmts
        .iter()
        .filter_map(|s| scop.statements.get(s.index()))
        .flat_map(|s| s.accesses.iter().map(|a| a.array.0 as usize))
        .collect();
    ids.into_iter().filter_map(|a| scop.arrays.get(a)).collect()
}

/// Bytes of a C element type as the frontend spells it (canonical); 8 when unknown.
pub fn element_bytes(c_type: &str) -> u64 {
    let words: Vec<&str> = c_type
        .split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile" | "unsigned" | "signed"))
        .collect();
    match words.as_slice() {
        ["char"] | ["_Bool"] | ["bool"] => 1,
        ["short"] | ["short", "int"] => 2,
        ["int"] | ["float"] | [] => 4,
        ["long", "double"] => 16,
        _ => 8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_tiles_grow_along_their_carried_members_only() {
        let always = |_: &[i64]| Ok::<bool, ()>(true);
        // doitgen's product: the reduction member (the last) grows until 2^18 instances.
        assert_eq!(
            coarsen_carried(vec![8, 8, 64, 8], &[3], always),
            Ok(vec![8, 8, 64, 64])
        );
        // Tiles that hold enough already are left as they are.
        assert_eq!(
            coarsen_carried(vec![64, 64, 64], &[2], always),
            Ok(vec![64, 64, 64])
        );
        // No longer than MAX_CARRIED_SIZE, nor than `fits` accepts.
        assert_eq!(
            coarsen_carried(vec![64, 64], &[1], always),
            Ok(vec![64, 512])
        );
        let short = |s: &[i64]| Ok::<bool, ()>(s[1] <= 128);
        assert_eq!(
            coarsen_carried(vec![64, 64], &[1], short),
            Ok(vec![64, 128])
        );
        // The shortest carried member first, the inner one on a tie: 8·8·32·8 = 2^14 grows by
        // four doublings.
        assert_eq!(
            coarsen_carried(vec![8, 8, 32, 8], &[1, 3], always),
            Ok(vec![8, 32, 32, 32])
        );
        // Errors of `fits` are passed on.
        assert_eq!(coarsen_carried(vec![8, 8], &[1], |_| Err("no")), Err("no"));
    }

    #[test]
    fn elementwise_tiles_grow_along_their_outermost_member() {
        let always = |_: &[i64]| Ok::<bool, ()>(true);
        // deriche's combining pass at LARGE (4096 by 2160): 16 rows of 256 grow to 256 rows.
        assert_eq!(
            coarsen_free(vec![16, 256], &[4096, 2160], always),
            Ok(vec![256, 256])
        );
        // Eight tiles at least stay along the member: 800 rows stop at 64 (13 tiles; 128 would
        // leave 7).
        assert_eq!(
            coarsen_free(vec![32, 128], &[800, 900], always),
            Ok(vec![64, 128])
        );
        // Tiles that hold enough already, and sizes `fits` refuses, are left.
        assert_eq!(
            coarsen_free(vec![256, 256], &[4096, 4096], always),
            Ok(vec![256, 256])
        );
        let small = |s: &[i64]| Ok::<bool, ()>(s[0] <= 32);
        assert_eq!(
            coarsen_free(vec![16, 256], &[4096, 2160], small),
            Ok(vec![32, 256])
        );
        assert_eq!(
            coarsen_free(vec![16, 256], &[4096, 2160], |_| Err("no")),
            Err("no")
        );
    }

    #[test]
    fn products_widen_their_free_members_in_turn() {
        let always = |_: &[i64]| Ok::<bool, ()>(true);
        let free = [true, true, false];
        // gemm at LARGE (1000 by 1100 by 1200, `k` carried): rows, then lanes, to 2^20
        // instances; the reduction keeps its size.
        assert_eq!(
            widen_products(vec![64, 64, 64], &free, &[1000, 1100, 1200], 1, always),
            Ok(vec![128, 128, 64])
        );
        // Four tiles at least stay along a widened member: 400 rows take 128 (4 tiles), 200
        // rows stay at 64 (128 would leave 2) and the lanes grow instead.
        assert_eq!(
            widen_products(vec![64, 64, 64], &free, &[400, 1100, 1200], 1, always),
            Ok(vec![128, 128, 64])
        );
        assert_eq!(
            widen_products(vec![64, 64, 64], &free, &[200, 1100, 1200], 1, always),
            Ok(vec![64, 256, 64])
        );
        // What `fits` refuses stays as it was; a carried member never grows.
        let small = |s: &[i64]| Ok::<bool, ()>(s[0] * s[1] <= 64 * 128);
        assert_eq!(
            widen_products(vec![64, 64, 64], &free, &[1000, 1100, 1200], 1, small),
            Ok(vec![128, 64, 64])
        );
        assert_eq!(
            widen_products(
                vec![64, 64, 64],
                &[false, false, true],
                &[1000, 1100, 50],
                1,
                always
            ),
            Ok(vec![64, 64, 64])
        );
        assert_eq!(
            widen_products(vec![64, 64, 64], &free, &[1000, 1100, 1200], 1, |_| Err(
                "no"
            )),
            Err("no")
        );
        // A batch of products (doitgen at EXTRALARGE: `r` outside 220 rows `q`, 270 lanes `p`
        // and the reduction `s`): one `r` per tile, and the 250 tiles along it count for the
        // threads, so the rows take 128 (two tiles) and the lanes 128 (three).
        let sizes = batch_products(vec![8, 8, 64, 64], 1);
        assert_eq!(sizes, vec![1, 8, 64, 64]);
        let batch = tiles_along(&sizes[..1], &[250]);
        assert_eq!(batch, 250);
        assert_eq!(
            widen_products(
                sizes,
                &[false, true, true, false],
                &[250, 220, 270, 270],
                batch,
                always
            ),
            Ok(vec![1, 128, 128, 64])
        );
    }

    #[test]
    fn passes_over_a_batch_take_one_matrix_at_a_time() {
        let always = |_: &[i64]| Ok::<bool, ()>(true);
        // doitgen's zeroing at EXTRALARGE (250 by 220 by 270): `16, 16, 64` -> one `r`, then
        // the rows and lanes in turn until a tile holds 2^16 values or covers its rows.
        let sizes = batch_products(vec![16, 16, 64], 1);
        let extents = [250, 220, 270];
        let batch = tiles_along(&sizes[..1], &extents[..1]);
        assert_eq!(
            coarsen_batch(sizes.clone(), 1, &extents, batch, always),
            Ok(vec![1, 256, 256])
        );
        // Without the batch's tiles, eight must stay along a member: 32 rows would leave 7
        // tiles, 128 lanes 3, so neither grows.
        assert_eq!(
            coarsen_batch(sizes.clone(), 1, &extents, 1, always),
            Ok(vec![1, 16, 64])
        );
        // What `fits` refuses stays; errors come through.
        let small = |s: &[i64]| Ok::<bool, ()>(s[1] * s[2] <= 64 * 64);
        assert_eq!(
            coarsen_batch(sizes.clone(), 1, &extents, batch, small),
            Ok(vec![1, 64, 64])
        );
        assert_eq!(
            coarsen_batch(sizes, 1, &extents, batch, |_| Err("no")),
            Err("no")
        );
    }

    #[test]
    fn products_deepen_their_reduction_to_the_panel_then_lengthen_their_rows() {
        // gemm at LARGE after `widen_products` (rows `i`, lanes `j`, reduction `k`): the panel
        // `B[k][j]` is 8 bytes by the lanes by the reduction.
        let panel = |s: &[i64]| Ok::<_, ()>(Some((8 * s[1] * s[2]) as f64));
        let pack = 128.0 * 1024.0;
        let gemm = [1000, 1100, 1200];
        assert_eq!(
            deepen_products(vec![128, 128, 64], 0, 2, &gemm, 1, pack, panel),
            Ok(vec![256, 128, 128])
        );
        // Lanes of 256 leave no room for a deeper reduction; the rows grow to the most work.
        assert_eq!(
            deepen_products(vec![128, 256, 64], 0, 2, &gemm, 1, pack, panel),
            Ok(vec![256, 256, 64])
        );
        // Four tiles at least stay along the rows: 800 take 256 (4 tiles), 600 keep 128.
        assert_eq!(
            deepen_products(vec![128, 128, 64], 0, 2, &[800, 1100, 1200], 1, pack, panel),
            Ok(vec![256, 128, 128])
        );
        assert_eq!(
            deepen_products(vec![128, 128, 64], 0, 2, &[600, 1100, 1200], 1, pack, panel),
            Ok(vec![128, 128, 128])
        );
        // A reduction the tile holds whole stays; a smaller pack keeps it too.
        assert_eq!(
            deepen_products(vec![128, 128, 64], 0, 2, &[1000, 1100, 50], 1, pack, panel),
            Ok(vec![256, 128, 64])
        );
        assert_eq!(
            deepen_products(vec![128, 128, 64], 0, 2, &gemm, 1, pack / 2.0, panel),
            Ok(vec![256, 128, 64])
        );
        // Tiles that the threads kept smaller (2mm at MEDIUM: 180 rows, 190 lanes) stay.
        assert_eq!(
            deepen_products(vec![64, 64, 64], 0, 2, &[180, 190, 210], 1, pack, panel),
            Ok(vec![64, 64, 64])
        );
        // Under a batch the reduction deepens and the rows stay (doitgen: 220 rows `q`).
        let doitgen = |s: &[i64]| Ok::<_, ()>(Some((8 * s[2] * s[3]) as f64));
        assert_eq!(
            deepen_products(
                vec![1, 128, 128, 64],
                1,
                3,
                &[250, 220, 270, 270],
                250,
                pack,
                doitgen
            ),
            Ok(vec![1, 128, 128, 128])
        );
        // Without a panel nothing changes; errors come through.
        let none = |_: &[i64]| Ok::<Option<f64>, ()>(None);
        assert_eq!(
            deepen_products(vec![128, 128, 64], 0, 2, &gemm, 1, pack, none),
            Ok(vec![128, 128, 64])
        );
        assert_eq!(
            deepen_products(vec![128, 128, 64], 0, 2, &gemm, 1, pack, |_| Err("no")),
            Err("no")
        );
    }

    #[test]
    fn streamed_rows_get_long_runs_and_the_tile_keeps_its_work() {
        // `x2[i] += A[j][i] * y2[j]` with members (i, j): A's run is i's size, 8 bytes each.
        let run_along = |m: usize| move |s: &[i64]| Ok::<Option<f64>, ()>(Some(s[m] as f64 * 8.0));
        assert_eq!(
            lengthen_runs(vec![64, 512], &[true, false], &[4000, 4000], run_along(0)),
            Ok(vec![512, 64])
        );
        // Runs long enough already: unchanged.
        assert_eq!(
            lengthen_runs(vec![64, 512], &[true, false], &[4000, 4000], run_along(1)),
            Ok(vec![64, 512])
        );
        // A free member keeps 8 tiles: 2000 / 256 rounds up to 8, 2000 / 512 to 4.
        assert_eq!(
            lengthen_runs(vec![64, 512], &[true, false], &[2000, 2000], run_along(0)),
            Ok(vec![256, 128])
        );
        // A carried member may take its whole extent; no member shrinks below MIN_SIZE.
        assert_eq!(
            lengthen_runs(vec![8, 64], &[true, false], &[100, 300], run_along(1)),
            Ok(vec![8, 512])
        );
        // No member free (trisolv's substitution, both members carried): runs of 2 KiB are
        // enough, `64, 64` -> `32, 128` -> `16, 256`; with the rows free, 4 KiB: `8, 512`.
        assert_eq!(
            lengthen_runs(vec![64, 64], &[false, false], &[4000, 4000], run_along(1)),
            Ok(vec![16, 256])
        );
        assert_eq!(
            lengthen_runs(vec![64, 64], &[true, false], &[4000, 4000], run_along(1)),
            Ok(vec![8, 512])
        );
        // Sizes `run` refuses are not taken.
        let capped = |s: &[i64]| Ok::<Option<f64>, ()>((s[0] <= 128).then(|| s[0] as f64 * 8.0));
        assert_eq!(
            lengthen_runs(vec![64, 512], &[true, false], &[4000, 4000], capped),
            Ok(vec![128, 256])
        );
    }

    #[test]
    fn element_sizes_follow_the_c_types() {
        assert_eq!(element_bytes("double"), 8);
        assert_eq!(element_bytes("float"), 4);
        assert_eq!(element_bytes("unsigned int"), 4);
        assert_eq!(element_bytes("long"), 8);
        assert_eq!(element_bytes("long double"), 16);
        assert_eq!(element_bytes("unsigned char"), 1);
    }
}
