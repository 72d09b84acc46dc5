//! The generated C compiles without a warning under `-Wall -Wextra`: `tiledflow-cc` passes the
//! user's warning flags to the C compiler and points its diagnostics at the user's lines, so a
//! warning about a variable tiledflow declared (an array a task class does not touch, a loop
//! counter named in a comment) would be blamed on the user.

use std::process::Command;
use testsuite::par::on_cores;
use testsuite::paths::{
    kernel_dir, kernel_names, kernel_path, reference_cc, tool_path, utilities_dir,
};

/// Every PolyBench kernel at MINI, for the targets tasks, seq and omp, without vectors and (on
/// x86-64) with AVX2's, so that the vector code under `#if defined(TF_VBYTES)` compiles too.
#[test]
fn generated_code_of_every_kernel_compiles_without_warnings() {
    let mut widths: Vec<&[&str]> = vec![&[]];
    if cfg!(target_arch = "x86_64") {
        widths.push(&["-O2", "-mavx2"]);
    }
    // clang too where it is installed (`make peers` uses it): it warns about unused static
    // functions that gcc lets pass.
    let mut compilers = vec![reference_cc()];
    let clang = Command::new("clang-19").arg("--version").output();
    if clang.is_ok_and(|o| o.status.success()) {
        compilers.push("clang-19".into());
    }
    let dir = tempfile::Builder::new()
        .prefix("tiledflow-warnings.")
        .tempdir()
        .unwrap();
    // The kernels side by side, one per core (`testsuite::par`).
    let kernels = kernel_names().unwrap();
    let found: Vec<String> = on_cores(&kernels, |kernel| {
        let mut found = Vec::new();
        for target in ["tasks", "seq", "omp"] {
            let out = dir.path().join(format!("{kernel}-{target}.c"));
            let status = Command::new(tool_path("tiledflow").unwrap())
                .args(["--target", target, "-DMINI_DATASET", "-I"])
                .arg(utilities_dir())
                .arg(kernel_path(kernel))
                .arg("-o")
                .arg(&out)
                .status()
                .unwrap();
            assert!(
                status.success(),
                "tiledflow --target {target} failed on {kernel}"
            );
            for (width, cc) in widths
                .iter()
                .flat_map(|w| compilers.iter().map(move |c| (w, c)))
            {
                let output = Command::new(cc)
                    .args([
                        "-c",
                        "-Wall",
                        "-Wextra",
                        "-fopenmp",
                        "-DMINI_DATASET",
                        "-DPOLYBENCH_DUMP_ARRAYS",
                        "-I",
                    ])
                    .arg(utilities_dir())
                    .arg("-I")
                    .arg(kernel_dir(kernel))
                    .args(width.iter())
                    .arg(&out)
                    .arg("-o")
                    .arg(out.with_extension("o"))
                    .output()
                    .unwrap();
                let stderr = String::from_utf8_lossy(&output.stderr);
                assert!(
                    output.status.success(),
                    "{kernel} ({target}, {cc:?} {width:?}) does not compile:\n{stderr}"
                );
                if !stderr.trim().is_empty() {
                    found.push(format!("{kernel} ({target}, {cc:?} {width:?}):\n{stderr}"));
                }
            }
        }
        found
    })
    .concat();
    assert!(
        found.is_empty(),
        "warnings in generated code:\n{}",
        found.join("\n")
    );
}
