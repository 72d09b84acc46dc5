//! The tile graph on the paper's examples (C sources in `tests/data`), with the tilings of the
//! paper written by hand so that the expectations can be derived by hand; each test explains its
//! derivation. Beside the hand-derived facts, an independent oracle checks everything at concrete
//! sizes: the program is simulated in Rust (loops as in the C source), the tile pairs of every
//! flow, anti and output dependence are collected from the simulated accesses, and they must be
//! exactly the pairs of the numbered tile dependences; every tile's class must carry the
//! signature the oracle computes for it; every dependence dropped by transitive reduction must be
//! a path of kept ones on every tile.

mod common;

use frontend::ir::Scop;
use polyhedral::{
    dependences, tile_dependences, tile_graph, DepId, Nest, NestId, TileDep, TileGraph,
    TiledSchedule,
};
use std::collections::{BTreeMap, BTreeSet};

type Tile = (usize, Vec<i64>);
type Pairs = BTreeSet<(Tile, Tile)>;

fn parse(file: &str) -> Scop {
    let path = format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    let (mut file, diags) =
        frontend::parse_file(std::path::Path::new(&path), &frontend::Options::default()).unwrap();
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(file.scops.len(), 1);
    file.scops.remove(0)
}

/// A nest whose tiles are given by hand: `tile_map` maps statement instances to `N<k>[..]`;
/// the tile domain is its image, written with existential variables. (The intra-tile schedule
/// is not needed by the tile graph.)
fn nest(scop: &Scop, k: usize, n_dims: usize, tile_map: &str, image: &str) -> Nest {
    Nest {
        statements: scop.statements.iter().map(|s| s.id).collect(),
        tile_sizes: vec![4; n_dims],
        schedule: String::new(),
        tile_map: tile_map.to_string(),
        tile_domain: image.replace("NK", &format!("N{k}")),
        row_line: None,
        spawn_order: Vec::new(),
        row_moves: Vec::new(),
    }
}

/// Instances in sequential order: the tile each runs in, what it reads, what it writes.
struct Event {
    tile: Tile,
    reads: Vec<(char, i64, i64)>,
    writes: Vec<(char, i64, i64)>,
}

/// The tile pairs of every flow (last writer -> reader), anti (readers since the last write ->
/// writer) and output (last writer -> writer) dependence, without the pairs inside one tile;
/// and how many dependent instance pairs fell inside one tile.
fn oracle_pairs(events: &[Event]) -> (Pairs, usize) {
    let mut last_writer: BTreeMap<(char, i64, i64), Tile> = BTreeMap::new();
    let mut readers: BTreeMap<(char, i64, i64), Vec<Tile>> = BTreeMap::new();
    let mut pairs = Pairs::new();
    let mut same_tile = 0;
    let mut add = |s: &Tile, t: &Tile, pairs: &mut Pairs| {
        if s == t {
            same_tile += 1;
        } else {
            pairs.insert((s.clone(), t.clone()));
        }
    };
    for e in events {
        for r in &e.reads {
            if let Some(w) = last_writer.get(r) {
                add(w, &e.tile, &mut pairs);
            }
            readers.entry(*r).or_default().push(e.tile.clone());
        }
        for w in &e.writes {
            if let Some(prev) = last_writer.get(w) {
                add(prev, &e.tile, &mut pairs);
            }
            for r in readers.remove(w).unwrap_or_default() {
                add(&r, &e.tile, &mut pairs);
            }
            last_writer.insert(*w, e.tile.clone());
        }
    }
    (pairs, same_tile)
}

/// The tile pairs of numbered dependence `j` at `params`: each target's sources, enumerated by
/// the generated code for the relation.
fn dep_pairs(scop: &Scop, graph: &TileGraph, j: usize, params: &[(&str, i64)]) -> Pairs {
    let d = &graph.deps[j];
    let n = graph.nests[d.dst.index()].n_dims;
    let names: Vec<String> = (0..n).map(|k| format!("dd{k}")).collect();
    let dep = TileDep {
        src: d.src,
        dst: d.dst,
        relation: d.relation.clone(),
    };
    let ast = polyhedral::tile_sources_ast(scop, &dep, &names, "ss").unwrap();
    let mut pairs = Pairs::new();
    for t in common::points(scop, &d.targets, params) {
        let mut env: Vec<(&str, i64)> = params.to_vec();
        env.extend(names.iter().map(|s| s.as_str()).zip(t.iter().copied()));
        for (_, s) in common::run(&ast, &env) {
            if let Some(dist) = &d.distance {
                let expect: Vec<i64> = t.iter().zip(dist).map(|(a, b)| a - b).collect();
                assert_eq!(s, expect, "d{j} is uniform with distance {dist:?}");
            }
            pairs.insert(((d.src.index(), s), (d.dst.index(), t.clone())));
        }
    }
    pairs
}

/// Checks the tile graph against the oracle at `params`; returns the pairs of each numbered
/// dependence and the number of dependent instance pairs inside one tile.
fn check_against_oracle(
    scop: &Scop,
    graph: &TileGraph,
    events: &[Event],
    params: &[(&str, i64)],
) -> (Vec<Pairs>, usize) {
    let (truth, same_tile) = oracle_pairs(events);
    let per_dep: Vec<Pairs> = (0..graph.deps.len())
        .map(|j| dep_pairs(scop, graph, j, params))
        .collect();
    let all: Pairs = per_dep.iter().flatten().cloned().collect();
    assert_eq!(
        all, truth,
        "the numbered tile dependences are exactly the oracle's tile pairs"
    );
    // Uniform pieces of one relation are disjoint.
    let total: usize = per_dep.iter().map(|p| p.len()).sum();
    assert_eq!(total, all.len(), "numbered dependences overlap");

    // Transitive reduction: every pair of a dropped dependence is a path of kept ones.
    let mut succ: BTreeMap<Tile, Vec<Tile>> = BTreeMap::new();
    for (j, pairs) in per_dep.iter().enumerate() {
        if graph.deps[j].implied_by.is_none() {
            for (s, t) in pairs {
                succ.entry(s.clone()).or_default().push(t.clone());
            }
        }
    }
    for (j, pairs) in per_dep.iter().enumerate() {
        if graph.deps[j].implied_by.is_some() {
            for (s, t) in pairs {
                assert!(
                    reaches(&succ, s, t),
                    "d{j}: {s:?} -> {t:?} is not implied by kept dependences"
                );
            }
        }
    }

    // Partition: each tile is in exactly one class, whose signature is the tile's.
    for (k, nest) in graph.nests.iter().enumerate() {
        let classes = nest.partition.as_ref().expect("partitioned");
        let mut class_of: BTreeMap<Vec<i64>, usize> = BTreeMap::new();
        for (c, class) in classes.iter().enumerate() {
            for p in common::points(scop, &class.domain, params) {
                assert!(
                    class_of.insert(p.clone(), c).is_none(),
                    "N{k}{p:?} is in two classes"
                );
            }
        }
        let tiles = common::points(scop, &nest.domain, params);
        assert_eq!(
            tiles.len(),
            class_of.len(),
            "the classes of N{k} cover its tiles and nothing else"
        );
        for t in tiles {
            let tile = (k, t.clone());
            let ins: Vec<DepId> = graph
                .kept()
                .filter(|(j, _)| per_dep[j.index()].iter().any(|(_, x)| *x == tile))
                .map(|(j, _)| j)
                .collect();
            let outs: Vec<DepId> = graph
                .kept()
                .filter(|(j, _)| per_dep[j.index()].iter().any(|(x, _)| *x == tile))
                .map(|(j, _)| j)
                .collect();
            let class = &classes[class_of[&t]];
            assert_eq!(
                (&class.signature.ins, &class.signature.outs),
                (&ins, &outs),
                "signature of N{k}{t:?}"
            );
        }
    }
    (per_dep, same_tile)
}

fn reaches(succ: &BTreeMap<Tile, Vec<Tile>>, from: &Tile, to: &Tile) -> bool {
    let mut stack = vec![from.clone()];
    let mut seen = BTreeSet::new();
    while let Some(x) = stack.pop() {
        if &x == to {
            return true;
        }
        if seen.insert(x.clone()) {
            stack.extend(succ.get(&x).into_iter().flatten().cloned());
        }
    }
    false
}

fn distances(graph: &TileGraph) -> Vec<Vec<i64>> {
    graph
        .deps
        .iter()
        .map(|d| d.distance.clone().expect("uniform"))
        .collect()
}

/// jacobi-2d with the paper's time tiling: S0 (writes B) at (t, 2t + i, 2t + j) and S1 (writes A)
/// at (t, 2t + i + 1, 2t + j + 1), tiles of 4 x 4 x 4.
///
/// By hand: the statement dependences (flow S0 -> S1 and S1 -> S0, anti S0 -> S1 and S1 -> S0,
/// output S0 -> S0 and S1 -> S1, one per stencil offset) have distances in the skewed space
/// (0, 1 - di, 1 - dj) within a time step (5-point offsets (di, dj)), (1, 1 - di, 1 - dj) and
/// (1, 1 + di, 1 + dj) across one, and (1, 2, 2) for the outputs: every component is 0, 1 or 2,
/// so the band is permutable and a pair of instances lands in tiles whose distance w has
/// w_k in {0, 1}, and w_k = 1 only where the statement distance is positive. (1, 1, 1) alone
/// reaches every vector of {0, 1}^3, so the tile dependences are the seven non-zero vectors
/// of {0, 1}^3, each uniform (one relation N0 -> N0, split by distance), and the zero vector
/// (pairs inside a tile) is gone. Transitive reduction cannot drop a unit vector (a sum of two
/// non-zero vectors of {0, 1}^3 has two ones or a two), so (0, 0, 1), (0, 1, 0) and (1, 0, 0)
/// are kept. Of the others, the paper keeps 4 tile dependences; which of the sums are implied on
/// every tile depends on the borders, so that part is checked by the oracle, and the count 4
/// by an exact transitive reduction of the concrete tile graph.
#[test]
fn jacobi_2d_has_seven_uniform_tile_dependences_and_keeps_four() {
    let scop = parse("jacobi-2d.c");
    let deps = dependences(&scop).unwrap();
    let map = "[T, N] -> { S0[t, i, j] -> N0[floor(t/4), floor((2t + i)/4), floor((2t + j)/4)]; \
               S1[t, i, j] -> N0[floor(t/4), floor((2t + i + 1)/4), floor((2t + j + 1)/4)] }";
    let image = "[T, N] -> { NK[a, b, c] : exists (t, i, j : 0 <= t < T and 1 <= i <= N - 2 and 1 <= j <= N - 2 and \
                 ((4a <= t <= 4a + 3 and 4b <= 2t + i <= 4b + 3 and 4c <= 2t + j <= 4c + 3) or \
                  (4a <= t <= 4a + 3 and 4b <= 2t + i + 1 <= 4b + 3 and 4c <= 2t + j + 1 <= 4c + 3))) }";
    let sched = TiledSchedule {
        tree: String::new(),
        nests: vec![nest(&scop, 0, 3, map, image)],
    };
    let tile_deps = tile_dependences(&scop, &deps, &sched).unwrap();
    assert_eq!(tile_deps.len(), 1, "one relation N0 -> N0");
    let graph = tile_graph(&scop, &sched, &tile_deps).unwrap();
    let want: Vec<Vec<i64>> = vec![
        vec![0, 0, 1],
        vec![0, 1, 0],
        vec![0, 1, 1],
        vec![1, 0, 0],
        vec![1, 0, 1],
        vec![1, 1, 0],
        vec![1, 1, 1],
    ];
    assert_eq!(distances(&graph), want);
    for unit in [0, 1, 3] {
        assert_eq!(
            graph.deps[unit].implied_by, None,
            "d{unit} {:?} is a unit vector",
            want[unit]
        );
    }
    assert!(
        graph.deps.iter().all(|d| !d.shape.product),
        "uniform dependences with many tiles are no products"
    );
    // Both statements are three loops deep: both lead (the union rule), no follower.
    assert_eq!(graph.nests[0].leading.len(), 2);

    // The paper's 4 (found by ISL; the oracle below proves every dropped one implied on every
    // tile): (1, 1, 0) = (1, 0, 0) + (0, 1, 0) and (1, 0, 1) = (1, 0, 0) + (0, 0, 1) everywhere;
    // (1, 1, 1) = (1, 0, 0) + (0, 1, 1) inside, and on the border tiles where that path is
    // missing, (1, 1, 0) + (0, 0, 1) or (1, 0, 1) + (0, 1, 0) (through dependences that are
    // dropped themselves). (0, 1, 1) stays for the sizes where some tile has no other path
    // (N = 11 below). Dropping it only where it is implied (partial reduction, not done: see
    // the module doc of `polyhedral::tile_graph`) would still leave these four dependences,
    // (0, 1, 1) on the corner tiles only.
    let kept: Vec<Vec<i64>> = graph
        .kept()
        .map(|(_, d)| d.distance.clone().unwrap())
        .collect();
    assert_eq!(
        kept,
        vec![vec![0, 0, 1], vec![0, 1, 0], vec![0, 1, 1], vec![1, 0, 0]]
    );

    let tile =
        |t: i64, x: i64, y: i64| (0, vec![t.div_euclid(4), x.div_euclid(4), y.div_euclid(4)]);
    let mut needed: BTreeSet<Vec<i64>> = BTreeSet::new();
    for (t, n) in [(9, 12), (5, 11)] {
        let params = [("T", t), ("N", n)];
        let mut events = Vec::new();
        for tt in 0..t {
            for i in 1..n - 1 {
                for j in 1..n - 1 {
                    let reads = vec![
                        ('A', i, j),
                        ('A', i, j - 1),
                        ('A', i, j + 1),
                        ('A', i + 1, j),
                        ('A', i - 1, j),
                    ];
                    events.push(Event {
                        tile: tile(tt, 2 * tt + i, 2 * tt + j),
                        reads,
                        writes: vec![('B', i, j)],
                    });
                }
            }
            for i in 1..n - 1 {
                for j in 1..n - 1 {
                    let reads = vec![
                        ('B', i, j),
                        ('B', i, j - 1),
                        ('B', i, j + 1),
                        ('B', i + 1, j),
                        ('B', i - 1, j),
                    ];
                    let at = tile(tt, 2 * tt + i + 1, 2 * tt + j + 1);
                    events.push(Event {
                        tile: at,
                        reads,
                        writes: vec![('A', i, j)],
                    });
                }
            }
        }
        let (per_dep, same_tile) = check_against_oracle(&scop, &graph, &events, &params);
        assert!(
            same_tile > 0,
            "dependences inside tiles exist and were removed"
        );
        // Independently: the exact transitive reduction of the concrete graph (the pairs that no
        // longer path connects); its distances must all be kept.
        let mut succ: BTreeMap<Tile, Vec<Tile>> = BTreeMap::new();
        let mut pred: BTreeMap<Tile, BTreeSet<Tile>> = BTreeMap::new();
        for (s, x) in per_dep.iter().flatten() {
            succ.entry(s.clone()).or_default().push(x.clone());
            pred.entry(x.clone()).or_default().insert(s.clone());
        }
        for (s, x) in per_dep.iter().flatten() {
            if !succ[s].iter().any(|m| m != x && reaches(&succ, m, x)) {
                needed.insert(x.1.iter().zip(&s.1).map(|(a, b)| a - b).collect());
            }
        }
        if n == 11 {
            // By hand: tile (0, 4, 4) holds one instance, S1(3, 9, 9) (skewed (3, 16, 16)). What
            // it depends on, B[9][9], B[8][9] and B[9][8] written by S0 at t = 3 (skewed
            // (3, 15, 15), (3, 14, 15), (3, 15, 14)), A[9][9] written by S1 at t = 2 (skewed
            // (2, 14, 14)) and read by those three S0 instances, all lies in tile (0, 3, 3): its
            // only predecessor, so the pair (0, 3, 3) -> (0, 4, 4) of (0, 1, 1) is on no longer
            // path.
            let corner = (0, vec![0, 4, 4]);
            assert_eq!(pred[&corner], BTreeSet::from([(0, vec![0, 3, 3])]));
        }
    }
    // Over both sizes the four kept distances are all needed: none could be dropped.
    assert_eq!(needed.into_iter().collect::<Vec<_>>(), kept);
    let classes = graph.nests[0].partition.as_ref().unwrap();
    // The interior tiles wait for every kept dependence and feed every one.
    let all: Vec<DepId> = graph.kept().map(|(j, _)| j).collect();
    assert!(
        classes
            .iter()
            .any(|c| c.signature.ins == all && c.signature.outs == all),
        "an interior class"
    );
    // The first tile waits for nothing.
    assert!(classes.iter().any(|c| c.signature.ins.is_empty()));
}

/// seidel-2d with PLuTo's tiling: S0 at (t, t + i, 2t + i + j), tiles of 4 x 4 x 4.
///
/// By hand: in the skewed space the statement distances are (0, di, di + dj) for the neighbours
/// updated earlier in the same step ((di, dj) in (1, -1), (1, 0), (1, 1), (0, 1): (0, 1, 0),
/// (0, 1, 1), (0, 1, 2), (0, 0, 1)) and (1, 1 + di, 2 + di + dj) for those of the previous step
/// (di, dj in -1..1 with (di, dj) >= (0, 0) in the order of the loops... all of them non-negative,
/// among them (1, 1, 1)); so as for jacobi-2d the tile distances are the seven non-zero vectors
/// of {0, 1}^3. Every instance also reads and writes A[i][j] itself, and most neighbours lie in
/// the same tile: those dependences (distance 0 between tiles) are removed.
#[test]
fn seidel_2d_loses_its_same_tile_dependences() {
    let scop = parse("seidel-2d.c");
    let deps = dependences(&scop).unwrap();
    let map =
        "[T, N] -> { S0[t, i, j] -> N0[floor(t/4), floor((t + i)/4), floor((2t + i + j)/4)] }";
    let image = "[T, N] -> { NK[a, b, c] : exists (t, i, j : 0 <= t < T and 1 <= i <= N - 2 and 1 <= j <= N - 2 and \
                 4a <= t <= 4a + 3 and 4b <= t + i <= 4b + 3 and 4c <= 2t + i + j <= 4c + 3) }";
    let sched = TiledSchedule {
        tree: String::new(),
        nests: vec![nest(&scop, 0, 3, map, image)],
    };
    let tile_deps = tile_dependences(&scop, &deps, &sched).unwrap();
    let graph = tile_graph(&scop, &sched, &tile_deps).unwrap();
    let want: Vec<Vec<i64>> = vec![
        vec![0, 0, 1],
        vec![0, 1, 0],
        vec![0, 1, 1],
        vec![1, 0, 0],
        vec![1, 0, 1],
        vec![1, 1, 0],
        vec![1, 1, 1],
    ];
    assert_eq!(distances(&graph), want);
    assert!(
        graph.deps.iter().all(|d| d
            .distance
            .as_ref()
            .is_some_and(|v| v.iter().any(|&x| x != 0))),
        "no same-tile dependence"
    );

    let (t, n): (i64, i64) = (6, 11);
    let params = [("T", t), ("N", n)];
    let mut events = Vec::new();
    for tt in 0..t {
        for i in 1..=n - 2 {
            for j in 1..=n - 2 {
                let mut reads = Vec::new();
                for di in -1..=1 {
                    for dj in -1..=1 {
                        reads.push(('A', i + di, j + dj));
                    }
                }
                let tile = (
                    0,
                    vec![
                        tt.div_euclid(4),
                        (tt + i).div_euclid(4),
                        (2 * tt + i + j).div_euclid(4),
                    ],
                );
                events.push(Event {
                    tile,
                    reads,
                    writes: vec![('A', i, j)],
                });
            }
        }
    }
    let (per_dep, same_tile) = check_against_oracle(&scop, &graph, &events, &params);
    assert!(
        same_tile > 0,
        "dependences inside tiles exist and were removed"
    );

    // Dynamic wavefront without skewing the tile loops: two tiles of the band that do not wait
    // for each other, even transitively, so they may run at once.
    let mut succ: BTreeMap<Tile, Vec<Tile>> = BTreeMap::new();
    for (j, pairs) in per_dep.iter().enumerate() {
        if graph.deps[j].implied_by.is_none() {
            for (s, x) in pairs {
                succ.entry(s.clone()).or_default().push(x.clone());
            }
        }
    }
    let tiles: Vec<Tile> = common::points(&scop, &graph.nests[0].domain, &params)
        .into_iter()
        .map(|p| (0, p))
        .collect();
    let independent = tiles.iter().any(|a| {
        tiles
            .iter()
            .any(|b| a != b && !reaches(&succ, a, b) && !reaches(&succ, b, a))
    });
    assert!(independent, "some tiles of the band are independent");
}

/// blur-Roberts, both nests in the source order, tiles of 4 x 4 (each nest its own band).
///
/// By hand: the blur (S0, nest N0) writes B[i][j] for 1 <= i, j <= N - 2; Roberts (S1, nest N1)
/// at (i, j), 1 <= i, j <= N - 3, reads B[i + e][j + f] for e, f in {0, 1}: four flow
/// dependences between the same two nodes, which become one tile relation N0 -> N1. Tile
/// N1[a, b] reads B in rows 4a .. 4a + 4 of N0's tiles a and, when its last row 4a + 3 is a row
/// of Roberts (4a + 3 <= N - 3), a + 1; the same for columns. Uniformization gives four
/// interband point-to-point dependences, distances t - s in {0, -1}^2, numbered in increasing
/// order: d0 = (-1, -1), d1 = (-1, 0), d2 = (0, -1), d3 = (0, 0). Neither nest depends on itself.
/// So the tiles of N1 fall into four classes: IN {d0, d1, d2, d3} (row and column inner),
/// {d1, d3} (row inner, last column), {d2, d3} (last row, column inner), {d3} (the last corner);
/// for N = 13 Roberts' rows are 1..10, tile rows 0, 1, 2, and row 2 is last (11 > 10).
#[test]
fn blur_roberts_has_four_interband_point_to_point_dependences() {
    let scop = parse("blur-roberts.c");
    let deps = dependences(&scop).unwrap();
    let config = polyhedral::ScheduleConfig {
        original: true,
        tile_sizes: Some(vec![4]),
        ..Default::default()
    };
    let (sched, _) = polyhedral::schedule(&scop, &deps, &config).unwrap();
    assert_eq!(sched.nests.len(), 2, "two nests in the source order");
    let tile_deps = tile_dependences(&scop, &deps, &sched).unwrap();
    assert_eq!(
        tile_deps.iter().map(|d| (d.src, d.dst)).collect::<Vec<_>>(),
        vec![(NestId(0), NestId(1))]
    );
    let graph = tile_graph(&scop, &sched, &tile_deps).unwrap();
    assert_eq!(
        distances(&graph),
        vec![vec![-1, -1], vec![-1, 0], vec![0, -1], vec![0, 0]]
    );
    assert!(graph
        .deps
        .iter()
        .all(|d| (d.src, d.dst) == (NestId(0), NestId(1)) && d.implied_by.is_none()));
    assert!(
        graph
            .deps
            .iter()
            .all(|d| !d.shape.product && !d.shape.one_source),
        "point-to-point, not broadcast or barrier"
    );

    let n: i64 = 13;
    let params = [("N", n)];
    let mut events = Vec::new();
    for i in 1..n - 1 {
        for j in 1..n - 1 {
            let reads = vec![
                ('A', i - 1, j),
                ('A', i, j - 1),
                ('A', i, j),
                ('A', i, j + 1),
                ('A', i + 1, j),
            ];
            events.push(Event {
                tile: (0, vec![i / 4, j / 4]),
                reads,
                writes: vec![('B', i, j)],
            });
        }
    }
    for i in 1..n - 2 {
        for j in 1..n - 2 {
            let reads = vec![
                ('B', i, j),
                ('B', i + 1, j + 1),
                ('B', i + 1, j),
                ('B', i, j + 1),
            ];
            events.push(Event {
                tile: (1, vec![i / 4, j / 4]),
                reads,
                writes: vec![('C', i, j)],
            });
        }
    }
    let (_, same_tile) = check_against_oracle(&scop, &graph, &events, &params);
    assert_eq!(same_tile, 0, "between two nests no pair is inside one tile");
    let classes = graph.nests[1].partition.as_ref().unwrap();
    let ins: Vec<Vec<u32>> = classes
        .iter()
        .map(|c| c.signature.ins.iter().map(|j| j.0).collect())
        .collect();
    assert_eq!(ins, vec![vec![0, 1, 2, 3], vec![1, 3], vec![2, 3], vec![3]]);
    let class_of = |p: Vec<i64>| {
        classes
            .iter()
            .position(|c| common::points(&scop, &c.domain, &params).contains(&p))
            .unwrap()
    };
    assert_eq!(ins[class_of(vec![0, 0])], vec![0, 1, 2, 3]);
    assert_eq!(ins[class_of(vec![0, 2])], vec![1, 3], "last column");
    assert_eq!(ins[class_of(vec![2, 0])], vec![2, 3], "last row");
    assert_eq!(ins[class_of(vec![2, 2])], vec![3], "last corner");
    // The blur waits for nothing.
    assert!(graph.nests[0]
        .partition
        .as_ref()
        .unwrap()
        .iter()
        .all(|c| c.signature.ins.is_empty()));
}
