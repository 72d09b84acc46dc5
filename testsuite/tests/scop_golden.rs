//! Golden tests of `tiledflow --emit scop` for the 30 PolyBench kernels at MINI size: the
//! printed SCoP (parameters, arrays, and per statement its domain, original schedule, accesses
//! and body) must equal `testsuite/data/scop/<kernel>.expected`, compared as every stage file is
//! (`testsuite::golden`); `TILEDFLOW_BLESS=1` rewrites the files instead of comparing; review the
//! diff.
//!
//! Oracles: a handful of files were checked by hand against the kernels' loops (see
//! `testsuite/data/scop/README.md`); for all 30, `tests/round_trip.rs` regenerates each kernel
//! from exactly this extraction and checks it against the original program.

use std::process::Command;

use testsuite::golden::compare_or_bless;
use testsuite::{kernel_names, kernel_path, repo_root, tool_path, utilities_dir};

fn emit_scop(kernel: &str) -> String {
    let out = Command::new(tool_path("tiledflow").expect("tiledflow is built"))
        .arg(kernel_path(kernel))
        .args(["--emit", "scop", "-DMINI_DATASET", "-I"])
        .arg(utilities_dir())
        .output()
        .expect("tiledflow runs");
    assert!(
        out.status.success(),
        "{kernel}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{kernel}: unexpected diagnostics: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

#[test]
fn every_kernel_prints_its_golden_scop() {
    let dir = repo_root().join("testsuite/data/scop");
    let names = kernel_names().expect("kernels are listed");
    assert_eq!(names.len(), 30, "the 30 PolyBench kernels: {names:?}");
    let mut mismatches = Vec::new();
    for kernel in &names {
        let actual = emit_scop(kernel);
        // Printers are deterministic: a second run prints the same bytes.
        assert_eq!(
            actual,
            emit_scop(kernel),
            "{kernel}: output differs between runs"
        );
        let path = dir.join(format!("{kernel}.expected"));
        if let Err(mismatch) = compare_or_bless(&format!("{kernel}: --emit scop"), &actual, &path) {
            mismatches.push(mismatch);
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} kernel(s) differ (TILEDFLOW_BLESS=1 rewrites the files; review the diff):\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    // No golden file for a kernel that does not exist.
    for entry in std::fs::read_dir(&dir).expect("data directory") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if let Some(kernel) = name.strip_suffix(".expected") {
            assert!(
                names.iter().any(|n| n == kernel),
                "stray golden file {name}"
            );
        }
    }
}
