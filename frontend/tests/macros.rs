//! `Scop::macros` and `Scop::undefined_macros`: the `#define` lines a SCoP's statements need to
//! compile in a file of their own (a CUDA kernel file has no includes and no `-D` options).
//!
//! Two oracles: the expected lists were written by hand from the sources and headers (each
//! macro the statement text expands, the macros their replacements name, dependencies
//! first); and the C preprocessor itself: the statement text preprocessed with only the
//! `#define` lines (`cc -E -nostdinc -undef`, no include path, no `-D`) must give the same
//! tokens as the statement preprocessed inside the original file with the original flags.

use std::path::{Path, PathBuf};
use std::process::Command;

use frontend::ir::{BodyPiece, Loc, Scop};
use frontend::{parse_file, parse_source, Options};
use pretty_assertions::assert_eq;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The one SCoP of the PolyBench-style file `tests/data/pb_math.c`, which includes
/// `polybench.h` and the correlation kernel's header (sizes, DATA_TYPE and the math macros).
fn pb_math(defines: &[&str]) -> (Scop, Vec<String>, PathBuf) {
    let path = root().join("frontend/tests/data/pb_math.c");
    let mut args: Vec<String> = vec![
        "-I".into(),
        root().join("polybench/utilities").display().to_string(),
        "-I".into(),
        root()
            .join("polybench/kernels/correlation")
            .display()
            .to_string(),
    ];
    args.extend(defines.iter().map(|d| d.to_string()));
    let opts = Options {
        clang_args: args.clone(),
        ..Options::default()
    };
    let (file, diags) = parse_file(&path, &opts).expect("parses");
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(file.scops.len(), 1);
    (file.scops.into_iter().next().unwrap(), args, path)
}

fn defines(scop: &Scop) -> Vec<String> {
    scop.macros.iter().map(|m| m.define.clone()).collect()
}

/// The statements' text as written (iterators and variables by their C names).
fn statement_text(scop: &Scop) -> String {
    let mut out = String::new();
    for s in &scop.statements {
        for p in &s.body {
            match p {
                BodyPiece::Text(t) => out.push_str(t),
                BodyPiece::Iter(k) => out.push_str(&s.iterators[*k]),
                BodyPiece::Var(a) => out.push_str(&scop.array(*a).name),
            }
        }
        out.push('\n');
    }
    out
}

/// Preprocesses `text` with `cc -E -P` and the extra `flags`; returns what follows the
/// marker line `tf_marker`, whitespace removed (spacing is the preprocessor's choice).
fn expand(text: &str, flags: &[String], dir: &Path) -> String {
    let file = dir.join("x.c");
    std::fs::write(&file, text).unwrap();
    let out = Command::new("cc")
        .args(["-E", "-P"])
        .args(flags)
        .arg(&file)
        .output()
        .expect("runs cc");
    assert!(
        out.status.success(),
        "cc -E failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pre = String::from_utf8(out.stdout).unwrap();
    let after = pre.split("tf_marker").nth(1).expect("marker survives");
    after.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The statement text expands to the same tokens with only `scop.macros` (no includes, no
/// `-D`, no predefined macros) as inside `original` compiled with `flags`.
fn check_self_contained(scop: &Scop, original: &str, flags: &[String], original_dir: &Path) {
    let stmts = statement_text(scop);
    let tmp = tempfile::tempdir().unwrap();
    let mut alone = defines(scop).join("\n");
    alone.push_str("\ntf_marker\n");
    alone.push_str(&stmts);
    let alone = expand(&alone, &["-nostdinc".into(), "-undef".into()], tmp.path());
    // The original file, with the statements appended at its end (where every macro of the
    // file is still defined as at the SCoP, since nothing is redefined after it).
    let mut flags = flags.to_vec();
    flags.extend(["-I".to_string(), original_dir.display().to_string()]);
    let whole = format!("{original}\ntf_marker\n{stmts}");
    let in_place = expand(&whole, &flags, tmp.path());
    assert_eq!(alone, in_place);
}

#[test]
fn polybench_math_macros_follow_the_data_type_and_size_flags() {
    let text = std::fs::read_to_string(root().join("frontend/tests/data/pb_math.c")).unwrap();
    let dir = root().join("frontend/tests/data");
    // Default: double, LARGE (correlation.h: N 1400, M 1200); N from the command line.
    let (scop, flags, _) = pb_math(&["-DN=37"]);
    assert_eq!(
        defines(&scop),
        [
            "#define SQRT_FUN(x) sqrt(x)",
            "#define N 37",
            "#define _PB_N N",
            "#define EXP_FUN(x) exp(x)",
            "#define POW_FUN(x, y) pow(x, y)",
            "#define CORRELATION_M_DEFAULT 1200",
            "#define M CORRELATION_M_DEFAULT",
            "#define _PB_M M",
            "#define SCALAR_VAL(x) x",
        ]
    );
    let origins: Vec<(&str, bool)> = scop
        .macros
        .iter()
        .map(|m| (m.name.as_str(), m.origin.ends_with("correlation.h")))
        .collect();
    assert_eq!(origins[1], ("N", false));
    assert_eq!(scop.macros[1].origin, "<command line>");
    assert!(origins.iter().filter(|o| o.0 != "N").all(|o| o.1));
    assert!(scop.undefined_macros.is_empty());
    check_self_contained(&scop, &text, &flags, &dir);

    // float, MINI (correlation.h: N 32, M 28): the float functions and the `f` suffix.
    let (scop, flags, _) = pb_math(&["-DDATA_TYPE_IS_FLOAT", "-DMINI_DATASET"]);
    assert_eq!(
        defines(&scop),
        [
            "#define SQRT_FUN(x) sqrtf(x)",
            "#define CORRELATION_N_DEFAULT 32",
            "#define N CORRELATION_N_DEFAULT",
            "#define _PB_N N",
            "#define EXP_FUN(x) expf(x)",
            "#define POW_FUN(x, y) powf(x, y)",
            "#define CORRELATION_M_DEFAULT 28",
            "#define M CORRELATION_M_DEFAULT",
            "#define _PB_M M",
            "#define SCALAR_VAL(x) x##f",
        ]
    );
    check_self_contained(&scop, &text, &flags, &dir);
    // Types are canonical: no DATA_TYPE definition is needed to declare the arrays.
    assert!(scop.arrays.iter().all(|a| a.elem_type == "float"));
}

const NESTED: &str = "#define SQ(x) ((x) * (x))
#define TWICE(x) (2 * SQ(x))
#define SCALE K
#define C 1
#undef C
#define C 2
#define PLUS_C(v) ((v) + C)
#define V(fmt, ...) (fmt + __VA_ARGS__)
#define SELF SELF
#define LONG_ONE(a, \\
                 b) /* comment */ ((a) - \\
                                   (b))
void f(int n, double A[100], double SELF)
{
#pragma scop
  for (int i = 0; i < n; i++)
    A[i] = TWICE(A[i]) + SCALE + PLUS_C(1) + V(1, 2, SQ(3)) + SELF + LONG_ONE(A[i], 1);
#pragma endscop
}
#undef C
#define C 3
";

#[test]
fn nested_command_line_and_redefined_macros_come_dependencies_first() {
    let flags = vec!["-DK=(3 + SQ(2))".to_string()];
    let opts = Options {
        clang_args: flags.clone(),
        ..Options::default()
    };
    let (file, diags) = parse_source("nested.c", NESTED, &opts).expect("parses");
    assert!(diags.is_empty(), "{diags:?}");
    let scop = &file.scops[0];
    assert_eq!(
        defines(scop),
        [
            "#define SQ(x) ((x) * (x))",
            "#define TWICE(x) (2 * SQ(x))",
            // K (a -D option) names SQ, already there.
            "#define K (3 + SQ(2))",
            "#define SCALE K",
            // The definition in effect at the SCoP: not `1` (undefined), not `3` (after it).
            "#define C 2",
            "#define PLUS_C(v) ((v) + C)",
            "#define V(fmt, ...) (fmt + __VA_ARGS__)",
            "#define SELF SELF",
            "#define LONG_ONE(a, b) ((a) - (b))",
        ]
    );
    let origins: Vec<&str> = scop.macros.iter().map(|m| m.origin.as_str()).collect();
    assert_eq!(origins[2], "<command line>");
    assert!(origins
        .iter()
        .enumerate()
        .all(|(k, o)| k == 2 || *o == "nested.c"));
    assert!(scop.undefined_macros.is_empty());
    // The file's end redefines C, so the comparison runs on the file without its last lines.
    let before_end = &NESTED[..NESTED.find("#undef C\n#define C 3").unwrap()];
    let tmp = tempfile::tempdir().unwrap();
    check_self_contained(scop, before_end, &flags, tmp.path());
}

#[test]
fn builtin_macros_have_no_definition_and_are_reported_where_used() {
    let src = "#define HERE (__LINE__ + 0)
void f(int n, double A[100])
{
#pragma scop
  for (int i = 0; i < n; i++)
    A[i] = __LINE__;
  for (int i = 0; i < n; i++)
    A[i] = HERE + __COUNTER__;
#pragma endscop
}
";
    let (file, diags) = parse_source("b.c", src, &Options::default()).expect("parses");
    assert!(diags.is_empty(), "{diags:?}");
    let scop = &file.scops[0];
    assert_eq!(defines(scop), ["#define HERE (__LINE__ + 0)"]);
    let undefined: Vec<(&str, Loc)> = scop
        .undefined_macros
        .iter()
        .map(|u| (u.name.as_str(), u.loc))
        .collect();
    assert_eq!(
        undefined,
        [
            ("__LINE__", Loc { line: 6, col: 12 }),
            ("__COUNTER__", Loc { line: 8, col: 19 }),
        ]
    );
}

#[test]
fn a_scop_without_macros_needs_none() {
    let src = "#define UNUSED 1
void f(int n, double A[100])
{
#pragma scop
  for (int i = 0; i < n; i++)
    A[i] = A[i] * 2.0;
#pragma endscop
}
";
    let (file, _) = parse_source("n.c", src, &Options::default()).expect("parses");
    assert!(file.scops[0].macros.is_empty());
    assert!(file.scops[0].undefined_macros.is_empty());
}

/// Every PolyBench kernel of the repository: its statements, with only their `#define` lines,
/// preprocess exactly as inside the kernel file (MINI sizes, float, so that the size and
/// data-type macros differ from the defaults).
#[test]
fn every_polybench_kernel_is_self_contained_with_its_macros() {
    let kernels = root().join("polybench/kernels");
    let mut names: Vec<String> = std::fs::read_dir(&kernels)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 30, "{names:?}");
    let mut with_math = 0;
    for name in &names {
        let dir = kernels.join(name);
        let path = dir.join(format!("{name}.c"));
        let flags: Vec<String> = vec![
            "-I".into(),
            root().join("polybench/utilities").display().to_string(),
            "-DMINI_DATASET".into(),
            "-DDATA_TYPE_IS_FLOAT".into(),
        ];
        let opts = Options {
            clang_args: flags.clone(),
            ..Options::default()
        };
        let (file, _) = parse_file(&path, &opts).expect("parses");
        assert!(!file.scops.is_empty(), "{name}: no SCoP");
        // Without macros (libclang without its preprocessing record) the SCoPs are the same.
        let (mut bare, _) = parse_file(
            &path,
            &Options {
                skip_macros: true,
                ..opts.clone()
            },
        )
        .expect("parses");
        assert!(
            bare.scops
                .iter()
                .all(|s| s.macros.is_empty() && s.undefined_macros.is_empty()),
            "{name}"
        );
        for (b, s) in bare.scops.iter_mut().zip(&file.scops) {
            (b.macros, b.undefined_macros) = (s.macros.clone(), s.undefined_macros.clone());
        }
        assert_eq!(bare.scops, file.scops, "{name}");
        let text = std::fs::read_to_string(&path).unwrap();
        for scop in &file.scops {
            assert!(scop.undefined_macros.is_empty(), "{name}");
            check_self_contained(scop, &text, &flags, &dir);
            with_math += usize::from(scop.macros.iter().any(|m| m.name == "SQRT_FUN"));
        }
    }
    // correlation, gramschmidt and cholesky take square roots in their SCoPs.
    assert_eq!(with_math, 3);
}

/// Nests found without pragmas (`--scop auto`) get their macros the same way.
#[test]
fn nests_found_without_pragmas_get_their_macros_too() {
    let src = "#define HALF(x) ((x) / TWO)
#define TWO 2.0
void f(int n, double A[restrict 100], double B[restrict 100])
{
  for (int i = 0; i < n; i++)
    A[i] = HALF(B[i]);
}
";
    let (file, _) = parse_source("a.c", src, &Options::default()).expect("parses");
    assert_eq!(file.scops.len(), 1);
    assert_eq!(
        defines(&file.scops[0]),
        ["#define TWO 2.0", "#define HALF(x) ((x) / TWO)"]
    );
}
