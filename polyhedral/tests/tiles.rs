//! Tile dependences, checked against relations derived by hand and, for the stencils, through the
//! code that enumerates each tile's sources (run by the test interpreter).

mod common;

use polyhedral::{dependences, maps_equal, schedule, tile_dependences, ScheduleConfig};

/// `A[i] = A[i - 1] + 1` for 1 <= i < N, tiled by 4 in the original order. The only dependence,
/// S0[i] -> S0[i + 1], crosses tiles when i = 4a + 3: tile a -> tile a + 1, for 1 <= 4a + 3 (a >= 0)
/// and 4a + 4 <= N - 1. Pairs inside a tile are dropped: there is no N0[a] -> N0[a].
#[test]
fn recurrence_has_one_forward_tile_dependence() {
    let scop = common::recurrence_1d();
    let deps = dependences(&scop).unwrap();
    let config = ScheduleConfig {
        original: true,
        tile_sizes: Some(vec![4]),
        ..ScheduleConfig::default()
    };
    let (sched, _) = schedule(&scop, &deps, &config).unwrap();
    let tile_deps = tile_dependences(&scop, &deps, &sched).unwrap();
    assert_eq!(tile_deps.len(), 1, "{tile_deps:?}");
    assert_eq!((tile_deps[0].src.0, tile_deps[0].dst.0), (0, 0));
    let want = "[N] -> { N0[a] -> N0[a + 1] : a >= 0 and 4a + 5 <= N }";
    assert!(
        maps_equal(&tile_deps[0].relation, want).unwrap(),
        "{}",
        tile_deps[0].relation
    );
}

/// The consumer S1[i] reads B[N - 1 - i], written by the producer S0[N - 1 - i]. With both loops
/// tiled by 4 in the original order (two nests), tile b of the consumer waits for tile a of the
/// producer when some i has 4b <= i <= 4b + 3 and 4a <= N - 1 - i <= 4a + 3.
#[test]
fn producer_consumer_tiles() {
    let scop = common::producer_consumer();
    let deps = dependences(&scop).unwrap();
    let config = ScheduleConfig {
        original: true,
        tile_sizes: Some(vec![4]),
        ..ScheduleConfig::default()
    };
    let (sched, _) = schedule(&scop, &deps, &config).unwrap();
    let tile_deps = tile_dependences(&scop, &deps, &sched).unwrap();
    assert_eq!(tile_deps.len(), 1, "{tile_deps:?}");
    assert_eq!((tile_deps[0].src.0, tile_deps[0].dst.0), (0, 1));
    let want = "[N] -> { N0[a] -> N1[b] : exists (i : 0 <= i < N and 4b <= i <= 4b + 3 and 4a <= N - 1 - i <= 4a + 3) }";
    assert!(
        maps_equal(&tile_deps[0].relation, want).unwrap(),
        "{}",
        tile_deps[0].relation
    );

    // Through the generated code: for N = 10, consumer tile 0 (i = 0..3) reads B[9..6], written
    // by producer tiles 2 (i = 8, 9) and 1 (i = 4..7).
    let names = vec!["d0".to_string()];
    let ast = polyhedral::tile_sources_ast(&scop, &tile_deps[0], &names, "s").unwrap();
    let sources = common::run(&ast, &[("N", 10), ("d0", 0)]);
    assert_eq!(
        sources,
        vec![("N0".to_string(), vec![1]), ("N0".to_string(), vec![2])],
        "{}",
        common::show(&ast)
    );
}

/// The skewed 2-D tiles of jacobi-1d and the seidel-like stencil: every tile's sources (from the
/// generated code) are other tiles of the same nest that come lexicographically earlier, and
/// there is at least one dependence between tiles.
#[test]
fn stencil_tile_dependences_go_forward() {
    for scop in [common::jacobi_1d(), common::seidel_1d()] {
        let deps = dependences(&scop).unwrap();
        let config = ScheduleConfig {
            tile_sizes: Some(vec![4]),
            ..ScheduleConfig::default()
        };
        let (sched, _) = schedule(&scop, &deps, &config).unwrap();
        let tile_deps = tile_dependences(&scop, &deps, &sched).unwrap();
        assert!(!tile_deps.is_empty());
        let params = [("T", 9), ("N", 14)];
        let mut n_edges = 0;
        for dep in &tile_deps {
            assert_eq!((dep.src.0, dep.dst.0), (0, 0));
            for tile in common::points(&scop, &sched.nests[0].tile_domain, &params) {
                let names = vec!["d0".to_string(), "d1".to_string()];
                let ast = polyhedral::tile_sources_ast(&scop, dep, &names, "s").unwrap();
                let env = [params[0], params[1], ("d0", tile[0]), ("d1", tile[1])];
                for (_, source) in common::run(&ast, &env) {
                    assert!(source < tile, "tile {tile:?} waits for {source:?}");
                    n_edges += 1;
                }
            }
        }
        assert!(n_edges > 0);
    }
}

/// Tiles of one skewed band depend on their neighbours at a few fixed distances: the sources are
/// then one guarded call per distance, without loops (ISL's AST generator over the source set is
/// slow for such relations). The calls must name exactly the other tiles that hold a source
/// instance of a dependence, in lexicographic order.
#[test]
fn uniform_tile_dependences_give_guarded_calls() {
    fn has_loop(ast: &polyhedral::Ast) -> bool {
        match ast {
            polyhedral::Ast::For { .. } | polyhedral::Ast::Kernel(_) => true,
            polyhedral::Ast::Block(items) => items.iter().any(has_loop),
            polyhedral::Ast::If { then, els, .. } => {
                has_loop(then) || els.as_deref().is_some_and(has_loop)
            }
            polyhedral::Ast::User { .. } => false,
        }
    }
    let scop = common::jacobi_1d();
    let deps = dependences(&scop).unwrap();
    let (sched, _) = schedule(
        &scop,
        &deps,
        &ScheduleConfig {
            tile_sizes: Some(vec![4]),
            ..ScheduleConfig::default()
        },
    )
    .unwrap();
    let tile_deps = tile_dependences(&scop, &deps, &sched).unwrap();
    assert_eq!(tile_deps.len(), 1, "one nest, one tile dependence");
    let names = vec!["d0".to_string(), "d1".to_string()];
    let ast = polyhedral::tile_sources_ast(&scop, &tile_deps[0], &names, "s").unwrap();
    assert!(!has_loop(&ast), "{}", common::show(&ast));

    // Oracle: the tile of every instance (from running each tile's body) and jacobi-1d's
    // instance dependences written by hand (see `deps.rs`): S0[t, j] -> S1[t, i] and
    // S1[t, j] -> S0[t + 1, i] for |i - j| <= 1, S0[t, i] -> S0[t + 1, i], S1[t, i] -> S1[t + 1, i].
    use std::collections::{BTreeMap, BTreeSet};
    let params = [("T", 6), ("N", 11)];
    let body = polyhedral::nest_body_ast(
        &scop,
        &sched,
        polyhedral::NestId(0),
        &["k0".into(), "k1".into()],
        "c",
    )
    .unwrap();
    let mut tile_of: BTreeMap<(String, i64, i64), Vec<i64>> = BTreeMap::new();
    for tile in common::points(&scop, &sched.nests[0].tile_domain, &params) {
        let env = [params[0], params[1], ("k0", tile[0]), ("k1", tile[1])];
        for (stmt, args) in common::run(&body, &env) {
            tile_of.insert((stmt, args[0], args[1]), tile.clone());
        }
    }
    let mut want: BTreeMap<Vec<i64>, BTreeSet<Vec<i64>>> = BTreeMap::new();
    for ((stmt, t, i), dst) in &tile_of {
        let mut sources = Vec::new();
        for j in [i - 1, *i, i + 1] {
            match stmt.as_str() {
                "S1" => sources.push(("S0", *t, j)),
                _ => sources.push(("S1", t - 1, j)),
            }
        }
        sources.push((stmt.as_str(), t - 1, *i));
        for (s, u, j) in sources {
            if let Some(src) = tile_of.get(&(s.to_string(), u, j)) {
                if src != dst {
                    want.entry(dst.clone()).or_default().insert(src.clone());
                }
            }
        }
    }
    assert!(!want.is_empty());
    for dst in tile_of.values().collect::<BTreeSet<_>>() {
        let env = [params[0], params[1], ("d0", dst[0]), ("d1", dst[1])];
        let got: Vec<Vec<i64>> = common::run(&ast, &env)
            .into_iter()
            .map(|(_, s)| s)
            .collect();
        let expected: Vec<Vec<i64>> = want
            .get(dst)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default();
        assert_eq!(
            got,
            expected,
            "sources of tile {dst:?}\n{}",
            common::show(&ast)
        );
    }
}
