//! Scalars privatized per task (polyhedral's `privatize`, taskgen's `private`): the temporaries of
//! `testsuite/data/privatize/rowsum.c` no longer order the tiles (no tile dependence is left,
//! where `--no-privatize` keeps a chain: `testsuite/data/stages/privatized_tiles.c`), so tiles that each write the scalar run concurrently;
//! the generated code must give each task its own copy and copy the last value back, which the
//! driver checks by comparing the arrays and the scalar returned after the SCoP with an
//! untransformed copy, for many sizes (empty loops included), on every target and 1 and 2 threads.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use testsuite::paths::{bin_dir, reference_cc, repo_root, tool_path};
use testsuite::process::{compile, run};

fn source() -> PathBuf {
    repo_root().join("testsuite/data/privatize/rowsum.c")
}

fn tiledflow(args: &[&str], output: &Path) -> String {
    let out = Command::new(tool_path("tiledflow").unwrap())
        .arg(source())
        .args(["--strict", "--tile-sizes", "4"])
        .args(args)
        .arg("-o")
        .arg(output)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "tiledflow {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(output).unwrap()
}

/// Builds `generated` (of `target`) with `driver` and the runtime in `dir`, and checks that it
/// prints "ok" on 1 and 2 threads.
fn runs_ok(dir: &Path, target: &str, driver: &Path, generated: &Path) {
    let runtime: PathBuf = bin_dir().unwrap().join("libstreamrt.a");
    let exe = dir.join(format!("run-{target}"));
    let mut flags = vec!["-O1", "-ffp-contract=off", "-lpthread", "-ldl"];
    if target == "omp" {
        flags.push("-fopenmp");
    }
    compile(
        reference_cc(),
        &[driver.to_path_buf(), generated.to_path_buf(), runtime],
        &flags,
        &exe,
    )
    .unwrap();
    for threads in ["1", "2"] {
        let env = [
            ("TILEDFLOW_NUM_THREADS", threads),
            ("OMP_NUM_THREADS", threads),
        ];
        let out = run(&exe, &env, Duration::from_secs(120)).unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.trim_end() == "ok",
            "{target}, {threads} thread(s):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn privatized_temporaries_verify_on_every_target() {
    let dir = tempfile::tempdir().unwrap();
    let driver = repo_root().join("testsuite/data/privatize/rowsum.driver.c");
    for target in ["tasks", "seq", "omp"] {
        let generated = dir.path().join(format!("rowsum.{target}.c"));
        let text = tiledflow(&["--target", target], &generated);
        for scalar in ["s", "t", "acc"] {
            assert!(
                text.contains(&format!("tf_out_{scalar}")),
                "{target}: {scalar} is not privatized"
            );
        }
        runs_ok(dir.path(), target, &driver, &generated);
    }
}

/// Temporary arrays (`testsuite/data/privatize/rowtemp.c`): doitgen's pattern, a row filled and
/// read in each iteration of two loops, is kept in an array of copies (its dependences gone), and
/// a row that the iterations only partly fill is not; both compute what the untransformed copies
/// compute, the temporaries' values after the SCoP included, on every target and thread count
/// (under tasks with the copies in blocks lent by tile row).
#[test]
fn temporary_arrays_get_arrays_of_copies_and_verify() {
    let dir = tempfile::tempdir().unwrap();
    let source = repo_root().join("testsuite/data/privatize/rowtemp.c");
    let driver = repo_root().join("testsuite/data/privatize/rowtemp.driver.c");
    for target in ["tasks", "seq", "omp"] {
        let generated = dir.path().join(format!("rowtemp.{target}.c"));
        let out = Command::new(tool_path("tiledflow").unwrap())
            .arg(&source)
            .args([
                "--strict",
                "--tile-sizes",
                "4",
                "--copy-blocks",
                "always",
                "-v",
                "--target",
                target,
                "-o",
            ])
            .arg(&generated)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{target}: {stderr}");
        let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("SCoP in")).collect();
        assert_eq!(lines.len(), 2, "{stderr}");
        assert!(
            lines[0].contains("in arrays of copies: sum"),
            "{target}: {}",
            lines[0]
        );
        // Under tasks the copies live in blocks lent by tile row (`polyhedral::copy_blocks`;
        // `always`: they are far below the 1 MiB of `auto`): rows of 4 `r` (7 in all: a partial
        // row), the last copy read from its block after the SCoP.
        assert_eq!(
            lines[0].contains("sum (in 2 blocks of 20 copies lent by tile row)"),
            target == "tasks",
            "{target}: {}",
            lines[0]
        );
        assert!(!lines[1].contains("arrays of copies"), "{}", lines[1]);
        runs_ok(dir.path(), target, &driver, &generated);
    }
}
