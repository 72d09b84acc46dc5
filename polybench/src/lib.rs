//! The PolyBench regression runner: builds every kernel of `polybench/kernels` with the system
//! compiler (the original) and through each target, checks every output array against the
//! original's, times the runs, and reports verified/WRONG/failed, times, speedups and geometric
//! means on the terminal, as JSON, CSV and an SVG chart, and against an earlier run's JSON.
//!
//! # Builds
//!
//! Every build gets the same base flags: the optimization flags (`-O3 -march=native` unless
//! `--opt-flags` says otherwise), `-ffp-contract=off`, `-I polybench/utilities`,
//! `-D<SIZE>_DATASET`, `-DPOLYBENCH_DUMP_ARRAYS` and, when timing, `-DPOLYBENCH_TIME`.
//! - the original: `cc` (or `$TILEDFLOW_REFERENCE_CC`) with the base flags;
//! - a tiledflow target `T` (`seq`, `tasks`, `omp`, …): `tiledflow-cc` with the base flags,
//!   `--tiledflow-strict` (a source tiledflow cannot transform fails instead of being compiled
//!   untouched), `--tiledflow-target=T` and `--tiledflow-tile-sizes=…` when given. A target
//!   tiledflow-cc rejects is reported `failed` with tiledflow-cc's message;
//! - `cuda-emu`: the `cuda` target's build (tiledflow-cc links the emulated kernels of each
//!   kernel file), run with `TILEDFLOW_GPU=emulate`; see below;
//! - `polly`: `clang-19 … -mllvm -polly -mllvm -polly-parallel -fopenmp`;
//! - `graphite`: `gcc … -floop-parallelize-all -ftree-parallelize-loops=<threads>`.
//!
//! Peers that are not installed (`make peers` installs them) are reported once and skipped.
//!
//! # Where the cuda targets ran
//!
//! A program of the cuda target runs each SCoP on the GPU path or, when it finds no device, its
//! CPU task version, with one notice on stderr ("… running the CPU task version"). Verifying it
//! says nothing about which, so `cuda` and `cuda-emu` builds get `--tiledflow-verbose` (its notes
//! name the SCoPs the compiler keeps on the CPU) and every result says where it ran
//! ([`RanOn`], in the table as `verified, emulated GPU` and so on):
//! - every SCoP kept on the CPU by the compiler: `CPU by compiler`, the note as the reason;
//! - `cuda-emu` (`TILEDFLOW_GPU=emulate`): no notice is `emulated GPU`; a notice is **failed**
//!   ("the GPU path did not run on the emulated device: …"): the emulated kernels are linked, so
//!   a fallback is a bug of the build or of the runtime;
//! - `cuda` (`TILEDFLOW_GPU=cuda`, the real device): no notice is `GPU`; a notice is
//!   `CPU fallback` (verified: without a device, the CPU task version is what must run).
//!
//! `cuda-emu`'s times are those of the emulation (every thread of a launch in turn on one host
//! thread per stream): they say nothing of a GPU's speed.
//!
//! # Tolerance policy
//!
//! Arrays are compared with `testsuite::compare` under [`testsuite::Tolerance::Exact`]: the dumped
//! text, which round-trips, so bit equality, for every target, peers included. Every target
//! keeps each statement's arithmetic as written (tiledflow reorders statement instances, never
//! the operations inside one, and neither Polly nor Graphite reassociates floating-point
//! operations without `-ffast-math`), and `-ffp-contract=off` on every build keeps compilers
//! from fusing a multiply and an add differently in the original and in the transformed code.
//! A single differing bit is therefore a real difference, reported `WRONG` with the first
//! differing values.
//!
//! # What is timed
//!
//! The kernel only, as PolyBench does: `polybench.h`'s `POLYBENCH_TIME` instruments read the
//! clock just before and just after the `kernel_<name>` call and print the seconds on stdout;
//! initialization, the dump and process start-up are outside. For tiledflow's task targets the
//! timed region includes whatever the generated kernel does at entry and exit (starting and
//! joining the runtime's workers). Each build runs `repeat` times; the figure is the median.
//! The first run dumps its arrays and is the one verified; the others run the same binary
//! with `POLYBENCH_NO_DUMP=1`, so the program timed is the program verified. Those timed runs
//! go round the original and the targets of a kernel (one run each per round), never one
//! program's runs back to back: run back to back, two identical binaries of jacobi-1d
//! (EXTRALARGE, 2 threads) differed by 15-50% from their place in the order, and in rounds agreed
//! within 5% (9 runs). Kernels of a few milliseconds still have two speeds from run to run, so
//! their medians of 5 can still differ by up to 40% (the README's table). Speedup is the
//! original's median over the target's median, both from the same run of the runner; it is
//! given only for verified results. Build times are wall times of the compiler commands;
//! `tiledflow_s` is the wall time of the `tiledflow` source-to-source step alone (run once more
//! on its own, with the same options), which is what tiledflow adds to a build.
//!
//! What this crate must not do: depend on the compiler crates (it drives the built binaries, as
//! a user would, through the testsuite's harness), or assert on timings.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod baseline;
pub mod chart;
pub mod config;
pub mod report;
pub mod runner;
pub mod target;

pub use baseline::{compare_with_baseline, Regression};
pub use config::{Config, Size};
pub use report::{KernelReport, Measurement, RanOn, Report, Status, TargetResult};
pub use runner::run_suite;
pub use target::Target;
