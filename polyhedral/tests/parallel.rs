//! Parallel tile loops and wavefronts for the OpenMP target, checked against what the
//! dependences of small kernels allow (reasoned out by hand in each test's comment).

mod common;

use polyhedral::{dependences, parallel_tiles, schedule, ScheduleConfig};

fn plan(
    scop: &frontend::ir::Scop,
    sizes: Vec<i64>,
    original: bool,
) -> Vec<polyhedral::ParallelTiles> {
    let deps = dependences(scop).unwrap();
    let cfg = ScheduleConfig {
        tile_sizes: Some(sizes),
        original,
        ..ScheduleConfig::default()
    };
    let (sched, warnings) = schedule(scop, &deps, &cfg).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    parallel_tiles(scop, &deps, &sched).unwrap()
}

/// `C[i][j] *= 2`: no dependence at all, so both tile dimensions are parallel and no wavefront
/// is needed.
#[test]
fn independent_tiles_are_parallel_in_every_dimension() {
    let p = plan(&common::scale_2d(), vec![8], false);
    assert_eq!(p.len(), 1);
    assert!(!p[0].wavefront);
    assert_eq!(p[0].parallel, vec![true, true]);
}

/// The in-place stencil in source order: (t, i) with dependences of distance (0, 1), (1, 0) and
/// (1, -1). In the original order the band is only `t` (the (1, -1) distance forbids tiling `i`
/// with it), one tile dimension that carries every dependence: nothing is parallel.
#[test]
fn a_single_carrying_tile_dimension_is_sequential() {
    let p = plan(&common::seidel_1d(), vec![4], true);
    assert_eq!(p.len(), 1);
    assert!(!p[0].wavefront);
    assert_eq!(p[0].parallel, vec![false]);
}

/// jacobi-1d scheduled by ISL: a skewed, permutable 2-D band in which tiles depend on their left
/// and lower neighbours, so neither tile dimension is parallel; along the wavefronts `t0 + t1`,
/// tiles with different `t1` are independent, so dimension 1 of the skewed space is parallel.
#[test]
fn a_stencil_band_runs_as_wavefronts() {
    let p = plan(&common::jacobi_1d(), vec![4], false);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].wavefront, "{p:?}");
    assert_eq!(p[0].parallel, vec![false, true]);
}
