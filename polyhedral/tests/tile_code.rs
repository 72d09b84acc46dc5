//! The CPU tile code of PolyBench kernels at sizes where the register kernels apply (the unit
//! tests in `src/tile_code.rs` use the MINI sizes, too small for some of them).

mod common;

use polyhedral::{dependences, schedule, tile_body_ast, Ast, ScheduleConfig};

#[test]
fn read_only_operands_along_the_lanes_are_packed() {
    // `C[i][j] += alpha * A[i][k] * A[j][k]`: along the lanes `j`, `A[j][k]` walks down a
    // column. The kernel copies the tile's block of `A` with `j` contiguous first; syr2k's
    // reduction `k`, innermost in the tile's own order, moves out of the lanes' way. At SMALL
    // (N = 80, M = 60) with 16-wide tiles, the tiles below the diagonal are full. gemm's
    // `B[k][j]`, contiguous along the lanes already, is copied for aligned rows (`C` and `A`,
    // written or invariant along the lanes, are not).
    for (kernel, want) in [("syrk", 1), ("syr2k", 2), ("gemm", 1)] {
        let scop = common::kernel_scop(kernel, &["SMALL_DATASET"]);
        let deps = dependences(&scop).unwrap();
        let cfg = ScheduleConfig {
            tile_sizes: Some(vec![16]),
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&scop, &deps, &cfg).unwrap();
        let coords: Vec<String> = (0..sched.nests[0].tile_sizes.len())
            .map(|d| format!("t{d}"))
            .collect();
        let (ast, code) =
            tile_body_ast(&scop, &sched, polyhedral::NestId(0), &coords, "c", &[]).unwrap();
        let mut packs = Vec::new();
        ast.walk(&mut |node| {
            if let Ast::Kernel(k) = node {
                if let Some(v) = &k.vector {
                    packs.extend(v.packs.clone());
                }
            }
        });
        assert!(
            packs
                .iter()
                .any(|p| p.count == want && p.lanes == 16 && p.depth == 16),
            "{kernel}: {code}: {packs:?}"
        );
    }
}

/// adi's rows are jammed in fours around their recurrences (`polyhedral::chains`), the strip's
/// loop unrolled on the plain AST with the guards that the enclosing loops do not already
/// imply: in every tile, the code runs each instance of the plain tile code exactly once
/// (a guard dropped wrongly runs a row outside the arrays' rows twice or never).
#[test]
fn adis_unrolled_rows_run_each_instance_of_their_tile_once() {
    let scop = common::kernel_scop("adi", &["SMALL_DATASET"]);
    let deps = dependences(&scop).unwrap();
    let cfg = ScheduleConfig {
        tile_sizes: Some(vec![16]),
        ..ScheduleConfig::default()
    };
    let (sched, _) = schedule(&scop, &deps, &cfg).unwrap();
    let jammed = tile_code_of_every_nest(&scop, &sched)
        .iter()
        .filter(|(_, code)| code.jammed.is_some())
        .count();
    assert!(
        jammed > 0,
        "adi's rows are jammed at SMALL with 16-wide tiles"
    );
}

/// The tiles that are not full (seidel-2d's skewed tiles at the borders of its time and space
/// ranges; deriche's first tile of each row, where the filter state is reset, and its last,
/// shorter one) get their rows jammed too, each strip's copies guarded where the tile cuts it:
/// the general code steps its row loop by the chains' count. In every tile, the code runs each instance of the
/// plain tile code exactly once.
#[test]
fn partial_tiles_jam_their_rows_and_run_each_instance_once() {
    // deriche's first nest jams eight rows (reductions only), seidel-2d's eight lagged rows:
    // tiles of 16 rows leave a loop over two strips.
    for (kernel, tiles) in [("seidel-2d", vec![8, 16, 8]), ("deriche", vec![16, 16])] {
        let scop = common::kernel_scop(kernel, &["MINI_DATASET"]);
        let scop = match kernel {
            // As the driver schedules it: the filter states expanded first.
            "deriche" => {
                let expansions = polyhedral::scalar_expansions(&scop).unwrap();
                polyhedral::expand_scalars(&scop, &expansions).unwrap()
            }
            _ => scop,
        };
        let deps = dependences(&scop).unwrap();
        let cfg = ScheduleConfig {
            tile_sizes: Some(tiles),
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&scop, &deps, &cfg).unwrap();
        let jammed_general = tile_code_of_every_nest(&scop, &sched)
            .iter()
            .filter(|(ast, code)| match &code.jammed {
                Some((_, chains)) => matches!(ast, Ast::If { els: Some(general), .. }
                    if common::show(general).contains(&format!("+= {chains})"))),
                None => false,
            })
            .count();
        assert!(
            jammed_general > 0,
            "{kernel}: the general code of some nest has its rows jammed"
        );
    }
}

/// Every nest's tile code (`tile_body_ast`), checked to run, in each tile of the nest, each
/// instance of the plain tile code exactly once.
fn tile_code_of_every_nest(
    scop: &frontend::ir::Scop,
    sched: &polyhedral::TiledSchedule,
) -> Vec<(Ast, polyhedral::TileCode)> {
    let mut out = Vec::new();
    for (k, nest) in sched.nests.iter().enumerate() {
        let k = polyhedral::NestId::new(k);
        let coords: Vec<String> = (0..nest.tile_sizes.len())
            .map(|d| format!("t{d}"))
            .collect();
        let (ast, code) = tile_body_ast(scop, sched, k, &coords, "c", &[]).unwrap();
        let plain = polyhedral::nest_body_ast(scop, sched, k, &coords, "c").unwrap();
        for tile in common::points(scop, &nest.tile_domain, &[]) {
            let at: Vec<(&str, i64)> = coords
                .iter()
                .map(|c| c.as_str())
                .zip(tile.clone())
                .collect();
            let mut got = common::run(&ast, &at);
            let mut want = common::run(&plain, &at);
            got.sort();
            want.sort();
            assert_eq!(got, want, "tile {tile:?} of {k}");
        }
        out.push((ast, code));
    }
    out
}
