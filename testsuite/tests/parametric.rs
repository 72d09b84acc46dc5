//! Kernels whose sizes are parameters (not macros), so that the tile graph, its partitions and the
//! guards of the control program are parametric: `polyhedral/tests/data/{jacobi-2d,seidel-2d}.c`
//! transformed by `tiledflow-cc` (tiles of 4, strict), linked with a driver that runs them for many
//! sizes (degenerate ones included) and compares with an untransformed copy, on 1 and 2 threads;
//! and through `tiledflow --granularity intraband|interband` (tasks of several tiles).

use std::path::PathBuf;
use std::time::Duration;
use testsuite::paths::{bin_dir, reference_cc, repo_root, tool_path};
use testsuite::process::{compile, run};

fn check(kernel: &str) {
    let dir = tempfile::tempdir().unwrap();
    let source = repo_root().join(format!("polyhedral/tests/data/{kernel}.c"));
    let object = dir.path().join("kernel.o");
    let flags = [
        "-c",
        "-O1",
        "-ffp-contract=off",
        "--tiledflow-strict",
        "--tiledflow-tile-sizes=4",
    ];
    compile(
        tool_path("tiledflow-cc").unwrap(),
        &[&source],
        &flags,
        &object,
    )
    .unwrap();
    link_and_run(kernel, dir.path(), object);
}

/// Transforms with `tiledflow --granularity <granularity>`, then as [`check`].
fn check_granularity(kernel: &str, granularity: &str) {
    let dir = tempfile::tempdir().unwrap();
    let source = repo_root().join(format!("polyhedral/tests/data/{kernel}.c"));
    let generated = dir.path().join("kernel.tasks.c");
    let status = std::process::Command::new(tool_path("tiledflow").unwrap())
        .arg(&source)
        .args([
            "--strict",
            "--tile-sizes",
            "4",
            "--granularity",
            granularity,
            "-o",
        ])
        .arg(&generated)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "tiledflow --granularity {granularity} failed on {kernel}"
    );
    let object = dir.path().join("kernel.o");
    compile(
        reference_cc(),
        &[&generated],
        &["-c", "-O1", "-ffp-contract=off"],
        &object,
    )
    .unwrap();
    link_and_run(kernel, dir.path(), object);
}

fn link_and_run(kernel: &str, dir: &std::path::Path, object: PathBuf) {
    let driver = repo_root().join(format!("testsuite/data/parametric/{kernel}.driver.c"));
    let exe = dir.join("run");
    let runtime: PathBuf = bin_dir().unwrap().join("libstreamrt.a");
    let link = ["-O1", "-ffp-contract=off", "-lpthread", "-ldl"];
    compile(reference_cc(), &[driver, object, runtime], &link, &exe).unwrap();
    for threads in ["1", "2"] {
        let out = run(
            &exe,
            &[("TILEDFLOW_NUM_THREADS", threads)],
            Duration::from_secs(120),
        )
        .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.trim_end() == "ok",
            "{kernel}, {threads} thread(s):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn parametric_jacobi_2d_verifies_for_many_sizes() {
    check("jacobi-2d");
}

#[test]
fn parametric_seidel_2d_verifies_for_many_sizes() {
    check("seidel-2d");
}

#[test]
fn coarser_tasks_verify_for_many_sizes() {
    check_granularity("jacobi-2d", "intraband");
    check_granularity("seidel-2d", "interband");
}
