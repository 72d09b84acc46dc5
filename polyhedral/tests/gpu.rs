//! The CUDA target's polyhedral questions: which loops of a task body are parallel, and the
//! accessed slab of each array's outermost index (answers reasoned out by hand per test).

mod common;

use polyhedral::{
    array_slabs, body_loops, dependences, expand_scalars, nest_body_ast, parallel_loops,
    scalar_expansions, schedule, task_private, thread_private, Ast, KernelScope, ScheduleConfig,
};

/// The loops of nest 0's task body (iterators `c<dim>`), each as its dimension and whether
/// polyhedral calls it parallel.
fn loops_of(scop: &frontend::ir::Scop, sizes: Vec<i64>, original: bool) -> Vec<(usize, bool)> {
    body_loops_with(
        scop,
        ScheduleConfig {
            tile_sizes: Some(sizes),
            original,
            ..ScheduleConfig::default()
        },
    )
}

fn body_loops_with(scop: &frontend::ir::Scop, cfg: ScheduleConfig) -> Vec<(usize, bool)> {
    let deps = dependences(scop).unwrap();
    let (sched, warnings) = schedule(scop, &deps, &cfg).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let n_tile = sched.nests[0].tile_sizes.len();
    let coords: Vec<String> = (0..n_tile).map(|d| format!("k{d}")).collect();
    let body = nest_body_ast(scop, &sched, polyhedral::NestId(0), &coords, "c").unwrap();
    let loops = body_loops(&body, "c");
    let flags = parallel_loops(scop, &deps, &sched, polyhedral::NestId(0), &loops).unwrap();
    loops.iter().map(|l| l.dim).zip(flags).collect()
}

/// `C[i][j] *= 2`: no dependence, every point loop of a tile is parallel.
#[test]
fn loops_without_dependences_are_parallel() {
    let loops = loops_of(&common::scale_2d(), vec![8], false);
    assert!(!loops.is_empty());
    assert!(loops.iter().all(|&(_, p)| p), "{loops:?}");
}

/// The in-place stencil in source order: inside a time tile, `t` carries the dependence of
/// distance (1, 0) and `i` the one of distance (0, 1): no loop is parallel.
#[test]
fn an_in_place_stencil_has_no_parallel_loop() {
    let loops = loops_of(&common::seidel_1d(), vec![4], true);
    assert!(!loops.is_empty());
    assert!(loops.iter().all(|&(_, p)| !p), "{loops:?}");
}

fn column_sums() -> frontend::ir::Scop {
    common::scop(
        &["N"],
        "[N] -> { : N >= 0 }",
        &[("y", 1), ("A", 2)],
        vec![common::stmt(
            0,
            &["i", "j"],
            "[N] -> { S0[i, j] : 0 <= i < N and 0 <= j < N }",
            "[N] -> { S0[i, j] -> [0, i, 0, j, 0] }",
            vec![
                common::access(false, 0, "[N] -> { S0[i, j] -> y[j] }"),
                common::access(false, 1, "[N] -> { S0[i, j] -> A[i, j] }"),
                common::access(true, 0, "[N] -> { S0[i, j] -> y[j] }"),
            ],
        )],
    )
}

/// The same with the GPU's point order (`parallel_point_loops_outer`): `j`, which carries no
/// dependence inside a tile, goes outermost, so the outer point loop is the parallel one.
#[test]
fn for_the_gpu_the_parallel_point_loop_goes_outermost() {
    let cfg = ScheduleConfig {
        tile_sizes: Some(vec![8]),
        original: true,
        parallel_point_loops_outer: true,
        ..ScheduleConfig::default()
    };
    let loops = body_loops_with(&column_sums(), cfg);
    let flag = |dim: usize| loops.iter().find(|l| l.0 == dim).map(|l| l.1);
    assert_eq!(flag(2), Some(true), "{loops:?}");
    assert_eq!(flag(3), Some(false), "{loops:?}");
}

/// `y[j] += A[i][j]` in source order: `i` carries the reduction into `y[j]` (dimension 2 of
/// the flat schedule, after the two tile dimensions), while `j` (dimension 3), for a fixed
/// `i`, touches a different `y[j]` in each iteration.
#[test]
fn a_reduction_loop_is_sequential_and_the_loop_inside_it_parallel() {
    let scop = column_sums();
    let loops = loops_of(&scop, vec![8], true);
    let flag = |dim: usize| loops.iter().find(|l| l.0 == dim).map(|l| l.1);
    assert_eq!(flag(2), Some(false), "{loops:?}");
    assert_eq!(flag(3), Some(true), "{loops:?}");
}

/// Evaluates a slab bound's code for the parameter values `params`.
fn bound(ast: &Ast, params: &[(&str, i64)]) -> Vec<i64> {
    common::run(ast, params)
        .into_iter()
        .map(|(name, args)| {
            assert_eq!(name, polyhedral::SLAB_NAME);
            assert_eq!(args.len(), 1);
            args[0]
        })
        .collect()
}

/// jacobi-1d reads `A[i - 1 .. i + 1]` and writes `B[i]` for `1 <= i <= N - 2`: `A` is touched
/// on `[0, N - 1]`, `B` on `[0, N - 1]` too (it is read at `i ± 1` by the second statement).
/// With an extra array that no statement touches, that one has no slab.
#[test]
fn slabs_span_the_touched_rows() {
    let mut scop = common::jacobi_1d();
    scop.arrays.push(frontend::ir::Array {
        id: frontend::ir::ArrayId(2),
        name: "D".into(),
        isl_name: "D".into(),
        ..scop.arrays[0].clone()
    });
    let slabs = array_slabs(&scop).unwrap();
    assert_eq!(slabs.len(), 3);
    for (array, slab) in slabs.iter().enumerate().take(2) {
        let slab = slab.as_ref().unwrap();
        assert_eq!(
            bound(&slab.lo, &[("T", 3), ("N", 10)]),
            vec![0],
            "array {array}"
        );
        assert_eq!(
            bound(&slab.hi, &[("T", 3), ("N", 10)]),
            vec![9],
            "array {array}"
        );
    }
    assert!(slabs[2].is_none());
}

/// Only the first subscript counts, and a write at an offset moves the slab: `C[i + 2][j]` for
/// `0 <= i < N` is `[2, N + 1]`.
#[test]
fn a_slab_follows_the_outermost_subscript() {
    let scop = common::scop(
        &["N"],
        "[N] -> { : N >= 1 }",
        &[("C", 2)],
        vec![common::stmt(
            0,
            &["i", "j"],
            "[N] -> { S0[i, j] : 0 <= i < N and 0 <= j < 2 * N }",
            "[N] -> { S0[i, j] -> [0, i, 0, j, 0] }",
            vec![common::access(
                true,
                0,
                "[N] -> { S0[i, j] -> C[i + 2, j] }",
            )],
        )],
    );
    let slab = array_slabs(&scop).unwrap().remove(0).unwrap();
    assert_eq!(bound(&slab.lo, &[("N", 7)]), vec![2]);
    assert_eq!(bound(&slab.hi, &[("N", 7)]), vec![8]);
}

/// A recursive filter along rows (deriche's): each row restarts the running value `s`, which
/// carries from one `j` to the next:
/// ```c
/// for (i = 0; i < N; i++) {
///   s = 0;                                         // S0
///   for (j = 0; j < N; j++) { s = s + A[i][j]; B[i][j] = s; }   // S1
/// }
/// ```
/// in the context `context` (of `N`).
fn row_filter(context: &str) -> frontend::ir::Scop {
    common::scop(
        &["N"],
        context,
        &[("s", 0), ("A", 2), ("B", 2)],
        vec![
            common::stmt(
                0,
                &["i"],
                "[N] -> { S0[i] : 0 <= i < N }",
                "[N] -> { S0[i] -> [0, i, 0, 0, 0] }",
                vec![common::access(true, 0, "[N] -> { S0[i] -> s[] }")],
            ),
            common::stmt(
                1,
                &["i", "j"],
                "[N] -> { S1[i, j] : 0 <= i < N and 0 <= j < N }",
                "[N] -> { S1[i, j] -> [0, i, 1, j, 0] }",
                vec![
                    common::access(false, 0, "[N] -> { S1[i, j] -> s[] }"),
                    common::access(false, 1, "[N] -> { S1[i, j] -> A[i, j] }"),
                    common::access(true, 0, "[N] -> { S1[i, j] -> s[] }"),
                    common::access(true, 2, "[N] -> { S1[i, j] -> B[i, j] }"),
                ],
            ),
        ],
    )
}

/// The row filter scheduled for the GPU with `s` expanded over `i`: the answer of
/// [`thread_private`] for `s` in nest 0 with kernels `kernels(parallel dim, sequential dim)`,
/// the dimensions of its task body's parallel (`i`) and sequential (`j`) loops.
fn row_filter_private(kernels: impl Fn(usize, usize) -> Vec<KernelScope>) -> Option<String> {
    // N <= 100, so that tiles of 1000 along `j` hold a whole row.
    let scop = row_filter("[N] -> { : 1 <= N <= 100 }");
    let candidates = scalar_expansions(&scop).unwrap();
    assert_eq!(candidates.len(), 1, "s is expanded over i");
    let expanded = expand_scalars(&scop, &candidates).unwrap();
    let deps = dependences(&expanded).unwrap();
    let cfg = ScheduleConfig {
        tile_sizes: Some(vec![8, 1000]),
        parallel_point_loops_outer: true,
        ..ScheduleConfig::default()
    };
    let (sched, _) = schedule(&expanded, &deps, &cfg).unwrap();
    let private = task_private(&scop, &candidates, &sched).unwrap();
    assert_eq!(
        private.len(),
        1,
        "s is private to each task (its row is in one tile): {:?}",
        sched.nests
    );
    let n_tile = sched.nests[0].tile_sizes.len();
    let coords: Vec<String> = (0..n_tile).map(|d| format!("k{d}")).collect();
    let body = nest_body_ast(&expanded, &sched, polyhedral::NestId(0), &coords, "c").unwrap();
    let loops = body_loops(&body, "c");
    let flags = parallel_loops(&expanded, &deps, &sched, polyhedral::NestId(0), &loops).unwrap();
    let par = loops
        .iter()
        .zip(&flags)
        .find(|(_, p)| **p)
        .map(|(l, _)| l.dim)
        .expect("a parallel loop");
    let seq = loops
        .iter()
        .zip(&flags)
        .find(|(_, p)| !**p)
        .map(|(l, _)| l.dim)
        .expect("a sequential loop");
    assert!(
        par < seq,
        "the parallel loop (over i) encloses the sequential one: {loops:?} {flags:?}"
    );
    thread_private(
        &scop,
        private[0].array,
        &sched,
        polyhedral::NestId(0),
        &kernels(par, seq),
    )
    .unwrap()
}

/// One kernel with a thread per row (the parallel loop over `i`): `s` flows only inside one
/// iteration of `i`, in order, so each thread's own variable serves it.
#[test]
fn a_value_that_stays_in_its_row_is_private_to_the_rows_thread() {
    let one_kernel = |par: usize, _| {
        vec![KernelScope {
            statements: vec!["S0".into(), "S1".into()],
            fixed: par + 1,
        }]
    };
    assert_eq!(row_filter_private(one_kernel), None);
}

/// Were the sequential loop over `j` mapped to threads too, `s` would flow from the thread of
/// `j` to that of `j + 1`: a variable per thread would lose it. And with `s = 0` (S0) in a
/// launch of its own, the value would flow from one launch to the next. Both must be refused.
#[test]
fn a_value_carried_across_threads_or_launches_is_not_private() {
    let threads_along_j = |_, seq: usize| {
        vec![KernelScope {
            statements: vec!["S0".into(), "S1".into()],
            fixed: seq + 1,
        }]
    };
    let why = row_filter_private(threads_along_j).expect("s is shared by the threads along j");
    assert!(
        why.contains("flows from one GPU thread or launch to another"),
        "{why}"
    );
    let two_launches = |par: usize, _| {
        vec![
            KernelScope {
                statements: vec!["S0".into()],
                fixed: usize::MAX,
            },
            KernelScope {
                statements: vec!["S1".into()],
                fixed: par + 1,
            },
        ]
    };
    assert!(row_filter_private(two_launches).is_some());
    let twice = |par: usize, _| {
        vec![
            KernelScope {
                statements: vec!["S0".into(), "S1".into()],
                fixed: par + 1,
            },
            KernelScope {
                statements: vec!["S1".into()],
                fixed: par + 1,
            },
        ]
    };
    assert!(row_filter_private(twice)
        .expect("S1 in two kernels")
        .contains("runs in two kernels"));
}

/// For any `N`, tiles of 8 along `j` would cut a row, and `s` would cross tiles. With
/// `whole_carrying_members` (the cuda target's default), `j`, which carries the running value,
/// is not cut (its tile coordinate is 0) while `i`, which carries nothing, is: `s` is then
/// private to each task for every `N`.
#[test]
fn for_the_gpu_a_member_that_carries_a_value_is_not_cut() {
    let scop = row_filter("[N] -> { : N >= 1 }");
    let candidates = scalar_expansions(&scop).unwrap();
    let expanded = expand_scalars(&scop, &candidates).unwrap();
    let deps = dependences(&expanded).unwrap();
    let private_with = |whole_carrying_members: bool| {
        let cfg = ScheduleConfig {
            tile_sizes: Some(vec![8]),
            parallel_point_loops_outer: true,
            whole_carrying_members,
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&expanded, &deps, &cfg).unwrap();
        (
            sched.nests[0].tile_sizes.clone(),
            task_private(&scop, &candidates, &sched).unwrap().len(),
        )
    };
    assert_eq!(private_with(false), (vec![8, 8], 0));
    assert_eq!(private_with(true), (vec![8, polyhedral::WHOLE_LOOP], 1));
}
