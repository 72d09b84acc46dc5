//! Task programs of small C examples (in `polyhedral/tests/data` and inline), with expectations
//! derived by hand: the partitions become task classes with fixed inputs, idioms, the task graph
//! and its Graphviz text.

use frontend::ir::Scop;
use polyhedral::{dependences, schedule, tile_dependences, NestId, ScheduleConfig};
use taskgen::idiom::Idiom;
use taskgen::program::{InputKind, TaskProgram};
use taskgen::task_graph;

fn parse_text(name: &str, text: &str) -> Scop {
    let (mut file, diags) =
        frontend::parse_source(name, text, &frontend::Options::default()).unwrap();
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(file.scops.len(), 1);
    file.scops.remove(0)
}

fn parse_data(file: &str) -> Scop {
    let path = format!(
        "{}/../polyhedral/tests/data/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    parse_text(file, &std::fs::read_to_string(path).unwrap())
}

/// Tiles of 4 in the source order (so the nests stay apart and the derivations are simple).
fn program(scop: &Scop) -> TaskProgram {
    let deps = dependences(scop).unwrap();
    let config = ScheduleConfig {
        original: true,
        tile_sizes: Some(vec![4]),
        ..ScheduleConfig::default()
    };
    let (sched, _) = schedule(scop, &deps, &config).unwrap();
    let tile_deps = tile_dependences(scop, &deps, &sched).unwrap();
    let prog = taskgen::build(scop, &deps, &sched, &tile_deps, taskgen::TileBodies::Plain).unwrap();
    assert_eq!(task_graph::check(&prog), Vec::<String>::new());
    prog
}

/// blur-Roberts (see polyhedral's tile_graph test for the derivation): Roberts' tiles fall into
/// four task classes by IN signature, each naming its blur tiles as "my key minus a constant":
/// no enumeration, no guard, no barrier; every dependence point-to-point between the two nests
/// (interband parallelism: a Roberts tile waits for at most four blur tiles, not for the whole
/// blur).
#[test]
fn blur_roberts_tasks_name_their_inputs_by_constant_offsets() {
    let prog = program(&parse_data("blur-roberts.c"));
    assert_eq!(prog.classes.len(), 2);
    assert!(prog.barriers.is_empty());
    assert_eq!(prog.idioms, vec![Idiom::PointToPoint; 4]);
    assert!(
        prog.classes[0]
            .partitions
            .iter()
            .all(|p| p.inputs.is_empty()),
        "the blur waits for nothing"
    );
    let roberts = &prog.classes[1];
    assert!(roberts.partitioned);
    let offsets: Vec<Vec<Vec<i64>>> = roberts
        .partitions
        .iter()
        .map(|p| {
            p.inputs
                .iter()
                .map(|i| match &i.kind {
                    InputKind::Offset(d) => d.clone(),
                    other => panic!("d{} is not an offset input: {other:?}", i.dep),
                })
                .collect()
        })
        .collect();
    // d0 = (-1, -1), d1 = (-1, 0), d2 = (0, -1), d3 = (0, 0): source = key - d.
    assert_eq!(
        offsets,
        vec![
            vec![vec![-1, -1], vec![-1, 0], vec![0, -1], vec![0, 0]],
            vec![vec![-1, 0], vec![0, 0]],
            vec![vec![0, -1], vec![0, 0]],
            vec![vec![0, 0]],
        ]
    );
    let dot = task_graph::to_dot(&prog, "blur-roberts");
    assert!(dot.starts_with("digraph \"blur-roberts\" {"), "{dot}");
    assert_eq!(dot.matches("subgraph cluster_").count(), 2, "{dot}");
    // Edges: each of the 4 Roberts classes from each blur class that feeds its dependences.
    let g = task_graph::task_graph(&prog);
    assert_eq!(g.node_count(), prog.classes[0].partitions.len() + 4);
    assert!(
        g.edge_count() >= 9,
        "at least one edge per input of the Roberts classes"
    );
    assert_eq!(dot.matches(" -> ").count(), g.edge_count());
}

/// Every element of `y` reads the first and the last element of `x`: with tiles of 4 each tile of
/// the second nest waits for the first and the last tile of the first nest, the full product of
/// two sources and every target. A soft barrier turns the 2·M edges into 2 + M.
#[test]
fn a_full_product_between_nests_becomes_a_soft_barrier() {
    let scop = parse_text(
        "ends.c",
        "void k(int N, double x[N], double y[N]) {\n#pragma scop\n  for (int i = 0; i < N; i++) x[i] = 2.0 * i;\n  for (int i = 0; i < N; i++) y[i] = x[0] + x[N - 1];\n#pragma endscop\n}\n",
    );
    let prog = program(&scop);
    let barrier: Vec<usize> = (0..prog.idioms.len())
        .filter(|&j| prog.idioms[j] == Idiom::SoftBarrier)
        .collect();
    assert_eq!(barrier.len(), 1, "{}", prog.to_text());
    assert_eq!(prog.barriers.len(), 1);
    assert_eq!(
        (prog.barriers[0].src, prog.barriers[0].dst),
        (NestId(0), NestId(1))
    );
    for p in &prog.classes[1].partitions {
        assert!(
            p.inputs.iter().all(|i| i.kind == InputKind::Barrier(0)),
            "{}",
            prog.to_text()
        );
    }
    assert!(task_graph::to_dot(&prog, "ends").contains("soft-barrier"));
}

/// One producer tile and many consumers: every element of `y` reads `x[0]` only, so every tile of
/// the second nest waits for tile 0 of the first: a broadcast, one token read by all.
#[test]
fn one_source_for_all_targets_is_a_broadcast() {
    let scop = parse_text(
        "first.c",
        "void k(int N, double x[N], double y[N]) {\n#pragma scop\n  for (int i = 0; i < N; i++) x[i] = 2.0 * i;\n  for (int i = 0; i < N; i++) y[i] = x[0];\n#pragma endscop\n}\n",
    );
    let prog = program(&scop);
    assert_eq!(prog.idioms, vec![Idiom::Broadcast], "{}", prog.to_text());
    assert!(prog.barriers.is_empty());
}

/// A nest whose tiles depend on each other only along their second dimension keeps its first
/// one parallel: its stream is spread over the threads along it. Rows that depend on the row
/// before (tiles along dimension 0 wait for each other) are spread along dimension 1, each
/// thread keeping its columns from row to row, unless the later rows have fewer columns (a
/// triangle); a nest whose tiles form a wavefront is not spread.
#[test]
fn streams_are_spread_along_their_outermost_independent_dimension() {
    let nest = |body: &str| {
        parse_text(
            "spread.c",
            &format!(
                "void f(double A[64][64]) {{\n#pragma scop\nfor (int i = 1; i < 64; i++)\n  for (int j = 1; j < 64; j++)\n    {body}\n#pragma endscop\n}}\n"
            ),
        )
    };
    let spread = |body: &str| {
        let prog = program(&nest(body));
        assert_eq!(prog.classes.len(), 1, "{body}");
        prog.classes[0].spread
    };
    assert_eq!(
        spread("A[i][j] = A[i][j - 1] + 1.0;"),
        Some(0),
        "along rows"
    );
    assert_eq!(
        spread("A[i][j] = 2.0 * A[i][j];"),
        Some(0),
        "independent tiles"
    );
    assert_eq!(
        spread("A[i][j] = A[i - 1][j] + 1.0;"),
        Some(1),
        "down columns"
    );
    assert_eq!(
        spread("A[i][j] = A[i - 1][j] + A[i][j - 1];"),
        None,
        "a wavefront"
    );
    // Down columns of a triangle: the later rows have only the right-hand blocks, which would
    // all prefer one thread.
    let triangle = parse_text(
        "spread.c",
        "void f(double A[256][256]) {\n#pragma scop\nfor (int i = 1; i < 256; i++)\n  for (int j = i; j < 256; j++)\n    A[i][j] = A[i - 1][j] + 1.0;\n#pragma endscop\n}\n",
    );
    let prog = program(&triangle);
    assert_eq!(prog.classes.len(), 1);
    assert_eq!(prog.classes[0].spread, None, "{}", prog.to_text());
}
