//! Dependences, scheduling and tiling: `Scop` in, `Dependences` and `TiledSchedule` out.
//!
//! This is the only crate that links ISL (through `isl-rs`, which builds ISL 0.27 from source).
//! Every ISL object lives inside one function call of this crate, behind the safe wrappers of the
//! private `isl` module (the crate's only `unsafe` code); everything that crosses the crate
//! boundary is plain data: ISL text, or the plain [`ast::Ast`] that code generation prints. Later
//! stages ask polyhedral questions through the functions here, never by handling ISL objects.
//!
//! The pipeline, one module each:
//! - [`dependences`] (`deps`): flow, anti and output dependences by exact dataflow analysis;
//! - [`schedule`] (`schedule`): ISL scheduler or original order, nests, tiling of their
//!   outermost permutable bands;
//! - [`verify`] (`verify`): the schedule respects every dependence and runs every instance once;
//! - [`tile_dependences`] (`tile`): dependences between tiles, for the task graph;
//! - [`tile_graph`] (`tile_graph`): tile dependences simplified, uniformized, numbered and
//!   reduced; tile domains partitioned by dependence signature;
//! - `parametric`: the scheduling problem of a stencil with its constant sizes as parameters,
//!   which ISL schedules in small numbers;
//! - [`work_span`] (`work_span`): the work, span and average parallelism of a tile graph at
//!   given parameter values;
//! - [`schedule_cost`] (`cost`): the estimated run time of a tiled schedule on a [`Machine`];
//! - [`choose_fusion`] (`fusion`): the fusion (a heuristic, or a plan of blocks) whose schedule the cost model finds
//!   cheapest, its candidates scheduled on threads of their own;
//! - [`default_tile_size`] (`tile_size`): the default tile size of a band;
//! - [`spread_tiles`] (`spread`): smaller tiles where the tile graph's parallelism is too low
//!   for the machine's threads and the tiles are large; one tile along a loop whose last tile
//!   was partial where the parallelism stays;
//! - `point_order`: which point loop of a tiled band runs innermost (for the C compiler);
//! - `sink`: a band member moved below the loops under the band inside a tile, when the
//!   statements' innermost loops gain by it (gramschmidt's `j`), or the innermost loop
//!   distributed over its statements (time-skewed stencils);
//! - `chains`: in full tiles, a band loop jammed around a reduction loop, for independent
//!   chains of additions (gesummv's rows);
//! - `kernel`: in full tiles, register-tiled vector kernels for contractions and accumulators
//!   for reductions; `column`: in full tiles, a column that a reduction reads along its loop
//!   (nussinov's `table[k + 1][j]`) copied into a buffer once per column; `gather`: in the
//!   other tiles, an operand read across the innermost loop (syrk's `A[j][k]`) copied first;
//! - [`fold_element_scalars`] (`fold`): scalars that stand for one array element from its load
//!   to its store (ludcmp's `w`), folded back into the element before anything else;
//! - [`retime_reductions`] (`retime`): copies forwarded and an in-order reduction moved into the
//!   step of its outer loop before its own, where it can run in one loop with the update that
//!   feeds it (durbin), after the folding;
//! - [`scalar_expansions`], [`expand_scalars`], [`task_private`] (`privatize`): scalars whose
//!   values live within one iteration of their outer loops, the SCoP with them expanded, and
//!   whether one variable per task of a tiled schedule is enough for such a scalar
//!   ([`task_private_reusing`] keeps those answers, in a [`KnownPrivate`], for a later pass);
//! - [`parallel_tiles`] (`parallel`): which tile loops may be parallel, and wavefronts, for the
//!   barrier-based OpenMP target;
//! - [`body_loops`], [`parallel_loops`], [`array_slabs`] (`gpu`): the loops of a task body,
//!   which of them are parallel, and the accessed slab of each array, for the CUDA target;
//! - [`nest_body_ast`], [`points_ast`], [`tile_sources_ast`] (`astgen`): generated loops as a
//!   plain [`Ast`];
//! - [`tile_body_ast`] (`tile_code`): the CPU code of a tile: full tiles apart, the
//!   accumulating loop unrolled and jammed around the vector loop.
//!
//! Every function parses its inputs into its thread's ISL context (`isl::Ctx::shared`), so all of
//! them may run on any thread. That context keeps what it parsed, so the text one stage hands to
//! the next is parsed once per thread, not once per stage. Malformed inputs are
//! [`Error::InvalidInput`], never a panic.

#![deny(unsafe_code)]

mod align;
mod apart;
pub mod ast;
mod astgen;
mod chains;
mod column;
mod cost;
mod deps;
mod extents;
mod fold;
mod fusion;
mod gather;
mod gpu;
mod ids;
mod interleave;
#[allow(unsafe_code)]
mod isl;
mod kernel;
mod maps;
mod materialize;
mod memo;
mod parallel;
mod parametric;
mod point_order;
mod privatize;
mod retime;
mod reversal;
mod rows;
mod schedule;
mod scop;
mod siblings;
mod sink;
mod spread;
mod steps;
mod threads;
mod tile;
mod tile_code;
mod tile_graph;
mod tile_size;
mod unroll;
mod verify;
mod work_span;

/// The SCoPs of a PolyBench kernel of this repository at MINI, as the frontend extracts them (for
/// the unit tests that check a stage on real kernels).
#[cfg(test)]
fn polybench_scops(name: &str) -> Vec<scop_ir::Scop> {
    polybench_scops_at(name, "MINI")
}

/// [`polybench_scops`] with the dataset `size` (`MINI` .. `EXTRALARGE`).
#[cfg(test)]
fn polybench_scops_at(name: &str, size: &str) -> Vec<scop_ir::Scop> {
    polybench_scops_with(name, &[&format!("{size}_DATASET")])
}

/// The SCoPs of a PolyBench kernel with the given `-D` definitions (for the unit tests).
#[cfg(test)]
fn polybench_scops_with(name: &str, defines: &[&str]) -> Vec<scop_ir::Scop> {
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
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    file.scops
}

/// A statement's text, its iterators and variables by their C names (for the unit tests).
#[cfg(test)]
fn statement_text(scop: &scop_ir::Scop, stmt: &scop_ir::Statement) -> String {
    use scop_ir::BodyPiece;
    stmt.body
        .iter()
        .map(|p| match p {
            BodyPiece::Text(t) => t.clone(),
            BodyPiece::Iter(k) => stmt.iterators[*k].clone(),
            BodyPiece::Var(id) => scop.array(*id).name.clone(),
        })
        .collect()
}

/// The first SCoP of [`polybench_scops`]`(name)`.
#[cfg(test)]
fn polybench_scop(name: &str) -> scop_ir::Scop {
    polybench_scops(name)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("{name}: no SCoP"))
}

pub use align::{follows_lines, with_row_lines, RowLine};
pub use ast::{
    kernel_user, split_kernel_user, step_operand, step_written, Ast, Expr, FusedUpdate, Kernel,
    KernelLoop, KernelPart, KernelWidth, OpKind, Packs, RowPart, RowWhat, StepPart, StepWhat,
    VectorLanes, COLUMN_BUFFER, PACK_BUFFER, PACK_LANE_START, PACK_RED_START, SCALAR_LOOP_USER,
    SCALED_BUFFER,
};
pub use astgen::{classes_ast, nest_body_ast, points_ast, tile_sources_ast};
pub use cost::{schedule_cost, Machine, NestCost, ScheduleCost};
pub use deps::dependences;
pub use extents::{constant_box, run_sizes, RunSizes};
pub use fold::{fold_element_scalars, Folded};
pub use fusion::{block_plans, choose_fusion, Candidate, Plan};
pub use gpu::{
    array_slabs, body_loops, parallel_loops, thread_private, ArraySlab, BodyLoop, KernelScope,
    SLAB_NAME,
};
pub use ids::{DepId, NestId};
pub use interleave::{spawn_groups, SpawnGroup, SpawnMember};
pub use kernel::{pinned_packs, HALF_BYTES};
pub use materialize::{copy_blocks, materialization, with_materialized, CopyBlocks, Materialized};
pub use parallel::{full_at_every_step, independent_dims, parallel_tiles, ParallelTiles};
pub use privatize::{
    expand_scalars, scalar_expansions, task_private, task_private_reusing, KnownPrivate,
    ScalarExpansion, TaskPrivate,
};
pub use retime::{retime_reductions, Retimed};
pub use rows::{
    row_groups, row_iterators, step_groups, RowGroup, StepGroups, ROW_LANES_USER, ROW_LANE_BYTES,
    ROW_STEPS_USER,
};
pub use schedule::{run_bounded, schedule};
use scop_ir::StmtId;
pub use spread::{spread_tiles, Spread, SpreadKind};
pub use threads::on_cores;
pub use tile::tile_dependences;
pub use tile_code::{tile_body_ast, unroll_and_jam, TileCode};
pub use tile_graph::{
    coarsen, tile_graph, NestTiles, NumberedDep, PartitionClass, Shape, Signature, SimplifiedDep,
    StatementTiles, TileGraph, MAX_CLASSES,
};
pub use tile_size::{
    default_tile_size, default_tile_size_within, element_bytes, lengthen_inner,
    lengthen_inner_within, lengthen_time_tiled, time_tiled, MIN_TILE_WORK,
};
pub use verify::verify;
pub use work_span::{estimate_params, work_span, WorkSpan, MAX_TILES};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// ISL reported an error (the message is ISL's last error).
    #[error("ISL error: {0}")]
    Isl(String),
    /// The schedule violates a dependence: a compiler bug, never silently wrong code.
    #[error("internal error: the schedule violates dependences:\n{0}")]
    IllegalSchedule(String),
    /// Something this version does not handle; the message says what.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// An argument is malformed (ISL text that does not parse, a nest index out of range, ...);
    /// the message names the offending value.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A setting the user chose does not fit the SCoP (fusion blocks that miss a statement or
    /// order a dependence backwards); the message says how.
    #[error("{0}")]
    Setting(String),
}

pub type Result<T> = std::result::Result<T, Error>;

/// Statement-level dependences as ISL union maps between statement instance spaces
/// (`S0[i, j] -> S1[i', j']`), restricted to the domains.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dependences {
    /// Read after write (exact dataflow: last writer to each read).
    pub flow: String,
    /// Write after read (each write after the reads since the previous write of the element).
    pub anti: String,
    /// Write after write (each write after the previous write of the same element).
    pub output: String,
}

/// Fusion heuristic for the scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Fuse {
    /// Separate every strongly connected component.
    Min,
    /// Fuse nests of equal depth that share data.
    #[default]
    Smart,
    /// Fuse all that is legal.
    Max,
    /// Fuse all that is legal, with the reuse of read-only data between statements as proximity
    /// and no preference for parallel outer loops: two statements that read the same elements
    /// (bicg's `s[j] += r[i] * A[i][j]` and `q[i] += A[i][j] * p[j]`) get one band that reads
    /// them at the same point, so that a tile loads them once, and the tiles run as wavefronts.
    /// ISL's scheduler sees only dependences otherwise, and nothing relates statements that
    /// only share inputs; with coincidence it keeps each statement's parallel loop outermost
    /// (bicg's `s` along `j`, `q` along `i`), which reads the matrix twice.
    Reuse,
}

impl Fuse {
    /// `min`, `smart`, `max`, `reuse`: the heuristic's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Fuse::Min => "min",
            Fuse::Smart => "smart",
            Fuse::Max => "max",
            Fuse::Reuse => "reuse",
        }
    }
}

/// How to schedule and tile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleConfig {
    pub fuse: Fuse,
    /// Instead of one ISL schedule of the whole SCoP under `fuse`: these blocks of statements,
    /// each scheduled by ISL as a whole (`Fuse::Max` inside the block, with the dependences
    /// inside it), one after the other in this order ([`Plan::Blocks`], chosen by
    /// [`choose_fusion`]). Every dependence between two blocks must go from an earlier one to a
    /// later one. It applies to SCoPs of any size (a block is scheduled whole however many
    /// statements it has); [`choose_fusion`] proposes blocks only for SCoPs scheduled whole.
    pub blocks: Option<Vec<Vec<StmtId>>>,
    /// Keep the source order (the original 2d+1 schedule) instead of calling the scheduler.
    pub original: bool,
    /// Tile sizes for the dimensions of each tiled band, outermost first; the last size repeats
    /// for deeper bands. Empty (the default): each band's size is chosen from its depth, element
    /// sizes and footprint ([`default_tile_size`]). `None`: no tiling (every nest is one task).
    pub tile_sizes: Option<Vec<i64>>,
    /// ISL operation budget for scheduling; past it the original schedule is used with a warning.
    pub max_operations: u64,
    /// CPU-time budget of each ISL scheduler run (`None`: unbounded), measured on the thread that
    /// runs it; past it the original schedule is used with a warning. ISL counts operations
    /// (allocations and simplex pivots) but a pivot on huge numbers can take milliseconds, so the
    /// operation budget alone does not bound the time. CPU time, unlike wall-clock time, does not
    /// grow with the machine's load, so the outcome does not depend on it; the default (10 s) is a
    /// guard against work that does not end, far above any kernel's scheduling time, not a tuning
    /// knob.
    pub time_limit: Option<std::time::Duration>,
    /// Bound on the ISL scheduler's coefficients (`schedule_max_coefficient`; -1: none).
    pub max_coefficient: i32,
    /// Bound on the ISL scheduler's constant terms (`schedule_max_constant_term`; -1: none).
    pub max_constant_term: i32,
    /// A SCoP with more statements than this is scheduled inside its outermost loops (see the
    /// `schedule` module documentation).
    pub max_whole_statements: usize,
    /// Inside a tile, the point loops that carry no dependence go outermost (for the GPU,
    /// where they become threads) instead of the contiguous one innermost (see `point_order`);
    /// the scheduler is also asked for outer coincidence (see the `schedule` module).
    pub parallel_point_loops_outer: bool,
    /// In a tiled band with a member that carries no dependence (every dependence inside the
    /// nest has distance 0 on it), the members that carry one are not cut: their tile coordinate
    /// is 0, whatever the parameters, and their tile size is reported as [`WHOLE_LOOP`]. For the
    /// GPU, where the free members become threads, a value carried along the others (a running
    /// sum in a scalar) then stays in one tile, and so in one thread.
    pub whole_carrying_members: bool,
    /// Bytes one tile's data should take with default tile sizes (`tile_size`).
    pub tile_footprint: u64,
    /// Bytes of one core's L2 ([`Machine::l2_bytes`]; 1 MiB by default): a spawn order that
    /// reuses data across a sweep of tiles must keep what the sweep touches within it
    /// ([`Nest::spawn_order`]).
    pub l2_bytes: u64,
    /// With default tile sizes: the sizes of the nest whose statements are these, in place of
    /// the default ones, where the band has as many members ([`spread_tiles`] finds them).
    pub nest_sizes: Vec<(Vec<StmtId>, Vec<i64>)>,
    /// With default tile sizes: a band member that carries no dependence and whose values make
    /// a few tiles, the last one partial, is one tile over all its values (see
    /// `schedule::tiling::fit_extents`; [`spread_tiles`] turns it on where the tile graph keeps
    /// its parallelism).
    pub fit_extents: bool,
    /// With default tile sizes: a rectangular product's band (one member carries its reduction,
    /// two are free) gets its free members widened for its register kernel (see
    /// `tile_size::widen_products`). The fusion candidates are estimated without it, since the
    /// cost model charges a tile's data as plain loops would touch it (`choose_fusion` turns it
    /// off in their configurations); the driver turns it on for the chosen schedule on the CPU.
    pub widen_products: bool,
    /// The nests (by their statements, as [`Nest::statements`]) whose tile grid may be shifted
    /// at run time onto the cache lines of an array they update (`align`): such a nest gets a
    /// parameter `tf_line<k>` ([`Nest::row_line`]) whose value the generated code computes from
    /// the array's address. [`follows_lines`] tells which nests of a schedule would.
    pub align_nests: Vec<Vec<StmtId>>,
}

/// The tile size reported for a band member that is not cut
/// ([`ScheduleConfig::whole_carrying_members`]).
pub const WHOLE_LOOP: i64 = i64::MAX;

/// Tile sizes as the printed forms show them: `[32, 32, whole]` ([`WHOLE_LOOP`] for a member that
/// is not cut).
pub fn tile_sizes_text(sizes: &[i64]) -> String {
    let sizes: Vec<String> = sizes
        .iter()
        .map(|&t| match t {
            WHOLE_LOOP => "whole".to_string(),
            t => t.to_string(),
        })
        .collect();
    format!("[{}]", sizes.join(", "))
}

impl Default for ScheduleConfig {
    fn default() -> Self {
        ScheduleConfig {
            fuse: Fuse::Smart,
            blocks: None,
            original: false,
            tile_sizes: Some(Vec::new()),
            max_operations: 2_000_000,
            time_limit: Some(std::time::Duration::from_secs(10)),
            max_coefficient: 4,
            max_constant_term: 8,
            max_whole_statements: 9,
            parallel_point_loops_outer: false,
            whole_carrying_members: false,
            tile_footprint: tile_size::FOOTPRINT_BUDGET,
            l2_bytes: 1 << 20,
            nest_sizes: Vec::new(),
            fit_extents: false,
            widen_products: false,
            align_nests: Vec::new(),
        }
    }
}

/// One outermost loop nest of the final schedule: a group of statements executed, in
/// sequence with the other nests, as a set of tiles. Tiles are the units of tasks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nest {
    /// Statements of the nest, in id order.
    pub statements: Vec<StmtId>,
    /// Tile sizes of the tiled band (empty when the nest is not tiled).
    pub tile_sizes: Vec<i64>,
    /// The nest's full schedule: a union map from statement instances to a flat time space of
    /// the same dimension for every statement; the first `tile_sizes.len()` output dimensions are
    /// the tile coordinates (in tile units, e.g. `floor(i / 32)`), the rest order the instances
    /// inside one tile.
    pub schedule: String,
    /// The map from statement instances to their tile, `{ S0[i, j] -> N3[t0, t1] : ... }`, where the
    /// tuple name `N<k>` names nest `k`; zero-dimensional `N<k>[]` for an untiled nest.
    pub tile_map: String,
    /// The tiles that hold at least one instance, `[params] -> { N3[t0, t1] : ... }`.
    pub tile_domain: String,
    /// The parameter that shifts the tile grid onto an array's cache lines, where
    /// [`ScheduleConfig::align_nests`] named the nest and it found one: `schedule`, `tile_map` and `tile_domain` name
    /// it, and code that runs them defines it first ([`RowLine::init`]).
    pub row_line: Option<RowLine>,
    /// The order in which the control program enumerates the tiles, as tile dimensions outermost
    /// first (`[0, 2, 1]`: the loop over dimension 1 innermost); empty for their lexicographic
    /// order. The tiles' coordinates keep the band's order.
    pub spawn_order: Vec<usize>,
    /// Per tile dimension, how many accesses of the nest's innermost statements a step along it
    /// moves to other rows of their arrays (`None`: it moves none of those statements); empty
    /// for an untiled nest. What [`Nest::spawn_order`] was chosen by, and what a group's member
    /// may be reordered by ([`spawn_groups`]).
    pub row_moves: Vec<Option<usize>>,
}

/// The scheduled and tiled SCoP: nests in execution order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TiledSchedule {
    /// The schedule tree as ISL prints it, after tiling (for `--emit schedule`).
    pub tree: String,
    pub nests: Vec<Nest>,
}

/// A dependence between tiles: `relation` maps tiles of nest `src` to the tiles of nest `dst` that
/// must wait for them; never a tile to itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileDep {
    pub src: NestId,
    pub dst: NestId,
    /// `[params] -> { N<src>[..] -> N<dst>[..] : ... }`, coalesced.
    pub relation: String,
}

/// A diagnostic that does not stop compilation (for example the scheduler's budget ran out).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning(pub String);

/// Whether two ISL union sets (ISL text, e.g. `[n] -> { S0[i] : 0 <= i < n }`) hold the same points
/// for every parameter value; for tests and assertions that must not depend on ISL's printing.
pub fn sets_equal(a: &str, b: &str) -> Result<bool> {
    let ctx = isl::Ctx::new()?;
    let a = isl::UnionSet::read(&ctx, a).map_err(|e| maps::input_error("set", a, e))?;
    let b = isl::UnionSet::read(&ctx, b).map_err(|e| maps::input_error("set", b, e))?;
    a.is_equal(&b)
}

/// Whether two ISL union maps (ISL text) hold the same pairs for every parameter value.
pub fn maps_equal(a: &str, b: &str) -> Result<bool> {
    let ctx = isl::Ctx::new()?;
    let a = isl::UnionMap::read(&ctx, a).map_err(|e| maps::input_error("map", a, e))?;
    let b = isl::UnionMap::read(&ctx, b).map_err(|e| maps::input_error("map", b, e))?;
    a.is_equal(&b)
}
