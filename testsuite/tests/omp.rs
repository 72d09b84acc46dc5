//! Differential tests of the barrier-based OpenMP target (`--tiledflow-target=omp`): parallel
//! tile loops where a tile dimension carries no dependence, wavefronts where none is free.
//! Every kernel here is built by `tiledflow-cc` (which adds `-fopenmp`) and must dump exactly the
//! arrays of the `cc` build, with 1 and with 2 OpenMP threads.
//!
//! The kernels cover each shape of plan (as generated at the time of writing): outer parallel
//! tile loops (gemm, 2mm), wavefronts over skewed or triangular bands (jacobi-2d, seidel-2d,
//! jacobi-1d, fdtd-2d, lu, atax) and nests that stay sequential (durbin). Tile size 4 at MINI
//! makes many tiles per wavefront; sizes that do not divide the problem leave partial tiles at
//! the borders; gemm and seidel-2d also run at MEDIUM. gemm's and covariance's products run the
//! tiles of one parallel iteration in the order the tasks are spawned in (`(i, k, j)`).

use testsuite::{differential, Variant};

fn omp(tile: &str, threads: &str) -> Variant {
    Variant::tiledflow_cc(format!("omp, tile {tile}, {threads} thread(s)"))
        .expect("tiledflow-cc is built (cargo build --workspace)")
        .arg("--tiledflow-strict")
        .arg("--tiledflow-target=omp")
        .arg(format!("--tiledflow-tile-sizes={tile}"))
        .env("OMP_NUM_THREADS", threads)
}

fn check(kernel: &str, defines: &[(&str, &str)], tile: &str) {
    if let Err(e) = differential(kernel, defines, &[omp(tile, "1"), omp(tile, "2")]) {
        panic!("{e:#}");
    }
}

#[test]
fn outer_parallel_tile_loops() {
    check("gemm", &[("NI", "37"), ("NJ", "29"), ("NK", "41")], "4,8,3");
    check("2mm", &[("MINI_DATASET", "")], "4");
    check("gemm", &[("MEDIUM_DATASET", "")], "16");
    // Tiles of one parallel iteration in the tasks' spawn order, `(i, k, j)`, over a triangle
    // (the product is a nest of its own when the statements are distributed).
    let min = |threads| omp("4", threads).arg("--tiledflow-fuse=min");
    if let Err(e) = differential("covariance", &[("MINI_DATASET", "")], &[min("1"), min("2")]) {
        panic!("{e:#}");
    }
}

#[test]
fn wavefronts_over_skewed_and_triangular_bands() {
    check("fdtd-2d", &[("MINI_DATASET", "")], "4");
    check("lu", &[("MINI_DATASET", "")], "4");
    check("atax", &[("MINI_DATASET", "")], "4");
}

#[test]
fn wavefronts_over_stencils_and_sequential_nests() {
    check("jacobi-2d", &[("N", "37"), ("TSTEPS", "9")], "4,6,5");
    check("seidel-2d", &[("MINI_DATASET", "")], "4");
    check("jacobi-1d", &[("MINI_DATASET", "")], "4");
    check("durbin", &[("MINI_DATASET", "")], "4");
    check("seidel-2d", &[("MEDIUM_DATASET", "")], "16");
}
