//! Scheduling and tiling: nests, tile maps and tile domains checked against relations derived by
//! hand, the fusion heuristics, the original order and the fallback on the operation budget.

mod common;

use frontend::ir::StmtId;
use polyhedral::{dependences, maps_equal, schedule, sets_equal, verify, Fuse, ScheduleConfig};

fn cfg(tile_sizes: Option<Vec<i64>>) -> ScheduleConfig {
    ScheduleConfig {
        tile_sizes,
        ..ScheduleConfig::default()
    }
}

/// `C[i][j] *= 2` has no dependences: ISL keeps i and j in one permutable band, which is tiled by
/// 32 x 32, so the tile of S0[i, j] is (floor(i/32), floor(j/32)), i.e. 32a <= i <= 32a + 31.
#[test]
fn two_d_loop_is_tiled_by_floor_of_32() {
    let scop = common::scale_2d();
    let deps = dependences(&scop).unwrap();
    let (sched, warnings) = schedule(&scop, &deps, &cfg(Some(vec![32]))).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(sched.nests.len(), 1);
    let nest = &sched.nests[0];
    assert_eq!(nest.statements, vec![StmtId(0)]);
    assert_eq!(nest.tile_sizes, vec![32, 32]);
    let want = "[N, M] -> { S0[i, j] -> N0[a, b] : 0 <= i < N and 0 <= j < M and 32a <= i <= 32a + 31 and 32b <= j <= 32b + 31 }";
    assert!(
        maps_equal(&nest.tile_map, want).unwrap(),
        "tile map {}",
        nest.tile_map
    );
    let want = "[N, M] -> { N0[a, b] : 0 <= 32a < N and 0 <= 32b < M }";
    assert!(
        sets_equal(&nest.tile_domain, want).unwrap(),
        "tile domain {}",
        nest.tile_domain
    );
    verify(&scop, &deps, &sched).unwrap();
}

/// Sizes apply outermost first and the last one repeats: [16] tiles both dimensions by 16;
/// [16, 8] tiles i by 16 and j by 8.
#[test]
fn tile_sizes_repeat_the_last_one() {
    let scop = common::scale_2d();
    let deps = dependences(&scop).unwrap();
    for (sizes, (si, sj)) in [(vec![16], (16, 16)), (vec![16, 8], (16, 8))] {
        let (sched, _) = schedule(&scop, &deps, &cfg(Some(sizes))).unwrap();
        let nest = &sched.nests[0];
        assert_eq!(nest.tile_sizes, vec![si, sj]);
        let want = format!(
            "[N, M] -> {{ S0[i, j] -> N0[a, b] : 0 <= i < N and 0 <= j < M and {si}a <= i < {si}a + {si} and {sj}b <= j < {sj}b + {sj} }}"
        );
        assert!(
            maps_equal(&nest.tile_map, &want).unwrap(),
            "tile map {}",
            nest.tile_map
        );
    }
}

/// Without tile sizes, a nest is one tile: `N0[]`, present when the nest has instances.
#[test]
fn untiled_nest_has_zero_tile_dimensions() {
    let scop = common::scale_2d();
    let deps = dependences(&scop).unwrap();
    let (sched, _) = schedule(&scop, &deps, &cfg(None)).unwrap();
    let nest = &sched.nests[0];
    assert!(nest.tile_sizes.is_empty());
    assert!(
        maps_equal(
            &nest.tile_map,
            "[N, M] -> { S0[i, j] -> N0[] : 0 <= i < N and 0 <= j < M }"
        )
        .unwrap(),
        "{}",
        nest.tile_map
    );
    assert!(
        sets_equal(&nest.tile_domain, "[N, M] -> { N0[] : N > 0 and M > 0 }").unwrap(),
        "{}",
        nest.tile_domain
    );
}

/// jacobi-1d has no parallel outer loop, but t and a skewed i form a permutable band: it must be
/// tiled in two dimensions (the wavefront parallelism the dataflow runtime exploits), not as a
/// chain of one-dimensional time tiles. The default size: rank-1 `double` arrays in a 2-deep
/// band take `8 · 64` bytes each per tile at the cap of 64, well within the budget, and tiles of
/// `64 × 64` hold too little work, so the innermost member is lengthened to 256.
#[test]
fn stencil_gets_two_dimensional_tiles() {
    for scop in [common::jacobi_1d(), common::seidel_1d()] {
        let deps = dependences(&scop).unwrap();
        let (sched, _) = schedule(&scop, &deps, &ScheduleConfig::default()).unwrap();
        assert_eq!(sched.nests.len(), 1, "{sched}");
        assert_eq!(sched.nests[0].tile_sizes, vec![64, 256], "{sched}");
        verify(&scop, &deps, &sched).unwrap();
    }
}

/// The original order makes one nest per outermost loop. For the producer and consumer these are
/// two nests; their 1-D loops have no dependence inside a nest, so each is tiled.
#[test]
fn original_order_has_one_nest_per_outer_loop() {
    let scop = common::producer_consumer();
    let deps = dependences(&scop).unwrap();
    let config = ScheduleConfig {
        original: true,
        tile_sizes: Some(vec![4]),
        ..ScheduleConfig::default()
    };
    let (sched, warnings) = schedule(&scop, &deps, &config).unwrap();
    assert!(warnings.is_empty());
    let stmts: Vec<Vec<StmtId>> = sched.nests.iter().map(|n| n.statements.clone()).collect();
    assert_eq!(stmts, vec![vec![StmtId(0)], vec![StmtId(1)]]);
    assert!(maps_equal(
        &sched.nests[0].tile_map,
        "[N] -> { S0[i] -> N0[a] : 0 <= i < N and 4a <= i <= 4a + 3 }"
    )
    .unwrap());
    assert!(maps_equal(
        &sched.nests[1].tile_map,
        "[N] -> { S1[i] -> N1[a] : 0 <= i < N and 4a <= i <= 4a + 3 }"
    )
    .unwrap());
    verify(&scop, &deps, &sched).unwrap();
}

/// In the original order, a loop is tiled only while the dependences inside the nest have
/// non-negative distances on it: jacobi-1d's S1[t, i] -> S0[t + 1, i - 1] has distance -1 on i,
/// so only t is tiled (floor(t/8)).
#[test]
fn original_order_tiles_only_permutable_loops() {
    let scop = common::jacobi_1d();
    let deps = dependences(&scop).unwrap();
    let config = ScheduleConfig {
        original: true,
        tile_sizes: Some(vec![8]),
        ..ScheduleConfig::default()
    };
    let (sched, _) = schedule(&scop, &deps, &config).unwrap();
    assert_eq!(sched.nests.len(), 1);
    assert_eq!(sched.nests[0].tile_sizes, vec![8]);
    let want = "[T, N] -> { S0[t, i] -> N0[a] : 0 <= t < T and 1 <= i <= N - 2 and 8a <= t <= 8a + 7; \
                            S1[t, i] -> N0[a] : 0 <= t < T and 1 <= i <= N - 2 and 8a <= t <= 8a + 7 }";
    assert!(
        maps_equal(&sched.nests[0].tile_map, want).unwrap(),
        "{}",
        sched.nests[0].tile_map
    );
    verify(&scop, &deps, &sched).unwrap();
}

/// Minimal fusion keeps the producer and the consumer apart; every heuristic gives a legal
/// schedule in which each statement is in exactly one nest.
#[test]
fn fusion_heuristics_are_legal() {
    let scop = common::producer_consumer();
    let deps = dependences(&scop).unwrap();
    for fuse in [Fuse::Min, Fuse::Smart, Fuse::Max] {
        let config = ScheduleConfig {
            fuse,
            ..ScheduleConfig::default()
        };
        let (sched, warnings) = schedule(&scop, &deps, &config).unwrap();
        assert!(warnings.is_empty(), "{fuse:?}: {warnings:?}");
        let mut stmts: Vec<StmtId> = sched
            .nests
            .iter()
            .flat_map(|n| n.statements.clone())
            .collect();
        stmts.sort();
        assert_eq!(stmts, vec![StmtId(0), StmtId(1)], "{fuse:?}: {sched}");
        if fuse == Fuse::Min {
            assert_eq!(sched.nests.len(), 2, "{sched}");
        }
        verify(&scop, &deps, &sched).unwrap();
    }
}

/// A budget of one operation stops the scheduler: the original order is used, with a warning.
#[test]
fn exhausted_budget_falls_back_to_the_original_order() {
    let scop = common::jacobi_1d();
    let deps = dependences(&scop).unwrap();
    let config = ScheduleConfig {
        max_operations: 1,
        ..ScheduleConfig::default()
    };
    let (sched, warnings) = schedule(&scop, &deps, &config).unwrap();
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].0.contains("budget"), "{warnings:?}");
    let (original, _) = schedule(
        &scop,
        &deps,
        &ScheduleConfig {
            original: true,
            ..ScheduleConfig::default()
        },
    )
    .unwrap();
    assert_eq!(sched, original);
    verify(&scop, &deps, &sched).unwrap();
}

/// A time limit too short for any scheduling (1 µs: starting the scheduler's thread and its ISL
/// context alone takes longer) also falls back to the original order, with a warning.
#[test]
fn exhausted_time_limit_falls_back_to_the_original_order() {
    let scop = common::jacobi_1d();
    let deps = dependences(&scop).unwrap();
    let config = ScheduleConfig {
        time_limit: Some(std::time::Duration::from_micros(1)),
        ..ScheduleConfig::default()
    };
    let (sched, warnings) = schedule(&scop, &deps, &config).unwrap();
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].0.contains("did not finish within"),
        "{warnings:?}"
    );
    let (original, _) = schedule(
        &scop,
        &deps,
        &ScheduleConfig {
            original: true,
            ..ScheduleConfig::default()
        },
    )
    .unwrap();
    assert_eq!(sched, original);
}

#[test]
fn non_positive_tile_size_is_rejected() {
    let scop = common::scale_2d();
    let deps = dependences(&scop).unwrap();
    for sizes in [vec![32, 0], vec![-4]] {
        let err = schedule(&scop, &deps, &cfg(Some(sizes.clone()))).unwrap_err();
        assert!(err.to_string().contains("tile sizes"), "{sizes:?}: {err}");
    }
}

/// Statements outside loops and a statement whose domain is empty (`common::init_then_sum`): the
/// first two are their own (untiled) nests in the original order; the empty one is in no nest.
#[test]
fn statements_outside_loops_and_empty_domains() {
    let scop = common::init_then_sum();
    let deps = dependences(&scop).unwrap();
    for original in [true, false] {
        let config = ScheduleConfig {
            original,
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&scop, &deps, &config).unwrap();
        let stmts: Vec<StmtId> = sched
            .nests
            .iter()
            .flat_map(|n| n.statements.clone())
            .collect();
        assert!(!stmts.contains(&StmtId(2)), "{sched}");
        if original {
            assert_eq!(sched.nests.len(), 2, "{sched}");
            assert!(sched.nests[0].tile_sizes.is_empty());
            // One tile whenever the context holds (domains include the context N >= 0).
            assert!(
                sets_equal(&sched.nests[0].tile_domain, "[N] -> { N0[] : N >= 0 }").unwrap(),
                "{}",
                sched.nests[0].tile_domain
            );
        }
        verify(&scop, &deps, &sched).unwrap();
    }
}

/// The default tile size fits the tile's estimated footprint, `Σ elem · T^min(rank, depth)`, in
/// 64 KiB, with T a power of two from 8 to 64 (derived by hand for each case):
/// - one rank-2 `double` array, depth 2: `8 · 64² = 32 KiB` fits at the cap, 64;
/// - three rank-2 `double` arrays, depth 3 (gemm): `3 · 8 · 64² = 96 KiB` does not fit,
///   `3 · 8 · 32² = 24 KiB` does: 32;
/// - the same with `float`: `3 · 4 · 64² = 48 KiB`: 64;
/// - two rank-3 `double` arrays, depth 4 (heat-3d): `2 · 8 · 32³ = 512 KiB`, `2 · 8 · 16³ =
///   64 KiB`: 16;
/// - one rank-3 `double` array, depth 1: only `T` elements per tile are counted: 64.
#[test]
fn default_tile_size_fits_the_footprint_budget() {
    use polyhedral::default_tile_size;
    let with_arrays = |arrays: &[(&str, usize)], elem: &str| {
        let accesses = (0..arrays.len())
            .map(|a| {
                common::access(
                    false,
                    a as u32,
                    &format!(
                        "{{ S0[i] -> {}[{}] }}",
                        arrays[a].0,
                        vec!["i"; arrays[a].1].join(", ")
                    ),
                )
            })
            .collect();
        let mut scop = common::scop(
            &[],
            "{ : }",
            arrays,
            vec![common::stmt(
                0,
                &["i"],
                "{ S0[i] : 0 <= i < 10 }",
                "{ S0[i] -> [0, i, 0] }",
                accesses,
            )],
        );
        for a in &mut scop.arrays {
            a.elem_type = elem.to_string();
        }
        scop
    };
    let s0 = [StmtId(0)];
    assert_eq!(
        default_tile_size(&with_arrays(&[("C", 2)], "double"), &s0, 2),
        64
    );
    let gemm = [("C", 2), ("A", 2), ("B", 2)];
    assert_eq!(default_tile_size(&with_arrays(&gemm, "double"), &s0, 3), 32);
    assert_eq!(default_tile_size(&with_arrays(&gemm, "float"), &s0, 3), 64);
    assert_eq!(
        default_tile_size(&with_arrays(&[("A", 3), ("B", 3)], "double"), &s0, 4),
        16
    );
    assert_eq!(
        default_tile_size(&with_arrays(&[("A", 3)], "double"), &s0, 1),
        64
    );
    // With a budget of 128 KiB (the driver's on a core with 2 MiB of L2), gemm's band gets
    // 64: `3 · 8 · 64² = 96 KiB`; heat-3d's still 16 (`2 · 8 · 32³ = 512 KiB` does not fit).
    use polyhedral::default_tile_size_within;
    assert_eq!(
        default_tile_size_within(&with_arrays(&gemm, "double"), &s0, 3, 128 << 10),
        64
    );
    assert_eq!(
        default_tile_size_within(
            &with_arrays(&[("A", 3), ("B", 3)], "double"),
            &s0,
            4,
            128 << 10
        ),
        16
    );
    // 32 KiB (a 512 KiB L2): gemm's band keeps 32 (24 KiB).
    assert_eq!(
        default_tile_size_within(&with_arrays(&gemm, "double"), &s0, 3, 32 << 10),
        32
    );
}

/// A short innermost point loop is lengthened to 64, the other members shrinking to fit the
/// budget with each array's last subscript spanning 64 values: two rank-3 `double` arrays in a
/// 4-deep band (heat-3d) got 16; `2 · 8 · 16² · 64 = 256 KiB` does not fit, `2 · 8 · 8² · 64 =
/// 64 KiB` does: 8 for the others, wherever the innermost member is. gemm's 32 is not short.
#[test]
fn short_innermost_point_loops_are_lengthened() {
    use polyhedral::lengthen_inner;
    let with_arrays = |arrays: &[(&str, usize)]| {
        let accesses = (0..arrays.len())
            .map(|a| {
                common::access(
                    false,
                    a as u32,
                    &format!(
                        "{{ S0[i] -> {}[{}] }}",
                        arrays[a].0,
                        vec!["i"; arrays[a].1].join(", ")
                    ),
                )
            })
            .collect();
        common::scop(
            &[],
            "{ : }",
            arrays,
            vec![common::stmt(
                0,
                &["i"],
                "{ S0[i] : 0 <= i < 10 }",
                "{ S0[i] -> [0, i, 0] }",
                accesses,
            )],
        )
    };
    let s0 = [StmtId(0)];
    let heat = with_arrays(&[("A", 3), ("B", 3)]);
    assert_eq!(lengthen_inner(&heat, &s0, 16, 4, 3), vec![8, 8, 8, 64]);
    assert_eq!(lengthen_inner(&heat, &s0, 16, 4, 1), vec![8, 64, 8, 8]);
    let gemm = with_arrays(&[("C", 2), ("A", 2), ("B", 2)]);
    assert_eq!(lengthen_inner(&gemm, &s0, 32, 3, 2), vec![32, 32, 32]);
}

/// heat-3d's time-skewed band (t, 2t + i, 2t + j, 2t + k) keeps k, contiguous, innermost in its
/// tiles, and gives that member one tile over its whole range (rows of k are not cut: see
/// `polyhedral::schedule`'s default sizes); the others keep the cube size (16) while one tile's
/// rows take at most four budgets, else halve. At MINI (`N` 10, 20 steps) `2t + k` (`1 + 2t + k`
/// for the second statement) runs over 3..=49: one tile of 64; rows of 10 doubles in two arrays,
/// `2 · 8 · 16² · 10` bytes, fit. At LARGE (`N` 120, 500 steps) it runs over 3..=1119: 2048;
/// `2 · 8 · 16² · 120 = 480 KiB` fits four budgets of 128 KiB, not four of 64 KiB (the default
/// budget), where `2 · 8 · 8² · 120` does.
#[test]
fn heat_3d_tiles_have_whole_innermost_rows() {
    let scop = common::kernel_scop("heat-3d", &["MINI_DATASET"]);
    let deps = dependences(&scop).unwrap();
    let (sched, _) = schedule(&scop, &deps, &ScheduleConfig::default()).unwrap();
    assert_eq!(sched.nests.len(), 1, "{sched}");
    assert_eq!(sched.nests[0].tile_sizes, vec![16, 16, 16, 64], "{sched}");
    verify(&scop, &deps, &sched).unwrap();
    let scop = common::kernel_scop("heat-3d", &["LARGE_DATASET"]);
    let deps = dependences(&scop).unwrap();
    let (sched, _) = schedule(&scop, &deps, &ScheduleConfig::default()).unwrap();
    assert_eq!(sched.nests[0].tile_sizes, vec![8, 8, 8, 2048], "{sched}");
    let wide = ScheduleConfig {
        tile_footprint: 128 << 10,
        ..ScheduleConfig::default()
    };
    let (sched, _) = schedule(&scop, &deps, &wide).unwrap();
    assert_eq!(sched.nests[0].tile_sizes, vec![16, 16, 16, 2048], "{sched}");
}

/// jacobi-1d's band (t, i) subscripts its rank-1 arrays with one member only: its 64 × 64 tiles
/// would hold 4 096 instances, so the innermost member is lengthened until a tile holds
/// `MIN_TILE_WORK` (16 384): 64 × 256, whose footprint (two rows of 256 doubles) is far below the
/// budget. The schedule stays legal.
#[test]
fn time_tiled_bands_with_small_tiles_get_a_longer_innermost_member() {
    let scop = common::kernel_scop("jacobi-1d", &["MEDIUM_DATASET"]);
    let deps = dependences(&scop).unwrap();
    let (sched, _) = schedule(&scop, &deps, &ScheduleConfig::default()).unwrap();
    assert_eq!(sched.nests.len(), 1, "{sched}");
    assert_eq!(sched.nests[0].tile_sizes, vec![64, 256], "{sched}");
    verify(&scop, &deps, &sched).unwrap();
}

/// The rule's limits, on one statement `S0[t, i]` (two loops in a 2-member band): arrays of rank
/// 2 (no member is a time loop), a band that leaves a loop below it, or a footprint past the
/// budget stop or bound the lengthening; what it lengthens is the innermost member only.
#[test]
fn only_time_tiled_whole_bands_are_lengthened_within_the_budget() {
    use polyhedral::{lengthen_time_tiled, time_tiled};
    let one = |rank: usize, loops: &[&str]| {
        let dims = loops.join(", ");
        let subscripts = vec!["i"; rank].join(", ");
        common::scop(
            &[],
            "{ : }",
            &[("A", rank), ("B", rank)],
            vec![common::stmt(
                0,
                loops,
                &format!("{{ S0[{dims}] : 0 <= {dims} < 10 }}"),
                &format!("{{ S0[{dims}] -> [{dims}] }}"),
                vec![
                    common::access(false, 0, &format!("{{ S0[{dims}] -> A[{subscripts}] }}")),
                    common::access(true, 1, &format!("{{ S0[{dims}] -> B[{subscripts}] }}")),
                ],
            )],
        )
    };
    let s0 = [StmtId(0)];
    let stencil = one(1, &["t", "i"]);
    assert!(time_tiled(&stencil, &s0, 2));
    assert_eq!(
        lengthen_time_tiled(&stencil, &s0, vec![64, 64], 1, 64 << 10),
        vec![64, 256]
    );
    assert_eq!(
        lengthen_time_tiled(&stencil, &s0, vec![64, 64], 0, 64 << 10),
        vec![256, 64]
    );
    // Two rows of 2 × 8 bytes per element: 1 KiB allows 64, not 128.
    assert_eq!(
        lengthen_time_tiled(&stencil, &s0, vec![16, 16], 1, 1 << 10),
        vec![16, 64]
    );
    let matrix = one(2, &["t", "i"]);
    assert!(!time_tiled(&matrix, &s0, 2));
    assert_eq!(
        lengthen_time_tiled(&matrix, &s0, vec![64, 64], 1, 64 << 10),
        vec![64, 64]
    );
    let deeper = one(1, &["t", "i", "k"]);
    assert!(!time_tiled(&deeper, &s0, 2), "a loop below the band");
    assert_eq!(
        lengthen_time_tiled(&deeper, &s0, vec![64, 64], 1, 64 << 10),
        vec![64, 64]
    );
}

/// gemm's band comes from ISL as (i, j, k); inside a tile the point loops run (i, k, j), so that
/// the innermost loop walks C[i][j] and B[k][j] contiguously and carries no dependence (the
/// order of the original), while the tile loops keep ISL's order.
#[test]
fn gemm_tiles_run_the_contiguous_parallel_loop_innermost() {
    let scop = common::kernel_scop("gemm", &["MINI_DATASET"]);
    let deps = dependences(&scop).unwrap();
    let (sched, _) = schedule(&scop, &deps, &cfg(Some(vec![4]))).unwrap();
    assert_eq!(sched.nests.len(), 1);
    let nest = &sched.nests[0];
    let tiles_i_j = "0 <= i <= 19 and 0 <= j <= 24 and 4a <= i <= 4a + 3 and 4b <= j <= 4b + 3";
    let want = format!(
        "{{ S0[i, j] -> [a, b, 0, i, 0, j, 0] : {tiles_i_j}; \
           S1[i, k, j] -> [a, b, c, i, k, j, 1] : {tiles_i_j} and 0 <= k <= 29 and 4c <= k <= 4c + 3 }}"
    );
    assert!(
        maps_equal(&nest.schedule, &want).unwrap(),
        "schedule {}",
        nest.schedule
    );
    verify(&scop, &deps, &sched).unwrap();
}

/// The order the control program spawns tiles in (`Nest::spawn_order`), derived by hand from the
/// accesses along one step of each tile dimension: gemm's `(i, j, k)` tiles are spawned `(i, k,
/// j)` (along `k` the tile of `B[k][j]` is new rows, along `j` none of the three moves to
/// other rows); syrk's stay `(i, j, k)` (along `j`, `A[j][k]` is new rows; along `k`, no access
/// is); covariance's product `cov[i][j] += data[k][i] * data[k][j]`, distributed (`min`), goes `(i, k, j)` (both reads
/// are new rows along `k`); two tile dimensions keep their order. An order whose sweep of tiles
/// does not fit 3/4 of the L2 is not taken.
#[test]
fn tiles_are_spawned_along_the_member_that_keeps_their_rows() {
    let order_of = |kernel: &str, stmts: &[u32]| -> Vec<usize> {
        let scop = common::kernel_scop(kernel, &["MEDIUM_DATASET"]);
        let deps = dependences(&scop).unwrap();
        let (sched, _) = schedule(&scop, &deps, &cfg(Some(Vec::new()))).unwrap();
        let want: Vec<StmtId> = stmts.iter().map(|&s| StmtId(s)).collect();
        let nest = sched
            .nests
            .iter()
            .find(|n| n.statements == want)
            .unwrap_or_else(|| panic!("{kernel}: no nest of {want:?}"));
        nest.spawn_order.clone()
    };
    assert_eq!(order_of("gemm", &[0, 1]), vec![0, 2, 1]);
    // A sweep along `j` (NJ = 220 at MEDIUM) touches a row of `C`'s tiles, one of `B`'s and
    // one tile of `A`, in whole cache lines (a row of 220 doubles takes 28 lines), and `alpha`
    // and `beta`. With an L2 of which 3/4 is less than that, the tiles keep their order; with
    // one of which 3/4 holds it, they do not.
    let scop = common::kernel_scop("gemm", &["MEDIUM_DATASET"]);
    let deps = dependences(&scop).unwrap();
    let (sched, _) = schedule(&scop, &deps, &cfg(Some(Vec::new()))).unwrap();
    let t = &sched.nests[0].tile_sizes;
    let line = |doubles: i64| ((8 * doubles + 63) / 64 * 64) as u64;
    let sweep = t[0] as u64 * line(220) + t[2] as u64 * line(220) + t[0] as u64 * line(t[2]) + 16;
    for (l2, want) in [(sweep, Vec::new()), (sweep * 4 / 3 + 1024, vec![0, 2, 1])] {
        let with_l2 = ScheduleConfig {
            l2_bytes: l2,
            ..cfg(Some(Vec::new()))
        };
        let (sched, _) = schedule(&scop, &deps, &with_l2).unwrap();
        assert_eq!(sched.nests[0].tile_sizes, *t);
        assert_eq!(
            sched.nests[0].spawn_order, want,
            "L2 {l2}, sweep {sweep}, tiles {t:?}"
        );
    }
    assert_eq!(order_of("syrk", &[0, 1]), Vec::<usize>::new());
    assert_eq!(order_of("jacobi-2d", &[0, 1]), Vec::<usize>::new());
    let scop = common::kernel_scop("covariance", &["MEDIUM_DATASET"]);
    let deps = dependences(&scop).unwrap();
    let min = ScheduleConfig {
        fuse: Fuse::Min,
        ..cfg(Some(Vec::new()))
    };
    let (sched, _) = schedule(&scop, &deps, &min).unwrap();
    let product = sched
        .nests
        .iter()
        .find(|n| n.tile_sizes.len() == 3)
        .expect("covariance: a nest tiled in three dimensions");
    assert_eq!(
        product.spawn_order,
        vec![0, 2, 1],
        "{:?}",
        product.statements
    );
    verify(&scop, &deps, &sched).unwrap();
}

/// floyd-warshall: ISL gives a one-member band `k` (it carries every dependence) over the band
/// `(i, j)`. Tiled whole it would be a chain of `k` tiles; instead each `k` is a phase whose rows
/// are cut in blocks of 64 (`inner_tiles`): rows depend on each other within a phase only
/// through row `k` (the rows above it read row `k` before its block stores it, the rows below
/// read it after), so the blocks run as three waves.
#[test]
fn floyd_warshall_rows_are_cut_in_blocks_under_k() {
    let scop = common::kernel_scop("floyd-warshall", &["N=300"]);
    let deps = dependences(&scop).unwrap();
    let (sched, _) = schedule(&scop, &deps, &ScheduleConfig::default()).unwrap();
    assert_eq!(sched.nests.len(), 1, "{sched}");
    let nest = &sched.nests[0];
    assert_eq!(nest.tile_sizes, vec![1, 1, 64], "{sched}");
    let want = "{ S0[k, i, j] -> N0[k, 0, b] : 0 <= k < 300 and 0 <= i < 300 and 0 <= j < 300 and 64b <= i <= 64b + 63 }";
    assert!(
        maps_equal(&nest.tile_map, want).unwrap(),
        "tile map {}",
        nest.tile_map
    );
    verify(&scop, &deps, &sched).unwrap();
}

/// nussinov scheduled inside its outermost loop (as `--fuse auto` does when the whole SCoP is
/// past its operation budget) is also a one-member band (`-i`, carrying) over a band, but its
/// rows are a recurrence along `j` (`table[i][j]` reads `table[i][j - 1]`): blocks of `j` would
/// be a chain, so the phases are not cut; and `1 + i`, which ISL's inner band repeats and which
/// is one value per phase, is not taken for a member to cut.
#[test]
fn nussinov_rows_are_not_cut_into_a_chain_of_blocks() {
    let scop = common::kernel_scop("nussinov", &["N=300"]);
    let deps = dependences(&scop).unwrap();
    let config = ScheduleConfig {
        fuse: Fuse::Min,
        max_whole_statements: 1,
        ..ScheduleConfig::default()
    };
    let (sched, _) = schedule(&scop, &deps, &config).unwrap();
    assert!(sched.tree.contains("-i"), "{sched}");
    for nest in &sched.nests {
        assert!(
            nest.tile_sizes.len() != 3 || nest.tile_sizes[..2] != [1, 1],
            "{sched}"
        );
    }
    verify(&scop, &deps, &sched).unwrap();
}

/// deriche's six passes (34 statements, scheduled inside their outermost loops) each tile in two
/// dimensions: the anti-causal passes, whose inner loops count down after statements that reset
/// the filter state, through the mirror the scheduler sees them in (`reversal`), and the column
/// passes without the second copy of their outer loop that ISL's band repeated once joined
/// (`[j, j, i]`, tiled on its diagonal). Before, the anti-causal passes were tiled along their
/// outer loop only (whole columns per tile, `N[i0, i0]`) and the causal passes in three
/// dimensions.
#[test]
fn deriche_passes_tile_in_two_dimensions() {
    // As the driver schedules it: the filter states expanded first.
    let scop = common::kernel_scop("deriche", &["SMALL_DATASET"]);
    let expansions = polyhedral::scalar_expansions(&scop).unwrap();
    let scop = polyhedral::expand_scalars(&scop, &expansions).unwrap();
    let deps = dependences(&scop).unwrap();
    let (sched, _) = schedule(&scop, &deps, &ScheduleConfig::default()).unwrap();
    assert_eq!(sched.nests.len(), 6, "{sched}");
    for nest in &sched.nests {
        assert_eq!(nest.tile_sizes.len(), 2, "{sched}");
        // Two tile coordinates that vary apart (not `N[i0, i0]`, one repeated).
        assert!(!nest.tile_domain.contains("i0, i0]"), "{sched}");
    }
    verify(&scop, &deps, &sched).unwrap();
}

/// gemver's statements: `A` updated (S0, depth 2), `x` by the product with `A` transposed (S1,
/// depth 2), `x += z` (S2, depth 1), `w` by the product with `A` (S3, depth 2). Each is a
/// component of its own, in that order (S0 -> S1 -> S2 -> S3 through `A` and `x`). A block of
/// consecutive components must share an array and have one depth: S0+S1 (through `A`) is the
/// only one (S1+S2 and S2+S3 mix depths), so one plan fuses S0 with S1. Scheduled, it gives three
/// nests in that order, legal.
#[test]
fn gemver_blocks_fuse_the_update_with_the_transposed_product() {
    let scop = common::kernel_scop("gemver", &["MINI_DATASET"]);
    let deps = dependences(&scop).unwrap();
    let s = |k: u32| StmtId(k);
    let plans = polyhedral::block_plans(&scop, &deps).unwrap();
    assert_eq!(plans, vec![vec![vec![s(0), s(1)], vec![s(2)], vec![s(3)]]]);
    let config = ScheduleConfig {
        blocks: Some(plans[0].clone()),
        ..ScheduleConfig::default()
    };
    let (sched, warnings) = schedule(&scop, &deps, &config).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let nests: Vec<Vec<StmtId>> = sched.nests.iter().map(|n| n.statements.clone()).collect();
    assert_eq!(nests, plans[0], "{sched}");
    verify(&scop, &deps, &sched).unwrap();
}

/// Blocks that put a dependence backwards, leave a statement out, name one twice or name one the
/// SCoP does not have are refused with a message that says which.
#[test]
fn blocks_out_of_dependence_order_are_refused() {
    let scop = common::kernel_scop("gemver", &["MINI_DATASET"]);
    let deps = dependences(&scop).unwrap();
    let s = |k: u32| StmtId(k);
    let cases = [
        (vec![vec![s(3)], vec![s(0), s(1)], vec![s(2)]], "goes from"),
        (
            vec![vec![s(0), s(1)], vec![s(2)]],
            "S3 is not in exactly one block",
        ),
        (
            vec![vec![s(0)], vec![s(0), s(1)], vec![s(2)], vec![s(3)]],
            "S0 is not in exactly one block",
        ),
        (
            vec![vec![s(0), s(1)], vec![s(2)], vec![s(3), s(7)]],
            "no statement S7",
        ),
    ];
    for (blocks, why) in cases {
        let config = ScheduleConfig {
            blocks: Some(blocks.clone()),
            ..ScheduleConfig::default()
        };
        match schedule(&scop, &deps, &config) {
            Err(polyhedral::Error::Setting(m)) => assert!(m.contains(why), "{blocks:?}: {m}"),
            other => panic!("{blocks:?}: {other:?}"),
        }
    }
}
