//! The command lines as a C programmer uses them: `tiledflow` (help, version, `-o -`, `-v`,
//! exit status, no output file on failure) and `tiledflow-cc` (cc's arguments passed on, the
//! parser's flags, dependency files, standard input, diagnostics at the user's lines, the
//! fallback for sources it cannot handle, its own options).
//!
//! Every program built by tiledflow-cc is run and its output compared with the one `cc` builds.

mod common;

use common::{files_under, reference_cc, run, run_with_input, tool, write, Ran};
use std::path::Path;

/// Two SCoPs: a 2-D nest whose counters are declared before it, and a 1-D recurrence (one tile
/// dependence). `B[39]` is `3 * 39 * 40 / 2 = 2340`.
const TWO_SCOPS: &str = r#"#include <stdio.h>
#define N 40
double A[N][N], B[N];
void k1(void) {
  int i, j;
#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      A[i][j] = i + 2 * j;
#pragma endscop
}
void k2(void) {
#pragma scop
  for (int i = 1; i < N; i++)
    B[i] = B[i - 1] + A[i][i];
#pragma endscop
}
int main(void) {
  int unused1;
  k1();
  k2();
  for (int i = 0; i < N; i++)
    printf("%g\n", B[i]);
  return 0;
}
"#;

/// A SCoP with a syntax error at line 4, column 20.
const SYNTAX_ERROR: &str = "void f(int n, double *a) {\n#pragma scop\n  for (int i = 0; i < n; i++)\n    a[i] = a[i] +* ;\n#pragma endscop\n}\n";

fn tiledflow(dir: &Path, args: &[&str]) -> Ran {
    run(tool("tiledflow").current_dir(dir).args(args))
}

fn tiledflow_cc(dir: &Path, args: &[&str]) -> Ran {
    run(tool("tiledflow-cc").current_dir(dir).args(args))
}

/// Runs `dir/exe` and returns its standard output.
fn output_of(dir: &Path, exe: &str) -> String {
    run(&mut std::process::Command::new(dir.join(exe)))
        .expect(0)
        .stdout
}

/// tiledflow's arguments for PolyBench's `kernel` at `dataset` (`LARGE`), then `extra`.
fn polybench_args(kernel: &str, dataset: &str, extra: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("polybench");
    let mut a = vec![
        root.join(format!("kernels/{kernel}/{kernel}.c"))
            .display()
            .to_string(),
        "-I".into(),
        root.join("utilities").display().to_string(),
        format!("-D{dataset}_DATASET"),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

#[test]
fn tiledflow_help_shows_examples_and_version_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let help = tiledflow(dir.path(), &["--help"]).expect(0);
    assert!(
        help.stdout.contains("Examples:") && help.stdout.contains("tiledflow-cc"),
        "{}",
        help.said()
    );
    let version = tiledflow(dir.path(), &["--version"]).expect(0);
    assert!(
        version.stdout.starts_with("tiledflow "),
        "{}",
        version.said()
    );
}

#[test]
fn tiledflow_writes_standard_output_for_dash_and_one_verbose_line_per_scop() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "two.c", TWO_SCOPS);
    let r = tiledflow(dir.path(), &["two.c", "-o", "-", "-v", "--tile-sizes", "8"]).expect(0);
    assert!(
        r.stdout.contains("tf_task_begin") && r.stdout.contains("int main(void)"),
        "{}",
        r.said()
    );
    let lines: Vec<&str> = r.stderr.lines().filter(|l| l.contains("SCoP in")).collect();
    assert_eq!(lines.len(), 2, "{}", r.said());
    assert!(
        lines[0].starts_with("two.c: SCoP in k1() at line 6: 1 statements, 1 bands, 0 tile dependences, 1 task classes, idioms: none, "),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("two.c: SCoP in k2() at line 13: 1 statements, 1 bands, 1 tile dependences, 1 task classes, idioms: 1 point-to-point, "),
        "{}",
        lines[1]
    );
    assert!(lines.iter().all(|l| l.ends_with(" ms")), "{lines:?}");
    // Nothing but the input in the directory.
    assert_eq!(files_under(dir.path()), vec!["two.c"]);
}

#[test]
fn time_stages_prints_each_stage_per_scop_and_the_file_stages() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "two.c", TWO_SCOPS);
    let r = tiledflow(dir.path(), &["two.c", "-o", "out.c", "--time-stages"]).expect(0);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{}", r.said());
    for (line, f) in lines.iter().zip(["k1() at line 6: ", "k2() at line 13: "]) {
        assert!(line.starts_with(&format!("two.c: SCoP in {f}")), "{line}");
        for stage in ["deps ", "schedule ", "verify ", "tile deps ", "tasks "] {
            assert!(line.contains(stage), "{stage} missing: {line}");
        }
    }
    assert!(
        lines[2].starts_with("two.c: parse ") && lines[2].contains(", print "),
        "{}",
        lines[2]
    );
    // Without the flag, nothing on stderr.
    let r = tiledflow(dir.path(), &["two.c", "-o", "out.c"]).expect(0);
    assert_eq!(r.stderr, "", "{}", r.said());
}

#[test]
fn tiledflow_user_errors_exit_1_and_leave_no_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "bad.c", SYNTAX_ERROR);
    write(d, "two.c", TWO_SCOPS);
    write(d, "old.c", "previous output\n");
    // A syntax error: libclang's diagnostic at the user's line, and no output (an older one stays).
    let r = tiledflow(d, &["bad.c", "-o", "out.c"]).expect(1);
    assert!(
        r.stderr.contains("bad.c:4:20: error: expected expression"),
        "{}",
        r.said()
    );
    let r = tiledflow(d, &["bad.c", "-o", "old.c"]).expect(1);
    assert!(r.stderr.contains("bad.c:4:20"), "{}", r.said());
    assert_eq!(
        std::fs::read_to_string(d.join("old.c")).unwrap(),
        "previous output\n"
    );
    // A missing input.
    let r = tiledflow(d, &["missing.c", "-o", "out.c"]).expect(1);
    assert!(
        r.stderr.contains("missing.c: No such file or directory"),
        "{}",
        r.said()
    );
    // Outputs that cannot be written: a missing directory, a directory.
    let r = tiledflow(d, &["two.c", "-o", "no/such/dir/out.c"]).expect(1);
    assert!(
        r.stderr
            .contains("cannot write no/such/dir/out.c: No such file or directory"),
        "{}",
        r.said()
    );
    std::fs::create_dir(d.join("adir")).unwrap();
    let r = tiledflow(d, &["two.c", "-o", "adir"]).expect(1);
    assert!(r.stderr.contains("cannot write adir"), "{}", r.said());
    // A usage error is the user's too.
    let r = tiledflow(d, &["two.c", "--no-such-flag"]).expect(1);
    assert!(r.stderr.contains("--no-such-flag"), "{}", r.said());
    let r = tiledflow(d, &["two.c"]).expect(1);
    assert!(r.stderr.contains("no output file"), "{}", r.said());
    // No temporary left anywhere.
    assert_eq!(files_under(d), vec!["bad.c", "old.c", "two.c"]);
}

#[test]
fn tiledflow_output_file_has_the_usual_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "two.c", TWO_SCOPS);
    tiledflow(dir.path(), &["two.c", "-o", "out.c"]).expect(0);
    write(dir.path(), "plain", "");
    let mode = |n: &str| {
        std::fs::metadata(dir.path().join(n))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    // Whatever the umask, as a file created by `open`: not tempfile's private 0600.
    assert_eq!(mode("out.c"), mode("plain"));
}

#[test]
fn cc_builds_several_sources_objects_and_libraries_in_one_call() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The SCoP's bound comes from -D and its element type from a header found through -I: the
    // parser must get both, or the file is compiled without tiledflow (a warning we reject).
    write(
        d,
        "inc/elem.h",
        "typedef long elem;\nelem twice(elem x);\nelem plus_one(elem x);\n",
    );
    write(
        d,
        "k.c",
        "#include \"elem.h\"\nvoid k(elem a[M]) {\n#pragma scop\n  for (int i = 1; i < M; i++)\n    a[i] = a[i - 1] * 3 + i;\n#pragma endscop\n}\n",
    );
    write(
        d,
        "main.c",
        "#include <stdio.h>\n#include \"elem.h\"\nvoid k(elem a[M]);\nint main(void) {\n  elem a[M] = {1};\n  k(a);\n  for (int i = 0; i < M; i++) printf(\"%ld\\n\", plus_one(twice(a[i])));\n  return 0;\n}\n",
    );
    write(
        d,
        "twice.c",
        "#include \"elem.h\"\nelem twice(elem x) { return 2 * x; }\n",
    );
    write(
        d,
        "plus.c",
        "#include \"elem.h\"\nelem plus_one(elem x) { return x + 1; }\n",
    );
    for (src, obj) in [("twice.c", "twice.o"), ("plus.c", "plus.o")] {
        run(reference_cc()
            .current_dir(d)
            .args(["-c", "-I", "inc", src, "-o", obj]))
        .expect(0);
    }
    run(std::process::Command::new("ar")
        .current_dir(d)
        .args(["rcs", "libplus.a", "plus.o"]))
    .expect(0);
    let common = [
        "-O1",
        "-g",
        "-std=c99",
        "-Wall",
        "-fno-strict-aliasing",
        "-I",
        "inc",
        "-DM=20",
        "-UNDEBUG",
    ];
    let mut args: Vec<&str> = common.to_vec();
    args.extend([
        "k.c",
        "main.c",
        "twice.o",
        "-L.",
        "-lplus",
        "-o",
        "prog",
        "--tiledflow-verbose",
        "--tiledflow-tile-sizes=4",
    ]);
    let r = tiledflow_cc(d, &args).expect(0);
    assert!(
        r.stderr
            .contains("k.c: SCoP in k() at line 3: 1 statements"),
        "{}",
        r.said()
    );
    assert!(!r.stderr.contains("warning"), "{}", r.said());
    let mut args: Vec<&str> = common.to_vec();
    args.extend(["k.c", "main.c", "twice.o", "-L.", "-lplus", "-o", "ref"]);
    run(reference_cc().current_dir(d).args(&args)).expect(0);
    let out = output_of(d, "prog");
    assert_eq!(out.lines().count(), 20);
    assert_eq!(out, output_of(d, "ref"));
}

#[test]
fn cc_compiles_objects_with_warnings_at_the_users_lines() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "two.c", TWO_SCOPS);
    let r = tiledflow_cc(d, &["-Wall", "-c", "two.c", "--tiledflow-verbose"]).expect(0);
    assert!(r.stderr.contains("two.c: SCoP in k2()"), "{}", r.said());
    // The one warning cc gives for the user's code, at the user's line; the counters of k1,
    // which the generated code no longer uses, are not called unused.
    assert!(
        r.stderr.contains("two.c:19:7: warning: unused variable"),
        "{}",
        r.said()
    );
    assert!(
        !r.stderr.contains("tiledflow-cc."),
        "a temporary named in {}",
        r.said()
    );
    assert_eq!(
        r.stderr.matches("unused variable").count(),
        1,
        "{}",
        r.said()
    );
    // Compiling only: streamrt is not linked, the object is where cc puts it.
    assert_eq!(files_under(d), vec!["two.c", "two.o"]);
    tiledflow_cc(d, &["two.o", "-o", "prog"]).expect(0);
    assert_eq!(output_of(d, "prog").lines().last(), Some("2340"));
}

/// Warnings about a statement inside a task body point at the statement's own line: each
/// statement of a task function is preceded by a `#line` directive.
#[test]
fn cc_warnings_inside_task_bodies_point_at_the_statement() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = "#define N 40\ndouble B[N];\nfloat F[N];\nvoid k(void) {\n#pragma scop\n  for (int i = 0; i < N; i++)\n    for (int j = 0; j < N; j++)\n\n\n      F[j] = B[i] * 0.5;\n#pragma endscop\n}\n";
    write(d, "conv.c", src);
    let r = tiledflow_cc(d, &["-Wconversion", "-c", "conv.c", "--tiledflow-verbose"]).expect(0);
    assert!(r.stderr.contains("conv.c: SCoP in k()"), "{}", r.said());
    assert!(
        r.stderr.contains("conv.c:10:"),
        "the warning names line 10: {}",
        r.said()
    );
    for line in r.stderr.lines().filter(|l| l.contains("warning:")) {
        assert!(
            line.starts_with("conv.c:10:"),
            "a warning elsewhere: {}",
            r.said()
        );
    }
}

#[test]
fn cc_dependency_files_name_the_users_source() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "src dir/k.c",
        &TWO_SCOPS.replace(
            "#include <stdio.h>",
            "#include <stdio.h>\n#include \"local.h\"",
        ),
    );
    write(d, "src dir/local.h", "#define LOCAL 1\n");
    let check = |file: &str, target: &str| {
        let text = std::fs::read_to_string(d.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(
            text.starts_with(&format!("{target}: src\\ dir/k.c")),
            "{file}:\n{text}"
        );
        assert!(text.contains("src\\ dir/local.h"), "{file}:\n{text}");
        assert!(!text.contains("tiledflow-cc."), "{file}:\n{text}");
    };
    tiledflow_cc(d, &["-MMD", "-MP", "-c", "src dir/k.c", "-o", "k1.o"]).expect(0);
    check("k1.d", "k1.o");
    std::fs::create_dir(d.join("deps")).unwrap();
    tiledflow_cc(
        d,
        &[
            "-MD",
            "-MF",
            "deps/k2.dep",
            "-MT",
            "custom",
            "-c",
            "src dir/k.c",
            "-o",
            "k2.o",
        ],
    )
    .expect(0);
    check("deps/k2.dep", "custom");
    tiledflow_cc(d, &["-MMD", "-MQ", "$q", "-c", "src dir/k.c"]).expect(0);
    check("k.d", "$$q");
    // -M and -MM only preprocess: the user's file, on standard output.
    let r = tiledflow_cc(d, &["-MM", "src dir/k.c"]).expect(0);
    assert!(
        r.stdout.starts_with("k.o: src\\ dir/k.c src\\ dir/local.h"),
        "{}",
        r.said()
    );
    let linked = tiledflow_cc(d, &["-MMD", "src dir/k.c", "-o", "prog"]).expect(0);
    check("prog.d", "prog");
    assert_eq!(
        output_of(d, "prog").lines().last(),
        Some("2340"),
        "{}",
        linked.said()
    );
}

#[test]
fn cc_reads_standard_input_after_x_c() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let r = run_with_input(
        tool("tiledflow-cc").current_dir(d).args([
            "-x",
            "c",
            "-",
            "-o",
            "prog",
            "--tiledflow-verbose",
        ]),
        Some(TWO_SCOPS),
    )
    .expect(0);
    assert!(r.stderr.contains("<stdin>: SCoP in k1()"), "{}", r.said());
    assert_eq!(output_of(d, "prog").lines().last(), Some("2340"));
    // Without -x, cc itself refuses standard input; so does tiledflow-cc, with cc's message.
    let r = run_with_input(
        tool("tiledflow-cc").current_dir(d).args(["-c", "-"]),
        Some(TWO_SCOPS),
    );
    let c = run_with_input(
        reference_cc().current_dir(d).args(["-c", "-"]),
        Some(TWO_SCOPS),
    );
    assert_eq!((r.status, r.stderr), (c.status, c.stderr));
}

#[test]
fn cc_compiles_a_source_it_cannot_handle_untouched_with_one_warning_unless_strict() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A Latin-1 comment: cc accepts it, tiledflow reads only UTF-8.
    let mut bytes = b"/* caf\xe9 */\n".to_vec();
    bytes.extend_from_slice(TWO_SCOPS.as_bytes());
    std::fs::write(d.join("latin1.c"), bytes).unwrap();
    let r = tiledflow_cc(d, &["latin1.c", "-o", "prog"]).expect(0);
    assert_eq!(r.stderr.matches("warning").count(), 1, "{}", r.said());
    assert!(
        r.stderr
            .contains("tiledflow-cc: warning: latin1.c: compiled without tiledflow"),
        "{}",
        r.said()
    );
    assert_eq!(output_of(d, "prog").lines().last(), Some("2340"));
    let r = tiledflow_cc(d, &["latin1.c", "-o", "strict", "--tiledflow-strict"]).expect(1);
    assert!(
        r.stderr.contains("tiledflow-cc: error: latin1.c"),
        "{}",
        r.said()
    );
    let r = run(tool("tiledflow-cc")
        .current_dir(d)
        .env("TILEDFLOW_STRICT", "1")
        .args(["latin1.c", "-o", "strict"]));
    let r = r.expect(1);
    assert!(
        r.stderr.contains("tiledflow-cc: error: latin1.c"),
        "{}",
        r.said()
    );
    assert!(!d.join("strict").exists());
}

#[test]
fn cc_compiles_the_users_sources_when_the_transformed_ones_do_not_compile() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "two.c", TWO_SCOPS);
    // A C compiler that rejects every source tiledflow transformed (and nothing else): the
    // stand-in for a transformation bug, which the driver must not turn into a broken build.
    let picky = write(
        d,
        "picky-cc",
        "#!/bin/sh\nfor a in \"$@\"; do\n  case \"$a\" in *.c) if grep -q 'tiledflow: SCoP' \"$a\"; then\n    echo \"$a:1:1: error: picky says no\" >&2; exit 1; fi;; esac\ndone\nexec cc \"$@\"\n",
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&picky, std::fs::Permissions::from_mode(0o755)).unwrap();
    let picky = picky.display().to_string();
    let with_picky = |args: &[&str]| {
        run(tool("tiledflow-cc")
            .current_dir(d)
            .env("TILEDFLOW_CC", &picky)
            .args(args))
    };
    let r = with_picky(&["two.c", "-o", "prog"]).expect(0);
    assert_eq!(r.stderr.matches("warning").count(), 1, "{}", r.said());
    assert!(
        r.stderr.contains("tiledflow-cc: warning: compiled without tiledflow: the transformed source does not compile")
            && r.stderr.contains("error: picky says no"),
        "{}",
        r.said()
    );
    assert_eq!(output_of(d, "prog").lines().last(), Some("2340"));
    // Objects too (and the report says the source was compiled as written, and why); under
    // strict it is an error that shows the compiler's messages.
    with_picky(&[
        "-c",
        "two.c",
        "-o",
        "two.o",
        "--tiledflow-report=report.jsonl",
    ])
    .expect(0);
    assert!(d.join("two.o").exists());
    let lines = json_lines(&std::fs::read_to_string(d.join("report.jsonl")).unwrap());
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0]["as_written"]
            .as_str()
            .is_some_and(|w| w.contains("does not compile") && w.contains("picky says no")),
        "{}",
        lines[0]
    );
    let r = with_picky(&["two.c", "-o", "strict", "--tiledflow-strict"]).expect(1);
    assert!(
        r.stderr
            .contains("tiledflow-cc: error: the transformed source does not compile")
            && r.stderr.contains("picky says no"),
        "{}",
        r.said()
    );
    assert!(!d.join("strict").exists());
    // A source that does not compile as written gets the compiler's own messages about it.
    write(d, "bad.c", &TWO_SCOPS.replace("return 0;", "return 0"));
    let r = with_picky(&["bad.c", "-o", "bad"]);
    assert_ne!(r.status, Some(0), "{}", r.said());
    assert!(!r.stderr.contains("picky says no"), "{}", r.said());
    assert!(r.stderr.contains("bad.c:"), "{}", r.said());
}

/// [`TWO_SCOPS`] without its SCoP pragmas, with OpenMP pragmas under `#ifdef _OPENMP` on the
/// loop of `k2` and on a loop of `main`.
fn omp_annotated() -> String {
    TWO_SCOPS.replace(
        "#pragma scop\n  for (int i = 1;",
        "#pragma scop\n#ifdef _OPENMP\n#pragma omp simd\n#endif\n  for (int i = 1;",
    ).replace("#pragma scop\n", "").replace("#pragma endscop\n", "").replace(
        "  k1();",
        "  k1();\n#ifdef _OPENMP\n#pragma omp parallel for\n#endif\n  for (int i = 0; i < N; i++)\n    A[i][0] += 1;",
    )
}

#[test]
fn cc_leaves_loops_under_the_users_pragmas_as_written_even_under_conditionals() {
    // With -fopenmp the compiler defines `_OPENMP`, the parser does not: the pragma must stay
    // in front of the loop it was written for (it was left before the replaced code, and gcc
    // failed with "for statement expected").
    let src = omp_annotated();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "omp.c", &src);
    run(reference_cc()
        .current_dir(d)
        .args(["-fopenmp", "omp.c", "-o", "reference"]))
    .expect(0);
    let expected = output_of(d, "reference");
    for target in ["tasks", "omp"] {
        let r = tiledflow_cc(
            d,
            &[
                "-fopenmp",
                "omp.c",
                "-o",
                "prog",
                "--tiledflow-verbose",
                &format!("--tiledflow-target={target}"),
            ],
        )
        .expect(0);
        assert!(!r.stderr.contains("warning"), "{}", r.said());
        assert!(r.stderr.contains("omp.c: SCoP in k1()"), "{}", r.said());
        assert!(
            r.stderr
                .contains("the loop nest under `#pragma omp parallel for`"),
            "{}",
            r.said()
        );
        assert!(
            r.stderr.contains("the loop nest under `#pragma omp simd`"),
            "{}",
            r.said()
        );
        assert_eq!(output_of(d, "prog"), expected);
    }
}

#[test]
fn cc_replaces_the_users_pragmas_when_asked() {
    // --tiledflow-replace-pragmas (or TILEDFLOW_REPLACE_PRAGMAS=1): the annotated loops are
    // transformed too, and their pragmas, with the `#ifdef _OPENMP` lines around them, go with
    // them; the program computes what the original does, with or without -fopenmp.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "omp.c", &omp_annotated());
    std::fs::create_dir(d.join("kept")).unwrap();
    run(reference_cc()
        .current_dir(d)
        .args(["-fopenmp", "omp.c", "-o", "reference"]))
    .expect(0);
    let expected = output_of(d, "reference");
    for (openmp, by_env) in [("-fopenmp", false), ("-O2", true)] {
        let mut cmd = tool("tiledflow-cc");
        cmd.current_dir(d).args([
            openmp,
            "omp.c",
            "-o",
            "prog",
            "--tiledflow-verbose",
            "--tiledflow-keep=kept",
        ]);
        match by_env {
            true => cmd.env("TILEDFLOW_REPLACE_PRAGMAS", "1"),
            false => cmd.arg("--tiledflow-replace-pragmas"),
        };
        let r = run(&mut cmd).expect(0);
        assert!(!r.stderr.contains("warning"), "{}", r.said());
        for scop in ["SCoP in k1()", "SCoP in k2()", "SCoP in main()"] {
            assert!(r.stderr.contains(scop), "{scop}: {}", r.said());
        }
        assert!(!r.stderr.contains("the loop nest under"), "{}", r.said());
        let kept = std::fs::read_to_string(d.join("kept/omp.c")).unwrap();
        assert!(!kept.contains("#pragma omp"), "{kept}");
        assert_eq!(output_of(d, "prog"), expected);
    }
}

// The fault injection exists in debug builds only (`tiledflow::inject_fault`), and the tools
// these tests run are built with the tests' profile: under `cargo test --release` there is
// nothing to inject, so these two tests are not built.
#[cfg(debug_assertions)]
#[test]
fn a_scop_the_compiler_fails_on_is_left_as_written_and_the_others_are_transformed() {
    // The debug build's fault injection stands in for a compiler bug in k1()'s SCoP.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "two.c", TWO_SCOPS);
    for (fault, shown) in [
        (
            "panic:k1",
            "internal error (a tiledflow bug; please report it): panic: injected fault in k1()",
        ),
        (
            "internal:k1",
            "internal error (a tiledflow bug; please report it): injected fault in k1()",
        ),
    ] {
        let with_fault = |args: &[&str]| {
            run(tool("tiledflow-cc")
                .current_dir(d)
                .env("TILEDFLOW_INJECT_FAULT", fault)
                .args(args))
        };
        let r = with_fault(&["two.c", "-o", "prog", "--tiledflow-verbose"]).expect(0);
        assert!(
            r.stderr.contains(&format!(
                "two.c:6:1: warning: SCoP left as written: {shown}"
            )),
            "{}",
            r.said()
        );
        assert!(!r.stderr.contains("SCoP in k1()"), "{}", r.said());
        assert!(r.stderr.contains("SCoP in k2()"), "{}", r.said());
        assert_eq!(output_of(d, "prog").lines().last(), Some("2340"));
        // The report counts the SCoP as found and not transformed, and says why by kind.
        let report = d.join(format!("{}.jsonl", fault.replace(':', "-")));
        with_fault(&[
            "two.c",
            "-o",
            "prog",
            &format!("--tiledflow-report={}", report.display()),
        ])
        .expect(0);
        let lines = json_lines(&std::fs::read_to_string(&report).unwrap());
        assert_eq!(lines.len(), 1);
        assert_eq!(
            (lines[0]["scops"].as_u64(), lines[0]["transformed"].as_u64()),
            (Some(2), Some(1))
        );
        let left = &lines[0]["diagnostics"][0];
        assert_eq!(left["kind"], "scop-left", "{left}");
        assert_eq!(left["reason"], "internal error", "{left}");
        assert_eq!(left["line"], 6, "{left}");
        let r = run(tool("tiledflow")
            .current_dir(d)
            .env("TILEDFLOW_INJECT_FAULT", fault)
            .args(["two.c", "-o", "out.c", "--strict"]))
        .expect(2);
        assert!(r.stderr.contains(shown), "{}", r.said());
        assert!(!d.join("out.c").exists());
    }
}

#[cfg(debug_assertions)] // see above
#[test]
fn a_scop_past_its_time_limit_is_left_as_written() {
    // The debug build's fault injection makes k1()'s SCoP never finish.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "two.c", TWO_SCOPS);
    let r = run(tool("tiledflow-cc")
        .current_dir(d)
        .env("TILEDFLOW_INJECT_FAULT", "spin:k1")
        .args([
            "two.c",
            "-o",
            "prog",
            "--tiledflow-verbose",
            "--tiledflow-scop-time-limit=1",
        ]))
    .expect(0);
    assert!(
        r.stderr.contains("two.c:6:1: warning: SCoP left as written: compiling it did not finish within 1s of CPU time"),
        "{}",
        r.said()
    );
    assert!(r.stderr.contains("SCoP in k2()"), "{}", r.said());
    assert_eq!(output_of(d, "prog").lines().last(), Some("2340"));
    let r = run(tool("tiledflow")
        .current_dir(d)
        .env("TILEDFLOW_INJECT_FAULT", "spin:k1")
        .args(["two.c", "-o", "out.c", "--scop-time-limit", "1", "--strict"]))
    .expect(1);
    assert!(
        r.stderr.contains("did not finish within 1s"),
        "{}",
        r.said()
    );
    assert!(!d.join("out.c").exists());
}

#[test]
fn cc_own_options_are_checked_and_the_rest_passes_through() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "two.c", TWO_SCOPS);
    let r = tiledflow_cc(d, &["two.c", "-o", "prog", "--tiledflow-tile-size=8"]).expect(1);
    assert!(
        r.stderr.contains("unknown option --tiledflow-tile-size=8"),
        "{}",
        r.said()
    );
    assert!(
        r.stderr.contains("--tiledflow-tile-sizes=N[,N...]"),
        "{}",
        r.said()
    );
    let r = tiledflow_cc(d, &["two.c", "--tiledflow-target=gpu"]).expect(1);
    assert!(r.stderr.contains("expected one of"), "{}", r.said());
    assert!(!d.join("prog").exists() && !d.join("a.out").exists());
    let help = tiledflow_cc(d, &["--tiledflow-help"]).expect(0);
    assert!(
        help.stdout.contains("--tiledflow-strict"),
        "{}",
        help.said()
    );
    // Commands without inputs are cc's alone, and link nothing.
    let ours = tiledflow_cc(d, &["--version"]).expect(0);
    let cc = run(reference_cc().arg("--version")).expect(0);
    assert_eq!(ours.stdout, cc.stdout);
    // --tiledflow-keep: the transformed source, for reading; the sequential target has no tasks.
    std::fs::create_dir(d.join("kept")).unwrap();
    tiledflow_cc(
        d,
        &[
            "-c",
            "two.c",
            "--tiledflow-keep=kept",
            "--tiledflow-target=seq",
        ],
    )
    .expect(0);
    let kept = std::fs::read_to_string(d.join("kept/two.c")).unwrap();
    assert!(
        kept.starts_with("#line 1 \"two.c\"") && !kept.contains("tf_task_begin"),
        "{kept}"
    );
    // A TILEDFLOW_CC that leads back to tiledflow-cc is refused instead of recursing.
    let me = testsuite::tool_path("tiledflow-cc").unwrap();
    let r = run(tool("tiledflow-cc")
        .current_dir(d)
        .env("TILEDFLOW_CC", &me)
        .args(["-c", "two.c", "-o", "x.o"]));
    let r = r.expect(1);
    assert!(
        r.stderr.contains("TILEDFLOW_CC leads back to tiledflow-cc"),
        "{}",
        r.said()
    );
}

#[test]
fn cc_transforms_sources_that_gcc_accepts_with_warnings_only() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Implicit declarations and implicit int: errors for libclang 19's C99 defaults, warnings
    // for gcc 12. The file is still transformed.
    let text = TWO_SCOPS.replace(
        "int main(void) {",
        "old(x) { return x; }\nint main(void) {\n  helper();",
    );
    write(d, "legacy.c", &text);
    write(d, "helper.c", "void helper(void) {}\n");
    let r = tiledflow_cc(
        d,
        &[
            "-std=gnu99",
            "legacy.c",
            "helper.c",
            "-o",
            "prog",
            "--tiledflow-verbose",
        ],
    )
    .expect(0);
    assert_eq!(
        r.stderr.matches("legacy.c: SCoP in").count(),
        2,
        "{}",
        r.said()
    );
    assert!(
        !r.stderr.contains("compiled without tiledflow"),
        "{}",
        r.said()
    );
    assert_eq!(output_of(d, "prog").lines().last(), Some("2340"));
}

/// `--fuse auto` (the default) picks each SCoP's fusion by the cost model, and `--emit cost` and
/// `-v` say what it weighed. Covariance at LARGE is the kernel where it matters most: `smart`
/// fuses its product into a shallow band and runs 40x slower than `min` (measured, README), and
/// the model must see it on a machine with the caches of this project's machines.
#[test]
fn the_cost_model_distributes_covariance_and_says_why() {
    let machine = testsuite::REFERENCE_MACHINE;
    let args = |extra: &[&str]| polybench_args("covariance", "LARGE", extra);
    let cost = run(tool("tiledflow")
        .envs(machine)
        .args(args(&["--emit", "cost"])))
    .expect(0);
    assert!(cost.stdout.contains("chosen: min"), "{}", cost.said());
    let estimate = |fuse: &str| -> f64 {
        let line = cost
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("fuse {fuse}: ")))
            .unwrap_or_else(|| panic!("no {fuse} line:\n{}", cost.stdout));
        line.split_whitespace()
            .nth(2)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no estimate in `{line}`"))
    };
    assert!(estimate("smart") > 3.0 * estimate("min"), "{}", cost.stdout);
    let verbose = run(tool("tiledflow")
        .envs(machine)
        .args(args(&["-v", "-o", "-"])))
    .expect(0);
    assert!(
        verbose.stderr.contains("fusion: min (est."),
        "{}",
        verbose.said()
    );
    // A fixed heuristic is used as it is, with nothing weighed.
    let fixed = run(tool("tiledflow")
        .envs(machine)
        .args(args(&["--fuse", "smart", "--emit", "cost"])))
    .expect(0);
    assert!(
        fixed.stdout.contains("the fusion is fixed"),
        "{}",
        fixed.said()
    );
    let bad = run(tool("tiledflow-cc")
        .env("TILEDFLOW_FUSE", "fastest")
        .args(["-c", "x.c"]));
    assert_eq!(bad.status, Some(1), "{}", bad.said());
    assert!(
        bad.stderr
            .contains("expected auto, min, smart, max, reuse, or blocks of statements"),
        "{}",
        bad.said()
    );
}

/// A product's tiles are widened for its register kernel in the schedule that is kept
/// (`polyhedral::tile_size::widen_products`), not in the fusion candidates the cost model
/// weighs: gemm at LARGE keeps `64, 64, 64` in its estimate (16 x 18 x 19 tiles) and runs
/// `256, 128, 128` (4 x 9 x 10; `widen_products`, then `deepen_products`); the GPU's tiles are
/// its own (256, whole).
#[test]
fn products_are_widened_in_the_kept_schedule_only() {
    let args = |extra: &[&str]| polybench_args("gemm", "LARGE", extra);
    let machine = testsuite::REFERENCE_MACHINE;
    let cost = run(tool("tiledflow")
        .envs(machine)
        .args(args(&["--emit", "cost"])))
    .expect(0);
    assert!(cost.stdout.contains(", 5472 tiles,"), "{}", cost.said());
    let tasks = run(tool("tiledflow")
        .envs(machine)
        .args(args(&["--emit", "tasks"])))
    .expect(0);
    assert!(
        tasks.stdout.contains("tile sizes [256, 128, 128]"),
        "{}",
        tasks.said()
    );
    let gpu = run(tool("tiledflow")
        .envs(machine)
        .args(args(&["--target", "cuda", "--emit", "tasks"])))
    .expect(0);
    assert!(
        !gpu.stdout.contains("tile sizes [256, 128, 128]"),
        "{}",
        gpu.said()
    );
}

/// A candidate whose tasks could not each keep their own copy of a scalar (one that no array of
/// copies can hold: `N` is a parameter) is not weighed as if they could: `rowsum.c`'s
/// `kernel_square` under `min` puts `t = ..` and `B[i][j] = t * t` in nests of their own, and the
/// driver would then schedule `t`'s dependences back into one chain of row tiles.
#[test]
fn fusion_candidates_that_lose_a_private_scalar_are_not_chosen() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/privatize/rowsum.c");
    let cost = run(tool("tiledflow").arg(&file).args(["--emit", "cost"])).expect(0);
    let square = cost
        .stdout
        .split("# SCoP in ")
        .find(|s| s.starts_with("kernel_square()"))
        .unwrap_or_else(|| panic!("no kernel_square:\n{}", cost.stdout));
    assert!(square.contains("chosen: smart"), "{square}");
    assert!(
        square.contains("fuse min: no estimate: its tasks cannot each keep their own t"),
        "{square}"
    );
    // Fused with `B[i][j] = t * t`, `t` stays in its task: that plan has its estimate.
    assert!(square.contains("fuse S0+S1,S2: "), "{square}");
    assert!(!square.contains("fuse S0+S1,S2: no estimate"), "{square}");
}

/// What the CPU tile code got is visible: `-v` names floyd-warshall's cut loop and symm's array of
/// copies (and `--emit tasks` gemm's full tiles and jammed `k` loop, where the cuda target says
/// nothing: `testsuite/data/stages/gemm_tasks.c`).
#[test]
fn the_tile_code_says_what_it_did() {
    let args = |kernel: &str, extra: &[&str]| -> Vec<String> {
        let mut a = polybench_args(kernel, "MINI", &["--tile-sizes", "8"]);
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    // `--emit tasks` names the tile code too: `testsuite/data/stages/gemm_tasks.c`.
    let fw = run(tool("tiledflow").args(args("floyd-warshall", &["-v", "-o", "-"]))).expect(0);
    assert!(
        fw.stderr.contains("innermost loop cut at aliased loads"),
        "{}",
        fw.said()
    );
    let symm = run(tool("tiledflow").args(args("symm", &["-v", "-o", "-"]))).expect(0);
    assert!(
        symm.stderr.contains("in arrays of copies: temp2"),
        "{}",
        symm.said()
    );
    // M = 20, N = 30 at MINI: one copy per (i, j), freed after its last value is copied back.
    assert!(
        symm.stdout.contains(
            "double (*tf_x_temp2)[30] = (double (*)[30])tf_copies_alloc(sizeof(double[20][30]));"
        ),
        "{}",
        symm.said()
    );
    assert!(
        symm.stdout.contains("temp2 = tf_x_temp2[19][29];"),
        "{}",
        symm.said()
    );
    assert!(
        symm.stdout.contains("__builtin_free(tf_x_temp2);"),
        "{}",
        symm.said()
    );
    // The allocator is defined once, in files that have arrays of copies only.
    assert_eq!(
        symm.stdout.matches("static void *tf_copies_alloc(").count(),
        1,
        "{}",
        symm.said()
    );
    assert!(!fw.stdout.contains("tf_copies_alloc"), "{}", fw.said());
    // gemm's `(i, j, k)` tiles spawned `(i, k, j)` (`Nest::spawn_order`), and said so;
    // floyd-warshall's phases keep their order, and say nothing.
    let gemm = run(tool("tiledflow").args(args("gemm", &["-v", "-o", "-"]))).expect(0);
    assert!(
        gemm.stderr
            .contains("tiles spawned in the order: N0 (0, 2, 1)"),
        "{}",
        gemm.said()
    );
    assert!(
        !fw.stderr.contains("tiles spawned in the order"),
        "{}",
        fw.said()
    );
    // doitgen's three nests under `min` (zeroing, products, copy back) spawned together
    // (`polyhedral::spawn_groups`), and said so; not with --no-interleave, nor for the omp target
    // (barriers between its nests).
    for (extra, said) in [
        (&[][..], true),
        (&["--no-interleave"][..], false),
        (&["--target", "omp"][..], false),
    ] {
        let mut flags = vec!["--fuse", "min", "-v", "-o", "-"];
        flags.extend(extra);
        let doitgen = run(tool("tiledflow").args(args("doitgen", &flags))).expect(0);
        assert_eq!(
            doitgen.stderr.contains("tiles spawned together: N0+N1+N2"),
            said,
            "{extra:?}: {}",
            doitgen.said()
        );
        assert_eq!(
            doitgen.stdout.contains("spawned together"),
            said,
            "{extra:?}: {}",
            doitgen.said()
        );
    }
    // atax under `min`: `y`'s product joins `tmp`'s nests in another order of its tile loops,
    // and `-v` says which.
    let atax =
        run(tool("tiledflow").args(args("atax", &["--fuse", "min", "-v", "-o", "-"]))).expect(0);
    assert!(
        atax.stderr
            .contains("tiles spawned together: N1+N2+N3 in the order (1, 0)"),
        "{}",
        atax.said()
    );
}

/// A nest that is a SCoP (`f`) and one that is not (`g`: a data-dependent subscript at line 5,
/// column 48), without pragmas, and a main whose first loop is a SCoP too.
const AUTO_NESTS: &str = r#"#include <stdio.h>
double A[100], B[100];
int idx[100];
void f(void) { for (int i = 0; i < 100; i++) A[i] = 2.0 * B[i]; }
void g(void) { for (int i = 0; i < 100; i++) A[idx[i]] = B[i]; }
int main(void) {
  for (int i = 0; i < 100; i++) { B[i] = i; idx[i] = 99 - i; }
  f(); g();
  printf("%g %g\n", A[0], A[99]);
  return 0;
}
"#;

/// The JSON objects of `text`, one a line.
fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

#[test]
fn diagnostics_as_json_say_the_kind_the_place_and_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "auto.c", AUTO_NESTS);
    let r = tiledflow(d, &["auto.c", "-o", "out.c", "--diagnostics", "json"]).expect(0);
    let diags = json_lines(&r.stderr);
    assert_eq!(diags.len(), 1, "{}", r.said());
    let g = &diags[0];
    assert_eq!(g["kind"], "not-scop");
    assert_eq!(g["severity"], "note");
    assert_eq!(
        (g["line"].as_u64(), g["column"].as_u64()),
        (Some(5), Some(48))
    );
    assert_eq!(g["construct"], "`idx[i]`");
    assert!(
        g["reason"]
            .as_str()
            .is_some_and(|w| w.starts_with("subscript is not affine")),
        "{g}"
    );
    // The text form: notes only with -v.
    let r = tiledflow(d, &["auto.c", "-o", "out.c"]).expect(0);
    assert_eq!(r.stderr, "", "{}", r.said());
}

#[test]
fn tiledflow_cc_appends_one_report_line_per_source() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "auto.c", AUTO_NESTS);
    let report = d.join("report.jsonl");
    // Twice, by option and by environment: the second command's line follows the first's.
    tiledflow_cc(
        d,
        &[
            "auto.c",
            "-o",
            "p1",
            &format!("--tiledflow-report={}", report.display()),
        ],
    )
    .expect(0);
    let r = run(tool("tiledflow-cc")
        .current_dir(d)
        .env("TILEDFLOW_REPORT", &report)
        .args(["auto.c", "-o", "p2"]))
    .expect(0);
    // The notes go to the report, not to the terminal.
    assert!(!r.stderr.contains("note:"), "{}", r.said());
    assert_eq!(output_of(d, "p1"), "99 0\n");
    assert_eq!(output_of(d, "p2"), "99 0\n");
    // A report that cannot be written is a warning: the build still succeeds.
    let r = tiledflow_cc(
        d,
        &[
            "auto.c",
            "-o",
            "p3",
            "--tiledflow-report=no/such/dir/r.jsonl",
        ],
    )
    .expect(0);
    assert!(
        r.stderr
            .contains("tiledflow-cc: warning: --tiledflow-report="),
        "{}",
        r.said()
    );
    assert_eq!(output_of(d, "p3"), "99 0\n");
    let lines = json_lines(&std::fs::read_to_string(&report).unwrap());
    assert_eq!(lines.len(), 2);
    for l in &lines {
        assert_eq!(l["source"], "auto.c");
        assert_eq!(
            (l["scops"].as_u64(), l["transformed"].as_u64()),
            (Some(2), Some(2)),
            "{l}"
        );
        assert!(l.get("as_written").is_none(), "{l}");
        let kinds: Vec<&str> = l["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|d| d["kind"].as_str())
            .collect();
        assert_eq!(kinds, ["not-scop"], "{l}");
    }
}

/// cholesky at LARGE keeps its tile grid where the arrays' lines would move it
/// (`same_kernels` in the driver): on the grid as scheduled, the tiles that the update alone
/// fills (its `j` block right after `k`'s) run its kernel (`polyhedral::tile_code`'s
/// `alone_full`); shifted, those tiles are cut for every shift but 0, so the kernel would name
/// tiles that never run it. `--no-line-shift` gives the same code.
#[test]
fn cholesky_keeps_its_grid_for_the_tiles_its_update_alone_fills() {
    let compile = |extra: &[&str]| {
        let mut a = polybench_args("cholesky", "LARGE", &["-v", "-o", "-"]);
        a.extend(extra.iter().map(|s| s.to_string()));
        run(tool("tiledflow").envs(testsuite::REFERENCE_MACHINE).args(a)).expect(0)
    };
    let default = compile(&[]);
    assert!(
        default
            .stderr
            .contains("kernels also in tiles that S0 alone fill"),
        "{}",
        default.said()
    );
    assert!(
        !default.stderr.contains("tiles shifted"),
        "{}",
        default.said()
    );
    let unshifted = compile(&["--no-line-shift"]);
    assert_eq!(default.stdout, unshifted.stdout);
}
