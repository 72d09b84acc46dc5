//! Test harness for tiledflow's end-to-end and differential tests: locate the kernels and the
//! built tools, compile C programs (with `cc` or with the `tiledflow-cc` driver), run them under
//! a time limit, read the arrays they dump, and compare two runs array by array.
//!
//! The main oracle is [`differential`]: a kernel compiled by the system compiler is the
//! reference; each [`Variant`] (usually `tiledflow-cc` with some options) must dump exactly the
//! same arrays, bit for bit, because generated code keeps every statement's arithmetic and both
//! sides are compiled with `-ffp-contract=off`.
//!
//! [`random_program`] generates random affine C programs for the same comparison.
//!
//! [`golden`] runs the stage tests held as data (`testsuite/data/stages/`): printed forms of
//! the compiler's stages against expectations in files.
//!
//! [`par`] spreads one test's items (kernels, builds) over the cores.
//!
//! [`nvrtc`] compiles CUDA source for a GPU architecture with NVRTC (from `make deps`), for the
//! cuda target's tests.
//!
//! What this crate must not do: depend on the compiler crates. It drives the built binaries as a
//! user would, so a test here exercises exactly what a user runs.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

/// The machine that tests reading the compiler's choices (tile sizes, kernels, fusion) assume:
/// the cost model reads the core count and cache sizes of the machine it runs on, so such a test
/// sets these (two cores, 48 KiB L1, 2 MiB L2, 32 MiB last level) to see the same choices on any.
pub const REFERENCE_MACHINE: [(&str, &str); 4] = [
    ("TILEDFLOW_NUM_THREADS", "2"),
    ("TILEDFLOW_L1_BYTES", "49152"),
    ("TILEDFLOW_L2_BYTES", "2097152"),
    ("TILEDFLOW_LLC_BYTES", "33554432"),
];
pub mod compare;
pub mod differential;
pub mod dump;
pub mod golden;
pub mod nvrtc;
pub mod par;
pub mod paths;
pub mod process;
pub mod random_program;

pub use compare::{compare, ArrayMismatch, Mismatch, Tolerance, ValueDiff};
pub use differential::{
    define_flags, differential, differential_with, original_flags, run_original,
    DifferentialOptions, Variant, KEEP_ENV,
};
pub use dump::{parse_dump, DumpedArray};
pub use paths::{
    bin_dir, kernel_dir, kernel_names, kernel_path, kernels_dir, reference_cc, repo_root,
    tool_path, utilities_dir,
};
pub use process::{
    compile, compile_in_env, compile_with_stderr, describe_status, expect_success, run,
    DEFAULT_COMPILE_TIMEOUT,
};
