//! Generated code, run by the test interpreter (`common::run`), compared with enumerations written
//! directly in Rust and with the sequential execution of the original loops.

mod common;

use polyhedral::{
    classes_ast, dependences, nest_body_ast, points_ast, schedule, tile_dependences, tile_graph,
    Ast, ScheduleConfig,
};

/// A non-convex set with an existential: points (a, b) with 0 <= a < n, 0 <= b <= 2a + 3,
/// b <= a or b = 2a + 3, and a + b even. The enumeration below visits them in lexicographic order.
#[test]
fn points_ast_visits_the_set_in_lexicographic_order() {
    let scop = common::scop(&["n"], "[n] -> { : n >= 0 }", &[], vec![]);
    let set = "[n] -> { N0[a, b] : 0 <= a < n and 0 <= b <= 2a + 3 and (b <= a or b = 2a + 3) and exists (k : a + b = 2k) }";
    let ast = points_ast(&scop, set, "c").unwrap();
    for n in 0..7 {
        let mut want = Vec::new();
        for a in 0..n {
            for b in 0..=2 * a + 3 {
                if (b <= a || b == 2 * a + 3) && (a + b) % 2 == 0 {
                    want.push(("N0".to_string(), vec![a, b]));
                }
            }
        }
        assert_eq!(
            common::run(&ast, &[("n", n)]),
            want,
            "n = {n}\n{}",
            common::show(&ast)
        );
    }
}

#[test]
fn points_ast_of_an_empty_set_is_empty() {
    let scop = common::scop(&["n"], "[n] -> { : n >= 0 }", &[], vec![]);
    let ast = points_ast(&scop, "[n] -> { N0[a] : 0 <= a < n and a > n }", "c").unwrap();
    assert!(
        common::run(&ast, &[("n", 5)]).is_empty(),
        "{}",
        common::show(&ast)
    );
    assert_eq!(
        points_ast(&scop, "[n] -> { }", "c").unwrap(),
        Ast::Block(vec![])
    );
}

#[test]
fn iterator_names_must_not_be_parameters() {
    let scop = common::scop(&["c0"], "[c0] -> { : c0 >= 0 }", &[], vec![]);
    let err = points_ast(&scop, "[c0] -> { N0[a] : 0 <= a < c0 }", "c").unwrap_err();
    assert!(err.to_string().contains("c0"), "{err}");
}

/// `C[i][j] *= 2` tiled by 4 x 3: tile (a, b) runs S0(i, j) for 4a <= i < min(4a + 4, N) and
/// 3b <= j < min(3b + 3, M), i outer, j inner.
#[test]
fn nest_body_visits_exactly_its_tile() {
    let scop = common::scale_2d();
    let deps = dependences(&scop).unwrap();
    let config = ScheduleConfig {
        tile_sizes: Some(vec![4, 3]),
        ..ScheduleConfig::default()
    };
    let (sched, _) = schedule(&scop, &deps, &config).unwrap();
    let names = vec!["tf0".to_string(), "tf1".to_string()];
    let body = nest_body_ast(&scop, &sched, polyhedral::NestId(0), &names, "c").unwrap();
    let (n, m) = (10, 7);
    let tiles = common::points(&scop, &sched.nests[0].tile_domain, &[("N", n), ("M", m)]);
    assert_eq!(tiles.len(), 3 * 3);
    for tile in tiles {
        let (a, b) = (tile[0], tile[1]);
        let mut want = Vec::new();
        for i in 4 * a..(4 * a + 4).min(n) {
            for j in 3 * b..(3 * b + 3).min(m) {
                want.push(("S0".to_string(), vec![i, j]));
            }
        }
        let got = common::run(&body, &[("N", n), ("M", m), ("tf0", a), ("tf1", b)]);
        assert_eq!(got, want, "tile {tile:?}\n{}", common::show(&body));
    }
}

#[test]
fn nest_body_checks_its_arguments() {
    let scop = common::scale_2d();
    let deps = dependences(&scop).unwrap();
    let (sched, _) = schedule(&scop, &deps, &ScheduleConfig::default()).unwrap();
    let one = vec!["tf0".to_string()];
    assert!(
        nest_body_ast(&scop, &sched, polyhedral::NestId(0), &one, "c")
            .unwrap_err()
            .to_string()
            .contains("tile coordinates")
    );
    assert!(
        nest_body_ast(&scop, &sched, polyhedral::NestId(1), &[], "c")
            .unwrap_err()
            .to_string()
            .contains("nest N1 does not exist")
    );
    let clash = vec!["N".to_string(), "tf1".to_string()];
    assert!(
        nest_body_ast(&scop, &sched, polyhedral::NestId(0), &clash, "c")
            .unwrap_err()
            .to_string()
            .contains("`N`")
    );
}

/// Runs jacobi-1d as the dataflow runtime would (tiles in a pseudo-random order allowed by the
/// tile dependences, each tile's body from `nest_body_ast`) and compares the arrays with the
/// sequential loops. The statements use wrapping integer arithmetic with distinct weights, so any
/// reordering of dependent instances changes the result. Every instance must run exactly once.
#[test]
fn tiled_jacobi_matches_the_sequential_program() {
    let scop = common::jacobi_1d();
    let deps = dependences(&scop).unwrap();
    let (t_max, n) = (11i64, 23i64);
    let init = |k: usize| (k as i64 * 7919 + 13) % 1000;
    let s0 = |a: &[i64], b: &mut [i64], i: usize| {
        b[i] = a[i - 1]
            .wrapping_mul(3)
            .wrapping_add(a[i].wrapping_mul(5))
            .wrapping_add(a[i + 1].wrapping_mul(7))
    };
    let s1 = |a: &mut [i64], b: &[i64], i: usize| {
        a[i] = b[i - 1]
            .wrapping_mul(11)
            .wrapping_add(b[i].wrapping_mul(13))
            .wrapping_sub(b[i + 1].wrapping_mul(17))
    };
    let mut a_ref: Vec<i64> = (0..n as usize).map(init).collect();
    let mut b_ref: Vec<i64> = (0..n as usize).map(|k| init(k + 50)).collect();
    for _ in 0..t_max {
        for i in 1..(n - 1) as usize {
            s0(&a_ref, &mut b_ref, i);
        }
        for i in 1..(n - 1) as usize {
            s1(&mut a_ref, &b_ref, i);
        }
    }
    for (config, seed) in [
        (
            ScheduleConfig {
                tile_sizes: Some(vec![4]),
                ..ScheduleConfig::default()
            },
            1,
        ),
        (
            ScheduleConfig {
                tile_sizes: Some(vec![3, 5]),
                ..ScheduleConfig::default()
            },
            2,
        ),
        (
            ScheduleConfig {
                tile_sizes: Some(vec![4]),
                original: true,
                ..ScheduleConfig::default()
            },
            3,
        ),
        (
            ScheduleConfig {
                tile_sizes: None,
                ..ScheduleConfig::default()
            },
            4,
        ),
    ] {
        let (sched, _) = schedule(&scop, &deps, &config).unwrap();
        let tile_deps = tile_dependences(&scop, &deps, &sched).unwrap();
        let mut a: Vec<i64> = (0..n as usize).map(init).collect();
        let mut b: Vec<i64> = (0..n as usize).map(|k| init(k + 50)).collect();
        let mut seen = std::collections::BTreeSet::new();
        common::run_tiled(
            &scop,
            &sched,
            &tile_deps,
            &[("T", t_max), ("N", n)],
            seed,
            |stmt, args| {
                assert!(
                    seen.insert((stmt.to_string(), args.to_vec())),
                    "{stmt}{args:?} runs twice"
                );
                let i = args[1] as usize;
                match stmt {
                    "S0" => s0(&a, &mut b, i),
                    "S1" => s1(&mut a, &b, i),
                    other => panic!("unknown statement {other}"),
                }
            },
        );
        assert_eq!(seen.len() as i64, 2 * t_max * (n - 2), "{config:?}");
        assert_eq!((&a, &b), (&a_ref, &b_ref), "{config:?}\n{sched}");
    }
}

/// The same for the seidel-like in-place stencil, whose dependences go both ways in i within a
/// time step (the tiles must be skewed).
#[test]
fn tiled_seidel_matches_the_sequential_program() {
    let scop = common::seidel_1d();
    let deps = dependences(&scop).unwrap();
    let (t_max, n) = (9i64, 20i64);
    let init = |k: usize| (k as i64 * 104729 + 7) % 997;
    let s0 = |a: &mut [i64], i: usize| {
        a[i] = a[i - 1]
            .wrapping_mul(3)
            .wrapping_add(a[i].wrapping_mul(5))
            .wrapping_sub(a[i + 1].wrapping_mul(7))
    };
    let mut a_ref: Vec<i64> = (0..n as usize).map(init).collect();
    for _ in 0..t_max {
        for i in 1..(n - 1) as usize {
            s0(&mut a_ref, i);
        }
    }
    for (tile_sizes, seed) in [(Some(vec![4]), 5), (Some(vec![2, 3]), 6), (None, 7)] {
        let config = ScheduleConfig {
            tile_sizes,
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&scop, &deps, &config).unwrap();
        let tile_deps = tile_dependences(&scop, &deps, &sched).unwrap();
        let mut a: Vec<i64> = (0..n as usize).map(init).collect();
        let mut count = 0;
        common::run_tiled(
            &scop,
            &sched,
            &tile_deps,
            &[("T", t_max), ("N", n)],
            seed,
            |stmt, args| {
                assert_eq!(stmt, "S0");
                s0(&mut a, args[1] as usize);
                count += 1;
            },
        );
        assert_eq!(count, t_max * (n - 2));
        assert_eq!(a, a_ref, "{config:?}\n{sched}");
    }
}

/// Two nests (minimal fusion) tiled by 4: the consumer's tiles wait for the producer's tiles
/// they read from, in any order the dependences allow.
#[test]
fn tiled_producer_consumer_matches_the_sequential_program() {
    let scop = common::producer_consumer();
    let deps = dependences(&scop).unwrap();
    let n = 18i64;
    let a_in: Vec<i64> = (0..n).map(|k| k * k - 5).collect();
    let c_ref: Vec<i64> = (0..n).map(|i| a_in[(n - 1 - i) as usize] * 2 + 1).collect();
    for (fuse, original) in [
        (polyhedral::Fuse::Min, false),
        (polyhedral::Fuse::Max, false),
        (polyhedral::Fuse::Smart, true),
    ] {
        let config = ScheduleConfig {
            fuse,
            original,
            tile_sizes: Some(vec![4]),
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&scop, &deps, &config).unwrap();
        let tile_deps = tile_dependences(&scop, &deps, &sched).unwrap();
        for seed in 0..4 {
            let mut b = vec![0i64; n as usize];
            let mut c = vec![0i64; n as usize];
            common::run_tiled(
                &scop,
                &sched,
                &tile_deps,
                &[("N", n)],
                seed,
                |stmt, args| {
                    let i = args[0] as usize;
                    match stmt {
                        "S0" => b[i] = a_in[i] * 2,
                        "S1" => c[i] = b[n as usize - 1 - i] + 1,
                        other => panic!("unknown statement {other}"),
                    }
                },
            );
            assert_eq!(
                c, c_ref,
                "{fuse:?} original={original} seed {seed}\n{sched}"
            );
        }
    }
}

/// Only anti dependences (S0[i] reads A[i + 1] before S1[i + 1] overwrites it) keep the consumer
/// of the old values ahead of the overwriting tiles.
#[test]
fn tiled_write_after_read_matches_the_sequential_program() {
    let scop = common::read_then_overwrite();
    let deps = dependences(&scop).unwrap();
    assert!(!polyhedral::maps_equal(&deps.anti, "{ S0[i] -> S1[j] : false }").unwrap());
    let n = 17i64;
    let a_in: Vec<i64> = (0..n).map(|k| 3 * k + 1).collect();
    let c_in: Vec<i64> = (0..n).map(|k| -k).collect();
    let b_ref: Vec<i64> = (0..n)
        .map(|i| if i < n - 1 { a_in[i as usize + 1] } else { 0 })
        .collect();
    for (fuse, original) in [
        (polyhedral::Fuse::Min, false),
        (polyhedral::Fuse::Max, false),
        (polyhedral::Fuse::Smart, true),
    ] {
        let config = ScheduleConfig {
            fuse,
            original,
            tile_sizes: Some(vec![4]),
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&scop, &deps, &config).unwrap();
        let tile_deps = tile_dependences(&scop, &deps, &sched).unwrap();
        for seed in 0..6 {
            let mut a = a_in.clone();
            let mut b = vec![0i64; n as usize];
            common::run_tiled(
                &scop,
                &sched,
                &tile_deps,
                &[("N", n)],
                seed,
                |stmt, args| {
                    let i = args[0] as usize;
                    match stmt {
                        "S0" => b[i] = a[i + 1],
                        "S1" => a[i] = c_in[i],
                        other => panic!("unknown statement {other}"),
                    }
                },
            );
            assert_eq!(
                (&a, &b),
                (&c_in, &b_ref),
                "{fuse:?} original={original} seed {seed}\n{sched}"
            );
        }
    }
}

/// A nest without loops (`s = 0`) before a reduction: the untiled first nest's body is the single
/// statement instance, and the sum runs after it whatever the configuration.
#[test]
fn tiled_init_then_sum_matches_the_sequential_program() {
    let scop = common::init_then_sum();
    let deps = dependences(&scop).unwrap();
    let n = 9i64;
    let a: Vec<i64> = (0..n).map(|k| k * 10 + 1).collect();
    let want: i64 = a.iter().sum();
    for (original, tile_sizes) in [(true, Some(vec![2])), (false, Some(vec![2])), (true, None)] {
        let config = ScheduleConfig {
            original,
            tile_sizes,
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&scop, &deps, &config).unwrap();
        let tile_deps = tile_dependences(&scop, &deps, &sched).unwrap();
        for seed in 0..3 {
            let mut s = 12345i64;
            common::run_tiled(
                &scop,
                &sched,
                &tile_deps,
                &[("N", n)],
                seed,
                |stmt, args| match stmt {
                    "S0" => s = 0,
                    "S1" => s += a[args[0] as usize],
                    other => panic!("unexpected statement {other}"),
                },
            );
            assert_eq!(s, want, "original={original} seed {seed}\n{sched}");
        }
    }
}

/// fdtd-2d: four statements of different depths fused by ISL into one skewed 3-D band; the tiled
/// dataflow execution must reproduce the sequential arrays.
#[test]
fn tiled_fdtd_2d_matches_the_sequential_program() {
    struct Grid {
        ey: Vec<Vec<i64>>,
        ex: Vec<Vec<i64>>,
        hz: Vec<Vec<i64>>,
    }
    let scop = common::fdtd_2d();
    let deps = dependences(&scop).unwrap();
    let (t_max, nx, ny) = (4i64, 7i64, 6i64);
    let fict: Vec<i64> = (0..t_max).map(|t| 100 + t * t).collect();
    let grid = |seed: i64| -> Vec<Vec<i64>> {
        (0..nx)
            .map(|i| (0..ny).map(|j| (i * 31 + j * 17 + seed) % 101).collect())
            .collect()
    };
    let new_grid = || Grid {
        ey: grid(1),
        ex: grid(2),
        hz: grid(3),
    };
    let exec = |g: &mut Grid, stmt: &str, args: &[i64]| {
        let (t, i, j) = match args.len() {
            2 => (args[0] as usize, 0, args[1] as usize),
            _ => (args[0] as usize, args[1] as usize, args[2] as usize),
        };
        match stmt {
            "S0" => g.ey[0][j] = fict[t],
            "S1" => {
                g.ey[i][j] = g.ey[i][j]
                    .wrapping_sub(3i64.wrapping_mul(g.hz[i][j].wrapping_sub(g.hz[i - 1][j])))
            }
            "S2" => {
                g.ex[i][j] = g.ex[i][j]
                    .wrapping_sub(5i64.wrapping_mul(g.hz[i][j].wrapping_sub(g.hz[i][j - 1])))
            }
            "S3" => {
                let d = g.ex[i][j + 1]
                    .wrapping_sub(g.ex[i][j])
                    .wrapping_add(g.ey[i + 1][j])
                    .wrapping_sub(g.ey[i][j]);
                g.hz[i][j] = g.hz[i][j].wrapping_sub(7i64.wrapping_mul(d));
            }
            other => panic!("unknown statement {other}"),
        }
    };
    let mut reference = new_grid();
    for t in 0..t_max {
        for j in 0..ny {
            exec(&mut reference, "S0", &[t, j]);
        }
        for i in 1..nx {
            for j in 0..ny {
                exec(&mut reference, "S1", &[t, i, j]);
            }
        }
        for i in 0..nx {
            for j in 1..ny {
                exec(&mut reference, "S2", &[t, i, j]);
            }
        }
        for i in 0..nx - 1 {
            for j in 0..ny - 1 {
                exec(&mut reference, "S3", &[t, i, j]);
            }
        }
    }
    for (config, seed) in [
        (
            ScheduleConfig {
                tile_sizes: Some(vec![2]),
                ..ScheduleConfig::default()
            },
            1,
        ),
        (
            ScheduleConfig {
                tile_sizes: Some(vec![2]),
                original: true,
                ..ScheduleConfig::default()
            },
            3,
        ),
    ] {
        let (sched, _) = schedule(&scop, &deps, &config).unwrap();
        let tile_deps = tile_dependences(&scop, &deps, &sched).unwrap();
        let mut g = new_grid();
        common::run_tiled(
            &scop,
            &sched,
            &tile_deps,
            &[("T", t_max), ("NX", nx), ("NY", ny)],
            seed,
            |stmt, args| exec(&mut g, stmt, args),
        );
        assert!(
            g.ey == reference.ey && g.ex == reference.ex && g.hz == reference.hz,
            "{config:?}\n{sched}"
        );
    }
}

/// `classes_ast` visits every point of every class once, in lexicographic order, named by its
/// class, and in the order of permuted coordinates when given one: checked against `points_ast`
/// on each class's sets, merged and sorted. The classes are
/// those code generation gives it: the partition of each nest's tiles, grouped by the
/// dependences they wait for. heat-3d and jacobi-2d at MINI have their classes generated as one
/// statement each; the parametric jacobi-2d with tiles of 5 has unions that ISL's generator
/// rejects, so there each set is a statement of its own.
#[test]
fn classes_ast_visits_each_tile_once_in_order_with_its_class() {
    let parametric = {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/jacobi-2d.c");
        let (file, _) = frontend::parse_file(&path, &frontend::Options::default()).unwrap();
        file.scops.into_iter().next().unwrap()
    };
    let sizes: &[&[(&str, i64)]] = &[
        &[("T", 3), ("N", 12)],
        &[("T", 1), ("N", 3)],
        &[("T", 5), ("N", 20)],
        &[("T", 0), ("N", 9)],
    ];
    let cases = [
        (
            common::kernel_scop("heat-3d", &["MINI_DATASET"]),
            4,
            &[&[][..]][..],
        ),
        (
            common::kernel_scop("jacobi-2d", &["MINI_DATASET"]),
            4,
            &[&[][..]][..],
        ),
        (parametric, 5, sizes),
    ];
    for (scop, tile, params) in cases {
        let deps = dependences(&scop).unwrap();
        let cfg = ScheduleConfig {
            tile_sizes: Some(vec![tile]),
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&scop, &deps, &cfg).unwrap();
        let tile_deps = tile_dependences(&scop, &deps, &sched).unwrap();
        let graph = tile_graph(&scop, &sched, &tile_deps).unwrap();
        let mut partitioned = 0;
        for nest in &graph.nests {
            let Some(classes) = &nest.partition else {
                continue;
            };
            partitioned += 1;
            let groups = common::partition_groups(classes);
            // The lexicographic order, and the last dimension moved to the second place (the
            // orders `Nest::spawn_order` gives keep the first dimension first).
            let n = nest.n_dims;
            let rotated: Vec<usize> = std::iter::once(0)
                .chain(std::iter::once(n - 1))
                .chain(1..n - 1)
                .collect();
            let orders = if n >= 3 {
                vec![Vec::new(), rotated]
            } else {
                vec![Vec::new()]
            };
            for order in orders {
                let ast = classes_ast(&scop, &groups, "c", &order).unwrap();
                let key = |p: &[i64]| -> Vec<i64> {
                    if order.is_empty() {
                        p.to_vec()
                    } else {
                        order.iter().map(|&d| p[d]).collect()
                    }
                };
                for &params in params {
                    // Each disjunct on its own (ISL's generator also rejects some of these unions).
                    let mut want: Vec<(String, Vec<i64>)> = Vec::new();
                    for (g, sets) in groups.iter().enumerate() {
                        let mut points = std::collections::BTreeSet::new();
                        for set in sets {
                            for piece in common::disjuncts(set) {
                                points.extend(common::points(&scop, &piece, params));
                            }
                        }
                        want.extend(points.into_iter().map(|p| (format!("P{g}"), p)));
                    }
                    want.sort_by_key(|a| key(&a.1));
                    assert!(
                        !want.is_empty() || params.iter().any(|&(_, v)| v <= 1),
                        "{params:?}: no tiles"
                    );
                    assert_eq!(
                        common::run(&ast, params),
                        want,
                        "{params:?} {order:?}\n{}",
                        common::show(&ast)
                    );
                }
            }
        }
        assert!(partitioned > 0, "no nest is partitioned");
    }
}

/// The sources of a tile dependence of a random SCoP (`%` guards, a parametric size `N`, the
/// target tile `tf_d0`) on which ISL's AST generator fails while coalescing ("total
/// dimensionality changed unexpectedly"): the points are enumerated piece by piece instead, each
/// once. The oracle is the enumeration of the same set with its parameters fixed, which ISL
/// generates without the failing path.
#[test]
fn points_ast_of_a_set_isl_cannot_coalesce_visits_each_point_once() {
    let set = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/sources_isl_cannot_coalesce.txt"),
    )
    .unwrap();
    let set = set.trim();
    let scop = common::scop(&["N"], "[N] -> { : }", &[], vec![]);
    let ast = points_ast(&scop, set, "c").unwrap();
    let mut visited_some = false;
    for n in [3, 6, 10, 126, 131, 260] {
        for d in 0..4 {
            let mut got = common::run(&ast, &[("N", n), ("tf_d0", d)]);
            got.sort();
            // Each disjunct is `N2[...] : <conjunction>`: the parameter values join each one.
            let (head, body) = set.split_once("{ ").unwrap();
            let body = body.trim_end_matches(" }");
            let fixed: Vec<String> = body
                .split("; ")
                .map(|disjunct| format!("{disjunct} and N = {n} and tf_d0 = {d}"))
                .collect();
            let fixed = format!("{head}{{ {} }}", fixed.join("; "));
            let reference = points_ast(&scop, &fixed, "c").unwrap();
            let mut want = common::run(&reference, &[("N", n), ("tf_d0", d)]);
            want.sort();
            assert_eq!(got, want, "N = {n}, tf_d0 = {d}");
            visited_some |= !got.is_empty();
        }
    }
    assert!(visited_some);
}

/// Classes shaped by `%` guards (a random SCoP's, `tests/data/classes_past_the_budget.txt`: one
/// tile dimension, 4 classes, the last of 50 disjuncts with divisions) took ISL's AST generator
/// over 20 s (the last class alone as long). Past `CLASSES_BUDGET` operations `classes_ast` gives
/// up with an ISL error, which the task program answers with one partition whose inputs are
/// guarded (taskgen's `nest_partitions`).
#[test]
fn classes_past_the_budget_are_given_up() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/classes_past_the_budget.txt");
    let text = std::fs::read_to_string(path).unwrap();
    let classes: Vec<Vec<String>> = text.lines().map(|l| vec![l.to_string()]).collect();
    assert_eq!(classes.len(), 4);
    let scop = common::scop(&["N"], "[N] -> { : N >= 0 }", &[], vec![]);
    match classes_ast(&scop, &classes, "c", &[]) {
        Err(polyhedral::Error::Isl(msg)) => {
            assert!(msg.contains("ISL operations"), "{msg}")
        }
        other => panic!("expected the budget's error, got {other:?}"),
    }
    // The same classes without the last are within the budget.
    let ast = classes_ast(&scop, &classes[..3], "c", &[]).unwrap();
    for n in [4, 65, 66, 200] {
        let classes_of_zero: Vec<String> = common::run(&ast, &[("N", n)])
            .into_iter()
            .filter(|(_, point)| point[0] == 0)
            .map(|(class, _)| class)
            .collect();
        let want = if n <= 65 { "P0" } else { "P1" };
        assert_eq!(classes_of_zero, [want], "N = {n}\n{}", common::show(&ast));
    }
}
