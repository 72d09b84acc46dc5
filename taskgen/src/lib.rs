//! Tiled schedule to task program, and the program to C.
//!
//! Input: a `Scop` (frontend) with its `Dependences`, `TiledSchedule` and tile dependences
//! (polyhedral). Output: a [`program::TaskProgram`] (task classes, their tiles, bodies and
//! inputs, all plain data) and the C text of the whole output file ([`emit_c`]).
//!
//! Modules: [`program`] (the tile graph's partitions as task classes with fixed inputs),
//! [`idiom`] (how each dependence is synchronized: the one place that decides), [`task_graph`]
//! (the class graph, its checks and its Graphviz text), [`private`] (scalars kept per task),
//! [`error`] (the builder's own errors),
//! [`emit_c`] and [`c_ast`] (C text), [`emit_cuda`] (CUDA kernels and the GPU control program), [`harness`] (a program that
//! runs one SCoP on its own, for the driver's autotuner).
//!
//! Architecture invariant: taskgen never links ISL. Every polyhedral question (the tile graph,
//! ASTs of sets and relations) is a call to a `polyhedral` function returning plain data.

#![forbid(unsafe_code)]

pub mod c_ast;
pub mod emit_c;
pub mod emit_cuda;
pub mod emit_omp;
pub mod error;
pub mod harness;
pub mod idiom;
pub mod private;
pub mod program;
pub mod task_graph;

pub use emit_c::{emit_file, EmitOptions, ScopCode, Target};
pub use emit_omp::OmpPlan;
pub use error::{Error, Result};
pub use private::{private_scalars, PrivateScalar};
pub use program::{Granularity, TaskClass, TaskProgram, TileBodies};

use polyhedral::{Dependences, TileDep, TiledSchedule};
use scop_ir::Scop;

/// Builds the task program of a scheduled SCoP ([`program::build_unchecked`]) and checks its task
/// graph ([`task_graph::check`]): a graph the checks reject is an error, never emitted.
pub fn build(
    scop: &Scop,
    deps: &Dependences,
    sched: &TiledSchedule,
    tile_deps: &[TileDep],
    bodies: TileBodies<'_>,
) -> Result<TaskProgram> {
    let program = program::build_unchecked(scop, deps, sched, tile_deps, bodies)?;
    let problems = task_graph::check(&program);
    if !problems.is_empty() {
        return Err(Error::InconsistentGraph(problems));
    }
    Ok(program)
}
