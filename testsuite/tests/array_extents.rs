//! Task functions see an array with the constant inner extents of its declaration, so that the C
//! compiler knows its strides: through strides read at run time it cannot tell two rows apart,
//! and it versions or scalarizes the point loops (heat-3d's ran 1.7x slower for that alone).
//! A file generated for one size must then refuse to compile for another. The arrays reach the
//! task body as `restrict`-qualified parameters (the C compiler ignores the qualifier on locals).

use std::process::Command;
use testsuite::paths::{kernel_dir, kernel_path, reference_cc, tool_path, utilities_dir};

#[test]
fn task_functions_use_constant_extents_and_the_file_checks_them() {
    let dir = tempfile::Builder::new()
        .prefix("tiledflow-extents.")
        .tempdir()
        .unwrap();
    let out = dir.path().join("gemm.c");
    let status = Command::new(tool_path("tiledflow").unwrap())
        .args(["--target", "seq", "-DMINI_DATASET", "-I"])
        .arg(utilities_dir())
        .arg(kernel_path("gemm"))
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success(), "tiledflow failed on gemm");
    let text = std::fs::read_to_string(&out).unwrap();
    // gemm.h at MINI: C[NI][NJ] = C[20][25], A[NI][NK] = A[20][30], B[NK][NJ] = B[30][25].
    for decl in [
        "(*restrict const C)[25]",
        "(*restrict const A)[30]",
        "(*restrict const B)[25]",
    ] {
        assert!(
            text.contains(decl),
            "no `{decl}` in the generated gemm:\n{text}"
        );
    }
    let compile = |size: &str| {
        Command::new(reference_cc())
            .args(["-c", size, "-I"])
            .arg(utilities_dir())
            .arg("-I")
            .arg(kernel_dir("gemm"))
            .arg(&out)
            .arg("-o")
            .arg(out.with_extension("o"))
            .output()
            .unwrap()
    };
    let same = compile("-DMINI_DATASET");
    assert!(
        same.status.success(),
        "{}",
        String::from_utf8_lossy(&same.stderr)
    );
    let other = compile("-DSMALL_DATASET");
    let stderr = String::from_utf8_lossy(&other.stderr);
    assert!(
        !other.status.success(),
        "compiled for SMALL a file generated for MINI"
    );
    assert!(
        stderr.contains("array C has another size than when this file was generated"),
        "{stderr}"
    );
}

/// The written local scalars reach the task body as `restrict`-qualified parameters too:
/// otherwise two of them may be one for all the C compiler knows, and durbin's `sum` was stored
/// and `alpha` loaded on every iteration of the loop that updates `z` beside the sum.
#[test]
fn written_scalars_are_restrict_parameters_of_the_task_bodies() {
    let dir = tempfile::Builder::new()
        .prefix("tiledflow-scalars.")
        .tempdir()
        .unwrap();
    let out = dir.path().join("durbin.c");
    let status = Command::new(tool_path("tiledflow").unwrap())
        .args(["-DMINI_DATASET", "-I"])
        .arg(utilities_dir())
        .arg(kernel_path("durbin"))
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success(), "tiledflow failed on durbin");
    let text = std::fs::read_to_string(&out).unwrap();
    for scalar in ["alpha", "beta", "sum"] {
        let param = format!("double *restrict const {scalar})");
        let param_mid = format!("double *restrict const {scalar},");
        assert!(
            text.contains(&param) || text.contains(&param_mid),
            "no `{param}` in the generated durbin:\n{text}"
        );
        let local = format!("double *const {scalar} = tf_env->{scalar};");
        assert!(!text.contains(&local), "`{local}` in the generated durbin");
    }
}
