//! `ScopMode::Auto` (`--scop auto`) and the default mode: which loop nests of a file without
//! pragmas become SCoPs, which bytes each one replaces, and the notes about the others.

mod common;

use common::{parse_opts, parse_with};
use frontend::{ir, Options, ScopMode, Severity};
use pretty_assertions::assert_eq;

/// The text each SCoP of `src` replaces, in order, and the notes, under `mode`.
fn regions(src: &str, mode: ScopMode) -> (Vec<String>, Vec<String>) {
    let (file, diags) = parse_with(src, mode);
    let texts = file
        .scops
        .iter()
        .map(|s| src[s.region.start..s.region.end].to_string())
        .collect();
    let notes = diags
        .iter()
        .inspect(|d| assert_eq!(d.severity, Severity::Note, "{d}"))
        .map(|d| d.to_string())
        .collect();
    (texts, notes)
}

fn auto(src: &str) -> (Vec<String>, Vec<String>) {
    regions(src, ScopMode::Auto)
}

/// [`auto`] with the user's pragmas replaced (`Options::replace_pragmas`).
fn auto_replacing(src: &str) -> (Vec<String>, Vec<String>) {
    let (file, diags) = parse_opts(
        src,
        &Options {
            scop: ScopMode::Auto,
            replace_pragmas: true,
            ..Options::default()
        },
    );
    let texts = file
        .scops
        .iter()
        .map(|s| src[s.region.start..s.region.end].to_string())
        .collect();
    (texts, diags.iter().map(|d| d.to_string()).collect())
}

const TWO_NESTS: &str = "double A[10][10], B[10][10];
int f(void)
{
  int i, j, r = 0;
  r = 1;
  for (i = 0; i < 10; i++)
    for (j = 0; j < 10; j++)
      A[i][j] = i + j;
  r = 2;
  for (i = 1; i < 10; i++)
    for (j = 0; j < 10; j++)
      B[i][j] = A[i - 1][j] * r;
  r = 3;
  return r;
}
";

#[test]
fn consecutive_nests_form_one_scop_of_whole_lines() {
    // The run starts at the first loop and ends with the last one: `r = 1;` and `r = 3;` are
    // not loops and stay outside; `r = 2;` between the nests joins the run.
    let (texts, notes) = auto(TWO_NESTS);
    assert_eq!(
        texts,
        vec!["  for (i = 0; i < 10; i++)
    for (j = 0; j < 10; j++)
      A[i][j] = i + j;
  r = 2;
  for (i = 1; i < 10; i++)
    for (j = 0; j < 10; j++)
      B[i][j] = A[i - 1][j] * r;
"
        .to_string()]
    );
    assert_eq!(notes, Vec::<String>::new());
    let (file, _) = parse_with(TWO_NESTS, ScopMode::Auto);
    assert_eq!(file.scops[0].statements.len(), 3);
    assert_eq!(file.scops[0].function, "f");
    assert_eq!(file.scops[0].loc, ir::Loc { line: 6, col: 3 });
}

#[test]
fn the_default_is_auto_without_pragmas() {
    assert_eq!(regions(TWO_NESTS, ScopMode::default()), auto(TWO_NESTS));
    assert_eq!(
        regions(TWO_NESTS, ScopMode::Pragma),
        (Vec::new(), Vec::new())
    );
}

const WITH_PRAGMAS: &str = "double A[10], B[10];
void f(void)
{
  int i;
  for (i = 0; i < 10; i++)
    A[i] = i;
#pragma scop
  for (i = 0; i < 10; i++)
    B[i] = A[i];
#pragma endscop
}
";

#[test]
fn the_default_is_pragma_when_the_file_has_one() {
    let region = "#pragma scop\n  for (i = 0; i < 10; i++)\n    B[i] = A[i];\n#pragma endscop\n";
    assert_eq!(
        regions(WITH_PRAGMAS, ScopMode::default()),
        (vec![region.to_string()], Vec::new())
    );
    // Auto ignores the pragmas: both nests, which are consecutive statements, form one SCoP.
    let (texts, notes) = auto(WITH_PRAGMAS);
    assert_eq!(
        texts,
        vec!["  for (i = 0; i < 10; i++)\n    A[i] = i;\n#pragma scop\n  for (i = 0; i < 10; i++)\n    B[i] = A[i];\n".to_string()]
    );
    assert!(notes.is_empty());
}

#[test]
fn a_pragma_in_skipped_code_does_not_make_the_default_pragma() {
    let src = "double A[10];
void f(void)
{
  int i;
#if 0
#pragma scop
#endif
  for (i = 0; i < 10; i++)
    A[i] = i;
}
";
    let (texts, _) = regions(src, ScopMode::default());
    assert_eq!(
        texts,
        vec!["  for (i = 0; i < 10; i++)\n    A[i] = i;\n".to_string()]
    );
    // Without macros libclang still reports the skipped code of a file with conditionals.
    let opts = frontend::Options {
        skip_macros: true,
        ..frontend::Options::default()
    };
    let (file, _) = frontend::parse_source("test.c", src, &opts).unwrap();
    let skipping: Vec<&str> = file
        .scops
        .iter()
        .map(|s| &src[s.region.start..s.region.end])
        .collect();
    assert_eq!(skipping, texts);
}

#[test]
fn nests_inside_control_that_is_not_affine_are_found() {
    let src = "double A[10];
void f(int n, double x)
{
  int i;
  while (x > 0) {
    for (i = 0; i < 10; i++)
      A[i] = A[i] * x;
    x = x - 1;
  }
  if (x < 0) for (i = 0; i < 10; i++) A[i] = 0; else x = 1;
}
";
    let (texts, notes) = auto(src);
    assert_eq!(
        texts,
        vec![
            "    for (i = 0; i < 10; i++)\n      A[i] = A[i] * x;\n".to_string(),
            // Shares its line with other code: exactly the statement, its `;` included.
            "for (i = 0; i < 10; i++) A[i] = 0;".to_string(),
        ]
    );
    assert_eq!(
        notes,
        vec![
            "test.c:5:3: note: not a static control part: `while (x > 0) { for (i = 0; i < 10; i++) A[i]...` (only `for` loops with affine bounds are supported)",
            "test.c:10:7: note: not a static control part: `x` (floating-point value where an affine integer expression is required)",
        ]
    );
}

#[test]
fn a_nest_that_is_not_a_scop_stays_with_a_note() {
    let src = "#include <stdio.h>
double A[10];
void f(void)
{
  int i, j;
  for (j = 0; j < 2; j++)
    for (i = 0; i < 10; i++)
      printf(\"%f\\n\", A[i]);
}
";
    // Both loops are refused for the same call, and are told once.
    let (texts, notes) = auto(src);
    assert!(texts.is_empty());
    assert_eq!(
        notes,
        vec!["test.c:8:7: note: not a static control part: `printf(\"%f\\n\", A[i])` (only assignments, compound assignments and increments are supported as statements)"]
    );
}

#[test]
fn pointer_parameters_that_may_alias_are_refused() {
    let src = "void f(int n, double *a, double *b)
{
  int i;
  for (i = 0; i < n; i++)
    a[i] = b[i + 1];
}
";
    let (texts, notes) = auto(src);
    assert!(texts.is_empty());
    assert_eq!(
        notes,
        vec!["test.c:5:12: note: not a static control part: `a` and `b` (array parameters that may alias: `a` is written and both are pointers; declare one of them `restrict`, or mark the nest with `#pragma scop` to promise that they do not overlap)"]
    );
    // A VLA parameter is a pointer too, and a pointer may point into a global array.
    let src = "double G[100];
void f(int n, double A[n][n])
{
  int i;
  for (i = 0; i < n; i++)
    G[i] = A[i][i];
}
";
    let (texts, notes) = auto(src);
    assert!(texts.is_empty());
    assert_eq!(
        notes,
        vec!["test.c:6:12: note: not a static control part: `G` and `A` (array parameters that may alias: `G` is written and `A` is a pointer that may point into `G`; declare one of them `restrict`, or mark the nest with `#pragma scop` to promise that they do not overlap)"]
    );
    // The same nest between pragmas is the user's promise.
    let marked = src
        .replace("  for", "#pragma scop\n  for")
        .replace("A[i][i];\n", "A[i][i];\n#pragma endscop\n");
    assert_eq!(regions(&marked, ScopMode::default()).0.len(), 1);
}

#[test]
fn restrict_and_distinct_arrays_do_not_alias() {
    let src = "double G[100];
void f(int n, double *restrict a, const double *b, double A[restrict n][n])
{
  int i;
  double L[100];
  for (i = 0; i < n; i++)
    a[i] = b[i + 1];
  for (i = 0; i < n; i++)
    A[i][i] = b[i];
  for (i = 0; i < 100; i++)
    L[i] = G[i];
  for (i = 0; i < 100; i++)
    G[i] = L[99 - i];
}
";
    let (file, notes) = parse_with(src, ScopMode::Auto);
    assert!(notes.is_empty(), "{notes:?}");
    // `a` and `A` are `restrict`; `L` and `G` are distinct variables. But `b` is a plain pointer
    // that may point into `G`, so the nests writing `G` and `L` cannot join the first two.
    let n_statements: Vec<usize> = file.scops.iter().map(|s| s.statements.len()).collect();
    assert_eq!(n_statements, vec![2, 2]);
}

#[test]
fn a_nest_after_a_pragma_is_left_as_written() {
    let src = "double A[10], B[10];
void f(void)
{
  int i;
#pragma omp parallel for
  for (i = 0; i < 10; i++)
    A[i] = i;
  _Pragma(\"omp parallel for\") for (i = 0; i < 10; i++)
    A[i] = i;
  for (i = 0; i < 10; i++)
    B[i] = i;
}
";
    let (texts, notes) = auto(src);
    assert_eq!(
        texts,
        vec!["  for (i = 0; i < 10; i++)\n    B[i] = i;\n".to_string()]
    );
    assert_eq!(
        notes,
        vec![
            "test.c:6:3: note: not a static control part: the loop nest under `#pragma omp parallel for` (the pragma applies to it as written)",
            "test.c:8:31: note: not a static control part: the loop nest under `_Pragma(\"omp parallel for\")` (the pragma applies to it as written)",
        ]
    );
}

#[test]
fn a_nest_after_a_pragma_under_a_conditional_is_left_as_written() {
    // The C compiler defines `_OPENMP` under -fopenmp where the parser does not: whichever
    // branch is taken, the pragmas apply to the loop as written, and a pragma may not be left
    // in front of the code that replaces it. `#pragma scop` is no such pragma.
    let src = "double A[10], B[10], C[10];
void f(void)
{
  int i;
#ifdef _OPENMP
#pragma omp parallel for
#endif
  for (i = 0; i < 10; i++)
    A[i] = i;
#if defined(_OPENMP)
#else
#pragma GCC ivdep
#endif
  for (i = 0; i < 10; i++)
    B[i] = i;
#ifdef SOMETHING
#endif
  for (i = 0; i < 10; i++)
    C[i] = i;
}
";
    let (texts, notes) = auto(src);
    assert_eq!(
        texts,
        vec!["  for (i = 0; i < 10; i++)\n    C[i] = i;\n".to_string()]
    );
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes[0].starts_with("test.c:8:3: note: not a static control part: the loop nest under `#pragma omp parallel for`"), "{notes:?}");
    assert!(
        notes[1].starts_with(
            "test.c:14:3: note: not a static control part: the loop nest under `#pragma GCC ivdep`"
        ),
        "{notes:?}"
    );
}

#[test]
fn a_run_stops_before_a_nest_under_a_pragma() {
    // A nest that a pragma applies to does not join the run of the nests before it either:
    // replacing the run would drop the pragma with the code it was written for.
    let src = "double A[10], B[10], C[10];
void f(void)
{
  int i;
  for (i = 0; i < 10; i++)
    A[i] = i;
#pragma omp parallel for
  for (i = 0; i < 10; i++)
    B[i] = A[i];
  for (i = 0; i < 10; i++)
    C[i] = B[i];
#ifdef _OPENMP
#pragma omp simd
#endif
  for (i = 0; i < 10; i++)
    A[i] = C[i];
}
";
    let (texts, notes) = auto(src);
    assert_eq!(
        texts,
        vec![
            "  for (i = 0; i < 10; i++)\n    A[i] = i;\n".to_string(),
            "  for (i = 0; i < 10; i++)\n    C[i] = B[i];\n".to_string(),
        ]
    );
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes[0].starts_with("test.c:8:3: note: not a static control part: the loop nest under `#pragma omp parallel for`"), "{notes:?}");
    assert!(
        notes[1].starts_with(
            "test.c:15:3: note: not a static control part: the loop nest under `#pragma omp simd`"
        ),
        "{notes:?}"
    );
}

#[test]
fn replaced_pragmas_go_with_their_nests() {
    // With the option, a nest under a pragma is a SCoP like any other, and what replaces it
    // replaces the pragma and the conditional lines that hold only the pragma; a directive
    // between the pragma and the nest, or a conditional that holds the pragma and other code
    // but not the nest, keeps it as written.
    let src = "double A[10], B[10], C[10];
void f(void)
{
  int i;
#pragma omp parallel for
  for (i = 0; i < 10; i++)
    A[i] = i;
#ifdef FOO
  i = 0;
#endif
#ifdef _OPENMP
#pragma omp simd
#endif
  for (i = 0; i < 10; i++)
    B[i] = A[i];
  _Pragma(\"GCC ivdep\") for (i = 0; i < 10; i++)
    C[i] = B[i];
#ifndef SERIAL
#pragma omp parallel for
  for (i = 0; i < 10; i++)
    A[i] = C[i];
#endif
#pragma GCC ivdep
#define TWICE(x) (2 * (x))
  for (i = 0; i < 10; i++)
    B[i] = TWICE(A[i]);
#ifdef FOO
  i = 1;
#pragma omp parallel for
#endif
  for (i = 0; i < 10; i++)
    C[i] = 1.0;
}
";
    let (texts, notes) = auto_replacing(src);
    assert_eq!(
        texts,
        vec![
            "#pragma omp parallel for\n  for (i = 0; i < 10; i++)\n    A[i] = i;\n".to_string(),
            "#ifdef _OPENMP\n#pragma omp simd\n#endif\n  for (i = 0; i < 10; i++)\n    B[i] = A[i];\n"
                .to_string(),
            "  _Pragma(\"GCC ivdep\") for (i = 0; i < 10; i++)\n    C[i] = B[i];\n".to_string(),
            // The conditional holds the nest too: it stays, around the code that replaces both.
            "#pragma omp parallel for\n  for (i = 0; i < 10; i++)\n    A[i] = C[i];\n".to_string(),
        ]
    );
    assert_eq!(
        notes,
        vec![
            "test.c:25:3: note: not a static control part: the loop nest under `#pragma GCC ivdep` (`#define` lies between its pragma and the nest)",
            "test.c:31:3: note: not a static control part: the loop nest under `#pragma omp parallel for` (its pragma is in a conditional that holds other code)",
        ]
    );
    // Without the option, every one of them stays as written.
    assert_eq!(auto(src).0, Vec::<String>::new());
}

#[test]
fn a_loop_hint_is_one_pragma_like_the_others() {
    // libclang gives `#pragma GCC unroll` a statement of its own that starts at the pragma: the
    // loop under it gets the one note of a loop under a pragma (not a second one about that
    // statement), and with the option it is replaced, pragma included.
    let src = "double A[10], B[10];
void f(void)
{
  int i;
#pragma GCC unroll 4
  for (i = 0; i < 10; i++)
    B[i] = A[i];
}
";
    let (texts, notes) = auto(src);
    assert_eq!(texts, Vec::<String>::new());
    assert_eq!(
        notes,
        vec!["test.c:6:3: note: not a static control part: the loop nest under `#pragma GCC unroll 4` (the pragma applies to it as written)"]
    );
    let (texts, notes) = auto_replacing(src);
    assert_eq!(
        texts,
        vec!["#pragma GCC unroll 4\n  for (i = 0; i < 10; i++)\n    B[i] = A[i];\n".to_string()]
    );
    assert_eq!(notes, Vec::<String>::new());
}

#[test]
fn a_run_stops_where_the_next_statement_breaks_it() {
    // `k` is assigned between the nests, so the second nest (bounded by `k`) cannot join the
    // first; it is a SCoP on its own, and the assignment stays as written.
    let src = "double A[10], B[10];
void f(int k)
{
  int i;
  for (i = 0; i < 10; i++)
    A[i] = i;
  k = k + 1;
  for (i = 0; i < k; i++)
    B[i] = A[i];
}
";
    let (texts, notes) = auto(src);
    assert_eq!(
        texts,
        vec![
            "  for (i = 0; i < 10; i++)\n    A[i] = i;\n".to_string(),
            "  for (i = 0; i < k; i++)\n    B[i] = A[i];\n".to_string(),
        ]
    );
    assert!(notes.is_empty());
}

#[test]
fn a_loop_counter_read_after_the_nest_is_refused() {
    let src = "double A[10];
int f(void)
{
  int i;
  for (i = 0; i < 10; i++)
    A[i] = i;
  return i;
}
";
    let (texts, notes) = auto(src);
    assert!(texts.is_empty());
    assert_eq!(
        notes,
        vec!["test.c:7:10: note: not a static control part: `i` (a loop counter of the region is used after it, but its final value is not kept)"]
    );
}

#[test]
fn scalars_reachable_through_pointers() {
    // A local scalar whose address is never taken cannot be reached through a pointer.
    let src = "double f(int n, double *a)
{
  int i;
  double s = 0;
  for (i = 0; i < n; i++)
    s += a[i];
  return s;
}
";
    assert_eq!(auto(src).0.len(), 1);
    // Once its address is taken, it can.
    let src = "void g(double *);
double f(int n, double *a)
{
  int i;
  double s = 0;
  g(&s);
  for (i = 0; i < n; i++)
    a[i] = s;
  return s;
}
";
    let (texts, notes) = auto(src);
    assert!(texts.is_empty());
    assert_eq!(
        notes,
        vec!["test.c:8:12: note: not a static control part: `a` and `s` (array parameters that may alias: `a` is written and `a` is a pointer that may point into `s`; declare one of them `restrict`, or mark the nest with `#pragma scop` to promise that they do not overlap)"]
    );
    // A file-scope scalar may be reached from anywhere, unless the types say otherwise: a
    // `double` is never accessed through an `int *` (C's aliasing rule), but through a
    // `double *` it may be.
    let src = "int N = 10;
double x;
void f(int *b, double *a)
{
  int i;
  for (i = 0; i < N; i++)
    b[i] = x;
  for (i = 0; i < N; i++)
    a[i] = x;
}
";
    let (texts, notes) = auto(src);
    assert_eq!(
        texts,
        vec!["  for (i = 0; i < N; i++)\n    b[i] = x;\n".to_string()]
    );
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0].starts_with("test.c:9:12: note: not a static control part: `a` and `x`"),
        "{notes:?}"
    );
}

#[test]
fn long_runs_end_exactly_where_they_must() {
    // Nests 0..=5, a call, nests 7..=9, then a return: the search by doubling and bisection
    // must find both runs exactly.
    let nest = |k: usize| format!("  for (i = 0; i < 10; i++)\n    A[i] += {k};\n");
    let mut body = String::new();
    for k in 0..10 {
        body.push_str(&if k == 6 {
            "  g();\n".to_string()
        } else {
            nest(k)
        });
    }
    let src =
        format!("double A[10];\nvoid g(void);\nint f(void)\n{{\n  int i;\n{body}  return 0;\n}}\n");
    let (file, notes) = parse_with(&src, ScopMode::Auto);
    assert!(notes.is_empty(), "{notes:?}");
    let n_statements: Vec<usize> = file.scops.iter().map(|s| s.statements.len()).collect();
    assert_eq!(n_statements, vec![6, 3]);
    let first: String = (0..6).map(nest).collect();
    let second: String = (7..10).map(nest).collect();
    let texts: Vec<&str> = file
        .scops
        .iter()
        .map(|s| &src[s.region.start..s.region.end])
        .collect();
    assert_eq!(texts, vec![first.as_str(), second.as_str()]);
}
