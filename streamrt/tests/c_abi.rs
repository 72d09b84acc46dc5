//! The C ABI end to end: compiles `tests/c/wavefront.c` against `include/streamrt.h` and the
//! static library with the system `cc`, runs it on 1, 2, 4 and 8 threads and checks its result
//! against a Rust computation of the same recurrence.

use std::process::Command;

#[path = "support/staticlib.rs"]
mod support;
use support::compile_test_program as compile;

/// What `wavefront N M` must print: the last cell and the sum of all cells, mod P.
fn expected_wavefront(n: usize, m: usize) -> String {
    const P: u64 = 1_000_003;
    let mut v = vec![0u64; n * m];
    for i in 0..n {
        for j in 0..m {
            let up = if i > 0 { v[(i - 1) * m + j] } else { 0 };
            let left = if j > 0 { v[i * m + j - 1] } else { 0 };
            v[i * m + j] = (up + left + 1) % P;
        }
    }
    let sum = v.iter().fold(0, |s, x| (s + x) % P);
    format!("ok {} {sum}\n", v[n * m - 1])
}

#[test]
fn c_wavefront_runs_in_dependence_order() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("wavefront", dir.path());
    for (n, m) in [(1, 1), (37, 53), (120, 90)] {
        let expected = expected_wavefront(n, m);
        for threads in ["1", "2", "4", "8"] {
            let output = Command::new(&exe)
                .args([n.to_string(), m.to_string()])
                .env("TILEDFLOW_NUM_THREADS", threads)
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(
                output.status.success(),
                "wavefront {n}x{m} on {threads} threads failed ({}): {stdout}{}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            );
            assert_eq!(stdout, expected, "wavefront {n}x{m} on {threads} threads");
        }
    }
}

#[test]
fn a_crashing_task_is_named_and_the_process_dies_of_the_signal() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("crash", dir.path());
    for (how, signal, number) in [
        ("segv", "SIGSEGV", 11),
        ("fpe", "SIGFPE", 8),
        ("abort", "SIGABRT", 6),
    ] {
        for threads in ["1", "2"] {
            let output = Command::new(&exe)
                .arg(how)
                .env("TILEDFLOW_NUM_THREADS", threads)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            let wanted = format!("streamrt: error: task Crash(3, 4) crashed: {signal}\n");
            assert!(
                stderr.contains(&wanted),
                "{how} on {threads} threads: stderr lacks {wanted:?}:\n{stderr}"
            );
            assert_eq!(
                output.status.signal(),
                Some(number),
                "{how} on {threads} threads: {}",
                output.status
            );
            assert!(output.stdout.is_empty(), "{how}: the program went on");
        }
    }
}

/// A program of the CPU targets carries no CUDA code: the GPU path and its bindings are in
/// `libstreamrt_gpu.a` (crate `streamrt-gpu`), not in `libstreamrt.a`. Before the split the
/// library held cudarc and NVRTC, and a program of the tasks target linked about 1950 of their
/// symbols (gemm: 6.9 MB, 5.7 after). Checked on the library and on a program linked with it.
#[test]
fn a_cpu_program_links_no_gpu_code() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile("wavefront", dir.path());
    for file in [support::staticlib(), exe] {
        let output = Command::new("nm")
            .arg(&file)
            .output()
            .expect("cannot run `nm` (binutils)");
        assert!(output.status.success(), "nm failed on {}", file.display());
        let symbols = String::from_utf8_lossy(&output.stdout);
        assert!(
            symbols.contains("tf_graph_begin"),
            "nm listed no runtime symbol of {}: the check below would pass vacuously",
            file.display()
        );
        let gpu: Vec<&str> = symbols
            .lines()
            .filter(|l| ["cudarc", "nvrtc", "tf_gpu_"].iter().any(|w| l.contains(w)))
            .take(5)
            .collect();
        assert!(gpu.is_empty(), "GPU code in {}: {gpu:?}", file.display());
    }
}
