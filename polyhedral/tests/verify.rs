//! `verify` accepts the schedules this crate computes and rejects hand-made illegal ones, naming
//! what is wrong.

mod common;

use frontend::ir::StmtId;
use polyhedral::{
    coarsen, dependences, schedule, tile_dependences, verify, Error, Fuse, Nest, ScheduleConfig,
    TiledSchedule,
};

fn one_nest(
    stmts: &[u32],
    tile_sizes: Vec<i64>,
    schedule: &str,
    tile_map: &str,
    tile_domain: &str,
) -> Nest {
    Nest {
        statements: stmts.iter().map(|&s| StmtId(s)).collect(),
        tile_sizes,
        schedule: schedule.into(),
        tile_map: tile_map.into(),
        tile_domain: tile_domain.into(),
        row_line: None,
        spawn_order: Vec::new(),
        row_moves: Vec::new(),
    }
}

fn illegal_report(result: polyhedral::Result<()>) -> String {
    match result {
        Err(Error::IllegalSchedule(report)) => report,
        other => panic!("expected an illegal schedule, got {other:?}"),
    }
}

#[test]
fn computed_schedules_are_accepted() {
    for scop in [
        common::jacobi_1d(),
        common::seidel_1d(),
        common::producer_consumer(),
        common::scale_2d(),
        common::recurrence_1d(),
    ] {
        let deps = dependences(&scop).unwrap();
        for fuse in [Fuse::Min, Fuse::Smart, Fuse::Max] {
            for original in [false, true] {
                for tile_sizes in [None, Some(vec![4]), Some(vec![3, 5])] {
                    let config = ScheduleConfig {
                        fuse,
                        original,
                        tile_sizes,
                        ..ScheduleConfig::default()
                    };
                    let (sched, _) = schedule(&scop, &deps, &config).unwrap();
                    if let Err(err) = verify(&scop, &deps, &sched) {
                        panic!("{config:?}: {err}\n{sched}");
                    }
                    // Coarser tasks (`--granularity`) keep the instances' order.
                    let coarse = coarsen(&sched, 1).unwrap();
                    if let Err(err) = verify(&scop, &deps, &coarse) {
                        panic!("{config:?}, coarsened: {err}\n{coarse}");
                    }
                }
            }
        }
    }
}

/// The seidel-like stencil with its inner loop reversed: S0[t, i-1] -> S0[t, i] (flow, through
/// A[i-1]) now goes backwards.
#[test]
fn reversed_loop_is_rejected() {
    let scop = common::seidel_1d();
    let deps = dependences(&scop).unwrap();
    let sched = TiledSchedule {
        tree: String::new(),
        nests: vec![one_nest(
            &[0],
            vec![],
            "[T, N] -> { S0[t, i] -> [t, -i] : 0 <= t < T and 1 <= i <= N - 2 }",
            "[T, N] -> { S0[t, i] -> N0[] : 0 <= t < T and 1 <= i <= N - 2 }",
            "[T, N] -> { N0[] : T > 0 and N > 2 }",
        )],
    };
    let report = illegal_report(verify(&scop, &deps, &sched));
    assert!(report.contains("flow dependence S0 -> S0"), "{report}");
}

/// jacobi-1d tiled rectangularly in (t, i) without skewing: S1[t, j] -> S0[t + 1, j - 1] goes from
/// the i-tile of j to the previous i-tile when j is a multiple of 4, inside one time tile. Both
/// the instance-level check and the tile dependences reject it.
#[test]
fn rectangular_tiling_of_a_stencil_is_rejected() {
    let scop = common::jacobi_1d();
    let deps = dependences(&scop).unwrap();
    let dom = "0 <= t < T and 1 <= i <= N - 2";
    let sched = TiledSchedule {
        tree: String::new(),
        nests: vec![one_nest(
            &[0, 1],
            vec![4, 4],
            &format!(
                "[T, N] -> {{ S0[t, i] -> [floor(t/4), floor(i/4), t, 0, i] : {dom}; S1[t, i] -> [floor(t/4), floor(i/4), t, 1, i] : {dom} }}"
            ),
            &format!("[T, N] -> {{ S0[t, i] -> N0[floor(t/4), floor(i/4)] : {dom}; S1[t, i] -> N0[floor(t/4), floor(i/4)] : {dom} }}"),
            "[T, N] -> { N0[a, b] : 0 <= 4a < T and 1 <= 4b + 3 and 4b <= N - 2 }",
        )],
    };
    let report = illegal_report(verify(&scop, &deps, &sched));
    assert!(report.contains("S1 -> S0"), "{report}");
    match tile_dependences(&scop, &deps, &sched) {
        Err(Error::IllegalSchedule(report)) => assert!(report.contains("backwards"), "{report}"),
        other => panic!("expected backward tile dependences, got {other:?}"),
    }
}

/// A schedule that forgets S1, and one that schedules S0 twice.
#[test]
fn instances_must_be_scheduled_exactly_once() {
    let scop = common::jacobi_1d();
    let deps = dependences(&scop).unwrap();
    let dom = "0 <= t < T and 1 <= i <= N - 2";
    let s0 = one_nest(
        &[0],
        vec![],
        &format!("[T, N] -> {{ S0[t, i] -> [t, i] : {dom} }}"),
        &format!("[T, N] -> {{ S0[t, i] -> N0[] : {dom} }}"),
        "[T, N] -> { N0[] : T > 0 and N > 2 }",
    );
    let forgets = TiledSchedule {
        tree: String::new(),
        nests: vec![s0.clone()],
    };
    let report = illegal_report(verify(&scop, &deps, &forgets));
    assert!(
        report.contains("scheduled by no nest") && report.contains("S1"),
        "{report}"
    );

    let mut again = s0.clone();
    again.tile_map = again.tile_map.replace("N0", "N1");
    let twice = TiledSchedule {
        tree: String::new(),
        nests: vec![s0, again],
    };
    let report = illegal_report(verify(&scop, &deps, &twice));
    assert!(
        report.contains("nest N1 schedules instances that an earlier nest schedules too"),
        "{report}"
    );
}

/// The tile map must be the schedule's first `tile_sizes.len()` dimensions.
#[test]
fn inconsistent_tile_map_is_rejected() {
    let scop = common::recurrence_1d();
    let deps = dependences(&scop).unwrap();
    let sched = TiledSchedule {
        tree: String::new(),
        nests: vec![one_nest(
            &[0],
            vec![4],
            "[N] -> { S0[i] -> [floor(i/4), i] : 1 <= i < N }",
            "[N] -> { S0[i] -> N0[floor(i/8)] : 1 <= i < N }",
            "[N] -> { N0[a] : 0 <= a and 8a < N }",
        )],
    };
    let report = illegal_report(verify(&scop, &deps, &sched));
    assert!(report.contains("tile map"), "{report}");
}

/// `read_then_overwrite` with the overwriting loop S1 run first: its only dependence, the anti
/// dependence S0 -> S1 through A, goes backwards, and the report names that kind and no other
/// (verify first checks the kinds together, then each kind only to report).
#[test]
fn a_backward_anti_dependence_alone_is_reported() {
    let scop = common::read_then_overwrite();
    let deps = dependences(&scop).unwrap();
    assert_eq!(deps.flow, "[N] -> {  }");
    let sched = TiledSchedule {
        tree: String::new(),
        nests: vec![
            one_nest(
                &[1],
                vec![],
                "[N] -> { S1[i] -> [i] : 0 <= i < N }",
                "[N] -> { S1[i] -> N0[] : 0 <= i < N }",
                "[N] -> { N0[] : N > 0 }",
            ),
            one_nest(
                &[0],
                vec![],
                "[N] -> { S0[i] -> [i] : 0 <= i < N - 1 }",
                "[N] -> { S0[i] -> N1[] : 0 <= i < N - 1 }",
                "[N] -> { N1[] : N > 1 }",
            ),
        ],
    };
    let report = illegal_report(verify(&scop, &deps, &sched));
    assert!(
        report.contains("anti dependence S0 -> S1 is not respected"),
        "{report}"
    );
    assert_eq!(report.lines().count(), 1, "{report}");
}
