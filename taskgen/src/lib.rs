//! Tiled schedule to task program, and the program to C.
//!
//! Input: a `Scop` (frontend) with its `Dependences`, `TiledSchedule` and tile dependences
//! (polyhedral). Output: a [`program::TaskProgram`] (task classes, their tiles, bodies and
//! inputs, all plain data) and the C text of the whole output file ([`emit_c`]).
//!
//! Architecture invariant: taskgen never links ISL. Every polyhedral question (ASTs of sets and
//! relations) is a call to a `polyhedral` function returning plain data.

#![forbid(unsafe_code)]

pub mod c_ast;
pub mod emit_c;
pub mod emit_omp;
pub mod program;

pub use emit_c::{emit_file, EmitOptions, ScopCode, Target};
pub use emit_omp::OmpPlan;
pub use program::{build, TaskClass, TaskProgram};
