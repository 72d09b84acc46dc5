//! Files without `#pragma scop`, through the built tools as a user runs them: their loop nests
//! are found (`--scop auto`, the default for such files), the code around them is copied byte
//! for byte, the program computes what the original computes, and a file without any SCoP comes
//! out unchanged with a note.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use testsuite::{
    compare, compile, kernel_dir, kernel_path, parse_dump, reference_cc, run, tool_path,
    utilities_dir, Tolerance,
};

const PRE: &str = "#include <stdio.h>
#define N 45
/* a comment   with  odd   spacing */
static double A[N][N], B[N][N];

";
const HEAD: &str = "static void kernel(void)
{
  int i, j, t;
";
const NEST: &str = "  for (t = 0; t < 4; t++)
    for (i = 1; i < N - 1; i++)
      for (j = 1; j < N - 1; j++)
        A[i][j] = (A[i - 1][j] + A[i][j - 1] + A[i][j] + A[i][j + 1] + A[i + 1][j]) / 5;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      B[i][j] = A[j][i] * 2;
";
const POST: &str = "}

int main(void)
{
  int i, j;
  double sum = 0;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      A[i][j] = (double)((i * 7 + j * 3) % 11);
  kernel();
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      sum += B[i][j] * (i + 1) - A[i][j];
  printf(\"%.17g\\n\", sum);
  return 0;
}
";

fn tiledflow(args: &[&str]) -> Output {
    Command::new(tool_path("tiledflow").expect("tiledflow is built"))
        .args(args)
        .output()
        .expect("tiledflow runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p.display().to_string()
}

#[test]
fn nests_without_pragmas_are_transformed_and_the_rest_copied() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src_text = format!("{PRE}{HEAD}{NEST}{POST}");
    let src = write(dir.path(), "plain.c", &src_text);
    let out = dir.path().join("plain.seq.c");
    let o = tiledflow(&[
        &src,
        "--target",
        "seq",
        "--tile-sizes",
        "8",
        "-o",
        &out.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "no diagnostic without -v");
    let text = std::fs::read_to_string(&out).expect("output written");
    // Everything but the nests is copied: helpers and task functions go before the functions
    // that hold SCoPs, each SCoP's lines are replaced by its control program.
    assert!(text.starts_with(PRE), "{text}");
    // The function's head is intact and the nests' lines start with the control program (which
    // may first mark the loop counters it no longer uses as used).
    let kernel_at = text.find(HEAD).expect("the kernel's head is copied") + HEAD.len();
    let first_lines: String = text[kernel_at..].lines().take(2).collect();
    assert!(
        first_lines.starts_with("  {")
            && first_lines.contains("/* tiledflow: SCoP 0, tiled, sequential */"),
        "{text}"
    );
    assert!(
        !text[kernel_at..].contains("for (t = 0; t < 4; t++)"),
        "{text}"
    );
    // main's two nests are SCoPs too (the second reads `sum`, written in it: a scalar).
    assert!(
        text.contains("/* tiledflow: SCoP 2, tiled, sequential */"),
        "{text}"
    );
    assert!(
        text.ends_with("  printf(\"%.17g\\n\", sum);\n  return 0;\n}\n"),
        "{text}"
    );

    // The same program built by cc and through tiledflow-cc (tasks on 2 threads, and seq)
    // prints the same sum, to the last bit.
    let reference = dir.path().join("ref");
    compile(
        reference_cc(),
        &[&src],
        &["-O2", "-ffp-contract=off"],
        &reference,
    )
    .expect("cc");
    let expected = run(&reference, &[], Duration::from_secs(30)).expect("runs");
    let tfcc = tool_path("tiledflow-cc").expect("tiledflow-cc is built");
    for (name, extra) in [
        ("tasks", "--tiledflow-tile-sizes=8"),
        ("seq", "--tiledflow-target=seq"),
    ] {
        let exe = dir.path().join(name);
        compile(
            &tfcc,
            &[&src],
            &[
                "-O2",
                "-ffp-contract=off",
                "--tiledflow-strict",
                "--tiledflow-scop=auto",
                extra,
            ],
            &exe,
        )
        .expect("tiledflow-cc builds it");
        let got = run(
            &exe,
            &[("TILEDFLOW_NUM_THREADS", "2")],
            Duration::from_secs(30),
        )
        .expect("runs");
        assert!(
            got.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&got.stderr)
        );
        assert_eq!(got.stdout, expected.stdout, "{name}");
    }
}

#[test]
fn a_file_without_scops_comes_out_unchanged_with_a_note() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = "#include <stdio.h>\nint main(void)\n{\n  int i;\n  for (i = 0; i < 3; i++)\n    printf(\"%d\\n\", i);\n  return i;\n}\n";
    let src = write(dir.path(), "none.c", text);
    let out = dir.path().join("none.out.c").display().to_string();
    let o = tiledflow(&[&src, "-o", &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).expect("written"), text);
    assert_eq!(
        stderr(&o),
        format!("{src}: note: no static control part found; the file is unchanged\n")
    );
    // -v says why the nest was left as written.
    let o = tiledflow(&[&src, "-o", &out, "-v"]);
    assert_eq!(
        stderr(&o),
        format!(
            "{src}:6:5: note: not a static control part: `printf(\"%d\\n\", i)` (only assignments, compound assignments and increments are supported as statements)\n\
             {src}: note: no static control part found; the file is unchanged\n"
        )
    );
    // Under --scop pragma, a plain file has no SCoP either.
    let plain = write(dir.path(), "plain.c", &format!("{PRE}{HEAD}{NEST}{POST}"));
    let out2 = dir.path().join("plain.out.c").display().to_string();
    let o = tiledflow(&[&plain, "--scop", "pragma", "-o", &out2]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&out2).expect("written"),
        format!("{PRE}{HEAD}{NEST}{POST}")
    );
}

#[test]
fn a_syntax_error_exits_1_with_libclangs_diagnostic_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = write(dir.path(), "bad.c", "void f(void)\n{\n  int x = ;\n}\n");
    let out = dir.path().join("bad.out.c");
    let o = tiledflow(&[&src, "-o", &out.display().to_string()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        format!("tiledflow: error: {src}:3:11: error: expected expression\n")
    );
    assert!(!out.exists(), "no output file on failure");
    // Not even in the directory of the output (no temporary left behind).
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["bad.c".to_string()]);
}

#[test]
fn tiledflow_cc_checks_its_scop_option() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = write(dir.path(), "m.c", "int main(void) { return 0; }\n");
    let o = Command::new(tool_path("tiledflow-cc").expect("tiledflow-cc is built"))
        .args([src.as_str(), "--tiledflow-scop=everything", "-o"])
        .arg(dir.path().join("m"))
        .output()
        .expect("tiledflow-cc runs");
    assert!(!o.status.success());
    let said = stderr(&o);
    assert!(
        said.starts_with("tiledflow-cc: error: ")
            && said.contains("--tiledflow-scop=everything")
            && said.contains("auto")
            && said.contains("pragma"),
        "{said}"
    );
    let o = tiledflow(&[&src, "--scop", "everything", "-o", "-"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("invalid value 'everything' for '--scop <SCOP>'"),
        "{}",
        stderr(&o)
    );
}

/// PolyBench kernels with their pragmas removed, as plain code: under `--scop auto` the nests
/// that pass the alias rule (the init loops, nests touching one array, `lu` whole) become
/// tasks; the program must dump exactly what the original dumps.
#[test]
fn kernels_without_their_pragmas_compute_the_same() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tfcc = tool_path("tiledflow-cc").expect("tiledflow-cc is built");
    let mut failures = Vec::new();
    for kernel in ["lu", "gemm", "durbin", "nussinov", "seidel-2d"] {
        let text = std::fs::read_to_string(kernel_path(kernel)).expect("kernel source");
        let plain: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("#pragma"))
            .map(|l| format!("{l}\n"))
            .collect();
        let src = write(dir.path(), &format!("{kernel}.c"), &plain);
        let flags = [
            "-O2".to_string(),
            "-ffp-contract=off".to_string(),
            "-DMINI_DATASET".to_string(),
            "-DPOLYBENCH_DUMP_ARRAYS".to_string(),
            "-I".to_string(),
            utilities_dir().display().to_string(),
            "-I".to_string(),
            kernel_dir(kernel).display().to_string(),
        ];
        let reference = dir.path().join(format!("{kernel}.ref"));
        compile(reference_cc(), &[&src], &flags, &reference).expect("cc builds it");
        let expected = run(&reference, &[], Duration::from_secs(30)).expect("runs");
        let mut tf_flags = flags.to_vec();
        tf_flags.extend(["--tiledflow-strict", "--tiledflow-tile-sizes=4"].map(String::from));
        let exe = dir.path().join(format!("{kernel}.tasks"));
        compile(&tfcc, &[&src], &tf_flags, &exe).expect("tiledflow-cc builds it");
        let got = run(
            &exe,
            &[("TILEDFLOW_NUM_THREADS", "2")],
            Duration::from_secs(30),
        )
        .expect("runs");
        let dump = |o: &Output| parse_dump(&String::from_utf8_lossy(&o.stderr)).expect("a dump");
        if let Err(m) = compare(&dump(&expected), &dump(&got), Tolerance::Exact) {
            failures.push(format!("{kernel}: {m}"));
        }
        // Something was transformed: the default for a file without pragmas is auto.
        let o = tiledflow(&[
            &src,
            "--emit",
            "scop",
            "-DMINI_DATASET",
            "-I",
            &utilities_dir().display().to_string(),
            "-I",
            &kernel_dir(kernel).display().to_string(),
        ]);
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("# SCoP in "),
            "{kernel}: no SCoP found: {}",
            stderr(&o)
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
