//! Differential tests: each kernel built by `cc` is the reference; built by `tiledflow-cc`
//! (every SCoP transformed, `--tiledflow-strict` so that nothing silently falls back to the
//! untouched source) it must dump the same arrays, bit for bit.
//!
//! Sizes include ones that are not multiples of the tile sizes, and tile sizes that leave
//! partial tiles in every dimension, so tile bounds and tile dependences at the borders are
//! exercised; 1 and 2 threads, so both the sequential and the concurrent paths of the runtime run.

use testsuite::{differential, Variant};

/// The transformed variants every kernel is checked with.
fn variants(tile: &str) -> Vec<Variant> {
    let tasks = |threads: &str| {
        Variant::tiledflow_cc(format!("tasks, tile {tile}, {threads} thread(s)"))
            .expect("tiledflow-cc is built (cargo build --workspace)")
            .arg("--tiledflow-strict")
            .arg(format!("--tiledflow-tile-sizes={tile}"))
            .env("TILEDFLOW_NUM_THREADS", threads)
    };
    let seq = Variant::tiledflow_cc(format!("seq, tile {tile}"))
        .expect("tiledflow-cc is built")
        .arg("--tiledflow-strict")
        .arg("--tiledflow-target=seq")
        .arg(format!("--tiledflow-tile-sizes={tile}"));
    vec![tasks("1"), tasks("2"), seq]
}

fn check(kernel: &str, sizes: &[&[(&str, &str)]], tiles: &[&str]) {
    for defines in sizes {
        for tile in tiles {
            if let Err(e) = differential(kernel, defines, &variants(tile)) {
                panic!("{e:#}");
            }
        }
    }
}

#[test]
fn gemm() {
    check(
        "gemm",
        &[
            &[("MINI_DATASET", "")],
            &[("NI", "37"), ("NJ", "29"), ("NK", "41")],
        ],
        &["8", "5,7,3"],
    );
}

#[test]
fn two_mm() {
    check(
        "2mm",
        &[
            &[("MINI_DATASET", "")],
            &[("NI", "23"), ("NJ", "19"), ("NK", "17"), ("NL", "21")],
        ],
        &["8", "32"],
    );
}

#[test]
fn jacobi_2d() {
    check(
        "jacobi-2d",
        &[
            &[("MINI_DATASET", "")],
            &[("N", "37"), ("TSTEPS", "9")],
            &[("N", "18"), ("TSTEPS", "13")],
        ],
        &["8", "4,6,5"],
    );
}

#[test]
fn seidel_2d() {
    check(
        "seidel-2d",
        &[&[("MINI_DATASET", "")], &[("N", "29"), ("TSTEPS", "7")]],
        &["8", "3,4,5"],
    );
}

/// Scalars kept in arrays of copies (`polyhedral::materialize`): symm's running sum, whose
/// `k` loop is tiled, and ludcmp's `w`, also used by a loop that counts down.
#[test]
fn scalars_kept_in_arrays_of_copies() {
    check(
        "symm",
        &[&[("MINI_DATASET", "")], &[("M", "23"), ("N", "17")]],
        &["8", "5,7,3"],
    );
    check(
        "ludcmp",
        &[&[("MINI_DATASET", "")], &[("N", "29")]],
        &["8", "4,6,5"],
    );
}

/// floyd-warshall's row loop is cut where it stores the element it loads (`polyhedral::tile_code`).
#[test]
fn floyd_warshall_cut_loops() {
    check(
        "floyd-warshall",
        &[&[("MINI_DATASET", "")], &[("N", "37")]],
        &["8", "5"],
    );
}

/// floyd-warshall's rows cut in blocks under its sequential `k` loop (`polyhedral::schedule`'s
/// inner tiles: `(k, 0, block of i)`, three waves per `k` around row `k`'s block), at a size
/// whose phases are large enough to be cut (260² instances), with blocks that divide the rows
/// and blocks that do not.
#[test]
fn floyd_warshall_rows_in_blocks_under_k() {
    check("floyd-warshall", &[&[("N", "260")]], &["65", "37"]);
}

/// gramschmidt's `j` point loop is moved below its `i` loops in each tile (`polyhedral::sink`),
/// in full tiles and in the diagonal ones, where the normalization and the updates share a tile.
#[test]
fn gramschmidt_band_loop_sunk() {
    check(
        "gramschmidt",
        &[&[("MINI_DATASET", "")], &[("M", "23"), ("N", "19")]],
        &["8", "4,6", "5,3"],
    );
}

/// gramschmidt's wavefront of large tiles gets half as deep tiles for two threads
/// (`polyhedral::spread_tiles`; the compiler told it has two, whatever the machine): the
/// results are cc's under tasks on 1 and 2 threads, seq and omp, and `-v` says the tiles were
/// spread (so the builds above ran that code).
#[test]
fn gramschmidt_tiles_spread_for_the_threads() {
    tiles_for_two_threads(
        "gramschmidt",
        &[("M", "500"), ("N", "256")],
        "auto",
        "smaller tiles for the threads: N0 [64, 64] -> [32, 64]",
    );
}

/// bicg's products fused for their shared reads run in a wavefront of tiny tiles, whose
/// outermost member is doubled for the runtime's cost per task (`polyhedral::spread_tiles`'
/// doublings), 390 and 410 values leaving partial tiles along both; trisolv's substitution,
/// a triangle, alike: the results are cc's under tasks on 1 and 2 threads, seq and omp. Their
/// fusions are given (`reuse`, `min`): the cost model's choice depends on the machine's caches
/// (bicg at these sizes gets `smart` where L2 is 512 KiB).
#[test]
fn tiny_tiles_doubled_for_the_cost_per_task() {
    tiles_for_two_threads(
        "bicg",
        &[("M", "390"), ("N", "410")],
        "reuse",
        "larger tiles for the cost per task: N0 [16, 256] -> [32, 256]",
    );
    tiles_for_two_threads(
        "trisolv",
        &[("N", "1000")],
        "min",
        "larger tiles for the cost per task: N1 [16, 256] -> [32, 256] (average parallelism 2.4 -> 2.3); N1 [32, 256] -> [64, 256]",
    );
}

/// Time-tiled stencils whose rows get twice the cube (`64, 64, 128`: `polyhedral::schedule`'s
/// `TIME_ROWS`, at least eight such tiles along the skewed rows), with partial tiles along every
/// member (40 time steps in tiles of 64, 1 000 and 1 100 values in skewed rows): the results are
/// cc's under tasks on 1 and 2 threads, seq and omp.
#[test]
fn time_tiled_rows_of_twice_the_cube() {
    tiles_for_two_threads(
        "jacobi-2d",
        &[("N", "1000"), ("TSTEPS", "40")],
        "auto",
        "innermost loop distributed (S0, S1)",
    );
    tiles_for_two_threads(
        "fdtd-2d",
        &[("TMAX", "40"), ("NX", "200"), ("NY", "1100")],
        "auto",
        "innermost loop distributed (S0, S1, S2, S3)",
    );
}

/// deriche's backward row pass runs its rows as vector lanes step by step, as its forward one
/// does (`polyhedral::rows`' "Steps as lanes"), its row walked from the end (`(-j) + H - 1`):
/// the results are cc's under tasks on 1 and 2 threads, seq and omp.
#[test]
fn backward_recurrences_as_lanes() {
    tiles_for_two_threads(
        "deriche",
        &[("W", "64"), ("H", "2100")],
        "auto",
        "N1 full tiles apart, tf_i2 jammed by 8, steps as vector lanes (tf_i3)",
    );
}

/// doitgen's product over `p` (160 values, 5 blocks of 32 lanes), whose tiles of 128 left a
/// partial one of 32, is one tile along `p` (`polyhedral::spread_tiles`' fit; the zeroing and
/// copying nests' tiles of one `r` cover it already): the results are cc's under tasks on 1
/// and 2 threads, seq and omp.
#[test]
fn doitgen_tiles_fitted_to_the_loops() {
    tiles_for_two_threads(
        "doitgen",
        &[("NR", "32"), ("NQ", "32"), ("NP", "160")],
        "auto",
        "one tile along loops that ended in a partial one: N1 [1, 128, 128, 128] -> [1, 128, 160, 128]",
    );
}

/// doitgen's product as a batch of products (`tile_size::batch_products`): one `r` per tile,
/// 128 rows `q`, 128 lanes `p` and 128 steps of `s`, and register kernels in the tiles partial
/// along each of the three (24 rows, 12 lanes, 12 steps left at these sizes): the results are
/// cc's under tasks on 1 and 2 threads, seq and omp.
#[test]
fn doitgen_batch_of_products_with_partial_tiles() {
    tiles_for_two_threads(
        "doitgen",
        &[("NR", "3"), ("NQ", "152"), ("NP", "140")],
        "auto",
        "kernels also in tiles partial along tf_i5, tf_i6, tf_i7",
    );
}

/// `kernel` at `defines` compiled with fusion `fuse` for two threads (whatever the machine)
/// with default tiles: tasks on 1 and 2 threads, seq and omp give cc's results, and `-v` says
/// `said` (the tile sizes the builds ran with).
fn tiles_for_two_threads(kernel: &str, defines: &[(&str, &str)], fuse: &str, said: &str) {
    let built = |name: &str, target: &str| {
        Variant::tiledflow_cc(name.to_string())
            .expect("tiledflow-cc is built")
            .arg("--tiledflow-strict")
            .arg(format!("--tiledflow-target={target}"))
            .arg(format!("--tiledflow-fuse={fuse}"))
            .compile_env("TILEDFLOW_NUM_THREADS", "2")
    };
    let variants = vec![
        built("tasks, 1 thread", "tasks").env("TILEDFLOW_NUM_THREADS", "1"),
        built("tasks, 2 threads", "tasks").env("TILEDFLOW_NUM_THREADS", "2"),
        built("seq", "seq"),
        built("omp, 2 threads", "omp").env("OMP_NUM_THREADS", "2"),
    ];
    if let Err(e) = differential(kernel, defines, &variants) {
        panic!("{e:#}");
    }
    let out = tiledflow(
        kernel,
        defines,
        &["-v", "--fuse", fuse],
        &[("TILEDFLOW_NUM_THREADS", "2")],
    );
    let told = String::from_utf8_lossy(&out.stderr);
    assert!(told.contains(said), "{told}");
}

/// tiledflow on `kernel` at `defines` with `args` and the environment `env`, its C on standard
/// output.
fn tiledflow(
    kernel: &str,
    defines: &[(&str, &str)],
    args: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let tiledflow = testsuite::tool_path("tiledflow").expect("tiledflow is built");
    std::process::Command::new(tiledflow)
        .arg(testsuite::kernel_path(kernel))
        .args(["-I", &testsuite::utilities_dir().display().to_string()])
        .args(defines.iter().map(|(k, v)| format!("-D{k}={v}")))
        .args(args)
        .args(["-o", "-"])
        .envs(env.iter().copied())
        .output()
        .expect("tiledflow runs")
}

/// fdtd-2d's time-skewed tiles have their innermost loop distributed over its four statements
/// (`polyhedral::sink`), as jacobi-2d's over its two (tested above).
#[test]
fn fdtd_2d_innermost_loop_distributed() {
    check(
        "fdtd-2d",
        &[
            &[("MINI_DATASET", "")],
            &[("TMAX", "7"), ("NX", "23"), ("NY", "29")],
        ],
        &["8", "4,6,5"],
    );
}

/// Rows jammed around their reductions in full tiles (`polyhedral::chains`): gesummv's and
/// atax's rows, bicg's and mvt's.
#[test]
fn reduction_chains_jammed() {
    for kernel in ["gesummv", "atax", "bicg", "mvt"] {
        check(kernel, &[&[("MINI_DATASET", "")]], &["8", "4,12"]);
    }
    check("gesummv", &[&[("N", "37")]], &["8"]);
    check("atax", &[&[("M", "29"), ("N", "35")]], &["8", "12,4"]);
}

/// nussinov's column `table[k + 1][j]` read from a buffer in full tiles (`polyhedral::column`),
/// filled once per column and following the tile's own stores to it: tiles of 8 and of 16 x 8
/// leave full tiles at N = 70 and partial ones along the diagonal and the borders.
#[test]
fn nussinov_columns_in_buffers() {
    check("nussinov", &[&[("N", "70")]], &["8", "16,8"]);
}

/// adi's sweeps cut into tiles under its sequential time loop (`polyhedral::schedule`'s inner
/// tiles: `(t, sweep, block of i)`), at a size whose phases are large enough to be cut (258²
/// instances), with blocks that divide the rows and blocks that do not.
#[test]
fn adi_inner_tiles_under_the_time_loop() {
    check("adi", &[&[("N", "260"), ("TSTEPS", "3")]], &["64", "37"]);
}

/// deriche's anti-causal passes, whose inner loops count down, are tiled along those loops
/// through the mirror the scheduler sees them in (`polyhedral::reversal`), and its column passes
/// run their columns side by side: tiles of 8 and of 5 × 3 cut both directions of every pass,
/// with partial tiles at every border (W and H not multiples of them).
#[test]
fn deriche_tiled_along_its_backward_loops() {
    check("deriche", &[&[("W", "37"), ("H", "29")]], &["8", "5,3"]);
}

/// doitgen's `sum`, expanded to one copy per `(r, q)` and kept in an array of copies of 4.3 MB:
/// past 4 MiB, so its 2 MiB-aligned middle is advised to be backed by huge pages
/// (`tf_copies_alloc`); the values are the same.
#[test]
fn doitgen_with_copies_on_huge_pages() {
    check(
        "doitgen",
        &[&[("NR", "64"), ("NQ", "64"), ("NP", "130")]],
        &["32"],
    );
}

/// heat-3d with its default tile sizes (no `--tiledflow-tile-sizes`): its innermost member is
/// one tile over its whole range and the others 16 or 8 (`polyhedral::schedule`'s default
/// sizes); at these sizes there are tiles along time and both outer space dimensions, partial
/// ones at every border.
#[test]
fn heat_3d_default_tiles_with_whole_rows() {
    for defines in [
        [("N", "40"), ("TSTEPS", "20")],
        [("N", "37"), ("TSTEPS", "37")],
    ] {
        let tasks = |threads: &str| {
            Variant::tiledflow_cc(format!("tasks, default tiles, {threads} thread(s)"))
                .expect("tiledflow-cc is built")
                .arg("--tiledflow-strict")
                .env("TILEDFLOW_NUM_THREADS", threads)
        };
        if let Err(e) = differential("heat-3d", &defines, &[tasks("1"), tasks("2")]) {
            panic!("{e:#}");
        }
    }
}

/// Skewed tiles of unequal sizes (7 in time, 3 in space): computing their tile dependences and
/// their shapes once took minutes (`polyhedral::tile`, `polyhedral::tile_graph`).
#[test]
fn heat_3d_unequal_tile_sizes() {
    check("heat-3d", &[&[("MINI_DATASET", "")]], &["7,3"]);
}

// Every kernel at MINI (tasks and seq, tiles of 4, 2 threads) is checked by the PolyBench
// runner's own test, `polybench/tests/runner.rs` (`every_kernel_verifies_at_mini`), which uses
// this crate's harness; it is not repeated here.

/// A plan of blocks (`--tiledflow-fuse=S0+S1,S2,S3`, what the cost model chooses for gemver from
/// MEDIUM on): the update of `A` fused with the product that reads `A` transposed, the other two
/// statements in nests of their own after them, under the tasks (1 and 2 threads), seq and omp
/// targets.
#[test]
fn gemver_in_blocks() {
    let plan = "--tiledflow-fuse=S0+S1,S2,S3";
    for defines in [&[("MINI_DATASET", "")][..], &[("N", "37")]] {
        for tile in ["8", "5,7"] {
            let mut all = variants(tile)
                .into_iter()
                .map(|v| v.arg(plan))
                .collect::<Vec<_>>();
            all.push(
                Variant::tiledflow_cc(format!("omp, tile {tile}, 2 threads"))
                    .expect("tiledflow-cc is built")
                    .arg("--tiledflow-strict")
                    .arg("--tiledflow-target=omp")
                    .arg(format!("--tiledflow-tile-sizes={tile}"))
                    .arg(plan)
                    .env("OMP_NUM_THREADS", "2"),
            );
            if let Err(e) = differential("gemver", defines, &all) {
                panic!("{e:#}");
            }
        }
    }
}

/// Spread streams (a nest with a parallel outer tile loop) on 3 threads, whose blocks are of
/// unequal sizes (gemm's 37 rows in tiles of 5: 8 tiles, blocks of 3, 3 and 2; deriche's six
/// spread nests; adi's stream spread along its inner dimension, the 52 blocks of rows of each
/// sweep), and on 2 threads beside the same builds with `--tiledflow-no-spread`: the spawn order
/// of each thread's blocks side by side must spawn every tile once (a tile left out leaves its
/// readers stuck, one spawned twice is an error of the runtime), and the results stay cc's.
#[test]
fn spread_streams_in_blocks_of_unequal_sizes() {
    for (kernel, defines, spread) in [
        (
            "gemm",
            &[("NI", "37"), ("NJ", "29"), ("NK", "41")][..],
            "tf_spread_at(tf_t,",
        ),
        (
            "deriche",
            &[("W", "45"), ("H", "38")][..],
            "tf_spread_at(tf_t,",
        ),
        (
            "adi",
            &[("N", "260"), ("TSTEPS", "3")][..],
            "tf_stream_new_spread(tf_g, \"N0\", 3, tf_lo, tf_hi, 2)",
        ),
    ] {
        let tasks = |name: &str, threads: &str| {
            Variant::tiledflow_cc(format!("tasks, {name}, {threads} thread(s)"))
                .expect("tiledflow-cc is built")
                .arg("--tiledflow-strict")
                .arg("--tiledflow-tile-sizes=5")
                .env("TILEDFLOW_NUM_THREADS", threads)
        };
        let variants = vec![
            tasks("spread", "3"),
            tasks("spread", "2"),
            tasks("not spread", "2").arg("--tiledflow-no-spread"),
        ];
        if let Err(e) = differential(kernel, defines, &variants) {
            panic!("{e:#}");
        }
        let out = tiledflow(kernel, defines, &["--tile-sizes", "5"], &[]);
        let c = String::from_utf8_lossy(&out.stdout);
        assert!(
            c.contains("tf_stream_new_spread(tf_g, \"N0\"") && c.contains(spread),
            "{kernel}: no spread stream to test"
        );
    }
}
