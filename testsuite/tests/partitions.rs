//! Task classes from the partition by signature, at SMALL: kernels whose tile domains split into
//! many classes (time-tiled stencils, triangular and fused nests), with tiles small enough that
//! every class is populated, on 1 and 2 threads. The MINI runs of every kernel are in
//! `differential.rs`.

use testsuite::{differential, Variant};

fn tasks(threads: &str) -> Variant {
    Variant::tiledflow_cc(format!("tasks, tile 8, {threads} thread(s)"))
        .expect("tiledflow-cc is built (cargo build --workspace)")
        .arg("--tiledflow-strict")
        .arg("--tiledflow-tile-sizes=8")
        .env("TILEDFLOW_NUM_THREADS", threads)
}

#[test]
fn partitioned_kernels_verify_at_small() {
    let mut failures = Vec::new();
    for kernel in ["jacobi-2d", "seidel-2d", "fdtd-2d", "lu", "3mm"] {
        if let Err(e) = differential(kernel, &[("SMALL_DATASET", "")], &[tasks("1"), tasks("2")]) {
            failures.push(format!("{e:#}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
