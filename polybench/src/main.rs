//! `polybench`: the PolyBench regression runner's command line. See the library's doc for what
//! is built, compared and timed.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use polybench::{chart, compare_with_baseline, Config, Report, Size, Target};

const AFTER_HELP: &str = "\
Every build gets `<opt flags> -ffp-contract=off -I polybench/utilities -D<SIZE>_DATASET
-DPOLYBENCH_DUMP_ARRAYS -DPOLYBENCH_TIME`. The original is built by cc; a tiledflow target T by
`tiledflow-cc --tiledflow-strict --tiledflow-target=T`; the peers by `clang-19 -mllvm -polly
-mllvm -polly-parallel -fopenmp` (polly) and `gcc -floop-parallelize-all
-ftree-parallelize-loops=<threads>` (graphite). Peers that are not installed are skipped
(`make peers` installs them). cuda-emu is the cuda target run on the emulated device
(TILEDFLOW_GPU=emulate); cuda and cuda-emu results say where the SCoPs ran (GPU, emulated GPU,
CPU by compiler, CPU fallback), and a cuda-emu program that falls back to the CPU fails.

Verification: every array a kernel writes must equal the original's exactly (bit for bit):
every target keeps each statement's arithmetic, and -ffp-contract=off stops compilers from
fusing operations differently. A difference is WRONG; a build or run that fails is failed.

Timing: the kernel call only (PolyBench's POLYBENCH_TIME instruments), median of --repeat runs
of the very binary that was verified; the runs go round the original and the targets.
Speedup = original median / target median. Every run gets OMP_PROC_BIND=true (OpenMP's threads
bound one to a core, as PLuTo-style code is run) unless the environment sets OMP_PROC_BIND.

Exit status: 0 when every build verified and (with --baseline) nothing regressed; 1 otherwise;
2 when the run could not start.

Examples:
  cargo run --release -p polybench -- --size MEDIUM --targets seq,tasks,omp --threads 2
  cargo run --release -p polybench -- --kernels gemm,lu --repeat 5 --out results
  cargo run --release -p polybench -- --baseline results/polybench.json --threshold 0.15";

/// Verifies and times the PolyBench kernels built by tiledflow (and by peer compilers) against
/// the original program.
#[derive(Debug, Parser)]
#[command(name = "polybench", version, after_help = AFTER_HELP)]
struct Args {
    /// Dataset of every kernel.
    #[arg(long, value_enum, ignore_case = true, default_value = "MEDIUM")]
    size: Size,
    /// Kernels to run, separated by commas (default: all of polybench/kernels).
    #[arg(long, value_delimiter = ',')]
    kernels: Vec<String>,
    /// Targets: tiledflow's (seq, tasks, omp, cuda, …), cuda-emu (cuda on the emulated device)
    /// and the peers polly and graphite. A tiledflow target takes a fusion after `@` (tasks@min; tasks@tuned: timed, --tiledflow-autotune)
    /// and a thread count after `:` (tasks:1, run on that many threads whatever --threads
    /// says); beside the same target without it, the table ends with its parallel efficiency.
    #[arg(long, value_delimiter = ',', default_value = "seq,tasks")]
    targets: Vec<String>,
    /// Threads of the parallel targets.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Timed runs per build; the median is reported.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Only verify: one untimed run per build.
    #[arg(long)]
    verify_only: bool,
    /// Kernels verified at the same time with --verify-only (timed runs go one at a time).
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Tile sizes for the tiledflow targets (as --tiledflow-tile-sizes; tiledflow's default if
    /// not given).
    #[arg(long)]
    tile_sizes: Option<String>,
    /// Run a kernel whose original takes less than this many seconds at --size at
    /// --promote-to instead (its row says so); timed runs only.
    #[arg(long, value_name = "SECONDS")]
    promote_below: Option<f64>,
    /// The dataset of the kernels --promote-below picks.
    #[arg(long, value_enum, ignore_case = true, default_value = "EXTRALARGE")]
    promote_to: Size,
    /// Optimization flags of every build, separated by spaces.
    #[arg(long, default_value = "-O3 -march=native", allow_hyphen_values = true)]
    opt_flags: String,
    /// Time limit of each program run, in seconds.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
    /// Directory for polybench.json, polybench.csv and speedup.svg.
    #[arg(long, default_value = "polybench-results")]
    out: PathBuf,
    /// An earlier run's polybench.json: flag every kernel and target that verified there and
    /// does not now, or whose speedup fell by more than --threshold.
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// How much a speedup may fall before --baseline flags it (0.1 = 10%).
    #[arg(long, default_value_t = 0.1)]
    threshold: f64,
    /// Directory of the built tiledflow-cc, tiledflow and libstreamrt.a (default: this
    /// program's build directory, which is brought up to date first with `cargo build`).
    #[arg(long)]
    bin_dir: Option<PathBuf>,
    /// Run nothing: print the table of an earlier run's polybench.json and write its CSV and
    /// SVG to --out (with --baseline, compare it too).
    #[arg(long, value_name = "FILE")]
    from_json: Option<PathBuf>,
    /// Do not run `cargo build` for tiledflow and streamrt before the run.
    #[arg(long)]
    no_build: bool,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("polybench: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Brings tiledflow-cc, tiledflow, libstreamrt.a and libstreamrt_gpu.a (the cuda targets') of
/// this program's own profile up to date, so that a run never measures a stale compiler: `cargo
/// build --profile <release|dev> -p tiledflow -p streamrt -p streamrt-gpu` in the repository.
fn build_tiledflow() -> Result<()> {
    let profile = if cfg!(debug_assertions) {
        "dev"
    } else {
        "release"
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = testsuite::repo_root().join("Cargo.toml");
    eprintln!("polybench: building tiledflow ({profile} profile)");
    let status = std::process::Command::new(&cargo)
        .args([
            "build",
            "--quiet",
            "--profile",
            profile,
            "-p",
            "tiledflow",
            "-p",
            "streamrt",
            "-p",
            "streamrt-gpu",
        ])
        .arg("--manifest-path")
        .arg(&manifest)
        .status()
        .with_context(|| format!("running {}", cargo.to_string_lossy()))?;
    if !status.success() {
        anyhow::bail!("building tiledflow failed ({status}); fix the build or pass --no-build");
    }
    Ok(())
}

/// Runs, writes the outputs; `Ok(false)` when something did not verify or regressed.
fn run(args: Args) -> Result<bool> {
    let kernels = if args.kernels.is_empty() {
        testsuite::kernel_names()?
    } else {
        args.kernels.iter().map(|k| k.trim().to_string()).collect()
    };
    let targets = args
        .targets
        .iter()
        .map(|t| Target::parse(t).map_err(anyhow::Error::msg))
        .collect::<Result<Vec<_>>>()?;
    let baseline = args
        .baseline
        .as_deref()
        .map(Report::read_json)
        .transpose()?;
    let baseline_path = args.baseline.clone().unwrap_or_default();
    let config = Config {
        size: args.size,
        kernels,
        targets,
        threads: args.threads,
        repeat: if args.verify_only { 1 } else { args.repeat },
        timed: !args.verify_only,
        opt_flags: args
            .opt_flags
            .split_whitespace()
            .map(String::from)
            .collect(),
        tile_sizes: args.tile_sizes,
        run_timeout: Duration::from_secs(args.timeout),
        jobs: args.jobs,
        log_kernels: !std::io::stderr().is_terminal(),
        bin_dir: args.bin_dir,
        promote: args.promote_below.map(|s| (s, args.promote_to)),
    };

    let report = match &args.from_json {
        Some(path) => Report::read_json(path)?,
        None => {
            if config.bin_dir.is_none()
                && !args.no_build
                && config.targets.iter().any(|t| !t.is_peer())
            {
                build_tiledflow()?;
            }
            let progress = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            progress.set_style(
                ProgressStyle::with_template("{bar:40} {pos}/{len} builds, {elapsed} [{msg}]")
                    .expect("the template is valid"),
            );
            polybench::run_suite(&config, &progress)?
        }
    };

    println!("{}", report.table());
    let problems = report.problems();
    if !problems.is_empty() {
        println!("Problems:\n\n{problems}");
    }

    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let json = args.out.join("polybench.json");
    let csv = args.out.join("polybench.csv");
    let svg = args.out.join("speedup.svg");
    if args.from_json.as_deref() != Some(json.as_path()) {
        report.write_json(&json)?;
    }
    report.write_csv(&csv)?;
    chart::write_svg(&report, &svg)?;
    println!(
        "Wrote {}, {} and {}",
        json.display(),
        csv.display(),
        svg.display()
    );

    let mut ok = report.all_verified();
    if let Some(baseline) = baseline {
        let regressions = compare_with_baseline(&baseline, &report, args.threshold)?;
        if regressions.is_empty() {
            println!(
                "No regression against {} (threshold {:.0}%).",
                baseline_path.display(),
                args.threshold * 100.0
            );
        } else {
            println!("{} regression(s) against the baseline:", regressions.len());
            for r in &regressions {
                println!("  {r}");
            }
            ok = false;
        }
    }
    Ok(ok)
}
