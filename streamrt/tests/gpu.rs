//! The GPU path of the C ABI (`tf_gpu_*`) without a GPU: `tests/c/gpu_graph.c`, a C program
//! with a wavefront and a diamond of dependent launches, runs on the emulated device
//! (`TILEDFLOW_GPU=emulate`) and must match its own CPU computation; a deliberately dropped
//! dependence must show up as a wrong result (the emulation is faithful, not sequential); without
//! a device the program prints one notice line and computes on the CPU; misuse ends with a
//! `streamrt: error: GPU: ...` message naming the task and kernel.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

#[path = "support/staticlib.rs"]
mod support;
use support::compile_test_program;

/// The compiled `gpu_graph` program, shared by the tests of this binary.
fn program() -> &'static Path {
    static EXE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &EXE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let exe = compile_test_program("gpu_graph", dir.path());
        (dir, exe)
    })
    .1
}

/// Runs `gpu_graph args` with `TILEDFLOW_GPU` set to `gpu` (unset when `None`).
fn run(gpu: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = Command::new(program());
    cmd.args(args)
        .env_remove("TILEDFLOW_GPU")
        .env_remove("TILEDFLOW_TRACE")
        .env_remove("TILEDFLOW_STATS");
    if let Some(gpu) = gpu {
        cmd.env("TILEDFLOW_GPU", gpu);
    }
    cmd.output().expect("run gpu_graph")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Checks a successful run and returns its stdout.
fn success(output: &Output, what: &str) -> String {
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(
        output.status.success(),
        "{what}: {}\nstdout:\n{stdout}stderr:\n{stderr}",
        output.status
    );
    stdout
}

/// Checks that `stderr` is exactly one notice line, and returns it.
fn one_notice(stderr: &str, what: &str) -> String {
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{what}: expected one notice line, got:\n{stderr}"
    );
    let line = lines[0];
    assert!(
        line.starts_with("tiledflow: ") && line.ends_with("running the CPU task version"),
        "{what}: not the fallback notice: {line}"
    );
    line.to_string()
}

#[test]
fn emulated_launch_graphs_compute_what_the_cpu_computes() {
    for args in [
        &["wave", "6", "100"][..],
        &["wave", "1", "1"],
        &["wave", "9", "40"],
        &["diamond"],
    ] {
        let what = args.join(" ");
        let gpu = run(Some("emulate"), args);
        let gpu_out = success(&gpu, &format!("emulated {what}"));
        assert!(
            gpu.stderr.is_empty(),
            "emulated {what}: no notice on success:\n{}",
            text(&gpu.stderr)
        );
        let cpu_out = success(&run(Some("off"), args), &format!("cpu {what}"));
        // The program checks its device results against its CPU computation ("ok" or
        // "mismatch"); the CPU run must give the same checksums.
        assert!(
            gpu_out
                .lines()
                .all(|l| l.starts_with("ok ") && l.ends_with(" (gpu)")),
            "{what}: {gpu_out}"
        );
        assert_eq!(gpu_out.replace("(gpu)", "(cpu)"), cpu_out, "{what}");
    }
}

#[test]
fn a_dropped_dependence_gives_a_wrong_result_on_the_emulated_device() {
    // Task A sleeps 200 ms before writing; C reads what A writes. With C's input on A left out,
    // C goes on another emulated stream, which runs it at once: C reads A's array before A
    // has written it. A sequential emulation would hide this.
    let output = run(Some("emulate"), &["diamond-drop"]);
    let stdout = text(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{stdout}{}",
        text(&output.stderr)
    );
    assert!(stdout.starts_with("mismatch in diamond"), "{stdout}");
}

#[test]
fn without_a_device_one_notice_and_the_cpu_version() {
    // The program loads its module twice, as two generated files would: one notice only.
    let off = run(Some("off"), &["wave"]);
    assert!(success(&off, "off").ends_with("(cpu)\n"));
    assert_eq!(
        text(&off.stderr),
        "tiledflow: GPU disabled by TILEDFLOW_GPU=off; running the CPU task version\n"
    );

    let typo = run(Some("emulated"), &["wave"]);
    assert!(success(&typo, "typo").ends_with("(cpu)\n"));
    let line = one_notice(&text(&typo.stderr), "TILEDFLOW_GPU=emulated");
    assert!(
        line.contains("unknown TILEDFLOW_GPU=\"emulated\""),
        "{line}"
    );

    let no_emu = run(Some("emulate"), &["no-emu"]);
    assert!(success(&no_emu, "no-emu").ends_with("(cpu)\n"));
    let line = one_notice(&text(&no_emu.stderr), "emulate without host kernels");
    assert!(line.contains("kernel lin has no host version"), "{line}");

    // The real device: on a machine without one (this test's machines have no libcuda), the
    // notice says why; with one, the program runs on it, silently.
    let real = run(None, &["wave"]);
    let stdout = success(&real, "default device");
    if stdout.ends_with("(cpu)\n") {
        let line = one_notice(&text(&real.stderr), "default device");
        assert!(
            line.contains("no CUDA driver")
                || line.contains("CUDA device")
                || line.contains("NVRTC"),
            "{line}"
        );
    } else {
        assert!(real.stderr.is_empty(), "{}", text(&real.stderr));
    }
}

/// Runs a misuse mode on the emulated device: exit 70 with `expected` after "streamrt: error: ".
fn misuse(mode: &str, expected: &str) {
    let output = run(Some("emulate"), &[mode]);
    let stderr = text(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(70),
        "{mode}: {stderr}{}",
        text(&output.stdout)
    );
    let wanted = format!("streamrt: error: GPU: {expected}");
    assert!(
        stderr.contains(&wanted),
        "{mode}: stderr lacks\n{wanted}\n--- stderr:\n{stderr}"
    );
    assert!(output.stdout.is_empty(), "{mode}: the program went on");
}

#[test]
fn a_key_never_begun_is_an_error_naming_the_task() {
    misuse(
        "unknown-key",
        "tf_gpu_task_input: task Tile(1, 2) waits for Tile(1, 1), which no task has produced",
    );
}

#[test]
fn a_bad_kernel_index_is_an_error_naming_the_task() {
    misuse(
        "bad-kernel",
        "tf_gpu_launch: kernel index 5 out of range (the module has 1 kernel(s)), in task Tile(1, 2)",
    );
}
