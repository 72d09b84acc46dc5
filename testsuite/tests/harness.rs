//! Tests of the harness itself: the dump parser, the comparison, process control, and the
//! differential oracle run on every kernel against a plain-`cc` variant, including variants
//! that are wrong on purpose, so that we know the oracle can fail.

use std::path::Path;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use testsuite::{
    compare, compile, compile_with_stderr, differential, differential_with, kernel_dir,
    kernel_names, kernel_path, parse_dump, run, run_original, utilities_dir, ArrayMismatch,
    DifferentialOptions, DumpedArray, Tolerance, ValueDiff, Variant,
};

/// The 30 kernels of PolyBench/C 4.2.
const ALL_KERNELS: [&str; 30] = [
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
    "durbin",
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
    "ludcmp",
    "mvt",
    "nussinov",
    "seidel-2d",
    "symm",
    "syr2k",
    "syrk",
    "trisolv",
    "trmm",
];

fn array(name: &str, values: &[&str]) -> DumpedArray {
    DumpedArray {
        name: name.to_string(),
        values: values.iter().map(|v| v.to_string()).collect(),
    }
}

fn error_text(result: anyhow::Result<()>) -> String {
    match result {
        Ok(()) => panic!("expected an error, got Ok"),
        Err(e) => format!("{e:#}"),
    }
}

// ---------------------------------------------------------------------------------------------
// parse_dump

#[test]
fn parse_dump_reads_a_hand_written_dump() {
    let text = "runtime: 4 threads\n\
                ==BEGIN DUMP_ARRAYS==\n\
                begin dump: C\n\
                1 2 3\n\
                4 -0 1e-300 \n\
                end   dump: C\n\
                begin dump: tmp\n\
                \n\
                0.10000000000000001 nan\n\
                end   dump: tmp\n\
                begin dump: empty\n\
                \n\
                end   dump: empty\n\
                ==END   DUMP_ARRAYS==\n\
                stats: 12 tasks\n";
    let arrays = parse_dump(text).unwrap();
    assert_eq!(
        arrays,
        vec![
            array("C", &["1", "2", "3", "4", "-0", "1e-300"]),
            array("tmp", &["0.10000000000000001", "nan"]),
            array("empty", &[]),
        ]
    );
}

#[test]
fn parse_dump_rejects_malformed_dumps() {
    let cases: [(&str, &str); 8] = [
        ("no dump here\n", "no `==BEGIN DUMP_ARRAYS==` found"),
        ("==BEGIN DUMP_ARRAYS==\nbegin dump: A\n1\nend   dump: A\n", "`==END   DUMP_ARRAYS==` is missing"),
        ("==BEGIN DUMP_ARRAYS==\nbegin dump: A\n1\nend   dump: B\n==END   DUMP_ARRAYS==\n", "line 4"),
        ("==BEGIN DUMP_ARRAYS==\n1 2\n==END   DUMP_ARRAYS==\n", "line 2: values outside any array"),
        ("==BEGIN DUMP_ARRAYS==\nbegin dump: A\n1\n==END   DUMP_ARRAYS==\n", "`A` (begun on line 2) is not closed"),
        (
            "==BEGIN DUMP_ARRAYS==\nbegin dump: A\nend   dump: A\nbegin dump: A\nend   dump: A\n==END   DUMP_ARRAYS==\n",
            "line 4: array `A` is dumped twice",
        ),
        (
            "==BEGIN DUMP_ARRAYS==\n==END   DUMP_ARRAYS==\n==BEGIN DUMP_ARRAYS==\n==END   DUMP_ARRAYS==\n",
            "line 3: a second dump begins",
        ),
        ("==BEGIN DUMP_ARRAYS==\nbegin dump: A B\n==END   DUMP_ARRAYS==\n", "line 2: malformed array marker"),
    ];
    for (text, expected) in cases {
        let err = format!("{:#}", parse_dump(text).unwrap_err());
        assert!(
            err.contains(expected),
            "dump {text:?}: error {err:?} does not contain {expected:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// compare

#[test]
fn compare_detects_a_one_ulp_change() {
    let x = 0.1f64;
    let next = f64::from_bits(x.to_bits() + 1);
    let (xs, ns) = (format!("{x:?}"), format!("{next:?}"));
    assert_ne!(xs, ns);
    let expected = vec![array("A", &["1", "2"]), array("B", &["3", &xs, "5", &xs])];
    let actual = vec![array("A", &["1", "2"]), array("B", &["3", &ns, "5", &xs])];

    let mismatch = compare(&expected, &actual, Tolerance::Exact).unwrap_err();
    assert_eq!(
        mismatch.arrays,
        vec![ArrayMismatch::Values {
            name: "B".to_string(),
            n_differ: 1,
            n_values: 4,
            first: vec![ValueDiff {
                index: 1,
                expected: xs.clone(),
                actual: ns.clone()
            }],
        }]
    );
    let msg = mismatch.to_string();
    for part in [
        "array `B`",
        "1 of 4 values differ",
        "flat index 1",
        &xs,
        &ns,
    ] {
        assert!(msg.contains(part), "{msg:?} lacks {part:?}");
    }
    // One ulp is within any sensible relative tolerance, a real change is not.
    assert!(compare(&expected, &actual, Tolerance::Relative(1e-15)).is_ok());
    let far = vec![
        array("A", &["1", "2.000001"]),
        array("B", &["3", &xs, "5", &xs]),
    ];
    assert!(compare(&expected, &far, Tolerance::Relative(1e-9)).is_err());
    assert!(compare(&expected, &expected, Tolerance::Exact).is_ok());
}

#[test]
fn compare_counts_every_difference_and_shows_the_first_few() {
    let expected = vec![array("A", &["0"; 12])];
    let actual = vec![array("A", &["1"; 12])];
    let mismatch = compare(&expected, &actual, Tolerance::Exact).unwrap_err();
    let msg = mismatch.to_string();
    assert!(msg.contains("12 of 12 values differ"), "{msg}");
    assert!(msg.contains("flat index 4: expected 0, got 1"), "{msg}");
    assert!(!msg.contains("flat index 5"), "{msg}");
    assert!(msg.contains("and 7 more"), "{msg}");
}

#[test]
fn compare_detects_missing_extra_and_resized_arrays() {
    let expected = vec![array("A", &["1"]), array("B", &["2", "3"])];
    let actual = vec![array("B", &["2"]), array("Z", &["9"])];
    let mismatch = compare(&expected, &actual, Tolerance::Exact).unwrap_err();
    assert_eq!(
        mismatch.arrays,
        vec![
            ArrayMismatch::Missing {
                name: "A".to_string()
            },
            ArrayMismatch::Length {
                name: "B".to_string(),
                expected: 2,
                actual: 1
            },
            ArrayMismatch::Unexpected {
                name: "Z".to_string()
            },
        ]
    );
    let msg = mismatch.to_string();
    assert!(
        msg.contains("array `A` is missing from the output"),
        "{msg}"
    );
    assert!(msg.contains("array `B` has 1 values, expected 2"), "{msg}");
    assert!(msg.contains("array `Z` was not expected"), "{msg}");
}

#[test]
fn relative_tolerance_handles_special_values() {
    let rel = Tolerance::Relative(1e-6);
    assert!(rel.accepts("nan", "-nan"));
    assert!(rel.accepts("0", "-0"));
    assert!(!rel.accepts("inf", "-inf"));
    assert!(!rel.accepts("1", "inf"));
    assert!(!rel.accepts("abc", "abd"));
    assert!(!Tolerance::Exact.accepts("0", "-0"));
}

// ---------------------------------------------------------------------------------------------
// compile and run

/// Writes `text` to `dir/name` and returns the path.
fn write_file(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn compile_errors_carry_the_compiler_message() {
    let tmp = tempfile::tempdir().unwrap();
    let src = write_file(
        tmp.path(),
        "broken.c",
        "int main(void) { return undeclared_name; }\n",
    );
    let err = format!(
        "{:#}",
        compile("cc", &[&src], &["-O0"], &tmp.path().join("broken")).unwrap_err()
    );
    assert!(err.contains("compilation failed"), "{err}");
    assert!(err.contains("undeclared_name"), "{err}");
    assert!(err.contains("broken.c"), "{err}");

    let err = format!(
        "{:#}",
        compile("/nonexistent/cc", &[&src], &["-O0"], &tmp.path().join("x")).unwrap_err()
    );
    assert!(err.contains("cannot start"), "{err}");
}

#[test]
fn run_captures_output_exit_status_and_environment() {
    let tmp = tempfile::tempdir().unwrap();
    let src = write_file(
        tmp.path(),
        "echo.c",
        "#include <stdio.h>\n#include <stdlib.h>\n\
         int main(void) { const char *v = getenv(\"HARNESS_VALUE\");\n\
         printf(\"out:%s\\n\", v ? v : \"unset\"); fprintf(stderr, \"err\\n\"); return 3; }\n",
    );
    let exe = tmp.path().join("echo");
    compile("cc", &[&src], &["-O0"], &exe).unwrap();
    let out = run(&exe, &[("HARNESS_VALUE", "42")], Duration::from_secs(30)).unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "out:42\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "err\n");
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn run_kills_a_program_after_the_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let src = write_file(
        tmp.path(),
        "spin.c",
        "#include <stdio.h>\nint main(void) { volatile int go = 1; fprintf(stderr, \"spinning\\n\");\n\
         while (go) {} return 0; }\n",
    );
    let exe = tmp.path().join("spin");
    compile("cc", &[&src], &["-O0"], &exe).unwrap();
    let start = Instant::now();
    let err = format!(
        "{:#}",
        run(&exe, &[], Duration::from_millis(300)).unwrap_err()
    );
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "took {:?}",
        start.elapsed()
    );
    assert!(
        err.contains("did not finish within 300ms and was killed"),
        "{err}"
    );
    assert!(err.contains("spinning"), "{err}");
}

/// The dump round-trips: two doubles (and two floats) one ulp apart print differently and parse
/// back to their exact bits.
#[test]
fn dumped_values_round_trip_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let src = write_file(
        tmp.path(),
        "roundtrip.c",
        "#include <polybench.h>\n#include \"gemm.h\"\n\
         int main(void) {\n\
           DATA_TYPE a = SCALAR_VAL(0.1), b = a, c = SCALAR_VAL(1.0) / SCALAR_VAL(3.0);\n\
           /* the next representable value above a */\n\
           if (sizeof(DATA_TYPE) == sizeof(double)) b = (DATA_TYPE)nextafter((double)a, 1.0);\n\
           else b = (DATA_TYPE)nextafterf((float)a, 1.0f);\n\
           POLYBENCH_DUMP_START; POLYBENCH_DUMP_BEGIN(\"v\");\n\
           fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, a);\n\
           fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, b);\n\
           fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, c);\n\
           POLYBENCH_DUMP_END(\"v\"); POLYBENCH_DUMP_FINISH; return 0; }\n",
    );
    let include_gemm = format!("-I{}", kernel_dir("gemm").display());
    let include_utils = format!("-I{}", utilities_dir().display());
    for (ty, is_double) in [
        ("-DDATA_TYPE_IS_DOUBLE", true),
        ("-DDATA_TYPE_IS_FLOAT", false),
    ] {
        let exe = tmp.path().join(format!("roundtrip{ty}"));
        compile(
            "cc",
            &[&src],
            &["-O2", ty, &include_utils, &include_gemm],
            &exe,
        )
        .unwrap();
        let out = run(&exe, &[], Duration::from_secs(30)).unwrap();
        assert!(out.status.success());
        let dump = parse_dump(&String::from_utf8_lossy(&out.stderr)).unwrap();
        let values = &dump[0].values;
        assert_eq!(values.len(), 3);
        if is_double {
            let parsed: Vec<f64> = values.iter().map(|v| v.parse().unwrap()).collect();
            assert_eq!(parsed[0].to_bits(), 0.1f64.to_bits());
            assert_eq!(parsed[1].to_bits(), 0.1f64.to_bits() + 1);
            assert_eq!(parsed[2].to_bits(), (1.0f64 / 3.0).to_bits());
        } else {
            let parsed: Vec<f32> = values.iter().map(|v| v.parse().unwrap()).collect();
            assert_eq!(parsed[0].to_bits(), 0.1f32.to_bits());
            assert_eq!(parsed[1].to_bits(), 0.1f32.to_bits() + 1);
            assert_eq!(parsed[2].to_bits(), (1.0f32 / 3.0).to_bits());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// kernels

#[test]
fn every_polybench_kernel_is_present() {
    let names = kernel_names().unwrap();
    let missing: Vec<&str> = ALL_KERNELS
        .iter()
        .copied()
        .filter(|k| !names.iter().any(|n| n == k))
        .collect();
    assert!(missing.is_empty(), "kernels missing: {missing:?}");
}

/// Compiles `kernel` at MINI with `-Wall -Wextra` in several configurations and fails on any
/// diagnostic.
fn assert_compiles_cleanly(kernel: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let src = kernel_path(kernel);
    let include = format!("-I{}", utilities_dir().display());
    let base = [
        "-Wall",
        "-Wextra",
        "-O2",
        include.as_str(),
        "-DMINI_DATASET",
    ];
    let configs: [&[&str]; 4] = [
        &["-DPOLYBENCH_DUMP_ARRAYS", "-DPOLYBENCH_TIME"],
        &[],
        &["-DDATA_TYPE_IS_FLOAT", "-DPOLYBENCH_DUMP_ARRAYS"],
        &[
            "-DDATA_TYPE_IS_INT",
            "-DPOLYBENCH_DUMP_ARRAYS",
            "-std=c99",
            "-pedantic",
            "-O0",
        ],
    ];
    for (idx, config) in configs.iter().enumerate() {
        let flags: Vec<&str> = base.iter().chain(config.iter()).copied().collect();
        let exe = tmp.path().join(format!("k{idx}"));
        let warnings = compile_with_stderr("cc", &[&src], &flags, &exe).unwrap();
        assert!(
            warnings.is_empty(),
            "{kernel} with {flags:?} warns:\n{warnings}"
        );
    }
}

/// At MINI the kernel dumps at least one non-empty array and every value is a finite number.
fn assert_finite_at_mini(kernel: &str) {
    let arrays = run_original(kernel, &[("MINI_DATASET", "")]).unwrap();
    for a in &arrays {
        assert!(!a.values.is_empty(), "{kernel}: array {} is empty", a.name);
        let bad: Vec<&String> = a
            .values
            .iter()
            .filter(|v| !v.parse::<f64>().is_ok_and(f64::is_finite))
            .take(5)
            .collect();
        assert!(
            bad.is_empty(),
            "{kernel}: array {} has values that are not finite numbers: {bad:?}",
            a.name
        );
    }
}

/// The differential oracle accepts a correct variant (plain `cc -O0`, with an environment
/// variable set for the run) at MINI and at the given odd sizes.
fn assert_differential_passes(kernel: &str, odd_sizes: &[(&str, &str)]) {
    let variants = [Variant::cc("cc -O0")
        .arg("-O0")
        .env("TILEDFLOW_NUM_THREADS", "2")];
    differential(kernel, &[("MINI_DATASET", "")], &variants).unwrap();
    differential(kernel, odd_sizes, &variants).unwrap();
}

macro_rules! kernel_tests {
    ($($module:ident => $kernel:literal [$(($name:literal, $value:literal)),* $(,)?];)*) => {
        $(
            mod $module {
                #[test]
                fn compiles_without_warnings() {
                    super::assert_compiles_cleanly($kernel);
                }

                #[test]
                fn values_are_finite_at_mini() {
                    super::assert_finite_at_mini($kernel);
                }

                #[test]
                fn differential_with_plain_cc_passes() {
                    super::assert_differential_passes($kernel, &[$(($name, $value)),*]);
                }
            }
        )*

        #[test]
        fn kernel_table_covers_every_kernel() {
            let tested = [$($kernel),*];
            let names = kernel_names().unwrap();
            let untested: Vec<&String> = names.iter().filter(|n| !tested.contains(&n.as_str())).collect();
            assert!(untested.is_empty(), "kernels without tests: {untested:?}");
        }
    };
}

kernel_tests! {
    k2mm => "2mm" [("NI", "7"), ("NJ", "11"), ("NK", "13"), ("NL", "5")];
    k3mm => "3mm" [("NI", "7"), ("NJ", "9"), ("NK", "11"), ("NL", "5"), ("NM", "6")];
    adi => "adi" [("TSTEPS", "3"), ("N", "17")];
    atax => "atax" [("M", "13"), ("N", "17")];
    bicg => "bicg" [("M", "13"), ("N", "17")];
    cholesky => "cholesky" [("N", "23")];
    correlation => "correlation" [("M", "9"), ("N", "17")];
    covariance => "covariance" [("M", "9"), ("N", "17")];
    deriche => "deriche" [("W", "13"), ("H", "11")];
    doitgen => "doitgen" [("NQ", "5"), ("NR", "6"), ("NP", "7")];
    durbin => "durbin" [("N", "29")];
    fdtd_2d => "fdtd-2d" [("TMAX", "5"), ("NX", "13"), ("NY", "11")];
    floyd_warshall => "floyd-warshall" [("N", "23")];
    gemm => "gemm" [("NI", "13"), ("NJ", "17"), ("NK", "11")];
    gemver => "gemver" [("N", "23")];
    gesummv => "gesummv" [("N", "23")];
    gramschmidt => "gramschmidt" [("M", "17"), ("N", "13")];
    heat_3d => "heat-3d" [("TSTEPS", "3"), ("N", "9")];
    jacobi_1d => "jacobi-1d" [("TSTEPS", "7"), ("N", "37")];
    jacobi_2d => "jacobi-2d" [("TSTEPS", "5"), ("N", "37")];
    lu => "lu" [("N", "23")];
    ludcmp => "ludcmp" [("N", "23")];
    mvt => "mvt" [("N", "23")];
    nussinov => "nussinov" [("N", "29")];
    seidel_2d => "seidel-2d" [("TSTEPS", "5"), ("N", "37")];
    symm => "symm" [("M", "13"), ("N", "17")];
    syr2k => "syr2k" [("M", "13"), ("N", "17")];
    syrk => "syrk" [("M", "13"), ("N", "17")];
    trisolv => "trisolv" [("N", "23")];
    trmm => "trmm" [("M", "13"), ("N", "17")];
}

// ---------------------------------------------------------------------------------------------
// the oracle can fail

#[test]
fn differential_reports_a_variant_that_changes_a_kernel_constant() {
    // The variant redefines TSTEPS after the harness's -DTSTEPS=5: one time step fewer.
    let variants = [Variant::cc("one step short").arg("-DTSTEPS=4")];
    let err = error_text(differential(
        "jacobi-2d",
        &[("TSTEPS", "5"), ("N", "13")],
        &variants,
    ));
    for part in [
        "kernel jacobi-2d [-DTSTEPS=5 -DN=13]",
        "1 of 1 variant(s) failed",
        "variant `one step short`",
        "differs from the reference",
        "array `A`",
        "array `B`",
        "values differ",
        "flat index 14",
    ] {
        assert!(err.contains(part), "{err}\n--- lacks {part:?}");
    }
}

/// Writes an executable bash script standing in for a compiler driver.
fn fake_driver(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
    let path = write_file(dir, name, &format!("#!/bin/bash\nset -e\n{body}\n"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

#[test]
fn differential_reports_a_driver_that_miscompiles_the_source() {
    let tmp = tempfile::tempdir().unwrap();
    // A "compiler" that changes seidel-2d's divisor from 9 to 9.5 before compiling.
    let driver = fake_driver(
        tmp.path(),
        "patching-cc",
        &format!(
            "args=()\n\
             for a in \"$@\"; do\n\
               case \"$a\" in\n\
                 *.c) sed 's/SCALAR_VAL(9.0)/SCALAR_VAL(9.5)/' \"$a\" > {dir}/patched.c\n\
                      grep -q 'SCALAR_VAL(9.5)' {dir}/patched.c\n\
                      args+=(-I \"$(dirname \"$a\")\" {dir}/patched.c) ;;\n\
                 *) args+=(\"$a\") ;;\n\
               esac\n\
             done\n\
             exec cc \"${{args[@]}}\"",
            dir = tmp.path().display()
        ),
    );
    let good = Variant::cc("good");
    let bad = Variant::new("patched", &driver);
    let err = error_text(differential(
        "seidel-2d",
        &[("TSTEPS", "2"), ("N", "11")],
        &[good, bad],
    ));
    assert!(err.contains("1 of 2 variant(s) failed"), "{err}");
    assert!(err.contains("variant `patched`"), "{err}");
    assert!(!err.contains("variant `good`"), "{err}");
    assert!(err.contains("array `A`: 81 of 121 values differ"), "{err}");
}

#[test]
fn differential_reports_variants_that_do_not_build_run_or_dump() {
    let tmp = tempfile::tempdir().unwrap();
    // A "compiler" that ignores its input and builds a program exiting with status 3.
    let failing = fake_driver(
        tmp.path(),
        "failing-cc",
        "out=\nwhile [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then out=$2; fi; shift; done\n\
         printf 'int main(void) { return 3; }\\n' | cc -x c - -o \"$out\"",
    );
    let variants = [
        Variant::new("no such driver", tmp.path().join("missing-cc")),
        Variant::new("exits 3", &failing),
        Variant::cc("no dump").arg("-UPOLYBENCH_DUMP_ARRAYS"),
        Variant::cc("does not compile").arg("-DNI=(").arg("-O0"),
    ];
    let err = error_text(differential("gemm", &[("MINI_DATASET", "")], &variants));
    for part in [
        "4 of 4 variant(s) failed",
        "variant `no such driver`: building: cannot start",
        "variant `exits 3`: the program failed (exit status 3)",
        "variant `no dump`: reading its dump: no `==BEGIN DUMP_ARRAYS==` found",
        "variant `does not compile`: building: compilation failed (exit status 1)",
    ] {
        assert!(err.contains(part), "{err}\n--- lacks {part:?}");
    }
}

/// Variants that differ only in how they run share one build, and each runs in its own
/// environment: a driver that counts its builds makes a program exiting with `$EXIT_WITH`.
#[test]
fn variants_that_differ_only_in_their_run_share_one_build() {
    let tmp = tempfile::tempdir().unwrap();
    let count = tmp.path().join("builds");
    let counting = fake_driver(
        tmp.path(),
        "counting-cc",
        &format!(
            "echo build >> {count}\n\
             out=\nwhile [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then out=$2; fi; shift; done\n\
             printf '#include <stdlib.h>\\nint main(void) {{ return atoi(getenv(\"EXIT_WITH\")); }}\\n' \
             | cc -x c - -o \"$out\"",
            count = count.display()
        ),
    );
    let variants = [
        Variant::new("exits 0", &counting).env("EXIT_WITH", "0"),
        Variant::new("exits 3", &counting).env("EXIT_WITH", "3"),
        Variant::new("exits 4, built again", &counting)
            .arg("-DOTHER")
            .env("EXIT_WITH", "4"),
    ];
    let err = error_text(differential("gemm", &[("MINI_DATASET", "")], &variants));
    for part in [
        "3 of 3 variant(s) failed",
        "variant `exits 0`: reading its dump",
        "variant `exits 3`: the program failed (exit status 3)",
        "variant `exits 4, built again`: the program failed (exit status 4)",
    ] {
        assert!(err.contains(part), "{err}\n--- lacks {part:?}");
    }
    let builds = std::fs::read_to_string(&count).unwrap();
    assert_eq!(builds.lines().count(), 2, "{builds}");
}

#[test]
fn differential_rejects_unknown_kernels_and_bad_defines() {
    let err = error_text(differential("no-such-kernel", &[], &[]));
    assert!(err.contains("no kernel `no-such-kernel`"), "{err}");
    let err = error_text(differential("gemm", &[("N I", "3")], &[]));
    assert!(err.contains("define `N I` is not a C identifier"), "{err}");
}

#[test]
fn differential_reports_a_driver_that_does_not_finish() {
    let tmp = tempfile::tempdir().unwrap();
    let slow = fake_driver(tmp.path(), "slow-cc", "echo thinking >&2\nexec sleep 30");
    let options = DifferentialOptions {
        compile_timeout: Duration::from_millis(500),
        ..DifferentialOptions::default()
    };
    let start = Instant::now();
    let err = error_text(differential_with(
        "gemm",
        &[("MINI_DATASET", "")],
        &[Variant::new("slow", &slow)],
        &options,
    ));
    assert!(
        start.elapsed() < Duration::from_secs(25),
        "took {:?}",
        start.elapsed()
    );
    assert!(
        err.contains("variant `slow`: building: compilation did not finish within 500ms"),
        "{err}"
    );
    assert!(err.contains("thinking"), "{err}");
}
