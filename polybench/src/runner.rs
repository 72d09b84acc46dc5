//! Running the suite: for each kernel, build and run the original (its dump is the reference),
//! then build, verify and time each target. Building, running and comparing are the testsuite
//! harness's (`testsuite::{compile_in_env, run, parse_dump, compare}`); this module decides what
//! to build and what to record. See the crate doc for the flags, the tolerance and what is timed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use indicatif::ProgressBar;
use testsuite::{DumpedArray, Tolerance};

use crate::config::{Config, Size};
use crate::report::{
    median, KernelReport, Measurement, Report, SkippedTarget, Status, TargetResult,
};
use crate::target::Target;

/// Environment variable that makes a kernel built with `-DPOLYBENCH_DUMP_ARRAYS` skip its dump
/// (see `polybench.h`): the timed runs after the verified one.
pub const NO_DUMP_ENV: &str = "POLYBENCH_NO_DUMP";

/// How the arrays of every target must agree with the original's (see the crate doc).
pub const TOLERANCE: Tolerance = Tolerance::Exact;

/// Runs every kernel of `config` for the original and every target and returns the report.
/// Progress goes to `progress` (use `ProgressBar::hidden()` for none); a requested peer that is
/// not installed is announced once on stderr and skipped. Errors are only for a run that cannot
/// start (an unknown kernel, tiledflow-cc not built); a kernel or target that fails is a result.
pub fn run_suite(config: &Config, progress: &ProgressBar) -> Result<Report> {
    if config.repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    if config.threads == 0 {
        bail!("--threads must be at least 1");
    }
    let bin_dir = match &config.bin_dir {
        Some(d) => d.clone(),
        None => testsuite::bin_dir()?,
    };
    if config.targets.iter().any(|t| !t.is_peer()) && !bin_dir.join("tiledflow-cc").is_file() {
        bail!(
            "{} does not exist; build tiledflow first (`cargo build --release`, or \
             `cargo build` for a debug build)",
            bin_dir.join("tiledflow-cc").display()
        );
    }
    let available = testsuite::kernel_names()?;
    for k in &config.kernels {
        if !available.contains(k) {
            bail!(
                "no kernel `{k}` in {} (there are: {})",
                testsuite::kernels_dir().display(),
                available.join(" ")
            );
        }
    }

    let mut targets = Vec::new();
    let mut skipped = Vec::new();
    for t in &config.targets {
        match t.probe(&bin_dir, config.threads) {
            Ok(()) => targets.push(t.clone()),
            Err(reason) => {
                let reason = format!("{reason}; `make peers` installs it");
                progress.suspend(|| eprintln!("polybench: skipping {}: {reason}", t.name()));
                skipped.push(SkippedTarget {
                    target: t.name().to_string(),
                    reason,
                });
            }
        }
    }

    progress.set_length((config.kernels.len() * (1 + targets.len())) as u64);
    let kernels = run_kernels(config, &bin_dir, &targets, progress)?;
    progress.finish_and_clear();

    let mut report = Report {
        size: config.size.name().to_string(),
        threads: config.threads,
        repeat: config.repeat,
        timed: config.timed,
        opt_flags: config.opt_flags.clone(),
        tile_sizes: config.tile_sizes.clone(),
        targets: targets.iter().map(|t| t.name().to_string()).collect(),
        skipped,
        kernels,
        geomeans: Vec::new(),
    };
    report.compute_geomeans();
    Ok(report)
}

/// The flags every build of a run gets (see the crate doc).
pub fn base_flags(config: &Config) -> Vec<String> {
    let mut flags = config.opt_flags.clone();
    flags.extend([
        "-ffp-contract=off".to_string(),
        "-I".to_string(),
        testsuite::utilities_dir().display().to_string(),
        format!("-D{}", Size::define(config.size)),
        "-DPOLYBENCH_DUMP_ARRAYS".to_string(),
    ]);
    if config.timed {
        flags.push("-DPOLYBENCH_TIME".to_string());
    }
    flags
}

/// Every kernel of `config`, in order: one after the other when timing (so that runs do not
/// disturb each other), on `config.jobs` threads otherwise.
fn run_kernels(
    config: &Config,
    bin_dir: &Path,
    targets: &[Target],
    progress: &ProgressBar,
) -> Result<Vec<KernelReport>> {
    let jobs = if config.timed { 1 } else { config.jobs.max(1) };
    if jobs == 1 {
        return config
            .kernels
            .iter()
            .map(|k| run_kernel(config, bin_dir, k, targets, progress))
            .collect();
    }
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Result<KernelReport>>>> =
        config.kernels.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let idx = next.fetch_add(1, Ordering::Relaxed);
                let Some(kernel) = config.kernels.get(idx) else {
                    break;
                };
                let result = run_kernel(config, bin_dir, kernel, targets, progress);
                *slots[idx].lock().unwrap_or_else(|p| p.into_inner()) = Some(result);
            });
        }
    });
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .unwrap_or_else(|| bail!("a kernel's worker stopped before running it"))
        })
        .collect()
}

fn run_kernel(
    config: &Config,
    bin_dir: &Path,
    kernel: &str,
    targets: &[Target],
    progress: &ProgressBar,
) -> Result<KernelReport> {
    let dir = tempfile::Builder::new()
        .prefix("polybench.")
        .tempdir()
        .context("creating a temporary directory")?;
    let src = testsuite::kernel_path(kernel);
    let flags = base_flags(config);

    progress.set_message(format!("{kernel}: original"));
    let exe = dir.path().join("original");
    let (original, reference) = match build(testsuite::reference_cc(), &src, &flags, &exe) {
        Ok(build_s) => measure(config, &exe, None, build_s),
        Err(reason) => (Measurement::failed(reason, None), None),
    };
    progress.inc(1);

    let mut results = Vec::new();
    for target in targets {
        progress.set_message(format!("{kernel}: {}", target.name()));
        let measurement = match &reference {
            None => Measurement::failed(
                "the original did not build or run, so there is nothing to compare with",
                None,
            ),
            Some(reference) => {
                measure_target(config, bin_dir, &src, &flags, target, reference, dir.path())
            }
        };
        let speedup = match (measurement.status, original.median_s, measurement.median_s) {
            (Status::Verified, Some(base), Some(t)) if base > 0.0 && t > 0.0 => Some(base / t),
            _ => None,
        };
        results.push(TargetResult {
            target: target.name().to_string(),
            measurement,
            speedup,
        });
        progress.inc(1);
    }
    if config.log_kernels {
        let summary: Vec<String> = std::iter::once(format!("original {}", original.status.label()))
            .chain(results.iter().map(|r| {
                let speedup = r.speedup.map(|s| format!(" {s:.2}x")).unwrap_or_default();
                format!("{} {}{speedup}", r.target, r.measurement.status.label())
            }))
            .collect();
        eprintln!("polybench: {kernel}: {}", summary.join(", "));
    }
    Ok(KernelReport {
        kernel: kernel.to_string(),
        original,
        targets: results,
    })
}

fn measure_target(
    config: &Config,
    bin_dir: &Path,
    src: &Path,
    base: &[String],
    target: &Target,
    reference: &[DumpedArray],
    dir: &Path,
) -> Measurement {
    let (driver, extra) =
        target.build_command(bin_dir, config.threads, config.tile_sizes.as_deref());
    let mut flags = base.to_vec();
    flags.extend(extra);
    let exe = dir.join(format!("target-{}", target.name()));
    let build_s = match build(&driver, src, &flags, &exe) {
        Ok(s) => s,
        Err(reason) => return Measurement::failed(reason, None),
    };
    let (mut m, _) = measure(config, &exe, Some(reference), build_s);
    if let (Target::Tiledflow(name), true) = (target, config.timed) {
        m.tiledflow_s = time_tiledflow(config, bin_dir, src, base, name, dir);
    }
    m
}

/// Builds `exe`; returns the build's wall time in seconds, or the compiler's message.
fn build(
    driver: impl AsRef<std::ffi::OsStr>,
    src: &Path,
    flags: &[String],
    exe: &Path,
) -> std::result::Result<f64, String> {
    let start = Instant::now();
    testsuite::compile_in_env(
        driver,
        &[src],
        flags,
        exe,
        &[],
        testsuite::DEFAULT_COMPILE_TIMEOUT,
    )
    .map(|_| start.elapsed().as_secs_f64())
    .map_err(|e| format!("{e:#}"))
}

/// Runs `exe` once with its dump (verified against `reference`, or returned as the reference
/// when there is none) and, when timing, `repeat - 1` more times without it.
fn measure(
    config: &Config,
    exe: &Path,
    reference: Option<&[DumpedArray]>,
    build_s: f64,
) -> (Measurement, Option<Vec<DumpedArray>>) {
    let mut m = Measurement {
        status: Status::Verified,
        reason: None,
        build_s: Some(build_s),
        tiledflow_s: None,
        times_s: Vec::new(),
        median_s: None,
    };
    let (time, dump) = match run_once(config, exe, true) {
        Ok(r) => r,
        Err(reason) => return (Measurement::failed(reason, Some(build_s)), None),
    };
    let dump = dump.unwrap_or_default();
    m.times_s.extend(time);
    if let Some(reference) = reference {
        if let Err(mismatch) = testsuite::compare(reference, &dump, TOLERANCE) {
            m.status = Status::Wrong;
            m.reason = Some(format!(
                "its output differs from the original's: {mismatch}"
            ));
        }
    }
    if config.timed && m.status == Status::Verified {
        for _ in 1..config.repeat {
            match run_once(config, exe, false) {
                Ok((time, _)) => m.times_s.extend(time),
                Err(reason) => {
                    return (
                        Measurement::failed(format!("a timed run: {reason}"), Some(build_s)),
                        None,
                    )
                }
            }
        }
    }
    m.median_s = median(&m.times_s);
    let dump = (reference.is_none() && m.status == Status::Verified).then_some(dump);
    (m, dump)
}

/// One run: the kernel's time (when timing) and its dump (when `dump`).
fn run_once(
    config: &Config,
    exe: &Path,
    dump: bool,
) -> std::result::Result<(Option<f64>, Option<Vec<DumpedArray>>), String> {
    let threads = config.threads.to_string();
    let mut env = vec![
        ("TILEDFLOW_NUM_THREADS", threads.as_str()),
        ("OMP_NUM_THREADS", threads.as_str()),
    ];
    if !dump {
        env.push((NO_DUMP_ENV, "1"));
    }
    let output = testsuite::run(exe, &env, config.run_timeout).map_err(|e| format!("{e:#}"))?;
    testsuite::expect_success("the program", &output).map_err(|e| format!("{e:#}"))?;
    let time = if config.timed {
        let stdout = String::from_utf8_lossy(&output.stdout);
        Some(parse_time(&stdout).ok_or_else(|| {
            format!(
                "the program printed no time on stdout (built with -DPOLYBENCH_TIME): {stdout:?}"
            )
        })?)
    } else {
        None
    };
    let arrays = if dump {
        let arrays = testsuite::parse_dump(&String::from_utf8_lossy(&output.stderr))
            .map_err(|e| format!("reading its dump: {e:#}"))?;
        if arrays.is_empty() {
            return Err("the program dumped no arrays".to_string());
        }
        Some(arrays)
    } else {
        None
    };
    Ok((time, arrays))
}

/// The time `polybench_print_instruments` printed: the last line of stdout that is a number.
pub fn parse_time(stdout: &str) -> Option<f64> {
    stdout
        .lines()
        .rev()
        .find_map(|l| l.trim().parse::<f64>().ok())
        .filter(|t| t.is_finite() && *t >= 0.0)
}

/// Wall time of `tiledflow` alone on the kernel, with the options and defines of the build.
fn time_tiledflow(
    config: &Config,
    bin_dir: &Path,
    src: &Path,
    base: &[String],
    target: &str,
    dir: &Path,
) -> Option<f64> {
    let out: PathBuf = dir.join(format!("{target}.tiledflow.c"));
    let mut cmd = Command::new(bin_dir.join("tiledflow"));
    cmd.arg(src)
        .arg("-o")
        .arg(&out)
        .arg("--target")
        .arg(target)
        .arg("--strict");
    if let Some(ts) = &config.tile_sizes {
        cmd.arg("--tile-sizes").arg(ts);
    }
    // The parser's flags among the base flags: -I <dir> and the defines.
    let mut it = base.iter();
    while let Some(f) = it.next() {
        if f == "-I" {
            cmd.arg("-I").args(it.next());
        } else if f.starts_with("-D") {
            cmd.arg(f);
        }
    }
    let start = Instant::now();
    let ok = cmd.output().is_ok_and(|o| o.status.success());
    ok.then(|| start.elapsed().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_is_the_last_number_on_stdout() {
        assert_eq!(parse_time("0.250000\n"), Some(0.25));
        assert_eq!(parse_time("notes\n1.5\n\n"), Some(1.5));
        assert_eq!(parse_time("no time\n"), None);
        assert_eq!(parse_time(""), None);
        assert_eq!(parse_time("-1\n"), None);
    }
}
