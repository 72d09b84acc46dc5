//! The task program of one SCoP: the tile graph's partition classes as task classes.
//!
//! A task is one tile of a nest; its key is the tile's coordinates and it publishes one token on
//! the nest's stream. Each nest's tile domain is partitioned by dependence signature
//! (`polyhedral::tile_graph`); tiles with the same IN signature form one [`Partition`], a task
//! class with a fixed list of inputs: for a uniform dependence the input is "my key minus a
//! constant", for a soft barrier the barrier's single token, and only for a non-uniform
//! dependence is the list of sources enumerated per task by code generated from the relation.
//! (OUT signatures change no code on streamrt: every task publishes one token whoever reads it,
//! so classes that differ only in OUT share a partition.) When a nest has too many classes it
//! keeps one partition whose inputs are guarded per dependence instead.
//!
//! The control program enumerates the tiles of each nest in the order of the tiled schedule (nest
//! by nest, each tile dispatched to its partition) and spawns a task for each: a nest's tiles in
//! lexicographic order of their coordinates, or in the order `polyhedral::Nest::spawn_order`
//! chose for them (gemm's `(i, k, j)`: consecutive tasks read the same rows). Either is a legal
//! execution (the tile loops of a permutable band may run in any order), so the program is
//! deterministic, and the tasks' keys keep the band's order.
//!
//! Everything here is plain data; the polyhedral questions are answered by `polyhedral`.

use crate::idiom::{self, Idiom};
use polyhedral::{Ast, DepId, Dependences, NestId, Signature, TileDep, TileGraph, TiledSchedule};
use scop_ir::{Scop, StmtId};
use std::fmt::Write;

/// Prefix of the iterators of task bodies.
pub const BODY_ITER: &str = "tf_i";
/// Prefix of the iterators of the control program's tile loops.
pub const TILE_ITER: &str = "tf_c";
/// Prefix of the iterators that enumerate a task's input tiles.
pub const SOURCE_ITER: &str = "tf_s";
/// Prefix of the names a task body gives to its own tile coordinates.
pub const KEY_NAME: &str = "tf_k";
/// Prefix of the names of the consumer's coordinates while its inputs are enumerated.
pub const DST_NAME: &str = "tf_d";

/// How many tiles one task runs (Kong et al.'s task granularities).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Granularity {
    /// One tile: the key is every tile coordinate of the nest's band.
    #[default]
    Tile,
    /// The tiles that share the two outermost tile coordinates.
    Intraband,
    /// The tiles that share the outermost tile coordinate.
    Interband,
}

impl Granularity {
    /// The number of tile coordinates a task keeps, `None` for all of them.
    pub fn tile_dims(self) -> Option<usize> {
        match self {
            Granularity::Tile => None,
            Granularity::Intraband => Some(2),
            Granularity::Interband => Some(1),
        }
    }
}

/// The tile dependences into a task class from one source class (before uniformization).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputSet {
    /// The producing class (its nest).
    pub src: NestId,
    /// The simplified tile dependence relation, `{ N<src>[..] -> N<dst>[..] }`.
    pub relation: String,
}

/// How a task of a partition names the tokens of one dependence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// The token `key - offset` of the source class's stream (a uniform dependence: every task
    /// of the partition has that source).
    Offset(Vec<i64>),
    /// Tokens enumerated per task: the code's user nodes `N<src>` carry the source coordinates,
    /// computed from the consumer's coordinates `tf_d0, tf_d1, ...`.
    Enumerated(Ast),
    /// The token of soft barrier `b` (an index into [`TaskProgram::barriers`]).
    Barrier(usize),
}

/// One input of a partition: numbered dependence `dep` from class `src`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    pub dep: DepId,
    pub src: NestId,
    pub kind: InputKind,
}

/// Tiles of one class with one IN signature: a task class with a fixed list of inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// The tiles: the domains of the partition classes it groups, ISL text each.
    pub domains: Vec<String>,
    /// IN: the dependences its tiles wait for; OUT: the union of its classes' OUT signatures.
    pub signature: Signature,
    pub inputs: Vec<Input>,
}

/// A soft barrier: one task with an empty body that waits for every source tile of dependence
/// `dep` and publishes one token that all its target tiles wait for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Barrier {
    pub dep: DepId,
    pub src: NestId,
    pub dst: NestId,
    /// Enumerates the source tiles; user nodes `N<src>` with their coordinates.
    pub sources: Ast,
}

/// The tasks of one nest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskClass {
    /// `N<k>`: the name of the class, of its stream and of its tile space.
    pub name: String,
    /// Number of key (tile coordinate) dimensions.
    pub n_dims: usize,
    pub statements: Vec<StmtId>,
    pub tile_sizes: Vec<i64>,
    /// The tile domain, ISL text.
    pub tile_domain: String,
    /// Enumerates the class's tiles in schedule order; user nodes `P<c>` (the tile belongs to
    /// `partitions[c]`) with the coordinates.
    pub tiles: Ast,
    /// The bounding box of the tiles' keys, `(lo, hi)` per dimension, when it is constant
    /// ([`polyhedral::constant_box`] of the partitions' domains): the stream is declared with
    /// it. `None` (bounds that depend on parameters): the control program measures the box by a
    /// first pass over the tiles.
    pub tile_box: Option<Vec<(i64, i64)>>,
    /// The instances of one tile whose coordinates are `tf_k0, tf_k1, ...`; user nodes are
    /// statements `S<j>` with their original iterator values.
    pub body: Ast,
    /// What was done to `body` beyond ISL's code (full tiles apart, unroll-and-jam), for `-v`.
    pub code: polyhedral::TileCode,
    /// The simplified tile dependences into this class, one per source class.
    pub inputs: Vec<InputSet>,
    /// Whether the tile domain was partitioned by signature (false: one guarded partition).
    pub partitioned: bool,
    pub partitions: Vec<Partition>,
    /// The outermost dimension along which the tiles are independent for fixed outer
    /// coordinates ([`polyhedral::independent_dims`]) and that has more than one tile: the stream is spread over the threads along
    /// it, each thread preferring the tiles of its block of that dimension. Along dimension 0,
    /// each thread's block is spawned alongside the others' ([`crate::emit_c`]).
    pub spread: Option<usize>,
}

/// The task program of one SCoP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskProgram {
    /// Classes in execution order.
    pub classes: Vec<TaskClass>,
    pub barriers: Vec<Barrier>,
    /// The tile graph the classes come from.
    pub graph: TileGraph,
    /// The idiom of each numbered dependence of `graph`.
    pub idioms: Vec<Idiom>,
    /// The parameters that shift nests' tile grids onto cache lines
    /// ([`polyhedral::Nest::row_line`]): the code that replaces the SCoP defines them first, and
    /// the tasks get them like the SCoP's parameters.
    pub row_lines: Vec<polyhedral::RowLine>,
    /// Runs of consecutive classes whose tiles the tasks target spawns together
    /// ([`polyhedral::spawn_groups`]; a member is the class of that index), in execution order,
    /// their loops over the host's dimension 0 named [`TILE_ITER`]`0`.
    pub spawn_groups: Vec<polyhedral::SpawnGroup>,
}

/// Names `prefix0, prefix1, ...`.
pub fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|k| format!("{prefix}{k}")).collect()
}

/// The code of each tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileBodies<'a> {
    /// ISL's code for the tile as it is (the CUDA target maps its loops to threads).
    Plain,
    /// For the CPU: full tiles apart, the accumulating loop unrolled and jammed
    /// ([`polyhedral::tile_body_ast`]); the scalars kept in one variable per task.
    Cpu(&'a [scop_ir::ArrayId]),
}

/// Builds the task program of a scheduled SCoP, unchecked ([`crate::build`] checks it).
pub fn build_unchecked(
    scop: &Scop,
    deps: &Dependences,
    sched: &TiledSchedule,
    tile_deps: &[TileDep],
    bodies: TileBodies<'_>,
) -> crate::Result<TaskProgram> {
    let _ = deps;
    // The task bodies need only the schedule: ISL generates them on a second thread (each query
    // has its own ISL context) while this one builds the tile graph and the control code. For a
    // time-tiled stencil the bodies are a third of the compile time (heat-3d: 1 s of 3).
    let (program, bodies) = std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("task-bodies".into())
            .spawn_scoped(scope, || nest_bodies(scop, sched, bodies));
        let program = without_bodies(scop, sched, tile_deps);
        let bodies = match spawned {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // No thread to be had: the same work on this one.
            Err(_) => nest_bodies(scop, sched, bodies),
        };
        (program, bodies)
    });
    let mut program = program?;
    for (class, (body, code)) in program.classes.iter_mut().zip(bodies?) {
        class.body = body;
        class.code = code;
    }
    Ok(program)
}

/// The task program with empty task bodies: the tile graph, barriers, partitions and tile loops.
fn without_bodies(
    scop: &Scop,
    sched: &TiledSchedule,
    tile_deps: &[TileDep],
) -> polyhedral::Result<TaskProgram> {
    let graph = polyhedral::tile_graph(scop, sched, tile_deps)?;
    let idioms: Vec<Idiom> = graph.deps.iter().map(idiom::choose).collect();
    let mut barriers = Vec::new();
    let mut barrier_of = vec![None; graph.deps.len()];
    for (j, dep) in graph.deps.iter().enumerate() {
        if idioms[j] == Idiom::SoftBarrier {
            barrier_of[j] = Some(barriers.len());
            let sources = polyhedral::points_ast(scop, &dep.sources, SOURCE_ITER)?;
            barriers.push(Barrier {
                dep: DepId::new(j),
                src: dep.src,
                dst: dep.dst,
                sources,
            });
        }
    }
    let mut enumerated: Vec<Option<Ast>> = vec![None; graph.deps.len()];
    let mut classes = Vec::with_capacity(sched.nests.len());
    for (k, nest) in sched.nests.iter().enumerate() {
        let k = NestId::new(k);
        let n_dims = nest.tile_sizes.len();
        let order = &nest.spawn_order;
        // The partition by signature; if ISL cannot generate its control code, the nest falls
        // back to one partition with guarded inputs (same tasks, same inputs, more tests).
        let (partitioned, partitions, tiles) =
            match nest_partitions(scop, &graph, k, true, &barrier_of, &mut enumerated, order) {
                Err(polyhedral::Error::Isl(_)) if graph.nests[k.index()].partition.is_some() => {
                    nest_partitions(scop, &graph, k, false, &barrier_of, &mut enumerated, order)?
                }
                other => other?,
            };
        let inputs = graph
            .simplified
            .iter()
            .filter(|d| d.dst == k)
            .map(|d| InputSet {
                src: d.src,
                relation: d.relation.clone(),
            })
            .collect();
        let domains: Vec<String> = partitions
            .iter()
            .flat_map(|p| p.domains.iter().cloned())
            .collect();
        let tile_box = polyhedral::constant_box(&domains, n_dims)?;
        let own: Vec<&str> = graph
            .simplified
            .iter()
            .filter(|d| d.src == k && d.dst == k)
            .map(|d| d.relation.as_str())
            .collect();
        let barrier_inside = barriers.iter().any(|b| b.src == k && b.dst == k);
        // The outermost independent dimension that has tiles for two threads (a dimension of
        // one tile, heat-3d's innermost, cuts into no blocks; the runtime would ignore it);
        // an inner one only where its box is known and every outer step has all of it.
        let spread = if barrier_inside {
            None
        } else {
            let free = polyhedral::independent_dims(&own, &k.to_string(), n_dims)?;
            let first =
                (0..n_dims).find(|&j| free[j] && tile_box.as_ref().is_none_or(|b| b[j].1 > b[j].0));
            match (first, &tile_box) {
                (Some(0), _) => Some(0),
                (Some(j), Some(b))
                    if polyhedral::full_at_every_step(
                        &nest.tile_domain,
                        &k.to_string(),
                        n_dims,
                        j,
                        b[j],
                    )? =>
                {
                    Some(j)
                }
                _ => None,
            }
        };
        classes.push(TaskClass {
            name: k.to_string(),
            n_dims,
            statements: nest.statements.clone(),
            tile_sizes: nest.tile_sizes.clone(),
            tile_domain: nest.tile_domain.clone(),
            tiles,
            tile_box,
            body: Ast::Block(Vec::new()),
            code: polyhedral::TileCode::default(),
            inputs,
            partitioned,
            partitions,
            spread,
        });
    }
    let spawn_groups = spawn_groups(scop, sched, &classes, tile_deps)?;
    Ok(TaskProgram {
        classes,
        barriers,
        graph,
        idioms,
        spawn_groups,
        row_lines: sched
            .nests
            .iter()
            .filter_map(|n| n.row_line.clone())
            .collect(),
    })
}

/// The runs of consecutive classes whose tiles are spawned together, with their spawn loops.
fn spawn_groups(
    scop: &Scop,
    sched: &TiledSchedule,
    classes: &[TaskClass],
    tile_deps: &[TileDep],
) -> polyhedral::Result<Vec<polyhedral::SpawnGroup>> {
    let domains: Vec<Vec<Vec<String>>> = classes
        .iter()
        .map(|c| c.partitions.iter().map(|p| p.domains.clone()).collect())
        .collect();
    let members: Vec<polyhedral::SpawnMember<'_>> = classes
        .iter()
        .enumerate()
        .map(|(k, class)| polyhedral::SpawnMember {
            nest: NestId::new(k),
            n_dims: class.n_dims,
            tile_domain: &class.tile_domain,
            partitions: &domains[k],
            order: &sched.nests[k].spawn_order,
            row_moves: &sched.nests[k].row_moves,
        })
        .collect();
    let eligible: Vec<bool> = classes.iter().map(|c| c.n_dims > 0).collect();
    polyhedral::spawn_groups(scop, &members, &eligible, tile_deps, TILE_ITER)
}

/// The code of one tile of each nest, its coordinates named [`KEY_NAME`]`<d>`.
fn nest_bodies(
    scop: &Scop,
    sched: &TiledSchedule,
    bodies: TileBodies<'_>,
) -> polyhedral::Result<Vec<(Ast, polyhedral::TileCode)>> {
    let body = |k: usize| {
        let coords = names(KEY_NAME, sched.nests[k].tile_sizes.len());
        let k = NestId::new(k);
        match bodies {
            TileBodies::Plain => Ok((
                polyhedral::nest_body_ast(scop, sched, k, &coords, BODY_ITER)?,
                polyhedral::TileCode::default(),
            )),
            TileBodies::Cpu(private) => {
                polyhedral::tile_body_ast(scop, sched, k, &coords, BODY_ITER, private)
            }
        }
    };
    // The nests are independent: with several, a thread per core takes them in order (each
    // thread has its own ISL context; a nest's code does not depend on which thread builds it),
    // the next nest going to whichever thread is free; the results come back in nest order.
    let nests: Vec<usize> = (0..sched.nests.len()).collect();
    polyhedral::on_cores(&nests, |&k| body(k))
        .into_iter()
        .collect()
}

/// The partitions of nest `k` and the code enumerating its tiles: the tile graph's classes
/// grouped by IN signature when `use_partition` and the nest has one, otherwise one partition
/// whose inputs are guarded per dependence. Returns whether the nest is partitioned.
fn nest_partitions(
    scop: &Scop,
    graph: &TileGraph,
    k: NestId,
    use_partition: bool,
    barrier_of: &[Option<usize>],
    enumerated: &mut [Option<Ast>],
    spawn_order: &[usize],
) -> polyhedral::Result<(bool, Vec<Partition>, Ast)> {
    let nest_tiles = &graph.nests[k.index()];
    let n_dims = nest_tiles.n_dims;
    // Partition classes grouped by IN signature, in order of first appearance.
    let mut groups: Vec<(Vec<String>, Signature)> = Vec::new();
    let partition = nest_tiles.partition.as_ref().filter(|_| use_partition);
    match partition {
        Some(classes) => {
            for class in classes {
                match groups
                    .iter_mut()
                    .find(|(_, sig)| sig.ins == class.signature.ins)
                {
                    Some((domains, sig)) => {
                        domains.push(class.domain.clone());
                        sig.outs.extend(class.signature.outs.iter().copied());
                        sig.outs.sort_unstable();
                        sig.outs.dedup();
                    }
                    None => groups.push((vec![class.domain.clone()], class.signature.clone())),
                }
            }
        }
        None => {
            let kept = graph.kept();
            let ins = kept
                .clone()
                .filter(|(_, d)| d.dst == k)
                .map(|(j, _)| j)
                .collect();
            let outs = kept.filter(|(_, d)| d.src == k).map(|(j, _)| j).collect();
            groups.push((vec![nest_tiles.domain.clone()], Signature { ins, outs }));
        }
    }
    let partitioned = partition.is_some();
    let mut partitions = Vec::with_capacity(groups.len());
    for (domains, signature) in &groups {
        let mut inputs = Vec::with_capacity(signature.ins.len());
        for &j in &signature.ins {
            let dep = graph.dep(j);
            let kind = match (barrier_of[j.index()], &dep.distance) {
                (Some(b), _) => InputKind::Barrier(b),
                // Inside a partition every tile is a target of `dep`: its source is key - d.
                (None, Some(d)) if partitioned => InputKind::Offset(d.clone()),
                _ => {
                    // The same code serves every partition that waits for `dep`.
                    let ast = match &enumerated[j.index()] {
                        Some(ast) => ast.clone(),
                        None => {
                            let as_tile_dep = TileDep {
                                src: dep.src,
                                dst: dep.dst,
                                relation: dep.relation.clone(),
                            };
                            let ast = polyhedral::tile_sources_ast(
                                scop,
                                &as_tile_dep,
                                &names(DST_NAME, n_dims),
                                SOURCE_ITER,
                            )?;
                            enumerated[j.index()] = Some(ast.clone());
                            ast
                        }
                    };
                    InputKind::Enumerated(ast)
                }
            };
            inputs.push(Input {
                dep: j,
                src: dep.src,
                kind,
            });
        }
        partitions.push(Partition {
            domains: domains.clone(),
            signature: signature.clone(),
            inputs,
        });
    }
    let group_domains: Vec<Vec<String>> = groups.into_iter().map(|(d, _)| d).collect();
    let tiles = polyhedral::classes_ast(scop, &group_domains, TILE_ITER, spawn_order)?;
    Ok((partitioned, partitions, tiles))
}

/// `d0, d3` (or `-` for none).
fn dep_list(deps: &[DepId]) -> String {
    if deps.is_empty() {
        return "-".to_string();
    }
    deps.iter()
        .map(DepId::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl TaskProgram {
    /// The task class of nest `k`.
    ///
    /// # Panics
    /// If `k` is not a nest of the program.
    pub fn class(&self, k: NestId) -> &TaskClass {
        &self.classes[k.index()]
    }

    /// The tile graph, for `--emit tiles`: tile domains (leading and follower statements),
    /// simplified tile dependences, numbered dependences, and each nest's partition by signature.
    pub fn tiles_text(&self) -> String {
        let g = &self.graph;
        let mut s = String::new();
        for (k, nest) in g.nests.iter().enumerate() {
            let _ = writeln!(
                s,
                "tile domain N{k} ({} dims): {}",
                nest.n_dims, nest.domain
            );
            for st in &nest.statements {
                let role = if nest.leading.contains(&st.stmt) {
                    "leading"
                } else {
                    "follower"
                };
                let _ = writeln!(
                    s,
                    "  {} ({role}, depth {}): {}",
                    st.stmt, st.depth, st.domain
                );
            }
        }
        for d in &g.simplified {
            let _ = writeln!(
                s,
                "tile dependence {} -> {} ({} basic maps, {} after simplification): {}",
                d.src, d.dst, d.n_basic_maps.0, d.n_basic_maps.1, d.relation
            );
        }
        for (j, d) in g.deps.iter().enumerate() {
            let distance = match &d.distance {
                Some(v) => format!("uniform {v:?}"),
                None => "non-uniform".to_string(),
            };
            let implied = match d.implied_by {
                Some((a, b)) => format!(", implied (e.g. {a} then {b})"),
                None => String::new(),
            };
            let _ = writeln!(
                s,
                "d{j}: {} -> {}, {distance}{implied}: {}",
                d.src, d.dst, d.relation
            );
        }
        for (k, nest) in g.nests.iter().enumerate() {
            match &nest.partition {
                None => {
                    let _ = writeln!(
                        s,
                        "partition of N{k}: more than {} classes, not partitioned",
                        polyhedral::MAX_CLASSES
                    );
                }
                Some(classes) => {
                    let _ = writeln!(s, "partition of N{k}: {} classes", classes.len());
                    for (c, class) in classes.iter().enumerate() {
                        let stmts: Vec<String> =
                            class.statements.iter().map(|s| s.to_string()).collect();
                        let _ = writeln!(
                            s,
                            "  class {c}: IN {{{}}} OUT {{{}}} statements [{}]: {}",
                            dep_list(&class.signature.ins),
                            dep_list(&class.signature.outs),
                            stmts.join(", "),
                            class.domain
                        );
                    }
                }
            }
        }
        s
    }

    /// The task classes, for `--emit tasks`: per nest its partitions (task classes with a fixed
    /// signature) and their inputs, and the idiom of every numbered dependence.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for c in &self.classes {
            let stmts: Vec<String> = c.statements.iter().map(|s| s.to_string()).collect();
            let _ = writeln!(
                s,
                "class {}: statements [{}], {} key dims, tile sizes {}, {} task classes{}",
                c.name,
                stmts.join(", "),
                c.n_dims,
                polyhedral::tile_sizes_text(&c.tile_sizes),
                c.partitions.len(),
                if c.partitioned {
                    ""
                } else {
                    " (not partitioned: inputs guarded)"
                }
            );
            let _ = writeln!(s, "  tiles: {}", c.tile_domain);
            if c.code != polyhedral::TileCode::default() {
                let _ = writeln!(s, "  code: {}", c.code);
            }
            for (p, part) in c.partitions.iter().enumerate() {
                let inputs: Vec<String> = part
                    .inputs
                    .iter()
                    .map(|i| match &i.kind {
                        InputKind::Offset(d) => {
                            let key: Vec<String> = d
                                .iter()
                                .enumerate()
                                .map(|(n, &v)| {
                                    if v == 0 {
                                        format!("k{n}")
                                    } else {
                                        format!("k{n}{:+}", -v)
                                    }
                                })
                                .collect();
                            format!("{} {}[{}]", i.dep, i.src, key.join(", "))
                        }
                        InputKind::Enumerated(_) => format!("{} {}[enumerated]", i.dep, i.src),
                        InputKind::Barrier(b) => format!("{} B{b}", i.dep),
                    })
                    .collect();
                let _ = writeln!(
                    s,
                    "  {}.P{p}: IN {{{}}} OUT {{{}}} inputs [{}]",
                    c.name,
                    dep_list(&part.signature.ins),
                    dep_list(&part.signature.outs),
                    inputs.join("; ")
                );
            }
        }
        for (b, bar) in self.barriers.iter().enumerate() {
            let _ = writeln!(
                s,
                "barrier B{b}: {} from every tile of {} to every tile of {}",
                bar.dep, bar.src, bar.dst
            );
        }
        for (j, (d, idiom)) in self.graph.deps.iter().zip(&self.idioms).enumerate() {
            let _ = writeln!(s, "idiom d{j} {} -> {}: {idiom}", d.src, d.dst);
        }
        s
    }
}
