//! The runner end to end, as `make test` runs it: every kernel at MINI verified for tiledflow's
//! targets (this is the suite-wide MINI check; the testsuite's differential tests cover other
//! sizes and tile sizes) and at MEDIUM under the fixed fusions with vectors, and the runner's
//! own verdicts: a target tiledflow-cc rejects is
//! `failed` with tiledflow-cc's reason, a build whose output differs is `WRONG`, a timed run
//! has times and speedups, and the cuda targets say where they ran (an emulated run that fell
//! back to the CPU fails).

use std::path::Path;

use indicatif::ProgressBar;
use polybench::{run_suite, Config, Report, Size, Status, Target};

/// The targets every kernel must verify for at MINI. Add "omp" here once
/// `--tiledflow-target=omp` has landed.
const MINI_TARGETS: &[&str] = &["seq", "omp", "tasks"];

fn targets(names: &[&str]) -> Vec<Target> {
    names.iter().map(|t| Target::parse(t).unwrap()).collect()
}

fn run(config: &Config) -> Report {
    run_suite(config, &ProgressBar::hidden()).unwrap_or_else(|e| panic!("{e:#}"))
}

/// Every kernel, every target of [`MINI_TARGETS`], 2 threads, tiles of 4 (many tiles and tile
/// dependences even at MINI), debug tiledflow and `cc -O1`: verification only.
#[test]
fn every_kernel_verifies_at_mini() {
    let kernels = testsuite::kernel_names().unwrap();
    assert!(
        kernels.len() >= 30,
        "expected the 30 PolyBench kernels, found {}",
        kernels.len()
    );
    let config = Config::verification(Size::Mini, kernels.clone(), targets(MINI_TARGETS));
    let report = run(&config);
    assert_eq!(report.kernels.len(), kernels.len());
    assert_eq!(report.targets, MINI_TARGETS);
    assert!(
        report.all_verified(),
        "not every build verified:\n{}\n{}",
        report.table(),
        report.problems()
    );
}

/// Every kernel at MEDIUM under the fixed fusions `min` and `max`, with the default tile sizes
/// and vectors (`-O2 -march=native`): full tiles with register kernels, which MINI's tiles of
/// 4 without vectors never reach (trmm's kernel under `max` read outside its triangle at
/// MEDIUM, and nowhere at MINI).
#[test]
fn every_kernel_verifies_at_medium_under_the_fixed_fusions() {
    let kernels = testsuite::kernel_names().unwrap();
    let fixed = ["tasks@min", "tasks@max"];
    let mut config = Config::verification(Size::Medium, kernels.clone(), targets(&fixed));
    config.tile_sizes = None;
    config.opt_flags = vec!["-O2".to_string(), "-march=native".to_string()];
    let report = run(&config);
    assert_eq!(report.kernels.len(), kernels.len());
    assert!(
        report.all_verified(),
        "not every build verified:\n{}\n{}",
        report.table(),
        report.problems()
    );
}

/// A target name tiledflow-cc does not know is a `failed` result carrying tiledflow-cc's
/// message, not an error of the whole run.
#[test]
fn a_rejected_target_fails_with_the_reason() {
    let config = Config::verification(
        Size::Mini,
        vec!["gemm".into()],
        targets(&["no-such-target", "seq"]),
    );
    let report = run(&config);
    let results = &report.kernels[0].targets;
    assert_eq!(results[0].measurement.status, Status::Failed);
    let reason = results[0].measurement.reason.as_deref().unwrap();
    assert!(
        reason.contains("--tiledflow-target=no-such-target"),
        "{reason}"
    );
    assert_eq!(
        results[1].measurement.status,
        Status::Verified,
        "{:?}",
        results[1]
    );
    assert!(!report.all_verified());
}

/// A stand-in for tiledflow-cc that builds jacobi-1d with 3 time steps instead of MINI's 20:
/// every value of the result differs, and the runner must say WRONG, naming the array.
#[test]
fn a_different_result_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("tiledflow-cc");
    std::fs::write(
        &fake,
        "#!/usr/bin/env bash\nargs=()\nfor a in \"$@\"; do [[ $a == --tiledflow-* ]] || args+=(\"$a\"); done\nexec cc \"${args[@]}\" -DTSTEPS=3\n",
    )
    .unwrap();
    make_executable(&fake);
    let mut config = Config::verification(Size::Mini, vec!["jacobi-1d".into()], targets(&["seq"]));
    config.bin_dir = Some(dir.path().to_path_buf());
    let report = run(&config);
    let m = &report.kernels[0].targets[0].measurement;
    assert_eq!(m.status, Status::Wrong, "{m:?}");
    let reason = m.reason.as_deref().unwrap();
    assert!(
        reason.contains("array `A`") && reason.contains("values differ"),
        "{reason}"
    );
}

/// A timed run: every build runs `repeat` times, the median and the speedup are there, and
/// tiledflow's own time is measured.
#[test]
fn a_timed_run_has_medians_and_speedups() {
    let mut config = Config::verification(Size::Mini, vec!["atax".into()], targets(&["seq"]));
    config.timed = true;
    config.repeat = 3;
    let report = run(&config);
    let k = &report.kernels[0];
    assert_eq!(k.original.times_s.len(), 3, "{:?}", k.original);
    let seq = &k.targets[0];
    assert_eq!(seq.measurement.status, Status::Verified, "{seq:?}");
    assert_eq!(seq.measurement.times_s.len(), 3);
    assert!(seq.measurement.median_s.is_some());
    assert!(
        seq.measurement.tiledflow_s.is_some_and(|t| t > 0.0),
        "{seq:?}"
    );
    // MINI kernels can run in under the clock's microsecond, which leaves no speedup; when both
    // medians are positive there must be one.
    if k.original.median_s.is_some_and(|t| t > 0.0)
        && seq.measurement.median_s.is_some_and(|t| t > 0.0)
    {
        assert!(seq.speedup.is_some(), "{seq:?}");
    }
}

/// `--promote-below`: a kernel whose original is faster than the limit runs at the bigger size
/// (its report and CSV rows say which), one slower than the limit stays.
#[test]
fn a_fast_kernel_is_promoted_to_the_bigger_size() {
    let mut config = Config::verification(Size::Mini, vec!["atax".into()], targets(&["seq"]));
    config.timed = true;
    config.promote = Some((1000.0, Size::Small));
    let report = run(&config);
    let k = &report.kernels[0];
    assert_eq!(k.size.as_deref(), Some("SMALL"));
    assert_eq!(k.targets[0].measurement.status, Status::Verified, "{k:?}");
    assert!(
        report.table().contains("atax (SMALL)"),
        "{}",
        report.table()
    );
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("polybench.csv");
    report.write_csv(&csv).unwrap();
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(
        text.lines().skip(1).all(|l| l.contains(",SMALL,")),
        "{text}"
    );

    config.promote = Some((0.0, Size::Small));
    let report = run(&config);
    assert_eq!(report.kernels[0].size, None);
}

/// `cuda-emu` runs the GPU path on the emulated device and says so; a kernel the compiler keeps
/// on the CPU says that; `cuda` without a device verifies as its CPU fallback (with a GPU, on
/// it). Then a stand-in for tiledflow-cc whose C++ compiler leaves the emulated kernels out:
/// the program falls back, and `cuda-emu` must call that a failure, not "verified".
#[test]
fn cuda_targets_say_where_they_ran_and_an_emulated_fallback_fails() {
    use polybench::RanOn;
    let kernels = vec!["gemm".to_string(), "durbin".to_string()];
    let config = Config::verification(Size::Mini, kernels.clone(), targets(&["cuda-emu", "cuda"]));
    let report = run(&config);
    let on = |k: usize, t: usize| {
        let m = &report.kernels[k].targets[t].measurement;
        assert_eq!(m.status, Status::Verified, "{}", report.table());
        m.ran_on
    };
    assert_eq!(on(0, 0), Some(RanOn::EmulatedGpu));
    assert!(matches!(on(0, 1), Some(RanOn::CpuFallback | RanOn::Gpu)));
    assert_eq!(on(1, 0), Some(RanOn::CpuByCompiler));
    assert_eq!(on(1, 1), Some(RanOn::CpuByCompiler));
    let why = report.kernels[1].targets[0]
        .measurement
        .reason
        .as_deref()
        .unwrap();
    assert!(
        why.contains("SCoP stays on the CPU (--target cuda)"),
        "{why}"
    );
    assert!(report.table().contains("verified, emulated GPU"));

    let dir = tempfile::tempdir().unwrap();
    let cxx = dir.path().join("empty-cxx");
    std::fs::write(
        &cxx,
        "#!/usr/bin/env bash\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\necho | exec cc -x c -c - -o \"$out\"\n",
    )
    .unwrap();
    make_executable(&cxx);
    let real = testsuite::bin_dir().unwrap().join("tiledflow-cc");
    let fake = dir.path().join("tiledflow-cc");
    std::fs::write(
        &fake,
        format!(
            "#!/usr/bin/env bash\nTILEDFLOW_CXX={} exec {} \"$@\"\n",
            cxx.display(),
            real.display()
        ),
    )
    .unwrap();
    make_executable(&fake);
    let mut config = Config::verification(Size::Mini, kernels, targets(&["cuda-emu"]));
    config.bin_dir = Some(dir.path().to_path_buf());
    let report = run(&config);
    let m = &report.kernels[0].targets[0].measurement;
    assert_eq!(
        (m.status, m.ran_on),
        (Status::Failed, Some(RanOn::CpuFallback)),
        "{m:?}"
    );
    let reason = m.reason.as_deref().unwrap();
    assert!(
        reason.contains("the GPU path did not run on the emulated device"),
        "{reason}"
    );
    assert!(reason.contains("running the CPU task version"), "{reason}");
    assert_eq!(
        report.kernels[1].targets[0].measurement.ran_on,
        Some(RanOn::CpuByCompiler)
    );
    assert!(!report.all_verified());
}

#[cfg(unix)]
fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}
