//! Round trip of the frontend: every kernel through `tiledflow --target seq --no-tile --schedule
//! original --strict` (its SCoP rebuilt from the extracted domains, original schedule and
//! statement texts, without tiling), compiled by the reference compiler, must dump exactly the
//! arrays the original dumps. This is the independent oracle for what the frontend extracts
//! (domains, schedule order, statement bodies): a wrong domain or order changes the output.
//!
//! Frugal by design: MINI for all 30 kernels, SMALL for a handful with different shapes
//! (triangular, stencil with time loop, scalar temporaries, decreasing loop).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use testsuite::{
    compare, compile, define_flags, kernel_dir, kernel_names, kernel_path, original_flags,
    parse_dump, reference_cc, run, run_original, tool_path, utilities_dir, Tolerance,
};

/// Regenerates `kernel` with its original schedule and no tiling, then checks it.
fn round_trip(kernel: &str, defines: &[(&str, &str)], dir: &Path) -> Result<()> {
    let expected = run_original(kernel, defines).context("the original")?;
    let out_c = dir.join(format!("{kernel}.roundtrip.c"));
    let output = Command::new(tool_path("tiledflow")?)
        .arg(kernel_path(kernel))
        .args([
            "--target",
            "seq",
            "--no-tile",
            "--schedule",
            "original",
            "--strict",
            "-o",
        ])
        .arg(&out_c)
        .arg("-I")
        .arg(utilities_dir())
        .arg("-DPOLYBENCH_DUMP_ARRAYS")
        .args(define_flags(defines)?)
        .output()
        .context("running tiledflow")?;
    if !output.status.success() {
        bail!(
            "tiledflow failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let generated = std::fs::read_to_string(&out_c)?;
    if !generated.contains("/* tiledflow: SCoP 0, tiled, sequential */") {
        bail!("the output has no regenerated SCoP");
    }
    let exe = dir.join(kernel);
    // The output lies elsewhere: its `#include "<kernel>.h"` needs the kernel's directory.
    let mut flags = original_flags(defines)?;
    flags.extend(["-I".to_string(), kernel_dir(kernel).display().to_string()]);
    compile(reference_cc(), &[&out_c], &flags, &exe)
        .context("compiling the regenerated program")?;
    let ran = run(&exe, &[], Duration::from_secs(60))?;
    if !ran.status.success() {
        bail!("the regenerated program failed: {}", ran.status);
    }
    let actual = parse_dump(&String::from_utf8_lossy(&ran.stderr))?;
    compare(&expected, &actual, Tolerance::Exact)
        .map_err(|m| anyhow::anyhow!("differs from the original: {m}"))
}

fn check_all(kernels: &[String], defines: &[(&str, &str)]) {
    let dir = tempfile::Builder::new()
        .prefix("tiledflow-roundtrip.")
        .tempdir()
        .expect("temporary directory");
    let failures: Vec<String> = kernels
        .iter()
        .filter_map(|k| {
            round_trip(k, defines, dir.path())
                .err()
                .map(|e| format!("{k}: {e:#}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} kernel(s) failed the round trip:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn every_kernel_round_trips_at_mini() {
    let names = kernel_names().expect("kernels are listed");
    assert_eq!(names.len(), 30, "the 30 PolyBench kernels: {names:?}");
    check_all(&names, &[("MINI_DATASET", "")]);
}

#[test]
fn some_kernels_round_trip_at_small() {
    let names: Vec<String> = ["lu", "seidel-2d", "durbin", "deriche", "nussinov"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    check_all(&names, &[("SMALL_DATASET", "")]);
}
