//! The GPU path of the C ABI (`tf_gpu_*`) without a GPU: `tests/c/gpu_graph.c`, a C program
//! with a wavefront and a diamond of dependent launches, runs on the emulated device
//! (`TILEDFLOW_GPU=emulate`) and must match its own CPU computation; a deliberately dropped
//! dependence must show up as a wrong result (the emulation is faithful, not sequential); without
//! a device the program prints one notice line and computes on the CPU; misuse ends with a
//! `streamrt: error: GPU: ...` message naming the task and kernel.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

#[path = "../../streamrt/tests/support/staticlib.rs"]
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

mod abi_misuse {
    //! Misuse through the `extern "C"` functions from Rust: each test re-runs this binary as a
    //! child (filtered to the same test, `GPU_MISUSE_CHILD` set) on the emulated device; the
    //! child must exit with 70 and the message before its scenario returns.

    use std::ffi::{c_long, c_uint, c_void};
    use std::process::Command;
    use std::ptr;

    use streamrt_gpu::gpu::abi::*;
    use streamrt_gpu::gpu::EmuFn;

    const CHILD_ENV: &str = "GPU_MISUSE_CHILD";

    unsafe extern "C" fn nop(_grid: *const u32, _block: *const u32, _args: *mut *mut c_void) {}

    /// In the child: a graph with one 2-d key space Tile [0, 3]^2 and task Tile(0, 0) done,
    /// handed to `scenario`. In the parent: checks the exit status and message.
    fn misuse(name: &str, scenario: impl FnOnce(*mut TfGpuGraph), expected: &str) {
        if std::env::var(CHILD_ENV).as_deref() == Ok(name) {
            let source = c"extern \"C\" __global__ void k() {}";
            let names = [c"k".as_ptr()];
            let emu: [Option<EmuFn>; 1] = [Some(nop)];
            // SAFETY: valid strings and arrays of one entry each.
            unsafe {
                let m = tf_gpu_load(source.as_ptr(), names.as_ptr(), emu.as_ptr(), 1);
                assert!(!m.is_null(), "no emulated device");
                let g = tf_gpu_graph_begin(m);
                let (lo, hi): ([c_long; 2], [c_long; 2]) = ([0, 0], [3, 3]);
                tf_gpu_stream_new(g, c"Tile".as_ptr(), 2, lo.as_ptr(), hi.as_ptr());
                tf_gpu_task_begin(g, 0, [0, 0].as_ptr());
                tf_gpu_task_end(g);
                scenario(g);
            }
            eprintln!("scenario {name} returned");
            std::process::exit(0);
        }
        let output = Command::new(std::env::current_exe().unwrap())
            .args([name, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, name)
            .env("TILEDFLOW_GPU", "emulate")
            .env("RUST_BACKTRACE", "0")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(70), "{name}: stderr:\n{stderr}");
        let wanted = format!("streamrt: error: GPU: {expected}");
        assert!(
            stderr.contains(&wanted),
            "{name}: stderr lacks\n{wanted}\n--- stderr:\n{stderr}"
        );
    }

    fn launch(g: *mut TfGpuGraph, block: [c_uint; 3]) {
        let grid: [c_uint; 3] = [1, 1, 1];
        // SAFETY: a live graph; no arguments.
        unsafe {
            tf_gpu_launch(
                g,
                0,
                grid.as_ptr(),
                block.as_ptr(),
                0,
                ptr::null_mut(),
                ptr::null(),
            )
        };
    }

    #[test]
    fn key_outside_the_box() {
        misuse(
            "abi_misuse::key_outside_the_box",
            // SAFETY: a live graph, a key of 2 values.
            |g| unsafe { tf_gpu_task_begin(g, 0, [4, 0].as_ptr()) },
            "tf_gpu_task_begin: key Tile(4, 0) outside the box [0, 0] .. [3, 3] of its stream",
        );
    }

    #[test]
    fn task_begun_twice() {
        misuse(
            "abi_misuse::task_begun_twice",
            // SAFETY: as above.
            |g| unsafe { tf_gpu_task_begin(g, 0, [0, 0].as_ptr()) },
            "tf_gpu_task_begin: task Tile(0, 0) begun twice",
        );
    }

    #[test]
    fn input_after_a_launch() {
        misuse(
            "abi_misuse::input_after_a_launch",
            |g| {
                // SAFETY: as above.
                unsafe { tf_gpu_task_begin(g, 0, [0, 1].as_ptr()) };
                launch(g, [32, 1, 1]);
                // SAFETY: as above.
                unsafe { tf_gpu_task_input(g, 0, [0, 0].as_ptr()) };
            },
            "tf_gpu_task_input: task Tile(0, 1) already launched a kernel; inputs come first",
        );
    }

    #[test]
    fn too_many_threads_per_block() {
        misuse(
            "abi_misuse::too_many_threads_per_block",
            |g| {
                // SAFETY: as above.
                unsafe { tf_gpu_task_begin(g, 0, [1, 0].as_ptr()) };
                launch(g, [64, 32, 1]);
            },
            "tf_gpu_launch: kernel k in task Tile(1, 0): invalid grid [1, 1, 1] / block [64, 32, 1]",
        );
    }

    #[test]
    fn launch_outside_a_task() {
        misuse(
            "abi_misuse::launch_outside_a_task",
            |g| launch(g, [32, 1, 1]),
            "tf_gpu_launch called outside a task",
        );
    }

    #[test]
    fn graph_ended_inside_a_task() {
        misuse(
            "abi_misuse::graph_ended_inside_a_task",
            // SAFETY: as above; the graph is given up.
            |g| unsafe {
                tf_gpu_task_begin(g, 0, [2, 2].as_ptr());
                tf_gpu_graph_end(g);
            },
            "tf_gpu_graph_end: task Tile(2, 2) was not ended (tf_gpu_task_end)",
        );
    }

    #[test]
    fn graph_used_from_another_thread() {
        misuse(
            "abi_misuse::graph_used_from_another_thread",
            |g| {
                let g = g as usize;
                std::thread::spawn(move || {
                    // SAFETY: a live graph (used from the wrong thread: the misuse).
                    unsafe { tf_gpu_task_begin(g as *mut TfGpuGraph, 0, [1, 1].as_ptr()) }
                })
                .join()
                .unwrap();
            },
            "tf_gpu_task_begin called from a thread other than the one that called tf_gpu_graph_begin",
        );
    }
}
