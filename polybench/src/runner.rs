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
    median, KernelReport, Measurement, RanOn, Report, SkippedTarget, Status, TargetResult,
};
use crate::target::Target;

/// Environment variable that makes a kernel built with `-DPOLYBENCH_DUMP_ARRAYS` skip its dump
/// (see `polybench.h`): the timed runs after the verified one.
pub const NO_DUMP_ENV: &str = "POLYBENCH_NO_DUMP";

/// How the arrays of every target must agree with the original's (see the crate doc).
pub const TOLERANCE: Tolerance = Tolerance::Exact;

/// The end of the line a cuda-target program prints on stderr when it runs its CPU task version
/// instead of the GPU path (streamrt's fallback notice).
pub const FALLBACK_NOTICE: &str = "running the CPU task version";

/// tiledflow-cc's note (under `--tiledflow-verbose`) on a SCoP the cuda target keeps on the CPU.
pub const CPU_NOTE: &str = "SCoP stays on the CPU (--target cuda)";

/// What tiledflow-cc's line about each SCoP it transformed contains (under `--tiledflow-verbose`).
pub const SCOP_LINE: &str = ": SCoP in ";

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
    base_flags_at(config, config.size)
}

/// [`base_flags`] with the dataset `size`.
fn base_flags_at(config: &Config, size: Size) -> Vec<String> {
    let mut flags = config.opt_flags.clone();
    flags.extend([
        "-ffp-contract=off".to_string(),
        "-I".to_string(),
        testsuite::utilities_dir().display().to_string(),
        format!("-D{}", Size::define(size)),
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
    let mut flags = base_flags(config);

    progress.set_message(format!("{kernel}: original"));
    let exe = dir.path().join("original");
    let run_original = |flags: &[String]| match build(testsuite::reference_cc(), &src, flags, &exe)
    {
        Ok((build_s, _)) => {
            let (m, dump, _) = measure(config, &exe, None, build_s, &[]);
            (m, dump)
        }
        Err(reason) => (Measurement::failed(reason, None), None),
    };
    let (mut original, mut reference) = run_original(&flags);
    let mut size = None;
    if let (Some((limit, bigger)), Some(t)) = (config.promote, original.median_s) {
        // One run decides, unless it is close to the limit: then the median of three.
        let t = match t < 2.0 * limit && t >= limit / 2.0 {
            true => decision_time(config, &exe, t).unwrap_or(t),
            false => t,
        };
        if config.timed && t < limit && bigger != config.size {
            progress.set_message(format!("{kernel}: original at {}", bigger.name()));
            flags = base_flags_at(config, bigger);
            (original, reference) = run_original(&flags);
            size = Some(bigger.name().to_string());
        }
    }
    progress.inc(1);

    let mut results = Vec::new();
    let mut programs = Vec::new();
    for target in targets {
        progress.set_message(format!("{kernel}: {}", target.name()));
        let (measurement, program) = match &reference {
            None => (
                Measurement::failed(
                    "the original did not build or run, so there is nothing to compare with",
                    None,
                ),
                None,
            ),
            Some(reference) => {
                measure_target(config, bin_dir, &src, &flags, target, reference, dir.path())
            }
        };
        results.push(TargetResult {
            target: target.name().to_string(),
            measurement,
            speedup: None,
        });
        programs.push(program);
        progress.inc(1);
    }
    // The timed runs after the verified ones go round the original and the targets, one run
    // each per round, so that whatever drifts during a kernel's runs (the machine's other load,
    // the state that one run leaves to the next) falls on all of them alike.
    if config.timed && reference.is_some() {
        progress.set_message(format!("{kernel}: timed runs"));
        let mut timed: Vec<(&mut Measurement, &Program)> = Vec::new();
        let original_program = Program {
            exe: exe.clone(),
            env: Vec::new(),
        };
        timed.push((&mut original, &original_program));
        for (r, p) in results.iter_mut().zip(&programs) {
            if let Some(p) = p {
                timed.push((&mut r.measurement, p));
            }
        }
        timed_rounds(config, &mut timed);
    }
    for r in &mut results {
        r.speedup = match (
            r.measurement.status,
            original.median_s,
            r.measurement.median_s,
        ) {
            (Status::Verified, Some(base), Some(t)) if base > 0.0 && t > 0.0 => Some(base / t),
            _ => None,
        };
    }
    if config.log_kernels {
        let summary: Vec<String> = std::iter::once(format!("original {}", original.status.label()))
            .chain(results.iter().map(|r| {
                let speedup = r.speedup.map(|s| format!(" {s:.2}x")).unwrap_or_default();
                let on = r
                    .measurement
                    .ran_on
                    .map(|on| format!(" ({})", on.label()))
                    .unwrap_or_default();
                format!("{} {}{on}{speedup}", r.target, r.measurement.status.label())
            }))
            .collect();
        eprintln!("polybench: {kernel}: {}", summary.join(", "));
    }
    Ok(KernelReport {
        kernel: kernel.to_string(),
        original,
        targets: results,
        size,
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
) -> (Measurement, Option<Program>) {
    let (driver, extra) =
        target.build_command(bin_dir, config.threads, config.tile_sizes.as_deref());
    let mut flags = base.to_vec();
    flags.extend(extra);
    let exe = dir.join(format!("target-{}", target.name()));
    let (build_s, build_stderr) = match build(&driver, src, &flags, &exe) {
        Ok(b) => b,
        Err(reason) => return (Measurement::failed(reason, None), None),
    };
    // A thread count in the target's name overrides `--threads` (see `Target::parse`).
    let mut env: Vec<(String, String)> = target
        .run_env()
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if let Some(n) = target.threads() {
        env.extend([
            ("TILEDFLOW_NUM_THREADS".to_string(), n.to_string()),
            ("OMP_NUM_THREADS".to_string(), n.to_string()),
        ]);
    }
    let program = Program { exe, env };
    let (mut m, _, notice) = measure(config, &program.exe, Some(reference), build_s, &program.env);
    if target.is_cuda() {
        where_it_ran(
            &mut m,
            *target == Target::CudaEmulated,
            &build_stderr,
            notice.as_deref(),
        );
    }
    if let (Some(name), true) = (target.tiledflow_target(), config.timed) {
        m.tiledflow_s = time_tiledflow(config, bin_dir, src, base, name, dir);
    }
    (m, Some(program))
}

/// Where a cuda target's program ran (`m.ran_on`), from its build's stderr (tiledflow-cc's lines
/// about each SCoP and its notes on those kept on the CPU) and the fallback notice of its
/// verified run:
/// - every SCoP kept on the CPU by the compiler: `CPU by compiler`, the notes as the reason;
/// - otherwise a notice means the GPU path did not run: `CPU fallback`, with the notice as the
///   reason; on the emulated device (`emulated`) that is a failure, since the emulated kernels
///   are always there to run;
/// - no notice: the GPU (or the emulated GPU) ran the SCoPs.
///
/// A build or run that failed is left as it is.
pub fn where_it_ran(m: &mut Measurement, emulated: bool, build_stderr: &str, notice: Option<&str>) {
    if m.status == Status::Failed {
        return;
    }
    let n_scops = build_stderr
        .lines()
        .filter(|l| l.contains(SCOP_LINE))
        .count();
    let kept: Vec<&str> = build_stderr
        .lines()
        .filter(|l| l.contains(CPU_NOTE))
        .collect();
    let add_reason = |m: &mut Measurement, why: String| {
        m.reason = Some(match m.reason.take() {
            Some(r) => format!("{why}\n{r}"),
            None => why,
        })
    };
    if kept.len() >= n_scops {
        m.ran_on = Some(RanOn::CpuByCompiler);
        if !kept.is_empty() {
            add_reason(m, kept.join("\n"));
        }
        return;
    }
    match notice {
        None => {
            m.ran_on = Some(if emulated {
                RanOn::EmulatedGpu
            } else {
                RanOn::Gpu
            })
        }
        Some(notice) => {
            m.ran_on = Some(RanOn::CpuFallback);
            if emulated {
                if m.status == Status::Verified {
                    m.status = Status::Failed;
                }
                add_reason(
                    m,
                    format!("the GPU path did not run on the emulated device: {notice}"),
                );
            } else {
                add_reason(m, notice.to_string());
            }
        }
    }
}

/// Builds `exe`; returns the build's wall time in seconds and its stderr, or the compiler's
/// message.
fn build(
    driver: impl AsRef<std::ffi::OsStr>,
    src: &Path,
    flags: &[String],
    exe: &Path,
) -> std::result::Result<(f64, String), String> {
    let start = Instant::now();
    testsuite::compile_in_env(
        driver,
        &[src],
        flags,
        exe,
        &[],
        testsuite::DEFAULT_COMPILE_TIMEOUT,
    )
    .map(|stderr| (start.elapsed().as_secs_f64(), stderr))
    .map_err(|e| format!("{e:#}"))
}

/// Runs `exe` (with `env` set) once with its dump, verified against `reference` (or returned as
/// the reference when there is none); the timed runs that follow are [`timed_rounds`]'. Also
/// returns the fallback notice ([`FALLBACK_NOTICE`]) of the verified run, if it printed one.
fn measure(
    config: &Config,
    exe: &Path,
    reference: Option<&[DumpedArray]>,
    build_s: f64,
    env: &[(String, String)],
) -> (Measurement, Option<Vec<DumpedArray>>, Option<String>) {
    let mut m = Measurement {
        status: Status::Verified,
        reason: None,
        ran_on: None,
        build_s: Some(build_s),
        tiledflow_s: None,
        times_s: Vec::new(),
        median_s: None,
    };
    let (time, dump, notice) = match run_once(config, exe, true, env) {
        Ok(r) => r,
        Err(reason) => return (Measurement::failed(reason, Some(build_s)), None, None),
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
    m.median_s = median(&m.times_s);
    let dump = (reference.is_none() && m.status == Status::Verified).then_some(dump);
    (m, dump, notice)
}

/// A built program and the environment it runs in.
struct Program {
    exe: PathBuf,
    env: Vec<(String, String)>,
}

/// `repeat - 1` rounds of one run without the dump of each verified program, in order; each
/// measurement's median is then over its verified run and these. A run that fails makes its
/// program's result a failure and leaves it out of the later rounds.
///
/// Programs that are the same (byte for byte, run with the same environment: two fusion
/// heuristics that give the same code, as `tasks` and `tasks@smart` often do) are timed as one,
/// the first of them, and the others get its times: timed apart, the same program differed by up
/// to 25% between its columns (bicg at EXTRALARGE, 6 ms), which a table comparing schedules
/// would read as a difference between them.
fn timed_rounds(config: &Config, programs: &mut [(&mut Measurement, &Program)]) {
    let same_as = same_programs(programs.iter().map(|(_, p)| *p));
    for _ in 1..config.repeat {
        for (k, (m, program)) in programs.iter_mut().enumerate() {
            if m.status != Status::Verified || same_as[k].is_some() {
                continue;
            }
            match run_once(config, &program.exe, false, &program.env) {
                Ok((time, _, _)) => m.times_s.extend(time),
                Err(reason) => {
                    let build_s = m.build_s;
                    **m = Measurement::failed(format!("a timed run: {reason}"), build_s);
                }
            }
        }
    }
    for k in 0..programs.len() {
        if let Some(first) = same_as[k] {
            if programs[first].0.status == Status::Verified
                && programs[k].0.status == Status::Verified
            {
                programs[k].0.times_s = programs[first].0.times_s.clone();
            }
        }
    }
    for (m, _) in programs.iter_mut() {
        m.median_s = median(&m.times_s);
    }
}

/// For each program, the first program before it that is the same (see [`timed_rounds`]).
fn same_programs<'a>(programs: impl Iterator<Item = &'a Program>) -> Vec<Option<usize>> {
    let programs: Vec<(&Program, Option<Vec<u8>>)> =
        programs.map(|p| (p, std::fs::read(&p.exe).ok())).collect();
    (0..programs.len())
        .map(|k| {
            let (p, bytes) = &programs[k];
            bytes.as_ref()?;
            (0..k).find(|&j| programs[j].0.env == p.env && programs[j].1 == *bytes)
        })
        .collect()
}

/// The original's time for deciding on a bigger dataset: the median of its first run `first`
/// and two more (not among its timed runs, which go round with the targets').
fn decision_time(config: &Config, exe: &Path, first: f64) -> Option<f64> {
    let mut times = vec![first];
    for _ in 0..2 {
        let (time, _, _) = run_once(config, exe, false, &[]).ok()?;
        times.extend(time);
    }
    median(&times)
}

/// The OpenMP runtime's thread binding, which the runner sets for every run (see [`run_once`]).
const OMP_PROC_BIND_ENV: &str = "OMP_PROC_BIND";

/// The result of one run: the kernel's time, its dump, the fallback notice it printed.
type RunOnce = (Option<f64>, Option<Vec<DumpedArray>>, Option<String>);

/// One run with `extra_env` set: the kernel's time (when timing), its dump (when `dump`) and
/// the line of stderr with the fallback notice, if any.
fn run_once(
    config: &Config,
    exe: &Path,
    dump: bool,
    extra_env: &[(String, String)],
) -> std::result::Result<RunOnce, String> {
    let threads = config.threads.to_string();
    let mut env = vec![
        ("TILEDFLOW_NUM_THREADS", threads.as_str()),
        ("OMP_NUM_THREADS", threads.as_str()),
    ];
    // OpenMP's threads bound one to a core (`OMP_PROC_BIND`), as a PLuTo-style code's users run
    // it, unless the caller's environment says otherwise: unbound, libgomp's threads could share
    // a core for milliseconds while the other idled (jacobi-1d at EXTRALARGE on a 2-core VM: 1.2
    // ms median and 14 ms at worst; bicg at MEDIUM 1.18 ms against 0.23 bound). streamrt places
    // its own workers (its `placement` module).
    if std::env::var_os(OMP_PROC_BIND_ENV).is_none() {
        env.push((OMP_PROC_BIND_ENV, "true"));
    }
    env.extend(extra_env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    if !dump {
        env.push((NO_DUMP_ENV, "1"));
    }
    let output = testsuite::run(exe, &env, config.run_timeout).map_err(|e| format!("{e:#}"))?;
    testsuite::expect_success("the program", &output).map_err(|e| format!("{e:#}"))?;
    let notice = String::from_utf8_lossy(&output.stderr)
        .lines()
        .find(|l| l.contains(FALLBACK_NOTICE))
        .map(String::from);
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
    Ok((time, arrays, notice))
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
    fn programs_with_the_same_bytes_and_environment_are_one() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        };
        let env = |v: &str| vec![("TILEDFLOW_NUM_THREADS".to_string(), v.to_string())];
        let programs = [
            Program {
                exe: file("a", b"code"),
                env: Vec::new(),
            },
            Program {
                exe: file("b", b"other"),
                env: Vec::new(),
            },
            Program {
                exe: file("c", b"code"),
                env: Vec::new(),
            },
            Program {
                exe: file("d", b"code"),
                env: env("1"),
            },
            Program {
                exe: file("e", b"code"),
                env: env("1"),
            },
            Program {
                exe: dir.path().join("missing"),
                env: Vec::new(),
            },
        ];
        assert_eq!(
            same_programs(programs.iter()),
            vec![None, None, Some(0), None, Some(3), None]
        );
    }

    #[test]
    fn the_time_is_the_last_number_on_stdout() {
        assert_eq!(parse_time("0.250000\n"), Some(0.25));
        assert_eq!(parse_time("notes\n1.5\n\n"), Some(1.5));
        assert_eq!(parse_time("no time\n"), None);
        assert_eq!(parse_time(""), None);
        assert_eq!(parse_time("-1\n"), None);
    }

    fn verified() -> Measurement {
        Measurement {
            status: Status::Verified,
            reason: None,
            ran_on: None,
            build_s: Some(1.0),
            tiledflow_s: None,
            times_s: Vec::new(),
            median_s: None,
        }
    }

    /// The timed runs go round the programs (a, b, a, b), each measurement gets its runs' median,
    /// and a program whose run fails drops out of the later rounds as a failure.
    #[test]
    fn timed_runs_go_round_the_programs() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let program = |name: &str, body: &str| {
            let exe = dir.path().join(name);
            std::fs::write(
                &exe,
                format!("#!/bin/sh\necho {name} >> '{}'\n{body}\n", log.display()),
            )
            .unwrap();
            std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
            Program {
                exe,
                env: Vec::new(),
            }
        };
        let a = program("a", "echo 0.5");
        let b = program("b", "echo 2.0");
        // Fails on its second run.
        let c = program(
            "c",
            &format!(
                "[ $(grep -c c '{}') -ge 2 ] && exit 3\necho 1.0",
                log.display()
            ),
        );
        let mut config = Config::verification(Size::Mini, Vec::new(), Vec::new());
        config.timed = true;
        config.repeat = 4;
        let (mut ma, mut mb, mut mc) = (verified(), verified(), verified());
        ma.times_s.push(0.25);
        timed_rounds(&config, &mut [(&mut ma, &a), (&mut mb, &b), (&mut mc, &c)]);
        let order = std::fs::read_to_string(&log).unwrap().replace('\n', " ");
        assert_eq!(order.trim(), "a b c a b c a b");
        assert_eq!(ma.times_s, vec![0.25, 0.5, 0.5, 0.5]);
        assert_eq!(ma.median_s, Some(0.5));
        assert_eq!(mb.times_s, vec![2.0, 2.0, 2.0]);
        assert_eq!(mc.status, Status::Failed);
        assert!(
            mc.reason
                .as_deref()
                .is_some_and(|r| r.contains("a timed run")),
            "{mc:?}"
        );
    }

    const ON_GPU: &str = "gemm.c: SCoP in kernel_gemm() at line 40: 2 statements, …\n";
    const KEPT: &str = "durbin.c: SCoP in kernel_durbin() at line 30: 6 statements, …\n\
                        durbin.c:30:1: note: SCoP stays on the CPU (--target cuda): it writes the scalar `sum`\n";
    const NOTICE: &str =
        "tiledflow: GPU disabled by TILEDFLOW_GPU=off; running the CPU task version";

    #[test]
    fn an_emulated_run_that_fell_back_fails() {
        let mut m = verified();
        where_it_ran(&mut m, true, ON_GPU, None);
        assert_eq!(
            (m.status, m.ran_on),
            (Status::Verified, Some(RanOn::EmulatedGpu))
        );
        let mut m = verified();
        where_it_ran(&mut m, true, ON_GPU, Some(NOTICE));
        assert_eq!(
            (m.status, m.ran_on),
            (Status::Failed, Some(RanOn::CpuFallback))
        );
        assert!(m.reason.unwrap().starts_with(
            "the GPU path did not run on the emulated device: tiledflow: GPU disabled"
        ));
    }

    #[test]
    fn a_real_device_run_says_whether_it_fell_back() {
        let mut m = verified();
        where_it_ran(&mut m, false, ON_GPU, Some(NOTICE));
        assert_eq!(
            (m.status, m.ran_on),
            (Status::Verified, Some(RanOn::CpuFallback))
        );
        assert_eq!(m.reason.as_deref(), Some(NOTICE));
        let mut m = verified();
        where_it_ran(&mut m, false, ON_GPU, None);
        assert_eq!(m.ran_on, Some(RanOn::Gpu));
    }

    #[test]
    fn scops_the_compiler_keeps_on_the_cpu_are_not_a_failure() {
        for emulated in [true, false] {
            let mut m = verified();
            where_it_ran(&mut m, emulated, KEPT, None);
            assert_eq!(
                (m.status, m.ran_on),
                (Status::Verified, Some(RanOn::CpuByCompiler))
            );
            assert!(m.reason.unwrap().contains("it writes the scalar `sum`"));
        }
        // One SCoP of two kept: the other must run on the GPU.
        let mut m = verified();
        where_it_ran(&mut m, true, &format!("{ON_GPU}{KEPT}"), Some(NOTICE));
        assert_eq!(m.status, Status::Failed);
        // A failed build or run stays failed, with no place to have run.
        let mut m = Measurement::failed("it crashed", Some(1.0));
        where_it_ran(&mut m, true, ON_GPU, Some(NOTICE));
        assert_eq!((m.status, m.ran_on), (Status::Failed, None));
    }
}
