//! The cuda target (`tiledflow --target cuda`) without a GPU:
//! - every PolyBench kernel's `out.cu` compiles with NVRTC for sm_80 and sm_90, and exactly the
//!   kernels listed in [`ON_GPU`] get kernels (the others stay CPU task programs with a note);
//! - the emulated programs (`out.cu` built by the C++ compiler with the emulation header, run
//!   with `TILEDFLOW_GPU=emulate` on streamrt's emulated device, whose CUDA streams run
//!   concurrently) dump the same arrays as the original, bit for bit, at MINI (tiles of 8, so
//!   that tiles depend on each other across several streams) and SMALL (the default tiles);
//! - with `TILEDFLOW_GPU=off` the same program prints the fallback notice and verifies as the
//!   CPU task version.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;
use testsuite::compare::{compare, Tolerance};
use testsuite::differential::{original_flags, run_original};
use testsuite::dump::parse_dump;
use testsuite::paths::{
    bin_dir, kernel_dir, kernel_names, kernel_path, reference_cc, repo_root, tool_path,
    utilities_dir,
};
use testsuite::process::{compile, expect_success, run};

/// The kernels whose SCoPs run on the GPU path. The other two stay on the CPU, each for a reason
/// checked by hand: some of their task classes have no parallel loop (durbin: its classes of one
/// statement, and its `k` loop whose inner loops are fused and skewed into one sequential loop;
/// ludcmp: its forward and back substitutions, and its LU nest, whose `w` is private to each `i`
/// only). deriche, gramschmidt and symm write scalars: private to each GPU thread (deriche's
/// `ym1`, .., symm's `temp2`) or shared in a one-element device buffer (gramschmidt's `nrm`).
/// (cholesky, floyd-warshall, jacobi-1d, nussinov and seidel-2d had no parallel loop in their
/// tiles until the cuda target asked ISL for outer coincidence, which gives them parallel inner
/// bands.)
const ON_GPU: [&str; 28] = [
    "2mm",
    "3mm",
    "adi",
    "atax",
    "bicg",
    "cholesky",
    "correlation",
    "covariance",
    "deriche",
    "doitgen",
    "fdtd-2d",
    "floyd-warshall",
    "gemm",
    "gemver",
    "gesummv",
    "gramschmidt",
    "heat-3d",
    "jacobi-1d",
    "jacobi-2d",
    "lu",
    "mvt",
    "nussinov",
    "seidel-2d",
    "symm",
    "syr2k",
    "syrk",
    "trisolv",
    "trmm",
];

/// The notice of a program that falls back to its CPU task version.
const FALLBACK: &str = "running the CPU task version";

/// `out.c` and `out.cu` of `kernel` for the cuda target, in `dir`.
fn translate(
    kernel: &str,
    defines: &[&str],
    extra: &[&str],
    dir: &Path,
) -> Result<(PathBuf, String, String)> {
    let out_c = dir.join(format!("{kernel}.c"));
    let mut cmd = std::process::Command::new(tool_path("tiledflow")?);
    cmd.arg("--target")
        .arg("cuda")
        .arg("--strict")
        .arg(kernel_path(kernel))
        .arg("-o")
        .arg(&out_c);
    cmd.arg("-I")
        .arg(utilities_dir())
        .arg("-I")
        .arg(kernel_dir(kernel));
    cmd.args(defines.iter().map(|d| format!("-D{d}")))
        .args(extra);
    let output = cmd.output().context("running tiledflow")?;
    if !output.status.success() {
        bail!(
            "tiledflow --target cuda failed on {kernel}:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let c = std::fs::read_to_string(&out_c)?;
    let cu = std::fs::read_to_string(out_c.with_extension("cu"))
        .context("tiledflow wrote no .cu file")?;
    Ok((out_c, c, cu))
}

/// Builds the emulated program of `kernel` (sizes `defines`, tiledflow options `extra`).
fn build_emulated(kernel: &str, defines: &[&str], extra: &[&str], dir: &Path) -> Result<PathBuf> {
    let (out_c, _, cu) = translate(kernel, defines, extra, dir)?;
    if !cu.contains("__global__") {
        bail!("{kernel}: no kernel in the .cu file");
    }
    let pairs: Vec<(&str, &str)> = defines.iter().map(|d| (*d, "")).collect();
    let mut flags = original_flags(&pairs)?;
    flags.extend(["-I".to_string(), kernel_dir(kernel).display().to_string()]);
    let exe = dir.join(kernel);
    link_emulated(&out_c, &flags, &exe)?;
    Ok(exe)
}

/// Builds the emulated program `exe` from `out_c` and the `.cu` file beside it, with the C
/// compiler's `flags`.
fn link_emulated(out_c: &Path, flags: &[String], exe: &Path) -> Result<()> {
    let emu_h = repo_root().join("streamrt/include/tf_cuda_emu.h");
    let cu_obj = out_c.with_extension("cu.o");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
    let status = std::process::Command::new(&cxx)
        .args([
            "-x",
            "c++",
            "-O1",
            "-ffp-contract=off",
            "-DTF_CUDA_EMULATE",
            "-include",
        ])
        .arg(&emu_h)
        .arg("-c")
        .arg(out_c.with_extension("cu"))
        .arg("-o")
        .arg(&cu_obj)
        .status()
        .with_context(|| format!("running {cxx}"))?;
    if !status.success() {
        bail!(
            "{cxx} failed on {}'s .cu file (emulated build)",
            out_c.display()
        );
    }
    // The runtime with its GPU path (the CPU targets' libstreamrt.a has none).
    let runtime = bin_dir()?.join("libstreamrt_gpu.a");
    // The libraries after the objects that need them.
    let sources = [
        out_c.to_path_buf(),
        cu_obj,
        runtime,
        "-lstdc++".into(),
        "-lpthread".into(),
        "-ldl".into(),
        "-lm".into(),
    ];
    compile(reference_cc(), &sources, flags, exe)
}

/// Builds, runs with `gpu` as `TILEDFLOW_GPU` and compares with the original; returns stderr.
fn verify(kernel: &str, defines: &[&str], extra: &[&str], gpu: &str) -> Result<String> {
    let dir = tempfile::Builder::new()
        .prefix("tiledflow-cuda.")
        .tempdir()?;
    let exe = build_emulated(kernel, defines, extra, dir.path())?;
    let pairs: Vec<(&str, &str)> = defines.iter().map(|d| (*d, "")).collect();
    let expected = run_original(kernel, &pairs)?;
    let output = run(&exe, &[("TILEDFLOW_GPU", gpu)], Duration::from_secs(300))?;
    expect_success("the emulated program", &output)?;
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let actual = parse_dump(&stderr)?;
    compare(&expected, &actual, Tolerance::Exact)
        .map_err(|m| anyhow::anyhow!("{kernel} {defines:?} {extra:?}: {m}"))?;
    Ok(stderr)
}

/// Verifies `kernel` on the emulated device at MINI with `--tile-sizes mini_tiles` (8 unless
/// said otherwise: many tiles, so tiles wait for each other across the device's streams) and at
/// SMALL with the target's default tiles.
fn emulated_with_tiles(kernel: &str, mini_tiles: &str) {
    for (defines, extra) in [
        (&["MINI_DATASET"], &["--tile-sizes", mini_tiles][..]),
        (&["SMALL_DATASET"], &[][..]),
    ] {
        match verify(kernel, defines, extra, "emulate") {
            Ok(stderr) => assert!(
                !stderr.contains(FALLBACK),
                "{kernel} {defines:?} {extra:?} fell back to the CPU:\n{stderr}"
            ),
            Err(e) => panic!("{kernel} {defines:?} {extra:?}: {e:#}"),
        }
    }
}

macro_rules! emulated_tests {
    ($($name:ident: $kernel:literal $(tiles $tiles:literal)?,)*) => {
        $(
            #[test]
            fn $name() {
                emulated_with_tiles($kernel, [$($tiles,)? "8"][0]);
            }
        )*
        /// The tests above cover exactly [`ON_GPU`].
        #[test]
        fn every_kernel_on_the_gpu_has_an_emulated_test() {
            let tested = [$($kernel),*];
            assert_eq!(tested, ON_GPU);
        }
    };
}

emulated_tests! {
    emulated_2mm: "2mm",
    emulated_3mm: "3mm",
    emulated_adi: "adi",
    emulated_atax: "atax",
    emulated_bicg: "bicg",
    emulated_cholesky: "cholesky",
    emulated_correlation: "correlation",
    emulated_covariance: "covariance",
    // The recursive filters carry values along their sequential dimension in scalars (`ym1`,
    // ...), private to a thread only when that dimension is not cut into tiles: tiles of 8
    // along the parallel dimension only.
    emulated_deriche: "deriche" tiles "8,1000",
    emulated_doitgen: "doitgen",
    emulated_fdtd_2d: "fdtd-2d",
    emulated_floyd_warshall: "floyd-warshall",
    emulated_gemm: "gemm",
    emulated_gemver: "gemver",
    emulated_gesummv: "gesummv",
    emulated_gramschmidt: "gramschmidt",
    emulated_heat_3d: "heat-3d",
    emulated_jacobi_1d: "jacobi-1d",
    emulated_jacobi_2d: "jacobi-2d",
    emulated_lu: "lu",
    emulated_mvt: "mvt",
    emulated_nussinov: "nussinov",
    emulated_seidel_2d: "seidel-2d",
    // temp2 sums over k for each (i, j): tiles of 8 along i and j, not k (as deriche).
    emulated_symm: "symm" tiles "8,8,1000",
    emulated_syr2k: "syr2k",
    emulated_syrk: "syrk",
    emulated_trisolv: "trisolv",
    emulated_trmm: "trmm",
}

#[test]
fn every_kernel_compiles_with_nvrtc_and_only_the_listed_ones_stay_on_the_cpu() {
    let dir = tempfile::Builder::new()
        .prefix("tiledflow-cuda.")
        .tempdir()
        .unwrap();
    for kernel in kernel_names().unwrap() {
        let (_, c, cu) = translate(&kernel, &["MINI_DATASET"], &[], dir.path()).unwrap();
        testsuite::nvrtc::expect_compiles(&cu, &format!("{kernel}.cu"));
        let on_gpu = ON_GPU.contains(&kernel.as_str());
        assert_eq!(
            cu.contains("extern \"C\" __global__"),
            on_gpu,
            "{kernel}: kernels in the .cu file"
        );
        assert_eq!(
            c.contains("if (tf_gpu_mod) {"),
            on_gpu,
            "{kernel}: a GPU control program in the .c file"
        );
        assert_eq!(
            c.contains("this SCoP stays on the CPU:"),
            !on_gpu,
            "{kernel}: the note of a SCoP left on the CPU"
        );
    }
}

#[test]
fn without_a_device_the_program_says_so_once_and_verifies_as_the_cpu_task_version() {
    for kernel in ["gemm", "atax"] {
        let stderr = verify(kernel, &["MINI_DATASET"], &["--tile-sizes", "8"], "off")
            .unwrap_or_else(|e| panic!("{e:#}"));
        let notices: Vec<&str> = stderr.lines().filter(|l| l.contains(FALLBACK)).collect();
        assert_eq!(notices.len(), 1, "{kernel}: one notice expected:\n{stderr}");
        assert!(notices[0].starts_with("tiledflow: "), "{}", notices[0]);
    }
}

/// `tiledflow --target cuda -o <out> gemm.c`.
fn translate_gemm_to(out: &std::ffi::OsStr) -> std::process::Output {
    std::process::Command::new(tool_path("tiledflow").unwrap())
        .args(["--target", "cuda", "-o"])
        .arg(out)
        .arg(kernel_path("gemm"))
        .arg("-I")
        .arg(utilities_dir())
        .output()
        .unwrap()
}

#[test]
fn standard_output_is_refused_since_the_kernels_need_a_file_of_their_own() {
    let output = translate_gemm_to("-".as_ref());
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--target cuda writes two files"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
    // Nor may the output be the kernel file itself.
    let dir = tempfile::Builder::new()
        .prefix("tiledflow-cuda.")
        .tempdir()
        .unwrap();
    let output = translate_gemm_to(dir.path().join("out.cu").as_os_str());
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("name it .c"));
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "nothing is written"
    );
    // Nor something other than a regular file (`-o /dev/null`, here a directory): the kernels
    // would go to a new file beside it.
    let other = dir.path().join("sub");
    std::fs::create_dir(&other).unwrap();
    let output = translate_gemm_to(other.as_os_str());
    assert_eq!(output.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("is not a regular file"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["sub"], "nothing is written");
}

#[test]
fn a_scop_that_cannot_be_a_kernel_stays_on_the_cpu_with_a_note() {
    let dir = tempfile::Builder::new()
        .prefix("tiledflow-cuda.")
        .tempdir()
        .unwrap();
    let src = dir.path().join("k.c");
    std::fs::write(
        &src,
        "void k(int n, double new[n], double b[n])\n{\n#pragma scop\n  for (int i = 0; i < n; i++)\n    b[i] = 2 * new[i];\n#pragma endscop\n}\n",
    )
    .unwrap();
    let out = dir.path().join("k.out.c");
    let output = std::process::Command::new(tool_path("tiledflow").unwrap())
        .args(["--target", "cuda", "-v", "-o"])
        .arg(&out)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "note: SCoP stays on the CPU (--target cuda): the variable `new` is a reserved word"
        ),
        "{stderr}"
    );
    let c = std::fs::read_to_string(&out).unwrap();
    assert!(
        c.contains("this SCoP stays on the CPU: the variable `new`"),
        "{c}"
    );
    assert!(
        !c.contains("tf_gpu_mod"),
        "no GPU code when no SCoP is on the GPU"
    );
    let cu = std::fs::read_to_string(out.with_extension("cu")).unwrap();
    assert!(!cu.contains("__global__"), "{cu}");
}

/// `tiledflow-cc --tiledflow-target=cuda` builds the same program with the emulated kernels
/// linked (`tiledflow::cc_cuda`): it verifies on the emulated device and, with no device, as the
/// CPU task version. (That the GPU path really runs is checked by `projects.rs`.)
#[test]
fn tiledflow_cc_builds_the_cuda_target_with_its_emulated_kernels() {
    let variant = |gpu: &str| {
        testsuite::Variant::tiledflow_cc(format!("cuda via tiledflow-cc, TILEDFLOW_GPU={gpu}"))
            .unwrap()
            .arg("--tiledflow-strict")
            .arg("--tiledflow-target=cuda")
            .arg("--tiledflow-tile-sizes=8")
            .env("TILEDFLOW_GPU", gpu)
    };
    testsuite::differential(
        "gemm",
        &[("MINI_DATASET", "")],
        &[variant("emulate"), variant("off")],
    )
    .unwrap_or_else(|e| panic!("{e:#}"));
}

/// Written scalars on the GPU path, read after the SCoP: `acc` carries its value from one
/// iteration of `k` to the next (and from before the SCoP), so it is shared, a buffer of one
/// element that its dependences order; `u` lives inside one iteration of `k` (private to each
/// task) but flows from the launch of one thread that sets it to the threads of the `i` loop, so
/// it is not private to a thread and is shared too (a variable at file scope, which kernels
/// cannot name directly); `t` lives inside one iteration (i, j), so
/// each GPU thread keeps its own, and the thread that runs its last write (i = j = N - 1) stores
/// it back.
const SCALARS_AFTER_THE_SCOP: &str = r#"#include <stdio.h>
#define N 37
static double A[N][N], B[N][N], Y[N][N], x[N];
static double u = -2.0;
static void kernel(void)
{
  double t = -1.0, acc = 0.25;
  int i, j, k;
#pragma scop
  for (k = 0; k < N; k++) {
    acc = acc * 0.5 + x[k];
    u = x[k] * 2.0;
    for (i = 0; i < N; i++)
      Y[k][i] = acc * A[k][i] + u;
  }
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      t = A[i][j] * 3.0 + Y[j][i];
      B[i][j] = t * t;
    }
#pragma endscop
  printf("t = %.17g, acc = %.17g, u = %.17g\n", t, acc, u);
}
int main(void)
{
  for (int i = 0; i < N; i++) {
    x[i] = i * 0.37;
    for (int j = 0; j < N; j++)
      A[i][j] = (i * j % 11) * 0.125;
  }
  kernel();
  double sum = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      sum += B[i][j] + Y[i][j];
  printf("sum = %.17g\n", sum);
  return 0;
}
"#;

#[test]
fn scalars_read_after_the_scop_hold_their_last_values_from_the_gpu() {
    let dir = tempfile::Builder::new()
        .prefix("tiledflow-cuda.")
        .tempdir()
        .unwrap();
    let src = dir.path().join("scalars.c");
    std::fs::write(&src, SCALARS_AFTER_THE_SCOP).unwrap();
    let flags: Vec<String> = ["-O1", "-ffp-contract=off"]
        .iter()
        .map(|f| f.to_string())
        .collect();
    let orig = dir.path().join("orig");
    compile(reference_cc(), &[src.clone(), "-lm".into()], &flags, &orig).unwrap();
    let expected = run(&orig, &[], Duration::from_secs(60)).unwrap();
    expect_success("the original", &expected).unwrap();
    // Tiles of 8: the last write of `t` is in one of 25 tiles.
    let out_c = dir.path().join("scalars.out.c");
    let output = std::process::Command::new(tool_path("tiledflow").unwrap())
        .args(["--target", "cuda", "--strict", "--tile-sizes", "8", "-o"])
        .arg(&out_c)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let cu = std::fs::read_to_string(out_c.with_extension("cu")).unwrap();
    assert!(
        cu.contains("double &acc = *tf_p_acc;"),
        "acc is the shared buffer's element:\n{cu}"
    );
    assert!(cu.contains("double &u = *tf_p_u;"), "u is shared:\n{cu}");
    assert!(
        cu.contains("double t = 0;") && cu.contains("*tf_p_t = t;"),
        "t is a variable of each thread:\n{cu}"
    );
    let exe = dir.path().join("scalars");
    link_emulated(&out_c, &flags, &exe).unwrap();
    let actual = run(
        &exe,
        &[("TILEDFLOW_GPU", "emulate")],
        Duration::from_secs(60),
    )
    .unwrap();
    expect_success("the emulated program", &actual).unwrap();
    let stderr = String::from_utf8_lossy(&actual.stderr);
    assert!(
        !stderr.contains(FALLBACK),
        "fell back to the CPU:\n{stderr}"
    );
    assert_eq!(
        String::from_utf8_lossy(&actual.stdout),
        String::from_utf8_lossy(&expected.stdout)
    );
}

/// A running sum whose value crosses every iteration of `i` (and enters from before the SCoP)
/// cannot be private to a thread: its dependences keep the loop sequential, so the SCoP stays on
/// the CPU and the note names the scalar. The same sum restarted for each row `i` is private to
/// the row's thread, and that SCoP gets a kernel.
#[test]
fn a_scalar_carried_across_iterations_keeps_its_scop_on_the_cpu() {
    let dir = tempfile::Builder::new()
        .prefix("tiledflow-cuda.")
        .tempdir()
        .unwrap();
    let compile_cuda = |name: &str, body: &str| {
        let src = dir.path().join(format!("{name}.c"));
        let text = format!(
            "void k(int n, double A[n][n], double B[n][n])\n{{\n  double s = 0.0;\n#pragma scop\n{body}#pragma endscop\n  (void)s;\n}}\n"
        );
        std::fs::write(&src, text).unwrap();
        let out = dir.path().join(format!("{name}.out.c"));
        let output = std::process::Command::new(tool_path("tiledflow").unwrap())
            .args(["--target", "cuda", "-v", "-o"])
            .arg(&out)
            .arg(&src)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let cu = std::fs::read_to_string(out.with_extension("cu")).unwrap();
        (String::from_utf8_lossy(&output.stderr).into_owned(), cu)
    };
    let carried = "  for (int i = 0; i < n; i++)\n    for (int j = 0; j < n; j++) {\n      s = s + A[i][j];\n      B[i][j] = s;\n    }\n";
    let (stderr, cu) = compile_cuda("carried", carried);
    assert!(
        stderr.contains(
            "SCoP stays on the CPU (--target cuda): the tiles of N0 have no parallel loop"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("the scalar `s`, written there, is not private to each task"),
        "{stderr}"
    );
    assert!(!cu.contains("__global__"), "{cu}");
    let per_row = "  for (int i = 0; i < n; i++) {\n    s = 0.0;\n    for (int j = 0; j < n; j++) {\n      s = s + A[i][j];\n      B[i][j] = s;\n    }\n  }\n";
    let (stderr, cu) = compile_cuda("per_row", per_row);
    assert!(!stderr.contains("stays on the CPU"), "{stderr}");
    assert!(
        cu.contains("__global__") && cu.contains("double s = 0;"),
        "{cu}"
    );
}

/// durbin stays on the CPU with the default fusion (its `k` loop's inner loops are fused into
/// one sequential loop), but under `--fuse min` its inner loops are parallel; its `sum`, private
/// to each task, is set by one launch and read by the next, so it is shared on the device (the
/// SCoP is scheduled again without privatizing it). Verified at MINI with tiles of 8.
#[test]
fn durbin_under_minimal_fusion_runs_on_the_gpu_with_its_sum_shared() {
    let extra = ["--fuse", "min", "--tile-sizes", "8"];
    let stderr =
        verify("durbin", &["MINI_DATASET"], &extra, "emulate").unwrap_or_else(|e| panic!("{e:#}"));
    assert!(
        !stderr.contains(FALLBACK),
        "durbin fell back to the CPU:\n{stderr}"
    );
    let dir = tempfile::Builder::new()
        .prefix("tiledflow-cuda.")
        .tempdir()
        .unwrap();
    let (_, _, cu) = translate("durbin", &["MINI_DATASET"], &extra, dir.path()).unwrap();
    assert!(cu.contains("double &sum = *tf_p_sum;"), "{cu}");
}

/// deriche's first nest keeps `j`, which carries its running filter values, whole on the GPU
/// (`ScheduleConfig::whole_carrying_members`): the printed forms say `whole`, not the sentinel.
/// (Its band is `[i, j]`; it was `[i, i, j]` before a joined band stopped repeating its outer
/// loop, `polyhedral::schedule`'s `under_outer_loop`.)
#[test]
fn a_member_left_whole_prints_as_whole() {
    for emit in ["tasks", "schedule"] {
        let out = std::process::Command::new(tool_path("tiledflow").unwrap())
            .args(["--target", "cuda", "--emit", emit, "-DMINI_DATASET", "-I"])
            .arg(utilities_dir())
            .arg(kernel_path("deriche"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains("tile sizes [256, whole]"),
            "--emit {emit}:\n{text}"
        );
        assert!(
            !text.contains(&i64::MAX.to_string()),
            "--emit {emit}:\n{text}"
        );
    }
}
