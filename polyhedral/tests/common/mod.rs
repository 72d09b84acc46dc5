//! Test helpers: SCoPs written by hand, and an interpreter for the plain `Ast` that serves as an
//! independent oracle for generated code.
#![allow(dead_code)]

use frontend::ir::{
    Access, AccessKind, Array, ArrayId, Loc, Param, Scop, Span, Statement, StmtId, Storage,
};
use polyhedral::{Ast, Expr, NestId, OpKind};
use std::collections::HashMap;

/// A read (`true`) or write access to array `array` (an index into the SCoP's arrays).
pub fn access(write: bool, array: u32, relation: &str) -> Access {
    Access {
        kind: if write {
            AccessKind::Write
        } else {
            AccessKind::Read
        },
        array: ArrayId(array),
        relation: relation.to_string(),
    }
}

pub fn stmt(
    id: u32,
    iterators: &[&str],
    domain: &str,
    schedule: &str,
    accesses: Vec<Access>,
) -> Statement {
    Statement {
        id: StmtId(id),
        iterators: iterators.iter().map(|s| s.to_string()).collect(),
        domain: domain.to_string(),
        schedule: schedule.to_string(),
        accesses,
        body: Vec::new(),
        span: Span { start: 0, end: 0 },
        loc: Loc::default(),
    }
}

/// A SCoP with integer parameters `params`, the context `context` and arrays `(name, rank)`.
pub fn scop(
    params: &[&str],
    context: &str,
    arrays: &[(&str, usize)],
    statements: Vec<Statement>,
) -> Scop {
    Scop {
        function: "kernel".into(),
        region: Span { start: 0, end: 0 },
        insert_at: 0,
        loc: Loc::default(),
        params: params
            .iter()
            .map(|p| Param {
                name: p.to_string(),
                c_type: "int".into(),
                storage: Storage::Local,
            })
            .collect(),
        context: context.to_string(),
        arrays: arrays
            .iter()
            .enumerate()
            .map(|(k, (name, rank))| Array {
                id: ArrayId(k as u32),
                name: name.to_string(),
                isl_name: name.to_string(),
                elem_type: "double".into(),
                rank: *rank,
                extents: vec![None; *rank],
                storage: Storage::Local,
                written: true,
            })
            .collect(),
        statements,
        macros: Vec::new(),
        undefined_macros: Vec::new(),
    }
}

/// jacobi-1d:
/// ```c
/// for (t = 0; t < T; t++) {
///   for (i = 1; i < N - 1; i++) B[i] = (A[i-1] + A[i] + A[i+1]) / 3;   // S0
///   for (i = 1; i < N - 1; i++) A[i] = (B[i-1] + B[i] + B[i+1]) / 3;   // S1
/// }
/// ```
pub fn jacobi_1d() -> Scop {
    let dom = |s: &str| format!("[T, N] -> {{ {s}[t, i] : 0 <= t < T and 1 <= i <= N - 2 }}");
    scop(
        &["T", "N"],
        "[T, N] -> { : T >= 0 and N >= 0 }",
        &[("A", 1), ("B", 1)],
        vec![
            stmt(
                0,
                &["t", "i"],
                &dom("S0"),
                "[T, N] -> { S0[t, i] -> [0, t, 0, i, 0] }",
                vec![
                    access(false, 0, "[T, N] -> { S0[t, i] -> A[i - 1] }"),
                    access(false, 0, "[T, N] -> { S0[t, i] -> A[i] }"),
                    access(false, 0, "[T, N] -> { S0[t, i] -> A[i + 1] }"),
                    access(true, 1, "[T, N] -> { S0[t, i] -> B[i] }"),
                ],
            ),
            stmt(
                1,
                &["t", "i"],
                &dom("S1"),
                "[T, N] -> { S1[t, i] -> [0, t, 1, i, 0] }",
                vec![
                    access(false, 1, "[T, N] -> { S1[t, i] -> B[i - 1] }"),
                    access(false, 1, "[T, N] -> { S1[t, i] -> B[i] }"),
                    access(false, 1, "[T, N] -> { S1[t, i] -> B[i + 1] }"),
                    access(true, 0, "[T, N] -> { S1[t, i] -> A[i] }"),
                ],
            ),
        ],
    )
}

/// A seidel-like in-place stencil:
/// ```c
/// for (t = 0; t < T; t++)
///   for (i = 1; i < N - 1; i++) A[i] = (A[i-1] + A[i] + A[i+1]) / 3;   // S0
/// ```
pub fn seidel_1d() -> Scop {
    scop(
        &["T", "N"],
        "[T, N] -> { : T >= 0 and N >= 0 }",
        &[("A", 1)],
        vec![stmt(
            0,
            &["t", "i"],
            "[T, N] -> { S0[t, i] : 0 <= t < T and 1 <= i <= N - 2 }",
            "[T, N] -> { S0[t, i] -> [0, t, 0, i, 0] }",
            vec![
                access(false, 0, "[T, N] -> { S0[t, i] -> A[i - 1] }"),
                access(false, 0, "[T, N] -> { S0[t, i] -> A[i] }"),
                access(false, 0, "[T, N] -> { S0[t, i] -> A[i + 1] }"),
                access(true, 0, "[T, N] -> { S0[t, i] -> A[i] }"),
            ],
        )],
    )
}

/// A 2-D loop without dependences between iterations:
/// ```c
/// for (i = 0; i < N; i++) for (j = 0; j < M; j++) C[i][j] = C[i][j] * 2;   // S0
/// ```
pub fn scale_2d() -> Scop {
    scop(
        &["N", "M"],
        "[N, M] -> { : N >= 0 and M >= 0 }",
        &[("C", 2)],
        vec![stmt(
            0,
            &["i", "j"],
            "[N, M] -> { S0[i, j] : 0 <= i < N and 0 <= j < M }",
            "[N, M] -> { S0[i, j] -> [0, i, 0, j, 0] }",
            vec![
                access(false, 0, "[N, M] -> { S0[i, j] -> C[i, j] }"),
                access(true, 0, "[N, M] -> { S0[i, j] -> C[i, j] }"),
            ],
        )],
    )
}

/// One visited user node: its name and evaluated arguments.
pub type Visit = (String, Vec<i64>);

/// Runs `ast` with the given values of parameters and returns the user nodes in execution order.
/// Panics on a malformed AST (unknown identifier, wrong arity): this is a test oracle.
pub fn run(ast: &Ast, params: &[(&str, i64)]) -> Vec<Visit> {
    let mut env: HashMap<String, i64> = params.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let mut out = Vec::new();
    exec(ast, &mut env, &mut out);
    out
}

fn exec(ast: &Ast, env: &mut HashMap<String, i64>, out: &mut Vec<Visit>) {
    match ast {
        Ast::Block(items) => items.iter().for_each(|a| exec(a, env, out)),
        // The kernel's instances are its fallback's, in another order.
        Ast::Kernel(k) => exec(&k.fallback, env, out),
        Ast::For {
            iter,
            init,
            cond,
            inc,
            body,
        } => {
            assert!(!env.contains_key(iter), "iterator {iter} shadows a name");
            let mut v = eval(init, env);
            let step = eval(inc, env);
            assert!(step > 0, "non-positive loop step");
            loop {
                env.insert(iter.clone(), v);
                if eval(cond, env) == 0 {
                    break;
                }
                exec(body, env, out);
                v += step;
                assert!(out.len() < 1_000_000, "runaway loop");
            }
            env.remove(iter);
        }
        Ast::If { cond, then, els } => {
            if eval(cond, env) != 0 {
                exec(then, env, out);
            } else if let Some(e) = els {
                exec(e, env, out);
            }
        }
        // The printers' markers (`tf_scalar_loop`, `tf_row_lanes`, `tf_row_steps`) run nothing.
        Ast::User { name, .. } if name.starts_with("tf_") => {}
        Ast::User { name, args } => {
            out.push((name.clone(), args.iter().map(|a| eval(a, env)).collect()))
        }
    }
}

pub fn eval(e: &Expr, env: &HashMap<String, i64>) -> i64 {
    match e {
        Expr::Int(v) => v.parse().expect("integer literal"),
        Expr::Id(name) => *env
            .get(name)
            .unwrap_or_else(|| panic!("unknown identifier {name}")),
        Expr::Op(op, args) => {
            let a = |k: usize| eval(&args[k], env);
            let n = args.len();
            let b = |x: bool| x as i64;
            match op {
                OpKind::And | OpKind::AndThen => {
                    assert_eq!(n, 2);
                    b(a(0) != 0 && a(1) != 0)
                }
                OpKind::Or | OpKind::OrElse => {
                    assert_eq!(n, 2);
                    b(a(0) != 0 || a(1) != 0)
                }
                OpKind::Max => (0..n).map(a).max().expect("max of nothing"),
                OpKind::Min => (0..n).map(a).min().expect("min of nothing"),
                OpKind::Minus => {
                    assert_eq!(n, 1);
                    -a(0)
                }
                OpKind::Add => a(0) + a(1),
                OpKind::Sub => a(0) - a(1),
                OpKind::Mul => a(0) * a(1),
                OpKind::Div => {
                    assert_eq!(a(0) % a(1), 0, "inexact Div");
                    a(0) / a(1)
                }
                OpKind::FdivQ => {
                    a(0).div_euclid(a(1))
                        - if a(1) < 0 && a(0).rem_euclid(a(1)) != 0 {
                            1
                        } else {
                            0
                        }
                }
                OpKind::PdivQ => {
                    assert!(a(0) >= 0, "PdivQ of a negative dividend");
                    a(0) / a(1)
                }
                OpKind::PdivR => {
                    assert!(a(0) >= 0, "PdivR of a negative dividend");
                    a(0) % a(1)
                }
                OpKind::ZdivR => a(0) % a(1),
                OpKind::Cond | OpKind::Select => {
                    if a(0) != 0 {
                        a(1)
                    } else {
                        a(2)
                    }
                }
                OpKind::Eq => b(a(0) == a(1)),
                OpKind::Le => b(a(0) <= a(1)),
                OpKind::Lt => b(a(0) < a(1)),
                OpKind::Ge => b(a(0) >= a(1)),
                OpKind::Gt => b(a(0) > a(1)),
            }
        }
    }
}

/// C-like text of an `Ast`, for failure messages.
pub fn show(ast: &Ast) -> String {
    let mut s = String::new();
    show_into(ast, 0, &mut s);
    s
}

fn show_into(ast: &Ast, depth: usize, s: &mut String) {
    let pad = "  ".repeat(depth);
    match ast {
        Ast::Block(items) => items.iter().for_each(|a| show_into(a, depth, s)),
        Ast::Kernel(k) => {
            s.push_str(&format!("{pad}kernel {}, else\n", k.stmt));
            show_into(&k.fallback, depth + 1, s);
        }
        Ast::For {
            iter,
            init,
            cond,
            inc,
            body,
        } => {
            s.push_str(&format!(
                "{pad}for ({iter} = {}; {}; {iter} += {})\n",
                show_expr(init),
                show_expr(cond),
                show_expr(inc)
            ));
            show_into(body, depth + 1, s);
        }
        Ast::If { cond, then, els } => {
            s.push_str(&format!("{pad}if ({})\n", show_expr(cond)));
            show_into(then, depth + 1, s);
            if let Some(e) = els {
                s.push_str(&format!("{pad}else\n"));
                show_into(e, depth + 1, s);
            }
        }
        Ast::User { name, args } => {
            let args: Vec<String> = args.iter().map(show_expr).collect();
            s.push_str(&format!("{pad}{name}({});\n", args.join(", ")));
        }
    }
}

pub fn show_expr(e: &Expr) -> String {
    match e {
        Expr::Int(v) => v.clone(),
        Expr::Id(n) => n.clone(),
        Expr::Op(op, args) => {
            let args: Vec<String> = args.iter().map(show_expr).collect();
            format!("{op:?}({})", args.join(", "))
        }
    }
}

/// Producer then consumer reading in reverse:
/// ```c
/// for (i = 0; i < N; i++) B[i] = A[i] * 2;          // S0
/// for (i = 0; i < N; i++) C[i] = B[N - 1 - i] + 1;  // S1
/// ```
pub fn producer_consumer() -> Scop {
    scop(
        &["N"],
        "[N] -> { : N >= 0 }",
        &[("A", 1), ("B", 1), ("C", 1)],
        vec![
            stmt(
                0,
                &["i"],
                "[N] -> { S0[i] : 0 <= i < N }",
                "[N] -> { S0[i] -> [0, i, 0] }",
                vec![
                    access(false, 0, "[N] -> { S0[i] -> A[i] }"),
                    access(true, 1, "[N] -> { S0[i] -> B[i] }"),
                ],
            ),
            stmt(
                1,
                &["i"],
                "[N] -> { S1[i] : 0 <= i < N }",
                "[N] -> { S1[i] -> [1, i, 0] }",
                vec![
                    access(false, 1, "[N] -> { S1[i] -> B[N - 1 - i] }"),
                    access(true, 2, "[N] -> { S1[i] -> C[i] }"),
                ],
            ),
        ],
    )
}

/// A 1-D recurrence: `for (i = 1; i < N; i++) A[i] = A[i - 1] + 1;   // S0`
pub fn recurrence_1d() -> Scop {
    scop(
        &["N"],
        "[N] -> { : N >= 0 }",
        &[("A", 1)],
        vec![stmt(
            0,
            &["i"],
            "[N] -> { S0[i] : 1 <= i < N }",
            "[N] -> { S0[i] -> [0, i, 0] }",
            vec![
                access(false, 0, "[N] -> { S0[i] -> A[i - 1] }"),
                access(true, 0, "[N] -> { S0[i] -> A[i] }"),
            ],
        )],
    )
}

/// Coordinates of every point `points_ast` enumerates for `set` at `params`.
pub fn points(scop: &Scop, set: &str, params: &[(&str, i64)]) -> Vec<Vec<i64>> {
    let ast = polyhedral::points_ast(scop, set, "c").unwrap();
    run(&ast, params)
        .into_iter()
        .map(|(_, args)| args)
        .collect()
}

/// Executes the tiled program the way the dataflow runtime would: every tile of every nest runs
/// once, atomically, in a pseudo-random order in which a tile starts only after all the tiles
/// `tile_sources_ast` names for it. `exec` receives every statement instance. Checks on the way
/// that no tile waits for itself and that every source tile exists.
pub fn run_tiled(
    scop: &Scop,
    sched: &polyhedral::TiledSchedule,
    tile_deps: &[polyhedral::TileDep],
    params: &[(&str, i64)],
    seed: u64,
    mut exec: impl FnMut(&str, &[i64]),
) {
    use std::collections::{BTreeMap, BTreeSet};
    type Tile = (usize, Vec<i64>);
    let mut tiles: Vec<Tile> = Vec::new();
    for (k, nest) in sched.nests.iter().enumerate() {
        for coords in points(scop, &nest.tile_domain, params) {
            tiles.push((k, coords));
        }
    }
    let all: BTreeSet<Tile> = tiles.iter().cloned().collect();
    assert_eq!(all.len(), tiles.len(), "a tile is enumerated twice");
    // The generated code is parametric in the tile coordinates: build it once per nest and dependence.
    let coord_names = |prefix: &str, n: usize| -> Vec<String> {
        (0..n).map(|k| format!("{prefix}{k}")).collect()
    };
    let n_dims: Vec<usize> = sched.nests.iter().map(|n| n.tile_sizes.len()).collect();
    let source_asts: Vec<Ast> = tile_deps
        .iter()
        .map(|dep| {
            polyhedral::tile_sources_ast(
                scop,
                dep,
                &coord_names("dst", n_dims[dep.dst.index()]),
                "s",
            )
            .unwrap()
        })
        .collect();
    let bodies: Vec<Ast> = (0..sched.nests.len())
        .map(|k| {
            polyhedral::nest_body_ast(
                scop,
                sched,
                NestId::new(k),
                &coord_names("tf", n_dims[k]),
                "c",
            )
            .unwrap()
        })
        .collect();
    let mut waits_for: BTreeMap<Tile, BTreeSet<Tile>> = BTreeMap::new();
    for tile in &tiles {
        let mut sources = BTreeSet::new();
        for (dep, ast) in tile_deps
            .iter()
            .zip(&source_asts)
            .filter(|(d, _)| d.dst.index() == tile.0)
        {
            let names = coord_names("dst", tile.1.len());
            let mut env: Vec<(&str, i64)> = params.to_vec();
            env.extend(names.iter().map(|n| n.as_str()).zip(tile.1.iter().copied()));
            for (name, coords) in run(ast, &env) {
                assert_eq!(name, dep.src.to_string());
                let source = (dep.src.index(), coords);
                assert_ne!(&source, tile, "a tile waits for itself");
                assert!(
                    all.contains(&source),
                    "source tile {source:?} of {tile:?} does not exist"
                );
                sources.insert(source);
            }
        }
        waits_for.insert(tile.clone(), sources);
    }
    let mut done: BTreeSet<Tile> = BTreeSet::new();
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    while done.len() < tiles.len() {
        let ready: Vec<&Tile> = tiles
            .iter()
            .filter(|t| !done.contains(*t) && waits_for[*t].iter().all(|s| done.contains(s)))
            .collect();
        assert!(!ready.is_empty(), "deadlock: the tile graph has a cycle");
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let tile = ready[((state >> 33) as usize) % ready.len()].clone();
        let names = coord_names("tf", tile.1.len());
        let mut env: Vec<(&str, i64)> = params.to_vec();
        env.extend(names.iter().map(|n| n.as_str()).zip(tile.1.iter().copied()));
        for (stmt, args) in run(&bodies[tile.0], &env) {
            exec(&stmt, &args);
        }
        done.insert(tile);
    }
}

/// Only a write-after-read dependence orders the two loops:
/// ```c
/// for (i = 0; i < N - 1; i++) B[i] = A[i + 1];   // S0
/// for (i = 0; i < N; i++) A[i] = C[i];           // S1
/// ```
pub fn read_then_overwrite() -> Scop {
    scop(
        &["N"],
        "[N] -> { : N >= 0 }",
        &[("A", 1), ("B", 1), ("C", 1)],
        vec![
            stmt(
                0,
                &["i"],
                "[N] -> { S0[i] : 0 <= i < N - 1 }",
                "[N] -> { S0[i] -> [0, i, 0] }",
                vec![
                    access(false, 0, "[N] -> { S0[i] -> A[i + 1] }"),
                    access(true, 1, "[N] -> { S0[i] -> B[i] }"),
                ],
            ),
            stmt(
                1,
                &["i"],
                "[N] -> { S1[i] : 0 <= i < N }",
                "[N] -> { S1[i] -> [1, i, 0] }",
                vec![
                    access(false, 2, "[N] -> { S1[i] -> C[i] }"),
                    access(true, 0, "[N] -> { S1[i] -> A[i] }"),
                ],
            ),
        ],
    )
}

/// A statement outside loops, a reduction, and a statement that never runs:
/// ```c
/// s = 0;                                  // S0
/// for (i = 0; i < N; i++) s = s + A[i];   // S1
/// for (i = 0; i < 0; i++) A[i] = 0;       // S2 (never runs)
/// ```
pub fn init_then_sum() -> Scop {
    scop(
        &["N"],
        "[N] -> { : N >= 0 }",
        &[("s", 0), ("A", 1)],
        vec![
            stmt(
                0,
                &[],
                "[N] -> { S0[] }",
                "[N] -> { S0[] -> [0, 0, 0] }",
                vec![access(true, 0, "[N] -> { S0[] -> s[] }")],
            ),
            stmt(
                1,
                &["i"],
                "[N] -> { S1[i] : 0 <= i < N }",
                "[N] -> { S1[i] -> [1, i, 0] }",
                vec![
                    access(false, 0, "[N] -> { S1[i] -> s[] }"),
                    access(false, 1, "[N] -> { S1[i] -> A[i] }"),
                    access(true, 0, "[N] -> { S1[i] -> s[] }"),
                ],
            ),
            stmt(
                2,
                &["i"],
                "[N] -> { S2[i] : 0 <= i < 0 }",
                "[N] -> { S2[i] -> [2, i, 0] }",
                vec![access(true, 1, "[N] -> { S2[i] -> A[i] }")],
            ),
        ],
    )
}

/// fdtd-2d (PolyBench), four statements in a time loop:
/// ```c
/// for (t = 0; t < T; t++) {
///   for (j = 0; j < NY; j++) ey[0][j] = fict[t];                                      // S0
///   for (i = 1; i < NX; i++) for (j = 0; j < NY; j++)
///     ey[i][j] = ey[i][j] - 3 * (hz[i][j] - hz[i-1][j]);                              // S1
///   for (i = 0; i < NX; i++) for (j = 1; j < NY; j++)
///     ex[i][j] = ex[i][j] - 5 * (hz[i][j] - hz[i][j-1]);                              // S2
///   for (i = 0; i < NX - 1; i++) for (j = 0; j < NY - 1; j++)
///     hz[i][j] = hz[i][j] - 7 * (ex[i][j+1] - ex[i][j] + ey[i+1][j] - ey[i][j]);      // S3
/// }
/// ```
pub fn fdtd_2d() -> Scop {
    let p = "[T, NX, NY] -> ";
    let f = |s: &str| format!("{p}{{ {s} }}");
    scop(
        &["T", "NX", "NY"],
        "[T, NX, NY] -> { : T >= 0 and NX >= 0 and NY >= 0 }",
        &[("ey", 2), ("ex", 2), ("hz", 2), ("fict", 1)],
        vec![
            stmt(
                0,
                &["t", "j"],
                &f("S0[t, j] : 0 <= t < T and 0 <= j < NY"),
                &f("S0[t, j] -> [0, t, 0, j, 0, 0, 0]"),
                vec![
                    access(false, 3, &f("S0[t, j] -> fict[t]")),
                    access(true, 0, &f("S0[t, j] -> ey[0, j]")),
                ],
            ),
            stmt(
                1,
                &["t", "i", "j"],
                &f("S1[t, i, j] : 0 <= t < T and 1 <= i < NX and 0 <= j < NY"),
                &f("S1[t, i, j] -> [0, t, 1, i, 0, j, 0]"),
                vec![
                    access(false, 0, &f("S1[t, i, j] -> ey[i, j]")),
                    access(false, 2, &f("S1[t, i, j] -> hz[i, j]")),
                    access(false, 2, &f("S1[t, i, j] -> hz[i - 1, j]")),
                    access(true, 0, &f("S1[t, i, j] -> ey[i, j]")),
                ],
            ),
            stmt(
                2,
                &["t", "i", "j"],
                &f("S2[t, i, j] : 0 <= t < T and 0 <= i < NX and 1 <= j < NY"),
                &f("S2[t, i, j] -> [0, t, 2, i, 0, j, 0]"),
                vec![
                    access(false, 1, &f("S2[t, i, j] -> ex[i, j]")),
                    access(false, 2, &f("S2[t, i, j] -> hz[i, j]")),
                    access(false, 2, &f("S2[t, i, j] -> hz[i, j - 1]")),
                    access(true, 1, &f("S2[t, i, j] -> ex[i, j]")),
                ],
            ),
            stmt(
                3,
                &["t", "i", "j"],
                &f("S3[t, i, j] : 0 <= t < T and 0 <= i < NX - 1 and 0 <= j < NY - 1"),
                &f("S3[t, i, j] -> [0, t, 3, i, 0, j, 0]"),
                vec![
                    access(false, 2, &f("S3[t, i, j] -> hz[i, j]")),
                    access(false, 1, &f("S3[t, i, j] -> ex[i, j + 1]")),
                    access(false, 1, &f("S3[t, i, j] -> ex[i, j]")),
                    access(false, 0, &f("S3[t, i, j] -> ey[i + 1, j]")),
                    access(false, 0, &f("S3[t, i, j] -> ey[i, j]")),
                    access(true, 2, &f("S3[t, i, j] -> hz[i, j]")),
                ],
            ),
        ],
    )
}

/// The SCoP of a PolyBench kernel of this repository, parsed by the frontend with `defines`
/// (what `tiledflow --emit deps` analyses).
pub fn kernel_scop(name: &str, defines: &[&str]) -> frontend::ir::Scop {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("polybench");
    let path = root.join("kernels").join(name).join(format!("{name}.c"));
    let mut clang_args = vec![
        "-I".to_string(),
        root.join("utilities").display().to_string(),
    ];
    clang_args.extend(defines.iter().map(|d| format!("-D{d}")));
    let (file, _) = frontend::parse_file(
        &path,
        &frontend::Options {
            clang_args,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(file.scops.len(), 1, "{name}: one SCoP");
    file.scops.into_iter().next().unwrap()
}

/// The partition of a nest's tiles by signature grouped as code generation groups it: the
/// classes that wait for the same dependences together, each group the sets of its classes.
pub fn partition_groups(classes: &[polyhedral::PartitionClass]) -> Vec<Vec<String>> {
    let mut groups: Vec<(&[polyhedral::DepId], Vec<String>)> = Vec::new();
    for class in classes {
        match groups
            .iter_mut()
            .find(|(ins, _)| *ins == class.signature.ins.as_slice())
        {
            Some((_, sets)) => sets.push(class.domain.clone()),
            None => groups.push((&class.signature.ins, vec![class.domain.clone()])),
        }
    }
    groups.into_iter().map(|(_, sets)| sets).collect()
}

/// The disjuncts of a set printed by ISL, each as a set of its own: `[n] -> { A : c; B : d }`
/// gives `[n] -> { A : c }` and `[n] -> { B : d }` (ISL writes `;` only between disjuncts).
pub fn disjuncts(set: &str) -> Vec<String> {
    let open = set.find('{').expect("a set");
    let close = set.rfind('}').expect("a set");
    let (params, body) = (&set[..open], &set[open + 1..close]);
    body.split(';')
        .map(|d| format!("{params}{{ {} }}", d.trim()))
        .collect()
}
