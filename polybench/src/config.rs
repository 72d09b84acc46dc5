//! What one run of the runner does: the dataset, the kernels, the targets, threads, repeats and
//! build flags. Plain data, built by the command line or by a test.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::target::Target;

/// A PolyBench dataset, chosen with `-D<NAME>_DATASET`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Size {
    /// `MINI_DATASET`: tiny, for verification.
    #[value(name = "MINI")]
    Mini,
    /// `SMALL_DATASET`.
    #[value(name = "SMALL")]
    Small,
    /// `MEDIUM_DATASET`.
    #[value(name = "MEDIUM")]
    Medium,
    /// `LARGE_DATASET` (the kernels' default).
    #[value(name = "LARGE")]
    Large,
    /// `EXTRALARGE_DATASET`.
    #[value(name = "EXTRALARGE")]
    ExtraLarge,
}

impl Size {
    /// The dataset's name as PolyBench spells it: `MINI` … `EXTRALARGE`.
    pub fn name(self) -> &'static str {
        match self {
            Size::Mini => "MINI",
            Size::Small => "SMALL",
            Size::Medium => "MEDIUM",
            Size::Large => "LARGE",
            Size::ExtraLarge => "EXTRALARGE",
        }
    }

    /// The macro that selects it, e.g. `MINI_DATASET`.
    pub fn define(self) -> String {
        format!("{}_DATASET", self.name())
    }
}

/// The optimization flags of every build unless the caller gives others.
pub const DEFAULT_OPT_FLAGS: &[&str] = &["-O3", "-march=native"];

/// Everything a run needs.
#[derive(Debug, Clone)]
pub struct Config {
    /// Dataset of every kernel.
    pub size: Size,
    /// Kernels to run, in this order (names of `polybench/kernels/<name>`).
    pub kernels: Vec<String>,
    /// Targets to build each kernel for, besides the original.
    pub targets: Vec<Target>,
    /// Threads of the parallel targets (`TILEDFLOW_NUM_THREADS`, `OMP_NUM_THREADS`, Graphite's
    /// `-ftree-parallelize-loops`).
    pub threads: usize,
    /// Timed runs per build (the median is reported); at least 1.
    pub repeat: usize,
    /// Whether to time at all; without it each build runs once, for verification only.
    pub timed: bool,
    /// Optimization flags of every build (the original's and every target's).
    pub opt_flags: Vec<String>,
    /// `--tiledflow-tile-sizes` for the tiledflow targets (tiledflow's default when `None`).
    pub tile_sizes: Option<String>,
    /// Time limit of each program run.
    pub run_timeout: Duration,
    /// Kernels verified at the same time in a verification-only run (timed runs are always
    /// one at a time).
    pub jobs: usize,
    /// Print one line per finished kernel on stderr (for logs, where no progress bar shows).
    pub log_kernels: bool,
    /// Where tiledflow-cc, tiledflow and libstreamrt.a are (`testsuite::bin_dir()` when `None`).
    pub bin_dir: Option<PathBuf>,
    /// `(seconds, bigger)`: a kernel whose original runs faster than `seconds` at `size` is run
    /// at `bigger` instead (timed runs only): its time at `size` is mostly noise.
    pub promote: Option<(f64, Size)>,
}

impl Config {
    /// A verification-only run of `kernels` at `size` for `targets`: one run per build, `-O1`,
    /// 2 threads, 2 kernels at a time, small tiles (4) so that even MINI sizes have many tiles and tile dependences.
    pub fn verification(size: Size, kernels: Vec<String>, targets: Vec<Target>) -> Self {
        Config {
            size,
            kernels,
            targets,
            threads: 2,
            repeat: 1,
            timed: false,
            opt_flags: vec!["-O1".to_string()],
            tile_sizes: Some("4".to_string()),
            run_timeout: Duration::from_secs(120),
            jobs: 2,
            log_kernels: false,
            bin_dir: None,
            promote: None,
        }
    }
}
